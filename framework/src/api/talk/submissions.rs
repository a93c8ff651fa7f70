//! Submissions of the call for papers: `/api/events/{event}/submissions/`, found by their
//! code in any case. Organisers of the call for papers see and change every submission of
//! the event and move it through its states; reviewers see the submissions of the tracks
//! they review, with the fields of the review (pending state, notes, ...) but without the
//! organisers' ones (review code, anonymised data, reviewers, invitations, reviews). The
//! public sees submissions once the agenda is public.
//!
//! States follow pretalx's rules ([`State::sources`]): an impossible move is 400 and
//! changes nothing. Every change writes an entry to the submission's activity log
//! (`{code}/log/`).
//!
//! `/api/events/{event}/talks/{code}/...`, pretalx's former address, redirects here
//! ([`talks_redirect`]).

use chrono::{DateTime, Utc};
use poem::http::{StatusCode, header};
use poem::web::Data;
use poem::{Request, Response};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use serde_json::{Map, Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in, like_pattern};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Expandable, Shaped};
use super::speakers::{self, SpeakerOut, checked_email, checked_locale, drop_files, languages};
use super::submission_types::SubmissionTypeOut;
use super::tags::TagOut;
use super::tracks::TrackOut;
use crate::domain::files;
use crate::domain::talk::access::{TalkEvent, agenda_visible, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, FieldErrors, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "submissions";
const OBJECT: &str = "submission";

/// Length of generated submission codes.
const CODE_LEN: usize = 6;

/// Most tags one submission may be given at once.
const MAX_TAGS: usize = 100;

/// Largest stored form of `anonymised_data`, in bytes.
const MAX_ANONYMISED_LEN: usize = 100_000;

/// The state of a submission.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "TalkSubmissionState", rename_all = "lowercase")]
pub enum State {
    /// Submitted, waiting for a decision.
    Submitted,
    /// Accepted, waiting for the speakers' confirmation.
    Accepted,
    /// Rejected.
    Rejected,
    /// Accepted and confirmed by the speakers.
    Confirmed,
    /// Withdrawn by the speakers.
    Withdrawn,
    /// Canceled after acceptance.
    Canceled,
}

impl State {
    /// Every state.
    const ALL: [State; 6] = [
        State::Submitted,
        State::Accepted,
        State::Rejected,
        State::Confirmed,
        State::Withdrawn,
        State::Canceled,
    ];

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            State::Submitted => "submitted",
            State::Accepted => "accepted",
            State::Rejected => "rejected",
            State::Confirmed => "confirmed",
            State::Withdrawn => "withdrawn",
            State::Canceled => "canceled",
        }
    }

    /// The state of a stored name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The states a submission may move to this one from, as pretalx allows.
    pub fn sources(self) -> &'static [State] {
        match self {
            State::Submitted => &[State::Rejected, State::Accepted, State::Withdrawn],
            State::Accepted => &[
                State::Submitted,
                State::Rejected,
                State::Confirmed,
                State::Canceled,
            ],
            State::Rejected => &[State::Submitted, State::Accepted],
            State::Confirmed => &[State::Accepted, State::Canceled],
            State::Withdrawn => &[State::Submitted, State::Accepted],
            State::Canceled => &[State::Accepted, State::Confirmed],
        }
    }

    /// The log action of a move to this state.
    fn action(self) -> &'static str {
        match self {
            State::Submitted => "make_submitted",
            State::Accepted => "accept",
            State::Rejected => "reject",
            State::Confirmed => "confirm",
            State::Withdrawn => "withdraw",
            State::Canceled => "cancel",
        }
    }

    /// Whether a submission in this state is not featured.
    fn unfeatures(self) -> bool {
        matches!(self, State::Rejected | State::Canceled | State::Withdrawn)
    }
}

/// A resource of a submission: a link or an uploaded file.
#[derive(Object)]
#[oai(rename = "TalkResource")]
pub struct ResourceOut {
    /// Internal ID.
    pub id: i64,
    /// The link, or the file's URL.
    pub resource: String,
    /// Description.
    pub description: String,
    /// Whether the public may see it.
    pub is_public: bool,
}

/// A submission. The fields from `pending_state` to `updated` are shown to organisers of the
/// call for papers and reviewers; those after `updated` to organisers only.
#[derive(Object)]
#[oai(rename = "TalkSubmission")]
pub struct SubmissionOut {
    /// The submission's code.
    pub code: String,
    /// Title.
    pub title: String,
    /// The speakers' codes in their order, or with `?expand=speakers` the speakers.
    pub speakers: Vec<Expandable<String, SpeakerOut>>,
    /// The session type's ID, or with `?expand=submission_type` the session type.
    pub submission_type: Expandable<i64, SubmissionTypeOut>,
    /// The track's ID, or with `?expand=track` the track.
    #[oai(nullable)]
    pub track: Option<Expandable<i64, TrackOut>>,
    /// The tags' IDs, or with `?expand=tags` the tags.
    pub tags: Vec<Expandable<i64, TagOut>>,
    /// State.
    pub state: State,
    /// Abstract.
    #[oai(rename = "abstract", nullable)]
    pub abstract_: Option<String>,
    /// Description.
    #[oai(nullable)]
    pub description: Option<String>,
    /// Duration in minutes: the submission's own, else the session type's.
    pub duration: i32,
    /// How often the session takes place.
    pub slot_count: i32,
    /// Whether attendees must sign up.
    pub attendee_signup_required: bool,
    /// How many attendees may sign up; null for the room's capacity.
    #[oai(nullable)]
    pub attendee_signup_capacity: Option<i32>,
    /// Whether signups are open or full; null while attendees do not sign up.
    #[oai(nullable)]
    pub signup_status: Option<String>,
    /// Language of the session.
    pub content_locale: String,
    /// Whether the session may not be recorded.
    pub do_not_record: bool,
    /// URL of the session's image.
    #[oai(nullable)]
    pub image: Option<String>,
    /// IDs of the resources the caller may see (links first by link, then files), or with
    /// `?expand=resources` the resources.
    pub resources: Vec<Expandable<i64, ResourceOut>>,
    /// IDs of the session's slots in the current schedule; empty until a schedule exists.
    pub slots: Vec<i64>,
    /// IDs of the answers the caller may see, or with `?expand=answers` the answers.
    pub answers: Vec<Expandable<i64, super::answers::AnswerOut>>,
    /// State the organisers mean to move it to later (organisers and reviewers).
    #[oai(nullable)]
    pub pending_state: Option<State>,
    /// Whether the session is featured (organisers and reviewers).
    pub is_featured: Option<bool>,
    /// The speakers' notes to the organisers (organisers and reviewers).
    #[oai(nullable)]
    pub notes: Option<String>,
    /// Notes of the organisers (organisers and reviewers).
    #[oai(nullable)]
    pub internal_notes: Option<String>,
    /// When it was created (organisers and reviewers).
    pub created: Option<DateTime<Utc>>,
    /// When it last changed (organisers and reviewers).
    pub updated: Option<DateTime<Utc>>,
    /// Code for reviewing without an account (organisers).
    #[oai(nullable)]
    pub review_code: Option<String>,
    /// The anonymised fields reviewers see instead (organisers).
    pub anonymised_data: Option<Value>,
    /// Whether it has been anonymised (organisers).
    pub is_anonymised: Option<bool>,
    /// IDs of its reviews (organisers); reviews arrive with the program.
    pub reviews: Option<Vec<i64>>,
    /// Codes of the reviewers assigned to it (organisers).
    pub assigned_reviewers: Option<Vec<String>>,
    /// Median review score (organisers); null without reviews.
    #[oai(nullable)]
    pub median_score: Option<f64>,
    /// Mean review score (organisers); null without reviews.
    #[oai(nullable)]
    pub mean_score: Option<f64>,
    /// IDs of open invitations of speakers (organisers).
    pub invitations: Option<Vec<i64>>,
}

/// Submissions as objects: five queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "code",
    load,
    fields: &[
        ("speakers", &speakers::KIND),
        ("track", &super::tracks::KIND),
        ("submission_type", &super::submission_types::KIND),
        ("tags", &super::tags::KIND),
        ("answers", &super::answers::KIND),
        ("resources", &RESOURCE_KIND),
    ],
};

/// Resources as objects: one query for any number.
pub static RESOURCE_KIND: Kind = Kind {
    name: "resource",
    key: "id",
    load: load_resources,
    fields: &[],
};

/// The SQL condition of the submissions (alias `s`) the caller may see: organisers all of
/// the event's; reviewers those of the tracks they review (all when they review all); the
/// public those in the released schedule, of which there is none before the program exists.
pub(super) fn visible_submissions(ev: &TalkEvent, s: &str) -> String {
    let role = &ev.role;
    if role.is_only_reviewer() {
        if role.review_tracks.is_empty() {
            return "1 = 1".into();
        }
        let ids: Vec<String> = role.review_tracks.iter().map(i64::to_string).collect();
        return format!("{s}.track_id IN ({})", ids.join(", "));
    }
    if role.is_orga() {
        return "1 = 1".into();
    }
    "1 = 0".into()
}

/// The SQL condition of the resources (alias `r`) the caller may see: team members all,
/// others the public ones.
fn visible_resources(ev: &TalkEvent, r: &str) -> String {
    if ev.role.is_orga() || ev.role.is_reviewer() {
        "1 = 1".into()
    } else {
        format!("{r}.is_public")
    }
}

/// The IDs of rows as `IN (...)` values.
fn ids_in(ids: &[i64]) -> (String, Vec<sea_orm::Value>) {
    let keys: Vec<Value> = ids.iter().map(|i| Value::from(*i)).collect();
    keys_in(&keys)
}

/// `(owner, value)` rows of a query selecting `owner` and `v`, grouped by owner in order.
async fn grouped(
    ctx: &Ctx<'_>,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<std::collections::HashMap<i64, Vec<Value>>, ApiError> {
    let mut map: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    for r in ctx.rows(sql, values).await? {
        let owner: i64 = r.try_get("", "owner")?;
        let v = r
            .try_get::<i64>("", "v")
            .map(Value::from)
            .or_else(|_| r.try_get::<String>("", "v").map(Value::from))?;
        map.entry(owner).or_default().push(v);
    }
    Ok(map)
}

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (codes, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT s.id, s.code, s.title, s.submission_type_id, s.track_id, s.state, \
             s.pending_state, s.abstract, s.description, s.notes, s.internal_notes, s.duration, \
             st.default_duration, s.slot_count, s.attendee_signup_required, \
             s.attendee_signup_capacity, s.content_locale, s.is_featured, s.do_not_record, \
             s.image, s.review_code, s.anonymised, s.created, s.updated \
             FROM talk_submissions s JOIN talk_submission_types st ON st.id = s.submission_type_id \
             WHERE s.code IN {codes} AND s.event_id = ${} AND {}",
            values.len(),
            visible_submissions(ctx.ev, "s")
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
        let mut speakers = grouped(
            ctx,
            &format!(
                "SELECT ss.submission_id AS owner, sp.code AS v FROM talk_submission_speakers ss \
                 JOIN talk_speakers sp ON sp.id = ss.speaker_id \
                 WHERE ss.submission_id IN {in_ids} ORDER BY ss.position, sp.code"
            ),
            values.clone(),
        )
        .await?;
        let mut tags = grouped(
            ctx,
            &format!(
                "SELECT submission_id AS owner, tag_id AS v FROM talk_submission_tags \
                 WHERE submission_id IN {in_ids} ORDER BY tag_id"
            ),
            values.clone(),
        )
        .await?;
        let mut answers = grouped(
            ctx,
            &format!(
                "SELECT a.submission_id AS owner, a.id AS v FROM talk_answers a \
                 JOIN talk_questions q ON q.id = a.question_id \
                 WHERE a.submission_id IN {in_ids} AND q.target = 'submission' AND {} \
                 ORDER BY q.position, q.id, a.id",
                super::questions::visible(ctx.role())
            ),
            values.clone(),
        )
        .await?;
        let mut resources = grouped(
            ctx,
            &format!(
                "SELECT r.submission_id AS owner, r.id AS v FROM talk_resources r \
                 WHERE r.submission_id IN {in_ids} \
                 AND (r.resource IS NOT NULL OR COALESCE(r.link, '') <> '') AND {} \
                 ORDER BY COALESCE(r.link, ''), r.id",
                visible_resources(ctx.ev, "r")
            ),
            values,
        )
        .await?;
        let role = ctx.role();
        let (reviewing, organising) = (role.is_orga() || role.is_reviewer(), role.is_orga());
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let own_duration: Option<i32> = r.try_get("", "duration")?;
                let image: Option<String> = r.try_get("", "image")?;
                let mut o = json!({
                    "code": r.try_get::<String>("", "code")?,
                    "title": r.try_get::<String>("", "title")?,
                    "speakers": speakers.remove(&id).unwrap_or_default(),
                    "submission_type": r.try_get::<i64>("", "submission_type_id")?,
                    "track": r.try_get::<Option<i64>>("", "track_id")?,
                    "tags": tags.remove(&id).unwrap_or_default(),
                    "state": r.try_get::<String>("", "state")?,
                    "abstract": r.try_get::<Option<String>>("", "abstract")?,
                    "description": r.try_get::<Option<String>>("", "description")?,
                    "duration": own_duration.unwrap_or(r.try_get::<i32>("", "default_duration")?),
                    "slot_count": r.try_get::<i32>("", "slot_count")?,
                    "attendee_signup_required": r.try_get::<bool>("", "attendee_signup_required")?,
                    "attendee_signup_capacity": r.try_get::<Option<i32>>("", "attendee_signup_capacity")?,
                    "signup_status": Value::Null,
                    "content_locale": r.try_get::<String>("", "content_locale")?,
                    "do_not_record": r.try_get::<bool>("", "do_not_record")?,
                    "image": ctx.file_url(image.as_deref()),
                    "resources": resources.remove(&id).unwrap_or_default(),
                    "slots": [],
                    "answers": answers.remove(&id).unwrap_or_default(),
                });
                let Some(fields) = o.as_object_mut() else {
                    return Ok(o);
                };
                if reviewing {
                    let created: DateTime<Utc> = r.try_get("", "created")?;
                    let updated: DateTime<Utc> = r.try_get("", "updated")?;
                    fields.insert("pending_state".into(), json!(r.try_get::<Option<String>>("", "pending_state")?));
                    fields.insert("is_featured".into(), json!(r.try_get::<bool>("", "is_featured")?));
                    fields.insert("notes".into(), json!(r.try_get::<Option<String>>("", "notes")?));
                    fields.insert("internal_notes".into(), json!(r.try_get::<Option<String>>("", "internal_notes")?));
                    fields.insert("created".into(), json!(created));
                    fields.insert("updated".into(), json!(updated));
                }
                if organising {
                    let anonymised = r
                        .try_get::<Option<Value>>("", "anonymised")?
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    let is_anonymised = anonymised.get("_anonymised").and_then(Value::as_bool).unwrap_or(false);
                    fields.insert("review_code".into(), json!(r.try_get::<Option<String>>("", "review_code")?));
                    fields.insert("anonymised_data".into(), anonymised);
                    fields.insert("is_anonymised".into(), json!(is_anonymised));
                    fields.insert("reviews".into(), json!([]));
                    fields.insert("assigned_reviewers".into(), json!([]));
                    fields.insert("median_score".into(), Value::Null);
                    fields.insert("mean_score".into(), Value::Null);
                    fields.insert("invitations".into(), json!([]));
                }
                Ok(o)
            })
            .collect()
    })
}

fn load_resources<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT r.id, r.resource, r.link, r.description, r.is_public FROM talk_resources r \
             JOIN talk_submissions s ON s.id = r.submission_id \
             WHERE r.id IN {ids} AND s.event_id = ${} AND {} AND {}",
            values.len(),
            visible_submissions(ctx.ev, "s"),
            visible_resources(ctx.ev, "r"),
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                let file: Option<String> = r.try_get("", "resource")?;
                let link: Option<String> = r.try_get("", "link")?;
                let url = match file {
                    Some(f) => ctx.file_url(Some(&f)),
                    None => json!(link.unwrap_or_default()),
                };
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "resource": url,
                    "description": r.try_get::<String>("", "description")?,
                    "is_public": r.try_get::<bool>("", "is_public")?,
                }))
            })
            .collect()
    })
}

/// A new submission, or all fields of one (PUT). Fields left out keep their values, as in
/// pretalx (on creation: empty, the session type's duration, one slot, the event's language).
#[derive(Object)]
#[oai(rename = "TalkSubmissionWrite")]
pub struct SubmissionWrite {
    /// Title.
    #[oai(validator(min_length = 1, max_length = 1000))]
    pub title: String,
    /// The session type's ID.
    pub submission_type: i64,
    /// The track's ID.
    #[oai(nullable)]
    pub track: MaybeUndefined<i64>,
    /// The tags' IDs; replaces the tags.
    #[oai(validator(max_items = 100))]
    pub tags: Option<Vec<i64>>,
    /// Abstract.
    #[oai(rename = "abstract", nullable, validator(max_length = 100000))]
    pub abstract_: MaybeUndefined<String>,
    /// Description.
    #[oai(nullable, validator(max_length = 100000))]
    pub description: MaybeUndefined<String>,
    /// The speakers' notes to the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub notes: MaybeUndefined<String>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// Duration in minutes; null for the session type's.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "100000")))]
    pub duration: MaybeUndefined<i32>,
    /// How often the session takes place.
    #[oai(validator(minimum(value = "1"), maximum(value = "100")))]
    pub slot_count: Option<i32>,
    /// Whether attendees must sign up.
    pub attendee_signup_required: Option<bool>,
    /// How many attendees may sign up; null for the room's capacity.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "1000000")))]
    pub attendee_signup_capacity: MaybeUndefined<i32>,
    /// Language of the session, one of the event's.
    #[oai(validator(max_length = 32))]
    pub content_locale: Option<String>,
    /// Whether the session may not be recorded.
    pub do_not_record: Option<bool>,
    /// Image: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub image: MaybeUndefined<String>,
    /// Whether the session is featured.
    pub is_featured: Option<bool>,
    /// State the organisers mean to move it to later.
    #[oai(nullable)]
    pub pending_state: MaybeUndefined<State>,
    /// Code for reviewing without an account.
    #[oai(nullable, validator(max_length = 32))]
    pub review_code: MaybeUndefined<String>,
    /// The anonymised fields reviewers see instead: an object.
    #[oai(nullable)]
    pub anonymised_data: MaybeUndefined<Value>,
}

/// A partial change of a submission.
#[derive(Object)]
#[oai(rename = "TalkSubmissionPatch")]
pub struct SubmissionPatch {
    /// Title.
    #[oai(validator(min_length = 1, max_length = 1000))]
    pub title: Option<String>,
    /// The session type's ID.
    pub submission_type: Option<i64>,
    /// The track's ID.
    #[oai(nullable)]
    pub track: MaybeUndefined<i64>,
    /// The tags' IDs; replaces the tags.
    #[oai(validator(max_items = 100))]
    pub tags: Option<Vec<i64>>,
    /// Abstract.
    #[oai(rename = "abstract", nullable, validator(max_length = 100000))]
    pub abstract_: MaybeUndefined<String>,
    /// Description.
    #[oai(nullable, validator(max_length = 100000))]
    pub description: MaybeUndefined<String>,
    /// The speakers' notes to the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub notes: MaybeUndefined<String>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// Duration in minutes; null for the session type's.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "100000")))]
    pub duration: MaybeUndefined<i32>,
    /// How often the session takes place.
    #[oai(validator(minimum(value = "1"), maximum(value = "100")))]
    pub slot_count: Option<i32>,
    /// Whether attendees must sign up.
    pub attendee_signup_required: Option<bool>,
    /// How many attendees may sign up; null for the room's capacity.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "1000000")))]
    pub attendee_signup_capacity: MaybeUndefined<i32>,
    /// Language of the session, one of the event's.
    #[oai(validator(max_length = 32))]
    pub content_locale: Option<String>,
    /// Whether the session may not be recorded.
    pub do_not_record: Option<bool>,
    /// Image: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub image: MaybeUndefined<String>,
    /// Whether the session is featured.
    pub is_featured: Option<bool>,
    /// State the organisers mean to move it to later.
    #[oai(nullable)]
    pub pending_state: MaybeUndefined<State>,
    /// Code for reviewing without an account.
    #[oai(nullable, validator(max_length = 32))]
    pub review_code: MaybeUndefined<String>,
    /// The anonymised fields reviewers see instead: an object.
    #[oai(nullable)]
    pub anonymised_data: MaybeUndefined<Value>,
}

/// What a write changes: `None` leaves a field as it is.
#[derive(Default)]
struct Changes {
    title: Option<String>,
    submission_type: Option<i64>,
    track: Option<Option<i64>>,
    tags: Option<Vec<i64>>,
    abstract_: Option<Option<String>>,
    description: Option<Option<String>>,
    notes: Option<Option<String>>,
    internal_notes: Option<Option<String>>,
    duration: Option<Option<i32>>,
    slot_count: Option<i32>,
    attendee_signup_required: Option<bool>,
    attendee_signup_capacity: Option<Option<i32>>,
    content_locale: Option<String>,
    do_not_record: Option<bool>,
    image: Option<Option<String>>,
    is_featured: Option<bool>,
    pending_state: Option<Option<State>>,
    review_code: Option<Option<String>>,
    anonymised_data: Option<Option<Value>>,
}

impl From<SubmissionWrite> for Changes {
    fn from(b: SubmissionWrite) -> Self {
        Self {
            title: Some(b.title),
            submission_type: Some(b.submission_type),
            track: patched(b.track),
            tags: b.tags,
            abstract_: patched(b.abstract_),
            description: patched(b.description),
            notes: patched(b.notes),
            internal_notes: patched(b.internal_notes),
            duration: patched(b.duration),
            slot_count: b.slot_count,
            attendee_signup_required: b.attendee_signup_required,
            attendee_signup_capacity: patched(b.attendee_signup_capacity),
            content_locale: b.content_locale,
            do_not_record: b.do_not_record,
            image: patched(b.image),
            is_featured: b.is_featured,
            pending_state: patched(b.pending_state),
            review_code: patched(b.review_code),
            anonymised_data: patched(b.anonymised_data),
        }
    }
}

impl From<SubmissionPatch> for Changes {
    fn from(b: SubmissionPatch) -> Self {
        Self {
            title: b.title,
            submission_type: b.submission_type,
            track: patched(b.track),
            tags: b.tags,
            abstract_: patched(b.abstract_),
            description: patched(b.description),
            notes: patched(b.notes),
            internal_notes: patched(b.internal_notes),
            duration: patched(b.duration),
            slot_count: b.slot_count,
            attendee_signup_required: b.attendee_signup_required,
            attendee_signup_capacity: patched(b.attendee_signup_capacity),
            content_locale: b.content_locale,
            do_not_record: b.do_not_record,
            image: patched(b.image),
            is_featured: b.is_featured,
            pending_state: patched(b.pending_state),
            review_code: patched(b.review_code),
            anonymised_data: patched(b.anonymised_data),
        }
    }
}

/// The stored fields of a submission that writes change.
#[derive(Clone, Default)]
struct Fields {
    title: String,
    submission_type: i64,
    track: Option<i64>,
    abstract_: Option<String>,
    description: Option<String>,
    notes: Option<String>,
    internal_notes: Option<String>,
    duration: Option<i32>,
    slot_count: i32,
    attendee_signup_required: bool,
    attendee_signup_capacity: Option<i32>,
    content_locale: String,
    do_not_record: bool,
    image: Option<String>,
    is_featured: bool,
    pending_state: Option<String>,
    review_code: Option<String>,
    anonymised: Option<Value>,
}

/// A stored submission: ID, code, state and fields.
struct Stored {
    id: i64,
    code: String,
    state: State,
    fields: Fields,
}

/// Who may read submissions: organisers of the call for papers and reviewers; anyone who
/// sees the event once its agenda is public.
fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer() || agenda_visible(ev)
}

async fn submission_event(
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

/// The event's submission with this code in any case, as far as the caller may see it;
/// 404 otherwise.
async fn stored(ctx: &Ctx<'_>, code: &str) -> Result<Stored, ApiError> {
    let sql = format!(
        "SELECT s.id, s.code, s.state, s.title, s.submission_type_id, s.track_id, s.abstract, \
         s.description, s.notes, s.internal_notes, s.duration, s.slot_count, \
         s.attendee_signup_required, s.attendee_signup_capacity, s.content_locale, \
         s.do_not_record, s.image, s.is_featured, s.pending_state, s.review_code, s.anonymised \
         FROM talk_submissions s WHERE s.event_id = $1 AND UPPER(s.code) = $2 AND {}",
        visible_submissions(ctx.ev, "s")
    );
    let row = ctx
        .rows(
            &sql,
            vec![ctx.event_id().into(), code.to_uppercase().into()],
        )
        .await?
        .pop()
        .ok_or_else(not_found)?;
    let state: String = row.try_get("", "state")?;
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
            pending_state: row.try_get("", "pending_state")?,
            review_code: row.try_get("", "review_code")?,
            anonymised: row.try_get("", "anonymised")?,
        },
    })
}

/// 400 unless the event has a row of `table` with this ID.
async fn check_exists(ctx: &Ctx<'_>, table: &str, field: &str, id: i64) -> Result<(), ApiError> {
    let found = ctx
        .rows(
            &format!("SELECT id FROM {table} WHERE id = $1 AND event_id = $2"),
            vec![id.into(), ctx.event_id().into()],
        )
        .await?;
    if found.is_empty() {
        return Err(ApiError::field(
            field,
            format!("Invalid pk \"{id}\" - object does not exist."),
        ));
    }
    Ok(())
}

/// A new submission code, unused anywhere.
async fn new_code(ctx: &Ctx<'_>) -> Result<String, ApiError> {
    for _ in 0..20 {
        let code = crate::domain::tokens::random_from(crate::domain::tokens::UNAMBIGUOUS, CODE_LEN);
        let taken = ctx
            .rows(
                "SELECT 1 AS x FROM talk_submissions WHERE code = $1",
                vec![code.clone().into()],
            )
            .await?;
        if taken.is_empty() {
            return Ok(code);
        }
    }
    Err(ApiError::internal())
}

/// Applies `changes` to `f`, checking what needs no database; gives the log's data.
fn apply(
    f: &mut Fields,
    changes: &mut Changes,
    languages: &(String, Vec<String>),
) -> Result<Map<String, Value>, ApiError> {
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
        if languages.1.contains(&locale) {
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
        let pending = pending.map(|p| p.name().to_owned());
        data.insert("pending_state".into(), json!(pending));
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

/// Writes a submission (new when `existing` is `None`) with its tags and log entry in one
/// transaction, and gives it as organisers see it.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    existing: Option<Stored>,
    mut changes: Changes,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let user_id = ev.caller.user_id()?;
    let languages = languages(state, ev).await?;
    let mut f = existing.as_ref().map_or_else(
        || Fields {
            slot_count: 1,
            content_locale: languages.0.clone(),
            ..Fields::default()
        },
        |s| s.fields.clone(),
    );
    let mut data = apply(&mut f, &mut changes, &languages)?;
    let tags = changes.tags.take().map(|mut t| {
        t.sort_unstable();
        t.dedup();
        t
    });
    if tags.as_ref().is_some_and(|t| t.len() > MAX_TAGS) {
        return Err(ApiError::field("tags", "Too many tags."));
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let inner = ctx.within(&txn);
    check_exists(
        &inner,
        "talk_submission_types",
        "submission_type",
        f.submission_type,
    )
    .await?;
    if let Some(track) = f.track {
        check_exists(&inner, "talk_tracks", "track", track).await?;
    }
    if let Some(tags) = &tags {
        if !tags.is_empty() {
            let (in_ids, mut values) = ids_in(tags);
            values.push(ev.event.id.into());
            let found = inner
                .rows(
                    &format!(
                        "SELECT id FROM talk_tags WHERE id IN {in_ids} AND event_id = ${}",
                        values.len()
                    ),
                    values,
                )
                .await?
                .iter()
                .map(|r| r.try_get::<i64>("", "id"))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(missing) = tags.iter().find(|t| !found.contains(t)) {
                return Err(ApiError::field(
                    "tags",
                    format!("Invalid pk \"{missing}\" - object does not exist."),
                ));
            }
        }
        data.insert("tags".into(), json!(tags));
    }
    let mut dropped = Vec::new();
    if let Some(image) = changes.image.take() {
        let new = match image {
            Some(file_id) => Some(
                crate::api::talk::upload::claim_for_user(
                    &txn,
                    user_id,
                    "image",
                    &file_id,
                    &files::PICTURE_TYPES,
                )
                .await?,
            ),
            None => None,
        };
        data.insert("image".into(), json!(new));
        dropped.extend(std::mem::replace(&mut f.image, new));
    }
    let now = Utc::now();
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
        f.pending_state.clone().into(),
        f.review_code.clone().into(),
        f.anonymised.clone().into(),
        now.into(),
        ev.event.id.into(),
    ];
    let (id, code) = match &existing {
        Some(s) => {
            let mut values = values;
            values.push(s.id.into());
            crate::db::execute(
                &txn,
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
                &txn,
                Change::new(ev, OBJECT, s.id, "update", Value::Object(data)),
            )
            .await?;
            (s.id, s.code.clone())
        }
        None => {
            let code = new_code(&inner).await?;
            let mut values = values;
            values.push(code.clone().into());
            let id = crate::db::insert_returning_id(
                &txn,
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
                &txn,
                Change::new(ev, OBJECT, id, "create", Value::Object(data)),
            )
            .await?;
            (id, code)
        }
    };
    if let Some(tags) = tags {
        crate::db::execute(
            &txn,
            "DELETE FROM talk_submission_tags WHERE submission_id = $1",
            [id.into()],
        )
        .await?;
        for tag in tags {
            crate::db::execute(
                &txn,
                "INSERT INTO talk_submission_tags (submission_id, tag_id) VALUES ($1, $2)",
                [id.into(), tag.into()],
            )
            .await?;
        }
    }
    drop_files(&txn, &dropped).await?;
    let out = inner.one(&KIND, code.into(), &Expand::default()).await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Moves a submission to `target` in a transaction, with its log entry, and gives it as
/// organisers see it: 400 when pretalx's rules do not allow the move. A move to the state it
/// has only clears the pending state.
async fn move_to(
    state: &AppState,
    ev: &TalkEvent,
    code: &str,
    target: State,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let inner = ctx.within(&txn);
    let found = stored(&inner, code).await?;
    let current = found.state;
    if current == target {
        if found.fields.pending_state.is_some() {
            crate::db::execute(
                &txn,
                "UPDATE talk_submissions SET pending_state = NULL, updated = $1 WHERE id = $2",
                [Utc::now().into(), found.id.into()],
            )
            .await?;
            let data = json!({"previous": current.name(), "pending_state": Value::Null});
            talk_log::write(
                &txn,
                Change::new(ev, OBJECT, found.id, target.action(), data),
            )
            .await?;
        }
    } else {
        let sources = target.sources();
        if !sources.contains(&current) {
            let names: Vec<&str> = sources.iter().map(|s| s.name()).collect();
            return Err(ApiError::bad_request(format!(
                "A {} submission cannot become {}: only {} ones can.",
                current.name(),
                target.name(),
                names.join(" or ")
            )));
        }
        let moved = crate::db::execute(
            &txn,
            "UPDATE talk_submissions SET state = $1, pending_state = NULL, \
             is_featured = CASE WHEN $2 THEN $3 ELSE is_featured END, updated = $4 \
             WHERE id = $5 AND state = $6",
            [
                target.name().into(),
                target.unfeatures().into(),
                false.into(),
                Utc::now().into(),
                found.id.into(),
                current.name().into(),
            ],
        )
        .await?;
        if moved == 0 {
            return Err(ApiError::bad_request(
                "The submission changed meanwhile; read it again and retry.",
            ));
        }
        let data = json!({"previous": current.name(), "from_pending": false});
        talk_log::write(
            &txn,
            Change::new(ev, OBJECT, found.id, target.action(), data),
        )
        .await?;
    }
    let out = inner
        .one(&KIND, found.code.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Adding a speaker to a submission: the event's speaker with this email address, or a new
/// managed speaker without an account.
#[derive(Object)]
#[oai(rename = "TalkAddSpeaker")]
pub struct AddSpeaker {
    /// The speaker's email address.
    #[oai(validator(max_length = 254))]
    pub email: String,
    /// The name of a new speaker.
    #[oai(nullable, validator(max_length = 255))]
    pub name: Option<String>,
    /// The language of a new speaker, one of the event's; the event's default otherwise.
    #[oai(nullable, validator(max_length = 32))]
    pub locale: Option<String>,
}

/// Removing a speaker from a submission.
#[derive(Object)]
#[oai(rename = "TalkRemoveSpeaker")]
pub struct RemoveSpeaker {
    /// The speaker's code.
    #[oai(validator(max_length = 32))]
    pub user: String,
}

/// A new resource of a submission: an uploaded file or a link.
#[derive(Object)]
#[oai(rename = "TalkResourceWrite")]
pub struct ResourceWrite {
    /// A file uploaded with `POST /api/upload/` (`file:...`); give this or `link`.
    #[oai(nullable, validator(max_length = 200))]
    pub resource: Option<String>,
    /// A link (`http://` or `https://`); give this or `resource`.
    #[oai(nullable, validator(max_length = 400))]
    pub link: Option<String>,
    /// Description.
    #[oai(validator(min_length = 1, max_length = 1000))]
    pub description: String,
    /// Whether the public may see it.
    #[oai(default = "default_true")]
    pub is_public: bool,
}

fn default_true() -> bool {
    true
}

/// Whether a link is an absolute `http(s)` URL without spaces.
fn is_link(link: &str) -> bool {
    let rest = link
        .strip_prefix("https://")
        .or_else(|| link.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !r.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// Runs `$body` on the submission of `$code` in a transaction (with `$txn`, the context
/// `$ctx` reading in it and the submission `$found`), then gives the submission as
/// organisers see it, read in the same transaction before it commits.
macro_rules! in_submission {
    ($state:expr, $ev:expr, $code:expr, |$txn:ident, $ctx:ident, $found:ident| $body:block) => {{
        let outer = Ctx::new($state, $ev, None).await?;
        let transaction = crate::db::begin_write(&$state.db).await?;
        let $txn = &transaction;
        let $ctx = &outer.within($txn);
        let $found = &stored($ctx, $code).await?;
        let changed: Result<(), ApiError> = async { $body }.await;
        changed?;
        crate::db::execute(
            $txn,
            "UPDATE talk_submissions SET updated = $1 WHERE id = $2",
            [Utc::now().into(), $found.id.into()],
        )
        .await?;
        let out: Shaped<SubmissionOut> = $ctx
            .one(&KIND, $found.code.clone().into(), &Expand::default())
            .await?;
        crate::db::commit(transaction).await?;
        out
    }};
}

/// `/api/events/{event}/talks/...`: pretalx's former address of submissions, redirected
/// permanently (301) to `/api/events/{event}/submissions/...`, keeping the query string.
/// `talks/` itself is no resource (404).
#[poem::handler]
pub fn talks_redirect(req: &Request) -> Response {
    let path = req.uri().path().replacen("/talks/", "/submissions/", 1);
    let path = if path.ends_with('/') {
        path
    } else {
        format!("{path}/")
    };
    let location = match req.uri().query() {
        Some(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path,
    };
    Response::builder()
        .status(StatusCode::MOVED_PERMANENTLY)
        .header(header::LOCATION, location)
        .finish()
}

/// Submission operations.
pub struct SubmissionsApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl SubmissionsApi {
    /// List submissions
    ///
    /// Organisers see every submission of the event; reviewers those of the tracks they
    /// review.
    #[oai(path = "/api/events/:event/submissions", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_submissions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Only submissions in these states (repeat the parameter for several).
        #[oai(name = "state")]
        states: Query<Option<Vec<State>>>,
        /// Only submissions with these pending states (repeat the parameter for several).
        pending_state: Query<Option<Vec<State>>>,
        /// Only submissions in this language.
        content_locale: Query<Option<String>>,
        /// Only submissions of this session type (ID).
        submission_type: Query<Option<i64>>,
        /// Only submissions of this track (ID).
        track: Query<Option<i64>>,
        /// Only featured (`true`) or other (`false`) submissions.
        is_featured: Query<Option<bool>>,
        /// Text the title or a speaker's name contains.
        q: Query<Option<String>>,
        /// Order: `code` (default), `title`, `state`, `created` or `is_featured`; `-` before
        /// it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `speakers`, `speakers.answers`, `track`, `submission_type`,
        /// `tags`, `answers`, `answers.question`, `resources`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<SubmissionOut>>>> {
        let ev = submission_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_submissions s",
            "s.code",
            "s.event_id",
            ev.event.id,
            "s.code",
        );
        listing.condition(&visible_submissions(&ev, "s"));
        let names = |states: &Option<Vec<State>>| -> Vec<String> {
            states
                .iter()
                .flatten()
                .map(|s| s.name().to_owned())
                .collect()
        };
        listing
            .one_of("s.state", &names(&states))
            .one_of("s.pending_state", &names(&pending_state));
        if let Some(locale) = content_locale.0 {
            listing.filter("s.content_locale = {}", locale);
        }
        if let Some(id) = submission_type.0 {
            listing.filter("s.submission_type_id = {}", id);
        }
        if let Some(id) = track.0 {
            listing.filter("s.track_id = {}", id);
        }
        if let Some(featured) = is_featured.0 {
            listing.filter("s.is_featured = {}", featured);
        }
        if let Some(q) = q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
            listing.filter(
                "(LOWER(s.title) LIKE {} ESCAPE '\\' OR EXISTS (SELECT 1 FROM \
                 talk_submission_speakers qss JOIN talk_speakers qsp ON qsp.id = qss.speaker_id \
                 LEFT JOIN users qu ON qu.id = qsp.user_id WHERE qss.submission_id = s.id AND \
                 (LOWER(qsp.name) LIKE {} ESCAPE '\\' OR LOWER(COALESCE(qu.fullname, '')) LIKE {} \
                 ESCAPE '\\')))",
                like_pattern(q),
            );
        }
        listing.order(
            o.as_deref(),
            &[
                ("code", "s.code"),
                ("title", "s.title"),
                ("state", "s.state"),
                ("created", "s.created"),
                ("is_featured", "s.is_featured"),
            ],
        );
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a submission
    #[oai(path = "/api/events/:event/submissions/:code", method = "get")]
    async fn get_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// Fields to expand: `speakers`, `speakers.answers`, `track`, `submission_type`,
        /// `tags`, `answers`, `answers.question`, `resources`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let found = stored(&ctx, &code).await?;
        Ok(Json(ctx.one(&KIND, found.code.into(), &expand).await?))
    }

    /// Create a submission
    ///
    /// It starts submitted and without speakers (add them with `add-speaker`); no email is
    /// sent.
    #[oai(path = "/api/events/:event/submissions", method = "post")]
    async fn create_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<SubmissionWrite>,
    ) -> TalkResult<Created<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Create).await?;
        Ok(Created::Created(Json(
            save(&state, &ev, None, body.0.into()).await?,
        )))
    }

    /// Change a submission
    ///
    /// Changes the fields it sends; the state changes through the actions only.
    #[oai(path = "/api/events/:event/submissions/:code", method = "patch")]
    async fn patch_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<SubmissionPatch>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Update).await?;
        let existing = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            save(&state, &ev, Some(existing), body.0.into()).await?,
        ))
    }

    /// Replace a submission
    ///
    /// Title and session type are required; fields left out keep their values, as in
    /// pretalx.
    #[oai(path = "/api/events/:event/submissions/:code", method = "put")]
    async fn put_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<SubmissionWrite>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Update).await?;
        let existing = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            save(&state, &ev, Some(existing), body.0.into()).await?,
        ))
    }

    /// Delete a submission
    ///
    /// With its speakers' roles, tags, resources and answers (their files too).
    #[oai(path = "/api/events/:event/submissions/:code", method = "delete")]
    async fn delete_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<NoContent> {
        let ev = submission_event(&state, &talk, &event, Action::Destroy).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let inner = ctx.within(&txn);
        let found = stored(&inner, &code).await?;
        let mut references: Vec<String> = found.fields.image.iter().cloned().collect();
        for (sql, column) in [
            (
                "SELECT resource AS f FROM talk_resources WHERE submission_id = $1",
                "f",
            ),
            (
                "SELECT answer_file AS f FROM talk_answers WHERE submission_id = $1",
                "f",
            ),
        ] {
            for r in inner.rows(sql, vec![found.id.into()]).await? {
                references.extend(r.try_get::<Option<String>>("", column)?);
            }
        }
        crate::db::execute(
            &txn,
            "DELETE FROM talk_submissions WHERE id = $1",
            [found.id.into()],
        )
        .await?;
        drop_files(&txn, &references).await?;
        let data =
            json!({"title": found.fields.title, "code": found.code, "state": found.state.name()});
        talk_log::write(&txn, Change::new(&ev, OBJECT, found.id, "delete", data)).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// Accept a submission
    ///
    /// From submitted, rejected, confirmed or canceled; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/accept", method = "post")]
    async fn accept_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        Ok(Json(move_to(&state, &ev, &code, State::Accepted).await?))
    }

    /// Reject a submission
    ///
    /// From submitted or accepted; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/reject", method = "post")]
    async fn reject_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        Ok(Json(move_to(&state, &ev, &code, State::Rejected).await?))
    }

    /// Confirm a submission
    ///
    /// From accepted or canceled; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/confirm", method = "post")]
    async fn confirm_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        Ok(Json(move_to(&state, &ev, &code, State::Confirmed).await?))
    }

    /// Cancel a submission
    ///
    /// From accepted or confirmed; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/cancel", method = "post")]
    async fn cancel_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        Ok(Json(move_to(&state, &ev, &code, State::Canceled).await?))
    }

    /// Make a submission submitted again
    ///
    /// From rejected, accepted or withdrawn; 400 otherwise.
    #[oai(
        path = "/api/events/:event/submissions/:code/make-submitted",
        method = "post"
    )]
    async fn make_submitted(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        Ok(Json(move_to(&state, &ev, &code, State::Submitted).await?))
    }

    /// Add a speaker to a submission
    ///
    /// The event's speaker with this email address, or a new speaker without an account;
    /// no email is sent.
    #[oai(
        path = "/api/events/:event/submissions/:code/add-speaker",
        method = "post"
    )]
    async fn add_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<AddSpeaker>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let body = body.0;
        let email = checked_email("email", &body.email)?;
        let languages = languages(&state, &ev).await?;
        let locale = checked_locale("locale", body.locale.as_deref(), &languages)?;
        let name = body.name.unwrap_or_default();
        let ev_ref = &ev;
        let out = in_submission!(&state, &ev, &code, |txn, ctx, found| {
            let existing = ctx
                .rows(
                    "SELECT sp.id, sp.code, sp.name FROM talk_speakers sp \
                     LEFT JOIN users u ON u.id = sp.user_id \
                     WHERE sp.event_id = $1 AND LOWER(COALESCE(sp.email, u.email, '')) = $2 \
                     ORDER BY sp.id LIMIT 1",
                    vec![ctx.event_id().into(), email.clone().into()],
                )
                .await?
                .pop();
            let (speaker, speaker_code, speaker_name) = match existing {
                Some(r) => (
                    r.try_get("", "id")?,
                    r.try_get("", "code")?,
                    r.try_get("", "name")?,
                ),
                None => {
                    let (id, code) =
                        speakers::insert_managed(ctx, txn, &name, Some(&email), &locale).await?;
                    (id, code, name.clone())
                }
            };
            let on = ctx
                .rows(
                    "SELECT position FROM talk_submission_speakers WHERE submission_id = $1",
                    vec![found.id.into()],
                )
                .await?;
            let already = ctx
                .rows(
                    "SELECT 1 AS x FROM talk_submission_speakers \
                     WHERE submission_id = $1 AND speaker_id = $2",
                    vec![found.id.into(), speaker.into()],
                )
                .await?;
            if !already.is_empty() {
                return Ok(());
            }
            let mut last = 0;
            for r in &on {
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
            talk_log::write(
                txn,
                Change::new(ev_ref, OBJECT, found.id, "speakers.add", data),
            )
            .await?;
            Ok(())
        });
        Ok(Json(out))
    }

    /// Remove a speaker from a submission
    #[oai(
        path = "/api/events/:event/submissions/:code/remove-speaker",
        method = "post"
    )]
    async fn remove_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<RemoveSpeaker>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let speaker_code = body.0.user.to_uppercase();
        let ev_ref = &ev;
        let out = in_submission!(&state, &ev, &code, |txn, ctx, found| {
            let row = ctx
                .rows(
                    "SELECT sp.id, sp.code, sp.name, sp.email FROM talk_submission_speakers ss \
                     JOIN talk_speakers sp ON sp.id = ss.speaker_id \
                     WHERE ss.submission_id = $1 AND UPPER(sp.code) = $2",
                    vec![found.id.into(), speaker_code.clone().into()],
                )
                .await?
                .pop()
                .ok_or_else(|| ApiError::bad_request("Speaker not found."))?;
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
                Change::new(ev_ref, OBJECT, found.id, "speakers.remove", data),
            )
            .await?;
            Ok(())
        });
        Ok(Json(out))
    }

    /// Add a resource to a submission
    ///
    /// A link or an uploaded file; gives the submission.
    #[oai(
        path = "/api/events/:event/submissions/:code/resources",
        method = "post"
    )]
    async fn add_resource(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<ResourceWrite>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let user_id = ev.caller.user_id()?;
        let body = body.0;
        let file = body.resource.filter(|r| !r.is_empty());
        let link = body.link.filter(|l| !l.is_empty());
        match (&file, &link) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(ApiError::field("resource", "Give either a file or a link.").into());
            }
            (None, Some(l)) if !is_link(l) => {
                return Err(ApiError::field("link", "Enter a valid URL.").into());
            }
            _ => {}
        }
        if body.description.trim().is_empty() {
            return Err(ApiError::field("description", "This field may not be blank.").into());
        }
        let ev_ref = &ev;
        let out = in_submission!(&state, &ev, &code, |txn, _ctx, found| {
            let reference = match &file {
                Some(id) => Some(
                    crate::api::talk::upload::claim_for_user(
                        txn,
                        user_id,
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
                    link.clone().into(),
                    body.description.clone().into(),
                    body.is_public.into(),
                ],
            )
            .await?;
            let data = json!({
                "id": id,
                "resource": reference,
                "link": link,
                "description": body.description,
                "is_public": body.is_public,
            });
            talk_log::write(
                txn,
                Change::new(ev_ref, OBJECT, found.id, "resources.add", data),
            )
            .await?;
            Ok(())
        });
        Ok(Json(out))
    }

    /// Remove a resource from a submission
    ///
    /// With its file.
    #[oai(
        path = "/api/events/:event/submissions/:code/resources/:id",
        method = "delete"
    )]
    async fn remove_resource(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// The resource's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let ev_ref = &ev;
        let resource = *id;
        let _ = in_submission!(&state, &ev, &code, |txn, ctx, found| {
            let row = ctx
                .rows(
                    "SELECT resource, link, description FROM talk_resources \
                     WHERE id = $1 AND submission_id = $2",
                    vec![resource.into(), found.id.into()],
                )
                .await?
                .pop()
                .ok_or_else(|| ApiError::not_found("Resource not found."))?;
            let file: Option<String> = row.try_get("", "resource")?;
            crate::db::execute(
                txn,
                "DELETE FROM talk_resources WHERE id = $1",
                [resource.into()],
            )
            .await?;
            drop_files(txn, &file.iter().cloned().collect::<Vec<_>>()).await?;
            let data = json!({
                "id": resource,
                "link": row.try_get::<Option<String>>("", "link")?,
                "description": row.try_get::<String>("", "description")?,
            });
            talk_log::write(
                txn,
                Change::new(ev_ref, OBJECT, found.id, "resources.remove", data),
            )
            .await?;
            Ok(())
        });
        Ok(NoContent::NoContent)
    }

    /// A submission's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/submissions/:code/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn submission_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = submission_event(&state, &talk, &event, Action::Retrieve).await?;
        let found = stored(&Ctx::new(&state, &ev, None).await?, &code).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, found.id, page.0, page_size.0).await?,
        ))
    }
}
