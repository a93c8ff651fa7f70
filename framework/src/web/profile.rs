//! The profile section of the account page: the person's name (`POST /account/profile`)
//! and password (`POST /account/password`: the current one, checked and counted as a
//! sign-in attempt is, then the new one twice). A new password signs the person out
//! everywhere else and keeps this browser signed in with a new session.

use minijinja::context;
use poem::http::StatusCode;
use poem::web::Data;
use poem::{Body, Request, Response, handler};

use super::account::{self, posted_form};
use super::applications::Section;
use super::{field, redirect, server_error};
use crate::db::entities::user;
use crate::domain::users::{self, SignIn};
use crate::http::limits;
use crate::state::AppState;

/// The query of the account page after a password change; it shows [`CHANGED`].
pub const CHANGED_QUERY: &str = "changed=password";

/// Said after a password change.
pub const CHANGED: &str =
    "Your password was changed. Every other place you were signed in is signed out.";

/// What the section shows besides the user: the name in the form, and an error or notice.
#[derive(Default)]
pub struct Draft {
    /// The name in the form, when it differs from the stored one (a refused change).
    pub fullname: Option<String>,
    /// Why the name was not changed.
    pub name_error: Option<String>,
    /// Why the password was not changed.
    pub password_error: Option<&'static str>,
    /// A note on what was done.
    pub notice: Option<&'static str>,
}

/// The profile section of `user`'s account page.
pub fn section(user: &user::Model, draft: Draft) -> Section {
    Section {
        id: "profile",
        title: "Profile",
        template: "account_profile.html",
        data: minijinja::Value::from_serialize(context! {
            fullname => draft.fullname.unwrap_or_else(|| user.fullname.clone()),
            name_error => draft.name_error,
            password_error => draft.password_error,
            notice => draft.notice,
            min_length => users::MIN_PASSWORD_LEN,
        }),
    }
}

/// Changes the name; a refused one shows the page again (400) with the error.
#[handler]
pub async fn change_name(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let form = match posted_form(req, body, &state).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let fullname = field(&form.fields, "fullname").unwrap_or_default();
    match users::rename(&state.db, form.user.id, &fullname).await {
        Ok(Ok(())) => redirect("/account#profile"),
        Ok(Err(error)) => {
            let draft = Draft {
                fullname: Some(fullname),
                name_error: Some(error),
                ..Draft::default()
            };
            let section = section(&form.user, draft);
            account::show(
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

/// Why a password change is refused, before the current password is checked.
fn refusal(new: &str, repeat: &str) -> Option<&'static str> {
    if new != repeat {
        Some("The two new passwords differ.")
    } else if users::password_problem(new).is_some() {
        Some(super::PASSWORD_LENGTH)
    } else {
        None
    }
}

/// Changes the password after checking the current one (counted as sign-in attempts are:
/// too many wrong ones lock the email for a while); ends every session of the user and
/// starts a new one here. A refusal shows the page again with the error.
#[handler]
pub async fn change_password(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let form = match posted_form(req, body, &state).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let get = |name| field(&form.fields, name).unwrap_or_default();
    let (current, new) = (get("current"), get("new"));
    let refused = async |status, error| {
        let draft = Draft {
            password_error: Some(error),
            ..Draft::default()
        };
        let section = section(&form.user, draft);
        account::show(&state, &form.user, &form.session, status, Some(section)).await
    };
    if let Some(error) = refusal(&new, &get("repeat")) {
        return refused(StatusCode::BAD_REQUEST, error).await;
    }
    let address = limits::client_address(req, &state.config.trusted_proxies)
        .map(|a| limits::address_key(Some(a)));
    let checked = users::sign_in(
        &state.db,
        &state.password_checks,
        &form.user.email,
        address.as_deref(),
        &current,
    )
    .await;
    match checked {
        Ok(SignIn::SignedIn(_)) => {}
        Ok(SignIn::Wrong) => {
            return refused(StatusCode::BAD_REQUEST, "Your current password is wrong.").await;
        }
        Ok(SignIn::Locked) => {
            return refused(StatusCode::TOO_MANY_REQUESTS, super::login::LOCKED).await;
        }
        Ok(SignIn::Busy) => {
            return refused(StatusCode::SERVICE_UNAVAILABLE, super::login::BUSY).await;
        }
        Err(e) => return server_error(e),
    }
    match users::set_password(&state.db, form.user.id, new).await {
        Ok(()) => {}
        Err(users::SetPasswordError::Invalid(_)) => {
            return refused(StatusCode::BAD_REQUEST, super::PASSWORD_LENGTH).await;
        }
        Err(users::SetPasswordError::Db(e)) => return server_error(e),
    }
    super::login::start_session(
        req,
        &state,
        form.user.id,
        &format!("/account?{CHANGED_QUERY}#profile"),
    )
    .await
}
