//! The fields a support desk changes on an order, as pretix's: a note for the check-in
//! staff (`checkin_attention`, `checkin_text`), a follow-up date, and whether the tickets of
//! a pending order admit (`valid_if_pending`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let columns = [
            boolean("checkin_attention").default(false).to_owned(),
            text_null("checkin_text"),
            date_null("custom_followup_at"),
            boolean("valid_if_pending").default(false).to_owned(),
        ];
        for mut col in columns {
            m.alter_table(
                Table::alter()
                    .table("orders")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in [
            "checkin_attention",
            "checkin_text",
            "custom_followup_at",
            "valid_if_pending",
        ] {
            m.alter_table(Table::alter().table("orders").drop_column(col).to_owned())
                .await?;
        }
        Ok(())
    }
}
