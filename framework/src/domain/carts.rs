//! Cart positions created through the API: a product (and seat) reserved for a while,
//! exactly as an order would take it, until the cart expires, is deleted or becomes an order.

use std::collections::HashMap;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr,
    EntityTrait, FromQueryResult, QueryFilter, QueryOrder, Select, Set, Statement,
};
use serde_json::{Map, Value};

pub mod addons;
pub mod buying;
pub mod checkout;

use super::availability::{self, Demand, HoldKind};
use super::cache::Cache;
use super::discounts::{self, Priced};
use super::sale::{Catalogue, Product};
use super::seating::sell;
use crate::db::begin_write;
use crate::db::entities::{cart_position, event, voucher};

/// A new cart position, as sent.
#[derive(Debug, Clone, Default)]
pub struct NewCartPosition {
    /// The cart it belongs to.
    pub cart_id: String,
    /// The item.
    pub item: i64,
    /// The variation.
    pub variation: Option<i64>,
    /// The price in cents (carts created through the API are not priced automatically).
    pub price: i64,
    /// Attendee name parts.
    pub attendee_name_parts: Map<String, Value>,
    /// Attendee e-mail.
    pub attendee_email: Option<String>,
    /// The date of a series.
    pub subevent: Option<i64>,
    /// The seat's identifier in the plan.
    pub seat: Option<String>,
    /// End of the reservation; `reservation_time` minutes from now when not sent.
    pub expires: Option<DateTime<Utc>>,
}

/// Why a cart position was not created: the field and the message (400).
pub type Refusal = (&'static str, String);

/// The event's cart positions, of one cart when given, by ID.
pub fn query(event_id: i64, cart_id: Option<&str>) -> Select<cart_position::Entity> {
    let mut q = cart_position::Entity::find().filter(cart_position::Column::EventId.eq(event_id));
    if let Some(c) = cart_id {
        q = q.filter(cart_position::Column::CartId.eq(c));
    }
    q.order_by_asc(cart_position::Column::Id)
}

/// A cart position of the event.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<cart_position::Model>, DbErr> {
    cart_position::Entity::find_by_id(id)
        .filter(cart_position::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// The product of a cart position.
pub fn product_of(c: &cart_position::Model) -> Product {
    Product {
        item_id: c.item_id,
        variation_id: c.variation_id,
        subevent_id: c.subevent_id,
    }
}

/// The catalogue a cart's positions need: the event's products and the positions' dates.
pub async fn catalogue_of(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    positions: &[&cart_position::Model],
) -> Result<Catalogue, DbErr> {
    let mut dates: Vec<i64> = positions.iter().filter_map(|p| p.subevent_id).collect();
    dates.sort_unstable();
    dates.dedup();
    Catalogue::load_kept(db, cache, ev, &dates).await
}

/// The vouchers of these IDs (those a cart's positions redeem), by ID.
pub async fn vouchers_of(
    db: &impl ConnectionTrait,
    ids: impl IntoIterator<Item = i64>,
) -> Result<HashMap<i64, voucher::Model>, DbErr> {
    let mut ids: Vec<i64> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(voucher::Entity::find()
        .filter(voucher::Column::Id.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|v| (v.id, v))
        .collect())
}

/// What a shop cart's positions (in the order of [`addons::in_order`]) cost after the event's
/// discounts: the cart keeps undiscounted prices, and this is what the buyer is shown and
/// pays. A position's voucher discount is what its voucher takes off the listed price, as
/// pretix counts it.
pub async fn discounted(
    db: &impl ConnectionTrait,
    catalogue: &Catalogue,
    positions: &[&cart_position::Model],
    now: DateTime<Utc>,
) -> Result<Vec<Priced>, DbErr> {
    let rules = catalogue.discounts();
    if rules.is_empty() {
        let price = |p: &&cart_position::Model| Priced {
            price: p.price_cents,
            discount: None,
        };
        return Ok(positions.iter().map(price).collect());
    }
    let vouchers = vouchers_of(db, positions.iter().filter_map(|p| p.voucher_id)).await?;
    let lines: Vec<discounts::Line> = positions
        .iter()
        .map(|p| {
            let voucher_discount = p.voucher_id.and_then(|v| vouchers.get(&v)).map_or(0, |v| {
                let listed = catalogue.default_price(&product_of(p), None);
                listed - super::vouchers::price(v, listed)
            });
            discounts::Line {
                item_id: p.item_id,
                subevent_id: p.subevent_id,
                subevent_start: catalogue.date_start(p.subevent_id),
                price: p.price_cents,
                addon_to: p.addon_to_id,
                is_bundled: p.is_bundled,
                voucher_discount,
            }
        })
        .collect();
    Ok(rules.apply(crate::domain::storefront::CHANNEL, now, &lines))
}

/// Reserves a product (and seat) for a cart, in one transaction: the seat and quotas are
/// locked, checked and held until the position expires. `reservation_minutes` is the
/// event's `reservation_time`.
pub async fn create(
    db: &DatabaseConnection,
    ev: &event::Model,
    new: NewCartPosition,
    reservation_minutes: i64,
) -> Result<Result<cart_position::Model, Refusal>, DbErr> {
    let now = crate::values::now();
    let subevents: Vec<i64> = new.subevent.into_iter().collect();
    let catalogue = Catalogue::load(db, ev, &subevents).await?;
    let product = match catalogue.resolve(new.item, new.variation, new.subevent) {
        Ok(p) => p,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if new.price < 0 {
        return Ok(Err((
            "price",
            "Ensure this value is greater than or equal to 0.".into(),
        )));
    }
    // Checked: the setting is bounded, but a value must never be able to panic here.
    let reserved =
        TimeDelta::try_minutes(reservation_minutes).and_then(|m| now.checked_add_signed(m));
    let Some(expires) = new.expires.or(reserved) else {
        return Ok(Err((
            "expires",
            "The reservation period of this event is too long.".into(),
        )));
    };
    // Whole seconds: every cart made in the same second shares one hold row per quota.
    let expires = expires.duration_trunc(TimeDelta::seconds(1)).unwrap_or(now);
    if expires <= now {
        return Ok(Err((
            "expires",
            "The expiry date must be in the future.".into(),
        )));
    }
    let txn = begin_write(db).await?;
    let seating = catalogue.seating(ev, new.subevent);
    let seat_id = match &new.seat {
        None if seating.sold_by_seat(new.item) => {
            return Ok(Err((
                "seat",
                "The product requires you to select a seat.".into(),
            )));
        }
        None => None,
        Some(guid) => {
            let key = (new.subevent, guid.clone());
            let seats = sell::lock_by_guids(&txn, ev.id, std::slice::from_ref(&key)).await?;
            let seat = seats.get(&key);
            if let Some(why) = seating.refusal(new.item, seat) {
                return Ok(Err(("seat", why.into())));
            }
            let Some(seat) = seat else {
                return Ok(Err(("seat", "The selected seat does not exist.".into())));
            };
            if seat.blocked {
                return Ok(Err(("seat", "The selected seat is blocked.".into())));
            }
            if !sell::held_by_carts(&txn, &[seat.id], now).await?.is_empty() {
                return Ok(Err((
                    "seat",
                    "The selected seat is reserved by another cart.".into(),
                )));
            }
            Some(seat.id)
        }
    };
    let quota_ids = catalogue.quotas_of(&product);
    let quotas = availability::lock_quotas(&txn, &quota_ids).await?;
    let demand: Demand = quota_ids.iter().map(|&q| (q, 1)).collect();
    if let Err(short) =
        availability::reserve(&txn, &quotas, &demand, HoldKind::Cart, Some(expires)).await?
    {
        let name = quotas
            .iter()
            .find(|q| short.contains(&q.id))
            .map(|q| q.name.clone())
            .unwrap_or_default();
        return Ok(Err((
            "item",
            format!(
                "There is not enough quota available on quota \"{name}\" to perform the operation."
            ),
        )));
    }
    let row = cart_position::ActiveModel {
        id: NotSet,
        event_id: Set(ev.id),
        cart_id: Set(new.cart_id),
        item_id: Set(product.item_id),
        variation_id: Set(product.variation_id),
        subevent_id: Set(product.subevent_id),
        price_cents: Set(new.price),
        attendee_name_parts: Set(Value::Object(new.attendee_name_parts)),
        attendee_email: Set(new.attendee_email),
        seat_id: Set(seat_id),
        datetime: Set(now),
        expires: Set(expires),
        voucher_id: Set(None),
        addon_to_id: Set(None),
        is_bundled: Set(false),
    };
    let saved = cart_position::Entity::insert(row)
        .exec_with_returning(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(Ok(saved))
}

/// Deletes a cart position with its add-ons and gives back what they held; `false` when the
/// event has no such position (any more). A bundled position goes only with the product that
/// brought it (the product's price counts on it), so asking for it deletes that product.
pub async fn delete(db: &DatabaseConnection, ev: &event::Model, id: i64) -> Result<bool, DbErr> {
    let txn = begin_write(db).await?;
    let Some(c) = find(&txn, ev.id, id).await? else {
        return Ok(false);
    };
    let base = match (c.is_bundled, c.addon_to_id) {
        (true, Some(base)) => base,
        _ => c.id,
    };
    // Locked first, so that add-ons put in meanwhile ([`addons::choose`] locks the cart's
    // positions too) are seen by the deletion's own snapshot and go with it.
    crate::db::lock_row(&txn, "cart_positions", base).await?;
    let gone = cart_position::Entity::delete_many()
        .filter(cart_position::Column::EventId.eq(ev.id))
        .filter(
            Condition::any()
                .add(cart_position::Column::Id.eq(base))
                .add(cart_position::Column::AddonToId.eq(base)),
        )
        .exec_with_returning(&txn)
        .await?;
    if gone.is_empty() {
        return Ok(false);
    }
    let mut subevents: Vec<i64> = gone.iter().filter_map(|p| p.subevent_id).collect();
    subevents.sort_unstable();
    subevents.dedup();
    let catalogue = Catalogue::load(&txn, ev, &subevents).await?;
    let mut quota_ids: Vec<i64> = gone
        .iter()
        .flat_map(|p| catalogue.quotas_of(&product_of(p)))
        .collect();
    quota_ids.sort_unstable();
    quota_ids.dedup();
    availability::lock_quotas(&txn, &quota_ids).await?;
    give_back(&txn, &catalogue, &gone).await?;
    crate::db::commit(txn).await?;
    Ok(true)
}

/// The live positions of a cart, locked until the transaction ends (on PostgreSQL; SQLite
/// serialises writers), oldest first.
pub(crate) async fn lock_live(
    txn: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
) -> Result<Vec<cart_position::Model>, DbErr> {
    let sql = format!(
        "SELECT * FROM cart_positions WHERE event_id = $1 AND cart_id = $2 AND expires > $3 \
         ORDER BY id{}",
        crate::db::lock_clause(txn)
    );
    let values = [event_id.into(), cart_id.into(), crate::values::now().into()];
    cart_position::Model::find_by_statement(Statement::from_sql_and_values(
        txn.get_database_backend(),
        sql,
        values,
    ))
    .all(txn)
    .await
}

/// Gives back what deleted cart positions held.
pub(crate) async fn give_back(
    txn: &impl ConnectionTrait,
    catalogue: &Catalogue,
    gone: &[cart_position::Model],
) -> Result<(), DbErr> {
    for p in gone {
        let quotas = catalogue.quotas_of(&product_of(p));
        availability::adjust(txn, &quotas, HoldKind::Cart, Some(p.expires), -1).await?;
    }
    Ok(())
}
