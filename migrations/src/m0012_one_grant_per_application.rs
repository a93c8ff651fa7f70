//! One authorization per user and application: the index on the pair becomes unique, so
//! that granting again updates the grant in one statement (`INSERT ... ON CONFLICT`), also
//! when two consent forms of one person arrive at once.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Replaces the index in one call, on one connection: SQLite's pool may otherwise create
/// the new index on a connection that still sees the old one.
async fn replace_index(m: &SchemaManager<'_>, unique: &str) -> Result<(), DbErr> {
    m.get_connection()
        .execute_unprepared(&format!(
            "DROP INDEX oauth_authorizations_user_app; \
             CREATE {unique} INDEX oauth_authorizations_user_app \
             ON oauth_authorizations (user_id, application_id)"
        ))
        .await
        .map(|_| ())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        replace_index(m, "UNIQUE").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        replace_index(m, "").await
    }
}
