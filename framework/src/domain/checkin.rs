//! Check-in: lists saying which tickets admit whom ([`lists`]), their entry rules in JSON
//! logic ([`rules`]), scanning a ticket ([`redeem`]), finding tickets and reading the scans
//! ([`search`]), checking everyone out at a list's `exit_all_at` ([`exit_all`]), and which event a device at a gate should scan for ([`selection`]).

pub mod annul;
pub mod exit_all;
pub mod lists;
pub mod redeem;
pub mod rules;
pub mod search;
pub mod selection;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement, Value as DbValue};

/// Entry or exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Coming in.
    Entry,
    /// Going out.
    Exit,
}

impl Direction {
    /// The stored and API name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Entry => "entry",
            Self::Exit => "exit",
        }
    }

    /// From the stored name; anything else is an entry.
    pub fn parse(s: &str) -> Self {
        if s == "exit" { Self::Exit } else { Self::Entry }
    }
}

/// A check-in as stored: a successful scan, or a refused one with its reason.
#[derive(Debug, Clone, FromQueryResult)]
pub struct CheckinRow {
    /// ID.
    pub id: i64,
    /// The list.
    pub list_id: i64,
    /// The position, when known.
    pub position_id: Option<i64>,
    /// Whether it admitted.
    pub successful: bool,
    /// `entry` or `exit`.
    pub r#type: String,
    /// When it happened (as the scanner says).
    pub datetime: DateTime<Utc>,
    /// When it was stored.
    pub created: DateTime<Utc>,
    /// The scanner's nonce.
    pub nonce: Option<String>,
    /// Admitted although a check failed.
    pub forced: bool,
    /// Why it was refused.
    pub error_reason: Option<String>,
    /// More about why.
    pub error_explanation: Option<String>,
    /// The gate (`gates.id`).
    pub gate_id: Option<i64>,
    /// The device's row (`devices.id`).
    pub device_id: Option<i64>,
    /// The device's number within the organizer.
    pub device_number: Option<i64>,
    /// Done by the system, not a scan.
    pub auto_checked_in: bool,
}

/// Columns of [`CheckinRow`] from `checkins c` joined with `devices d`.
pub(crate) const CHECKIN_COLUMNS: &str = "c.id, c.list_id, c.position_id, c.successful, c.type, \
     c.datetime, c.created, c.nonce, c.forced, c.error_reason, c.error_explanation, c.gate_id, \
     c.device_id, d.device_id AS device_number, c.auto_checked_in";

/// A check-in to store.
#[derive(Debug, Clone)]
pub struct NewCheckin {
    /// The list.
    pub list_id: i64,
    /// The position, when known.
    pub position_id: Option<i64>,
    /// Whether it admitted.
    pub successful: bool,
    /// Entry or exit.
    pub direction: Direction,
    /// When it happened.
    pub datetime: DateTime<Utc>,
    /// The scanner's nonce.
    pub nonce: Option<String>,
    /// Admitted although a check failed.
    pub forced: bool,
    /// Why it was refused.
    pub error_reason: Option<String>,
    /// More about why.
    pub error_explanation: Option<String>,
    /// What was scanned.
    pub raw_barcode: Option<String>,
    /// Item, variation and sub-event as the scanner read them.
    pub raw_item: Option<i64>,
    /// See `raw_item`.
    pub raw_variation: Option<i64>,
    /// See `raw_item`.
    pub raw_subevent: Option<i64>,
    /// The gate.
    pub gate_id: Option<i64>,
    /// The device's row.
    pub device_id: Option<i64>,
    /// Done by the system (the nightly exit of everyone), not a scan.
    pub auto_checked_in: bool,
}

/// Stores a check-in; gives its ID. A successful one moves its order's `last_modified`, so
/// that scanners syncing with `modified_since` see it.
pub async fn insert(db: &impl ConnectionTrait, c: &NewCheckin) -> Result<i64, DbErr> {
    let touch = c.successful && c.position_id.is_some();
    const COLUMNS: &str = "INSERT INTO checkins (list_id, position_id, successful, type, datetime, \
         created, nonce, forced, error_reason, error_explanation, raw_barcode, raw_item, \
         raw_variation, raw_subevent, gate_id, device_id, auto_checked_in) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
         RETURNING id";
    const TOUCH: &str = "UPDATE orders SET last_modified = $6 \
         WHERE id = (SELECT order_id FROM order_positions WHERE id = $2)";
    let now = crate::values::now();
    let values = [
        c.list_id.into(),
        c.position_id.into(),
        c.successful.into(),
        c.direction.as_str().into(),
        c.datetime.into(),
        now.into(),
        c.nonce.clone().into(),
        c.forced.into(),
        c.error_reason.clone().into(),
        c.error_explanation.clone().into(),
        c.raw_barcode.clone().into(),
        c.raw_item.into(),
        c.raw_variation.into(),
        c.raw_subevent.into(),
        c.gate_id.into(),
        c.device_id.into(),
        c.auto_checked_in.into(),
    ];
    if !touch {
        return crate::db::insert_returning_id(db, COLUMNS, values).await;
    }
    if db.get_database_backend() == sea_orm::DbBackend::Postgres {
        // One statement: the order moves with its scan.
        let sql = format!("WITH touched AS ({TOUCH}) {COLUMNS}");
        return crate::db::insert_returning_id(db, &sql, values).await;
    }
    crate::db::execute(
        db,
        "UPDATE orders SET last_modified = $1 \
         WHERE id = (SELECT order_id FROM order_positions WHERE id = $2)",
        [now.into(), c.position_id.into()],
    )
    .await?;
    crate::db::insert_returning_id(db, COLUMNS, values).await
}

/// Rows of a query with `$n` placeholders.
pub(crate) async fn rows<T: FromQueryResult>(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<DbValue>,
) -> Result<Vec<T>, DbErr> {
    T::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        values,
    ))
    .all(db)
    .await
}

/// `$first, $first+1, ...` for `n` values.
pub(crate) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Successful check-ins of these positions on these lists, oldest first.
pub async fn of_positions(
    db: &impl ConnectionTrait,
    position_ids: &[i64],
    list_ids: &[i64],
) -> Result<Vec<CheckinRow>, DbErr> {
    if position_ids.is_empty() || list_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {CHECKIN_COLUMNS} FROM checkins c LEFT JOIN devices d ON d.id = c.device_id \
         WHERE c.successful AND c.position_id IN ({}) AND c.list_id IN ({}) \
         ORDER BY c.datetime, c.id",
        placeholders(1, position_ids.len()),
        placeholders(1 + position_ids.len(), list_ids.len())
    );
    let values = position_ids
        .iter()
        .chain(list_ids)
        .map(|&i| i.into())
        .collect();
    rows(db, &sql, values).await
}
