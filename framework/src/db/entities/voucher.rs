//! A voucher of an event.

use sea_orm::entity::prelude::*;

/// A row of `vouchers`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "vouchers")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Code, unique per event.
    pub code: String,
    /// How often it can be redeemed.
    pub max_usages: i32,
    /// How often it was redeemed.
    pub redeemed: i32,
    /// End of validity.
    pub valid_until: Option<DateTimeUtc>,
    /// Reserves quota for its unused redemptions.
    pub block_quota: bool,
    /// Can be redeemed even when the quota is used up.
    pub allow_ignore_quota: bool,
    /// `none`, `set`, `subtract` or `percent`.
    pub price_mode: String,
    /// Price, amount or percentage (in hundredths) the price mode uses.
    pub value_cents: i64,
    /// Item it is limited to.
    pub item_id: Option<i64>,
    /// Variation it is limited to.
    pub variation_id: Option<i64>,
    /// Quota it is limited to.
    pub quota_id: Option<i64>,
    /// Seat it is limited to.
    pub seat_id: Option<i64>,
    /// Date of a series it is limited to.
    pub subevent_id: Option<i64>,
    /// Tag for grouping.
    pub tag: String,
    /// Internal comment.
    pub comment: String,
    /// Shows items hidden without a voucher.
    pub show_hidden_items: bool,
    /// Offers every add-on free of charge with the product it is redeemed for.
    pub all_addons_included: bool,
    /// Includes what comes bundled with the product it is redeemed for free of charge.
    pub all_bundles_included: bool,
    /// When it was created.
    pub created: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
