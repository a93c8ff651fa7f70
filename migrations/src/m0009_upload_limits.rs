//! Limits on unclaimed uploads: every upload counts its owner's unclaimed files and their
//! bytes, so that query gets an index by owner and expiry instead of scanning every
//! unclaimed file of every caller.

use sea_orm_migration::prelude::*;

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(index("files_owner_expires", "files", &["owner", "expires"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("files_owner_expires")
                .table("files")
                .to_owned(),
        )
        .await
    }
}
