//! The mail outbox (mails written in the transaction that causes them, sent afterwards) and
//! the idempotency keys of API writes.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn create_outbox(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("outbox_mails")
            .col(big_pk_auto("id"))
            .col(big_integer_null("organizer_id"))
            .col(big_integer_null("event_id"))
            .col(string("to_address"))
            .col(string("subject"))
            .col(text("body_text"))
            .col(text_null("body_html"))
            .col(timestamp_with_time_zone("created"))
            .col(string("state"))
            .col(integer("attempts").default(0))
            .col(timestamp_with_time_zone("next_attempt_at"))
            .col(text_null("last_error"))
            .col(timestamp_with_time_zone_null("sent_at"))
            .foreign_key(&mut fk_set_null(
                "outbox_mails",
                "organizer_id",
                "organizers",
            ))
            .foreign_key(&mut fk_set_null("outbox_mails", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "outbox_mails_due",
        "outbox_mails",
        &["state", "next_attempt_at"],
    ))
    .await
}

async fn create_idempotency_keys(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("idempotency_keys")
            .col(big_pk_auto("id"))
            .col(string("credential"))
            .col(string("idempotency_key"))
            .col(string("method"))
            .col(text("path"))
            .col(string("state"))
            .col(integer_null("status"))
            .col(json_binary("headers").default("[]"))
            .col(blob_null("body"))
            .col(timestamp_with_time_zone("created"))
            .to_owned(),
    )
    .await?;
    m.create_index(unique_index(
        "idempotency_keys_credential_key",
        "idempotency_keys",
        &["credential", "idempotency_key"],
    ))
    .await?;
    m.create_index(index(
        "idempotency_keys_created",
        "idempotency_keys",
        &["created"],
    ))
    .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        create_outbox(m).await?;
        create_idempotency_keys(m).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["idempotency_keys", "outbox_mails"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
