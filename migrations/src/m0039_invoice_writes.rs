//! An invoice is written with every order of an event that issues them at once, so each
//! index and check on `invoices` costs every such sale. An invoice's organizer and event
//! follow from its order, whose deletion removes it: their foreign keys go (on PostgreSQL;
//! SQLite cannot drop one). One unique index on (organizer, full number) finds an invoice by
//! its number, lists them in the order of pretix's `nr` and refuses a second invoice printed
//! with the same number; the indexes on (organizer, prefix, number) and (event, id) go.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::schema_helpers::{fk, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "invoices";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for name in ["invoices_number", "invoices_event", "invoices_full_number"] {
            m.drop_index(Index::drop().name(name).table(TABLE).to_owned())
                .await?;
        }
        m.create_index(unique_index(
            "invoices_by_number",
            TABLE,
            &["organizer_id", "full_invoice_no"],
        ))
        .await?;
        if m.get_database_backend() == DbBackend::Postgres {
            m.get_connection()
                .execute_unprepared(
                    "ALTER TABLE invoices DROP CONSTRAINT invoices_organizer_id_fkey, \
                     DROP CONSTRAINT invoices_event_id_fkey",
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            for (col, to) in [("organizer_id", "organizers"), ("event_id", "events")] {
                m.create_foreign_key(fk(TABLE, col, to)).await?;
            }
        }
        m.drop_index(
            Index::drop()
                .name("invoices_by_number")
                .table(TABLE)
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "invoices_number",
            TABLE,
            &["organizer_id", "prefix", "invoice_no"],
        ))
        .await?;
        m.create_index(index(
            "invoices_full_number",
            TABLE,
            &["organizer_id", "full_invoice_no"],
        ))
        .await?;
        m.create_index(index("invoices_event", TABLE, &["event_id", "id"]))
            .await
    }
}
