//! What buyers do themselves, as pretix's shop lets them: cancel an order through its
//! secret link (`.../order/{code}/{secret}/cancel`, posting to `cancel/do`), and have the
//! links to their orders mailed again (`/{organizer}/{event}/resend`). The rules are the
//! domain's ([`self_service`]); these pages show and post them.

use poem::http::StatusCode;
use poem::web::Data;
use poem::{Body, Request, Response, handler};

use super::orders::{Linked, protect};
use crate::domain::orders::LifecycleError;
use crate::domain::orders::self_service::{self, CancelTerms, RefundTo, RefundWay};
use crate::domain::questions::is_email;
use crate::domain::{settings, storefront};
use crate::http::Money;
use crate::state::AppState;
use crate::values::i18n::I18nString;

/// The cancel page: what canceling the order costs and gives back, and the button; or why
/// it cannot be canceled.
#[handler]
pub async fn cancel_page(req: &Request, state: Data<&AppState>) -> Response {
    let linked = match Linked::of(req, &state).await {
        Ok(linked) => linked,
        Err(answer) => return answer,
    };
    let now = crate::values::now();
    let offer = self_service::offer(
        &state.db,
        &linked.event,
        &linked.settings,
        &linked.order,
        now,
    )
    .await;
    match offer {
        Ok(offer) => cancel_form(req, &state, &linked, offer.cancel.as_ref(), None),
        Err(e) => super::server_error(e),
    }
}

/// The cancel page's form, posted: the order is canceled and the buyer led back to it.
#[handler]
pub async fn cancel_do(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let linked = match Linked::of(req, &state).await {
        Ok(linked) => linked,
        Err(answer) => return answer,
    };
    let fields = match super::read_form(req, body, super::FormToken::SignIn).await {
        Ok(fields) => fields,
        Err(answer) => return answer,
    };
    let to = match super::field(&fields, "giftcard").as_deref() {
        Some("true") => RefundTo::GiftCard,
        _ => RefundTo::AsPaid,
    };
    let seller = state.seller(&linked.organizer);
    let code = linked.order.row.code.clone();
    match self_service::cancel(seller, &linked.event, &linked.settings, &code, to).await {
        Ok(done) => {
            state.mailer.wake();
            let by_hand = if done.refund_left_cents > 0 {
                "&refund_by_hand=1"
            } else {
                ""
            };
            super::redirect(&format!("{}/?canceled=1{by_hand}", linked.base))
        }
        Err(LifecycleError::Refused(_) | LifecycleError::Invalid(_)) => {
            let refused = Some("You cannot cancel this order.");
            cancel_form(req, &state, &linked, None, refused)
        }
        Err(LifecycleError::NotFound) => protect(super::orders::not_found()),
        Err(LifecycleError::Db(e)) => super::server_error(e),
    }
}

/// The cancel page with `terms` (none: it says the order cannot be canceled, with 403).
fn cancel_form(
    req: &Request,
    state: &AppState,
    linked: &Linked,
    terms: Option<&CancelTerms>,
    error: Option<&str>,
) -> Response {
    let (csrf, set_cookie) = super::session::login_csrf(req, state);
    let status = if terms.is_some() {
        StatusCode::OK
    } else {
        StatusCode::FORBIDDEN
    };
    let shown = terms.map(|t| {
        minijinja::context! {
            fee => (t.fee_cents > 0).then(|| Money(t.fee_cents).to_string()),
            refund => (t.refund_cents > 0).then(|| Money(t.refund_cents).to_string()),
            choose => t.refund == RefundWay::BuyerChooses,
            gift_card => t.refund == RefundWay::GiftCard,
            by_hand => t.refund == RefundWay::ByHand,
        }
    });
    let error = error.or(terms.is_none().then_some("You cannot cancel this order."));
    let context = minijinja::context! {
        terms => shown,
        error,
        csrf_token => csrf,
        action => format!("{}/cancel/do", linked.base),
        ..linked.frame()
    };
    with_cookie(
        super::render_status(status, "order_cancel.html", context),
        set_cookie,
    )
}

/// Adds the CSRF cookie a form's page may have set.
fn with_cookie(resp: Response, cookie: Option<String>) -> Response {
    match cookie {
        Some(cookie) => super::session::set_cookie(resp, &cookie),
        None => resp,
    }
}

/// The resend page: a form for the address the orders were placed with.
#[handler]
pub async fn resend_page(req: &Request, state: Data<&AppState>) -> Response {
    match Shop::of(req, &state).await {
        Ok(shop) => shop.page(req, &state, StatusCode::OK, "", None, false),
        Err(answer) => answer,
    }
}

/// The resend form, posted: the links of the address's orders are mailed to it. The answer
/// is the same whether there are any, so that the page tells no one who ordered.
#[handler]
pub async fn resend(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let shop = match Shop::of(req, &state).await {
        Ok(shop) => shop,
        Err(answer) => return answer,
    };
    let fields = match super::read_form(req, body, super::FormToken::SignIn).await {
        Ok(fields) => fields,
        Err(answer) => return answer,
    };
    let email = super::field(&fields, "email").unwrap_or_default();
    let email = email.trim();
    if !is_email(email) {
        let error = Some("Enter a valid email address.");
        return shop.page(req, &state, StatusCode::BAD_REQUEST, email, error, false);
    }
    let seller = state.seller(&shop.organizer.slug);
    match self_service::resend_links(seller, &shop.event, email).await {
        Ok(_) => {
            state.mailer.wake();
            shop.page(req, &state, StatusCode::OK, "", None, true)
        }
        Err(LifecycleError::Db(e)) => super::server_error(e),
        // An order without an address has none to mail; it was not asked for.
        Err(_) => shop.page(req, &state, StatusCode::OK, "", None, true),
    }
}

/// The event of an event-level page, found by its slugs.
struct Shop {
    organizer: std::sync::Arc<crate::db::entities::organizer::Model>,
    event: crate::db::entities::event::Model,
    settings: std::sync::Arc<crate::domain::cache::EventSettings>,
    lang: &'static str,
}

impl Shop {
    async fn of(req: &Request, state: &AppState) -> Result<Self, Response> {
        let param = |name| req.raw_path_param(name).unwrap_or_default();
        let cache = state.cache.current().await;
        let missing = || protect(super::orders::not_found());
        let organizer = storefront::organizer(&state.db, cache, param("organizer"))
            .await
            .map_err(super::server_error)?
            .ok_or_else(missing)?;
        let event = storefront::event(&state.db, cache, organizer.id, param("event"))
            .await
            .map_err(super::server_error)?
            .filter(|e| e.live)
            .ok_or_else(missing)?;
        let settings = settings::of_event(&state.db, &state.settings, cache, &event)
            .await
            .map_err(super::server_error)?;
        let lang = crate::values::texts::language(&super::pages::language(
            req,
            &settings::locales(&settings),
        ));
        Ok(Self {
            organizer,
            event,
            settings,
            lang,
        })
    }

    fn page(
        &self,
        req: &Request,
        state: &AppState,
        status: StatusCode,
        email: &str,
        error: Option<&str>,
        sent: bool,
    ) -> Response {
        let (csrf, set_cookie) = super::session::login_csrf(req, state);
        let shop_url = format!("/{}/{}/", self.organizer.slug, self.event.slug);
        let context = minijinja::context! {
            lang => self.lang,
            organizer => minijinja::context! {
                name => self.organizer.name,
                url => format!("/{}/", self.organizer.slug),
            },
            event => I18nString::from_stored(&self.event.name).localize(self.lang),
            action => format!("{shop_url}resend"),
            shop_url, email, error, sent,
            csrf_token => csrf,
            ..super::brand_colours(&self.settings)
        };
        with_cookie(
            super::render_status(status, "resend.html", context),
            set_cookie,
        )
    }
}
