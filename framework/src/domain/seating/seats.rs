//! The seats of an event or of one date of a series: listing and blocking.

use std::collections::HashSet;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Select, Set,
};

use super::SeatScope;
use crate::db::entities::{event, seat, subevent};
use crate::domain::refusal::Refusal;

/// Most seats one bulk block or release may name, as pretix.
const MAX_BULK_SEATS: usize = 10_000;

/// Where the seats a path names are, with the date they belong to: the event's own for an
/// event that is not a series (`date` `None`), a date's in a series. The other way round is
/// 404, as pretix answers.
pub async fn scope_of(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    date: Option<i64>,
) -> Result<(SeatScope, Option<subevent::Model>), Refusal> {
    match (ev.has_subevents, date) {
        (false, None) => Ok((SeatScope::event(ev.id), None)),
        (true, None) => Err(Refusal::not_found(
            "Please use the subevent-specific endpoint",
        )),
        (false, Some(_)) => Err(Refusal::not_found("This event has no subevents")),
        (true, Some(id)) => {
            let found = subevent::Entity::find_by_id(id)
                .filter(subevent::Column::EventId.eq(ev.id))
                .one(db)
                .await?
                .ok_or_else(|| Refusal::not_found("Subevent not found"))?;
            let scope = SeatScope {
                event_id: ev.id,
                subevent_id: Some(id),
            };
            Ok((scope, Some(found)))
        }
    }
}

/// The seats a bulk block or release names: by ID or by identifier.
#[derive(Debug, Clone)]
pub enum SeatPick {
    /// Seat IDs.
    Ids(Vec<i64>),
    /// `seat_guid`s.
    Guids(Vec<String>),
}

/// Blocks or releases every seat picked, all or none: a seat the scope does not have is a
/// field error naming it.
pub async fn set_blocked_many(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    pick: &SeatPick,
    blocked: bool,
) -> Result<(), Refusal> {
    let (field, count) = match pick {
        SeatPick::Ids(ids) => ("ids", ids.len()),
        SeatPick::Guids(guids) => ("seat_guids", guids.len()),
    };
    if count > MAX_BULK_SEATS {
        return Err(Refusal::field(
            field,
            format!("Please do not pass over {MAX_BULK_SEATS} seats."),
        ));
    }
    let found = match pick {
        SeatPick::Ids(ids) => of(scope).filter(seat::Column::Id.is_in(ids.iter().copied())),
        SeatPick::Guids(guids) => {
            of(scope).filter(seat::Column::SeatGuid.is_in(guids.iter().cloned()))
        }
    }
    .all(db)
    .await?;
    let missing = match pick {
        SeatPick::Ids(ids) => {
            let have: HashSet<i64> = found.iter().map(|s| s.id).collect();
            ids.iter().find(|id| !have.contains(id)).map(i64::to_string)
        }
        SeatPick::Guids(guids) => {
            let have: HashSet<&str> = found.iter().map(|s| s.seat_guid.as_str()).collect();
            guids.iter().find(|g| !have.contains(g.as_str())).cloned()
        }
    };
    if let Some(seat) = missing {
        return Err(Refusal::field(
            field,
            format!("The seat '{seat}' does not exist."),
        ));
    }
    seat::Entity::update_many()
        .col_expr(seat::Column::Blocked, blocked.into())
        .filter(seat::Column::Id.is_in(found.iter().map(|s| s.id)))
        .exec(db)
        .await?;
    Ok(())
}

/// Where a seat stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatState {
    /// For sale.
    Available,
    /// Not for sale, and not sold.
    Blocked,
    /// Sold by an order, whether blocked or not.
    Sold,
}

/// The state of a seat: sold wins over blocked.
pub fn state(seat: &seat::Model) -> SeatState {
    if seat.sold {
        SeatState::Sold
    } else if seat.blocked {
        SeatState::Blocked
    } else {
        SeatState::Available
    }
}

/// Which seats of an event to list.
#[derive(Debug, Default, Clone, Copy)]
pub struct SeatFilter {
    /// Only blocked (`true`) or only unblocked (`false`) seats.
    pub blocked: Option<bool>,
}

/// The seats of the scope: those of the date, or the event's own.
pub fn of(scope: SeatScope) -> Select<seat::Entity> {
    let q = seat::Entity::find().filter(seat::Column::EventId.eq(scope.event_id));
    match scope.subevent_id {
        Some(date) => q.filter(seat::Column::SubeventId.eq(date)),
        None => q.filter(seat::Column::SubeventId.is_null()),
    }
}

fn query(scope: SeatScope, filter: SeatFilter) -> Select<seat::Entity> {
    let mut q = of(scope);
    if let Some(blocked) = filter.blocked {
        q = q.filter(seat::Column::Blocked.eq(blocked));
    }
    q
}

/// How many seats of the scope match.
pub async fn count_seats(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    filter: SeatFilter,
) -> Result<u64, DbErr> {
    query(scope, filter).count(db).await
}

/// One page of the scope's seats, in plan order.
pub async fn list_seats(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    filter: SeatFilter,
    limit: u64,
    offset: u64,
) -> Result<Vec<seat::Model>, DbErr> {
    query(scope, filter)
        .order_by_asc(seat::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await
}

/// The scope's seat with this ID.
pub async fn find_seat(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    seat_id: i64,
) -> Result<Option<seat::Model>, DbErr> {
    of(scope).filter(seat::Column::Id.eq(seat_id)).one(db).await
}

/// Blocks or unblocks a seat of the scope; `None` when it has no such seat. A sold seat can
/// be blocked too: it stays sold.
pub async fn set_blocked(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    seat_id: i64,
    blocked: bool,
) -> Result<Option<seat::Model>, DbErr> {
    let Some(found) = find_seat(db, scope, seat_id).await? else {
        return Ok(None);
    };
    let mut row: seat::ActiveModel = found.into();
    row.blocked = Set(blocked);
    Ok(Some(row.update(db).await?))
}
