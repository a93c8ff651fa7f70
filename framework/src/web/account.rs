//! The account page: who is signed in, and sections other modules add (authorized
//! applications, the user's own OAuth applications).
//!
//! Extension point: [`sections`] builds the list of [`Section`]s the page shows, in order.
//! A module adds a section by returning one from its own function (called there) and a
//! template registered in `web::TEMPLATES`; the template sees the section as `section`
//! (its `data` as `section.data`), and `csrf` (the session's token) and `user`.

use minijinja::{Value, context};
use poem::web::Data;
use poem::{Request, Response, handler};
use serde::Serialize;

use super::session;
use super::{redirect, render};
use crate::db::entities::{session as session_entity, user};
use crate::state::AppState;

/// One section of the account page.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// HTML id of the section (for links such as `/account#applications`).
    pub id: &'static str,
    /// Heading.
    pub title: &'static str,
    /// Template rendering the section's body (registered in `web::TEMPLATES`).
    pub template: &'static str,
    /// What the template shows, as `section.data`.
    pub data: Value,
}

/// The sections of the account page, in order.
pub async fn sections(
    _state: &AppState,
    _user: &user::Model,
    _session: &session_entity::Model,
) -> Result<Vec<Section>, sea_orm::DbErr> {
    Ok(vec![
        Section {
            id: "authorized",
            title: "Authorized applications",
            template: "account_authorized.html",
            data: context! { applications => Vec::<Value>::new() },
        },
        Section {
            id: "applications",
            title: "Your applications",
            template: "account_applications.html",
            data: context! { applications => Vec::<Value>::new() },
        },
    ])
}

/// The account page of the signed-in user; without a session, a 303 to the sign-in page.
#[handler]
pub async fn account_page(req: &Request, state: Data<&AppState>) -> Response {
    let Some((user, current)) = session::current_user(req, &state).await else {
        return redirect("/login?next=/account");
    };
    let sections = match sections(&state, &user, &current).await {
        Ok(sections) => sections,
        Err(e) => return super::server_error(e),
    };
    render(
        "account.html",
        context! {
            user => context! { email => user.email, fullname => user.fullname },
            csrf => current.csrf_token,
            sections,
        },
    )
}
