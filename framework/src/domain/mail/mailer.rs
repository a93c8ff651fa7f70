//! The mailer: sends the outbox's due mails over SMTP, in this process's background.
//!
//! Several processes may share one database. A worker claims a batch of due mails in one
//! statement that counts an attempt and moves their next attempt a short lease ahead (on
//! PostgreSQL with `FOR UPDATE SKIP LOCKED`, so that concurrent workers take different mails;
//! SQLite has one writer at a time), renews the lease of the mails it still holds while it
//! works, sends them one by one, and marks each sent or due again later. The attempt count a
//! claim gave a mail is the worker's token: it sends a mail only after renewing its lease
//! under that count, and records the outcome only under it, so that a mail whose lease a
//! stalled worker lost is sent by the worker that took it over. A worker that dies leaves
//! its mails to be claimed again within a lease.
//!
//! Exactly once is out of reach for a worker that dies after the SMTP server accepted a
//! mail and before the mail was recorded as sent: that mail is sent again. Every attempt at a
//! mail carries the same `Message-ID`, so that the receiving side can tell.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration as StdDuration;

use chrono::Duration;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait,
    FromQueryResult, QueryFilter, Set, Statement,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::smtp::{MailConfigError, SendError, Smtp};
use super::{Attachment, Attachments, MailState};
use crate::config::Config;
use crate::db::entities::outbox_mail;

/// Attempts after which a mail that could not be sent is given up as `failed`.
pub const MAX_ATTEMPTS: i32 = 10;

/// The most a mail's attachments may weigh together: past this a mail is likely to bounce,
/// so it goes out without them (its text links to the order's page, where they are).
const MAX_ATTACHED_BYTES: usize = 4 * 1024 * 1024;

/// Mails claimed at once.
const BATCH: i64 = 20;

/// How long a claim on a mail lasts unless its worker renews it: how soon the mails of a
/// worker that died are sent by others.
const LEASE_SECONDS: i64 = 15;

/// How often a worker renews the claims it holds, well within [`LEASE_SECONDS`].
const RENEW: StdDuration = StdDuration::from_secs(4);

/// How often an idle worker looks for mails queued by other processes, due again, or given
/// back by a worker that died.
const POLL: StdDuration = StdDuration::from_secs(5);

/// The pause before the attempt after `attempts` failed ones: 30 seconds, doubling each
/// time, at most 4 hours (ten attempts span about eight hours).
pub fn retry_delay(attempts: i32) -> Duration {
    let doublings = attempts.clamp(1, 20) - 1;
    let seconds = 30_i64.saturating_mul(1 << doublings);
    Duration::seconds(seconds.min(4 * 3600))
}

/// What one delivery pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// Mails handed to the SMTP server.
    pub sent: usize,
    /// Mails refused or not reached, to be tried again later.
    pub retried: usize,
    /// Mails given up.
    pub failed: usize,
}

/// Sends the outbox's mails; cheap to clone. Without SMTP configured it sends nothing and
/// mails stay queued.
#[derive(Clone)]
pub struct Mailer {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    smtp: Option<Smtp>,
    attachments: Option<Arc<dyn Attachments>>,
    wake: Notify,
}

impl Mailer {
    /// A mailer for the configured SMTP server, or one that keeps mails in the outbox when
    /// `smtp_host` is not set; `attachments` makes the files mails carry.
    pub fn new(
        db: DatabaseConnection,
        config: &Config,
        attachments: Arc<dyn Attachments>,
    ) -> Result<Self, MailConfigError> {
        Ok(Self::with(
            db,
            Smtp::from_config(config)?,
            Some(attachments),
        ))
    }

    /// Checks the mail settings without making a mailer.
    pub fn check(config: &Config) -> Result<(), MailConfigError> {
        Smtp::from_config(config).map(drop)
    }

    /// A mailer that sends nothing: mails stay in the outbox.
    pub fn outbox_only(db: DatabaseConnection) -> Self {
        Self::with(db, None, None)
    }

    fn with(
        db: DatabaseConnection,
        smtp: Option<Smtp>,
        attachments: Option<Arc<dyn Attachments>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                db,
                smtp,
                attachments,
                wake: Notify::new(),
            }),
        }
    }

    /// Whether this mailer sends mails (SMTP is configured).
    pub fn sends(&self) -> bool {
        self.inner.smtp.is_some()
    }

    /// Tells the worker that mails were queued; call it after the transaction that queued
    /// them commits. Returns at once.
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Starts [`Mailer::run`] on the current tokio runtime, when this mailer sends mails.
    pub fn spawn(&self) -> Option<JoinHandle<()>> {
        self.sends().then(|| tokio::spawn(self.clone().run()))
    }

    /// Sends due mails whenever woken, and every few seconds; never returns.
    pub async fn run(self) {
        loop {
            match self.deliver_due().await {
                Ok(done) if done != Delivered::default() => {
                    tracing::info!(
                        sent = done.sent,
                        retried = done.retried,
                        failed = done.failed,
                        "mail delivery"
                    );
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "mail delivery pass failed"),
            }
            tokio::select! {
                () = self.inner.wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Sends every mail that is due now, batch by batch, and records each outcome. Does
    /// nothing without SMTP.
    pub async fn deliver_due(&self) -> Result<Delivered, DbErr> {
        let mut done = Delivered::default();
        let Some(smtp) = &self.inner.smtp else {
            return Ok(done);
        };
        let db = &self.inner.db;
        loop {
            let batch = claim(db).await?;
            let held = Mutex::new(batch.iter().map(Claim::of).collect::<Vec<_>>());
            let release = |mail: &outbox_mail::Model| {
                let mut held = held.lock().unwrap_or_else(PoisonError::into_inner);
                held.retain(|c| c.id != mail.id);
            };
            let work = async {
                for mail in &batch {
                    if renew(db, Claim::of(mail)).await? {
                        let outcome = match self.attachments_of(mail).await {
                            Ok(files) => smtp.send(mail, files).await,
                            Err(error) => Err(SendError::Retry(error.to_string())),
                        };
                        record(db, mail, outcome, &mut done).await?;
                    } else {
                        tracing::warn!(mail = mail.id, "mail claim lost to another worker");
                    }
                    release(mail);
                }
                Ok::<_, DbErr>(())
            };
            let keep = async {
                loop {
                    tokio::time::sleep(RENEW).await;
                    let claims = held.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    for claim in claims {
                        if let Err(error) = renew(db, claim).await {
                            tracing::warn!(mail = claim.id, %error, "mail claim not renewed");
                        }
                    }
                }
            };
            tokio::select! {
                worked = work => worked?,
                _ = keep => {}
            }
            if (batch.len() as i64) < BATCH {
                return Ok(done);
            }
        }
    }
}

impl Mailer {
    /// The files a mail carries, or none when they would weigh more than
    /// [`MAX_ATTACHED_BYTES`].
    async fn attachments_of(&self, mail: &outbox_mail::Model) -> Result<Vec<Attachment>, DbErr> {
        let Some(attachments) = &self.inner.attachments else {
            return Ok(Vec::new());
        };
        let files = attachments.of(mail).await?;
        let weight: usize = files.iter().map(|f| f.data.len()).sum();
        if weight > MAX_ATTACHED_BYTES {
            tracing::info!(
                mail = mail.id,
                bytes = weight,
                "attachments too large; sent without"
            );
            return Ok(Vec::new());
        }
        Ok(files)
    }
}

/// A worker's claim on a mail: the mail, and the attempt count the claim gave it.
#[derive(Debug, Clone, Copy)]
struct Claim {
    id: i64,
    attempts: i32,
}

impl Claim {
    fn of(mail: &outbox_mail::Model) -> Self {
        Self {
            id: mail.id,
            attempts: mail.attempts,
        }
    }
}

/// Moves the lease of a claimed mail a lease ahead of now; false when the claim is no
/// longer this worker's (the mail was recorded, or claimed again after the lease ran out).
async fn renew(db: &DatabaseConnection, claim: Claim) -> Result<bool, DbErr> {
    let lease = crate::values::now() + Duration::seconds(LEASE_SECONDS);
    let change = outbox_mail::ActiveModel {
        next_attempt_at: Set(lease),
        ..Default::default()
    };
    let renewed = outbox_mail::Entity::update_many()
        .set(change)
        .filter(outbox_mail::Column::Id.eq(claim.id))
        .filter(outbox_mail::Column::Attempts.eq(claim.attempts))
        .filter(outbox_mail::Column::State.eq(MailState::Queued.as_str()))
        .exec(db)
        .await?;
    Ok(renewed.rows_affected == 1)
}

/// Takes up to [`BATCH`] due mails for this worker: counts the attempt and moves their next
/// attempt a lease ahead, in one statement.
async fn claim(db: &DatabaseConnection) -> Result<Vec<outbox_mail::Model>, DbErr> {
    let backend = db.get_database_backend();
    let lock = match backend {
        DbBackend::Postgres => " FOR UPDATE SKIP LOCKED",
        _ => "",
    };
    let sql = format!(
        "UPDATE outbox_mails SET attempts = attempts + 1, next_attempt_at = $1 \
         WHERE id IN (SELECT id FROM outbox_mails WHERE state = $2 AND next_attempt_at <= $3 \
         ORDER BY next_attempt_at, id LIMIT $4{lock}) RETURNING *"
    );
    let now = crate::values::now();
    let values = [
        (now + Duration::seconds(LEASE_SECONDS)).into(),
        MailState::Queued.as_str().into(),
        now.into(),
        BATCH.into(),
    ];
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    let mut mails = rows
        .iter()
        .map(|row| outbox_mail::Model::from_query_result(row, ""))
        .collect::<Result<Vec<_>, _>>()?;
    mails.sort_by_key(|m| m.id);
    Ok(mails)
}

/// Stores what became of one claimed mail, unless another worker claimed it since.
async fn record(
    db: &DatabaseConnection,
    mail: &outbox_mail::Model,
    outcome: Result<(), SendError>,
    done: &mut Delivered,
) -> Result<(), DbErr> {
    let now = crate::values::now();
    let mut change = outbox_mail::ActiveModel::default();
    match outcome {
        Ok(()) => {
            done.sent += 1;
            change.state = Set(MailState::Sent.as_str().into());
            change.sent_at = Set(Some(now));
            change.last_error = Set(None);
        }
        Err(SendError::Retry(error)) if mail.attempts < MAX_ATTEMPTS => {
            tracing::warn!(mail = mail.id, attempts = mail.attempts, %error, "mail not sent, will retry");
            done.retried += 1;
            change.next_attempt_at = Set(now + retry_delay(mail.attempts));
            change.last_error = Set(Some(error));
        }
        Err(SendError::Retry(error) | SendError::Undeliverable(error)) => {
            tracing::warn!(mail = mail.id, attempts = mail.attempts, %error, "mail given up");
            done.failed += 1;
            change.state = Set(MailState::Failed.as_str().into());
            change.last_error = Set(Some(error));
        }
    }
    outbox_mail::Entity::update_many()
        .set(change)
        .filter(outbox_mail::Column::Id.eq(mail.id))
        .filter(outbox_mail::Column::Attempts.eq(mail.attempts))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::retry_delay;
    use chrono::Duration;

    #[test]
    fn pauses_between_attempts_double_up_to_four_hours() {
        assert_eq!(retry_delay(1), Duration::seconds(30));
        assert_eq!(retry_delay(2), Duration::seconds(60));
        assert_eq!(retry_delay(5), Duration::seconds(480));
        assert_eq!(retry_delay(12), Duration::hours(4));
        assert_eq!(retry_delay(i32::MAX), Duration::hours(4));
    }
}
