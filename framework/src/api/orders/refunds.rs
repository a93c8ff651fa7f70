//! Refunds of an order (`orders/{code}/refunds/`), their state changes, and giving back a
//! payment through its provider (`payments/{id}/refund/`), as pretix.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::Value;

use super::wire::{RefundOut, refund};
use super::{change_orders, lifecycle_error, seller, viewed};
use crate::api::Tag;
use crate::values::Timestamp;

use crate::domain::orders::refunds::{self, NewRefund, Step};
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, Money, Page, PageRequest};
use crate::state::AppState;

/// A refund to record.
#[derive(Object)]
pub struct RefundCreate {
    /// `created`, `transit`, `done` or `external`.
    #[oai(validator(max_length = 16))]
    pub state: String,
    /// `admin` (default), `buyer` or `external`.
    #[oai(default = "admin_source", validator(max_length = 16))]
    pub source: String,
    /// Amount, positive.
    pub amount: Money,
    /// The payment it gives back, by number: never more than is left of it.
    #[oai(nullable)]
    pub payment: Option<i32>,
    /// Payment provider; `giftcard` credits the card `info.gift_card`.
    #[oai(validator(max_length = 64))]
    pub provider: String,
    /// When it was done.
    #[oai(nullable)]
    pub execution_date: Option<Timestamp>,
    /// Internal comment.
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
    /// Provider details (`{"gift_card": <id>}` for `giftcard`).
    #[oai(default, validator(max_properties = 100))]
    pub info: BTreeMap<String, Value>,
    /// Cancel the order too.
    #[oai(default)]
    pub mark_canceled: bool,
}

fn admin_source() -> String {
    "admin".into()
}

/// How much of a payment to give back.
#[derive(Object)]
pub struct PaymentRefundBody {
    /// Amount (default: all that is left of the payment).
    #[oai(nullable)]
    pub amount: Option<Money>,
    /// Cancel the order too.
    #[oai(default)]
    pub mark_canceled: bool,
}

/// Options of processing an external refund.
#[derive(Object, Default)]
pub struct ProcessBody {
    /// Cancel the order too.
    #[oai(default)]
    pub mark_canceled: bool,
}

/// Refund operations.
pub struct RefundsApi;

#[OpenApi(tag = "Tag::Orders")]
impl RefundsApi {
    /// List an order's refunds
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_refunds(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        page: Query<Option<String>>,
    ) -> ListResult<Json<Page<RefundOut>>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, None);
        Ok(Json(page.page_of(&o.refunds, refund)?))
    }

    /// Show a refund
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds/:local_id",
        method = "get"
    )]
    async fn get_refund(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> ReadResult<Json<RefundOut>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        o.refunds
            .iter()
            .find(|r| r.row.local_id == *local_id)
            .map(|r| Json(refund(r)))
            .ok_or_else(|| ApiError::forbidden().into())
    }

    /// Record a refund
    ///
    /// A refund made elsewhere or on its way (`created`, `transit`, `done`, `external`);
    /// the provider is not called. With a payment, never more than is left of it (400).
    /// A `giftcard` refund that is done credits `info.gift_card` through its ledger. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds",
        method = "post"
    )]
    async fn create_refund(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<RefundCreate>,
    ) -> WriteResult<Created<RefundOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let b = body.0;
        if !refunds::SOURCES.contains(&b.source.as_str()) {
            return Err(ApiError::field(
                "source",
                format!("\"{}\" is not a valid choice.", b.source),
            )
            .into());
        }
        let new = NewRefund {
            state: b.state,
            source: b.source,
            amount_cents: b.amount.0,
            payment: b.payment,
            provider: b.provider,
            execution_date: b.execution_date.map(Into::into),
            comment: b.comment,
            info: Value::Object(b.info.into_iter().collect()),
            mark_canceled: b.mark_canceled,
        };
        let (_, r) = refunds::create(seller(&state, &ev), &ev.event, &code, new)
            .await
            .map_err(lifecycle_error)?;
        Ok(Created::Created(Json(refund(&r))))
    }

    /// Mark a refund done
    ///
    /// From `created` or `transit` (else 400). Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds/:local_id/done",
        method = "post"
    )]
    async fn refund_done(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> WriteResult<Json<RefundOut>> {
        step(
            &state,
            &auth,
            (&organizer, &event, &code),
            *local_id,
            Step::Done,
        )
        .await
    }

    /// Process an external refund
    ///
    /// Acknowledges a refund made outside (`external`, else 400) as done; with
    /// `mark_canceled` the order is canceled too. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds/:local_id/process",
        method = "post"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn refund_process(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
        body: JsonBody<ProcessBody>,
    ) -> WriteResult<Json<RefundOut>> {
        let s = Step::Process {
            mark_canceled: body.0.mark_canceled,
        };
        step(&state, &auth, (&organizer, &event, &code), *local_id, s).await
    }

    /// Cancel a refund
    ///
    /// From `created`, `transit` or `external` (else 400). Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/refunds/:local_id/cancel",
        method = "post"
    )]
    async fn refund_cancel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> WriteResult<Json<RefundOut>> {
        step(
            &state,
            &auth,
            (&organizer, &event, &code),
            *local_id,
            Step::Cancel,
        )
        .await
    }

    /// Refund a payment
    ///
    /// Gives back `amount` (default: all that is left) of a confirmed payment through its
    /// provider, never more than was paid on it (400); the refund is done when the provider
    /// accepts, and a payment given back in full becomes `refunded`. With `mark_canceled` the
    /// order is canceled in the same step. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id/refund",
        method = "post"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn refund_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
        body: JsonBody<PaymentRefundBody>,
    ) -> WriteResult<Json<RefundOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let b = body.0;
        let (_, r) = refunds::refund_payment(
            seller(&state, &ev),
            &ev.event,
            &code,
            *local_id,
            b.amount.map(|m| m.0),
            b.mark_canceled,
        )
        .await
        .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(refund(&r)))
    }
}

/// Moves a refund on, for a caller with `can_change_orders`.
async fn step(
    state: &AppState,
    auth: &Auth,
    (organizer, event, code): (&str, &str, &str),
    local_id: i32,
    s: Step,
) -> WriteResult<Json<RefundOut>> {
    let ev = change_orders(state, auth, organizer, event).await?;
    let (_, r) = refunds::transition(seller(state, &ev), &ev.event, code, local_id, s)
        .await
        .map_err(lifecycle_error)?;
    Ok(Json(refund(&r)))
}
