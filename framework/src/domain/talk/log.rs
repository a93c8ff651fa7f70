//! The activity log of talk-side objects: every change writes an entry in the change's own
//! transaction, and `{id}/log/` lists an object's entries, newest first.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, Statement};
use serde_json::Value;

use super::access::TalkEvent;

/// A new entry, written by [`write`].
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The event the object belongs to.
    pub event_id: i64,
    /// The kind of object: `submission`, `speaker`, `question`, ...
    pub object_type: &'a str,
    /// The object's ID.
    pub object_id: i64,
    /// Who changed it; `None` for the system.
    pub user_id: Option<i64>,
    /// What happened, e.g. `tessera.submission.update`.
    pub action_type: String,
    /// Details (changed fields and their new values, ...).
    pub data: Value,
}

impl<'a> Change<'a> {
    /// An entry for a change the caller of `ev` made: `action` (`create`, `update`,
    /// `delete`, `accept`, ...) on an object of `object_type`.
    pub fn new(
        ev: &super::access::TalkEvent,
        object_type: &'a str,
        object_id: i64,
        action: &str,
        data: Value,
    ) -> Self {
        Self {
            event_id: ev.event.id,
            object_type,
            object_id,
            user_id: ev.user_id(),
            action_type: format!("tessera.{object_type}.{action}"),
            data,
        }
    }
}

/// Writes one entry. Changes made through the API are organiser actions.
pub async fn write(db: &impl ConnectionTrait, change: Change<'_>) -> Result<(), DbErr> {
    crate::db::execute(
        db,
        "INSERT INTO talk_log (event_id, object_type, object_id, user_id, timestamp, \
         action_type, data, is_orga_action) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [
            change.event_id.into(),
            change.object_type.into(),
            change.object_id.into(),
            change.user_id.into(),
            crate::values::now().into(),
            change.action_type.into(),
            change.data.into(),
            true.into(),
        ],
    )
    .await?;
    Ok(())
}

/// One entry as the API shows it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Internal ID.
    pub id: i64,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
    /// What happened.
    pub action_type: String,
    /// Whether an organiser did it.
    pub is_orga_action: bool,
    /// Who did it: code and name; `None` for the system, a deleted user, or someone the
    /// caller may not see named.
    pub person: Option<(String, String)>,
    /// Details.
    pub data: Value,
}

/// How many entries an object has.
pub async fn count(
    db: &impl ConnectionTrait,
    event_id: i64,
    object_type: &str,
    object_id: i64,
) -> Result<u64, DbErr> {
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n FROM talk_log \
             WHERE event_id = $1 AND object_type = $2 AND object_id = $3",
            [event_id.into(), object_type.into(), object_id.into()],
        ))
        .await?;
    let n: i64 = row.map(|r| r.try_get("", "n")).transpose()?.unwrap_or(0);
    Ok(n.max(0) as u64)
}

/// A page of an object's entries, newest first, as the caller may see them: who made a
/// change is named only to callers who may see reviewers' names (`names`: organisers, and
/// reviewers while the phase shows names), or to the person who made it, so that a log never
/// names whom the object itself hides.
pub async fn list(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    names: bool,
    object_type: &str,
    object_id: i64,
    offset: u64,
    limit: u64,
) -> Result<Vec<Entry>, DbErr> {
    let caller = ev.user_id();
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT l.id, l.timestamp, l.action_type, l.is_orga_action, l.data, \
             l.user_id, u.code AS person_code, u.fullname AS person_name \
             FROM talk_log l LEFT JOIN users u ON u.id = l.user_id \
             WHERE l.event_id = $1 AND l.object_type = $2 AND l.object_id = $3 \
             ORDER BY l.timestamp DESC, l.id DESC LIMIT $4 OFFSET $5",
            [
                ev.event.id.into(),
                object_type.into(),
                object_id.into(),
                (limit as i64).into(),
                (offset as i64).into(),
            ],
        ))
        .await?;
    rows.iter()
        .map(|r| {
            let user: Option<i64> = r.try_get("", "user_id")?;
            let shown = names || (user.is_some() && user == caller);
            let code: Option<String> = r.try_get("", "person_code")?;
            let code = code.filter(|_| shown);
            let name: Option<String> = r.try_get("", "person_name")?;
            Ok(Entry {
                id: r.try_get("", "id")?,
                timestamp: r.try_get("", "timestamp")?,
                action_type: r.try_get("", "action_type")?,
                is_orga_action: r.try_get("", "is_orga_action")?,
                person: code.map(|c| (c, name.unwrap_or_default())),
                data: r.try_get("", "data")?,
            })
        })
        .collect()
}
