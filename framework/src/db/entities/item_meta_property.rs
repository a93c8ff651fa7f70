//! A meta data property that the items of an event carry values for.

use sea_orm::entity::prelude::*;

/// A row of `item_meta_properties`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "item_meta_properties")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Property name, unique per event.
    pub name: String,
    /// Value of items that set none.
    pub default_value: String,
    /// Whether every item must have a value (unless there is a default).
    pub required: bool,
    /// Allowed values (JSON list of strings); none allows any.
    pub allowed_values: Option<Json>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
