//! An item bundled into another.

use sea_orm::entity::prelude::*;

/// A row of `item_bundles`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "item_bundles")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The base item.
    pub item_id: i64,
    /// The included item.
    pub bundled_item_id: i64,
    /// The included variation.
    pub bundled_variation_id: Option<i64>,
    /// How many are included.
    pub count: i32,
    /// Share of the base price, in cents.
    pub designated_price_cents: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
