//! `/widget/v2.{lang}.js`: pretix's widget script as an embedding site loads it, served
//! from the installation's copy of pretix's bundle (`widget.js` of pretix's wheel, which
//! the configuration names; pretix's licence keeps it out of this project).
//!
//! The bundle does not run bare: pretix wraps it in a function that sets its language
//! (`LANG`) and a `django` global with the widget's texts in that language, number formats
//! and Django's `gettext` family. This wrapper gives the same with this installation's own
//! catalogs ([`tessera::values::texts`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use sea_orm::DbErr;
use serde_json::{Map, Value, json};
use tessera::plugin::pages::{Page, PageAnswer, PageBody, PageContext, PageRequest};
use tessera::values::texts::{self, LANGUAGES};

/// The loader: the wrapped bundle in each language the texts are written in.
pub struct Loader {
    scripts: BTreeMap<&'static str, Arc<str>>,
}

impl Loader {
    /// The loader of pretix's widget bundle.
    pub fn new(bundle: &str) -> Self {
        Self {
            scripts: LANGUAGES
                .into_iter()
                .map(|lang| (lang, Arc::from(wrap(bundle, lang))))
                .collect(),
        }
    }
}

#[async_trait::async_trait]
impl Page for Loader {
    async fn answer(&self, _: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        // `v1.de.js` and `v2.de.js`: pretix serves its current script at both.
        let lang = req
            .param("file")
            .strip_prefix('v')
            .and_then(|f| f.strip_prefix(['1', '2']))
            .and_then(|f| f.strip_prefix('.'))
            .and_then(|f| f.strip_suffix(".js"));
        Ok(match lang.and_then(|l| self.scripts.get(l)) {
            Some(script) => PageBody::Asset {
                media_type: "application/javascript; charset=utf-8",
                body: script.clone(),
            }
            .into(),
            None => PageAnswer::not_found(),
        })
    }
}

/// The texts the widget asks `django.pgettext("widget", ...)` and `django.gettext` for.
const WIDGET_TEXTS: &[&str] = &[
    "Quantity",
    "Decrease quantity",
    "Increase quantity",
    "Filter events by",
    "Filter",
    "Price",
    "Original price: %s",
    "New price: %s",
    "Select",
    "Select %s",
    "Select variant %s",
    "Sold out",
    "Buy",
    "Register",
    "Reserved",
    "FREE",
    "from %(currency)s %(price)s",
    "Image of %s",
    "incl. %(rate)s% %(taxname)s",
    "plus %(rate)s% %(taxname)s",
    "incl. taxes",
    "plus taxes",
    "currently available: %s",
    "Only available with a voucher",
    "Not yet available",
    "Not available anymore",
    "Currently not available",
    "minimum amount to order: %s",
    "Close ticket shop",
    "The ticket shop could not be loaded.",
    "There are currently a lot of users in this ticket shop. Please open the shop in a new tab to continue.",
    "Open ticket shop",
    "Checkout",
    "The cart could not be created. Please try again later",
    "We could not create your cart, since there are currently too many users in this ticket shop. Please click \"Continue\" to retry in a new tab.",
    "Waiting list",
    "You currently have an active cart for this event. If you select more products, they will be added to your existing cart.",
    "Resume checkout",
    "Redeem a voucher",
    "Redeem",
    "Voucher code",
    "Close",
    "Close checkout",
    "You cannot cancel this operation. Please wait for loading to finish.",
    "Continue",
    "Show variants",
    "Hide variants",
    "Choose a different event",
    "Choose a different date",
    "Back",
    "Next month",
    "Previous month",
    "Next week",
    "Previous week",
    "Open seat selection",
    "Some or all ticket categories are currently sold out. If you want, you can add yourself to the waiting list. We will then notify if seats are available again.",
    "Load more",
    "Mo",
    "Tu",
    "We",
    "Th",
    "Fr",
    "Sa",
    "Su",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The widget's texts in `lang`, by their English text (those that differ).
fn catalog(lang: &str) -> Map<String, Value> {
    WIDGET_TEXTS
        .iter()
        .map(|t| (*t, texts::translate(lang, t)))
        .filter(|(t, translated)| t != translated)
        .map(|(t, translated)| (t.to_owned(), translated.into()))
        .collect()
}

/// How numbers are written in `lang` (Django's format names, as the widget reads them).
fn formats(lang: &str) -> Value {
    let (decimal, thousands) = if lang == "de" { (",", ".") } else { (".", ",") };
    json!({"DECIMAL_SEPARATOR": decimal, "THOUSAND_SEPARATOR": thousands, "NUMBER_GROUPING": 3})
}

/// The `django` global the bundle reads as it starts: the catalog and formats, and the
/// functions over them (a text without a translation stays as it is; `interpolate` fills
/// `%s` in order, or `%(name)s` by name). The bundle keeps what it read, so the embedding
/// page's own `django` (a Django site's catalog) is put back once it has run.
const DJANGO: &str = r#"var siteDjango = globalThis.django;
globalThis.django = (function (catalog, formats) {
  var django = {};
  django.gettext = function (text) {
    var found = catalog[text];
    return found === undefined ? text : found;
  };
  django.pgettext = function (context, text) { return django.gettext(text); };
  django.ngettext = function (one, many, count) { return django.gettext(count == 1 ? one : many); };
  django.npgettext = function (context, one, many, count) { return django.ngettext(one, many, count); };
  django.interpolate = function (format, values, named) {
    if (named) {
      return format.replace(/%\(\w+\)s/g, function (m) { return String(values[m.slice(2, -2)]); });
    }
    var i = 0;
    return format.replace(/%s/g, function () { return String(values[i++]); });
  };
  django.get_format = function (name) { return name in formats ? formats[name] : name; };
  return django;
})"#;

/// Puts the embedding page's `django` back.
const RESTORE: &str = "if (siteDjango === undefined) { delete globalThis.django; } else { globalThis.django = siteDjango; }";

/// The bundle wrapped as pretix wraps it, in `lang`.
fn wrap(bundle: &str, lang: &str) -> String {
    let catalog = Value::Object(catalog(lang));
    let formats = formats(lang);
    format!(
        "/* v2 */\n(function (siteglobals) {{\nvar module = {{}}, exports = {{}};\nconst LANG = \"{lang}\";\n{DJANGO}({catalog}, {formats});\n{bundle}\n{RESTORE}\n}})({{}});\n"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_text_of_the_widget_speaks_every_language() {
        for lang in tessera::values::texts::LANGUAGES.into_iter().skip(1) {
            let catalog = super::catalog(lang);
            // Words German writes as English does.
            let alike = ["Mo", "Fr", "Sa", "April", "August", "September", "November"];
            let missing: Vec<_> = super::WIDGET_TEXTS
                .iter()
                .filter(|t| !catalog.contains_key(**t) && !alike.contains(t))
                .collect();
            assert_eq!(missing, Vec::<&&str>::new(), "{lang}");
        }
    }

    #[test]
    fn the_wrapper_sets_the_language_and_the_catalog_before_the_bundle() {
        let script = super::wrap("window.bundle = LANG;", "de");
        let django = script
            .find("globalThis.django =")
            .expect("the django global");
        let bundle = script.find("window.bundle").expect("the bundle");
        assert!(script.contains("const LANG = \"de\";"));
        assert!(script.contains("\"Buy\":\"Kaufen\""), "{script}");
        assert!(django < bundle);
        assert!(script.ends_with("})({});\n"));
    }
}
