//! Storage: connecting to SQLite or PostgreSQL (chosen by the URL), migrations, entities.

pub mod entities;

pub use sea_orm::DatabaseConnection;

use std::cell::Cell;
use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, Database, DatabaseTransaction, DbBackend, DbErr, SqliteTransactionMode,
    TransactionOptions, TransactionTrait,
};
use tessera_migrations::{Migrator, MigratorTrait};

/// Opens a connection pool. SQLite files are created when missing and run in WAL mode with a
/// busy timeout, so that the pool's connections can be used concurrently; PostgreSQL is used
/// as the URL says.
pub async fn connect(url: &str, max_connections: u32) -> Result<DatabaseConnection, DbErr> {
    if let Some(path) = sqlite_path(url)
        && let Some(parent) = std::path::Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| DbErr::Custom(format!("cannot create {}: {e}", parent.display())))?;
    }
    let mut options = ConnectOptions::new(url);
    options
        .max_connections(max_connections.max(2))
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(30))
        // Pinging every checkout costs a round trip per query; only connections idle long
        // enough to have been dropped by the server or the network are checked.
        .test_before_acquire_if_idle_for(Duration::from_secs(30))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(|o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(30))
                .foreign_keys(true)
                .create_if_missing(true)
        });
    let mut db = Database::connect(options).await?;
    db.set_metric_callback(|_| {
        let _ = QUERIES.try_with(|n| n.set(n.get() + 1));
    });
    Ok(db)
}

tokio::task_local! {
    static QUERIES: Cell<u32>;
}

/// Runs `f` and counts the statements it sends to the database (in its own task), unless
/// an enclosing call already counts them: then the count is theirs and this returns 0.
pub async fn count_queries<F: Future>(f: F) -> (F::Output, u32) {
    if QUERIES.try_with(|_| ()).is_ok() {
        return (f.await, 0);
    }
    QUERIES
        .scope(Cell::new(0), async {
            let out = f.await;
            (out, QUERIES.with(Cell::get))
        })
        .await
}

/// The file of a SQLite URL; `None` for other databases and in-memory SQLite.
pub fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// Brings the schema up to date.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
}

/// Starts a transaction that will write. On SQLite it takes the write lock at once
/// (`BEGIN IMMEDIATE`), so that two writers never deadlock upgrading read locks; on
/// PostgreSQL it is an ordinary transaction and row locks do the rest.
pub async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    match db.get_database_backend() {
        DbBackend::Sqlite => {
            db.begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await
        }
        _ => db.begin().await,
    }
}

/// True when a database error is a unique-constraint violation.
pub fn is_unique_violation(err: &DbErr) -> bool {
    matches!(
        err.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}
