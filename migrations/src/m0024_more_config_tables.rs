//! More tables the process cache keeps: check-in lists with their products and gates (what
//! every scan reads), and webhooks with the events and action types they listen to (whether a change must be
//! told at all).

use sea_orm_migration::prelude::*;

use crate::m0010_config_changes::{unwatch, watch};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The tables this migration adds to `CONFIG_TABLES`'s.
pub const TABLES: [&str; 6] = [
    "checkin_lists",
    "checkinlist_items",
    "checkinlist_gates",
    "webhooks",
    "webhook_events",
    "webhook_action_types",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        watch(manager.get_connection(), &TABLES).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        unwatch(manager.get_connection(), &TABLES).await
    }
}
