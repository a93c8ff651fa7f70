//! What a buyer entered at the shop's checkout, per cart, and the order it became.

use sea_orm::entity::prelude::*;

/// A row of `checkouts`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "checkouts")]
pub struct Model {
    /// The event.
    #[sea_orm(primary_key, auto_increment = false)]
    pub event_id: i64,
    /// The cart.
    #[sea_orm(primary_key, auto_increment = false)]
    pub cart_id: String,
    /// What was entered (contact, answers, invoice address, payment provider).
    pub entered: Json,
    /// The code of the order placed from the cart, once placed.
    pub order_code: Option<String>,
    /// When it last changed.
    pub updated: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
