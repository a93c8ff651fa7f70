//! A quota of an event. The catalogue migration adds its other fields.

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
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
