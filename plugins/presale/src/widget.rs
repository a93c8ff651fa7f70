//! `widget/product_list`: what pretix's embeddable widget reads of an event (its products by
//! category, prices, availability and whether anything can be put in the cart), in pretix's
//! shape, readable from any site. A series without a date answers the list of its dates.
//! Errors are answered as pretix answers them: status 200 with `error`.

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::domain::availability::{self, State};
use tessera::domain::storefront::{self, ItemOffer, Look, Offer, Sale};
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageRequest};
use tessera::values::texts::translate;

use crate::present::{self, decimal};
use crate::shop::{self, Closed, Shop};

/// The widget's product list.
pub struct ProductList;

/// Most IDs a filter (`items`, `categories`, `variations`) is read with.
const MAX_FILTER_IDS: usize = 500;

/// Dates of a series per page of the list (pretix's).
const DATES_PER_PAGE: u64 = 50;

#[async_trait::async_trait]
impl Page for ProductList {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((Closed::Unknown, _)) => return Ok(PageAnswer::not_found()),
            Err((Closed::Disabled(text), lang)) => return Ok(error(cx, translate(&lang, text))),
        };
        let now = tessera::values::now();
        let date = match req.params.get("subevent") {
            None => None,
            Some(_) if !shop.event.has_subevents => {
                return Ok(error(
                    cx,
                    translate(&shop.lang, "This is not an event series."),
                ));
            }
            Some(id) => match id.parse().ok() {
                Some(id) => match storefront::date(cx.db, shop.event.id, id).await? {
                    Some(d) => Some(d),
                    None => {
                        return Ok(error(
                            cx,
                            translate(
                                &shop.lang,
                                "The selected date does not exist in this event series.",
                            ),
                        ));
                    }
                },
                None => return Ok(PageAnswer::not_found()),
            },
        };
        if shop.event.has_subevents && date.is_none() {
            return dates(cx, &shop, req, now).await;
        }
        let sale = storefront::sale(&shop.event, date.as_ref(), now);
        // The cart the widget keeps, which its frames fill (`w/{cart}/`).
        let cart_exists = match req.query("cart_id").filter(|c| shop::is_cart_id(c)) {
            Some(cart) => !tessera::domain::carts::buying::positions(cx.db, shop.event.id, cart)
                .await?
                .is_empty(),
            None => false,
        };
        let mut data = json!({
            "target_url": format!("{}{}/", cx.public_url, shop.home()),
            "subevent": date.as_ref().map(|d| d.id),
            "currency": shop.event.currency,
            "currency_places": 2,
            "display_net_prices": shop.flag("display_net_prices"),
            "use_native_spinners": false,
            "show_variations_expanded": false,
            "waiting_list_enabled": shop.flag("waiting_list_enabled"),
            "voucher_explanation_text": present::rich_text(&shop.text("voucher_explanation_text")),
            "error": Value::Null,
            "cart_exists": cart_exists,
            "name": date.as_ref().map_or_else(|| shop.name(), |d| present::text(&d.name, &shop.lang)),
            "frontpage_text": present::rich_text(&shop.text("frontpage_text")),
            "location": present::rich_text(&shop.location(date.as_ref())),
            "date_range": shop.date_range(date.as_ref()),
            "vouchers_exist": sale == Sale::Open && storefront::has_vouchers(cx.db, shop.event.id).await?,
            "has_seating_plan": false,
            "has_seating_plan_waitinglist": false,
            "poweredby": powered_by(cx),
        });
        if let Some(message) = shop.sale_message(sale) {
            data["error"] = message.into();
        }
        let mut voucher = None;
        if let Some(code) = req.query("voucher") {
            match storefront::voucher(cx.db, shop.event.id, code, now).await? {
                Ok(v) => voucher = Some(v),
                Err(message) => {
                    data["error"] = translate(&shop.lang, message).into();
                    data["items_by_category"] = json!([]);
                    data["display_add_to_cart"] = false.into();
                    data["itemnum"] = 0.into();
                    data["vouchers_exist"] = false.into();
                    return Ok(PageAnswer::json(data));
                }
            }
        }
        let look = Look {
            date: date.as_ref().map(|d| d.id),
            voucher: voucher.as_ref(),
            settings: &shop.settings,
            now,
            add_ons: false,
        };
        let shelf = storefront::shelf(cx.db, shop.cache, &shop.event, &look).await?;
        let filter = Filter::of(req);
        let mut itemnum = 0;
        let mut buyable = false;
        let categories: Vec<Value> = shelf
            .categories
            .iter()
            .filter_map(|c| {
                let items: Vec<Value> = c
                    .items
                    .iter()
                    .filter(|i| filter.keeps(i, c.category.as_ref().map(|k| k.id)))
                    .map(|i| {
                        itemnum += 1;
                        buyable |= i.buyable();
                        item(&shop, i, &filter, cx.public_url)
                    })
                    .collect();
                (!items.is_empty()).then(|| {
                    json!({
                        "id": c.category.as_ref().map(|k| k.id),
                        "name": c.category.as_ref().map(|k| present::text(&k.name, &shop.lang)),
                        "description": c.category.as_ref().and_then(|k| k.description.as_ref()).map(|d| present::rich_text(&present::text(d, &shop.lang))),
                        "items": items,
                    })
                })
            })
            .collect();
        data["items_by_category"] = categories.into();
        data["display_add_to_cart"] = (buyable && sale == Sale::Open).into();
        data["itemnum"] = itemnum.into();
        Ok(PageAnswer::json(data))
    }
}

/// The `items`, `categories` and `variations` filters of the request.
struct Filter {
    items: Option<Vec<i64>>,
    categories: Option<Vec<i64>>,
    variations: Option<Vec<i64>>,
}

impl Filter {
    fn of(req: &PageRequest) -> Self {
        let ids = |name| {
            req.query(name).map(|list: &str| {
                list.split(',')
                    .take(MAX_FILTER_IDS)
                    .filter_map(|id| id.trim().parse().ok())
                    .collect()
            })
        };
        Self {
            items: ids("items"),
            categories: ids("categories"),
            variations: ids("variations"),
        }
    }

    fn keeps(&self, it: &ItemOffer, category: Option<i64>) -> bool {
        self.items
            .as_ref()
            .is_none_or(|ids| ids.contains(&it.item.id))
            && self
                .categories
                .as_ref()
                .is_none_or(|ids| category.is_some_and(|c| ids.contains(&c)))
            && self
                .variations
                .as_ref()
                .is_none_or(|ids| it.variations.iter().any(|(v, _)| ids.contains(&v.id)))
    }

    fn keeps_variation(&self, id: i64) -> bool {
        self.variations.as_ref().is_none_or(|ids| ids.contains(&id))
    }
}

/// An item in pretix's widget shape.
fn item(shop: &Shop<'_>, it: &ItemOffer, filter: &Filter, public_url: &str) -> Value {
    let lang = &shop.lang;
    let show_left = it
        .item
        .show_quota_left
        .unwrap_or(shop.flag("show_quota_left"));
    let net = shop.flag("display_net_prices");
    let avail = |o: &Offer| json!([o.stock.code(), if show_left { o.stock.left } else { None }]);
    let reason = it.unavailable.map(|u| u.as_str());
    let original = |o: &Offer| {
        o.original_price_cents
            .map(|c| decimal(if net { c - included(o, c) } else { c }))
    };
    let variations: Vec<Value> = it
        .variations
        .iter()
        .filter(|(v, _)| filter.keeps_variation(v.id))
        .map(|(v, o)| {
            json!({
                "id": v.id,
                "value": present::text(&v.value, lang),
                "order_max": o.order_max,
                "description": v.description.as_ref().map(|d| present::rich_text(&present::text(d, lang))),
                "price": price(shop, o),
                "suggested_price": price(shop, o),
                "original_price": original(o),
                "avail": avail(o),
                "current_unavailability_reason": reason,
            })
        })
        .collect();
    let prices: Vec<i64> = it.variations.iter().map(|(_, o)| o.price_cents).collect();
    let picture = it
        .item
        .picture
        .as_deref()
        .map(|p| tessera::domain::files::url(public_url, p));
    json!({
        "id": it.item.id,
        "name": present::text(&it.item.name, lang),
        "picture": picture,
        "picture_fullsize": picture,
        "description": it.item.description.as_ref().map(|d| present::rich_text(&present::text(d, lang))),
        "has_variations": it.item.has_variations,
        "current_unavailability_reason": reason,
        "order_min": it.item.min_per_order,
        "order_max": it.offer.as_ref().map(|o| o.order_max),
        "price": it.offer.as_ref().map(|o| price(shop, o)),
        "suggested_price": it.offer.as_ref().map(|o| price(shop, o)),
        "min_price": it.item.has_variations.then(|| prices.iter().min().copied().map(decimal)).flatten(),
        "max_price": it.item.has_variations.then(|| prices.iter().max().copied().map(decimal)).flatten(),
        "allow_waitinglist": it.item.allow_waitinglist,
        "mandatory_priced_addons": false,
        "free_price": it.item.free_price,
        "avail": it.offer.as_ref().map(avail),
        "original_price": it.offer.as_ref().and_then(original),
        "variations": variations,
    })
}

/// The tax a gross amount includes at the offer's rate.
fn included(o: &Offer, gross: i64) -> i64 {
    let divisor = 10_000 + o.tax.rate_bps;
    (gross * o.tax.rate_bps + divisor / 2).div_euclid(divisor.max(1))
}

/// pretix's price object: gross, net, tax, rate and the tax's name, as decimal strings.
fn price(shop: &Shop<'_>, o: &Offer) -> Value {
    json!({
        "gross": decimal(o.price_cents),
        "net": decimal(o.price_cents - o.tax.value_cents),
        "tax": decimal(o.tax.value_cents),
        "rate": decimal(o.tax.rate_bps),
        "name": o.tax_name.as_ref().map(|n| present::text(n, &shop.lang)).unwrap_or_default(),
        "includes_mixed_tax_rate": false,
    })
}

/// The list of a series' dates (pretix's `list` style), 50 per page from `offset`.
async fn dates(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<PageAnswer, DbErr> {
    let offset: u64 = req
        .query("offset")
        .and_then(|o| o.parse().ok())
        .unwrap_or(0)
        .min(storefront::MAX_DATES);
    let all = storefront::dates(cx.db, shop.event.id, now).await?;
    let page: Vec<_> = all
        .iter()
        .skip(offset as usize)
        .take(DATES_PER_PAGE as usize)
        .collect();
    let stock = availability::of_dates(cx.db, shop.event.id).await?;
    let mut events = Vec::new();
    for d in &page {
        let best = stock
            .get(&d.id)
            .and_then(|all| all.iter().map(|a| a.state).max());
        let (color, text, reason) = match (storefront::sale(&shop.event, Some(d), now), best) {
            (Sale::NotYet(_), _) => ("orange", "Soon", "soon"),
            (Sale::Ended, _) => ("red", "Over", "over"),
            (Sale::Open, Some(State::Ok)) => ("green", "Book now", "ok"),
            (Sale::Open, Some(State::Reserved)) => ("orange", "Reserved", "reserved"),
            (Sale::Open, Some(_)) => ("red", "Sold out", "full"),
            (Sale::Open, None) => ("none", "", "unknown"),
        };
        events.push(json!({
            "name": present::text(&d.name, &shop.lang),
            "location": present::rich_text(&shop.location(Some(d))),
            "date_range": shop.date_range(Some(d)),
            "availability": {"color": color, "text": translate(&shop.lang, text), "reason": reason},
            "event_url": format!("{}{}/", cx.public_url, shop.home()),
            "subevent": d.id,
        }));
    }
    Ok(PageAnswer::json(json!({
        "list_type": "list",
        "name": shop.name(),
        "frontpage_text": present::rich_text(&shop.text("frontpage_text")),
        "events": events,
        "has_more_events": all.len() as u64 > offset + DATES_PER_PAGE,
        "meta_filter_fields": [],
        "poweredby": powered_by(cx),
    })))
}

/// pretix's error answer: status 200 with the message.
fn error(cx: &PageContext<'_>, message: &str) -> PageAnswer {
    PageAnswer::json(json!({"error": message, "poweredby": powered_by(cx)}))
}

fn powered_by(cx: &PageContext<'_>) -> String {
    format!(
        "event ticketing powered by <a href=\"{}/\" target=\"_blank\" rel=\"noopener\">Tessera</a>",
        escape(cx.public_url)
    )
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
/// `widget/v2.css`: the widget's stylesheet, in the event's colour (an organizer's, for
/// its events' list, in the default one), for the embedding site's page.
pub struct Stylesheet;

/// The stylesheet, before its colours.
const STYLESHEET: &str = include_str!("../assets/widget.css");

#[async_trait::async_trait]
impl Page for Stylesheet {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let brand = if req.params.contains_key("event") {
            match shop::find(cx, req).await? {
                Ok(shop) => tessera::domain::settings::brand(&shop.settings).to_owned(),
                Err(_) => return Ok(PageAnswer::not_found()),
            }
        } else {
            let cache = cx.cache.current().await;
            if storefront::organizer(cx.db, cache, req.param("organizer"))
                .await?
                .is_none()
            {
                return Ok(PageAnswer::not_found());
            }
            tessera::domain::settings::BRAND_COLOUR.to_owned()
        };
        let on_brand = tessera::web::on_brand(&brand);
        let css = format!(
            ".pretix-widget-wrapper, .pretix-widget, .pretix-widget-overlay {{ --tessera-brand: {brand}; --tessera-on-brand: {on_brand}; }}\n{STYLESHEET}"
        );
        Ok(tessera::plugin::pages::PageBody::Asset {
            media_type: "text/css; charset=utf-8",
            body: css.into(),
        }
        .into())
    }
}
