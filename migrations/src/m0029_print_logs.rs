//! What was printed of a position (`print_logs`), as pretixSCAN reports it after printing a
//! badge or ticket (`orderpositions/{id}/printlog/`).

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("print_logs")
                .col(big_pk_auto("id"))
                .col(big_integer("position_id"))
                .col(boolean("successful"))
                .col(timestamp_with_time_zone("datetime"))
                .col(timestamp_with_time_zone("created"))
                .col(string_len("source", 255))
                .col(string_len("type", 32))
                .col(big_integer_null("device_id"))
                .col(json_binary("info"))
                .foreign_key(&mut fk("print_logs", "position_id", "order_positions"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("print_logs_position", "print_logs", &["position_id"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("print_logs").to_owned())
            .await
    }
}
