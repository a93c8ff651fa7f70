//! Capacity of a quota held by one kind of thing (paid orders, carts...) until an instant.

use sea_orm::entity::prelude::*;

/// A row of `quota_holds`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "quota_holds")]
pub struct Model {
    /// The quota.
    #[sea_orm(primary_key, auto_increment = false)]
    pub quota_id: i64,
    /// What holds it: `paid`, `pending`, `exited`, `cart`, `voucher`, `waiting_list`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub kind: String,
    /// Microseconds since the epoch when the hold ends; `i64::MAX` for never.
    #[sea_orm(primary_key, auto_increment = false)]
    pub expires_us: i64,
    /// Units held.
    pub count: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
