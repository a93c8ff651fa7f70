//! Mails that carry an order's tickets: the outbox names the order, and the tickets are made
//! when the mail is sent, so that they show the order as it is then.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("outbox_mails")
                .add_column(big_integer_null("attach_tickets_of"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("outbox_mails")
                .drop_column("attach_tickets_of")
                .to_owned(),
        )
        .await
    }
}
