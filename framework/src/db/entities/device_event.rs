//! The events a device without `all_events` has access to.

use sea_orm::entity::prelude::*;

/// A row of `device_events`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "device_events")]
pub struct Model {
    /// The device (`devices.id`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_id: i64,
    /// The event.
    #[sea_orm(primary_key, auto_increment = false)]
    pub event_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
