//! A variation of an item.

use sea_orm::entity::prelude::*;

/// A row of `item_variations`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "item_variations")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The item.
    pub item_id: i64,
    /// Multi-language name.
    pub value: Json,
    /// Own price in cents; `None` takes the item's.
    pub default_price_cents: Option<i64>,
    /// Comparison price in cents.
    pub original_price_cents: Option<i64>,
    /// Whether it is sold.
    pub active: bool,
    /// Multi-language description.
    pub description: Option<Json>,
    /// Sort position.
    pub position: i32,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
