//! Items (products) of an event, with their variations, add-ons and bundles: the rules they
//! follow and how they are read in a constant number of queries.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr,
    EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
};
use serde_json::Value;

use super::files::{self, ClaimRefused};
use super::meta;
use crate::db::entities::{
    category, event, item, item_addon, item_bundle, item_variation, order_position, quota, tax_rule,
};
use crate::db::{begin_write, is_unique_violation};
use crate::domain::webhooks;
use crate::values::stored::{string_list, string_map};
use serde_json::json;

/// A rule broken by a change, reported on a field.
pub type Invalid = Vec<(&'static str, String)>;

/// Why an item, or a part of it, was not written.
#[derive(Debug)]
pub enum WriteError {
    /// Rules found broken while writing, on their fields: an upload that cannot be the
    /// picture, an add-on category a concurrent write took.
    Invalid(Invalid),
    /// It was deleted meanwhile.
    Gone,
    /// The database failed.
    Db(DbErr),
}

impl From<DbErr> for WriteError {
    fn from(e: DbErr) -> Self {
        match e {
            DbErr::RecordNotUpdated => Self::Gone,
            e => Self::Db(e),
        }
    }
}

/// The message of an add-on category an item already has an add-on configuration for.
const ADDON_CATEGORY_TAKEN: &str =
    "The item already has an add-on configuration for this category.";

/// A failed add-on write: a unique violation is the add-on category taken meanwhile,
/// reported on `field`, with `prefix` before the message.
fn addon_error(e: DbErr, field: &'static str, prefix: &str) -> WriteError {
    if is_unique_violation(&e) {
        WriteError::Invalid(vec![(field, format!("{prefix}{ADDON_CATEGORY_TAKEN}"))])
    } else {
        e.into()
    }
}

/// What a write does to an item's picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PictureChange {
    /// It stays as it is (none for a new item).
    Keep,
    /// It is removed.
    Remove,
    /// It becomes the upload with this file ID, claimed for `owner` in the item's transaction.
    Claim {
        /// Identity of the caller who uploaded it.
        owner: String,
        /// The file ID sent.
        file_id: String,
    },
}

/// The picture after `change`, from `current`; an upload is claimed in `txn`, and only images
/// ([`files::PICTURE_TYPES`]) are taken.
async fn picture_after(
    txn: &impl ConnectionTrait,
    current: Option<&str>,
    change: PictureChange,
) -> Result<Option<String>, WriteError> {
    let (owner, file_id) = match change {
        PictureChange::Keep => return Ok(current.map(str::to_owned)),
        PictureChange::Remove => return Ok(None),
        PictureChange::Claim { owner, file_id } => (owner, file_id),
    };
    match files::claim(txn, &owner, &file_id, &files::PICTURE_TYPES).await? {
        Ok(reference) => Ok(Some(reference)),
        Err(refused) => {
            let message = match refused {
                ClaimRefused::Unknown => {
                    "The file ID is unknown, has expired or belongs to someone else."
                }
                ClaimRefused::WrongType => "A picture has to be an image: PNG, JPEG, GIF or WebP.",
            };
            Err(WriteError::Invalid(vec![("picture", message.into())]))
        }
    }
}

/// Every writable field of an item.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemFields {
    /// Multi-language name (stored JSON object).
    pub name: Value,
    /// Back-end name.
    pub internal_name: Option<String>,
    /// Price in cents.
    pub default_price_cents: i64,
    /// Category.
    pub category_id: Option<i64>,
    /// Whether it is sold.
    pub active: bool,
    /// Multi-language description.
    pub description: Option<Value>,
    /// Whether buyers may pay more.
    pub free_price: bool,
    /// Tax rule.
    pub tax_rule_id: Option<i64>,
    /// Whether it grants admission.
    pub admission: bool,
    /// Sort position.
    pub position: i32,
    /// Picture as stored (`<file key>/<file name>`).
    pub picture: Option<String>,
    /// Sales channels.
    pub sales_channels: Vec<String>,
    /// First time it can be bought.
    pub available_from: Option<DateTime<Utc>>,
    /// Last time it can be bought.
    pub available_until: Option<DateTime<Utc>>,
    /// Quota whose availability hides it.
    pub hidden_if_available: Option<i64>,
    /// Only buyable with a voucher.
    pub require_voucher: bool,
    /// Only shown when redeeming a voucher.
    pub hide_without_voucher: bool,
    /// Customers may cancel orders with it.
    pub allow_cancel: bool,
    /// Least count per order.
    pub min_per_order: Option<i32>,
    /// Most count per order.
    pub max_per_order: Option<i32>,
    /// Check-in warns when scanned.
    pub checkin_attention: bool,
    /// Comparison price in cents.
    pub original_price_cents: Option<i64>,
    /// Orders need approval.
    pub require_approval: bool,
    /// Only sold within bundles.
    pub require_bundling: bool,
    /// Ticket generation override.
    pub generate_tickets: Option<bool>,
    /// Waiting list offered when sold out.
    pub allow_waitinglist: bool,
    /// Buying yields a gift card.
    pub issue_giftcard: bool,
    /// Show what is left; `None` takes the event's setting.
    pub show_quota_left: Option<bool>,
    /// Values of the event's item meta properties.
    pub meta_data: BTreeMap<String, String>,
}

impl ItemFields {
    /// The defaults of a new item with this name and price.
    pub fn new(name: Value, default_price_cents: i64) -> Self {
        Self {
            name,
            internal_name: None,
            default_price_cents,
            category_id: None,
            active: true,
            description: None,
            free_price: false,
            tax_rule_id: None,
            admission: false,
            position: 0,
            picture: None,
            sales_channels: vec!["web".into()],
            available_from: None,
            available_until: None,
            hidden_if_available: None,
            require_voucher: false,
            hide_without_voucher: false,
            allow_cancel: true,
            min_per_order: None,
            max_per_order: None,
            checkin_attention: false,
            original_price_cents: None,
            require_approval: false,
            require_bundling: false,
            generate_tickets: None,
            allow_waitinglist: true,
            issue_giftcard: false,
            show_quota_left: None,
            meta_data: BTreeMap::new(),
        }
    }
}

impl From<&item::Model> for ItemFields {
    fn from(i: &item::Model) -> Self {
        Self {
            name: i.name.clone(),
            internal_name: i.internal_name.clone(),
            default_price_cents: i.default_price_cents,
            category_id: i.category_id,
            active: i.active,
            description: i.description.clone(),
            free_price: i.free_price,
            tax_rule_id: i.tax_rule_id,
            admission: i.admission,
            position: i.position,
            picture: i.picture.clone(),
            sales_channels: string_list(&i.sales_channels),
            available_from: i.available_from,
            available_until: i.available_until,
            hidden_if_available: i.hidden_if_available,
            require_voucher: i.require_voucher,
            hide_without_voucher: i.hide_without_voucher,
            allow_cancel: i.allow_cancel,
            min_per_order: i.min_per_order,
            max_per_order: i.max_per_order,
            checkin_attention: i.checkin_attention,
            original_price_cents: i.original_price_cents,
            require_approval: i.require_approval,
            require_bundling: i.require_bundling,
            generate_tickets: i.generate_tickets,
            allow_waitinglist: i.allow_waitinglist,
            issue_giftcard: i.issue_giftcard,
            show_quota_left: i.show_quota_left,
            meta_data: string_map(&i.meta_data),
        }
    }
}

/// Every writable field of a variation.
#[derive(Debug, Clone, PartialEq)]
pub struct VariationFields {
    /// Multi-language name.
    pub value: Value,
    /// Own price in cents; `None` takes the item's.
    pub default_price_cents: Option<i64>,
    /// Comparison price in cents.
    pub original_price_cents: Option<i64>,
    /// Whether it is sold.
    pub active: bool,
    /// Multi-language description.
    pub description: Option<Value>,
    /// Sort position.
    pub position: i32,
}

impl From<&item_variation::Model> for VariationFields {
    fn from(v: &item_variation::Model) -> Self {
        Self {
            value: v.value.clone(),
            default_price_cents: v.default_price_cents,
            original_price_cents: v.original_price_cents,
            active: v.active,
            description: v.description.clone(),
            position: v.position,
        }
    }
}

/// Every writable field of an add-on configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddonFields {
    /// The add-on category.
    pub addon_category_id: i64,
    /// Least number chosen.
    pub min_count: i32,
    /// Most number chosen.
    pub max_count: i32,
    /// Sort position.
    pub position: i32,
    /// Whether the same add-on may be chosen repeatedly.
    pub multi_allowed: bool,
    /// Whether the add-ons are free.
    pub price_included: bool,
}

impl From<&item_addon::Model> for AddonFields {
    fn from(a: &item_addon::Model) -> Self {
        Self {
            addon_category_id: a.addon_category_id,
            min_count: a.min_count,
            max_count: a.max_count,
            position: a.position,
            multi_allowed: a.multi_allowed,
            price_included: a.price_included,
        }
    }
}

/// Every writable field of a bundle configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleFields {
    /// The included item.
    pub bundled_item_id: i64,
    /// The included variation.
    pub bundled_variation_id: Option<i64>,
    /// How many are included.
    pub count: i32,
    /// Share of the base item's price, in cents.
    pub designated_price_cents: i64,
}

impl From<&item_bundle::Model> for BundleFields {
    fn from(b: &item_bundle::Model) -> Self {
        Self {
            bundled_item_id: b.bundled_item_id,
            bundled_variation_id: b.bundled_variation_id,
            count: b.count,
            designated_price_cents: b.designated_price_cents,
        }
    }
}

/// An item as shown: the row, its variations, add-ons and bundles, and its tax rate.
#[derive(Debug, Clone)]
pub struct Item {
    /// The row.
    pub row: item::Model,
    /// Variations by position, then ID.
    pub variations: Vec<item_variation::Model>,
    /// Add-ons by position, then ID.
    pub addons: Vec<item_addon::Model>,
    /// Bundles by ID.
    pub bundles: Vec<item_bundle::Model>,
    /// Tax rate in hundredths of a percent (0 without a tax rule).
    pub tax_rate_bps: i64,
    /// Values of the event's item meta properties, defaults included.
    pub meta_data: BTreeMap<String, String>,
}

/// Filters of the item list.
#[derive(Debug, Clone, Default)]
pub struct ItemFilter {
    /// `active`.
    pub active: Option<bool>,
    /// `category`.
    pub category: Option<i64>,
    /// `admission`.
    pub admission: Option<bool>,
    /// `tax_rate`, in hundredths of a percent.
    pub tax_rate_bps: Option<i64>,
    /// `free_price`.
    pub free_price: Option<bool>,
    /// Order by ID instead of position.
    pub by_id: bool,
}

/// The event's items matching a filter, by position (or ID), then ID.
pub fn query(event_id: i64, filter: &ItemFilter) -> Select<item::Entity> {
    let mut q = item::Entity::find().filter(item::Column::EventId.eq(event_id));
    if let Some(v) = filter.active {
        q = q.filter(item::Column::Active.eq(v));
    }
    if let Some(v) = filter.category {
        q = q.filter(item::Column::CategoryId.eq(v));
    }
    if let Some(v) = filter.admission {
        q = q.filter(item::Column::Admission.eq(v));
    }
    if let Some(v) = filter.free_price {
        q = q.filter(item::Column::FreePrice.eq(v));
    }
    if let Some(bps) = filter.tax_rate_bps {
        let rules_with_rate = Query::select()
            .column(tax_rule::Column::Id)
            .from(tax_rule::Entity)
            .and_where(tax_rule::Column::EventId.eq(event_id))
            .and_where(tax_rule::Column::RateBps.eq(bps))
            .to_owned();
        let mut cond = Condition::any().add(item::Column::TaxRuleId.in_subquery(rules_with_rate));
        if bps == 0 {
            cond = cond.add(item::Column::TaxRuleId.is_null());
        }
        q = q.filter(cond);
    }
    if !filter.by_id {
        q = q.order_by_asc(item::Column::Position);
    }
    q.order_by_asc(item::Column::Id)
}

/// An item of the event.
pub async fn find(db: &DatabaseConnection, event_id: i64, id: i64) -> Result<Option<Item>, DbErr> {
    let row = find_row(db, event_id, id).await?;
    Ok(complete(db, row.into_iter().collect()).await?.pop())
}

/// The row of an item of the event.
pub async fn find_row(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<item::Model>, DbErr> {
    item::Entity::find_by_id(id)
        .filter(item::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// Adds variations, add-ons, bundles, tax rates and meta data to item rows: five queries,
/// whatever their number.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows: Vec<item::Model>,
) -> Result<Vec<Item>, DbErr> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let event_id = first.event_id;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut variations = group(
        item_variation::Entity::find()
            .filter(item_variation::Column::ItemId.is_in(ids.clone()))
            .order_by_asc(item_variation::Column::Position)
            .order_by_asc(item_variation::Column::Id)
            .all(db)
            .await?,
        |v| v.item_id,
    );
    let mut addons = group(
        item_addon::Entity::find()
            .filter(item_addon::Column::ItemId.is_in(ids.clone()))
            .order_by_asc(item_addon::Column::Position)
            .order_by_asc(item_addon::Column::Id)
            .all(db)
            .await?,
        |a| a.item_id,
    );
    let mut bundles = group(
        item_bundle::Entity::find()
            .filter(item_bundle::Column::ItemId.is_in(ids))
            .order_by_asc(item_bundle::Column::Id)
            .all(db)
            .await?,
        |b| b.item_id,
    );
    let rates: HashMap<i64, i64> = tax_rule::Entity::find()
        .filter(tax_rule::Column::EventId.eq(event_id))
        .all(db)
        .await?
        .into_iter()
        .map(|t| (t.id, t.rate_bps))
        .collect();
    let properties = meta::item_properties(db, event_id).await?;
    Ok(rows
        .into_iter()
        .map(|row| Item {
            meta_data: meta::effective(&properties, &string_map(&row.meta_data)),
            variations: variations.remove(&row.id).unwrap_or_default(),
            addons: addons.remove(&row.id).unwrap_or_default(),
            bundles: bundles.remove(&row.id).unwrap_or_default(),
            tax_rate_bps: row
                .tax_rule_id
                .and_then(|t| rates.get(&t).copied())
                .unwrap_or(0),
            row,
        })
        .collect())
}

fn group<T>(rows: Vec<T>, key: impl Fn(&T) -> i64) -> HashMap<i64, Vec<T>> {
    let mut out: HashMap<i64, Vec<T>> = HashMap::new();
    for r in rows {
        out.entry(key(&r)).or_default().push(r);
    }
    out
}

async fn belongs<E>(
    db: &impl ConnectionTrait,
    id: Option<i64>,
    id_col: E::Column,
    event_col: E::Column,
    event_id: i64,
) -> Result<bool, DbErr>
where
    E: EntityTrait,
    E::Model: Sync,
{
    let Some(id) = id else { return Ok(true) };
    Ok(E::find()
        .filter(id_col.eq(id))
        .filter(event_col.eq(event_id))
        .count(db)
        .await?
        > 0)
}

/// The fields of an item of `ev` that break a rule, each with its message.
pub async fn invalid_fields(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    f: &ItemFields,
) -> Result<Invalid, DbErr> {
    let mut invalid: Invalid = Vec::new();
    if f.default_price_cents < 0 {
        invalid.push(("default_price", "The price may not be negative.".into()));
    }
    if f.original_price_cents.is_some_and(|p| p < 0) {
        invalid.push(("original_price", "The price may not be negative.".into()));
    }
    if let (Some(min), Some(max)) = (f.min_per_order, f.max_per_order)
        && min > max
    {
        invalid.push((
            "min_per_order",
            "The minimum per order may not be above the maximum per order.".into(),
        ));
    }
    for (field, v) in [
        ("min_per_order", f.min_per_order),
        ("max_per_order", f.max_per_order),
    ] {
        if v.is_some_and(|v| v < 0) {
            invalid.push((
                field,
                "Ensure this value is greater than or equal to 0.".into(),
            ));
        }
    }
    if let (Some(from), Some(until)) = (f.available_from, f.available_until)
        && until < from
    {
        invalid.push((
            "available_until",
            "The end of availability has to be later than its start.".into(),
        ));
    }
    for message in super::sales_channels::unknown(db, ev.organizer_id, &f.sales_channels).await? {
        invalid.push(("sales_channels", message));
    }
    let c = category::Column::Id;
    if !belongs::<category::Entity>(db, f.category_id, c, category::Column::EventId, ev.id).await? {
        invalid.push((
            "category",
            "The category does not belong to this event.".into(),
        ));
    }
    let t = tax_rule::Column::Id;
    if !belongs::<tax_rule::Entity>(db, f.tax_rule_id, t, tax_rule::Column::EventId, ev.id).await? {
        invalid.push((
            "tax_rule",
            "The tax rule does not belong to this event.".into(),
        ));
    }
    let q = quota::Column::Id;
    if !belongs::<quota::Entity>(db, f.hidden_if_available, q, quota::Column::EventId, ev.id)
        .await?
    {
        invalid.push((
            "hidden_if_available",
            "The quota does not belong to this event.".into(),
        ));
    }
    let properties = meta::item_properties(db, ev.id).await?;
    for message in meta::check_values(&properties, &f.meta_data, false) {
        invalid.push(("meta_data", message));
    }
    Ok(invalid)
}

/// The fields of a variation that break a rule.
pub fn invalid_variation(f: &VariationFields) -> Invalid {
    let mut invalid: Invalid = Vec::new();
    if f.default_price_cents.is_some_and(|p| p < 0) {
        invalid.push(("default_price", "The price may not be negative.".into()));
    }
    if f.original_price_cents.is_some_and(|p| p < 0) {
        invalid.push(("original_price", "The price may not be negative.".into()));
    }
    invalid
}

/// The fields of an add-on of an item of event `event_id` that break a rule. `others` are
/// the add-on categories the item already has (without the one being changed).
pub async fn invalid_addon(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &AddonFields,
    others: &[i64],
) -> Result<Invalid, DbErr> {
    let mut invalid: Invalid = Vec::new();
    if f.min_count < 0 || f.max_count < 0 {
        invalid.push((
            "min_count",
            "The numbers of add-ons may not be negative.".into(),
        ));
    } else if f.min_count > f.max_count {
        invalid.push((
            "min_count",
            "The minimum count needs to be equal to or lower than the maximum count.".into(),
        ));
    }
    let cat = category::Entity::find_by_id(f.addon_category_id)
        .filter(category::Column::EventId.eq(event_id))
        .one(db)
        .await?;
    match cat {
        None => invalid.push((
            "addon_category",
            "The category does not belong to this event.".into(),
        )),
        Some(c) if !c.is_addon => invalid.push((
            "addon_category",
            "The category is not an add-on category.".into(),
        )),
        Some(_) => {}
    }
    if others.contains(&f.addon_category_id) {
        invalid.push(("addon_category", ADDON_CATEGORY_TAKEN.into()));
    }
    Ok(invalid)
}

/// The fields of a bundle of item `item_id` (`None` while the item is being created) of
/// event `event_id` that break a rule.
pub async fn invalid_bundle(
    db: &impl ConnectionTrait,
    event_id: i64,
    item_id: Option<i64>,
    f: &BundleFields,
) -> Result<Invalid, DbErr> {
    let mut invalid: Invalid = Vec::new();
    if f.count < 1 {
        invalid.push((
            "count",
            "Ensure this value is greater than or equal to 1.".into(),
        ));
    }
    if f.designated_price_cents < 0 {
        invalid.push(("designated_price", "The price may not be negative.".into()));
    }
    if Some(f.bundled_item_id) == item_id {
        invalid.push(("bundled_item", "An item cannot bundle itself.".into()));
        return Ok(invalid);
    }
    if let Some(id) = item_id {
        let bundled_elsewhere = item_bundle::Entity::find()
            .filter(item_bundle::Column::BundledItemId.eq(id))
            .count(db)
            .await?;
        if bundled_elsewhere > 0 {
            invalid.push((
                "non_field_errors",
                "This item is bundled by another item; an item within a bundle may not have \
                 bundles itself."
                    .into(),
            ));
        }
    }
    let Some(bundled) = find_row(db, event_id, f.bundled_item_id).await? else {
        invalid.push((
            "bundled_item",
            "The bundled item does not belong to this event.".into(),
        ));
        return Ok(invalid);
    };
    let nested = item_bundle::Entity::find()
        .filter(item_bundle::Column::ItemId.eq(bundled.id))
        .count(db)
        .await?;
    if nested > 0 {
        invalid.push((
            "bundled_item",
            "The bundled item may not have bundles itself.".into(),
        ));
    }
    match f.bundled_variation_id {
        Some(v) => {
            let of_item = item_variation::Entity::find_by_id(v)
                .filter(item_variation::Column::ItemId.eq(bundled.id))
                .count(db)
                .await?;
            if of_item == 0 {
                invalid.push((
                    "bundled_variation",
                    "The variation does not belong to the bundled item.".into(),
                ));
            }
        }
        None if bundled.has_variations => invalid.push((
            "bundled_variation",
            "The bundled item has variations; choose one.".into(),
        )),
        None => {}
    }
    Ok(invalid)
}

fn item_row(f: ItemFields) -> item::ActiveModel {
    item::ActiveModel {
        name: Set(f.name),
        internal_name: Set(f.internal_name),
        default_price_cents: Set(f.default_price_cents),
        category_id: Set(f.category_id),
        active: Set(f.active),
        description: Set(f.description),
        free_price: Set(f.free_price),
        tax_rule_id: Set(f.tax_rule_id),
        admission: Set(f.admission),
        position: Set(f.position),
        picture: Set(f.picture),
        sales_channels: Set(Value::from(f.sales_channels)),
        available_from: Set(f.available_from),
        available_until: Set(f.available_until),
        hidden_if_available: Set(f.hidden_if_available),
        require_voucher: Set(f.require_voucher),
        hide_without_voucher: Set(f.hide_without_voucher),
        allow_cancel: Set(f.allow_cancel),
        min_per_order: Set(f.min_per_order),
        max_per_order: Set(f.max_per_order),
        checkin_attention: Set(f.checkin_attention),
        original_price_cents: Set(f.original_price_cents),
        require_approval: Set(f.require_approval),
        require_bundling: Set(f.require_bundling),
        generate_tickets: Set(f.generate_tickets),
        allow_waitinglist: Set(f.allow_waitinglist),
        issue_giftcard: Set(f.issue_giftcard),
        show_quota_left: Set(f.show_quota_left),
        meta_data: Set(serde_json::to_value(&f.meta_data).unwrap_or_default()),
        ..Default::default()
    }
}

/// Inserts an item row of an event.
pub async fn insert_item(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: ItemFields,
    has_variations: bool,
) -> Result<item::Model, DbErr> {
    let mut new = item_row(f);
    new.event_id = Set(event_id);
    new.has_variations = Set(has_variations);
    new.insert(db).await
}

/// Inserts a variation row of an item.
pub async fn insert_variation(
    db: &impl ConnectionTrait,
    item_id: i64,
    f: VariationFields,
) -> Result<item_variation::Model, DbErr> {
    item_variation::ActiveModel {
        item_id: Set(item_id),
        value: Set(f.value),
        default_price_cents: Set(f.default_price_cents),
        original_price_cents: Set(f.original_price_cents),
        active: Set(f.active),
        description: Set(f.description),
        position: Set(f.position),
        ..Default::default()
    }
    .insert(db)
    .await
}

fn addon_row(f: AddonFields) -> item_addon::ActiveModel {
    item_addon::ActiveModel {
        addon_category_id: Set(f.addon_category_id),
        min_count: Set(f.min_count),
        max_count: Set(f.max_count),
        position: Set(f.position),
        multi_allowed: Set(f.multi_allowed),
        price_included: Set(f.price_included),
        ..Default::default()
    }
}

/// Inserts an add-on row of an item.
pub async fn insert_addon(
    db: &impl ConnectionTrait,
    item_id: i64,
    f: AddonFields,
) -> Result<item_addon::Model, DbErr> {
    let mut new = addon_row(f);
    new.item_id = Set(item_id);
    new.insert(db).await
}

fn bundle_row(f: BundleFields) -> item_bundle::ActiveModel {
    item_bundle::ActiveModel {
        bundled_item_id: Set(f.bundled_item_id),
        bundled_variation_id: Set(f.bundled_variation_id),
        count: Set(f.count),
        designated_price_cents: Set(f.designated_price_cents),
        ..Default::default()
    }
}

/// Inserts a bundle row of an item.
pub async fn insert_bundle(
    db: &impl ConnectionTrait,
    item_id: i64,
    f: BundleFields,
) -> Result<item_bundle::Model, DbErr> {
    let mut new = bundle_row(f);
    new.item_id = Set(item_id);
    new.insert(db).await
}

/// A new item with what it is created with.
#[derive(Debug, Clone)]
pub struct NewItem {
    /// The item's fields.
    pub fields: ItemFields,
    /// Its variations; the item has variations if and only if this is not empty.
    pub variations: Vec<VariationFields>,
    /// Its add-ons.
    pub addons: Vec<AddonFields>,
    /// Its bundles.
    pub bundles: Vec<BundleFields>,
}

/// Everything wrong with a new item and its nested lists; nested errors are reported on
/// `variations`, `addons` and `bundles`, naming the entry.
pub async fn invalid_new(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    new: &NewItem,
) -> Result<Invalid, DbErr> {
    let overlong = super::overlong_lists(&[
        ("variations", new.variations.len()),
        ("addons", new.addons.len()),
        ("bundles", new.bundles.len()),
    ]);
    if !overlong.is_empty() {
        return Ok(overlong);
    }
    let mut invalid = invalid_fields(db, ev, &new.fields).await?;
    let nested = |list: &'static str, i: usize, (field, message): (&str, String)| {
        (list, format!("Entry {}: {field}: {message}", i + 1))
    };
    for (i, v) in new.variations.iter().enumerate() {
        invalid.extend(
            invalid_variation(v)
                .into_iter()
                .map(|e| nested("variations", i, e)),
        );
    }
    let mut seen = Vec::new();
    for (i, a) in new.addons.iter().enumerate() {
        let errors = invalid_addon(db, ev.id, a, &seen).await?;
        invalid.extend(errors.into_iter().map(|e| nested("addons", i, e)));
        seen.push(a.addon_category_id);
    }
    for (i, b) in new.bundles.iter().enumerate() {
        let errors = invalid_bundle(db, ev.id, None, b).await?;
        invalid.extend(errors.into_iter().map(|e| nested("bundles", i, e)));
    }
    Ok(invalid)
}

/// Creates an item with its picture, variations, add-ons and bundles in one transaction;
/// the caller has checked [`invalid_new`].
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    new: NewItem,
    picture: PictureChange,
) -> Result<Item, WriteError> {
    let txn = begin_write(db).await?;
    let mut fields = new.fields;
    fields.picture = picture_after(&txn, fields.picture.as_deref(), picture).await?;
    let row = insert_item(&txn, event_id, fields, !new.variations.is_empty()).await?;
    for v in new.variations {
        insert_variation(&txn, row.id, v).await?;
    }
    for a in new.addons {
        insert_addon(&txn, row.id, a)
            .await
            .map_err(|e| addon_error(e, "addons", "addon_category: "))?;
    }
    for b in new.bundles {
        insert_bundle(&txn, row.id, b).await?;
    }
    notify(&txn, event_id, row.id, "pretix.event.item.added").await?;
    let item = complete(&txn, vec![row]).await?.pop();
    crate::db::commit(txn).await?;
    item.ok_or(WriteError::Gone)
}

/// Replaces every writable field of an item and changes its picture, in one transaction;
/// the caller has checked [`invalid_fields`]. [`WriteError::Gone`] when it was deleted
/// meanwhile.
pub async fn update(
    db: &DatabaseConnection,
    existing: &item::Model,
    f: ItemFields,
    picture: PictureChange,
) -> Result<Item, WriteError> {
    let txn = begin_write(db).await?;
    let picture = picture_after(&txn, existing.picture.as_deref(), picture).await?;
    let mut changed = item_row(ItemFields { picture, ..f });
    changed.id = Set(existing.id);
    changed.event_id = Set(existing.event_id);
    changed.has_variations = Set(existing.has_variations);
    let row = changed.update(&txn).await?;
    notify(&txn, row.event_id, row.id, "pretix.event.item.changed").await?;
    let item = complete(&txn, vec![row]).await?.pop();
    crate::db::commit(txn).await?;
    item.ok_or(WriteError::Gone)
}

/// Whether an order contains the item (`variation: None`) or the variation.
pub async fn ordered(
    db: &impl ConnectionTrait,
    item_id: i64,
    variation_id: Option<i64>,
) -> Result<bool, DbErr> {
    let mut q = order_position::Entity::find().filter(order_position::Column::ItemId.eq(item_id));
    if let Some(v) = variation_id {
        q = q.filter(order_position::Column::VariationId.eq(v));
    }
    Ok(q.count(db).await? > 0)
}

/// Why an item or variation was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// It has been ordered.
    #[error("it has been ordered")]
    Ordered,
    /// It is the item's last variation.
    #[error("it is the item's last variation")]
    LastVariation,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Deletes an item that was never ordered, with its variations, add-ons, bundles and its
/// places in quotas, questions and other items' bundles, in one transaction.
pub async fn delete(db: &DatabaseConnection, existing: &item::Model) -> Result<(), DeleteError> {
    let txn = begin_write(db).await?;
    if ordered(&txn, existing.id, None).await? {
        return Err(DeleteError::Ordered);
    }
    notify(
        &txn,
        existing.event_id,
        existing.id,
        "pretix.event.item.deleted",
    )
    .await?;
    super::discounts::manage::forget_item(&txn, existing.event_id, existing.id).await?;
    item::Entity::delete_by_id(existing.id).exec(&txn).await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// Tells the organizer's webhooks of a change of a product.
async fn notify(
    txn: &impl ConnectionTrait,
    event_id: i64,
    item_id: i64,
    action: &'static str,
) -> Result<(), DbErr> {
    let notice = webhooks::Notice::about(event_id, action, json!({"item_id": item_id}));
    webhooks::notify(txn, &notice).await
}

/// The variations of an item, by position, then ID; `active` filters.
pub fn variations_query(item_id: i64, active: Option<bool>) -> Select<item_variation::Entity> {
    let mut q = item_variation::Entity::find().filter(item_variation::Column::ItemId.eq(item_id));
    if let Some(a) = active {
        q = q.filter(item_variation::Column::Active.eq(a));
    }
    q.order_by_asc(item_variation::Column::Position)
        .order_by_asc(item_variation::Column::Id)
}

/// A variation of the item.
pub async fn find_variation(
    db: &impl ConnectionTrait,
    item_id: i64,
    id: i64,
) -> Result<Option<item_variation::Model>, DbErr> {
    item_variation::Entity::find_by_id(id)
        .filter(item_variation::Column::ItemId.eq(item_id))
        .one(db)
        .await
}

/// Replaces every writable field of a variation; [`WriteError::Gone`] when it was deleted
/// meanwhile.
pub async fn update_variation(
    db: &DatabaseConnection,
    existing: &item_variation::Model,
    f: VariationFields,
) -> Result<item_variation::Model, WriteError> {
    item_variation::ActiveModel {
        id: Set(existing.id),
        item_id: Set(existing.item_id),
        value: Set(f.value),
        default_price_cents: Set(f.default_price_cents),
        original_price_cents: Set(f.original_price_cents),
        active: Set(f.active),
        description: Set(f.description),
        position: Set(f.position),
    }
    .update(db)
    .await
    .map_err(Into::into)
}

/// Deletes a variation that was never ordered and is not its item's last, with the bundles
/// that include it, in one transaction.
pub async fn delete_variation(
    db: &DatabaseConnection,
    existing: &item_variation::Model,
) -> Result<(), DeleteError> {
    let txn = begin_write(db).await?;
    // The item's row first (`FOR UPDATE` on PostgreSQL; SQLite writes one at a time), so
    // that concurrent deletions of its last variations count them one after the other.
    item::Entity::find_by_id(existing.item_id)
        .lock_exclusive()
        .one(&txn)
        .await?;
    if ordered(&txn, existing.item_id, Some(existing.id)).await? {
        return Err(DeleteError::Ordered);
    }
    let siblings = item_variation::Entity::find()
        .filter(item_variation::Column::ItemId.eq(existing.item_id))
        .count(&txn)
        .await?;
    if siblings <= 1 {
        return Err(DeleteError::LastVariation);
    }
    item_bundle::Entity::delete_many()
        .filter(item_bundle::Column::BundledVariationId.eq(existing.id))
        .exec(&txn)
        .await?;
    item_variation::Entity::delete_by_id(existing.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// The add-ons of an item, by position, then ID.
pub fn addons_query(item_id: i64) -> Select<item_addon::Entity> {
    item_addon::Entity::find()
        .filter(item_addon::Column::ItemId.eq(item_id))
        .order_by_asc(item_addon::Column::Position)
        .order_by_asc(item_addon::Column::Id)
}

/// An add-on of the item.
pub async fn find_addon(
    db: &impl ConnectionTrait,
    item_id: i64,
    id: i64,
) -> Result<Option<item_addon::Model>, DbErr> {
    addons_query(item_id)
        .filter(item_addon::Column::Id.eq(id))
        .one(db)
        .await
}

/// The add-on categories an item has, except that of add-on `except`.
pub async fn addon_categories(
    db: &impl ConnectionTrait,
    item_id: i64,
    except: Option<i64>,
) -> Result<Vec<i64>, DbErr> {
    Ok(addons_query(item_id)
        .all(db)
        .await?
        .into_iter()
        .filter(|a| Some(a.id) != except)
        .map(|a| a.addon_category_id)
        .collect())
}

/// Adds an add-on to an item; the caller has checked [`invalid_addon`]. A category taken by a
/// concurrent write is [`WriteError::Invalid`] on `addon_category`.
pub async fn create_addon(
    db: &DatabaseConnection,
    item_id: i64,
    f: AddonFields,
) -> Result<item_addon::Model, WriteError> {
    crate::db::in_transaction(db, async |txn| insert_addon(txn, item_id, f).await)
        .await
        .map_err(|e| addon_error(e, "addon_category", ""))
}

/// Replaces every writable field of an add-on; the caller has checked [`invalid_addon`]. A
/// category taken by a concurrent write is [`WriteError::Invalid`] on `addon_category`,
/// [`WriteError::Gone`] an add-on deleted meanwhile.
pub async fn update_addon(
    db: &DatabaseConnection,
    existing: &item_addon::Model,
    f: AddonFields,
) -> Result<item_addon::Model, WriteError> {
    let mut changed = addon_row(f);
    changed.id = Set(existing.id);
    changed.item_id = Set(existing.item_id);
    changed
        .update(db)
        .await
        .map_err(|e| addon_error(e, "addon_category", ""))
}

/// The bundles of an item, by ID.
pub fn bundles_query(item_id: i64) -> Select<item_bundle::Entity> {
    item_bundle::Entity::find()
        .filter(item_bundle::Column::ItemId.eq(item_id))
        .order_by_asc(item_bundle::Column::Id)
}

/// A bundle of the item.
pub async fn find_bundle(
    db: &impl ConnectionTrait,
    item_id: i64,
    id: i64,
) -> Result<Option<item_bundle::Model>, DbErr> {
    bundles_query(item_id)
        .filter(item_bundle::Column::Id.eq(id))
        .one(db)
        .await
}

/// Replaces every writable field of a bundle; [`WriteError::Gone`] when it was deleted
/// meanwhile.
pub async fn update_bundle(
    db: &DatabaseConnection,
    existing: &item_bundle::Model,
    f: BundleFields,
) -> Result<item_bundle::Model, WriteError> {
    let mut changed = bundle_row(f);
    changed.id = Set(existing.id);
    changed.item_id = Set(existing.item_id);
    Ok(changed.update(db).await?)
}

/// Item IDs of the event among `ids`.
pub async fn of_event(
    db: &impl ConnectionTrait,
    event_id: i64,
    ids: &HashSet<i64>,
) -> Result<Vec<item::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    item::Entity::find()
        .filter(item::Column::EventId.eq(event_id))
        .filter(item::Column::Id.is_in(ids.iter().copied()))
        .all(db)
        .await
}

/// Old to new IDs of the items and variations an event clone copied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemMap {
    /// Item of the source event to its copy.
    pub items: HashMap<i64, i64>,
    /// Variation of the source event to its copy.
    pub variations: HashMap<i64, i64>,
}

/// Copies every item of `from` into `to` with its variations, add-ons and bundles, every
/// reference remapped: categories and tax rules through `config`, bundled items and
/// variations to their copies. `hidden_if_available` is left for the caller to remap once
/// quotas are copied.
pub async fn clone_items(
    db: &impl ConnectionTrait,
    from: i64,
    to: i64,
    config: &super::event_config::CloneMap,
) -> Result<ItemMap, DbErr> {
    let rows = item::Entity::find()
        .filter(item::Column::EventId.eq(from))
        .order_by_asc(item::Column::Id)
        .all(db)
        .await?;
    let full = complete(db, rows).await?;
    let mut map = ItemMap::default();
    for it in &full {
        let mut f = ItemFields::from(&it.row);
        f.category_id = f
            .category_id
            .and_then(|c| config.categories.get(&c).copied());
        f.tax_rule_id = f
            .tax_rule_id
            .and_then(|t| config.tax_rules.get(&t).copied());
        f.hidden_if_available = None;
        let copy = insert_item(db, to, f, it.row.has_variations).await?;
        map.items.insert(it.row.id, copy.id);
        for v in &it.variations {
            let vc = insert_variation(db, copy.id, VariationFields::from(v)).await?;
            map.variations.insert(v.id, vc.id);
        }
        for a in &it.addons {
            if let Some(&cat) = config.categories.get(&a.addon_category_id) {
                let f = AddonFields {
                    addon_category_id: cat,
                    ..AddonFields::from(a)
                };
                insert_addon(db, copy.id, f).await?;
            }
        }
    }
    for it in &full {
        for b in &it.bundles {
            let (Some(&item_id), Some(&bundled)) =
                (map.items.get(&it.row.id), map.items.get(&b.bundled_item_id))
            else {
                continue;
            };
            let f = BundleFields {
                bundled_item_id: bundled,
                bundled_variation_id: b
                    .bundled_variation_id
                    .and_then(|v| map.variations.get(&v).copied()),
                ..BundleFields::from(b)
            };
            insert_bundle(db, item_id, f).await?;
        }
    }
    Ok(map)
}
