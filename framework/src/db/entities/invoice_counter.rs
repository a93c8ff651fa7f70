//! The last number an organizer issued under an invoice prefix.

use sea_orm::entity::prelude::*;

/// A row of `invoice_counters`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "invoice_counters")]
pub struct Model {
    /// The organizer.
    #[sea_orm(primary_key, auto_increment = false)]
    pub organizer_id: i64,
    /// The prefix, as expanded for the invoice's date (and with `TEST-` in test mode).
    #[sea_orm(primary_key, auto_increment = false)]
    pub prefix: String,
    /// The last number issued.
    pub last: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
