//! Selling: the rest of orders and their positions, fees and payments, cart positions,
//! vouchers and waiting list entries.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Adds one column per statement (SQLite alters one column at a time).
async fn add_columns(
    m: &SchemaManager<'_>,
    table: &'static str,
    cols: Vec<ColumnDef>,
) -> Result<(), DbErr> {
    for mut col in cols {
        m.alter_table(Table::alter().table(table).add_column(&mut col).to_owned())
            .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        add_columns(
            m,
            "orders",
            vec![
                boolean("testmode").default(false).to_owned(),
                string("secret").default("").to_owned(),
                string_null("email").to_owned(),
                string_null("phone").to_owned(),
                string("locale").default("en").to_owned(),
                timestamp_with_time_zone_null("expires").to_owned(),
                boolean("expires_automatically").default(true).to_owned(),
                timestamp_with_time_zone_null("payment_date").to_owned(),
                timestamp_with_time_zone_null("cancellation_date").to_owned(),
                big_integer("total_cents").default(0).to_owned(),
                text("comment").default("").to_owned(),
                string("sales_channel").default("web").to_owned(),
                json_binary_null("invoice_address").to_owned(),
                json_binary("api_meta").default("{}").to_owned(),
                timestamp_with_time_zone_null("last_modified").to_owned(),
            ],
        )
        .await?;
        m.create_index(index(
            "orders_event_status",
            "orders",
            &["event_id", "status"],
        ))
        .await?;
        m.create_index(index(
            "orders_event_modified",
            "orders",
            &["event_id", "last_modified"],
        ))
        .await?;

        add_columns(
            m,
            "order_positions",
            vec![
                json_binary("attendee_name_parts").default("{}").to_owned(),
                string_null("attendee_email").to_owned(),
                big_integer_null("voucher_id").to_owned(),
                big_integer_null("tax_rule_id").to_owned(),
                big_integer("tax_rate_bps").default(0).to_owned(),
                big_integer("tax_value_cents").default(0).to_owned(),
                string("secret").default("").to_owned(),
                big_integer_null("seat_id").to_owned(),
                json_binary("answers").default("[]").to_owned(),
            ],
        )
        .await?;
        m.create_index(index(
            "order_positions_seat",
            "order_positions",
            &["seat_id"],
        ))
        .await?;
        m.create_index(index(
            "order_positions_voucher",
            "order_positions",
            &["voucher_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("order_fees")
                .col(big_pk_auto("id"))
                .col(big_integer("order_id"))
                .col(string("fee_type"))
                .col(big_integer("value_cents"))
                .col(string("description"))
                .col(string_null("internal_type"))
                .col(big_integer_null("tax_rule_id"))
                .col(big_integer("tax_rate_bps"))
                .col(big_integer("tax_value_cents"))
                .foreign_key(&mut fk("order_fees", "order_id", "orders"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("order_fees_order", "order_fees", &["order_id"]))
            .await?;

        m.create_table(
            Table::create()
                .table("order_payments")
                .col(big_pk_auto("id"))
                .col(big_integer("order_id"))
                .col(integer("local_id"))
                .col(string("state"))
                .col(big_integer("amount_cents"))
                .col(string("provider"))
                .col(timestamp_with_time_zone("created"))
                .col(timestamp_with_time_zone_null("payment_date"))
                .col(json_binary("details").default("{}"))
                .foreign_key(&mut fk("order_payments", "order_id", "orders"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "order_payments_order_local",
            "order_payments",
            &["order_id", "local_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("vouchers")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string("code"))
                .col(integer("max_usages").default(1))
                .col(integer("redeemed").default(0))
                .col(timestamp_with_time_zone_null("valid_until"))
                .col(boolean("block_quota").default(false))
                .col(boolean("allow_ignore_quota").default(false))
                .col(string("price_mode").default("none"))
                .col(big_integer("value_cents").default(0))
                .col(big_integer_null("item_id"))
                .col(big_integer_null("variation_id"))
                .col(big_integer_null("quota_id"))
                .col(big_integer_null("seat_id"))
                .col(big_integer_null("subevent_id"))
                .col(string("tag").default(""))
                .col(text("comment").default(""))
                .col(boolean("show_hidden_items").default(true))
                .col(timestamp_with_time_zone("created"))
                .foreign_key(&mut fk("vouchers", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "vouchers_event_code",
            "vouchers",
            &["event_id", "code"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("cart_positions")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string("cart_id"))
                .col(big_integer("item_id"))
                .col(big_integer_null("variation_id"))
                .col(big_integer_null("subevent_id"))
                .col(big_integer("price_cents"))
                .col(json_binary("attendee_name_parts").default("{}"))
                .col(string_null("attendee_email"))
                .col(big_integer_null("seat_id"))
                .col(timestamp_with_time_zone("datetime"))
                .col(timestamp_with_time_zone("expires"))
                .foreign_key(&mut fk("cart_positions", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "cart_positions_event_cart",
            "cart_positions",
            &["event_id", "cart_id"],
        ))
        .await?;
        m.create_index(index("cart_positions_seat", "cart_positions", &["seat_id"]))
            .await?;

        m.create_table(
            Table::create()
                .table("waiting_list_entries")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(timestamp_with_time_zone("created"))
                .col(json_binary_null("name_parts"))
                .col(string("email"))
                .col(string_null("phone"))
                .col(big_integer_null("voucher_id"))
                .col(big_integer("item_id"))
                .col(big_integer_null("variation_id"))
                .col(string("locale").default("en"))
                .col(big_integer_null("subevent_id"))
                .col(integer("priority").default(0))
                .foreign_key(&mut fk("waiting_list_entries", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "waiting_list_entries_event_item",
            "waiting_list_entries",
            &["event_id", "item_id"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "waiting_list_entries",
            "cart_positions",
            "vouchers",
            "order_payments",
            "order_fees",
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
