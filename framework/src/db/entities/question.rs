//! A question order positions answer.

use sea_orm::entity::prelude::*;

/// A row of `questions`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "questions")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Multi-language question text.
    pub question: Json,
    /// Answer type code.
    #[sea_orm(column_name = "type")]
    pub r#type: String,
    /// Whether an answer is required.
    pub required: bool,
    /// Sort position.
    pub position: i32,
    /// Asked at check-in instead of in the shop.
    pub ask_during_checkin: bool,
    /// Identifier, unique within the event.
    pub identifier: String,
    /// Multi-language help text.
    pub help_text: Option<Json>,
    /// Hidden from customers.
    pub hidden: bool,
    /// Answer printed on invoices.
    pub print_on_invoice: bool,
    /// Asked only if this question is answered with one of `dependency_values`.
    pub dependency_question: Option<i64>,
    /// Answers of the dependency question that make this one asked (list).
    pub dependency_values: Json,
    /// Least number accepted (decimal string).
    pub valid_number_min: Option<String>,
    /// Largest number accepted (decimal string).
    pub valid_number_max: Option<String>,
    /// Earliest date accepted.
    pub valid_date_min: Option<Date>,
    /// Latest date accepted.
    pub valid_date_max: Option<Date>,
    /// Earliest instant accepted.
    pub valid_datetime_min: Option<DateTimeUtc>,
    /// Latest instant accepted.
    pub valid_datetime_max: Option<DateTimeUtc>,
    /// Longest text accepted.
    pub valid_string_length_max: Option<i32>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
