//! The wire side of submissions: the shapes the API reads and answers, and the loaders
//! `?expand=` uses.

use chrono::{DateTime, Utc};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object};
use serde_json::{Value, json};
use std::collections::HashMap;

use super::ENDPOINT;
use crate::api::talk::context::{Ctx, keys_in};
use crate::api::talk::expand::{Kind, Loaded};
use crate::api::talk::shape::Expandable;
use crate::api::talk::speakers::{self, SpeakerOut};
use crate::api::talk::submission_types::SubmissionTypeOut;
use crate::api::talk::tags::TagOut;
use crate::api::talk::tracks::TrackOut;
use crate::domain::talk::questions;
use crate::domain::talk::schedule::visible_submissions;
use crate::domain::talk::sql::ids_in;
use crate::domain::talk::submissions::{self as cfp, Changes, OBJECT, visible_resources};
use crate::http::{ApiError, patched};

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
    pub answers: Vec<Expandable<i64, crate::api::talk::answers::AnswerOut>>,
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
        ("track", &crate::api::talk::tracks::KIND),
        ("submission_type", &crate::api::talk::submission_types::KIND),
        ("tags", &crate::api::talk::tags::KIND),
        ("answers", &crate::api::talk::answers::KIND),
        ("resources", &RESOURCE_KIND),
        ("slots", &crate::api::talk::slots::KIND),
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
pub(crate) async fn grouped(
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

pub(super) fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
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
        let mut slots = crate::api::talk::slots::of_submissions(ctx, &ids).await?;
        let role = ctx.role();
        let (reviewing, organising) = (role.is_orga() || role.is_reviewer(), role.is_orga());
        // Reviews with their mean and median score (organisers): one query for the page.
        let mut reviews = if organising {
            crate::api::talk::reviews::summaries(ctx, &ids).await?
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

pub(super) fn load_resources<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
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
    /// The other fields.
    #[oai(flatten)]
    pub fields: SubmissionFields,
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
    /// The other fields.
    #[oai(flatten)]
    pub fields: SubmissionFields,
}

/// A submission's fields besides its title and session type, as a write sends them.
#[derive(Object)]
#[oai(rename = "TalkSubmissionFields")]
pub struct SubmissionFields {
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
            ..b.fields.into()
        }
    }
}

impl From<SubmissionPatch> for Changes {
    fn from(b: SubmissionPatch) -> Self {
        Self {
            title: b.title,
            submission_type: b.submission_type,
            ..b.fields.into()
        }
    }
}

impl From<SubmissionFields> for Changes {
    fn from(b: SubmissionFields) -> Self {
        Self {
            title: None,
            submission_type: None,
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

pub(super) fn default_true() -> bool {
    true
}
