//! An automatic discount of an event.

use sea_orm::entity::prelude::*;

/// A row of `discounts`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "discounts")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Whether it applies at all.
    pub active: bool,
    /// Name shown in the back end.
    pub internal_name: String,
    /// Order in which discounts are tried.
    pub position: i32,
    /// Whether it applies on every sales channel.
    pub all_sales_channels: bool,
    /// The sales channels' identifiers it applies on otherwise (JSON list).
    pub limit_sales_channels: Json,
    /// Start of its availability.
    pub available_from: Option<DateTimeUtc>,
    /// End of its availability.
    pub available_until: Option<DateTimeUtc>,
    /// `mixed`, `same` or `distinct`: how dates of a series combine.
    pub subevent_mode: String,
    /// Only dates starting from this.
    pub subevent_date_from: Option<DateTimeUtc>,
    /// Only dates starting until this.
    pub subevent_date_until: Option<DateTimeUtc>,
    /// Whether every product counts towards the condition.
    pub condition_all_products: bool,
    /// The items that count otherwise (JSON list of IDs).
    pub condition_limit_products: Json,
    /// Whether add-ons count.
    pub condition_apply_to_addons: bool,
    /// Whether products a voucher made cheaper are left out of the condition.
    pub condition_ignore_voucher_discounted: bool,
    /// Matching products needed (0: a value is needed instead).
    pub condition_min_count: i32,
    /// Gross value of matching products needed, in cents (0: a count is needed instead).
    pub condition_min_value_cents: i64,
    /// Whether the products discounted are those counted.
    pub benefit_same_products: bool,
    /// The items discounted otherwise (JSON list of IDs).
    pub benefit_limit_products: Json,
    /// The discount in hundredths of a percent.
    pub benefit_percent_bps: i32,
    /// Only this many of the cheapest matching products of each group are discounted.
    pub benefit_only_apply_to_cheapest_n_matches: Option<i32>,
    /// Whether add-ons are discounted.
    pub benefit_apply_to_addons: bool,
    /// Whether products a voucher made cheaper are left undiscounted.
    pub benefit_ignore_voucher_discounted: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
