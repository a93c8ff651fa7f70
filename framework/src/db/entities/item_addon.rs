//! An add-on category offered with an item.

use sea_orm::entity::prelude::*;

/// A row of `item_addons`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "item_addons")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The base item.
    pub item_id: i64,
    /// The add-on category.
    pub addon_category_id: i64,
    /// Least number of add-ons chosen.
    pub min_count: i32,
    /// Most number of add-ons chosen.
    pub max_count: i32,
    /// Sort position.
    pub position: i32,
    /// Whether the same add-on may be chosen repeatedly.
    pub multi_allowed: bool,
    /// Whether the add-ons are free.
    pub price_included: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
