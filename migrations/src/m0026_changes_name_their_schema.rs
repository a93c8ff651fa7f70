//! A configuration change announced on PostgreSQL names the schema of the table it touched
//! (the `NOTIFY` payload), so that processes serving one schema are not told of writes to
//! another in the same database: a process drops what it cached only for its own schema's
//! changes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The trigger function with the payload `payload` (an SQL expression).
fn changed(payload: &str) -> String {
    format!(
        "CREATE OR REPLACE FUNCTION tessera_config_changed() RETURNS trigger \
         LANGUAGE plpgsql AS $$ BEGIN \
         PERFORM nextval('config_version'); \
         PERFORM pg_notify('tessera_changes', {payload}); \
         RETURN NULL; END $$"
    )
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared(&changed("TG_TABLE_SCHEMA")).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared(&changed("''")).await?;
        }
        Ok(())
    }
}
