//! Browser sessions, kept in the database so that they survive a restart and work across
//! processes. The cookie holds a random key; the database holds only its SHA-256 hash.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::TimeDelta;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set,
};

use super::tokens;
use crate::db::entities::session;

/// How long a session lasts from sign-in.
pub const LIFETIME: TimeDelta = TimeDelta::days(14);

/// Starts a session for the user; gives the row and the cookie value (the key), which is
/// not stored. Now and then (at most once an hour per process) deletes expired sessions.
pub async fn create(
    db: &DatabaseConnection,
    user_id: i64,
) -> Result<(session::Model, String), DbErr> {
    clean_up_now_and_then(db);
    let key = tokens::generate();
    let now = crate::values::now();
    let row = session::ActiveModel {
        key_hash: Set(tokens::hash(&key)),
        user_id: Set(user_id),
        csrf_token: Set(tokens::generate()),
        created: Set(now),
        expires: Set(now + LIFETIME),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((row, key))
}

/// The live session whose cookie value is `key`; `None` when unknown or expired.
pub async fn find(db: &impl ConnectionTrait, key: &str) -> Result<Option<session::Model>, DbErr> {
    if key.is_empty() || key.len() > 128 {
        return Ok(None);
    }
    let row = session::Entity::find()
        .filter(session::Column::KeyHash.eq(tokens::hash(key)))
        .one(db)
        .await?;
    Ok(row.filter(|s| tokens::matches(&s.key_hash, key) && s.expires > crate::values::now()))
}

/// Ends a session (logout).
pub async fn delete(db: &impl ConnectionTrait, session_id: i64) -> Result<(), DbErr> {
    session::Entity::delete_by_id(session_id).exec(db).await?;
    Ok(())
}

/// Ends every session of a user (e.g. when the password changes).
pub async fn delete_all_of(db: &impl ConnectionTrait, user_id: i64) -> Result<(), DbErr> {
    session::Entity::delete_many()
        .filter(session::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes expired sessions; gives how many.
pub async fn delete_expired(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    Ok(session::Entity::delete_many()
        .filter(session::Column::Expires.lt(crate::values::now()))
        .exec(db)
        .await?
        .rows_affected)
}

/// Unix time of this process's last clean-up.
static LAST_CLEAN_UP: AtomicI64 = AtomicI64::new(0);

fn clean_up_now_and_then(db: &DatabaseConnection) {
    let now = crate::values::now().timestamp();
    let last = LAST_CLEAN_UP.load(Ordering::Relaxed);
    if now - last < 3600
        || LAST_CLEAN_UP
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let db = db.clone();
    tokio::spawn(async move {
        if let Err(error) = delete_expired(&db).await {
            tracing::warn!(%error, "expired sessions not deleted");
        }
    });
}
