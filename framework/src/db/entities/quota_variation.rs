//! A variation a quota acts on.

use sea_orm::entity::prelude::*;

/// A row of `quota_variations`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "quota_variations")]
pub struct Model {
    /// The quota.
    #[sea_orm(primary_key, auto_increment = false)]
    pub quota_id: i64,
    /// The variation.
    #[sea_orm(primary_key, auto_increment = false)]
    pub variation_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
