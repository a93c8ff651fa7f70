//! Add-ons and bundles in shop carts: a cart position may be an add-on to another position of
//! its cart, which it goes with when that is removed, and which it follows into the order; a
//! bundled one came with its product rather than by the buyer's choice.

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
                .add_column(big_integer_null("addon_to_id"))
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .add_column(boolean("is_bundled").default(false))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "cart_positions_addon_to",
            "cart_positions",
            &["addon_to_id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("cart_positions_addon_to")
                .table("cart_positions")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .drop_column("is_bundled")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("cart_positions")
                .drop_column("addon_to_id")
                .to_owned(),
        )
        .await
    }
}
