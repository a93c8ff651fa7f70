//! Ticket and badge layouts, and their assignments to products, are configuration: the
//! process cache keeps an event's layouts for its downloads, so writing them moves the
//! cache's generation like any other configuration table.

use sea_orm_migration::prelude::*;

use crate::m0010_config_changes::{unwatch, watch};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The tables this migration adds to `CONFIG_TABLES`'s.
pub const TABLES: [&str; 2] = ["pdf_layouts", "pdf_layout_items"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        watch(manager.get_connection(), &TABLES).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        unwatch(manager.get_connection(), &TABLES).await
    }
}
