//! Teams and their tokens.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::grants::{Caller, EventScope};
use super::permissions::{Permission, PermissionSet};
use super::tokens;
use crate::db::entities::{team, team_event, team_token};

/// The permissions a team row grants.
pub fn permissions(t: &team::Model) -> PermissionSet {
    let flags = [
        t.can_create_events,
        t.can_change_teams,
        t.can_change_organizer_settings,
        t.can_manage_gift_cards,
        t.can_change_event_settings,
        t.can_change_items,
        t.can_view_orders,
        t.can_change_orders,
        t.can_checkin_orders,
        t.can_view_vouchers,
        t.can_change_vouchers,
        t.can_change_submissions,
        t.is_reviewer,
    ];
    Permission::ALL
        .into_iter()
        .zip(flags)
        .filter(|(_, on)| *on)
        .map(|(p, _)| p)
        .collect()
}

/// Writes a permission flag onto a team being created or changed.
pub fn set_permission(t: &mut team::ActiveModel, p: Permission, on: bool) {
    let field = match p {
        Permission::CreateEvents => &mut t.can_create_events,
        Permission::ChangeTeams => &mut t.can_change_teams,
        Permission::ChangeOrganizerSettings => &mut t.can_change_organizer_settings,
        Permission::ManageGiftCards => &mut t.can_manage_gift_cards,
        Permission::ChangeEventSettings => &mut t.can_change_event_settings,
        Permission::ChangeItems => &mut t.can_change_items,
        Permission::ViewOrders => &mut t.can_view_orders,
        Permission::ChangeOrders => &mut t.can_change_orders,
        Permission::CheckinOrders => &mut t.can_checkin_orders,
        Permission::ViewVouchers => &mut t.can_view_vouchers,
        Permission::ChangeVouchers => &mut t.can_change_vouchers,
        Permission::ChangeSubmissions => &mut t.can_change_submissions,
        Permission::Review => &mut t.is_reviewer,
    };
    *field = Set(on);
}

/// What a team reaches: its events and its permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The events it covers.
    pub events: EventScope,
    /// What it may do there.
    pub permissions: PermissionSet,
}

impl Reach {
    /// The reach of a team for all events or for these.
    pub fn new(all_events: bool, event_ids: Vec<i64>, permissions: PermissionSet) -> Self {
        Self {
            events: if all_events {
                EventScope::All
            } else {
                EventScope::Only(event_ids)
            },
            permissions,
        }
    }

    /// A team's reach, with its event IDs (read with [`event_ids`]).
    pub fn of(t: &team::Model, event_ids: Vec<i64>) -> Self {
        Self::new(t.all_events, event_ids, permissions(t))
    }

    /// Whether `caller` may create a team reaching this far, change one (both its reach
    /// before and after), delete it or give it a token: a caller never grants more than
    /// it holds (see [`Caller::may_grant`]).
    pub fn within(&self, caller: &Caller, organizer_id: i64) -> bool {
        caller.may_grant(organizer_id, &self.events, self.permissions)
    }
}

/// The reach of a stored team.
pub async fn reach(db: &impl ConnectionTrait, t: &team::Model) -> Result<Reach, sea_orm::DbErr> {
    Ok(Reach::of(t, event_ids(db, t.id).await?))
}

/// A new team row with the given permissions, not yet saved.
pub fn new_team(
    organizer_id: i64,
    name: &str,
    all_events: bool,
    perms: PermissionSet,
) -> team::ActiveModel {
    let mut t = team::ActiveModel {
        organizer_id: Set(organizer_id),
        name: Set(name.to_owned()),
        all_events: Set(all_events),
        ..Default::default()
    };
    for p in Permission::ALL {
        set_permission(&mut t, p, perms.has(p));
    }
    t
}

/// The tracks a team's reviewers are limited to; empty for all.
pub async fn track_ids(
    db: &impl ConnectionTrait,
    team_id: i64,
) -> Result<Vec<i64>, sea_orm::DbErr> {
    let rows = db
        .query_all_raw(sea_orm::Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT track_id FROM team_tracks WHERE team_id = $1 ORDER BY track_id",
            [team_id.into()],
        ))
        .await?;
    rows.iter().map(|r| r.try_get("", "track_id")).collect()
}

/// The events of a team without `all_events`.
pub async fn event_ids(
    db: &impl ConnectionTrait,
    team_id: i64,
) -> Result<Vec<i64>, sea_orm::DbErr> {
    Ok(team_event::Entity::find()
        .filter(team_event::Column::TeamId.eq(team_id))
        .order_by_asc(team_event::Column::EventId)
        .all(db)
        .await?
        .into_iter()
        .map(|r| r.event_id)
        .collect())
}

/// Replaces the event list of a team.
pub async fn set_event_ids(
    db: &impl ConnectionTrait,
    team_id: i64,
    events: &[i64],
) -> Result<(), sea_orm::DbErr> {
    team_event::Entity::delete_many()
        .filter(team_event::Column::TeamId.eq(team_id))
        .exec(db)
        .await?;
    for chunk in events.chunks(CHUNK) {
        team_event::Entity::insert_many(chunk.iter().map(|&event_id| team_event::ActiveModel {
            team_id: Set(team_id),
            event_id: Set(event_id),
        }))
        .exec(db)
        .await?;
    }
    Ok(())
}

/// Values per statement (rows of an insert, entries of an `IN` list): far below what a
/// statement may bind (32,766 values on SQLite, 65,535 on PostgreSQL), however many events a
/// team lists.
const CHUNK: usize = 1_000;

/// Creates a token for a team; returns the row and the token itself, which is not stored.
pub async fn create_token(
    db: &impl ConnectionTrait,
    team_id: i64,
    name: &str,
) -> Result<(team_token::Model, String), sea_orm::DbErr> {
    let token = tokens::generate();
    let row = team_token::ActiveModel {
        team_id: Set(team_id),
        name: Set(name.to_owned()),
        token_hash: Set(tokens::hash(&token)),
        active: Set(true),
        created: Set(crate::values::now()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((row, token))
}

/// The event slugs of each of the given teams, in one query.
pub async fn event_slugs(
    db: &impl ConnectionTrait,
    team_ids: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<String>>, sea_orm::DbErr> {
    use crate::db::entities::event;
    use sea_orm::QuerySelect;
    let mut out: std::collections::HashMap<i64, Vec<String>> = std::collections::HashMap::new();
    if team_ids.is_empty() {
        return Ok(out);
    }
    let links = team_event::Entity::find()
        .filter(team_event::Column::TeamId.is_in(team_ids.iter().copied()))
        .all(db)
        .await?;
    // A page of teams may list many events between them: read their slugs in chunks.
    let event_ids: Vec<i64> = links
        .iter()
        .map(|l| l.event_id)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut events: std::collections::HashMap<i64, String> = std::collections::HashMap::new();
    for chunk in event_ids.chunks(CHUNK) {
        events.extend(
            event::Entity::find()
                .filter(event::Column::Id.is_in(chunk.iter().copied()))
                .select_only()
                .column(event::Column::Id)
                .column(event::Column::Slug)
                .into_tuple::<(i64, String)>()
                .all(db)
                .await?,
        );
    }
    for link in links {
        if let Some(slug) = events.get(&link.event_id) {
            out.entry(link.team_id).or_default().push(slug.clone());
        }
    }
    for slugs in out.values_mut() {
        slugs.sort();
    }
    Ok(out)
}

/// The IDs of the organizer's events with these slugs; `Err` lists the slugs not found.
pub async fn resolve_event_slugs(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    slugs: &[String],
) -> Result<Result<Vec<i64>, Vec<String>>, sea_orm::DbErr> {
    use crate::db::entities::event;
    use sea_orm::QuerySelect;
    let distinct: Vec<&String> = slugs
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut found: Vec<(i64, String)> = Vec::new();
    for chunk in distinct.chunks(CHUNK) {
        found.extend(
            event::Entity::find()
                .filter(event::Column::OrganizerId.eq(organizer_id))
                .filter(event::Column::Slug.is_in(chunk.iter().map(|s| s.as_str())))
                .select_only()
                .column(event::Column::Id)
                .column(event::Column::Slug)
                .into_tuple::<(i64, String)>()
                .all(db)
                .await?,
        );
    }
    let known: std::collections::HashSet<&str> = found.iter().map(|(_, f)| f.as_str()).collect();
    let missing: Vec<String> = slugs
        .iter()
        .filter(|s| !known.contains(s.as_str()))
        .cloned()
        .collect();
    Ok(if missing.is_empty() {
        Ok(found.into_iter().map(|(id, _)| id).collect())
    } else {
        Err(missing)
    })
}

/// `$first, $first+1, ...`: `count` numbered placeholders.
fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reviewer track limits of each of the given teams (track IDs in order), in one query
/// per [`CHUNK`] teams; teams without a limit are absent.
pub async fn track_ids_of(
    db: &impl ConnectionTrait,
    team_ids: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<i64>>, sea_orm::DbErr> {
    let mut out: std::collections::HashMap<i64, Vec<i64>> = std::collections::HashMap::new();
    for chunk in team_ids.chunks(CHUNK) {
        let sql = format!(
            "SELECT team_id, track_id FROM team_tracks WHERE team_id IN ({}) \
             ORDER BY team_id, track_id",
            placeholders(1, chunk.len())
        );
        let rows = db
            .query_all_raw(sea_orm::Statement::from_sql_and_values(
                db.get_database_backend(),
                sql,
                chunk.iter().map(|&id| id.into()),
            ))
            .await?;
        for row in rows {
            let team: i64 = row.try_get("", "team_id")?;
            out.entry(team)
                .or_default()
                .push(row.try_get("", "track_id")?);
        }
    }
    Ok(out)
}

/// The talk-side tracks among `track_ids` that belong to events of the organizer, for a
/// team's reviewer track limit; `Err` lists the IDs that do not (unknown, or another
/// organizer's).
pub async fn resolve_track_ids(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    track_ids: &[i64],
) -> Result<Result<Vec<i64>, Vec<i64>>, sea_orm::DbErr> {
    let distinct: Vec<i64> = track_ids
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut found = std::collections::BTreeSet::new();
    for chunk in distinct.chunks(CHUNK) {
        let sql = format!(
            "SELECT t.id FROM talk_tracks t JOIN events e ON e.id = t.event_id \
             WHERE e.organizer_id = $1 AND t.id IN ({})",
            placeholders(2, chunk.len())
        );
        let values = std::iter::once(organizer_id.into()).chain(chunk.iter().map(|&id| id.into()));
        let rows = db
            .query_all_raw(sea_orm::Statement::from_sql_and_values(
                db.get_database_backend(),
                sql,
                values,
            ))
            .await?;
        for row in rows {
            found.insert(row.try_get::<i64>("", "id")?);
        }
    }
    let missing: Vec<i64> = distinct
        .iter()
        .copied()
        .filter(|id| !found.contains(id))
        .collect();
    Ok(if missing.is_empty() {
        Ok(distinct)
    } else {
        Err(missing)
    })
}

/// Replaces the reviewer track limit of a team (empty: all tracks).
pub async fn set_track_ids(
    db: &impl ConnectionTrait,
    team_id: i64,
    track_ids: &[i64],
) -> Result<(), sea_orm::DbErr> {
    crate::db::execute(
        db,
        "DELETE FROM team_tracks WHERE team_id = $1",
        [team_id.into()],
    )
    .await?;
    let distinct: Vec<i64> = track_ids
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for chunk in distinct.chunks(CHUNK) {
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| format!("($1, ${})", i + 2))
            .collect();
        let sql = format!(
            "INSERT INTO team_tracks (team_id, track_id) VALUES {}",
            rows.join(", ")
        );
        let values = std::iter::once(team_id.into()).chain(chunk.iter().map(|&id| id.into()));
        crate::db::execute(db, &sql, values).await?;
    }
    Ok(())
}
