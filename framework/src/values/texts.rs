//! The service's own texts (page labels, states, messages) in the reader's language. They are
//! written in English in the code and templates; other languages come from gettext catalogs,
//! `framework/locale/{lang}.po`, compiled in and read once. A text without a translation
//! stays English. Placeholders are named in braces: `"Order {code}"`.
//!
//! The `.po` files are read with `polib` rather than by hand: gettext's quoting, line
//! continuations and fuzzy flags are its job.

use std::collections::HashMap;
use std::sync::LazyLock;

/// Languages the service's texts are written in, English first.
pub const LANGUAGES: [&str; 2] = ["en", "de"];

/// The catalogs besides English, by language.
const CATALOGS: [(&str, &[u8]); 1] = [("de", include_bytes!("../../locale/de.po"))];

/// Translations by language, then by English text.
static TRANSLATIONS: LazyLock<HashMap<&'static str, HashMap<String, String>>> =
    LazyLock::new(|| {
        CATALOGS
            .iter()
            .map(|(lang, po)| (*lang, read_catalog(lang, po)))
            .collect()
    });

fn read_catalog(lang: &str, po: &[u8]) -> HashMap<String, String> {
    let catalog = match polib::po_file::parse_from_reader(po) {
        Ok(catalog) => catalog,
        Err(error) => {
            tracing::error!(lang, %error, "the catalog does not parse");
            return HashMap::new();
        }
    };
    catalog
        .messages()
        .filter(|m| m.is_singular() && m.is_translated() && !m.is_fuzzy())
        .filter_map(|m| Some((m.msgid().to_owned(), m.msgstr().ok()?.to_owned())))
        .collect()
}

/// The language of the service's texts for a locale such as `de`, `de-AT` or `de_CH`, if
/// the service writes it.
pub fn supported(locale: &str) -> Option<&'static str> {
    let base = locale.split(['-', '_']).next().unwrap_or_default();
    LANGUAGES.into_iter().find(|l| l.eq_ignore_ascii_case(base))
}

/// [`supported`], English when the service does not write the locale's language.
pub fn language(locale: &str) -> &'static str {
    supported(locale).unwrap_or(LANGUAGES[0])
}

/// `text` (English) in `lang` (see [`language`]), or as it is without a translation.
pub fn translate<'a>(lang: &str, text: &'a str) -> &'a str {
    TRANSLATIONS
        .get(language(lang))
        .and_then(|t| t.get(text))
        .map_or(text, String::as_str)
}

/// `text` with each `{name}` replaced by its value, in one pass (a value that holds braces
/// is not read again); other braces stay as they are.
pub fn fill(text: &str, values: &[(&str, &str)]) -> String {
    fill_with(text, |name| {
        values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    })
}

/// `text` with each `{name}` (`[-a-zA-Z0-9:_]+`) replaced by what `value` gives for it, in one
/// pass; names without a value, and other braces, stay as written.
pub fn fill_with<'v>(text: &str, value: impl Fn(&str) -> Option<&'v str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '_')))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let closed = !name.is_empty() && after[name_len..].starts_with('}');
        match closed.then(|| value(name)).flatten() {
            Some(v) => {
                out.push_str(v);
                rest = &after[name_len + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The texts a template translates (`_("...")`) that a language besides English lacks, with
/// that language: what the tests of every template (the core's and extensions') check is
/// empty.
pub fn untranslated(template: &str) -> Vec<(&'static str, &str)> {
    template
        .split("_(\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .flat_map(|text| {
            LANGUAGES[1..]
                .iter()
                .filter(move |lang| translate(lang, text) == text)
                .map(move |lang| (*lang, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{fill, language, translate};

    #[test]
    fn texts_are_german_for_german_readers_and_english_otherwise() {
        assert_eq!(translate("de", "Paid"), "Bezahlt");
        assert_eq!(translate("de-AT", "Paid"), "Bezahlt");
        assert_eq!(translate("fr", "Paid"), "Paid");
        assert_eq!(
            translate("de", "a text nobody translated"),
            "a text nobody translated"
        );
        assert_eq!(language("DE_ch"), "de");
        assert_eq!(language(""), "en");
    }

    #[test]
    fn placeholders_are_filled_and_unknown_ones_kept() {
        let text = fill(
            "Order {code} for {event}: {unknown} {}{",
            &[("code", "ABC12"), ("event", "DemoCon")],
        );
        assert_eq!(text, "Order ABC12 for DemoCon: {unknown} {}{");
    }

    #[test]
    fn a_value_is_not_searched_for_placeholders_again() {
        assert_eq!(fill("{a}{b}", &[("a", "{b}"), ("b", "x")]), "{b}x");
    }
}
