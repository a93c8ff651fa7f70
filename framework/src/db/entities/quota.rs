//! A quota of an event: how many of its items may be sold.

use sea_orm::entity::prelude::*;

/// A row of `quotas`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "quotas")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// Internal name.
    pub name: String,
    /// Size; `None` is unlimited.
    pub size: Option<i64>,
    /// Closes itself when sold out.
    pub close_when_sold_out: bool,
    /// Closed: nothing of it is sold.
    pub closed: bool,
    /// Tickets scanned at an exit give their capacity back.
    pub release_after_exit: bool,
    /// Left out when the event's availability is computed.
    pub ignore_for_event_availability: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
