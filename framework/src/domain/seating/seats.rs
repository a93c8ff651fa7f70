//! The seats of an event: listing and blocking.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Select, Set,
};

use crate::db::entities::seat;

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

fn query(event_id: i64, filter: SeatFilter) -> Select<seat::Entity> {
    let mut q = seat::Entity::find().filter(seat::Column::EventId.eq(event_id));
    if let Some(blocked) = filter.blocked {
        q = q.filter(seat::Column::Blocked.eq(blocked));
    }
    q
}

/// How many seats of the event match.
pub async fn count_seats(
    db: &impl ConnectionTrait,
    event_id: i64,
    filter: SeatFilter,
) -> Result<u64, DbErr> {
    query(event_id, filter).count(db).await
}

/// One page of the event's seats, in plan order.
pub async fn list_seats(
    db: &impl ConnectionTrait,
    event_id: i64,
    filter: SeatFilter,
    limit: u64,
    offset: u64,
) -> Result<Vec<seat::Model>, DbErr> {
    query(event_id, filter)
        .order_by_asc(seat::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await
}

/// The event's seat with this ID.
pub async fn find_seat(
    db: &impl ConnectionTrait,
    event_id: i64,
    seat_id: i64,
) -> Result<Option<seat::Model>, DbErr> {
    seat::Entity::find_by_id(seat_id)
        .filter(seat::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// Blocks or unblocks a seat of the event; `None` when the event has no such seat. A sold
/// seat can be blocked too: it stays sold.
pub async fn set_blocked(
    db: &impl ConnectionTrait,
    event_id: i64,
    seat_id: i64,
    blocked: bool,
) -> Result<Option<seat::Model>, DbErr> {
    let Some(found) = find_seat(db, event_id, seat_id).await? else {
        return Ok(None);
    };
    let mut row: seat::ActiveModel = found.into();
    row.blocked = Set(blocked);
    Ok(Some(row.update(db).await?))
}
