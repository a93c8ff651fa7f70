//! What a caller holds: its kind, and per organizer the permissions it has and the events
//! they cover ([`Grant`]). Every organizer- and event-scoped check reads these, whatever the
//! kind of caller; [`crate::domain::access`] resolves credentials into a [`Caller`].

use std::sync::Arc;

use crate::db::entities::event;
use crate::domain::cache::Cache;
use crate::domain::oauth::Scope;
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::refusal::Refusal;
use crate::domain::talk::endpoints::Endpoints;

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
    /// What limits the grant's reviewing (talk side).
    pub review: ReviewLimits,
}

/// What limits a team's reviewers on the talk side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewLimits {
    /// Speaker names are hidden from the team's reviewers.
    pub hide_speaker_names: bool,
    /// The tracks the team reviews; empty for all.
    pub tracks: Vec<i64>,
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
    /// A user API token of the talk side acting for a user.
    UserToken {
        /// The token row.
        token_id: i64,
        /// The user it acts for.
        user_id: i64,
        /// The endpoints and actions it may use.
        endpoints: Endpoints,
        /// `None` for every event the user may see, else these event IDs.
        events: Option<Vec<i64>>,
        /// The version it is fixed to; `None` until first used.
        version: Option<String>,
    },
    /// A person signed in to the pages, acting with their teams (the account page).
    Session {
        /// The signed-in user.
        user_id: i64,
    },
    /// An initialized scanning device (`Authorization: Device <token>`).
    Device {
        /// The device's row.
        id: i64,
        /// Its number within the organizer (`device_id` in the API).
        device_id: i64,
        /// The organizer it belongs to.
        organizer_id: i64,
        /// The gate it stands at, if any.
        gate_id: Option<i64>,
        /// Its security profile, as stored (a profile name or an alias).
        security_profile: String,
    },
}

/// The device a request comes from, for what records it (check-ins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRef {
    /// The device's row (`devices.id`).
    pub id: i64,
    /// Its number within the organizer (`device_id` in the API).
    pub device_id: i64,
    /// The gate it stands at, if any (`gates.id`).
    pub gate_id: Option<i64>,
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Kind and identity.
    pub kind: CallerKind,
    /// What the caller may see and do.
    pub grants: Vec<Grant>,
    /// The process cache and its generation at the start of the request, for event lookups.
    pub(crate) kept: Option<(Arc<Cache>, u64)>,
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
    pub fn require(&self, p: Permission) -> Result<(), Refusal> {
        if self.permissions.has(p) {
            Ok(())
        } else {
            Err(Refusal::forbidden())
        }
    }
}

impl Caller {
    /// A stable name of who is calling, for what belongs to a caller and what it is
    /// limited to (uploads, rate limits, idempotency keys). An OAuth caller is its user
    /// with its application, not its access token, which a client mints anew with every
    /// refresh.
    pub fn identity(&self) -> String {
        match &self.kind {
            CallerKind::TeamToken { token_id, .. } => format!("token:{token_id}"),
            CallerKind::OAuth {
                user_id,
                application_id,
                ..
            } => format!("oauth:{user_id}:{application_id}"),
            CallerKind::UserToken { user_id, .. } => format!("user:{user_id}"),
            CallerKind::Session { user_id } => format!("session:{user_id}"),
            CallerKind::Device { id, .. } => format!("device:{id}"),
        }
    }

    /// The device of a device caller (its row, number and gate); `None` for other callers.
    pub fn device(&self) -> Option<DeviceRef> {
        match &self.kind {
            CallerKind::Device {
                id,
                device_id,
                gate_id,
                ..
            } => Some(DeviceRef {
                id: *id,
                device_id: *device_id,
                gate_id: *gate_id,
            }),
            _ => None,
        }
    }

    /// The security profile of a device caller, as stored; `None` for other callers.
    pub fn device_profile(&self) -> Option<&str> {
        match &self.kind {
            CallerKind::Device {
                security_profile, ..
            } => Some(security_profile),
            _ => None,
        }
    }

    /// The user and scope of an OAuth caller; 401 for any other kind of caller, since only a
    /// user-level token can act for a person (`/api/v1/me`, the reseller interface).
    pub fn oauth_user(&self) -> Result<(i64, Scope), Refusal> {
        match &self.kind {
            CallerKind::OAuth { user_id, scope, .. } => Ok((*user_id, *scope)),
            _ => Err(Refusal::unauthorized(
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

    /// Whether the caller holds `p` for every event of the organizer, present and future:
    /// what organizer-wide work on events' data needs (a bank statement for all events).
    pub fn holds_for_all_events(&self, organizer_id: i64, p: Permission) -> bool {
        self.grants.iter().any(|g| {
            g.organizer.id == organizer_id && g.events == EventScope::All && g.permissions.has(p)
        })
    }

    /// Whether the caller may hand `permissions` on `events` of the organizer on to another
    /// holder (a team, its token, a device, a webhook): a caller never grants more than it
    /// holds. It must hold each organizer-level permission (see
    /// [`Permission::is_organizer_level`]), cover every event of the scope and hold each
    /// other permission there; for all events, present and future, that takes grants for
    /// all events.
    pub fn may_grant(
        &self,
        organizer_id: i64,
        events: &EventScope,
        permissions: PermissionSet,
    ) -> bool {
        let grants = || {
            self.grants
                .iter()
                .filter(|g| g.organizer.id == organizer_id)
        };
        let held = grants().fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions));
        let per_event: PermissionSet = permissions
            .iter()
            .filter(|p| !p.is_organizer_level())
            .collect();
        if !held.contains(permissions) {
            return false;
        }
        match events {
            EventScope::All => {
                let mut everywhere = grants().filter(|g| g.events == EventScope::All).peekable();
                everywhere.peek().is_some()
                    && everywhere
                        .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions))
                        .contains(per_event)
            }
            EventScope::Only(ids) => ids.iter().all(|id| {
                grants().any(|g| g.events.covers(*id))
                    && self
                        .event_permissions(organizer_id, *id)
                        .contains(per_event)
            }),
        }
    }

    /// The caller's permissions for one event of an organizer.
    pub fn event_permissions(&self, organizer_id: i64, event_id: i64) -> PermissionSet {
        self.grants
            .iter()
            .filter(|g| g.organizer.id == organizer_id && g.events.covers(event_id))
            .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions))
    }
}
