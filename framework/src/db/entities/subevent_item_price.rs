//! The price of an item on one date of an event series, overriding its default price.

use sea_orm::entity::prelude::*;

/// A row of `subevent_item_prices`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "subevent_item_prices")]
pub struct Model {
    /// The sub-event.
    #[sea_orm(primary_key, auto_increment = false)]
    pub subevent_id: i64,
    /// The item.
    #[sea_orm(primary_key, auto_increment = false)]
    pub item_id: i64,
    /// Price in cents.
    pub price_cents: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
