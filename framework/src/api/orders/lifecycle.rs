//! An order's lifecycle: paid, canceled (and reactivated), approved or denied, back to
//! pending, expired, its term extended, its secrets made anew, its link mailed again.

use poem::web::Data;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::api::Tag;
use crate::domain::orders::{self, Transition};
use crate::http::error::WriteResult;
use crate::http::{Auth, JsonBody, NoContent};
use crate::state::AppState;
use crate::values::Timestamp;

use super::wire::OrderOut;
use super::{change_orders, lifecycle_error, seller, shown};

/// The new term of an order.
#[derive(Object)]
pub struct ExtendBody {
    /// The new end of the payment term.
    pub expires: Timestamp,
    /// Hold the quota again even if the products are no longer available.
    #[oai(default)]
    pub force: bool,
}

/// Options of marking an order paid, or confirming a payment.
#[derive(Object)]
pub struct PaidBody {
    /// Tell the customer by e-mail, with the tickets (default true).
    #[oai(default = "yes")]
    pub send_email: bool,
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

/// Writes the lifecycle operations: the `others` as they are, then for each transition a
/// POST on an order that makes that [`Transition`], with the body it names.
macro_rules! transitions {
    (
        others { $($others:tt)* }
        $(
            $(#[doc = $doc:tt])*
            $path:literal => $name:ident($($body:ident: $Body:ty)?) $t:expr;
        )*
    ) => {
        #[OpenApi(tag = "Tag::Orders")]
        impl LifecycleApi {
            $($others)*
            $(
                $(#[doc = $doc])*
                #[oai(path = $path, method = "post")]
                async fn $name(
                    &self,
                    state: Data<&AppState>,
                    auth: Auth,
                    organizer: Path<String>,
                    event: Path<String>,
                    code: Path<String>,
                    $($body: JsonBody<$Body>,)?
                ) -> WriteResult<Json<OrderOut>> {
                    transition(&state, &auth, &organizer, &event, &code, $t).await
                }
            )*
        }
    };
}

transitions! {
    others {
        /// Send an order's link again
        ///
        /// Mails the customer the link to the order's page (204); 400 for an order without
        /// an e-mail address. Needs `can_change_orders`.
        #[oai(
            path = "/api/v1/organizers/:organizer/events/:event/orders/:code/resend_link",
            method = "post"
        )]
        async fn resend_link(
            &self,
            state: Data<&AppState>,
            auth: Auth,
            organizer: Path<String>,
            event: Path<String>,
            code: Path<String>,
        ) -> WriteResult<NoContent> {
            let ev = change_orders(&state, &auth, &organizer, &event).await?;
            orders::resend_link(seller(&state, &ev), &ev.event, &code)
                .await
                .map_err(lifecycle_error)?;
            state.mailer.wake();
            Ok(NoContent::NoContent)
        }
    }
    /// Mark an order paid
    ///
    /// Confirms its open payment (or records a manual one). An expired order is paid only
    /// while its products are still available. The customer is told, with the tickets,
    /// unless `send_email` is false. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_paid"
        => mark_paid(body: PaidBody) Transition::MarkPaid { notify: body.0.send_email };
    /// Give an order's tickets new secrets
    ///
    /// The old secrets stop admitting anyone; with signed secrets (`pretix_sig1`) they are
    /// listed in `revokedsecrets/`, since offline scanners would still accept their
    /// signatures. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/regenerate_secrets"
        => regenerate_secrets() Transition::RegenerateSecrets;
    /// Cancel an order
    ///
    /// Gives back its quota, seats and voucher redemptions. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_canceled"
        => mark_canceled(body: CancelBody) Transition::Cancel { notify: body.0.send_email };
    /// Approve an order
    ///
    /// For a pending order that waits for approval: its payment term starts now; a free
    /// order is paid at once. Anything else is 400. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/approve"
        => approve(body: ApproveBody) Transition::Approve { notify: body.0.send_email };
    /// Deny an order
    ///
    /// For a pending order that waits for approval: it is canceled, and the customer is
    /// told with the comment. Anything else is 400. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/deny"
        => deny(body: DenyBody) Transition::Deny {
            notify: body.0.send_email,
            comment: &body.0.comment,
        };
    /// Mark a paid order pending
    ///
    /// Only a paid order (else 400); it holds its quota as pending again. Needs
    /// `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_pending"
        => mark_pending() Transition::MarkPending;
    /// Mark a pending order expired
    ///
    /// Only a pending order that has not expired (else 400); its quota is free at once.
    /// Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_expired"
        => mark_expired() Transition::MarkExpired;
    /// Extend an order's payment term
    ///
    /// For pending and expired orders. An expired order holds its quota again only while
    /// its products are available, unless `force`. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/extend"
        => extend(body: ExtendBody) Transition::Extend {
            expires: body.0.expires.into(),
            force: body.0.force,
        };
    /// Reactivate a canceled order
    ///
    /// Only a canceled order (else 400). It holds its quota, vouchers and seats again while
    /// they are free (else 400 and nothing changes) and is pending under a new term, or paid
    /// when its payments cover it. Its tickets get new secrets: the old ones were revoked with
    /// the cancellation. Needs `can_change_orders`.
    "/api/v1/organizers/:organizer/events/:event/orders/:code/reactivate"
        => reactivate() Transition::Reactivate;
}

/// Makes one named change to an order for a caller who may change orders, and shows it.
async fn transition(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
    code: &str,
    t: Transition<'_>,
) -> WriteResult<Json<OrderOut>> {
    let ev = change_orders(state, auth, organizer, event).await?;
    let mails = t.mails();
    let o = t
        .apply(seller(state, &ev), &ev.event, code)
        .await
        .map_err(lifecycle_error)?;
    if mails {
        state.mailer.wake();
    }
    Ok(Json(shown(state, &ev, o).await?))
}
