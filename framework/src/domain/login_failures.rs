//! Sign-in attempts, counted in the database per email address and per client address, so
//! that guessing slows down and then stops, across every process of the service.
//!
//! An attempt is counted *before* its password is checked ([`reserve`]: one upsert per key
//! that adds the attempt and answers the count), and given back when it succeeds
//! ([`give_back`]). So simultaneous guesses see each other: of any number sent at once, at
//! most [`Limits::lock_after`] per key get their password checked.
//!
//! Within a window of [`WINDOW`] from a key's first attempt: past [`Limits::slow_after`]
//! counted attempts each one waits [`DELAY`]; past [`Limits::lock_after`] attempts are
//! refused without checking the password, and a failure that brings a key to its limit
//! locks it for [`WINDOW`].

use chrono::{TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DbErr, Statement};

/// The counting window, and how long a lock lasts.
pub const WINDOW: TimeDelta = TimeDelta::minutes(15);
/// What an attempt waits once a key has had `slow_after` attempts.
pub const DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// When a kind of key slows down and locks.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Attempts after which each one waits [`DELAY`].
    pub slow_after: i32,
    /// Attempts after which the key is refused (and, failed, locked for [`WINDOW`]).
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

/// What a counted attempt may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Go,
    /// Go ahead after waiting [`DELAY`].
    Slow,
    /// Refused: a key is locked or has had its attempts.
    Locked,
}

/// Counts an attempt under each key (one atomic upsert each, starting a new window when the
/// old one is over) and says what it may do. A refused attempt stays counted; one that goes
/// ahead must end with [`give_back`] (success) or [`failed`].
pub async fn reserve(
    db: &impl ConnectionTrait,
    keys: &[(String, Limits)],
) -> Result<Verdict, DbErr> {
    let now = crate::values::now();
    let mut verdict = Verdict::Go;
    for (key, limits) in keys {
        let row = db
            .query_one_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                "INSERT INTO login_failures (key, failures, first_failure, locked_until) \
                 VALUES ($1, 1, $2, NULL) ON CONFLICT (key) DO UPDATE SET \
                 failures = CASE WHEN login_failures.first_failure <= $3 THEN 1 \
                 ELSE login_failures.failures + 1 END, \
                 first_failure = CASE WHEN login_failures.first_failure <= $3 THEN $2 \
                 ELSE login_failures.first_failure END \
                 RETURNING failures, locked_until",
                [key.into(), now.into(), (now - WINDOW).into()],
            ))
            .await?
            .ok_or_else(|| DbErr::Custom("the attempt was not counted".into()))?;
        let count: i32 = row.try_get("", "failures")?;
        let locked_until: Option<chrono::DateTime<Utc>> = row.try_get("", "locked_until")?;
        if locked_until.is_some_and(|until| until > now) || count > limits.lock_after {
            verdict = Verdict::Locked;
        } else if count > limits.slow_after && verdict == Verdict::Go {
            verdict = Verdict::Slow;
        }
    }
    Ok(verdict)
}

/// Gives back the attempt [`reserve`] counted, after it succeeded.
pub async fn give_back(db: &impl ConnectionTrait, keys: &[(String, Limits)]) -> Result<(), DbErr> {
    for (key, _) in keys {
        db.execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "UPDATE login_failures SET failures = failures - 1 WHERE key = $1 AND failures > 0",
            [key.into()],
        ))
        .await?;
    }
    Ok(())
}

/// Ends an attempt that failed: it stays counted, and a key it brought to its limit is
/// locked for [`WINDOW`].
pub async fn failed(db: &impl ConnectionTrait, keys: &[(String, Limits)]) -> Result<(), DbErr> {
    let until = crate::values::now() + WINDOW;
    for (key, limits) in keys {
        db.execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "UPDATE login_failures SET locked_until = $2 WHERE key = $1 AND failures >= $3",
            [key.into(), until.into(), limits.lock_after.into()],
        ))
        .await?;
    }
    Ok(())
}

/// Forgets the attempts under a key (after a successful sign-in with that email).
pub async fn clear(db: &impl ConnectionTrait, key: &str) -> Result<(), DbErr> {
    db.execute_raw(Statement::from_sql_and_values(
        db.get_database_backend(),
        "DELETE FROM login_failures WHERE key = $1",
        [key.into()],
    ))
    .await?;
    Ok(())
}
