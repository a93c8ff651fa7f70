//! The shop: the pages a buyer uses (the installation's front page, an organizer's page
//! listing its public events, an event's page with its products) and the data pretix's
//! embeddable widget reads (`widget/product_list`), at pretix's paths.
//!
//! Everything shown comes from the rules' storefront ([`tessera::domain::storefront`]),
//! which says what is visible, buyable, at which price and how much is left; this plugin
//! only presents it, through the core's pages port.

mod addons;
mod cart;
mod checkout;
mod event;
mod listing;
mod modify;
mod present;
mod shop;
mod waitinglist;
mod widget;

use std::sync::Arc;

use tessera::Plugin;
use tessera::plugin::PluginLevel;
use tessera::plugin::pages::{PageMethod, PageRoute, Pages};

/// The shop plugin (pretix's `presale`), active for every organizer.
pub struct Presale;

/// The templates, by name (under `presale/`, beside the core's `base.html`).
const TEMPLATES: &[(&str, &str)] = &[
    (
        "presale/index.html",
        include_str!("../templates/index.html"),
    ),
    (
        "presale/organizer.html",
        include_str!("../templates/organizer.html"),
    ),
    (
        "presale/event.html",
        include_str!("../templates/event.html"),
    ),
    ("presale/shop.html", include_str!("../templates/shop.html")),
    (
        "presale/waitinglist.html",
        include_str!("../templates/waitinglist.html"),
    ),
    (
        "presale/checkout_addons.html",
        include_str!("../templates/checkout_addons.html"),
    ),
    (
        "presale/checkout_questions.html",
        include_str!("../templates/checkout_questions.html"),
    ),
    (
        "presale/checkout_payment.html",
        include_str!("../templates/checkout_payment.html"),
    ),
    (
        "presale/checkout_confirm.html",
        include_str!("../templates/checkout_confirm.html"),
    ),
];

impl Plugin for Presale {
    fn name(&self) -> &str {
        "presale"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn description(&self) -> &str {
        "The shop: event pages with products for buyers, and pretix's widget data"
    }
    fn level(&self) -> PluginLevel {
        PluginLevel::Organizer
    }
    fn pages(&self) -> Pages {
        let get = |path: &str, page: Arc<dyn tessera::plugin::pages::Page>| {
            PageRoute::own(path, PageMethod::Get, page)
        };
        let post = |path: &str, page: Arc<dyn tessera::plugin::pages::Page>| {
            PageRoute::own(path, PageMethod::Post, page)
        };
        Pages {
            routes: vec![
                get("/", Arc::new(listing::FrontPage)),
                get("/:organizer", Arc::new(listing::OrganizerPage)),
                get("/:organizer/:event", Arc::new(event::EventPage)),
                get(
                    "/:organizer/:event/:subevent<\\d+>",
                    Arc::new(event::EventPage),
                ),
                post("/:organizer/:event/cart/add", Arc::new(cart::Add)),
                post("/:organizer/:event/cart/remove", Arc::new(cart::Remove)),
                post("/:organizer/:event/cart/clear", Arc::new(cart::Clear)),
                post("/:organizer/:event/cart/extend", Arc::new(cart::Extend)),
                get("/:organizer/:event/redeem", Arc::new(cart::Redeem)),
                get(
                    "/:organizer/:event/waitinglist",
                    Arc::new(waitinglist::WaitingList),
                ),
                post(
                    "/:organizer/:event/waitinglist",
                    Arc::new(waitinglist::WaitingList),
                ),
                get(
                    "/:organizer/:event/checkout/start",
                    Arc::new(checkout::Start),
                ),
                get(
                    "/:organizer/:event/checkout/addons",
                    Arc::new(addons::AddOns),
                ),
                post(
                    "/:organizer/:event/checkout/addons",
                    Arc::new(addons::AddOns),
                ),
                get(
                    "/:organizer/:event/checkout/questions",
                    Arc::new(checkout::Questions),
                ),
                post(
                    "/:organizer/:event/checkout/questions",
                    Arc::new(checkout::Questions),
                ),
                get(
                    "/:organizer/:event/checkout/payment",
                    Arc::new(checkout::Payment),
                ),
                post(
                    "/:organizer/:event/checkout/payment",
                    Arc::new(checkout::Payment),
                ),
                get(
                    "/:organizer/:event/checkout/confirm",
                    Arc::new(checkout::Confirm),
                ),
                post(
                    "/:organizer/:event/checkout/confirm",
                    Arc::new(checkout::Confirm),
                ),
                get(
                    "/:organizer/:event/order/:code/:secret/modify",
                    Arc::new(modify::Modify),
                ),
                post(
                    "/:organizer/:event/order/:code/:secret/modify",
                    Arc::new(modify::Modify),
                ),
                PageRoute::widget(
                    "/:organizer/:event/widget/product_list",
                    PageMethod::Get,
                    Arc::new(widget::ProductList),
                ),
                PageRoute::widget(
                    "/:organizer/:event/:subevent<\\d+>/widget/product_list",
                    PageMethod::Get,
                    Arc::new(widget::ProductList),
                ),
            ],
            templates: TEMPLATES.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_text_the_templates_translate_is_in_every_catalog() {
        for (name, source) in super::TEMPLATES {
            assert_eq!(tessera::values::texts::untranslated(source), [], "{name}");
        }
    }
}
