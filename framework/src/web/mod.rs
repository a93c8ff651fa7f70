//! Pages a person uses in a browser: sign-in, sign-out and the account page (and, from
//! `oauth`, the consent page; from `applications`, the account page's OAuth sections).
//! Sessions and CSRF tokens are kept in the database (`domain::sessions`); templates are
//! compiled into the binary and rendered with autoescaping.
//!
//! Every response goes through [`page`] / [`render`], which add the protective headers of
//! [`page_with_policy`] with [`CONTENT_SECURITY_POLICY`]; `orders` (an order's pages,
//! reached through its secret link) uses a stricter policy of its own.

pub mod account;
pub mod applications;
pub mod invites;
pub mod login;
pub mod oauth;
pub mod orders;
pub mod pages;
pub mod password_reset;
pub mod payment;
pub mod profile;
pub mod self_service;
pub mod session;
pub mod talk_tokens;
pub mod team_tokens;

use std::sync::LazyLock;

use minijinja::Environment;
use poem::http::{HeaderValue, StatusCode, header};
use poem::web::Html;
use poem::{IntoResponse, Response};

/// The policy of these pages: like [`orders::CONTENT_SECURITY_POLICY`], but inline
/// styles are allowed (the layout's stylesheet) and forms may post to this site only.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The answer to a new password of the wrong length.
pub const PASSWORD_LENGTH: &str = "The new password must have between 8 and 1024 characters.";

/// Templates by name, compiled in. A name ending in `.html` is autoescaped. To add a page,
/// add its file under `web/templates/` and a line here.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("message.html", include_str!("templates/message.html")),
    ("login.html", include_str!("templates/login.html")),
    ("account.html", include_str!("templates/account.html")),
    (
        "oauth_authorize.html",
        include_str!("templates/oauth_authorize.html"),
    ),
    (
        "account_profile.html",
        include_str!("templates/account_profile.html"),
    ),
    (
        "account_authorized.html",
        include_str!("templates/account_authorized.html"),
    ),
    (
        "account_applications.html",
        include_str!("templates/account_applications.html"),
    ),
    (
        "account_secret.html",
        include_str!("templates/account_secret.html"),
    ),
    (
        "account_team_tokens.html",
        include_str!("templates/account_team_tokens.html"),
    ),
    (
        "account_team_token.html",
        include_str!("templates/account_team_token.html"),
    ),
    ("orga_me.html", include_str!("templates/orga_me.html")),
    ("order.html", include_str!("templates/order.html")),
    ("payment.html", include_str!("templates/payment.html")),
    (
        "order_cancel.html",
        include_str!("templates/order_cancel.html"),
    ),
    ("resend.html", include_str!("templates/resend.html")),
    ("invite.html", include_str!("templates/invite.html")),
    (
        "password_reset.html",
        include_str!("templates/password_reset.html"),
    ),
];

static TEMPLATE_ENV: LazyLock<Environment<'static>> = LazyLock::new(|| environment(&[]));

/// The core's templates and `extra` ones (extensions' pages), with the `_` function.
fn environment(extra: &[(&'static str, &'static str)]) -> Environment<'static> {
    let mut env = Environment::new();
    env.add_function("_", translated);
    for (name, source) in TEMPLATES.iter().chain(extra) {
        if let Err(error) = env.add_template(name, source) {
            tracing::error!(%error, name, "template does not compile");
        }
    }
    env
}

/// The templates' `_("text", name=value)`: the service's text in the page's language (the
/// context's `lang`), its `{name}` placeholders filled (and escaped as any value).
fn translated(
    state: &minijinja::State,
    text: String,
    values: minijinja::value::Kwargs,
) -> Result<String, minijinja::Error> {
    let lang = state
        .lookup("lang")
        .and_then(|l| l.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut named = Vec::new();
    for name in values.args() {
        named.push((name, values.get::<minijinja::Value>(name)?.to_string()));
    }
    let named: Vec<(&str, &str)> = named.iter().map(|(n, v)| (*n, v.as_str())).collect();
    Ok(crate::values::texts::fill(
        crate::values::texts::translate(&lang, &text),
        &named,
    ))
}

/// The layout's colours for an event's pages: its `primary_color`, and [`on_brand`] text.
pub fn brand_colours(values: &crate::domain::cache::EventSettings) -> minijinja::Value {
    let brand = crate::domain::settings::brand(values);
    minijinja::context! { brand, on_brand => on_brand(brand) }
}

/// The colour of text on a `#rrggbb` colour: white or near-black, whichever reads better
/// (by the colour's luminance).
pub fn on_brand(brand: &str) -> &'static str {
    let channel = |i: usize| {
        let c = f64::from(
            brand
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .unwrap_or(0),
        ) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    if luminance > 0.179 { "#1d1d1f" } else { "#fff" }
}

/// Renders a template with `context` (build it with `minijinja::context!`) to HTML.
pub fn render_html(template: &str, context: minijinja::Value) -> Result<String, minijinja::Error> {
    TEMPLATE_ENV
        .get_template(template)
        .and_then(|t| t.render(context))
}

/// A page: the rendered template with status 200 and the pages' protective headers (a
/// template error is logged and gives a 500 page).
pub fn render(template: &str, context: minijinja::Value) -> Response {
    render_status(StatusCode::OK, template, context)
}

/// [`render`] with another status.
pub fn render_status(status: StatusCode, template: &str, context: minijinja::Value) -> Response {
    render_with_policy(status, template, context, CONTENT_SECURITY_POLICY)
}

/// [`render_status`] with another content security policy.
pub fn render_with_policy(
    status: StatusCode,
    template: &str,
    context: minijinja::Value,
    policy: &str,
) -> Response {
    match render_html(template, context) {
        Ok(html) => page_with_policy((status, Html(html)).into_response(), policy),
        Err(error) => {
            tracing::error!(%error, template, "template failed");
            message(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Error",
                "Something went wrong on our side. Try again later.",
            )
        }
    }
}

/// Adds the pages' protective headers to a response.
pub fn page(resp: Response) -> Response {
    page_with_policy(resp, CONTENT_SECURITY_POLICY)
}

/// [`page`] with another content security policy. Whatever the status, the page stays out
/// of caches (`no-store`), its URL out of the `Referer` of links followed from it
/// (`no-referrer`), and it cannot be framed by another site or read as another type.
pub fn page_with_policy(mut resp: Response, policy: &str) -> Response {
    let headers = resp.headers_mut();
    for (name, value) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    let policy = HeaderValue::from_str(policy)
        .unwrap_or(HeaderValue::from_static(orders::CONTENT_SECURITY_POLICY));
    headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    resp
}

/// A short page with a title and one message (errors, refusals).
pub fn message(status: StatusCode, title: &str, text: &str) -> Response {
    message_in(status, "en", title, text)
}

/// [`message`] in a language: the title and text are the service's (translated).
pub fn message_in(status: StatusCode, lang: &str, title: &str, text: &str) -> Response {
    let (title, text) = (
        crate::values::texts::translate(lang, title),
        crate::values::texts::translate(lang, text),
    );
    let html = TEMPLATE_ENV
        .get_template("message.html")
        .and_then(|t| t.render(minijinja::context! { lang, title, text }))
        .unwrap_or_else(|_| "<!doctype html><title>Error</title><p>Error.</p>".to_owned());
    page((status, Html(html)).into_response())
}

/// The 403 page of a form posted without its CSRF token, or with a wrong one.
pub fn csrf_failed() -> Response {
    message(
        StatusCode::FORBIDDEN,
        "Forbidden",
        "The form has expired or did not come from this site. Go back, reload the page and try again.",
    )
}

/// The error page of a failed database call.
pub fn server_error(error: sea_orm::DbErr) -> Response {
    tracing::error!(%error, "page failed");
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Error",
        "Something went wrong on our side. Try again later.",
    )
}

/// A `303 See Other` to `location` (a local path or an absolute URL), with the pages'
/// headers.
pub fn redirect(location: &str) -> Response {
    page(
        Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(header::LOCATION, location)
            .finish(),
    )
}

/// Whether `next` is a path on this site that is safe to redirect to after sign-in: it
/// starts with a single `/` (not `//`, which is another host), and holds no backslash (read
/// as `/` by browsers), no control characters and no scheme.
pub fn is_local_path(next: &str) -> bool {
    next.starts_with('/')
        && !next.starts_with("//")
        && next.len() <= 2000
        && !next.contains('\\')
        && !next.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The value of a query or form field in `pairs` (`application/x-www-form-urlencoded`).
pub fn field(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// Most fields a form or query string is read with (the consent form has one per
/// organizer); fields past it are left out.
pub const MAX_FORM_FIELDS: usize = 1_000;

/// Whose CSRF token a posted form must carry.
pub enum FormToken<'a> {
    /// The signed-in session's token.
    Session(&'a crate::db::entities::session::Model),
    /// The sign-in forms' double-submit token (no session yet): the `tessera_csrf` cookie.
    SignIn,
}

/// Reads a posted form and checks its CSRF token. `Err` is the answer to give instead: a
/// 400 page for an unreadable body, the 403 page for a missing or wrong token.
pub async fn read_form(
    req: &poem::Request,
    body: poem::Body,
    token: FormToken<'_>,
) -> Result<Vec<(String, String)>, Response> {
    let Ok(bytes) = body.into_bytes().await else {
        return Err(message(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "The form could not be read.",
        ));
    };
    let fields = parse_form(&bytes);
    let posted = field(&fields, session::CSRF_FIELD);
    let valid = match token {
        FormToken::Session(current) => session::check_csrf(posted.as_deref(), current),
        FormToken::SignIn => session::check_login_csrf(req, posted.as_deref()),
    };
    if valid {
        Ok(fields)
    } else {
        Err(csrf_failed())
    }
}

/// A form posted by the signed-in user, its CSRF token checked.
pub struct PostedForm {
    /// The signed-in user.
    pub user: crate::db::entities::user::Model,
    /// Their session.
    pub session: crate::db::entities::session::Model,
    /// The form's fields.
    pub fields: Vec<(String, String)>,
}

/// Reads a form the signed-in user posted ([`read_form`] with the session's token).
/// Without a session the answer is a 303 to `sign_in`.
pub async fn signed_in_form(
    req: &poem::Request,
    body: poem::Body,
    state: &crate::state::AppState,
    sign_in: &str,
) -> Result<PostedForm, Response> {
    let Some((user, session)) = session::current_user(req, state).await else {
        return Err(redirect(sign_in));
    };
    let fields = read_form(req, body, FormToken::Session(&session)).await?;
    Ok(PostedForm {
        user,
        session,
        fields,
    })
}

/// Parses an `application/x-www-form-urlencoded` body or query string, up to
/// [`MAX_FORM_FIELDS`] fields.
pub fn parse_form(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes)
        .take(MAX_FORM_FIELDS)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_local_path;

    #[test]
    fn only_paths_on_this_site_are_local() {
        for good in ["/account", "/", "/a/b?c=d"] {
            assert!(is_local_path(good), "{good}");
        }
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil.example",
            "evil",
            "",
            "/a\nb",
            "javascript:alert(1)",
        ] {
            assert!(!is_local_path(bad), "{bad}");
        }
    }

    #[test]
    fn every_text_the_templates_translate_is_in_every_catalog() {
        use crate::values::texts::{translate, untranslated};
        for (name, source) in super::TEMPLATES {
            assert_eq!(untranslated(source), [], "{name}");
        }
        for state in crate::domain::orders::paying::STATES {
            let text = super::payment::state_text(state);
            assert_ne!(translate("de", text), text, "{text}");
        }
    }

    #[test]
    fn a_page_speaks_the_language_of_its_context() {
        let html = super::render_html(
            "payment.html",
            minijinja::context! { lang => "de", code => "AB<C", state => "Paid", back => "/" },
        )
        .expect("renders");
        assert!(html.contains(r#"<html lang="de">"#), "{html}");
        assert!(html.contains("Zahlung für Bestellung AB&lt;C"), "{html}");
        assert!(html.contains("Bezahlt"), "{html}");
    }

    #[test]
    fn every_template_compiles() {
        for (name, _) in super::TEMPLATES {
            assert!(super::TEMPLATE_ENV.get_template(name).is_ok(), "{name}");
        }
    }
}
