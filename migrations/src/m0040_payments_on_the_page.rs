//! Paying on the service's payment page through a provider's own service (cards), and the
//! notices that service sends back: a payment is worked on by one request at a time (a
//! claim with an end, so that a crashed request frees it), and a notice is acted on once.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("payment_claims")
                .col(big_integer("payment_id").primary_key())
                .col(timestamp_with_time_zone("until"))
                .foreign_key(&mut fk("payment_claims", "payment_id", "order_payments"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("payment_notices")
                .col(string_len("provider", 64))
                .col(string_len("notice_id", 255))
                .col(big_integer("payment_id"))
                .col(timestamp_with_time_zone("received"))
                .primary_key(Index::create().col("provider").col("notice_id"))
                .foreign_key(&mut fk("payment_notices", "payment_id", "order_payments"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "payment_notices_payment",
            "payment_notices",
            &["payment_id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("payment_notices").to_owned())
            .await?;
        m.drop_table(Table::drop().table("payment_claims").to_owned())
            .await
    }
}
