//! An item (product) of an event.

use sea_orm::entity::prelude::*;

/// A row of `items`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "items")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Multi-language name.
    pub name: Json,
    /// Price in cents.
    pub default_price_cents: i64,
    /// Sort position.
    pub position: i32,
    /// Whether it is sold.
    pub active: bool,
    /// Category.
    pub category_id: Option<i64>,
    /// Tax rule.
    pub tax_rule_id: Option<i64>,
    /// Back-end name.
    pub internal_name: Option<String>,
    /// Multi-language description.
    pub description: Option<Json>,
    /// Whether buyers may pay more.
    pub free_price: bool,
    /// Whether it grants admission.
    pub admission: bool,
    /// Key of the picture in `files`.
    pub picture: Option<String>,
    /// Sales channels (list of strings).
    pub sales_channels: Json,
    /// First time it can be bought.
    pub available_from: Option<DateTimeUtc>,
    /// Last time it can be bought.
    pub available_until: Option<DateTimeUtc>,
    /// Quota whose availability hides it.
    pub hidden_if_available: Option<i64>,
    /// Only buyable with a voucher.
    pub require_voucher: bool,
    /// Shown only when redeeming a voucher.
    pub hide_without_voucher: bool,
    /// Whether customers may cancel orders with it.
    pub allow_cancel: bool,
    /// Minimum count per order.
    pub min_per_order: Option<i32>,
    /// Maximum count per order.
    pub max_per_order: Option<i32>,
    /// Check-in warns when scanned.
    pub checkin_attention: bool,
    /// Comparison price in cents.
    pub original_price_cents: Option<i64>,
    /// Orders need approval.
    pub require_approval: bool,
    /// Only sold within bundles.
    pub require_bundling: bool,
    /// Ticket generation override.
    pub generate_tickets: Option<bool>,
    /// Waiting list offered when sold out.
    pub allow_waitinglist: bool,
    /// Buying yields a gift card.
    pub issue_giftcard: bool,
    /// Show remaining availability; `None` is the event default.
    pub show_quota_left: Option<bool>,
    /// Whether it has variations; fixed at creation.
    pub has_variations: bool,
    /// Values of the event's item meta properties (object).
    pub meta_data: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
