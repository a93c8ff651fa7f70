//! Answers to questions: `/api/events/{event}/answers/`. As in pretalx, the endpoint is for
//! organisers who may both change submissions and the event's settings (reviewers 403,
//! anonymous callers 401). An answer belongs to a question and to its target: a submission
//! (`submission`), a speaker (`person`) or a review (`review`). The rules (checks against the
//! question's kind and bounds, the upsert of an answer of the same question and target, the
//! log) are [`crate::domain::talk::answers`]'s; file answers take an upload's ID
//! (`file:<id>`) in `answer_file`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};
use std::collections::HashMap;

use super::TalkTag;
use super::context::{Conn, Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::lang::event_locales;
use super::log::{LogEntry, log_page};
use super::questions::{NestedOptionOut, QuestionOut};
use super::shape::{Expandable, Shaped};
use super::speakers::SpeakerOut;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::answers::{self, NewAnswer, OBJECT, Sent, Target, may_use};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::questions::visible;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page};
use crate::state::AppState;

const ENDPOINT: &str = "answers";

/// Characters of a code filter (`?submission=`, `?speaker=`) read at most.
const MAX_CODE_LEN: usize = 64;

/// An answer.
#[derive(Object)]
#[oai(rename = "TalkAnswer")]
pub struct AnswerOut {
    /// Internal ID.
    pub id: i64,
    /// The question it answers (expanded without its options).
    pub question: Expandable<i64, QuestionOut>,
    /// The answer as text: the chosen options' texts for choice questions, `True` or
    /// `False` for yes/no questions, `file://...` for file questions.
    pub answer: String,
    /// The answer's file (file questions): its URL.
    #[oai(nullable)]
    pub answer_file: Option<String>,
    /// The submission's code (submission questions).
    #[oai(nullable)]
    pub submission: Option<String>,
    /// The review's ID (reviewer questions).
    #[oai(nullable)]
    pub review: Option<i64>,
    /// The speaker's code (speaker questions).
    #[oai(nullable)]
    pub person: Option<Expandable<String, SpeakerOut>>,
    /// The chosen options (choice questions).
    pub options: Vec<Expandable<i64, NestedOptionOut>>,
}

/// Answers as objects: two queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load,
    fields: &[
        ("question", &super::questions::BARE_KIND),
        ("options", &super::questions::NESTED_OPTION_KIND),
        ("person", &super::speakers::KIND),
    ],
};

/// Answers as part of the review they belong to (pretalx shows a review with its answers):
/// read with the review's scope.
pub static IN_REVIEW_KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: super::reviews::ENDPOINT,
    load,
    fields: &[
        ("question", &super::questions::BARE_KIND),
        ("options", &super::questions::NESTED_OPTION_KIND),
        ("person", &super::speakers::KIND),
    ],
};

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT a.id, a.question_id, a.answer, a.answer_file, a.review_id, \
             s.code AS submission, sp.code AS person \
             FROM talk_answers a JOIN talk_questions q ON q.id = a.question_id \
             LEFT JOIN talk_submissions s ON s.id = a.submission_id \
             LEFT JOIN talk_speakers sp ON sp.id = a.speaker_id \
             WHERE a.id IN {ids} AND q.event_id = ${} AND {}",
            values.len(),
            visible(ctx.role())
        );
        let rows = ctx.rows(&sql, values).await?;
        let found: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id"))
            .collect::<Result<_, _>>()?;
        let mut chosen = chosen_options(ctx, &found).await?;
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let file: Option<String> = r.try_get("", "answer_file")?;
                Ok(json!({
                    "id": id,
                    "question": r.try_get::<i64>("", "question_id")?,
                    "answer": r.try_get::<String>("", "answer")?,
                    "answer_file": ctx.file_url(file.as_deref()),
                    "submission": r.try_get::<Option<String>>("", "submission")?,
                    "review": r.try_get::<Option<i64>>("", "review_id")?,
                    "person": r.try_get::<Option<String>>("", "person")?,
                    "options": chosen.remove(&id).unwrap_or_default(),
                }))
            })
            .collect()
    })
}

/// The options chosen in these answers, read where the context reads.
async fn chosen_options(
    ctx: &Ctx<'_>,
    answers: &[i64],
) -> Result<HashMap<i64, Vec<i64>>, ApiError> {
    Ok(match ctx.db {
        Conn::Pool(db) => answers::chosen_options(db, answers).await?,
        Conn::Txn(txn) => answers::chosen_options(txn, answers).await?,
    })
}

/// A new answer; an answer of the same question and target is changed instead.
#[derive(Object)]
#[oai(rename = "TalkAnswerCreate")]
pub struct AnswerCreate {
    /// The question it answers.
    pub question: i64,
    /// The answer as text (for choice and file questions, any text: the answer is taken from
    /// `options` or `answer_file`).
    #[oai(validator(min_length = 1, max_length = 100000))]
    pub answer: String,
    /// An uploaded file's ID, `file:<id>` (file questions).
    #[oai(validator(max_length = 200))]
    pub answer_file: Option<String>,
    /// The submission's code (submission questions).
    #[oai(nullable, validator(min_length = 1, max_length = 32))]
    pub submission: Option<String>,
    /// The speaker's code (speaker questions).
    #[oai(nullable, validator(min_length = 1, max_length = 32))]
    pub person: Option<String>,
    /// The review's ID (reviewer questions).
    #[oai(nullable)]
    pub review: Option<i64>,
    /// The chosen options' IDs (choice questions).
    #[oai(validator(max_items = 500))]
    pub options: Option<Vec<i64>>,
}

/// All fields of an answer that may change (PUT); its question and target cannot.
#[derive(Object)]
#[oai(rename = "TalkAnswerWrite")]
pub struct AnswerWrite {
    /// The answer as text.
    #[oai(validator(min_length = 1, max_length = 100000))]
    pub answer: String,
    /// An uploaded file's ID, `file:<id>` (file questions); the file stays unless given.
    #[oai(validator(max_length = 200))]
    pub answer_file: Option<String>,
    /// The chosen options' IDs (choice questions).
    #[oai(validator(max_items = 500))]
    pub options: Option<Vec<i64>>,
}

/// A partial change of an answer.
#[derive(Object)]
#[oai(rename = "TalkAnswerPatch")]
pub struct AnswerPatch {
    /// The answer as text.
    #[oai(validator(min_length = 1, max_length = 100000))]
    pub answer: Option<String>,
    /// An uploaded file's ID, `file:<id>` (file questions).
    #[oai(validator(max_length = 200))]
    pub answer_file: Option<String>,
    /// The chosen options' IDs (choice questions).
    #[oai(validator(max_items = 500))]
    pub options: Option<Vec<i64>>,
}

async fn answer_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may_use, may_use)
        .await?)
}

/// The language option texts of answers are written in: the event's first.
async fn answer_locale(state: &AppState, ev: &TalkEvent) -> Result<String, ApiError> {
    Ok(event_locales(state, &ev.event)
        .await?
        .into_iter()
        .next()
        .unwrap_or_else(|| "en".into()))
}

/// Changes answer `id` as a PATCH or PUT sends it, and gives it as the API shows it.
async fn change(
    state: &AppState,
    ev: &TalkEvent,
    id: i64,
    sent: Sent<'_>,
) -> Result<Shaped<AnswerOut>, ApiError> {
    let locale = answer_locale(state, ev).await?;
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    answers::change(&txn, ev, id, sent, &locale).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Answer operations.
pub struct AnswersApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl AnswersApi {
    /// List answers
    #[oai(path = "/api/events/:event/answers", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_answers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the answer contains.
        q: Query<Option<String>>,
        /// Order: `id` (default) or `answer`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Only answers to this question.
        question: Query<Option<i64>>,
        /// Only answers for the submission with this code.
        submission: Query<Option<String>>,
        /// Only answers for the speaker with this code.
        speaker: Query<Option<String>>,
        /// Only answers for this review.
        review: Query<Option<i64>>,
        /// Fields to expand: `question`, `question.tracks`, `question.submission_types`,
        /// `options`, `person`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<AnswerOut>>>> {
        let ev = answer_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_answers a JOIN talk_questions q ON q.id = a.question_id",
            "a.id",
            "q.event_id",
            ev.event.id,
            "a.id",
        );
        listing.condition(visible(ctx.role()));
        if let Some(question) = *question {
            listing.filter("a.question_id = {}", question);
        }
        for (code, column, table) in [
            (&submission.0, "a.submission_id", "talk_submissions"),
            (&speaker.0, "a.speaker_id", "talk_speakers"),
        ] {
            if let Some(code) = code.as_deref().filter(|c| !c.is_empty()) {
                let code: String = code.chars().take(MAX_CODE_LEN).collect();
                listing.filter(
                    &format!(
                        "{column} IN (SELECT id FROM {table} WHERE UPPER(code) = UPPER({{}}))"
                    ),
                    code,
                );
            }
        }
        if let Some(review) = *review {
            listing.filter("a.review_id = {}", review);
        }
        listing
            .search(q.as_deref(), &["a.answer"])
            .order(o.as_deref(), &[("id", "a.id"), ("answer", "a.answer")]);
        let page = listing
            .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
            .await?;
        Ok(Json(page))
    }

    /// Show an answer
    #[oai(path = "/api/events/:event/answers/:id", method = "get")]
    async fn get_answer(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The answer's ID.
        id: Path<i64>,
        /// Fields to expand: `question`, `question.tracks`, `question.submission_types`,
        /// `options`, `person`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<AnswerOut>>> {
        let ev = answer_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, (*id).into(), &expand).await?))
    }

    /// Create an answer
    ///
    /// An answer to the same question for the same submission or speaker is changed instead
    /// (and is answered with 201 too, as pretalx does). The target must match the question's:
    /// `submission` for submission questions, `person` for speaker questions, `review` for
    /// reviewer questions.
    #[oai(path = "/api/events/:event/answers", method = "post")]
    async fn create_answer(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<AnswerCreate>,
    ) -> TalkResult<Created<Shaped<AnswerOut>>> {
        let ev = answer_event(&state, &talk, &event, Action::Create).await?;
        let body = body.0;
        let target = Target {
            submission: body.submission,
            person: body.person,
            review: body.review,
        };
        let new = NewAnswer {
            question: body.question,
            target: &target,
            value: Sent {
                text: Some(&body.answer),
                file: body.answer_file.as_deref(),
                options: body.options.as_deref(),
            },
        };
        let locale = answer_locale(&state, &ev).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let id = answers::create(&txn, &ev, new, &locale).await?;
        let out = ctx
            .within(&txn)
            .one(&KIND, id.into(), &Expand::default())
            .await?;
        crate::db::commit(txn).await?;
        Ok(Created::Created(Json(out)))
    }

    /// Change an answer
    ///
    /// PUT replaces the answer; PATCH changes the fields it sends. The question and the
    /// target cannot change.
    #[oai(path = "/api/events/:event/answers/:id", method = "patch")]
    async fn patch_answer(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The answer's ID.
        id: Path<i64>,
        body: JsonBody<AnswerPatch>,
    ) -> TalkResult<Json<Shaped<AnswerOut>>> {
        let ev = answer_event(&state, &talk, &event, Action::Update).await?;
        let b = body.0;
        let sent = Sent {
            text: b.answer.as_deref(),
            file: b.answer_file.as_deref(),
            options: b.options.as_deref(),
        };
        let out = change(&state, &ev, *id, sent).await?;
        Ok(Json(out))
    }

    /// Replace an answer
    #[oai(path = "/api/events/:event/answers/:id", method = "put")]
    async fn put_answer(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The answer's ID.
        id: Path<i64>,
        body: JsonBody<AnswerWrite>,
    ) -> TalkResult<Json<Shaped<AnswerOut>>> {
        let ev = answer_event(&state, &talk, &event, Action::Update).await?;
        let b = body.0;
        let options = b.options.unwrap_or_default();
        let sent = Sent {
            text: Some(&b.answer),
            file: b.answer_file.as_deref(),
            options: Some(&options),
        };
        let out = change(&state, &ev, *id, sent).await?;
        Ok(Json(out))
    }

    /// Delete an answer
    #[oai(path = "/api/events/:event/answers/:id", method = "delete")]
    async fn delete_answer(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The answer's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = answer_event(&state, &talk, &event, Action::Destroy).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        answers::delete(&txn, &ev, *id).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// An answer's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/answers/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn answer_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The answer's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = answer_event(&state, &talk, &event, Action::Retrieve).await?;
        answers::stored(&state.db, &ev, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
