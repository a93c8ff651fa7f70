//! User API tokens of the talk side (`Authorization: Token <token>` under `/api/`). A token
//! belongs to a user and acts with the user's own permissions, narrowed by its scopes:
//! endpoints with their actions, and all events or a list of them. Stored as a SHA-256
//! digest; expired tokens authenticate no more and are deleted periodically.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DbErr, Statement};

use super::version::ApiVersion;
use crate::domain::tokens;

/// Every endpoint a token can be scoped to, with pretalx's names.
pub const ENDPOINTS: [&str; 18] = [
    "teams",
    "events",
    "submissions",
    "speakers",
    "reviews",
    "feedback",
    "rooms",
    "questions",
    "question-options",
    "answers",
    "tags",
    "tracks",
    "schedules",
    "slots",
    "submission-types",
    "mail-templates",
    "access-codes",
    "speaker-information",
];

/// What a token may do on an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read a list.
    List,
    /// Read one object (and its activity log).
    Retrieve,
    /// Create.
    Create,
    /// Update, wholly or partly.
    Update,
    /// Delete.
    Destroy,
    /// Any other action (`accept`, `add-speaker`, ...).
    Actions,
}

impl Action {
    /// Every action, reads first.
    pub const ALL: [Action; 6] = [
        Action::List,
        Action::Retrieve,
        Action::Create,
        Action::Update,
        Action::Destroy,
        Action::Actions,
    ];

    /// The action's name in a token's scopes.
    pub fn name(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Retrieve => "retrieve",
            Action::Create => "create",
            Action::Update => "update",
            Action::Destroy => "destroy",
            Action::Actions => "actions",
        }
    }

    /// The action of that name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the action only reads.
    pub fn is_read(self) -> bool {
        matches!(self, Action::List | Action::Retrieve)
    }
}

/// The endpoints a token may use, and how: `{endpoint: [action, ...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints(pub BTreeMap<String, Vec<Action>>);

impl Endpoints {
    /// Every endpoint, reading only ("all read").
    pub fn all_read() -> Self {
        Self::every(&[Action::List, Action::Retrieve])
    }

    /// Every endpoint, every action ("all read-write").
    pub fn all_write() -> Self {
        Self::every(&Action::ALL)
    }

    fn every(actions: &[Action]) -> Self {
        Self(
            ENDPOINTS
                .iter()
                .map(|e| ((*e).to_owned(), actions.to_vec()))
                .collect(),
        )
    }

    /// Whether the token may use `action` on `endpoint`.
    pub fn allows(&self, endpoint: &str, action: Action) -> bool {
        self.0.get(endpoint).is_some_and(|a| a.contains(&action))
    }

    /// Whether the token may write anything (uploads need this).
    pub fn any_write(&self) -> bool {
        self.0.values().flatten().any(|a| !a.is_read())
    }

    /// Whether no endpoint is allowed at all.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }

    /// The stored form, `{endpoint: [action names]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.0
                .iter()
                .map(|(e, actions)| {
                    let names = actions.iter().map(|a| a.name().into()).collect();
                    (e.clone(), serde_json::Value::Array(names))
                })
                .collect(),
        )
    }

    /// Reads the stored form; unknown endpoints and actions are dropped.
    pub fn from_json(value: &serde_json::Value) -> Self {
        let mut map = BTreeMap::new();
        if let Some(obj) = value.as_object() {
            for (endpoint, actions) in obj {
                if !ENDPOINTS.contains(&endpoint.as_str()) {
                    continue;
                }
                let actions = actions
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().and_then(Action::from_name))
                    .collect();
                map.insert(endpoint.clone(), actions);
            }
        }
        Self(map)
    }
}

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
    let now = Utc::now();
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
        [Utc::now().into()],
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_tokens_allow_reading_only() {
        let read = Endpoints::all_read();
        assert!(read.allows("submissions", Action::List));
        assert!(!read.allows("submissions", Action::Create));
        assert!(!read.any_write());
        assert!(Endpoints::all_write().any_write());
        assert!(Endpoints::default().is_empty());
    }

    #[test]
    fn stored_scopes_read_back_without_unknown_names() {
        let stored = serde_json::json!({"submissions": ["list", "fly"], "nothing": ["list"]});
        let e = Endpoints::from_json(&stored);
        assert!(e.allows("submissions", Action::List));
        assert_eq!(e.0.len(), 1);
        assert_eq!(Endpoints::from_json(&e.to_json()), e);
    }
}
