//! Configuration changes counted by the database itself: every committed write to a table
//! whose rows a process may keep in its cache moves a version, and on PostgreSQL announces
//! itself to every process (`NOTIFY tessera_changes`, delivered only when the transaction
//! commits). Nothing but such a write moves it: not a refused request, not a rolled-back one.
//!
//! On PostgreSQL the version is a sequence (no row lock, so configuration writes never queue
//! behind each other or deadlock with order placement); on SQLite, where writers are serial
//! anyway, it is a one-row table.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Tables whose rows the process cache keeps, directly or in finished answers: callers
/// (organizers, teams, their events and tokens), events and their settings, and the
/// catalogue that item lists and order placement read. A new table read by the cache belongs
/// here (in a migration of its own).
pub const CONFIG_TABLES: [&str; 22] = [
    "organizers",
    "teams",
    "team_events",
    "team_tokens",
    "events",
    "settings",
    "subevents",
    "subevent_item_prices",
    "tax_rules",
    "categories",
    "items",
    "item_variations",
    "item_addons",
    "item_bundles",
    "meta_properties",
    "quotas",
    "quota_items",
    "quota_variations",
    "questions",
    "question_items",
    "question_options",
    "seating_plans",
];

/// The PostgreSQL channel every process listens on.
const CHANNEL: &str = "tessera_changes";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        match db.get_database_backend() {
            DbBackend::Postgres => {
                db.execute_unprepared("CREATE SEQUENCE config_version")
                    .await?;
                db.execute_unprepared(&format!(
                    "CREATE FUNCTION tessera_config_changed() RETURNS trigger \
                     LANGUAGE plpgsql AS $$ BEGIN \
                     PERFORM nextval('config_version'); \
                     PERFORM pg_notify('{CHANNEL}', ''); \
                     RETURN NULL; END $$"
                ))
                .await?;
            }
            _ => {
                db.execute_unprepared(
                    "CREATE TABLE config_version \
                     (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)",
                )
                .await?;
                db.execute_unprepared("INSERT INTO config_version (id, version) VALUES (1, 1)")
                    .await?;
            }
        }
        watch(db, &CONFIG_TABLES).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        unwatch(db, &CONFIG_TABLES).await?;
        match db.get_database_backend() {
            DbBackend::Postgres => {
                db.execute_unprepared("DROP FUNCTION IF EXISTS tessera_config_changed()")
                    .await?;
                db.execute_unprepared("DROP SEQUENCE IF EXISTS config_version")
                    .await?;
            }
            _ => {
                db.execute_unprepared("DROP TABLE IF EXISTS config_version")
                    .await?;
            }
        }
        Ok(())
    }
}

/// Makes every committed write to `tables` move the configuration version (and on
/// PostgreSQL announce itself): for tables whose rows the process cache keeps.
pub(crate) async fn watch(db: &SchemaManagerConnection<'_>, tables: &[&str]) -> Result<(), DbErr> {
    for table in tables {
        match db.get_database_backend() {
            DbBackend::Postgres => {
                db.execute_unprepared(&format!(
                    "CREATE TRIGGER {table}_config_changed \
                     AFTER INSERT OR UPDATE OR DELETE ON {table} \
                     FOR EACH STATEMENT EXECUTE FUNCTION tessera_config_changed()"
                ))
                .await?;
            }
            _ => {
                for op in ["INSERT", "UPDATE", "DELETE"] {
                    db.execute_unprepared(&format!(
                        "CREATE TRIGGER {table}_config_{op} AFTER {op} ON {table} \
                         BEGIN UPDATE config_version SET version = version + 1 \
                         WHERE id = 1; END",
                        op = op.to_ascii_lowercase()
                    ))
                    .await?;
                }
            }
        }
    }
    Ok(())
}

/// Undoes [`watch`].
pub(crate) async fn unwatch(
    db: &SchemaManagerConnection<'_>,
    tables: &[&str],
) -> Result<(), DbErr> {
    for table in tables {
        match db.get_database_backend() {
            DbBackend::Postgres => {
                db.execute_unprepared(&format!(
                    "DROP TRIGGER IF EXISTS {table}_config_changed ON {table}"
                ))
                .await?;
            }
            _ => {
                for op in ["insert", "update", "delete"] {
                    db.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {table}_config_{op}"))
                        .await?;
                }
            }
        }
    }
    Ok(())
}
