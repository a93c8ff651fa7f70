//! An order's lifecycle: paid, canceled, approved or denied, back to pending, expired,
//! its term extended, its secrets made anew.

use chrono::{DateTime, Utc};
use poem::web::Data;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::api::Tag;
use crate::domain::orders::{self};
use crate::domain::permissions::Permission;
use crate::http::error::WriteResult;
use crate::http::{Auth, JsonBody};
use crate::state::AppState;

use super::wire::OrderOut;
use super::{change_orders, lifecycle_error, seller, shown};

/// The new term of an order.
#[derive(Object)]
pub struct ExtendBody {
    /// The new end of the payment term.
    pub expires: DateTime<Utc>,
    /// Hold the quota again even if the products are no longer available.
    #[oai(default)]
    pub force: bool,
}

/// Options of a cancellation.
#[derive(Object, Default)]
pub struct CancelBody {
    /// Tell the customer by e-mail.
    #[oai(default)]
    pub send_email: bool,
}

/// Options of an approval.
#[derive(Object)]
pub struct ApproveBody {
    /// Tell the customer by e-mail (default true).
    #[oai(default = "yes")]
    pub send_email: bool,
}

/// Options of a denial.
#[derive(Object)]
pub struct DenyBody {
    /// Tell the customer by e-mail, with the comment (default true).
    #[oai(default = "yes")]
    pub send_email: bool,
    /// Why, for the customer.
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
}

fn yes() -> bool {
    true
}

/// Order lifecycle operations.
pub struct LifecycleApi;

#[OpenApi(tag = "Tag::Orders")]
impl LifecycleApi {
    /// Mark an order paid
    ///
    /// Confirms its open payment (or records a manual one). An expired order is paid only
    /// while its products are still available. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_paid",
        method = "post"
    )]
    async fn mark_paid(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::mark_paid(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Give an order's tickets new secrets
    ///
    /// The old secrets stop admitting anyone; with signed secrets (`pretix_sig1`) they are
    /// listed in `revokedsecrets/`, since offline scanners would still accept their
    /// signatures. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/regenerate_secrets",
        method = "post"
    )]
    async fn regenerate_secrets(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::regenerate_secrets(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Cancel an order
    ///
    /// Gives back its quota, seats and voucher redemptions. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_canceled",
        method = "post"
    )]
    async fn mark_canceled(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<CancelBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::cancel(seller(&state, &ev), &ev.event, &code, body.0.send_email)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Approve an order
    ///
    /// For a pending order that waits for approval: its payment term starts now; a free
    /// order is paid at once. Anything else is 400. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/approve",
        method = "post"
    )]
    async fn approve(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<ApproveBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::approve(seller(&state, &ev), &ev.event, &code, body.0.send_email)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Deny an order
    ///
    /// For a pending order that waits for approval: it is canceled, and the customer is
    /// told with the comment. Anything else is 400. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/deny",
        method = "post"
    )]
    async fn deny(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<DenyBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let b = body.0;
        let o = orders::deny(
            seller(&state, &ev),
            &ev.event,
            &code,
            b.send_email,
            &b.comment,
        )
        .await
        .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Mark a paid order pending
    ///
    /// Only a paid order (else 400); it holds its quota as pending again. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_pending",
        method = "post"
    )]
    async fn mark_pending(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::mark_pending(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Mark a pending order expired
    ///
    /// Only a pending order that has not expired (else 400); its quota is free at once.
    /// Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_expired",
        method = "post"
    )]
    async fn mark_expired(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::mark_expired(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Extend an order's payment term
    ///
    /// For pending and expired orders. An expired order holds its quota again only while
    /// its products are available, unless `force`. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/extend",
        method = "post"
    )]
    async fn extend(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<ExtendBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::extend(
            seller(&state, &ev),
            &ev.event,
            &code,
            body.0.expires,
            body.0.force,
        )
        .await
        .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }
}
