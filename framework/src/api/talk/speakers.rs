//! Speakers of the call for papers: `/api/events/{event}/speakers/`, found by their code.
//! Organisers of the call for papers see every speaker of the event, with their contact
//! details, availabilities and internal notes, and create speakers without an account
//! (managed speakers) or change them; reviewers see the speakers of the submissions they
//! review, without those details. The public sees speakers once the agenda is public.
//! `q` searches names (organisers: email addresses too), `o` orders by `code` (default) or
//! `name`.
//!
//! Versions: in v1 a speaker's email address may be changed; v2 ignores it on update, as
//! pretalx does since API v2.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Map, Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Expandable, Shaped};
use super::submissions::{SubmissionOut, visible_submissions};
use crate::domain::files;
use crate::domain::settings;
use crate::domain::talk::access::{TalkEvent, agenda_visible, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::domain::talk::version::ApiVersion;
use crate::domain::users::{is_valid_email, normalize_email};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "speakers";
const OBJECT: &str = "speaker";

/// Length of generated speaker codes.
const CODE_LEN: usize = 6;

/// A time span: start and end.
type Span = (DateTime<Utc>, DateTime<Utc>);

/// Most availabilities one speaker may send at once.
const MAX_AVAILABILITIES: usize = 200;

/// A time a speaker is available.
#[derive(Object)]
#[oai(rename = "TalkAvailability")]
pub struct AvailabilityOut {
    /// Start.
    pub start: DateTime<Utc>,
    /// End.
    pub end: DateTime<Utc>,
    /// Whether it spans whole days (midnight to midnight in the event's time zone).
    #[oai(rename = "allDay")]
    pub all_day: bool,
}

/// A speaker. The fields from `email` on are shown to organisers of the call for papers only.
#[derive(Object)]
#[oai(rename = "TalkSpeaker")]
pub struct SpeakerOut {
    /// The speaker's code.
    pub code: String,
    /// Name.
    pub name: String,
    /// Biography.
    #[oai(nullable)]
    pub biography: Option<String>,
    /// Codes of the speaker's submissions the caller may see, or with `?expand=submissions`
    /// the submissions.
    pub submissions: Vec<Expandable<String, SubmissionOut>>,
    /// URL of the speaker's picture.
    #[oai(nullable)]
    pub avatar_url: Option<String>,
    /// IDs of the speaker's answers the caller may see, or with `?expand=answers` the answers.
    pub answers: Vec<Expandable<i64, super::answers::AnswerOut>>,
    /// Contact address (organisers only).
    #[oai(nullable)]
    pub email: Option<String>,
    /// Time zone (organisers only).
    pub timezone: Option<String>,
    /// Language (organisers only).
    pub locale: Option<String>,
    /// Whether the speaker has no user account (organisers only).
    pub is_managed: Option<bool>,
    /// Whether the speaker has arrived at the event (organisers only).
    pub has_arrived: Option<bool>,
    /// When the speaker is available (organisers only).
    pub availabilities: Option<Vec<AvailabilityOut>>,
    /// Notes of the organisers (organisers only).
    #[oai(nullable)]
    pub internal_notes: Option<String>,
}

/// Speakers as objects: four queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "code",
    load,
    fields: &[
        ("submissions", &super::submissions::KIND),
        ("answers", &super::answers::KIND),
    ],
};

/// The SQL condition of the speakers (alias `sp`) the caller may see: organisers see all
/// of the event's; others those of a submission they may see.
pub(super) fn visible_speakers(ev: &TalkEvent, sp: &str) -> String {
    if ev.role.is_orga() {
        return "1 = 1".into();
    }
    format!(
        "EXISTS (SELECT 1 FROM talk_submission_speakers vss \
         JOIN talk_submissions vs ON vs.id = vss.submission_id \
         WHERE vss.speaker_id = {sp}.id AND {})",
        visible_submissions(ev, "vs")
    )
}

/// The IDs of rows as `IN (...)` values.
fn ids_in(ids: &[i64]) -> (String, Vec<sea_orm::Value>) {
    let keys: Vec<Value> = ids.iter().map(|i| Value::from(*i)).collect();
    keys_in(&keys)
}

/// Groups `(owner, value)` rows by owner, keeping their order.
fn grouped(rows: Vec<(i64, Value)>) -> std::collections::HashMap<i64, Vec<Value>> {
    let mut map: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    for (owner, value) in rows {
        map.entry(owner).or_default().push(value);
    }
    map
}

/// Whether an availability runs from midnight to midnight in the event's time zone.
fn whole_days(tz: Tz, start: DateTime<Utc>, end: DateTime<Utc>) -> bool {
    let midnight = |t: DateTime<Utc>| t.with_timezone(&tz).time() == chrono::NaiveTime::MIN;
    midnight(start) && midnight(end)
}

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (codes, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT sp.id, sp.code, sp.name, u.fullname AS user_name, sp.biography, sp.avatar, \
             sp.email, u.email AS user_email, sp.user_id, sp.locale, sp.timezone, \
             sp.has_arrived, sp.internal_notes \
             FROM talk_speakers sp LEFT JOIN users u ON u.id = sp.user_id \
             WHERE sp.code IN {codes} AND sp.event_id = ${} AND {}",
            values.len(),
            visible_speakers(ctx.ev, "sp")
        );
        let rows = ctx.rows(&sql, values).await?;
        let ids: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id"))
            .collect::<Result<_, _>>()?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (in_ids, values) = ids_in(&ids);
        let submissions = ctx
            .rows(
                &format!(
                    "SELECT ss.speaker_id AS owner, s.code AS v FROM talk_submission_speakers ss \
                     JOIN talk_submissions s ON s.id = ss.submission_id \
                     WHERE ss.speaker_id IN {in_ids} AND {} ORDER BY s.code",
                    visible_submissions(ctx.ev, "s")
                ),
                values.clone(),
            )
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<i64>("", "owner")?,
                    Value::from(r.try_get::<String>("", "v")?),
                ))
            })
            .collect::<Result<Vec<_>, sea_orm::DbErr>>()?;
        let answers = ctx
            .rows(
                &format!(
                    "SELECT a.speaker_id AS owner, a.id AS v FROM talk_answers a \
                     JOIN talk_questions q ON q.id = a.question_id \
                     WHERE a.speaker_id IN {in_ids} AND q.target = 'speaker' AND {} \
                     ORDER BY q.position, q.id, a.id",
                    super::questions::visible(ctx.role())
                ),
                values.clone(),
            )
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<i64>("", "owner")?,
                    Value::from(r.try_get::<i64>("", "v")?),
                ))
            })
            .collect::<Result<Vec<_>, sea_orm::DbErr>>()?;
        let orga = ctx.role().is_orga();
        let tz: Tz = ctx.ev.event.timezone.parse().unwrap_or(Tz::UTC);
        let availabilities = if orga {
            ctx.rows(
                &format!(
                    "SELECT speaker_id AS owner, start, \"end\" FROM talk_availabilities \
                     WHERE speaker_id IN {in_ids} ORDER BY start, id"
                ),
                values,
            )
            .await?
            .iter()
            .map(|r| {
                let start: DateTime<Utc> = r.try_get("", "start")?;
                let end: DateTime<Utc> = r.try_get("", "end")?;
                Ok((
                    r.try_get::<i64>("", "owner")?,
                    json!({"start": start, "end": end, "allDay": whole_days(tz, start, end)}),
                ))
            })
            .collect::<Result<Vec<_>, sea_orm::DbErr>>()?
        } else {
            Vec::new()
        };
        let (mut submissions, mut answers, mut availabilities) = (
            grouped(submissions),
            grouped(answers),
            grouped(availabilities),
        );
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let name: String = r.try_get("", "name")?;
                let user_name: Option<String> = r.try_get("", "user_name")?;
                let name = Some(name)
                    .filter(|n| !n.is_empty())
                    .or(user_name.filter(|n| !n.is_empty()))
                    .unwrap_or_else(|| "Unnamed speaker".into());
                let avatar: Option<String> = r.try_get("", "avatar")?;
                let mut o = json!({
                    "code": r.try_get::<String>("", "code")?,
                    "name": name,
                    "biography": r.try_get::<Option<String>>("", "biography")?,
                    "submissions": submissions.remove(&id).unwrap_or_default(),
                    "avatar_url": ctx.file_url(avatar.as_deref()),
                    "answers": answers.remove(&id).unwrap_or_default(),
                });
                if orga {
                    let email: Option<String> = r.try_get("", "email")?;
                    let user_email: Option<String> = r.try_get("", "user_email")?;
                    let extra = json!({
                        "email": email.or(user_email),
                        "timezone": r.try_get::<String>("", "timezone")?,
                        "locale": r.try_get::<String>("", "locale")?,
                        "is_managed": r.try_get::<Option<i64>>("", "user_id")?.is_none(),
                        "has_arrived": r.try_get::<bool>("", "has_arrived")?,
                        "availabilities": availabilities.remove(&id).unwrap_or_default(),
                        "internal_notes": r.try_get::<Option<String>>("", "internal_notes")?,
                    });
                    if let (Some(o), Value::Object(extra)) = (o.as_object_mut(), extra) {
                        o.extend(extra);
                    }
                }
                Ok(o)
            })
            .collect()
    })
}

/// The event's default language and its languages, from its settings.
pub(super) async fn languages(
    state: &AppState,
    ev: &TalkEvent,
) -> Result<(String, Vec<String>), ApiError> {
    let generation = state.cache.generation().await;
    let values = settings::of_event(
        &state.db,
        &state.settings,
        generation.map(|g| (state.cache.as_ref(), g)),
        &ev.event,
    )
    .await?;
    let locales: Vec<String> = values
        .get("locales")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let default = values
        .get("locale")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| locales.first().cloned())
        .unwrap_or_else(|| "en".into());
    Ok((default, locales))
}

/// A time a speaker is available, as sent.
#[derive(Object)]
#[oai(rename = "TalkAvailabilityWrite")]
pub struct AvailabilityIn {
    /// Start.
    pub start: DateTime<Utc>,
    /// End, after the start.
    pub end: DateTime<Utc>,
}

/// A new speaker, or all fields of one (PUT); fields left out keep their values (on
/// creation: none, the event's language, not arrived).
#[derive(Object)]
#[oai(rename = "TalkSpeakerWrite")]
pub struct SpeakerWrite {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub name: String,
    /// Contact address. Not checked against other speakers': the speaker is a managed one,
    /// without a user account. Changing it needs API version v1; v2 ignores it on update.
    #[oai(nullable, validator(max_length = 254))]
    pub email: MaybeUndefined<String>,
    /// Biography.
    #[oai(nullable, validator(max_length = 100000))]
    pub biography: MaybeUndefined<String>,
    /// Language, one of the event's; null for the event's default.
    #[oai(nullable, validator(max_length = 32))]
    pub locale: MaybeUndefined<String>,
    /// Picture: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub avatar: MaybeUndefined<String>,
    /// Whether the speaker has arrived at the event.
    pub has_arrived: Option<bool>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// When the speaker is available; replaces the stored times (overlapping ones are
    /// merged).
    #[oai(validator(max_items = 200))]
    pub availabilities: Option<Vec<AvailabilityIn>>,
}

/// A partial change of a speaker.
#[derive(Object)]
#[oai(rename = "TalkSpeakerPatch")]
pub struct SpeakerPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub name: Option<String>,
    /// Contact address. Changing it needs API version v1; v2 ignores it.
    #[oai(nullable, validator(max_length = 254))]
    pub email: MaybeUndefined<String>,
    /// Biography.
    #[oai(nullable, validator(max_length = 100000))]
    pub biography: MaybeUndefined<String>,
    /// Language, one of the event's; null for the event's default.
    #[oai(nullable, validator(max_length = 32))]
    pub locale: MaybeUndefined<String>,
    /// Picture: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub avatar: MaybeUndefined<String>,
    /// Whether the speaker has arrived at the event.
    pub has_arrived: Option<bool>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// When the speaker is available; replaces the stored times (overlapping ones are
    /// merged).
    #[oai(validator(max_items = 200))]
    pub availabilities: Option<Vec<AvailabilityIn>>,
}

/// What a write changes: `None` leaves a field as it is.
#[derive(Default)]
struct Changes {
    name: Option<String>,
    email: Option<Option<String>>,
    biography: Option<Option<String>>,
    locale: Option<Option<String>>,
    avatar: Option<Option<String>>,
    has_arrived: Option<bool>,
    internal_notes: Option<Option<String>>,
    availabilities: Option<Vec<Span>>,
}

impl From<SpeakerWrite> for Changes {
    fn from(b: SpeakerWrite) -> Self {
        Self {
            name: Some(b.name),
            email: patched(b.email),
            biography: patched(b.biography),
            locale: patched(b.locale),
            avatar: patched(b.avatar),
            has_arrived: b.has_arrived,
            internal_notes: patched(b.internal_notes),
            availabilities: b
                .availabilities
                .map(|a| a.into_iter().map(|a| (a.start, a.end)).collect()),
        }
    }
}

impl From<SpeakerPatch> for Changes {
    fn from(b: SpeakerPatch) -> Self {
        Self {
            name: b.name,
            email: patched(b.email),
            biography: patched(b.biography),
            locale: patched(b.locale),
            avatar: patched(b.avatar),
            has_arrived: b.has_arrived,
            internal_notes: patched(b.internal_notes),
            availabilities: b
                .availabilities
                .map(|a| a.into_iter().map(|a| (a.start, a.end)).collect()),
        }
    }
}

/// The stored fields of a speaker.
#[derive(Clone)]
struct Fields {
    name: String,
    email: Option<String>,
    biography: Option<String>,
    locale: String,
    avatar: Option<String>,
    has_arrived: bool,
    internal_notes: Option<String>,
}

/// A stored speaker: ID, code and fields.
struct Stored {
    id: i64,
    code: String,
    fields: Fields,
}

/// Who may read speakers: organisers of the call for papers and reviewers; anyone who sees
/// the event once its agenda is public.
fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer() || agenda_visible(ev)
}

async fn speaker_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    talk.event_for(&state.db, slug, ENDPOINT, action, may_read, |ev| {
        ev.role.is_orga()
    })
    .await
}

/// The stored code of the event's speaker with this code in any case; 404 when there is
/// none.
async fn stored_code(ctx: &Ctx<'_>, code: &str) -> Result<String, ApiError> {
    let row = ctx
        .rows(
            "SELECT code FROM talk_speakers WHERE event_id = $1 AND UPPER(code) = $2",
            vec![ctx.event_id().into(), code.to_uppercase().into()],
        )
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(row.try_get("", "code")?)
}

async fn stored(ctx: &Ctx<'_>, code: &str) -> Result<Stored, ApiError> {
    let row = ctx
        .rows(
            "SELECT id, code, name, email, biography, locale, avatar, has_arrived, internal_notes \
             FROM talk_speakers WHERE event_id = $1 AND UPPER(code) = $2",
            vec![ctx.event_id().into(), code.to_uppercase().into()],
        )
        .await?
        .pop()
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

/// Availabilities sorted, with overlapping and adjacent ones merged; 400 for one that does
/// not end after it starts.
fn merged(mut times: Vec<Span>) -> Result<Vec<Span>, ApiError> {
    if times.len() > MAX_AVAILABILITIES {
        return Err(ApiError::field(
            "availabilities",
            "Too many availabilities.",
        ));
    }
    if times.iter().any(|(start, end)| end <= start) {
        return Err(ApiError::field(
            "availabilities",
            "An availability must end after it starts.",
        ));
    }
    times.sort();
    let mut out: Vec<Span> = Vec::new();
    for (start, end) in times {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    Ok(out)
}

/// The key of a stored file reference (`<key>/<name>`).
pub(super) fn file_key(reference: &str) -> &str {
    reference.split('/').next().unwrap_or(reference)
}

/// Forgets stored files no longer referred to.
pub(super) async fn drop_files(
    txn: &sea_orm::DatabaseTransaction,
    references: &[String],
) -> Result<(), ApiError> {
    for reference in references {
        crate::db::execute(
            txn,
            "DELETE FROM files WHERE id = $1",
            [file_key(reference).into()],
        )
        .await?;
    }
    Ok(())
}

/// A new speaker code, unused in the event.
async fn new_code(ctx: &Ctx<'_>) -> Result<String, ApiError> {
    for _ in 0..20 {
        let code = crate::domain::tokens::random_from(crate::domain::tokens::UNAMBIGUOUS, CODE_LEN);
        let taken = ctx
            .rows(
                "SELECT 1 AS x FROM talk_speakers WHERE event_id = $1 AND code = $2",
                vec![ctx.event_id().into(), code.clone().into()],
            )
            .await?;
        if taken.is_empty() {
            return Ok(code);
        }
    }
    Err(ApiError::internal())
}

/// Inserts a managed speaker (without an account) in a transaction under way and logs it;
/// gives its ID and code. `email` is stored as given (normalize it first).
pub(super) async fn insert_managed(
    ctx: &Ctx<'_>,
    txn: &sea_orm::DatabaseTransaction,
    name: &str,
    email: Option<&str>,
    locale: &str,
) -> Result<(i64, String), ApiError> {
    let code = new_code(ctx).await?;
    let now = Utc::now();
    let id = crate::db::insert_returning_id(
        txn,
        "INSERT INTO talk_speakers (event_id, user_id, code, name, email, locale, timezone, \
         has_arrived, created, updated) \
         VALUES ($1, NULL, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
        [
            ctx.event_id().into(),
            code.clone().into(),
            name.into(),
            email.map(str::to_owned).into(),
            locale.into(),
            ctx.ev.event.timezone.clone().into(),
            false.into(),
            now.into(),
            now.into(),
        ],
    )
    .await?;
    let data = json!({"name": name, "email": email});
    talk_log::write(txn, Change::new(ctx.ev, OBJECT, id, "create", data)).await?;
    Ok((id, code))
}

/// Checks a sent email address; gives its stored form.
pub(super) fn checked_email(field: &str, email: &str) -> Result<String, ApiError> {
    let email = normalize_email(email);
    if is_valid_email(&email) {
        Ok(email)
    } else {
        Err(ApiError::field(field, "Enter a valid email address."))
    }
}

/// Checks a sent language against the event's; `None` gives the default.
pub(super) fn checked_locale(
    field: &str,
    locale: Option<&str>,
    languages: &(String, Vec<String>),
) -> Result<String, ApiError> {
    match locale.filter(|l| !l.is_empty()) {
        None => Ok(languages.0.clone()),
        Some(l) if languages.1.iter().any(|x| x == l) => Ok(l.to_owned()),
        Some(_) => Err(ApiError::field(
            field,
            "This language is not enabled for this event.",
        )),
    }
}

/// Writes a speaker (new when `existing` is `None`) with its availabilities and log entry in
/// one transaction, and gives it as organisers see it.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    existing: Option<Stored>,
    mut changes: Changes,
) -> Result<Shaped<SpeakerOut>, ApiError> {
    let user_id = ev.caller.user_id()?;
    let languages = languages(state, ev).await?;
    if existing.is_some() && ev.version() >= ApiVersion::V2 {
        // Since v2, email addresses are not changed through the API.
        changes.email = None;
    }
    let mut data = Map::new();
    let mut f = existing.as_ref().map_or_else(
        || Fields {
            name: String::new(),
            email: None,
            biography: None,
            locale: languages.0.clone(),
            avatar: None,
            has_arrived: false,
            internal_notes: None,
        },
        |s| s.fields.clone(),
    );
    if let Some(name) = changes.name {
        if name.trim().is_empty() {
            return Err(ApiError::field("name", "This field may not be blank."));
        }
        data.insert("name".into(), json!(name));
        f.name = name;
    }
    if let Some(email) = changes.email {
        f.email = match email.filter(|e| !e.trim().is_empty()) {
            Some(e) => Some(checked_email("email", &e)?),
            None => None,
        };
        data.insert("email".into(), json!(f.email));
    }
    if let Some(bio) = changes.biography {
        data.insert("biography".into(), json!(bio));
        f.biography = bio;
    }
    if let Some(locale) = changes.locale {
        f.locale = checked_locale("locale", locale.as_deref(), &languages)?;
        data.insert("locale".into(), json!(f.locale));
    }
    if let Some(arrived) = changes.has_arrived {
        data.insert("has_arrived".into(), json!(arrived));
        f.has_arrived = arrived;
    }
    if let Some(notes) = changes.internal_notes {
        data.insert("internal_notes".into(), json!(notes));
        f.internal_notes = notes;
    }
    let availabilities = changes.availabilities.map(merged).transpose()?;
    if let Some(times) = &availabilities {
        data.insert(
            "availabilities".into(),
            json!(
                times
                    .iter()
                    .map(|(s, e)| json!({"start": s, "end": e}))
                    .collect::<Vec<_>>()
            ),
        );
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let mut dropped = Vec::new();
    if let Some(avatar) = changes.avatar {
        let new = match avatar {
            Some(file_id) => Some(
                crate::api::talk::upload::claim_for_user(
                    &txn,
                    user_id,
                    "avatar",
                    &file_id,
                    &files::PICTURE_TYPES,
                )
                .await?,
            ),
            None => None,
        };
        data.insert("avatar".into(), json!(new));
        dropped.extend(std::mem::replace(&mut f.avatar, new));
    }
    let inner = ctx.within(&txn);
    let now = Utc::now();
    let (id, code) = match &existing {
        Some(s) => {
            crate::db::execute(
                &txn,
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
                    now.into(),
                    s.id.into(),
                    ev.event.id.into(),
                ],
            )
            .await?;
            talk_log::write(
                &txn,
                Change::new(ev, OBJECT, s.id, "update", Value::Object(data)),
            )
            .await?;
            (s.id, s.code.clone())
        }
        None => {
            let (id, code) =
                insert_managed(&inner, &txn, &f.name, f.email.as_deref(), &f.locale).await?;
            crate::db::execute(
                &txn,
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
            &txn,
            "DELETE FROM talk_availabilities WHERE speaker_id = $1",
            [id.into()],
        )
        .await?;
        for (start, end) in times {
            crate::db::execute(
                &txn,
                "INSERT INTO talk_availabilities (speaker_id, start, \"end\") VALUES ($1, $2, $3)",
                [id.into(), start.into(), end.into()],
            )
            .await?;
        }
    }
    drop_files(&txn, &dropped).await?;
    let out = inner.one(&KIND, code.into(), &Expand::default()).await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Speaker operations.
pub struct SpeakersApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl SpeakersApi {
    /// List speakers
    ///
    /// Organisers see every speaker of the event; reviewers those of the submissions they
    /// review.
    #[oai(path = "/api/events/:event/speakers", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_speakers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the name contains (for organisers: or the email address).
        q: Query<Option<String>>,
        /// Order: `code` (default) or `name`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `submissions`, `answers`, `answers.question`, ...
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<SpeakerOut>>>> {
        let ev = speaker_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_speakers sp LEFT JOIN users u ON u.id = sp.user_id",
            "sp.code",
            "sp.event_id",
            ev.event.id,
            "sp.code",
        );
        listing.condition(&visible_speakers(&ev, "sp"));
        let searched: &[&str] = if ev.role.is_orga() {
            &["sp.name", "u.fullname", "sp.email", "u.email"]
        } else {
            &["sp.name", "u.fullname"]
        };
        listing
            .search(q.as_deref(), searched)
            .order(o.as_deref(), &[("code", "sp.code"), ("name", "sp.name")]);
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a speaker
    #[oai(path = "/api/events/:event/speakers/:code", method = "get")]
    async fn get_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        /// Fields to expand: `submissions`, `answers`, `answers.question`, ...
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let code = stored_code(&ctx, &code).await?;
        Ok(Json(ctx.one(&KIND, code.into(), &expand).await?))
    }

    /// Create a speaker
    ///
    /// A managed speaker, without a user account; email addresses are not deduplicated.
    #[oai(path = "/api/events/:event/speakers", method = "post")]
    async fn create_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<SpeakerWrite>,
    ) -> TalkResult<Created<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Create).await?;
        Ok(Created::Created(Json(
            save(&state, &ev, None, body.0.into()).await?,
        )))
    }

    /// Change a speaker
    ///
    /// Changes the fields it sends. The email address changes in API version v1 only.
    #[oai(path = "/api/events/:event/speakers/:code", method = "patch")]
    async fn patch_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        body: JsonBody<SpeakerPatch>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Update).await?;
        let existing = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            save(&state, &ev, Some(existing), body.0.into()).await?,
        ))
    }

    /// Replace a speaker
    ///
    /// The name is required; fields left out keep their values, as in pretalx. The email
    /// address changes in API version v1 only.
    #[oai(path = "/api/events/:event/speakers/:code", method = "put")]
    async fn put_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        body: JsonBody<SpeakerWrite>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Update).await?;
        let existing = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            save(&state, &ev, Some(existing), body.0.into()).await?,
        ))
    }

    /// A speaker's activity log
    ///
    /// Newest first; organisers of the call for papers only, since entries hold contact
    /// details.
    #[oai(path = "/api/events/:event/speakers/:code/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn speaker_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = talk.event(&state.db, &event).await?;
        ev.require(ENDPOINT, Action::Retrieve, ev.role.is_orga())?;
        let found = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, found.id, page.0, page_size.0).await?,
        ))
    }
}
