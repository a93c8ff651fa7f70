//! The talk side's user API tokens of the signed-in user, on `/orga/me`: the list (name,
//! scopes, events, expiry, last use, and the API version each is fixed to, marked when
//! deprecated), the form making one (`POST /orga/me/tokens`; the token is shown once, on
//! the page answering the form), and per token the forms fixing it to the current version
//! (`POST /orga/me/tokens/{id}/upgrade`) and disabling it (`POST /orga/me/tokens/{id}/disable`).
//!
//! Every form carries the session's CSRF token (403 without it); invalid input shows the
//! page again (400) with the errors and the values typed, and writes nothing. Another
//! user's token answers 404 and is left alone. The rules and queries are in
//! `domain::talk::tokens`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use minijinja::{Value, context};
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde::Serialize;

use super::session;
use super::{PostedForm, applications, field, redirect, render_status, server_error};
use crate::db::entities::{session as session_entity, user};
use crate::domain::talk::endpoints::{Action, ENDPOINTS, Endpoints};
use crate::domain::talk::tokens::{self, EventChoice, NewToken, TokenError, TokenSummary};
use crate::domain::talk::version::{ApiVersion, CURRENT};
use crate::state::AppState;

/// The page's path.
pub const PAGE: &str = "/orga/me";

/// Where someone not signed in is sent: the sign-in page, leading back here.
const SIGN_IN: &str = "/login?next=/orga/me";

/// What was typed into the form making a token, and what is wrong with it.
#[derive(Debug, Clone, Serialize)]
struct Draft {
    name: String,
    /// `read`, `write` or `custom`.
    preset: String,
    /// With `custom`: the actions ticked per endpoint.
    checked: BTreeMap<String, Vec<String>>,
    /// `all` or `chosen`.
    event_scope: String,
    /// With `chosen`: the event IDs ticked.
    events: Vec<i64>,
    expires: String,
    /// Messages by field (`name`, `endpoints`, `events`, `expires`).
    errors: BTreeMap<&'static str, Vec<String>>,
}

impl Default for Draft {
    /// The fresh form: reading all endpoints, all events, no expiry.
    fn default() -> Self {
        let read = |a: &Action| a.is_read().then(|| a.name().to_owned());
        Self {
            name: String::new(),
            preset: "read".to_owned(),
            checked: ENDPOINTS
                .iter()
                .map(|e| {
                    (
                        (*e).to_owned(),
                        Action::ALL.iter().filter_map(read).collect(),
                    )
                })
                .collect(),
            event_scope: "all".to_owned(),
            events: Vec::new(),
            expires: String::new(),
            errors: BTreeMap::new(),
        }
    }
}

impl Draft {
    fn error(&mut self, field: &'static str, message: impl Into<String>) {
        self.errors.entry(field).or_default().push(message.into());
    }
}

/// The form's fields read into a draft and, when they are well-formed, the token asked for.
fn draft_of(fields: &[(String, String)]) -> (Draft, Option<NewToken>) {
    let all = |name: &str| -> Vec<String> {
        fields
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let mut draft = Draft {
        name: field(fields, "name").unwrap_or_default(),
        preset: field(fields, "preset").unwrap_or_default(),
        event_scope: field(fields, "event_scope").unwrap_or_default(),
        expires: field(fields, "expires").unwrap_or_default(),
        ..Draft::default()
    };
    // The ticked actions are kept whatever the preset, to show the form again as typed.
    let mut chosen = Endpoints::default();
    let mut unknown = false;
    for endpoint in ENDPOINTS {
        let names = all(&format!("endpoint_{endpoint}"));
        let actions: Vec<Action> = names.iter().filter_map(|n| Action::from_name(n)).collect();
        unknown |= actions.len() < names.len();
        draft.checked.insert(endpoint.to_owned(), names);
        chosen.0.insert(endpoint.to_owned(), actions);
    }
    let endpoints = match draft.preset.as_str() {
        "read" => Endpoints::all_read(),
        "write" => Endpoints::all_write(),
        "custom" => {
            if unknown {
                draft.error("endpoints", "Unknown action.");
            }
            chosen
        }
        _ => {
            draft.error("endpoints", "Choose the permissions.");
            chosen
        }
    };
    let events = match draft.event_scope.as_str() {
        "all" => None,
        "chosen" => {
            let mut ids = Vec::new();
            for value in all("event") {
                match value.parse::<i64>() {
                    Ok(id) => ids.push(id),
                    Err(_) => draft.error("events", "Unknown event."),
                }
            }
            draft.events.clone_from(&ids);
            Some(ids)
        }
        _ => {
            draft.error("events", "Choose all events or some of them.");
            None
        }
    };
    let expires = match draft.expires.trim() {
        "" => None,
        text => match tokens::parse_expires(text) {
            Some(t) => Some(t),
            None => {
                draft.error(
                    "expires",
                    "Enter the expiry as a date and time in UTC, e.g. 2030-01-31 18:00.",
                );
                None
            }
        },
    };
    let new = draft.errors.is_empty().then(|| NewToken {
        name: draft.name.clone(),
        endpoints,
        events,
        expires,
    });
    (draft, new)
}

/// An instant for people (`2026-11-23 14:05 UTC`).
fn when(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A token in the list.
#[derive(Serialize)]
struct TokenView {
    id: i64,
    name: String,
    scopes: &'static str,
    scope_details: Vec<String>,
    events: Option<Vec<String>>,
    expires: Option<String>,
    last_used: Option<String>,
    created: String,
    /// The version's name; `None` until first used.
    version: Option<String>,
    deprecated: bool,
    upgradable: bool,
}

impl From<TokenSummary> for TokenView {
    fn from(t: TokenSummary) -> Self {
        let scopes = if t.endpoints == Endpoints::all_write() {
            "All endpoints, read and write"
        } else if t.endpoints == Endpoints::all_read() {
            "All endpoints, read only"
        } else {
            "Chosen endpoints"
        };
        let scope_details = t
            .endpoints
            .0
            .iter()
            .filter(|(_, actions)| !actions.is_empty())
            .map(|(e, actions)| {
                let names: Vec<&str> = actions.iter().map(|a| a.name()).collect();
                format!("/{e}: {}", names.join(", "))
            })
            .collect();
        // A version no longer served reads as deprecated and may be upgraded.
        let parsed = t.version.as_deref().map(ApiVersion::parse);
        let (deprecated, upgradable) = match parsed {
            None => (false, false),
            Some(Ok(v)) => (v.is_deprecated(), v != CURRENT),
            Some(Err(_)) => (true, true),
        };
        Self {
            id: t.id,
            name: t.name,
            scopes,
            scope_details,
            events: t.events,
            expires: t.expires.map(when),
            last_used: t.last_used.map(when),
            created: when(t.created),
            version: t.version,
            deprecated,
            upgradable,
        }
    }
}

/// An event of the form's choice.
#[derive(Serialize)]
struct EventView {
    id: i64,
    slug: String,
    name: String,
    organizer: String,
}

impl From<EventChoice> for EventView {
    fn from(c: EventChoice) -> Self {
        Self {
            id: c.id,
            slug: c.slug,
            name: c.name,
            organizer: c.organizer,
        }
    }
}

/// A token just made, shown this once.
struct Made {
    name: String,
    token: String,
}

/// The page with this status: the user's tokens and the form (filled with `draft`), and the
/// token just made when there is one. `tokens` is the list when the caller has it already.
async fn show(
    state: &AppState,
    user: &user::Model,
    current: &session_entity::Model,
    status: StatusCode,
    draft: &Draft,
    made: Option<(Made, Vec<TokenSummary>, Vec<EventChoice>)>,
) -> Response {
    let (made, list, choices) = match made {
        Some((m, list, choices)) => (Some(m), list, choices),
        None => {
            let found = async {
                Ok::<_, sea_orm::DbErr>((
                    tokens::list_for_user(&state.db, user.id).await?,
                    tokens::available_events(&state.db, user.id).await?,
                ))
            }
            .await;
            match found {
                Ok((list, choices)) => (None, list, choices),
                Err(e) => return server_error(e),
            }
        }
    };
    let list: Vec<TokenView> = list.into_iter().map(TokenView::from).collect();
    let choices: Vec<EventView> = choices.into_iter().map(EventView::from).collect();
    let endpoints: Vec<Value> = ENDPOINTS
        .iter()
        .map(|e| {
            let ticked = draft.checked.get(*e);
            let actions: Vec<Value> = Action::ALL
                .iter()
                .map(|a| {
                    let checked = ticked.is_some_and(|t| t.iter().any(|n| n == a.name()));
                    context! { name => a.name(), checked }
                })
                .collect();
            context! { name => *e, actions }
        })
        .collect();
    let actions: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
    render_status(
        status,
        "orga_me.html",
        context! {
            user => context! { email => user.email, fullname => user.fullname },
            csrf => current.csrf_token,
            tokens => list,
            choices,
            endpoints,
            actions,
            form => Value::from_serialize(draft),
            made => made.map(|m| context! { name => m.name, token => m.token }),
            current_version => CURRENT.name(),
        },
    )
}

/// The token page of the signed-in user; without a session, a 303 to the sign-in page.
#[handler]
pub async fn page(req: &Request, state: Data<&AppState>) -> Response {
    let Some((user, current)) = session::current_user(req, &state).await else {
        return redirect(SIGN_IN);
    };
    show(
        &state,
        &user,
        &current,
        StatusCode::OK,
        &Draft::default(),
        None,
    )
    .await
}

/// Makes a token and shows it once, on the page answering the form; invalid input shows
/// the page again (400) with the errors and the values typed.
#[handler]
pub async fn create(req: &Request, body: Body, state: Data<&AppState>) -> Response {
    let PostedForm {
        user,
        session,
        fields,
    } = match super::signed_in_form(req, body, &state, SIGN_IN).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let (mut draft, new) = draft_of(&fields);
    if let Some(new) = new {
        // Read before the write: the answer is built without the pool once it commits.
        let before = async {
            Ok::<_, sea_orm::DbErr>((
                tokens::list_for_user(&state.db, user.id).await?,
                tokens::available_events(&state.db, user.id).await?,
            ))
        }
        .await;
        let (list, choices) = match before {
            Ok(found) => found,
            Err(e) => return server_error(e),
        };
        match tokens::create(&state.db, user.id, new).await {
            Ok((summary, token)) => {
                let made = Made {
                    name: summary.name.clone(),
                    token,
                };
                let mut list = list;
                list.insert(0, summary);
                return show(
                    &state,
                    &user,
                    &session,
                    StatusCode::OK,
                    &Draft::default(),
                    Some((made, list, choices)),
                )
                .await;
            }
            Err(TokenError::Invalid(errors)) => {
                for (field, message) in errors {
                    draft.error(field, message);
                }
            }
            Err(TokenError::Db(e)) => return server_error(e),
        }
    }
    show(
        &state,
        &user,
        &session,
        StatusCode::BAD_REQUEST,
        &draft,
        None,
    )
    .await
}

/// What a form about one token does to it.
#[derive(Clone, Copy)]
enum Change {
    Upgrade,
    Disable,
}

/// Makes `change` to one of the user's tokens (the ID from the path) and answers with a
/// 303 back to the list; 404 when the user has no such token.
async fn change_token(
    req: &Request,
    id: &str,
    body: Body,
    state: &AppState,
    change: Change,
) -> Response {
    let user = match super::signed_in_form(req, body, state, SIGN_IN).await {
        Ok(form) => form.user,
        Err(answer) => return answer,
    };
    let Ok(id) = id.parse::<i64>() else {
        return applications::not_found("API token");
    };
    let done = match change {
        Change::Upgrade => tokens::upgrade(&state.db, user.id, id).await,
        Change::Disable => tokens::disable(&state.db, user.id, id).await,
    };
    match done {
        Ok(true) => redirect("/orga/me#tokens"),
        Ok(false) => applications::not_found("API token"),
        Err(e) => server_error(e),
    }
}

/// Fixes one of the user's tokens to the current API version. A 303 back to the list.
#[handler]
pub async fn upgrade(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    change_token(req, &id, body, &state, Change::Upgrade).await
}

/// Disables one of the user's tokens: it stops working at once and leaves the list. A 303
/// back to the list.
#[handler]
pub async fn disable(
    req: &Request,
    Path(id): Path<String>,
    body: Body,
    state: Data<&AppState>,
) -> Response {
    change_token(req, &id, body, &state, Change::Disable).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_custom_form_reads_into_its_scopes_and_events() {
        let (draft, new) = draft_of(&pairs(&[
            ("name", "sync"),
            ("preset", "custom"),
            ("endpoint_submissions", "list"),
            ("endpoint_submissions", "update"),
            ("event_scope", "chosen"),
            ("event", "7"),
            ("expires", "2030-01-31 18:00"),
        ]));
        let new = new.expect("well-formed");
        assert!(draft.errors.is_empty());
        assert!(new.endpoints.allows("submissions", Action::Update));
        assert!(!new.endpoints.allows("speakers", Action::List));
        assert_eq!(new.events, Some(vec![7]));
        assert!(new.expires.is_some());
    }

    #[test]
    fn malformed_fields_are_errors_by_field() {
        let (draft, new) = draft_of(&pairs(&[
            ("preset", "root"),
            ("event_scope", "chosen"),
            ("event", "x"),
            ("expires", "soon"),
        ]));
        assert!(new.is_none());
        for field in ["endpoints", "events", "expires"] {
            assert!(draft.errors.contains_key(field), "{field}");
        }
    }
}
