//! Scanning devices and the gates they stand at. A device is numbered per organizer
//! (`device_id`), provisioned once with an initialization token (kept readable until it is
//! used, so the QR code can be shown again, and as a SHA-256 hash for ever, so a second use
//! is recognised), and then authenticates with an API token stored only as a SHA-256 hash.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("gates")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string_len("name", 190))
                .col(string_len("identifier", 190))
                .foreign_key(&mut fk("gates", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "gates_organizer_identifier",
            "gates",
            &["organizer_id", "identifier"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("devices")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                // Numbered per organizer: the organizer's highest plus one.
                .col(big_integer("device_id"))
                .col(string_len_uniq("unique_serial", 16))
                .col(string_len("name", 190))
                .col(boolean("all_events").default(false))
                .col(string_len("security_profile", 190))
                .col(big_integer_null("gate_id"))
                // The initialization token while it is unused; cleared when it is used.
                .col(string_len_null("initialization_token", 16))
                .col(string_uniq("initialization_token_hash"))
                .col(string_null("api_token_hash"))
                .col(timestamp_with_time_zone_null("initialized"))
                .col(boolean("revoked").default(false))
                .col(timestamp_with_time_zone("created"))
                .col(string_len_null("hardware_brand", 190))
                .col(string_len_null("hardware_model", 190))
                .col(string_len_null("os_name", 190))
                .col(string_len_null("os_version", 190))
                .col(string_len_null("software_brand", 190))
                .col(string_len_null("software_version", 190))
                .col(json_binary_null("info"))
                .col(text_null("rsa_pubkey"))
                .foreign_key(&mut fk("devices", "organizer_id", "organizers"))
                .foreign_key(&mut fk_set_null("devices", "gate_id", "gates"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "devices_organizer_device_id",
            "devices",
            &["organizer_id", "device_id"],
        ))
        .await?;
        m.create_index(unique_index(
            "devices_api_token_hash",
            "devices",
            &["api_token_hash"],
        ))
        .await?;
        m.create_index(index("devices_gate", "devices", &["gate_id"]))
            .await?;
        m.create_table(
            Table::create()
                .table("device_events")
                .col(big_integer("device_id"))
                .col(big_integer("event_id"))
                .primary_key(Index::create().col("device_id").col("event_id"))
                .foreign_key(&mut fk("device_events", "device_id", "devices"))
                .foreign_key(&mut fk("device_events", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("device_events_event", "device_events", &["event_id"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in ["device_events", "devices", "gates"] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
