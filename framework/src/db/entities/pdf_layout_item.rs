//! Which layout prints a product's tickets (or badges) in a sales channel.

use sea_orm::entity::prelude::*;

/// A row of `pdf_layout_items`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "pdf_layout_items")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The layout.
    pub layout_id: i64,
    /// The product.
    pub item_id: i64,
    /// The sales channel's identifier.
    pub sales_channel: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
