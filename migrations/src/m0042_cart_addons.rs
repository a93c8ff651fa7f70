//! Add-ons in shop carts: a cart position may be an add-on to another position of its cart,
//! which it goes with when that is removed, and which it follows into the order.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .add_column(big_integer_null("addon_to_id"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .drop_column("addon_to_id")
                .to_owned(),
        )
        .await
    }
}
