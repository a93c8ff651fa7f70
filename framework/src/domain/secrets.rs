//! Ticket secrets: how a position's secret is made (`ticket_secret_generator`: `random`, or
//! `pretix_sig1`, signed with the event's Ed25519 key so scanners verify it offline, see
//! [`sig1`]), and the secrets scanners must refuse although they may still look valid:
//! revoked ones (replaced by a new secret, or of a canceled order) and blocked ones.
//!
//! Redeem refuses both in its own query; the feeds `revokedsecrets/` and `blockedsecrets/`
//! read [`Feed`]. Blocking ([`set_blocked`]) is for plugins (and reusable media).

pub mod sig1;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement, Value as SqlValue};
use serde_json::Value;

use crate::db::entities::{event, order_position};
use crate::domain::tokens::random_from;

/// Characters of random secrets.
const RANDOM_CHARSET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Which secrets an event gives its tickets (setting `ticket_secret_generator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// 32 random lowercase letters and digits.
    Random,
    /// pretix's signed secrets: verifiable offline with the event's public key.
    PretixSig1,
}

impl Generator {
    /// The generator an event's settings choose (`random` unless `pretix_sig1`).
    pub fn of_settings<'a>(mut settings: impl FnMut(&str) -> Option<&'a Value>) -> Self {
        match settings("ticket_secret_generator").and_then(Value::as_str) {
            Some("pretix_sig1") => Self::PretixSig1,
            _ => Self::Random,
        }
    }

    /// Whether scanners learn of replaced secrets through the revocation list (a signed
    /// secret stays valid for ever on its own; a random one is known only through the order
    /// feed).
    pub fn uses_revocation_list(self) -> bool {
        self == Self::PretixSig1
    }
}

/// What a position's secret encodes.
#[derive(Debug, Clone, Copy)]
pub struct TicketFacts {
    /// The item.
    pub item: i64,
    /// The variation.
    pub variation: Option<i64>,
    /// The date of a series.
    pub subevent: Option<i64>,
}

impl TicketFacts {
    /// The facts of a stored position.
    pub fn of(p: &order_position::Model) -> Self {
        Self {
            item: p.item_id,
            variation: p.variation_id,
            subevent: p.subevent_id,
        }
    }
}

/// The key a generator signs the event's tickets with: for `pretix_sig1` the event's
/// private key, made now (and stored once, whoever comes first) if the event has none yet;
/// empty for random secrets.
pub async fn signing_key(
    txn: &impl ConnectionTrait,
    generator: Generator,
    ev: &event::Model,
) -> Result<String, DbErr> {
    if generator != Generator::PretixSig1 || !ev.private_key.is_empty() {
        return Ok(ev.private_key.clone());
    }
    let backend = txn.get_database_backend();
    let (public, private) = super::signing::generate();
    txn.execute_raw(Statement::from_sql_and_values(
        backend,
        "UPDATE events SET public_key = $1, private_key = $2 WHERE id = $3 AND private_key = ''",
        [public.into(), private.into(), ev.id.into()],
    ))
    .await?;
    #[derive(FromQueryResult)]
    struct Key {
        private_key: String,
    }
    Ok(Key::find_by_statement(Statement::from_sql_and_values(
        backend,
        "SELECT private_key FROM events WHERE id = $1",
        [ev.id.into()],
    ))
    .one(txn)
    .await?
    .map(|k| k.private_key)
    .unwrap_or_default())
}

/// The event's public key as stored now (empty until its first signed ticket, for events
/// made without one).
pub async fn public_key(db: &impl ConnectionTrait, event_id: i64) -> Result<String, DbErr> {
    #[derive(FromQueryResult)]
    struct Key {
        public_key: String,
    }
    Ok(Key::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        "SELECT public_key FROM events WHERE id = $1",
        [event_id.into()],
    ))
    .one(db)
    .await?
    .map(|k| k.public_key)
    .unwrap_or_default())
}

/// A new secret for a ticket; `key` from [`signing_key`].
pub fn generate(generator: Generator, key: &str, facts: TicketFacts) -> String {
    match generator {
        Generator::Random => random_from(RANDOM_CHARSET, 32),
        Generator::PretixSig1 => sig1::sign(key, facts)
            // The key was just read or made; should it be damaged, tickets still get one.
            .unwrap_or_else(|| random_from(RANDOM_CHARSET, 32)),
    }
}

/// Records that a position's secret no longer admits anyone.
pub async fn revoke(
    txn: &impl ConnectionTrait,
    event_id: i64,
    position_id: i64,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    txn.execute_raw(Statement::from_sql_and_values(
        txn.get_database_backend(),
        "INSERT INTO revoked_secrets (event_id, position_id, secret, created) \
         VALUES ($1, $2, $3, $4)",
        [
            event_id.into(),
            position_id.into(),
            secret.into(),
            now.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// Blocks or unblocks a secret; scanners see the change (also an unblocking) through the
/// `blockedsecrets/` feed by its `updated` time.
pub async fn set_blocked(
    txn: &impl ConnectionTrait,
    event_id: i64,
    position_id: Option<i64>,
    secret: &str,
    blocked: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    txn.execute_raw(Statement::from_sql_and_values(
        txn.get_database_backend(),
        "INSERT INTO blocked_secrets (event_id, position_id, secret, blocked, updated) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (event_id, secret) \
         DO UPDATE SET blocked = EXCLUDED.blocked, updated = EXCLUDED.updated",
        [
            event_id.into(),
            position_id.into(),
            secret.into(),
            blocked.into(),
            now.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// A revoked secret as the feed shows it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct Revoked {
    /// Internal ID.
    pub id: i64,
    /// The secret.
    pub secret: String,
    /// When it was revoked.
    pub created: DateTime<Utc>,
}

/// A blocked (or unblocked again) secret as the feed shows it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct Blocked {
    /// Internal ID.
    pub id: i64,
    /// The secret.
    pub secret: String,
    /// When it was last blocked or unblocked.
    pub updated: DateTime<Utc>,
    /// Whether it is blocked now.
    pub blocked: bool,
}

/// Orderings of the revoked secrets (default `-created`).
pub const REVOKED_ORDERINGS: [&str; 4] = ["secret", "-secret", "created", "-created"];
/// Orderings of the blocked secrets (default `-updated`).
pub const BLOCKED_ORDERINGS: [&str; 4] = ["secret", "-secret", "updated", "-updated"];

/// A feed's query: the event, changes at or after `since`, ordering (one of the feed's).
pub struct FeedQuery<'a> {
    /// The event.
    pub event_id: i64,
    /// Only rows created (revoked) or updated (blocked) at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// One of the feed's orderings; `None` for the default.
    pub ordering: Option<&'a str>,
}

/// The two feeds: their table, columns and time column.
#[derive(Debug, Clone, Copy)]
pub enum Feed {
    /// `revoked_secrets` by `created`.
    Revoked,
    /// `blocked_secrets` by `updated`.
    Blocked,
}

impl Feed {
    fn table(self) -> &'static str {
        match self {
            Self::Revoked => "revoked_secrets",
            Self::Blocked => "blocked_secrets",
        }
    }

    fn time(self) -> &'static str {
        match self {
            Self::Revoked => "created",
            Self::Blocked => "updated",
        }
    }

    fn columns(self) -> &'static str {
        match self {
            Self::Revoked => "id, secret, created",
            Self::Blocked => "id, secret, updated, blocked",
        }
    }

    fn filter(self, q: &FeedQuery<'_>) -> (String, Vec<SqlValue>) {
        let mut values: Vec<SqlValue> = vec![q.event_id.into()];
        let mut filter = String::from("event_id = $1");
        if let Some(since) = q.since {
            values.push(since.into());
            filter += &format!(" AND {} >= $2", self.time());
        }
        (filter, values)
    }

    /// How many rows of the feed match.
    pub async fn count(self, db: &impl ConnectionTrait, q: &FeedQuery<'_>) -> Result<u64, DbErr> {
        #[derive(FromQueryResult)]
        struct Count {
            n: i64,
        }
        let (filter, values) = self.filter(q);
        Ok(Count::find_by_statement(Statement::from_sql_and_values(
            db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM {} WHERE {filter}", self.table()),
            values,
        ))
        .one(db)
        .await?
        .map_or(0, |c| c.n.max(0) as u64))
    }

    /// Rows of the feed in the asked order (default: newest first).
    pub async fn rows<T: FromQueryResult>(
        self,
        db: &impl ConnectionTrait,
        q: &FeedQuery<'_>,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<T>, DbErr> {
        let (filter, values) = self.filter(q);
        let (field, dir) = match q.ordering {
            Some("secret") => ("secret", "ASC"),
            Some("-secret") => ("secret", "DESC"),
            Some(o) if !o.starts_with('-') => (self.time(), "ASC"),
            _ => (self.time(), "DESC"),
        };
        T::find_by_statement(Statement::from_sql_and_values(
            db.get_database_backend(),
            format!(
                "SELECT {} FROM {} WHERE {filter} ORDER BY {field} {dir}, id {dir} \
                 LIMIT {limit} OFFSET {offset}",
                self.columns(),
                self.table()
            ),
            values,
        ))
        .all(db)
        .await
    }
}
