//! The e-mail that brings a waiting person their voucher, in their language.

use crate::values::texts::{fill, translate};

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
    /// Where the shop redeems it.
    pub url: &'a str,
}

const SUBJECT: &str = "You have been selected from the waiting list for {event}";
const BODY: &str = "Hello,

a place for {event} has become available for you: {product}.

Redeem this voucher code within {hours} hours to get it:

{code}

The shop takes it here:
{url}

After that the voucher expires, and the place goes to the next person on the waiting list.

Best regards,
The {event} team
";

/// Subject and body in the person's `locale` (English, or a translation from the service's
/// catalogs).
pub fn voucher_mail(locale: &str, n: &VoucherNotice) -> (String, String) {
    let hours = n.hours.to_string();
    let values = [
        ("event", n.event),
        ("product", n.product),
        ("code", n.code),
        ("hours", hours.as_str()),
        ("url", n.url),
    ];
    (
        fill(translate(locale, SUBJECT), &values),
        fill(translate(locale, BODY), &values),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTICE: VoucherNotice = VoucherNotice {
        event: "Conf",
        product: "Ticket",
        code: "ABCDEFGHJKLMNPQR",
        hours: 48,
        url: "https://shop.example/acme/conf/redeem?voucher=ABCDEFGHJKLMNPQR",
    };

    #[test]
    fn german_for_german_speakers_and_english_for_everybody_else() {
        let (subject, body) = voucher_mail("de", &NOTICE);
        assert_eq!(subject, "Sie wurden von der Warteliste für Conf ausgewählt");
        assert!(body.contains("\nABCDEFGHJKLMNPQR\n") && body.contains("48 Stunden"));
        assert!(body.contains("hier ein:\nhttps://shop.example/acme/conf/redeem?voucher="));
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
