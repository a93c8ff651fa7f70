//! Storage: connecting to SQLite or PostgreSQL (chosen by the URL), migrations, entities.

pub mod entities;
pub mod unit_of_work;
mod write_txn;

pub use sea_orm::DatabaseConnection;
pub use unit_of_work::commit;
pub use write_txn::WriteTxn;

use std::cell::Cell;
use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DbBackend, DbErr, SqliteTransactionMode,
    TransactionOptions, TransactionTrait,
};
use tessera_migrations::{Migrator, MigratorTrait};

/// Opens a connection pool. SQLite files are created when missing (readable by this user
/// alone, in directories only this user can enter: they hold every order and token hash)
/// and run in WAL mode with a busy timeout, so that the pool's connections can be used
/// concurrently; PostgreSQL is used as the URL says.
pub async fn connect(url: &str, max_connections: u32) -> Result<DatabaseConnection, DbErr> {
    check_scheme(url)?;
    if let Some(path) = sqlite_path(url)
        && !sqlite_read_only(url)
    {
        create_private_file(&decode_path(path))?;
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        reach_postgres(url).await?;
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
        .map_sqlx_sqlite_before_acquire(|_, _| {
            unit_of_work::check_acquire();
            Box::pin(async { Ok(true) })
        })
        .map_sqlx_postgres_before_acquire(|_, _| {
            unit_of_work::check_acquire();
            Box::pin(async { Ok(true) })
        })
        .map_sqlx_sqlite_opts(|o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(write_txn::TURN_TIMEOUT)
                .foreign_keys(true)
                .create_if_missing(true)
        });
    let mut db = Database::connect(options).await?;
    db.set_metric_callback(|_| {
        let _ = QUERIES.try_with(|n| n.set(n.get() + 1));
    });
    Ok(db)
}

/// What went wrong, for a person: a message of this module as it was written (without
/// `DbErr`'s "Custom Error: " before it), anything else as `DbErr` says it.
pub fn describe(e: &DbErr) -> String {
    match e {
        DbErr::Custom(message) => message.clone(),
        other => other.to_string(),
    }
}

/// Refuses a URL of another kind of database than SQLite or PostgreSQL, naming only its
/// scheme: the rest may hold a password.
fn check_scheme(url: &str) -> Result<(), DbErr> {
    let known = ["sqlite:", "postgres://", "postgresql://"];
    if known.iter().any(|k| url.starts_with(k)) {
        return Ok(());
    }
    let scheme: String = url
        .split(':')
        .next()
        .unwrap_or_default()
        .chars()
        .take(20)
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .collect();
    Err(DbErr::Custom(format!(
        "the database URL must start with sqlite:, postgres:// or postgresql:// (it starts with \"{scheme}:\")"
    )))
}

/// The database of `url` in words, without its password: `the SQLite file /full/path` or
/// `the PostgreSQL database "db" at host:port as "user"`.
pub fn describe_url(url: &str) -> String {
    if let Some(path) = sqlite_path(url) {
        let path = decode_path(path);
        let full = std::path::absolute(&path).unwrap_or(path);
        return format!("the SQLite file {}", full.display());
    }
    match url.parse::<sea_orm::sqlx::postgres::PgConnectOptions>() {
        Ok(options) => format!("the {}", postgres_place(&options)),
        Err(_) => "an in-memory SQLite database".to_owned(),
    }
}

fn postgres_place(options: &sea_orm::sqlx::postgres::PgConnectOptions) -> String {
    format!(
        "PostgreSQL database {:?} at {}:{} as {:?}",
        options.get_database().unwrap_or(options.get_username()),
        options.get_host(),
        options.get_port(),
        options.get_username()
    )
}

/// Whether the database of `url` exists and holds Tessera's schema (it was migrated at least
/// once). Nothing is created: a missing SQLite file is `false` without being made; a
/// PostgreSQL server that cannot be reached, or a database it does not have, is an error
/// that says so.
pub async fn has_schema(url: &str) -> Result<bool, DbErr> {
    if let Some(path) = sqlite_path(url)
        && !decode_path(path).exists()
    {
        return Ok(false);
    }
    let db = connect(url, 1).await?;
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' \
             AND name = 'seaql_migrations'"
        }
        _ => {
            "SELECT COUNT(*) AS n FROM information_schema.tables \
             WHERE table_name = 'seaql_migrations' AND table_schema = current_schema()"
        }
    };
    let stmt = sea_orm::Statement::from_string(db.get_database_backend(), sql);
    let n: i64 = match db.query_one_raw(stmt).await? {
        Some(row) => row.try_get("", "n")?,
        None => 0,
    };
    db.close().await?;
    Ok(n > 0)
}

/// How long a first connection to PostgreSQL may take before the server is reported
/// unreachable.
const REACH_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens and closes one connection to the PostgreSQL server of `url`, so that a server that
/// cannot be reached is reported within [`REACH_TIMEOUT`] with its host, port, database and
/// the cause, not after the pool's wait as "pool timed out". The password is never named.
async fn reach_postgres(url: &str) -> Result<(), DbErr> {
    use sea_orm::sqlx::Connection;
    use sea_orm::sqlx::postgres::{PgConnectOptions, PgConnection};
    let options: PgConnectOptions = url
        .parse()
        .map_err(|e| DbErr::Custom(format!("the database URL is not valid: {e}")))?;
    let place = postgres_place(&options);
    match tokio::time::timeout(REACH_TIMEOUT, PgConnection::connect_with(&options)).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
        Ok(Err(e)) => Err(DbErr::Custom(format!("cannot connect to {place}: {e}"))),
        Err(_) => Err(DbErr::Custom(format!(
            "cannot connect to {place}: no answer within {} s",
            REACH_TIMEOUT.as_secs()
        ))),
    }
}

/// Creates a missing SQLite file empty with mode 0600 (an empty file is an empty database),
/// and its missing directories with mode 0700. SQLite then gives the `-wal` and `-shm` files
/// it makes the mode of the database file. Existing files and directories keep theirs.
pub(crate) fn create_private_file(path: &std::path::Path) -> Result<(), DbErr> {
    let err = |p: &std::path::Path, e: std::io::Error| {
        DbErr::Custom(format!("cannot create {}: {e}", p.display()))
    };
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        let mut dir = std::fs::DirBuilder::new();
        dir.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
        dir.create(parent).map_err(|e| err(parent, e))?;
    }
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
    match file.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(err(path, e)),
    }
}

/// True when a SQLite URL opens its file read-only (`mode=ro`): then nothing is created.
fn sqlite_read_only(url: &str) -> bool {
    url.split_once('?').is_some_and(|(_, query)| {
        form_urlencoded::parse(query.as_bytes()).any(|(k, v)| k == "mode" && v == "ro")
    })
}

/// The file name of a SQLite URL's path as SQLx reads it: percent-decoded.
fn decode_path(path: &str) -> std::path::PathBuf {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|&b| hex(b)),
            bytes.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(high), Some(low)) => {
                // Two hex digits make at most 255.
                decoded.push(u8::try_from(high * 16 + low).unwrap_or_default());
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    std::path::PathBuf::from(String::from_utf8_lossy(&decoded).into_owned())
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

/// Runs one statement with `$n` placeholders; gives how many rows it touched.
pub async fn execute<I>(db: &impl ConnectionTrait, sql: &str, values: I) -> Result<u64, DbErr>
where
    I: IntoIterator<Item = sea_orm::Value>,
{
    let stmt = sea_orm::Statement::from_sql_and_values(db.get_database_backend(), sql, values);
    Ok(db.execute_raw(stmt).await?.rows_affected())
}

/// Runs an `INSERT ... RETURNING id` and gives the new row's ID.
pub async fn insert_returning_id<I>(
    db: &impl ConnectionTrait,
    sql: &str,
    values: I,
) -> Result<i64, DbErr>
where
    I: IntoIterator<Item = sea_orm::Value>,
{
    let stmt = sea_orm::Statement::from_sql_and_values(db.get_database_backend(), sql, values);
    db.query_one_raw(stmt)
        .await?
        .ok_or_else(|| DbErr::RecordNotInserted)?
        .try_get("", "id")
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

/// Connects to a database whose schema is brought up to date first, on a connection of its
/// own that is closed before the pool opens: on SQLite, a pooled connection opened before a
/// migration may go on seeing the schema it read at first (an index dropped and made again,
/// a constraint `ON CONFLICT` needs).
pub async fn connect_migrated(
    url: &str,
    max_connections: u32,
) -> Result<DatabaseConnection, DbErr> {
    let migrating = connect(url, 2).await?;
    migrate(&migrating).await?;
    migrating.close().await?;
    connect(url, max_connections).await
}

/// Starts a transaction that will write. On SQLite it waits for the process's turn to write
/// (writers queue in memory, in the order they came: see [`WriteTxn`]) and then takes the
/// write lock at once (`BEGIN IMMEDIATE`), so that two writers never deadlock upgrading read
/// locks; on PostgreSQL it is an ordinary transaction and row locks do the rest. While a
/// request's work is held open ([`unit_of_work`]), it is a savepoint in that transaction.
/// Commit it with [`commit`].
pub async fn begin_write(db: &DatabaseConnection) -> Result<WriteTxn, DbErr> {
    if let Some(savepoint) = unit_of_work::begin_inside_held().await {
        return savepoint.map(|txn| WriteTxn::new(txn, None));
    }
    let _wait = crate::metrics::LockWait::start(crate::metrics::Lock::WriteTransaction);
    let turn = write_txn::turn(db).await?;
    let txn = match db.get_database_backend() {
        DbBackend::Sqlite => {
            db.begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await?
        }
        _ => db.begin().await?,
    };
    Ok(WriteTxn::new(txn, turn))
}

/// Runs `write` in a write transaction of its own ([`begin_write`], [`commit`]): what it
/// writes is written together, and a keyed request holds it with its answer.
pub async fn in_transaction<T, E: From<DbErr>>(
    db: &DatabaseConnection,
    write: impl AsyncFnOnce(&WriteTxn) -> Result<T, E>,
) -> Result<T, E> {
    let txn = begin_write(db).await?;
    let out = write(&txn).await?;
    commit(txn).await?;
    Ok(out)
}

/// ` FOR UPDATE` on PostgreSQL, to end a `SELECT` that locks the rows it reads until the
/// transaction ends; nothing on SQLite, whose writing transactions are serial already
/// ([`begin_write`]).
pub fn lock_clause(db: &impl ConnectionTrait) -> &'static str {
    if db.get_database_backend() == DbBackend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    }
}

/// Locks a row by ID until the transaction ends, on PostgreSQL (`SELECT ... FOR UPDATE`);
/// SQLite serialises writing transactions ([`begin_write`]), so there it does nothing.
/// `table` is a name from the code, never from input.
pub async fn lock_row(txn: &impl ConnectionTrait, table: &str, id: i64) -> Result<(), DbErr> {
    if txn.get_database_backend() == DbBackend::Postgres {
        execute(
            txn,
            &format!("SELECT id FROM {table} WHERE id = $1 FOR UPDATE"),
            [id.into()],
        )
        .await?;
    }
    Ok(())
}

/// True when a database error is a unique-constraint violation.
pub fn is_unique_violation(err: &DbErr) -> bool {
    matches!(
        err.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_url_of_another_database_is_refused_without_its_password() {
        let refused = super::connect("postgress://ada:hunter2@db.example/x", 2)
            .await
            .expect_err("an unknown scheme");
        let said = super::describe(&refused);
        assert!(said.contains("(it starts with \"postgress:\")"), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
    }
}
