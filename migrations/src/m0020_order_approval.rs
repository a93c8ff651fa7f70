//! Orders that wait for the organizer's approval (`require_approval`): pending, holding
//! their quota without a payment term, until approved or denied.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("orders")
                .add_column(boolean("require_approval").default(false))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("orders")
                .drop_column("require_approval")
                .to_owned(),
        )
        .await
    }
}
