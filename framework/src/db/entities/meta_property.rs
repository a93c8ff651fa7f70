//! A meta data property that an organizer's events carry values for.

use sea_orm::entity::prelude::*;

/// A row of `meta_properties`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "meta_properties")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Property name, unique per organizer.
    pub name: String,
    /// Value of events that set none.
    pub default_value: String,
    /// Allowed values (JSON list of strings); empty allows any.
    pub allowed_values: Json,
    /// Whether every event must have a value.
    pub required: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
