//! What a shop shows a buyer now: the public events of an organizer, and an event's
//! products as the sale's rules offer them (visible or not, purchasable or why not, at
//! what price, how many are left and how many one order may take).
//!
//! The shop's pages and pretix's widget data both read this, so a product is shown the
//! same wherever it is shown; what is bought is checked again by the order rules when it
//! is placed. Everything but the quotas' use is configuration and comes from the process
//! cache; the quotas' use is one query per look.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use serde_json::Value;

use crate::db::entities::{category, event, item, item_variation, organizer, subevent, voucher};
use crate::domain::availability::{self, Availability, State};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::sale::{Catalogue, Product, Tax};

/// The sales channel of the shop's pages and widget.
pub const CHANNEL: &str = "web";

/// Most events a listing shows.
pub const MAX_LISTED: u64 = 100;

/// Most dates of a series an event page lists.
pub const MAX_DATES: u64 = 200;

/// An organizer by slug, from the process cache when it holds it.
pub async fn organizer(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    slug: &str,
) -> Result<Option<Arc<organizer::Model>>, DbErr> {
    let key = format!("shop-organizer:{slug}");
    if let Some(kept) = cache.and_then(|(c, g)| c.object::<Option<organizer::Model>>(g, &key)) {
        return Ok(kept.as_ref().clone().map(Arc::new));
    }
    let found = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(slug))
        .one(db)
        .await?;
    if let Some((c, g)) = cache {
        c.keep_object(g, key, Arc::new(found.clone()));
    }
    Ok(found.map(Arc::new))
}

/// An organizer's event by slug, from the process cache when it holds it.
pub async fn event(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    organizer_id: i64,
    slug: &str,
) -> Result<Option<event::Model>, DbErr> {
    if let Some(ev) = cache.and_then(|(c, g)| c.event(g, organizer_id, slug)) {
        return Ok(Some(ev));
    }
    let found = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .filter(event::Column::Slug.eq(slug))
        .one(db)
        .await?;
    if let (Some((c, g)), Some(ev)) = (cache, &found) {
        c.keep_event(g, ev.clone());
    }
    Ok(found)
}

/// The events a shop lists, with their organizers: live, public, not over, soonest first;
/// of one organizer or of all, at most [`MAX_LISTED`].
pub async fn public_events(
    db: &impl ConnectionTrait,
    organizer_id: Option<i64>,
    now: DateTime<Utc>,
) -> Result<Vec<(event::Model, organizer::Model)>, DbErr> {
    let mut query = event::Entity::find()
        .filter(event::Column::Live.eq(true))
        .filter(event::Column::IsPublic.eq(true))
        .filter(not_over(
            event::Column::DateFrom,
            event::Column::DateTo,
            now,
        ))
        .order_by_asc(event::Column::DateFrom)
        .order_by_asc(event::Column::Id)
        .limit(MAX_LISTED);
    if let Some(id) = organizer_id {
        query = query.filter(event::Column::OrganizerId.eq(id));
    }
    let events = query.all(db).await?;
    let organizers: HashMap<i64, organizer::Model> = organizer::Entity::find()
        .filter(organizer::Column::Id.is_in(events.iter().map(|e| e.organizer_id)))
        .all(db)
        .await?
        .into_iter()
        .map(|o| (o.id, o))
        .collect();
    Ok(events
        .into_iter()
        .filter_map(|e| {
            let o = organizers.get(&e.organizer_id).cloned()?;
            Some((e, o))
        })
        .collect())
}

/// Not over: ending now or later, or without an end, starting no earlier than a day ago.
fn not_over(from: impl ColumnTrait, to: impl ColumnTrait, now: DateTime<Utc>) -> Condition {
    Condition::any().add(to.gte(now)).add(
        Condition::all()
            .add(to.is_null())
            .add(from.gte(now - chrono::Duration::days(1))),
    )
}

/// The active dates of a series a buyer can pick, soonest first, at most [`MAX_DATES`].
pub async fn dates(
    db: &impl ConnectionTrait,
    event_id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<subevent::Model>, DbErr> {
    subevent::Entity::find()
        .filter(subevent::Column::EventId.eq(event_id))
        .filter(subevent::Column::Active.eq(true))
        .filter(not_over(
            subevent::Column::DateFrom,
            subevent::Column::DateTo,
            now,
        ))
        .order_by_asc(subevent::Column::DateFrom)
        .order_by_asc(subevent::Column::Id)
        .limit(MAX_DATES)
        .all(db)
        .await
}

/// An active date of an event's series.
pub async fn date(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<subevent::Model>, DbErr> {
    subevent::Entity::find_by_id(id)
        .filter(subevent::Column::EventId.eq(event_id))
        .filter(subevent::Column::Active.eq(true))
        .one(db)
        .await
}

/// Whether the sale is open, as pretix tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sale {
    /// Products can be bought.
    Open,
    /// The sale starts at that time.
    NotYet(DateTime<Utc>),
    /// The sale is over (its end passed, or the event is over).
    Ended,
}

/// The state of the sale of an event (or of a date of a series, whose own times win).
pub fn sale(ev: &event::Model, date: Option<&subevent::Model>, now: DateTime<Utc>) -> Sale {
    let start = date.and_then(|d| d.presale_start).or(ev.presale_start);
    let end = date.and_then(|d| d.presale_end).or(ev.presale_end);
    let over = match date {
        Some(d) => d.date_to.unwrap_or(d.date_from),
        None => ev.date_to.unwrap_or(ev.date_from),
    };
    match (start, end) {
        (Some(s), _) if now < s => Sale::NotYet(s),
        (_, Some(e)) if now >= e => Sale::Ended,
        (_, None) if now >= over => Sale::Ended,
        _ => Sale::Open,
    }
}

/// Why a shown product cannot be bought now (pretix's `current_unavailability_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// Its sale starts later.
    AvailableFrom,
    /// Its sale has ended.
    AvailableUntil,
    /// Only with a voucher for it.
    RequireVoucher,
}

impl Unavailable {
    /// pretix's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AvailableFrom => "available_from",
            Self::AvailableUntil => "available_until",
            Self::RequireVoucher => "require_voucher",
        }
    }
}

/// How much of a product is left: the worst state of its quotas, and the fewest units
/// left among them (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stock {
    /// What uses it up, if anything.
    pub state: State,
    /// Units left.
    pub left: Option<i64>,
}

impl Stock {
    /// pretix's availability code (100 available, 20 reserved, 10 ordered, 0 sold out).
    pub fn code(self) -> u8 {
        match self.state {
            State::Ok => 100,
            State::Reserved => 20,
            State::Ordered => 10,
            State::Gone => 0,
        }
    }
}

/// A product as offered: its price and stock, and how many one order may take.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The product.
    pub product: Product,
    /// The price a buyer pays, in cents (a voucher's price when one applies).
    pub price_cents: i64,
    /// The tax that price includes.
    pub tax: Tax,
    /// The name of its tax rule (multilingual, as stored), if it has one.
    pub tax_name: Option<Value>,
    /// The price without the voucher, when a voucher changes it; else the item's
    /// struck-through `original_price`.
    pub original_price_cents: Option<i64>,
    /// What is left.
    pub stock: Stock,
    /// Most units of it one order may take now (0 when none can be bought).
    pub order_max: i64,
}

/// An item as offered, with its variations' offers when it has variations.
#[derive(Debug, Clone)]
pub struct ItemOffer {
    /// The item.
    pub item: item::Model,
    /// The item's own offer (items without variations).
    pub offer: Option<Offer>,
    /// The active variations with their offers.
    pub variations: Vec<(item_variation::Model, Offer)>,
    /// Why it cannot be bought now, if so.
    pub unavailable: Option<Unavailable>,
    /// Fewest units of it an order takes.
    pub order_min: i64,
}

impl ItemOffer {
    /// Whether any of it can be bought now.
    pub fn buyable(&self) -> bool {
        self.unavailable.is_none()
            && self
                .offer
                .iter()
                .chain(self.variations.iter().map(|(_, o)| o))
                .any(|o| o.order_max > 0)
    }
}

/// A category of the shelf and its items, in the order the organizer gave; `None` for
/// items without a category (listed first, as pretix does).
#[derive(Debug, Clone)]
pub struct Shelved {
    /// The category.
    pub category: Option<category::Model>,
    /// Its items.
    pub items: Vec<ItemOffer>,
}

/// What an event (or one of its dates) offers a buyer now, by category.
#[derive(Debug, Clone, Default)]
pub struct Shelf {
    /// The categories with something to show.
    pub categories: Vec<Shelved>,
}

impl Shelf {
    /// Every item shown.
    pub fn items(&self) -> impl Iterator<Item = &ItemOffer> {
        self.categories.iter().flat_map(|c| c.items.iter())
    }
}

/// What a look at the shelf depends on besides the event.
pub struct Look<'a> {
    /// The date of a series (required for a series; `None` otherwise).
    pub date: Option<i64>,
    /// The voucher the buyer redeems, if any (of this event, not checked further).
    pub voucher: Option<&'a voucher::Model>,
    /// The event's effective settings.
    pub settings: &'a EventSettings,
    /// The time of the look.
    pub now: DateTime<Utc>,
    /// The items of add-on categories (offered to products in the cart) instead of the
    /// others.
    pub add_ons: bool,
}

/// What the event offers: the items of the shop's channel that are active, not sold by
/// seat, not only sold in bundles, in an add-on category only when add-ons are looked for, counted by a quota (of the date, in a series) and not hidden (without a
/// voucher that shows hidden items, `hide_without_voucher` ones are; an item whose
/// `hidden_if_available` quota is available is). A voucher for one item or quota narrows
/// the shelf to what it is valid for, and gives its price.
pub async fn shelf(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    look: &Look<'_>,
) -> Result<Shelf, DbErr> {
    let dates: Vec<i64> = look.date.into_iter().collect();
    let catalogue = Catalogue::load_kept(db, cache, ev, &dates).await?;
    let categories = categories(db, cache, ev.id).await?;
    let stock = availability::of_event(db, ev.id, look.date).await?;
    let (items, variations) = catalogue.items_and_variations();
    let max_items = look
        .settings
        .get("max_items_per_order")
        .and_then(Value::as_i64)
        .unwrap_or(10);
    let date = look.date.and_then(|d| catalogue.subevent(d));
    let seating = crate::domain::seating::sell::Seating::of(ev, date);
    // Products sold by seat are chosen on a seating plan, which the shop does not show.
    let mut shown: Vec<&item::Model> = items
        .values()
        .filter(|i| visible(i, &categories, look, &stock) && !seating.sold_by_seat(i.id))
        .collect();
    shown.sort_by_key(|i| (i.position, i.id));
    let mut by_category: HashMap<Option<i64>, Vec<ItemOffer>> = HashMap::new();
    for it in shown {
        let offer_of = |variation: Option<i64>| {
            let product = Product {
                item_id: it.id,
                variation_id: variation,
                subevent_id: look.date,
            };
            offer(&catalogue, product, look, &stock, max_items, it)
        };
        let (offer, mut vars) = if it.has_variations {
            let mut vars: Vec<(item_variation::Model, Offer)> = variations
                .values()
                .filter(|v| v.item_id == it.id && v.active)
                .filter_map(|v| Some((v.clone(), offer_of(Some(v.id))?)))
                .collect();
            vars.sort_by_key(|(v, _)| (v.position, v.id));
            (None, vars)
        } else {
            (offer_of(None), Vec::new())
        };
        if offer.is_none() && vars.is_empty() {
            continue;
        }
        let unavailable = unavailable(it, look);
        if unavailable.is_some() {
            vars.iter_mut().for_each(|(_, o)| o.order_max = 0);
        }
        let mut entry = ItemOffer {
            item: it.clone(),
            offer,
            variations: vars,
            unavailable,
            order_min: i64::from(it.min_per_order.unwrap_or(0).max(0)),
        };
        if let (Some(o), Some(_)) = (entry.offer.as_mut(), unavailable) {
            o.order_max = 0;
        }
        by_category.entry(it.category_id).or_default().push(entry);
    }
    let mut shelf = Shelf::default();
    if let Some(items) = by_category.remove(&None) {
        shelf.categories.push(Shelved {
            category: None,
            items,
        });
    }
    for c in categories.iter() {
        if let Some(items) = by_category.remove(&Some(c.id)) {
            shelf.categories.push(Shelved {
                category: Some(c.clone()),
                items,
            });
        }
    }
    Ok(shelf)
}

fn visible(
    it: &item::Model,
    categories: &[category::Model],
    look: &Look<'_>,
    stock: &HashMap<i64, Availability>,
) -> bool {
    let in_channel = crate::values::stored::string_list(&it.sales_channels)
        .iter()
        .any(|c| c == CHANNEL);
    let addon = it
        .category_id
        .is_some_and(|c| categories.iter().any(|k| k.id == c && k.is_addon));
    let shows_hidden = look.voucher.is_some_and(|v| v.show_hidden_items);
    let for_voucher = look.voucher.is_none_or(|v| {
        v.item_id.is_none_or(|i| i == it.id) && v.subevent_id.is_none_or(|d| Some(d) == look.date)
    });
    let hidden_while_available = it
        .hidden_if_available
        .is_some_and(|q| stock.get(&q).is_some_and(Availability::available));
    it.active
        && in_channel
        && !it.require_bundling
        && addon == look.add_ons
        && (shows_hidden || !it.hide_without_voucher)
        && for_voucher
        && !hidden_while_available
}

fn unavailable(it: &item::Model, look: &Look<'_>) -> Option<Unavailable> {
    if it.available_from.is_some_and(|t| look.now < t) {
        Some(Unavailable::AvailableFrom)
    } else if it.available_until.is_some_and(|t| look.now >= t) {
        Some(Unavailable::AvailableUntil)
    } else if it.require_voucher && look.voucher.is_none() {
        Some(Unavailable::RequireVoucher)
    } else {
        None
    }
}

/// A product's offer; `None` when no quota counts it (it cannot be sold) or the voucher
/// is not valid for it.
fn offer(
    catalogue: &Catalogue,
    product: Product,
    look: &Look<'_>,
    stock: &HashMap<i64, Availability>,
    max_items: i64,
    it: &item::Model,
) -> Option<Offer> {
    let quotas = catalogue.quotas_of(&product);
    if quotas.is_empty() {
        return None;
    }
    if let Some(v) = look.voucher {
        let narrowed = v
            .variation_id
            .is_some_and(|var| Some(var) != product.variation_id)
            || v.quota_id.is_some_and(|q| !quotas.contains(&q));
        if narrowed {
            return None;
        }
    }
    let mut worst = Stock {
        state: State::Ok,
        left: None,
    };
    for q in &quotas {
        let Some(a) = stock.get(q) else {
            // A quota of another date: this product is not sold on this one.
            return None;
        };
        worst.state = worst.state.min(a.state);
        worst.left = match (worst.left, a.available_number) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    let base = catalogue.default_price(&product, None);
    let price = look
        .voucher
        .map_or(base, |v| crate::domain::vouchers::price(v, base));
    let original = if price != base {
        Some(base)
    } else {
        it.original_price_cents.filter(|o| *o > price)
    };
    let mut order_max = max_items;
    if let Some(m) = it.max_per_order {
        order_max = order_max.min(i64::from(m));
    }
    if worst.state != State::Ok {
        order_max = 0;
    } else if let Some(left) = worst.left {
        order_max = order_max.min(left);
    }
    Some(Offer {
        product,
        price_cents: price,
        tax: catalogue.tax(product.item_id, price, None),
        tax_name: it
            .tax_rule_id
            .and_then(|id| catalogue.tax_rule(id))
            .map(|r| r.name.clone()),
        original_price_cents: original,
        stock: worst,
        order_max: order_max.max(0),
    })
}

/// An event's categories in the organizer's order, from the process cache when it holds
/// them.
async fn categories(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    event_id: i64,
) -> Result<Arc<Vec<category::Model>>, DbErr> {
    let key = format!("shop-categories:{event_id}");
    if let Some(kept) = cache.and_then(|(c, g)| c.object::<Vec<category::Model>>(g, &key)) {
        return Ok(kept);
    }
    let found = Arc::new(
        category::Entity::find()
            .filter(category::Column::EventId.eq(event_id))
            .order_by_asc(category::Column::Position)
            .order_by_asc(category::Column::Id)
            .all(db)
            .await?,
    );
    if let Some((c, g)) = cache {
        c.keep_object(g, key, found.clone());
    }
    Ok(found)
}

/// Whether the event has any voucher (the widget then offers a voucher field).
pub async fn has_vouchers(db: &impl ConnectionTrait, event_id: i64) -> Result<bool, DbErr> {
    Ok(voucher::Entity::find()
        .filter(voucher::Column::EventId.eq(event_id))
        .one(db)
        .await?
        .is_some())
}

/// The event's voucher of that code, and why it cannot be redeemed now, if so.
pub async fn voucher(
    db: &impl ConnectionTrait,
    event_id: i64,
    code: &str,
    now: DateTime<Utc>,
) -> Result<Result<voucher::Model, &'static str>, DbErr> {
    let code = code.trim();
    if code.is_empty() || code.len() > 255 {
        return Ok(Err("This voucher code is not known in our database."));
    }
    // pretix compares codes without case; its codes are upper case.
    let found = voucher::Entity::find()
        .filter(voucher::Column::EventId.eq(event_id))
        .filter(voucher::Column::Code.is_in([code.to_owned(), code.to_uppercase()]))
        .one(db)
        .await?;
    Ok(match found {
        None => Err("This voucher code is not known in our database."),
        Some(v) if v.valid_until.is_some_and(|t| t <= now) => Err("This voucher is expired."),
        Some(v) if v.redeemed >= v.max_usages => {
            Err("This voucher code has already been used the maximum number of times allowed.")
        }
        Some(v) => Ok(v),
    })
}
