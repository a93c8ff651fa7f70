//! Questions (custom fields) of the call for papers and their options:
//! `/api/events/{event}/questions/` and `/api/events/{event}/question-options/`.
//!
//! Who sees which questions is [`questions::visible`]'s rule, as pretalx: organisers of the
//! call for papers (and those who may change the event's settings) see all of them with the
//! fields only organisers see (`active`, `is_public`, `contains_personal_data`,
//! `is_visible_to_reviewers`); reviewers see the active questions shown to reviewers and the
//! questions to reviewers; anyone else who sees the event sees the active public questions to
//! submitters and speakers. Options are those of visible choice questions. Organisers who may change the event's settings change
//! both. A question's target is fixed once it is created; writing `options` on a question
//! replaces its options.

use chrono::{DateTime, NaiveDate, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use rand::Rng;
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::str::FromStr;

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Expandable, I18nInput, Shaped, TalkText};
use super::submission_types::SubmissionTypeOut;
use super::tracks::TrackOut;
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::questions::{self, orga_view, visible};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, FieldErrors, I18nString, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "questions";
const OPTION_ENDPOINT: &str = "question-options";
const OBJECT: &str = "question";
const OPTION_OBJECT: &str = "question_option";

/// Most options a question may be given at once.
const MAX_OPTIONS: usize = 500;

/// The kind of answer a question takes.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[oai(rename = "TalkQuestionVariant", rename_all = "snake_case")]
pub enum Variant {
    /// A number.
    Number,
    /// One line of text.
    String,
    /// Several lines of text.
    Text,
    /// A URL.
    Url,
    /// A date.
    Date,
    /// A date and time.
    Datetime,
    /// Yes or no.
    Boolean,
    /// An uploaded file.
    File,
    /// One of the options.
    Choices,
    /// Several of the options.
    MultipleChoice,
}

impl From<Variant> for questions::Variant {
    fn from(v: Variant) -> Self {
        match v {
            Variant::Number => Self::Number,
            Variant::String => Self::String,
            Variant::Text => Self::Text,
            Variant::Url => Self::Url,
            Variant::Date => Self::Date,
            Variant::Datetime => Self::Datetime,
            Variant::Boolean => Self::Boolean,
            Variant::File => Self::File,
            Variant::Choices => Self::Choices,
            Variant::MultipleChoice => Self::MultipleChoice,
        }
    }
}

impl Variant {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        questions::Variant::from(self).as_str()
    }
}

/// Whom a question asks.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[oai(rename = "TalkQuestionTarget", rename_all = "snake_case")]
pub enum Target {
    /// Asked per submission.
    Submission,
    /// Asked per speaker.
    Speaker,
    /// Asked of reviewers per review.
    Reviewer,
}

impl Target {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submission => "submission",
            Self::Speaker => "speaker",
            Self::Reviewer => "reviewer",
        }
    }
}

/// When an answer is required.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[oai(rename = "TalkQuestionRequired", rename_all = "snake_case")]
pub enum Required {
    /// Never.
    Optional,
    /// Always.
    Required,
    /// After the question's deadline.
    AfterDeadline,
}

impl Required {
    fn as_str(self) -> &'static str {
        match self {
            Self::Optional => "optional",
            Self::Required => "required",
            Self::AfterDeadline => "after_deadline",
        }
    }
}

/// The icon a public URL question's answers are shown with.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[oai(rename = "TalkQuestionIcon", rename_all = "lowercase")]
pub enum Icon {
    /// No icon.
    #[oai(rename = "-")]
    NoIcon,
    /// Bluesky.
    Bsky,
    /// Discord.
    Discord,
    /// GitHub.
    Github,
    /// Instagram.
    Instagram,
    /// LinkedIn.
    Linkedin,
    /// Mastodon.
    Mastodon,
    /// Twitter.
    Twitter,
    /// A website.
    Web,
    /// YouTube.
    Youtube,
}

impl Icon {
    fn as_str(self) -> &'static str {
        match self {
            Self::NoIcon => "-",
            Self::Bsky => "bsky",
            Self::Discord => "discord",
            Self::Github => "github",
            Self::Instagram => "instagram",
            Self::Linkedin => "linkedin",
            Self::Mastodon => "mastodon",
            Self::Twitter => "twitter",
            Self::Web => "web",
            Self::Youtube => "youtube",
        }
    }
}

/// An option of a choice question, as a question shows it expanded.
#[derive(Object)]
#[oai(rename = "TalkNestedQuestionOption")]
pub struct NestedOptionOut {
    /// Internal ID.
    pub id: i64,
    /// The option's text.
    pub answer: TalkText,
    /// Where it is shown among the options.
    pub position: i32,
    /// Identifier, unique in the question.
    pub identifier: String,
}

/// A question. The fields `active`, `is_public`, `contains_personal_data` and
/// `is_visible_to_reviewers` are shown to organisers only.
#[derive(Object)]
#[oai(rename = "TalkQuestion")]
pub struct QuestionOut {
    /// Internal ID.
    pub id: i64,
    /// Identifier, unique in the event.
    pub identifier: String,
    /// The question.
    pub question: TalkText,
    /// Help shown below the field.
    pub help_text: TalkText,
    /// Answer given unless another is.
    #[oai(nullable)]
    pub default_answer: Option<String>,
    /// The kind of answer.
    pub variant: Variant,
    /// Whom it asks.
    pub target: Target,
    /// Deadline after which it is required (with `after_deadline`).
    #[oai(nullable)]
    pub deadline: Option<DateTime<Utc>>,
    /// Answers cannot change after this.
    #[oai(nullable)]
    pub freeze_after: Option<DateTime<Utc>>,
    /// When an answer is required.
    pub question_required: Required,
    /// Where it is shown among the questions.
    pub position: i32,
    /// The tracks it is limited to; empty for all.
    pub tracks: Vec<Expandable<i64, TrackOut>>,
    /// The session types it is limited to; empty for all.
    pub submission_types: Vec<Expandable<i64, SubmissionTypeOut>>,
    /// Its options (choice questions).
    pub options: Vec<Expandable<i64, NestedOptionOut>>,
    /// Shortest text answer.
    #[oai(nullable)]
    pub min_length: Option<i32>,
    /// Longest text answer.
    #[oai(nullable)]
    pub max_length: Option<i32>,
    /// Smallest number answer, a decimal as a string.
    #[oai(nullable)]
    pub min_number: Option<String>,
    /// Largest number answer, a decimal as a string.
    #[oai(nullable)]
    pub max_number: Option<String>,
    /// Earliest date answer.
    #[oai(nullable)]
    pub min_date: Option<NaiveDate>,
    /// Latest date answer.
    #[oai(nullable)]
    pub max_date: Option<NaiveDate>,
    /// Earliest date and time answer.
    #[oai(nullable)]
    pub min_datetime: Option<DateTime<Utc>>,
    /// Latest date and time answer.
    #[oai(nullable)]
    pub max_datetime: Option<DateTime<Utc>>,
    /// Fewest options to pick (multiple choice).
    #[oai(nullable)]
    pub min_options: Option<i32>,
    /// Most options to pick (multiple choice).
    #[oai(nullable)]
    pub max_options: Option<i32>,
    /// Icon of a public URL question's answers.
    #[oai(nullable)]
    pub icon: Option<Icon>,
    /// Whether it is asked (organisers only).
    pub active: Option<bool>,
    /// Whether answers are shown publicly (organisers only).
    pub is_public: Option<bool>,
    /// Whether answers hold personal data (organisers only).
    pub contains_personal_data: Option<bool>,
    /// Whether reviewers see the answers (organisers only).
    pub is_visible_to_reviewers: Option<bool>,
}

/// An option of a choice question.
#[derive(Object)]
#[oai(rename = "TalkQuestionOption")]
pub struct OptionOut {
    /// Internal ID.
    pub id: i64,
    /// The question it belongs to (expanded without its options).
    pub question: Expandable<i64, QuestionOut>,
    /// The option's text.
    pub answer: TalkText,
    /// Where it is shown among the options.
    pub position: i32,
    /// Identifier, unique in the question.
    pub identifier: String,
}

/// Questions as objects: two queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load: load_questions,
    fields: &[
        ("options", &NESTED_OPTION_KIND),
        ("tracks", &super::tracks::KIND),
        ("submission_types", &super::submission_types::KIND),
    ],
};

/// Questions without their options, as options and answers expand them.
pub static BARE_KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load: load_bare_questions,
    fields: &[
        ("tracks", &super::tracks::KIND),
        ("submission_types", &super::submission_types::KIND),
    ],
};

/// Options of choice questions as objects: one query for any number.
pub static OPTION_KIND: Kind = Kind {
    name: OPTION_OBJECT,
    key: "id",
    endpoint: OPTION_ENDPOINT,
    load: load_options,
    fields: &[("question", &BARE_KIND)],
};

/// Options without their question, as questions and answers expand them.
pub static NESTED_OPTION_KIND: Kind = Kind {
    name: OPTION_OBJECT,
    key: "id",
    endpoint: OPTION_ENDPOINT,
    load: load_nested_options,
    fields: &[],
};

const QUESTION_COLUMNS: &str = "q.id, q.identifier, q.question, q.help_text, q.default_answer, \
     q.variant, q.target, q.deadline, q.freeze_after, q.question_required, q.position, \
     q.active, q.is_public, q.contains_personal_data, q.is_visible_to_reviewers, q.min_length, \
     q.max_length, q.min_number, q.max_number, q.min_options, q.max_options, q.min_date, \
     q.max_date, q.min_datetime, q.max_datetime, q.icon";

/// A decimal bound as pretalx shows it: six decimal places.
fn decimal_text(stored: Option<String>) -> Value {
    stored
        .and_then(|s| Decimal::from_str(&s).ok())
        .map_or(Value::Null, |d| {
            Value::String(format!("{:.6}", d.round_dp(6)))
        })
}

/// The tracks, session types and options of these questions, in one query.
async fn links(ctx: &Ctx<'_>, ids: &[i64]) -> Result<HashMap<i64, [Vec<i64>; 3]>, ApiError> {
    let mut by_question: HashMap<i64, [Vec<i64>; 3]> = HashMap::new();
    if ids.is_empty() {
        return Ok(by_question);
    }
    let keys: Vec<Value> = ids.iter().map(|i| Value::from(*i)).collect();
    let (set, mut values) = keys_in(&keys);
    let n = values.len();
    // The same keys a second and third time, numbered on.
    let shift = |by: usize| {
        let placeholders: Vec<String> = (1..=n).map(|i| format!("${}", i + by)).collect();
        format!("({})", placeholders.join(", "))
    };
    let (set2, set3) = (shift(n), shift(2 * n));
    let again = values.clone();
    values.extend(again.clone());
    values.extend(again);
    let sql = format!(
        "SELECT question_id AS q, 0 AS k, 0 AS p, track_id AS v FROM talk_question_tracks \
         WHERE question_id IN {set} \
         UNION ALL SELECT question_id, 1, 0, submission_type_id FROM talk_question_types \
         WHERE question_id IN {set2} \
         UNION ALL SELECT question_id, 2, position, id FROM talk_question_options \
         WHERE question_id IN {set3} \
         ORDER BY 1, 2, 3, 4"
    );
    for r in ctx.rows(&sql, values).await? {
        let q: i64 = r.try_get("", "q")?;
        let k: i32 = r.try_get("", "k")?;
        let v: i64 = r.try_get("", "v")?;
        if let Some(list) = by_question
            .entry(q)
            .or_default()
            .get_mut(k.clamp(0, 2) as usize)
        {
            list.push(v);
        }
    }
    Ok(by_question)
}

async fn questions(ctx: &Ctx<'_>, keys: &[Value], bare: bool) -> Result<Vec<Value>, ApiError> {
    let (ids, mut values) = keys_in(keys);
    values.push(ctx.event_id().into());
    let sql = format!(
        "SELECT {QUESTION_COLUMNS} FROM talk_questions q \
         WHERE q.id IN {ids} AND q.event_id = ${} AND {}",
        values.len(),
        visible(ctx.role())
    );
    let rows = ctx.rows(&sql, values).await?;
    let found: Vec<i64> = rows
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect::<Result<_, _>>()?;
    let mut linked = links(ctx, &found).await?;
    let orga = orga_view(ctx.role());
    rows.iter()
        .map(|r| {
            let id: i64 = r.try_get("", "id")?;
            let [tracks, types, options] = linked.remove(&id).unwrap_or_default();
            let mut o = Map::new();
            o.insert("id".into(), id.into());
            o.insert(
                "identifier".into(),
                r.try_get::<String>("", "identifier")?.into(),
            );
            o.insert(
                "question".into(),
                ctx.text(&r.try_get::<Value>("", "question")?),
            );
            let help: Option<Value> = r.try_get("", "help_text")?;
            o.insert("help_text".into(), ctx.text(&help.unwrap_or(Value::Null)));
            o.insert(
                "default_answer".into(),
                json!(r.try_get::<Option<String>>("", "default_answer")?),
            );
            o.insert("variant".into(), r.try_get::<String>("", "variant")?.into());
            o.insert("target".into(), r.try_get::<String>("", "target")?.into());
            o.insert(
                "deadline".into(),
                json!(r.try_get::<Option<DateTime<Utc>>>("", "deadline")?),
            );
            o.insert(
                "freeze_after".into(),
                json!(r.try_get::<Option<DateTime<Utc>>>("", "freeze_after")?),
            );
            o.insert(
                "question_required".into(),
                r.try_get::<String>("", "question_required")?.into(),
            );
            o.insert("position".into(), r.try_get::<i32>("", "position")?.into());
            o.insert("tracks".into(), json!(tracks));
            o.insert("submission_types".into(), json!(types));
            if !bare {
                o.insert("options".into(), json!(options));
            }
            for column in ["min_length", "max_length"] {
                o.insert(column.into(), json!(r.try_get::<Option<i32>>("", column)?));
            }
            for column in ["min_number", "max_number"] {
                o.insert(column.into(), decimal_text(r.try_get("", column)?));
            }
            for column in ["min_date", "max_date"] {
                o.insert(
                    column.into(),
                    json!(r.try_get::<Option<NaiveDate>>("", column)?),
                );
            }
            for column in ["min_datetime", "max_datetime"] {
                o.insert(
                    column.into(),
                    json!(r.try_get::<Option<DateTime<Utc>>>("", column)?),
                );
            }
            for column in ["min_options", "max_options"] {
                o.insert(column.into(), json!(r.try_get::<Option<i32>>("", column)?));
            }
            o.insert(
                "icon".into(),
                json!(r.try_get::<Option<String>>("", "icon")?),
            );
            if orga {
                for column in [
                    "active",
                    "is_public",
                    "contains_personal_data",
                    "is_visible_to_reviewers",
                ] {
                    o.insert(column.into(), r.try_get::<bool>("", column)?.into());
                }
            }
            Ok(Value::Object(o))
        })
        .collect()
}

fn load_questions<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(questions(ctx, keys, false))
}

fn load_bare_questions<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(questions(ctx, keys, true))
}

async fn options(ctx: &Ctx<'_>, keys: &[Value], nested: bool) -> Result<Vec<Value>, ApiError> {
    let (ids, mut values) = keys_in(keys);
    values.push(ctx.event_id().into());
    let choices = if nested {
        ""
    } else {
        " AND q.variant IN ('choices', 'multiple_choice')"
    };
    let sql = format!(
        "SELECT o.id, o.question_id, o.answer, o.position, o.identifier \
         FROM talk_question_options o JOIN talk_questions q ON q.id = o.question_id \
         WHERE o.id IN {ids} AND q.event_id = ${} AND {}{choices}",
        values.len(),
        visible(ctx.role())
    );
    ctx.rows(&sql, values)
        .await?
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("id".into(), r.try_get::<i64>("", "id")?.into());
            if !nested {
                o.insert(
                    "question".into(),
                    r.try_get::<i64>("", "question_id")?.into(),
                );
            }
            o.insert(
                "answer".into(),
                ctx.text(&r.try_get::<Value>("", "answer")?),
            );
            o.insert("position".into(), r.try_get::<i32>("", "position")?.into());
            o.insert(
                "identifier".into(),
                r.try_get::<String>("", "identifier")?.into(),
            );
            Ok(Value::Object(o))
        })
        .collect()
}

fn load_options<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(options(ctx, keys, false))
}

fn load_nested_options<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(options(ctx, keys, true))
}

/// An option given with a question; writing a question's `options` replaces them all.
#[derive(Object)]
#[oai(rename = "TalkNestedQuestionOptionWrite")]
pub struct NestedOptionWrite {
    /// The option's text.
    pub answer: I18nInput<800>,
    /// Where it is shown among the options (0 unless given).
    pub position: Option<i32>,
}

/// A new question, or all fields of one (PUT). The target cannot change once created.
#[derive(Object)]
#[oai(rename = "TalkQuestionWrite")]
pub struct QuestionWrite {
    /// The question.
    pub question: I18nInput<800>,
    /// Identifier, unique in the event (letters, digits, `.`, `-`, `_`); made up unless
    /// given.
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Help shown below the field.
    #[oai(nullable)]
    pub help_text: Option<I18nInput<800>>,
    /// Answer given unless another is.
    #[oai(nullable, validator(max_length = 10000))]
    pub default_answer: Option<String>,
    /// The kind of answer (`string` unless given).
    pub variant: Option<Variant>,
    /// Whom it asks (`submission` unless given); fixed once created.
    pub target: Option<Target>,
    /// Deadline after which it is required (with `after_deadline`).
    #[oai(nullable)]
    pub deadline: Option<DateTime<Utc>>,
    /// Answers cannot change after this.
    #[oai(nullable)]
    pub freeze_after: Option<DateTime<Utc>>,
    /// When an answer is required (`optional` unless given).
    pub question_required: Option<Required>,
    /// Where it is shown among the questions.
    pub position: Option<i32>,
    /// The tracks it is limited to; empty for all.
    #[oai(validator(max_items = 500))]
    pub tracks: Option<Vec<i64>>,
    /// The session types it is limited to; empty for all.
    #[oai(validator(max_items = 500))]
    pub submission_types: Option<Vec<i64>>,
    /// Its options (choice questions); replaces the options it has.
    #[oai(validator(max_items = 500))]
    pub options: Option<Vec<NestedOptionWrite>>,
    /// Shortest text answer.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub min_length: Option<i32>,
    /// Longest text answer.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub max_length: Option<i32>,
    /// Smallest number answer: a decimal of up to 10 digits and 6 decimal places.
    #[oai(nullable, validator(max_length = 40))]
    pub min_number: Option<String>,
    /// Largest number answer: a decimal of up to 10 digits and 6 decimal places.
    #[oai(nullable, validator(max_length = 40))]
    pub max_number: Option<String>,
    /// Earliest date answer.
    #[oai(nullable)]
    pub min_date: Option<NaiveDate>,
    /// Latest date answer.
    #[oai(nullable)]
    pub max_date: Option<NaiveDate>,
    /// Earliest date and time answer.
    #[oai(nullable)]
    pub min_datetime: Option<DateTime<Utc>>,
    /// Latest date and time answer.
    #[oai(nullable)]
    pub max_datetime: Option<DateTime<Utc>>,
    /// Fewest options to pick (multiple choice).
    #[oai(nullable, validator(minimum(value = "1")))]
    pub min_options: Option<i32>,
    /// Most options to pick (multiple choice).
    #[oai(nullable, validator(minimum(value = "1")))]
    pub max_options: Option<i32>,
    /// Icon of a public URL question's answers.
    #[oai(nullable)]
    pub icon: Option<Icon>,
    /// Whether it is asked (true unless given).
    pub active: Option<bool>,
    /// Whether answers are shown publicly (false unless given).
    pub is_public: Option<bool>,
    /// Whether answers hold personal data (true unless given).
    pub contains_personal_data: Option<bool>,
    /// Whether reviewers see the answers (true unless given).
    pub is_visible_to_reviewers: Option<bool>,
}

/// A partial change of a question. The target cannot change.
#[derive(Object)]
#[oai(rename = "TalkQuestionPatch")]
pub struct QuestionPatch {
    /// The question.
    pub question: Option<I18nInput<800>>,
    /// Identifier, unique in the event (letters, digits, `.`, `-`, `_`).
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Help shown below the field.
    #[oai(nullable)]
    pub help_text: MaybeUndefined<I18nInput<800>>,
    /// Answer given unless another is.
    #[oai(nullable, validator(max_length = 10000))]
    pub default_answer: MaybeUndefined<String>,
    /// The kind of answer.
    pub variant: Option<Variant>,
    /// Whom it asks: fixed once created, so only its current value is taken.
    pub target: Option<Target>,
    /// Deadline after which it is required (with `after_deadline`).
    #[oai(nullable)]
    pub deadline: MaybeUndefined<DateTime<Utc>>,
    /// Answers cannot change after this.
    #[oai(nullable)]
    pub freeze_after: MaybeUndefined<DateTime<Utc>>,
    /// When an answer is required.
    pub question_required: Option<Required>,
    /// Where it is shown among the questions.
    pub position: Option<i32>,
    /// The tracks it is limited to; empty for all.
    #[oai(validator(max_items = 500))]
    pub tracks: Option<Vec<i64>>,
    /// The session types it is limited to; empty for all.
    #[oai(validator(max_items = 500))]
    pub submission_types: Option<Vec<i64>>,
    /// Its options (choice questions); replaces the options it has.
    #[oai(validator(max_items = 500))]
    pub options: Option<Vec<NestedOptionWrite>>,
    /// Shortest text answer.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub min_length: MaybeUndefined<i32>,
    /// Longest text answer.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub max_length: MaybeUndefined<i32>,
    /// Smallest number answer: a decimal of up to 10 digits and 6 decimal places.
    #[oai(nullable, validator(max_length = 40))]
    pub min_number: MaybeUndefined<String>,
    /// Largest number answer: a decimal of up to 10 digits and 6 decimal places.
    #[oai(nullable, validator(max_length = 40))]
    pub max_number: MaybeUndefined<String>,
    /// Earliest date answer.
    #[oai(nullable)]
    pub min_date: MaybeUndefined<NaiveDate>,
    /// Latest date answer.
    #[oai(nullable)]
    pub max_date: MaybeUndefined<NaiveDate>,
    /// Earliest date and time answer.
    #[oai(nullable)]
    pub min_datetime: MaybeUndefined<DateTime<Utc>>,
    /// Latest date and time answer.
    #[oai(nullable)]
    pub max_datetime: MaybeUndefined<DateTime<Utc>>,
    /// Fewest options to pick (multiple choice).
    #[oai(nullable, validator(minimum(value = "1")))]
    pub min_options: MaybeUndefined<i32>,
    /// Most options to pick (multiple choice).
    #[oai(nullable, validator(minimum(value = "1")))]
    pub max_options: MaybeUndefined<i32>,
    /// Icon of a public URL question's answers.
    #[oai(nullable)]
    pub icon: MaybeUndefined<Icon>,
    /// Whether it is asked.
    pub active: Option<bool>,
    /// Whether answers are shown publicly.
    pub is_public: Option<bool>,
    /// Whether answers hold personal data.
    pub contains_personal_data: Option<bool>,
    /// Whether reviewers see the answers.
    pub is_visible_to_reviewers: Option<bool>,
}

/// The stored fields of a question.
#[derive(Debug, Clone, PartialEq)]
struct Fields {
    identifier: String,
    question: Value,
    help_text: Value,
    default_answer: Option<String>,
    variant: String,
    target: String,
    deadline: Option<DateTime<Utc>>,
    freeze_after: Option<DateTime<Utc>>,
    question_required: String,
    position: i32,
    active: bool,
    is_public: bool,
    contains_personal_data: bool,
    is_visible_to_reviewers: bool,
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
    icon: Option<String>,
    tracks: Vec<i64>,
    submission_types: Vec<i64>,
}

/// The columns of [`Fields`] in the order of [`Fields::values`].
const WRITE_COLUMNS: [&str; 25] = [
    "identifier",
    "question",
    "help_text",
    "default_answer",
    "variant",
    "target",
    "deadline",
    "freeze_after",
    "question_required",
    "position",
    "active",
    "is_public",
    "contains_personal_data",
    "is_visible_to_reviewers",
    "min_length",
    "max_length",
    "min_number",
    "max_number",
    "min_options",
    "max_options",
    "min_date",
    "max_date",
    "min_datetime",
    "max_datetime",
    "icon",
];

/// A JSON value for a nullable JSON column: SQL NULL for null.
pub(super) fn json_column(v: &Value) -> sea_orm::Value {
    if v.is_null() {
        sea_orm::Value::Json(None)
    } else {
        v.clone().into()
    }
}

impl Fields {
    fn new(question: Value) -> Self {
        Self {
            identifier: String::new(),
            question,
            help_text: Value::Null,
            default_answer: None,
            variant: "string".into(),
            target: "submission".into(),
            deadline: None,
            freeze_after: None,
            question_required: "optional".into(),
            position: 0,
            active: true,
            is_public: false,
            contains_personal_data: true,
            is_visible_to_reviewers: true,
            min_length: None,
            max_length: None,
            min_number: None,
            max_number: None,
            min_options: None,
            max_options: None,
            min_date: None,
            max_date: None,
            min_datetime: None,
            max_datetime: None,
            icon: None,
            tracks: Vec::new(),
            submission_types: Vec::new(),
        }
    }

    /// A question as POST or PUT gives it; `target` is the stored target on PUT.
    fn from_write(
        body: QuestionWrite,
        target: Option<&str>,
    ) -> (Self, Option<Vec<NestedOptionWrite>>) {
        let mut f = Self::new(body.question.to_stored());
        f.identifier = body.identifier.unwrap_or_default();
        f.help_text = body.help_text.map_or(Value::Null, |h| h.to_stored());
        f.default_answer = body.default_answer;
        f.variant = body.variant.unwrap_or(Variant::String).as_str().into();
        f.target = match (target, body.target) {
            (Some(stored), _) => stored.into(),
            (None, t) => t.unwrap_or(Target::Submission).as_str().into(),
        };
        f.deadline = body.deadline;
        f.freeze_after = body.freeze_after;
        f.question_required = body
            .question_required
            .unwrap_or(Required::Optional)
            .as_str()
            .into();
        f.position = body.position.unwrap_or(0);
        f.active = body.active.unwrap_or(true);
        f.is_public = body.is_public.unwrap_or(false);
        f.contains_personal_data = body.contains_personal_data.unwrap_or(true);
        f.is_visible_to_reviewers = body.is_visible_to_reviewers.unwrap_or(true);
        f.min_length = body.min_length;
        f.max_length = body.max_length;
        f.min_number = body.min_number;
        f.max_number = body.max_number;
        f.min_options = body.min_options;
        f.max_options = body.max_options;
        f.min_date = body.min_date;
        f.max_date = body.max_date;
        f.min_datetime = body.min_datetime;
        f.max_datetime = body.max_datetime;
        f.icon = body.icon.map(|i| i.as_str().to_owned());
        f.tracks = body.tracks.unwrap_or_default();
        f.submission_types = body.submission_types.unwrap_or_default();
        (f, body.options)
    }

    /// The stored question changed as a PATCH says.
    fn patch(mut self, body: QuestionPatch) -> (Self, Option<Vec<NestedOptionWrite>>) {
        if let Some(q) = body.question {
            self.question = q.to_stored();
        }
        if let Some(i) = body.identifier {
            self.identifier = i;
        }
        if let Some(h) = patched(body.help_text) {
            self.help_text = h.map_or(Value::Null, |h| h.to_stored());
        }
        if let Some(d) = patched(body.default_answer) {
            self.default_answer = d;
        }
        if let Some(v) = body.variant {
            self.variant = v.as_str().into();
        }
        if let Some(d) = patched(body.deadline) {
            self.deadline = d;
        }
        if let Some(d) = patched(body.freeze_after) {
            self.freeze_after = d;
        }
        if let Some(r) = body.question_required {
            self.question_required = r.as_str().into();
        }
        self.position = body.position.unwrap_or(self.position);
        macro_rules! set {
            ($($field:ident),*) => {
                $(if let Some(v) = patched(body.$field) {
                    self.$field = v;
                })*
            };
        }
        set!(
            min_length,
            max_length,
            min_number,
            max_number,
            min_options,
            max_options,
            min_date,
            max_date,
            min_datetime,
            max_datetime
        );
        if let Some(i) = patched(body.icon) {
            self.icon = i.map(|i| i.as_str().to_owned());
        }
        self.active = body.active.unwrap_or(self.active);
        self.is_public = body.is_public.unwrap_or(self.is_public);
        self.contains_personal_data = body
            .contains_personal_data
            .unwrap_or(self.contains_personal_data);
        self.is_visible_to_reviewers = body
            .is_visible_to_reviewers
            .unwrap_or(self.is_visible_to_reviewers);
        if let Some(t) = body.tracks {
            self.tracks = t;
        }
        if let Some(t) = body.submission_types {
            self.submission_types = t;
        }
        (self, body.options)
    }

    fn values(&self) -> Vec<sea_orm::Value> {
        vec![
            self.identifier.clone().into(),
            self.question.clone().into(),
            json_column(&self.help_text),
            self.default_answer.clone().into(),
            self.variant.clone().into(),
            self.target.clone().into(),
            self.deadline.into(),
            self.freeze_after.into(),
            self.question_required.clone().into(),
            self.position.into(),
            self.active.into(),
            self.is_public.into(),
            self.contains_personal_data.into(),
            self.is_visible_to_reviewers.into(),
            self.min_length.into(),
            self.max_length.into(),
            self.min_number.clone().into(),
            self.max_number.clone().into(),
            self.min_options.into(),
            self.max_options.into(),
            self.min_date.into(),
            self.max_date.into(),
            self.min_datetime.into(),
            self.max_datetime.into(),
            self.icon.clone().into(),
        ]
    }

    /// The fields as the log records them.
    fn data(&self) -> Value {
        json!({
            "identifier": self.identifier,
            "question": self.question,
            "help_text": self.help_text,
            "default_answer": self.default_answer,
            "variant": self.variant,
            "target": self.target,
            "deadline": self.deadline,
            "freeze_after": self.freeze_after,
            "question_required": self.question_required,
            "position": self.position,
            "active": self.active,
            "is_public": self.is_public,
            "contains_personal_data": self.contains_personal_data,
            "is_visible_to_reviewers": self.is_visible_to_reviewers,
            "min_length": self.min_length,
            "max_length": self.max_length,
            "min_number": self.min_number,
            "max_number": self.max_number,
            "min_options": self.min_options,
            "max_options": self.max_options,
            "min_date": self.min_date,
            "max_date": self.max_date,
            "min_datetime": self.min_datetime,
            "max_datetime": self.max_datetime,
            "icon": self.icon,
            "tracks": self.tracks,
            "submission_types": self.submission_types,
        })
    }

    /// The checks that need no database: a label, decimal bounds, a deadline where the
    /// answer is required after it, option bounds in order.
    fn check(&mut self, option_count: Option<usize>) -> Result<(), ApiError> {
        let mut errors = FieldErrors::default();
        if !is_identifier(&self.identifier) {
            errors.push("identifier", IDENTIFIER_RULE);
        }
        if I18nString::from_stored(&self.question)
            .0
            .iter()
            .all(|(_, t)| t.trim().is_empty())
        {
            errors.push("question", "This field is required.");
        }
        for (field, value) in [
            ("min_number", &mut self.min_number),
            ("max_number", &mut self.max_number),
        ] {
            if let Some(text) = value.as_deref() {
                match Decimal::from_str(text) {
                    Ok(d) if is_bound(text) => *value = Some(d.normalize().to_string()),
                    _ => errors.push(
                        field,
                        "A valid number is required: at most 10 digits and 6 decimal places.",
                    ),
                }
            }
        }
        if self.question_required == Required::AfterDeadline.as_str() && self.deadline.is_none() {
            errors.push(
                "deadline",
                "Please select a deadline after which the field should become mandatory.",
            );
        }
        if let (Some(min), Some(max)) = (self.min_options, self.max_options)
            && min > max
        {
            errors.push(
                "min_options",
                "Minimum number of options cannot be greater than maximum number of options.",
            );
        }
        if let (Some(min), Some(count)) = (self.min_options, option_count)
            && self.variant == Variant::MultipleChoice.as_str()
            && count > 0
            && usize::try_from(min).unwrap_or(0) > count
        {
            errors.push(
                "min_options",
                format!("This custom field only has {count} options, so it cannot require {min} of them."),
            );
        }
        self.tracks.sort_unstable();
        self.tracks.dedup();
        self.submission_types.sort_unstable();
        self.submission_types.dedup();
        Ok(errors.into_result()?)
    }
}

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

/// The stored question `id` of the event, if the caller sees it; 404 otherwise.
async fn stored(ctx: &Ctx<'_>, id: i64) -> Result<Fields, ApiError> {
    let sql = format!(
        "SELECT {QUESTION_COLUMNS} FROM talk_questions q WHERE q.id = $1 AND q.event_id = $2 AND {}",
        visible(ctx.role())
    );
    let r = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    let [tracks, submission_types, _] = links(ctx, &[id]).await?.remove(&id).unwrap_or_default();
    Ok(Fields {
        identifier: r.try_get("", "identifier")?,
        question: r.try_get("", "question")?,
        help_text: r
            .try_get::<Option<Value>>("", "help_text")?
            .unwrap_or(Value::Null),
        default_answer: r.try_get("", "default_answer")?,
        variant: r.try_get("", "variant")?,
        target: r.try_get("", "target")?,
        deadline: r.try_get("", "deadline")?,
        freeze_after: r.try_get("", "freeze_after")?,
        question_required: r.try_get("", "question_required")?,
        position: r.try_get("", "position")?,
        active: r.try_get("", "active")?,
        is_public: r.try_get("", "is_public")?,
        contains_personal_data: r.try_get("", "contains_personal_data")?,
        is_visible_to_reviewers: r.try_get("", "is_visible_to_reviewers")?,
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
        icon: r.try_get("", "icon")?,
        tracks,
        submission_types,
    })
}

/// What an identifier may hold.
const IDENTIFIER_RULE: &str =
    "The identifier may only contain letters, numbers, dots, dashes, and underscores.";

/// Whether `text` is an identifier as given (empty for a made-up one).
fn is_identifier(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// Whether `text` is a number bound as pretalx stores them: at most 10 digits before the
/// point and 6 after.
fn is_bound(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    whole.len() <= 10
        && fraction.len() <= 6
        && !(whole.is_empty() && fraction.is_empty())
        && whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
}

/// Characters of made-up identifiers: no look-alikes.
const CODE_CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ3789";

/// A made-up identifier of eight characters.
fn made_up_identifier() -> String {
    let mut rng = rand::rng();
    (0..8)
        .map(|_| char::from(CODE_CHARS[rng.random_range(0..CODE_CHARS.len())]))
        .collect()
}

/// An identifier for a new row among `taken` (compared case-insensitively): `wanted` when
/// given, else a made-up one. `None` when `wanted` is taken.
fn identifier_among(wanted: &str, taken: &[String]) -> Option<String> {
    let is_taken = |c: &str| taken.iter().any(|t| t.eq_ignore_ascii_case(c));
    if !wanted.is_empty() {
        return (!is_taken(wanted)).then(|| wanted.to_owned());
    }
    loop {
        let code = made_up_identifier();
        if !is_taken(&code) {
            return Some(code);
        }
    }
}

/// The IDs among `ids` that are not rows of `table` in the event, as a 400 on `field`.
async fn check_event_ids(
    ctx: &Ctx<'_>,
    table: &str,
    field: &str,
    ids: &[i64],
) -> Result<(), ApiError> {
    if ids.is_empty() {
        return Ok(());
    }
    let keys: Vec<Value> = ids.iter().map(|i| Value::from(*i)).collect();
    let (set, mut values) = keys_in(&keys);
    values.push(ctx.event_id().into());
    let sql = format!(
        "SELECT id FROM {table} WHERE id IN {set} AND event_id = ${}",
        values.len()
    );
    let found: Vec<i64> = ctx
        .rows(&sql, values)
        .await?
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect::<Result<_, _>>()?;
    match ids.iter().find(|i| !found.contains(i)) {
        Some(missing) => Err(ApiError::field(
            field,
            format!("Invalid pk \"{missing}\" - object does not exist."),
        )),
        None => Ok(()),
    }
}

/// Replaces the options of question `id` by `options`, with made-up identifiers.
async fn replace_options(
    txn: &sea_orm::DatabaseTransaction,
    id: i64,
    options: &[NestedOptionWrite],
) -> Result<(), ApiError> {
    crate::db::execute(
        txn,
        "DELETE FROM talk_question_options WHERE question_id = $1",
        [id.into()],
    )
    .await?;
    let mut taken: Vec<String> = Vec::with_capacity(options.len());
    for option in options {
        let identifier = identifier_among("", &taken).unwrap_or_else(made_up_identifier);
        taken.push(identifier.clone());
        crate::db::execute(
            txn,
            "INSERT INTO talk_question_options (question_id, answer, position, identifier) \
             VALUES ($1, $2, $3, $4)",
            [
                id.into(),
                option.answer.to_stored().into(),
                option.position.unwrap_or(0).into(),
                identifier.into(),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Writes a question (new when `id` is `None`), its links, its options when given, and its
/// log entry in one transaction, and gives it as the API shows it.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    mut f: Fields,
    options: Option<Vec<NestedOptionWrite>>,
    action: &str,
) -> Result<Shaped<QuestionOut>, ApiError> {
    if options.as_ref().is_some_and(|o| o.len() > MAX_OPTIONS) {
        return Err(ApiError::field(
            "options",
            format!("At most {MAX_OPTIONS} options."),
        ));
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let tctx = ctx.within(&txn);
    let option_count = match (&options, id) {
        (Some(o), _) => Some(o.len()),
        (None, Some(id)) => {
            let rows = tctx
                .rows(
                    "SELECT COUNT(*) AS n FROM talk_question_options WHERE question_id = $1",
                    vec![id.into()],
                )
                .await?;
            let n: i64 = rows
                .first()
                .map(|r| r.try_get("", "n"))
                .transpose()?
                .unwrap_or(0);
            Some(usize::try_from(n).unwrap_or(0))
        }
        (None, None) => None,
    };
    f.check(option_count)?;
    check_event_ids(&tctx, "talk_tracks", "tracks", &f.tracks).await?;
    check_event_ids(
        &tctx,
        "talk_submission_types",
        "submission_types",
        &f.submission_types,
    )
    .await?;
    let taken: Vec<String> = tctx
        .rows(
            "SELECT identifier FROM talk_questions WHERE event_id = $1 AND id <> $2",
            vec![ev.event.id.into(), id.unwrap_or(0).into()],
        )
        .await?
        .iter()
        .map(|r| r.try_get::<String>("", "identifier"))
        .collect::<Result<_, _>>()?;
    f.identifier = identifier_among(&f.identifier, &taken).ok_or_else(|| {
        ApiError::field(
            "identifier",
            "This identifier is already used for a different question.",
        )
    })?;
    let mut values = vec![ev.event.id.into()];
    values.extend(f.values());
    let id = match id {
        Some(id) => {
            let sets: Vec<String> = WRITE_COLUMNS
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c} = ${}", i + 2))
                .collect();
            values.push(id.into());
            let sql = format!(
                "UPDATE talk_questions SET {} WHERE event_id = $1 AND id = ${}",
                sets.join(", "),
                values.len()
            );
            crate::db::execute(&txn, &sql, values).await?;
            id
        }
        None => {
            let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "INSERT INTO talk_questions (event_id, {}) VALUES ({}) RETURNING id",
                WRITE_COLUMNS.join(", "),
                placeholders.join(", ")
            );
            crate::db::insert_returning_id(&txn, &sql, values).await?
        }
    };
    for (table, column, ids) in [
        ("talk_question_tracks", "track_id", &f.tracks),
        (
            "talk_question_types",
            "submission_type_id",
            &f.submission_types,
        ),
    ] {
        crate::db::execute(
            &txn,
            &format!("DELETE FROM {table} WHERE question_id = $1"),
            [id.into()],
        )
        .await?;
        for linked in ids {
            crate::db::execute(
                &txn,
                &format!("INSERT INTO {table} (question_id, {column}) VALUES ($1, $2)"),
                [id.into(), (*linked).into()],
            )
            .await?;
        }
    }
    let mut data = f.data();
    if let Some(options) = &options {
        replace_options(&txn, id, options).await?;
        data["options"] = options.iter().map(|o| o.answer.to_stored()).collect();
    }
    talk_log::write(&txn, Change::new(ev, OBJECT, id, action, data)).await?;
    let out = tctx.one(&KIND, id.into(), &Expand::default()).await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// The stored fields of an option.
struct OptionFields {
    question: i64,
    answer: Value,
    position: i32,
    identifier: String,
}

/// A new option of a choice question.
#[derive(Object)]
#[oai(rename = "TalkQuestionOptionCreate")]
pub struct OptionCreate {
    /// The choice question it belongs to.
    pub question: i64,
    /// The option's text.
    pub answer: I18nInput<800>,
    /// Where it is shown among the options (0 unless given).
    pub position: Option<i32>,
    /// Identifier, unique in the question (letters, digits, `.`, `-`, `_`); made up
    /// unless given.
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
}

/// All fields of an option (PUT); its question cannot change.
#[derive(Object)]
#[oai(rename = "TalkQuestionOptionWrite")]
pub struct OptionWrite {
    /// The option's text.
    pub answer: I18nInput<800>,
    /// Where it is shown among the options (0 unless given).
    pub position: Option<i32>,
    /// Identifier, unique in the question (letters, digits, `.`, `-`, `_`); made up
    /// unless given.
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
}

/// A partial change of an option.
#[derive(Object)]
#[oai(rename = "TalkQuestionOptionPatch")]
pub struct OptionPatch {
    /// The option's text.
    pub answer: Option<I18nInput<800>>,
    /// Where it is shown among the options.
    pub position: Option<i32>,
    /// Identifier, unique in the question (letters, digits, `.`, `-`, `_`).
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
}

/// The stored option `id` of a visible choice question of the event; 404 otherwise.
async fn stored_option(ctx: &Ctx<'_>, id: i64) -> Result<OptionFields, ApiError> {
    let sql = format!(
        "SELECT o.question_id, o.answer, o.position, o.identifier \
         FROM talk_question_options o JOIN talk_questions q ON q.id = o.question_id \
         WHERE o.id = $1 AND q.event_id = $2 AND q.variant IN ('choices', 'multiple_choice') AND {}",
        visible(ctx.role())
    );
    let r = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(OptionFields {
        question: r.try_get("", "question_id")?,
        answer: r.try_get("", "answer")?,
        position: r.try_get("", "position")?,
        identifier: r.try_get("", "identifier")?,
    })
}

/// Writes an option (new when `id` is `None`) and its log entry in one transaction, and
/// gives it as the API shows it.
async fn save_option(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    mut f: OptionFields,
) -> Result<Shaped<OptionOut>, ApiError> {
    if I18nString::from_stored(&f.answer)
        .0
        .iter()
        .all(|(_, t)| t.trim().is_empty())
    {
        return Err(ApiError::field("answer", "This field is required."));
    }
    if !is_identifier(&f.identifier) {
        return Err(ApiError::field("identifier", IDENTIFIER_RULE));
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let tctx = ctx.within(&txn);
    let choice = tctx
        .rows(
            "SELECT id FROM talk_questions WHERE id = $1 AND event_id = $2 \
             AND variant IN ('choices', 'multiple_choice')",
            vec![f.question.into(), ev.event.id.into()],
        )
        .await?;
    if choice.is_empty() {
        return Err(ApiError::field(
            "question",
            format!("Invalid pk \"{}\" - object does not exist.", f.question),
        ));
    }
    let taken: Vec<String> = tctx
        .rows(
            "SELECT identifier FROM talk_question_options WHERE question_id = $1 AND id <> $2",
            vec![f.question.into(), id.unwrap_or(0).into()],
        )
        .await?
        .iter()
        .map(|r| r.try_get::<String>("", "identifier"))
        .collect::<Result<_, _>>()?;
    f.identifier = identifier_among(&f.identifier, &taken).ok_or_else(|| {
        ApiError::field(
            "identifier",
            "This identifier is already used for a different option.",
        )
    })?;
    let data = json!({
        "question": f.question, "answer": f.answer, "position": f.position, "identifier": f.identifier,
    });
    let (id, action) = match id {
        Some(id) => {
            crate::db::execute(
                &txn,
                "UPDATE talk_question_options SET answer = $1, position = $2, identifier = $3 \
                 WHERE id = $4",
                [
                    f.answer.into(),
                    f.position.into(),
                    f.identifier.into(),
                    id.into(),
                ],
            )
            .await?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO talk_question_options (question_id, answer, position, identifier) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                [
                    f.question.into(),
                    f.answer.into(),
                    f.position.into(),
                    f.identifier.into(),
                ],
            )
            .await?,
            "create",
        ),
    };
    talk_log::write(&txn, Change::new(ev, OPTION_OBJECT, id, action, data)).await?;
    let out = tctx
        .one(&OPTION_KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
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
        fixed_target(&before, body.target)?;
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
        fixed_target(&before, body.target)?;
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
