//! The mails about an order, in the customer's language (English, translated through the
//! service's catalogs, `values::texts`): the
//! confirmation when it is placed, word of its payment, approval or denial, change and
//! cancellation. Those after which the order may have tickets carry them
//! ([`Mail::with_tickets_of`]).

use chrono::{DateTime, Utc};

use crate::db::entities::{event, order};
use crate::domain::mail::Mail;
use crate::domain::sale::Catalogue;
use crate::values::texts::{fill, translate};
use crate::values::{I18nString, Money};

use super::{Order, confirmation_page};

/// Where customers find their orders: the service's public URL and the organizer's slug.
#[derive(Debug, Clone, Copy)]
pub struct Storefront<'a> {
    /// The service's public base URL.
    pub public_url: &'a str,
    /// The organizer's slug.
    pub organizer: &'a str,
}

impl Storefront<'_> {
    /// The order's confirmation page.
    pub fn order_url(&self, ev: &event::Model, o: &order::Model) -> String {
        confirmation_page(self.public_url, self.organizer, &ev.slug, o)
    }

    /// The shop's page that redeems a voucher code of the event.
    pub fn redeem_url(&self, ev: &event::Model, code: &str) -> String {
        let code: String = form_urlencoded::byte_serialize(code.as_bytes()).collect();
        format!(
            "{}/{}/{}/redeem?voucher={code}",
            self.public_url, self.organizer, ev.slug
        )
    }
}

struct Texts {
    placed_subject: &'static str,
    placed_body: &'static str,
    pending: &'static str,
    paid: &'static str,
    canceled_subject: &'static str,
    canceled_body: &'static str,
    awaiting: &'static str,
    approved_subject: &'static str,
    approved_body: &'static str,
    denied_subject: &'static str,
    denied_body: &'static str,
    link_subject: &'static str,
    link_body: &'static str,
    changed_subject: &'static str,
    changed_body: &'static str,
    paid_subject: &'static str,
    paid_body: &'static str,
}

/// The texts, in English; `framework/locale/{lang}.po` translate them.
const TEXTS: Texts = Texts {
    placed_subject: "Your order for {event}: {code}",
    placed_body: "Hello,

thank you for your order for {event}.

Order {code}
{positions}
Total: {total}

{payment}

Your order and your tickets are on this page:
{url}

Best regards,
The {event} team
",
    pending: "Please pay {total} by {expires}; until then the order is reserved for you.",
    paid: "The order is paid.",
    canceled_subject: "Your order for {event} has been canceled: {code}",
    canceled_body: "Hello,

your order {code} for {event} has been canceled.

Details are on this page:
{url}

Best regards,
The {event} team
",
    awaiting: "The organizer has to approve your order first; we will write to you again then.",
    approved_subject: "Your order for {event} has been approved: {code}",
    approved_body: "Hello,

your order {code} for {event} has been approved.

{payment}

Your order and your tickets are on this page:
{url}

Best regards,
The {event} team
",
    denied_subject: "Your order for {event} has been denied: {code}",
    denied_body: "Hello,

we are sorry: your order {code} for {event} has been denied.
{comment}
Details are on this page:
{url}

Best regards,
The {event} team
",
    link_subject: "Your order for {event}: {code}",
    link_body: "Hello,

here is the link to your order {code} for {event} once more. Your order and your tickets
are on this page:
{url}

Best regards,
The {event} team
",
    changed_subject: "Your order for {event} has been changed: {code}",
    changed_body: "Hello,

your order {code} for {event} has been changed. It is now:

{positions}
Total: {total}

{payment}

Your order and your tickets are on this page:
{url}

Best regards,
The {event} team
",
    paid_subject: "Payment received for your order: {code}",
    paid_body: "Hello,

we have received your payment for {event}. Thank you!

Your order {code} and your tickets are on this page:
{url}

Best regards,
The {event} team
",
};

fn amount(cents: i64, currency: &str) -> String {
    format!("{currency} {}", Money(cents).to_decimal_string())
}

/// The day a payment term ends, in the event's time zone.
fn day(ev: &event::Model, at: DateTime<Utc>) -> String {
    let tz: chrono_tz::Tz = ev.timezone.parse().unwrap_or(chrono_tz::UTC);
    at.with_timezone(&tz).format("%Y-%m-%d").to_string()
}

/// What the customer has to do about paying: nothing (paid), wait (approval), or pay by
/// the end of the term.
fn payment_line(ev: &event::Model, o: &order::Model) -> String {
    let lang = &o.locale;
    if o.status == "p" {
        translate(lang, TEXTS.paid).to_owned()
    } else if o.require_approval {
        translate(lang, TEXTS.awaiting).to_owned()
    } else {
        let total = amount(o.total_cents, &ev.currency);
        let expires = o.expires.map(|e| day(ev, e)).unwrap_or_default();
        let values = [("total", total.as_str()), ("expires", expires.as_str())];
        fill(translate(lang, TEXTS.pending), &values)
    }
}

/// The recipient, when the order has an e-mail address.
fn recipient(o: &order::Model) -> Option<&str> {
    o.email.as_deref().filter(|e| !e.is_empty())
}

/// The confirmation of a newly placed order: its positions, total, how to pay and the link
/// to its page, with its tickets when it may have them as the mail is sent. `None` when the
/// order has no e-mail address.
pub fn placed(
    ev: &event::Model,
    catalogue: &Catalogue,
    order: &Order,
    shop: &Storefront<'_>,
) -> Option<Mail> {
    summary(ev, catalogue, order, shop, |t| {
        (t.placed_subject, t.placed_body)
    })
}

/// Word that an order was changed, with what it is now (positions, total, how to pay) and
/// its tickets. `None` when the order has no e-mail address.
pub fn changed(
    ev: &event::Model,
    catalogue: &Catalogue,
    order: &Order,
    shop: &Storefront<'_>,
) -> Option<Mail> {
    summary(ev, catalogue, order, shop, |t| {
        (t.changed_subject, t.changed_body)
    })
}

/// A mail listing the order's positions, total and payment, in the texts `pick` chooses.
fn summary(
    ev: &event::Model,
    catalogue: &Catalogue,
    order: &Order,
    shop: &Storefront<'_>,
    pick: impl Fn(&Texts) -> (&'static str, &'static str),
) -> Option<Mail> {
    let o = &order.row;
    let positions: Vec<String> = order
        .positions
        .iter()
        .map(|p| {
            let name = catalogue.product_name(p.item_id, p.variation_id, &o.locale);
            format!("- {name}: {}", amount(p.price_cents, &ev.currency))
        })
        .collect();
    let positions = positions.join("\n");
    let total = amount(o.total_cents, &ev.currency);
    let payment = payment_line(ev, o);
    let extra = [
        ("positions", positions.as_str()),
        ("total", total.as_str()),
        ("payment", payment.as_str()),
    ];
    to_customer(ev, o, shop, pick, &extra).map(|m| m.with_tickets_of(o.id))
}

/// A mail to the order's customer in their language: the texts `pick` chooses, with the
/// event's name, the order's code and page (`{event}`, `{code}`, `{url}`) and `extra`.
/// `None` when the order has no e-mail address.
fn to_customer(
    ev: &event::Model,
    o: &order::Model,
    shop: &Storefront<'_>,
    pick: impl Fn(&Texts) -> (&'static str, &'static str),
    extra: &[(&str, &str)],
) -> Option<Mail> {
    let to = recipient(o)?;
    let (subject, body) = pick(&TEXTS);
    let (subject, body) = (translate(&o.locale, subject), translate(&o.locale, body));
    let event = I18nString::from_stored(&ev.name).localize(&o.locale);
    let url = shop.order_url(ev, o);
    let mut values = vec![
        ("event", event.as_str()),
        ("code", o.code.as_str()),
        ("url", url.as_str()),
    ];
    values.extend_from_slice(extra);
    let mail = Mail::text(to, fill(subject, &values), fill(body, &values));
    Some(mail.about(Some(ev.organizer_id), Some(ev.id)))
}

/// Word that an order was canceled. `None` when the order has no e-mail address.
pub fn canceled(ev: &event::Model, o: &order::Model, shop: &Storefront<'_>) -> Option<Mail> {
    to_customer(ev, o, shop, |t| (t.canceled_subject, t.canceled_body), &[])
}

/// Word that an order was approved, with what to pay by when (or that it is paid, when it
/// was free, and then its tickets). `None` when the order has no e-mail address.
pub fn approved(ev: &event::Model, o: &order::Model, shop: &Storefront<'_>) -> Option<Mail> {
    let payment = payment_line(ev, o);
    let pick = |t: &Texts| (t.approved_subject, t.approved_body);
    to_customer(ev, o, shop, pick, &[("payment", payment.as_str())])
        .map(|m| m.with_tickets_of(o.id))
}

/// Word that an order's payment was received, with its tickets (pretix's "order paid"
/// mail). `None` when the order has no e-mail address.
pub fn paid(ev: &event::Model, o: &order::Model, shop: &Storefront<'_>) -> Option<Mail> {
    to_customer(ev, o, shop, |t| (t.paid_subject, t.paid_body), &[])
        .map(|m| m.with_tickets_of(o.id))
}

/// Word that an order was denied, with the organizer's comment. `None` when the order has
/// no e-mail address.
pub fn denied(
    ev: &event::Model,
    o: &order::Model,
    shop: &Storefront<'_>,
    comment: &str,
) -> Option<Mail> {
    let comment = match comment.trim() {
        "" => String::new(),
        c => format!("\n{c}\n"),
    };
    let pick = |t: &Texts| (t.denied_subject, t.denied_body);
    to_customer(ev, o, shop, pick, &[("comment", comment.as_str())])
}

/// The link to an order's page, sent again (pretix's `resend_link`). `None` when the order
/// has no e-mail address.
pub fn link(ev: &event::Model, o: &order::Model, shop: &Storefront<'_>) -> Option<Mail> {
    to_customer(ev, o, shop, |t| (t.link_subject, t.link_body), &[])
}

#[cfg(test)]
mod tests {
    use super::TEXTS;
    use crate::values::texts::translate;

    #[test]
    fn every_mail_text_has_a_german_translation() {
        let t = &TEXTS;
        for text in [
            t.placed_subject,
            t.placed_body,
            t.pending,
            t.paid,
            t.canceled_subject,
            t.canceled_body,
            t.awaiting,
            t.approved_subject,
            t.approved_body,
            t.denied_subject,
            t.denied_body,
            t.link_subject,
            t.link_body,
            t.changed_subject,
            t.changed_body,
            t.paid_subject,
            t.paid_body,
        ] {
            assert_ne!(translate("de", text), text, "{text}");
        }
    }
}
