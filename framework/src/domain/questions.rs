//! Questions order positions answer, their options (for choice questions) and the items
//! they are asked for: the rules they follow, how they are read in a constant number of
//! queries, how they are copied to another event, and how one answer is checked.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use rand::Rng;
use rust_decimal::Decimal;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, Select, Set,
};
use serde_json::Value;

use super::items::Invalid;
use crate::db::begin_write;
use crate::db::entities::{question, question_item, question_option};
use crate::values::I18nString;
use crate::values::stored::string_list;

/// Number: a decimal answer.
pub const NUMBER: &str = "N";
/// One line of text.
pub const STRING: &str = "S";
/// Several lines of text.
pub const TEXT: &str = "T";
/// Yes or no.
pub const BOOLEAN: &str = "B";
/// One option of the question's.
pub const CHOICE: &str = "C";
/// One or more options of the question's.
pub const CHOICE_MULTIPLE: &str = "M";
/// A file upload.
pub const FILE: &str = "F";
/// A date.
pub const DATE: &str = "D";
/// A time of day.
pub const TIME: &str = "H";
/// A date and time.
pub const DATETIME: &str = "W";
/// An ISO 3166-1 alpha-2 country code.
pub const COUNTRY_CODE: &str = "CC";
/// A telephone number.
pub const PHONE_NUMBER: &str = "TEL";
/// An email address.
pub const EMAIL: &str = "EMAIL";

/// Every answer type code.
pub const TYPES: &[&str] = &[
    NUMBER,
    STRING,
    TEXT,
    BOOLEAN,
    CHOICE,
    CHOICE_MULTIPLE,
    FILE,
    DATE,
    TIME,
    DATETIME,
    COUNTRY_CODE,
    PHONE_NUMBER,
    EMAIL,
];

/// Whether questions of this type have options.
pub fn has_options(kind: &str) -> bool {
    kind == CHOICE || kind == CHOICE_MULTIPLE
}

/// Whether other questions may depend on questions of this type.
pub fn can_be_depended_on(kind: &str) -> bool {
    kind == BOOLEAN || has_options(kind)
}

/// Longest identifier of a question or option.
pub const IDENTIFIER_MAX_LENGTH: usize = 190;

/// Every writable field of a question except its options.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionFields {
    /// Multi-language question text (stored JSON object).
    pub question: Value,
    /// Multi-language help text.
    pub help_text: Option<Value>,
    /// Answer type code, one of [`TYPES`].
    pub kind: String,
    /// Whether an answer is required.
    pub required: bool,
    /// Item IDs of the event it is asked for.
    pub items: Vec<i64>,
    /// Sort position.
    pub position: i32,
    /// Asked at check-in instead of in the shop.
    pub ask_during_checkin: bool,
    /// Identifier; `None` generates one for a new question and keeps that of an existing one.
    pub identifier: Option<String>,
    /// Shown in the back end only.
    pub hidden: bool,
    /// Answer printed on invoices.
    pub print_on_invoice: bool,
    /// The question whose answer decides whether this one is asked.
    pub dependency_question: Option<i64>,
    /// Answers of the dependency question that make this one asked.
    pub dependency_values: Vec<String>,
    /// Least number accepted (decimal text).
    pub valid_number_min: Option<String>,
    /// Largest number accepted (decimal text).
    pub valid_number_max: Option<String>,
    /// Earliest date accepted.
    pub valid_date_min: Option<NaiveDate>,
    /// Latest date accepted.
    pub valid_date_max: Option<NaiveDate>,
    /// Earliest instant accepted.
    pub valid_datetime_min: Option<DateTime<Utc>>,
    /// Latest instant accepted.
    pub valid_datetime_max: Option<DateTime<Utc>>,
    /// Longest text accepted, in characters.
    pub valid_string_length_max: Option<i32>,
}

impl QuestionFields {
    /// The defaults of a new question with this text and type.
    pub fn new(question: Value, kind: &str) -> Self {
        Self {
            question,
            help_text: None,
            kind: kind.to_owned(),
            required: false,
            items: Vec::new(),
            position: 0,
            ask_during_checkin: false,
            identifier: None,
            hidden: false,
            print_on_invoice: false,
            dependency_question: None,
            dependency_values: Vec::new(),
            valid_number_min: None,
            valid_number_max: None,
            valid_date_min: None,
            valid_date_max: None,
            valid_datetime_min: None,
            valid_datetime_max: None,
            valid_string_length_max: None,
        }
    }
}

/// Every writable field of an option.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionFields {
    /// When replacing a question's options: the ID of the option this entry keeps.
    pub id: Option<i64>,
    /// Identifier; `None` generates one (new option) or keeps the current one.
    pub identifier: Option<String>,
    /// Multi-language answer text.
    pub answer: Value,
    /// Sort position.
    pub position: i32,
}

impl From<&question_option::Model> for OptionFields {
    fn from(o: &question_option::Model) -> Self {
        Self {
            id: Some(o.id),
            identifier: Some(o.identifier.clone()),
            answer: o.answer.clone(),
            position: o.position,
        }
    }
}

/// A question as shown: the row, its item IDs and its options.
#[derive(Debug, Clone)]
pub struct Question {
    /// The row.
    pub row: question::Model,
    /// Item IDs, ascending.
    pub items: Vec<i64>,
    /// Options by position, then ID.
    pub options: Vec<question_option::Model>,
}

impl Question {
    /// The writable fields, as they are now.
    pub fn fields(&self) -> QuestionFields {
        let r = &self.row;
        QuestionFields {
            question: r.question.clone(),
            help_text: r.help_text.clone(),
            kind: r.r#type.clone(),
            required: r.required,
            items: self.items.clone(),
            position: r.position,
            ask_during_checkin: r.ask_during_checkin,
            identifier: Some(r.identifier.clone()),
            hidden: r.hidden,
            print_on_invoice: r.print_on_invoice,
            dependency_question: r.dependency_question,
            dependency_values: string_list(&r.dependency_values),
            valid_number_min: r.valid_number_min.clone(),
            valid_number_max: r.valid_number_max.clone(),
            valid_date_min: r.valid_date_min,
            valid_date_max: r.valid_date_max,
            valid_datetime_min: r.valid_datetime_min,
            valid_datetime_max: r.valid_datetime_max,
            valid_string_length_max: r.valid_string_length_max,
        }
    }

    /// The options as fields, each keeping its ID.
    pub fn option_fields(&self) -> Vec<OptionFields> {
        self.options.iter().map(OptionFields::from).collect()
    }
}

/// Filters of the question list.
#[derive(Debug, Clone, Default)]
pub struct QuestionFilter {
    /// `identifier`: exactly this identifier.
    pub identifier: Option<String>,
    /// `ask_during_checkin`.
    pub ask_during_checkin: Option<bool>,
    /// `required`.
    pub required: Option<bool>,
    /// `type`: this answer type code.
    pub kind: Option<String>,
    /// Order by ID instead of position.
    pub by_id: bool,
}

/// The event's questions matching a filter, by position (or ID), then ID.
pub fn query(event_id: i64, filter: &QuestionFilter) -> Select<question::Entity> {
    let mut q = question::Entity::find().filter(question::Column::EventId.eq(event_id));
    if let Some(v) = &filter.identifier {
        q = q.filter(question::Column::Identifier.eq(v.as_str()));
    }
    if let Some(v) = filter.ask_during_checkin {
        q = q.filter(question::Column::AskDuringCheckin.eq(v));
    }
    if let Some(v) = filter.required {
        q = q.filter(question::Column::Required.eq(v));
    }
    if let Some(v) = &filter.kind {
        q = q.filter(question::Column::Type.eq(v.as_str()));
    }
    if !filter.by_id {
        q = q.order_by_asc(question::Column::Position);
    }
    q.order_by_asc(question::Column::Id)
}

/// The row of a question of the event.
pub async fn find_row(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<question::Model>, DbErr> {
    question::Entity::find_by_id(id)
        .filter(question::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// A question of the event, with its items and options.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<Question>, DbErr> {
    let row = find_row(db, event_id, id).await?;
    Ok(complete(db, row.into_iter().collect()).await?.pop())
}

/// Adds item IDs and options to question rows: two queries, whatever their number.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows: Vec<question::Model>,
) -> Result<Vec<Question>, DbErr> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut items: HashMap<i64, Vec<i64>> = HashMap::new();
    for qi in question_item::Entity::find()
        .filter(question_item::Column::QuestionId.is_in(ids.clone()))
        .order_by_asc(question_item::Column::ItemId)
        .all(db)
        .await?
    {
        items.entry(qi.question_id).or_default().push(qi.item_id);
    }
    let mut options: HashMap<i64, Vec<question_option::Model>> = HashMap::new();
    for o in question_option::Entity::find()
        .filter(question_option::Column::QuestionId.is_in(ids))
        .order_by_asc(question_option::Column::Position)
        .order_by_asc(question_option::Column::Id)
        .all(db)
        .await?
    {
        options.entry(o.question_id).or_default().push(o);
    }
    Ok(rows
        .into_iter()
        .map(|row| Question {
            items: items.remove(&row.id).unwrap_or_default(),
            options: options.remove(&row.id).unwrap_or_default(),
            row,
        })
        .collect())
}

fn identifier_shape(identifier: &str) -> Option<String> {
    if identifier.is_empty() {
        Some("This field may not be blank.".into())
    } else if identifier.chars().count() > IDENTIFIER_MAX_LENGTH {
        Some(format!(
            "Ensure this field has no more than {IDENTIFIER_MAX_LENGTH} characters."
        ))
    } else if !identifier
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        Some("Use only letters, digits, dots, dashes and underscores.".into())
    } else {
        None
    }
}

/// A valid decimal bound: at most 6 decimal places and 16 digits in all.
fn parse_bound(text: &str) -> Result<Decimal, String> {
    let d = Decimal::from_str(text.trim()).map_err(|_| "A valid number is required.".to_owned())?;
    let d = d.normalize();
    if d.scale() > 6 {
        return Err("Ensure that there are no more than 6 decimal places.".into());
    }
    let whole_digits = d.trunc().abs().to_string().trim_start_matches('0').len();
    if whole_digits > 10 {
        return Err("Ensure that there are no more than 16 digits in total.".into());
    }
    Ok(d)
}

/// A decimal bound as stored and shown: six decimal places (`"5.000000"`).
pub fn bound_text(text: &str) -> String {
    match parse_bound(text) {
        Ok(mut d) => {
            d.rescale(6);
            d.to_string()
        }
        Err(_) => text.to_owned(),
    }
}

fn check_pair<T: PartialOrd>(
    invalid: &mut Invalid,
    field: &'static str,
    min: Option<T>,
    max: Option<T>,
) {
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        invalid.push((field, "The minimum may not be above the maximum.".into()));
    }
}

/// Everything wrong with a question of event `event_id` with these fields and this option
/// list (`existing` when it is being changed). Errors of options are reported on `options`,
/// naming the entry.
pub async fn invalid(
    db: &impl ConnectionTrait,
    event_id: i64,
    existing: Option<&Question>,
    f: &QuestionFields,
    options: &[OptionFields],
) -> Result<Invalid, DbErr> {
    let overlong = super::overlong_lists(&[
        ("items", f.items.len()),
        ("options", options.len()),
        ("dependency_values", f.dependency_values.len()),
    ]);
    if !overlong.is_empty() {
        return Ok(overlong);
    }
    let mut invalid: Invalid = Vec::new();
    let self_id = existing.map(|e| e.row.id);
    if !TYPES.contains(&f.kind.as_str()) {
        invalid.push(("type", format!("\"{}\" is not a valid choice.", f.kind)));
    }
    let siblings = question::Entity::find()
        .filter(question::Column::EventId.eq(event_id))
        .all(db)
        .await?;
    if let Some(identifier) = &f.identifier {
        if let Some(m) = identifier_shape(identifier) {
            invalid.push(("identifier", m));
        } else if siblings
            .iter()
            .any(|q| Some(q.id) != self_id && q.identifier.eq_ignore_ascii_case(identifier))
        {
            invalid.push((
                "identifier",
                "This identifier is already used for another question of this event.".into(),
            ));
        }
    }
    let wanted: HashSet<i64> = f.items.iter().copied().collect();
    if super::items::of_event(db, event_id, &wanted).await?.len() < wanted.len() {
        invalid.push((
            "items",
            "One or more items do not belong to this event.".into(),
        ));
    }
    invalid.extend(invalid_options(existing, &f.kind, options));
    invalid.extend(invalid_bounds(f));
    if let Some(e) = existing
        && !can_be_depended_on(&f.kind)
        && siblings
            .iter()
            .any(|q| q.dependency_question == Some(e.row.id))
    {
        invalid.push((
            "type",
            "Other questions depend on this one; it has to stay a boolean or choice question."
                .into(),
        ));
    }
    if let Some(dep_id) = f.dependency_question {
        invalid.extend(invalid_dependency(db, self_id, f, dep_id, &siblings).await?);
    }
    Ok(invalid)
}

fn invalid_options(existing: Option<&Question>, kind: &str, options: &[OptionFields]) -> Invalid {
    let mut invalid: Invalid = Vec::new();
    if !has_options(kind) {
        if !options.is_empty() {
            invalid.push((
                "options",
                "Only choice questions (types C and M) have options.".into(),
            ));
        }
        return invalid;
    }
    if options.is_empty() {
        invalid.push((
            "options",
            "A choice question needs at least one option.".into(),
        ));
    }
    let own: HashMap<i64, &str> = existing
        .map(|e| {
            e.options
                .iter()
                .map(|o| (o.id, o.identifier.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let mut ids = HashSet::new();
    let mut identifiers = HashSet::new();
    for (i, o) in options.iter().enumerate() {
        let entry = |m: &str| format!("Entry {}: {m}", i + 1);
        let mut kept = None;
        if let (Some(id), Some(_)) = (o.id, existing) {
            if !own.contains_key(&id) {
                invalid.push((
                    "options",
                    entry(&format!("id: {id} is not an option of this question.")),
                ));
            } else if !ids.insert(id) {
                invalid.push(("options", entry(&format!("id: {id} is listed twice."))));
            } else {
                kept = own.get(&id).copied();
            }
        }
        if let Some(identifier) = o.identifier.as_deref().or(kept) {
            if let Some(m) = identifier_shape(identifier) {
                invalid.push(("options", entry(&format!("identifier: {m}"))));
            } else if !identifiers.insert(identifier) {
                invalid.push((
                    "options",
                    entry(&format!(
                        "identifier: \"{identifier}\" is used by another option of this question."
                    )),
                ));
            }
        }
    }
    invalid
}

fn invalid_bounds(f: &QuestionFields) -> Invalid {
    let mut invalid: Invalid = Vec::new();
    let mut number = |field: &'static str, text: &Option<String>| match text {
        Some(t) => match parse_bound(t) {
            Ok(d) => Some(d),
            Err(m) => {
                invalid.push((field, m));
                None
            }
        },
        None => None,
    };
    let min = number("valid_number_min", &f.valid_number_min);
    let max = number("valid_number_max", &f.valid_number_max);
    check_pair(&mut invalid, "valid_number_min", min, max);
    check_pair(
        &mut invalid,
        "valid_date_min",
        f.valid_date_min,
        f.valid_date_max,
    );
    check_pair(
        &mut invalid,
        "valid_datetime_min",
        f.valid_datetime_min,
        f.valid_datetime_max,
    );
    if f.valid_string_length_max.is_some_and(|l| l < 0) {
        invalid.push((
            "valid_string_length_max",
            "Ensure this value is greater than or equal to 0.".into(),
        ));
    }
    invalid
}

async fn invalid_dependency(
    db: &impl ConnectionTrait,
    self_id: Option<i64>,
    f: &QuestionFields,
    dep_id: i64,
    siblings: &[question::Model],
) -> Result<Invalid, DbErr> {
    let mut invalid: Invalid = Vec::new();
    let field = "dependency_question";
    if Some(dep_id) == self_id {
        invalid.push((field, "A question cannot depend on itself.".into()));
        return Ok(invalid);
    }
    let by_id: HashMap<i64, &question::Model> = siblings.iter().map(|q| (q.id, q)).collect();
    let Some(dep) = by_id.get(&dep_id) else {
        invalid.push((field, "The question does not belong to this event.".into()));
        return Ok(invalid);
    };
    if !can_be_depended_on(&dep.r#type) {
        invalid.push((
            field,
            "Only boolean and choice questions (types B, C and M) can be depended on.".into(),
        ));
    }
    if f.ask_during_checkin {
        invalid.push((
            field,
            "A question asked during check-in cannot depend on another question.".into(),
        ));
    }
    if dep.ask_during_checkin {
        invalid.push((
            field,
            "A question cannot depend on a question asked during check-in.".into(),
        ));
    }
    let mut seen: HashSet<i64> = self_id.into_iter().collect();
    let mut next = Some(dep_id);
    while let Some(id) = next {
        if !seen.insert(id) {
            invalid.push((
                field,
                "This dependency would make questions depend on each other in a circle.".into(),
            ));
            break;
        }
        next = by_id.get(&id).and_then(|q| q.dependency_question);
    }
    let values = "dependency_values";
    if f.dependency_values.is_empty() {
        invalid.push((
            values,
            "Name at least one answer of the dependency question.".into(),
        ));
    } else if dep.r#type == BOOLEAN {
        if f.dependency_values
            .iter()
            .any(|v| v != "True" && v != "False")
        {
            invalid.push((
                values,
                "A boolean dependency question is answered with \"True\" or \"False\".".into(),
            ));
        }
    } else if has_options(&dep.r#type) {
        let known: HashSet<String> = question_option::Entity::find()
            .filter(question_option::Column::QuestionId.eq(dep.id))
            .all(db)
            .await?
            .into_iter()
            .map(|o| o.identifier)
            .collect();
        for v in &f.dependency_values {
            if !known.contains(v) {
                invalid.push((
                    values,
                    format!(
                        "\"{v}\" is not the identifier of an option of the dependency question."
                    ),
                ));
            }
        }
    }
    Ok(invalid)
}

/// Everything wrong with an option of `question` (`except`: the option being changed).
pub async fn invalid_option(
    db: &impl ConnectionTrait,
    question: &question::Model,
    f: &OptionFields,
    except: Option<i64>,
) -> Result<Invalid, DbErr> {
    let mut invalid: Invalid = Vec::new();
    if !has_options(&question.r#type) {
        invalid.push((
            "non_field_errors",
            "Only choice questions (types C and M) have options.".into(),
        ));
    }
    if let Some(identifier) = &f.identifier {
        if let Some(m) = identifier_shape(identifier) {
            invalid.push(("identifier", m));
        } else {
            let taken = options_query(question.id)
                .filter(question_option::Column::Identifier.eq(identifier.as_str()))
                .all(db)
                .await?
                .into_iter()
                .any(|o| Some(o.id) != except);
            if taken {
                invalid.push((
                    "identifier",
                    "This identifier is already used by another option of this question.".into(),
                ));
            }
        }
    }
    Ok(invalid)
}

const IDENTIFIER_CHARSET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

fn random_identifier() -> String {
    let mut rng = rand::rng();
    (0..8)
        .map(|_| IDENTIFIER_CHARSET[rng.random_range(0..IDENTIFIER_CHARSET.len())] as char)
        .collect()
}

/// A random identifier none of `taken` has (compared without case).
fn fresh_identifier(taken: &HashSet<String>) -> String {
    loop {
        let candidate = random_identifier();
        if !taken.contains(&candidate.to_ascii_lowercase()) {
            return candidate;
        }
    }
}

async fn question_identifiers(
    db: &impl ConnectionTrait,
    event_id: i64,
) -> Result<HashSet<String>, DbErr> {
    Ok(question::Entity::find()
        .filter(question::Column::EventId.eq(event_id))
        .all(db)
        .await?
        .into_iter()
        .map(|q| q.identifier.to_ascii_lowercase())
        .collect())
}

fn row(f: &QuestionFields, identifier: String) -> question::ActiveModel {
    let dependency_values = if f.dependency_question.is_some() {
        f.dependency_values.clone()
    } else {
        Vec::new()
    };
    question::ActiveModel {
        question: Set(f.question.clone()),
        r#type: Set(f.kind.clone()),
        required: Set(f.required),
        position: Set(f.position),
        ask_during_checkin: Set(f.ask_during_checkin),
        identifier: Set(identifier),
        help_text: Set(f.help_text.clone()),
        hidden: Set(f.hidden),
        print_on_invoice: Set(f.print_on_invoice),
        dependency_question: Set(f.dependency_question),
        dependency_values: Set(Value::from(dependency_values)),
        valid_number_min: Set(f.valid_number_min.as_deref().map(bound_text)),
        valid_number_max: Set(f.valid_number_max.as_deref().map(bound_text)),
        valid_date_min: Set(f.valid_date_min),
        valid_date_max: Set(f.valid_date_max),
        valid_datetime_min: Set(f.valid_datetime_min),
        valid_datetime_max: Set(f.valid_datetime_max),
        valid_string_length_max: Set(f.valid_string_length_max),
        ..Default::default()
    }
}

async fn set_items(
    db: &impl ConnectionTrait,
    question_id: i64,
    items: &[i64],
) -> Result<(), DbErr> {
    question_item::Entity::delete_many()
        .filter(question_item::Column::QuestionId.eq(question_id))
        .exec(db)
        .await?;
    let items: HashSet<i64> = items.iter().copied().collect();
    if !items.is_empty() {
        question_item::Entity::insert_many(items.into_iter().map(|item_id| {
            question_item::ActiveModel {
                question_id: Set(question_id),
                item_id: Set(item_id),
            }
        }))
        .exec(db)
        .await?;
    }
    Ok(())
}

/// Makes the question's options exactly `options`: entries with the ID of one of its options
/// change that option, the others are added, options not listed are deleted.
async fn replace_options(
    db: &impl ConnectionTrait,
    question_id: i64,
    current: &[question_option::Model],
    options: &[OptionFields],
) -> Result<(), DbErr> {
    let current: HashMap<i64, &question_option::Model> =
        current.iter().map(|o| (o.id, o)).collect();
    let kept: HashSet<i64> = options
        .iter()
        .filter_map(|o| o.id)
        .filter(|id| current.contains_key(id))
        .collect();
    let doomed: Vec<i64> = current
        .keys()
        .copied()
        .filter(|id| !kept.contains(id))
        .collect();
    if !doomed.is_empty() {
        question_option::Entity::delete_many()
            .filter(question_option::Column::Id.is_in(doomed))
            .exec(db)
            .await?;
    }
    let mut taken: HashSet<String> = options
        .iter()
        .filter_map(|o| {
            o.identifier.clone().or_else(|| {
                o.id.and_then(|id| current.get(&id))
                    .map(|c| c.identifier.clone())
            })
        })
        .map(|i| i.to_ascii_lowercase())
        .collect();
    for o in options {
        match o.id.and_then(|id| current.get(&id)) {
            Some(old) => {
                question_option::ActiveModel {
                    id: Set(old.id),
                    question_id: Set(question_id),
                    identifier: Set(o.identifier.clone().unwrap_or(old.identifier.clone())),
                    answer: Set(o.answer.clone()),
                    position: Set(o.position),
                }
                .update(db)
                .await?;
            }
            None => {
                let identifier = match &o.identifier {
                    Some(i) => i.clone(),
                    None => {
                        let fresh = fresh_identifier(&taken);
                        taken.insert(fresh.to_ascii_lowercase());
                        fresh
                    }
                };
                insert_option_row(db, question_id, identifier, o).await?;
            }
        }
    }
    Ok(())
}

async fn insert_option_row(
    db: &impl ConnectionTrait,
    question_id: i64,
    identifier: String,
    o: &OptionFields,
) -> Result<question_option::Model, DbErr> {
    question_option::ActiveModel {
        question_id: Set(question_id),
        identifier: Set(identifier),
        answer: Set(o.answer.clone()),
        position: Set(o.position),
        ..Default::default()
    }
    .insert(db)
    .await
}

/// Creates a question with its items and options in one transaction, generating the
/// identifiers not given; the caller has checked [`invalid`]. A unique violation means the
/// identifier was taken meanwhile.
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    f: QuestionFields,
    options: Vec<OptionFields>,
) -> Result<Question, DbErr> {
    let txn = begin_write(db).await?;
    let identifier = match &f.identifier {
        Some(i) => i.clone(),
        None => fresh_identifier(&question_identifiers(&txn, event_id).await?),
    };
    let mut new = row(&f, identifier);
    new.event_id = Set(event_id);
    let saved = new.insert(&txn).await?;
    set_items(&txn, saved.id, &f.items).await?;
    let fresh: Vec<OptionFields> = options
        .into_iter()
        .map(|o| OptionFields { id: None, ..o })
        .collect();
    replace_options(&txn, saved.id, &[], &fresh).await?;
    let question = complete(&txn, vec![saved]).await?.pop();
    crate::db::commit(txn).await?;
    question.ok_or_else(|| DbErr::RecordNotFound("question".into()))
}

/// Replaces every writable field of a question in one transaction; `options`, when given,
/// replace its options (see [`OptionFields::id`]). The caller has checked [`invalid`].
pub async fn update(
    db: &DatabaseConnection,
    existing: &Question,
    f: QuestionFields,
    options: Option<Vec<OptionFields>>,
) -> Result<Question, DbErr> {
    let txn = begin_write(db).await?;
    let identifier = f
        .identifier
        .clone()
        .unwrap_or_else(|| existing.row.identifier.clone());
    let mut changed = row(&f, identifier);
    changed.id = Set(existing.row.id);
    changed.event_id = Set(existing.row.event_id);
    let saved = changed.update(&txn).await?;
    set_items(&txn, saved.id, &f.items).await?;
    if let Some(options) = options {
        replace_options(&txn, saved.id, &existing.options, &options).await?;
    }
    let question = complete(&txn, vec![saved]).await?.pop();
    crate::db::commit(txn).await?;
    question.ok_or_else(|| DbErr::RecordNotFound("question".into()))
}

/// Deletes a question with its options and items, in one transaction; questions that
/// depended on it no longer depend on anything.
pub async fn delete(db: &DatabaseConnection, existing: &question::Model) -> Result<(), DbErr> {
    let txn = begin_write(db).await?;
    question::Entity::update_many()
        .col_expr(
            question::Column::DependencyQuestion,
            Expr::value(None::<i64>),
        )
        .col_expr(
            question::Column::DependencyValues,
            Expr::value(Value::Array(Vec::new())),
        )
        .filter(question::Column::EventId.eq(existing.event_id))
        .filter(question::Column::DependencyQuestion.eq(existing.id))
        .exec(&txn)
        .await?;
    question_option::Entity::delete_many()
        .filter(question_option::Column::QuestionId.eq(existing.id))
        .exec(&txn)
        .await?;
    question_item::Entity::delete_many()
        .filter(question_item::Column::QuestionId.eq(existing.id))
        .exec(&txn)
        .await?;
    question::Entity::delete_by_id(existing.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await
}

/// The options of a question, by position, then ID.
pub fn options_query(question_id: i64) -> Select<question_option::Entity> {
    question_option::Entity::find()
        .filter(question_option::Column::QuestionId.eq(question_id))
        .order_by_asc(question_option::Column::Position)
        .order_by_asc(question_option::Column::Id)
}

/// An option of the question.
pub async fn find_option(
    db: &impl ConnectionTrait,
    question_id: i64,
    id: i64,
) -> Result<Option<question_option::Model>, DbErr> {
    options_query(question_id)
        .filter(question_option::Column::Id.eq(id))
        .one(db)
        .await
}

/// Adds an option to a question, generating its identifier when none is given; the caller
/// has checked [`invalid_option`].
pub async fn create_option(
    db: &DatabaseConnection,
    question_id: i64,
    f: OptionFields,
) -> Result<question_option::Model, DbErr> {
    let txn = begin_write(db).await?;
    let identifier = match &f.identifier {
        Some(i) => i.clone(),
        None => {
            let taken = options_query(question_id)
                .all(&txn)
                .await?
                .into_iter()
                .map(|o| o.identifier.to_ascii_lowercase())
                .collect();
            fresh_identifier(&taken)
        }
    };
    let saved = insert_option_row(&txn, question_id, identifier, &f).await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Replaces every writable field of an option (a missing identifier keeps the current one);
/// the caller has checked [`invalid_option`].
pub async fn update_option(
    db: &DatabaseConnection,
    existing: &question_option::Model,
    f: OptionFields,
) -> Result<question_option::Model, DbErr> {
    question_option::ActiveModel {
        id: Set(existing.id),
        question_id: Set(existing.question_id),
        identifier: Set(f.identifier.unwrap_or_else(|| existing.identifier.clone())),
        answer: Set(f.answer),
        position: Set(f.position),
    }
    .update(db)
    .await
}

/// Why an option was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteOptionError {
    /// It is the last option of a choice question.
    #[error("it is the last option of a choice question")]
    LastOption,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Deletes an option unless it is its choice question's last, in one transaction.
pub async fn delete_option(
    db: &DatabaseConnection,
    existing: &question_option::Model,
) -> Result<(), DeleteOptionError> {
    let txn = begin_write(db).await?;
    // The question's row first (`FOR UPDATE` on PostgreSQL; SQLite writes one at a time), so
    // that concurrent deletions of its last options count them one after the other.
    question::Entity::find_by_id(existing.question_id)
        .lock_exclusive()
        .one(&txn)
        .await?;
    let siblings = options_query(existing.question_id).all(&txn).await?.len();
    if siblings <= 1 {
        return Err(DeleteOptionError::LastOption);
    }
    question_option::Entity::delete_by_id(existing.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// Copies every question of event `from_event` to `to_event` in ID order, with its options,
/// its items (remapped through `item_ids`; items without a copy are left out) and its
/// dependency (remapped to the copied question).
pub async fn clone_questions(
    db: &impl ConnectionTrait,
    from_event: i64,
    to_event: i64,
    item_ids: &HashMap<i64, i64>,
) -> Result<(), DbErr> {
    let rows = question::Entity::find()
        .filter(question::Column::EventId.eq(from_event))
        .order_by_asc(question::Column::Id)
        .all(db)
        .await?;
    let sources = complete(db, rows).await?;
    let mut copies: HashMap<i64, i64> = HashMap::new();
    for q in &sources {
        let r = &q.row;
        let copy = question::ActiveModel {
            event_id: Set(to_event),
            question: Set(r.question.clone()),
            r#type: Set(r.r#type.clone()),
            required: Set(r.required),
            position: Set(r.position),
            ask_during_checkin: Set(r.ask_during_checkin),
            identifier: Set(r.identifier.clone()),
            help_text: Set(r.help_text.clone()),
            hidden: Set(r.hidden),
            print_on_invoice: Set(r.print_on_invoice),
            dependency_question: Set(None),
            dependency_values: Set(r.dependency_values.clone()),
            valid_number_min: Set(r.valid_number_min.clone()),
            valid_number_max: Set(r.valid_number_max.clone()),
            valid_date_min: Set(r.valid_date_min),
            valid_date_max: Set(r.valid_date_max),
            valid_datetime_min: Set(r.valid_datetime_min),
            valid_datetime_max: Set(r.valid_datetime_max),
            valid_string_length_max: Set(r.valid_string_length_max),
            ..Default::default()
        }
        .insert(db)
        .await?;
        copies.insert(r.id, copy.id);
        let items: Vec<i64> = q
            .items
            .iter()
            .filter_map(|i| item_ids.get(i).copied())
            .collect();
        set_items(db, copy.id, &items).await?;
        let mut options = q.options.clone();
        options.sort_by_key(|o| o.id);
        for o in options {
            insert_option_row(db, copy.id, o.identifier.clone(), &OptionFields::from(&o)).await?;
        }
    }
    for q in &sources {
        let (Some(dep), Some(&copy)) = (q.row.dependency_question, copies.get(&q.row.id)) else {
            continue;
        };
        let remapped = copies.get(&dep).copied();
        let mut changed = question::Entity::update_many()
            .col_expr(question::Column::DependencyQuestion, Expr::value(remapped));
        if remapped.is_none() {
            changed = changed.col_expr(
                question::Column::DependencyValues,
                Expr::value(Value::Array(Vec::new())),
            );
        }
        changed
            .filter(question::Column::Id.eq(copy))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// ISO 3166-1 alpha-2 codes, and `XK` (Kosovo) as commonly used.
const COUNTRY_CODES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ \
BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ \
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ \
DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR \
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY \
HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP \
KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY \
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ \
NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA \
RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ \
TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ \
VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW";

/// Whether a text is a known ISO 3166-1 country code (upper case).
pub fn is_country(code: &str) -> bool {
    is_country_code(code)
}

fn is_country_code(code: &str) -> bool {
    code.len() == 2 && COUNTRY_CODES.split(' ').any(|c| c == code)
}

/// Whether a text is a plausible e-mail address: one `@`, a local part of at most 64
/// characters, a domain of at least two labels, no spaces or control characters.
pub fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let labels: Vec<&str> = domain.split('.').collect();
    !local.is_empty()
        && local.len() <= 64
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        && !local.contains('@')
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

/// A phone number as `+` and digits, or digits alone; separators (spaces, dashes, dots,
/// slashes, parentheses) are dropped.
fn phone_number(text: &str) -> Option<String> {
    let (plus, rest) = match text.strip_prefix('+') {
        Some(r) => ("+", r),
        None => ("", text),
    };
    let mut digits = String::new();
    for c in rest.chars() {
        match c {
            '0'..='9' => digits.push(c),
            ' ' | '-' | '.' | '/' | '(' | ')' => {}
            _ => return None,
        }
    }
    (4..=15)
        .contains(&digits.len())
        .then(|| format!("{plus}{digits}"))
}

fn option_text(o: &question_option::Model) -> String {
    I18nString::from_stored(&o.answer).localize("en")
}

/// Checks one answer to `question` (whose options are `options`) and returns it normalised:
/// a number within the bounds, a date or instant within its range (`YYYY-MM-DD`, RFC 3339
/// with an offset, given back in UTC), a time (`HH:MM:SS`), `"True"`/`"False"` for a boolean,
/// the chosen options' texts (by `option_ids`, joined with `", "`) for a choice, a known
/// country code (upper case), a phone number without separators, an email address, a text
/// within the length limit. An empty answer is `""` unless the question is required (a
/// required boolean must be `"True"`). The error is a message for the customer.
pub fn check_answer(
    question: &question::Model,
    options: &[question_option::Model],
    answer: &str,
    option_ids: &[i64],
) -> Result<String, String> {
    check_answer_indexed(
        question,
        &option_index(question.id, options),
        answer,
        option_ids,
    )
}

/// A question's options by ID: checking many answers against one index takes time in
/// proportion to the options chosen, not to those chosen times those the question has.
pub type OptionIndex<'a> = HashMap<i64, &'a question_option::Model>;

/// The options among `options` that belong to the question `question_id`, by ID.
pub fn option_index(question_id: i64, options: &[question_option::Model]) -> OptionIndex<'_> {
    options
        .iter()
        .filter(|o| o.question_id == question_id)
        .map(|o| (o.id, o))
        .collect()
}

/// [`check_answer`] with the question's options already indexed by [`option_index`].
pub fn check_answer_indexed(
    question: &question::Model,
    options: &OptionIndex<'_>,
    answer: &str,
    option_ids: &[i64],
) -> Result<String, String> {
    let kind = question.r#type.as_str();
    let trimmed = answer.trim();
    let empty = if has_options(kind) {
        option_ids.is_empty() && trimmed.is_empty()
    } else {
        trimmed.is_empty()
    };
    if empty {
        return if question.required {
            Err("An answer to this question is required.".into())
        } else {
            Ok(String::new())
        };
    }
    match kind {
        NUMBER => {
            let text = if trimmed.contains('.') {
                trimmed.to_owned()
            } else {
                trimmed.replace(',', ".")
            };
            let value = Decimal::from_str(&text).map_err(|_| "Enter a valid number.".to_owned())?;
            let bound = |b: &Option<String>| b.as_deref().and_then(|t| parse_bound(t).ok());
            if bound(&question.valid_number_min).is_some_and(|min| value < min) {
                return Err("The number is too low.".into());
            }
            if bound(&question.valid_number_max).is_some_and(|max| value > max) {
                return Err("The number is too high.".into());
            }
            Ok(value.to_string())
        }
        STRING | TEXT => {
            let length = answer.chars().count();
            match question.valid_string_length_max {
                Some(max) if length > usize::try_from(max).unwrap_or(0) => Err(format!(
                    "Ensure this answer has no more than {max} characters (it has {length})."
                )),
                _ => Ok(answer.to_owned()),
            }
        }
        BOOLEAN => {
            let value = if trimmed.eq_ignore_ascii_case("true") {
                true
            } else if trimmed.eq_ignore_ascii_case("false") {
                false
            } else {
                return Err("Answer \"True\" or \"False\".".into());
            };
            if question.required && !value {
                return Err("This question must be answered with yes.".into());
            }
            Ok(if value { "True" } else { "False" }.into())
        }
        CHOICE | CHOICE_MULTIPLE => {
            let mut chosen: Vec<&question_option::Model> = Vec::new();
            let mut seen = HashSet::new();
            for id in option_ids {
                let Some(&o) = options.get(id) else {
                    return Err(format!("Option {id} is not one of this question's."));
                };
                if seen.insert(o.id) {
                    chosen.push(o);
                }
            }
            if chosen.is_empty() {
                return Err("Choose one of the question's options.".into());
            }
            if kind == CHOICE && chosen.len() > 1 {
                return Err("Choose only one option.".into());
            }
            chosen.sort_by_key(|o| (o.position, o.id));
            Ok(chosen
                .into_iter()
                .map(option_text)
                .collect::<Vec<_>>()
                .join(", "))
        }
        DATE => {
            let date = NaiveDate::parse_from_str(trimmed, "%Y-%m-%d")
                .map_err(|_| "Enter a valid date (YYYY-MM-DD).".to_owned())?;
            if question.valid_date_min.is_some_and(|min| date < min) {
                return Err("Choose a later date.".into());
            }
            if question.valid_date_max.is_some_and(|max| date > max) {
                return Err("Choose an earlier date.".into());
            }
            Ok(date.format("%Y-%m-%d").to_string())
        }
        TIME => {
            let time = ["%H:%M:%S%.f", "%H:%M"]
                .iter()
                .find_map(|f| NaiveTime::parse_from_str(trimmed, f).ok())
                .ok_or_else(|| "Enter a valid time (HH:MM or HH:MM:SS).".to_owned())?;
            Ok(time.format("%H:%M:%S").to_string())
        }
        DATETIME => {
            let instant = DateTime::parse_from_rfc3339(trimmed)
                .map_err(|_| {
                    "Enter a valid date and time with its offset, e.g. 2030-05-01T10:00:00+02:00."
                        .to_owned()
                })?
                .with_timezone(&Utc);
            if question.valid_datetime_min.is_some_and(|min| instant < min) {
                return Err("Choose a later date and time.".into());
            }
            if question.valid_datetime_max.is_some_and(|max| instant > max) {
                return Err("Choose an earlier date and time.".into());
            }
            Ok(instant.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false))
        }
        COUNTRY_CODE => {
            let code = trimmed.to_ascii_uppercase();
            if is_country_code(&code) {
                Ok(code)
            } else {
                Err("Enter a known two-letter country code (ISO 3166-1).".into())
            }
        }
        PHONE_NUMBER => {
            phone_number(trimmed).ok_or_else(|| "Enter a valid phone number.".to_owned())
        }
        EMAIL => {
            if is_email(trimmed) {
                Ok(trimmed.to_owned())
            } else {
                Err("Enter a valid email address.".into())
            }
        }
        _ => Ok(answer.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(kind: &str) -> question::Model {
        question::Model {
            id: 1,
            event_id: 1,
            question: json!({"en": "Q"}),
            r#type: kind.into(),
            required: false,
            position: 0,
            ask_during_checkin: false,
            identifier: "Q1".into(),
            help_text: None,
            hidden: false,
            print_on_invoice: false,
            dependency_question: None,
            dependency_values: json!([]),
            valid_number_min: None,
            valid_number_max: None,
            valid_date_min: None,
            valid_date_max: None,
            valid_datetime_min: None,
            valid_datetime_max: None,
            valid_string_length_max: None,
        }
    }

    fn opt(id: i64, question_id: i64, text: &str, position: i32) -> question_option::Model {
        question_option::Model {
            id,
            question_id,
            identifier: format!("O{id}"),
            answer: json!({"en": text, "de": format!("{text}-de")}),
            position,
        }
    }

    #[test]
    fn numbers_are_checked_against_their_bounds() {
        let mut n = q(NUMBER);
        n.valid_number_min = Some("1.500000".into());
        n.valid_number_max = Some("10".into());
        assert_eq!(check_answer(&n, &[], " 2.50 ", &[]), Ok("2.50".into()));
        assert_eq!(check_answer(&n, &[], "3,5", &[]), Ok("3.5".into()));
        assert_eq!(check_answer(&n, &[], "10", &[]), Ok("10".into()));
        assert!(check_answer(&n, &[], "1.4", &[]).is_err());
        assert!(check_answer(&n, &[], "10.01", &[]).is_err());
        assert!(check_answer(&n, &[], "ten", &[]).is_err());
    }

    #[test]
    fn an_empty_answer_is_refused_only_when_required() {
        let mut s = q(STRING);
        assert_eq!(check_answer(&s, &[], "  ", &[]), Ok(String::new()));
        s.required = true;
        assert!(check_answer(&s, &[], "", &[]).is_err());
        let mut c = q(CHOICE);
        c.required = true;
        assert!(check_answer(&c, &[opt(5, 1, "S", 0)], "", &[]).is_err());
    }

    #[test]
    fn texts_are_limited_in_characters_not_bytes() {
        let mut s = q(TEXT);
        s.valid_string_length_max = Some(3);
        assert_eq!(check_answer(&s, &[], "äöü", &[]), Ok("äöü".into()));
        assert!(check_answer(&s, &[], "äöüß", &[]).is_err());
        s.valid_string_length_max = None;
        assert_eq!(check_answer(&s, &[], "a\nb", &[]), Ok("a\nb".into()));
    }

    #[test]
    fn booleans_are_true_or_false_and_a_required_one_must_be_true() {
        let mut b = q(BOOLEAN);
        assert_eq!(check_answer(&b, &[], "true", &[]), Ok("True".into()));
        assert_eq!(check_answer(&b, &[], "False", &[]), Ok("False".into()));
        assert!(check_answer(&b, &[], "yes", &[]).is_err());
        b.required = true;
        assert!(check_answer(&b, &[], "False", &[]).is_err());
        assert_eq!(check_answer(&b, &[], "True", &[]), Ok("True".into()));
    }

    #[test]
    fn choices_take_options_of_the_question_only() {
        let options = [opt(5, 1, "S", 1), opt(6, 1, "M", 0), opt(7, 2, "X", 0)];
        let c = q(CHOICE);
        assert_eq!(check_answer(&c, &options, "", &[5]), Ok("S".into()));
        assert!(check_answer(&c, &options, "", &[5, 6]).is_err());
        assert!(check_answer(&c, &options, "", &[7]).is_err());
        assert!(check_answer(&c, &options, "", &[99]).is_err());
        assert!(check_answer(&c, &options, "S", &[]).is_err());
        let m = q(CHOICE_MULTIPLE);
        assert_eq!(
            check_answer(&m, &options, "", &[5, 6, 5]),
            Ok("M, S".into())
        );
    }

    #[test]
    fn dates_and_instants_are_checked_against_their_ranges() {
        let mut d = q(DATE);
        d.valid_date_min = NaiveDate::from_ymd_opt(2030, 1, 1);
        d.valid_date_max = NaiveDate::from_ymd_opt(2030, 12, 31);
        assert_eq!(
            check_answer(&d, &[], "2030-05-01", &[]),
            Ok("2030-05-01".into())
        );
        assert!(check_answer(&d, &[], "2029-12-31", &[]).is_err());
        assert!(check_answer(&d, &[], "2031-01-01", &[]).is_err());
        assert!(check_answer(&d, &[], "01.05.2030", &[]).is_err());

        let mut w = q(DATETIME);
        w.valid_datetime_min = "2030-01-01T00:00:00Z".parse().ok();
        assert_eq!(
            check_answer(&w, &[], "2030-05-01T10:00:00+02:00", &[]),
            Ok("2030-05-01T08:00:00+00:00".into())
        );
        assert!(check_answer(&w, &[], "2030-01-01T00:30:00+01:00", &[]).is_err());
        assert!(check_answer(&w, &[], "2030-05-01T10:00:00", &[]).is_err());

        let h = q(TIME);
        assert_eq!(check_answer(&h, &[], "9:05", &[]), Ok("09:05:00".into()));
        assert_eq!(
            check_answer(&h, &[], "23:59:58", &[]),
            Ok("23:59:58".into())
        );
        assert!(check_answer(&h, &[], "25:00", &[]).is_err());
    }

    #[test]
    fn countries_phones_and_emails_are_checked_for_shape() {
        let cc = q(COUNTRY_CODE);
        assert_eq!(check_answer(&cc, &[], "de", &[]), Ok("DE".into()));
        assert!(check_answer(&cc, &[], "XX", &[]).is_err());
        assert!(check_answer(&cc, &[], "DEU", &[]).is_err());
        assert_eq!(COUNTRY_CODES.split(' ').count(), 250);

        let tel = q(PHONE_NUMBER);
        assert_eq!(
            check_answer(&tel, &[], "+49 (30) 123-456", &[]),
            Ok("+4930123456".into())
        );
        assert!(check_answer(&tel, &[], "call me", &[]).is_err());
        assert!(check_answer(&tel, &[], "12", &[]).is_err());

        let email = q(EMAIL);
        assert_eq!(
            check_answer(&email, &[], " ana@example.org ", &[]),
            Ok("ana@example.org".into())
        );
        for bad in [
            "ana",
            "ana@",
            "@example.org",
            "ana@example",
            "a na@example.org",
            "a@b@c.de",
        ] {
            assert!(check_answer(&email, &[], bad, &[]).is_err(), "{bad}");
        }
    }

    #[test]
    fn bounds_are_stored_with_six_decimal_places() {
        assert_eq!(bound_text("5"), "5.000000");
        assert_eq!(bound_text("-0.5"), "-0.500000");
        assert!(parse_bound("0.0000001").is_err());
        assert!(parse_bound("12345678901").is_err());
        assert!(parse_bound("1234567890.123456").is_ok());
        assert!(parse_bound("abc").is_err());
    }

    #[test]
    fn identifiers_are_generated_from_eight_unambiguous_characters() {
        let taken = HashSet::new();
        let id = fresh_identifier(&taken);
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|b| IDENTIFIER_CHARSET.contains(&b)));
        assert!(identifier_shape(&id).is_none());
        assert!(identifier_shape("has space").is_some());
        assert!(identifier_shape("").is_some());
        assert!(identifier_shape("a.b-c_D9").is_none());
    }
}
