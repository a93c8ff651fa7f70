//! Team API tokens as a signed-in person keeps them on the account page, as pretix's team
//! pages do: the tokens of every team they may manage, a new one made (and shown once) and
//! one revoked. A team is theirs to manage when they may change teams at its organizer and
//! the team reaches no further than they do ([`Reach::within`]): the rule the API's team
//! token paths follow, so the page never gives more than the API would.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, Set,
};

use crate::db::entities::{team, team_token};
use crate::domain::grants::Caller;
use crate::domain::permissions::Permission;
use crate::domain::teams;

/// Tokens listed per team, active ones first, each newest first; the rest are counted, not
/// listed.
pub const LISTED_PER_TEAM: i64 = 50;

/// Longest token name, as the API allows.
pub const MAX_NAME_LEN: usize = 190;

/// A team the caller may manage, with its latest tokens.
#[derive(Debug, Clone)]
pub struct ManagedTeam {
    /// The team.
    pub team: team::Model,
    /// Its organizer's name.
    pub organizer: String,
    /// Its tokens, active ones first, each newest first (at most [`LISTED_PER_TEAM`]).
    pub tokens: Vec<team_token::Model>,
    /// How many tokens it has in all.
    pub total: i64,
}

/// Why a token was not made or revoked.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The team or token is unknown, or not the caller's to manage (they look the same).
    NotYours,
    /// The name is empty, too long, or holds control characters.
    Name(String),
}

/// Whether `caller` may manage `t`'s tokens.
pub async fn may_manage(
    db: &impl ConnectionTrait,
    caller: &Caller,
    t: &team::Model,
) -> Result<bool, DbErr> {
    let changes_teams = caller
        .grants
        .iter()
        .any(|g| g.organizer.id == t.organizer_id && g.permissions.has(Permission::ChangeTeams));
    Ok(changes_teams && teams::reach(db, t).await?.within(caller, t.organizer_id))
}

/// The teams `caller` may manage, by organizer and name, with their newest tokens.
pub async fn managed(
    db: &impl ConnectionTrait,
    caller: &Caller,
) -> Result<Vec<ManagedTeam>, DbErr> {
    let organizers: Vec<i64> = caller
        .grants
        .iter()
        .filter(|g| g.permissions.has(Permission::ChangeTeams))
        .map(|g| g.organizer.id)
        .collect();
    if organizers.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for t in team::Entity::find()
        .filter(team::Column::OrganizerId.is_in(organizers))
        .order_by_asc(team::Column::OrganizerId)
        .order_by_asc(team::Column::Name)
        .order_by_asc(team::Column::Id)
        .all(db)
        .await?
    {
        if may_manage(db, caller, &t).await? {
            let organizer = caller
                .organizers()
                .into_iter()
                .find(|o| o.id == t.organizer_id)
                .map(|o| o.name.clone())
                .unwrap_or_default();
            let (tokens, total) = newest_tokens(db, t.id).await?;
            found.push(ManagedTeam {
                team: t,
                organizer,
                tokens,
                total,
            });
        }
    }
    Ok(found)
}

/// A team's first [`LISTED_PER_TEAM`] tokens (active first, each newest first) and how many it
/// has.
async fn newest_tokens(
    db: &impl ConnectionTrait,
    team_id: i64,
) -> Result<(Vec<team_token::Model>, i64), DbErr> {
    let tokens = team_token::Entity::find()
        .filter(team_token::Column::TeamId.eq(team_id))
        .order_by_desc(team_token::Column::Active)
        .order_by_desc(team_token::Column::Id)
        .paginate(db, LISTED_PER_TEAM as u64);
    let total = tokens.num_items().await? as i64;
    Ok((tokens.fetch_page(0).await?, total))
}

/// The name a token is given, trimmed; refused when empty, too long or with control
/// characters.
pub fn clean_name(name: &str) -> Result<String, Refused> {
    let name = name.trim();
    if name.is_empty() {
        return Err(Refused::Name("Give the token a name.".to_owned()));
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Err(Refused::Name(format!(
            "The name is too long ({MAX_NAME_LEN} characters at most)."
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Refused::Name(
            "The name may not contain control characters.".to_owned(),
        ));
    }
    Ok(name.to_owned())
}

/// A token just made.
#[derive(Debug)]
pub struct Made {
    /// Its team.
    pub team: team::Model,
    /// Its row.
    pub row: team_token::Model,
    /// The token itself: not stored, shown now or never.
    pub token: String,
}

/// Makes a token for the team when `caller` may manage it: the check and the new token in
/// one transaction.
pub async fn create(
    db: &DatabaseConnection,
    caller: &Caller,
    team_id: i64,
    name: &str,
) -> Result<Result<Made, Refused>, DbErr> {
    let name = match clean_name(name) {
        Ok(name) => name,
        Err(refused) => return Ok(Err(refused)),
    };
    let txn = crate::db::begin_write(db).await?;
    let Some(t) = team::Entity::find_by_id(team_id).one(&txn).await? else {
        return Ok(Err(Refused::NotYours));
    };
    if !may_manage(&txn, caller, &t).await? {
        return Ok(Err(Refused::NotYours));
    }
    let (row, token) = teams::create_token(&txn, t.id, &name).await?;
    crate::db::commit(txn).await?;
    Ok(Ok(Made {
        team: t,
        row,
        token,
    }))
}

/// Revokes a token of a team `caller` may manage, in one transaction: it stops working at
/// once. Revoking a revoked token changes nothing.
pub async fn revoke(
    db: &DatabaseConnection,
    caller: &Caller,
    token_id: i64,
) -> Result<Result<team_token::Model, Refused>, DbErr> {
    let txn = crate::db::begin_write(db).await?;
    let Some(token) = team_token::Entity::find_by_id(token_id).one(&txn).await? else {
        return Ok(Err(Refused::NotYours));
    };
    let Some(t) = team::Entity::find_by_id(token.team_id).one(&txn).await? else {
        return Ok(Err(Refused::NotYours));
    };
    if !may_manage(&txn, caller, &t).await? {
        return Ok(Err(Refused::NotYours));
    }
    if !token.active {
        return Ok(Ok(token));
    }
    let mut row: team_token::ActiveModel = token.into();
    row.active = Set(false);
    let revoked = row.update(&txn).await?;
    crate::db::commit(txn).await?;
    Ok(Ok(revoked))
}
