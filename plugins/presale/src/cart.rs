//! The cart on the event page: putting products in (`cart/add`, the event page's form),
//! taking one out (`cart/remove`), emptying it (`cart/clear`), keeping it longer
//! (`cart/extend`), and `redeem?voucher=`, where a voucher (and the waiting list's mail)
//! leads. The cart is the browser's ([`crate::shop::cart_id`]); an error is shown on the
//! event page.

use sea_orm::DbErr;
use tessera::domain::carts::buying::{self, Adding, Refused, Wanted};
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageRequest};

use crate::shop::{self, Shop};

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
        let (id, new) = match shop::cart_id(req) {
            Some(id) => (id.to_owned(), false),
            None => (tessera::domain::tokens::generate(), true),
        };
        let added = put(cx, &shop, req, &id).await?;
        let answer = match added {
            Ok(()) => PageAnswer::redirect(back(&shop, req)),
            Err(refused) => {
                let message = shop::said(&shop.lang, &refused);
                crate::event::render(cx, &shop, req, Some(message)).await?
            }
        };
        Ok(if new {
            answer.with_cookie(shop::CART_COOKIE, &id, shop::CART_COOKIE_SECONDS)
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
        if let (Some(cart), Some(position)) = (shop::cart_id(req), position) {
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
        if let Some(cart) = shop::cart_id(req) {
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
        if let Some(cart) = shop::cart_id(req) {
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

/// Puts what the form asks for into the cart `id`.
pub(crate) async fn put(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
    id: &str,
) -> Result<Result<(), Refused>, DbErr> {
    let wanted = match wanted(req) {
        Ok(wanted) => wanted,
        Err(refused) => return Ok(Err(refused)),
    };
    let adding = Adding {
        cart_id: id,
        date: req.field("subevent").and_then(|d| d.parse().ok()),
        wanted,
        voucher: req.field("_voucher_code"),
        settings: &shop.settings,
    };
    buying::add(cx.db, shop.cache, &shop.event, adding).await
}

/// Where a cart's form leads back to: the event page (of the form's date).
pub(crate) fn back(shop: &Shop<'_>, req: &PageRequest) -> String {
    match req
        .field("subevent")
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()) && !d.is_empty())
    {
        Some(d) => format!("{}/{d}", shop.path()),
        None => shop.path(),
    }
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
