//! An order's payments: listed, read, recorded, confirmed and canceled.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::Value;

use crate::api::Tag;
use crate::domain::orders::paying::{self, NewPayment};
use crate::domain::orders::{self, Order};
use crate::domain::permissions::Permission;
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, Money, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

use super::lifecycle::PaidBody;
use super::wire::{PaymentOut, payment};
use super::{change_orders, lifecycle_error, seller, viewed};

/// A payment to record, as pretix's `POST payments/` takes it.
#[derive(Object)]
pub struct PaymentCreate {
    /// `created`, `pending`, `confirmed` (which pays the order), `canceled`, `failed` or
    /// `refunded`.
    #[oai(validator(max_length = 16))]
    pub state: String,
    /// Amount.
    pub amount: Money,
    /// When it was paid.
    #[oai(nullable)]
    pub payment_date: Option<Timestamp>,
    /// Payment provider.
    #[oai(validator(min_length = 1, max_length = 64))]
    pub provider: String,
    /// Provider details, shown as `details`.
    #[oai(default, validator(max_properties = 100))]
    pub info: BTreeMap<String, Value>,
    /// Whether the buyer is told when the payment pays the order.
    #[oai(default = "yes")]
    pub send_email: bool,
}

fn yes() -> bool {
    true
}

/// The payment `local_id` as the order shows it.
fn shown(o: &Order, local_id: i32) -> Result<PaymentOut, ApiError> {
    o.payments
        .iter()
        .find(|p| p.local_id == local_id)
        .map(payment)
        .ok_or_else(ApiError::forbidden)
}

/// Order payment operations.
pub struct PaymentsApi;

#[OpenApi(tag = "Tag::Orders")]
impl PaymentsApi {
    /// List an order's payments
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_payments(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        page: Query<Option<String>>,
    ) -> ListResult<Json<Page<PaymentOut>>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, None);
        Ok(Json(page.page_of(&o.payments, payment)?))
    }

    /// Show a payment
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id",
        method = "get"
    )]
    async fn get_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> ReadResult<Json<PaymentOut>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let p = o
            .payments
            .iter()
            .find(|p| p.local_id == *local_id)
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(payment(p)))
    }

    /// Confirm a payment
    ///
    /// Marks the payment confirmed and the order paid; the customer is told, with the
    /// tickets, unless `send_email` is false. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id/confirm",
        method = "post"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn confirm_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
        body: JsonBody<PaidBody>,
    ) -> WriteResult<Json<PaymentOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let notify = body.0.send_email;
        let o = orders::confirm_payment(seller(&state, &ev), &ev.event, &code, *local_id, notify)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        let p = o
            .payments
            .iter()
            .find(|p| p.local_id == *local_id)
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(payment(p)))
    }

    /// Record a payment
    ///
    /// As pretix: in the state given; `confirmed` pays the order (unless its quota is gone,
    /// where the payment stays `pending`), telling the customer unless `send_email` is
    /// false. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments",
        method = "post"
    )]
    async fn create_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<PaymentCreate>,
    ) -> WriteResult<Created<PaymentOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let b = body.0;
        let new = NewPayment {
            state: b.state,
            amount_cents: b.amount.0,
            payment_date: b.payment_date.map(Into::into),
            provider: b.provider,
            info: Value::Object(b.info.into_iter().collect()),
            notify: b.send_email,
        };
        let (o, local_id) = paying::add_payment(seller(&state, &ev), &ev.event, &code, new)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Created::Created(Json(shown(&o, local_id)?)))
    }

    /// Cancel a payment
    ///
    /// A `created` or `pending` payment (else 400), its provider first (a card payment's
    /// intent); the provider's refusal is 400 too. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id/cancel",
        method = "post"
    )]
    async fn cancel_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> WriteResult<Json<PaymentOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = paying::cancel_payment(seller(&state, &ev), &ev.event, &code, *local_id)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&o, *local_id)?))
    }
}
