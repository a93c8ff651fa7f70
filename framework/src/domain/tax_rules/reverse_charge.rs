//! EU reverse charge: a business buyer in another EU member state accounts for the VAT
//! itself, so the seller charges none and says so on the invoice.
//!
//! pretix asks for a VAT ID that VIES confirmed; Tessera has no VIES access and applies the
//! rule to a VAT ID that looks valid for the buyer's country (its prefix and shape), which is
//! what the buyer declares and what the invoice shows.

use serde_json::Value;

use crate::db::entities::tax_rule;

/// The legal notice of an EU reverse-charge invoice, as pretix words it.
pub const EU_NOTICE: &str = "Reverse Charge: According to Article 194, 196 of Council Directive \
     2006/112/EEC, VAT liability rests with the service recipient.";

/// The EU member states, with the prefix of their VAT IDs and the shapes of what follows it
/// (`9` a digit, `A` a letter, `X` a digit or letter).
const MEMBER_STATES: [(&str, &str, &[&str]); 27] = [
    ("AT", "ATU", &["99999999"]),
    ("BE", "BE", &["0999999999", "1999999999"]),
    ("BG", "BG", &["999999999", "9999999999"]),
    ("CY", "CY", &["99999999A"]),
    ("CZ", "CZ", &["99999999", "999999999", "9999999999"]),
    ("DE", "DE", &["999999999"]),
    ("DK", "DK", &["99999999"]),
    ("EE", "EE", &["999999999"]),
    ("GR", "EL", &["999999999"]),
    ("ES", "ES", &["X9999999X"]),
    ("FI", "FI", &["99999999"]),
    ("FR", "FR", &["XX999999999"]),
    ("HR", "HR", &["99999999999"]),
    ("HU", "HU", &["99999999"]),
    ("IE", "IE", &["9999999A", "9999999AA", "9X99999A"]),
    ("IT", "IT", &["99999999999"]),
    ("LT", "LT", &["999999999", "999999999999"]),
    ("LU", "LU", &["99999999"]),
    ("LV", "LV", &["99999999999"]),
    ("MT", "MT", &["99999999"]),
    ("NL", "NL", &["999999999B99"]),
    ("PL", "PL", &["9999999999"]),
    ("PT", "PT", &["999999999"]),
    (
        "RO",
        "RO",
        &[
            "99",
            "999",
            "9999",
            "99999",
            "999999",
            "9999999",
            "99999999",
            "999999999",
            "9999999999",
        ],
    ),
    ("SE", "SE", &["999999999901"]),
    ("SI", "SI", &["99999999"]),
    ("SK", "SK", &["9999999999"]),
];

/// Whether the country (ISO 3166 alpha-2) is an EU member state.
pub fn is_eu_country(country: &str) -> bool {
    MEMBER_STATES.iter().any(|(c, _, _)| *c == country)
}

/// The VAT ID without spaces, dots and dashes, in capitals.
pub fn normalized_vat_id(vat_id: &str) -> String {
    vat_id
        .chars()
        .filter(|c| !matches!(c, ' ' | '.' | '-'))
        .flat_map(char::to_uppercase)
        .collect()
}

/// Whether the VAT ID has the prefix and shape of the country's.
pub fn looks_valid(vat_id: &str, country: &str) -> bool {
    let Some((_, prefix, shapes)) = MEMBER_STATES.iter().find(|(c, _, _)| *c == country) else {
        return false;
    };
    let id = normalized_vat_id(vat_id);
    let Some(rest) = id.strip_prefix(prefix) else {
        return false;
    };
    shapes.iter().any(|shape| fits(rest, shape))
}

fn fits(text: &str, shape: &str) -> bool {
    text.len() == shape.len()
        && text.bytes().zip(shape.bytes()).all(|(t, s)| match s {
            b'9' => t.is_ascii_digit(),
            b'A' => t.is_ascii_uppercase(),
            b'X' => t.is_ascii_digit() || t.is_ascii_uppercase(),
            literal => t == literal,
        })
}

/// What the tax rules need to know of a buyer: their invoice address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buyer {
    /// A business, not a consumer.
    pub is_business: bool,
    /// ISO 3166 country code, or empty.
    pub country: String,
    /// VAT ID as given, or empty.
    pub vat_id: String,
}

impl Buyer {
    /// The buyer of an order's stored invoice address (`None` without one).
    pub fn of_address(address: Option<&Value>) -> Option<Self> {
        let a = address?;
        let text = |k: &str| a[k].as_str().unwrap_or_default().to_owned();
        Some(Self {
            is_business: a["is_business"].as_bool().unwrap_or(false),
            country: text("country"),
            vat_id: text("vat_id"),
        })
    }
}

/// Whether the rule charges this buyer no VAT under the EU reverse charge: the rule applies
/// it, the buyer is a business in another member state than the rule's home country, with a
/// VAT ID that looks valid there.
pub fn applies(rule: &tax_rule::Model, buyer: Option<&Buyer>) -> bool {
    let Some(b) = buyer else {
        return false;
    };
    rule.eu_reverse_charge
        && b.is_business
        && is_eu_country(&b.country)
        && rule.home_country.as_deref() != Some(b.country.as_str())
        && looks_valid(&b.vat_id, &b.country)
}

/// The notice an invoice carries for a line under this rule: pretix's EU text when reverse
/// charge applies.
pub fn invoice_text(rule: &tax_rule::Model, buyer: Option<&Buyer>) -> Option<&'static str> {
    applies(rule, buyer).then_some(EU_NOTICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_ids_are_checked_against_their_country_shape() {
        assert!(looks_valid("DE123456789", "DE"));
        assert!(looks_valid("de 123.456.789", "DE"));
        assert!(looks_valid("ATU12345678", "AT"));
        assert!(looks_valid("EL123456789", "GR"));
        assert!(looks_valid("NL123456789B01", "NL"));
        assert!(looks_valid("FRAB123456789", "FR"));
        assert!(!looks_valid("DE12345678", "DE"));
        assert!(!looks_valid("FR123456789", "DE"));
        assert!(!looks_valid("GB123456789", "GB"));
        assert!(!looks_valid("", "DE"));
    }

    fn rule(home: &str) -> tax_rule::Model {
        tax_rule::Model {
            id: 1,
            event_id: 1,
            name: serde_json::json!({"en": "VAT"}),
            rate_bps: 1900,
            price_includes_tax: true,
            eu_reverse_charge: true,
            home_country: Some(home.into()),
        }
    }

    fn business(country: &str, vat_id: &str) -> Buyer {
        Buyer {
            is_business: true,
            country: country.into(),
            vat_id: vat_id.into(),
        }
    }

    #[test]
    fn reverse_charge_needs_a_business_abroad_in_the_eu_with_a_vat_id() {
        let r = rule("DE");
        assert!(applies(&r, Some(&business("AT", "ATU12345678"))));
        assert!(!applies(&r, Some(&business("DE", "DE123456789"))));
        assert!(!applies(&r, Some(&business("AT", ""))));
        assert!(!applies(&r, Some(&business("CH", "CHE123456789"))));
        let consumer = Buyer {
            is_business: false,
            ..business("AT", "ATU12345678")
        };
        assert!(!applies(&r, Some(&consumer)));
        assert!(!applies(&r, None));
        let off = tax_rule::Model {
            eu_reverse_charge: false,
            ..r
        };
        assert!(!applies(&off, Some(&business("AT", "ATU12345678"))));
    }
}
