//! An order of an event. The selling migration adds its other fields.

use sea_orm::entity::prelude::*;

/// A row of `orders`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "orders")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Order code.
    pub code: String,
    /// Status: `n` pending, `p` paid, `e` expired, `c` canceled.
    pub status: String,
    /// When it was placed.
    pub datetime: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
