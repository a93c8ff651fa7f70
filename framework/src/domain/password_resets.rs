//! Resetting a forgotten password by e-mail. Asking for a link answers the same whether or
//! not the address has an account (nobody learns who has one); a user gets at most
//! [`MAX_PER_HOUR`] links an hour. The link's token is stored only as a hash, works for
//! [`LIFETIME`], and once: it is used up by the same statement that checks it, so two tabs
//! cannot both set a password with it. A new password ends every session of the user and
//! every other link they were sent.

use chrono::TimeDelta;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};

use super::mail::{self, Mail};
use super::{tokens, users};

/// How long a link works.
pub const LIFETIME: TimeDelta = TimeDelta::hours(1);

/// Links a user is sent at most in an hour; more requests are answered alike and send none.
pub const MAX_PER_HOUR: i64 = 3;

/// Whether `token` can be a link's token at all (bounds the work of a request).
pub fn plausible(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Queues a link to set a new password for the active user with `email`, if there is one
/// and they were sent fewer than [`MAX_PER_HOUR`] links in the last hour; otherwise does
/// nothing. Gives whether a mail was queued (wake the mailer then). The count and the new
/// link are one transaction holding the user's row, so concurrent requests never exceed the
/// limit. The caller answers the same in every case, and before this has run: a known
/// address must not take longer to answer than an unknown one.
pub async fn request(
    db: &DatabaseConnection,
    email: &str,
    public_url: &str,
) -> Result<bool, DbErr> {
    let Some(user) = users::find_by_email(db, email).await? else {
        return Ok(false);
    };
    if !user.active {
        return Ok(false);
    }
    let txn = crate::db::begin_write(db).await?;
    crate::db::lock_row(&txn, "users", user.id).await?;
    let now = crate::values::now();
    let recent = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "SELECT COUNT(*) AS n FROM password_resets WHERE user_id = $1 AND created > $2",
            [user.id.into(), (now - TimeDelta::hours(1)).into()],
        ))
        .await?
        .map(|row| row.try_get::<i64>("", "n"))
        .transpose()?
        .unwrap_or(0);
    if recent >= MAX_PER_HOUR {
        return Ok(false);
    }
    let token = tokens::generate();
    crate::db::execute(
        &txn,
        "INSERT INTO password_resets (user_id, token_hash, created, expires) \
         VALUES ($1, $2, $3, $4)",
        [
            user.id.into(),
            tokens::hash(&token).into(),
            now.into(),
            (now + LIFETIME).into(),
        ],
    )
    .await?;
    let url = format!(
        "{}/password/reset/{token}",
        public_url.trim_end_matches('/')
    );
    let body = format!(
        "Hello,\n\nsomebody asked to set a new password for your account {email}.\n\n\
         Open this link within an hour to choose one (it works once):\n{url}\n\n\
         If that was not you, ignore this mail: your password stays as it is.\n",
        email = user.email
    );
    mail::queue(&txn, Mail::text(&user.email, "Set a new password", body)).await?;
    crate::db::commit(txn).await?;
    Ok(true)
}

/// Deletes links that expired a day ago or more (the hourly count only reads the last hour's);
/// gives how many.
pub async fn delete_expired(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    let before = crate::values::now() - TimeDelta::days(1);
    crate::db::execute(
        db,
        "DELETE FROM password_resets WHERE expires < $1",
        [before.into()],
    )
    .await
}

/// Runs [`delete_expired`] every `period`, forever.
pub async fn delete_expired_every(db: DatabaseConnection, period: std::time::Duration) {
    let mut ticks = tokio::time::interval(period);
    loop {
        ticks.tick().await;
        if let Err(error) = delete_expired(&db).await {
            tracing::warn!(%error, "expired password reset links not deleted");
        }
    }
}

/// Whether `token` is the token of a link that is unused and has not expired.
pub async fn is_open(db: &impl ConnectionTrait, token: &str) -> Result<bool, DbErr> {
    if !plausible(token) {
        return Ok(false);
    }
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT id FROM password_resets WHERE token_hash = $1 AND used IS NULL \
             AND expires > $2",
            [tokens::hash(token).into(), crate::values::now().into()],
        ))
        .await?;
    Ok(row.is_some())
}

/// Why a link did not set a password.
#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    /// The link is unknown, used or expired.
    #[error("This link is not valid (any more). Ask for a new one.")]
    NotOpen,
    /// The new password is too short or too long.
    #[error("{0}")]
    Invalid(String),
    /// Not done: too many passwords are being hashed; ask again in a moment.
    #[error("busy")]
    Busy,
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Ends every open link of a user (their password was set), in the caller's transaction.
pub async fn end_all(db: &impl ConnectionTrait, user_id: i64) -> Result<(), DbErr> {
    crate::db::execute(
        db,
        "UPDATE password_resets SET used = $1 WHERE user_id = $2 AND used IS NULL",
        [crate::values::now().into(), user_id.into()],
    )
    .await?;
    Ok(())
}

/// Sets the new password of the link's user and uses the link up, all or nothing; the
/// user's sessions and other links end. The link is checked before the password is hashed,
/// and hashing takes a turn of `checks` (anybody can post this form). Gives the user's ID.
pub async fn complete(
    db: &sea_orm::DatabaseConnection,
    checks: &users::PasswordChecks,
    token: &str,
    password: String,
) -> Result<i64, ResetError> {
    if let Some(message) = users::password_problem(&password) {
        return Err(ResetError::Invalid(message));
    }
    if !is_open(db, token).await? {
        return Err(ResetError::NotOpen);
    }
    let Some(hash) = checks.hash(password).await? else {
        return Err(ResetError::Busy);
    };
    let txn = crate::db::begin_write(db).await?;
    let now = crate::values::now();
    // Checked again as it is used up: of two tabs posting at once, one finds it used.
    let used = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "UPDATE password_resets SET used = $1 WHERE token_hash = $2 AND used IS NULL \
             AND expires > $1 RETURNING user_id",
            [now.into(), tokens::hash(token).into()],
        ))
        .await?;
    let Some(row) = used else {
        return Err(ResetError::NotOpen);
    };
    let user_id: i64 = row.try_get("", "user_id")?;
    users::store_password(&txn, user_id, &hash).await?;
    crate::db::commit(txn).await?;
    Ok(user_id)
}
