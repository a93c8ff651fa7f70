//! What offline scanners sync besides orders: ticket secrets that no longer admit anyone
//! (`revokedsecrets/`) and secrets blocked for a time (`blockedsecrets/`), each answered with
//! `X-Page-Generated`, the server's time when the request began, from which the next
//! incremental sync asks (`created_since` / `updated_since`).

use chrono::{DateTime, SecondsFormat, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::{ToJSON, Type};
use poem_openapi::{ApiResponse, Object, OpenApi};

use super::Tag;
use crate::domain::permissions::Permission;
use crate::domain::secrets::{self, Blocked, Feed, FeedQuery, Revoked};
use crate::http::error::ListResult;
use crate::http::{ApiError, Auth, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

/// A page of a sync feed with the time the server began making it.
#[derive(ApiResponse)]
pub enum FeedAnswer<T: ToJSON + Type + Send> {
    /// The page; `X-Page-Generated` is the server's time when the request began (RFC 3339),
    /// to pass as the `*_since` filter of the next incremental sync.
    #[oai(status = 200)]
    Ok(Json<T>, #[oai(header = "X-Page-Generated")] String),
}

impl<T: ToJSON + Type + Send> FeedAnswer<T> {
    /// The page, generated at `began`.
    pub fn new(body: T, began: DateTime<Utc>) -> Self {
        Self::Ok(Json(body), page_generated(began))
    }
}

/// `X-Page-Generated`'s form of an instant (as pretix: microseconds, `Z`).
pub fn page_generated(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A secret that no longer admits anyone.
#[derive(Object)]
#[oai(rename = "RevokedSecret")]
pub struct RevokedOut {
    /// Internal ID.
    pub id: i64,
    /// The secret.
    pub secret: String,
    /// When it was revoked.
    pub created: Timestamp,
}

/// A secret blocked, or unblocked again (`blocked: false`).
#[derive(Object)]
#[oai(rename = "BlockedSecret")]
pub struct BlockedOut {
    /// Internal ID.
    pub id: i64,
    /// The secret.
    pub secret: String,
    /// When it was last blocked or unblocked.
    pub updated: Timestamp,
    /// Whether it is blocked now.
    pub blocked: bool,
}

/// Secret feed operations.
pub struct SecretsApi;

fn check_ordering(ordering: Option<&str>, allowed: &[&str]) -> Result<(), ApiError> {
    match ordering {
        Some(o) if !allowed.contains(&o) => Err(ApiError::field(
            "ordering",
            format!("Ordering by '{o}' is not possible."),
        )),
        _ => Ok(()),
    }
}

#[OpenApi(tag = "Tag::Orders")]
impl SecretsApi {
    /// List revoked ticket secrets
    ///
    /// Secrets replaced by a new signature or of canceled tickets: scanners refuse them
    /// offline. `created_since` (at or after), `ordering` by `created` or `secret` (default
    /// `-created`). Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/revokedsecrets",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_revoked_secrets(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        created_since: Query<Option<DateTime<Utc>>>,
        #[oai(validator(max_length = 20))] ordering: Query<Option<String>>,
    ) -> ListResult<FeedAnswer<Page<RevokedOut>>> {
        let began = crate::values::now();
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        check_ordering(ordering.0.as_deref(), &secrets::REVOKED_ORDERINGS)?;
        let q = FeedQuery {
            event_id: ev.event.id,
            since: created_since.0,
            ordering: ordering.0.as_deref(),
        };
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(Feed::Revoked.count(&state.db, &q).await?)?;
        let rows: Vec<Revoked> = Feed::Revoked
            .rows(&state.db, &q, window.offset, window.limit)
            .await?;
        let shown = rows
            .into_iter()
            .map(|r| RevokedOut {
                id: r.id,
                secret: r.secret,
                created: r.created.into(),
            })
            .collect();
        Ok(FeedAnswer::new(window.page(shown), began))
    }

    /// List blocked ticket secrets
    ///
    /// Secrets blocked for now, and those unblocked again (`blocked: false`), so that scanners
    /// learn both. `updated_since` (at or after), `ordering` by `updated` or `secret` (default
    /// `-updated`). Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/blockedsecrets",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_blocked_secrets(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        updated_since: Query<Option<DateTime<Utc>>>,
        #[oai(validator(max_length = 20))] ordering: Query<Option<String>>,
    ) -> ListResult<FeedAnswer<Page<BlockedOut>>> {
        let began = crate::values::now();
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        check_ordering(ordering.0.as_deref(), &secrets::BLOCKED_ORDERINGS)?;
        let q = FeedQuery {
            event_id: ev.event.id,
            since: updated_since.0,
            ordering: ordering.0.as_deref(),
        };
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(Feed::Blocked.count(&state.db, &q).await?)?;
        let rows: Vec<Blocked> = Feed::Blocked
            .rows(&state.db, &q, window.offset, window.limit)
            .await?;
        let shown = rows
            .into_iter()
            .map(|r| BlockedOut {
                id: r.id,
                secret: r.secret,
                updated: r.updated.into(),
                blocked: r.blocked,
            })
            .collect();
        Ok(FeedAnswer::new(window.page(shown), began))
    }
}
