//! A fee of an order.

use sea_orm::entity::prelude::*;

/// A row of `order_fees`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "order_fees")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The order.
    pub order_id: i64,
    /// `payment`, `shipping`, `service`, `cancellation`, `insurance`, `late`, `other` or `giftcard`.
    pub fee_type: String,
    /// Amount in cents.
    pub value_cents: i64,
    /// Description.
    pub description: String,
    /// Internal type.
    pub internal_type: Option<String>,
    /// Tax rule.
    pub tax_rule_id: Option<i64>,
    /// Tax rate in basis points.
    pub tax_rate_bps: i64,
    /// Tax included.
    pub tax_value_cents: i64,
    /// Canceled alone (an order change): it no longer counts in the total.
    pub canceled: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
