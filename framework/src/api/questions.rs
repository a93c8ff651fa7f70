//! Questions of an event and their options:
//! `/api/v1/organizers/{organizer}/events/{event}/questions/` and
//! `.../questions/{question}/options/`.

use chrono::{DateTime, NaiveDate, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use sea_orm::DbErr;

use super::Tag;
use super::items::Conditional;
use super::items::by_id;
use crate::db::entities::{question, question_option};
use crate::db::is_unique_violation;
use crate::domain::permissions::Permission;
use crate::domain::questions::{
    self, DeleteOptionError, OptionFields, Question, QuestionFields, QuestionFilter,
};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, I18nString, JsonBody, NoContent, Page, PageRequest,
    patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// The expected type of answer.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum QuestionType {
    /// A number.
    #[oai(rename = "N")]
    Number,
    /// One line of text.
    #[oai(rename = "S")]
    String,
    /// Several lines of text.
    #[oai(rename = "T")]
    Text,
    /// Yes or no.
    #[oai(rename = "B")]
    Boolean,
    /// One option of a list.
    #[oai(rename = "C")]
    Choice,
    /// Several options of a list.
    #[oai(rename = "M")]
    MultipleChoice,
    /// A file upload.
    #[oai(rename = "F")]
    File,
    /// A date.
    #[oai(rename = "D")]
    Date,
    /// A time of day.
    #[oai(rename = "H")]
    Time,
    /// A date and time.
    #[oai(rename = "W")]
    DateTime,
    /// A country code (ISO 3166-1 alpha-2).
    #[oai(rename = "CC")]
    CountryCode,
    /// A telephone number.
    #[oai(rename = "TEL")]
    PhoneNumber,
    /// An email address.
    #[oai(rename = "EMAIL")]
    Email,
}

const TYPE_CODES: [(QuestionType, &str); 13] = [
    (QuestionType::Number, questions::NUMBER),
    (QuestionType::String, questions::STRING),
    (QuestionType::Text, questions::TEXT),
    (QuestionType::Boolean, questions::BOOLEAN),
    (QuestionType::Choice, questions::CHOICE),
    (QuestionType::MultipleChoice, questions::CHOICE_MULTIPLE),
    (QuestionType::File, questions::FILE),
    (QuestionType::Date, questions::DATE),
    (QuestionType::Time, questions::TIME),
    (QuestionType::DateTime, questions::DATETIME),
    (QuestionType::CountryCode, questions::COUNTRY_CODE),
    (QuestionType::PhoneNumber, questions::PHONE_NUMBER),
    (QuestionType::Email, questions::EMAIL),
];

impl QuestionType {
    /// The stored code (`"N"`, `"CC"`...).
    pub fn code(self) -> &'static str {
        TYPE_CODES
            .iter()
            .find(|(t, _)| *t == self)
            .map_or(questions::STRING, |(_, c)| c)
    }

    /// The type of a stored code.
    pub fn from_code(code: &str) -> Option<Self> {
        TYPE_CODES.iter().find(|(_, c)| *c == code).map(|(t, _)| *t)
    }
}

/// An answer option of a choice question.
#[derive(Object)]
#[oai(rename = "QuestionOption")]
pub struct OptionOut {
    /// Internal ID.
    pub id: i64,
    /// Identifier, unique within the question.
    pub identifier: String,
    /// Sort position.
    pub position: i32,
    /// Text shown for the option.
    pub answer: I18nString,
}

impl From<question_option::Model> for OptionOut {
    fn from(o: question_option::Model) -> Self {
        Self {
            id: o.id,
            identifier: o.identifier,
            position: o.position,
            answer: I18nString::from_stored(&o.answer),
        }
    }
}

/// A question order positions answer.
#[derive(Object)]
#[oai(rename = "Question")]
pub struct QuestionOut {
    /// Internal ID.
    pub id: i64,
    /// The label shown to the customer.
    pub question: I18nString,
    /// Help text shown to the customer.
    #[oai(nullable)]
    pub help_text: Option<I18nString>,
    /// The expected type of answer.
    #[oai(rename = "type")]
    pub kind: QuestionType,
    /// Whether an answer is required.
    pub required: bool,
    /// Item IDs it is asked for.
    pub items: Vec<i64>,
    /// Options of a choice question, by position, then ID.
    pub options: Vec<OptionOut>,
    /// Sort position.
    pub position: i32,
    /// Asked when the ticket is redeemed instead of when it is bought.
    pub ask_during_checkin: bool,
    /// Identifier, unique within the event.
    pub identifier: String,
    /// Shown in the back end only.
    pub hidden: bool,
    /// Answer printed on invoices.
    pub print_on_invoice: bool,
    /// The question whose answer decides whether this one is asked.
    #[oai(nullable)]
    pub dependency_question: Option<i64>,
    /// Answers of `dependency_question` that make this one asked.
    pub dependency_values: Vec<String>,
    /// Least number accepted (number questions).
    #[oai(nullable)]
    pub valid_number_min: Option<String>,
    /// Largest number accepted (number questions).
    #[oai(nullable)]
    pub valid_number_max: Option<String>,
    /// Earliest date accepted (date questions).
    #[oai(nullable)]
    pub valid_date_min: Option<NaiveDate>,
    /// Latest date accepted (date questions).
    #[oai(nullable)]
    pub valid_date_max: Option<NaiveDate>,
    /// Earliest date and time accepted (date and time questions).
    #[oai(nullable)]
    pub valid_datetime_min: Option<Timestamp>,
    /// Latest date and time accepted (date and time questions).
    #[oai(nullable)]
    pub valid_datetime_max: Option<Timestamp>,
    /// Longest text accepted, in characters (text questions).
    #[oai(nullable)]
    pub valid_string_length_max: Option<i32>,
}

impl From<Question> for QuestionOut {
    fn from(q: Question) -> Self {
        let r = q.row;
        Self {
            id: r.id,
            question: I18nString::from_stored(&r.question),
            help_text: r.help_text.as_ref().map(I18nString::from_stored),
            kind: QuestionType::from_code(&r.r#type).unwrap_or(QuestionType::String),
            required: r.required,
            items: q.items,
            options: q.options.into_iter().map(Into::into).collect(),
            position: r.position,
            ask_during_checkin: r.ask_during_checkin,
            identifier: r.identifier,
            hidden: r.hidden,
            print_on_invoice: r.print_on_invoice,
            dependency_question: r.dependency_question,
            dependency_values: crate::values::stored::string_list(&r.dependency_values),
            valid_number_min: r.valid_number_min,
            valid_number_max: r.valid_number_max,
            valid_date_min: r.valid_date_min,
            valid_date_max: r.valid_date_max,
            valid_datetime_min: r.valid_datetime_min.map(Into::into),
            valid_datetime_max: r.valid_datetime_max.map(Into::into),
            valid_string_length_max: r.valid_string_length_max,
        }
    }
}

/// An option sent with a question. On PUT and PATCH the list replaces the question's
/// options: an entry with the `id` of one of them changes it, the others are new.
#[derive(Object)]
#[oai(rename = "QuestionOptionInline")]
pub struct InlineOption {
    /// ID of an option of this question to keep (ignored on create).
    pub id: Option<i64>,
    /// Identifier, unique within the question; generated when missing.
    #[oai(nullable, validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Text shown for the option. At most 10,000 characters per language (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub answer: I18nString,
    /// Sort position; defaults to the place in the list.
    pub position: Option<i32>,
}

fn inline_options(list: Vec<InlineOption>) -> Vec<OptionFields> {
    list.into_iter()
        .enumerate()
        .map(|(i, o)| OptionFields {
            id: o.id,
            identifier: o.identifier,
            answer: o.answer.to_stored(),
            position: o
                .position
                .unwrap_or_else(|| i32::try_from(i).unwrap_or(i32::MAX)),
        })
        .collect()
}

/// A new question, or all fields of a question (PUT). On PUT, a missing `identifier` keeps
/// the current one and missing `options` keep the current options.
#[derive(Object)]
pub struct QuestionCreate {
    /// The label shown to the customer. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(validator(max_length = 100000))]
    pub question: I18nString,
    /// Help text shown to the customer. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub help_text: Option<I18nString>,
    /// The expected type of answer.
    #[oai(rename = "type")]
    pub kind: QuestionType,
    /// Whether an answer is required.
    #[oai(default)]
    pub required: bool,
    /// Items of this event it is asked for.
    #[oai(default, validator(max_items = 1000))]
    pub items: Vec<i64>,
    /// Options; a choice question (`C`, `M`) needs at least one, other types none.
    #[oai(validator(max_items = 1000))]
    pub options: Option<Vec<InlineOption>>,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
    /// Asked when the ticket is redeemed instead of when it is bought.
    #[oai(default)]
    pub ask_during_checkin: bool,
    /// Identifier, unique within the event; a random one is generated when missing.
    #[oai(nullable, validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Shown in the back end only.
    #[oai(default)]
    pub hidden: bool,
    /// Answer printed on invoices.
    #[oai(default)]
    pub print_on_invoice: bool,
    /// A boolean or choice question of this event whose answer decides whether this one is
    /// asked; not for questions asked during check-in.
    #[oai(nullable)]
    pub dependency_question: Option<i64>,
    /// `"True"` or `"False"` for a boolean dependency, option identifiers for a choice one.
    #[oai(default, validator(max_length = 190, max_items = 1000))]
    pub dependency_values: Vec<String>,
    /// What answers it accepts.
    #[oai(flatten)]
    pub limits: QuestionLimits,
}

/// What answers a question accepts, as a write sends it: what is left out stays as it was
/// (none for a new question).
#[derive(Object)]
pub struct QuestionLimits {
    /// Least number accepted, as a decimal string.
    #[oai(nullable, validator(max_length = 40))]
    pub valid_number_min: MaybeUndefined<String>,
    /// Largest number accepted, as a decimal string.
    #[oai(nullable, validator(max_length = 40))]
    pub valid_number_max: MaybeUndefined<String>,
    /// Earliest date accepted.
    #[oai(nullable)]
    pub valid_date_min: MaybeUndefined<NaiveDate>,
    /// Latest date accepted.
    #[oai(nullable)]
    pub valid_date_max: MaybeUndefined<NaiveDate>,
    /// Earliest date and time accepted.
    #[oai(nullable)]
    pub valid_datetime_min: MaybeUndefined<DateTime<Utc>>,
    /// Latest date and time accepted.
    #[oai(nullable)]
    pub valid_datetime_max: MaybeUndefined<DateTime<Utc>>,
    /// Longest text accepted, in characters.
    #[oai(nullable)]
    pub valid_string_length_max: MaybeUndefined<i32>,
}

impl QuestionLimits {
    /// These limits set on `f` where they send a value or null.
    fn apply(self, f: &mut QuestionFields) {
        self.valid_number_min.update_to(&mut f.valid_number_min);
        self.valid_number_max.update_to(&mut f.valid_number_max);
        self.valid_date_min.update_to(&mut f.valid_date_min);
        self.valid_date_max.update_to(&mut f.valid_date_max);
        self.valid_datetime_min.update_to(&mut f.valid_datetime_min);
        self.valid_datetime_max.update_to(&mut f.valid_datetime_max);
        self.valid_string_length_max
            .update_to(&mut f.valid_string_length_max);
    }
}

impl QuestionCreate {
    fn split(self) -> (QuestionFields, Option<Vec<OptionFields>>) {
        let mut fields = QuestionFields {
            help_text: self.help_text.map(|h| h.to_stored()),
            required: self.required,
            items: self.items,
            position: self.position,
            ask_during_checkin: self.ask_during_checkin,
            identifier: self.identifier,
            hidden: self.hidden,
            print_on_invoice: self.print_on_invoice,
            dependency_question: self.dependency_question,
            dependency_values: self.dependency_values,
            ..QuestionFields::new(self.question.to_stored(), self.kind.code())
        };
        self.limits.apply(&mut fields);
        (fields, self.options.map(inline_options))
    }
}

/// A partial change of a question; `items` and `options`, when sent, replace the lists.
#[derive(Object)]
pub struct QuestionPatch {
    /// The label shown to the customer. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(validator(max_length = 100000))]
    pub question: Option<I18nString>,
    /// Help text shown to the customer. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub help_text: MaybeUndefined<I18nString>,
    /// The expected type of answer.
    #[oai(rename = "type")]
    pub kind: Option<QuestionType>,
    /// Whether an answer is required.
    pub required: Option<bool>,
    /// Items it is asked for.
    #[oai(validator(max_items = 1000))]
    pub items: Option<Vec<i64>>,
    /// Options; entries with the `id` of an existing option change it.
    #[oai(validator(max_items = 1000))]
    pub options: Option<Vec<InlineOption>>,
    /// Sort position.
    pub position: Option<i32>,
    /// Asked during check-in.
    pub ask_during_checkin: Option<bool>,
    /// Identifier; `null` keeps the current one.
    #[oai(nullable, validator(max_length = 190))]
    pub identifier: MaybeUndefined<String>,
    /// Shown in the back end only.
    pub hidden: Option<bool>,
    /// Answer printed on invoices.
    pub print_on_invoice: Option<bool>,
    /// The question this one depends on.
    #[oai(nullable)]
    pub dependency_question: MaybeUndefined<i64>,
    /// Answers of the dependency question that make this one asked.
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub dependency_values: Option<Vec<String>>,
    /// What answers it accepts.
    #[oai(flatten)]
    pub limits: QuestionLimits,
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

impl QuestionPatch {
    fn apply(self, mut f: QuestionFields) -> (QuestionFields, Option<Vec<OptionFields>>) {
        set(&mut f.question, self.question.map(|q| q.to_stored()));
        set(
            &mut f.help_text,
            patched(self.help_text).map(|h| h.map(|h| h.to_stored())),
        );
        set(&mut f.kind, self.kind.map(|k| k.code().to_owned()));
        set(&mut f.required, self.required);
        set(&mut f.items, self.items);
        set(&mut f.position, self.position);
        set(&mut f.ask_during_checkin, self.ask_during_checkin);
        if let MaybeUndefined::Value(identifier) = self.identifier {
            f.identifier = Some(identifier);
        }
        set(&mut f.hidden, self.hidden);
        set(&mut f.print_on_invoice, self.print_on_invoice);
        set(
            &mut f.dependency_question,
            patched(self.dependency_question),
        );
        set(&mut f.dependency_values, self.dependency_values);
        if f.dependency_question.is_none() {
            f.dependency_values.clear();
        }
        self.limits.apply(&mut f);
        (f, self.options.map(inline_options))
    }
}

/// A new option of a choice question, or all its fields (PUT; a missing `identifier` keeps
/// the current one).
#[derive(Object)]
#[oai(rename = "QuestionOptionCreate")]
pub struct OptionCreate {
    /// Identifier, unique within the question; generated when missing.
    #[oai(nullable, validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Text shown for the option. At most 10,000 characters per language (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub answer: I18nString,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
}

impl From<OptionCreate> for OptionFields {
    fn from(o: OptionCreate) -> Self {
        Self {
            id: None,
            identifier: o.identifier,
            answer: o.answer.to_stored(),
            position: o.position,
        }
    }
}

/// A partial change of an option.
#[derive(Object)]
#[oai(rename = "QuestionOptionPatch")]
pub struct OptionPatch {
    /// Identifier; `null` keeps the current one.
    #[oai(nullable, validator(max_length = 190))]
    pub identifier: Option<String>,
    /// Text shown for the option. At most 10,000 characters per language (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub answer: Option<I18nString>,
    /// Sort position.
    pub position: Option<i32>,
}

impl OptionPatch {
    fn apply(self, mut f: OptionFields) -> OptionFields {
        set(&mut f.identifier, self.identifier.map(Some));
        set(&mut f.answer, self.answer.map(|a| a.to_stored()));
        set(&mut f.position, self.position);
        f
    }
}

/// Question and option operations.
pub struct QuestionsApi;

const WRITE: Option<Permission> = Some(Permission::ChangeItems);

async fn find_question(state: &AppState, event_id: i64, id: i64) -> Result<Question, ApiError> {
    questions::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn find_row(state: &AppState, event_id: i64, id: i64) -> Result<question::Model, ApiError> {
    questions::find_row(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn find_option(
    state: &AppState,
    question_id: i64,
    id: i64,
) -> Result<question_option::Model, ApiError> {
    questions::find_option(&state.db, question_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn check(
    state: &AppState,
    event_id: i64,
    existing: Option<&Question>,
    f: &QuestionFields,
    options: &[OptionFields],
) -> Result<(), ApiError> {
    Ok(FieldErrors::check(
        questions::invalid(&state.db, event_id, existing, f, options).await?,
    )?)
}

/// A failed write; a unique violation is an identifier taken in the meantime.
fn write_error(e: DbErr) -> ApiError {
    if is_unique_violation(&e) {
        ApiError::field(
            "identifier",
            "This identifier is already used for another question of this event.",
        )
    } else {
        e.into()
    }
}

/// The `type` filter as a stored code.
fn type_filter(value: Option<String>) -> Result<Option<String>, ApiError> {
    match value {
        Some(t) if !questions::TYPES.contains(&t.as_str()) => Err(ApiError::field(
            "type",
            format!("Select a valid choice. {t} is not one of the available choices."),
        )),
        other => Ok(other),
    }
}

#[OpenApi(tag = "Tag::Questions")]
impl QuestionsApi {
    /// List questions
    ///
    /// By position (or `ordering=id`), then ID; `identifier`, `ask_during_checkin`,
    /// `required` and `type` filter. Needs any access to the event.
    /// With `If-Modified-Since` no later than the catalogue's last change (`Last-Modified`),
    /// 304 without a body.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_questions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        ordering: Query<Option<String>>,
        identifier: Query<Option<String>>,
        ask_during_checkin: Query<Option<bool>>,
        required: Query<Option<bool>>,
        #[oai(name = "type")] kind: Query<Option<String>>,
    ) -> ListResult<Conditional<Json<Page<QuestionOut>>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(
            Conditional::answer::<ApiError>(req, &state, ev.event.id, async || {
                let filter = QuestionFilter {
                    identifier: identifier.0,
                    ask_during_checkin: ask_during_checkin.0,
                    required: required.0,
                    kind: type_filter(kind.0)?,
                    by_id: by_id(ordering.0.as_deref())?,
                };
                let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
                    .fetch(&state.db, questions::query(ev.event.id, &filter))
                    .await?;
                let (rows, page) = page.take_results();
                let full = questions::complete(&state.db, rows).await?;
                Ok(Json(page(full.into_iter().map(Into::into).collect())))
            })
            .await?,
        )
    }

    /// Show a question
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:id",
        method = "get"
    )]
    async fn get_question(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<QuestionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_question(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a question
    ///
    /// With its `options` when it is a choice question; the identifiers of the question and
    /// of its options are generated when missing. Needs `can_change_items`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions",
        method = "post"
    )]
    async fn create_question(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<QuestionCreate>,
    ) -> WriteResult<Created<QuestionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let (fields, options) = body.0.split();
        let options = options.unwrap_or_default();
        check(&state, ev.event.id, None, &fields, &options).await?;
        let saved = questions::create(&state.db, ev.event.id, fields, options)
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a question
    ///
    /// Every field; `options`, when sent, replace the options (entries with the `id` of an
    /// option keep it), and a missing `identifier` keeps the current one.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:id",
        method = "put"
    )]
    async fn put_question(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<QuestionCreate>,
    ) -> WriteResult<Json<QuestionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let existing = find_question(&state, ev.event.id, *id).await?;
        let (fields, options) = body.0.split();
        let all = options.clone().unwrap_or_else(|| existing.option_fields());
        check(&state, ev.event.id, Some(&existing), &fields, &all).await?;
        let saved = questions::update(&state.db, &existing, fields, options)
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Change a question
    ///
    /// `items` and `options`, when sent, replace the lists (option entries with the `id` of
    /// an option keep it).
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:id",
        method = "patch"
    )]
    async fn patch_question(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<QuestionPatch>,
    ) -> WriteResult<Json<QuestionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let existing = find_question(&state, ev.event.id, *id).await?;
        let (fields, options) = body.0.apply(existing.fields());
        let all = options.clone().unwrap_or_else(|| existing.option_fields());
        check(&state, ev.event.id, Some(&existing), &fields, &all).await?;
        let saved = questions::update(&state.db, &existing, fields, options)
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Delete a question
    ///
    /// With its options; questions that depended on it no longer depend on anything.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:id",
        method = "delete"
    )]
    async fn delete_question(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let existing = find_row(&state, ev.event.id, *id).await?;
        questions::delete(&state.db, &existing).await?;
        Ok(NoContent::NoContent)
    }

    /// List the options of a question
    ///
    /// By position, then ID.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_options(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<OptionOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, questions::options_query(q.id))
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show an option
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options/:id",
        method = "get"
    )]
    async fn get_option(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<OptionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        Ok(Json(find_option(&state, q.id, *id).await?.into()))
    }

    /// Create an option
    ///
    /// Only for choice questions (`C`, `M`); the identifier is generated when missing.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options",
        method = "post"
    )]
    async fn create_option(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        body: JsonBody<OptionCreate>,
    ) -> WriteResult<Created<OptionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        let fields = OptionFields::from(body.0);
        FieldErrors::check(questions::invalid_option(&state.db, &q, &fields, None).await?)?;
        let saved = questions::create_option(&state.db, q.id, fields).await?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace an option
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options/:id",
        method = "put"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn put_option(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        id: Path<i64>,
        body: JsonBody<OptionCreate>,
    ) -> WriteResult<Json<OptionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        let existing = find_option(&state, q.id, *id).await?;
        let fields = OptionFields::from(body.0);
        FieldErrors::check(
            questions::invalid_option(&state.db, &q, &fields, Some(existing.id)).await?,
        )?;
        let saved = questions::update_option(&state.db, &existing, fields).await?;
        Ok(Json(saved.into()))
    }

    /// Change an option
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options/:id",
        method = "patch"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn patch_option(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        id: Path<i64>,
        body: JsonBody<OptionPatch>,
    ) -> WriteResult<Json<OptionOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        let existing = find_option(&state, q.id, *id).await?;
        let fields = body.0.apply(OptionFields::from(&existing));
        FieldErrors::check(
            questions::invalid_option(&state.db, &q, &fields, Some(existing.id)).await?,
        )?;
        let saved = questions::update_option(&state.db, &existing, fields).await?;
        Ok(Json(saved.into()))
    }

    /// Delete an option
    ///
    /// 403 for the last option of a choice question.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/questions/:question/options/:id",
        method = "delete"
    )]
    async fn delete_option(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        question: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth.0.event(&state.db, &organizer, &event, WRITE).await?;
        let q = find_row(&state, ev.event.id, *question).await?;
        let existing = find_option(&state, q.id, *id).await?;
        match questions::delete_option(&state.db, &existing).await {
            Ok(()) => Ok(NoContent::NoContent),
            Err(DeleteOptionError::LastOption) => Err(ApiError::forbidden_because(
                "A choice question keeps at least one option; this is its last.",
            )
            .into()),
            Err(DeleteOptionError::Db(e)) => Err(ApiError::from(e).into()),
        }
    }
}
