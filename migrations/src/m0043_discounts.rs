//! Automatic discounts as pretix 2026 keeps them: rules of an event that lower the price of
//! matching products in a cart once enough of them (or enough value) are bought together.
//! The products and sales channels a rule names are lists of IDs and identifiers: a rule
//! names few, and is read whole with the event's products. Discounts are configuration, so
//! writing them moves the process cache's generation.
//!
//! Order positions name the discount that priced them; a discount that priced an order
//! position cannot be deleted. A shop cart keeps its undiscounted prices: its discounts are
//! worked out whenever it is shown or becomes an order, so no cart change has to redo them.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m0010_config_changes::{unwatch, watch};
use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The tables this migration adds to `CONFIG_TABLES`'s.
pub const TABLES: [&str; 1] = ["discounts"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("discounts")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(boolean("active"))
                .col(string_len("internal_name", 255))
                .col(integer("position"))
                .col(boolean("all_sales_channels"))
                .col(json_binary("limit_sales_channels"))
                .col(timestamp_with_time_zone_null("available_from"))
                .col(timestamp_with_time_zone_null("available_until"))
                .col(string_len("subevent_mode", 50))
                .col(timestamp_with_time_zone_null("subevent_date_from"))
                .col(timestamp_with_time_zone_null("subevent_date_until"))
                .col(boolean("condition_all_products"))
                .col(json_binary("condition_limit_products"))
                .col(boolean("condition_apply_to_addons"))
                .col(boolean("condition_ignore_voucher_discounted"))
                .col(integer("condition_min_count"))
                .col(big_integer("condition_min_value_cents"))
                .col(boolean("benefit_same_products"))
                .col(json_binary("benefit_limit_products"))
                .col(integer("benefit_percent_bps"))
                .col(integer_null("benefit_only_apply_to_cheapest_n_matches"))
                .col(boolean("benefit_apply_to_addons"))
                .col(boolean("benefit_ignore_voucher_discounted"))
                .foreign_key(&mut fk("discounts", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("discounts_event", "discounts", &["event_id"]))
            .await?;
        // A reference the database keeps: a discount is not deleted while a position names
        // it, even one an order placed at the same moment. (Written out: SQLite adds a
        // column with a reference only this way.)
        m.get_connection()
            .execute_unprepared(
                "ALTER TABLE order_positions ADD COLUMN discount_id BIGINT NULL \
                 REFERENCES discounts (id)",
            )
            .await?;
        m.create_index(index(
            "order_positions_discount",
            "order_positions",
            &["discount_id"],
        ))
        .await?;
        watch(m.get_connection(), &TABLES).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        unwatch(m.get_connection(), &TABLES).await?;
        m.drop_index(
            Index::drop()
                .name("order_positions_discount")
                .table("order_positions")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("order_positions")
                .drop_column("discount_id")
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table("discounts").to_owned())
            .await
    }
}
