//! The account page's "Team API tokens" section, for people who may change teams: the tokens
//! of each team they manage, a form making one (`POST /account/team-tokens`; the token is
//! shown once, on the page answering the form) and a button revoking one
//! (`POST /account/team-tokens/{id}/revoke`). The rules are `domain::team_tokens`'.

use minijinja::{Value, context};
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde::Serialize;

use super::account::{posted_about, posted_form, show};
use super::applications::{Section, not_found};
use super::{field, redirect, render, server_error};
use crate::domain::grants::Caller;
use crate::domain::team_tokens::{self, ManagedTeam, Refused};
use crate::domain::users;
use crate::state::AppState;

/// What was chosen in the form making a token, and what is wrong with it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Draft {
    /// The team chosen.
    pub team: Option<i64>,
    /// The name typed.
    pub name: String,
    /// Why no token was made.
    pub error: Option<String>,
}

/// A token as the section lists it.
#[derive(Serialize)]
struct TokenView {
    id: i64,
    name: String,
    active: bool,
    created: String,
}

/// A team as the section lists it.
#[derive(Serialize)]
struct TeamView {
    id: i64,
    name: String,
    organizer: String,
    tokens: Vec<TokenView>,
    more: i64,
}

impl From<ManagedTeam> for TeamView {
    fn from(m: ManagedTeam) -> Self {
        let more = m.total - m.tokens.len() as i64;
        Self {
            id: m.team.id,
            name: m.team.name,
            organizer: m.organizer,
            tokens: m
                .tokens
                .into_iter()
                .map(|t| TokenView {
                    id: t.id,
                    name: t.name,
                    active: t.active,
                    created: t.created.format("%Y-%m-%d %H:%M UTC").to_string(),
                })
                .collect(),
            more,
        }
    }
}

/// The section for `caller`, with the form filled from `draft`; `None` when they manage no
/// team.
pub async fn section(
    db: &impl sea_orm::ConnectionTrait,
    caller: &Caller,
    draft: &Draft,
) -> Result<Option<Section>, sea_orm::DbErr> {
    let teams: Vec<TeamView> = team_tokens::managed(db, caller)
        .await?
        .into_iter()
        .map(TeamView::from)
        .collect();
    Ok((!teams.is_empty()).then(|| Section {
        id: "team-tokens",
        title: "Team API tokens",
        template: "account_team_tokens.html",
        data: context! {
            teams,
            form => Value::from_serialize(draft),
            max_name => team_tokens::MAX_NAME_LEN,
        },
    }))
}

/// Makes a token for one of the teams the user manages and shows it once; a refused name
/// shows the page again (400) with the error, a team not theirs is 404.
#[handler]
pub async fn create(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let form = match posted_form(req, body, &state).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let draft = Draft {
        team: field(&form.fields, "team").and_then(|t| t.parse().ok()),
        name: field(&form.fields, "name").unwrap_or_default(),
        error: None,
    };
    let caller = match users::caller(&state.db, form.user.id).await {
        Ok(caller) => caller,
        Err(e) => return server_error(e),
    };
    let Some(team) = draft.team else {
        return not_found("team");
    };
    match team_tokens::create(&state.db, &caller, team, &draft.name).await {
        Ok(Ok(made)) => render(
            "account_team_token.html",
            context! { name => made.row.name, token => made.token, team => made.team.name },
        ),
        Ok(Err(Refused::NotYours)) => not_found("team"),
        Ok(Err(Refused::Name(error))) => {
            let draft = Draft {
                error: Some(error),
                ..draft
            };
            match section(&state.db, &caller, &draft).await {
                Ok(again) => {
                    show(
                        &state,
                        &form.user,
                        &form.session,
                        StatusCode::BAD_REQUEST,
                        again,
                    )
                    .await
                }
                Err(e) => server_error(e),
            }
        }
        Err(e) => server_error(e),
    }
}

/// Revokes a token of a team the user manages: it stops working at once. A 303 back to the
/// section; a token not theirs is 404.
#[handler]
pub async fn revoke(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    let (form, id) = match posted_about(req, &id, body, &state, "token").await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let caller = match users::caller(&state.db, form.user.id).await {
        Ok(caller) => caller,
        Err(e) => return server_error(e),
    };
    match team_tokens::revoke(&state.db, &caller, id).await {
        Ok(Ok(_)) => redirect("/account#team-tokens"),
        Ok(Err(_)) => not_found("token"),
        Err(e) => server_error(e),
    }
}
