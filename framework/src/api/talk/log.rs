//! `{id}/log/`: an object's activity log, paginated, newest first.

use poem::Request;
use poem_openapi::Object;
use serde_json::Value;

use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::log as talk_log;
use crate::http::{ApiError, Page, PageRequest};
use crate::state::AppState;

/// Who made a change.
#[derive(Object)]
pub struct LogPerson {
    /// The user's code.
    pub code: String,
    /// The user's name.
    pub name: String,
}

/// One entry of an activity log.
#[derive(Object)]
pub struct LogEntry {
    /// Internal ID.
    pub id: i64,
    /// When it happened.
    pub timestamp: chrono::DateTime<chrono::Utc>,
    /// What happened, e.g. `tessera.submission.accept`.
    pub action_type: String,
    /// Whether an organiser did it.
    pub is_orga_action: bool,
    /// Who did it; null for the system.
    #[oai(nullable)]
    pub person: Option<LogPerson>,
    /// A readable summary.
    pub display: String,
    /// Details: the fields as written.
    pub data: Value,
}

/// A page of the log of one object of the event, for members of the event's teams only
/// (others 403, anonymous callers 401), whatever the object shows the public.
pub async fn log_page(
    state: &AppState,
    req: &Request,
    ev: &TalkEvent,
    object_type: &str,
    object_id: i64,
    page: Option<String>,
    page_size: Option<u64>,
) -> Result<Page<LogEntry>, ApiError> {
    if !ev.role.is_member() {
        return Err(ev.caller.deny().into());
    }
    let request = PageRequest::new(req, &state.public_url, page, page_size);
    let count = talk_log::count(&state.db, ev.event.id, object_type, object_id).await?;
    let window = request.window(count)?;
    let entries = talk_log::list(
        &state.db,
        ev,
        crate::domain::talk::reviews::names_visible(ev),
        object_type,
        object_id,
        window.offset,
        window.limit,
    )
    .await?;
    Ok(window.page(
        entries
            .into_iter()
            .map(|e| LogEntry {
                display: display(&e.action_type),
                id: e.id,
                timestamp: e.timestamp,
                action_type: e.action_type,
                is_orga_action: e.is_orga_action,
                person: e.person.map(|(code, name)| LogPerson { code, name }),
                data: e.data,
            })
            .collect(),
    ))
}

/// `tessera.submission.accept` as "Submission: accept".
fn display(action_type: &str) -> String {
    let mut parts = action_type.split('.').skip(1);
    let object = parts.next().unwrap_or_default().replace('_', " ");
    let action = parts.collect::<Vec<_>>().join(" ");
    let mut chars = object.chars();
    let object: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    format!("{object}: {action}")
}
