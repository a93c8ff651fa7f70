//! The account page and its forms: who is signed in, the applications they authorized
//! (revoke one: `POST /account/authorized/{id}/revoke`) and their own applications
//! (register one: `POST /account/applications`; a new secret:
//! `POST /account/applications/{id}/secret`; delete one:
//! `POST /account/applications/{id}/delete`).
//!
//! Extension point: [`sections`] builds the list of [`Section`]s the page shows, in order
//! (`web::applications` builds today's). A section has a template registered in
//! `web::TEMPLATES`; the template sees it as `section` (its `data` as `section.data`), and
//! `csrf` (the session's token) and `user`. A section's forms post to handlers that read
//! them with [`posted_form`] (session and CSRF token checked) and answer with a 303 back to
//! `/account#<id>`, a page of their own, or the account page again with their section
//! replaced ([`show`]) to show an error.
//!
//! A client secret is shown once, on the page that answers the form which made it: never in
//! a URL or a redirect. Another user's authorization or application answers 404 and
//! changes nothing.

use minijinja::context;
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};

use super::applications::{self, Section};
use super::session;
use super::{PostedForm, field, redirect, render_status, server_error};
use crate::db::entities::{session as session_entity, user};
use crate::domain::oauth::{self, ApplicationError};
use crate::state::AppState;

/// The sections of the account page, in order.
pub async fn sections(
    state: &AppState,
    user: &user::Model,
    _session: &session_entity::Model,
) -> Result<Vec<Section>, sea_orm::DbErr> {
    let caller = crate::domain::users::caller(&state.db, user.id).await?;
    let mut sections = vec![
        super::profile::section(user, super::profile::Draft::default()),
        applications::authorized_section(&state.db, user.id).await?,
        applications::own_section(&state.db, user.id, &applications::Draft::default()).await?,
    ];
    let draft = super::team_tokens::Draft::default();
    sections.extend(super::team_tokens::section(&state.db, &caller, &draft).await?);
    Ok(sections)
}

/// The account page of the signed-in user; without a session, a 303 to the sign-in page.
#[handler]
pub async fn account_page(req: &Request, state: Data<&AppState>) -> Response {
    let Some((user, current)) = session::current_user(req, &state).await else {
        return redirect("/login?next=/account");
    };
    let changed = req.uri().query() == Some(super::profile::CHANGED_QUERY);
    let notice = changed.then(|| {
        let draft = super::profile::Draft {
            notice: Some(super::profile::CHANGED),
            ..Default::default()
        };
        super::profile::section(&user, draft)
    });
    show(&state, &user, &current, StatusCode::OK, notice).await
}

/// The account page with this status. `replace` takes the place of the section with its
/// id: a form shown again with its error and the values typed.
pub async fn show(
    state: &AppState,
    user: &user::Model,
    current: &session_entity::Model,
    status: StatusCode,
    replace: Option<Section>,
) -> Response {
    let mut sections = match sections(state, user, current).await {
        Ok(sections) => sections,
        Err(e) => return super::server_error(e),
    };
    if let Some(new) = replace
        && let Some(old) = sections.iter_mut().find(|s| s.id == new.id)
    {
        *old = new;
    }
    render_status(
        status,
        "account.html",
        context! {
            user => context! { email => user.email, fullname => user.fullname },
            csrf => current.csrf_token,
            sections,
        },
    )
}

/// Reads a form posted to an account page ([`super::signed_in_form`]); without a session
/// the answer is a 303 to the sign-in page, which leads back to the account page.
pub async fn posted_form(
    req: &Request,
    body: Body,
    state: &AppState,
) -> Result<PostedForm, Response> {
    super::signed_in_form(req, body, state, "/login?next=/account").await
}

/// [`posted_form`] for a form about one of the user's objects, with the object's ID from the
/// path; an ID that is no number is answered like an unknown one (404, naming `what`).
pub(super) async fn posted_about(
    req: &Request,
    id: &str,
    body: Body,
    state: &AppState,
    what: &str,
) -> Result<(PostedForm, i64), Response> {
    let form = posted_form(req, body, state).await?;
    let id = id
        .parse::<i64>()
        .map_err(|_| applications::not_found(what))?;
    Ok((form, id))
}

/// Revokes one of the user's authorizations: its tokens stop working at once and it leaves
/// the list. A 303 back to the section.
#[handler]
pub async fn revoke(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let (form, id) = match posted_about(req, &id, body, &state, "authorized application").await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    match oauth::revoke_authorization(&state.db, form.user.id, id).await {
        Ok(true) => redirect("/account#authorized"),
        Ok(false) => applications::not_found("authorized application"),
        Err(e) => server_error(e),
    }
}

/// Registers an application owned by the user and shows its client secret once; invalid
/// input shows the account page again (400) with the error and the values typed.
#[handler]
pub async fn register(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let form = match posted_form(req, body, &state).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let draft = applications::Draft {
        name: field(&form.fields, "name").unwrap_or_default(),
        redirect_uris: field(&form.fields, "redirect_uris").unwrap_or_default(),
        error: None,
    };
    let uris = oauth::redirect_uris_from_lines(&draft.redirect_uris);
    match oauth::create_application(&state.db, &draft.name, &uris, Some(form.user.id)).await {
        Ok((app, secret)) => {
            applications::secret_page("Application registered", &app, &secret, false)
        }
        Err(ApplicationError::Invalid(error)) => {
            let draft = applications::Draft {
                error: Some(error),
                ..draft
            };
            match applications::own_section(&state.db, form.user.id, &draft).await {
                Ok(section) => {
                    show(
                        &state,
                        &form.user,
                        &form.session,
                        StatusCode::BAD_REQUEST,
                        Some(section),
                    )
                    .await
                }
                Err(e) => server_error(e),
            }
        }
        Err(ApplicationError::Db(e)) => server_error(e),
    }
}

/// Gives one of the user's applications a new client secret, shown once; the old one stops
/// working at once.
#[handler]
pub async fn new_secret(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let (form, id) = match posted_about(req, &id, body, &state, "application").await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let app = match oauth::own_application(&state.db, form.user.id, id).await {
        Ok(Some(app)) => app,
        Ok(None) => return applications::not_found("application"),
        Err(e) => return server_error(e),
    };
    match oauth::regenerate_secret(&state.db, &app).await {
        Ok(secret) => applications::secret_page("New client secret", &app, &secret, true),
        Err(e) => server_error(e),
    }
}

/// Deletes one of the user's applications with every access granted to it. A 303 back to
/// the section.
#[handler]
pub async fn delete(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let (form, id) = match posted_about(req, &id, body, &state, "application").await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    match oauth::delete_application(&state.db, form.user.id, id).await {
        Ok(true) => redirect("/account#applications"),
        Ok(false) => applications::not_found("application"),
        Err(e) => server_error(e),
    }
}
