//! The wire side of questions: the shapes the API reads and answers, and the loaders
//! `?expand=` uses.

use chrono::{DateTime, NaiveDate, Utc};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object};
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::str::FromStr;

use super::{ENDPOINT, OBJECT, OPTION_ENDPOINT, OPTION_OBJECT};
use crate::api::talk::context::{Ctx, keys_in};
use crate::api::talk::expand::{Kind, Loaded};
use crate::api::talk::shape::{Expandable, I18nInput, TalkText};
use crate::api::talk::submission_types::SubmissionTypeOut;
use crate::api::talk::tracks::TrackOut;
use crate::domain::talk::questions::{self, orga_view, visible};
use crate::http::ApiError;

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
#[allow(clippy::enum_variant_names)] // pretalx's values, on the wire
pub enum Required {
    /// Never.
    Optional,
    /// Always.
    Required,
    /// After the question's deadline.
    AfterDeadline,
}

impl Required {
    pub(super) fn as_str(self) -> &'static str {
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
#[allow(clippy::enum_variant_names)] // pretalx's values, on the wire
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
    pub(super) fn as_str(self) -> &'static str {
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
        ("tracks", &crate::api::talk::tracks::KIND),
        (
            "submission_types",
            &crate::api::talk::submission_types::KIND,
        ),
    ],
};

/// Questions without their options, as options and answers expand them.
pub static BARE_KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load: load_bare_questions,
    fields: &[
        ("tracks", &crate::api::talk::tracks::KIND),
        (
            "submission_types",
            &crate::api::talk::submission_types::KIND,
        ),
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

pub(super) const QUESTION_COLUMNS: &str = "q.id, q.identifier, q.question, q.help_text, q.default_answer, \
     q.variant, q.target, q.deadline, q.freeze_after, q.question_required, q.position, \
     q.active, q.is_public, q.contains_personal_data, q.is_visible_to_reviewers, q.min_length, \
     q.max_length, q.min_number, q.max_number, q.min_options, q.max_options, q.min_date, \
     q.max_date, q.min_datetime, q.max_datetime, q.icon";

/// A decimal bound as pretalx shows it: six decimal places.
pub(super) fn decimal_text(stored: Option<String>) -> Value {
    stored
        .and_then(|s| Decimal::from_str(&s).ok())
        .map_or(Value::Null, |d| {
            Value::String(format!("{:.6}", d.round_dp(6)))
        })
}

/// The tracks, session types and options of these questions, in one query.
pub(super) async fn links(
    ctx: &Ctx<'_>,
    ids: &[i64],
) -> Result<HashMap<i64, [Vec<i64>; 3]>, ApiError> {
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

pub(super) async fn questions(
    ctx: &Ctx<'_>,
    keys: &[Value],
    bare: bool,
) -> Result<Vec<Value>, ApiError> {
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

pub(super) fn load_questions<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(questions(ctx, keys, false))
}

pub(super) fn load_bare_questions<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(questions(ctx, keys, true))
}

pub(super) async fn options(
    ctx: &Ctx<'_>,
    keys: &[Value],
    nested: bool,
) -> Result<Vec<Value>, ApiError> {
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

pub(super) fn load_options<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(options(ctx, keys, false))
}

pub(super) fn load_nested_options<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
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
    /// The other fields; a new question has the defaults each names for what it leaves out.
    #[oai(flatten)]
    pub fields: QuestionFields,
}

/// A partial change of a question. The target cannot change.
#[derive(Object)]
#[oai(rename = "TalkQuestionPatch")]
pub struct QuestionPatch {
    /// The question.
    pub question: Option<I18nInput<800>>,
    /// The fields it changes.
    #[oai(flatten)]
    pub fields: QuestionFields,
}

/// A question's fields besides its text, as a write sends them: what is left out keeps
/// its value (PATCH) or its default (POST, PUT).
#[derive(Object)]
#[oai(rename = "TalkQuestionFields")]
pub struct QuestionFields {
    /// Identifier, unique in the event (letters, digits, `.`, `-`, `_`); made up unless
    /// given.
    #[oai(validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Help shown below the field.
    #[oai(nullable)]
    pub help_text: MaybeUndefined<I18nInput<800>>,
    /// Answer given unless another is.
    #[oai(nullable, validator(max_length = 10000))]
    pub default_answer: MaybeUndefined<String>,
    /// The kind of answer (`string` unless given).
    pub variant: Option<Variant>,
    /// Whom it asks (`submission` unless given); fixed once created.
    pub target: Option<Target>,
    /// Deadline after which it is required (with `after_deadline`).
    #[oai(nullable)]
    pub deadline: MaybeUndefined<DateTime<Utc>>,
    /// Answers cannot change after this.
    #[oai(nullable)]
    pub freeze_after: MaybeUndefined<DateTime<Utc>>,
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
    /// Whether it is asked (true unless given).
    pub active: Option<bool>,
    /// Whether answers are shown publicly (false unless given).
    pub is_public: Option<bool>,
    /// Whether answers hold personal data (true unless given).
    pub contains_personal_data: Option<bool>,
    /// Whether reviewers see the answers (true unless given).
    pub is_visible_to_reviewers: Option<bool>,
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
