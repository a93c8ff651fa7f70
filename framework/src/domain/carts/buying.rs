//! A buyer's cart in the shop: products put in as the storefront offers them (visible,
//! buyable, at its price, within the order limits, with the buyer's voucher), each unit a
//! cart position that holds its quotas until the cart expires.
//!
//! Everything is checked again under the quotas' and voucher's locks in the adding
//! transaction, so two buyers never take the last unit or the last use of a voucher
//! between them. Adding moves the whole cart's expiry on (holds and all), up to eleven
//! reservation times after the cart began, as pretix's `max_extend`.

use std::collections::BTreeMap;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, Set,
};
use serde_json::{Map, Value};

use super::product_of;
use crate::db::begin_write;
use crate::db::entities::{cart_position, event, item_bundle};
use crate::domain::availability::{self, Demand, HoldKind};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::sale::{Catalogue, Product};
use crate::domain::storefront::{self, Look, Sale};

/// How many reservation times a cart may live from its first position (pretix's).
const MAX_EXTENSIONS: i32 = 11;

/// Most units one request may put in a cart (the order limit is checked as well).
pub const MAX_UNITS: i64 = 1_000;

/// One product wanted: its item (and variation) and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    /// The item.
    pub item: i64,
    /// The variation, for items that have them.
    pub variation: Option<i64>,
    /// How many.
    pub count: i64,
    /// The price a buyer chose for an item of free price, in cents.
    pub price: Option<i64>,
}

/// What a buyer puts in a cart.
pub struct Adding<'a> {
    /// The cart.
    pub cart_id: &'a str,
    /// The date of a series.
    pub date: Option<i64>,
    /// The products.
    pub wanted: Vec<Wanted>,
    /// A voucher code to redeem with them.
    pub voucher: Option<&'a str>,
    /// The event's effective settings.
    pub settings: &'a EventSettings,
}

/// The live positions of a cart, oldest first.
pub async fn positions(
    db: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
) -> Result<Vec<cart_position::Model>, DbErr> {
    super::query(event_id, Some(cart_id))
        .filter(cart_position::Column::Expires.gt(crate::values::now()))
        .all(db)
        .await
}

/// Why nothing was put in a cart: pretix's words (for [`crate::values::texts::translate`])
/// and the values of their `{placeholders}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The message, in English.
    pub text: &'static str,
    /// Its placeholders' values.
    pub values: Vec<(&'static str, String)>,
}

impl From<&'static str> for Refused {
    fn from(text: &'static str) -> Self {
        Self {
            text,
            values: Vec::new(),
        }
    }
}

/// Puts products in a cart; `Ok(Err(_))` says why nothing was put in.
pub async fn add(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    adding: Adding<'_>,
) -> Result<Result<(), Refused>, DbErr> {
    let now = crate::values::now();
    let date = match adding.date {
        Some(id) if ev.has_subevents => storefront::date(db, ev.id, id).await?,
        _ => None,
    };
    if ev.has_subevents && date.is_none() {
        return Ok(Err("Please select a date.".into()));
    }
    if storefront::sale(ev, date.as_ref(), now) != Sale::Open {
        return Ok(Err(
            "The booking period for this event is over or has not yet started.".into(),
        ));
    }
    let wanted: Vec<Wanted> = adding
        .wanted
        .iter()
        .copied()
        .filter(|w| w.count > 0)
        .collect();
    if wanted.is_empty() {
        return Ok(Err("You did not select any products.".into()));
    }
    if wanted.iter().map(|w| w.count).sum::<i64>() > MAX_UNITS {
        return Ok(Err(too_many(adding.settings)));
    }
    let voucher = match adding.voucher.filter(|c| !c.trim().is_empty()) {
        None => None,
        Some(code) => match storefront::voucher(db, ev.id, code, now).await? {
            Ok(v) => Some(v),
            Err(message) => return Ok(Err(message.into())),
        },
    };
    let look = Look {
        date: adding.date,
        voucher: voucher.as_ref(),
        settings: adding.settings,
        now,
        add_ons: false,
    };
    let shelf = storefront::shelf(db, cache, ev, &look).await?;
    let mut lines = Vec::new();
    for w in &wanted {
        let found = shelf.items().find(|i| i.item.id == w.item).and_then(|i| {
            let offer = match w.variation {
                None => i.offer.as_ref(),
                Some(v) => i
                    .variations
                    .iter()
                    .find(|(var, _)| var.id == v)
                    .map(|(_, o)| o),
            };
            Some((i, offer?))
        });
        let Some((it, offer)) = found else {
            return Ok(Err("The selected product is not available.".into()));
        };
        if it.unavailable.is_some() {
            return Ok(Err(match it.unavailable {
                Some(storefront::Unavailable::RequireVoucher) => {
                    "You need a valid voucher code to order this product.".into()
                }
                _ => "The selected product is not available at the moment.".into(),
            }));
        }
        let price = match (it.item.free_price, w.price) {
            (true, Some(p)) if p >= offer.price_cents && p <= MAX_FREE_PRICE => p,
            (true, Some(_)) => {
                return Ok(Err(
                    "The price you entered is below the minimum price of this product.".into(),
                ));
            }
            _ => offer.price_cents,
        };
        lines.push((
            offer.product,
            w.count,
            price,
            it.item.max_per_order,
            it.order_min,
        ));
    }
    let txn = begin_write(db).await?;
    let locked_voucher = match &voucher {
        Some(v) => {
            crate::domain::vouchers::lock_by_codes(&txn, ev.id, std::slice::from_ref(&v.code))
                .await?
                .into_iter()
                .next()
        }
        None => None,
    };
    let held: Vec<cart_position::Model> = super::query(ev.id, Some(adding.cart_id))
        .filter(cart_position::Column::Expires.gt(now))
        .all(&txn)
        .await?;
    if let Err(message) = check_limits(&lines, &held, adding.settings) {
        return Ok(Err(message));
    }
    if let Some(v) = &locked_voucher {
        let in_carts = cart_position::Entity::find()
            .filter(cart_position::Column::VoucherId.eq(v.id))
            .filter(cart_position::Column::Expires.gt(now))
            .count(&txn)
            .await?;
        let asked: i64 = lines.iter().map(|l| l.1).sum();
        if i64::from(v.redeemed) + in_carts as i64 + asked > i64::from(v.max_usages) {
            return Ok(Err(
                "This voucher code has already been used the maximum number of times allowed."
                    .into(),
            ));
        }
    }
    let dates: Vec<i64> = adding.date.into_iter().collect();
    let catalogue = Catalogue::load_kept(&txn, cache, ev, &dates).await?;
    let minutes = reservation_minutes(adding.settings);
    let Some(expires) = expiry(now, &held, minutes) else {
        return Ok(Err(too_many(adding.settings)));
    };
    let mut bundles = match bundles_of(&txn, &catalogue, &lines).await? {
        Ok(b) => b,
        Err(refused) => return Ok(Err(refused)),
    };
    // A voucher may include what comes bundled at no cost (pretix's `all_bundles_included`).
    if locked_voucher
        .as_ref()
        .is_some_and(|v| v.all_bundles_included)
    {
        for b in bundles.iter_mut() {
            b.price = 0;
        }
    }
    // What comes bundled is bounded as what is put in is.
    let bundled_units: i64 = lines
        .iter()
        .map(|(product, count, ..)| {
            let per_unit: i64 = bundles
                .iter()
                .filter(|b| b.base == product.item_id)
                .map(|b| b.count)
                .sum();
            count.saturating_mul(per_unit)
        })
        .sum();
    if bundled_units > MAX_UNITS {
        return Ok(Err(too_many(adding.settings)));
    }
    // A product's price includes what comes bundled with it (pretix's `bundled_sum`).
    for (product, _, price, ..) in lines.iter_mut() {
        let bundled: i64 = bundles
            .iter()
            .filter(|b| b.base == product.item_id)
            .map(|b| b.price * b.count)
            .sum();
        // A positive price never goes below zero for its bundles (pretix's `_limit_subtract`).
        *price = if *price >= 0 {
            (*price - bundled).max(0)
        } else {
            *price - bundled
        };
    }
    // What the cart holds now moves to the new expiry, with what is added. Every position
    // holds its quotas, a voucher's or not: what a cart holds is given back the same way
    // whatever ends it (placement, removal, expiry).
    let mut demand = Demand::new();
    for (product, count, ..) in &lines {
        for q in catalogue.quotas_of(product) {
            *demand.entry(q).or_default() += count;
        }
        for b in bundles.iter().filter(|b| b.base == product.item_id) {
            for q in catalogue.quotas_of(&b.product) {
                *demand.entry(q).or_default() += count * b.count;
            }
        }
    }
    let mut all_quotas: Vec<i64> = demand.keys().copied().collect();
    for p in &held {
        all_quotas.extend(catalogue.quotas_of(&product_of(p)));
    }
    all_quotas.sort_unstable();
    all_quotas.dedup();
    let quotas = availability::lock_quotas(&txn, &all_quotas).await?;
    let mine: Vec<i64> = demand.keys().copied().collect();
    let wanted_quotas: Vec<_> = quotas
        .iter()
        .filter(|q| mine.contains(&q.id))
        .cloned()
        .collect();
    let reserved =
        availability::reserve(&txn, &wanted_quotas, &demand, HoldKind::Cart, Some(expires)).await?;
    if reserved.is_err() {
        return Ok(Err(
            "Some of the products you selected are no longer available in the quantity you selected."
                .into(),
        ));
    }
    move_holds(&txn, &catalogue, &held, expires).await?;
    let voucher_id = locked_voucher.as_ref().map(|v| v.id);
    let rows: Vec<cart_position::ActiveModel> = lines
        .iter()
        .flat_map(|(product, count, price, ..)| {
            (0..*count).map(move |_| cart_position::ActiveModel {
                id: NotSet,
                event_id: Set(ev.id),
                cart_id: Set(adding.cart_id.to_owned()),
                item_id: Set(product.item_id),
                variation_id: Set(product.variation_id),
                subevent_id: Set(product.subevent_id),
                price_cents: Set(*price),
                attendee_name_parts: Set(Value::Object(Map::new())),
                attendee_email: Set(None),
                seat_id: Set(None),
                datetime: Set(now),
                expires: Set(expires),
                voucher_id: Set(voucher_id),
                addon_to_id: Set(None),
                is_bundled: Set(false),
            })
        })
        .collect();
    let bases = cart_position::Entity::insert_many(rows)
        .exec_with_returning(&txn)
        .await?;
    let bundled: Vec<cart_position::ActiveModel> = bases
        .iter()
        .flat_map(|base| {
            bundles
                .iter()
                .filter(|b| b.base == base.item_id)
                .flat_map(move |b| {
                    (0..b.count).map(move |_| cart_position::ActiveModel {
                        id: NotSet,
                        item_id: Set(b.product.item_id),
                        variation_id: Set(b.product.variation_id),
                        price_cents: Set(b.price),
                        voucher_id: Set(None),
                        addon_to_id: Set(Some(base.id)),
                        is_bundled: Set(true),
                        ..base.clone().into_active_model()
                    })
                })
        })
        .collect();
    let mut bundled = bundled;
    while !bundled.is_empty() {
        let rest = bundled.split_off(bundled.len().min(BUNDLED_PER_STATEMENT));
        cart_position::Entity::insert_many(bundled)
            .exec(&txn)
            .await?;
        bundled = rest;
    }
    crate::db::commit(txn).await?;
    Ok(Ok(()))
}

/// Bundled positions written per statement: 500 rows of 14 columns stay below the bound
/// variables a statement may take.
const BUNDLED_PER_STATEMENT: usize = 500;

/// What comes bundled with each unit of an item: `count` of a product at a designated price.
struct Bundled {
    base: i64,
    product: Product,
    count: i64,
    price: i64,
}

/// The bundles of the items put in a cart; refused when a bundled product is not for sale
/// (inactive, or counted by no quota on the date).
async fn bundles_of(
    db: &impl ConnectionTrait,
    catalogue: &Catalogue,
    lines: &[(Product, i64, i64, Option<i32>, i64)],
) -> Result<Result<Vec<Bundled>, Refused>, DbErr> {
    let items: Vec<i64> = lines.iter().map(|l| l.0.item_id).collect();
    let rows = item_bundle::Entity::find()
        .filter(item_bundle::Column::ItemId.is_in(items))
        .all(db)
        .await?;
    let mut bundles = Vec::with_capacity(rows.len());
    for b in rows {
        let date = lines
            .iter()
            .find(|l| l.0.item_id == b.item_id)
            .and_then(|l| l.0.subevent_id);
        let product = Product {
            item_id: b.bundled_item_id,
            variation_id: b.bundled_variation_id,
            subevent_id: date,
        };
        let active = catalogue.item(product.item_id).is_some_and(|i| i.active);
        if !active || catalogue.quotas_of(&product).is_empty() {
            return Ok(Err(
                "You selected a product which is not available for sale.".into(),
            ));
        }
        bundles.push(Bundled {
            base: b.item_id,
            product,
            count: i64::from(b.count.max(0)),
            price: b.designated_price_cents,
        });
    }
    Ok(Ok(bundles))
}

/// Highest price a buyer may choose for an item of free price: 1,000,000.00.
const MAX_FREE_PRICE: i64 = 100_000_000;

/// The order limits: each item within its `max_per_order` and `min_per_order` (counting
/// what the cart holds of it), all within `max_items_per_order`.
fn check_limits(
    lines: &[(Product, i64, i64, Option<i32>, i64)],
    held: &[cart_position::Model],
    settings: &EventSettings,
) -> Result<(), Refused> {
    let max_items = settings
        .get("max_items_per_order")
        .and_then(Value::as_i64)
        .unwrap_or(10);
    // Products count; their add-ons and bundles do not (pretix's `_check_max_cart_size`).
    let products = held.iter().filter(|p| p.addon_to_id.is_none()).count() as i64;
    let total = products + lines.iter().map(|l| l.1).sum::<i64>();
    if total > max_items {
        return Err(too_many(settings));
    }
    let mut per_item: BTreeMap<i64, i64> = BTreeMap::new();
    for p in held {
        *per_item.entry(p.item_id).or_default() += 1;
    }
    for (product, count, ..) in lines {
        *per_item.entry(product.item_id).or_default() += count;
    }
    for (product, _, _, max, min) in lines {
        let n = per_item[&product.item_id];
        if let Some(max) = max.filter(|m| n > i64::from(*m)) {
            return Err(Refused {
                text: "You cannot select more than {max} items of this product per order.",
                values: vec![("max", max.to_string())],
            });
        }
        if n < *min {
            return Err(Refused {
                text: "You need to select at least {min} items of this product.",
                values: vec![("min", min.to_string())],
            });
        }
    }
    Ok(())
}

fn too_many(settings: &EventSettings) -> Refused {
    let max = settings
        .get("max_items_per_order")
        .and_then(Value::as_i64)
        .unwrap_or(10);
    Refused {
        text: "You cannot select more than {max} items per order.",
        values: vec![("max", max.to_string())],
    }
}

fn reservation_minutes(settings: &EventSettings) -> i64 {
    settings
        .get("reservation_time")
        .and_then(Value::as_i64)
        .unwrap_or(30)
}

/// The cart's new expiry: a reservation time from now, but no later than eleven of them
/// after its oldest live position was put in; `None` when that is already past.
fn expiry(
    now: DateTime<Utc>,
    held: &[cart_position::Model],
    minutes: i64,
) -> Option<DateTime<Utc>> {
    let span = TimeDelta::try_minutes(minutes)?;
    let wanted = now.checked_add_signed(span)?;
    let began = held.iter().map(|p| p.datetime).min().unwrap_or(now);
    let limit = began.checked_add_signed(span * MAX_EXTENSIONS)?;
    let at = wanted
        .min(limit)
        .duration_trunc(TimeDelta::seconds(1))
        .ok()?;
    (at > now).then_some(at)
}

/// Moves what live positions hold to a later expiry, and the positions with it.
async fn move_holds(
    txn: &impl ConnectionTrait,
    catalogue: &Catalogue,
    held: &[cart_position::Model],
    expires: DateTime<Utc>,
) -> Result<(), DbErr> {
    let mut moves: BTreeMap<(Vec<i64>, DateTime<Utc>), i64> = BTreeMap::new();
    for p in held.iter().filter(|p| p.expires < expires) {
        *moves
            .entry((catalogue.quotas_of(&product_of(p)), p.expires))
            .or_default() += 1;
    }
    for ((quotas, was), n) in moves {
        availability::adjust(txn, &quotas, HoldKind::Cart, Some(was), -n).await?;
        availability::adjust(txn, &quotas, HoldKind::Cart, Some(expires), n).await?;
    }
    let ids: Vec<i64> = held
        .iter()
        .filter(|p| p.expires < expires)
        .map(|p| p.id)
        .collect();
    if !ids.is_empty() {
        cart_position::Entity::update_many()
            .col_expr(cart_position::Column::Expires, expires.into())
            .filter(cart_position::Column::Id.is_in(ids))
            .exec(txn)
            .await?;
    }
    Ok(())
}

/// Keeps a cart longer: its live positions (and what they hold) move to a reservation time
/// from now, within the cart's limit. `false` when there is nothing to keep, or the cart
/// is at its limit.
pub async fn extend(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    cart_id: &str,
    settings: &EventSettings,
) -> Result<bool, DbErr> {
    let now = crate::values::now();
    let txn = begin_write(db).await?;
    let held = positions(&txn, ev.id, cart_id).await?;
    let Some(expires) = expiry(now, &held, reservation_minutes(settings)) else {
        return Ok(false);
    };
    if held.is_empty() || held.iter().all(|p| p.expires >= expires) {
        return Ok(false);
    }
    let mut dates: Vec<i64> = held.iter().filter_map(|p| p.subevent_id).collect();
    dates.sort_unstable();
    dates.dedup();
    let catalogue = Catalogue::load_kept(&txn, cache, ev, &dates).await?;
    let mut quotas: Vec<i64> = held
        .iter()
        .flat_map(|p| catalogue.quotas_of(&product_of(p)))
        .collect();
    quotas.sort_unstable();
    quotas.dedup();
    availability::lock_quotas(&txn, &quotas).await?;
    move_holds(&txn, &catalogue, &held, expires).await?;
    crate::db::commit(txn).await?;
    Ok(true)
}

/// Takes a position out of a cart, giving back what it held; `false` when the cart has no
/// such position.
pub async fn remove(
    db: &DatabaseConnection,
    ev: &event::Model,
    cart_id: &str,
    position: i64,
) -> Result<bool, DbErr> {
    match super::find(db, ev.id, position).await? {
        Some(p) if p.cart_id == cart_id => super::delete(db, ev, position).await,
        _ => Ok(false),
    }
}

/// Empties a cart, giving back what its positions held.
pub async fn clear(db: &DatabaseConnection, ev: &event::Model, cart_id: &str) -> Result<(), DbErr> {
    for p in positions(db, ev.id, cart_id).await? {
        super::delete(db, ev, p.id).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_refusal_speaks_every_language() {
        let source = include_str!("buying.rs");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
        let code = code.replace("( ", "(");
        let mut texts: Vec<&str> = Vec::new();
        for start in ["Err(\"", "text: \"", "=> \"", "=> { \""] {
            texts.extend(
                code.split(start)
                    .skip(1)
                    .filter_map(|s| s.split('"').next()),
            );
        }
        assert!(texts.len() >= 12, "{texts:?}");
        for text in texts {
            let german = crate::values::texts::translate("de", text);
            assert_ne!(german, text, "{text}");
        }
    }
}
