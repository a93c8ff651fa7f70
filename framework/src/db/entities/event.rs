//! An event of an organizer.

use sea_orm::entity::prelude::*;

/// A row of `events`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer the event belongs to.
    pub organizer_id: i64,
    /// Short name used in URLs, unique per organizer.
    pub slug: String,
    /// Multi-language name.
    pub name: Json,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Start of the event.
    pub date_from: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
