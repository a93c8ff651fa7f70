//! The talk side, `/api/`: conference data for organisers and reviewers, following
//! pretalx's REST API (version v2) so that pretalx clients work unchanged. Answers are
//! built as JSON ([`shape`]) by kinds of objects that load many at once ([`expand`]), with
//! the shared listing rules of [`context`].

pub mod answers;
pub mod context;
pub mod expand;
pub mod exports;
pub mod lang;
pub mod log;
pub mod questions;
pub mod review_phases;
pub mod reviews;
pub mod rooms;
pub mod root;
pub mod schedules;
pub mod score_categories;
pub mod shape;
pub mod simple;
pub mod slots;
pub mod speakers;
pub mod submission_types;
pub mod submissions;
pub mod tags;
pub mod tracks;
pub mod upload;

use poem_openapi::{OpenApi, Tags};

/// Groups of talk-side operations in the OpenAPI document.
#[derive(Tags)]
pub enum TalkTag {
    /// The talk side's root and its events.
    #[oai(rename = "Talk: events")]
    Events,
    /// The call for papers: submissions, speakers, session types, tracks, tags, questions
    /// and answers.
    #[oai(rename = "Talk: call for papers")]
    CallForPapers,
    /// Files uploaded for the fields that take them.
    #[oai(rename = "Talk: uploads")]
    Files,
    /// The program: rooms, schedules and their slots.
    #[oai(rename = "Talk: schedule")]
    Schedule,
    /// Reviews of submissions, their score categories and the review phases.
    #[oai(rename = "Talk: reviews")]
    Reviews,
}

/// Every operation of the talk side (`/api/`).
pub fn talk_api() -> impl OpenApi {
    (
        (root::TalkRootApi, upload::TalkUploadApi),
        tags::TagsApi,
        (submission_types::SubmissionTypesApi, tracks::TracksApi),
        (speakers::SpeakersApi, submissions::SubmissionsApi),
        (questions::QuestionsApi, answers::AnswersApi),
        (rooms::RoomsApi, schedules::SchedulesApi, slots::SlotsApi),
        exports::ExportsApi,
        (
            reviews::ReviewsApi,
            score_categories::ScoreCategoriesApi,
            review_phases::ReviewPhasesApi,
        ),
    )
}
