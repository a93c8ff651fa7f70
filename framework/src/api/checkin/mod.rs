//! Check-in: lists of an event (`{event}/checkinlists/`), scanning tickets (the organizer's
//! `checkinrpc/redeem/` and each list's `positions/{secret}/redeem/`), finding tickets
//! (`checkinrpc/search/`, `checkinlists/{id}/positions/`), the scans of an event
//! (`{event}/checkins/`) and the device's event selection (`/api/v1/device/eventselection`).
//!
//! One file per resource: `lists` (a list, its status and failed scans), `positions` (a
//! list's tickets and scanning one), `rpc` (the organizer-wide scan and search), `checkins`
//! (the scans), `selection` (a device's event); `redeem` and `search` hold what scanning
//! and searching answer.

mod checkins;
mod lists;
mod positions;
mod redeem;
mod rpc;
mod search;
mod selection;

pub use checkins::CheckinsApi;
pub use lists::ListsApi;
pub use positions::PositionsApi;
pub use rpc::RpcApi;
pub use selection::SelectionApi;

use std::collections::BTreeMap;

use poem::Request;
use poem_openapi::Enum;
use serde_json::Value;

use crate::domain::checkin::Direction;
use crate::domain::checkin::lists::{self as list_rules, CheckinList};
use crate::domain::grants::{Caller, EventAccess};
use crate::domain::permissions::Permission;
use crate::http::ApiError;
use crate::state::AppState;

/// Entry or exit.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "CheckinType", rename_all = "lowercase")]
pub enum DirectionIo {
    /// Coming in.
    Entry,
    /// Going out.
    Exit,
}

impl From<DirectionIo> for Direction {
    fn from(d: DirectionIo) -> Self {
        match d {
            DirectionIo::Entry => Direction::Entry,
            DirectionIo::Exit => Direction::Exit,
        }
    }
}

impl From<Direction> for DirectionIo {
    fn from(d: Direction) -> Self {
        match d {
            Direction::Entry => DirectionIo::Entry,
            Direction::Exit => DirectionIo::Exit,
        }
    }
}

/// Why a scan was refused.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "CheckinErrorReason", rename_all = "snake_case")]
pub enum ReasonIo {
    /// Canceled.
    Canceled,
    /// Unknown ticket.
    Invalid,
    /// Not paid.
    Unpaid,
    /// Wrong product or date.
    Product,
    /// Rules refused.
    Rules,
    /// Secret revoked.
    Revoked,
    /// Questions unanswered.
    Incomplete,
    /// Entered already.
    AlreadyRedeemed,
    /// More than one ticket matched.
    Ambiguous,
    /// Any other error.
    Error,
    /// Blocked.
    Blocked,
    /// Outside its validity.
    InvalidTime,
    /// Awaiting approval.
    Unapproved,
    /// Annulled.
    Annulled,
}

impl ReasonIo {
    fn as_str(self) -> &'static str {
        use ReasonIo as R;
        match self {
            R::Canceled => "canceled",
            R::Invalid => "invalid",
            R::Unpaid => "unpaid",
            R::Product => "product",
            R::Rules => "rules",
            R::Revoked => "revoked",
            R::Incomplete => "incomplete",
            R::AlreadyRedeemed => "already_redeemed",
            R::Ambiguous => "ambiguous",
            R::Error => "error",
            R::Blocked => "blocked",
            R::InvalidTime => "invalid_time",
            R::Unapproved => "unapproved",
            R::Annulled => "annulled",
        }
    }
}

pub(super) fn require_any(ev: &EventAccess, any: &[Permission]) -> Result<(), ApiError> {
    if any.iter().any(|p| ev.permissions.has(*p)) {
        Ok(())
    } else {
        Err(ApiError::forbidden())
    }
}

pub(super) async fn find_list(
    state: &AppState,
    event_id: i64,
    id: i64,
) -> Result<CheckinList, ApiError> {
    list_rules::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

pub(super) fn scan_device(caller: &Caller) -> Option<crate::domain::grants::DeviceRef> {
    caller.device()
}

pub(super) const SCAN_ANY: [Permission; 2] = [Permission::CheckinOrders, Permission::ChangeOrders];
pub(super) const VIEW_ANY: [Permission; 2] = [Permission::ViewOrders, Permission::CheckinOrders];

/// Rewrites the legacy redeem path so that a secret with `/` in it reaches the route as one
/// segment (`%2F`): `.../checkinlists/{list}/positions/<secret, greedy>/redeem[/]`.
pub fn greedy_secret_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api/v1/organizers/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    // organizer, "events", event, "checkinlists", list, "positions", secret..., "redeem" [, ""]
    let end = if parts.last() == Some(&"") {
        parts.len() - 1
    } else {
        parts.len()
    };
    if end < 9
        || parts[1] != "events"
        || parts[3] != "checkinlists"
        || parts[5] != "positions"
        || parts[end - 1] != "redeem"
    {
        return None;
    }
    let secret = parts[6..end - 1].join("%2F");
    let mut out = format!(
        "/api/v1/organizers/{}/events/{}/checkinlists/{}/positions/{secret}/redeem",
        parts[0], parts[2], parts[4]
    );
    if end < parts.len() {
        out.push('/');
    }
    Some(out)
}

/// Middleware applying [`greedy_secret_path`] before anything else reads the path.
pub async fn greedy_secret<E: poem::Endpoint>(
    ep: std::sync::Arc<E>,
    mut req: Request,
) -> poem::Result<poem::Response> {
    if req.method() == poem::http::Method::POST
        && let Some(path) = greedy_secret_path(req.uri().path())
    {
        let query = req
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        if let Ok(uri) = format!("{path}{query}").parse::<poem::http::Uri>() {
            let mut parts = req.uri().clone().into_parts();
            parts.path_and_query = uri.path_and_query().cloned();
            if let Ok(uri) = poem::http::Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    ep.call(req).await.map(poem::IntoResponse::into_response)
}

pub(super) fn yes() -> bool {
    true
}

/// A list's rules (a JSON object) as a map, empty when they are none.
pub(super) fn rules_map(v: &Value) -> BTreeMap<String, Value> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::greedy_secret_path;

    #[test]
    fn a_secret_with_slashes_becomes_one_segment() {
        assert_eq!(
            greedy_secret_path(
                "/api/v1/organizers/o/events/e/checkinlists/3/positions/a/b+c=/redeem/"
            )
            .as_deref(),
            Some("/api/v1/organizers/o/events/e/checkinlists/3/positions/a%2Fb+c=/redeem/")
        );
        assert_eq!(
            greedy_secret_path("/api/v1/organizers/o/events/e/checkinlists/3/"),
            None
        );
    }
}
