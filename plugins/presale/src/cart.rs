//! The cart on the event page: putting products in (`cart/add`, the event page's form),
//! taking one out (`cart/remove`), emptying it (`cart/clear`), keeping it longer
//! (`cart/extend`), and `redeem?voucher=`, where a voucher (and the waiting list's mail)
//! leads. The cart is the browser's: a random ID in the `tessera_cart` cookie.

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::domain::carts::buying::{self, Adding, Refused, Wanted};
use tessera::domain::sale::Catalogue;
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageRequest};
use tessera::values::texts;

use crate::present;
use crate::shop::{self, Shop};

/// The cookie holding the browser's cart ID.
pub const COOKIE: &str = "tessera_cart";

/// How long the cart cookie lives (the cart itself expires much sooner).
const COOKIE_SECONDS: i64 = 60 * 60 * 24 * 30;

/// The request's cart ID, when it carries a plausible one.
pub fn cart_id(req: &PageRequest) -> Option<&str> {
    req.cookie(COOKIE)
        .filter(|c| c.len() == 64 && c.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// What the event page shows of the cart: its live positions with prices, the total, when
/// it expires and where its buttons post; `null` for an empty cart.
pub async fn summary(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
) -> Result<Value, DbErr> {
    let Some(id) = cart_id(req) else {
        return Ok(Value::Null);
    };
    let positions = buying::positions(cx.db, shop.event.id, id).await?;
    if positions.is_empty() {
        return Ok(Value::Null);
    }
    let mut dates: Vec<i64> = positions.iter().filter_map(|p| p.subevent_id).collect();
    dates.sort_unstable();
    dates.dedup();
    let catalogue = Catalogue::load_kept(cx.db, shop.cache, &shop.event, &dates).await?;
    let currency = &shop.event.currency;
    let lines: Vec<Value> = positions
        .iter()
        .map(|p| {
            let date = p
                .subevent_id
                .and_then(|d| catalogue.subevent(d))
                .map(|d| present::text(&d.name, &shop.lang));
            json!({
                "id": p.id,
                "name": catalogue.product_name(p.item_id, p.variation_id, &shop.lang),
                "date": date,
                "price": present::money(p.price_cents, currency),
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
        "total": present::money(positions.iter().map(|p| p.price_cents).sum(), currency),
        "expires": present::moment(expires, &shop.event.timezone, &shop.lang),
        "remove_url": format!("{base}/cart/remove"),
        "clear_url": format!("{base}/cart/clear"),
        "extend_url": format!("{base}/cart/extend"),
        "checkout_url": format!("{base}/checkout/start"),
    }))
}

/// `cart/add`: the event page's form.
pub struct Add;

/// `cart/remove`: takes the position `id` out.
pub struct Remove;

/// `cart/clear`: empties the cart.
pub struct Clear;

/// `cart/extend`: keeps the cart longer.
pub struct Extend;

/// `redeem?voucher=`: the event page (or the voucher's date) with the voucher applied.
pub struct Redeem;

#[async_trait::async_trait]
impl Page for Add {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let (id, new) = match cart_id(req) {
            Some(id) => (id.to_owned(), false),
            None => (tessera::domain::tokens::generate(), true),
        };
        let added = match wanted(req) {
            Err(refused) => Err(refused),
            Ok(wanted) => {
                let adding = Adding {
                    cart_id: &id,
                    date: req.field("subevent").and_then(|d| d.parse().ok()),
                    wanted,
                    voucher: req.field("_voucher_code"),
                    settings: &shop.settings,
                };
                buying::add(cx.db, shop.cache, &shop.event, adding).await?
            }
        };
        let answer = match added {
            Ok(()) => PageAnswer::redirect(back(&shop, req)),
            Err(refused) => {
                let message = said(&shop.lang, &refused);
                crate::event::render(cx, &shop, req, Some(message)).await?
            }
        };
        Ok(if new {
            answer.with_cookie(COOKIE, &id, COOKIE_SECONDS)
        } else {
            answer
        })
    }
}

#[async_trait::async_trait]
impl Page for Remove {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let position = req.field("id").and_then(|p| p.parse().ok());
        if let (Some(cart), Some(position)) = (cart_id(req), position) {
            buying::remove(cx.db, &shop.event, cart, position).await?;
        }
        Ok(PageAnswer::redirect(back(&shop, req)))
    }
}

#[async_trait::async_trait]
impl Page for Clear {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        if let Some(cart) = cart_id(req) {
            buying::clear(cx.db, &shop.event, cart).await?;
        }
        Ok(PageAnswer::redirect(back(&shop, req)))
    }
}

#[async_trait::async_trait]
impl Page for Extend {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        if let Some(cart) = cart_id(req) {
            buying::extend(cx.db, shop.cache, &shop.event, cart, &shop.settings).await?;
        }
        Ok(PageAnswer::redirect(back(&shop, req)))
    }
}

#[async_trait::async_trait]
impl Page for Redeem {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let code = req.query("voucher").unwrap_or_default().trim();
        let now = tessera::values::now();
        let date =
            match tessera::domain::storefront::voucher(cx.db, shop.event.id, code, now).await? {
                Ok(v) => v.subevent_id,
                Err(_) => None,
            };
        let place = match date {
            Some(d) => format!("{}/{d}", shop.path()),
            None => shop.path(),
        };
        let code: String = form_urlencoded::byte_serialize(code.as_bytes()).collect();
        Ok(PageAnswer::redirect(format!("{place}?voucher={code}")))
    }
}

/// Where a cart's form leads back to: the event page (of the form's date).
fn back(shop: &Shop<'_>, req: &PageRequest) -> String {
    match req
        .field("subevent")
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()) && !d.is_empty())
    {
        Some(d) => format!("{}/{d}", shop.path()),
        None => shop.path(),
    }
}

/// A refusal in the reader's language.
pub fn said(lang: &str, refused: &Refused) -> String {
    let values: Vec<(&str, &str)> = refused
        .values
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .collect();
    texts::fill(texts::translate(lang, refused.text), &values)
}

/// The products the form asks for: `item_{id}` and `variation_{item}_{variation}` counts,
/// and `price_{item}[_{variation}]` for a price of the buyer's choice.
fn wanted(req: &PageRequest) -> Result<Vec<Wanted>, Refused> {
    let mut wanted = Vec::new();
    for (name, value) in &req.form {
        let ids = if let Some(rest) = name.strip_prefix("item_") {
            rest.parse().ok().map(|i| (i, None))
        } else if let Some(rest) = name.strip_prefix("variation_") {
            rest.split_once('_')
                .and_then(|(i, v)| Some((i.parse().ok()?, Some(v.parse().ok()?))))
        } else {
            None
        };
        let Some((item, variation)) = ids else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        let count: i64 = value
            .parse()
            .map_err(|_| Refused::from("Please enter numbers only."))?;
        if count < 0 {
            return Err("Please enter positive numbers only.".into());
        }
        let price_field = match variation {
            Some(v) => format!("price_{item}_{v}"),
            None => format!("price_{item}"),
        };
        let price = match req
            .field(&price_field)
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            None => None,
            Some(p) => Some(
                tessera::values::Money::parse(&p.replace(',', "."))
                    .map_err(|_| Refused::from("Please enter a valid price."))?
                    .0,
            ),
        };
        wanted.push(Wanted {
            item,
            variation,
            count,
            price,
        });
    }
    Ok(wanted)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_refusal_of_the_form_speaks_every_language() {
        let source = include_str!("cart.rs");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let texts: Vec<&str> = code
            .split("from(\"")
            .skip(1)
            .chain(code.split("Err(\"").skip(1))
            .filter_map(|s| s.split('"').next())
            .collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        for text in texts {
            assert_ne!(
                tessera::values::texts::translate("de", text),
                text,
                "{text}"
            );
        }
    }
}
