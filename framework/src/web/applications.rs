//! The account page's sections and what they show: the applications the signed-in user
//! authorized, the user's own applications with the form registering one, and the page
//! showing a client secret once. The forms' handlers are in `web::account`; the rules and
//! queries in `domain::oauth`.

use chrono::{DateTime, Utc};
use minijinja::{Value, context};
use poem::Response;
use poem::http::StatusCode;
use serde::Serialize;

use super::{message, render};
use crate::db::entities::oauth_application;
use crate::domain::oauth;

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

/// An authorization as its template shows it.
#[derive(Serialize)]
struct AuthorizedView {
    id: i64,
    application: String,
    active: bool,
    access: Vec<&'static str>,
    organizers: Vec<String>,
    created: String,
    created_iso: String,
}

/// An instant for people (`2026-11-23 14:05 UTC`) and for `<time datetime>`.
fn when(t: DateTime<Utc>) -> (String, String) {
    (
        t.format("%Y-%m-%d %H:%M UTC").to_string(),
        t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

/// The "Authorized applications" section: every application the user authorized, with
/// what it may do, on which organizers, since when, and a form to revoke it.
pub async fn authorized_section(
    db: &impl sea_orm::ConnectionTrait,
    user_id: i64,
) -> Result<Section, sea_orm::DbErr> {
    let authorizations: Vec<AuthorizedView> = oauth::authorizations_of(db, user_id)
        .await?
        .into_iter()
        .map(|a| {
            let (created, created_iso) = when(a.created);
            AuthorizedView {
                id: a.id,
                application: a.application,
                active: a.active,
                access: a.scope.describe(),
                organizers: a.organizers,
                created,
                created_iso,
            }
        })
        .collect();
    Ok(Section {
        id: "authorized",
        title: "Authorized applications",
        template: "account_authorized.html",
        data: context! { authorizations },
    })
}

/// An own application as its template shows it.
#[derive(Serialize)]
struct ApplicationView {
    id: i64,
    name: String,
    client_id: String,
    redirect_uris: Vec<String>,
    active: bool,
    created: String,
}

impl From<oauth_application::Model> for ApplicationView {
    fn from(app: oauth_application::Model) -> Self {
        Self {
            redirect_uris: oauth::redirect_uris(&app),
            created: when(app.created).0,
            id: app.id,
            name: app.name,
            client_id: app.client_id,
            active: app.active,
        }
    }
}

/// What was typed into the form registering an application, and what is wrong with it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Draft {
    /// The name typed.
    pub name: String,
    /// The redirect URIs typed, one per line.
    pub redirect_uris: String,
    /// Why the application was not registered.
    pub error: Option<String>,
}

/// The "Your applications" section: the user's applications and the form registering a
/// new one, filled with `draft`.
pub async fn own_section(
    db: &impl sea_orm::ConnectionTrait,
    user_id: i64,
    draft: &Draft,
) -> Result<Section, sea_orm::DbErr> {
    let applications: Vec<ApplicationView> = oauth::applications_of(db, user_id)
        .await?
        .into_iter()
        .map(ApplicationView::from)
        .collect();
    Ok(Section {
        id: "applications",
        title: "Your applications",
        template: "account_applications.html",
        data: context! { applications, form => Value::from_serialize(draft) },
    })
}

/// The 404 page for an ID that is not one of the user's.
pub fn not_found(what: &str) -> Response {
    message(
        StatusCode::NOT_FOUND,
        "Not found",
        &format!("There is no such {what} on your account."),
    )
}

/// The page showing an application's client ID and its new secret, once.
pub fn secret_page(
    title: &str,
    app: &oauth_application::Model,
    secret: &str,
    replaced: bool,
) -> Response {
    render(
        "account_secret.html",
        context! {
            title,
            name => app.name,
            client_id => app.client_id,
            redirect_uris => oauth::redirect_uris(app),
            secret,
            replaced,
        },
    )
}
