//! A channel an organizer sells on (the online shop, resellers, an API integration).

use sea_orm::entity::prelude::*;

/// A row of `sales_channels`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sales_channels")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Identifier items, events and orders name it by; unique per organizer.
    pub identifier: String,
    /// Kind: `web`, `resellers`, or `api`.
    #[sea_orm(column_name = "type")]
    pub kind: String,
    /// Name (JSON i18n string).
    pub label: Json,
    /// Place in lists.
    pub position: i32,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
