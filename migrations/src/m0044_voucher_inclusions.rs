//! Vouchers that make a product's add-ons or bundled products free of charge, as pretix's
//! `all_addons_included` and `all_bundles_included`.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const COLUMNS: [&str; 2] = ["all_addons_included", "all_bundles_included"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for column in COLUMNS {
            m.alter_table(
                Table::alter()
                    .table("vouchers")
                    .add_column(boolean(column).default(false))
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for column in COLUMNS {
            m.alter_table(
                Table::alter()
                    .table("vouchers")
                    .drop_column(column)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
