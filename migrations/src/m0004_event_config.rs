//! Event configuration: item categories, tax rules, and the dates of event series
//! (sub-events) with their item price overrides.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("categories")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(json_binary("name"))
                .col(string_null("internal_name"))
                .col(json_binary_null("description"))
                .col(integer("position").default(0))
                .col(boolean("is_addon").default(false))
                .foreign_key(&mut fk("categories", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("categories_event", "categories", &["event_id"]))
            .await?;

        // The rate is kept exactly, in hundredths of a percent: 19.00 % is 1900.
        m.create_table(
            Table::create()
                .table("tax_rules")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(json_binary("name"))
                .col(big_integer("rate_bps"))
                .col(boolean("price_includes_tax").default(true))
                .col(boolean("eu_reverse_charge").default(false))
                .col(string_len_null("home_country", 2))
                .foreign_key(&mut fk("tax_rules", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("tax_rules_event", "tax_rules", &["event_id"]))
            .await?;

        m.create_table(
            Table::create()
                .table("subevents")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(json_binary("name"))
                .col(boolean("active").default(false))
                .col(timestamp_with_time_zone("date_from"))
                .col(timestamp_with_time_zone_null("date_to"))
                .col(timestamp_with_time_zone_null("date_admission"))
                .col(timestamp_with_time_zone_null("presale_start"))
                .col(timestamp_with_time_zone_null("presale_end"))
                .col(json_binary_null("location"))
                .col(json_binary("meta_data").default("{}"))
                .foreign_key(&mut fk("subevents", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "subevents_event_date",
            "subevents",
            &["event_id", "date_from"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("subevent_item_prices")
                .col(big_integer("subevent_id"))
                .col(big_integer("item_id"))
                .col(big_integer("price_cents"))
                .primary_key(Index::create().col("subevent_id").col("item_id"))
                .foreign_key(&mut fk("subevent_item_prices", "subevent_id", "subevents"))
                .foreign_key(&mut fk("subevent_item_prices", "item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "subevent_item_prices_item",
            "subevent_item_prices",
            &["item_id"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "subevent_item_prices",
            "subevents",
            "tax_rules",
            "categories",
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
