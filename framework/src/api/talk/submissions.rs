//! Submissions of the call for papers: `/api/events/{event}/submissions/`, found by their
//! code in any case. Organisers of the call for papers see and change every submission of
//! the event and move it through its states; reviewers see the submissions of the tracks
//! they review, with the fields of the review (pending state, notes, ...) but without the
//! organisers' ones (review code, anonymised data, reviewers, invitations, reviews). The
//! public sees submissions once the agenda is public.
//!
//! The rules are [`crate::domain::talk::submissions`]'s: states follow pretalx's
//! ([`cfp::transition`]), an impossible move is 400 and changes nothing, and every change
//! writes an entry to the submission's activity log (`{code}/log/`).
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
use serde_json::{Value, json};
use std::collections::HashMap;

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in, like_pattern};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Expandable, Shaped};
use super::speakers::{self, SpeakerOut, languages};
use super::submission_types::SubmissionTypeOut;
use super::tags::TagOut;
use super::tracks::TrackOut;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::questions;
use crate::domain::talk::schedule::visible_submissions;
use crate::domain::talk::speakers::{checked_email, checked_locale};
use crate::domain::talk::sql::ids_in;
use crate::domain::talk::submissions::{
    self as cfp, Act, Changes, NewResource, OBJECT, may_read, may_write, visible_resources,
};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "submissions";

/// The state of a submission, as the API names it ([`cfp::State`]).
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

impl From<State> for cfp::State {
    fn from(s: State) -> Self {
        match s {
            State::Submitted => Self::Submitted,
            State::Accepted => Self::Accepted,
            State::Rejected => Self::Rejected,
            State::Confirmed => Self::Confirmed,
            State::Withdrawn => Self::Withdrawn,
            State::Canceled => Self::Canceled,
        }
    }
}

impl State {
    /// The stored name.
    pub fn name(self) -> &'static str {
        cfp::State::from(self).name()
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
    /// IDs of the session's visible slots in the current schedule.
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
    /// IDs of its reviews (organisers).
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

/// Submissions as objects: six queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "code",
    endpoint: ENDPOINT,
    load,
    fields: &[
        ("speakers", &speakers::KIND),
        ("track", &super::tracks::KIND),
        ("submission_type", &super::submission_types::KIND),
        ("tags", &super::tags::KIND),
        ("answers", &super::answers::KIND),
        ("resources", &RESOURCE_KIND),
        ("slots", &super::slots::KIND),
    ],
};

/// Resources as objects: one query for any number.
pub static RESOURCE_KIND: Kind = Kind {
    name: "resource",
    key: "id",
    endpoint: ENDPOINT,
    load: load_resources,
    fields: &[],
};

/// `(owner, value)` rows of a query selecting `owner` and `v`, grouped by owner in order.
pub(super) async fn grouped(
    ctx: &Ctx<'_>,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<HashMap<i64, Vec<Value>>, ApiError> {
    let mut map: HashMap<i64, Vec<Value>> = HashMap::new();
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
        let (in_ids, values) = ids_in(&ids, 0);
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
                questions::visible(ctx.role())
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
        let mut slots = super::slots::of_submissions(ctx, &ids).await?;
        let role = ctx.role();
        let (reviewing, organising) = (role.is_orga() || role.is_reviewer(), role.is_orga());
        // Reviews with their mean and median score (organisers): one query for the page.
        let mut reviews = if organising {
            super::reviews::summaries(ctx, &ids).await?
        } else {
            HashMap::new()
        };
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
                    "slots": slots.remove(&id).unwrap_or_default(),
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
                    let summary = reviews.remove(&id).unwrap_or_default();
                    fields.insert("reviews".into(), json!(summary.reviews));
                    fields.insert("assigned_reviewers".into(), json!([]));
                    fields.insert("median_score".into(), json!(summary.median));
                    fields.insert("mean_score".into(), json!(summary.mean));
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
            pending_state: patched(b.pending_state).map(|p| p.map(cfp::State::from)),
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
            pending_state: patched(b.pending_state).map(|p| p.map(cfp::State::from)),
            review_code: patched(b.review_code),
            anonymised_data: patched(b.anonymised_data),
        }
    }
}

async fn submission_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may_read, may_write)
        .await?)
}

/// The answer of a write: the submission with this code as organisers see it, read in the
/// write's transaction, which then commits.
async fn written(
    ctx: &Ctx<'_>,
    txn: crate::db::WriteTxn,
    code: String,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let out = ctx
        .within(&txn)
        .one(&KIND, code.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Writes the submission with this code (a new one when `code` is `None`) in one
/// transaction, and gives it as organisers see it; 404 for an unknown code.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    code: Option<&str>,
    changes: Changes,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let languages = languages(state, ev).await?;
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let existing = match code {
        Some(code) => Some(cfp::stored(&txn, ev, code).await?),
        None => None,
    };
    let code = cfp::write(&txn, ev, existing.as_ref(), changes, &languages).await?;
    written(&ctx, txn, code).await
}

/// Does `action` on the submission with this code in one transaction, and gives it as
/// organisers see it; 404 for an unknown code.
async fn act(
    state: &AppState,
    ev: &TalkEvent,
    code: &str,
    action: Act,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let found = cfp::stored(&txn, ev, code).await?;
    cfp::act(&txn, ev, &found, action).await?;
    written(&ctx, txn, found.code).await
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
        let found = cfp::stored(&state.db, &ev, &code).await?;
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
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
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
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
    }

    /// Delete a submission
    ///
    /// With its speakers' roles, tags, resources and answers (their files too). A submission
    /// in a released schedule cannot be deleted (400): cancel or withdraw it instead.
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
        let txn = crate::db::begin_write(&state.db).await?;
        let found = cfp::stored(&txn, &ev, &code).await?;
        cfp::delete(&txn, &ev, &found).await?;
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
        let to = Act::MoveTo(cfp::State::Accepted);
        Ok(Json(act(&state, &ev, &code, to).await?))
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
        let to = Act::MoveTo(cfp::State::Rejected);
        Ok(Json(act(&state, &ev, &code, to).await?))
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
        let to = Act::MoveTo(cfp::State::Confirmed);
        Ok(Json(act(&state, &ev, &code, to).await?))
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
        let to = Act::MoveTo(cfp::State::Canceled);
        Ok(Json(act(&state, &ev, &code, to).await?))
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
        let to = Act::MoveTo(cfp::State::Submitted);
        Ok(Json(act(&state, &ev, &code, to).await?))
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
        let add = Act::AddSpeaker {
            email,
            name: body.name.unwrap_or_default(),
            locale,
        };
        Ok(Json(act(&state, &ev, &code, add).await?))
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
        let remove = Act::RemoveSpeaker(body.0.user);
        Ok(Json(act(&state, &ev, &code, remove).await?))
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
        let body = body.0;
        let resource =
            NewResource::checked(body.resource, body.link, body.description, body.is_public)?;
        Ok(Json(
            act(&state, &ev, &code, Act::AddResource(resource)).await?,
        ))
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
        act(&state, &ev, &code, Act::RemoveResource(*id)).await?;
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
        let found = cfp::stored(&state.db, &ev, &code).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, found.id, page.0, page_size.0).await?,
        ))
    }
}
