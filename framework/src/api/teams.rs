//! Teams of an organizer and their API tokens: `/api/v1/organizers/{organizer}/teams/`.
//! Everything here needs `can_change_teams`; what changes a team's reach (creating,
//! changing, deleting it, giving or taking its tokens) is limited to what the caller holds
//! ([`Reach::within`]).

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::Tag;
use crate::db::begin_write;
use crate::db::entities::{team, team_token};
use crate::domain::grants::EventScope;
use crate::domain::permissions::names::{self, Level};
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::teams::{self, Reach};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, FieldErrors, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

macro_rules! permission_objects {
    ($($field:ident => $perm:ident),+ $(,)?) => {
        /// The permission flags of a team.
        #[derive(Object, Default)]
        pub struct TeamPermissions {
            $(
                #[doc = concat!("`", stringify!($field), "`")]
                #[oai(default)]
                pub $field: bool,
            )+
        }

        /// Permission flags to change; absent ones stay as they are.
        #[derive(Object, Default)]
        pub struct TeamPermissionsPatch {
            $(
                #[doc = concat!("`", stringify!($field), "`")]
                pub $field: Option<bool>,
            )+
        }

        impl TeamPermissions {
            fn from_set(set: PermissionSet) -> Self {
                Self { $($field: set.has(Permission::$perm)),+ }
            }

            fn to_set(&self) -> PermissionSet {
                [$((Permission::$perm, self.$field)),+].into_iter().filter(|(_, on)| *on).map(|(p, _)| p).collect()
            }
        }

        impl TeamPermissionsPatch {
            fn changes(&self) -> Vec<(Permission, bool)> {
                [$((Permission::$perm, self.$field)),+].into_iter().filter_map(|(p, v)| v.map(|v| (p, v))).collect()
            }
        }
    };
}

permission_objects! {
    can_create_events => CreateEvents,
    can_change_teams => ChangeTeams,
    can_change_organizer_settings => ChangeOrganizerSettings,
    can_manage_gift_cards => ManageGiftCards,
    can_change_event_settings => ChangeEventSettings,
    can_change_items => ChangeItems,
    can_view_orders => ViewOrders,
    can_change_orders => ChangeOrders,
    can_checkin_orders => CheckinOrders,
    can_view_vouchers => ViewVouchers,
    can_change_vouchers => ChangeVouchers,
    can_change_submissions => ChangeSubmissions,
    is_reviewer => Review,
}

/// A team.
#[derive(Object)]
#[oai(rename = "Team")]
pub struct TeamOut {
    /// Internal ID.
    pub id: i64,
    /// Team name.
    pub name: String,
    /// Whether the team has access to all events.
    pub all_events: bool,
    /// Slugs of the events the team has access to, when not `all_events`.
    pub limit_events: Vec<String>,
    /// IDs of the talk-side tracks the team's reviewers review; empty for all tracks.
    pub limit_tracks: Vec<i64>,
    /// Hides speaker names from the team's reviewers (talk side), whatever the event's
    /// review settings say.
    pub force_hide_speaker_names: bool,
    /// Permission flags.
    #[oai(flatten)]
    pub permissions: TeamPermissions,
    /// The same permissions by pretix 2026's names.
    #[oai(flatten)]
    pub current: PermissionsOut,
}

/// A team's permissions by pretix 2026's names. Teams keep pretix's older flags: each flag
/// stands for the names pretix migrates it to.
#[derive(Object)]
pub struct PermissionsOut {
    /// Every event permission (`event.*`) on the team's events.
    pub all_event_permissions: bool,
    /// The event permissions, when not all.
    pub limit_event_permissions: Vec<String>,
    /// Every organizer permission (`organizer.*`).
    pub all_organizer_permissions: bool,
    /// The organizer permissions, when not all.
    pub limit_organizer_permissions: Vec<String>,
}

impl PermissionsOut {
    fn of(set: PermissionSet) -> Self {
        let names = |level: Level| level.names_of(set).into_iter().map(str::to_owned).collect();
        Self {
            all_event_permissions: Level::Event.holds_all(set),
            limit_event_permissions: names(Level::Event),
            all_organizer_permissions: Level::Organizer.holds_all(set),
            limit_organizer_permissions: names(Level::Organizer),
        }
    }
}

/// Permissions by pretix 2026's names, sent instead of the older flags. A name without a
/// flag of its own here (`organizer.customers:*`, ...) is accepted and not kept; a flag is
/// held when every name pretix checks for it is sent.
#[derive(Object, Default)]
pub struct PermissionsIn {
    /// Every event permission.
    pub all_event_permissions: Option<bool>,
    /// Event permissions (`event.orders:read`, ...), when not all.
    #[oai(validator(max_items = 100, max_length = 100))]
    pub limit_event_permissions: Option<Vec<String>>,
    /// Every organizer permission.
    pub all_organizer_permissions: Option<bool>,
    /// Organizer permissions (`organizer.teams:write`, ...), when not all.
    #[oai(validator(max_items = 100, max_length = 100))]
    pub limit_organizer_permissions: Option<Vec<String>>,
}

impl PermissionsIn {
    /// The flags these fields make of `current` (a new team's: none); `legacy` says whether
    /// older flags were sent too.
    fn resolve(&self, current: PermissionSet, legacy: bool) -> Result<PermissionSet, ApiError> {
        let sent = [
            (
                Level::Event,
                self.all_event_permissions,
                self.limit_event_permissions.as_deref(),
            ),
            (
                Level::Organizer,
                self.all_organizer_permissions,
                self.limit_organizer_permissions.as_deref(),
            ),
        ];
        Ok(names::resolve(&sent, current, legacy)?)
    }
}

fn team_out(t: &team::Model, limit_events: Vec<String>, limit_tracks: Vec<i64>) -> TeamOut {
    TeamOut {
        id: t.id,
        name: t.name.clone(),
        all_events: t.all_events,
        limit_events,
        limit_tracks,
        force_hide_speaker_names: t.force_hide_speaker_names,
        permissions: TeamPermissions::from_set(teams::permissions(t)),
        current: PermissionsOut::of(teams::permissions(t)),
    }
}

/// A new team, or all fields of a team (PUT).
#[derive(Object)]
pub struct TeamCreate {
    /// Team name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// Access to all events.
    #[oai(default)]
    pub all_events: bool,
    /// Slugs of the events the team has access to.
    #[oai(default, validator(max_length = 50, max_items = 1000))]
    pub limit_events: Vec<String>,
    /// IDs of the talk-side tracks the team's reviewers review (tracks of the organizer's
    /// events); empty for all tracks.
    #[oai(default, validator(max_items = 1000))]
    pub limit_tracks: Vec<i64>,
    /// Hides speaker names from the team's reviewers (talk side).
    #[oai(default)]
    pub force_hide_speaker_names: bool,
    /// Permission flags.
    #[oai(flatten)]
    pub permissions: TeamPermissions,
    /// Permissions by pretix 2026's names, instead of the flags.
    #[oai(flatten)]
    pub current: PermissionsIn,
}

impl TeamCreate {
    /// The permissions sent, by flags or by pretix 2026's names.
    fn permission_set(&self) -> Result<PermissionSet, ApiError> {
        let flags = self.permissions.to_set();
        self.current.resolve(flags, names::legacy(flags))
    }
}

/// A partial change of a team.
#[derive(Object)]
pub struct TeamPatch {
    /// Team name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// Access to all events.
    pub all_events: Option<bool>,
    /// Slugs of the events the team has access to.
    #[oai(validator(max_length = 50, max_items = 1000))]
    pub limit_events: Option<Vec<String>>,
    /// IDs of the talk-side tracks the team's reviewers review (tracks of the organizer's
    /// events); empty for all tracks.
    #[oai(validator(max_items = 1000))]
    pub limit_tracks: Option<Vec<i64>>,
    /// Hides speaker names from the team's reviewers (talk side).
    pub force_hide_speaker_names: Option<bool>,
    /// Permission flags.
    #[oai(flatten)]
    pub permissions: TeamPermissionsPatch,
    /// Permissions by pretix 2026's names, instead of the flags.
    #[oai(flatten)]
    pub current: PermissionsIn,
}

/// An API token of a team. The token itself is only in the answer that created it.
#[derive(Object)]
#[oai(rename = "TeamAPIToken")]
pub struct TokenOut {
    /// Internal ID.
    pub id: i64,
    /// Name to recognise the token by.
    pub name: String,
    /// Inactive tokens are refused.
    pub active: bool,
    /// When it was created.
    pub created: Timestamp,
    /// The token; only present right after creation.
    #[oai(skip_serializing_if_is_none)]
    pub token: Option<String>,
}

fn token_out(t: team_token::Model, token: Option<String>) -> TokenOut {
    TokenOut {
        id: t.id,
        name: t.name,
        active: t.active,
        created: t.created.into(),
        token,
    }
}

/// A new token.
#[derive(Object)]
pub struct TokenCreate {
    /// Name to recognise the token by.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
}

/// Team operations.
pub struct TeamsApi;

/// The organizer's team with this ID; 403 for another's or none.
pub(super) async fn find_team(
    state: &AppState,
    organizer_id: i64,
    id: i64,
) -> Result<team::Model, ApiError> {
    team::Entity::find_by_id(id)
        .filter(team::Column::OrganizerId.eq(organizer_id))
        .one(&state.db)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn event_ids(
    state: &AppState,
    organizer_id: i64,
    slugs: &[String],
) -> Result<Vec<i64>, ApiError> {
    FieldErrors::check(crate::domain::overlong_lists(&[(
        "limit_events",
        slugs.len(),
    )]))?;
    teams::resolve_event_slugs(&state.db, organizer_id, slugs)
        .await?
        .map_err(|missing| {
            ApiError::field(
                "limit_events",
                format!("Object with slug={} does not exist.", missing.join(", ")),
            )
        })
}

/// The talk-side tracks with these IDs, which must belong to the organizer's events; 400 on
/// `limit_tracks` naming the others.
async fn track_ids(state: &AppState, organizer_id: i64, ids: &[i64]) -> Result<Vec<i64>, ApiError> {
    FieldErrors::check(crate::domain::overlong_lists(&[(
        "limit_tracks",
        ids.len(),
    )]))?;
    teams::resolve_track_ids(&state.db, organizer_id, ids)
        .await?
        .map_err(|missing| {
            let named: Vec<String> = missing.iter().map(i64::to_string).collect();
            ApiError::field(
                "limit_tracks",
                format!(
                    "Invalid pk \"{}\" - object does not exist.",
                    named.join(", ")
                ),
            )
        })
}

/// 403 unless the caller may give (or change, or take away) each of these reaches.
/// Ok when every reach is within what the caller holds, else 403 saying so.
pub(super) fn within_reach(
    auth: &Auth,
    organizer_id: i64,
    reaches: &[&Reach],
) -> Result<(), ApiError> {
    if reaches.iter().all(|r| r.within(&auth.0, organizer_id)) {
        Ok(())
    } else {
        Err(ApiError::forbidden_because(
            "You may create, change or delete teams, and give or take their tokens and \
             members, only within what you hold: their events among yours (all events only with a team for all events) and \
             their permissions among yours there.",
        ))
    }
}

/// The reach of a team as stored.
pub(super) async fn stored_reach(state: &AppState, t: &team::Model) -> Result<Reach, ApiError> {
    Ok(teams::reach(&state.db, t).await?)
}

async fn show_team(db: &impl ConnectionTrait, t: &team::Model) -> Result<TeamOut, ApiError> {
    let mut slugs = teams::event_slugs(db, &[t.id]).await?;
    let tracks = teams::track_ids(db, t.id).await?;
    Ok(team_out(t, slugs.remove(&t.id).unwrap_or_default(), tracks))
}

/// Inserts or updates a team and, when given, its event list and track limit, in one
/// transaction; gives the team as saved.
async fn save_team(
    state: &AppState,
    row: team::ActiveModel,
    events: Option<Vec<i64>>,
    tracks: Option<Vec<i64>>,
) -> Result<TeamOut, ApiError> {
    let txn = begin_write(&state.db).await?;
    let saved = if row.id.is_not_set() {
        row.insert(&txn).await?
    } else {
        row.update(&txn).await?
    };
    if let Some(events) = events {
        teams::set_event_ids(&txn, saved.id, &events).await?;
    }
    if let Some(tracks) = tracks {
        teams::set_track_ids(&txn, saved.id, &tracks)
            .await
            .map_err(|e| match e.sql_err() {
                // A track deleted since it was checked.
                Some(sea_orm::SqlErr::ForeignKeyConstraintViolation(_)) => {
                    ApiError::field("limit_tracks", "A track of the list was deleted meanwhile.")
                }
                _ => e.into(),
            })?;
    }
    let shown = show_team(&txn, &saved).await?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

#[OpenApi(tag = "Tag::Teams")]
impl TeamsApi {
    /// List teams
    #[oai(path = "/api/v1/organizers/:organizer/teams", method = "get")]
    async fn list_teams(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<TeamOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let query = team::Entity::find()
            .filter(team::Column::OrganizerId.eq(org.organizer.id))
            .order_by_asc(team::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        let ids: Vec<i64> = page.results.iter().map(|t| t.id).collect();
        let mut slugs = teams::event_slugs(&state.db, &ids).await?;
        let mut tracks = teams::track_ids_of(&state.db, &ids).await?;
        Ok(Json(page.map(|t| {
            let events = slugs.remove(&t.id).unwrap_or_default();
            let limit_tracks = tracks.remove(&t.id).unwrap_or_default();
            team_out(&t, events, limit_tracks)
        })))
    }

    /// Show a team
    #[oai(path = "/api/v1/organizers/:organizer/teams/:id", method = "get")]
    async fn get_team(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<TeamOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *id).await?;
        Ok(Json(show_team(&state.db, &t).await?))
    }

    /// Create a team
    ///
    /// Needs `can_change_teams`. A caller gives a team only what it holds: its events among
    /// the caller's (all events only with a team for all events), its permissions among the
    /// caller's on each of them, organizer permissions only when the caller has them. The
    /// same holds for the team before and after a change, for deleting it and for its
    /// tokens.
    #[oai(path = "/api/v1/organizers/:organizer/teams", method = "post")]
    async fn create_team(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<TeamCreate>,
    ) -> WriteResult<Created<TeamOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let new = body.0;
        let permissions = new.permission_set()?;
        let events = event_ids(&state, org.organizer.id, &new.limit_events).await?;
        let tracks = track_ids(&state, org.organizer.id, &new.limit_tracks).await?;
        let after = Reach::new(new.all_events, events.clone(), permissions);
        within_reach(&auth, org.organizer.id, &[&after])?;
        let mut row = teams::new_team(org.organizer.id, &new.name, new.all_events, permissions);
        row.force_hide_speaker_names = Set(new.force_hide_speaker_names);
        Ok(Created::Created(Json(
            save_team(&state, row, Some(events), Some(tracks)).await?,
        )))
    }

    /// Replace a team
    #[oai(path = "/api/v1/organizers/:organizer/teams/:id", method = "put")]
    async fn put_team(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<TeamCreate>,
    ) -> WriteResult<Json<TeamOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let existing = find_team(&state, org.organizer.id, *id).await?;
        let new = body.0;
        let permissions = new.permission_set()?;
        let events = event_ids(&state, org.organizer.id, &new.limit_events).await?;
        let tracks = track_ids(&state, org.organizer.id, &new.limit_tracks).await?;
        let before = stored_reach(&state, &existing).await?;
        let after = Reach::new(new.all_events, events.clone(), permissions);
        within_reach(&auth, org.organizer.id, &[&before, &after])?;
        let mut row = teams::new_team(org.organizer.id, &new.name, new.all_events, permissions);
        row.id = Set(existing.id);
        row.force_hide_speaker_names = Set(new.force_hide_speaker_names);
        Ok(Json(
            save_team(&state, row, Some(events), Some(tracks)).await?,
        ))
    }

    /// Change a team
    #[oai(path = "/api/v1/organizers/:organizer/teams/:id", method = "patch")]
    async fn patch_team(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<TeamPatch>,
    ) -> WriteResult<Json<TeamOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let existing = find_team(&state, org.organizer.id, *id).await?;
        let patch = body.0;
        let events = match &patch.limit_events {
            Some(slugs) => Some(event_ids(&state, org.organizer.id, slugs).await?),
            None => None,
        };
        let tracks = match &patch.limit_tracks {
            Some(ids) => Some(track_ids(&state, org.organizer.id, ids).await?),
            None => None,
        };
        let before = stored_reach(&state, &existing).await?;
        let mut permissions = before.permissions;
        let changes = patch.permissions.changes();
        for &(p, on) in &changes {
            permissions = if on {
                permissions.with(p)
            } else {
                permissions.without(p)
            };
        }
        let legacy = names::legacy(changes.iter().map(|(p, _)| *p).collect());
        let permissions = patch.current.resolve(permissions, legacy)?;
        let after = Reach::new(
            patch.all_events.unwrap_or(existing.all_events),
            match (&events, &before.events) {
                (Some(ids), _) => ids.clone(),
                (None, EventScope::Only(ids)) => ids.clone(),
                (None, EventScope::All) => teams::event_ids(&state.db, existing.id).await?,
            },
            permissions,
        );
        within_reach(&auth, org.organizer.id, &[&before, &after])?;
        let mut row: team::ActiveModel = existing.into();
        if let Some(name) = patch.name {
            row.name = Set(name);
        }
        if let Some(all) = patch.all_events {
            row.all_events = Set(all);
        }
        if let Some(hide) = patch.force_hide_speaker_names {
            row.force_hide_speaker_names = Set(hide);
        }
        for p in Permission::ALL {
            teams::set_permission(&mut row, p, permissions.has(p));
        }
        Ok(Json(save_team(&state, row, events, tracks).await?))
    }

    /// Delete a team
    ///
    /// Its tokens stop working at once.
    #[oai(path = "/api/v1/organizers/:organizer/teams/:id", method = "delete")]
    async fn delete_team(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *id).await?;
        within_reach(&auth, org.organizer.id, &[&stored_reach(&state, &t).await?])?;
        team::Entity::delete_by_id(t.id).exec(&state.db).await?;
        Ok(NoContent::NoContent)
    }

    /// List a team's tokens
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/tokens",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_team_tokens(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<TokenOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *team).await?;
        let query = team_token::Entity::find()
            .filter(team_token::Column::TeamId.eq(t.id))
            .order_by_asc(team_token::Column::Name)
            .order_by_asc(team_token::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(|t| token_out(t, None))))
    }

    /// Show a team's token
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/tokens/:id",
        method = "get"
    )]
    async fn get_team_token(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<TokenOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *team).await?;
        let token = find_token(&state, t.id, *id).await?;
        Ok(Json(token_out(token, None)))
    }

    /// Create a token for a team
    ///
    /// The answer is the only place the token is ever shown.
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/tokens",
        method = "post"
    )]
    async fn create_team_token(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        body: JsonBody<TokenCreate>,
    ) -> WriteResult<Created<TokenOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *team).await?;
        within_reach(&auth, org.organizer.id, &[&stored_reach(&state, &t).await?])?;
        let (row, token) = crate::db::in_transaction(&state.db, async |txn| {
            teams::create_token(txn, t.id, &body.0.name).await
        })
        .await?;
        Ok(Created::Created(Json(token_out(row, Some(token)))))
    }

    /// Deactivate a team's token
    ///
    /// The token stops working at once; the answer is the deactivated token.
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/tokens/:id",
        method = "delete"
    )]
    async fn delete_team_token(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<Json<TokenOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeTeams))?;
        let t = find_team(&state, org.organizer.id, *team).await?;
        within_reach(&auth, org.organizer.id, &[&stored_reach(&state, &t).await?])?;
        let token = find_token(&state, t.id, *id).await?;
        let mut row: team_token::ActiveModel = token.into();
        row.active = Set(false);
        Ok(Json(token_out(row.update(&state.db).await?, None)))
    }
}

async fn find_token(
    state: &AppState,
    team_id: i64,
    id: i64,
) -> Result<team_token::Model, ApiError> {
    team_token::Entity::find_by_id(id)
        .filter(team_token::Column::TeamId.eq(team_id))
        .one(&state.db)
        .await?
        .ok_or_else(ApiError::forbidden)
}
