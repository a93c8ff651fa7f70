//! A refund of an order.

use sea_orm::entity::prelude::*;

/// A row of `order_refunds`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "order_refunds")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The order.
    pub order_id: i64,
    /// Number within the order.
    pub local_id: i32,
    /// `created`, `transit`, `done`, `canceled`, `failed` or `external`.
    pub state: String,
    /// Who started it: `admin`, `buyer` or `external`.
    pub source: String,
    /// Amount in cents.
    pub amount_cents: i64,
    /// The payment it gives back (`order_payments.id`).
    pub payment_id: Option<i64>,
    /// Payment provider identifier.
    pub provider: String,
    /// When it was created.
    pub created: DateTimeUtc,
    /// When it was done.
    pub execution_date: Option<DateTimeUtc>,
    /// Internal comment.
    pub comment: String,
    /// Provider-specific details (`info`).
    pub details: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
