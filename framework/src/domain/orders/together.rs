//! Orders placed together: concurrent plain orders of one event (no voucher, seat or cart)
//! are placed in one transaction (group commit, see [`crate::domain::batch`]).
//!
//! A batch writes the orders, positions and payments of all its orders in a few statements,
//! so that it costs about the round trips one order did. Then it lets the next batch of the
//! event start writing, locks the quotas its orders count against, and fits the orders in
//! the order they queued: an order that does not fit is taken back and refused alone, as it
//! would have been a moment later on its own. Across processes, batches take turns on the
//! quota locks, as single orders do.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr};

use crate::db::unit_of_work;
use crate::domain::cache::Cache;

use super::Order;
use super::place::{
    Draft, Left, NewOrder, PlaceContext, PlaceError, PositionErrors, Prepared, announce,
    draft_invoices, hold_of, lines, place_alone, prepare, quotas_of, store_invoices, unwrite,
    write,
};
use crate::db::begin_write;
use crate::domain::availability::{self, Demand, HoldKind};
use crate::domain::batch::{Batches, Handoff};

/// What an order is answered.
pub type Placed = Result<Order, PlaceError>;

/// This process's plain orders, queued per event to be placed together.
pub type Placements = Batches<i64, Prepared, Placed>;

/// Most orders placed in one transaction.
const MAX_BATCH: usize = 64;

/// Most batches of one event at once: one writing its orders while the others wait for the
/// quota locks or commit.
const OVERLAP: usize = 3;

/// An empty queue of orders for the events of `db`, for the process.
pub fn placements(db: DatabaseConnection) -> Placements {
    Batches::new(
        MAX_BATCH,
        OVERLAP,
        Box::new(move |_event, batch, handoff| Box::pin(place_batch(db.clone(), batch, handoff))),
    )
}

/// Places a batch of one event's orders, giving one answer per order. When the batch fails
/// before its commit in a way that concerns some of its orders only (a payment provider's
/// refusal, a deadlock, a constraint, a panic), its orders are placed again one by one, so
/// that each gets the answer it would have had alone. Other failures (the database gone, a
/// commit that may or may not have happened) answer every order with the error.
async fn place_batch(
    db: DatabaseConnection,
    batch: Vec<Prepared>,
    handoff: Handoff,
) -> Vec<Placed> {
    let n = batch.len();
    let batch = Arc::new(batch);
    let together = tokio::spawn(place_together(db.clone(), Arc::clone(&batch), handoff)).await;
    let (failed, alone) = match together {
        Ok(Ok(answers)) => return answers,
        Ok(Err(Failure::Commit(e))) => {
            tracing::error!(error = %e, orders = n, "committing a batch of orders failed");
            return (0..n).map(|_| Err(copy(&e))).collect();
        }
        Ok(Err(Failure::Before(e))) => {
            let alone = concerns_some(&e);
            (e, alone)
        }
        Err(panic) => {
            tracing::error!(error = %panic, orders = n, "a batch of orders panicked");
            let e = DbErr::Custom("the batch of orders failed".into());
            (e.into(), true)
        }
    };
    if n == 1 || !alone {
        if let PlaceError::Db(e) = &failed {
            tracing::error!(error = %e, orders = n, "placing a batch of orders failed");
        }
        return (0..n)
            .map(|_| {
                Err(match &failed {
                    PlaceError::Db(e) => copy(e),
                    PlaceError::Invalid(body) => PlaceError::Invalid(body.clone()),
                })
            })
            .collect();
    }
    let mut answers = Vec::with_capacity(n);
    for p in batch.iter() {
        answers.push(place_alone(&db, p).await);
    }
    answers
}

/// Why a batch failed: before its commit (nothing is stored), or at it (unknown).
enum Failure {
    Before(PlaceError),
    Commit(DbErr),
}

impl From<PlaceError> for Failure {
    fn from(e: PlaceError) -> Self {
        Self::Before(e)
    }
}

impl From<DbErr> for Failure {
    fn from(e: DbErr) -> Self {
        Self::Before(e.into())
    }
}

/// Whether a failure may concern some orders of the batch only, so that placing them one by
/// one gives the others their orders.
fn concerns_some(e: &PlaceError) -> bool {
    match e {
        PlaceError::Invalid(_) => true,
        PlaceError::Db(e) => {
            let text = e.to_string();
            e.sql_err().is_some()
                || text.contains("deadlock detected")
                || text.contains("could not serialize access")
        }
    }
}

/// A database error, for each order of a batch.
fn copy(e: &DbErr) -> PlaceError {
    PlaceError::Db(DbErr::Custom(e.to_string()))
}

/// Writes the batch's orders, then (letting the next batch write meanwhile) locks their
/// quotas, fits the orders in one by one, takes back those that do not fit, holds what the
/// others take and commits.
async fn place_together(
    db: DatabaseConnection,
    batch: Arc<Vec<Prepared>>,
    mut handoff: Handoff,
) -> Result<Vec<Placed>, Failure> {
    let now = crate::values::now();
    let lines: Vec<_> = batch
        .iter()
        .map(|p| {
            let mut errors = PositionErrors::new(p.new.positions.len());
            let lines = lines(p, &[], &Default::default(), now, &mut errors);
            debug_assert!(!errors.any(), "a plain order's lines need no locks");
            lines
        })
        .collect();
    let drafts: Vec<Draft<'_>> = batch
        .iter()
        .zip(&lines)
        .map(|(p, lines)| Draft {
            p,
            lines,
            vouchers: &[],
        })
        .collect();
    let txn = begin_write(&db).await?;
    let written = write(&txn, &drafts, now).await?;
    handoff.release();
    // The invoices are drafted before the quota locks, so that the batch holds them for
    // numbering and storing only; a series' orders each with its own catalogue, which
    // holds the dates its lines name.
    let series = batch.first().is_some_and(|p| p.ctx.event.has_subevents);
    let mut drafted = Vec::new();
    if series {
        for (d, o) in drafts.iter().zip(&written) {
            drafted.push(draft_invoices(&txn, d.p, &[o]).await?);
        }
    } else if let Some(d) = drafts.first() {
        let all: Vec<&Order> = written.iter().collect();
        drafted.push(draft_invoices(&txn, d.p, &all).await?);
    }
    let mut quota_ids: Vec<i64> = drafts.iter().flat_map(quotas_of).collect();
    quota_ids.sort_unstable();
    quota_ids.dedup();
    let (quotas, availability) = availability::lock_and_read(&txn, &quota_ids).await?;
    let mut left = Left::new(&quotas, &availability);
    let mut holds: Vec<(HoldKind, Option<DateTime<Utc>>, Demand)> = Vec::new();
    let (mut answers, mut refused) = (Vec::with_capacity(batch.len()), Vec::new());
    for (d, o) in drafts.iter().zip(written) {
        if let Err(body) = left.take(d) {
            refused.push(o.row.id);
            answers.push(Err(PlaceError::Invalid(body)));
            continue;
        }
        let (kind, until) = hold_of(&o.row);
        let at = match holds.iter().position(|h| h.0 == kind && h.1 == until) {
            Some(at) => at,
            None => {
                holds.push((kind, until, Demand::new()));
                holds.len() - 1
            }
        };
        for q in quotas_of(d) {
            *holds[at].2.entry(q).or_default() += 1;
        }
        answers.push(Ok(o));
    }
    unwrite(&txn, &refused).await?;
    for (kind, until, demand) in &holds {
        availability::hold(&txn, &quotas, demand, *kind, *until).await?;
    }
    let mut invoices = Vec::with_capacity(answers.len());
    if series {
        for ((d, answer), drafted) in drafts.iter().zip(&answers).zip(drafted) {
            if let Ok(o) = answer {
                invoices.extend(store_invoices(&txn, d.p, &[o], drafted, &[true]).await?);
            } else {
                invoices.push(Vec::new());
            }
        }
    } else if let (Some(d), Some(drafted)) = (drafts.first(), drafted.pop()) {
        let placed: Vec<&Order> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
        let kept: Vec<bool> = answers.iter().map(Result::is_ok).collect();
        invoices = store_invoices(&txn, d.p, &placed, drafted, &kept).await?;
    }
    invoices.resize_with(answers.len(), Vec::new);
    for ((d, answer), invoices) in drafts.iter().zip(&answers).zip(invoices) {
        if let Ok(o) = answer {
            announce(&txn, d.p, o, invoices).await?;
        }
    }
    crate::db::commit(txn).await.map_err(Failure::Commit)?;
    Ok(answers)
}

/// Places an order in one transaction: the whole order or nothing. Quotas, seats and
/// vouchers are checked under their locks, so concurrent orders never oversell. With
/// `simulate`, everything is checked and priced and nothing is kept.
///
/// `cache` is the process cache and its generation when the request began, for the event's
/// products. With `together`, an order without vouchers, seats or carts queues to be placed
/// with the others of its event that arrive meanwhile, in one transaction (group commit;
/// see this module); a keyed request (`X-Idempotency-Key`) is placed alone, in the
/// transaction that keeps its answer.
pub async fn place(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    together: Option<&Arc<Placements>>,
    ctx: PlaceContext,
    new: NewOrder,
) -> Result<Order, PlaceError> {
    let prepared = prepare(db, cache, ctx, new).await?;
    match together {
        Some(queue) if prepared.is_plain() && !unit_of_work::in_unit_of_work() => queue
            .submit(prepared.ctx.event.id, prepared)
            .await
            .unwrap_or_else(|| Err(DbErr::Custom("the batch of orders failed".into()).into())),
        _ => place_alone(db, &prepared).await,
    }
}

impl Prepared {
    /// Whether the order may be placed together with others: it names no voucher, seat or
    /// cart, needs no seat, and is kept.
    fn is_plain(&self) -> bool {
        let n = &self.new;
        !n.simulate
            && n.consume_carts.is_empty()
            && self.answers.claims.is_empty()
            && n.positions.iter().all(|p| {
                p.voucher.is_none()
                    && p.seat.is_none()
                    && !self
                        .catalogue
                        .seating(&self.ctx.event, p.subevent)
                        .sold_by_seat(p.item)
            })
    }
}
