//! Questions (custom fields) of the call for papers and their options:
//! `/api/events/{event}/questions/` and `/api/events/{event}/question-options/`.
//!
//! Who sees which questions is [`crate::domain::talk::questions::visible`]'s rule, as pretalx: organisers of the
//! call for papers (and those who may change the event's settings) see all of them with the
//! fields only organisers see (`active`, `is_public`, `contains_personal_data`,
//! `is_visible_to_reviewers`); reviewers see the active questions shown to reviewers and the
//! questions to reviewers; anyone else who sees the event sees the active public questions to
//! submitters and speakers. Options are those of visible choice questions. Organisers who may change the event's settings change
//! both. A question's target is fixed once it is created; writing `options` on a question
//! replaces its options.
//!
//! `wire` holds what the API reads and answers (and how `?expand=` loads it), `fields` a
//! question's stored fields and how they are written.

mod fields;
mod wire;

pub use wire::{BARE_KIND, KIND, NESTED_OPTION_KIND, NestedOptionOut, OPTION_KIND, QuestionOut};

use poem::Request;
use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use serde_json::json;

use self::fields::{Fields, OptionFields, save, save_option, stored, stored_option};
use self::wire::{
    OptionCreate, OptionOut, OptionPatch, OptionWrite, QuestionPatch, QuestionWrite, Target,
    Variant,
};
use crate::api::talk::TalkTag;
use crate::api::talk::context::{Ctx, Listing};
use crate::api::talk::expand::Expand;
use crate::api::talk::log::{LogEntry, log_page};
use crate::api::talk::shape::Shaped;
use crate::domain::permissions::Permission;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::questions::visible;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page};
use crate::state::AppState;

const ENDPOINT: &str = "questions";
const OPTION_ENDPOINT: &str = "question-options";
const OBJECT: &str = "question";
const OPTION_OBJECT: &str = "question_option";

/// Most options a question may be given at once.
const MAX_OPTIONS: usize = 500;

/// Who may write questions and options: those who may change the event's settings.
fn may_write(ev: &TalkEvent) -> bool {
    ev.role.permissions.has(Permission::ChangeEventSettings)
}

/// The event for an operation on `endpoint`: anyone who sees the event reads (what they see
/// is decided per question); writing needs the event's settings.
async fn question_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    endpoint: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, endpoint, action, |_| true, may_write)
        .await?)
}

/// Question operations.
pub struct QuestionsApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl QuestionsApi {
    /// List questions
    #[oai(path = "/api/events/:event/questions", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_questions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the question contains.
        q: Query<Option<String>>,
        /// Order: `position` then `id` (default), `id`, `question`, `is_public` or
        /// `is_visible_to_reviewers`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Only questions whose answers are (not) public.
        is_public: Query<Option<bool>>,
        /// Only questions whose answers reviewers see (or not).
        is_visible_to_reviewers: Query<Option<bool>>,
        /// Only questions asking this target.
        target: Query<Option<Target>>,
        /// Only questions of this kind.
        variant: Query<Option<Variant>>,
        /// Fields to expand: `options`, `tracks`, `submission_types`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<QuestionOut>>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_questions q",
            "q.id",
            "q.event_id",
            ev.event.id,
            "q.position, q.id",
        );
        listing.condition(visible(ctx.role()));
        if let Some(v) = *is_public {
            listing.filter("q.is_public = {}", v);
        }
        if let Some(v) = *is_visible_to_reviewers {
            listing.filter("q.is_visible_to_reviewers = {}", v);
        }
        if let Some(t) = *target {
            listing.filter("q.target = {}", t.as_str());
        }
        if let Some(v) = *variant {
            listing.filter("q.variant = {}", v.as_str());
        }
        listing.search(q.as_deref(), &["q.question"]).order(
            o.as_deref(),
            &[
                ("id", "q.id"),
                ("question", "CAST(q.question AS TEXT)"),
                ("position", "q.position"),
                ("is_public", "q.is_public"),
                ("is_visible_to_reviewers", "q.is_visible_to_reviewers"),
            ],
        );
        let page = listing
            .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
            .await?;
        Ok(Json(page))
    }

    /// Show a question
    #[oai(path = "/api/events/:event/questions/:id", method = "get")]
    async fn get_question(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The question's ID.
        id: Path<i64>,
        /// Fields to expand: `options`, `tracks`, `submission_types`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<QuestionOut>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, (*id).into(), &expand).await?))
    }

    /// Create a question
    ///
    /// `options` gives a choice question its options.
    #[oai(path = "/api/events/:event/questions", method = "post")]
    async fn create_question(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<QuestionWrite>,
    ) -> TalkResult<Created<Shaped<QuestionOut>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Create).await?;
        let (f, options) = Fields::from_write(body.0, None);
        Ok(Created::Created(Json(
            save(&state, &ev, None, f, options, "create").await?,
        )))
    }

    /// Change a question
    ///
    /// PUT replaces every field; PATCH changes the fields it sends. `options` replaces the
    /// question's options; the target cannot change (400). Changing `active` alone is logged
    /// as activating or deactivating the question.
    #[oai(path = "/api/events/:event/questions/:id", method = "patch")]
    async fn patch_question(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The question's ID.
        id: Path<i64>,
        body: JsonBody<QuestionPatch>,
    ) -> TalkResult<Json<Shaped<QuestionOut>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Update).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let before = stored(&ctx, *id).await?;
        let body = body.0;
        fixed_target(&before, body.fields.target)?;
        let (f, options) = before.clone().patch(body);
        let only_active_changed = options.is_none()
            && f.active != before.active
            && Fields {
                active: before.active,
                ..f.clone()
            } == before;
        let action = match (only_active_changed, f.active) {
            (true, true) => "activate",
            (true, false) => "deactivate",
            _ => "update",
        };
        Ok(Json(
            save(&state, &ev, Some(*id), f, options, action).await?,
        ))
    }

    /// Replace a question
    ///
    /// `options` replaces the question's options; the target cannot change (400).
    #[oai(path = "/api/events/:event/questions/:id", method = "put")]
    async fn put_question(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The question's ID.
        id: Path<i64>,
        body: JsonBody<QuestionWrite>,
    ) -> TalkResult<Json<Shaped<QuestionOut>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Update).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let before = stored(&ctx, *id).await?;
        let body = body.0;
        fixed_target(&before, body.fields.target)?;
        let (f, options) = Fields::from_write(body, Some(&before.target));
        Ok(Json(
            save(&state, &ev, Some(*id), f, options, "update").await?,
        ))
    }

    /// Delete a question
    ///
    /// A question with answers cannot be deleted (400); its options go with it.
    #[oai(path = "/api/events/:event/questions/:id", method = "delete")]
    async fn delete_question(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The question's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Destroy).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let f = stored(&ctx, *id).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let answered = ctx
            .within(&txn)
            .rows(
                "SELECT id FROM talk_answers WHERE question_id = $1 LIMIT 1",
                vec![(*id).into()],
            )
            .await?;
        if !answered.is_empty() {
            return Err(ApiError::bad_request(
                "You cannot delete a question object that has answers.",
            )
            .into());
        }
        crate::db::execute(
            &txn,
            "DELETE FROM talk_questions WHERE id = $1",
            [(*id).into()],
        )
        .await?;
        let data = json!({"question": f.question, "identifier": f.identifier});
        talk_log::write(&txn, Change::new(&ev, OBJECT, *id, "delete", data)).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A question's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/questions/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn question_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The question's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = question_event(&state, &talk, &event, ENDPOINT, Action::Retrieve).await?;
        ev.require(ENDPOINT, Action::Retrieve, ev.role.is_member())?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        stored(&ctx, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }

    /// List question options
    #[oai(path = "/api/events/:event/question-options", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_question_options(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the option contains.
        q: Query<Option<String>>,
        /// Order: `id` (default) or `answer`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Only options of this question.
        question: Query<Option<i64>>,
        /// Fields to expand: `question`, `question.tracks`, `question.submission_types`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<OptionOut>>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &OPTION_KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_question_options o JOIN talk_questions q ON q.id = o.question_id",
            "o.id",
            "q.event_id",
            ev.event.id,
            "o.id",
        );
        listing
            .condition(visible(ctx.role()))
            .condition("q.variant IN ('choices', 'multiple_choice')");
        if let Some(question) = *question {
            listing.filter("o.question_id = {}", question);
        }
        listing.search(q.as_deref(), &["o.answer"]).order(
            o.as_deref(),
            &[("id", "o.id"), ("answer", "CAST(o.answer AS TEXT)")],
        );
        let page = listing
            .fetch(&ctx, &OPTION_KIND, req, page.0, page_size.0, &expand)
            .await?;
        Ok(Json(page))
    }

    /// Show a question option
    #[oai(path = "/api/events/:event/question-options/:id", method = "get")]
    async fn get_question_option(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The option's ID.
        id: Path<i64>,
        /// Fields to expand: `question`, `question.tracks`, `question.submission_types`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<OptionOut>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &OPTION_KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&OPTION_KIND, (*id).into(), &expand).await?))
    }

    /// Create a question option
    #[oai(path = "/api/events/:event/question-options", method = "post")]
    async fn create_question_option(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<OptionCreate>,
    ) -> TalkResult<Created<Shaped<OptionOut>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Create).await?;
        let body = body.0;
        let f = OptionFields {
            question: body.question,
            answer: body.answer.to_stored(),
            position: body.position.unwrap_or(0),
            identifier: body.identifier.unwrap_or_default(),
        };
        Ok(Created::Created(Json(
            save_option(&state, &ev, None, f).await?,
        )))
    }

    /// Change a question option
    ///
    /// PUT replaces every field; PATCH changes the fields it sends. The question cannot
    /// change.
    #[oai(path = "/api/events/:event/question-options/:id", method = "patch")]
    async fn patch_question_option(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The option's ID.
        id: Path<i64>,
        body: JsonBody<OptionPatch>,
    ) -> TalkResult<Json<Shaped<OptionOut>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Update).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let mut f = stored_option(&ctx, *id).await?;
        let body = body.0;
        if let Some(a) = body.answer {
            f.answer = a.to_stored();
        }
        f.position = body.position.unwrap_or(f.position);
        f.identifier = body.identifier.unwrap_or(f.identifier);
        Ok(Json(save_option(&state, &ev, Some(*id), f).await?))
    }

    /// Replace a question option
    #[oai(path = "/api/events/:event/question-options/:id", method = "put")]
    async fn put_question_option(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The option's ID.
        id: Path<i64>,
        body: JsonBody<OptionWrite>,
    ) -> TalkResult<Json<Shaped<OptionOut>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Update).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let before = stored_option(&ctx, *id).await?;
        let body = body.0;
        let f = OptionFields {
            question: before.question,
            answer: body.answer.to_stored(),
            position: body.position.unwrap_or(0),
            identifier: body.identifier.unwrap_or_default(),
        };
        Ok(Json(save_option(&state, &ev, Some(*id), f).await?))
    }

    /// Delete a question option
    ///
    /// An option picked in answers cannot be deleted (400).
    #[oai(path = "/api/events/:event/question-options/:id", method = "delete")]
    async fn delete_question_option(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The option's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Destroy).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let f = stored_option(&ctx, *id).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let used = ctx
            .within(&txn)
            .rows(
                "SELECT answer_id FROM talk_answer_options WHERE option_id = $1 LIMIT 1",
                vec![(*id).into()],
            )
            .await?;
        if !used.is_empty() {
            return Err(ApiError::bad_request(
                "You cannot delete an option object that has been used in answers.",
            )
            .into());
        }
        crate::db::execute(
            &txn,
            "DELETE FROM talk_question_options WHERE id = $1",
            [(*id).into()],
        )
        .await?;
        let data = json!({"question": f.question, "answer": f.answer});
        talk_log::write(&txn, Change::new(&ev, OPTION_OBJECT, *id, "delete", data)).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A question option's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/question-options/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn question_option_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The option's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = question_event(&state, &talk, &event, OPTION_ENDPOINT, Action::Retrieve).await?;
        ev.require(OPTION_ENDPOINT, Action::Retrieve, ev.role.is_member())?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        stored_option(&ctx, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OPTION_OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}

/// 400 when a write names a target other than the question's: it is fixed once created.
fn fixed_target(before: &Fields, target: Option<Target>) -> Result<(), ApiError> {
    match target {
        Some(t) if t.as_str() != before.target => Err(ApiError::field(
            "target",
            "A question's target cannot change once it is created: its answers would be orphaned.",
        )),
        _ => Ok(()),
    }
}
