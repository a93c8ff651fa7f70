//! A print of a position's badge or ticket, as a scanner reports it.

use sea_orm::entity::prelude::*;

/// A row of `print_logs`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "print_logs")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The position printed.
    pub position_id: i64,
    /// Whether the print succeeded.
    pub successful: bool,
    /// When it was printed.
    pub datetime: DateTimeUtc,
    /// When it was reported.
    pub created: DateTimeUtc,
    /// What printed it (`pretixscan`, ...).
    pub source: String,
    /// `badge`, `ticket`, `certificate` or `other`.
    #[sea_orm(column_name = "type")]
    pub kind: String,
    /// The reporting device's `device_id`, when a device reported it.
    pub device_id: Option<i64>,
    /// What the printer says of it.
    pub info: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
