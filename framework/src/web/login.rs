//! Signing in and out: `GET /login`, `POST /login`, `POST /logout`.

use minijinja::context;
use poem::http::StatusCode;
use poem::web::Data;
use poem::{Body, Request, Response, handler};

use super::session;
use super::{FormToken, field, oauth, parse_form, read_form, redirect, render_with_policy};
use crate::domain::users::SignIn;
use crate::domain::{sessions, users};
use crate::http::limits;
use crate::state::AppState;

/// Where a signed-in person goes when `next` is missing or not a local path.
pub const DEFAULT_NEXT: &str = "/account";

/// The answer to a wrong email or a wrong password: the same for both.
pub const WRONG_CREDENTIALS: &str = "Email or password is wrong.";
/// The answer while a key is locked: the same whether or not the email exists.
pub const LOCKED: &str = "Too many failed sign-in attempts. Try again in 15 minutes.";
/// The answer when too many passwords are being checked at once.
pub const BUSY: &str = "Too many sign-ins at once. Try again in a moment.";

fn next_of(pairs: &[(String, String)]) -> String {
    field(pairs, "next")
        .filter(|n| super::is_local_path(n))
        .unwrap_or_else(|| DEFAULT_NEXT.to_owned())
}

/// The sign-in form, with the error and email of a failed attempt. When `next` is an OAuth
/// authorization request, the form may lead on to that client (see
/// [`oauth::origin_after_sign_in`]).
async fn form(
    req: &Request,
    state: &AppState,
    status: StatusCode,
    next: &str,
    email: &str,
    error: Option<&str>,
    notice: Option<&str>,
) -> Response {
    let (csrf, set_cookie) = session::login_csrf(req, state);
    let client = oauth::origin_after_sign_in(state, next).await;
    let resp = render_with_policy(
        status,
        "login.html",
        context! { csrf, next, email, error, notice },
        &oauth::policy_allowing(client.as_deref()),
    );
    match set_cookie {
        Some(c) => session::set_cookie(resp, &c),
        None => resp,
    }
}

/// The sign-in page; someone already signed in goes on to `next`.
#[handler]
pub async fn login_page(req: &Request, state: Data<&AppState>) -> Response {
    let query = parse_form(req.uri().query().unwrap_or_default().as_bytes());
    let next = next_of(&query);
    if session::current_user(req, &state).await.is_some() {
        return redirect(&next);
    }
    let reset = field(&query, "reset").is_some_and(|v| v == "done");
    let notice = reset.then_some("Your new password is set. Sign in with it.");
    form(req, &state, StatusCode::OK, &next, "", None, notice).await
}

/// Signs in with email and password: a new session and a 303 to `next` (a local path) or
/// the account page. Attempts are counted per email and per client address before the
/// password is checked; past the limits they wait, then are refused with 429; while too many
/// passwords are being checked the answer is 503 with `Retry-After`.
#[handler]
pub async fn login(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let pairs = match read_form(req, body, FormToken::SignIn).await {
        Ok(pairs) => pairs,
        Err(answer) => return answer,
    };
    let next = next_of(&pairs);
    let email = users::normalize_email(&field(&pairs, "email").unwrap_or_default());
    let password = field(&pairs, "password").unwrap_or_default();
    let email_shown: String = email.chars().take(users::MAX_EMAIL_LEN).collect();
    let address = limits::client_address(req, &state.config.trusted_proxies)
        .map(|a| limits::address_key(Some(a)));
    let refused = |status, error| form(req, &state, status, &next, &email_shown, Some(error), None);
    match users::sign_in(
        &state.db,
        &state.password_checks,
        &email,
        address.as_deref(),
        &password,
    )
    .await
    {
        Ok(SignIn::SignedIn(user_id)) => start_session(req, &state, user_id, &next).await,
        Ok(SignIn::Wrong) => refused(StatusCode::OK, WRONG_CREDENTIALS).await,
        Ok(SignIn::Locked) => refused(StatusCode::TOO_MANY_REQUESTS, LOCKED).await,
        Ok(SignIn::Busy) => {
            let mut resp = refused(StatusCode::SERVICE_UNAVAILABLE, BUSY).await;
            resp.headers_mut().insert(
                poem::http::header::RETRY_AFTER,
                "5".parse().expect("a header"),
            );
            resp
        }
        Err(e) => super::server_error(e),
    }
}

/// Ends any session the browser had (no fixation), starts a new one, and goes on to `next`.
pub(super) async fn start_session(
    req: &Request,
    state: &AppState,
    user_id: i64,
    next: &str,
) -> Response {
    if let Some((_, old)) = session::current_user(req, state).await
        && let Err(e) = sessions::delete(&state.db, old.id).await
    {
        return super::server_error(e);
    }
    match sessions::create(&state.db, user_id).await {
        Ok((_, key)) => session::set_cookie(redirect(next), &session::session_cookie(state, &key)),
        Err(e) => super::server_error(e),
    }
}

/// Signs out: ends the session (the form's CSRF token must be the session's), removes the
/// cookie and goes to the sign-in page.
#[handler]
pub async fn logout(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let Some((_, current)) = session::current_user(req, &state).await else {
        return session::set_cookie(redirect("/login"), &session::clear_session_cookie(&state));
    };
    if let Err(answer) = read_form(req, body, FormToken::Session(&current)).await {
        return answer;
    }
    if let Err(e) = sessions::delete(&state.db, current.id).await {
        return super::server_error(e);
    }
    session::set_cookie(redirect("/login"), &session::clear_session_cookie(&state))
}
