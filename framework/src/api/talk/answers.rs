//! Answers to questions: `/api/events/{event}/answers/`. As in pretalx, the endpoint is for
//! organisers who may both change submissions and the event's settings (reviewers 403,
//! anonymous callers 401). An answer belongs to a question and to its target: a submission
//! (`submission`), a speaker (`person`) or a review (`review`). Creating an answer for a
//! question and target that have one already changes that answer (and answers 201, as pretalx
//! does). Answers are checked against their question's kind and bounds; file answers take an
//! upload's ID (`file:<id>`) in `answer_file`.

use chrono::{DateTime, NaiveDate, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use rust_decimal::Decimal;
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::str::FromStr;

use super::TalkTag;
use super::context::{Ctx, Listing, event_locales, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::questions::{NestedOptionOut, QuestionOut, Variant, visible};
use super::shape::{Expandable, Shaped};
use super::speakers::SpeakerOut;
use crate::domain::files;
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, I18nString, JsonBody, NoContent, Page};
use crate::state::AppState;

const ENDPOINT: &str = "answers";
const OBJECT: &str = "answer";

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
        let found: Vec<Value> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id").map(Value::from))
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

/// The options chosen in these answers, in the options' order: one query.
async fn chosen_options(
    ctx: &Ctx<'_>,
    answers: &[Value],
) -> Result<HashMap<i64, Vec<i64>>, ApiError> {
    let mut by_answer: HashMap<i64, Vec<i64>> = HashMap::new();
    if answers.is_empty() {
        return Ok(by_answer);
    }
    let (ids, values) = keys_in(answers);
    let sql = format!(
        "SELECT ao.answer_id, ao.option_id FROM talk_answer_options ao \
         JOIN talk_question_options o ON o.id = ao.option_id \
         WHERE ao.answer_id IN {ids} ORDER BY o.position, o.id"
    );
    for r in ctx.rows(&sql, values).await? {
        by_answer
            .entry(r.try_get("", "answer_id")?)
            .or_default()
            .push(r.try_get("", "option_id")?);
    }
    Ok(by_answer)
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

/// Who may use the answers endpoint: organisers who may change submissions and the event's
/// settings, as pretalx.
fn may_use(ev: &TalkEvent) -> bool {
    ev.role.is_orga() && ev.role.permissions.has(Permission::ChangeEventSettings)
}

async fn answer_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    talk.event_for(&state.db, slug, ENDPOINT, action, may_use, may_use)
        .await
}

/// What an answer's checks need of its question.
struct Question {
    id: i64,
    variant: Variant,
    target: String,
    min_length: Option<i32>,
    max_length: Option<i32>,
    min_number: Option<String>,
    max_number: Option<String>,
    min_options: Option<i32>,
    max_options: Option<i32>,
    min_date: Option<NaiveDate>,
    max_date: Option<NaiveDate>,
    min_datetime: Option<DateTime<Utc>>,
    max_datetime: Option<DateTime<Utc>>,
}

/// The question `id` of the event as the caller sees it.
async fn question(ctx: &Ctx<'_>, id: i64) -> Result<Option<Question>, ApiError> {
    let sql = format!(
        "SELECT q.id, q.variant, q.target, q.min_length, q.max_length, q.min_number, \
         q.max_number, q.min_options, q.max_options, q.min_date, q.max_date, q.min_datetime, \
         q.max_datetime FROM talk_questions q WHERE q.id = $1 AND q.event_id = $2 AND {}",
        visible(ctx.role())
    );
    let Some(r) = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
    else {
        return Ok(None);
    };
    Ok(Some(Question {
        id: r.try_get("", "id")?,
        variant: Variant::parse(&r.try_get::<String>("", "variant")?),
        target: r.try_get("", "target")?,
        min_length: r.try_get("", "min_length")?,
        max_length: r.try_get("", "max_length")?,
        min_number: r.try_get("", "min_number")?,
        max_number: r.try_get("", "max_number")?,
        min_options: r.try_get("", "min_options")?,
        max_options: r.try_get("", "max_options")?,
        min_date: r.try_get("", "min_date")?,
        max_date: r.try_get("", "max_date")?,
        min_datetime: r.try_get("", "min_datetime")?,
        max_datetime: r.try_get("", "max_datetime")?,
    }))
}

/// Whether `text` is an absolute http(s) URL with a host and nothing a URL cannot hold.
fn is_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or_default();
    let name = host.split(':').next().unwrap_or_default();
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '[' | ']'))
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The stored text of an answer `text` to a question of a kind answered by text, or why it
/// does not answer it.
fn checked_text(q: &Question, text: &str) -> Result<String, String> {
    let trimmed = text.trim();
    match q.variant {
        Variant::Number => {
            let n =
                Decimal::from_str(trimmed).map_err(|_| "A valid number is required.".to_owned())?;
            let bound = |b: &Option<String>| b.as_deref().and_then(|b| Decimal::from_str(b).ok());
            if let Some(min) = bound(&q.min_number)
                && n < min
            {
                return Err(format!(
                    "Ensure this value is greater than or equal to {}.",
                    min.normalize()
                ));
            }
            if let Some(max) = bound(&q.max_number)
                && n > max
            {
                return Err(format!(
                    "Ensure this value is less than or equal to {}.",
                    max.normalize()
                ));
            }
            Ok(trimmed.to_owned())
        }
        Variant::String | Variant::Text => {
            let length = text.chars().count();
            if let Some(min) = q.min_length
                && length < usize::try_from(min).unwrap_or(0)
            {
                return Err(format!("Ensure this field has at least {min} characters."));
            }
            if let Some(max) = q.max_length
                && length > usize::try_from(max).unwrap_or(usize::MAX)
            {
                return Err(format!(
                    "Ensure this field has no more than {max} characters."
                ));
            }
            Ok(text.to_owned())
        }
        Variant::Url => {
            if trimmed.chars().count() > 2000 || !is_url(trimmed) {
                return Err("Enter a valid URL.".into());
            }
            Ok(trimmed.to_owned())
        }
        Variant::Date => {
            let d = NaiveDate::parse_from_str(trimmed, "%Y-%m-%d")
                .map_err(|_| "Enter a valid date (YYYY-MM-DD).".to_owned())?;
            if let Some(min) = q.min_date
                && d < min
            {
                return Err(format!("Ensure this date is not before {min}."));
            }
            if let Some(max) = q.max_date
                && d > max
            {
                return Err(format!("Ensure this date is not after {max}."));
            }
            Ok(d.format("%Y-%m-%d").to_string())
        }
        Variant::Datetime => {
            let d = DateTime::parse_from_rfc3339(trimmed)
                .map_err(|_| "Enter a valid date and time (RFC 3339, with an offset).".to_owned())?
                .with_timezone(&Utc);
            if let Some(min) = q.min_datetime
                && d < min
            {
                return Err(format!(
                    "Ensure this date and time is not before {}.",
                    min.to_rfc3339()
                ));
            }
            if let Some(max) = q.max_datetime
                && d > max
            {
                return Err(format!(
                    "Ensure this date and time is not after {}.",
                    max.to_rfc3339()
                ));
            }
            Ok(d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        }
        Variant::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Ok("True".into()),
            "false" => Ok("False".into()),
            _ => Err("Must be \"True\" or \"False\".".into()),
        },
        Variant::File | Variant::Choices | Variant::MultipleChoice => Ok(text.to_owned()),
    }
}

/// pretalx's message for a count of options outside a question's bounds.
fn option_count_message(min: Option<i32>, max: Option<i32>, count: usize) -> Option<String> {
    let min = min.filter(|m| *m > 0);
    let max = max.filter(|m| *m > 0);
    let below = min.is_some_and(|m| usize::try_from(m).unwrap_or(0) > count);
    let above = max.is_some_and(|m| usize::try_from(m).unwrap_or(usize::MAX) < count);
    if !below && !above {
        return None;
    }
    let rule = match (min, max) {
        (Some(a), Some(b)) if a == b => format!("Please select exactly {a} options."),
        (Some(a), Some(b)) => format!("Please select between {a} and {b} options."),
        (Some(a), None) => format!("Please select at least {a} options."),
        (None, Some(b)) => format!("Please select at most {b} options."),
        (None, None) => String::new(),
    };
    Some(format!("{rule} You selected {count} options."))
}

/// The options `ids` checked against question `q`: each an option of the question, as
/// many as it takes. Gives them in the options' order with the answer text they make.
async fn checked_options(
    ctx: &Ctx<'_>,
    q: &Question,
    ids: &[i64],
    locale: &str,
) -> Result<(Vec<i64>, String), ApiError> {
    if ids.is_empty() {
        return Err(ApiError::field(
            "options",
            "This field is required for choice or multiple-choice question.",
        ));
    }
    let mut wanted = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let keys: Vec<Value> = wanted.iter().map(|i| Value::from(*i)).collect();
    let (set, mut values) = keys_in(&keys);
    values.push(ctx.event_id().into());
    let sql = format!(
        "SELECT o.id, o.question_id, o.answer FROM talk_question_options o \
         JOIN talk_questions q ON q.id = o.question_id \
         WHERE o.id IN {set} AND q.event_id = ${} ORDER BY o.position, o.id",
        values.len()
    );
    let rows = ctx.rows(&sql, values).await?;
    let mut found = Vec::with_capacity(rows.len());
    let mut texts = Vec::with_capacity(rows.len());
    for r in &rows {
        let id: i64 = r.try_get("", "id")?;
        let question: i64 = r.try_get("", "question_id")?;
        if question != q.id {
            return Err(ApiError::field(
                "options",
                format!("Option {id} does not belong to question {}.", q.id),
            ));
        }
        found.push(id);
        texts.push(I18nString::from_stored(&r.try_get::<Value>("", "answer")?).localize(locale));
    }
    if let Some(missing) = wanted.iter().find(|i| !found.contains(i)) {
        return Err(ApiError::field(
            "options",
            format!("Invalid pk \"{missing}\" - object does not exist."),
        ));
    }
    if q.variant == Variant::Choices && found.len() > 1 {
        return Err(ApiError::field("options", "Choose exactly one option."));
    }
    if q.variant == Variant::MultipleChoice
        && let Some(message) = option_count_message(q.min_options, q.max_options, found.len())
    {
        return Err(ApiError::field("options", message));
    }
    Ok((found, texts.join(", ")))
}

/// An answer's value as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AnswerValue {
    answer: String,
    file: Option<String>,
    options: Vec<i64>,
}

/// The value the request gives, checked against the question: `text` and `options` where
/// sent, `file` an upload's ID to claim. `before` is the stored value of an answer being
/// changed, which keeps what is not sent.
#[allow(clippy::too_many_arguments)]
async fn checked_value(
    state: &AppState,
    ctx: &Ctx<'_>,
    txn: &DatabaseTransaction,
    q: &Question,
    text: Option<&str>,
    file: Option<&str>,
    options: Option<&[i64]>,
    before: Option<&AnswerValue>,
) -> Result<AnswerValue, ApiError> {
    let mut value = before.cloned().unwrap_or(AnswerValue {
        answer: String::new(),
        file: None,
        options: Vec::new(),
    });
    if q.variant.has_options() {
        let ids = match (options, before) {
            (Some(ids), _) => Some(ids),
            (None, None) => Some(&[][..]),
            (None, Some(_)) => None,
        };
        if let Some(ids) = ids {
            let locale = event_locales(state, &ctx.ev.event)
                .await?
                .into_iter()
                .next()
                .unwrap_or_else(|| "en".into());
            let (ids, answer) = checked_options(ctx, q, ids, &locale).await?;
            value.options = ids;
            value.answer = answer;
        }
    } else if options.is_some_and(|o| !o.is_empty()) {
        return Err(ApiError::field(
            "options",
            "Only choice questions take options.",
        ));
    }
    if q.variant == Variant::File {
        match file {
            Some(id) => {
                let user = ctx.ev.user_id().ok_or_else(|| ctx.ev.caller.deny())?;
                let reference = crate::api::talk::upload::claim_for_user(
                    txn,
                    user,
                    "answer_file",
                    id,
                    &files::DOCUMENT_TYPES,
                )
                .await?;
                value.answer = format!("file://{reference}");
                value.file = Some(reference);
            }
            None if value.file.is_none() => {
                return Err(ApiError::field(
                    "answer_file",
                    "This field is required for file questions.",
                ));
            }
            None => {}
        }
    } else if file.is_some() {
        return Err(ApiError::field(
            "answer_file",
            "Only file questions take files.",
        ));
    }
    if !q.variant.has_options()
        && q.variant != Variant::File
        && let Some(text) = text
    {
        value.answer = checked_text(q, text).map_err(|m| ApiError::field("answer", m))?;
    }
    Ok(value)
}

/// The answer's target: the submission's or speaker's ID, found by code in the event.
#[derive(Debug, Clone, Copy)]
enum Owner {
    Submission(i64),
    Speaker(i64),
}

impl Owner {
    fn object_type(self) -> &'static str {
        match self {
            Self::Submission(_) => "submission",
            Self::Speaker(_) => "speaker",
        }
    }

    fn id(self) -> i64 {
        match self {
            Self::Submission(id) | Self::Speaker(id) => id,
        }
    }
}

/// The target a new answer names, checked against the question's target: the field of the
/// question's target is required, the others must be left out.
async fn owner(ctx: &Ctx<'_>, q: &Question, body: &AnswerCreate) -> Result<Owner, ApiError> {
    let given = [
        ("submission", body.submission.is_some()),
        ("person", body.person.is_some()),
        ("review", body.review.is_some()),
    ];
    let needed = match q.target.as_str() {
        "speaker" => "person",
        "reviewer" => "review",
        _ => "submission",
    };
    if !given.iter().any(|(f, set)| *f == needed && *set) {
        return Err(ApiError::field(
            needed,
            format!("This field is required for {} questions.", q.target),
        ));
    }
    if let Some((other, _)) = given.iter().find(|(f, set)| *f != needed && *set) {
        return Err(ApiError::field(
            other,
            format!("Cannot set {other} for {} question.", q.target),
        ));
    }
    let (table, field, code) = match (needed, &body.submission, &body.person) {
        ("submission", Some(code), _) => ("talk_submissions", "submission", code),
        ("person", _, Some(code)) => ("talk_speakers", "person", code),
        _ => {
            // Reviews arrive with the program: no review exists yet.
            let id = body.review.unwrap_or_default();
            return Err(ApiError::field(
                "review",
                format!("Invalid pk \"{id}\" - object does not exist."),
            ));
        }
    };
    let sql = format!("SELECT id FROM {table} WHERE event_id = $1 AND UPPER(code) = UPPER($2)");
    let Some(r) = ctx
        .rows(&sql, vec![ctx.event_id().into(), code.clone().into()])
        .await?
        .pop()
    else {
        return Err(ApiError::field(
            field,
            format!("Object with code={code} does not exist."),
        ));
    };
    let id: i64 = r.try_get("", "id")?;
    Ok(if field == "submission" {
        Owner::Submission(id)
    } else {
        Owner::Speaker(id)
    })
}

/// The stored answer `id` of the event as the caller sees it, with its question and target.
async fn stored(ctx: &Ctx<'_>, id: i64) -> Result<(i64, Option<Owner>, AnswerValue), ApiError> {
    let sql = format!(
        "SELECT a.question_id, a.submission_id, a.speaker_id, a.answer, a.answer_file \
         FROM talk_answers a JOIN talk_questions q ON q.id = a.question_id \
         WHERE a.id = $1 AND q.event_id = $2 AND {}",
        visible(ctx.role())
    );
    let r = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    let owner = match (
        r.try_get::<Option<i64>>("", "submission_id")?,
        r.try_get::<Option<i64>>("", "speaker_id")?,
    ) {
        (Some(s), _) => Some(Owner::Submission(s)),
        (None, Some(s)) => Some(Owner::Speaker(s)),
        _ => None,
    };
    let options = chosen_options(ctx, &[Value::from(id)])
        .await?
        .remove(&id)
        .unwrap_or_default();
    Ok((
        r.try_get("", "question_id")?,
        owner,
        AnswerValue {
            answer: r.try_get("", "answer")?,
            file: r.try_get("", "answer_file")?,
            options,
        },
    ))
}

/// Writes an answer's value (a new answer when `id` is `None`) with its options, and logs a
/// change on the answer and on its target, as pretalx, when the value changed.
#[allow(clippy::too_many_arguments)]
async fn write(
    ev: &TalkEvent,
    txn: &DatabaseTransaction,
    id: Option<i64>,
    question: i64,
    owner: Option<Owner>,
    before: Option<&AnswerValue>,
    value: &AnswerValue,
) -> Result<i64, ApiError> {
    let id = match id {
        Some(id) => {
            crate::db::execute(
                txn,
                "UPDATE talk_answers SET answer = $1, answer_file = $2 WHERE id = $3",
                [
                    value.answer.clone().into(),
                    value.file.clone().into(),
                    id.into(),
                ],
            )
            .await?;
            id
        }
        None => {
            let (submission, speaker) = match owner {
                Some(Owner::Submission(s)) => (Some(s), None),
                Some(Owner::Speaker(s)) => (None, Some(s)),
                None => (None, None),
            };
            crate::db::insert_returning_id(
                txn,
                "INSERT INTO talk_answers (question_id, submission_id, speaker_id, answer, answer_file) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                [
                    question.into(),
                    submission.into(),
                    speaker.into(),
                    value.answer.clone().into(),
                    value.file.clone().into(),
                ],
            )
            .await?
        }
    };
    if before.map(|b| &b.options) != Some(&value.options) {
        crate::db::execute(
            txn,
            "DELETE FROM talk_answer_options WHERE answer_id = $1",
            [id.into()],
        )
        .await?;
        for option in &value.options {
            crate::db::execute(
                txn,
                "INSERT INTO talk_answer_options (answer_id, option_id) VALUES ($1, $2)",
                [id.into(), (*option).into()],
            )
            .await?;
        }
    }
    if before != Some(value) {
        let action = if before.is_some() { "update" } else { "create" };
        let data = json!({
            "question": question, "answer": value.answer, "answer_file": value.file, "options": value.options,
        });
        talk_log::write(txn, Change::new(ev, OBJECT, id, action, data)).await?;
        if let Some(owner) = owner {
            let changes = json!({
                "changes": {
                    format!("question-{question}"): {
                        "old": before.map(|b| b.answer.clone()),
                        "new": value.answer,
                    }
                }
            });
            talk_log::write(
                txn,
                Change::new(ev, owner.object_type(), owner.id(), "update", changes),
            )
            .await?;
        }
    }
    Ok(id)
}

/// Serializes answer writes to one question on PostgreSQL (SQLite's write transactions run
/// one at a time), so that two creations for the same target make one answer.
async fn lock_question(txn: &DatabaseTransaction, question: i64) -> Result<(), ApiError> {
    if txn.get_database_backend() == DbBackend::Postgres {
        crate::db::execute(
            txn,
            "SELECT id FROM talk_questions WHERE id = $1 FOR UPDATE",
            [question.into()],
        )
        .await?;
    }
    Ok(())
}

/// Changes answer `id` as a PATCH or PUT says, and gives it as the API shows it.
async fn change(
    state: &AppState,
    ev: &TalkEvent,
    id: i64,
    text: Option<&str>,
    file: Option<&str>,
    options: Option<&[i64]>,
) -> Result<Shaped<AnswerOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let tctx = ctx.within(&txn);
    let (question_id, owner, before) = stored(&tctx, id).await?;
    lock_question(&txn, question_id).await?;
    let q = question(&tctx, question_id).await?.ok_or_else(not_found)?;
    let value = checked_value(state, &tctx, &txn, &q, text, file, options, Some(&before)).await?;
    write(
        ev,
        &txn,
        Some(id),
        question_id,
        owner,
        Some(&before),
        &value,
    )
    .await?;
    let out = tctx.one(&KIND, id.into(), &Expand::default()).await?;
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
        if let Some(code) = submission.0.as_deref().filter(|c| !c.is_empty()) {
            let code: String = code.chars().filter(|c| *c != '\0').take(64).collect();
            listing.filter(
                "a.submission_id IN (SELECT id FROM talk_submissions WHERE UPPER(code) = UPPER({}))",
                code,
            );
        }
        if let Some(code) = speaker.0.as_deref().filter(|c| !c.is_empty()) {
            let code: String = code.chars().filter(|c| *c != '\0').take(64).collect();
            listing.filter(
                "a.speaker_id IN (SELECT id FROM talk_speakers WHERE UPPER(code) = UPPER({}))",
                code,
            );
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
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let tctx = ctx.within(&txn);
        lock_question(&txn, body.question).await?;
        let q = question(&tctx, body.question).await?.ok_or_else(|| {
            ApiError::field(
                "question",
                format!("Invalid pk \"{}\" - object does not exist.", body.question),
            )
        })?;
        if q.variant.has_options() && body.options.as_ref().is_none_or(Vec::is_empty) {
            return Err(ApiError::field(
                "options",
                "This field is required for choice or multiple-choice question.",
            )
            .into());
        }
        let owner = owner(&tctx, &q, &body).await?;
        let (column, owner_id) = match owner {
            Owner::Submission(id) => ("submission_id", id),
            Owner::Speaker(id) => ("speaker_id", id),
        };
        let existing = tctx
            .rows(
                &format!(
                    "SELECT id FROM talk_answers WHERE question_id = $1 AND {column} = $2 \
                     ORDER BY id LIMIT 1"
                ),
                vec![q.id.into(), owner_id.into()],
            )
            .await?
            .pop()
            .map(|r| r.try_get::<i64>("", "id"))
            .transpose()?;
        let before = match existing {
            Some(id) => Some(stored(&tctx, id).await?.2),
            None => None,
        };
        let value = checked_value(
            &state,
            &tctx,
            &txn,
            &q,
            Some(&body.answer),
            body.answer_file.as_deref(),
            body.options.as_deref(),
            before.as_ref(),
        )
        .await?;
        let id = write(
            &ev,
            &txn,
            existing,
            q.id,
            Some(owner),
            before.as_ref(),
            &value,
        )
        .await?;
        let out = tctx.one(&KIND, id.into(), &Expand::default()).await?;
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
        let out = change(
            &state,
            &ev,
            *id,
            b.answer.as_deref(),
            b.answer_file.as_deref(),
            b.options.as_deref(),
        )
        .await?;
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
        let out = change(
            &state,
            &ev,
            *id,
            Some(&b.answer),
            b.answer_file.as_deref(),
            Some(&options),
        )
        .await?;
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
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let (question, _, before) = stored(&ctx.within(&txn), *id).await?;
        crate::db::execute(
            &txn,
            "DELETE FROM talk_answers WHERE id = $1",
            [(*id).into()],
        )
        .await?;
        let data = json!({"question": question, "answer": before.answer});
        talk_log::write(&txn, Change::new(&ev, OBJECT, *id, "delete", data)).await?;
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
        let ctx = Ctx::new(&state, &ev, None).await?;
        stored(&ctx, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{is_url, option_count_message};

    #[test]
    fn urls_need_a_web_scheme_and_a_host() {
        assert!(is_url("https://example.org/a?b#c"));
        assert!(is_url("http://localhost:8080"));
        assert!(!is_url("ftp://example.org"));
        assert!(!is_url("https://"));
        assert!(!is_url("https://exa mple.org"));
        assert!(!is_url("example.org"));
    }

    #[test]
    fn option_counts_are_explained_like_pretalx() {
        assert_eq!(option_count_message(Some(1), Some(2), 1), None);
        assert_eq!(
            option_count_message(Some(1), Some(1), 2).as_deref(),
            Some("Please select exactly 1 options. You selected 2 options.")
        );
        assert_eq!(
            option_count_message(Some(2), None, 1).as_deref(),
            Some("Please select at least 2 options. You selected 1 options.")
        );
    }
}
