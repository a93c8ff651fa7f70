//! Carts filled in the shop: a position redeems a voucher (counted against the voucher's
//! usages while the cart lives, as pretix counts them), and what the buyer enters at
//! checkout (contact, answers, invoice address, payment) is kept per cart until the order
//! is placed, with the order's code once it is.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .add_column(big_integer_null("voucher_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "cart_positions_voucher",
            "cart_positions",
            &["voucher_id"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("checkouts")
                .col(big_integer("event_id"))
                .col(string_len("cart_id", 64))
                .col(json_binary("entered"))
                .col(string_len_null("order_code", 16))
                .col(timestamp_with_time_zone("updated"))
                .primary_key(Index::create().col("event_id").col("cart_id"))
                .foreign_key(&mut fk("checkouts", "event_id", "events"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("checkouts").to_owned())
            .await?;
        m.drop_index(
            Index::drop()
                .name("cart_positions_voucher")
                .table("cart_positions")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .drop_column("voucher_id")
                .to_owned(),
        )
        .await
    }
}
