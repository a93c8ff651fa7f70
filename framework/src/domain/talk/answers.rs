//! Answers to questions: how an answer is checked against its question's kind and bounds
//! ([`checked_text`], options, files), whom it belongs to (a submission or a speaker, as the
//! question's target says), and the writes: an answer created for a question and target
//! that have one already changes that answer ([`create`]), and every change is logged on the
//! answer and on its target, as pretalx does. Writes to one question are serialized, so
//! that two creations for the same target make one answer.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use sea_orm::{ConnectionTrait, DatabaseTransaction};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::str::FromStr;

use super::access::{TalkEvent, not_found};
use super::log::{self as talk_log, Change};
use super::questions::{Variant, visible};
use super::sql::{first, ids_in, rows};
use crate::domain::files;
use crate::domain::permissions::Permission;
use crate::domain::refusal::Refusal;
use crate::values::I18nString;

/// The object type of answers in the activity log.
pub const OBJECT: &str = "answer";

/// Longest URL an answer to a URL question may be, in characters.
const MAX_URL_LEN: usize = 2000;

/// Who may use the answers endpoint: organisers who may change submissions and the event's
/// settings, as pretalx.
pub fn may_use(ev: &TalkEvent) -> bool {
    ev.role.is_orga() && ev.role.permissions.has(Permission::ChangeEventSettings)
}

/// What an answer's checks need of its question.
#[derive(Debug, Clone, Default)]
pub struct Question {
    /// Internal ID.
    pub id: i64,
    /// The kind of answer it takes.
    pub variant: Variant,
    /// Whom it asks: `submission`, `speaker` or `reviewer`.
    pub target: String,
    /// Fewest characters of a text answer.
    pub min_length: Option<i32>,
    /// Most characters of a text answer.
    pub max_length: Option<i32>,
    /// Smallest number (a decimal's text).
    pub min_number: Option<String>,
    /// Largest number (a decimal's text).
    pub max_number: Option<String>,
    /// Fewest options of a multiple-choice answer.
    pub min_options: Option<i32>,
    /// Most options of a multiple-choice answer.
    pub max_options: Option<i32>,
    /// Earliest date.
    pub min_date: Option<NaiveDate>,
    /// Latest date.
    pub max_date: Option<NaiveDate>,
    /// Earliest date and time.
    pub min_datetime: Option<DateTime<Utc>>,
    /// Latest date and time.
    pub max_datetime: Option<DateTime<Utc>>,
}

/// The question `id` of the event, if the caller sees it.
pub async fn question(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    id: i64,
) -> Result<Option<Question>, Refusal> {
    let sql = format!(
        "SELECT q.id, q.variant, q.target, q.min_length, q.max_length, q.min_number, \
         q.max_number, q.min_options, q.max_options, q.min_date, q.max_date, q.min_datetime, \
         q.max_datetime FROM talk_questions q WHERE q.id = $1 AND q.event_id = $2 AND {}",
        visible(&ev.role)
    );
    let Some(r) = first(db, &sql, vec![id.into(), ev.event.id.into()]).await? else {
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
pub fn is_url(text: &str) -> bool {
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
/// does not answer it. Answers to choice and file questions are kept as sent (their text
/// comes from the options or the file).
pub fn checked_text(q: &Question, text: &str) -> Result<String, String> {
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
            if trimmed.chars().count() > MAX_URL_LEN || !is_url(trimmed) {
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
pub fn option_count_message(min: Option<i32>, max: Option<i32>, count: usize) -> Option<String> {
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

/// The 400 of a choice question answered without options.
fn options_required() -> Refusal {
    Refusal::field(
        "options",
        "This field is required for choice or multiple-choice question.",
    )
}

/// An option found for an answer: its ID, its question's and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundOption {
    /// The option's ID.
    pub id: i64,
    /// Its question's ID.
    pub question: i64,
    /// Its text in the language answers are written in.
    pub text: String,
}

/// The options `wanted` (sorted, without repeats) checked against question `q`, given those
/// `found` of the event (in the options' order): each an option of the question, as many as
/// it takes. Gives their IDs in the options' order and the answer text they make.
pub fn chosen(
    q: &Question,
    wanted: &[i64],
    found: &[FoundOption],
) -> Result<(Vec<i64>, String), Refusal> {
    if let Some(other) = found.iter().find(|o| o.question != q.id) {
        return Err(Refusal::field(
            "options",
            format!("Option {} does not belong to question {}.", other.id, q.id),
        ));
    }
    if let Some(missing) = wanted.iter().find(|i| !found.iter().any(|o| o.id == **i)) {
        return Err(Refusal::field(
            "options",
            format!("Invalid pk \"{missing}\" - object does not exist."),
        ));
    }
    if q.variant == Variant::Choices && found.len() > 1 {
        return Err(Refusal::field("options", "Choose exactly one option."));
    }
    if q.variant == Variant::MultipleChoice
        && let Some(message) = option_count_message(q.min_options, q.max_options, found.len())
    {
        return Err(Refusal::field("options", message));
    }
    let texts: Vec<&str> = found.iter().map(|o| o.text.as_str()).collect();
    Ok((found.iter().map(|o| o.id).collect(), texts.join(", ")))
}

/// The options `ids` of the event checked against question `q` ([`chosen`]), their texts in
/// `locale`.
async fn checked_options(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    q: &Question,
    ids: &[i64],
    locale: &str,
) -> Result<(Vec<i64>, String), Refusal> {
    if ids.is_empty() {
        return Err(options_required());
    }
    let mut wanted = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let (set, mut values) = ids_in(&wanted, 0);
    values.push(ev.event.id.into());
    let sql = format!(
        "SELECT o.id, o.question_id, o.answer FROM talk_question_options o \
         JOIN talk_questions q ON q.id = o.question_id \
         WHERE o.id IN {set} AND q.event_id = ${} ORDER BY o.position, o.id",
        values.len()
    );
    let found = rows(db, &sql, values)
        .await?
        .iter()
        .map(|r| {
            Ok(FoundOption {
                id: r.try_get("", "id")?,
                question: r.try_get("", "question_id")?,
                text: I18nString::from_stored(&r.try_get::<Value>("", "answer")?).localize(locale),
            })
        })
        .collect::<Result<Vec<_>, sea_orm::DbErr>>()?;
    chosen(q, &wanted, &found)
}

/// An answer's value as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerValue {
    /// The answer as text.
    pub answer: String,
    /// The file's stored reference (file questions).
    pub file: Option<String>,
    /// The chosen options' IDs (choice questions).
    pub options: Vec<i64>,
}

/// What a request sends of an answer's value; `None` leaves a part as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent<'a> {
    /// The answer as text.
    pub text: Option<&'a str>,
    /// An upload's ID (`file:...`) to claim (file questions).
    pub file: Option<&'a str>,
    /// The chosen options' IDs (choice questions).
    pub options: Option<&'a [i64]>,
}

/// The value `sent` gives, checked against question `q`: text where sent, options (their
/// texts in `locale`) where sent, a file claimed for the caller. `before` is the stored value
/// of an answer being changed, which keeps what is not sent.
async fn checked_value(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    q: &Question,
    sent: Sent<'_>,
    locale: &str,
    before: Option<&AnswerValue>,
) -> Result<AnswerValue, Refusal> {
    let mut value = before.cloned().unwrap_or_default();
    let kind = q.variant;
    if kind.has_options() {
        let ids = match (sent.options, before) {
            (Some(ids), _) => Some(ids),
            (None, None) => Some(&[][..]),
            (None, Some(_)) => None,
        };
        if let Some(ids) = ids {
            let (ids, answer) = checked_options(txn, ev, q, ids, locale).await?;
            value.options = ids;
            value.answer = answer;
        }
    } else if sent.options.is_some_and(|o| !o.is_empty()) {
        return Err(Refusal::field(
            "options",
            "Only choice questions take options.",
        ));
    }
    if kind.is_file() {
        match sent.file {
            Some(id) => {
                let user = ev.user_id().ok_or_else(|| ev.caller.deny())?;
                let reference =
                    files::claim_for_user(txn, user, "answer_file", id, &files::DOCUMENT_TYPES)
                        .await?;
                value.answer = format!("file://{reference}");
                value.file = Some(reference);
            }
            None if value.file.is_none() => {
                return Err(Refusal::field(
                    "answer_file",
                    "This field is required for file questions.",
                ));
            }
            None => {}
        }
    } else if sent.file.is_some() {
        return Err(Refusal::field(
            "answer_file",
            "Only file questions take files.",
        ));
    }
    if kind.is_text()
        && let Some(text) = sent.text
    {
        value.answer = checked_text(q, text).map_err(|m| Refusal::field("answer", m))?;
    }
    Ok(value)
}

/// An answer's target: the submission's or speaker's ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A submission's answer.
    Submission(i64),
    /// A speaker's answer.
    Speaker(i64),
}

impl Owner {
    /// The target's object type in the activity log.
    pub fn object_type(self) -> &'static str {
        match self {
            Self::Submission(_) => super::submissions::OBJECT,
            Self::Speaker(_) => super::speakers::OBJECT,
        }
    }

    /// The target's ID.
    pub fn id(self) -> i64 {
        match self {
            Self::Submission(id) | Self::Speaker(id) => id,
        }
    }

    /// The column of `talk_answers` naming the target.
    fn column(self) -> &'static str {
        match self {
            Self::Submission(_) => "submission_id",
            Self::Speaker(_) => "speaker_id",
        }
    }
}

/// The target a new answer names, as sent.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The submission's code (submission questions).
    pub submission: Option<String>,
    /// The speaker's code (speaker questions).
    pub person: Option<String>,
    /// The review's ID (reviewer questions).
    pub review: Option<i64>,
}

/// The field of [`Target`] a question of `target` needs: 400 when it is missing or another
/// is given.
pub fn needed_field(question_target: &str, given: &Target) -> Result<&'static str, Refusal> {
    let given = [
        ("submission", given.submission.is_some()),
        ("person", given.person.is_some()),
        ("review", given.review.is_some()),
    ];
    let needed = match question_target {
        "speaker" => "person",
        "reviewer" => "review",
        _ => "submission",
    };
    if !given.iter().any(|(f, set)| *f == needed && *set) {
        return Err(Refusal::field(
            needed,
            format!("This field is required for {question_target} questions."),
        ));
    }
    if let Some((other, _)) = given.iter().find(|(f, set)| *f != needed && *set) {
        return Err(Refusal::field(
            other,
            format!("Cannot set {other} for {question_target} question."),
        ));
    }
    Ok(needed)
}

/// The target a new answer names, checked against the question's target ([`needed_field`])
/// and found by code in the event.
async fn owner(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    q: &Question,
    target: &Target,
) -> Result<Owner, Refusal> {
    let needed = needed_field(&q.target, target)?;
    let (table, code) = match (needed, &target.submission, &target.person) {
        ("submission", Some(code), _) => ("talk_submissions", code),
        ("person", _, Some(code)) => ("talk_speakers", code),
        _ => {
            // Reviews arrive with the program: no review exists yet.
            let id = target.review.unwrap_or_default();
            return Err(Refusal::field(
                "review",
                format!("Invalid pk \"{id}\" - object does not exist."),
            ));
        }
    };
    let sql = format!("SELECT id FROM {table} WHERE event_id = $1 AND UPPER(code) = UPPER($2)");
    let Some(r) = first(db, &sql, vec![ev.event.id.into(), code.clone().into()]).await? else {
        return Err(Refusal::field(
            needed,
            format!("Object with code={code} does not exist."),
        ));
    };
    let id: i64 = r.try_get("", "id")?;
    Ok(if table == "talk_submissions" {
        Owner::Submission(id)
    } else {
        Owner::Speaker(id)
    })
}

/// The options chosen in these answers, in the options' order: one query.
pub async fn chosen_options(
    db: &impl ConnectionTrait,
    answers: &[i64],
) -> Result<HashMap<i64, Vec<i64>>, Refusal> {
    let mut by_answer: HashMap<i64, Vec<i64>> = HashMap::new();
    if answers.is_empty() {
        return Ok(by_answer);
    }
    let (ids, values) = ids_in(answers, 0);
    let sql = format!(
        "SELECT ao.answer_id, ao.option_id FROM talk_answer_options ao \
         JOIN talk_question_options o ON o.id = ao.option_id \
         WHERE ao.answer_id IN {ids} ORDER BY o.position, o.id"
    );
    for r in rows(db, &sql, values).await? {
        by_answer
            .entry(r.try_get("", "answer_id")?)
            .or_default()
            .push(r.try_get("", "option_id")?);
    }
    Ok(by_answer)
}

/// A stored answer: its question, target and value.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The question's ID.
    pub question: i64,
    /// The target; `None` for a review's answer.
    pub owner: Option<Owner>,
    /// The value.
    pub value: AnswerValue,
}

/// The stored answer `id` of the event as the caller sees it; 404 otherwise.
pub async fn stored(db: &impl ConnectionTrait, ev: &TalkEvent, id: i64) -> Result<Stored, Refusal> {
    let sql = format!(
        "SELECT a.question_id, a.submission_id, a.speaker_id, a.answer, a.answer_file \
         FROM talk_answers a JOIN talk_questions q ON q.id = a.question_id \
         WHERE a.id = $1 AND q.event_id = $2 AND {}",
        visible(&ev.role)
    );
    let r = first(db, &sql, vec![id.into(), ev.event.id.into()])
        .await?
        .ok_or_else(not_found)?;
    let owner = match (
        r.try_get::<Option<i64>>("", "submission_id")?,
        r.try_get::<Option<i64>>("", "speaker_id")?,
    ) {
        (Some(s), _) => Some(Owner::Submission(s)),
        (None, Some(s)) => Some(Owner::Speaker(s)),
        _ => None,
    };
    let options = chosen_options(db, &[id])
        .await?
        .remove(&id)
        .unwrap_or_default();
    Ok(Stored {
        question: r.try_get("", "question_id")?,
        owner,
        value: AnswerValue {
            answer: r.try_get("", "answer")?,
            file: r.try_get("", "answer_file")?,
            options,
        },
    })
}

/// Serializes answer writes to one question on PostgreSQL (SQLite's write transactions run
/// one at a time), so that two creations for the same target make one answer.
async fn lock_question(txn: &DatabaseTransaction, question: i64) -> Result<(), Refusal> {
    Ok(crate::db::lock_row(txn, "talk_questions", question).await?)
}

/// A new answer as sent: its question, target and value.
#[derive(Debug, Clone, Copy)]
pub struct NewAnswer<'a> {
    /// The question's ID.
    pub question: i64,
    /// The target, as sent.
    pub target: &'a Target,
    /// The value, as sent.
    pub value: Sent<'a>,
}

/// Creates an answer in the transaction `txn`, or changes the answer of the same question
/// and target when there is one (pretalx's upsert); gives its ID. Option texts are taken in
/// `locale`. 400 for an unknown question, a target the question does not ask, or a value it
/// does not take.
pub async fn create(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    new: NewAnswer<'_>,
    locale: &str,
) -> Result<i64, Refusal> {
    lock_question(txn, new.question).await?;
    let q = question(txn, ev, new.question).await?.ok_or_else(|| {
        Refusal::field(
            "question",
            format!("Invalid pk \"{}\" - object does not exist.", new.question),
        )
    })?;
    if q.variant.has_options() && new.value.options.is_none_or(<[i64]>::is_empty) {
        return Err(options_required());
    }
    let owner = owner(txn, ev, &q, new.target).await?;
    let sql = format!(
        "SELECT id FROM talk_answers WHERE question_id = $1 AND {} = $2 ORDER BY id LIMIT 1",
        owner.column()
    );
    let existing = first(txn, &sql, vec![q.id.into(), owner.id().into()])
        .await?
        .map(|r| r.try_get::<i64>("", "id"))
        .transpose()?;
    let before = match existing {
        Some(id) => Some(stored(txn, ev, id).await?.value),
        None => None,
    };
    let value = checked_value(txn, ev, &q, new.value, locale, before.as_ref()).await?;
    write(
        txn,
        ev,
        existing,
        q.id,
        Some(owner),
        before.as_ref(),
        &value,
    )
    .await
}

/// Changes answer `id` as a PATCH or PUT sends it, in the transaction `txn`; its question
/// and target stay. 404 when the caller does not see it.
pub async fn change(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: i64,
    sent: Sent<'_>,
    locale: &str,
) -> Result<(), Refusal> {
    let before = stored(txn, ev, id).await?;
    lock_question(txn, before.question).await?;
    let q = question(txn, ev, before.question)
        .await?
        .ok_or_else(not_found)?;
    let value = checked_value(txn, ev, &q, sent, locale, Some(&before.value)).await?;
    write(
        txn,
        ev,
        Some(id),
        before.question,
        before.owner,
        Some(&before.value),
        &value,
    )
    .await?;
    Ok(())
}

/// Deletes answer `id` with its log entry; 404 when the caller does not see it.
pub async fn delete(txn: &DatabaseTransaction, ev: &TalkEvent, id: i64) -> Result<(), Refusal> {
    let before = stored(txn, ev, id).await?;
    crate::db::execute(txn, "DELETE FROM talk_answers WHERE id = $1", [id.into()]).await?;
    let data = json!({"question": before.question, "answer": before.value.answer});
    talk_log::write(txn, Change::new(ev, OBJECT, id, "delete", data)).await?;
    Ok(())
}

/// Writes an answer's value (a new answer when `id` is `None`) with its options, and logs a
/// change on the answer and on its target, as pretalx, when the value changed.
#[allow(clippy::too_many_arguments)]
async fn write(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: Option<i64>,
    question: i64,
    owner: Option<Owner>,
    before: Option<&AnswerValue>,
    value: &AnswerValue,
) -> Result<i64, Refusal> {
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
                "INSERT INTO talk_answers (question_id, submission_id, speaker_id, answer, \
                 answer_file) VALUES ($1, $2, $3, $4, $5) RETURNING id",
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
            "question": question, "answer": value.answer, "answer_file": value.file,
            "options": value.options,
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

#[cfg(test)]
mod tests {
    use super::{
        FoundOption, Question, Target, checked_text, chosen, is_url, needed_field,
        option_count_message,
    };
    use crate::domain::talk::questions::Variant;

    fn question(variant: Variant) -> Question {
        Question {
            id: 1,
            variant,
            target: "submission".into(),
            ..Question::default()
        }
    }

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

    #[test]
    fn text_answers_are_stored_in_their_kinds_form() {
        let mut number = question(Variant::Number);
        number.max_number = Some("10.5".into());
        assert_eq!(checked_text(&number, " 3 ").as_deref(), Ok("3"));
        assert!(checked_text(&number, "10.6").is_err());
        assert_eq!(
            checked_text(&question(Variant::Boolean), "false").as_deref(),
            Ok("False")
        );
        assert_eq!(
            checked_text(&question(Variant::Datetime), "2026-06-01T12:00:00+02:00").as_deref(),
            Ok("2026-06-01T10:00:00Z")
        );
        assert!(checked_text(&question(Variant::Date), "2026-02-30").is_err());
    }

    #[test]
    fn chosen_options_belong_to_the_question_and_fit_its_bounds() {
        let option = |id: i64, question: i64, text: &str| FoundOption {
            id,
            question,
            text: text.into(),
        };
        let single = question(Variant::Choices);
        let found = [option(2, 1, "Go")];
        assert_eq!(
            chosen(&single, &[2], &found).expect("valid"),
            (vec![2], "Go".to_owned())
        );
        assert!(chosen(&single, &[2, 3], &[option(2, 1, "Go"), option(3, 1, "C")]).is_err());
        assert!(chosen(&single, &[9], &[option(9, 7, "Other")]).is_err());
        assert!(chosen(&single, &[4], &[]).is_err());
        let mut multi = question(Variant::MultipleChoice);
        multi.min_options = Some(2);
        assert!(chosen(&multi, &[2], &found).is_err());
        assert_eq!(
            chosen(&multi, &[1, 3], &[option(1, 1, "Rust"), option(3, 1, "C")])
                .expect("valid")
                .1,
            "Rust, C"
        );
    }

    #[test]
    fn an_answer_names_exactly_the_target_its_question_asks() {
        let to = |submission: bool, person: bool| Target {
            submission: submission.then(|| "ABCDEF".into()),
            person: person.then(|| "SPKR01".into()),
            review: None,
        };
        assert_eq!(
            needed_field("submission", &to(true, false)).expect("ok"),
            "submission"
        );
        assert_eq!(
            needed_field("speaker", &to(false, true)).expect("ok"),
            "person"
        );
        assert!(needed_field("speaker", &to(true, true)).is_err());
        assert!(needed_field("submission", &to(false, false)).is_err());
        assert!(needed_field("reviewer", &to(false, false)).is_err());
    }
}
