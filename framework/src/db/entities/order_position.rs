//! A position (one ticket or product) of an order.

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
    /// Price in cents, taxes included.
    pub price_cents: i64,
    /// Attendee name parts.
    pub attendee_name_parts: Json,
    /// Attendee e-mail.
    pub attendee_email: Option<String>,
    /// Voucher redeemed.
    pub voucher_id: Option<i64>,
    /// The automatic discount that priced it, if any.
    pub discount_id: Option<i64>,
    /// Tax rule applied.
    pub tax_rule_id: Option<i64>,
    /// Tax rate in basis points.
    pub tax_rate_bps: i64,
    /// Tax included in the price.
    pub tax_value_cents: i64,
    /// Ticket secret.
    pub secret: String,
    /// Seat.
    pub seat_id: Option<i64>,
    /// Answers to questions.
    pub answers: Json,
    /// The position this one is an add-on to.
    pub addon_to_id: Option<i64>,
    /// Admits from this instant on.
    pub valid_from: Option<DateTimeUtc>,
    /// Admits until this instant.
    pub valid_until: Option<DateTimeUtc>,
    /// Canceled alone (an order change): it holds nothing and admits no one.
    pub canceled: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
