//! The shop inside pretix's widget on another site: the frames it opens under
//! `/{organizer}/{event}/w/{ns}/` (the event page, the cart's forms, the checkout, the
//! waiting list), `w/{ns}/cart/create` and `w/{ns}/cart/add`, which its "Buy" posts to.
//!
//! A frame on another site gets no cookie of this one (browsers keep `SameSite=Lax`
//! cookies from cross-site frames), so a frame's cart travels in its path: `w/{cart}/...`,
//! where every link and form of the shop then stays ([`Shop::path`]). The widget names its
//! frames with its own 16-character ID and passes the cart it knows as `take_cart_id`; such
//! an address leads on to that cart's (or a new cart's) frame. The cart's unguessable ID is
//! what protects a frame's forms from other sites, as pretix's cart namespace does: a form
//! posted under the widget's own ID is refused, but for `cart/add`, which makes the cart.

use std::sync::Arc;

use sea_orm::DbErr;
use serde_json::json;
use tessera::domain::carts::{buying, checkout};
use tessera::domain::orders;
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageMethod, PageRequest, PageRoute};

use crate::shop::{self, FRAME_PARAM, Shop};

/// The route of a frame's page: `rest` under `/:organizer/:event/w/:ns`.
fn at(rest: &str) -> String {
    format!("/:organizer/:event/w/:{FRAME_PARAM}{rest}")
}

/// The frame of one of the shop's own routes (`route` is its path after
/// `/:organizer/:event`).
pub fn route(rest: &'static str, method: PageMethod, page: Arc<dyn Page>) -> PageRoute {
    PageRoute::widget(&at(rest), method, Arc::new(Framed { page, rest, method }))
}

/// The frame-only routes: a cart for the widget, its "Buy", and the placed order.
pub fn routes() -> Vec<PageRoute> {
    vec![
        PageRoute::widget(&at("/cart/create"), PageMethod::Get, Arc::new(CartCreate)),
        PageRoute::widget(&at("/cart/add"), PageMethod::Post, Arc::new(CartAdd)),
        route("/order/:code/:secret", PageMethod::Get, Arc::new(Placed)),
    ]
}

/// A shop page in a frame: answered under a cart's ID; under the widget's own ID, a read
/// leads on to the cart's frame and a form is refused.
struct Framed {
    page: Arc<dyn Page>,
    rest: &'static str,
    method: PageMethod,
}

#[async_trait::async_trait]
impl Page for Framed {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        if shop::framed_cart(req).is_some() {
            // The cookies a page sets are the top-level shop's, not a frame's.
            let mut answer = self.page.answer(cx, req).await?;
            answer.cookies.clear();
            return Ok(answer);
        }
        if !is_widget_id(req.param(FRAME_PARAM)) {
            return Ok(PageAnswer::not_found());
        }
        if self.method == PageMethod::Post {
            return Ok(refused(req));
        }
        let cart = req
            .query("take_cart_id")
            .filter(|c| shop::is_cart_id(c))
            .map_or_else(tessera::domain::tokens::generate, str::to_owned);
        let ns = shop::frame_for(&cart, req);
        let mut path = format!(
            "/{}/{}/w/{ns}{}",
            req.param("organizer"),
            req.param("event"),
            fill(self.rest, req)
        );
        let query: Vec<(&str, &str)> = req
            .query
            .iter()
            .filter(|(k, _)| k != "take_cart_id")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // What no address of the shop reads would only make the redirect too long.
        let short = query.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>() < 1000;
        if !query.is_empty() && short {
            path.push('?');
            path.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query)
                    .finish(),
            );
        }
        Ok(PageAnswer::redirect(path))
    }
}

/// A route's rest with its parameters (`:subevent`, `:code`) filled in from the request.
fn fill(rest: &str, req: &PageRequest) -> String {
    rest.split('/')
        .map(|part| match part.strip_prefix(':') {
            Some(name) => req.param(name.split('<').next().unwrap_or(name)),
            None => part,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether `id` is shaped as the widget's own ID (pretix's: 16 letters and digits).
fn is_widget_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The page for a form posted under the widget's own ID.
fn refused(req: &PageRequest) -> PageAnswer {
    PageAnswer::html_status(
        403,
        "presale/shop.html",
        json!({
            "lang": req.language(&tessera::values::texts::LANGUAGES.map(str::to_owned)),
            "title": "Forbidden",
            "message": "The form has expired or did not come from this site. Go back, reload the page and try again.",
        }),
    )
}

/// `w/{ns}/cart/create`: a new cart's ID for the widget to keep.
struct CartCreate;

#[async_trait::async_trait]
impl Page for CartCreate {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        Ok(match shop::find(cx, req).await? {
            Ok(_) => PageAnswer::json(json!({"cart_id": tessera::domain::tokens::generate()})),
            Err(_) => PageAnswer::not_found(),
        })
    }
}

/// `w/{ns}/cart/add`: the widget's "Buy". Puts the products into the frame's cart (the
/// one the widget passes, or a new one) and leads to its checkout: as JSON for the widget
/// (`ajax`), else by redirect (a new tab's form).
struct CartAdd;

#[async_trait::async_trait]
impl Page for CartAdd {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let ajax = req.query("ajax").is_some();
        let mut shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) if ajax => {
                let message = match why {
                    shop::Closed::Unknown => {
                        "There is nothing at this address. Check the link, or ask whoever sent it."
                    }
                    shop::Closed::Disabled(text) => text,
                };
                let message = tessera::values::texts::translate(&lang, message);
                return Ok(PageAnswer::json(json!({
                    "ready": true, "success": false, "has_cart": false, "message": message,
                })));
            }
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        if shop::framed_cart(req).is_none() && !is_widget_id(req.param(FRAME_PARAM)) {
            return Ok(PageAnswer::not_found());
        }
        let cart = cart_of(cx, &shop, req).await?;
        let added = crate::cart::put(cx, &shop, req, &cart).await?;
        shop.frame = Some(match req.param(FRAME_PARAM) {
            ns if shop::framed_cart(req) == Some(cart.as_str()) => ns.to_owned(),
            _ => shop::frame_for(&cart, req),
        });
        // Where the widget asked to go next: the checkout, or the event page with the cart.
        let next = match req.query("next") {
            Some(n) if n.ends_with("/checkout/start") => format!("{}/checkout/start", shop.path()),
            _ => crate::cart::back(&shop, req),
        };
        if ajax {
            let message = match &added {
                Ok(()) => String::new(),
                Err(refused) => shop::said(&shop.lang, refused),
            };
            let has_cart = !buying::positions(cx.db, shop.event.id, &cart)
                .await?
                .is_empty();
            return Ok(PageAnswer::json(json!({
                "ready": true,
                "success": added.is_ok(),
                "redirect": next,
                "cart_id": cart,
                "has_cart": has_cart,
                "message": message,
            })));
        }
        Ok(match added {
            Ok(()) => PageAnswer::redirect(next),
            Err(refused) => {
                let message = shop::said(&shop.lang, &refused);
                crate::event::render(cx, &shop, req, Some(message)).await?
            }
        })
    }
}

/// The cart `cart/add` fills: the frame's, else the one the widget passes, else a new one;
/// a new one too when that cart became an order already.
async fn cart_of(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    req: &PageRequest,
) -> Result<String, DbErr> {
    let known = shop::framed_cart(req)
        .or_else(|| req.query("take_cart_id").filter(|c| shop::is_cart_id(c)));
    if let Some(cart) = known
        && checkout::placed_order(cx.db, shop.event.id, cart)
            .await?
            .is_none()
    {
        return Ok(cart.to_owned());
    }
    Ok(tessera::domain::tokens::generate())
}

/// `w/{cart}/order/{code}/{secret}`: where a checkout in a frame ends. The order's own page
/// cannot be framed (it holds the buyer's forms), so the frame says the order was placed
/// and opens that page in a new tab.
struct Placed;

#[async_trait::async_trait]
impl Page for Placed {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let link = ["organizer", "event", "code", "secret"].map(|name| req.param(name));
        let Some((_, order)) = orders::by_link(cx.db, link).await? else {
            return Ok(PageAnswer::not_found());
        };
        let url = format!(
            "{}{}/order/{}/{}/",
            cx.public_url,
            shop.home(),
            order.row.code,
            link[3]
        );
        Ok(thanks(&shop, &order.row.code, Some(url)))
    }
}

/// The frame's page of an order placed from its cart earlier: its code, without the link.
pub fn placed_without_link(shop: &Shop<'_>, code: &str) -> PageAnswer {
    thanks(shop, code, None)
}

fn thanks(shop: &Shop<'_>, code: &str, order_url: Option<String>) -> PageAnswer {
    let mut context = shop.layout();
    context.extend([
        ("title".into(), "Thank you!".into()),
        ("code".into(), code.into()),
        ("order_url".into(), order_url.into()),
    ]);
    PageAnswer::html("presale/placed.html", context.into())
}
