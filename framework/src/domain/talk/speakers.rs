//! Speakers of the call for papers: who sees which, the checks of what a write sends
//! (name, email address, language, avatar; availabilities are merged as
//! [`super::availability`] says), and the writes themselves with
//! their activity log. Speakers created through the API are managed speakers, without a
//! user account. Since API version v2 a speaker's email address is not changed on update,
//! as in pretalx.

use sea_orm::{ConnectionTrait, DatabaseTransaction};
use serde_json::{Map, Value, json};

use super::access::{TalkEvent, not_found};
use super::availability::{Span, merged};
use super::log::{self as talk_log, Change};
use super::sql::{first, unused_code};
use super::version::ApiVersion;
use crate::domain::files;
use crate::domain::refusal::Refusal;
use crate::domain::users::{is_valid_email, normalize_email};

/// The object type of speakers in the activity log.
pub const OBJECT: &str = "speaker";

/// The languages of an event: its default and all it offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Languages {
    /// The default language.
    pub default: String,
    /// Every language of the event.
    pub all: Vec<String>,
}

impl Languages {
    /// Whether `locale` is one of the event's languages.
    pub fn offers(&self, locale: &str) -> bool {
        self.all.iter().any(|l| l == locale)
    }
}

/// Checks a sent email address; gives its stored form, or 400 on `field`.
pub fn checked_email(field: &str, email: &str) -> Result<String, Refusal> {
    let email = normalize_email(email);
    if is_valid_email(&email) {
        Ok(email)
    } else {
        Err(Refusal::field(field, "Enter a valid email address."))
    }
}

/// Checks a sent language against the event's; `None` (or empty) gives the default.
pub fn checked_locale(
    field: &str,
    locale: Option<&str>,
    languages: &Languages,
) -> Result<String, Refusal> {
    match locale.filter(|l| !l.is_empty()) {
        None => Ok(languages.default.clone()),
        Some(l) if languages.offers(l) => Ok(l.to_owned()),
        Some(_) => Err(Refusal::field(
            field,
            "This language is not enabled for this event.",
        )),
    }
}

/// The SQL condition of the speakers (alias `sp`) the caller may see: organisers see all of
/// the event's; others those of a submission they may see.
pub fn visible(ev: &TalkEvent, sp: &str) -> String {
    if ev.role.is_orga() {
        return "1 = 1".into();
    }
    format!(
        "EXISTS (SELECT 1 FROM talk_submission_speakers vss \
         JOIN talk_submissions vs ON vs.id = vss.submission_id \
         WHERE vss.speaker_id = {sp}.id AND {})",
        super::schedule::visible_submissions(ev, "vs")
    )
}

/// The stored fields of a speaker that writes change.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    /// Name.
    pub name: String,
    /// Contact address.
    pub email: Option<String>,
    /// Biography.
    pub biography: Option<String>,
    /// Language.
    pub locale: String,
    /// Picture: a stored file reference.
    pub avatar: Option<String>,
    /// Whether the speaker has arrived.
    pub has_arrived: bool,
    /// Notes of the organisers.
    pub internal_notes: Option<String>,
}

/// A stored speaker: ID, code and fields.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Internal ID.
    pub id: i64,
    /// The speaker's code as stored.
    pub code: String,
    /// The fields writes change.
    pub fields: Fields,
}

/// The event's speaker with this code in any case (whether or not the caller may see it:
/// for organisers' operations and lookups before the visible answer is built); 404 when
/// there is none.
pub async fn stored(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    code: &str,
) -> Result<Stored, Refusal> {
    let row = first(
        db,
        "SELECT id, code, name, email, biography, locale, avatar, has_arrived, internal_notes \
         FROM talk_speakers WHERE event_id = $1 AND UPPER(code) = $2",
        vec![ev.event.id.into(), code.to_uppercase().into()],
    )
    .await?
    .ok_or_else(not_found)?;
    Ok(Stored {
        id: row.try_get("", "id")?,
        code: row.try_get("", "code")?,
        fields: Fields {
            name: row.try_get("", "name")?,
            email: row.try_get("", "email")?,
            biography: row.try_get("", "biography")?,
            locale: row.try_get("", "locale")?,
            avatar: row.try_get("", "avatar")?,
            has_arrived: row.try_get("", "has_arrived")?,
            internal_notes: row.try_get("", "internal_notes")?,
        },
    })
}

/// What a write changes: `None` leaves a field as it is.
#[derive(Debug, Default)]
pub struct Changes {
    /// Name.
    pub name: Option<String>,
    /// Contact address; `Some(None)` (or blank) removes it.
    pub email: Option<Option<String>>,
    /// Biography.
    pub biography: Option<Option<String>>,
    /// Language; `Some(None)` for the event's default.
    pub locale: Option<Option<String>>,
    /// Picture: an upload's ID to claim, or `Some(None)` to remove it.
    pub avatar: Option<Option<String>>,
    /// Whether the speaker has arrived.
    pub has_arrived: Option<bool>,
    /// Notes of the organisers.
    pub internal_notes: Option<Option<String>>,
    /// Availabilities, replacing the stored ones.
    pub availabilities: Option<Vec<Span>>,
}

/// Applies `changes` to `f`, checking what needs no database; gives the log's data.
fn apply(
    f: &mut Fields,
    changes: &mut Changes,
    languages: &Languages,
) -> Result<Map<String, Value>, Refusal> {
    let mut data = Map::new();
    if let Some(name) = changes.name.take() {
        if name.trim().is_empty() {
            return Err(Refusal::field("name", "This field may not be blank."));
        }
        data.insert("name".into(), json!(name));
        f.name = name;
    }
    if let Some(email) = changes.email.take() {
        f.email = match email.filter(|e| !e.trim().is_empty()) {
            Some(e) => Some(checked_email("email", &e)?),
            None => None,
        };
        data.insert("email".into(), json!(f.email));
    }
    if let Some(bio) = changes.biography.take() {
        data.insert("biography".into(), json!(bio));
        f.biography = bio;
    }
    if let Some(locale) = changes.locale.take() {
        f.locale = checked_locale("locale", locale.as_deref(), languages)?;
        data.insert("locale".into(), json!(f.locale));
    }
    if let Some(arrived) = changes.has_arrived.take() {
        data.insert("has_arrived".into(), json!(arrived));
        f.has_arrived = arrived;
    }
    if let Some(notes) = changes.internal_notes.take() {
        data.insert("internal_notes".into(), json!(notes));
        f.internal_notes = notes;
    }
    Ok(data)
}

/// Writes a speaker (a new managed one when `existing` is `None`) with its availabilities,
/// avatar and log entry, in the transaction `txn`; gives its code. Since v2 an update keeps
/// the email address whatever is sent.
pub async fn write(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    existing: Option<&Stored>,
    mut changes: Changes,
    languages: &Languages,
) -> Result<String, Refusal> {
    let user_id = ev.caller.user_id()?;
    if existing.is_some() && ev.version() >= ApiVersion::V2 {
        changes.email = None;
    }
    let mut f = existing.map_or_else(
        || Fields {
            locale: languages.default.clone(),
            ..Fields::default()
        },
        |s| s.fields.clone(),
    );
    let mut data = apply(&mut f, &mut changes, languages)?;
    let availabilities = changes.availabilities.take().map(merged).transpose()?;
    if let Some(times) = &availabilities {
        let times: Vec<Value> = times
            .iter()
            .map(|(s, e)| json!({"start": s, "end": e}))
            .collect();
        data.insert("availabilities".into(), Value::Array(times));
    }
    if let Some(avatar) = changes.avatar.take() {
        files::replace_for_user(
            txn,
            user_id,
            "avatar",
            avatar.as_deref(),
            &mut f.avatar,
            &files::PICTURE_TYPES,
        )
        .await?;
        data.insert("avatar".into(), json!(f.avatar));
    }
    let (id, code) = match existing {
        Some(s) => {
            crate::db::execute(
                txn,
                "UPDATE talk_speakers SET name = $1, email = $2, biography = $3, locale = $4, \
                 avatar = $5, has_arrived = $6, internal_notes = $7, updated = $8 \
                 WHERE id = $9 AND event_id = $10",
                [
                    f.name.clone().into(),
                    f.email.clone().into(),
                    f.biography.clone().into(),
                    f.locale.clone().into(),
                    f.avatar.clone().into(),
                    f.has_arrived.into(),
                    f.internal_notes.clone().into(),
                    crate::values::now().into(),
                    s.id.into(),
                    ev.event.id.into(),
                ],
            )
            .await?;
            talk_log::write(
                txn,
                Change::new(ev, OBJECT, s.id, "update", Value::Object(data)),
            )
            .await?;
            (s.id, s.code.clone())
        }
        None => {
            let (id, code) =
                insert_managed(txn, ev, &f.name, f.email.as_deref(), &f.locale).await?;
            crate::db::execute(
                txn,
                "UPDATE talk_speakers SET biography = $1, avatar = $2, has_arrived = $3, \
                 internal_notes = $4 WHERE id = $5",
                [
                    f.biography.clone().into(),
                    f.avatar.clone().into(),
                    f.has_arrived.into(),
                    f.internal_notes.clone().into(),
                    id.into(),
                ],
            )
            .await?;
            (id, code)
        }
    };
    if let Some(times) = availabilities {
        crate::db::execute(
            txn,
            "DELETE FROM talk_availabilities WHERE speaker_id = $1",
            [id.into()],
        )
        .await?;
        for (start, end) in times {
            crate::db::execute(
                txn,
                "INSERT INTO talk_availabilities (speaker_id, start, \"end\") VALUES ($1, $2, $3)",
                [id.into(), start.into(), end.into()],
            )
            .await?;
        }
    }
    Ok(code)
}

/// Inserts a managed speaker (without an account) in a transaction under way and logs it;
/// gives its ID and code. `email` is stored as given (check it with [`checked_email`]).
pub async fn insert_managed(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    name: &str,
    email: Option<&str>,
    locale: &str,
) -> Result<(i64, String), Refusal> {
    let code = unused_code(
        txn,
        "SELECT 1 AS x FROM talk_speakers WHERE code = $1 AND event_id = $2",
        &[ev.event.id.into()],
    )
    .await?;
    let now = crate::values::now();
    let id = crate::db::insert_returning_id(
        txn,
        "INSERT INTO talk_speakers (event_id, user_id, code, name, email, locale, timezone, \
         has_arrived, created, updated) \
         VALUES ($1, NULL, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
        [
            ev.event.id.into(),
            code.clone().into(),
            name.into(),
            email.map(str::to_owned).into(),
            locale.into(),
            ev.event.timezone.clone().into(),
            false.into(),
            now.into(),
            now.into(),
        ],
    )
    .await?;
    let data = json!({"name": name, "email": email});
    talk_log::write(txn, Change::new(ev, OBJECT, id, "create", data)).await?;
    Ok((id, code))
}

#[cfg(test)]
mod tests {
    use super::{Languages, checked_locale};

    #[test]
    fn a_language_is_one_of_the_events_or_its_default() {
        let languages = Languages {
            default: "en".into(),
            all: vec!["en".into(), "de".into()],
        };
        assert_eq!(
            checked_locale("l", None, &languages).expect("default"),
            "en"
        );
        assert_eq!(
            checked_locale("l", Some(""), &languages).expect("default"),
            "en"
        );
        assert_eq!(
            checked_locale("l", Some("de"), &languages).expect("offered"),
            "de"
        );
        assert!(checked_locale("l", Some("fr"), &languages).is_err());
    }
}
