//! Who is calling, and what they may see. Every kind of caller (team API tokens now; OAuth
//! users and devices later) resolves to a [`Caller`] holding [`Grant`]s, and every organizer-
//! and event-scoped check goes through the grants, whatever the caller's kind.

use poem::http::header;
use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter};

use std::sync::Arc;

use super::error::ApiError;
use crate::cache::Cache;
use crate::db::entities::{event, team};
use crate::domain::oauth::Scope;
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::{oauth, teams, tokens, users};
use crate::state::AppState;

/// Credentials as sent in the `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// `Token <token>`: a team API token.
    Token(String),
    /// `Bearer <token>`: an OAuth access token.
    Bearer(String),
    /// `Device <token>`: a device API token.
    Device(String),
}

impl Credentials {
    /// Parses an `Authorization` header value; `None` for an unknown scheme.
    pub fn parse(header: &str) -> Option<Self> {
        let (scheme, value) = header.trim().split_once(' ')?;
        let value = value.trim().to_owned();
        if value.is_empty() {
            return None;
        }
        match scheme.to_ascii_lowercase().as_str() {
            "token" => Some(Self::Token(value)),
            "bearer" => Some(Self::Bearer(value)),
            "device" => Some(Self::Device(value)),
            _ => None,
        }
    }
}

/// An organizer as a caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrganizerRef {
    /// Internal ID.
    pub id: i64,
    /// Slug.
    pub slug: String,
    /// Name.
    pub name: String,
}

/// Which events of an organizer a grant covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventScope {
    /// Every event, present and future.
    All,
    /// These event IDs.
    Only(Vec<i64>),
}

impl EventScope {
    /// Whether the scope covers the event.
    pub fn covers(&self, event_id: i64) -> bool {
        match self {
            EventScope::All => true,
            EventScope::Only(ids) => ids.contains(&event_id),
        }
    }
}

/// Permissions over one organizer, and the events they apply to.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The organizer.
    pub organizer: OrganizerRef,
    /// What the caller may do.
    pub permissions: PermissionSet,
    /// Events covered by the event-level permissions.
    pub events: EventScope,
}

/// What kind of caller this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallerKind {
    /// A team API token.
    TeamToken {
        /// The token row.
        token_id: i64,
        /// The team it acts for.
        team_id: i64,
    },
    /// An OAuth access token acting for a user.
    OAuth {
        /// The access token row.
        access_token_id: i64,
        /// The user it acts for.
        user_id: i64,
        /// The application it was issued to.
        application_id: i64,
        /// What the token may do.
        scope: Scope,
    },
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Kind and identity.
    pub kind: CallerKind,
    /// What the caller may see and do.
    pub grants: Vec<Grant>,
    /// The process cache and its generation at the start of the request, for event lookups.
    kept: Option<(Arc<Cache>, u64)>,
}

/// Access to one organizer, checked.
#[derive(Debug, Clone)]
pub struct OrganizerAccess {
    /// The organizer.
    pub organizer: OrganizerRef,
    /// Organizer-level permissions of the caller there.
    pub permissions: PermissionSet,
}

/// Access to one event, checked.
#[derive(Debug, Clone)]
pub struct EventAccess {
    /// The event's organizer.
    pub organizer: OrganizerRef,
    /// The event.
    pub event: event::Model,
    /// The caller's permissions for this event.
    pub permissions: PermissionSet,
}

impl EventAccess {
    /// Ok when the caller holds `p` for the event, else 403.
    pub fn require(&self, p: Permission) -> Result<(), ApiError> {
        if self.permissions.has(p) {
            Ok(())
        } else {
            Err(ApiError::forbidden())
        }
    }
}

impl Caller {
    /// A stable name of who is calling, for what belongs to a caller (uploads).
    pub fn identity(&self) -> String {
        match &self.kind {
            CallerKind::TeamToken { token_id, .. } => format!("token:{token_id}"),
            CallerKind::OAuth {
                access_token_id, ..
            } => format!("oauth:{access_token_id}"),
        }
    }

    /// The user and scope of an OAuth caller; 401 for any other kind of caller, since only a
    /// user-level token can act for a person (`/api/v1/me`, the reseller interface).
    pub fn oauth_user(&self) -> Result<(i64, Scope), ApiError> {
        match &self.kind {
            CallerKind::OAuth { user_id, scope, .. } => Ok((*user_id, *scope)),
            _ => Err(ApiError::unauthorized(
                "This endpoint needs an OAuth access token.",
            )),
        }
    }

    /// The organizers the caller may see.
    pub fn organizers(&self) -> Vec<&OrganizerRef> {
        let mut seen: Vec<&OrganizerRef> = Vec::new();
        for g in &self.grants {
            if !seen.iter().any(|o| o.id == g.organizer.id) {
                seen.push(&g.organizer);
            }
        }
        seen
    }

    /// The organizer with this slug, when the caller may see it and, if `needs` is given,
    /// holds that permission there; otherwise 403, whether or not the organizer exists.
    pub fn organizer(
        &self,
        slug: &str,
        needs: Option<Permission>,
    ) -> Result<OrganizerAccess, ApiError> {
        let grants: Vec<&Grant> = self
            .grants
            .iter()
            .filter(|g| g.organizer.slug == slug)
            .collect();
        let first = grants.first().ok_or_else(ApiError::forbidden)?;
        let permissions = grants
            .iter()
            .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions));
        if needs.is_some_and(|p| !permissions.has(p)) {
            return Err(ApiError::forbidden());
        }
        Ok(OrganizerAccess {
            organizer: first.organizer.clone(),
            permissions,
        })
    }

    /// The event with this slug of the organizer with that slug, when the caller may see
    /// both and, if `needs` is given, holds that permission for the event; otherwise 403,
    /// whether or not they exist.
    pub async fn event(
        &self,
        db: &impl ConnectionTrait,
        organizer: &str,
        event: &str,
        needs: Option<Permission>,
    ) -> Result<EventAccess, ApiError> {
        let org = self.organizer(organizer, None)?;
        let found = self.find_event(db, org.organizer.id, event).await?;
        let covered = self
            .grants
            .iter()
            .any(|g| g.organizer.id == org.organizer.id && g.events.covers(found.id));
        let permissions = self.event_permissions(org.organizer.id, found.id);
        if !covered || needs.is_some_and(|p| !permissions.has(p)) {
            return Err(ApiError::forbidden());
        }
        Ok(EventAccess {
            organizer: org.organizer,
            event: found,
            permissions,
        })
    }

    /// An event of the organizer by slug, from the process cache when it holds it.
    async fn find_event(
        &self,
        db: &impl ConnectionTrait,
        organizer_id: i64,
        slug: &str,
    ) -> Result<event::Model, ApiError> {
        if let Some((cache, generation)) = &self.kept
            && let Some(ev) = cache.event(*generation, organizer_id, slug)
        {
            return Ok(ev);
        }
        let found = event::Entity::find()
            .filter(event::Column::OrganizerId.eq(organizer_id))
            .filter(event::Column::Slug.eq(slug))
            .one(db)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        if let Some((cache, generation)) = &self.kept {
            cache.keep_event(*generation, found.clone());
        }
        Ok(found)
    }

    /// The events of an organizer the caller may see: all, or only some.
    pub fn event_scope(&self, organizer_id: i64) -> EventScope {
        let mut ids = Vec::new();
        for g in self
            .grants
            .iter()
            .filter(|g| g.organizer.id == organizer_id)
        {
            match &g.events {
                EventScope::All => return EventScope::All,
                EventScope::Only(only) => ids.extend(only.iter().copied()),
            }
        }
        EventScope::Only(ids)
    }

    /// The caller's permissions for one event of an organizer.
    pub fn event_permissions(&self, organizer_id: i64, event_id: i64) -> PermissionSet {
        self.grants
            .iter()
            .filter(|g| g.organizer.id == organizer_id && g.events.covers(event_id))
            .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions))
    }
}

/// The authenticated caller of an operation: add `auth: Auth` to an operation to require
/// credentials. Missing or invalid credentials are answered with 401.
#[derive(Debug, Clone)]
pub struct Auth(pub Caller);

/// Name of the token security scheme in the OpenAPI document.
pub const TOKEN_SCHEME: &str = "TokenAuth";
/// Name of the OAuth access token security scheme in the OpenAPI document.
pub const BEARER_SCHEME: &str = "BearerAuth";

impl<'a> ApiExtractor<'a> for Auth {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            TOKEN_SCHEME,
            MetaSecurityScheme {
                ty: "apiKey",
                description: Some("A team API token: `Authorization: Token <token>`."),
                name: Some("Authorization"),
                key_in: Some("header"),
                scheme: None,
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
        registry.create_security_scheme(
            BEARER_SCHEME,
            MetaSecurityScheme {
                ty: "http",
                description: Some(
                    "An OAuth access token: `Authorization: Bearer <token>`; it acts for a user \
                     on the organizers they granted, within its scope.",
                ),
                name: None,
                key_in: None,
                scheme: Some("bearer"),
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![TOKEN_SCHEME, BEARER_SCHEME]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Auth(authenticate(req).await?))
    }
}

/// The outcome of authenticating a request, resolved once before routing (see the
/// middleware) and reused by every extractor of the request.
#[derive(Debug, Clone)]
pub struct Resolved(pub Result<Caller, ApiError>);

/// The caller of a request, from its `Authorization` header; 401 without valid
/// credentials.
pub async fn authenticate(req: &Request) -> Result<Caller, ApiError> {
    if let Some(Resolved(outcome)) = req.extensions().get::<Resolved>() {
        return outcome.clone();
    }
    let state = req.data::<AppState>().ok_or_else(ApiError::internal)?;
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized(
            "Authentication credentials were not provided.",
        ));
    };
    let creds = value.to_str().ok().and_then(Credentials::parse);
    let generation = state.cache.generation().await;
    let caller = match creds {
        Some(Credentials::Token(token)) => {
            let hash = tokens::hash(&token);
            match generation.and_then(|g| state.cache.caller(g, &hash)) {
                Some(kept) => Some(kept),
                None => {
                    let found = resolve_team_token(&state.db, &token).await?;
                    if let (Some(g), Some(c)) = (generation, &found) {
                        state.cache.keep_caller(g, hash, c.clone());
                    }
                    found
                }
            }
        }
        // Never kept in the process cache: a revoked token must stop at once, everywhere.
        Some(Credentials::Bearer(token)) => {
            resolve_bearer(&state.db, &token, req.method().as_str()).await?
        }
        _ => None,
    };
    let mut caller = caller.ok_or_else(|| ApiError::unauthorized("Invalid token."))?;
    caller.kept = generation.map(|g| (state.cache.clone(), g));
    Ok(caller)
}

/// Resolves a team API token to its caller; `None` for an unknown or inactive token.
/// One query: the token, its team and the team's organizer, joined.
pub async fn resolve_team_token(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<Caller>, ApiError> {
    let sql = "SELECT t.*, tt.id AS token_id, tt.token_hash, \
               o.slug AS organizer_slug, o.name AS organizer_name \
               FROM team_tokens tt JOIN teams t ON t.id = tt.team_id \
               JOIN organizers o ON o.id = t.organizer_id \
               WHERE tt.token_hash = $1 AND tt.active";
    let Some(row) = tokens::find_row(db, sql, token).await? else {
        return Ok(None);
    };
    let team = team::Model::from_query_result(&row, "")?;
    let events = if team.all_events {
        EventScope::All
    } else {
        EventScope::Only(teams::event_ids(db, team.id).await?)
    };
    Ok(Some(Caller {
        kind: CallerKind::TeamToken {
            token_id: row.try_get("", "token_id")?,
            team_id: team.id,
        },
        kept: None,
        grants: vec![Grant {
            organizer: OrganizerRef {
                id: team.organizer_id,
                slug: row.try_get("", "organizer_slug")?,
                name: row.try_get("", "organizer_name")?,
            },
            permissions: teams::permissions(&team),
            events,
        }],
    }))
}

/// Resolves an OAuth access token to its caller; `None` for an unknown, expired or revoked
/// token. The grants are the user's teams on the organizers the user granted, and none at
/// all when the token's scope does not cover the request's method (`read` for safe methods,
/// `write` for the others), so that every organizer path answers 403.
pub async fn resolve_bearer(
    db: &impl ConnectionTrait,
    token: &str,
    method: &str,
) -> Result<Option<Caller>, ApiError> {
    let Some(found) = oauth::resolve_access_token(db, token).await? else {
        return Ok(None);
    };
    let grants = if found.scope.covers_method(method) {
        users::organizers_of(db, found.user_id)
            .await?
            .into_iter()
            .filter(|g| found.organizer_ids.contains(&g.organizer.id))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Some(Caller {
        kind: CallerKind::OAuth {
            access_token_id: found.access_token_id,
            user_id: found.user_id,
            application_id: found.application_id,
            scope: found.scope,
        },
        grants,
        kept: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::Credentials;

    #[test]
    fn authorization_headers_parse_by_scheme() {
        assert_eq!(
            Credentials::parse("Token abc"),
            Some(Credentials::Token("abc".into()))
        );
        assert_eq!(
            Credentials::parse("token  abc "),
            Some(Credentials::Token("abc".into()))
        );
        assert_eq!(
            Credentials::parse("Bearer x"),
            Some(Credentials::Bearer("x".into()))
        );
        assert_eq!(
            Credentials::parse("Device y"),
            Some(Credentials::Device("y".into()))
        );
        assert_eq!(Credentials::parse("Basic zz"), None);
        assert_eq!(Credentials::parse("Token"), None);
        assert_eq!(Credentials::parse("Token "), None);
    }
}
