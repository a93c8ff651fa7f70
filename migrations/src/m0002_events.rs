//! Events with every field, organizer meta properties, settings of organizers and events,
//! and the first columns of items and orders (later migrations add the rest).

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        let columns = [
            boolean("live").default(false).to_owned(),
            boolean("testmode").default(false).to_owned(),
            timestamp_with_time_zone_null("date_to"),
            timestamp_with_time_zone_null("date_admission"),
            boolean("is_public").default(true).to_owned(),
            timestamp_with_time_zone_null("presale_start"),
            timestamp_with_time_zone_null("presale_end"),
            json_binary_null("location"),
            double_null("geo_lat"),
            double_null("geo_lon"),
            boolean("has_subevents").default(false).to_owned(),
            json_binary("plugins").default("[]").to_owned(),
            big_integer_null("seating_plan_id"),
            json_binary("seat_category_mapping")
                .default("{}")
                .to_owned(),
            string("timezone").default("UTC").to_owned(),
            json_binary("item_meta_properties").default("{}").to_owned(),
            json_binary("meta_data").default("{}").to_owned(),
            json_binary("sales_channels")
                .default("[\"web\"]")
                .to_owned(),
            text("public_key").default("").to_owned(),
            text("private_key").default("").to_owned(),
        ];
        for mut col in columns {
            m.alter_table(
                Table::alter()
                    .table("events")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }

        m.create_table(
            Table::create()
                .table("meta_properties")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string("name"))
                .col(text("default_value").default(""))
                .col(json_binary("allowed_values").default("[]"))
                .col(boolean("required").default(false))
                .foreign_key(&mut fk("meta_properties", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "meta_properties_organizer_name",
            "meta_properties",
            &["organizer_id", "name"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("settings")
                .col(string("scope"))
                .col(big_integer("owner_id"))
                .col(string("key"))
                .col(json_binary("value"))
                .primary_key(Index::create().col("scope").col("owner_id").col("key"))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("items")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(json_binary("name"))
                .col(big_integer("default_price_cents").default(0))
                .col(integer("position").default(0))
                .col(boolean("active").default(true))
                .col(big_integer_null("category_id"))
                .col(big_integer_null("tax_rule_id"))
                .foreign_key(&mut fk("items", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("items_event", "items", &["event_id"]))
            .await?;

        m.create_table(
            Table::create()
                .table("orders")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string("code"))
                .col(string_len("status", 1))
                .col(timestamp_with_time_zone("datetime"))
                .foreign_key(&mut fk("orders", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "orders_event_code",
            "orders",
            &["event_id", "code"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["orders", "items", "settings", "meta_properties"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
