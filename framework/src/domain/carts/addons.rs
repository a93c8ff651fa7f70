//! Add-ons in a buyer's cart, as pretix's add-on step offers them. A product in the cart
//! whose item has add-on rules offers, per rule, the items of the rule's add-on category that
//! are on sale for its date (at no cost where the rule includes them in the price). The buyer
//! chooses how many of each; the choice replaces the product's add-ons at once, within the
//! rule's fewest and most, and each item at most once unless the rule allows more.
//!
//! Add-ons are cart positions linked to their product: they hold their quotas until the cart
//! expires, go when their product is removed, and follow it into the order.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, Set,
};
use serde_json::{Map, Value};

use super::buying::{self, MAX_UNITS, Refused};
use super::product_of;
use crate::db::begin_write;
use crate::db::entities::{cart_position, category, event, item_addon};
use crate::domain::availability::{self, Demand, HoldKind};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::sale::{Catalogue, Product};
use crate::domain::storefront::{self, ItemOffer, Look};
use crate::values::I18nString;

/// An add-on rule of a product in the cart, with what it offers now.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The add-on category.
    pub category: category::Model,
    /// Fewest add-ons of the category the product takes.
    pub min: i64,
    /// Most add-ons of the category the product takes.
    pub max: i64,
    /// Whether one item may be chosen more than once.
    pub multi: bool,
    /// Whether the add-ons are included in the product's price.
    pub included: bool,
    /// The category's items on sale, priced for this product (0 where included).
    pub items: Vec<ItemOffer>,
}

/// A product in the cart that takes add-ons.
#[derive(Debug, Clone)]
pub struct Base {
    /// Its cart position.
    pub position: cart_position::Model,
    /// Its item's name (multilingual, as stored).
    pub name: Value,
    /// Its add-on rules, in the organizer's order.
    pub rules: Vec<Rule>,
    /// Its add-ons in the cart (not those bundled with it).
    pub chosen: Vec<cart_position::Model>,
}

impl Base {
    /// How many of an item (and variation) are its add-ons now.
    pub fn count(&self, item: i64, variation: Option<i64>) -> i64 {
        self.chosen
            .iter()
            .filter(|p| p.item_id == item && p.variation_id == variation)
            .count() as i64
    }
}

/// An add-on wanted: for the cart position `base`, this many of an item (and variation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The cart position it is an add-on to.
    pub base: i64,
    /// The item.
    pub item: i64,
    /// The variation.
    pub variation: Option<i64>,
    /// How many (0 takes it out).
    pub count: i64,
}

/// The products of a cart that take add-ons, with their rules and add-ons.
pub async fn offered(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    settings: &EventSettings,
    cart_id: &str,
) -> Result<Vec<Base>, DbErr> {
    let positions = buying::positions(db, ev.id, cart_id).await?;
    let mut items: Vec<i64> = positions
        .iter()
        .filter(|p| p.addon_to_id.is_none())
        .map(|p| p.item_id)
        .collect();
    items.sort_unstable();
    items.dedup();
    let rules = item_addon::Entity::find()
        .filter(item_addon::Column::ItemId.is_in(items))
        .order_by_asc(item_addon::Column::Position)
        .order_by_asc(item_addon::Column::Id)
        .all(db)
        .await?;
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let categories: HashMap<i64, category::Model> = category::Entity::find()
        .filter(category::Column::Id.is_in(rules.iter().map(|r| r.addon_category_id)))
        .all(db)
        .await?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let held: Vec<&cart_position::Model> = positions.iter().collect();
    let catalogue = super::catalogue_of(db, cache, ev, &held).await?;
    let vouchers = super::vouchers_of(db, positions.iter().filter_map(|p| p.voucher_id)).await?;
    let now = crate::values::now();
    let mut shelves = HashMap::new();
    let mut bases = Vec::new();
    for base in positions.iter().filter(|p| p.addon_to_id.is_none()) {
        let own: Vec<&item_addon::Model> =
            rules.iter().filter(|r| r.item_id == base.item_id).collect();
        if own.is_empty() {
            continue;
        }
        let date = base.subevent_id;
        let shelf = match shelves.entry(date) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let look = Look {
                    date,
                    voucher: None,
                    settings,
                    now,
                    add_ons: true,
                };
                e.insert(storefront::shelf(db, cache, ev, &look).await?)
            }
        };
        let rules = own
            .into_iter()
            .filter_map(|r| {
                let category = categories.get(&r.addon_category_id)?.clone();
                let mut items: Vec<ItemOffer> = shelf
                    .categories
                    .iter()
                    .filter(|s| s.category.as_ref().is_some_and(|c| c.id == category.id))
                    .flat_map(|s| s.items.iter().cloned())
                    .collect();
                // Free when the rule includes them in the price, or the product's voucher
                // includes every add-on (pretix's `is_included_for_free`).
                let included = r.price_included
                    || base
                        .voucher_id
                        .and_then(|v| vouchers.get(&v))
                        .is_some_and(|v| v.all_addons_included);
                if included {
                    for offer in items.iter_mut().flat_map(|i| {
                        i.offer
                            .iter_mut()
                            .chain(i.variations.iter_mut().map(|(_, o)| o))
                    }) {
                        offer.price_cents = 0;
                        offer.original_price_cents = None;
                    }
                }
                Some(Rule {
                    category,
                    min: i64::from(r.min_count),
                    max: i64::from(r.max_count),
                    multi: r.multi_allowed,
                    included,
                    items,
                })
            })
            .collect();
        bases.push(Base {
            name: catalogue
                .item(base.item_id)
                .map(|i| i.name.clone())
                .unwrap_or_default(),
            position: base.clone(),
            rules,
            chosen: positions
                .iter()
                .filter(|p| p.addon_to_id == Some(base.id) && !p.is_bundled)
                .cloned()
                .collect(),
        });
    }
    Ok(bases)
}

/// A cart's positions in the order's order: each product followed by its add-ons. An add-on
/// whose product is gone (removed while it was being added) is left out: it is not sold on
/// its own, and goes with the cart.
pub fn in_order(positions: &[cart_position::Model]) -> Vec<&cart_position::Model> {
    let mut ordered = Vec::with_capacity(positions.len());
    for p in positions.iter().filter(|p| p.addon_to_id.is_none()) {
        ordered.push(p);
        ordered.extend(positions.iter().filter(|a| a.addon_to_id == Some(p.id)));
    }
    ordered
}

/// Whether a product of the cart has fewer add-ons than a rule asks for: the buyer must
/// choose them before the checkout goes on.
pub fn missing(bases: &[Base]) -> bool {
    bases.iter().any(|b| {
        b.rules.iter().any(|r| {
            let n = b
                .chosen
                .iter()
                .filter(|p| r.items.iter().any(|i| i.item.id == p.item_id))
                .count() as i64;
            n < r.min
        })
    })
}

/// A product's add-ons and their price, as checked.
struct Wanted {
    base: usize,
    product: Product,
    count: i64,
    price: i64,
}

/// Sets the add-ons of the cart's products ([`offered`] as `bases`) to `choices` (products
/// not named keep none); `Ok(Err(_))` says why nothing changed, naming products and
/// categories in `lang`. The cart is read again under its lock.
pub async fn choose(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    cart_id: &str,
    bases: &[Base],
    choices: &[Choice],
    lang: &str,
) -> Result<Result<(), Refused>, DbErr> {
    let wanted = match check(bases, choices, lang) {
        Ok(w) => w,
        Err(refused) => return Ok(Err(refused)),
    };
    let txn = begin_write(db).await?;
    // What the cart holds now, locked: the buyer may have changed it since, and a product
    // removed meanwhile takes no add-ons.
    let live = super::lock_live(&txn, ev.id, cart_id).await?;
    let mut gone: Vec<i64> = Vec::new();
    let mut added: Vec<(&Wanted, i64)> = Vec::new();
    for (bi, base) in bases.iter().enumerate() {
        let Some(position) = live.iter().find(|p| p.id == base.position.id) else {
            return Ok(Err("The selected product is not available.".into()));
        };
        let mut have: HashMap<Product, Vec<i64>> = HashMap::new();
        for p in live
            .iter()
            .filter(|p| p.addon_to_id == Some(position.id) && !p.is_bundled)
        {
            have.entry(product_of(p)).or_default().push(p.id);
        }
        for w in wanted.iter().filter(|w| w.base == bi) {
            let n = have.remove(&w.product).unwrap_or_default();
            let keep = (w.count as usize).min(n.len());
            gone.extend(&n[keep..]);
            if w.count > n.len() as i64 {
                added.push((w, w.count - n.len() as i64));
            }
        }
        gone.extend(have.into_values().flatten());
    }
    // Cart positions before quotas, as every transaction that changes holds takes them.
    let removed = if gone.is_empty() {
        Vec::new()
    } else {
        cart_position::Entity::delete_many()
            .filter(cart_position::Column::Id.is_in(gone))
            .exec_with_returning(&txn)
            .await?
    };
    let mut dates: Vec<i64> = live.iter().filter_map(|p| p.subevent_id).collect();
    dates.sort_unstable();
    dates.dedup();
    let catalogue = Catalogue::load_kept(&txn, cache, ev, &dates).await?;
    let mut demand = Demand::new();
    for (w, n) in &added {
        for q in catalogue.quotas_of(&w.product) {
            *demand.entry(q).or_default() += n;
        }
    }
    let mut quota_ids: Vec<i64> = demand.keys().copied().collect();
    quota_ids.extend(
        removed
            .iter()
            .flat_map(|p| catalogue.quotas_of(&product_of(p))),
    );
    quota_ids.sort_unstable();
    quota_ids.dedup();
    let quotas = availability::lock_quotas(&txn, &quota_ids).await?;
    super::give_back(&txn, &catalogue, &removed).await?;
    let expires = live.iter().map(|p| p.expires).min().unwrap_or_default();
    if !demand.is_empty() {
        let asked: Vec<_> = quotas
            .iter()
            .filter(|q| demand.contains_key(&q.id))
            .cloned()
            .collect();
        let reserved =
            availability::reserve(&txn, &asked, &demand, HoldKind::Cart, Some(expires)).await?;
        if reserved.is_err() {
            return Ok(Err(
                "Some of the products you selected are no longer available in the quantity you selected."
                    .into(),
            ));
        }
    }
    let now = crate::values::now();
    let rows: Vec<cart_position::ActiveModel> = added
        .iter()
        .flat_map(|(w, n)| {
            let base = bases[w.base].position.id;
            (0..*n).map(move |_| cart_position::ActiveModel {
                id: NotSet,
                event_id: Set(ev.id),
                cart_id: Set(cart_id.to_owned()),
                item_id: Set(w.product.item_id),
                variation_id: Set(w.product.variation_id),
                subevent_id: Set(w.product.subevent_id),
                price_cents: Set(w.price),
                attendee_name_parts: Set(Value::Object(Map::new())),
                attendee_email: Set(None),
                seat_id: Set(None),
                datetime: Set(now),
                expires: Set(expires),
                voucher_id: Set(None),
                addon_to_id: Set(Some(base)),
                is_bundled: Set(false),
            })
        })
        .collect();
    if !rows.is_empty() {
        cart_position::Entity::insert_many(rows).exec(&txn).await?;
    }
    crate::db::commit(txn).await?;
    Ok(Ok(()))
}

/// Checks the choices against the rules: pretix's messages.
fn check(bases: &[Base], choices: &[Choice], lang: &str) -> Result<Vec<Wanted>, Refused> {
    let mut wanted: Vec<Wanted> = Vec::new();
    if choices.iter().map(|c| c.count.max(0)).sum::<i64>() > MAX_UNITS {
        return Err(Refused {
            text: "You cannot select more than {max} items per order.",
            values: vec![("max", MAX_UNITS.to_string())],
        });
    }
    for c in choices.iter().filter(|c| c.count > 0) {
        let invalid_base = "You can not select an add-on for the selected product.";
        let Some(bi) = bases.iter().position(|b| b.position.id == c.base) else {
            return Err(invalid_base.into());
        };
        let base = &bases[bi];
        let Some(it) = base
            .rules
            .iter()
            .flat_map(|r| r.items.iter())
            .find(|i| i.item.id == c.item)
        else {
            return Err(invalid_base.into());
        };
        let offer = match c.variation {
            None => it.offer.as_ref(),
            Some(v) => it
                .variations
                .iter()
                .find(|(var, _)| var.id == v)
                .map(|(_, o)| o),
        };
        let Some(offer) = offer.filter(|_| it.unavailable.is_none()) else {
            return Err("The selected product is not available.".into());
        };
        if wanted
            .iter()
            .any(|w| w.base == bi && w.product == offer.product)
        {
            return Err("You can not select two variations of the same add-on product.".into());
        }
        wanted.push(Wanted {
            base: bi,
            product: offer.product,
            count: c.count,
            price: offer.price_cents,
        });
    }
    // Each add-on item within its own order limits, over all products of the cart.
    for it in bases
        .iter()
        .flat_map(|b| b.rules.iter().flat_map(|r| r.items.iter()))
    {
        let n: i64 = wanted
            .iter()
            .filter(|w| w.product.item_id == it.item.id)
            .map(|w| w.count)
            .sum();
        if let Some(max) = it.item.max_per_order.filter(|&m| n > i64::from(m)) {
            return Err(Refused {
                text: "You cannot select more than {max} items of this product per order.",
                values: vec![("max", max.to_string())],
            });
        }
        if n > 0 && n < it.order_min {
            return Err(Refused {
                text: "You need to select at least {min} items of this product.",
                values: vec![("min", it.order_min.to_string())],
            });
        }
    }
    for (bi, base) in bases.iter().enumerate() {
        for rule in &base.rules {
            let mine: Vec<&Wanted> = wanted
                .iter()
                .filter(|w| {
                    w.base == bi && rule.items.iter().any(|i| i.item.id == w.product.item_id)
                })
                .collect();
            let n: i64 = mine.iter().map(|w| w.count).sum();
            let named = |text: &'static str, count: Option<(&'static str, i64)>| Refused {
                text,
                values: [
                    (
                        "cat",
                        I18nString::from_stored(&rule.category.name).localize(lang),
                    ),
                    ("base", I18nString::from_stored(&base.name).localize(lang)),
                ]
                .into_iter()
                .chain(count.map(|(k, v)| (k, v.to_string())))
                .collect(),
            };
            if n > rule.max {
                return Err(named(
                    if rule.max == 1 {
                        "You can select at most {max} add-on from the category {cat} for the product {base}."
                    } else {
                        "You can select at most {max} add-ons from the category {cat} for the product {base}."
                    },
                    Some(("max", rule.max)),
                ));
            }
            if n < rule.min {
                return Err(named(
                    if rule.min == 1 {
                        "You need to select at least {min} add-on from the category {cat} for the product {base}."
                    } else {
                        "You need to select at least {min} add-ons from the category {cat} for the product {base}."
                    },
                    Some(("min", rule.min)),
                ));
            }
            let mut per_item: HashMap<i64, i64> = HashMap::new();
            for w in &mine {
                *per_item.entry(w.product.item_id).or_default() += w.count;
            }
            if !rule.multi && per_item.values().any(|&k| k > 1) {
                return Err(named(
                    "You can select every add-on from the category {cat} for the product {base} at most once.",
                    None,
                ));
            }
        }
    }
    Ok(wanted)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_refusal_speaks_every_language() {
        let source = include_str!("addons.rs");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let texts: Vec<&str> = code
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|t| t.starts_with("You ") || t.starts_with("The ") || t.starts_with("Some "))
            .collect();
        assert!(texts.len() >= 9, "{texts:?}");
        for text in texts {
            assert_ne!(crate::values::texts::translate("de", text), text, "{text}");
        }
    }
}
