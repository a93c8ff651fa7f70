//! The session cookie, the signed-in user, and CSRF tokens.
//!
//! A signed-in browser carries `tessera_session` (HttpOnly, SameSite=Lax, Path=/, Secure
//! when the public URL is https); every form carries a hidden `csrfmiddlewaretoken` field,
//! checked against the session's token with [`check_csrf`]. The sign-in form has no session
//! yet: it uses a double-submit token, a `tessera_csrf` cookie that must equal the form's
//! field ([`login_csrf`], [`check_login_csrf`]).

use poem::http::header;
use poem::{Request, Response};
use subtle::ConstantTimeEq;

use crate::db::entities::{session, user};
use crate::domain::{sessions, tokens, users};
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "tessera_session";
/// The sign-in form's double-submit CSRF cookie.
pub const CSRF_COOKIE: &str = "tessera_csrf";
/// The form field carrying the CSRF token (Django's name, as pretix's forms).
pub const CSRF_FIELD: &str = "csrfmiddlewaretoken";

/// The value of a cookie sent with the request.
pub fn cookie(req: &Request, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_owned())
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, Secure when the public URL is https;
/// `max_age` in seconds (0 deletes the cookie).
pub fn cookie_header(state: &AppState, name: &str, value: &str, max_age: i64) -> String {
    let secure = if state.public_url.starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
}

/// Adds a `Set-Cookie` header to a response.
pub fn set_cookie(mut resp: Response, cookie: &str) -> Response {
    if let Ok(value) = header::HeaderValue::from_str(cookie) {
        resp.headers_mut().append(header::SET_COOKIE, value);
    }
    resp
}

/// The `Set-Cookie` value that starts a session with this key.
pub fn session_cookie(state: &AppState, key: &str) -> String {
    cookie_header(state, SESSION_COOKIE, key, sessions::LIFETIME.num_seconds())
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(state: &AppState) -> String {
    cookie_header(state, SESSION_COOKIE, "", 0)
}

/// The signed-in user and their session, from the request's session cookie; `None` without
/// a cookie, for an unknown or expired session, or an inactive user. A database failure is
/// logged and counts as not signed in.
pub async fn current_user(
    req: &Request,
    state: &AppState,
) -> Option<(user::Model, session::Model)> {
    let key = cookie(req, SESSION_COOKIE)?;
    let found = async {
        let Some(s) = sessions::find(&state.db, &key).await? else {
            return Ok(None);
        };
        Ok::<_, sea_orm::DbErr>(
            users::find_active(&state.db, s.user_id)
                .await?
                .map(|u| (u, s)),
        )
    }
    .await;
    found.unwrap_or_else(|error| {
        tracing::error!(%error, "session lookup failed");
        None
    })
}

/// Whether a posted form's CSRF token is the session's (constant-time comparison).
pub fn check_csrf(form_token: Option<&str>, session: &session::Model) -> bool {
    equal(form_token.unwrap_or_default(), &session.csrf_token)
}

fn equal(a: &str, b: &str) -> bool {
    !a.is_empty() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The sign-in form's CSRF token: the request's `tessera_csrf` cookie when it has a
/// plausible one, else a new one. The second value is the `Set-Cookie` to send with the form
/// when the token is new.
pub fn login_csrf(req: &Request, state: &AppState) -> (String, Option<String>) {
    match cookie(req, CSRF_COOKIE)
        .filter(|t| t.len() == 64 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        Some(token) => (token, None),
        None => {
            let token = tokens::generate();
            let set = cookie_header(state, CSRF_COOKIE, &token, 60 * 60 * 24 * 365);
            (token, Some(set))
        }
    }
}

/// Whether a posted sign-in form's CSRF field equals the request's `tessera_csrf` cookie.
pub fn check_login_csrf(req: &Request, form_token: Option<&str>) -> bool {
    cookie(req, CSRF_COOKIE).is_some_and(|c| equal(form_token.unwrap_or_default(), &c))
}
