//! Who is on a team: `/api/v1/organizers/{organizer}/teams/{team}/members/` (list, remove)
//! and `.../invites/` (invite by e-mail, list, withdraw). Everything here needs
//! `can_change_teams`; giving or taking members is limited to teams within what the caller
//! holds, as giving tokens is.

use poem::Request;
use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::json;

use super::Tag;
use super::teams::{find_team, stored_reach, within_reach};
use crate::db::entities::{team, team_invite, user};
use crate::db::{begin_write, commit};
use crate::domain::permissions::Permission;
use crate::domain::team_members::{self, InviteError, Invited};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;

/// A member of a team.
#[derive(Object)]
#[oai(rename = "TeamMember")]
pub struct MemberOut {
    /// The user's ID.
    pub id: i64,
    /// E-mail address.
    pub email: String,
    /// Full name.
    pub fullname: String,
    /// Whether the user must sign in with a second factor (never: not offered).
    pub require_2fa: bool,
}

fn member_out(u: &user::Model) -> MemberOut {
    MemberOut {
        id: u.id,
        email: u.email.clone(),
        fullname: u.fullname.clone(),
        require_2fa: false,
    }
}

/// An invitation to join a team.
#[derive(Object)]
#[oai(rename = "TeamInvite")]
pub struct InviteOut {
    /// Internal ID; `null` when the address had an account and its user joined at once.
    #[oai(nullable)]
    pub id: Option<i64>,
    /// The address invited.
    pub email: String,
}

fn invite_out(i: &team_invite::Model) -> InviteOut {
    InviteOut {
        id: Some(i.id),
        email: i.email.clone(),
    }
}

/// A new invitation.
#[derive(Object)]
pub struct InviteCreate {
    /// The address to invite.
    #[oai(validator(max_length = 254))]
    pub email: String,
}

/// The team, when the caller may change teams of the organizer.
async fn team_of(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    team: i64,
) -> Result<team::Model, ApiError> {
    let org = auth.0.organizer(organizer, Some(Permission::ChangeTeams))?;
    find_team(state, org.organizer.id, team).await
}

/// The team, when the caller may also give or take what it holds.
async fn team_within_reach(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    team: i64,
) -> Result<team::Model, ApiError> {
    let t = team_of(state, auth, organizer, team).await?;
    within_reach(auth, t.organizer_id, &[&stored_reach(state, &t).await?])?;
    Ok(t)
}

/// Team member and invitation operations.
pub struct TeamMembersApi;

#[OpenApi(tag = "Tag::Teams")]
impl TeamMembersApi {
    /// List a team's members
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/members",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_team_members(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<MemberOut>>> {
        let t = team_of(&state, &auth, &organizer, *team).await?;
        let members = team_members::members(&state.db, t.id).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(page.page_of(&members, member_out)?))
    }

    /// Show a team's member
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/members/:id",
        method = "get"
    )]
    async fn get_team_member(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<MemberOut>> {
        let t = team_of(&state, &auth, &organizer, *team).await?;
        let found = team_members::member(&state.db, t.id, *id).await?;
        Ok(Json(member_out(&found.ok_or_else(ApiError::forbidden)?)))
    }

    /// Remove a member from a team
    ///
    /// The user loses what the team gave them at once; the account stays.
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/members/:id",
        method = "delete"
    )]
    async fn remove_team_member(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let t = team_within_reach(&state, &auth, &organizer, *team).await?;
        if !team_members::remove(&state.db, t.id, *id).await? {
            return Err(ApiError::forbidden().into());
        }
        Ok(NoContent::NoContent)
    }

    /// List a team's invitations
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/invites",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_team_invites(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<InviteOut>>> {
        let t = team_of(&state, &auth, &organizer, *team).await?;
        let invites = team_members::invites(&state.db, t.id).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(page.page_of(&invites, invite_out)?))
    }

    /// Show a team's invitation
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/invites/:id",
        method = "get"
    )]
    async fn get_team_invite(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<InviteOut>> {
        let t = team_of(&state, &auth, &organizer, *team).await?;
        let found = team_members::invite_of(&state.db, t.id, *id).await?;
        Ok(Json(invite_out(&found.ok_or_else(ApiError::forbidden)?)))
    }

    /// Invite someone to a team
    ///
    /// An address with an account joins at once (the answer's `id` is `null`); any other
    /// gets a mail with a link to accept the invitation, signed in or with a new account.
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/invites",
        method = "post"
    )]
    async fn create_team_invite(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        body: JsonBody<InviteCreate>,
    ) -> WriteResult<Created<InviteOut>> {
        let t = team_within_reach(&state, &auth, &organizer, *team).await?;
        let txn = begin_write(&state.db).await?;
        let invited = match team_members::invite(&txn, &t, &body.0.email, &state.public_url).await {
            Ok(invited) => invited,
            Err(InviteError::Db(e)) => return Err(ApiError::from(e).into()),
            Err(InviteError::InvalidEmail) => {
                return Err(ApiError::field("email", InviteError::InvalidEmail.to_string()).into());
            }
            Err(refused) => {
                return Err(ApiError::with_body(
                    StatusCode::BAD_REQUEST,
                    json!([refused.to_string()]),
                )
                .into());
            }
        };
        commit(txn).await?;
        Ok(Created::Created(Json(match invited {
            Invited::Member(user) => InviteOut {
                id: None,
                email: user.email,
            },
            Invited::Invite(invite) => {
                state.mailer.wake();
                invite_out(&invite)
            }
        })))
    }

    /// Withdraw an invitation
    ///
    /// Its link stops working.
    #[oai(
        path = "/api/v1/organizers/:organizer/teams/:team/invites/:id",
        method = "delete"
    )]
    async fn delete_team_invite(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        team: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let t = team_within_reach(&state, &auth, &organizer, *team).await?;
        let found = team_members::invite_of(&state.db, t.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        team_members::withdraw(&state.db, found).await?;
        Ok(NoContent::NoContent)
    }
}
