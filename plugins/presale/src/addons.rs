//! The checkout's add-on step (`checkout/addons`), first where a product in the cart takes
//! add-ons: per product, its add-on categories with their items and how many of each the
//! buyer wants. The rules' [`addons`] checks the choice and puts it in the cart.

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::domain::carts::addons::{self, Base, Choice};
use tessera::domain::carts::buying::MAX_UNITS;
use tessera::domain::storefront::Sale;
use tessera::plugin::pages::{PageAnswer, PageContext, PageRequest};
use tessera::values::texts;

use crate::checkout::{Checkout, open};
use crate::{event, present, shop};

/// `checkout/addons`.
pub struct AddOns;

/// The cart's products that take add-ons.
pub(crate) async fn offered(cx: &PageContext<'_>, c: &Checkout<'_>) -> Result<Vec<Base>, DbErr> {
    let shop = &c.shop;
    addons::offered(cx.db, shop.cache, &shop.event, &shop.settings, &c.cart).await
}

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for AddOns {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let c = match open(cx, req).await? {
            Ok(c) => c,
            Err(answer) => return Ok(answer),
        };
        let next = format!("{}/checkout/questions", c.shop.path());
        let bases = offered(cx, &c).await?;
        if bases.is_empty() {
            return Ok(PageAnswer::redirect(next));
        }
        if req.form.is_empty() {
            return Ok(page(cx, &c, &bases, None, None));
        }
        let choices = read(req, &bases);
        let shop = &c.shop;
        let (ev, lang) = (&shop.event, &shop.lang);
        let chosen = addons::choose(cx.db, shop.cache, ev, &c.cart, &bases, &choices, lang).await?;
        Ok(match chosen {
            Ok(()) => PageAnswer::redirect(next),
            Err(refused) => {
                let error = shop::said(lang, &refused);
                page(cx, &c, &bases, Some(&choices), Some(error))
            }
        })
    }
}

/// A count's field: `cp_{position}_item_{item}` or `cp_{position}_variation_{item}_{variation}`,
/// as pretix names them.
fn field(base: i64, item: i64, variation: Option<i64>) -> String {
    match variation {
        None => format!("cp_{base}_item_{item}"),
        Some(v) => format!("cp_{base}_variation_{item}_{v}"),
    }
}

/// The counts the form sends, for every add-on offered (an empty or unreadable count is 0).
fn read(req: &PageRequest, bases: &[Base]) -> Vec<Choice> {
    let mut choices = Vec::new();
    for b in bases {
        for it in b.rules.iter().flat_map(|r| r.items.iter()) {
            let variations: Vec<Option<i64>> = match it.offer {
                Some(_) => vec![None],
                None => it.variations.iter().map(|(v, _)| Some(v.id)).collect(),
            };
            for variation in variations {
                let name = field(b.position.id, it.item.id, variation);
                let count = req
                    .field(&name)
                    .and_then(|v| v.trim().parse::<i64>().ok())
                    .unwrap_or(0);
                choices.push(Choice {
                    base: b.position.id,
                    item: it.item.id,
                    variation,
                    count: count.clamp(0, MAX_UNITS),
                });
            }
        }
    }
    choices
}

/// The step's page: the products with their categories and the counts (as posted, or as in
/// the cart).
fn page(
    cx: &PageContext<'_>,
    c: &Checkout<'_>,
    bases: &[Base],
    posted: Option<&[Choice]>,
    error: Option<String>,
) -> PageAnswer {
    let lang = &c.shop.lang;
    let count = |b: &Base, item: i64, variation: Option<i64>| match posted {
        Some(choices) => choices
            .iter()
            .find(|x| x.base == b.position.id && x.item == item && x.variation == variation)
            .map_or(0, |x| x.count),
        None => b.count(item, variation),
    };
    let products: Vec<Value> = bases
        .iter()
        .enumerate()
        .map(|(n, b)| {
            let rules: Vec<Value> = b
                .rules
                .iter()
                .map(|r| {
                    let most = if r.multi { r.max } else { r.max.min(1) };
                    let items: Vec<Value> = r
                        .items
                        .iter()
                        .map(|it| {
                            let mut shown = event::item(&c.shop, it, Sale::Open, cx.public_url);
                            let adjust = |o: &mut Value, variation: Option<i64>| {
                                o["input"] = field(b.position.id, it.item.id, variation).into();
                                o["count"] = count(b, it.item.id, variation).into();
                                let left = o["order_max"].as_i64().unwrap_or(0);
                                o["order_max"] = left.min(most).into();
                                if r.included {
                                    o["price"] = texts::translate(lang, "included").into();
                                }
                            };
                            if let Some(o) = shown.get_mut("offer").filter(|o| o.is_object()) {
                                adjust(o, None);
                            }
                            if let Some(list) = shown["variations"].as_array_mut() {
                                for (o, (v, _)) in list.iter_mut().zip(&it.variations) {
                                    adjust(o, Some(v.id));
                                }
                            }
                            shown
                        })
                        .collect();
                    json!({
                        "category": present::text(&r.category.name, lang),
                        "description": present::rich_text(&present::optional_text(r.category.description.as_ref(), lang)),
                        "min": r.min,
                        "max": r.max,
                        "items": items,
                    })
                })
                .collect();
            json!({
                "name": present::text(&b.name, lang),
                "number": n + 1,
                "rules": rules,
            })
        })
        .collect();
    let mut context = c.shop.layout();
    context.extend([
        ("title".into(), "Add-ons".into()),
        ("products".into(), products.into()),
        ("error".into(), error.clone().into()),
        ("back".into(), c.shop.path().into()),
    ]);
    let status = if error.is_some() { 400 } else { 200 };
    PageAnswer::html_status(status, "presale/checkout_addons.html", context.into())
}
