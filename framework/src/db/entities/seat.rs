//! A seat of an event or of one date of a series, made from its seating plan.

use sea_orm::entity::prelude::*;

/// A row of `seats`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "seats")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// The date of an event series the seat belongs to; `None` for an event's own seats.
    pub subevent_id: Option<i64>,
    /// The seat's identifier in the plan, unique per event and date.
    pub seat_guid: String,
    /// Human-readable label, e.g. "Row 3, Seat 12".
    pub name: String,
    /// Zone of the plan the seat is in.
    pub zone_name: String,
    /// Row number or name.
    pub row_name: String,
    /// Seat number within the row.
    pub seat_number: String,
    /// Category of the plan; mapped to an item by the event.
    pub category: String,
    /// Not for sale.
    pub blocked: bool,
    /// Sold by an order.
    pub sold: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
