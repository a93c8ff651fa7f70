//! An event's page (`/{organizer}/{event}/`, and `/{organizer}/{event}/{date}/` for a date
//! of a series): what the event is, the browser's cart, and the products with prices and
//! what is left, to put in the cart. A series without a date lists its dates instead.

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::db::entities::{subevent, voucher};
use tessera::domain::availability::State;
use tessera::domain::carts::{self, buying};
use tessera::domain::storefront::{self, ItemOffer, Look, Offer, Sale, Unavailable};
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageRequest};

use crate::present;
use crate::shop::{self, Shop};

/// The event page.
pub struct EventPage;

#[async_trait::async_trait]
impl Page for EventPage {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        match shop::find(cx, req).await? {
            Ok(shop) => render(cx, &shop, req, None).await,
            Err((why, lang)) => Ok(shop::closed(why, &lang)),
        }
    }
}

/// The event page, with an error of the buyer's last step above the products (then with
/// status 400).
pub async fn render(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
    error: Option<String>,
) -> Result<PageAnswer, DbErr> {
    let now = tessera::values::now();
    let date = match date_of(cx, shop, req).await? {
        Ok(date) => date,
        Err(answer) => return Ok(answer),
    };
    let mut context = shop.layout();
    context.insert("title".into(), shop.name().into());
    context.insert(
        "frontpage".into(),
        present::rich_text(&shop.text("frontpage_text")).into(),
    );
    if shop.event.has_subevents && date.is_none() {
        let dates = storefront::dates(cx.db, shop.event.id, now).await?;
        let dates: Vec<Value> = dates
            .iter()
            .map(|d| {
                json!({
                    "name": present::text(&d.name, &shop.lang),
                    "date_range": shop.date_range(Some(d)),
                    "location": shop.location(Some(d)),
                    "url": format!("{}/{}", shop.path(), d.id),
                })
            })
            .collect();
        context.insert("dates".into(), dates.into());
        context.insert("date_range".into(), shop.date_range(None).into());
        return Ok(PageAnswer::html("presale/event.html", context.into()));
    }
    let code = req
        .query("voucher")
        .or(req.field("_voucher_code"))
        .filter(|c| !c.is_empty());
    let (voucher, voucher_error) = match code {
        Some(code) => match storefront::voucher(cx.db, shop.event.id, code, now).await? {
            Ok(v) => (Some(v), None),
            Err(message) => (None, Some(message)),
        },
        None => (None, None),
    };
    let look = Look {
        date: date.as_ref().map(|d| d.id),
        voucher: voucher.as_ref(),
        settings: &shop.settings,
        now,
        add_ons: false,
    };
    let shelf = storefront::shelf(cx.db, shop.cache, &shop.event, &look).await?;
    let sale = storefront::sale(&shop.event, date.as_ref(), now);
    let categories: Vec<Value> = shelf
            .categories
            .iter()
            .map(|c| {
                json!({
                    "name": c.category.as_ref().map(|k| present::text(&k.name, &shop.lang)),
                    "description": c.category.as_ref().map(|k| present::rich_text(&present::optional_text(k.description.as_ref(), &shop.lang))),
                    "items": c.items.iter().map(|i| item(shop, i, sale, cx.public_url)).collect::<Vec<_>>(),
                })
            })
            .collect();
    let buyable = sale == Sale::Open && shelf.items().any(ItemOffer::buyable);
    context.extend([
        ("date_range".into(), shop.date_range(date.as_ref()).into()),
        ("location".into(), shop.location(date.as_ref()).into()),
        ("sale".into(), shop.sale_message(sale).into()),
        ("categories".into(), categories.into()),
        ("buyable".into(), buyable.into()),
        (
            "cart_url".into(),
            format!("{}/cart/add", shop.path()).into(),
        ),
        ("subevent".into(), date.as_ref().map(|d| d.id).into()),
        (
            "voucher".into(),
            voucher_context(voucher.as_ref(), voucher_error),
        ),
        (
            "voucher_explanation".into(),
            shop.text("voucher_explanation_text").into(),
        ),
        ("cart".into(), cart_summary(cx, shop, req).await?),
    ]);
    let status = if error.is_some() { 400 } else { 200 };
    context.insert("error".into(), error.into());
    Ok(PageAnswer::html_status(
        status,
        "presale/event.html",
        context.into(),
    ))
}

/// The date of a series the path names: `Ok(None)` without one; the not-found page for a
/// date that is not an active one of this event (or for a date of an event that is no
/// series).
async fn date_of(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
) -> Result<Result<Option<subevent::Model>, PageAnswer>, DbErr> {
    let named = req.params.get("subevent").map(String::as_str);
    let Some(id) = named.or(req.field("subevent")) else {
        return Ok(Ok(None));
    };
    let found = match id.parse::<i64>() {
        Ok(id) if shop.event.has_subevents => storefront::date(cx.db, shop.event.id, id).await?,
        _ => None,
    };
    Ok(found.map(Some).ok_or_else(PageAnswer::not_found))
}

fn voucher_context(voucher: Option<&voucher::Model>, error: Option<&str>) -> Value {
    json!({"code": voucher.map(|v| v.code.clone()), "error": error})
}

/// An item as the page shows it.
pub(crate) fn item(shop: &Shop<'_>, it: &ItemOffer, sale: Sale, public_url: &str) -> Value {
    let lang = &shop.lang;
    let show_left = it
        .item
        .show_quota_left
        .unwrap_or(shop.flag("show_quota_left"));
    let open = sale == Sale::Open;
    let waits = open && shop.flag("waiting_list_enabled") && it.item.allow_waitinglist;
    let offer_json = |o: &Offer, input: String| {
        let waiting_list =
            (waits && matches!(o.stock.state, State::Gone | State::Ordered)).then(|| {
                let p = &o.product;
                let mut url = format!("{}/waitinglist?item={}", shop.path(), p.item_id);
                if let Some(v) = p.variation_id {
                    url.push_str(&format!("&var={v}"));
                }
                if let Some(d) = p.subevent_id {
                    url.push_str(&format!("&subevent={d}"));
                }
                url
            });
        json!({
            "waiting_list": waiting_list,
            "price": price_text(shop, o),
            "original_price": o.original_price_cents.map(|c| present::money(c, &shop.event.currency)),
            "stock": stock_text(o, show_left),
            "left": o.stock.left,
            "order_max": if open { o.order_max } else { 0 },
            "input": input,
        })
    };
    let id = it.item.id;
    json!({
        "id": id,
        "name": present::text(&it.item.name, lang),
        "description": present::rich_text(&present::optional_text(it.item.description.as_ref(), lang)),
        "picture": it.item.picture.as_deref().map(|p| tessera::domain::files::url(public_url, p)),
        "free_price": it.item.free_price,
        "order_min": it.order_min,
        "unavailable": it.unavailable.map(|u| unavailable_text(shop, it, u)),
        "offer": it.offer.as_ref().map(|o| offer_json(o, format!("item_{id}"))),
        "variations": it.variations.iter().map(|(v, o)| {
            let mut shown = offer_json(o, format!("variation_{id}_{}", v.id));
            shown["name"] = present::text(&v.value, lang).into();
            shown["description"] = present::rich_text(&present::optional_text(v.description.as_ref(), lang)).into();
            shown
        }).collect::<Vec<_>>(),
    })
}

/// The price for people: gross, or net with the tax beside it when `display_net_prices`.
fn price_text(shop: &Shop<'_>, o: &Offer) -> String {
    let currency = &shop.event.currency;
    if shop.flag("display_net_prices") && o.tax.rate_bps > 0 {
        tessera::values::texts::fill(
            tessera::values::texts::translate(&shop.lang, "{price} plus {rate} % tax"),
            &[
                (
                    "price",
                    &present::money(o.price_cents - o.tax.value_cents, currency),
                ),
                ("rate", &rate(o.tax.rate_bps)),
            ],
        )
    } else {
        present::money(o.price_cents, currency)
    }
}

/// A rate in basis points as people write it (`19`, `7.5`).
fn rate(bps: i64) -> String {
    let whole = format!("{}.{:02}", bps / 100, bps % 100);
    whole.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// What is left, for people: sold out, reserved, or (when shown) how many.
fn stock_text(o: &Offer, show_left: bool) -> Option<&'static str> {
    match o.stock.state {
        State::Gone | State::Ordered => Some("Sold out"),
        State::Reserved => Some("Reserved"),
        State::Ok => (show_left && o.stock.left.is_some()).then_some("{left} left"),
    }
}

/// Why an item cannot be bought now, for people.
fn unavailable_text(shop: &Shop<'_>, it: &ItemOffer, why: Unavailable) -> String {
    let lang = &shop.lang;
    let said = |text| tessera::values::texts::translate(lang, text).to_owned();
    match (why, it.item.available_from) {
        (Unavailable::AvailableFrom, Some(at)) => tessera::values::texts::fill(
            tessera::values::texts::translate(lang, "Available from {date}"),
            &[("date", &present::moment(at, &shop.event.timezone, lang))],
        ),
        (Unavailable::AvailableFrom, None) => said("Not yet available"),
        (Unavailable::AvailableUntil, _) => said("Not available anymore"),
        (Unavailable::RequireVoucher, _) => said("Only available with a voucher"),
    }
}

/// What the event page shows of the cart: its live positions with prices, the total, when
/// it expires and where its buttons post; `null` for an empty cart.
async fn cart_summary(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
) -> Result<Value, DbErr> {
    let Some(id) = shop::cart_id(req) else {
        return Ok(Value::Null);
    };
    let held = buying::positions(cx.db, shop.event.id, id).await?;
    let positions = carts::addons::in_order(&held);
    if positions.is_empty() {
        return Ok(Value::Null);
    }
    let catalogue = carts::catalogue_of(cx.db, shop.cache, &shop.event, &positions).await?;
    let priced = carts::discounted(cx.db, &catalogue, &positions, tessera::values::now()).await?;
    let currency = &shop.event.currency;
    let lines: Vec<Value> = positions
        .iter()
        .zip(&priced)
        .map(|(p, priced)| {
            let date = p
                .subevent_id
                .and_then(|d| catalogue.subevent(d))
                .map(|d| present::text(&d.name, &shop.lang));
            json!({
                "id": p.id,
                "name": catalogue.product_name(p.item_id, p.variation_id, &shop.lang),
                "date": date,
                "price": present::money(priced.price, currency),
                "original_price": (priced.price != p.price_cents)
                    .then(|| present::money(p.price_cents, currency)),
                "addon": p.addon_to_id.is_some(),
            })
        })
        .collect();
    let expires = positions
        .iter()
        .map(|p| p.expires)
        .min()
        .unwrap_or_default();
    let base = shop.path();
    Ok(json!({
        "positions": lines,
        "total": present::money(priced.iter().map(|p| p.price).sum(), currency),
        "expires": present::moment(expires, &shop.event.timezone, &shop.lang),
        "remove_url": format!("{base}/cart/remove"),
        "clear_url": format!("{base}/cart/clear"),
        "extend_url": format!("{base}/cart/extend"),
        "checkout_url": format!("{base}/checkout/start"),
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_text_of_the_page_speaks_every_language() {
        let source = [include_str!("shop.rs"), include_str!("event.rs")].concat();
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let code = code
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("( ", "(");
        let mut texts = Vec::new();
        for call in [
            "translate(lang, \"",
            "translate(&shop.lang, \"",
            "translate(&self.lang, \"",
            "said(\"",
            "=> Some(\"",
        ] {
            texts.extend(code.split(call).skip(1).filter_map(|s| s.split('"').next()));
        }
        texts.push("{left} left");
        assert!(texts.len() >= 10, "{texts:?}");
        for text in texts {
            assert_ne!(
                tessera::values::texts::translate("de", text),
                text,
                "{text}"
            );
        }
    }
}
