//! Quotas of an event: which items and variations they act on, and pretix's rules for them.
//! How much of a quota is left is [`super::availability`]'s business.

use std::collections::{HashMap, HashSet};

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, Select, Set,
};

use super::availability;
use super::items::Invalid;
use crate::db::begin_write;
use crate::db::entities::{
    event, item, item_variation, quota, quota_item, quota_variation, subevent,
};

/// Every writable field of a quota.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaFields {
    /// Internal name.
    pub name: String,
    /// Size; `None` is unlimited.
    pub size: Option<i64>,
    /// Item IDs it acts on.
    pub items: Vec<i64>,
    /// Variation IDs it acts on.
    pub variations: Vec<i64>,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// Closes itself when sold out.
    pub close_when_sold_out: bool,
    /// Closed.
    pub closed: bool,
    /// Exits give capacity back.
    pub release_after_exit: bool,
    /// Left out of the event's availability.
    pub ignore_for_event_availability: bool,
}

/// A quota as shown: the row and the items and variations it acts on.
#[derive(Debug, Clone)]
pub struct Quota {
    /// The row.
    pub row: quota::Model,
    /// Item IDs, ascending.
    pub items: Vec<i64>,
    /// Variation IDs, ascending.
    pub variations: Vec<i64>,
}

impl Quota {
    /// The writable fields, as they are now.
    pub fn fields(&self) -> QuotaFields {
        let r = &self.row;
        QuotaFields {
            name: r.name.clone(),
            size: r.size,
            items: self.items.clone(),
            variations: self.variations.clone(),
            subevent_id: r.subevent_id,
            close_when_sold_out: r.close_when_sold_out,
            closed: r.closed,
            release_after_exit: r.release_after_exit,
            ignore_for_event_availability: r.ignore_for_event_availability,
        }
    }
}

/// The event's quotas, of one date when `subevent` is given, by ID. (Quotas have no
/// position of their own; ordering by `position` is ordering by ID.)
pub fn query(event_id: i64, subevent: Option<i64>) -> Select<quota::Entity> {
    let mut q = quota::Entity::find().filter(quota::Column::EventId.eq(event_id));
    if let Some(s) = subevent {
        q = q.filter(quota::Column::SubeventId.eq(s));
    }
    q.order_by_asc(quota::Column::Id)
}

/// A quota of the event.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<Quota>, DbErr> {
    let row = quota::Entity::find_by_id(id)
        .filter(quota::Column::EventId.eq(event_id))
        .one(db)
        .await?;
    Ok(complete(db, row.into_iter().collect()).await?.pop())
}

/// Adds item and variation IDs to quota rows: two queries, whatever their number.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows: Vec<quota::Model>,
) -> Result<Vec<Quota>, DbErr> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut items: HashMap<i64, Vec<i64>> = HashMap::new();
    for qi in quota_item::Entity::find()
        .filter(quota_item::Column::QuotaId.is_in(ids.clone()))
        .order_by_asc(quota_item::Column::ItemId)
        .all(db)
        .await?
    {
        items.entry(qi.quota_id).or_default().push(qi.item_id);
    }
    let mut variations: HashMap<i64, Vec<i64>> = HashMap::new();
    for qv in quota_variation::Entity::find()
        .filter(quota_variation::Column::QuotaId.is_in(ids))
        .order_by_asc(quota_variation::Column::VariationId)
        .all(db)
        .await?
    {
        variations
            .entry(qv.quota_id)
            .or_default()
            .push(qv.variation_id);
    }
    Ok(rows
        .into_iter()
        .map(|row| Quota {
            items: items.remove(&row.id).unwrap_or_default(),
            variations: variations.remove(&row.id).unwrap_or_default(),
            row,
        })
        .collect())
}

/// The fields of a quota of `ev` that break a rule: items and variations of other events,
/// variations of items not listed, items with variations but none of them listed, a
/// missing date in a series or a date outside one, a negative size.
pub async fn invalid_fields(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    f: &QuotaFields,
) -> Result<Invalid, DbErr> {
    let overlong =
        super::overlong_lists(&[("items", f.items.len()), ("variations", f.variations.len())]);
    if !overlong.is_empty() {
        return Ok(overlong);
    }
    let mut invalid: Invalid = Vec::new();
    if f.size.is_some_and(|s| s < 0) {
        invalid.push((
            "size",
            "Ensure this value is greater than or equal to 0.".into(),
        ));
    }
    let wanted: HashSet<i64> = f.items.iter().copied().collect();
    let items: HashMap<i64, item::Model> = super::items::of_event(db, ev.id, &wanted)
        .await?
        .into_iter()
        .map(|i| (i.id, i))
        .collect();
    if items.len() < wanted.len() {
        invalid.push((
            "items",
            "One or more items do not belong to this event.".into(),
        ));
    }
    let variations = if f.variations.is_empty() {
        Vec::new()
    } else {
        item_variation::Entity::find()
            .filter(item_variation::Column::Id.is_in(f.variations.iter().copied()))
            .all(db)
            .await?
    };
    let distinct: HashSet<i64> = f.variations.iter().copied().collect();
    let of_listed = variations
        .iter()
        .filter(|v| items.contains_key(&v.item_id))
        .count();
    if variations.len() < distinct.len() || of_listed < variations.len() {
        invalid.push((
            "variations",
            "Every variation must be one of an item in `items`, of this event.".into(),
        ));
    }
    let covered: HashSet<i64> = variations.iter().map(|v| v.item_id).collect();
    if items
        .values()
        .any(|i| i.has_variations && !covered.contains(&i.id))
    {
        invalid.push((
            "variations",
            "An item with variations needs at least one of its variations in `variations`.".into(),
        ));
    }
    match (ev.has_subevents, f.subevent_id) {
        (true, None) => invalid.push((
            "subevent",
            "A quota of an event series needs a sub-event.".into(),
        )),
        (false, Some(_)) => invalid.push((
            "subevent",
            "Only quotas of an event series have a sub-event.".into(),
        )),
        (true, Some(s)) => {
            let found = subevent::Entity::find_by_id(s)
                .filter(subevent::Column::EventId.eq(ev.id))
                .one(db)
                .await?;
            if found.is_none() {
                invalid.push((
                    "subevent",
                    "The sub-event does not belong to this event.".into(),
                ));
            }
        }
        (false, None) => {}
    }
    Ok(invalid)
}

fn row(f: &QuotaFields) -> quota::ActiveModel {
    quota::ActiveModel {
        name: Set(f.name.clone()),
        size: Set(f.size),
        subevent_id: Set(f.subevent_id),
        close_when_sold_out: Set(f.close_when_sold_out),
        closed: Set(f.closed),
        release_after_exit: Set(f.release_after_exit),
        ignore_for_event_availability: Set(f.ignore_for_event_availability),
        ..Default::default()
    }
}

/// Inserts a quota of an event with its items and variations.
pub async fn insert(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &QuotaFields,
) -> Result<quota::Model, DbErr> {
    let mut new = row(f);
    new.event_id = Set(event_id);
    let saved = new.insert(db).await?;
    set_members(db, saved.id, f).await?;
    Ok(saved)
}

/// Creates a quota in one transaction, counting the orders it covers already; the caller
/// has checked [`invalid_fields`].
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    f: QuotaFields,
) -> Result<Quota, DbErr> {
    let txn = begin_write(db).await?;
    let saved = insert(&txn, event_id, &f).await?;
    availability::recount(&txn, &saved).await?;
    crate::db::commit(txn).await?;
    Ok(shown(saved, f))
}

/// Replaces every writable field of a quota in one transaction; when what it acts on
/// changes, what orders hold of it is counted again. The caller has checked
/// [`invalid_fields`].
pub async fn update(
    db: &DatabaseConnection,
    existing: &Quota,
    f: QuotaFields,
) -> Result<Quota, DbErr> {
    let txn = begin_write(db).await?;
    let mut changed = row(&f);
    changed.id = Set(existing.row.id);
    changed.event_id = Set(existing.row.event_id);
    let saved = changed.update(&txn).await?;
    let old = existing.fields();
    let members_changed = {
        let sorted = |v: &[i64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        sorted(&old.items) != sorted(&f.items)
            || sorted(&old.variations) != sorted(&f.variations)
            || old.subevent_id != f.subevent_id
    };
    if members_changed {
        set_members(&txn, saved.id, &f).await?;
        availability::recount(&txn, &saved).await?;
    }
    crate::db::commit(txn).await?;
    Ok(shown(saved, f))
}

fn shown(row: quota::Model, f: QuotaFields) -> Quota {
    let sorted = |mut v: Vec<i64>| {
        v.sort_unstable();
        v.dedup();
        v
    };
    Quota {
        row,
        items: sorted(f.items),
        variations: sorted(f.variations),
    }
}

async fn set_members(
    db: &impl ConnectionTrait,
    quota_id: i64,
    f: &QuotaFields,
) -> Result<(), DbErr> {
    quota_item::Entity::delete_many()
        .filter(quota_item::Column::QuotaId.eq(quota_id))
        .exec(db)
        .await?;
    quota_variation::Entity::delete_many()
        .filter(quota_variation::Column::QuotaId.eq(quota_id))
        .exec(db)
        .await?;
    let items: HashSet<i64> = f.items.iter().copied().collect();
    if !items.is_empty() {
        quota_item::Entity::insert_many(items.into_iter().map(|item_id| quota_item::ActiveModel {
            quota_id: Set(quota_id),
            item_id: Set(item_id),
        }))
        .exec(db)
        .await?;
    }
    let variations: HashSet<i64> = f.variations.iter().copied().collect();
    if !variations.is_empty() {
        quota_variation::Entity::insert_many(variations.into_iter().map(|variation_id| {
            quota_variation::ActiveModel {
                quota_id: Set(quota_id),
                variation_id: Set(variation_id),
            }
        }))
        .exec(db)
        .await?;
    }
    Ok(())
}

/// Deletes a quota; its memberships and holds go with it, and items hidden while it was
/// available are no longer hidden.
pub async fn delete(db: &DatabaseConnection, id: i64) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let txn = begin_write(db).await?;
    item::Entity::update_many()
        .col_expr(item::Column::HiddenIfAvailable, Expr::value(None::<i64>))
        .filter(item::Column::HiddenIfAvailable.eq(id))
        .exec(&txn)
        .await?;
    quota::Entity::delete_by_id(id).exec(&txn).await?;
    crate::db::commit(txn).await
}

/// Copies the quotas of `from` that are not tied to a date into `to`, their items and
/// variations remapped through `map`, and points the copies' `hidden_if_available` at the
/// copied quotas. Nothing is held in the copies: the new event has no orders.
pub async fn clone_quotas(
    db: &impl ConnectionTrait,
    from: i64,
    to: i64,
    map: &super::items::ItemMap,
) -> Result<HashMap<i64, i64>, DbErr> {
    use sea_orm::sea_query::Expr;
    let rows = quota::Entity::find()
        .filter(quota::Column::EventId.eq(from))
        .filter(quota::Column::SubeventId.is_null())
        .order_by_asc(quota::Column::Id)
        .all(db)
        .await?;
    let mut quota_ids = HashMap::new();
    for q in complete(db, rows).await? {
        let mut f = q.fields();
        f.items = f
            .items
            .iter()
            .filter_map(|i| map.items.get(i).copied())
            .collect();
        f.variations = f
            .variations
            .iter()
            .filter_map(|v| map.variations.get(v).copied())
            .collect();
        let copy = insert(db, to, &f).await?;
        quota_ids.insert(q.row.id, copy.id);
    }
    let hiding = item::Entity::find()
        .filter(item::Column::EventId.eq(from))
        .filter(item::Column::HiddenIfAvailable.is_not_null())
        .all(db)
        .await?;
    for it in hiding {
        let (Some(&copy), Some(quota)) = (
            map.items.get(&it.id),
            it.hidden_if_available.and_then(|q| quota_ids.get(&q)),
        ) else {
            continue;
        };
        item::Entity::update_many()
            .col_expr(item::Column::HiddenIfAvailable, Expr::value(*quota))
            .filter(item::Column::Id.eq(copy))
            .exec(db)
            .await?;
    }
    Ok(quota_ids)
}
