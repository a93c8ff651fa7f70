//! User API tokens of the talk side (`Authorization: Token <token>` under `/api/`). A token
//! belongs to a user and acts with the user's own permissions, narrowed by its scopes:
//! endpoints with their actions, and all events or a list of them. Stored as a SHA-256
//! digest; expired tokens authenticate no more and are deleted periodically.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DbErr, Statement};

use super::endpoints::{ENDPOINTS, Endpoints};
use super::version::{ApiVersion, CURRENT};
use crate::domain::tokens;

/// A token that authenticated, with what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveToken {
    /// The token row.
    pub id: i64,
    /// The user it acts for.
    pub user_id: i64,
    /// The endpoints and actions it may use.
    pub endpoints: Endpoints,
    /// `None` for all events the user may see, else these event IDs.
    pub events: Option<Vec<i64>>,
    /// The version it is fixed to; `None` until first used.
    pub version: Option<String>,
}

/// How often `last_used` is written at most.
const LAST_USED_EVERY: Duration = Duration::minutes(1);

/// The active token behind `token`, or `None` for an unknown or expired one (or one of a
/// deactivated user). Marks it used, at most once a minute.
pub async fn resolve(db: &impl ConnectionTrait, token: &str) -> Result<Option<ActiveToken>, DbErr> {
    let sql = "SELECT t.id, t.user_id, t.token_hash, t.all_events, t.endpoints, t.version, \
               t.expires, t.last_used FROM user_api_tokens t JOIN users u ON u.id = t.user_id \
               WHERE t.token_hash = $1 AND u.active";
    let Some(row) = tokens::find_row(db, sql, token).await? else {
        return Ok(None);
    };
    let now = crate::values::now();
    let expires: Option<DateTime<Utc>> = row.try_get("", "expires")?;
    if expires.is_some_and(|e| e <= now) {
        return Ok(None);
    }
    let id: i64 = row.try_get("", "id")?;
    let last_used: Option<DateTime<Utc>> = row.try_get("", "last_used")?;
    if last_used.is_none_or(|at| at + LAST_USED_EVERY <= now) {
        crate::db::execute(
            db,
            "UPDATE user_api_tokens SET last_used = $1 WHERE id = $2",
            [now.into(), id.into()],
        )
        .await?;
    }
    let all_events: bool = row.try_get("", "all_events")?;
    let events = if all_events {
        None
    } else {
        Some(event_ids(db, id).await?)
    };
    let endpoints: serde_json::Value = row.try_get("", "endpoints")?;
    Ok(Some(ActiveToken {
        id,
        user_id: row.try_get("", "user_id")?,
        endpoints: Endpoints::from_json(&endpoints),
        events,
        version: row.try_get("", "version")?,
    }))
}

/// The events a token without `all_events` is limited to.
pub async fn event_ids(db: &impl ConnectionTrait, token_id: i64) -> Result<Vec<i64>, DbErr> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT event_id FROM user_api_token_events WHERE token_id = $1 ORDER BY event_id",
            [token_id.into()],
        ))
        .await?;
    rows.iter().map(|r| r.try_get("", "event_id")).collect()
}

/// Fixes a token without a version to `version` (its first use); a token that has one
/// keeps it.
pub async fn pin_version(
    db: &impl ConnectionTrait,
    token_id: i64,
    version: ApiVersion,
) -> Result<(), DbErr> {
    crate::db::execute(
        db,
        "UPDATE user_api_tokens SET version = $1 WHERE id = $2 AND version IS NULL",
        [version.name().into(), token_id.into()],
    )
    .await?;
    Ok(())
}

/// Deletes tokens that expired before now; gives how many.
pub async fn delete_expired(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    crate::db::execute(
        db,
        "DELETE FROM user_api_tokens WHERE expires IS NOT NULL AND expires <= $1",
        [crate::values::now().into()],
    )
    .await
}

/// Runs [`delete_expired`] every `period`, forever, logging how many tokens went.
pub async fn delete_expired_every(db: sea_orm::DatabaseConnection, period: std::time::Duration) {
    let mut ticks = tokio::time::interval(period);
    loop {
        ticks.tick().await;
        match delete_expired(&db).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "deleted expired user API tokens"),
            Err(error) => tracing::warn!(%error, "could not delete expired user API tokens"),
        }
    }
}

/// The longest name a token may have (the column's).
pub const MAX_NAME_CHARS: usize = 190;

/// The most unexpired tokens one user may hold at once.
pub const MAX_TOKENS_PER_USER: i64 = 100;

/// What a new token is made of.
#[derive(Debug, Clone, Default)]
pub struct NewToken {
    /// A name for its user to tell it by (1 to 190 characters, trimmed).
    pub name: String,
    /// The endpoints and actions it may use; at least one.
    pub endpoints: Endpoints,
    /// `None` for all events the user may see, else these event IDs (talk-enabled events
    /// of the user's teams; at least one).
    pub events: Option<Vec<i64>>,
    /// When it stops working; `None` for never. Must be in the future.
    pub expires: Option<DateTime<Utc>>,
}

/// A user's token as its owner sees it (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSummary {
    /// The token row.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The endpoints and actions it may use.
    pub endpoints: Endpoints,
    /// `None` for all events, else the slugs of its events, in order.
    pub events: Option<Vec<String>>,
    /// When it stops working.
    pub expires: Option<DateTime<Utc>>,
    /// When it was last used (to the minute).
    pub last_used: Option<DateTime<Utc>>,
    /// The version it is fixed to; `None` until first used.
    pub version: Option<String>,
    /// When it was made.
    pub created: DateTime<Utc>,
}

/// A talk-enabled event a user's teams cover: one a token may be limited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventChoice {
    /// The event's ID.
    pub id: i64,
    /// Its slug (unique among talk-enabled events).
    pub slug: String,
    /// Its name, in English where it has one.
    pub name: String,
    /// Its organizer's name.
    pub organizer: String,
}

/// Why a token could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The input is not acceptable: `(field, message)` pairs, the message for the person
    /// who typed it. Fields: `name`, `endpoints`, `events`, `expires`.
    #[error("{}", messages(.0))]
    Invalid(Vec<(&'static str, String)>),
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// The messages of refused fields, one after the other.
fn messages(errors: &[(&'static str, String)]) -> String {
    let messages: Vec<&str> = errors.iter().map(|(_, m)| m.as_str()).collect();
    messages.join(" ")
}

/// Reads an expiry typed by a person: RFC 3339 (`2030-01-31T18:00:00+01:00`), or a date
/// and time in UTC (`2030-01-31T17:00`, `2030-01-31 17:00:00`), or a date (midnight UTC).
/// `None` when it is none of these.
pub fn parse_expires(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if text.is_empty() || text.len() > 64 {
        return None;
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Some(t.and_utc());
        }
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
}

/// The latest expiry accepted (the end of year 9999).
fn latest_expiry() -> DateTime<Utc> {
    chrono::NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|d| d.and_hms_opt(23, 59, 59))
        .map(|t| t.and_utc())
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The talk-enabled events the user's teams cover, by organizer and slug: the events a
/// token of theirs may be limited to.
pub async fn available_events(
    db: &impl ConnectionTrait,
    user_id: i64,
) -> Result<Vec<EventChoice>, DbErr> {
    let grants = crate::domain::users::organizers_of(db, user_id).await?;
    let mut organizers: Vec<i64> = grants.iter().map(|g| g.organizer.id).collect();
    organizers.sort_unstable();
    organizers.dedup();
    if organizers.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=organizers.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT e.id, e.slug, e.name, e.organizer_id, o.name AS organizer_name \
         FROM events e JOIN organizers o ON o.id = e.organizer_id \
         WHERE e.talk_enabled AND e.organizer_id IN ({}) ORDER BY o.name, o.id, e.slug",
        placeholders.join(", ")
    );
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            organizers.iter().map(|id| (*id).into()),
        ))
        .await?;
    let mut choices = Vec::new();
    for row in rows {
        let id: i64 = row.try_get("", "id")?;
        let organizer_id: i64 = row.try_get("", "organizer_id")?;
        if !grants
            .iter()
            .any(|g| g.organizer.id == organizer_id && g.events.covers(id))
        {
            continue;
        }
        let name: serde_json::Value = row.try_get("", "name")?;
        choices.push(EventChoice {
            id,
            slug: row.try_get("", "slug")?,
            name: crate::values::I18nString::from_stored(&name).localize("en"),
            organizer: row.try_get("", "organizer_name")?,
        });
    }
    Ok(choices)
}

/// Checks a new token against the events its user may limit it to; the errors by field.
fn check_new(new: &NewToken, available: &[EventChoice]) -> Vec<(&'static str, String)> {
    let mut errors = Vec::new();
    let name = new.name.trim();
    if name.is_empty() {
        errors.push(("name", "Give the token a name.".to_owned()));
    } else if name.chars().count() > MAX_NAME_CHARS {
        errors.push((
            "name",
            format!("The name may have at most {MAX_NAME_CHARS} characters."),
        ));
    }
    if new
        .endpoints
        .0
        .keys()
        .any(|e| !ENDPOINTS.contains(&e.as_str()))
    {
        errors.push(("endpoints", "Unknown endpoint.".to_owned()));
    } else if new.endpoints.is_empty() {
        errors.push((
            "endpoints",
            "Allow at least one action on one endpoint.".to_owned(),
        ));
    }
    if let Some(events) = &new.events {
        if events.is_empty() {
            errors.push((
                "events",
                "Choose at least one event, or all events.".to_owned(),
            ));
        } else if events
            .iter()
            .any(|id| !available.iter().any(|c| c.id == *id))
        {
            errors.push((
                "events",
                "Choose only events of your teams with the talk side switched on.".to_owned(),
            ));
        }
    }
    if let Some(expires) = new.expires {
        if expires <= crate::values::now() {
            errors.push(("expires", "The expiry must be in the future.".to_owned()));
        } else if expires > latest_expiry() {
            errors.push((
                "expires",
                "The expiry must be before the year 10000.".to_owned(),
            ));
        }
    }
    errors
}

/// Makes a token for the user: the row as its owner sees it, and the token itself, which
/// is stored only as a hash and shown this once. Its version stays unset until first used.
/// Nothing is written when the input is refused.
pub async fn create(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    new: NewToken,
) -> Result<(TokenSummary, String), TokenError> {
    let available = match &new.events {
        Some(ids) if !ids.is_empty() => available_events(db, user_id).await?,
        _ => Vec::new(),
    };
    let errors = check_new(&new, &available);
    if !errors.is_empty() {
        return Err(TokenError::Invalid(errors));
    }
    let mut events = new.events.clone();
    if let Some(ids) = &mut events {
        ids.sort_unstable();
        ids.dedup();
    }
    let endpoints = new.endpoints.normalized();
    let token = tokens::generate();
    let created = crate::values::now();
    let txn = crate::db::begin_write(db).await?;
    let held = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "SELECT COUNT(*) AS n FROM user_api_tokens \
             WHERE user_id = $1 AND (expires IS NULL OR expires > $2)",
            [user_id.into(), created.into()],
        ))
        .await?
        .map(|r| r.try_get::<i64>("", "n"))
        .transpose()?
        .unwrap_or(0);
    if held >= MAX_TOKENS_PER_USER {
        return Err(TokenError::Invalid(vec![(
            "name",
            format!(
                "You have {MAX_TOKENS_PER_USER} tokens already: disable one you no longer use first."
            ),
        )]));
    }
    let row = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "INSERT INTO user_api_tokens \
             (user_id, name, token_hash, all_events, endpoints, version, expires, created) \
             VALUES ($1, $2, $3, $4, $5, NULL, $6, $7) RETURNING id",
            [
                user_id.into(),
                new.name.trim().into(),
                tokens::hash(&token).into(),
                events.is_none().into(),
                endpoints.to_json().into(),
                new.expires.into(),
                created.into(),
            ],
        ))
        .await?
        .ok_or(DbErr::RecordNotInserted)?;
    let id: i64 = row.try_get("", "id")?;
    for event_id in events.iter().flatten() {
        crate::db::execute(
            &txn,
            "INSERT INTO user_api_token_events (token_id, event_id) VALUES ($1, $2)",
            [id.into(), (*event_id).into()],
        )
        .await?;
    }
    crate::db::commit(txn).await?;
    let slugs = events.as_ref().map(|ids| {
        available
            .into_iter()
            .filter(|c| ids.contains(&c.id))
            .map(|c| c.slug)
            .collect()
    });
    Ok((
        TokenSummary {
            id,
            name: new.name.trim().to_owned(),
            endpoints,
            events: slugs,
            expires: new.expires,
            last_used: None,
            version: None,
            created,
        },
        token,
    ))
}

/// The user's tokens that have not expired, newest first, with the slugs of their events.
/// Two queries, whatever the number of tokens.
pub async fn list_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
) -> Result<Vec<TokenSummary>, DbErr> {
    let now = crate::values::now();
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT id, name, all_events, endpoints, version, expires, last_used, created \
             FROM user_api_tokens WHERE user_id = $1 AND (expires IS NULL OR expires > $2) \
             ORDER BY created DESC, id DESC",
            [user_id.into(), now.into()],
        ))
        .await?;
    let links = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT l.token_id, e.slug FROM user_api_token_events l \
             JOIN user_api_tokens t ON t.id = l.token_id JOIN events e ON e.id = l.event_id \
             WHERE t.user_id = $1 AND (t.expires IS NULL OR t.expires > $2) ORDER BY e.slug",
            [user_id.into(), now.into()],
        ))
        .await?;
    let mut slugs: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for link in links {
        slugs
            .entry(link.try_get("", "token_id")?)
            .or_default()
            .push(link.try_get("", "slug")?);
    }
    rows.into_iter()
        .map(|row| {
            let id: i64 = row.try_get("", "id")?;
            let all_events: bool = row.try_get("", "all_events")?;
            let endpoints: serde_json::Value = row.try_get("", "endpoints")?;
            Ok(TokenSummary {
                id,
                name: row.try_get("", "name")?,
                endpoints: Endpoints::from_json(&endpoints),
                events: (!all_events).then(|| slugs.remove(&id).unwrap_or_default()),
                expires: row.try_get("", "expires")?,
                last_used: row.try_get("", "last_used")?,
                version: row.try_get("", "version")?,
                created: row.try_get("", "created")?,
            })
        })
        .collect()
}

/// Fixes one of the user's unexpired tokens to the current version ([`CURRENT`]); `false`
/// when the user has no such token (another user's token is left alone).
pub async fn upgrade(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    token_id: i64,
) -> Result<bool, DbErr> {
    let sql = "UPDATE user_api_tokens SET version = $1 \
               WHERE id = $2 AND user_id = $3 AND (expires IS NULL OR expires > $4)";
    let values = [
        CURRENT.name().into(),
        token_id.into(),
        user_id.into(),
        crate::values::now().into(),
    ];
    crate::db::in_transaction(db, async |txn| crate::db::execute(txn, sql, values).await)
        .await
        .map(|n| n == 1)
}

/// Disables one of the user's unexpired tokens: it expires now and stops working at once
/// (and is deleted with the other expired tokens later). `false` when the user has no such
/// token (another user's token is left alone).
pub async fn disable(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    token_id: i64,
) -> Result<bool, DbErr> {
    let now = crate::values::now();
    let sql = "UPDATE user_api_tokens SET expires = $1 \
               WHERE id = $2 AND user_id = $3 AND (expires IS NULL OR expires > $1)";
    let values = [now.into(), token_id.into(), user_id.into()];
    crate::db::in_transaction(db, async |txn| crate::db::execute(txn, sql, values).await)
        .await
        .map(|n| n == 1)
}
