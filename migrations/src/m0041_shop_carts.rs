//! Carts filled in the shop: a position redeems a voucher (counted against the voucher's
//! usages while the cart lives, as pretix counts them).

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
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
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
