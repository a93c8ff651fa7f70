//! One transaction for a request's work and what is recorded about it.
//!
//! Inside [`hold`], the first write transaction a request commits through [`commit`] is not
//! committed but held: the request goes on (building its answer), and whoever called
//! [`hold`] decides what to add to that transaction before committing it, or rolls it back.
//! Transactions begun meanwhile through [`super::begin_write`] are savepoints inside the held
//! one, so that the request's later writes land in it too (and, on SQLite, do not wait for
//! the write lock the held transaction has).
//!
//! While its transaction is held, a request must not take a second connection from the pool:
//! when every connection is held by requests waiting for another, none can go on. Answers
//! are built from the transaction (or from what the work returned). An idle pooled
//! connection handed out to a request that holds one is reported (and, in debug builds,
//! panics, so that tests find it); sqlx does not show new connections to that check.
//!
//! `X-Idempotency-Key` uses this to store a request's answer in the transaction of its work,
//! so that no crash can separate the two: either both are in the database, or neither.
//! Outside [`hold`], [`commit`] commits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sea_orm::{DatabaseTransaction, DbErr, TransactionTrait};

use super::WriteTxn;
use tokio::sync::Mutex;

/// The transaction held for the request, once it committed its work.
#[derive(Default)]
struct Held {
    txn: Mutex<Option<WriteTxn>>,
    /// Whether `txn` is set, readable without waiting.
    holding: AtomicBool,
}

tokio::task_local! {
    static HELD: Arc<Held>;
}

/// Runs `work`, holding the first transaction it commits; gives its output and that
/// transaction, still open, or `None` when it committed none.
pub async fn hold<F: Future>(work: F) -> (F::Output, Option<WriteTxn>) {
    let held = Arc::new(Held::default());
    let out = HELD.scope(Arc::clone(&held), work).await;
    let txn = held.txn.lock().await.take();
    (out, txn)
}

/// A savepoint in the held transaction, when one is held for this request.
pub(super) async fn begin_inside_held() -> Option<Result<DatabaseTransaction, DbErr>> {
    let held = HELD.try_with(Arc::clone).ok()?;
    let slot = held.txn.lock().await;
    let txn = slot.as_ref()?;
    Some(txn.begin().await)
}

/// Commits a transaction begun with [`super::begin_write`], or, inside [`hold`], keeps the
/// request's first one open for its holder.
pub async fn commit(txn: WriteTxn) -> Result<(), DbErr> {
    if let Ok(held) = HELD.try_with(Arc::clone) {
        let mut slot = held.txn.lock().await;
        if slot.is_none() {
            *slot = Some(txn);
            held.holding.store(true, Ordering::Release);
            return Ok(());
        }
    }
    txn.commit().await
}

/// Whether the current request runs inside [`hold`]: then even a single statement should
/// run in a transaction begun with [`super::begin_write`], to be held with the rest.
pub fn in_unit_of_work() -> bool {
    HELD.try_with(|_| ()).is_ok()
}

/// Whether the current request holds its transaction now: it must not take another pooled
/// connection.
pub fn is_holding() -> bool {
    HELD.try_with(|h| h.holding.load(Ordering::Acquire))
        .unwrap_or(false)
}

/// Called when the pool hands out an idle connection: reports a request that takes one while
/// it holds its transaction (see the module's documentation).
pub(super) fn check_acquire() {
    if is_holding() {
        tracing::error!("a request took a pooled connection while holding its transaction");
        debug_assert!(
            false,
            "a request took a pooled connection while holding its transaction"
        );
    }
}
