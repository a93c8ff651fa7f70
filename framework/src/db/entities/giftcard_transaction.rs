//! One entry of a gift card's ledger.

use sea_orm::entity::prelude::*;

/// A row of `giftcard_transactions`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "giftcard_transactions")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The card.
    pub card_id: i64,
    /// The organizer that booked the transaction.
    pub acceptor_id: i64,
    /// When it was booked.
    pub datetime: DateTimeUtc,
    /// Signed amount in cents.
    pub value_cents: i64,
    /// The event, when used in a shop.
    pub event_id: Option<i64>,
    /// The order code, when used in a shop.
    pub order_code: Option<String>,
    /// Free text.
    pub text: Option<String>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
