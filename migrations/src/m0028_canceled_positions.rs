//! Positions and fees canceled one by one (an order change), as pretix's: they stay with
//! their order, marked `canceled`, hold nothing and admit no one.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLES: [&str; 2] = ["order_positions", "order_fees"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in TABLES {
            m.alter_table(
                Table::alter()
                    .table(table)
                    .add_column(boolean("canceled").default(false).to_owned())
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in TABLES {
            m.alter_table(
                Table::alter()
                    .table(table)
                    .drop_column("canceled")
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
