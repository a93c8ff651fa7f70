//! Submissions of the call for papers: their states and the moves between them, as pretalx
//! allows them ([`transition`]); who sees which submission and resource; what a write may
//! change and how it is checked; the actions on a submission (moves, speakers, resources);
//! and its deletion. Every change writes an entry to the submission's activity log, in the
//! change's transaction.

use sea_orm::{ConnectionTrait, DatabaseTransaction};
use serde_json::{Map, Value, json};

use super::access::{TalkEvent, agenda_visible, not_found};
use super::log::{self as talk_log, Change};
use super::speakers::{self, Languages};
use super::sql::{first, ids_in, rows, unused_code};
pub use super::submission_state::State;
use crate::domain::files;
use crate::domain::refusal::Refusal;
use crate::values::FieldErrors;

/// The object type of submissions in the activity log.
pub const OBJECT: &str = "submission";

/// Most tags one submission may be given at once.
pub const MAX_TAGS: usize = 100;

/// Largest stored form of `anonymised_data`, in bytes.
pub const MAX_ANONYMISED_LEN: usize = 100_000;

/// What a move of a submission to a state does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The submission has the state already: only its pending state is cleared.
    Stay,
    /// The submission moves from one state to another.
    Move {
        /// Its state now.
        from: State,
        /// Its new state.
        to: State,
    },
}

/// Decides a move of a submission in state `current` to `target`: staying where it is, a
/// move pretalx allows ([`State::sources`]), or 400 naming the states it could come from.
pub fn transition(current: State, target: State) -> Result<Transition, Refusal> {
    if current == target {
        return Ok(Transition::Stay);
    }
    let sources = target.sources();
    if !sources.contains(&current) {
        let names: Vec<&str> = sources.iter().map(|s| s.name()).collect();
        return Err(Refusal::bad_request(format!(
            "A {} submission cannot become {}: only {} ones can.",
            current.name(),
            target.name(),
            names.join(" or ")
        )));
    }
    Ok(Transition::Move {
        from: current,
        to: target,
    })
}

/// Who may read submissions (and their speakers): organisers of the call for papers and
/// reviewers; anyone who sees the event once its agenda is public.
pub fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer() || agenda_visible(ev)
}

/// Who may change submissions (and speakers): organisers of the call for papers.
pub fn may_write(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
}

/// The SQL condition of the resources (alias `r`) the caller may see: team members of the
/// call for papers all, others the public ones.
pub fn visible_resources(ev: &TalkEvent, r: &str) -> String {
    if ev.role.is_orga() || ev.role.is_reviewer() {
        "1 = 1".into()
    } else {
        format!("{r}.is_public")
    }
}

/// The stored fields of a submission that writes change.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    /// Title.
    pub title: String,
    /// The session type's ID.
    pub submission_type: i64,
    /// The track's ID.
    pub track: Option<i64>,
    /// Abstract.
    pub abstract_: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// The speakers' notes to the organisers.
    pub notes: Option<String>,
    /// Notes of the organisers.
    pub internal_notes: Option<String>,
    /// Own duration in minutes; `None` for the session type's.
    pub duration: Option<i32>,
    /// How often the session takes place.
    pub slot_count: i32,
    /// Whether attendees must sign up.
    pub attendee_signup_required: bool,
    /// How many attendees may sign up.
    pub attendee_signup_capacity: Option<i32>,
    /// Language of the session.
    pub content_locale: String,
    /// Whether the session may not be recorded.
    pub do_not_record: bool,
    /// Image: a stored file reference.
    pub image: Option<String>,
    /// Whether the session is featured.
    pub is_featured: bool,
    /// The state the organisers mean to move it to later.
    pub pending_state: Option<State>,
    /// Code for reviewing without an account.
    pub review_code: Option<String>,
    /// The anonymised fields reviewers see instead.
    pub anonymised: Option<Value>,
}

/// A stored submission: ID, code, state and fields.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Internal ID.
    pub id: i64,
    /// The submission's code as stored.
    pub code: String,
    /// Its state.
    pub state: State,
    /// The fields writes change.
    pub fields: Fields,
}

/// The event's submission with this code in any case, as far as the caller may see it;
/// 404 otherwise.
pub async fn stored(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    code: &str,
) -> Result<Stored, Refusal> {
    let sql = format!(
        "SELECT s.id, s.code, s.state, s.title, s.submission_type_id, s.track_id, s.abstract, \
         s.description, s.notes, s.internal_notes, s.duration, s.slot_count, \
         s.attendee_signup_required, s.attendee_signup_capacity, s.content_locale, \
         s.do_not_record, s.image, s.is_featured, s.pending_state, s.review_code, s.anonymised \
         FROM talk_submissions s WHERE s.event_id = $1 AND UPPER(s.code) = $2 AND {}",
        super::schedule::visible_submissions(ev, "s")
    );
    let row = first(
        db,
        &sql,
        vec![ev.event.id.into(), code.to_uppercase().into()],
    )
    .await?
    .ok_or_else(not_found)?;
    let state: String = row.try_get("", "state")?;
    let pending: Option<String> = row.try_get("", "pending_state")?;
    Ok(Stored {
        id: row.try_get("", "id")?,
        code: row.try_get("", "code")?,
        state: State::from_name(&state).unwrap_or(State::Submitted),
        fields: Fields {
            title: row.try_get("", "title")?,
            submission_type: row.try_get("", "submission_type_id")?,
            track: row.try_get("", "track_id")?,
            abstract_: row.try_get("", "abstract")?,
            description: row.try_get("", "description")?,
            notes: row.try_get("", "notes")?,
            internal_notes: row.try_get("", "internal_notes")?,
            duration: row.try_get("", "duration")?,
            slot_count: row.try_get("", "slot_count")?,
            attendee_signup_required: row.try_get("", "attendee_signup_required")?,
            attendee_signup_capacity: row.try_get("", "attendee_signup_capacity")?,
            content_locale: row.try_get("", "content_locale")?,
            do_not_record: row.try_get("", "do_not_record")?,
            image: row.try_get("", "image")?,
            is_featured: row.try_get("", "is_featured")?,
            pending_state: pending.as_deref().and_then(State::from_name),
            review_code: row.try_get("", "review_code")?,
            anonymised: row.try_get("", "anonymised")?,
        },
    })
}

/// What a write changes: `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct Changes {
    /// Title.
    pub title: Option<String>,
    /// The session type's ID.
    pub submission_type: Option<i64>,
    /// The track's ID.
    pub track: Option<Option<i64>>,
    /// The tags' IDs, replacing the tags.
    pub tags: Option<Vec<i64>>,
    /// Abstract.
    pub abstract_: Option<Option<String>>,
    /// Description.
    pub description: Option<Option<String>>,
    /// The speakers' notes to the organisers.
    pub notes: Option<Option<String>>,
    /// Notes of the organisers.
    pub internal_notes: Option<Option<String>>,
    /// Own duration in minutes.
    pub duration: Option<Option<i32>>,
    /// How often the session takes place.
    pub slot_count: Option<i32>,
    /// Whether attendees must sign up.
    pub attendee_signup_required: Option<bool>,
    /// How many attendees may sign up.
    pub attendee_signup_capacity: Option<Option<i32>>,
    /// Language of the session, one of the event's.
    pub content_locale: Option<String>,
    /// Whether the session may not be recorded.
    pub do_not_record: Option<bool>,
    /// Image: an upload's ID to claim, or `Some(None)` to remove it.
    pub image: Option<Option<String>>,
    /// Whether the session is featured.
    pub is_featured: Option<bool>,
    /// The state the organisers mean to move it to later.
    pub pending_state: Option<Option<State>>,
    /// Code for reviewing without an account.
    pub review_code: Option<Option<String>>,
    /// The anonymised fields reviewers see instead: an object.
    pub anonymised_data: Option<Option<Value>>,
}

/// Applies `changes` to `f`, checking what needs no database (blank title, the event's
/// languages, anonymised data); gives the log's data.
fn apply(
    f: &mut Fields,
    changes: &mut Changes,
    languages: &Languages,
) -> Result<Map<String, Value>, Refusal> {
    let mut data = Map::new();
    let mut errors = FieldErrors::default();
    if let Some(title) = changes.title.take() {
        if title.trim().is_empty() {
            errors.push("title", "This field may not be blank.");
        }
        data.insert("title".into(), json!(title));
        f.title = title;
    }
    macro_rules! set {
        ($field:ident, $name:literal) => {
            if let Some(v) = changes.$field.take() {
                data.insert($name.into(), json!(v));
                f.$field = v;
            }
        };
    }
    set!(submission_type, "submission_type");
    set!(track, "track");
    set!(abstract_, "abstract");
    set!(description, "description");
    set!(notes, "notes");
    set!(internal_notes, "internal_notes");
    set!(duration, "duration");
    set!(slot_count, "slot_count");
    set!(attendee_signup_required, "attendee_signup_required");
    set!(attendee_signup_capacity, "attendee_signup_capacity");
    set!(do_not_record, "do_not_record");
    set!(is_featured, "is_featured");
    set!(review_code, "review_code");
    if let Some(locale) = changes.content_locale.take() {
        if languages.offers(&locale) {
            data.insert("content_locale".into(), json!(locale));
            f.content_locale = locale;
        } else {
            errors.push(
                "content_locale",
                format!("\"{locale}\" is not a valid choice."),
            );
        }
    }
    if let Some(pending) = changes.pending_state.take() {
        data.insert("pending_state".into(), json!(pending.map(State::name)));
        f.pending_state = pending;
    }
    if let Some(anonymised) = changes.anonymised_data.take() {
        match &anonymised {
            Some(v) if !v.is_object() => errors.push("anonymised_data", "Expected an object."),
            Some(v) if v.to_string().len() > MAX_ANONYMISED_LEN => {
                errors.push("anonymised_data", "Too long.");
            }
            _ => {}
        }
        data.insert("anonymised_data".into(), json!(anonymised));
        f.anonymised = anonymised;
    }
    errors.into_result()?;
    Ok(data)
}

/// 400 on `field` unless the event has a row of `table` with this ID.
async fn check_exists(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    table: &str,
    field: &str,
    id: i64,
) -> Result<(), Refusal> {
    let sql = format!("SELECT id FROM {table} WHERE id = $1 AND event_id = $2");
    if first(db, &sql, vec![id.into(), ev.event.id.into()])
        .await?
        .is_none()
    {
        return Err(invalid_pk(field, id));
    }
    Ok(())
}

/// The 400 of a reference to an object that does not exist.
fn invalid_pk(field: &str, id: i64) -> Refusal {
    Refusal::field(
        field,
        format!("Invalid pk \"{id}\" - object does not exist."),
    )
}

/// The tags a write sends, sorted without repeats; 400 for too many or for one that is not
/// the event's.
async fn checked_tags(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    mut tags: Vec<i64>,
) -> Result<Vec<i64>, Refusal> {
    tags.sort_unstable();
    tags.dedup();
    if tags.len() > MAX_TAGS {
        return Err(Refusal::field("tags", "Too many tags."));
    }
    if tags.is_empty() {
        return Ok(tags);
    }
    let (in_ids, mut values) = ids_in(&tags, 0);
    values.push(ev.event.id.into());
    let sql = format!(
        "SELECT id FROM talk_tags WHERE id IN {in_ids} AND event_id = ${}",
        values.len()
    );
    let found = rows(db, &sql, values)
        .await?
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect::<Result<Vec<_>, _>>()?;
    match tags.iter().find(|t| !found.contains(t)) {
        Some(missing) => Err(invalid_pk("tags", *missing)),
        None => Ok(tags),
    }
}

/// Writes a submission (a new one, submitted, when `existing` is `None`; on creation fields
/// left out are empty, one slot, the event's default language) with its tags, image and log
/// entry, in the transaction `txn`; gives its code. Fields left out keep their values.
pub async fn write(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    existing: Option<&Stored>,
    mut changes: Changes,
    languages: &Languages,
) -> Result<String, Refusal> {
    let user_id = ev.caller.user_id()?;
    let mut f = existing.map_or_else(
        || Fields {
            slot_count: 1,
            content_locale: languages.default.clone(),
            ..Fields::default()
        },
        |s| s.fields.clone(),
    );
    let mut data = apply(&mut f, &mut changes, languages)?;
    check_exists(
        txn,
        ev,
        "talk_submission_types",
        "submission_type",
        f.submission_type,
    )
    .await?;
    if let Some(track) = f.track {
        check_exists(txn, ev, "talk_tracks", "track", track).await?;
    }
    let tags = match changes.tags.take() {
        Some(tags) => {
            let tags = checked_tags(txn, ev, tags).await?;
            data.insert("tags".into(), json!(tags));
            Some(tags)
        }
        None => None,
    };
    if let Some(image) = changes.image.take() {
        files::replace_for_user(
            txn,
            user_id,
            "image",
            image.as_deref(),
            &mut f.image,
            &files::PICTURE_TYPES,
        )
        .await?;
        data.insert("image".into(), json!(f.image));
    }
    let values: Vec<sea_orm::Value> = vec![
        f.title.clone().into(),
        f.submission_type.into(),
        f.track.into(),
        f.abstract_.clone().into(),
        f.description.clone().into(),
        f.notes.clone().into(),
        f.internal_notes.clone().into(),
        f.duration.into(),
        f.slot_count.into(),
        f.attendee_signup_required.into(),
        f.attendee_signup_capacity.into(),
        f.content_locale.clone().into(),
        f.do_not_record.into(),
        f.image.clone().into(),
        f.is_featured.into(),
        f.pending_state.map(|p| p.name().to_owned()).into(),
        f.review_code.clone().into(),
        f.anonymised.clone().into(),
        crate::values::now().into(),
        ev.event.id.into(),
    ];
    let (id, code) = match existing {
        Some(s) => {
            let mut values = values;
            values.push(s.id.into());
            crate::db::execute(
                txn,
                "UPDATE talk_submissions SET title = $1, submission_type_id = $2, track_id = $3, \
                 abstract = $4, description = $5, notes = $6, internal_notes = $7, duration = $8, \
                 slot_count = $9, attendee_signup_required = $10, attendee_signup_capacity = $11, \
                 content_locale = $12, do_not_record = $13, image = $14, is_featured = $15, \
                 pending_state = $16, review_code = $17, anonymised = $18, updated = $19 \
                 WHERE event_id = $20 AND id = $21",
                values,
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
            // Codes are unique among all events' submissions.
            let code = unused_code(
                txn,
                "SELECT 1 AS x FROM talk_submissions WHERE code = $1",
                &[],
            )
            .await?;
            let mut values = values;
            values.push(code.clone().into());
            let id = crate::db::insert_returning_id(
                txn,
                "INSERT INTO talk_submissions (title, submission_type_id, track_id, abstract, \
                 description, notes, internal_notes, duration, slot_count, \
                 attendee_signup_required, attendee_signup_capacity, content_locale, \
                 do_not_record, image, is_featured, pending_state, review_code, anonymised, \
                 created, updated, event_id, code, state) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
                 $17, $18, $19, $19, $20, $21, 'submitted') RETURNING id",
                values,
            )
            .await?;
            data.insert("code".into(), json!(code));
            talk_log::write(
                txn,
                Change::new(ev, OBJECT, id, "create", Value::Object(data)),
            )
            .await?;
            (id, code)
        }
    };
    if let Some(tags) = tags {
        crate::db::execute(
            txn,
            "DELETE FROM talk_submission_tags WHERE submission_id = $1",
            [id.into()],
        )
        .await?;
        for tag in tags {
            crate::db::execute(
                txn,
                "INSERT INTO talk_submission_tags (submission_id, tag_id) VALUES ($1, $2)",
                [id.into(), tag.into()],
            )
            .await?;
        }
    }
    // Another track may change which score categories apply to its reviews.
    if existing.is_some_and(|s| s.fields.track != f.track) {
        let scope = super::reviews::Scope::Submission(id);
        super::reviews::recompute(txn, ev.event.id, scope).await?;
    }
    // A pending state, slot count or duration changes the slots in the schedule in progress.
    super::schedule::sync_submission(txn, ev.event.id, id).await?;
    Ok(code)
}

/// Whether a link is an absolute `http(s)` URL without spaces.
pub fn is_link(link: &str) -> bool {
    let rest = link
        .strip_prefix("https://")
        .or_else(|| link.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !r.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// A new resource of a submission, checked: an upload to claim or a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewResource {
    /// An upload's ID (`file:...`), when the resource is a file.
    pub file: Option<String>,
    /// The link, when the resource is one.
    pub link: Option<String>,
    /// Description.
    pub description: String,
    /// Whether the public may see it.
    pub is_public: bool,
}

impl NewResource {
    /// A resource as sent (empty strings count as left out): either a file or a link, a
    /// link an `http(s)` URL, with a description; 400 otherwise.
    pub fn checked(
        file: Option<String>,
        link: Option<String>,
        description: String,
        is_public: bool,
    ) -> Result<Self, Refusal> {
        let file = file.filter(|r| !r.is_empty());
        let link = link.filter(|l| !l.is_empty());
        match (&file, &link) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(Refusal::field("resource", "Give either a file or a link."));
            }
            (None, Some(l)) if !is_link(l) => {
                return Err(Refusal::field("link", "Enter a valid URL."));
            }
            _ => {}
        }
        if description.trim().is_empty() {
            return Err(Refusal::field(
                "description",
                "This field may not be blank.",
            ));
        }
        Ok(Self {
            file,
            link,
            description,
            is_public,
        })
    }
}

/// An action on a submission, besides changing its fields.
#[derive(Debug, Clone)]
pub enum Act {
    /// Move it to a state ([`transition`]).
    MoveTo(State),
    /// Add the event's speaker with this email address (checked and normalized), or a new
    /// managed speaker of this name and language.
    AddSpeaker {
        /// The email address.
        email: String,
        /// The name of a new speaker.
        name: String,
        /// The language of a new speaker.
        locale: String,
    },
    /// Remove the speaker with this code (in any case); 400 when it is none of the
    /// submission's.
    RemoveSpeaker(String),
    /// Add a resource.
    AddResource(NewResource),
    /// Remove the resource with this ID, with its file; 404 when it is none of the
    /// submission's.
    RemoveResource(i64),
}

/// Does `act` on the submission `found` in the transaction `txn`, with its log entry.
pub async fn act(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    act: Act,
) -> Result<(), Refusal> {
    match act {
        Act::MoveTo(target) => return move_to(txn, ev, found, target).await,
        Act::AddSpeaker {
            email,
            name,
            locale,
        } => add_speaker(txn, ev, found, &email, &name, &locale).await?,
        Act::RemoveSpeaker(code) => remove_speaker(txn, ev, found, &code).await?,
        Act::AddResource(resource) => add_resource(txn, ev, found, resource).await?,
        Act::RemoveResource(id) => remove_resource(txn, ev, found, id).await?,
    }
    crate::db::execute(
        txn,
        "UPDATE talk_submissions SET updated = $1 WHERE id = $2",
        [crate::values::now().into(), found.id.into()],
    )
    .await?;
    Ok(())
}

/// Moves a submission to `target`: 400 when pretalx's rules do not allow the move (nothing
/// changes); a move to the state it has only clears the pending state. Rejecting, canceling
/// and withdrawing unfeature it.
async fn move_to(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    target: State,
) -> Result<(), Refusal> {
    match transition(found.state, target)? {
        Transition::Stay => {
            if found.fields.pending_state.is_some() {
                crate::db::execute(
                    txn,
                    "UPDATE talk_submissions SET pending_state = NULL, updated = $1 WHERE id = $2",
                    [crate::values::now().into(), found.id.into()],
                )
                .await?;
                let data = json!({"previous": target.name(), "pending_state": Value::Null});
                talk_log::write(
                    txn,
                    Change::new(ev, OBJECT, found.id, target.action(), data),
                )
                .await?;
            }
        }
        Transition::Move { from, to } => {
            let moved = crate::db::execute(
                txn,
                "UPDATE talk_submissions SET state = $1, pending_state = NULL, \
                 is_featured = CASE WHEN $2 THEN $3 ELSE is_featured END, updated = $4 \
                 WHERE id = $5 AND state = $6",
                [
                    to.name().into(),
                    to.unfeatures().into(),
                    false.into(),
                    crate::values::now().into(),
                    found.id.into(),
                    from.name().into(),
                ],
            )
            .await?;
            if moved == 0 {
                return Err(Refusal::bad_request(
                    "The submission changed meanwhile; read it again and retry.",
                ));
            }
            let data = json!({"previous": from.name(), "from_pending": false});
            talk_log::write(txn, Change::new(ev, OBJECT, found.id, to.action(), data)).await?;
        }
    }
    super::schedule::sync_submission(txn, ev.event.id, found.id).await?;
    Ok(())
}

/// Adds the event's speaker with this email address, or a new managed one, last among the
/// submission's speakers; a speaker it has already stays as it is.
async fn add_speaker(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    email: &str,
    name: &str,
    locale: &str,
) -> Result<(), Refusal> {
    let existing = first(
        txn,
        "SELECT sp.id, sp.code, sp.name FROM talk_speakers sp \
         LEFT JOIN users u ON u.id = sp.user_id \
         WHERE sp.event_id = $1 AND LOWER(COALESCE(sp.email, u.email, '')) = $2 \
         ORDER BY sp.id LIMIT 1",
        vec![ev.event.id.into(), email.into()],
    )
    .await?;
    let (speaker, speaker_code, speaker_name): (i64, String, String) = match existing {
        Some(r) => (
            r.try_get("", "id")?,
            r.try_get("", "code")?,
            r.try_get("", "name")?,
        ),
        None => {
            let (id, code) = speakers::insert_managed(txn, ev, name, Some(email), locale).await?;
            (id, code, name.to_owned())
        }
    };
    let on = rows(
        txn,
        "SELECT speaker_id, position FROM talk_submission_speakers WHERE submission_id = $1",
        vec![found.id.into()],
    )
    .await?;
    let mut last = 0;
    for r in &on {
        if r.try_get::<i64>("", "speaker_id")? == speaker {
            return Ok(());
        }
        last = last.max(r.try_get::<i32>("", "position")?);
    }
    crate::db::execute(
        txn,
        "INSERT INTO talk_submission_speakers (submission_id, speaker_id, position) \
         VALUES ($1, $2, $3)",
        [found.id.into(), speaker.into(), (last + 1).into()],
    )
    .await?;
    let data = json!({"code": speaker_code, "name": speaker_name, "email": email});
    talk_log::write(txn, Change::new(ev, OBJECT, found.id, "speakers.add", data)).await?;
    Ok(())
}

/// Removes the speaker with this code (in any case) from the submission.
async fn remove_speaker(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    code: &str,
) -> Result<(), Refusal> {
    let row = first(
        txn,
        "SELECT sp.id, sp.code, sp.name, sp.email FROM talk_submission_speakers ss \
         JOIN talk_speakers sp ON sp.id = ss.speaker_id \
         WHERE ss.submission_id = $1 AND UPPER(sp.code) = $2",
        vec![found.id.into(), code.to_uppercase().into()],
    )
    .await?
    .ok_or_else(|| Refusal::bad_request("Speaker not found."))?;
    let speaker: i64 = row.try_get("", "id")?;
    crate::db::execute(
        txn,
        "DELETE FROM talk_submission_speakers WHERE submission_id = $1 AND speaker_id = $2",
        [found.id.into(), speaker.into()],
    )
    .await?;
    let data = json!({
        "code": row.try_get::<String>("", "code")?,
        "name": row.try_get::<String>("", "name")?,
        "email": row.try_get::<Option<String>>("", "email")?,
    });
    talk_log::write(
        txn,
        Change::new(ev, OBJECT, found.id, "speakers.remove", data),
    )
    .await?;
    Ok(())
}

/// Adds a resource, claiming its upload for the caller.
async fn add_resource(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    resource: NewResource,
) -> Result<(), Refusal> {
    let reference = match &resource.file {
        Some(id) => Some(
            files::claim_for_user(
                txn,
                ev.caller.user_id()?,
                "resource",
                id,
                &files::DOCUMENT_TYPES,
            )
            .await?,
        ),
        None => None,
    };
    let id = crate::db::insert_returning_id(
        txn,
        "INSERT INTO talk_resources (submission_id, resource, link, description, is_public) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
        [
            found.id.into(),
            reference.clone().into(),
            resource.link.clone().into(),
            resource.description.clone().into(),
            resource.is_public.into(),
        ],
    )
    .await?;
    let data = json!({
        "id": id,
        "resource": reference,
        "link": resource.link,
        "description": resource.description,
        "is_public": resource.is_public,
    });
    talk_log::write(
        txn,
        Change::new(ev, OBJECT, found.id, "resources.add", data),
    )
    .await?;
    Ok(())
}

/// Removes a resource of the submission with its file.
async fn remove_resource(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
    resource: i64,
) -> Result<(), Refusal> {
    let row = first(
        txn,
        "SELECT resource, link, description FROM talk_resources \
         WHERE id = $1 AND submission_id = $2",
        vec![resource.into(), found.id.into()],
    )
    .await?
    .ok_or_else(|| Refusal::not_found("Resource not found."))?;
    let file: Option<String> = row.try_get("", "resource")?;
    crate::db::execute(
        txn,
        "DELETE FROM talk_resources WHERE id = $1",
        [resource.into()],
    )
    .await?;
    files::forget(txn, file.as_slice()).await?;
    let data = json!({
        "id": resource,
        "link": row.try_get::<Option<String>>("", "link")?,
        "description": row.try_get::<String>("", "description")?,
    });
    talk_log::write(
        txn,
        Change::new(ev, OBJECT, found.id, "resources.remove", data),
    )
    .await?;
    Ok(())
}

/// Deletes a submission with its speakers' roles, tags, resources and answers, and the
/// files of its image, resources and answers; logs the deletion. A submission in a released
/// schedule is 400: released schedules never change.
pub async fn delete(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    found: &Stored,
) -> Result<(), Refusal> {
    if super::schedule::is_released(txn, ev.event.id, found.id).await? {
        return Err(Refusal::bad_request(
            "This proposal is part of a released schedule and cannot be deleted; cancel or \
             withdraw it instead.",
        ));
    }
    let mut references: Vec<String> = found.fields.image.iter().cloned().collect();
    for sql in [
        "SELECT resource AS f FROM talk_resources WHERE submission_id = $1",
        "SELECT answer_file AS f FROM talk_answers WHERE submission_id = $1",
    ] {
        for r in rows(txn, sql, vec![found.id.into()]).await? {
            references.extend(r.try_get::<Option<String>>("", "f")?);
        }
    }
    crate::db::execute(
        txn,
        "DELETE FROM talk_submissions WHERE id = $1",
        [found.id.into()],
    )
    .await?;
    files::forget(txn, &references).await?;
    let data =
        json!({"title": found.fields.title, "code": found.code, "state": found.state.name()});
    talk_log::write(txn, Change::new(ev, OBJECT, found.id, "delete", data)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{NewResource, State, Transition, is_link, transition};

    #[test]
    fn moves_follow_pretalx_and_a_move_to_the_same_state_stays() {
        for from in State::ALL {
            for to in State::ALL {
                let decided = transition(from, to);
                if from == to {
                    assert_eq!(decided.ok(), Some(Transition::Stay));
                } else if to.sources().contains(&from) {
                    assert_eq!(decided.ok(), Some(Transition::Move { from, to }));
                } else {
                    let refused = decided.expect_err("refused");
                    assert!(
                        matches!(
                            refused,
                            crate::domain::refusal::Refusal::BadRequest(_)
                                | crate::domain::refusal::Refusal::Invalid(_)
                        ),
                        "{refused:?}"
                    );
                }
            }
        }
        assert!(transition(State::Withdrawn, State::Accepted).is_err());
        assert!(transition(State::Withdrawn, State::Submitted).is_ok());
        assert!(transition(State::Submitted, State::Confirmed).is_err());
    }

    #[test]
    fn states_read_back_from_their_names() {
        for s in State::ALL {
            assert_eq!(State::from_name(s.name()), Some(s));
        }
        assert_eq!(State::from_name("maybe"), None);
    }

    #[test]
    fn a_resource_is_a_file_or_a_web_link_with_a_description() {
        let make = |file: Option<&str>, link: Option<&str>, description: &str| {
            NewResource::checked(
                file.map(str::to_owned),
                link.map(str::to_owned),
                description.into(),
                true,
            )
        };
        assert!(make(None, Some("https://example.org/slides"), "Slides").is_ok());
        assert!(make(Some("file:abc"), Some(""), "Paper").is_ok());
        assert!(make(None, None, "Nothing").is_err());
        assert!(make(Some("file:abc"), Some("https://example.org/"), "Both").is_err());
        assert!(make(None, Some("https://example.org/"), " ").is_err());
        assert!(!is_link("javascript:alert(1)"));
        assert!(!is_link("https:///path"));
        assert!(!is_link("https://exa mple.org"));
    }
}
