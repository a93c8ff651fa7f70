//! An order's payments: listed, read and confirmed.

use poem::Request;
use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;

use crate::api::Tag;
use crate::domain::orders::{self};
use crate::domain::permissions::Permission;
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, JsonBody, Page, PageRequest};
use crate::state::AppState;

use super::lifecycle::PaidBody;
use super::wire::{PaymentOut, payment};
use super::{lifecycle_error, seller, viewed};

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
}
