//! Everyone out at a list's `exit_all_at`, as pretix: at that instant each ticket whose last
//! successful scan on the list is an entry gets an exit, stored as done by the system, and
//! quotas that `release_after_exit` get the capacity back. Then the list's `exit_all_at`
//! moves to the same time on the next day for an event series and is cleared otherwise.
//!
//! Every `tessera serve` sweeps; each ticket is checked out under its order's and its own
//! lock, and only while it is still inside, so two processes never check anyone out twice.

use chrono::{DateTime, Days, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, FromQueryResult};

use super::redeem::{exited, positions_where, quotas_of};
use super::{Direction, NewCheckin, insert, rows};
use crate::db;
use crate::domain::availability::{self, HoldKind};

#[derive(FromQueryResult)]
struct Due {
    id: i64,
    exit_all_at: Option<DateTime<Utc>>,
    has_subevents: bool,
    timezone: String,
    allow_entry_after_exit: bool,
}

const DUE: &str = "SELECT l.id, l.exit_all_at, e.has_subevents, e.timezone, l.allow_entry_after_exit \
     FROM checkin_lists l JOIN events e ON e.id = l.event_id \
     WHERE l.exit_all_at IS NOT NULL AND l.exit_all_at <= $1";

/// Checks everyone out of every list whose `exit_all_at` has come; gives how many exits it
/// stored.
pub async fn sweep(pool: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64, DbErr> {
    let due: Vec<Due> = rows(pool, &format!("{DUE} ORDER BY l.id"), vec![now.into()]).await?;
    let mut exits = 0;
    for list in &due {
        exits += exit_list(pool, list).await?;
    }
    Ok(exits)
}

/// Tickets whose last successful scan on list `$1` up to `$2` is an entry.
const INSIDE: &str = "SELECT c.position_id AS id, p.order_id FROM checkins c \
     JOIN order_positions p ON p.id = c.position_id \
     WHERE c.list_id = $1 AND c.successful AND c.type = 'entry' AND c.datetime <= $2 \
     AND NOT EXISTS (SELECT 1 FROM checkins n WHERE n.list_id = c.list_id \
     AND n.position_id = c.position_id AND n.successful AND n.datetime <= $2 \
     AND (n.datetime > c.datetime OR (n.datetime = c.datetime AND n.id > c.id)))";

#[derive(FromQueryResult)]
struct Inside {
    id: i64,
    order_id: i64,
}

/// Checks out everyone inside one list, each ticket in a transaction of its own (locking
/// order, then position, then quotas, as a scan does), then moves the list's `exit_all_at`
/// on.
async fn exit_list(pool: &DatabaseConnection, list: &Due) -> Result<u64, DbErr> {
    let Some(at) = list.exit_all_at else {
        return Ok(0);
    };
    let inside: Vec<Inside> = rows(
        pool,
        &format!("{INSIDE} ORDER BY c.position_id"),
        vec![list.id.into(), at.into()],
    )
    .await?;
    let mut exits = 0;
    for ticket in &inside {
        if exit_one(pool, list, ticket, at).await? {
            exits += 1;
        }
    }
    let txn = db::begin_write(pool).await?;
    db::lock_row(&txn, "checkin_lists", list.id).await?;
    #[derive(FromQueryResult)]
    struct At {
        exit_all_at: Option<DateTime<Utc>>,
    }
    let now: Vec<At> = rows(
        &txn,
        "SELECT exit_all_at FROM checkin_lists WHERE id = $1",
        vec![list.id.into()],
    )
    .await?;
    if now.first().and_then(|l| l.exit_all_at) == Some(at) {
        let next = list.has_subevents.then(|| next_day(at, &list.timezone));
        db::execute(
            &txn,
            "UPDATE checkin_lists SET exit_all_at = $1 WHERE id = $2",
            [next.into(), list.id.into()],
        )
        .await?;
    }
    db::commit(txn).await?;
    Ok(exits)
}

/// One ticket out, unless a scan or another process moved it meanwhile.
async fn exit_one(
    pool: &DatabaseConnection,
    list: &Due,
    ticket: &Inside,
    at: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let txn = db::begin_write(pool).await?;
    db::lock_row(&txn, "orders", ticket.order_id).await?;
    db::lock_row(&txn, "order_positions", ticket.id).await?;
    let still: Vec<Inside> = rows(
        &txn,
        &format!("{INSIDE} AND c.position_id = $3"),
        vec![list.id.into(), at.into(), ticket.id.into()],
    )
    .await?;
    if still.is_empty() {
        return Ok(false);
    }
    let releases = !list.allow_entry_after_exit;
    let before = releases && exited(&txn, ticket.id).await?;
    insert(&txn, &system_exit(list.id, ticket.id, at)).await?;
    if releases && exited(&txn, ticket.id).await? != before {
        move_exit_hold(&txn, ticket.id, 1).await?;
    }
    db::commit(txn).await?;
    Ok(true)
}

/// Moves a paid ticket's exit hold by `delta`: 1 gives its capacity back to the quotas that
/// release it after an exit, -1 takes it again (an exit annulled).
pub(crate) async fn move_exit_hold(
    txn: &impl ConnectionTrait,
    position_id: i64,
    delta: i64,
) -> Result<(), DbErr> {
    let Some(p) = positions_where(txn, "p.id = $1", vec![position_id.into()])
        .await?
        .into_iter()
        .next()
    else {
        return Ok(());
    };
    if p.order_status != "p" {
        return Ok(());
    }
    let quotas = quotas_of(txn, &p).await?;
    availability::lock_quotas(txn, &quotas).await?;
    availability::adjust(txn, &quotas, HoldKind::Exited, None, delta).await
}

/// The same local time on the next day in the event's time zone (24 hours later where that
/// time does not exist).
fn next_day(at: DateTime<Utc>, timezone: &str) -> DateTime<Utc> {
    timezone
        .parse::<chrono_tz::Tz>()
        .ok()
        .and_then(|tz| at.with_timezone(&tz).checked_add_days(Days::new(1)))
        .map_or(at + TimeDelta::days(1), |d| d.with_timezone(&Utc))
}

/// An exit stored as done by the system.
fn system_exit(list_id: i64, position_id: i64, at: DateTime<Utc>) -> NewCheckin {
    NewCheckin {
        list_id,
        position_id: Some(position_id),
        successful: true,
        direction: Direction::Exit,
        datetime: at,
        nonce: None,
        forced: false,
        error_reason: None,
        error_explanation: None,
        raw_barcode: None,
        raw_item: None,
        raw_variation: None,
        raw_subevent: None,
        gate_id: None,
        device_id: None,
        auto_checked_in: true,
    }
}

/// Runs [`sweep`] every `period`, forever.
pub async fn sweep_every(pool: DatabaseConnection, period: std::time::Duration) {
    let mut ticks = tokio::time::interval(period);
    loop {
        ticks.tick().await;
        if let Err(error) = sweep(&pool, crate::values::now()).await {
            tracing::warn!(%error, "could not check everyone out at exit_all_at");
        }
    }
}
