//! What can be sold: an event's items, variations, dates, prices, taxes and the quotas each
//! product counts against, loaded once per request and shared by carts, orders, vouchers and
//! the waiting list.

use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entities::{
    event, item, item_variation, quota, quota_item, quota_variation, subevent, subevent_item_price,
    tax_rule,
};
use crate::domain::cache::Cache;
use crate::domain::discounts::Discounts;
use crate::domain::seating::sell::Seating;
use crate::domain::tax_rules::reverse_charge::{self, Buyer};

/// A product of an event: an item, its variation, on a date of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Product {
    /// The item.
    pub item_id: i64,
    /// The variation; `None` for items without variations.
    pub variation_id: Option<i64>,
    /// The date of a series; `None` outside series.
    pub subevent_id: Option<i64>,
}

/// The tax included in a price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tax {
    /// The rule applied.
    pub rule_id: Option<i64>,
    /// Rate in basis points (19 % is 1900).
    pub rate_bps: i64,
    /// Tax included in the gross price, in cents.
    pub value_cents: i64,
}

impl Tax {
    /// The tax a gross price includes at this rule.
    pub fn of(rule: Option<&tax_rule::Model>, gross_cents: i64) -> Self {
        let Some(rule) = rule else {
            return Self::default();
        };
        let rate = rule.rate_bps;
        let divisor = 10_000 + rate;
        let value = if divisor == 0 {
            0
        } else {
            (gross_cents * rate + divisor / 2).div_euclid(divisor)
        };
        Self {
            rule_id: Some(rule.id),
            rate_bps: rate,
            value_cents: value,
        }
    }

    /// The tax a gross price includes at this rule for this buyer: none (at a rate of 0)
    /// when the EU reverse charge applies to them.
    pub fn for_buyer(
        rule: Option<&tax_rule::Model>,
        gross_cents: i64,
        buyer: Option<&Buyer>,
    ) -> Self {
        match rule {
            Some(r) if reverse_charge::applies(r, buyer) => Self {
                rule_id: Some(r.id),
                rate_bps: 0,
                value_cents: 0,
            },
            _ => Self::of(rule, gross_cents),
        }
    }
}

struct QuotaMembers {
    id: i64,
    subevent_id: Option<i64>,
    items: HashSet<i64>,
    variations: HashSet<i64>,
}

/// What every request of an event sells from: its items, variations, tax rules and which
/// quotas hold what. It changes only through the catalogue's own endpoints, so the process
/// cache may keep it (see [`Catalogue::load_kept`]).
pub struct Products {
    items: Items,
    variations: Variations,
    tax_rules: HashMap<i64, tax_rule::Model>,
    quotas: Vec<QuotaMembers>,
    discounts: Discounts,
}

impl Products {
    async fn load(db: &impl ConnectionTrait, event_id: i64) -> Result<Self, DbErr> {
        let items: HashMap<i64, item::Model> = item::Entity::find()
            .filter(item::Column::EventId.eq(event_id))
            .all(db)
            .await?
            .into_iter()
            .map(|i| (i.id, i))
            .collect();
        let variations = item_variation::Entity::find()
            .filter(item_variation::Column::ItemId.is_in(items.keys().copied()))
            .all(db)
            .await?
            .into_iter()
            .map(|v| (v.id, v))
            .collect();
        let tax_rules = tax_rule::Entity::find()
            .filter(tax_rule::Column::EventId.eq(event_id))
            .all(db)
            .await?
            .into_iter()
            .map(|t| (t.id, t))
            .collect();
        Ok(Self {
            items: Arc::new(items),
            variations: Arc::new(variations),
            tax_rules,
            quotas: load_quotas(db, event_id).await?,
            discounts: Discounts::new(super::discounts::manage::of_event(db, event_id).await?),
        })
    }
}

/// An event's items by ID.
pub type Items = Arc<HashMap<i64, item::Model>>;

/// An event's variations by ID.
pub type Variations = Arc<HashMap<i64, item_variation::Model>>;

/// The sellable catalogue of one event, with the dates of a series a request names.
pub struct Catalogue {
    event_id: i64,
    has_subevents: bool,
    products: Arc<Products>,
    subevents: HashMap<i64, subevent::Model>,
    subevent_prices: HashMap<(i64, i64), i64>,
}

/// Why a product cannot be sold: the field and the message.
pub type Refusal = (&'static str, String);

impl Catalogue {
    /// Loads the event's items, variations, taxes and quotas, and those of `subevent_ids`
    /// that belong to the event.
    pub async fn load(
        db: &impl ConnectionTrait,
        ev: &event::Model,
        subevent_ids: &[i64],
    ) -> Result<Self, DbErr> {
        Self::load_kept(db, None, ev, subevent_ids).await
    }

    /// [`Catalogue::load`], taking the event's products from the process cache when it
    /// holds them for `generation` (read before anything else of the request), and keeping
    /// them there otherwise.
    pub async fn load_kept(
        db: &impl ConnectionTrait,
        cache: Option<(&Cache, u64)>,
        ev: &event::Model,
        subevent_ids: &[i64],
    ) -> Result<Self, DbErr> {
        let products = match cache.and_then(|(c, g)| c.products::<Products>(g, ev.id)) {
            Some(kept) => kept,
            None => {
                let loaded = Arc::new(Products::load(db, ev.id).await?);
                if let Some((c, g)) = cache {
                    c.keep_products(g, ev.id, loaded.clone());
                }
                loaded
            }
        };
        let (subevents, subevent_prices) = if ev.has_subevents && !subevent_ids.is_empty() {
            let subevents: HashMap<i64, subevent::Model> = subevent::Entity::find()
                .filter(subevent::Column::EventId.eq(ev.id))
                .filter(subevent::Column::Id.is_in(subevent_ids.iter().copied()))
                .all(db)
                .await?
                .into_iter()
                .map(|s| (s.id, s))
                .collect();
            let prices = subevent_item_price::Entity::find()
                .filter(subevent_item_price::Column::SubeventId.is_in(subevents.keys().copied()))
                .all(db)
                .await?
                .into_iter()
                .map(|p| ((p.subevent_id, p.item_id), p.price_cents))
                .collect();
            (subevents, prices)
        } else {
            (HashMap::new(), HashMap::new())
        };
        Ok(Self {
            event_id: ev.id,
            has_subevents: ev.has_subevents,
            products,
            subevents,
            subevent_prices,
        })
    }

    /// How `ev` (this catalogue's event) sells by seat at `date`: in a series, by the date's
    /// plan and mapping (loaded with the catalogue; a date not loaded sells nothing by
    /// seat); otherwise by the event's.
    pub fn seating<'a>(&'a self, ev: &'a event::Model, date: Option<i64>) -> Seating<'a> {
        match date.map(|d| self.subevents.get(&d)) {
            None => Seating::of(ev, None),
            Some(Some(d)) => Seating::of(ev, Some(d)),
            Some(None) => Seating::NONE,
        }
    }

    /// The event's items and variations by ID, shared with the catalogue (cheap to take).
    pub fn items_and_variations(&self) -> (Items, Variations) {
        (
            self.products.items.clone(),
            self.products.variations.clone(),
        )
    }

    /// The item, if it is one of the event's.
    pub fn item(&self, id: i64) -> Option<&item::Model> {
        self.products.items.get(&id)
    }

    /// A product's name in `lang`: the item's name, and its variation's after a dash.
    pub fn product_name(&self, item_id: i64, variation_id: Option<i64>, lang: &str) -> String {
        product_name(
            self.products.items.get(&item_id),
            variation_id.and_then(|v| self.products.variations.get(&v)),
            lang,
        )
    }

    /// Checks that the product can be sold at all: an active item of this event, a variation
    /// exactly when the item has them, a date exactly in a series, and a quota.
    pub fn resolve(
        &self,
        item_id: i64,
        variation_id: Option<i64>,
        subevent_id: Option<i64>,
    ) -> Result<Product, Refusal> {
        let item = self.products.items.get(&item_id).ok_or((
            "item",
            format!("Invalid pk \"{item_id}\" - object does not exist."),
        ))?;
        if !item.active {
            return Err(("item", "The selected product is not active.".into()));
        }
        match (item.has_variations, variation_id) {
            (true, None) => {
                return Err((
                    "variation",
                    "You should specify a variation for this item.".into(),
                ));
            }
            (false, Some(_)) => {
                return Err(("variation", "This item does not have variations.".into()));
            }
            (true, Some(v)) => {
                let variation = self
                    .products
                    .variations
                    .get(&v)
                    .filter(|var| var.item_id == item_id)
                    .ok_or((
                        "variation",
                        "The variation does not belong to this item.".into(),
                    ))?;
                if !variation.active {
                    return Err(("variation", "The selected variation is not active.".into()));
                }
            }
            (false, None) => {}
        }
        match (self.has_subevents, subevent_id) {
            (true, None) => {
                return Err(("subevent", "You need to set a subevent.".into()));
            }
            (false, Some(_)) => {
                return Err((
                    "subevent",
                    "You cannot set a subevent for this event.".into(),
                ));
            }
            (true, Some(s)) => {
                let date = self.subevents.get(&s).ok_or((
                    "subevent",
                    format!("Invalid pk \"{s}\" - object does not exist."),
                ))?;
                if !date.active {
                    return Err(("subevent", "The selected date is not active.".into()));
                }
            }
            (false, None) => {}
        }
        let product = Product {
            item_id,
            variation_id,
            subevent_id,
        };
        if self.quotas_of(&product).is_empty() {
            return Err((
                "item",
                "The product is not assigned to a quota and cannot be sold.".into(),
            ));
        }
        Ok(product)
    }

    /// The IDs of the quotas a product counts against.
    pub fn quotas_of(&self, p: &Product) -> Vec<i64> {
        self.products
            .quotas
            .iter()
            .filter(|q| q.subevent_id == p.subevent_id)
            .filter(|q| match p.variation_id {
                Some(v) => q.variations.contains(&v),
                None => q.items.contains(&p.item_id),
            })
            .map(|q| q.id)
            .collect()
    }

    /// The product's price without vouchers: the date's price for the item, else the
    /// variation's, else the item's; taxes added when the item's rule does not include them,
    /// and taken out for a buyer under reverse charge, who pays the net price.
    pub fn default_price(&self, p: &Product, buyer: Option<&Buyer>) -> i64 {
        let item = &self.products.items[&p.item_id];
        let variation_price = p
            .variation_id
            .and_then(|v| self.products.variations.get(&v))
            .and_then(|v| v.default_price_cents);
        let base = p
            .subevent_id
            .and_then(|s| self.subevent_prices.get(&(s, p.item_id)).copied())
            .or(variation_price)
            .unwrap_or(item.default_price_cents);
        match self.tax_rule_of(p.item_id) {
            Some(rule) if reverse_charge::applies(rule, buyer) => match rule.price_includes_tax {
                true => base - Tax::of(Some(rule), base).value_cents,
                false => base,
            },
            Some(rule) if !rule.price_includes_tax => {
                base + (base * rule.rate_bps + 5_000).div_euclid(10_000)
            }
            _ => base,
        }
    }

    fn tax_rule_of(&self, item_id: i64) -> Option<&tax_rule::Model> {
        self.products
            .items
            .get(&item_id)
            .and_then(|i| i.tax_rule_id)
            .and_then(|id| self.products.tax_rules.get(&id))
    }

    /// The tax a gross price of the item includes for the buyer.
    pub fn tax(&self, item_id: i64, gross_cents: i64, buyer: Option<&Buyer>) -> Tax {
        Tax::for_buyer(self.tax_rule_of(item_id), gross_cents, buyer)
    }

    /// One of the event's tax rules.
    pub fn tax_rule(&self, id: i64) -> Option<&tax_rule::Model> {
        self.products.tax_rules.get(&id)
    }

    /// One of the dates the catalogue was loaded with.
    pub fn subevent(&self, id: i64) -> Option<&subevent::Model> {
        self.subevents.get(&id)
    }

    /// Whether the event is a series.
    pub fn has_subevents(&self) -> bool {
        self.has_subevents
    }

    /// Whether the event has this tax rule.
    pub fn has_tax_rule(&self, id: i64) -> bool {
        self.products.tax_rules.contains_key(&id)
    }

    /// The tax a gross amount includes at one of the event's rules, for the buyer.
    pub fn fee_tax(&self, rule_id: Option<i64>, gross_cents: i64, buyer: Option<&Buyer>) -> Tax {
        Tax::for_buyer(
            rule_id.and_then(|id| self.products.tax_rules.get(&id)),
            gross_cents,
            buyer,
        )
    }

    /// The event's automatic discounts.
    pub fn discounts(&self) -> &Discounts {
        &self.products.discounts
    }

    /// When a date of a series (loaded with the catalogue) begins.
    pub fn date_start(&self, subevent_id: Option<i64>) -> Option<DateTime<Utc>> {
        subevent_id
            .and_then(|id| self.subevents.get(&id))
            .map(|s| s.date_from)
    }

    /// The event this catalogue is of.
    pub fn event_id(&self) -> i64 {
        self.event_id
    }
}

async fn load_quotas(db: &impl ConnectionTrait, event_id: i64) -> Result<Vec<QuotaMembers>, DbErr> {
    let rows = quota::Entity::find()
        .filter(quota::Column::EventId.eq(event_id))
        .all(db)
        .await?;
    let mut quotas: HashMap<i64, QuotaMembers> = rows
        .into_iter()
        .map(|q| {
            (
                q.id,
                QuotaMembers {
                    id: q.id,
                    subevent_id: q.subevent_id,
                    items: HashSet::new(),
                    variations: HashSet::new(),
                },
            )
        })
        .collect();
    if quotas.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = quotas.keys().copied().collect();
    for m in quota_item::Entity::find()
        .filter(quota_item::Column::QuotaId.is_in(ids.iter().copied()))
        .all(db)
        .await?
    {
        if let Some(q) = quotas.get_mut(&m.quota_id) {
            q.items.insert(m.item_id);
        }
    }
    for m in quota_variation::Entity::find()
        .filter(quota_variation::Column::QuotaId.is_in(ids))
        .all(db)
        .await?
    {
        if let Some(q) = quotas.get_mut(&m.quota_id) {
            q.variations.insert(m.variation_id);
        }
    }
    let mut out: Vec<QuotaMembers> = quotas.into_values().collect();
    out.sort_by_key(|q| q.id);
    Ok(out)
}

/// A product's name in `lang`: the item's name, and the variation's after a dash.
pub fn product_name(
    item: Option<&item::Model>,
    variation: Option<&item_variation::Model>,
    lang: &str,
) -> String {
    let text = |v: &serde_json::Value| crate::values::I18nString::from_stored(v).localize(lang);
    let name = item.map(|i| text(&i.name)).unwrap_or_default();
    match variation {
        Some(v) => format!("{name} – {}", text(&v.value)),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn included_tax_is_rounded_to_the_nearest_cent() {
        let rule = tax_rule::Model {
            id: 1,
            event_id: 1,
            name: serde_json::json!({}),
            rate_bps: 1900,
            price_includes_tax: true,
            eu_reverse_charge: false,
            home_country: None,
        };
        assert_eq!(Tax::of(Some(&rule), 2300).value_cents, 367);
        assert_eq!(Tax::of(Some(&rule), 0).value_cents, 0);
        assert_eq!(Tax::of(None, 2300), Tax::default());
    }
}
