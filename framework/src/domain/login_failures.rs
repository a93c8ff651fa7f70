//! Failed sign-ins, counted in the database per email address and per client address, so
//! that guessing slows down and then stops, across every process of the service.
//!
//! Within a window of [`WINDOW`] from a key's first failure: after [`Limits::slow_after`]
//! failures each attempt waits [`DELAY`]; after [`Limits::lock_after`] the key is locked for
//! [`WINDOW`] and attempts are refused without checking the password.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DbErr, EntityTrait, FromQueryResult, Statement};

use crate::db::entities::login_failure;

/// The counting window, and how long a lock lasts.
pub const WINDOW: TimeDelta = TimeDelta::minutes(15);
/// What an attempt waits once a key has had `slow_after` failures.
pub const DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// When a kind of key slows down and locks.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Failures after which each attempt waits [`DELAY`].
    pub slow_after: i32,
    /// Failures after which the key is locked for [`WINDOW`].
    pub lock_after: i32,
}

/// Limits of an email address.
pub const PER_EMAIL: Limits = Limits {
    slow_after: 5,
    lock_after: 10,
};
/// Limits of a client address: higher, as many people may share one address.
pub const PER_ADDRESS: Limits = Limits {
    slow_after: 20,
    lock_after: 50,
};

/// The key of an email address (normalize it first).
pub fn email_key(email: &str) -> String {
    format!("email:{email}")
}

/// The key of a client address (as given by `http::limits::address_key`).
pub fn address_key(address: &str) -> String {
    format!("address:{address}")
}

/// What an attempt under some keys may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Go,
    /// Go ahead after waiting [`DELAY`].
    Slow,
    /// Refused: a key is locked.
    Locked,
}

/// What an attempt under these keys (each with its limits) may do now.
pub async fn verdict(
    db: &impl ConnectionTrait,
    keys: &[(String, Limits)],
) -> Result<Verdict, DbErr> {
    let now = Utc::now();
    let mut verdict = Verdict::Go;
    for (key, limits) in keys {
        let Some(row) = login_failure::Entity::find_by_id(key.clone())
            .one(db)
            .await?
        else {
            continue;
        };
        if row.locked_until.is_some_and(|until| until > now) {
            return Ok(Verdict::Locked);
        }
        if row.first_failure + WINDOW > now && row.failures >= limits.slow_after {
            verdict = Verdict::Slow;
        }
    }
    Ok(verdict)
}

/// Counts a failure under each key (one atomic upsert each, starting a new window when the
/// old one is over) and locks the keys that reached their limit.
pub async fn record(db: &impl ConnectionTrait, keys: &[(String, Limits)]) -> Result<(), DbErr> {
    for (key, limits) in keys {
        record_one(db, key, *limits).await?;
    }
    Ok(())
}

async fn record_one(db: &impl ConnectionTrait, key: &str, limits: Limits) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let now = Utc::now();
    let row = login_failure::Model::find_by_statement(Statement::from_sql_and_values(
        backend,
        "INSERT INTO login_failures (key, failures, first_failure, locked_until) \
         VALUES ($1, 1, $2, NULL) ON CONFLICT (key) \
         DO UPDATE SET failures = login_failures.failures + 1 RETURNING *",
        [key.into(), now.into()],
    ))
    .one(db)
    .await?;
    let Some(row) = row else {
        return Ok(());
    };
    let mut failures = row.failures;
    if row.failures > 1 && row.first_failure + WINDOW <= now {
        restart_window(db, key, row.first_failure, now).await?;
        failures = 1;
    }
    if failures >= limits.lock_after {
        db.execute_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE login_failures SET locked_until = $2 WHERE key = $1",
            [key.into(), (now + WINDOW).into()],
        ))
        .await?;
    }
    Ok(())
}

/// Starts a new window at `now` with one failure, unless another process did already.
async fn restart_window(
    db: &impl ConnectionTrait,
    key: &str,
    old_start: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    db.execute_raw(Statement::from_sql_and_values(
        db.get_database_backend(),
        "UPDATE login_failures SET failures = 1, first_failure = $2 \
         WHERE key = $1 AND first_failure = $3",
        [key.into(), now.into(), old_start.into()],
    ))
    .await?;
    Ok(())
}

/// Forgets the failures under a key (after a successful sign-in with that email).
pub async fn clear(db: &impl ConnectionTrait, key: &str) -> Result<(), DbErr> {
    login_failure::Entity::delete_by_id(key.to_owned())
        .exec(db)
        .await?;
    Ok(())
}
