//! Who is calling, and what they may see and do. Every kind of caller (team API tokens,
//! OAuth users, devices, talk-side tokens) resolves to a [`Caller`] holding
//! [`Grant`]s, and every organizer- and event-scoped check goes through the grants, whatever
//! the caller's kind. `http::auth` only reads the `Authorization` header and asks
//! [`resolve`].

use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter};

use crate::db::entities::{event, team};
use crate::domain::cache::Cache;
use crate::domain::grants::{
    Caller, CallerKind, EventAccess, EventScope, Grant, OrganizerAccess, OrganizerRef, ReviewLimits,
};
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::refusal::Refusal;
use crate::domain::talk::tokens as user_tokens;
use crate::domain::{devices, oauth, teams, tokens, users};

/// The credentials a request presents (`http::auth` reads them from its header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// `Token <token>`: a team API token.
    Token(String),
    /// `Bearer <token>`: an OAuth access token.
    Bearer(String),
    /// `Device <token>`: a device API token.
    Device(String),
    /// `Token <token>` under the talk side's `/api/` (not `/api/v1/`): a user API token.
    UserToken(String),
}

impl Caller {
    /// The organizer with this slug, when the caller may see it and, if `needs` is given,
    /// holds that permission there; otherwise 403, whether or not the organizer exists.
    pub fn organizer(
        &self,
        slug: &str,
        needs: Option<Permission>,
    ) -> Result<OrganizerAccess, Refusal> {
        let grants: Vec<&Grant> = self
            .grants
            .iter()
            .filter(|g| g.organizer.slug == slug)
            .collect();
        let first = grants.first().ok_or_else(Refusal::forbidden)?;
        let permissions = grants
            .iter()
            .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions));
        if needs.is_some_and(|p| !permissions.has(p)) {
            return Err(Refusal::forbidden());
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
    ) -> Result<EventAccess, Refusal> {
        let org = self.organizer(organizer, None)?;
        let found = self.find_event(db, org.organizer.id, event).await?;
        let covered = self
            .grants
            .iter()
            .any(|g| g.organizer.id == org.organizer.id && g.events.covers(found.id));
        let permissions = self.event_permissions(org.organizer.id, found.id);
        if !covered || needs.is_some_and(|p| !permissions.has(p)) {
            return Err(Refusal::forbidden());
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
    ) -> Result<event::Model, Refusal> {
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
            .ok_or_else(Refusal::forbidden)?;
        if let Some((cache, generation)) = &self.kept {
            cache.keep_event(*generation, found.clone());
        }
        Ok(found)
    }
}

/// The caller these credentials stand for, or `None` when they are unknown, inactive,
/// expired or revoked. Team tokens are kept in the process cache for `generation` (the
/// cache's generation at the start of the request, when it has one); OAuth tokens never
/// are: a revoked token must stop at once, everywhere. `method` is the request's, which an
/// OAuth token's scope must cover.
pub async fn resolve(
    db: &impl ConnectionTrait,
    cache: &Arc<Cache>,
    generation: Option<u64>,
    credentials: &Credentials,
    method: &str,
) -> Result<Option<Caller>, Refusal> {
    let caller = match credentials {
        Credentials::Token(token) => {
            let hash = tokens::hash(token);
            match generation.and_then(|g| cache.caller::<Caller>(g, &hash)) {
                Some(kept) => Some(Caller::clone(&kept)),
                None => {
                    let found = resolve_team_token(db, token).await?;
                    if let (Some(g), Some(c)) = (generation, &found) {
                        cache.keep_caller(g, hash, Arc::new(c.clone()));
                    }
                    found
                }
            }
        }
        Credentials::Bearer(token) => resolve_bearer(db, token, method).await?,
        Credentials::UserToken(token) => resolve_user_token(db, token).await?,
        Credentials::Device(token) => resolve_device(db, token, method).await?,
    };
    Ok(caller.map(|mut c| {
        c.kept = generation.map(|g| (cache.clone(), g));
        c
    }))
}

/// Resolves a team API token to its caller; `None` for an unknown or inactive token.
/// One query: the token, its team and the team's organizer, joined.
async fn resolve_team_token(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<Caller>, Refusal> {
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
            review: ReviewLimits::default(),
        }],
    }))
}

/// Resolves a talk-side user API token to its caller; `None` for an unknown or expired
/// token. The grants are the user's teams, narrowed to the token's events.
async fn resolve_user_token(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<Caller>, Refusal> {
    let Some(found) = user_tokens::resolve(db, token).await? else {
        return Ok(None);
    };
    let mut grants = users::organizers_of(db, found.user_id).await?;
    if let Some(only) = &found.events {
        for g in &mut grants {
            g.events = EventScope::Only(
                only.iter()
                    .copied()
                    .filter(|id| g.events.covers(*id))
                    .collect(),
            );
        }
    }
    Ok(Some(Caller {
        kind: CallerKind::UserToken {
            token_id: found.id,
            user_id: found.user_id,
            endpoints: found.endpoints,
            events: found.events,
            version: found.version,
        },
        grants,
        kept: None,
    }))
}

/// Resolves an OAuth access token to its caller; `None` for an unknown, expired or revoked
/// token. The grants are the user's teams on the organizers the user granted, and none at
/// all when the token's scope does not cover the request's method (`read` for safe methods,
/// `write` for the others), so that every organizer path answers 403.
async fn resolve_bearer(
    db: &impl ConnectionTrait,
    token: &str,
    method: &str,
) -> Result<Option<Caller>, Refusal> {
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

/// Resolves a device API token to its caller; `None` for an unknown token, 401 with pretix's
/// texts for a revoked device and for the initialization token of a device not yet
/// initialized. The grant holds the spec's fixed device permissions on the device's events:
/// view and change orders, check in, manage gift cards; reading events, their settings and
/// sub-events (which the API guards with `can_change_event_settings`) only with safe
/// methods, so a device never changes them; never vouchers, items or organizer settings.
async fn resolve_device(
    db: &impl ConnectionTrait,
    token: &str,
    method: &str,
) -> Result<Option<Caller>, Refusal> {
    let Some(found) = devices::authenticate(db, token).await? else {
        return Ok(None);
    };
    let permissions: PermissionSet = devices::acts_with()
        .iter()
        .filter(|p| {
            *p != Permission::ChangeEventSettings || matches!(method, "GET" | "HEAD" | "OPTIONS")
        })
        .collect();
    let events = devices::scope(found.all_events, &found.event_ids);
    Ok(Some(Caller {
        kind: CallerKind::Device {
            id: found.id,
            device_id: found.device_id,
            organizer_id: found.organizer.id,
            gate_id: found.gate_id,
            security_profile: found.security_profile,
        },
        grants: vec![Grant {
            organizer: found.organizer,
            permissions,
            events,
            review: ReviewLimits::default(),
        }],
        kept: None,
    }))
}
