//! The shop of one event, as every page of it finds it: organizer, event, effective
//! settings and the reader's language; what every page's layout shows of it; and the
//! browser's cart, which the event page, the cart's forms and the checkout share: its ID is
//! in the `tessera_cart` cookie, or, in a widget's frame, in the path (`w/{cart}/`, see
//! [`crate::frame`]).

use std::sync::Arc;

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::cache::{Cache, EventSettings};
use tessera::db::entities::{event, organizer, subevent};
use tessera::domain::carts::buying::Refused;
use tessera::domain::settings;
use tessera::domain::storefront::{self, Sale};
use tessera::plugin::pages::{PageAnswer, PageContext, PageRequest};
use tessera::values::texts;

use crate::present;

/// An event's shop, found.
pub struct Shop<'a> {
    /// The organizer.
    pub organizer: Arc<organizer::Model>,
    /// The event.
    pub event: event::Model,
    /// Its effective settings.
    pub settings: Arc<EventSettings>,
    /// The reader's language among the event's.
    pub lang: String,
    /// The process cache at the generation of the request.
    pub cache: Option<(&'a Cache, u64)>,
    /// The namespace of the widget frame this is (`/{organizer}/{event}/w/{cart}[.{lang}]/`),
    /// if one.
    pub frame: Option<String>,
}

/// Why there is no shop to show: the answer to give instead.
pub enum Closed {
    /// No such organizer or event.
    Unknown,
    /// The event is not live, or not sold on the shop's channel: this message, in the
    /// reader's language.
    Disabled(&'static str),
}

/// The shop of the request's `:organizer` and `:event`.
pub async fn find<'a>(
    cx: &PageContext<'a>,
    req: &PageRequest,
) -> Result<Result<Shop<'a>, (Closed, String)>, DbErr> {
    let cache = cx.cache.current().await;
    let Some(organizer) = storefront::organizer(cx.db, cache, req.param("organizer")).await? else {
        return Ok(Err((Closed::Unknown, req.language(&[]))));
    };
    let Some(event) = storefront::event(cx.db, cache, organizer.id, req.param("event")).await?
    else {
        return Ok(Err((Closed::Unknown, req.language(&[]))));
    };
    let settings = settings::of_event(cx.db, cx.settings, cache, &event).await?;
    let locales = settings::locales(&settings);
    let lang = match frame(req).and_then(|(_, lang)| lang) {
        Some(wanted) => PageRequest {
            languages: vec![wanted.to_owned()],
            ..PageRequest::default()
        }
        .language(&locales),
        None => req.language(&locales),
    };
    if !event.live {
        return Ok(Err((
            Closed::Disabled("This ticket shop is currently disabled."),
            lang,
        )));
    }
    let sold_here = tessera::values::stored::string_list(&event.sales_channels)
        .iter()
        .any(|c| c == storefront::CHANNEL);
    if !sold_here {
        return Ok(Err((
            Closed::Disabled("Tickets for this event cannot be purchased on this sales channel."),
            lang,
        )));
    }
    Ok(Ok(Shop {
        organizer,
        event,
        settings,
        lang,
        cache,
        frame: frame(req).map(|_| req.param(FRAME_PARAM).to_owned()),
    }))
}

impl Shop<'_> {
    /// The event's path where the reader is: `/{organizer}/{event}`, or in a widget's frame
    /// `/{organizer}/{event}/w/{cart}`, so that every link and form of the shop stays there.
    pub fn path(&self) -> String {
        match &self.frame {
            Some(cart) => format!("{}/w/{cart}", self.home()),
            None => self.home(),
        }
    }

    /// The event's own path (`/{organizer}/{event}`), outside any frame.
    pub fn home(&self) -> String {
        format!("/{}/{}", self.organizer.slug, self.event.slug)
    }

    /// A setting's value.
    pub fn setting(&self, key: &str) -> Option<&Value> {
        self.settings.get(key)
    }

    /// A boolean setting.
    pub fn flag(&self, key: &str) -> bool {
        self.setting(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A multilingual setting in the reader's language.
    pub fn text(&self, key: &str) -> String {
        self.setting(key)
            .map(|v| present::text(v, &self.lang))
            .unwrap_or_default()
    }

    /// The event's name.
    pub fn name(&self) -> String {
        present::text(&self.event.name, &self.lang)
    }

    /// When the event (or a date of its series) takes place.
    pub fn date_range(&self, date: Option<&subevent::Model>) -> String {
        let (from, to) = match date {
            Some(d) => (d.date_from, d.date_to),
            None => (self.event.date_from, self.event.date_to),
        };
        present::date_range(
            from,
            to,
            &self.event.timezone,
            self.flag("show_times"),
            &self.lang,
        )
    }

    /// Where it takes place.
    pub fn location(&self, date: Option<&subevent::Model>) -> String {
        let location = date
            .and_then(|d| d.location.as_ref())
            .or(self.event.location.as_ref());
        present::optional_text(location, &self.lang)
    }

    /// Why the sale is closed, in the reader's language (the organizer's
    /// `presale_has_ended_text` once it is over, if set); `None` while it is open.
    pub fn sale_message(&self, sale: Sale) -> Option<String> {
        match sale {
            Sale::Open => None,
            Sale::NotYet(at) => Some(texts::fill(
                texts::translate(
                    &self.lang,
                    "The booking period for this event will start on {date}.",
                ),
                &[(
                    "date",
                    &present::moment(at, &self.event.timezone, &self.lang),
                )],
            )),
            Sale::Ended => {
                let own = self.text("presale_has_ended_text");
                Some(if own.is_empty() {
                    texts::translate(&self.lang, "The booking period for this event is over.")
                        .to_owned()
                } else {
                    own
                })
            }
        }
    }

    /// What every page of the shop's layout shows: language, colours, organizer, event.
    pub fn layout(&self) -> serde_json::Map<String, Value> {
        let brand = settings::brand(&self.settings);
        json!({
            "lang": self.lang,
            "brand": brand,
            "on_brand": tessera::web::on_brand(brand),
            "organizer": {"name": self.organizer.name, "url": format!("/{}", self.organizer.slug)},
            "event": {"name": self.name(), "url": self.path()},
            "testmode": self.event.testmode,
            "framed": self.frame.is_some(),
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }
}

/// The page for a shop there is not: the not-found page, or the layout with the message.
pub fn closed(why: Closed, lang: &str) -> PageAnswer {
    match why {
        Closed::Unknown => PageAnswer::not_found(),
        Closed::Disabled(text) => PageAnswer::html_status(
            403,
            "presale/shop.html",
            json!({"lang": lang, "title": "Shop closed", "message": text}),
        ),
    }
}

/// The cookie holding the browser's cart ID.
pub const CART_COOKIE: &str = "tessera_cart";

/// How long the cart cookie lives (the cart itself expires much sooner).
pub const CART_COOKIE_SECONDS: i64 = 60 * 60 * 24 * 30;

/// The path parameter of a widget's frame (`w/:ns/`): a cart ID, or the widget's own ID.
pub const FRAME_PARAM: &str = "ns";

/// The request's cart ID, when it carries a plausible one: in a widget's frame the one of
/// its path (never the cookie's), else the cookie's.
pub fn cart_id(req: &PageRequest) -> Option<&str> {
    if req.params.contains_key(FRAME_PARAM) {
        return framed_cart(req);
    }
    req.cookie(CART_COOKIE).filter(|c| is_cart_id(c))
}

/// The cart of a widget frame's path, when it names one: `{cart}`, or `{cart}.{lang}` with
/// the language the widget speaks (a frame has no cookie to keep it in).
pub fn framed_cart(req: &PageRequest) -> Option<&str> {
    frame(req).map(|(cart, _)| cart)
}

/// The frame's cart and language, as [`framed_cart`] reads them.
fn frame(req: &PageRequest) -> Option<(&str, Option<&str>)> {
    let ns = req.params.get(FRAME_PARAM)?;
    let (cart, lang) = match ns.split_once('.') {
        Some((cart, lang)) => (cart, Some(lang).filter(|l| is_language(l))?.into()),
        None => (ns.as_str(), None),
    };
    is_cart_id(cart).then_some((cart, lang))
}

/// A frame's namespace for `cart` in the language the request asks for by `?locale=` (as
/// the widget does on its first address).
pub fn frame_for(cart: &str, req: &PageRequest) -> String {
    match req.query("locale").filter(|l| is_language(l)) {
        Some(lang) => format!("{cart}.{lang}"),
        None => cart.to_owned(),
    }
}

/// Whether `tag` is shaped as a language tag (`de`, `pt-BR`).
fn is_language(tag: &str) -> bool {
    (2..=10).contains(&tag.len()) && tag.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-')
}

/// Whether `id` is shaped as a cart ID (64 letters and digits).
pub fn is_cart_id(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_alphanumeric())
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
