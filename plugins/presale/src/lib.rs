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
mod frame;
mod listing;
mod loader;
mod modify;
mod present;
mod shop;
mod waitinglist;
mod widget;

use std::sync::Arc;

use tessera::Plugin;
use tessera::plugin::PluginLevel;
use tessera::plugin::pages::{Page, PageMethod, PageRoute, Pages};

/// The shop plugin (pretix's `presale`), active for every organizer.
#[derive(Default)]
pub struct Presale {
    /// The loader of pretix's widget script, when the installation has pretix's bundle.
    loader: Option<Arc<loader::Loader>>,
}

impl Presale {
    /// The shop, serving pretix's widget script (`/widget/v2.{lang}.js`) from pretix's
    /// bundle (`widget.js` of pretix's wheel, as read from the installation's copy).
    pub fn with_widget_bundle(bundle: &str) -> Self {
        Self {
            loader: Some(Arc::new(loader::Loader::new(bundle))),
        }
    }
}

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
        "presale/placed.html",
        include_str!("../templates/placed.html"),
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
        use PageMethod::{Get, Post};
        let get = |path: &str, page: Arc<dyn Page>| PageRoute::own(path, Get, page);
        let event_page: Arc<dyn Page> = Arc::new(event::EventPage);
        let waiting: Arc<dyn Page> = Arc::new(waitinglist::WaitingList);
        let addons: Arc<dyn Page> = Arc::new(addons::AddOns);
        let questions: Arc<dyn Page> = Arc::new(checkout::Questions);
        let payment: Arc<dyn Page> = Arc::new(checkout::Payment);
        let confirm: Arc<dyn Page> = Arc::new(checkout::Confirm);
        // The event's pages (after `/:organizer/:event`), on the site and in widget frames.
        let shop: Vec<(&'static str, PageMethod, Arc<dyn Page>)> = vec![
            ("", Get, event_page.clone()),
            ("/:subevent<\\d+>", Get, event_page),
            ("/cart/remove", Post, Arc::new(cart::Remove)),
            ("/cart/clear", Post, Arc::new(cart::Clear)),
            ("/cart/extend", Post, Arc::new(cart::Extend)),
            ("/redeem", Get, Arc::new(cart::Redeem)),
            ("/waitinglist", Get, waiting.clone()),
            ("/waitinglist", Post, waiting),
            ("/checkout/start", Get, Arc::new(checkout::Start)),
            ("/checkout/addons", Get, addons.clone()),
            ("/checkout/addons", Post, addons),
            ("/checkout/questions", Get, questions.clone()),
            ("/checkout/questions", Post, questions),
            ("/checkout/payment", Get, payment.clone()),
            ("/checkout/payment", Post, payment),
            ("/checkout/confirm", Get, confirm.clone()),
            ("/checkout/confirm", Post, confirm),
        ];
        let modify: Arc<dyn Page> = Arc::new(modify::Modify);
        let product_list: Arc<dyn Page> = Arc::new(widget::ProductList);
        let mut routes = vec![
            get("/", Arc::new(listing::FrontPage)),
            get("/:organizer", Arc::new(listing::OrganizerPage)),
            PageRoute::own("/:organizer/:event/cart/add", Post, Arc::new(cart::Add)),
            get(
                "/:organizer/:event/order/:code/:secret/modify",
                modify.clone(),
            ),
            PageRoute::own(
                "/:organizer/:event/order/:code/:secret/modify",
                Post,
                modify,
            ),
            PageRoute::widget(
                "/:organizer/:event/widget/product_list",
                Get,
                product_list.clone(),
            ),
            PageRoute::widget(
                "/:organizer/:event/:subevent<\\d+>/widget/product_list",
                Get,
                product_list,
            ),
        ];
        let stylesheet: Arc<dyn Page> = Arc::new(widget::Stylesheet);
        for path in ["/:organizer/:event", "/:organizer"] {
            routes.push(PageRoute::widget(
                &format!("{path}/widget/:file<v[12]\\.css>"),
                Get,
                stylesheet.clone(),
            ));
        }
        for (rest, method, page) in shop {
            routes.push(PageRoute::own(
                &format!("/:organizer/:event{rest}"),
                method,
                page.clone(),
            ));
            routes.push(frame::route(rest, method, page));
        }
        routes.extend(frame::routes());
        if let Some(loader) = &self.loader {
            routes.push(PageRoute::widget(
                "/widget/:file<v[12]\\.[a-z]{2}\\.js>",
                Get,
                loader.clone(),
            ));
        }
        Pages {
            routes,
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
