//! How a bank transaction finds its order, as pretix's bank import: its reference contains
//! the event's slug and the order's code (`DEMO-ABC12`, in any case, with or without
//! spaces and dashes, so also the payment's own reference with its prefix), or the bare
//! order code as a word of its own.

use sha2::{Digest, Sha256};

/// Letters and digits only, upper case: references survive the spaces and dashes that
/// payers and banks add or drop.
pub fn normalized(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// The length of order codes.
const CODE_LEN: usize = 5;

/// Could be an order code: five letters or digits (which orders exist decides).
fn is_code(s: &str) -> bool {
    s.len() == CODE_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A code a reference names, with the event slug before it, if any.
#[derive(Debug, PartialEq, Eq)]
pub struct Named {
    /// The event's slug, as given to [`codes_in`].
    pub event: Option<String>,
    /// The order code.
    pub code: String,
}

/// The order codes a reference names: first those after one of the `slugs`, in the order
/// they appear, then the words that are order codes.
pub fn codes_in(reference: &str, slugs: &[String]) -> Vec<Named> {
    let flat = normalized(reference);
    let mut found: Vec<(usize, Named)> = Vec::new();
    for slug in slugs {
        let key = normalized(slug);
        if key.is_empty() {
            continue;
        }
        for (at, _) in flat.match_indices(&key) {
            let start = at + key.len();
            if let Some(code) = flat.get(start..start + CODE_LEN).filter(|c| is_code(c)) {
                found.push((
                    at,
                    Named {
                        event: Some(slug.clone()),
                        code: code.to_owned(),
                    },
                ));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut named: Vec<Named> = found.into_iter().map(|(_, n)| n).collect();
    let upper = reference.to_ascii_uppercase();
    for word in upper.split(|c: char| !c.is_ascii_alphanumeric()) {
        if is_code(word) && !named.iter().any(|n| n.code == word && n.event.is_none()) {
            named.push(Named {
                event: None,
                code: word.to_owned(),
            });
        }
    }
    named
}

/// What makes a transaction the same when a statement is imported again: who, what, how
/// much, when, and the bank's own ID when it gives one.
pub fn checksum(
    payer: &str,
    reference: &str,
    amount_cents: i64,
    date: &str,
    external_id: &str,
) -> String {
    let mut h = Sha256::new();
    for part in [
        payer,
        reference,
        &amount_cents.to_string(),
        date,
        external_id,
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slugs() -> Vec<String> {
        vec!["demo".into(), "summer-fest".into()]
    }

    #[test]
    fn a_slug_and_code_are_found_in_any_spelling() {
        let named = codes_in("GUTSCHRIFT demo - abc12 thanks", &slugs());
        assert_eq!(
            named.first(),
            Some(&Named {
                event: Some("demo".into()),
                code: "ABC12".into()
            })
        );
        let named = codes_in("Summer Fest AB7CD", &slugs());
        assert_eq!(named[0].event.as_deref(), Some("summer-fest"));
        assert_eq!(named[0].code, "AB7CD");
    }

    #[test]
    fn a_bare_code_counts_only_as_a_word_of_its_own() {
        let named = codes_in("Order ABC12, thank you", &slugs());
        assert!(named.contains(&Named {
            event: None,
            code: "ABC12".into()
        }));
        assert!(codes_in("XABC12Y 1234", &slugs()).is_empty());
    }

    #[test]
    fn the_checksum_tells_transactions_apart() {
        let a = checksum("Ada", "DEMO-ABC12", 2300, "2026-11-20", "");
        assert_eq!(a, checksum("Ada", "DEMO-ABC12", 2300, "2026-11-20", ""));
        assert_ne!(a, checksum("Ada", "DEMO-ABC12", 2300, "2026-11-21", ""));
        assert_ne!(a, checksum("Ada", "DEMO-ABC12", 2300, "2026-11-20", "B1"));
        assert_eq!(a.len(), 64);
    }
}
