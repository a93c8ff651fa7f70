//! An item (product) of an event. The catalogue migration adds its other fields.

use sea_orm::entity::prelude::*;

/// A row of `items`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "items")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Multi-language name.
    pub name: Json,
    /// Price in cents.
    pub default_price_cents: i64,
    /// Sort position.
    pub position: i32,
    /// Whether it is sold.
    pub active: bool,
    /// Category.
    pub category_id: Option<i64>,
    /// Tax rule.
    pub tax_rule_id: Option<i64>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
