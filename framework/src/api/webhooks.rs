//! An organizer's webhooks, `/api/v1/organizers/{organizer}/webhooks/`, as pretix's (DELETE
//! disables), with the signing secret shown on creation and rotation, and the calls of each
//! (`calls/`, 30 days), of which a failed one can be sent again. Needs
//! `can_change_organizer_settings`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::Value;

use crate::db::entities::{webhook, webhook_call};
use crate::domain::permissions::Permission;
use crate::domain::webhooks::{self, Webhook, WebhookInput};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

const NEEDS: Option<Permission> = Some(Permission::ChangeOrganizerSettings);

/// A webhook.
#[derive(Object)]
#[oai(rename = "Webhook")]
pub struct WebhookOut {
    /// ID.
    pub id: i64,
    /// Where calls go.
    pub target_url: String,
    /// Whether calls are made; a receiver answering 410 Gone switches this off.
    pub enabled: bool,
    /// Every event of the organizer, or only `limit_events`.
    pub all_events: bool,
    /// Slugs of the events it is limited to.
    pub limit_events: Vec<String>,
    /// The action types it listens to.
    pub action_types: Vec<String>,
    /// Internal comment.
    pub comment: String,
}

/// A new webhook, with the secret its calls are signed with (shown only now).
#[derive(Object)]
#[oai(rename = "WebhookCreated")]
pub struct WebhookCreated {
    /// The webhook.
    #[oai(flatten)]
    pub webhook: WebhookOut,
    /// The signing secret of `X-Webhook-Signature`.
    pub secret: String,
}

/// A webhook's fields (POST, PUT).
#[derive(Object)]
pub struct WebhookCreate {
    /// Where calls go: an http or https URL, not on a loopback or private network.
    #[oai(validator(max_length = 255))]
    pub target_url: String,
    /// Whether calls are made (default true).
    #[oai(default = "yes")]
    pub enabled: bool,
    /// Every event (default true), or only `limit_events`.
    #[oai(default = "yes")]
    pub all_events: bool,
    /// Slugs of events.
    #[oai(default, validator(max_length = 50, max_items = 1000))]
    pub limit_events: Vec<String>,
    /// Action types, e.g. `pretix.event.order.placed`.
    #[oai(validator(max_length = 100, max_items = 200))]
    pub action_types: Vec<String>,
    /// Internal comment.
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
}

/// A partial change of a webhook.
#[derive(Object)]
pub struct WebhookPatch {
    /// Where calls go.
    #[oai(validator(max_length = 255))]
    pub target_url: Option<String>,
    /// Whether calls are made.
    pub enabled: Option<bool>,
    /// Every event, or only `limit_events`.
    pub all_events: Option<bool>,
    /// Slugs of events.
    #[oai(validator(max_length = 50, max_items = 1000))]
    pub limit_events: MaybeUndefined<Vec<String>>,
    /// Action types.
    #[oai(validator(max_length = 100, max_items = 200))]
    pub action_types: Option<Vec<String>>,
    /// Internal comment.
    #[oai(validator(max_length = 10000))]
    pub comment: Option<String>,
}

fn yes() -> bool {
    true
}

/// A new signing secret.
#[derive(Object)]
pub struct WebhookSecret {
    /// The secret of `X-Webhook-Signature`; the previous one no longer signs.
    pub secret: String,
}

/// A call of a webhook.
#[derive(Object)]
#[oai(rename = "WebhookCall")]
pub struct CallOut {
    /// ID; the payload's `notification_id`.
    pub id: i64,
    /// When the change happened.
    pub datetime: Timestamp,
    /// The action type.
    pub action_type: String,
    /// `pending` (waiting for its first or next attempt), `success` or `failed`.
    pub state: String,
    /// Attempts so far.
    pub attempts: i32,
    /// Whether the last attempt was a retry.
    pub is_retry: bool,
    /// When the next attempt is due, while pending.
    #[oai(nullable)]
    pub next_attempt: Option<Timestamp>,
    /// When it was last attempted.
    #[oai(nullable)]
    pub last_attempt: Option<Timestamp>,
    /// The receiver's last status code.
    #[oai(nullable)]
    pub return_code: Option<i32>,
    /// Whether it was delivered (2xx).
    pub success: bool,
    /// How long the last attempt took, in seconds.
    #[oai(nullable)]
    pub execution_time: Option<f64>,
    /// The body sent.
    pub payload: Value,
    /// The start of the receiver's last answer, or why the attempt failed.
    pub response_body: String,
    /// Why the last attempt got no answer from the receiver (it could not be reached, it
    /// did not answer in time, the target is not allowed); null when it answered or was not
    /// attempted yet.
    #[oai(nullable)]
    pub error: Option<String>,
}

fn out(w: Webhook) -> WebhookOut {
    WebhookOut {
        id: w.row.id,
        target_url: w.row.target_url,
        enabled: w.row.enabled,
        all_events: w.row.all_events,
        limit_events: w.limit_events,
        action_types: w.action_types,
        comment: w.row.comment,
    }
}

fn call_out(c: webhook_call::Model) -> CallOut {
    CallOut {
        id: c.id,
        datetime: c.created.into(),
        payload: webhooks::payload(&c),
        action_type: c.action_type,
        is_retry: c.attempts > 1,
        success: c.state == "success",
        next_attempt: (c.state == "pending").then_some(c.next_attempt.into()),
        state: c.state,
        attempts: c.attempts,
        last_attempt: c.last_attempt.map(Into::into),
        return_code: c.return_code,
        execution_time: c.duration_ms.map(|ms| ms as f64 / 1000.0),
        error: (c.last_attempt.is_some() && c.return_code.is_none())
            .then(|| c.response_body.clone()),
        response_body: c.response_body,
    }
}

async fn find(state: &AppState, organizer_id: i64, id: i64) -> Result<webhook::Model, ApiError> {
    webhook::Entity::find_by_id(id)
        .filter(webhook::Column::OrganizerId.eq(organizer_id))
        .one(&state.db)
        .await?
        .ok_or_else(|| ApiError::not_found("No such webhook."))
}

async fn shown(state: &AppState, row: webhook::Model) -> Result<WebhookOut, ApiError> {
    let mut all = webhooks::with_lists(&state.db, vec![row]).await?;
    all.pop().map(out).ok_or_else(ApiError::internal)
}

async fn save(
    state: &AppState,
    auth: &Auth,
    organizer_id: i64,
    existing: Option<webhook::Model>,
    input: WebhookInput,
) -> Result<Webhook, ApiError> {
    let allow = state.config.webhooks_allow_private_targets;
    webhooks::save(
        &state.db,
        &*state.plugins,
        allow,
        organizer_id,
        &auth.0,
        existing,
        input,
    )
    .await
    .map_err(ApiError::from)
}

/// The organizer's webhook with this ID, when the caller reaches all its events.
async fn find_within_reach(
    state: &AppState,
    auth: &Auth,
    organizer_id: i64,
    id: i64,
) -> Result<webhook::Model, ApiError> {
    let hook = find(state, organizer_id, id).await?;
    webhooks::within_reach(&state.db, &auth.0, &hook).await?;
    Ok(hook)
}

fn input(body: WebhookCreate) -> WebhookInput {
    WebhookInput {
        target_url: body.target_url,
        enabled: body.enabled,
        all_events: body.all_events,
        limit_events: body.limit_events,
        action_types: body.action_types,
        comment: body.comment,
    }
}

/// Webhooks.
pub struct WebhooksApi;

#[OpenApi(tag = "super::Tag::Webhooks")]
impl WebhooksApi {
    /// List webhooks
    ///
    /// Ordered by ID. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/webhooks", method = "get")]
    async fn list_webhooks(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<WebhookOut>>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let query = webhook::Entity::find()
            .filter(webhook::Column::OrganizerId.eq(org.organizer.id))
            .order_by_asc(webhook::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        let (rows, page) = page.take_results();
        let all = webhooks::with_lists(&state.db, rows).await?;
        Ok(Json(page(all.into_iter().map(out).collect())))
    }

    /// Show a webhook
    #[oai(path = "/api/v1/organizers/:organizer/webhooks/:id", method = "get")]
    async fn get_webhook(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<WebhookOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let row = find(&state, org.organizer.id, *id).await?;
        Ok(Json(shown(&state, row).await?))
    }

    /// Create a webhook
    ///
    /// Answers the webhook with `secret`, which signs its calls and is shown only now. A
    /// webhook hears only of events the caller has access to: `all_events` needs access to
    /// all events (403 otherwise); changing, disabling a webhook, rotating its secret and
    /// reading its calls need the same of its events.
    #[oai(path = "/api/v1/organizers/:organizer/webhooks", method = "post")]
    async fn create_webhook(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<WebhookCreate>,
    ) -> WriteResult<Created<WebhookCreated>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let saved = save(&state, &auth, org.organizer.id, None, input(body.0)).await?;
        let secret = saved.row.secret.clone();
        Ok(Created::Created(Json(WebhookCreated {
            webhook: out(saved),
            secret,
        })))
    }

    /// Replace a webhook
    #[oai(path = "/api/v1/organizers/:organizer/webhooks/:id", method = "put")]
    async fn put_webhook(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<WebhookCreate>,
    ) -> WriteResult<Json<WebhookOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = find(&state, org.organizer.id, *id).await?;
        let saved = save(
            &state,
            &auth,
            org.organizer.id,
            Some(existing),
            input(body.0),
        )
        .await?;
        Ok(Json(out(saved)))
    }

    /// Change a webhook
    #[oai(path = "/api/v1/organizers/:organizer/webhooks/:id", method = "patch")]
    async fn patch_webhook(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<WebhookPatch>,
    ) -> WriteResult<Json<WebhookOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = find(&state, org.organizer.id, *id).await?;
        let now = shown(&state, existing.clone()).await?;
        let p = body.0;
        let merged = WebhookInput {
            target_url: p.target_url.unwrap_or(now.target_url),
            enabled: p.enabled.unwrap_or(now.enabled),
            all_events: p.all_events.unwrap_or(now.all_events),
            limit_events: match p.limit_events {
                MaybeUndefined::Value(v) => v,
                MaybeUndefined::Null => Vec::new(),
                MaybeUndefined::Undefined => now.limit_events,
            },
            action_types: p.action_types.unwrap_or(now.action_types),
            comment: p.comment.unwrap_or(now.comment),
        };
        let saved = save(&state, &auth, org.organizer.id, Some(existing), merged).await?;
        Ok(Json(out(saved)))
    }

    /// Disable a webhook
    ///
    /// As pretix: the webhook stays, disabled, with its calls.
    #[oai(path = "/api/v1/organizers/:organizer/webhooks/:id", method = "delete")]
    async fn delete_webhook(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = find_within_reach(&state, &auth, org.organizer.id, *id).await?;
        crate::db::in_transaction(&state.db, async |txn| {
            crate::db::execute(
                txn,
                "UPDATE webhooks SET enabled = $1 WHERE id = $2",
                [false.into(), existing.id.into()],
            )
            .await
        })
        .await
        .map_err(ApiError::from)?;
        Ok(NoContent::NoContent)
    }

    /// Rotate a webhook's secret
    ///
    /// Calls are signed with the new secret from now on; it is shown only now.
    #[oai(
        path = "/api/v1/organizers/:organizer/webhooks/:id/rotate_secret",
        method = "post"
    )]
    async fn rotate_secret(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> WriteResult<Json<WebhookSecret>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = find_within_reach(&state, &auth, org.organizer.id, *id).await?;
        let secret = webhooks::new_secret();
        crate::db::in_transaction(&state.db, async |txn| {
            crate::db::execute(
                txn,
                "UPDATE webhooks SET secret = $1 WHERE id = $2",
                [secret.clone().into(), existing.id.into()],
            )
            .await
        })
        .await
        .map_err(ApiError::from)?;
        Ok(Json(WebhookSecret { secret }))
    }

    /// List a webhook's calls
    ///
    /// Newest first, for 30 days.
    #[oai(
        path = "/api/v1/organizers/:organizer/webhooks/:id/calls",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_calls(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<CallOut>>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let hook = find_within_reach(&state, &auth, org.organizer.id, *id).await?;
        let query = webhook_call::Entity::find()
            .filter(webhook_call::Column::WebhookId.eq(hook.id))
            .order_by_desc(webhook_call::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(call_out)))
    }

    /// Send a failed call again
    ///
    /// The call is due at once, with a full set of retries; 400 unless it failed.
    #[oai(
        path = "/api/v1/organizers/:organizer/webhooks/:id/calls/:call/retry",
        method = "post"
    )]
    async fn retry_call(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        call: Path<i64>,
    ) -> WriteResult<Json<CallOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let hook = find_within_reach(&state, &auth, org.organizer.id, *id).await?;
        let found = webhook_call::Entity::find_by_id(*call)
            .filter(webhook_call::Column::WebhookId.eq(hook.id))
            .one(&state.db)
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("No such call."))?;
        if found.state != "failed" {
            return Err(ApiError::bad_request("Only a failed call can be sent again.").into());
        }
        let now = crate::values::now();
        let again = crate::db::in_transaction(&state.db, async |txn| {
            crate::db::execute(
                txn,
                "UPDATE webhook_calls SET state = 'pending', attempts = 0, next_attempt = $1, \
                 claimed_until = NULL WHERE id = $2 AND state = 'failed'",
                [now.into(), found.id.into()],
            )
            .await?;
            webhook_call::Entity::find_by_id(found.id).one(txn).await
        })
        .await
        .map_err(ApiError::from)?
        .ok_or_else(ApiError::internal)?;
        Ok(Json(call_out(again)))
    }
}
