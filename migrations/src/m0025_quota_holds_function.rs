//! `tessera_quota_holds(quota, now_us)` on PostgreSQL: the live holds of one quota, summed
//! per kind, read with a snapshot of their own.
//!
//! Placing an order locks its quotas and then reads their holds. In one statement, the
//! holds would be read from the snapshot the statement began with, before it waited for
//! the lock, and miss the holds of the order it waited for. Called for each quota row as
//! it comes out of a `FOR UPDATE` subquery, this function reads them after the lock (a
//! PL/pgSQL function's queries each take a new snapshot), so that locking and reading take
//! one round trip. SQLite serialises writers and needs no such function.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        db.execute_unprepared(
            "CREATE OR REPLACE FUNCTION tessera_quota_holds(quota BIGINT, now_us BIGINT) \
             RETURNS TABLE (kind TEXT, total BIGINT) LANGUAGE plpgsql VOLATILE AS $$ \
             BEGIN \
               RETURN QUERY SELECT h.kind::TEXT, CAST(SUM(h.count) AS BIGINT) FROM quota_holds h \
                 WHERE h.quota_id = quota AND h.expires_us > now_us GROUP BY h.kind; \
             END $$",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared("DROP FUNCTION IF EXISTS tessera_quota_holds(BIGINT, BIGINT)")
                .await?;
        }
        Ok(())
    }
}
