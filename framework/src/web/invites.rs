//! Accepting an invitation to a team: `GET /invite/{secret}` shows it; `POST` accepts it,
//! as the signed-in user (the session's CSRF token), or with a new account for the invited
//! address (the sign-in form's CSRF cookie), which is then signed in. The token in the path
//! is the proof; it is used up by accepting, and the path is redacted in logs.

use minijinja::context;
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};

use super::session;
use super::{FormToken, field, read_form, redirect, render_status};
use crate::db::begin_write;
use crate::domain::sessions;
use crate::domain::team_members::{self, OpenInvite};
use crate::domain::users::{self, CreateError, NewUser};
use crate::state::AppState;

/// The answer to a link whose invitation was used, withdrawn, or never existed.
const NOT_VALID: &str =
    "This invitation is not valid (any more). Ask the organizer to invite you again.";

/// Whether `secret` can be a token at all (bounds the work of a request).
fn plausible(secret: &str) -> bool {
    secret.len() == 64 && secret.bytes().all(|b| b.is_ascii_alphanumeric())
}

async fn open(state: &AppState, secret: &str) -> Result<Option<OpenInvite>, Response> {
    if !plausible(secret) {
        return Ok(None);
    }
    team_members::open(&state.db, secret)
        .await
        .map_err(super::server_error)
}

fn invalid() -> Response {
    super::message(StatusCode::NOT_FOUND, "Invitation not found", NOT_VALID)
}

/// The invitation page: an accept button for a signed-in user, else a sign-in link and a
/// form to create an account.
async fn show(
    req: &Request,
    state: &AppState,
    secret: &str,
    found: &OpenInvite,
    status: StatusCode,
    error: Option<&str>,
    fullname: &str,
) -> Response {
    let action = format!("/invite/{secret}");
    // The token is letters and digits only (`plausible`), so the path needs no encoding.
    let login = format!("/login?next={action}");
    let signed_in = session::current_user(req, state).await;
    let (csrf, set_cookie, user) = match &signed_in {
        Some((user, current)) => (current.csrf_token.clone(), None, Some(user.email.clone())),
        None => {
            let (csrf, set) = session::login_csrf(req, state);
            (csrf, set, None)
        }
    };
    let resp = render_status(
        status,
        "invite.html",
        context! {
            organizer => found.organizer, team => found.team, email => found.invite.email,
            action, login, csrf, user, error, fullname, min_password => users::MIN_PASSWORD_LEN,
        },
    );
    match set_cookie {
        Some(c) => session::set_cookie(resp, &c),
        None => resp,
    }
}

/// Shows the invitation behind the link.
#[handler]
pub async fn invite_page(
    req: &Request,
    Path(secret): Path<String>,
    state: Data<&AppState>,
) -> Response {
    match open(&state, &secret).await {
        Ok(Some(found)) => show(req, &state, &secret, &found, StatusCode::OK, None, "").await,
        Ok(None) => invalid(),
        Err(resp) => resp,
    }
}

/// Accepts the invitation: as the signed-in user, or with a new account for its address.
#[handler]
pub async fn accept(
    req: &Request,
    Path(secret): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let found = match open(&state, &secret).await {
        Ok(Some(found)) => found,
        Ok(None) => return invalid(),
        Err(resp) => return resp,
    };
    let signed_in = session::current_user(req, &state).await;
    let token = match &signed_in {
        Some((_, current)) => FormToken::Session(current),
        None => FormToken::SignIn,
    };
    let pairs = match read_form(req, body, token).await {
        Ok(pairs) => pairs,
        Err(answer) => return answer,
    };
    if let Some((user, _)) = signed_in {
        return join(&state, &found, user.id, false).await;
    }
    let fullname = field(&pairs, "fullname").unwrap_or_default();
    let password = field(&pairs, "password").unwrap_or_default();
    let refused = if field(&pairs, "password_repeat").as_deref() != Some(password.as_str()) {
        "The passwords do not match.".to_owned()
    } else {
        let new = NewUser {
            email: found.invite.email.clone(),
            password,
            fullname: fullname.chars().take(255).collect(),
            ..Default::default()
        };
        match users::create_user(&state.db, new).await {
            Ok(user) => return join(&state, &found, user.id, true).await,
            Err(CreateError::Invalid(errors)) => {
                let text: Vec<String> = errors.into_iter().map(|(_, m)| m).collect();
                text.join(" ")
            }
            Err(CreateError::Db(e)) => return super::server_error(e),
        }
    };
    let status = StatusCode::BAD_REQUEST;
    show(
        req,
        &state,
        &secret,
        &found,
        status,
        Some(&refused),
        &fullname,
    )
    .await
}

/// Makes the user a member through the invitation; for a `new_account`, starts their
/// session. Goes on to the account page.
async fn join(state: &AppState, found: &OpenInvite, user_id: i64, new_account: bool) -> Response {
    let joined = async {
        let txn = begin_write(&state.db).await?;
        let joined = team_members::accept(&txn, &found.invite, user_id).await?;
        crate::db::commit(txn).await?;
        Ok::<_, sea_orm::DbErr>(joined)
    }
    .await;
    match joined {
        Ok(true) => {}
        Ok(false) => return invalid(),
        Err(e) => return super::server_error(e),
    }
    let resp = redirect("/account");
    if !new_account {
        return resp;
    }
    match sessions::create(&state.db, user_id).await {
        Ok((_, key)) => session::set_cookie(resp, &session::session_cookie(state, &key)),
        Err(e) => super::server_error(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_tokens_of_the_generated_shape_are_looked_up() {
        assert!(super::plausible(&crate::domain::tokens::generate()));
        assert!(!super::plausible("short"));
        assert!(!super::plausible(&"a".repeat(65)));
    }
}
