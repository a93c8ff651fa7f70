//! The authorization step of the OAuth provider, as a person sees it:
//! `GET /api/v1/oauth/authorize` checks the request, sends someone not signed in to the
//! sign-in page and back, and shows the consent page; `POST /api/v1/oauth/authorize` takes
//! the answer (`allow` with the chosen organizers, or `cancel`) and redirects to the client.
//!
//! The rules (which requests are refused how, when consent may be skipped, what a grant
//! holds) are `domain::oauth`'s; this module renders and redirects. The API layer
//! (`api::oauth`) routes and documents both operations.

use std::collections::BTreeMap;

use minijinja::context;
use poem::http::{StatusCode, header};
use poem::{Request, Response};
use serde::Serialize;

use super::session::{self, CSRF_FIELD};
use super::{field, page_with_policy, render_with_policy};
use crate::db::entities::{session as session_entity, user};
use crate::domain::oauth::{self, AuthorizeParams, AuthorizeRefusal, AuthorizeRequest};
use crate::domain::users;
use crate::state::AppState;

/// The path of the authorization endpoint.
pub const AUTHORIZE_PATH: &str = "/api/v1/oauth/authorize";

/// The parameters of an authorization request read from form or query pairs.
pub fn params_of(pairs: &[(String, String)]) -> AuthorizeParams {
    let get = |name: &str| field(pairs, name).filter(|v| !v.is_empty());
    AuthorizeParams {
        client_id: get("client_id"),
        response_type: get("response_type"),
        scope: get("scope"),
        redirect_uri: get("redirect_uri"),
        state: get("state"),
        approval_prompt: get("approval_prompt"),
        code_challenge: get("code_challenge"),
        code_challenge_method: get("code_challenge_method"),
    }
}

/// The content security policy of a page whose form may lead to `origin` (the consent page
/// redirects there after its form is posted, and browsers apply `form-action` to that
/// redirect too).
pub fn policy_allowing(origin: Option<&str>) -> String {
    match origin {
        Some(origin) => super::CONTENT_SECURITY_POLICY.replace(
            "form-action 'self'",
            &format!("form-action 'self' {origin}"),
        ),
        None => super::CONTENT_SECURITY_POLICY.to_owned(),
    }
}

/// The client origin a sign-in form may end up at when `next` is an authorization request
/// (after signing in, the browser follows `next`, which may redirect to the client at once).
pub async fn origin_after_sign_in(state: &AppState, next: &str) -> Option<String> {
    let query = next.strip_prefix(AUTHORIZE_PATH)?.strip_prefix('?')?;
    let params = params_of(&super::parse_form(query.as_bytes()));
    let request = oauth::check_authorize(&state.db, &params)
        .await
        .ok()?
        .ok()?;
    oauth::origin(&request.redirect_uri).map(str::to_owned)
}

/// `GET /api/v1/oauth/authorize`: the consent page, or a redirect (to sign in, or, when
/// consent may be skipped, to the client with a code), or a 400 page for an invalid request
/// (never a redirect: see [`AuthorizeRefusal`]).
pub async fn authorize_page(req: &Request, state: &AppState, params: AuthorizeParams) -> Response {
    let request = match oauth::check_authorize(&state.db, &params).await {
        Ok(Ok(request)) => request,
        Ok(Err(refusal)) => return refused(refusal),
        Err(e) => return super::server_error(e),
    };
    let Some((user, current)) = session::current_user(req, state).await else {
        return super::redirect(&sign_in_url(req));
    };
    match oauth::may_skip_consent(&state.db, &request, user.id).await {
        Ok(true) => grant(state, &request, user.id, &[]).await,
        Ok(false) => consent(state, &request, &user, &current, StatusCode::OK, None).await,
        Err(e) => super::server_error(e),
    }
}

/// `POST /api/v1/oauth/authorize`: the consent form's answer. `cancel` redirects with
/// `error=access_denied`; `allow` records the grant with the chosen organizers (at least
/// one of those the user may grant, unless only `profile` is asked) and redirects with a
/// code. The form needs the session's CSRF token.
pub async fn authorize_answer(
    req: &Request,
    state: &AppState,
    form: &[(String, String)],
) -> Response {
    let Some((user, current)) = session::current_user(req, state).await else {
        return super::csrf_failed();
    };
    if !session::check_csrf(field(form, CSRF_FIELD).as_deref(), &current) {
        return super::csrf_failed();
    }
    let request = match oauth::check_authorize(&state.db, &params_of(form)).await {
        Ok(Ok(request)) => request,
        Ok(Err(refusal)) => return refused(refusal),
        Err(e) => return super::server_error(e),
    };
    if field(form, "allow").is_none() {
        return found(&request.answer(&[("error", "access_denied")]));
    }
    let chosen: Vec<i64> = form
        .iter()
        .filter(|(name, _)| name == "organizers")
        .filter_map(|(_, value)| value.parse().ok())
        .collect();
    let grantable = match grantable(state, user.id).await {
        Ok(grantable) => grantable,
        Err(e) => return super::server_error(e),
    };
    let needs_organizers = request.scope.read || request.scope.write;
    let valid = chosen.iter().all(|id| grantable.contains_key(id));
    if needs_organizers && (chosen.is_empty() || !valid) {
        let error = "Choose at least one of the organizers listed.";
        return consent(
            state,
            &request,
            &user,
            &current,
            StatusCode::BAD_REQUEST,
            Some(error),
        )
        .await;
    }
    let organizers = if needs_organizers { chosen } else { Vec::new() };
    grant(state, &request, user.id, &organizers).await
}

/// The answer to a refused request: a 400 page.
fn refused(refusal: AuthorizeRefusal) -> Response {
    super::message(StatusCode::BAD_REQUEST, "Authorization failed", refusal.0)
}

/// Records the grant and redirects to the client with a new code.
async fn grant(
    state: &AppState,
    request: &AuthorizeRequest,
    user_id: i64,
    organizers: &[i64],
) -> Response {
    let issued = oauth::authorize(
        &state.db,
        &request.app,
        user_id,
        &request.scope.to_string(),
        organizers,
        &request.redirect_uri,
        request.code_challenge.as_deref(),
    )
    .await;
    match issued {
        Ok(code) => found(&request.answer(&[("code", &code)])),
        Err(oauth::OAuthError::Db(e)) => super::server_error(e),
        Err(_) => refused(AuthorizeRefusal("The authorization request is not valid.")),
    }
}

/// One organizer on the consent page.
#[derive(Debug, Clone, Serialize)]
struct Grantable {
    id: i64,
    slug: String,
    name: String,
}

/// The organizers a user may grant: those of their teams, by ID.
async fn grantable(
    state: &AppState,
    user_id: i64,
) -> Result<BTreeMap<i64, Grantable>, sea_orm::DbErr> {
    Ok(users::organizers_of(&state.db, user_id)
        .await?
        .into_iter()
        .map(|g| {
            let o = g.organizer;
            (
                o.id,
                Grantable {
                    id: o.id,
                    slug: o.slug,
                    name: o.name,
                },
            )
        })
        .collect())
}

/// The consent page for `request`.
async fn consent(
    state: &AppState,
    request: &AuthorizeRequest,
    user: &user::Model,
    current: &session_entity::Model,
    status: StatusCode,
    error: Option<&str>,
) -> Response {
    let organizers = if request.scope.read || request.scope.write {
        match grantable(state, user.id).await {
            Ok(found) => found.into_values().collect(),
            Err(e) => return super::server_error(e),
        }
    } else {
        Vec::new()
    };
    let scope = request.scope;
    let scopes = scope.describe();
    let policy = policy_allowing(oauth::origin(&request.redirect_uri));
    render_with_policy(
        status,
        "oauth_authorize.html",
        context! {
            application => request.app.name,
            redirect_uri => request.redirect_uri,
            scope => scope.to_string(),
            scopes,
            needs_organizers => scope.read || scope.write,
            organizers,
            client_id => request.app.client_id,
            state => request.state,
            code_challenge => request.code_challenge,
            user => context! { email => user.email },
            csrf => current.csrf_token,
            error,
        },
        &policy,
    )
}

/// The sign-in page, coming back to this request afterwards.
fn sign_in_url(req: &Request) -> String {
    let here = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or(AUTHORIZE_PATH);
    let next: String = form_urlencoded::byte_serialize(here.as_bytes()).collect();
    format!("/login?next={next}")
}

/// A `302 Found` to the client (RFC 6749's answer to an authorization request).
fn found(location: &str) -> Response {
    page_with_policy(
        Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, location)
            .finish(),
        super::CONTENT_SECURITY_POLICY,
    )
}
