//! The e-mail that brings a waiting person their voucher, in English and German.

use crate::domain::mail::{german, render};

/// What the e-mail tells.
#[derive(Debug, Clone, Copy)]
pub struct VoucherNotice<'a> {
    /// The event's name, in the person's language.
    pub event: &'a str,
    /// The product's name (with its variation), in the person's language.
    pub product: &'a str,
    /// The voucher code.
    pub code: &'a str,
    /// Hours the voucher stays valid.
    pub hours: i64,
}

const SUBJECT_EN: &str = "You have been selected from the waiting list for {event}";
const BODY_EN: &str = "Hello,

a place for {event} has become available for you: {product}.

Redeem this voucher code within {hours} hours to get it:

{code}

After that the voucher expires, and the place goes to the next person on the waiting list.

Best regards,
The {event} team
";

const SUBJECT_DE: &str = "Sie wurden von der Warteliste für {event} ausgewählt";
const BODY_DE: &str = "Hallo,

für {event} ist ein Platz für Sie frei geworden: {product}.

Lösen Sie dafür innerhalb von {hours} Stunden diesen Gutscheincode ein:

{code}

Danach verfällt der Gutschein, und der Platz geht an die nächste Person auf der Warteliste.

Viele Grüße
Ihr Team von {event}
";

/// Subject and body in the person's `locale`: German for `de` (and `de-…`), English for any
/// other.
pub fn voucher_mail(locale: &str, n: &VoucherNotice) -> (String, String) {
    let (subject, body) = if german(locale) {
        (SUBJECT_DE, BODY_DE)
    } else {
        (SUBJECT_EN, BODY_EN)
    };
    let hours = n.hours.to_string();
    let values = [
        ("event", n.event),
        ("product", n.product),
        ("code", n.code),
        ("hours", hours.as_str()),
    ];
    (render(subject, &values), render(body, &values))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTICE: VoucherNotice = VoucherNotice {
        event: "Conf",
        product: "Ticket",
        code: "ABCDEFGHJKLMNPQR",
        hours: 48,
    };

    #[test]
    fn german_for_german_speakers_and_english_for_everybody_else() {
        let (subject, body) = voucher_mail("de", &NOTICE);
        assert_eq!(subject, "Sie wurden von der Warteliste für Conf ausgewählt");
        assert!(body.contains("\nABCDEFGHJKLMNPQR\n") && body.contains("48 Stunden"));
        assert_eq!(voucher_mail("de-AT", &NOTICE).0, subject);
        for locale in ["en", "fr", ""] {
            let (subject, body) = voucher_mail(locale, &NOTICE);
            assert_eq!(
                subject,
                "You have been selected from the waiting list for Conf"
            );
            assert!(body.contains("\nABCDEFGHJKLMNPQR\n") && body.contains("48 hours"));
            assert!(body.contains("available for you: Ticket."));
        }
    }
}
