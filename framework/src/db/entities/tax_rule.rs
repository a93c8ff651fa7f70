//! A tax rule of an event.

use sea_orm::entity::prelude::*;

/// A row of `tax_rules`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "tax_rules")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Multi-language name.
    pub name: Json,
    /// Rate in hundredths of a percent (1900 is 19.00 %).
    pub rate_bps: i64,
    /// Whether prices include the tax.
    pub price_includes_tax: bool,
    /// Whether EU reverse charge applies.
    pub eu_reverse_charge: bool,
    /// ISO 3166 country code of the merchant.
    pub home_country: Option<String>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
