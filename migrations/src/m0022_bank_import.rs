//! The bank transfer plugin's imports (`bank_import_jobs`), as pretix's `bankimportjobs`:
//! each job holds the transactions of one statement (`bank_transactions`), each with the
//! order it paid, if any. A transaction is known by its checksum once per organizer, so a
//! statement imported twice pays nothing twice.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("bank_import_jobs")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(big_integer_null("event_id"))
                .col(timestamp_with_time_zone("created"))
                .col(string_len("state", 16))
                .col(string_len("currency", 3))
                .foreign_key(&mut fk("bank_import_jobs", "organizer_id", "organizers"))
                .foreign_key(&mut fk("bank_import_jobs", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "bank_import_jobs_organizer",
            "bank_import_jobs",
            &["organizer_id", "id"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("bank_transactions")
                .col(big_pk_auto("id"))
                .col(big_integer("job_id"))
                .col(big_integer("organizer_id"))
                .col(string_len("state", 16))
                .col(text("message").default(""))
                .col(string_len("checksum", 64))
                .col(text("payer").default(""))
                .col(text("reference").default(""))
                .col(big_integer("amount_cents"))
                .col(string_len("date", 50))
                .col(big_integer_null("order_id"))
                .col(text("comment").default(""))
                .col(string_len("iban", 50).default(""))
                .col(string_len("bic", 20).default(""))
                .col(string_len("external_id", 255).default(""))
                .foreign_key(&mut fk("bank_transactions", "job_id", "bank_import_jobs"))
                .foreign_key(&mut fk("bank_transactions", "organizer_id", "organizers"))
                .foreign_key(&mut fk_set_null("bank_transactions", "order_id", "orders"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "bank_transactions_checksum",
            "bank_transactions",
            &["organizer_id", "checksum"],
        ))
        .await?;
        m.create_index(index(
            "bank_transactions_job",
            "bank_transactions",
            &["job_id", "id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("bank_transactions").to_owned())
            .await?;
        m.drop_table(Table::drop().table("bank_import_jobs").to_owned())
            .await
    }
}
