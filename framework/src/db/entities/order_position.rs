//! A position (one ticket or product) of an order. The selling migration adds its other
//! fields.

use sea_orm::entity::prelude::*;

/// A row of `order_positions`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "order_positions")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The order.
    pub order_id: i64,
    /// Number of the position within its order.
    pub positionid: i32,
    /// The item.
    pub item_id: i64,
    /// The variation.
    pub variation_id: Option<i64>,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// Price in cents.
    pub price_cents: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
