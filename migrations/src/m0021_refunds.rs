//! Refunds of orders (`order_refunds`), numbered per order as payments are: money given back
//! through a payment's provider, or recorded as given back elsewhere.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("order_refunds")
                .col(big_pk_auto("id"))
                .col(big_integer("order_id"))
                .col(integer("local_id"))
                .col(string_len("state", 16))
                .col(string_len("source", 16))
                .col(big_integer("amount_cents"))
                .col(big_integer_null("payment_id"))
                .col(string("provider"))
                .col(timestamp_with_time_zone("created"))
                .col(timestamp_with_time_zone_null("execution_date"))
                .col(text("comment").default(""))
                .col(json_binary("details").default("{}"))
                .foreign_key(&mut fk("order_refunds", "order_id", "orders"))
                .foreign_key(&mut fk("order_refunds", "payment_id", "order_payments"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "order_refunds_order_local",
            "order_refunds",
            &["order_id", "local_id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("order_refunds").to_owned())
            .await
    }
}
