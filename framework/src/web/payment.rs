//! The payment page of an order's payment (`/{organizer}/{event}/order/{code}/{secret}/pay/
//! {payment}/`): what to pay and how, and, for providers that take the money on the page
//! (cards), their form, which posts back here; and the notices providers' services send to
//! `/_{provider}/webhook/`.

use std::sync::LazyLock;

use minijinja::{AutoEscape, Environment};
use poem::http::{HeaderValue, StatusCode, header};
use poem::web::Data;
use poem::{Body, IntoResponse, Request, Response, handler};

use super::orders::{find, not_found, protect};
use crate::domain::extensions::Extensions;
use crate::domain::extensions::payments::{PaymentForm, PaymentProvider};
use crate::domain::orders::paying::{self, Noticed, Paying};
use crate::domain::orders::{LifecycleError, Order};
use crate::domain::{events, settings, tokens};
use crate::http::Money;
use crate::state::AppState;
use crate::values::i18n::I18nString;

/// Renders providers' forms, escaping every value.
static FORMS: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env
});

/// The page of one payment of an order.
#[handler]
pub async fn payment_page(req: &Request, state: Data<&AppState>) -> Response {
    match Found::of(req, &state).await {
        Ok(found) => found.page(req, &state, None, false).await,
        Err(answer) => protect(answer),
    }
}

/// The page's form, posted: the provider acts on it, then the page says where the payment
/// stands (or the order page, once paid).
#[handler]
pub async fn pay(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let found = match Found::of(req, &state).await {
        Ok(found) => found,
        Err(answer) => return protect(answer),
    };
    let fields = match super::read_form(req, body, super::FormToken::SignIn).await {
        Ok(fields) => fields,
        Err(answer) => return answer,
    };
    let form: Vec<(String, String)> = fields
        .into_iter()
        .filter(|(k, _)| k != super::session::CSRF_FIELD)
        .collect();
    let seller = state.seller(&found.organizer);
    let paid = paying::pay_on_page(
        seller,
        &found.event,
        &found.order.row.code,
        found.local_id,
        &form,
    )
    .await;
    match paid {
        Ok(Paying::Paid) => {
            state.mailer.wake();
            super::redirect(&found.order_page())
        }
        Ok(Paying::Closed) => super::redirect(&found.order_page()),
        Ok(Paying::Open(message)) => found.again(req, &state, message, false).await,
        Ok(Paying::Busy) => found.again(req, &state, None, true).await,
        Err(LifecycleError::NotFound) => protect(not_found()),
        Err(LifecycleError::Refused(message)) => {
            found.again(req, &state, Some(message), false).await
        }
        Err(LifecycleError::Invalid(_)) => found.again(req, &state, None, false).await,
        Err(LifecycleError::Db(e)) => super::server_error(e),
    }
}

/// The order and payment behind a payment page's link.
struct Found {
    organizer: String,
    event: crate::db::entities::event::Model,
    order: Order,
    local_id: i32,
    secret: String,
}

impl Found {
    /// The order of the link (organizer, event, code and secret all match) and its payment;
    /// `Err` is the 404 page.
    async fn of(req: &Request, state: &AppState) -> Result<Self, Response> {
        let param = |name: &str| req.raw_path_param(name).unwrap_or_default().to_owned();
        let (org, ev, code, secret) = (
            param("organizer"),
            param("event"),
            param("code"),
            param("secret"),
        );
        let (event, order) = match find(state, &org, &ev, &code, &secret).await {
            Ok(Some(found)) => found,
            Ok(None) => return Err(not_found()),
            Err(e) => return Err(super::server_error(e)),
        };
        let local_id = param("local_id")
            .parse::<i32>()
            .ok()
            .filter(|id| order.payments.iter().any(|p| p.local_id == *id))
            .ok_or_else(not_found)?;
        Ok(Self {
            organizer: org,
            event,
            order,
            local_id,
            secret,
        })
    }

    /// The order's page, on this site.
    fn order_page(&self) -> String {
        format!(
            "/{}/{}/order/{}/{}/",
            self.organizer, self.event.slug, self.order.row.code, self.secret
        )
    }

    /// The page after a post: the payment read again.
    async fn again(
        self,
        req: &Request,
        state: &AppState,
        message: Option<String>,
        waiting: bool,
    ) -> Response {
        let found = find(
            state,
            &self.organizer,
            &self.event.slug,
            &self.order.row.code,
            &self.secret,
        )
        .await;
        let again = match found {
            Ok(Some((event, order))) => Self {
                event,
                order,
                ..self
            },
            Ok(None) => return protect(not_found()),
            Err(e) => return super::server_error(e),
        };
        again.page(req, state, message, waiting).await
    }

    /// The page, with the provider's form while the payment is open.
    async fn page(
        &self,
        req: &Request,
        state: &AppState,
        message: Option<String>,
        waiting: bool,
    ) -> Response {
        let Some(p) = self
            .order
            .payments
            .iter()
            .find(|p| p.local_id == self.local_id)
        else {
            return protect(not_found());
        };
        let seller = state.seller(&self.organizer);
        let form = match paying::form_of(seller, &self.event, &self.order.row, p).await {
            Ok(form) => form,
            Err(e) => return super::server_error(e),
        };
        let (csrf, set_cookie) = super::session::login_csrf(req, state);
        let nonce = tokens::generate();
        let action = req.uri().path().to_owned();
        let amount = Money(p.amount_cents).to_string();
        let currency = self.event.currency.clone();
        let html = match &form {
            Some(f) => match FORMS.render_str(
                f.template,
                minijinja::context! {
                    values => minijinja::Value::from_serialize(&f.values),
                    action, csrf_token => csrf, nonce, amount, currency,
                },
            ) {
                Ok(html) => html,
                Err(error) => {
                    tracing::error!(%error, provider = p.provider, "payment form failed");
                    String::new()
                }
            },
            None => String::new(),
        };
        let method = provider_name(state, &self.event, &p.provider);
        let lang = super::orders::reader_language(req, &self.order.row.locale);
        let cache = state.cache.current().await;
        let values = match settings::of_event(&state.db, &state.settings, cache, &self.event).await
        {
            Ok(values) => values,
            Err(e) => return super::server_error(e),
        };
        let mut resp = super::render_with_policy(
            StatusCode::OK,
            "payment.html",
            minijinja::context! {
                lang,
                event => I18nString::from_stored(&self.event.name).localize(lang),
                code => self.order.row.code,
                amount, currency, method,
                state => state_text(&p.state),
                received => p.state == "confirmed",
                instructions => p.details["instructions"].as_str().unwrap_or_default(),
                form => html,
                message, waiting,
                back => self.order_page(),
                ..super::brand_colours(&values)
            },
            &policy(form.as_ref(), &nonce),
        );
        let headers = resp.headers_mut();
        if let Some(cookie) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
            headers.append(header::SET_COOKIE, cookie);
        }
        if waiting {
            headers.insert("refresh", HeaderValue::from_static("3"));
        }
        resp
    }
}

/// A payment state for people (English; the pages translate it).
pub(super) fn state_text(state: &str) -> &'static str {
    match state {
        "created" => "Waiting for payment",
        "pending" => "Payment pending",
        "confirmed" => "Paid",
        "canceled" => "Canceled",
        "failed" => "Failed",
        "refunded" => "Refunded",
        _ => "Unknown",
    }
}

/// The provider's name for people.
pub(super) fn provider_name(
    state: &AppState,
    ev: &crate::db::entities::event::Model,
    id: &str,
) -> String {
    state
        .plugins
        .payment_provider(ev, id)
        .map_or_else(|| id.to_owned(), |p| p.name().to_owned())
}

/// The page's content security policy: the pages' own, and with a provider's form, its
/// scripts (and this page's, by nonce), the origins it calls and frames, and posts back here.
fn policy(form: Option<&PaymentForm>, nonce: &str) -> String {
    let Some(form) = form else {
        return super::orders::ORDER_PAGE_POLICY.to_owned();
    };
    // Only origins safe to name in a policy: a stray character cannot widen it.
    let safe = |urls: &[String]| {
        urls.iter()
            .filter_map(|u| crate::domain::oauth::origin(u))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let origins = safe(&form.origins);
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: {origins}; \
         script-src 'nonce-{nonce}' {}; connect-src {origins}; frame-src {origins}; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        safe(&form.scripts)
    )
}

/// `site` with `POST /_{provider}/webhook` for each provider that takes notices from its
/// service (pretix's paths, such as `/_stripe/webhook/`).
pub fn notice_routes(
    mut site: super::pages::Site,
    extensions: &dyn Extensions,
) -> super::pages::Site {
    for provider in extensions.notice_takers() {
        let path = format!("/_{}/webhook", provider.identifier());
        let endpoint = poem::endpoint::make(move |req: Request| {
            let provider = provider.clone();
            async move {
                let Some(state) = req.data::<AppState>().cloned() else {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                };
                let (req, mut body) = req.split();
                match body.take().map(Body::into_bytes) {
                    Ok(read) => match read.await {
                        Ok(bytes) => notice(&state, &*provider, &req, &bytes).await,
                        Err(_) => {
                            (StatusCode::BAD_REQUEST, "The body could not be read.").into_response()
                        }
                    },
                    Err(_) => {
                        (StatusCode::BAD_REQUEST, "The body could not be read.").into_response()
                    }
                }
            }
        });
        site = site.at(&path, poem::post(endpoint));
    }
    site
}

/// A notice from a payment provider's service (`POST /_{provider}/webhook/`): the provider
/// names the payment and checks the notice, which is then acted on once. Anything it
/// cannot take is 400, and changes nothing.
async fn notice(
    state: &AppState,
    provider: &dyn PaymentProvider,
    req: &Request,
    body: &[u8],
) -> Response {
    let refused = |text: &str| (StatusCode::BAD_REQUEST, text.to_owned()).into_response();
    let Some(address) = provider.notice_payment(body) else {
        return refused("The notice names no payment of this service.");
    };
    let ev = match events::by_slugs(&state.db, &address.organizer, &address.event).await {
        Ok(Some(ev)) => ev,
        Ok(None) => return refused("Unknown payment."),
        Err(e) => return super::server_error(e),
    };
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_ascii_lowercase(), v.to_str().ok()?.to_owned())))
        .collect();
    let seller = state.seller(&address.organizer);
    match paying::take_notice(seller, &ev, provider, &address, &headers, body).await {
        Ok(Noticed::Applied(Paying::Paid)) => {
            state.mailer.wake();
            "Acted on.".into_response()
        }
        Ok(Noticed::Applied(_)) => "Acted on.".into_response(),
        Ok(Noticed::Repeated) => "Acted on before.".into_response(),
        Err(LifecycleError::Refused(text)) => refused(&text),
        Err(LifecycleError::NotFound | LifecycleError::Invalid(_)) => refused("Unknown payment."),
        Err(LifecycleError::Db(e)) => super::server_error(e),
    }
}
