//! Somebody waiting for a sold-out product.

use sea_orm::entity::prelude::*;

/// A row of `waiting_list_entries`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "waiting_list_entries")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// When it was created.
    pub created: DateTimeUtc,
    /// Name parts.
    pub name_parts: Option<Json>,
    /// E-mail address.
    pub email: String,
    /// Phone number.
    pub phone: Option<String>,
    /// Voucher sent.
    pub voucher_id: Option<i64>,
    /// The item.
    pub item_id: i64,
    /// The variation.
    pub variation_id: Option<i64>,
    /// Language.
    pub locale: String,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// Higher is served first.
    pub priority: i32,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
