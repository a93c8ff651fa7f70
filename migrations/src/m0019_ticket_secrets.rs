//! Ticket secrets and what scanners sync offline: secrets that no longer admit anyone
//! (`revoked_secrets`: replaced by a new signature or canceled), secrets blocked for a time
//! (`blocked_secrets`, updated in place so scanners see them unblocked), and each event's
//! catalogue change time (`catalogue_changes`), kept by triggers on every table whose rows
//! the item, category and question lists show, for their conditional GET.

use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Tables the catalogue lists show, with the expression finding the event of a row `R`
/// (`NEW` or `OLD`).
const CATALOGUE_TABLES: [(&str, &str); 10] = [
    // Items show their event's meta data defaults.
    ("events", "R.id"),
    ("tax_rules", "R.event_id"),
    ("categories", "R.event_id"),
    ("items", "R.event_id"),
    ("questions", "R.event_id"),
    (
        "item_variations",
        "(SELECT i.event_id FROM items i WHERE i.id = R.item_id)",
    ),
    (
        "item_addons",
        "(SELECT i.event_id FROM items i WHERE i.id = R.item_id)",
    ),
    (
        "item_bundles",
        "(SELECT i.event_id FROM items i WHERE i.id = R.item_id)",
    ),
    (
        "question_options",
        "(SELECT q.event_id FROM questions q WHERE q.id = R.question_id)",
    ),
    (
        "question_items",
        "(SELECT q.event_id FROM questions q WHERE q.id = R.question_id)",
    ),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("revoked_secrets")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(big_integer("position_id"))
                .col(string_len("secret", 255))
                .col(timestamp_with_time_zone("created"))
                .foreign_key(&mut fk("revoked_secrets", "event_id", "events"))
                .foreign_key(&mut fk("revoked_secrets", "position_id", "order_positions"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "revoked_secrets_event_secret",
            "revoked_secrets",
            &["event_id", "secret"],
        ))
        .await?;
        m.create_index(index(
            "revoked_secrets_event_created",
            "revoked_secrets",
            &["event_id", "created"],
        ))
        .await?;
        m.create_index(index(
            "revoked_secrets_position",
            "revoked_secrets",
            &["position_id"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("blocked_secrets")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(big_integer_null("position_id"))
                .col(string_len("secret", 255))
                .col(boolean("blocked"))
                .col(timestamp_with_time_zone("updated"))
                .foreign_key(&mut fk("blocked_secrets", "event_id", "events"))
                .foreign_key(&mut fk_set_null(
                    "blocked_secrets",
                    "position_id",
                    "order_positions",
                ))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "blocked_secrets_event_secret",
            "blocked_secrets",
            &["event_id", "secret"],
        ))
        .await?;
        m.create_index(index(
            "blocked_secrets_event_updated",
            "blocked_secrets",
            &["event_id", "updated"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("catalogue_changes")
                .col(big_integer("event_id").primary_key())
                // Microseconds since the Unix epoch of the last write.
                .col(big_integer("modified_us"))
                .foreign_key(&mut fk("catalogue_changes", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        let db = m.get_connection();
        let postgres = db.get_database_backend() == DbBackend::Postgres;
        for (table, event) in CATALOGUE_TABLES {
            for (op, row) in [("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")] {
                let event = event.replace("R.", &format!("{row}."));
                let lower = op.to_ascii_lowercase();
                if postgres {
                    db.execute_unprepared(&format!(
                        "CREATE FUNCTION {table}_catalogue_{lower}() RETURNS trigger \
                         LANGUAGE plpgsql AS $$ BEGIN \
                         INSERT INTO catalogue_changes (event_id, modified_us) \
                         SELECT e.id, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint \
                         FROM events e WHERE e.id = {event} \
                         ON CONFLICT (event_id) DO UPDATE SET modified_us = \
                         GREATEST(catalogue_changes.modified_us + 1, EXCLUDED.modified_us); \
                         RETURN NULL; END $$"
                    ))
                    .await?;
                    db.execute_unprepared(&format!(
                        "CREATE TRIGGER {table}_catalogue_{lower} AFTER {op} ON {table} \
                         FOR EACH ROW EXECUTE FUNCTION {table}_catalogue_{lower}()"
                    ))
                    .await?;
                } else {
                    let now = "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)";
                    db.execute_unprepared(&format!(
                        "CREATE TRIGGER {table}_catalogue_{lower} AFTER {op} ON {table} BEGIN \
                         INSERT OR IGNORE INTO catalogue_changes (event_id, modified_us) \
                         SELECT e.id, 0 FROM events e WHERE e.id = {event}; \
                         UPDATE catalogue_changes SET modified_us = \
                         MAX(modified_us + 1, {now}) WHERE event_id = {event}; END"
                    ))
                    .await?;
                }
            }
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let postgres = db.get_database_backend() == DbBackend::Postgres;
        for (table, _) in CATALOGUE_TABLES {
            for op in ["insert", "update", "delete"] {
                if postgres {
                    db.execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS {table}_catalogue_{op} ON {table}"
                    ))
                    .await?;
                    db.execute_unprepared(&format!(
                        "DROP FUNCTION IF EXISTS {table}_catalogue_{op}()"
                    ))
                    .await?;
                } else {
                    db.execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS {table}_catalogue_{op}"
                    ))
                    .await?;
                }
            }
        }
        for t in ["catalogue_changes", "blocked_secrets", "revoked_secrets"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
