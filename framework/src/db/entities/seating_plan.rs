//! A seating plan of an organizer, used by any number of its events.

use sea_orm::entity::prelude::*;

/// A row of `seating_plans`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "seating_plans")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Human-readable name.
    pub name: String,
    /// The plan (see [`crate::domain::seating`] for its schema).
    pub layout: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
