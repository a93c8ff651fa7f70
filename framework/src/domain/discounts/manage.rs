//! Writing an event's discounts, with pretix's rules: a discount needs a number of matching
//! products or a value of them, never both; only a discount by count may discount just the
//! cheapest matches; one for different dates counts by number and discounts what it counts.
//! A discount that priced an order stays.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
};
use serde_json::json;

use super::{DISTINCT, MIXED, SAME};
use crate::db::begin_write;
use crate::db::entities::{discount, event, item, order_position};
use crate::domain::items::Invalid;

/// Every writable field of a discount.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscountFields {
    /// Whether it applies at all.
    pub active: bool,
    /// Name shown in the back end.
    pub internal_name: String,
    /// Order in which discounts are tried.
    pub position: i32,
    /// Whether it applies on every sales channel.
    pub all_sales_channels: bool,
    /// The sales channels it applies on otherwise.
    pub limit_sales_channels: Vec<String>,
    /// Start of its availability.
    pub available_from: Option<DateTime<Utc>>,
    /// End of its availability.
    pub available_until: Option<DateTime<Utc>>,
    /// `mixed`, `same` or `distinct`.
    pub subevent_mode: String,
    /// Only dates starting from this.
    pub subevent_date_from: Option<DateTime<Utc>>,
    /// Only dates starting until this.
    pub subevent_date_until: Option<DateTime<Utc>>,
    /// Whether every product counts.
    pub condition_all_products: bool,
    /// The items that count otherwise.
    pub condition_limit_products: Vec<i64>,
    /// Whether add-ons count.
    pub condition_apply_to_addons: bool,
    /// Whether lines a voucher made cheaper are left out of the condition.
    pub condition_ignore_voucher_discounted: bool,
    /// Matching products needed.
    pub condition_min_count: i32,
    /// Gross value of matching products needed, in cents.
    pub condition_min_value_cents: i64,
    /// Whether the products discounted are those counted.
    pub benefit_same_products: bool,
    /// The items discounted otherwise.
    pub benefit_limit_products: Vec<i64>,
    /// The discount in hundredths of a percent.
    pub benefit_percent_bps: i32,
    /// Only this many of the cheapest matches of each group are discounted.
    pub benefit_only_apply_to_cheapest_n_matches: Option<i32>,
    /// Whether add-ons are discounted.
    pub benefit_apply_to_addons: bool,
    /// Whether lines a voucher made cheaper are left undiscounted.
    pub benefit_ignore_voucher_discounted: bool,
}

impl Default for DiscountFields {
    /// pretix's defaults; a name and a condition are still needed.
    fn default() -> Self {
        Self {
            active: true,
            internal_name: String::new(),
            position: 0,
            all_sales_channels: true,
            limit_sales_channels: Vec::new(),
            available_from: None,
            available_until: None,
            subevent_mode: MIXED.into(),
            subevent_date_from: None,
            subevent_date_until: None,
            condition_all_products: true,
            condition_limit_products: Vec::new(),
            condition_apply_to_addons: true,
            condition_ignore_voucher_discounted: false,
            condition_min_count: 0,
            condition_min_value_cents: 0,
            benefit_same_products: true,
            benefit_limit_products: Vec::new(),
            benefit_percent_bps: 0,
            benefit_only_apply_to_cheapest_n_matches: None,
            benefit_apply_to_addons: true,
            benefit_ignore_voucher_discounted: false,
        }
    }
}

impl From<&discount::Model> for DiscountFields {
    fn from(d: &discount::Model) -> Self {
        let ids = crate::values::stored::id_list;
        Self {
            active: d.active,
            internal_name: d.internal_name.clone(),
            position: d.position,
            all_sales_channels: d.all_sales_channels,
            limit_sales_channels: crate::values::stored::string_list(&d.limit_sales_channels),
            available_from: d.available_from,
            available_until: d.available_until,
            subevent_mode: d.subevent_mode.clone(),
            subevent_date_from: d.subevent_date_from,
            subevent_date_until: d.subevent_date_until,
            condition_all_products: d.condition_all_products,
            condition_limit_products: ids(&d.condition_limit_products),
            condition_apply_to_addons: d.condition_apply_to_addons,
            condition_ignore_voucher_discounted: d.condition_ignore_voucher_discounted,
            condition_min_count: d.condition_min_count,
            condition_min_value_cents: d.condition_min_value_cents,
            benefit_same_products: d.benefit_same_products,
            benefit_limit_products: ids(&d.benefit_limit_products),
            benefit_percent_bps: d.benefit_percent_bps,
            benefit_only_apply_to_cheapest_n_matches: d.benefit_only_apply_to_cheapest_n_matches,
            benefit_apply_to_addons: d.benefit_apply_to_addons,
            benefit_ignore_voucher_discounted: d.benefit_ignore_voucher_discounted,
        }
    }
}

/// Why a discount was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Fields that break a rule, each with its message; nothing was written.
    #[error("fields that break a rule, each with its message")]
    Invalid(Invalid),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why a discount was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// It priced a position of an order.
    #[error(
        "You cannot delete this discount because it already has been used as part of an order."
    )]
    Used,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// An event's discounts, `active` or not when given, by position, then ID.
pub fn query(event_id: i64, active: Option<bool>) -> Select<discount::Entity> {
    let mut q = discount::Entity::find().filter(discount::Column::EventId.eq(event_id));
    if let Some(a) = active {
        q = q.filter(discount::Column::Active.eq(a));
    }
    q.order_by_asc(discount::Column::Position)
        .order_by_asc(discount::Column::Id)
}

/// All discounts of an event.
pub async fn of_event(
    db: &impl ConnectionTrait,
    event_id: i64,
) -> Result<Vec<discount::Model>, DbErr> {
    query(event_id, None).all(db).await
}

/// A discount of the event.
pub async fn find(
    db: &DatabaseConnection,
    event_id: i64,
    id: i64,
) -> Result<Option<discount::Model>, DbErr> {
    discount::Entity::find_by_id(id)
        .filter(discount::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// The fields that break a rule, each with its message (pretix's texts).
async fn check(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    f: &DiscountFields,
) -> Result<Invalid, DbErr> {
    let mut invalid = Invalid::new();
    if ![MIXED, SAME, DISTINCT].contains(&f.subevent_mode.as_str()) {
        invalid.push((
            "subevent_mode",
            format!("\"{}\" is not a valid choice.", f.subevent_mode),
        ));
    }
    if !(0..=10_000).contains(&f.benefit_percent_bps) {
        invalid.push((
            "benefit_discount_matching_percent",
            "Ensure this value is between 0 and 100.".into(),
        ));
    }
    if f.condition_min_value_cents < 0 {
        invalid.push((
            "condition_min_value",
            "Ensure this value is greater than or equal to 0.".into(),
        ));
    }
    let by_count = f.condition_min_count > 0;
    let by_value = f.condition_min_value_cents > 0;
    let config = match () {
        _ if by_count && by_value => Some(
            "You can either set a minimum number of matching products or a minimum value, not both.",
        ),
        _ if !by_count && !by_value => {
            Some("You need to either set a minimum number of matching products or a minimum value.")
        }
        _ if by_value && f.benefit_only_apply_to_cheapest_n_matches.is_some() => Some(
            "You cannot apply the discount only to some of the matched products if you are \
             matching on a minimum value.",
        ),
        _ if by_value && f.subevent_mode == DISTINCT => Some(
            "You cannot apply the discount only to bookings of different dates if you are \
             matching on a minimum value.",
        ),
        _ => None,
    };
    if let Some(message) = config {
        invalid.push(("non_field_errors", message.into()));
    } else if f.subevent_mode == DISTINCT && !f.benefit_same_products {
        invalid.push((
            "benefit_same_products",
            "You cannot apply the discount to a different set of products if the discount is \
             only valid for bookings of different dates."
                .into(),
        ));
    }
    let named: HashSet<i64> = f
        .condition_limit_products
        .iter()
        .chain(&f.benefit_limit_products)
        .copied()
        .collect();
    let known: HashSet<i64> = item::Entity::find()
        .select_only()
        .column(item::Column::Id)
        .filter(item::Column::EventId.eq(ev.id))
        .filter(item::Column::Id.is_in(named))
        .into_tuple::<i64>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    for (field, ids) in [
        ("condition_limit_products", &f.condition_limit_products),
        ("benefit_limit_products", &f.benefit_limit_products),
    ] {
        for id in ids.iter().filter(|id| !known.contains(id)) {
            invalid.push((
                field,
                format!("Invalid pk \"{id}\" - object does not exist."),
            ));
        }
    }
    let channels = crate::domain::sales_channels::identifiers(db, ev.organizer_id).await?;
    for c in f
        .limit_sales_channels
        .iter()
        .filter(|c| !channels.contains(c))
    {
        invalid.push((
            "limit_sales_channels",
            format!("Object with identifier={c} does not exist."),
        ));
    }
    Ok(invalid)
}

fn row(f: DiscountFields) -> discount::ActiveModel {
    // A discount on every channel names none, as pretix stores it.
    let channels = match f.all_sales_channels {
        true => Vec::new(),
        false => f.limit_sales_channels,
    };
    discount::ActiveModel {
        active: Set(f.active),
        internal_name: Set(f.internal_name),
        position: Set(f.position),
        all_sales_channels: Set(f.all_sales_channels),
        limit_sales_channels: Set(json!(channels)),
        available_from: Set(f.available_from),
        available_until: Set(f.available_until),
        subevent_mode: Set(f.subevent_mode),
        subevent_date_from: Set(f.subevent_date_from),
        subevent_date_until: Set(f.subevent_date_until),
        condition_all_products: Set(f.condition_all_products),
        condition_limit_products: Set(json!(f.condition_limit_products)),
        condition_apply_to_addons: Set(f.condition_apply_to_addons),
        condition_ignore_voucher_discounted: Set(f.condition_ignore_voucher_discounted),
        condition_min_count: Set(f.condition_min_count),
        condition_min_value_cents: Set(f.condition_min_value_cents),
        benefit_same_products: Set(f.benefit_same_products),
        benefit_limit_products: Set(json!(f.benefit_limit_products)),
        benefit_percent_bps: Set(f.benefit_percent_bps),
        benefit_only_apply_to_cheapest_n_matches: Set(f.benefit_only_apply_to_cheapest_n_matches),
        benefit_apply_to_addons: Set(f.benefit_apply_to_addons),
        benefit_ignore_voucher_discounted: Set(f.benefit_ignore_voucher_discounted),
        ..Default::default()
    }
}

/// Most discounts an event may have: each is tried on every cart and order, so their number
/// bounds the work a purchase causes.
pub const MAX_PER_EVENT: u64 = 200;

/// Creates a discount.
pub async fn create(
    db: &DatabaseConnection,
    ev: &event::Model,
    f: DiscountFields,
) -> Result<discount::Model, WriteError> {
    let mut invalid = check(db, ev, &f).await?;
    if query(ev.id, None).count(db).await? >= MAX_PER_EVENT {
        invalid.push((
            "non_field_errors",
            format!("An event can have at most {MAX_PER_EVENT} discounts."),
        ));
    }
    if !invalid.is_empty() {
        return Err(WriteError::Invalid(invalid));
    }
    let mut new = row(f);
    new.event_id = Set(ev.id);
    Ok(crate::db::in_transaction(db, async |txn| new.insert(txn).await).await?)
}

/// Replaces every writable field of a discount.
pub async fn update(
    db: &DatabaseConnection,
    ev: &event::Model,
    existing: &discount::Model,
    f: DiscountFields,
) -> Result<discount::Model, WriteError> {
    let invalid = check(db, ev, &f).await?;
    if !invalid.is_empty() {
        return Err(WriteError::Invalid(invalid));
    }
    let mut changed = row(f);
    changed.id = Set(existing.id);
    changed.event_id = Set(existing.event_id);
    Ok(changed.update(db).await?)
}

/// Deletes a discount that priced no order position.
pub async fn delete(
    db: &DatabaseConnection,
    existing: &discount::Model,
) -> Result<(), DeleteError> {
    let txn = begin_write(db).await?;
    let used = order_position::Entity::find()
        .filter(order_position::Column::DiscountId.eq(existing.id))
        .count(&txn)
        .await?;
    if used > 0 {
        return Err(DeleteError::Used);
    }
    // An order placed meanwhile names it: the database refuses (now or at commit).
    let used = |e: DbErr| match e.sql_err() {
        Some(sea_orm::SqlErr::ForeignKeyConstraintViolation(_)) => DeleteError::Used,
        _ => DeleteError::Db(e),
    };
    discount::Entity::delete_by_id(existing.id)
        .exec(&txn)
        .await
        .map_err(used)?;
    crate::db::commit(txn).await.map_err(used)?;
    Ok(())
}

/// Copies an event's discounts onto its clone, the items they name replaced by their copies.
pub async fn clone_discounts(
    txn: &impl ConnectionTrait,
    from: i64,
    to: i64,
    item_ids: &HashMap<i64, i64>,
) -> Result<(), DbErr> {
    let copy = |ids: Vec<i64>| -> Vec<i64> {
        ids.iter()
            .filter_map(|i| item_ids.get(i).copied())
            .collect()
    };
    for d in of_event(txn, from).await? {
        let mut f = DiscountFields::from(&d);
        f.condition_limit_products = copy(f.condition_limit_products);
        f.benefit_limit_products = copy(f.benefit_limit_products);
        let mut new = row(f);
        new.event_id = Set(to);
        new.insert(txn).await?;
    }
    Ok(())
}

/// Takes a deleted item out of the event's discounts, inside the transaction deleting it.
pub async fn forget_item(
    txn: &impl ConnectionTrait,
    event_id: i64,
    item_id: i64,
) -> Result<(), DbErr> {
    for d in of_event(txn, event_id).await? {
        let mut f = DiscountFields::from(&d);
        let before = (
            f.condition_limit_products.len(),
            f.benefit_limit_products.len(),
        );
        f.condition_limit_products.retain(|i| *i != item_id);
        f.benefit_limit_products.retain(|i| *i != item_id);
        if before
            == (
                f.condition_limit_products.len(),
                f.benefit_limit_products.len(),
            )
        {
            continue;
        }
        discount::ActiveModel {
            id: Set(d.id),
            condition_limit_products: Set(json!(f.condition_limit_products)),
            benefit_limit_products: Set(json!(f.benefit_limit_products)),
            ..Default::default()
        }
        .update(txn)
        .await?;
    }
    Ok(())
}
