//! Who is on a team: its members (users) and the invitations by e-mail that make more.
//!
//! Inviting an address that has an account adds that user at once, as pretix does; any
//! other address gets a mail with a link that carries a token (only its hash is stored).
//! Whoever opens the link signed in, or signs up on its page, joins the team; the invitation
//! is used up then. Callers of the API check the reach rule before: adding someone to a team
//! grants them what the team holds.

use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Select, Set,
};

use super::mail::{self, Mail};
use super::{tokens, users};
use crate::db::entities::{organizer, team, team_invite, team_member, user};

/// The users on the team.
fn on_team(team_id: i64) -> Select<user::Entity> {
    user::Entity::find().filter(
        user::Column::Id.in_subquery(
            Query::select()
                .column(team_member::Column::UserId)
                .from(team_member::Entity)
                .and_where(team_member::Column::TeamId.eq(team_id))
                .to_owned(),
        ),
    )
}

/// The team's members, by e-mail address.
pub async fn members(db: &impl ConnectionTrait, team_id: i64) -> Result<Vec<user::Model>, DbErr> {
    on_team(team_id)
        .order_by_asc(user::Column::Email)
        .order_by_asc(user::Column::Id)
        .all(db)
        .await
}

/// A member of the team.
pub async fn member(
    db: &impl ConnectionTrait,
    team_id: i64,
    user_id: i64,
) -> Result<Option<user::Model>, DbErr> {
    on_team(team_id)
        .filter(user::Column::Id.eq(user_id))
        .one(db)
        .await
}

/// Takes the user off the team; whether they were on it.
pub async fn remove(db: &impl ConnectionTrait, team_id: i64, user_id: i64) -> Result<bool, DbErr> {
    let done = team_member::Entity::delete_many()
        .filter(team_member::Column::TeamId.eq(team_id))
        .filter(team_member::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    Ok(done.rows_affected > 0)
}

/// The team's open invitations, by e-mail address.
pub async fn invites(
    db: &impl ConnectionTrait,
    team_id: i64,
) -> Result<Vec<team_invite::Model>, DbErr> {
    team_invite::Entity::find()
        .filter(team_invite::Column::TeamId.eq(team_id))
        .order_by_asc(team_invite::Column::Email)
        .order_by_asc(team_invite::Column::Id)
        .all(db)
        .await
}

/// An open invitation of the team.
pub async fn invite_of(
    db: &impl ConnectionTrait,
    team_id: i64,
    id: i64,
) -> Result<Option<team_invite::Model>, DbErr> {
    team_invite::Entity::find_by_id(id)
        .filter(team_invite::Column::TeamId.eq(team_id))
        .one(db)
        .await
}

/// Withdraws an invitation: its link stops working.
pub async fn withdraw(db: &impl ConnectionTrait, invite: team_invite::Model) -> Result<(), DbErr> {
    team_invite::Entity::delete_by_id(invite.id)
        .exec(db)
        .await?;
    Ok(())
}

/// What an invitation by e-mail did.
#[derive(Debug)]
pub enum Invited {
    /// The address has an account: the user is a member now.
    Member(user::Model),
    /// An invitation was mailed.
    Invite(team_invite::Model),
}

/// Why an address was not invited (pretix's messages).
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    /// The address is not one.
    #[error("Enter a valid email address.")]
    InvalidEmail,
    /// The user is a member already.
    #[error("This user already has permissions for this team.")]
    AlreadyMember,
    /// The address has an open invitation to the team.
    #[error("This user already has been invited for this team.")]
    AlreadyInvited,
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Invites `email` to the team: adds the user with that address, or queues a mail with a
/// link to `{public_url}/invite/{token}` (in `txn`, so the mail exists once it commits).
pub async fn invite(
    txn: &impl ConnectionTrait,
    team: &team::Model,
    email: &str,
    public_url: &str,
) -> Result<Invited, InviteError> {
    let email = users::normalize_email(email);
    if !users::is_valid_email(&email) {
        return Err(InviteError::InvalidEmail);
    }
    if let Some(user) = users::find_by_email(txn, &email).await? {
        if member(txn, team.id, user.id).await?.is_some() {
            return Err(InviteError::AlreadyMember);
        }
        users::add_to_team(txn, user.id, team.id).await?;
        return Ok(Invited::Member(user));
    }
    let token = tokens::generate();
    let saved = team_invite::ActiveModel {
        team_id: Set(team.id),
        email: Set(email.clone()),
        token_hash: Set(tokens::hash(&token)),
        created: Set(crate::values::now()),
        ..Default::default()
    }
    .insert(txn)
    .await
    .map_err(|e| {
        if crate::db::is_unique_violation(&e) {
            InviteError::AlreadyInvited
        } else {
            InviteError::Db(e)
        }
    })?;
    let organizer = organizer::Entity::find_by_id(team.organizer_id)
        .one(txn)
        .await?
        .map(|o| o.name)
        .unwrap_or_default();
    let url = format!("{}/invite/{token}", public_url.trim_end_matches('/'));
    let body = format!(
        "Hello,\n\nyou have been invited to join the team \"{team}\" of {organizer}.\n\n\
         Open this link to accept the invitation (signed in, or creating an account):\n{url}\n\n\
         If you did not expect this invitation, you can ignore this mail.\n",
        team = team.name,
    );
    let subject = format!("Invitation to join {organizer}");
    mail::queue(
        txn,
        Mail::text(email, subject, body).about(Some(team.organizer_id), None),
    )
    .await?;
    Ok(Invited::Invite(saved))
}

/// An open invitation as its page shows it.
#[derive(Debug, Clone)]
pub struct OpenInvite {
    /// The invitation.
    pub invite: team_invite::Model,
    /// The team's name.
    pub team: String,
    /// The organizer's name.
    pub organizer: String,
}

/// The open invitation whose link carries `token`.
pub async fn open(db: &impl ConnectionTrait, token: &str) -> Result<Option<OpenInvite>, DbErr> {
    let Some(invite) = team_invite::Entity::find()
        .filter(team_invite::Column::TokenHash.eq(tokens::hash(token)))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let Some(team) = team::Entity::find_by_id(invite.team_id).one(db).await? else {
        return Ok(None);
    };
    let organizer = organizer::Entity::find_by_id(team.organizer_id)
        .one(db)
        .await?
        .map(|o| o.name)
        .unwrap_or_default();
    Ok(Some(OpenInvite {
        invite,
        team: team.name,
        organizer,
    }))
}

/// Uses up the invitation: the user joins its team. False when it was used or withdrawn
/// meanwhile (then nothing changes).
pub async fn accept(
    txn: &impl ConnectionTrait,
    invite: &team_invite::Model,
    user_id: i64,
) -> Result<bool, DbErr> {
    let deleted = team_invite::Entity::delete_by_id(invite.id)
        .exec(txn)
        .await?;
    if deleted.rows_affected == 0 {
        return Ok(false);
    }
    users::add_to_team(txn, user_id, invite.team_id).await?;
    Ok(true)
}
