//! Giving an event or a date of a series a seating plan (or taking it away), and copying
//! seats to a cloned event.

use std::collections::{HashMap, HashSet};

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde_json::{Map, Value};

use super::{Layout, LayoutError, LayoutSeat, MAX_CATEGORIES, SeatScope, read_layout};
use crate::db::entities::{event, item, seat, seating_plan, subevent};
use crate::domain::refusal::Refusal;
use crate::values::FieldErrors;

/// Rows per multi-row INSERT, well below SQLite's limit on bound parameters.
const INSERT_CHUNK: usize = 500;

/// Why [`assign`] refused.
#[derive(Debug, thiserror::Error)]
pub enum AssignError {
    /// Invalid input, by field (`seating_plan`, `seat_category_mapping`): answer 400.
    #[error("invalid seating")]
    Invalid(FieldErrors),
    /// Storage failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl From<AssignError> for Refusal {
    fn from(err: AssignError) -> Self {
        match err {
            AssignError::Invalid(fields) => Refusal::fields(fields),
            AssignError::Db(e) => e.into(),
        }
    }
}

/// Sets the seating plan and seat category mapping of an event, or of one date of a series
/// (`scope`), and makes its seats match the plan.
///
/// Call it inside the transaction that changes the event or date, whenever `seating_plan`
/// or `seat_category_mapping` is sent. It writes `seating_plan_id` and
/// `seat_category_mapping` of the event or date itself. Rules, each a field error:
///
/// - `seating_plan`: the plan must belong to the organizer; a sold seat must not disappear,
///   so removing the plan (`None`) or switching to a plan without a sold seat's `seat_guid`
///   is refused (as pretix does).
/// - `seat_category_mapping`: keys must be categories of the plan, values IDs of items of
///   this event or `null`. Without a plan the mapping is cleared, whatever was sent.
///
/// Seats whose `seat_guid` is still in the plan keep their row (ID, blocked, sold) and take
/// the plan's names and category; the others are deleted; new ones are added.
pub async fn assign(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    scope: SeatScope,
    plan: Option<i64>,
    mapping: &Map<String, Value>,
) -> Result<(), AssignError> {
    let event_id = scope.event_id;
    event::Entity::find_by_id(event_id)
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .one(db)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("event {event_id}")))?;
    let mut errors = FieldErrors::new();
    let layout = match plan {
        Some(id) => match plan_layout(db, organizer_id, id).await? {
            Some(layout) => layout,
            None => {
                errors.push(
                    "seating_plan",
                    format!("Invalid pk \"{id}\" - object does not exist."),
                );
                return Err(AssignError::Invalid(errors));
            }
        },
        None => Layout::default(),
    };
    if plan.is_some() {
        check_mapping(db, event_id, &layout, mapping, &mut errors).await?;
    }
    // Locked as sellers lock seats (by ID), so that no seat is sold between this check and
    // the sync below.
    let existing = super::seats::of(scope)
        .order_by_asc(seat::Column::Id)
        .lock_exclusive()
        .all(db)
        .await?;
    let wanted: HashMap<&str, &LayoutSeat> =
        layout.seats.iter().map(|s| (s.guid.as_str(), s)).collect();
    if let Some(lost) = existing
        .iter()
        .find(|s| s.sold && !wanted.contains_key(s.seat_guid.as_str()))
    {
        errors.push(
            "seating_plan",
            format!(
                "You can not change the plan since seat \"{}\" is not present in the new plan and is already sold.",
                lost.seat_guid
            ),
        );
    }
    if !errors.is_empty() {
        return Err(AssignError::Invalid(errors));
    }
    sync_seats(db, scope, existing, &layout.seats).await?;
    let mapping = Value::Object(if plan.is_some() {
        mapping.clone()
    } else {
        Map::new()
    });
    match scope.subevent_id {
        None => {
            event::Entity::update_many()
                .col_expr(event::Column::SeatingPlanId, plan.into())
                .col_expr(event::Column::SeatCategoryMapping, mapping.into())
                .filter(event::Column::Id.eq(event_id))
                .exec(db)
                .await?;
        }
        Some(date) => {
            subevent::Entity::update_many()
                .col_expr(subevent::Column::SeatingPlanId, plan.into())
                .col_expr(subevent::Column::SeatCategoryMapping, mapping.into())
                .filter(subevent::Column::Id.eq(date))
                .filter(subevent::Column::EventId.eq(event_id))
                .exec(db)
                .await?;
        }
    }
    Ok(())
}

/// The checked layout of the organizer's plan, locked against changes until the caller's
/// transaction ends; `None` when the organizer has no such plan.
async fn plan_layout(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<Option<Layout>, DbErr> {
    let Some(plan) = seating_plan::Entity::find_by_id(id)
        .filter(seating_plan::Column::OrganizerId.eq(organizer_id))
        .lock_shared()
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    // Layouts are checked when stored; one that fails now is a fault, not bad input.
    match read_layout(plan.layout).await {
        Ok(layout) => Ok(Some(layout)),
        Err(LayoutError::Invalid(e)) => Err(DbErr::Custom(format!(
            "seating plan {id} has an invalid layout: {e}"
        ))),
        Err(LayoutError::Aborted) => Err(DbErr::Custom(format!(
            "seating plan {id}: reading its layout failed"
        ))),
    }
}

async fn check_mapping(
    db: &impl ConnectionTrait,
    event_id: i64,
    layout: &Layout,
    mapping: &Map<String, Value>,
    errors: &mut FieldErrors,
) -> Result<(), DbErr> {
    const FIELD: &str = "seat_category_mapping";
    // Keys are categories, so a longer mapping cannot be right; refusing it first keeps the
    // item lookup below to at most this many values.
    if mapping.len() > MAX_CATEGORIES {
        errors.push(
            FIELD,
            format!("Ensure this field has no more than {MAX_CATEGORIES} elements."),
        );
        return Ok(());
    }
    let categories = layout.category_set();
    let mut item_ids = Vec::new();
    for (category, value) in mapping {
        if !categories.contains(category.as_str()) {
            errors.push(
                FIELD,
                format!("\"{category}\" is not a category of the seating plan."),
            );
        }
        match value {
            Value::Null => {}
            v => match v.as_i64() {
                Some(id) => item_ids.push(id),
                None => errors.push(
                    FIELD,
                    format!("\"{category}\": an item ID or null is required."),
                ),
            },
        }
    }
    if item_ids.is_empty() {
        return Ok(());
    }
    let known: HashSet<i64> = item::Entity::find()
        .filter(item::Column::EventId.eq(event_id))
        .filter(item::Column::Id.is_in(item_ids.clone()))
        .select_only()
        .column(item::Column::Id)
        .into_tuple::<i64>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    for id in item_ids.iter().filter(|id| !known.contains(id)) {
        errors.push(FIELD, format!("Item '{id}' does not exist."));
    }
    Ok(())
}

/// Makes the scope's seat rows match the layout's seats, touching only what differs.
async fn sync_seats(
    db: &impl ConnectionTrait,
    scope: SeatScope,
    existing: Vec<seat::Model>,
    seats: &[LayoutSeat],
) -> Result<(), DbErr> {
    let wanted: HashMap<&str, &LayoutSeat> = seats.iter().map(|s| (s.guid.as_str(), s)).collect();
    let mut kept = HashSet::new();
    let mut gone = Vec::new();
    for row in existing {
        let Some(&s) = wanted.get(row.seat_guid.as_str()) else {
            gone.push(row.id);
            continue;
        };
        kept.insert(s.guid.as_str());
        if !same_place(&row, s) {
            let mut row: seat::ActiveModel = row.into();
            row.name = Set(s.name.clone());
            row.zone_name = Set(s.zone_name.clone());
            row.row_name = Set(s.row_name.clone());
            row.seat_number = Set(s.seat_number.clone());
            row.category = Set(s.category.clone());
            row.update(db).await?;
        }
    }
    for ids in gone.chunks(INSERT_CHUNK) {
        seat::Entity::delete_many()
            .filter(seat::Column::Id.is_in(ids.to_vec()))
            .exec(db)
            .await?;
    }
    let new: Vec<seat::ActiveModel> = seats
        .iter()
        .filter(|s| !kept.contains(s.guid.as_str()))
        .map(|s| new_seat(scope, s, false))
        .collect();
    insert_seats(db, new).await
}

fn same_place(row: &seat::Model, s: &LayoutSeat) -> bool {
    row.name == s.name
        && row.zone_name == s.zone_name
        && row.row_name == s.row_name
        && row.seat_number == s.seat_number
        && row.category == s.category
}

fn new_seat(scope: SeatScope, s: &LayoutSeat, blocked: bool) -> seat::ActiveModel {
    seat::ActiveModel {
        event_id: Set(scope.event_id),
        subevent_id: Set(scope.subevent_id),
        seat_guid: Set(s.guid.clone()),
        name: Set(s.name.clone()),
        zone_name: Set(s.zone_name.clone()),
        row_name: Set(s.row_name.clone()),
        seat_number: Set(s.seat_number.clone()),
        category: Set(s.category.clone()),
        blocked: Set(blocked),
        sold: Set(false),
        ..Default::default()
    }
}

async fn insert_seats(
    db: &impl ConnectionTrait,
    rows: Vec<seat::ActiveModel>,
) -> Result<(), DbErr> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(INSERT_CHUNK).collect();
        seat::Entity::insert_many(chunk)
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Copies the seats of one event to another, for event cloning: same plan positions and
/// blocked flags, nothing sold. Seats the target already has (by `seat_guid`) are left alone.
/// Only the event's own seats are copied: dates are not cloned.
/// The caller copies `seating_plan_id` and `seat_category_mapping` (with items remapped).
pub async fn clone_seats(
    db: &impl ConnectionTrait,
    from_event: i64,
    to_event: i64,
) -> Result<(), DbErr> {
    let present: HashSet<String> = super::seats::of(SeatScope::event(to_event))
        .select_only()
        .column(seat::Column::SeatGuid)
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let source = super::seats::of(SeatScope::event(from_event))
        .order_by_asc(seat::Column::Id)
        .all(db)
        .await?;
    let rows = source
        .into_iter()
        .filter(|s| !present.contains(&s.seat_guid))
        .map(|s| {
            let place = LayoutSeat {
                guid: s.seat_guid,
                name: s.name,
                zone_name: s.zone_name,
                row_name: s.row_name,
                seat_number: s.seat_number,
                category: s.category,
            };
            new_seat(SeatScope::event(to_event), &place, s.blocked)
        })
        .collect();
    insert_seats(db, rows).await
}
