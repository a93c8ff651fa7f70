//! Review phases: `/api/events/{event}/review-phases/`. pretalx configures them in its web
//! interface; here organisers of the event's settings do, and organisers of the call for
//! papers and reviewers read them. At most one phase is active: writing one active
//! deactivates the others. While an event has no phase at all, its reviewers review as in
//! pretalx's default phase (see [`crate::domain::talk::review_phases`]). Token scopes:
//! those of `reviews`. The skeleton of the operations is [`super::simple`]'s.

use chrono::{DateTime, Utc};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object};
use sea_orm::{DbErr, QueryResult};
use serde::Serialize;
use serde_json::{Value, json};

use super::TalkTag;
use super::context::Ctx;
use super::expand::Kind;
use super::simple::{self, Resource, Writing};
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::review_phases::OtherReviews as Others;
use crate::domain::talk::reviews;
use crate::http::{ApiError, patched};

/// Whether reviewers see the reviews of others.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "TalkOtherReviews", rename_all = "snake_case")]
pub enum OtherReviews {
    /// Always.
    Always,
    /// Never.
    Never,
    /// Of the submissions they have reviewed themselves.
    AfterReview,
}

impl From<OtherReviews> for Others {
    fn from(o: OtherReviews) -> Self {
        match o {
            OtherReviews::Always => Self::Always,
            OtherReviews::Never => Self::Never,
            OtherReviews::AfterReview => Self::AfterReview,
        }
    }
}

/// A review phase.
#[derive(Object)]
#[oai(rename = "TalkReviewPhase")]
pub struct PhaseOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// When it starts.
    #[oai(nullable)]
    pub start: Option<DateTime<Utc>>,
    /// When it ends.
    #[oai(nullable)]
    pub end: Option<DateTime<Utc>>,
    /// Whether it is the event's active phase (one at most).
    pub is_active: bool,
    /// Reviewers may write and change reviews.
    pub can_review: bool,
    /// Whether reviewers see other reviews.
    pub can_see_other_reviews: OtherReviews,
    /// Reviewers see speaker names; when not, those who only review cannot use the API.
    pub can_see_speaker_names: bool,
    /// Reviewers see who wrote the other reviews.
    pub can_see_reviewer_names: bool,
    /// Reviewers may accept and reject submissions (kept for pretalx's configuration: the
    /// API's state changes stay with organisers of the call for papers).
    pub can_change_submission_state: bool,
}

/// Review phases as objects: one query for any number.
pub static KIND: Kind = Kind {
    name: "review_phase",
    key: "id",
    endpoint: Phases::ENDPOINT,
    load: simple::load::<Phases>,
    fields: &[],
};

/// The fields of a phase a body may leave out: a new phase takes pretalx's defaults (no
/// times, inactive, reviewing open, names visible, other reviews after one's own), PUT and
/// PATCH keep the values.
#[derive(Object)]
#[oai(rename = "TalkReviewPhaseOptional")]
pub struct PhaseOptional {
    /// When it starts.
    #[oai(nullable)]
    pub start: MaybeUndefined<DateTime<Utc>>,
    /// When it ends; not before its start.
    #[oai(nullable)]
    pub end: MaybeUndefined<DateTime<Utc>>,
    /// Make it the active phase (the others become inactive), or not.
    pub is_active: Option<bool>,
    /// Reviewers may write and change reviews.
    pub can_review: Option<bool>,
    /// Whether reviewers see other reviews.
    pub can_see_other_reviews: Option<OtherReviews>,
    /// Reviewers see speaker names.
    pub can_see_speaker_names: Option<bool>,
    /// Reviewers see who wrote the other reviews.
    pub can_see_reviewer_names: Option<bool>,
    /// Reviewers may accept and reject submissions.
    pub can_change_submission_state: Option<bool>,
}

/// A new review phase, or a phase's fields (PUT: omitted optional ones keep their values).
#[derive(Object)]
#[oai(rename = "TalkReviewPhaseWrite")]
pub struct PhaseWrite {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 100))]
    pub name: String,
    /// The others.
    #[oai(flatten)]
    pub optional: PhaseOptional,
}

/// A partial change of a review phase.
#[derive(Object)]
#[oai(rename = "TalkReviewPhasePatch")]
pub struct PhasePatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 100))]
    pub name: Option<String>,
    /// The others.
    #[oai(flatten)]
    pub optional: PhaseOptional,
}

/// The stored fields of a phase.
#[derive(Serialize)]
pub struct PhaseFields {
    name: String,
    start: Option<DateTime<Utc>>,
    end: Option<DateTime<Utc>>,
    is_active: bool,
    can_review: bool,
    can_see_other_reviews: String,
    can_see_speaker_names: bool,
    can_see_reviewer_names: bool,
    can_change_submission_state: bool,
}

impl PhaseOptional {
    fn apply(self, f: &mut PhaseFields) {
        if let Some(start) = patched(self.start) {
            f.start = start;
        }
        if let Some(end) = patched(self.end) {
            f.end = end;
        }
        f.is_active = self.is_active.unwrap_or(f.is_active);
        f.can_review = self.can_review.unwrap_or(f.can_review);
        if let Some(o) = self.can_see_other_reviews {
            f.can_see_other_reviews = Others::from(o).name().to_owned();
        }
        f.can_see_speaker_names = self
            .can_see_speaker_names
            .unwrap_or(f.can_see_speaker_names);
        f.can_see_reviewer_names = self
            .can_see_reviewer_names
            .unwrap_or(f.can_see_reviewer_names);
        f.can_change_submission_state = self
            .can_change_submission_state
            .unwrap_or(f.can_change_submission_state);
    }
}

/// Review phases as a [`Resource`].
pub struct Phases;

impl Resource for Phases {
    const ENDPOINT: &'static str = "reviews";
    const OBJECT: &'static str = "review_phase";
    const TABLE: &'static str = "talk_review_phases";
    const COLUMNS: &'static [&'static str] = &[
        "name",
        "start",
        "\"end\"",
        "is_active",
        "can_review",
        "can_see_other_reviews",
        "can_see_speaker_names",
        "can_see_reviewer_names",
        "can_change_submission_state",
    ];
    const SEARCH: &'static [&'static str] = &["t.name"];
    const ORDER: &'static [(&'static str, &'static str)] =
        &[("id", "t.id"), ("name", "t.name"), ("start", "t.start")];
    const KIND: &'static Kind = &KIND;

    type Out = PhaseOut;
    type Fields = PhaseFields;
    type Write = PhaseWrite;
    type Patch = PhasePatch;

    /// Organisers and reviewers.
    fn may_read(ev: &TalkEvent) -> bool {
        reviews::may_read_settings(ev)
    }

    /// Organisers of the event's settings.
    fn may_write(ev: &TalkEvent) -> bool {
        reviews::may_configure(ev)
    }

    fn defaults() -> PhaseFields {
        PhaseFields {
            name: String::new(),
            start: None,
            end: None,
            is_active: false,
            can_review: true,
            can_see_other_reviews: Others::AfterReview.name().to_owned(),
            can_see_speaker_names: true,
            can_see_reviewer_names: true,
            can_change_submission_state: false,
        }
    }

    fn write(body: PhaseWrite, f: &mut PhaseFields) {
        f.name = body.name;
        body.optional.apply(f);
    }

    fn patch(body: PhasePatch, f: &mut PhaseFields) {
        if let Some(name) = body.name {
            f.name = name;
        }
        body.optional.apply(f);
    }

    fn from_row(row: &QueryResult) -> Result<PhaseFields, DbErr> {
        Ok(PhaseFields {
            name: row.try_get("", "name")?,
            start: row.try_get("", "start")?,
            end: row.try_get("", "end")?,
            is_active: row.try_get("", "is_active")?,
            can_review: row.try_get("", "can_review")?,
            can_see_other_reviews: row.try_get("", "can_see_other_reviews")?,
            can_see_speaker_names: row.try_get("", "can_see_speaker_names")?,
            can_see_reviewer_names: row.try_get("", "can_see_reviewer_names")?,
            can_change_submission_state: row.try_get("", "can_change_submission_state")?,
        })
    }

    fn values(f: PhaseFields) -> Vec<sea_orm::Value> {
        vec![
            f.name.into(),
            f.start.into(),
            f.end.into(),
            f.is_active.into(),
            f.can_review.into(),
            f.can_see_other_reviews.into(),
            f.can_see_speaker_names.into(),
            f.can_see_reviewer_names.into(),
            f.can_change_submission_state.into(),
        ]
    }

    fn shown(_: &Ctx<'_>, id: i64, f: PhaseFields) -> Value {
        json!({
            "id": id,
            "name": f.name,
            "start": f.start,
            "end": f.end,
            "is_active": f.is_active,
            "can_review": f.can_review,
            "can_see_other_reviews": f.can_see_other_reviews,
            "can_see_speaker_names": f.can_see_speaker_names,
            "can_see_reviewer_names": f.can_see_reviewer_names,
            "can_change_submission_state": f.can_change_submission_state,
        })
    }

    /// Its end not before its start, and a non-blank name; when it is to be active, the
    /// event's other phases are deactivated first, in the write's transaction.
    async fn check(w: &Writing<'_>, id: Option<i64>, f: &PhaseFields) -> Result<(), ApiError> {
        if f.name.trim().is_empty() {
            return Err(ApiError::field("name", "This field may not be blank."));
        }
        reviews::check_phase_times(f.start, f.end)?;
        if f.is_active {
            reviews::make_only_active(w.txn, w.ev.event.id, id).await?;
        }
        Ok(())
    }

    fn duplicate() -> ApiError {
        ApiError::field("is_active", "Another phase of the event is active.")
    }
}

simple::forwarding_api! {
    /// Review phase operations.
    ReviewPhasesApi for Phases => PhaseOut, PhaseWrite, PhasePatch;
    tag: "TalkTag::Reviews";
    paths:
        "/api/events/:event/review-phases",
        "/api/events/:event/review-phases/:id",
        "/api/events/:event/review-phases/:id/log";
    /// List review phases
    ///
    /// For organisers and reviewers. Token scopes: those of `reviews`.
    list list_review_phases(
        q: "Text the name contains.",
        o: "Order: `id` (default), `name` or `start`; `-` before it for descending.",
    );
    /// Show a review phase
    get get_review_phase(id: "The phase's ID.");
    /// Create a review phase
    ///
    /// For organisers of the event's settings (token scopes: those of `reviews`). An active
    /// one deactivates the others.
    create create_review_phase;
    /// Change a review phase
    ///
    /// Changes the fields the body sends; `is_active: true` deactivates the other phases.
    patch patch_review_phase;
    /// Replace a review phase
    ///
    /// The body must send the name; fields it leaves out keep their values.
    put put_review_phase;
    /// Delete a review phase
    ///
    /// Deleting the active phase leaves the event without one (reviewers then neither
    /// review nor see speaker names) unless it was the last: an event without phases reviews
    /// as in pretalx's default phase.
    delete delete_review_phase;
    /// A review phase's activity log
    ///
    /// Newest first.
    log review_phase_log;
}
