//! A forgotten password: `GET /password/reset` asks for the account's email, `POST` mails a
//! link (the same answer whether or not there is an account); `GET /password/reset/{token}`
//! asks for the new password, `POST` sets it and leads to the sign-in page. The forms carry
//! the sign-in form's CSRF token; the token in the path is redacted in logs.

use minijinja::context;
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};

use super::session;
use super::{FormToken, field, read_form, redirect, render_status, server_error};
use crate::domain::password_resets::{self, ResetError};
use crate::domain::users;
use crate::state::AppState;

/// Reset requests worked on at once, after their answers; more are answered and dropped.
const AT_ONCE: usize = 32;

static REQUESTS: std::sync::LazyLock<std::sync::Arc<tokio::sync::Semaphore>> =
    std::sync::LazyLock::new(|| std::sync::Arc::new(tokio::sync::Semaphore::new(AT_ONCE)));

/// Where a person goes once the new password is set.
pub const DONE: &str = "/login?reset=done";

/// The page in one of its three states, with the sign-in form's CSRF token.
fn page(req: &Request, state: &AppState, status: StatusCode, values: minijinja::Value) -> Response {
    let (csrf, set_cookie) = session::login_csrf(req, state);
    let resp = render_status(
        status,
        "password_reset.html",
        context! { csrf, min_length => users::MIN_PASSWORD_LEN, ..values },
    );
    match set_cookie {
        Some(c) => session::set_cookie(resp, &c),
        None => resp,
    }
}

/// The form asking for the account's email.
#[handler]
pub async fn request_page(req: &Request, state: Data<&AppState>) -> Response {
    page(req, &state, StatusCode::OK, context! { email => "" })
}

/// Mails a link when the address has an account (and was not sent too many lately), and
/// says the same in every case.
#[handler]
pub async fn request(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let fields = match read_form(req, body, FormToken::SignIn).await {
        Ok(fields) => fields,
        Err(answer) => return answer,
    };
    let email = users::normalize_email(&field(&fields, "email").unwrap_or_default());
    if !users::is_valid_email(&email) || email.chars().count() > users::MAX_EMAIL_LEN {
        let error = "Enter a valid email address.";
        return page(
            req,
            &state,
            StatusCode::BAD_REQUEST,
            context! { email, error },
        );
    }
    // Answered before the work is done, so that a known address takes no longer than an
    // unknown one; at most [`AT_ONCE`] requests are worked on, the others answered alike.
    match REQUESTS.clone().try_acquire_owned() {
        Ok(permit) => {
            let (db, mailer, url, to) = (
                state.db.clone(),
                state.mailer.clone(),
                state.public_url.clone(),
                email.clone(),
            );
            tokio::spawn(async move {
                match password_resets::request(&db, &to, &url).await {
                    Ok(true) => mailer.wake(),
                    Ok(false) => {}
                    Err(error) => tracing::error!(%error, "password reset link not sent"),
                }
                drop(permit);
            });
        }
        Err(_) => tracing::warn!("too many password reset requests at once: one not worked on"),
    }
    page(
        req,
        &state,
        StatusCode::OK,
        context! { email, sent => true },
    )
}

fn not_open() -> Response {
    super::message(
        StatusCode::NOT_FOUND,
        "Link not valid",
        "This link is not valid (any more): it works once, within an hour. Ask for a new one on the sign-in page.",
    )
}

/// The form for the new password, while the link is open.
#[handler]
pub async fn reset_page(
    req: &Request,
    Path(token): Path<String>,
    state: Data<&AppState>,
) -> Response {
    match password_resets::is_open(&state.db, &token).await {
        Ok(true) => page(req, &state, StatusCode::OK, context! { token }),
        Ok(false) => not_open(),
        Err(e) => server_error(e),
    }
}

/// Sets the new password (given twice) and uses the link up; then to the sign-in page.
#[handler]
pub async fn reset(
    req: &Request,
    Path(token): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let fields = match read_form(req, body, FormToken::SignIn).await {
        Ok(fields) => fields,
        Err(answer) => return answer,
    };
    let new = field(&fields, "new").unwrap_or_default();
    if new != field(&fields, "repeat").unwrap_or_default() {
        let error = "The two passwords differ.";
        return page(
            req,
            &state,
            StatusCode::BAD_REQUEST,
            context! { token, error },
        );
    }
    match password_resets::complete(&state.db, &state.password_checks, &token, new).await {
        Ok(_) => redirect(DONE),
        Err(ResetError::NotOpen) => not_open(),
        Err(ResetError::Invalid(_)) => {
            let error = super::PASSWORD_LENGTH;
            page(
                req,
                &state,
                StatusCode::BAD_REQUEST,
                context! { token, error },
            )
        }
        Err(ResetError::Busy) => {
            let error = super::login::BUSY;
            let mut resp = page(
                req,
                &state,
                StatusCode::SERVICE_UNAVAILABLE,
                context! { token, error },
            );
            resp.headers_mut().insert(
                poem::http::header::RETRY_AFTER,
                poem::http::HeaderValue::from_static("5"),
            );
            resp
        }
        Err(ResetError::Db(e)) => server_error(e),
    }
}
