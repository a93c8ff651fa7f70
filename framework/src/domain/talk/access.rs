//! Who may see which talk-side event, and how. A talk-side event is found by its slug
//! among the events with the talk side switched on. Anyone may see a public one; a user
//! token sees the events of its user's teams that its scopes cover. An event the caller
//! may not see is 404 (for anonymous callers, the resources of a private event are 401); an
//! endpoint or action outside the token's scopes is 403; a missing permission is 401 for
//! anonymous callers and 403 for authenticated ones.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::endpoints::{Action, Endpoints};
use super::review_phases;
use super::version::ApiVersion;
use crate::db::entities::event;
use crate::domain::grants::{Caller, CallerKind};
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::refusal::Refusal;

/// A talk-side request's caller (anonymous or a user token) and the API version in force.
#[derive(Debug, Clone)]
pub struct TalkCaller {
    /// The authenticated caller; `None` for an anonymous request.
    pub caller: Option<Caller>,
    /// The version the answer is shaped for.
    pub version: ApiVersion,
}

/// The 404 of an object or event the caller may not see.
pub fn not_found() -> Refusal {
    Refusal::not_found("Not found.")
}

impl TalkCaller {
    /// The user the token acts for, with the token's scopes; `None` for anonymous callers.
    pub fn token(&self) -> Option<(i64, &Endpoints, Option<&[i64]>)> {
        match &self.caller.as_ref()?.kind {
            CallerKind::UserToken {
                user_id,
                endpoints,
                events,
                ..
            } => Some((*user_id, endpoints, events.as_deref())),
            _ => None,
        }
    }

    /// The user behind the token, or 401 for an anonymous request.
    pub fn user_id(&self) -> Result<i64, Refusal> {
        self.token()
            .map(|(user, ..)| user)
            .ok_or_else(|| Refusal::unauthorized("Authentication credentials were not provided."))
    }

    /// 401 for anonymous callers, 403 for authenticated ones: the answer to a missing
    /// permission.
    pub fn deny(&self) -> Refusal {
        if self.caller.is_some() {
            Refusal::forbidden_because("You do not have permission to perform this action.")
        } else {
            Refusal::unauthorized("Authentication credentials were not provided.")
        }
    }

    /// Ok when the token's scopes allow `action` on `endpoint` (anonymous callers pass:
    /// what they may see is decided per object), else 403.
    pub fn allow(&self, endpoint: &str, action: Action) -> Result<(), Refusal> {
        match self.token() {
            Some((_, endpoints, _)) if !endpoints.allows(endpoint, action) => Err(self.deny()),
            _ => Ok(()),
        }
    }

    /// Whether the token's scopes let it read `endpoint` at all (list or retrieve; anonymous
    /// callers may: what they see is decided per object).
    pub fn may_read(&self, endpoint: &str) -> bool {
        self.token().is_none_or(|(_, endpoints, _)| {
            endpoints.allows(endpoint, Action::Retrieve) || endpoints.allows(endpoint, Action::List)
        })
    }

    /// Whether the caller's token covers the event (anonymous callers cover none).
    fn covers(&self, event_id: i64) -> bool {
        self.token()
            .is_some_and(|(_, _, events)| events.is_none_or(|ids| ids.contains(&event_id)))
    }

    /// What the caller may do on a talk-side event: 404 when the caller may not see it,
    /// 403 for a reviewer who may not see speaker names.
    pub fn role_on(&self, ev: &event::Model) -> Result<Role, Refusal> {
        if self.token().is_some() && !self.covers(ev.id) {
            return Err(not_found());
        }
        let role = self
            .caller
            .as_ref()
            .map(|c| Role::of(c, ev))
            .unwrap_or_default();
        if role.permissions == PermissionSet::NONE && !ev.is_public {
            return Err(not_found());
        }
        self.refuse_anonymised(&role)?;
        Ok(role)
    }

    /// 403 for a caller who only reviews while speaker names are hidden from them (by all
    /// their reviewing teams, or by the event's review phase): the API cannot promise
    /// anonymity through `?expand=`, so it is closed to them, as in pretalx.
    fn refuse_anonymised(&self, role: &Role) -> Result<(), Refusal> {
        if role.is_only_reviewer() && role.hide_speaker_names {
            return Err(self.deny());
        }
        Ok(())
    }

    /// The talk-side event with this slug, when the token allows `action` on `endpoint` and
    /// the caller may read (`may_read`, for `list` and `retrieve`) or otherwise write
    /// (`may_write`); 404, 403 or 401 as [`TalkCaller::event`] and [`TalkEvent::require`],
    /// except that an anonymous caller is 401 on an event that is not public, as pretalx
    /// answers under an event.
    pub async fn event_for(
        &self,
        db: &impl ConnectionTrait,
        slug: &str,
        endpoint: &str,
        action: Action,
        may_read: fn(&TalkEvent) -> bool,
        may_write: fn(&TalkEvent) -> bool,
    ) -> Result<TalkEvent, Refusal> {
        let found = find(db, slug).await?;
        if self.caller.is_none() && !found.is_public {
            return Err(self.deny());
        }
        let ev = self.seen(db, found).await?;
        let permitted = if action.is_read() {
            may_read(&ev)
        } else {
            may_write(&ev)
        };
        ev.require(endpoint, action, permitted)?;
        Ok(ev)
    }

    /// The talk-side event with this slug as the caller sees it: 404 when there is none
    /// or the caller may not see it; 403 for a reviewer who may not see speaker names
    /// (the API cannot promise anonymity through `?expand=`).
    pub async fn event(&self, db: &impl ConnectionTrait, slug: &str) -> Result<TalkEvent, Refusal> {
        self.seen(db, find(db, slug).await?).await
    }

    /// The event as the caller sees it, with its current schedule (and for reviewers the
    /// active review phase, which may hide speaker names), or the error of
    /// [`TalkCaller::role_on`].
    async fn seen(
        &self,
        db: &impl ConnectionTrait,
        event: event::Model,
    ) -> Result<TalkEvent, Refusal> {
        let mut role = self.role_on(&event)?;
        let review_phase = if role.is_reviewer() {
            let phase = review_phases::active(db, event.id).await?;
            role.hide_speaker_names |= review_phases::hides_speaker_names(phase.as_ref());
            self.refuse_anonymised(&role)?;
            phase
        } else {
            None
        };
        let current_schedule =
            super::sql::first(db, &current_schedule_sql("$1"), vec![event.id.into()])
                .await?
                .map(|r| r.try_get::<i64>("", "id"))
                .transpose()?;
        Ok(TalkEvent {
            event,
            role,
            current_schedule,
            review_phase,
            caller: self.clone(),
        })
    }
}

/// The talk-side event with this slug, or 404.
async fn find(db: &impl ConnectionTrait, slug: &str) -> Result<event::Model, Refusal> {
    event::Entity::find()
        .filter(event::Column::Slug.eq(slug))
        .filter(event::Column::TalkEnabled.eq(true))
        .one(db)
        .await?
        .ok_or_else(not_found)
}

/// Whether the event's agenda is public, which lets anyone who sees the event read its
/// schedule, the scheduled sessions, their speakers, rooms, session types and tracks: the
/// event is public and has released a schedule.
pub fn agenda_visible(ev: &TalkEvent) -> bool {
    ev.event.is_public && ev.current_schedule.is_some()
}

/// What the caller may do on one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Role {
    /// The caller's team permissions for the event.
    pub permissions: PermissionSet,
    /// Speaker names are hidden from the caller as a reviewer: by all their reviewing
    /// teams, or (once the event is found) by its review phase.
    pub hide_speaker_names: bool,
    /// The tracks the caller reviews; empty for all.
    pub review_tracks: Vec<i64>,
}

impl Role {
    fn of(caller: &Caller, ev: &event::Model) -> Self {
        let grants: Vec<_> = caller
            .grants
            .iter()
            .filter(|g| g.organizer.id == ev.organizer_id && g.events.covers(ev.id))
            .collect();
        let reviewing: Vec<_> = grants
            .iter()
            .filter(|g| g.permissions.has(Permission::Review))
            .collect();
        Self {
            permissions: grants
                .iter()
                .fold(PermissionSet::NONE, |acc, g| acc.union(g.permissions)),
            hide_speaker_names: !reviewing.is_empty()
                && reviewing.iter().all(|g| g.review.hide_speaker_names),
            review_tracks: if reviewing.iter().any(|g| g.review.tracks.is_empty()) {
                Vec::new()
            } else {
                reviewing
                    .iter()
                    .flat_map(|g| g.review.tracks.iter().copied())
                    .collect()
            },
        }
    }

    /// May change submissions: an organiser of the call for papers.
    pub fn is_orga(&self) -> bool {
        self.permissions.has(Permission::ChangeSubmissions)
    }

    /// Reviews submissions.
    pub fn is_reviewer(&self) -> bool {
        self.permissions.has(Permission::Review)
    }

    /// Reviews without being an organiser of the call for papers.
    pub fn is_only_reviewer(&self) -> bool {
        self.is_reviewer() && !self.is_orga()
    }

    /// Any team permission for the event at all.
    pub fn is_member(&self) -> bool {
        self.permissions != PermissionSet::NONE
    }
}

/// A talk-side event, found and visible to the caller.
#[derive(Debug, Clone)]
pub struct TalkEvent {
    /// The event.
    pub event: event::Model,
    /// What the caller may do there.
    pub role: Role,
    /// The current schedule (the latest released), if any.
    pub current_schedule: Option<i64>,
    /// The active review phase, read for reviewers only (`None` for others, and when the
    /// event's phases have none active).
    pub review_phase: Option<review_phases::Phase>,
    /// Who is calling.
    pub caller: TalkCaller,
}

impl TalkEvent {
    /// The event as an anonymous caller of API version `version` sees it, with its current
    /// schedule.
    pub fn anonymous(
        event: event::Model,
        current_schedule: Option<i64>,
        version: ApiVersion,
    ) -> Self {
        Self {
            event,
            role: Role::default(),
            current_schedule,
            review_phase: None,
            caller: TalkCaller {
                caller: None,
                version,
            },
        }
    }

    /// Ok when the token allows `action` on `endpoint` and `permitted` holds, else 403 (or
    /// 401 for an anonymous caller).
    pub fn require(&self, endpoint: &str, action: Action, permitted: bool) -> Result<(), Refusal> {
        self.caller.allow(endpoint, action)?;
        if permitted {
            Ok(())
        } else {
            Err(self.caller.deny())
        }
    }

    /// The user behind the token, for the activity log; `None` for anonymous callers.
    pub fn user_id(&self) -> Option<i64> {
        self.caller.token().map(|(user, ..)| user)
    }

    /// The version the answer is shaped for.
    pub fn version(&self) -> ApiVersion {
        self.caller.version
    }
}

/// The query of the ID (as `id`) of the event's current schedule, the latest released one,
/// for the event whose ID the SQL expression `event_id` gives (a placeholder, or a column of
/// an outer query).
pub fn current_schedule_sql(event_id: &str) -> String {
    format!(
        "SELECT id FROM talk_schedules WHERE event_id = {event_id} AND version IS NOT NULL \
         ORDER BY published DESC, id DESC LIMIT 1"
    )
}
