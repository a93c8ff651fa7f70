//! Webhooks of organizers (`webhooks`, with the events and action types each listens to),
//! and their calls (`webhook_calls`): one row per notification and webhook, written in the
//! transaction of the change it tells of, claimed by one process at a time for delivery,
//! retried until it succeeds or its retries run out, and kept 30 days.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("webhooks")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string_len("target_url", 255))
                .col(boolean("enabled"))
                .col(boolean("all_events"))
                .col(text("comment").default(""))
                .col(string_len("secret", 64))
                .foreign_key(&mut fk("webhooks", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_events")
                .col(big_integer("webhook_id"))
                .col(big_integer("event_id"))
                .primary_key(Index::create().col("webhook_id").col("event_id"))
                .foreign_key(&mut fk("webhook_events", "webhook_id", "webhooks"))
                .foreign_key(&mut fk("webhook_events", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_action_types")
                .col(big_integer("webhook_id"))
                .col(string_len("action_type", 100))
                .primary_key(Index::create().col("webhook_id").col("action_type"))
                .foreign_key(&mut fk("webhook_action_types", "webhook_id", "webhooks"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_calls")
                .col(big_pk_auto("id"))
                .col(big_integer("webhook_id"))
                .col(string_len("action_type", 100))
                .col(string("organizer"))
                .col(string_null("event"))
                .col(json_binary("payload"))
                .col(timestamp_with_time_zone("created"))
                .col(string_len("state", 16))
                .col(integer("attempts").default(0))
                .col(timestamp_with_time_zone("next_attempt"))
                .col(timestamp_with_time_zone_null("claimed_until"))
                .col(timestamp_with_time_zone_null("last_attempt"))
                .col(integer_null("return_code"))
                .col(big_integer_null("duration_ms"))
                .col(text("response_body").default(""))
                .foreign_key(&mut fk("webhook_calls", "webhook_id", "webhooks"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "webhook_calls_due",
            "webhook_calls",
            &["state", "next_attempt"],
        ))
        .await?;
        m.create_index(index(
            "webhook_calls_webhook",
            "webhook_calls",
            &["webhook_id", "id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "webhook_calls",
            "webhook_action_types",
            "webhook_events",
            "webhooks",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
