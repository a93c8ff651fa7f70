//! An item a quota acts on.

use sea_orm::entity::prelude::*;

/// A row of `quota_items`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "quota_items")]
pub struct Model {
    /// The quota.
    #[sea_orm(primary_key, auto_increment = false)]
    pub quota_id: i64,
    /// The item.
    #[sea_orm(primary_key, auto_increment = false)]
    pub item_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
