//! An organizer: the account that owns events, gift cards, teams and seating plans.

use sea_orm::entity::prelude::*;

/// A row of `organizers`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "organizers")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Short name used in URLs.
    pub slug: String,
    /// Display name.
    pub name: String,
    /// When the organizer was created.
    pub created: DateTimeUtc,
    /// The reseller account that created it, if any.
    pub reseller_id: Option<i64>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
