//! A buyer's checkout in the shop: what the event asks of them for the cart (contact,
//! attendee names and e-mails, the questions of its products, an invoice address), the
//! payment providers it offers (with their fees), and the order placed from the cart
//! through the order rules, as the API places one.
//!
//! What the buyer enters is kept per cart (`checkouts`) between the steps. One request at
//! a time places a cart's order, under a claim on its checkout row; placing takes the cart
//! whole (the positions are deleted in the placing transaction, and an order whose cart
//! was already taken is refused there), so a form sent twice never places a second order,
//! and the second request finds the first order's code once the claim ends.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter,
    Set,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::buying::Refused;
use crate::db::entities::{cart_position, checkout, event, item, question};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::discounts::Priced;
use crate::domain::extensions::Extensions;
use crate::domain::extensions::payments::PaymentContext;
use crate::domain::orders::{
    self, AnswerInput, FeeInput, NewOrder, Order, PlaceContext, PlaceError, Placements,
    PositionInput,
};
use crate::domain::questions::{self, Question};
use crate::domain::settings::SettingsRegistry;

/// One attendee's entries: name, e-mail and answers by question ID.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attendee {
    /// The attendee's name.
    #[serde(default)]
    pub name: String,
    /// The attendee's e-mail address.
    #[serde(default)]
    pub email: String,
    /// Answers by question ID: the text, and the chosen options of a choice.
    #[serde(default)]
    pub answers: BTreeMap<i64, (String, Vec<i64>)>,
}

/// What a buyer entered at checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entered {
    /// The buyer's e-mail address.
    #[serde(default)]
    pub email: String,
    /// Per cart position (by ID), its attendee's entries.
    #[serde(default)]
    pub attendees: BTreeMap<i64, Attendee>,
    /// The invoice address, as orders store it.
    #[serde(default)]
    pub invoice_address: Option<Value>,
    /// The chosen payment provider.
    #[serde(default)]
    pub payment: Option<String>,
}

/// How much the event asks for something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Not at all.
    No,
    /// It may be left empty.
    Optional,
    /// It must be given.
    Required,
}

impl Ask {
    fn of(settings: &EventSettings, asked: &str, required: &str) -> Self {
        let on = |k: &str| settings.get(k).and_then(Value::as_bool).unwrap_or(false);
        match (on(asked), on(required)) {
            (false, _) => Ask::No,
            (true, false) => Ask::Optional,
            (true, true) => Ask::Required,
        }
    }
}

/// What the checkout asks for a cart.
pub struct Form {
    /// Attendee names.
    pub names: Ask,
    /// Attendee e-mail addresses.
    pub emails: Ask,
    /// The invoice address.
    pub invoice: Ask,
    /// Whether the invoice address has a VAT ID field.
    pub vat_id: bool,
    /// The questions asked of each position (by position ID), in their order.
    pub questions: Vec<(i64, Vec<Arc<Question>>)>,
    /// The positions whose attendee's name and e-mail are asked: those of admission
    /// products (pretix's `ask_attendee_data`), not add-ons such as a dinner.
    pub personal: Vec<i64>,
}

impl Form {
    /// Whether the attendee's name and e-mail are asked of a position.
    pub fn asks_attendee(&self, position: i64) -> bool {
        self.personal.contains(&position)
    }
}

/// What the checkout asks of the cart's positions (each product followed by its add-ons).
pub async fn form(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    settings: &EventSettings,
    positions: &[cart_position::Model],
) -> Result<Form, DbErr> {
    let of: Vec<(i64, i64)> = super::addons::in_order(positions)
        .iter()
        .map(|p| (p.id, p.item_id))
        .collect();
    form_for(db, ev, settings, &of).await
}

/// What is asked of positions given as (position ID, item ID): a cart's at checkout, or an
/// order's when its buyer changes their information.
pub async fn form_for(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    settings: &EventSettings,
    positions: &[(i64, i64)],
) -> Result<Form, DbErr> {
    let rows = question::Entity::find()
        .filter(question::Column::EventId.eq(ev.id))
        .filter(question::Column::Hidden.eq(false))
        .all(db)
        .await?;
    let mut all: Vec<Arc<Question>> = questions::complete(db, rows)
        .await?
        .into_iter()
        .filter(|q| q.row.r#type != questions::FILE)
        .map(Arc::new)
        .collect();
    all.sort_by_key(|q| (q.row.position, q.row.id));
    let admission: Vec<i64> = item::Entity::find()
        .filter(item::Column::Id.is_in(positions.iter().map(|&(_, item)| item)))
        .filter(item::Column::Admission.eq(true))
        .all(db)
        .await?
        .into_iter()
        .map(|i| i.id)
        .collect();
    Ok(Form {
        personal: positions
            .iter()
            .filter(|(_, item)| admission.contains(item))
            .map(|&(id, _)| id)
            .collect(),
        names: Ask::of(settings, "attendee_names_asked", "attendee_names_required"),
        emails: Ask::of(
            settings,
            "attendee_emails_asked",
            "attendee_emails_required",
        ),
        invoice: Ask::of(
            settings,
            "invoice_address_asked",
            "invoice_address_required",
        ),
        vat_id: settings
            .get("invoice_address_vatid")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        questions: positions
            .iter()
            .map(|&(id, item)| {
                let asked = all
                    .iter()
                    .filter(|q| q.items.binary_search(&item).is_ok())
                    .cloned()
                    .collect();
                (id, asked)
            })
            .collect(),
    })
}

/// Errors of what was entered, by field name (`email`, `{position}-name`,
/// `{position}-question_{id}`, `invoice-{field}`), as messages for the buyer.
pub type FieldErrors = BTreeMap<String, &'static str>;

impl Form {
    /// Checks what was entered, normalising the answers; the errors by field.
    pub fn check(&self, entered: &mut Entered, email_repeat: &str) -> FieldErrors {
        let mut errors = FieldErrors::new();
        entered.email = entered.email.trim().to_owned();
        if !questions::is_email(&entered.email) || entered.email.len() > 254 {
            errors.insert("email".into(), "Enter a valid email address.");
        } else if entered.email != email_repeat.trim() {
            errors.insert(
                "email_repeat".into(),
                "Please enter the same email address twice.",
            );
        }
        for (position, asked) in &self.questions {
            let personal = self.asks_attendee(*position);
            let attendee = entered.attendees.entry(*position).or_default();
            attendee.name = attendee.name.trim().to_owned();
            if personal && self.names == Ask::Required && attendee.name.is_empty() {
                errors.insert(format!("{position}-name"), "This field is required.");
            } else if attendee.name.chars().count() > 255 {
                errors.insert(format!("{position}-name"), "This name is too long.");
            }
            attendee.email = attendee.email.trim().to_owned();
            let email_bad = !attendee.email.is_empty() && !questions::is_email(&attendee.email);
            if email_bad || personal && self.emails == Ask::Required && attendee.email.is_empty() {
                errors.insert(format!("{position}-email"), "Enter a valid email address.");
            }
            for q in asked {
                let (text, options) = attendee.answers.remove(&q.row.id).unwrap_or_default();
                match questions::check_answer(&q.row, &q.options, &text, &options) {
                    Ok(answer) if answer.is_empty() => {}
                    Ok(answer) => {
                        attendee.answers.insert(q.row.id, (answer, options));
                    }
                    Err(_) => {
                        errors.insert(
                            format!("{position}-question_{}", q.row.id),
                            if q.row.required && text.trim().is_empty() && options.is_empty() {
                                "This field is required."
                            } else {
                                "Enter a valid answer."
                            },
                        );
                    }
                }
            }
            attendee
                .answers
                .retain(|id, _| asked.iter().any(|q| q.row.id == *id));
        }
        entered
            .attendees
            .retain(|id, _| self.questions.iter().any(|(p, _)| p == id));
        if let Some(Value::Object(address)) = &entered.invoice_address {
            let filled = |k: &str| {
                address
                    .get(k)
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.trim().is_empty())
            };
            let any = ["company", "street", "zipcode", "city", "country"]
                .iter()
                .any(|k| filled(k))
                || address
                    .get("name_parts")
                    .and_then(|n| n.get("full_name"))
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.trim().is_empty());
            if self.invoice == Ask::Required || any {
                for k in ["street", "zipcode", "city", "country"] {
                    if !filled(k) {
                        errors.insert(format!("invoice-{k}"), "This field is required.");
                    }
                }
                let country = address
                    .get("country")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if filled("country") && !questions::is_country(country) {
                    errors.insert("invoice-country".into(), "Enter a valid country code.");
                }
            }
        }
        errors
    }
}

/// An attendee's name as stored: one full name (none when empty).
pub fn name_parts(name: &str) -> serde_json::Map<String, Value> {
    let mut parts = serde_json::Map::new();
    if !name.is_empty() {
        parts.insert("_scheme".into(), "full".into());
        parts.insert("full_name".into(), name.into());
    }
    parts
}

/// What a cart's checkout has entered so far.
pub async fn entered(
    db: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
) -> Result<Entered, DbErr> {
    let row = checkout::Entity::find_by_id((event_id, cart_id.to_owned()))
        .one(db)
        .await?;
    Ok(row
        .and_then(|r| serde_json::from_value(r.entered).ok())
        .unwrap_or_default())
}

/// Keeps what a cart's checkout has entered.
pub async fn keep(
    db: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
    entered: &Entered,
) -> Result<(), DbErr> {
    let row = checkout::ActiveModel {
        event_id: Set(event_id),
        cart_id: Set(cart_id.to_owned()),
        entered: Set(serde_json::to_value(entered).unwrap_or_default()),
        order_code: Set(None),
        updated: Set(crate::values::now()),
    };
    checkout::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([checkout::Column::EventId, checkout::Column::CartId])
                .update_columns([checkout::Column::Entered, checkout::Column::Updated])
                .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// A payment provider the checkout offers, with its fee for the cart's total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    /// The provider's identifier.
    pub id: String,
    /// Its name for people.
    pub name: String,
    /// Its fee, in cents.
    pub fee_cents: i64,
}

/// The payment providers an event offers for an order of `total_cents`: those enabled
/// and available for the amount (none for an order that costs nothing).
pub async fn providers(
    db: &impl ConnectionTrait,
    plugins: &dyn Extensions,
    registry: &SettingsRegistry,
    ev: &event::Model,
    settings: &EventSettings,
    total_cents: i64,
) -> Result<Vec<Offered>, DbErr> {
    if total_cents == 0 {
        return Ok(Vec::new());
    }
    let enabled =
        crate::domain::events::enabled_payment_providers(db, plugins, registry, ev).await?;
    Ok(plugins
        .payment_providers(ev)
        .into_iter()
        .filter(|p| enabled.iter().any(|e| e == p.identifier()))
        .filter_map(|p| {
            let fee = fee(settings, p.identifier(), total_cents);
            let ctx = PaymentContext {
                organizer: String::new(),
                event: ev.slug.clone(),
                order_code: String::new(),
                amount_cents: total_cents + fee,
                currency: ev.currency.clone(),
                sales_channel: crate::domain::storefront::CHANNEL.into(),
                email: None,
                expires: None,
                settings: settings.clone(),
                default_payment_url: String::new(),
            };
            p.is_available(&ctx).then(|| Offered {
                id: p.identifier().to_owned(),
                name: p.name().to_owned(),
                fee_cents: fee,
            })
        })
        .collect())
}

/// A provider's fee for an amount, as pretix computes it with its `fee_abs` and
/// `fee_percent` settings: added so that after the provider takes its percentage of the
/// whole, the amount and the fixed part are left.
pub fn fee(settings: &EventSettings, provider: &str, amount_cents: i64) -> i64 {
    let number = |key: &str| {
        settings
            .get(format!("payment_{provider}__{key}").as_str())
            .and_then(|v| match v {
                Value::String(s) => s.trim().parse::<Decimal>().ok(),
                Value::Number(n) => n.to_string().parse::<Decimal>().ok(),
                _ => None,
            })
            .unwrap_or_default()
    };
    let fixed = number("fee_abs") * Decimal::ONE_HUNDRED;
    let percent = number("fee_percent");
    if fixed.is_zero() && percent.is_zero() {
        return 0;
    }
    let share = percent / Decimal::ONE_HUNDRED;
    if share >= Decimal::ONE || share.is_sign_negative() || fixed.is_sign_negative() {
        return 0;
    }
    let amount = Decimal::from(amount_cents);
    let fee = (amount + fixed) / (Decimal::ONE - share) - amount;
    fee.round().to_i64().unwrap_or(0).max(0)
}

/// The `order_code` of a checkout whose order is being placed: the claim of the one request
/// that places it (a claim older than [`CLAIM_SECONDS`] is taken as abandoned).
const PLACING: &str = "-";

/// How long a claim to place a cart's order holds, in seconds.
const CLAIM_SECONDS: i64 = 60;

/// Claims the placing of a cart's order for this request; `false` when another request
/// holds the claim or placed the order already.
async fn claim(db: &impl ConnectionTrait, event_id: i64, cart_id: &str) -> Result<bool, DbErr> {
    let now = crate::values::now();
    let stale = now - chrono::TimeDelta::seconds(CLAIM_SECONDS);
    let free = Condition::any()
        .add(checkout::Column::OrderCode.is_null())
        .add(
            Condition::all()
                .add(checkout::Column::OrderCode.eq(PLACING))
                .add(checkout::Column::Updated.lt(stale)),
        );
    let taken = checkout::Entity::update_many()
        .col_expr(checkout::Column::OrderCode, PLACING.into())
        .col_expr(checkout::Column::Updated, now.into())
        .filter(checkout::Column::EventId.eq(event_id))
        .filter(checkout::Column::CartId.eq(cart_id))
        .filter(free)
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

/// Ends the claim with the placed order's code, or with none when nothing was placed.
async fn release(
    db: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
    code: Option<String>,
) -> Result<(), DbErr> {
    checkout::Entity::update_many()
        .col_expr(checkout::Column::OrderCode, code.into())
        .filter(checkout::Column::EventId.eq(event_id))
        .filter(checkout::Column::CartId.eq(cart_id))
        .exec(db)
        .await?;
    Ok(())
}

/// The code of the order a cart became, waiting (a few seconds at most) while another
/// request is placing it; `None` when none was placed.
pub async fn placed_order(
    db: &impl ConnectionTrait,
    event_id: i64,
    cart_id: &str,
) -> Result<Option<String>, DbErr> {
    for _ in 0..50 {
        let row = checkout::Entity::find_by_id((event_id, cart_id.to_owned()))
            .one(db)
            .await?;
        match row.and_then(|r| r.order_code) {
            Some(code) if code == PLACING => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            other => return Ok(other),
        }
    }
    Ok(None)
}

/// What placing needs besides the cart.
pub struct Placing<'a> {
    /// The public base URL.
    pub public_url: &'a str,
    /// The organizer's slug.
    pub organizer: &'a str,
    /// The event.
    pub event: &'a event::Model,
    /// Its effective settings.
    pub settings: Arc<EventSettings>,
    /// The extensions.
    pub plugins: Arc<dyn Extensions>,
    /// Plain orders placed together.
    pub placements: &'a Arc<Placements>,
    /// The process cache at the request's generation.
    pub cache: Option<(&'a Cache, u64)>,
    /// The buyer's language.
    pub locale: &'a str,
}

/// Places the order of a cart with what was entered, at the prices the buyer confirmed
/// (`priced`, one per position, from [`super::discounted`]); the cart's positions are taken
/// in the same transaction. `Ok(Err(_))` says why nothing was placed.
pub async fn place(
    db: &DatabaseConnection,
    placing: Placing<'_>,
    cart_id: &str,
    positions: &[cart_position::Model],
    priced: &[Priced],
    entered: &Entered,
) -> Result<Result<Order, Refused>, DbErr> {
    if positions.is_empty() {
        return Ok(Err("Your cart is empty.".into()));
    }
    let event_id = placing.event.id;
    if !claim(db, event_id, cart_id).await? {
        return Ok(Err("Your cart is empty.".into()));
    }
    let placed = place_claimed(db, placing, cart_id, positions, priced, entered).await;
    let code = match &placed {
        Ok(Ok(order)) => Some(order.row.code.clone()),
        _ => None,
    };
    release(db, event_id, cart_id, code).await?;
    placed
}

/// [`place`] under the cart's claim.
async fn place_claimed(
    db: &DatabaseConnection,
    placing: Placing<'_>,
    cart_id: &str,
    positions: &[cart_position::Model],
    priced: &[Priced],
    entered: &Entered,
) -> Result<Result<Order, Refused>, DbErr> {
    let vouchers: BTreeMap<i64, String> = voucher_codes(db, positions).await?;
    let prices: HashMap<i64, Priced> = positions
        .iter()
        .map(|p| p.id)
        .zip(priced.iter().copied())
        .collect();
    let positions = super::addons::in_order(positions);
    let priced: Vec<Priced> = positions
        .iter()
        .map(|p| {
            prices.get(&p.id).copied().unwrap_or(Priced {
                price: p.price_cents,
                discount: None,
            })
        })
        .collect();
    let total: i64 = priced.iter().map(|p| p.price).sum();
    let numbered = positions.iter().any(|p| p.addon_to_id.is_some());
    let number = |id: i64| {
        positions
            .iter()
            .position(|p| p.id == id)
            .map(|i| i as i32 + 1)
    };
    let provider = match entered.payment.as_deref() {
        Some(id) if total > 0 => placing.plugins.payment_provider(placing.event, id),
        _ => None,
    };
    let mut fees = Vec::new();
    if let Some(p) = &provider {
        let fee = fee(&placing.settings, p.identifier(), total);
        if fee > 0 {
            fees.push(FeeInput {
                fee_type: "payment".into(),
                value: fee,
                description: String::new(),
                internal_type: Some(p.identifier().to_owned()),
                tax_rule: None,
            });
        }
    }
    let new = NewOrder {
        email: Some(entered.email.clone()),
        locale: Some(placing.locale.to_owned()),
        sales_channel: crate::domain::storefront::CHANNEL.into(),
        payment_provider: provider.as_ref().map(|p| p.identifier().to_owned()),
        invoice_address: entered.invoice_address.clone(),
        positions: positions
            .iter()
            .zip(&priced)
            .map(|(p, priced)| {
                let a = entered.attendees.get(&p.id).cloned().unwrap_or_default();
                let name_parts = name_parts(&a.name);
                PositionInput {
                    item: p.item_id,
                    variation: p.variation_id,
                    price: Some(priced.price),
                    attendee_name_parts: name_parts,
                    attendee_email: (!a.email.is_empty()).then_some(a.email),
                    answers: a
                        .answers
                        .into_iter()
                        .map(|(question, (answer, options))| AnswerInput {
                            question,
                            answer,
                            options,
                        })
                        .collect(),
                    subevent: p.subevent_id,
                    seat: None,
                    voucher: p.voucher_id.and_then(|v| vouchers.get(&v).cloned()),
                    positionid: numbered.then(|| number(p.id)).flatten(),
                    addon_to: p.addon_to_id.and_then(number),
                    discount: priced.discount,
                }
            })
            .collect(),
        fees,
        consume_carts: vec![cart_id.to_owned()],
        whole_carts: true,
        send_mail: true,
        ..NewOrder::default()
    };
    let ctx = PlaceContext {
        public_url: placing.public_url.into(),
        organizer: placing.organizer.to_owned(),
        event: placing.event.clone(),
        settings: placing.settings.clone(),
        provider,
        plugins: placing.plugins.clone(),
    };
    match orders::place(db, placing.cache, Some(placing.placements), ctx, new).await {
        Ok(order) => Ok(Ok(order)),
        Err(PlaceError::Db(e)) => Err(e),
        Err(PlaceError::Invalid(body)) => Ok(Err(refusal_of(&body))),
    }
}

/// The codes of the vouchers the positions redeem, by ID.
async fn voucher_codes(
    db: &impl ConnectionTrait,
    positions: &[cart_position::Model],
) -> Result<BTreeMap<i64, String>, DbErr> {
    let vouchers = super::vouchers_of(db, positions.iter().filter_map(|p| p.voucher_id)).await?;
    Ok(vouchers.into_iter().map(|(id, v)| (id, v.code)).collect())
}

/// What the order rules refused, for the buyer: the cart taken already, or something no
/// longer available.
fn refusal_of(body: &Value) -> Refused {
    if body.get("cart") == Some(&json!(orders::CART_TAKEN)) {
        return "Your cart is empty.".into();
    }
    "Some of the products you selected are no longer available in the quantity you selected.".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_of_the_checkout_speaks_every_language() {
        let source = include_str!("checkout.rs");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
        // Every message: a literal that starts in upper case and ends with a full stop.
        let texts: Vec<&str> = code
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|t| t.starts_with(char::is_uppercase) && t.ends_with('.') && t.contains(' '))
            .collect();
        assert!(texts.len() >= 6, "{texts:?}");
        for text in texts {
            assert_ne!(crate::values::texts::translate("de", text), text, "{text}");
        }
    }

    #[test]
    fn a_fee_leaves_the_amount_after_the_provider_takes_its_share() {
        let mut settings = EventSettings::new();
        assert_eq!(fee(&settings, "stripe", 10_000), 0);
        settings.insert("payment_stripe__fee_abs", json!("0.25"));
        settings.insert("payment_stripe__fee_percent", json!("1.4"));
        // (100.00 + 0.25) / (1 - 0.014) - 100.00 = 1.6734...
        assert_eq!(fee(&settings, "stripe", 10_000), 167);
        settings.insert("payment_stripe__fee_percent", json!("100"));
        assert_eq!(fee(&settings, "stripe", 10_000), 0);
    }
}
