//! A write transaction, and on SQLite the process's queue of writers.
//!
//! SQLite lets one transaction write at a time. Writers that find the lock taken sleep in
//! SQLite's busy handler, for 1, 2, 5, ... up to 100 ms at a time, and retry: under load a
//! few of them sleep again and again while others, arriving later, get through. So the
//! writers of a process queue here instead, in memory and in the order they came (a fair
//! semaphore of one permit per database file), and each begins its transaction when the
//! one before it has ended. Other processes writing to the same file, and one-statement
//! writes outside a transaction (idempotency claims, the mail outbox's leases), still meet
//! the busy handler. A transaction dropped without commit or rollback hands its turn on
//! before SQLite has rolled it back; the next writer may then wait in the busy handler for
//! that moment.
//!
//! The turn is not re-entrant: a task that holds a write transaction and begins another
//! outside a request's held work ([`super::unit_of_work`]) waits for itself. It gives up
//! after [`TURN_TIMEOUT`], as SQLite's busy handler would, with an error.

use std::collections::HashMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, ExecResult,
    QueryResult, Statement,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A transaction begun with [`super::begin_write`]. It is a [`DatabaseTransaction`] (and
/// derefs to one); on SQLite it also holds the process's turn to write, until it ends.
pub struct WriteTxn {
    txn: DatabaseTransaction,
    _turn: Option<OwnedSemaphorePermit>,
}

impl WriteTxn {
    pub(super) fn new(txn: DatabaseTransaction, turn: Option<OwnedSemaphorePermit>) -> Self {
        Self { txn, _turn: turn }
    }

    /// Commits now, whether or not a request holds its work (see [`super::commit`]).
    pub async fn commit(self) -> Result<(), DbErr> {
        self.txn.commit().await
    }

    /// Rolls back what the transaction wrote.
    pub async fn rollback(self) -> Result<(), DbErr> {
        self.txn.rollback().await
    }
}

impl Deref for WriteTxn {
    type Target = DatabaseTransaction;

    fn deref(&self) -> &DatabaseTransaction {
        &self.txn
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for WriteTxn {
    fn get_database_backend(&self) -> DbBackend {
        self.txn.get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.txn.execute_raw(stmt).await
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.txn.execute_unprepared(sql).await
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.txn.query_one_raw(stmt).await
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.txn.query_all_raw(stmt).await
    }
}

/// Longest wait for the turn to write: the busy timeout the connections have (see
/// [`super::connect`]).
pub const TURN_TIMEOUT: Duration = Duration::from_secs(30);

/// Waits for this process's turn to write to a SQLite database; `None` for PostgreSQL.
pub(super) async fn turn(db: &DatabaseConnection) -> Result<Option<OwnedSemaphorePermit>, DbErr> {
    if db.get_database_backend() != DbBackend::Sqlite {
        return Ok(None);
    }
    let options = db.get_sqlite_connection_pool().connect_options();
    let queue = queue_of(options.get_filename());
    match tokio::time::timeout(TURN_TIMEOUT, queue.acquire_owned()).await {
        // The semaphore is never closed.
        Ok(permit) => Ok(permit.ok()),
        Err(_) => Err(DbErr::Custom(
            "database is locked: no turn to write within the busy timeout".into(),
        )),
    }
}

/// The queue of writers to one SQLite file, made at its first write.
fn queue_of(file: &Path) -> Arc<Semaphore> {
    static QUEUES: LazyLock<Mutex<HashMap<PathBuf, Arc<Semaphore>>>> =
        LazyLock::new(Default::default);
    let mut queues = QUEUES.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        queues
            .entry(file.to_path_buf())
            .or_insert_with(|| Arc::new(Semaphore::new(1))),
    )
}
