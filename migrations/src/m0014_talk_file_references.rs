//! Room for stored file references on the talk side: a claimed upload is referred to as
//! `<key>/<file name>` (32 + 1 + up to 100 characters), longer than the 64 characters the
//! columns of speaker avatars, submission images, resources and file answers had. SQLite does
//! not enforce the length of text columns, so only PostgreSQL changes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The columns holding file references.
const COLUMNS: [(&str, &str); 4] = [
    ("talk_speakers", "avatar"),
    ("talk_submissions", "image"),
    ("talk_resources", "resource"),
    ("talk_answers", "answer_file"),
];

async fn set_length(m: &SchemaManager<'_>, length: u32) -> Result<(), DbErr> {
    if m.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    for (table, column) in COLUMNS {
        m.get_connection()
            .execute_unprepared(&format!(
                "ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR({length})"
            ))
            .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        set_length(m, 255).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        set_length(m, 64).await
    }
}
