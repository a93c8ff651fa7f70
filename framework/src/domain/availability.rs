//! How much of a quota is left: the one place that knows what holds a quota's capacity.
//!
//! Everything that uses capacity (paid and pending order positions, unused blocking
//! vouchers, live cart positions, waiting list entries, and tickets scanned at an exit) is
//! kept as *holds*: per quota, kind and expiry instant, a count (table `quota_holds`).
//! Whoever creates or removes such a thing calls [`adjust`] in the same transaction, so a
//! quota's availability is a sum over a handful of hold rows, never a count over the orders
//! of the event, and a cart or voucher stops counting the moment it expires.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter,
    Statement, Value as DbValue,
};

use crate::db::entities::quota;

/// What holds capacity of a quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldKind {
    /// Positions of paid orders.
    Paid,
    /// Positions of pending orders.
    Pending,
    /// Paid positions whose ticket was last scanned at an exit.
    Exited,
    /// Unused redemptions of vouchers that block quota.
    Voucher,
    /// Cart positions.
    Cart,
    /// Waiting list entries without a voucher.
    WaitingList,
}

impl HoldKind {
    /// Every kind.
    pub const ALL: [HoldKind; 6] = [
        Self::Paid,
        Self::Pending,
        Self::Exited,
        Self::Voucher,
        Self::Cart,
        Self::WaitingList,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paid => "paid",
            Self::Pending => "pending",
            Self::Exited => "exited",
            Self::Voucher => "voucher",
            Self::Cart => "cart",
            Self::WaitingList => "waiting_list",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Expiry of holds that last until they are removed.
pub const NEVER: i64 = i64::MAX;

/// The expiry instant as stored: microseconds since the epoch.
pub fn expiry(at: Option<DateTime<Utc>>) -> i64 {
    at.map_or(NEVER, |t| t.timestamp_micros())
}

/// Units held per kind, counting only holds that have not expired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holds {
    /// Paid order positions.
    pub paid: i64,
    /// Pending order positions.
    pub pending: i64,
    /// Paid positions scanned at an exit.
    pub exited: i64,
    /// Unused blocking voucher redemptions.
    pub vouchers: i64,
    /// Live cart positions.
    pub carts: i64,
    /// Waiting list entries without a voucher.
    pub waiting_list: i64,
}

impl Holds {
    fn add(&mut self, kind: HoldKind, n: i64) {
        let slot = match kind {
            HoldKind::Paid => &mut self.paid,
            HoldKind::Pending => &mut self.pending,
            HoldKind::Exited => &mut self.exited,
            HoldKind::Voucher => &mut self.vouchers,
            HoldKind::Cart => &mut self.carts,
            HoldKind::WaitingList => &mut self.waiting_list,
        };
        *slot += n;
    }
}

/// How far a quota is used, in pretix's terms: what uses it up first decides its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// Sold out by paid orders.
    Gone,
    /// Used up by pending orders, blocking vouchers or the waiting list, or closed.
    Ordered,
    /// Used up only because of live carts.
    Reserved,
    /// Something is left.
    Ok,
}

/// The availability of a quota, as the API reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    /// The state.
    pub state: State,
    /// Units left; `None` for an unlimited quota.
    pub available_number: Option<i64>,
    /// The quota's size; `None` for unlimited.
    pub total_size: Option<i64>,
    /// What holds it.
    pub holds: Holds,
}

impl Availability {
    /// Whether anything of it can be sold now.
    pub fn available(&self) -> bool {
        self.state == State::Ok
    }
}

/// Applies pretix's rule to a quota and what holds it: from the size subtract paid and
/// pending positions (giving back exited ones if the quota releases them), then blocking
/// vouchers, then live carts, then the waiting list. What first brings the rest to zero
/// names the state. A closed quota is not available, whatever is left.
pub fn compute(q: &quota::Model, holds: Holds) -> Availability {
    let done = |state, available_number| Availability {
        state,
        available_number,
        total_size: q.size,
        holds,
    };
    if q.closed {
        return done(State::Ordered, Some(0));
    }
    let Some(size) = q.size else {
        return done(State::Ok, None);
    };
    let released = if q.release_after_exit {
        holds.exited
    } else {
        0
    };
    let steps = [
        (holds.paid - released, State::Gone),
        (holds.pending, State::Ordered),
        (holds.vouchers, State::Ordered),
        (holds.carts, State::Reserved),
        (holds.waiting_list, State::Ordered),
    ];
    let mut left = size;
    if left <= 0 {
        return done(State::Gone, Some(0));
    }
    for (used, state) in steps {
        left -= used;
        if left <= 0 {
            return done(state, Some(0));
        }
    }
    done(State::Ok, Some(left))
}

#[derive(FromQueryResult)]
struct HoldSum {
    quota_id: i64,
    kind: String,
    total: i64,
}

fn id_list(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// What holds each of these quotas now: one query, whatever their number.
pub async fn holds(
    db: &impl ConnectionTrait,
    quota_ids: &[i64],
    now: DateTime<Utc>,
) -> Result<HashMap<i64, Holds>, DbErr> {
    let mut out: HashMap<i64, Holds> = quota_ids.iter().map(|&id| (id, Holds::default())).collect();
    if quota_ids.is_empty() {
        return Ok(out);
    }
    // IDs are integers, so listing them inline is safe and keeps one statement for any count.
    let sql = format!(
        "SELECT quota_id, kind, CAST(SUM(count) AS BIGINT) AS total FROM quota_holds \
         WHERE quota_id IN ({}) AND expires_us > $1 GROUP BY quota_id, kind",
        id_list(quota_ids)
    );
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [now.timestamp_micros().into()],
    );
    for row in HoldSum::find_by_statement(stmt).all(db).await? {
        if let (Some(h), Some(kind)) = (out.get_mut(&row.quota_id), HoldKind::parse(&row.kind)) {
            h.add(kind, row.total);
        }
    }
    Ok(out)
}

/// The availability of each quota: one query for all.
pub async fn of_quotas(
    db: &impl ConnectionTrait,
    quotas: &[quota::Model],
) -> Result<HashMap<i64, Availability>, DbErr> {
    let ids: Vec<i64> = quotas.iter().map(|q| q.id).collect();
    let mut holds = holds(db, &ids, crate::values::now()).await?;
    Ok(quotas
        .iter()
        .map(|q| (q.id, compute(q, holds.remove(&q.id).unwrap_or_default())))
        .collect())
}

/// The statement reading quotas with their live holds summed by kind, for quotas that
/// match `filter` (`q.`-qualified, parameters from `$2`; `$1` is now).
fn sums_sql(filter: &str) -> String {
    let sums: String = HoldKind::ALL
        .iter()
        .map(|k| {
            format!(
                ", CAST(COALESCE(SUM(CASE WHEN h.kind = '{0}' THEN h.count END), 0) \
                 AS BIGINT) AS {0}",
                k.as_str()
            )
        })
        .collect();
    format!(
        "SELECT q.id, q.subevent_id, q.size, q.closed, q.release_after_exit{sums} FROM quotas q \
         LEFT JOIN quota_holds h ON h.quota_id = q.id AND h.expires_us > $1 \
         WHERE {filter} GROUP BY q.id, q.subevent_id, q.size, q.closed, q.release_after_exit"
    )
}

/// Reads [`sums_sql`]'s rows: each quota's ID, date and availability.
async fn read_sums(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<DbValue>,
) -> Result<Vec<(i64, Option<i64>, Availability)>, DbErr> {
    let mut all = vec![crate::values::now().timestamp_micros().into()];
    all.extend(values);
    let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, all);
    let mut out = Vec::new();
    for row in db.query_all_raw(stmt).await? {
        let q = quota::Model {
            id: row.try_get("", "id")?,
            event_id: 0,
            subevent_id: row.try_get("", "subevent_id")?,
            name: String::new(),
            size: row.try_get("", "size")?,
            close_when_sold_out: false,
            closed: row.try_get("", "closed")?,
            release_after_exit: row.try_get("", "release_after_exit")?,
            ignore_for_event_availability: false,
        };
        let mut holds = Holds::default();
        for kind in HoldKind::ALL {
            holds.add(kind, row.try_get("", kind.as_str())?);
        }
        out.push((q.id, q.subevent_id, compute(&q, holds)));
    }
    Ok(out)
}

/// The availability of one quota of an event, read in one query with its holds; `None` when
/// the event has no such quota.
pub async fn of_quota(
    db: &impl ConnectionTrait,
    event_id: i64,
    quota_id: i64,
) -> Result<Option<Availability>, DbErr> {
    static SQL: OnceLock<String> = OnceLock::new();
    let sql = SQL.get_or_init(|| sums_sql("q.id = $2 AND q.event_id = $3"));
    let found = read_sums(db, sql, vec![quota_id.into(), event_id.into()]).await?;
    Ok(found.into_iter().next().map(|(_, _, a)| a))
}

/// The availability of every quota of an event (of one date of a series, or, without one,
/// of quotas without a date), read in one query with their holds.
pub async fn of_event(
    db: &impl ConnectionTrait,
    event_id: i64,
    subevent_id: Option<i64>,
) -> Result<HashMap<i64, Availability>, DbErr> {
    static OF_EVENT: OnceLock<String> = OnceLock::new();
    static OF_DATE: OnceLock<String> = OnceLock::new();
    match subevent_id {
        None => {
            let sql =
                OF_EVENT.get_or_init(|| sums_sql("q.event_id = $2 AND q.subevent_id IS NULL"));
            Ok(by_id(read_sums(db, sql, vec![event_id.into()]).await?))
        }
        Some(date) => {
            let sql = OF_DATE.get_or_init(|| sums_sql("q.event_id = $2 AND q.subevent_id = $3"));
            Ok(by_id(
                read_sums(db, sql, vec![event_id.into(), date.into()]).await?,
            ))
        }
    }
}

fn by_id(rows: Vec<(i64, Option<i64>, Availability)>) -> HashMap<i64, Availability> {
    rows.into_iter().map(|(id, _, a)| (id, a)).collect()
}

/// The availability of every quota of a series, by date, read in one query.
pub async fn of_dates(
    db: &impl ConnectionTrait,
    event_id: i64,
) -> Result<HashMap<i64, Vec<Availability>>, DbErr> {
    static SQL: OnceLock<String> = OnceLock::new();
    let sql = SQL.get_or_init(|| sums_sql("q.event_id = $2 AND q.subevent_id IS NOT NULL"));
    let mut out: HashMap<i64, Vec<Availability>> = HashMap::new();
    for (_, date, a) in read_sums(db, sql, vec![event_id.into()]).await? {
        if let Some(d) = date {
            out.entry(d).or_default().push(a);
        }
    }
    Ok(out)
}

/// Changes what a kind holds of each of these quotas by `delta` units, until `expires`
/// (`None`: until removed). Call it inside the transaction that creates or removes what
/// holds the capacity; quotas that `close_when_sold_out` and are used up by it close at once.
pub async fn adjust(
    txn: &impl ConnectionTrait,
    quota_ids: &[i64],
    kind: HoldKind,
    expires: Option<DateTime<Utc>>,
    delta: i64,
) -> Result<(), DbErr> {
    if quota_ids.is_empty() || delta == 0 {
        return Ok(());
    }
    let mut quota_ids = quota_ids.to_vec();
    quota_ids.sort_unstable();
    for &quota_id in &quota_ids {
        add_hold(txn, quota_id, kind, expires, delta).await?;
    }
    if delta > 0 {
        close_sold_out(txn, &quota_ids).await
    } else {
        forget_expired(txn, &quota_ids).await
    }
}

/// Holds `demand` of quotas locked in this transaction with [`lock_quotas`], without
/// checking what is left (see [`reserve`]). Knowing the locked rows, it reads nothing more
/// unless one of them closes when sold out.
pub async fn hold(
    txn: &impl ConnectionTrait,
    locked: &[quota::Model],
    demand: &Demand,
    kind: HoldKind,
    expires: Option<DateTime<Utc>>,
) -> Result<(), DbErr> {
    for (&quota_id, &n) in demand.iter().filter(|(_, n)| **n != 0) {
        add_hold(txn, quota_id, kind, expires, n).await?;
    }
    let closing: Vec<i64> = locked
        .iter()
        .filter(|q| q.close_when_sold_out && !q.closed)
        .filter(|q| demand.get(&q.id).is_some_and(|&n| n > 0))
        .map(|q| q.id)
        .collect();
    if closing.is_empty() {
        return Ok(());
    }
    close_sold_out(txn, &closing).await
}

async fn add_hold(
    txn: &impl ConnectionTrait,
    quota_id: i64,
    kind: HoldKind,
    expires: Option<DateTime<Utc>>,
    delta: i64,
) -> Result<(), DbErr> {
    let stmt = Statement::from_sql_and_values(
        txn.get_database_backend(),
        "INSERT INTO quota_holds (quota_id, kind, expires_us, count) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (quota_id, kind, expires_us) \
         DO UPDATE SET count = quota_holds.count + excluded.count",
        [
            quota_id.into(),
            kind.as_str().into(),
            expiry(expires).into(),
            delta.into(),
        ],
    );
    txn.execute_raw(stmt).await?;
    Ok(())
}

/// Closes those of these quotas that `close_when_sold_out` and are sold out (paid or pending
/// orders, blocking vouchers or the waiting list leave nothing; live carts do not count as
/// sold out). They stay closed until an update opens them.
pub async fn close_sold_out(txn: &impl ConnectionTrait, quota_ids: &[i64]) -> Result<(), DbErr> {
    let candidates = quota::Entity::find()
        .filter(quota::Column::Id.is_in(quota_ids.iter().copied()))
        .filter(quota::Column::CloseWhenSoldOut.eq(true))
        .filter(quota::Column::Closed.eq(false))
        .all(txn)
        .await?;
    if candidates.is_empty() {
        return Ok(());
    }
    let sold_out: Vec<i64> = of_quotas(txn, &candidates)
        .await?
        .into_iter()
        .filter(|(_, a)| a.state <= State::Ordered)
        .map(|(id, _)| id)
        .collect();
    if sold_out.is_empty() {
        return Ok(());
    }
    quota::Entity::update_many()
        .col_expr(quota::Column::Closed, Expr::value(true))
        .filter(quota::Column::Id.is_in(sold_out))
        .exec(txn)
        .await?;
    Ok(())
}

/// Drops the hold rows of every quota that have expired or dropped to zero. Such rows count
/// for nothing, so this needs no lock; every `tessera serve` runs it now and then (see
/// [`sweep_every`]), and releases run it for their quotas, so each quota keeps a few rows.
pub async fn sweep(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        "DELETE FROM quota_holds WHERE expires_us <= $1 OR count = 0",
        [DbValue::from(crate::values::now().timestamp_micros())],
    );
    Ok(db.execute_raw(stmt).await?.rows_affected())
}

/// Runs [`sweep`] every `period`, forever.
pub async fn sweep_every(db: sea_orm::DatabaseConnection, period: std::time::Duration) {
    let mut ticks = tokio::time::interval(period);
    loop {
        ticks.tick().await;
        if let Err(error) = sweep(&db).await {
            tracing::warn!(%error, "could not drop expired quota holds");
        }
    }
}

/// Drops these quotas' hold rows that have expired or dropped to zero.
async fn forget_expired(txn: &impl ConnectionTrait, quota_ids: &[i64]) -> Result<(), DbErr> {
    let stmt = Statement::from_sql_and_values(
        txn.get_database_backend(),
        format!(
            "DELETE FROM quota_holds WHERE quota_id IN ({}) AND (expires_us <= $1 OR count = 0)",
            id_list(quota_ids)
        ),
        [DbValue::from(crate::values::now().timestamp_micros())],
    );
    txn.execute_raw(stmt).await?;
    Ok(())
}

/// Reads these quotas and locks them until the transaction ends, in ID order (on
/// PostgreSQL; SQLite transactions that write are serialised already). Whoever changes the
/// holds of a quota locks it first: the lock guards the quota's holds, so a check of what is
/// left and the hold that follows it can never interleave with another's.
pub async fn lock_quotas(
    txn: &impl ConnectionTrait,
    quota_ids: &[i64],
) -> Result<Vec<quota::Model>, DbErr> {
    if quota_ids.is_empty() {
        return Ok(Vec::new());
    }
    let _wait = crate::metrics::LockWait::start(crate::metrics::Lock::Quotas);
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    let sql = format!(
        "SELECT * FROM quotas WHERE id IN ({}) ORDER BY id{lock}",
        id_list(quota_ids)
    );
    quota::Model::find_by_statement(Statement::from_string(backend, sql))
        .all(txn)
        .await
}

/// Locks these quotas ([`lock_quotas`]) and reads their availability after the lock, in
/// one round trip on PostgreSQL: each quota row, as the `FOR UPDATE` subquery gives it out
/// locked, has its holds summed by `tessera_quota_holds` (migration m0025), whose query takes
/// a snapshot of its own, so that it sees the holds of whoever held the lock before. On
/// SQLite, the two statements of [`lock_quotas`] and [`of_quotas`].
pub async fn lock_and_read(
    txn: &impl ConnectionTrait,
    quota_ids: &[i64],
) -> Result<(Vec<quota::Model>, HashMap<i64, Availability>), DbErr> {
    let backend = txn.get_database_backend();
    if backend != DbBackend::Postgres || quota_ids.is_empty() {
        let quotas = lock_quotas(txn, quota_ids).await?;
        let availability = of_quotas(txn, &quotas).await?;
        return Ok((quotas, availability));
    }
    #[derive(FromQueryResult)]
    struct Held {
        held_kind: Option<String>,
        held_total: Option<i64>,
    }
    let _wait = crate::metrics::LockWait::start(crate::metrics::Lock::Quotas);
    let sql = format!(
        "SELECT q.*, h.kind AS held_kind, h.total AS held_total FROM \
         (SELECT * FROM quotas WHERE id IN ({}) ORDER BY id FOR UPDATE) q \
         LEFT JOIN LATERAL tessera_quota_holds(q.id, $1) h ON TRUE ORDER BY q.id",
        id_list(quota_ids)
    );
    let stmt = Statement::from_sql_and_values(
        backend,
        sql,
        [DbValue::from(crate::values::now().timestamp_micros())],
    );
    let mut quotas: Vec<quota::Model> = Vec::new();
    let mut holds: HashMap<i64, Holds> = HashMap::new();
    for row in txn.query_all_raw(stmt).await? {
        let q = quota::Model::from_query_result(&row, "")?;
        let held = Held::from_query_result(&row, "")?;
        let h = holds.entry(q.id).or_default();
        if let (Some(kind), Some(total)) = (held.held_kind.as_deref(), held.held_total)
            && let Some(kind) = HoldKind::parse(kind)
        {
            h.add(kind, total);
        }
        if quotas.last().is_none_or(|last| last.id != q.id) {
            quotas.push(q);
        }
    }
    let availability = quotas
        .iter()
        .map(|q| (q.id, compute(q, holds.remove(&q.id).unwrap_or_default())))
        .collect();
    Ok((quotas, availability))
}

/// Units wanted of each quota.
pub type Demand = BTreeMap<i64, i64>;

/// Holds `demand` of the locked quotas for `kind` until `expires`, if every quota has that
/// much left; otherwise holds nothing and gives the IDs of the quotas that are short.
/// `quotas` must have been locked with [`lock_quotas`] in this transaction.
pub async fn reserve(
    txn: &impl ConnectionTrait,
    quotas: &[quota::Model],
    demand: &Demand,
    kind: HoldKind,
    expires: Option<DateTime<Utc>>,
) -> Result<Result<(), Vec<i64>>, DbErr> {
    let short = short_quotas(txn, quotas, demand).await?;
    if !short.is_empty() {
        return Ok(Err(short));
    }
    hold(txn, quotas, demand, kind, expires).await?;
    Ok(Ok(()))
}

/// The IDs of those locked quotas that have less left than `demand` asks of them.
pub async fn short_quotas(
    txn: &impl ConnectionTrait,
    quotas: &[quota::Model],
    demand: &Demand,
) -> Result<Vec<i64>, DbErr> {
    let wanted: Vec<quota::Model> = quotas
        .iter()
        .filter(|q| demand.get(&q.id).is_some_and(|&n| n > 0))
        .cloned()
        .collect();
    let availability = of_quotas(txn, &wanted).await?;
    Ok(wanted
        .iter()
        .filter(|q| {
            let a = availability[&q.id];
            let n = demand[&q.id];
            q.closed || a.available_number.is_some_and(|left| left < n)
        })
        .map(|q| q.id)
        .collect())
}

/// The IDs of those locked quotas that have less left than `demand` asks of them when the
/// waiting list is left out (pretix's `count_waitinglist=False`): what serves the waiting
/// list, or goes ahead of it, asks this instead of [`short_quotas`]. Blocking vouchers are
/// such, and so is the question whether somebody may join the waiting list at all.
pub async fn short_ahead_of_waiting_list(
    txn: &impl ConnectionTrait,
    quotas: &[quota::Model],
    demand: &Demand,
) -> Result<Vec<i64>, DbErr> {
    let wanted: Vec<&quota::Model> = quotas
        .iter()
        .filter(|q| demand.get(&q.id).is_some_and(|&n| n > 0))
        .collect();
    let ids: Vec<i64> = wanted.iter().map(|q| q.id).collect();
    let mut held = holds(txn, &ids, crate::values::now()).await?;
    Ok(wanted
        .into_iter()
        .filter(|q| {
            let mut h = held.remove(&q.id).unwrap_or_default();
            h.waiting_list = 0;
            let left = compute(q, h).available_number;
            q.closed || left.is_some_and(|left| left < demand[&q.id])
        })
        .map(|q| q.id)
        .collect())
}

#[derive(FromQueryResult)]
struct Counted {
    expires: Option<DateTime<Utc>>,
    total: i64,
}

/// SQL condition: the row's `item_id`, `variation_id` and `subevent_id` fall into quota `$1`
/// whose sub-event is `$2`.
const IN_QUOTA: &str = "(({t}.subevent_id = $2 OR ({t}.subevent_id IS NULL AND $2 IS NULL)) \
     AND (({t}.variation_id IS NULL AND {t}.item_id IN \
           (SELECT item_id FROM quota_items WHERE quota_id = $1)) \
       OR {t}.variation_id IN (SELECT variation_id FROM quota_variations WHERE quota_id = $1)))";

fn in_quota(table: &str) -> String {
    IN_QUOTA.replace("{t}", table)
}

/// Counts again, from orders, carts, blocking vouchers and the waiting list, everything that
/// holds a quota, after its items, variations or sub-event changed.
pub async fn recount(txn: &impl ConnectionTrait, q: &quota::Model) -> Result<(), DbErr> {
    let backend = txn.get_database_backend();
    txn.execute_raw(Statement::from_sql_and_values(
        backend,
        "DELETE FROM quota_holds WHERE quota_id = $1 AND kind <> 'exited'",
        [q.id.into()],
    ))
    .await?;
    let positions = format!(
        "FROM order_positions op JOIN orders o ON o.id = op.order_id \
         WHERE o.event_id = $3 AND NOT op.canceled AND {}",
        in_quota("op")
    );
    let queries = [
        (
            HoldKind::Paid,
            format!("SELECT NULL AS expires, COUNT(*) AS total {positions} AND o.status = 'p'"),
        ),
        (
            HoldKind::Pending,
            format!(
                "SELECT CASE WHEN o.expires_automatically THEN o.expires END AS expires, \
                 COUNT(*) AS total {positions} AND o.status = 'n' \
                 GROUP BY CASE WHEN o.expires_automatically THEN o.expires END"
            ),
        ),
        (
            HoldKind::Cart,
            format!(
                "SELECT c.expires, COUNT(*) AS total FROM cart_positions c \
                 WHERE c.event_id = $3 AND {} GROUP BY c.expires",
                in_quota("c")
            ),
        ),
        (
            HoldKind::Voucher,
            format!(
                "SELECT v.valid_until AS expires, SUM(v.max_usages - v.redeemed) AS total \
                 FROM vouchers v WHERE v.event_id = $3 AND v.block_quota \
                 AND v.redeemed < v.max_usages AND (v.quota_id = $1 \
                 OR (v.quota_id IS NULL AND v.item_id IS NOT NULL AND {})) \
                 GROUP BY v.valid_until",
                in_quota("v")
            ),
        ),
        (
            HoldKind::WaitingList,
            format!(
                "SELECT NULL AS expires, COUNT(*) AS total FROM waiting_list_entries w \
                 WHERE w.event_id = $3 AND w.voucher_id IS NULL AND {}",
                in_quota("w")
            ),
        ),
    ];
    for (kind, sql) in queries {
        let sql = sql.replace("COUNT(*)", "CAST(COUNT(*) AS BIGINT)").replace(
            "SUM(v.max_usages - v.redeemed)",
            "CAST(SUM(v.max_usages - v.redeemed) AS BIGINT)",
        );
        let stmt = Statement::from_sql_and_values(
            backend,
            sql,
            [q.id.into(), q.subevent_id.into(), q.event_id.into()],
        );
        for row in Counted::find_by_statement(stmt).all(txn).await? {
            if row.total != 0 {
                adjust(txn, &[q.id], kind, row.expires, row.total).await?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(size: Option<i64>) -> quota::Model {
        quota::Model {
            id: 1,
            event_id: 1,
            subevent_id: None,
            name: "q".into(),
            size,
            close_when_sold_out: false,
            closed: false,
            release_after_exit: false,
            ignore_for_event_availability: false,
        }
    }

    #[test]
    fn the_first_kind_that_uses_up_the_quota_names_its_state() {
        let paid = Holds {
            paid: 10,
            ..Default::default()
        };
        assert_eq!(compute(&quota(Some(10)), paid).state, State::Gone);
        let carts = Holds {
            paid: 5,
            carts: 5,
            waiting_list: 3,
            ..Default::default()
        };
        let a = compute(&quota(Some(10)), carts);
        assert_eq!((a.state, a.available_number), (State::Reserved, Some(0)));
        let some_left = Holds {
            paid: 2,
            pending: 1,
            vouchers: 1,
            carts: 1,
            waiting_list: 1,
            ..Default::default()
        };
        let a = compute(&quota(Some(10)), some_left);
        assert_eq!((a.state, a.available_number), (State::Ok, Some(4)));
    }

    #[test]
    fn unlimited_closed_and_released_quotas() {
        let a = compute(&quota(None), Holds::default());
        assert_eq!((a.available(), a.available_number), (true, None));
        let mut closed = quota(Some(5));
        closed.closed = true;
        assert!(!compute(&closed, Holds::default()).available());
        let mut releasing = quota(Some(2));
        let holds = Holds {
            paid: 2,
            exited: 1,
            ..Default::default()
        };
        assert!(!compute(&releasing, holds).available());
        releasing.release_after_exit = true;
        assert_eq!(compute(&releasing, holds).available_number, Some(1));
    }
}
