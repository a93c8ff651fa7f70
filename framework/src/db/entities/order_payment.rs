//! A payment of an order.

use sea_orm::entity::prelude::*;

/// A row of `order_payments`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "order_payments")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The order.
    pub order_id: i64,
    /// Number within the order.
    pub local_id: i32,
    /// `created`, `pending`, `confirmed`, `canceled`, `failed` or `refunded`.
    pub state: String,
    /// Amount in cents.
    pub amount_cents: i64,
    /// Payment provider identifier.
    pub provider: String,
    /// When it was created.
    pub created: DateTimeUtc,
    /// When it was confirmed.
    pub payment_date: Option<DateTimeUtc>,
    /// Provider-specific details.
    pub details: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
