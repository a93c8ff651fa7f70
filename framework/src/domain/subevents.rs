//! Dates of an event series (sub-events): their checks, filters and item price overrides.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr,
    EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
};

use serde_json::{Map, Value};

use crate::db::begin_write;
use crate::db::entities::{
    cart_position, event, item, order_position, quota, seat, subevent, subevent_item_price,
    voucher, waiting_list_entry,
};
use crate::domain::refusal::Refusal;
use crate::domain::seating::{self, SeatScope};

/// Every writable field of a sub-event.
#[derive(Debug, Clone, PartialEq)]
pub struct SubEventFields {
    /// Multi-language name (stored JSON object).
    pub name: serde_json::Value,
    /// Whether its shop is available.
    pub active: bool,
    /// Start.
    pub date_from: DateTime<Utc>,
    /// End.
    pub date_to: Option<DateTime<Utc>>,
    /// Admission.
    pub date_admission: Option<DateTime<Utc>>,
    /// Shop opens.
    pub presale_start: Option<DateTime<Utc>>,
    /// Shop closes.
    pub presale_end: Option<DateTime<Utc>>,
    /// Multi-language location (stored JSON object).
    pub location: Option<serde_json::Value>,
    /// Values of organizer meta properties.
    pub meta_data: BTreeMap<String, String>,
    /// Item ID to price in cents, for items priced differently on this date.
    pub item_prices: Vec<(i64, i64)>,
    /// The date's seating plan.
    pub seating_plan: Option<i64>,
    /// The date's category of the plan to item ID (or null).
    pub seat_category_mapping: Map<String, Value>,
}

/// A sub-event as shown: the row, its event's slug and its price overrides.
#[derive(Debug, Clone)]
pub struct SubEvent {
    /// The row.
    pub row: subevent::Model,
    /// Slug of the event series.
    pub event: String,
    /// Item ID to price in cents, by item ID.
    pub item_prices: Vec<(i64, i64)>,
}

impl SubEvent {
    /// The writable fields, as they are now.
    pub fn fields(&self) -> SubEventFields {
        let r = &self.row;
        SubEventFields {
            name: r.name.clone(),
            active: r.active,
            date_from: r.date_from,
            date_to: r.date_to,
            date_admission: r.date_admission,
            presale_start: r.presale_start,
            presale_end: r.presale_end,
            location: r.location.clone(),
            meta_data: meta_map(&r.meta_data),
            item_prices: self.item_prices.clone(),
            seating_plan: r.seating_plan_id,
            seat_category_mapping: r
                .seat_category_mapping
                .as_object()
                .cloned()
                .unwrap_or_default(),
        }
    }
}

/// Reads stored meta data; values that are not strings are left out.
pub fn meta_map(stored: &serde_json::Value) -> BTreeMap<String, String> {
    stored
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// The fields of a sub-event of `event` that break a rule, each with its message: dates in
/// the wrong order, meta data the organizer does not define or does not allow, prices for
/// items of other events.
pub async fn invalid_fields(
    db: &impl ConnectionTrait,
    event: &event::Model,
    fields: &SubEventFields,
) -> Result<Vec<(&'static str, String)>, DbErr> {
    let mut invalid = Vec::new();
    if fields.date_to.is_some_and(|to| to < fields.date_from) {
        invalid.push((
            "date_to",
            "The end of the event has to be later than its start.".to_owned(),
        ));
    }
    if let (Some(start), Some(end)) = (fields.presale_start, fields.presale_end)
        && end < start
    {
        invalid.push((
            "presale_end",
            "The end of the presale period has to be later than its start.".to_owned(),
        ));
    }
    invalid.extend(invalid_meta_data(db, event.organizer_id, &fields.meta_data).await?);
    invalid.extend(invalid_item_prices(db, event.id, &fields.item_prices).await?);
    Ok(invalid)
}

async fn invalid_meta_data(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    values: &BTreeMap<String, String>,
) -> Result<Vec<(&'static str, String)>, DbErr> {
    if values.is_empty() {
        return Ok(Vec::new());
    }
    let properties = super::meta::properties(db, organizer_id).await?;
    Ok(super::meta::check_values(&properties, values, false)
        .into_iter()
        .map(|m| ("meta_data", m))
        .collect())
}

async fn invalid_item_prices(
    db: &impl ConnectionTrait,
    event_id: i64,
    prices: &[(i64, i64)],
) -> Result<Vec<(&'static str, String)>, DbErr> {
    const FIELD: &str = "item_price_overrides";
    let overlong = super::overlong_lists(&[(FIELD, prices.len())]);
    if !overlong.is_empty() {
        return Ok(overlong);
    }
    let wanted: HashSet<i64> = prices.iter().map(|(i, _)| *i).collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let mut invalid = Vec::new();
    if wanted.len() < prices.len() {
        invalid.push((FIELD, "Each item may be listed only once.".to_owned()));
    }
    if prices.iter().any(|(_, cents)| *cents < 0) {
        invalid.push((FIELD, "A price may not be negative.".to_owned()));
    }
    let found = item::Entity::find()
        .filter(item::Column::EventId.eq(event_id))
        .filter(item::Column::Id.is_in(wanted.iter().copied()))
        .count(db)
        .await?;
    if found < wanted.len() as u64 {
        invalid.push((
            FIELD,
            "One or more items do not belong to this event.".to_owned(),
        ));
    }
    Ok(invalid)
}

/// Whose sub-events a list covers.
#[derive(Debug, Clone)]
pub enum Scope {
    /// One event series.
    Event(i64),
    /// Every event of an organizer, or, when given, only these of its events.
    Organizer {
        /// The organizer.
        organizer_id: i64,
        /// The events the caller may see; `None` for all.
        events: Option<Vec<i64>>,
    },
}

/// Filters of the sub-event list.
#[derive(Debug, Clone, Default)]
pub struct SubEventFilter {
    /// Only active (true) or inactive (false) dates.
    pub active: Option<bool>,
    /// Only dates not yet over (true), or only those over (false).
    pub is_future: Option<bool>,
    /// Only dates over (true), or only those not yet over (false).
    pub is_past: Option<bool>,
    /// Only dates that end at or after this time.
    pub ends_after: Option<DateTime<Utc>>,
}

/// Dates that end (or, without an end, start) at or after `t`.
fn ends_at_or_after(t: DateTime<Utc>) -> Condition {
    Condition::any()
        .add(
            Condition::all()
                .add(subevent::Column::DateTo.is_null())
                .add(subevent::Column::DateFrom.gte(t)),
        )
        .add(subevent::Column::DateTo.gte(t))
}

fn query(scope: &Scope, filter: &SubEventFilter, now: DateTime<Utc>) -> Select<subevent::Entity> {
    let mut q = subevent::Entity::find();
    match scope {
        Scope::Event(id) => q = q.filter(subevent::Column::EventId.eq(*id)),
        Scope::Organizer {
            organizer_id,
            events,
        } => {
            let of_organizer = Query::select()
                .column(event::Column::Id)
                .from(event::Entity)
                .and_where(event::Column::OrganizerId.eq(*organizer_id))
                .to_owned();
            q = q.filter(subevent::Column::EventId.in_subquery(of_organizer));
            if let Some(ids) = events {
                q = q.filter(subevent::Column::EventId.is_in(ids.iter().copied()));
            }
        }
    }
    if let Some(active) = filter.active {
        q = q.filter(subevent::Column::Active.eq(active));
    }
    // "Not over yet" and "over" split every date in two; each filter picks a side.
    for wants_future in [filter.is_future, filter.is_past.map(|p| !p)]
        .into_iter()
        .flatten()
    {
        let future = ends_at_or_after(now);
        q = q.filter(if wants_future { future } else { future.not() });
    }
    if let Some(t) = filter.ends_after {
        q = q.filter(ends_at_or_after(t));
    }
    q
}

/// Counts the sub-events matching a filter.
pub async fn count(
    db: &DatabaseConnection,
    scope: &Scope,
    filter: &SubEventFilter,
) -> Result<u64, DbErr> {
    query(scope, filter, crate::values::now()).count(db).await
}

/// One page of sub-events matching a filter, by start, then ID.
pub async fn list(
    db: &DatabaseConnection,
    scope: &Scope,
    filter: &SubEventFilter,
    limit: u64,
    offset: u64,
) -> Result<Vec<SubEvent>, DbErr> {
    let rows = query(scope, filter, crate::values::now())
        .order_by_asc(subevent::Column::DateFrom)
        .order_by_asc(subevent::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    complete(db, rows).await
}

/// A sub-event of the event.
pub async fn find(
    db: &DatabaseConnection,
    event_id: i64,
    id: i64,
) -> Result<Option<SubEvent>, DbErr> {
    let row = subevent::Entity::find_by_id(id)
        .filter(subevent::Column::EventId.eq(event_id))
        .one(db)
        .await?;
    Ok(complete(db, row.into_iter().collect()).await?.pop())
}

/// Adds event slugs and price overrides to rows, in two queries whatever their number.
async fn complete(
    db: &DatabaseConnection,
    rows: Vec<subevent::Model>,
) -> Result<Vec<SubEvent>, DbErr> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let event_ids: HashSet<i64> = rows.iter().map(|r| r.event_id).collect();
    let slugs: HashMap<i64, String> = event::Entity::find()
        .filter(event::Column::Id.is_in(event_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|e| (e.id, e.slug))
        .collect();
    let mut prices: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    for p in subevent_item_price::Entity::find()
        .filter(subevent_item_price::Column::SubeventId.is_in(rows.iter().map(|r| r.id)))
        .order_by_asc(subevent_item_price::Column::ItemId)
        .all(db)
        .await?
    {
        prices
            .entry(p.subevent_id)
            .or_default()
            .push((p.item_id, p.price_cents));
    }
    Ok(rows
        .into_iter()
        .map(|row| SubEvent {
            event: slugs.get(&row.event_id).cloned().unwrap_or_default(),
            item_prices: prices.remove(&row.id).unwrap_or_default(),
            row,
        })
        .collect())
}

fn row(fields: &SubEventFields) -> subevent::ActiveModel {
    subevent::ActiveModel {
        name: Set(fields.name.clone()),
        active: Set(fields.active),
        date_from: Set(fields.date_from),
        date_to: Set(fields.date_to),
        date_admission: Set(fields.date_admission),
        presale_start: Set(fields.presale_start),
        presale_end: Set(fields.presale_end),
        location: Set(fields.location.clone()),
        meta_data: Set(serde_json::to_value(&fields.meta_data).unwrap_or_default()),
        ..Default::default()
    }
}

/// Creates a sub-event of `event` with its prices and seats, in one transaction; the caller
/// has checked [`invalid_fields`]. The seating plan and mapping are checked here
/// ([`seating::assign`]).
pub async fn create(
    db: &DatabaseConnection,
    event: &event::Model,
    fields: SubEventFields,
) -> Result<SubEvent, Refusal> {
    let txn = begin_write(db).await?;
    let mut new = row(&fields);
    new.event_id = Set(event.id);
    let saved = new.insert(&txn).await?;
    set_prices(&txn, saved.id, &fields.item_prices).await?;
    let saved = if fields.seating_plan.is_some() || !fields.seat_category_mapping.is_empty() {
        assign_seating(&txn, event.organizer_id, &saved, &fields).await?
    } else {
        saved
    };
    crate::db::commit(txn).await?;
    Ok(SubEvent {
        row: saved,
        event: event.slug.clone(),
        item_prices: sorted(fields.item_prices),
    })
}

/// Replaces every writable field of a sub-event, its prices and, when they change, its
/// seats, in one transaction; the caller has checked [`invalid_fields`].
pub async fn update(
    db: &DatabaseConnection,
    organizer_id: i64,
    existing: SubEvent,
    fields: SubEventFields,
) -> Result<SubEvent, Refusal> {
    let txn = begin_write(db).await?;
    let mut changed = row(&fields);
    changed.id = Set(existing.row.id);
    changed.event_id = Set(existing.row.event_id);
    changed.seating_plan_id = Set(existing.row.seating_plan_id);
    changed.seat_category_mapping = Set(existing.row.seat_category_mapping.clone());
    let saved = changed.update(&txn).await?;
    set_prices(&txn, saved.id, &fields.item_prices).await?;
    let before = existing.fields();
    let saved = if (fields.seating_plan, &fields.seat_category_mapping)
        != (before.seating_plan, &before.seat_category_mapping)
    {
        assign_seating(&txn, organizer_id, &saved, &fields).await?
    } else {
        saved
    };
    crate::db::commit(txn).await?;
    Ok(SubEvent {
        row: saved,
        event: existing.event,
        item_prices: sorted(fields.item_prices),
    })
}

/// Gives the date its plan and mapping, making its seats, and reads the row back.
async fn assign_seating(
    txn: &impl ConnectionTrait,
    organizer_id: i64,
    date: &subevent::Model,
    fields: &SubEventFields,
) -> Result<subevent::Model, Refusal> {
    let scope = SeatScope {
        event_id: date.event_id,
        subevent_id: Some(date.id),
    };
    seating::assign(
        txn,
        organizer_id,
        scope,
        fields.seating_plan,
        &fields.seat_category_mapping,
    )
    .await?;
    Ok(subevent::Entity::find_by_id(date.id)
        .one(txn)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("subevent {}", date.id)))?)
}

fn sorted(mut prices: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    prices.sort_unstable();
    prices
}

async fn set_prices(
    db: &impl ConnectionTrait,
    subevent_id: i64,
    prices: &[(i64, i64)],
) -> Result<(), DbErr> {
    subevent_item_price::Entity::delete_many()
        .filter(subevent_item_price::Column::SubeventId.eq(subevent_id))
        .exec(db)
        .await?;
    if prices.is_empty() {
        return Ok(());
    }
    subevent_item_price::Entity::insert_many(prices.iter().map(|&(item_id, price_cents)| {
        subevent_item_price::ActiveModel {
            subevent_id: Set(subevent_id),
            item_id: Set(item_id),
            price_cents: Set(price_cents),
        }
    }))
    .exec(db)
    .await?;
    Ok(())
}

/// Deletes a sub-event with everything of it (price overrides, seats, quotas, vouchers,
/// carts, waiting list entries), as pretix. A date that orders use stays (403).
pub async fn delete(db: &DatabaseConnection, id: i64) -> Result<(), Refusal> {
    let txn = begin_write(db).await?;
    // Placing an order for the date locks its quotas first: taking them here makes an order
    // under way finish first (and be seen below), or wait until the date is gone.
    let quotas: Vec<i64> = quota::Entity::find()
        .filter(quota::Column::SubeventId.eq(id))
        .select_only()
        .column(quota::Column::Id)
        .into_tuple()
        .all(&txn)
        .await?;
    super::availability::lock_quotas(&txn, &quotas).await?;
    let used = order_position::Entity::find()
        .filter(order_position::Column::SubeventId.eq(id))
        .select_only()
        .column(order_position::Column::Id)
        .limit(1)
        .into_tuple::<i64>()
        .one(&txn)
        .await?;
    if used.is_some() {
        return Err(Refusal::forbidden_because(
            "The sub-event can not be deleted as it has already been used in orders. Please set \
             'active' to false instead to hide it from users.",
        ));
    }
    cart_position::Entity::delete_many()
        .filter(cart_position::Column::SubeventId.eq(id))
        .exec(&txn)
        .await?;
    waiting_list_entry::Entity::delete_many()
        .filter(waiting_list_entry::Column::SubeventId.eq(id))
        .exec(&txn)
        .await?;
    voucher::Entity::delete_many()
        .filter(voucher::Column::SubeventId.eq(id))
        .exec(&txn)
        .await?;
    quota::Entity::delete_many()
        .filter(quota::Column::Id.is_in(quotas))
        .exec(&txn)
        .await?;
    seat::Entity::delete_many()
        .filter(seat::Column::SubeventId.eq(id))
        .exec(&txn)
        .await?;
    subevent::Entity::delete_by_id(id).exec(&txn).await?;
    Ok(crate::db::commit(txn).await?)
}
