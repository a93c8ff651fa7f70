//! Quotas: the first columns (the catalogue migration adds items, variations and the rest).

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("quotas")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(big_integer_null("subevent_id"))
                .col(string("name"))
                .col(big_integer_null("size"))
                .foreign_key(&mut fk("quotas", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("quotas_event")
                .table("quotas")
                .col("event_id")
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("quotas").to_owned()).await
    }
}
