//! A date of an event series (sub-event).

use sea_orm::entity::prelude::*;

/// A row of `subevents`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "subevents")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event series.
    pub event_id: i64,
    /// Multi-language name.
    pub name: Json,
    /// Whether its shop is available.
    pub active: bool,
    /// Start.
    pub date_from: DateTimeUtc,
    /// End.
    pub date_to: Option<DateTimeUtc>,
    /// Admission time.
    pub date_admission: Option<DateTimeUtc>,
    /// When the shop opens.
    pub presale_start: Option<DateTimeUtc>,
    /// When the shop closes.
    pub presale_end: Option<DateTimeUtc>,
    /// Multi-language location.
    pub location: Option<Json>,
    /// Values of organizer meta properties (JSON object of strings).
    pub meta_data: Json,
    /// The seating plan of this date, if it is sold by seat.
    pub seating_plan_id: Option<i64>,
    /// Category of the plan to item ID (JSON object), for this date.
    pub seat_category_mapping: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
