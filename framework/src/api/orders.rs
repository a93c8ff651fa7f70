//! Orders of an event (external checkout), their payments and lifecycle:
//! `/api/v1/organizers/{organizer}/events/{event}/orders/`.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::ToJSON;
use poem_openapi::{Object, OpenApi};
use serde_json::{Map, Value};

use super::Tag;
use super::secrets::FeedAnswer;
use super::talk::shape::Shaped;
use crate::db::entities::{event, order_fee, order_payment, order_position, seat};
use crate::domain::orders::ticket::TicketNames;
use crate::domain::orders::{
    self, AnswerInput, FeeInput, LifecycleError, NewOrder, Order, OrderFilter, PlaceContext,
    PlaceError, PositionInput, Seller,
};
use crate::domain::permissions::Permission;
use crate::domain::questions::is_email;
use crate::domain::settings;
use crate::http::auth::EventAccess;
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, Decimal2, JsonBody, Money, Page, PageRequest};
use crate::state::AppState;

/// An answer to a question.
#[derive(Object, Clone)]
pub struct Answer {
    /// The question's ID.
    pub question: i64,
    /// The question's identifier.
    #[oai(read_only)]
    pub question_identifier: Option<String>,
    /// The answer as text. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub answer: String,
    /// Chosen option IDs (choice questions).
    #[oai(default, validator(max_items = 1000))]
    pub options: Vec<i64>,
    /// Identifiers of the chosen options.
    #[oai(read_only)]
    pub option_identifiers: Option<Vec<String>>,
}

/// A seat taken by a position.
#[derive(Object)]
pub struct SeatRef {
    /// Internal ID.
    pub id: i64,
    /// Human-readable name.
    pub name: String,
    /// Identifier in the plan.
    pub seat_guid: String,
}

/// A position (ticket or product) of an order.
#[derive(Object)]
#[oai(rename = "OrderPosition")]
pub struct PositionOut {
    /// Internal ID.
    pub id: i64,
    /// The order's code.
    pub order: String,
    /// Number within the order.
    pub positionid: i32,
    /// The item.
    pub item: i64,
    /// The variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Price, taxes included.
    pub price: Money,
    /// Attendee name, from its parts.
    #[oai(nullable)]
    pub attendee_name: Option<String>,
    /// Attendee name parts.
    pub attendee_name_parts: BTreeMap<String, String>,
    /// Attendee e-mail.
    #[oai(nullable)]
    pub attendee_email: Option<String>,
    /// Voucher redeemed.
    #[oai(nullable)]
    pub voucher: Option<i64>,
    /// Tax rate in percent.
    pub tax_rate: Decimal2,
    /// Tax included in the price.
    pub tax_value: Money,
    /// Tax rule applied.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
    /// Ticket secret.
    pub secret: String,
    /// Position this one is an add-on to.
    #[oai(nullable)]
    pub addon_to: Option<i64>,
    /// The date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat.
    #[oai(nullable)]
    pub seat: Option<SeatRef>,
    /// Answers to questions.
    pub answers: Vec<Answer>,
    /// Whether it was canceled.
    pub canceled: bool,
    /// Successful check-ins of the ticket, oldest first.
    pub checkins: Vec<PositionCheckinOut>,
    /// The ticket's text variables (`event_name`, `itemvar`, `attendee_name`, `secret`,
    /// `event_begin`, ...) and `images` (none: tickets have no image variables); only in the
    /// order list with `pdf_data=true`.
    #[oai(skip_serializing_if_is_none)]
    pub pdf_data: Option<BTreeMap<String, Value>>,
}

/// A successful check-in of a position.
#[derive(Object)]
#[oai(rename = "OrderPositionCheckin")]
pub struct PositionCheckinOut {
    /// Internal ID.
    pub id: i64,
    /// The check-in list.
    pub list: i64,
    /// When it happened.
    pub datetime: DateTime<Utc>,
    /// `entry` or `exit`.
    #[oai(rename = "type")]
    pub kind: String,
    /// The gate.
    #[oai(nullable)]
    pub gate: Option<i64>,
    /// Whether it was made automatically.
    pub auto_checked_in: bool,
}

/// A fee of an order.
#[derive(Object)]
#[oai(rename = "OrderFee")]
pub struct FeeOut {
    /// Internal ID.
    pub id: i64,
    /// Kind of fee.
    pub fee_type: String,
    /// Amount, taxes included.
    pub value: Money,
    /// Description.
    pub description: String,
    /// Internal type.
    #[oai(nullable)]
    pub internal_type: Option<String>,
    /// Tax rate in percent.
    pub tax_rate: Decimal2,
    /// Tax included.
    pub tax_value: Money,
    /// Tax rule.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
    /// Whether it was canceled.
    pub canceled: bool,
}

/// A payment of an order.
#[derive(Object)]
#[oai(rename = "OrderPayment")]
pub struct PaymentOut {
    /// Number within the order.
    pub local_id: i32,
    /// `created`, `pending`, `confirmed`, `canceled`, `failed` or `refunded`.
    pub state: String,
    /// Amount.
    pub amount: Money,
    /// When it was created.
    pub created: DateTime<Utc>,
    /// When it was confirmed.
    #[oai(nullable)]
    pub payment_date: Option<DateTime<Utc>>,
    /// Payment provider.
    pub provider: String,
    /// Where the customer pays.
    #[oai(nullable)]
    pub payment_url: Option<String>,
    /// Provider-specific details.
    pub details: BTreeMap<String, Value>,
}

/// An invoice address.
#[derive(Object, Clone, Default)]
pub struct InvoiceAddress {
    /// A business customer.
    #[oai(default)]
    pub is_business: bool,
    /// Company.
    #[oai(default, validator(max_length = 255))]
    pub company: String,
    /// Name, from its parts.
    #[oai(read_only)]
    pub name: Option<String>,
    /// Name parts. Each at most 255 characters.
    #[oai(default, validator(max_length = 255, max_properties = 100))]
    pub name_parts: BTreeMap<String, String>,
    /// Street. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub street: String,
    /// Postal code.
    #[oai(default, validator(max_length = 30))]
    pub zipcode: String,
    /// City.
    #[oai(default, validator(max_length = 255))]
    pub city: String,
    /// Country code.
    #[oai(default, validator(max_length = 2))]
    pub country: String,
    /// State.
    #[oai(default, validator(max_length = 255))]
    pub state: String,
    /// The customer's reference. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub internal_reference: String,
    /// VAT ID.
    #[oai(default, validator(max_length = 255))]
    pub vat_id: String,
}

/// An order.
#[derive(Object)]
#[oai(rename = "Order")]
pub struct OrderOut {
    /// Order code.
    pub code: String,
    /// The event's slug.
    pub event: String,
    /// `n` pending, `p` paid, `e` expired, `c` canceled.
    pub status: String,
    /// Placed in test mode.
    pub testmode: bool,
    /// Secret of the order's links.
    pub secret: String,
    /// Customer e-mail.
    #[oai(nullable)]
    pub email: Option<String>,
    /// Customer phone.
    #[oai(nullable)]
    pub phone: Option<String>,
    /// Customer language.
    pub locale: String,
    /// When it was placed.
    pub datetime: DateTime<Utc>,
    /// End of the payment term.
    #[oai(nullable)]
    pub expires: Option<DateTime<Utc>>,
    /// When it was paid.
    #[oai(nullable)]
    pub payment_date: Option<DateTime<Utc>>,
    /// Provider of the latest payment.
    #[oai(nullable)]
    pub payment_provider: Option<String>,
    /// Fees.
    pub fees: Vec<FeeOut>,
    /// Total.
    pub total: Money,
    /// Internal comment.
    pub comment: String,
    /// Invoice address.
    #[oai(nullable)]
    pub invoice_address: Option<InvoiceAddress>,
    /// Positions.
    pub positions: Vec<PositionOut>,
    /// Payments.
    pub payments: Vec<PaymentOut>,
    /// Refunds.
    pub refunds: Vec<super::refunds::RefundOut>,
    /// Whether it awaits approval.
    pub require_approval: bool,
    /// Sales channel.
    pub sales_channel: String,
    /// The confirmation page.
    pub url: String,
    /// Last change.
    #[oai(nullable)]
    pub last_modified: Option<DateTime<Utc>>,
    /// When it was canceled.
    #[oai(nullable)]
    pub cancellation_date: Option<DateTime<Utc>>,
    /// Free data of API clients.
    pub api_meta: BTreeMap<String, Value>,
}

fn object(v: &Value) -> BTreeMap<String, Value> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn strings(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds the API's view of orders.
pub struct OrderView<'a> {
    public_url: &'a str,
    organizer: &'a str,
    event: &'a str,
    seats: HashMap<i64, seat::Model>,
    tickets: Option<(&'a event::Model, TicketNames)>,
}

/// A ticket's text variables as pretix's `pdf_data` shows them, with its (here no) images.
pub(crate) fn pdf_data_out(vars: BTreeMap<String, String>) -> BTreeMap<String, Value> {
    let mut out: BTreeMap<String, Value> = vars
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    out.insert("images".into(), Value::Object(Map::new()));
    out
}

impl<'a> OrderView<'a> {
    /// Prepares the view of these orders.
    pub fn new(state: &'a AppState, ev: &'a EventAccess, orders: &[Order]) -> Self {
        Self {
            public_url: &state.public_url,
            organizer: &ev.organizer.slug,
            event: &ev.event.slug,
            seats: orders
                .iter()
                .flat_map(|o| &o.seats)
                .map(|s| (s.id, s.clone()))
                .collect(),
            tickets: None,
        }
    }

    /// Shows each position's text variables (`pdf_data`), with the names loaded for them.
    pub fn with_pdf_data(mut self, ev: &'a event::Model, names: TicketNames) -> Self {
        self.tickets = Some((ev, names));
        self
    }

    /// The order as shown.
    pub fn show(&self, o: Order) -> OrderOut {
        let r = &o.row;
        let now = Utc::now();
        OrderOut {
            url: orders::confirmation_page(self.public_url, self.organizer, self.event, r),
            code: r.code.clone(),
            event: self.event.to_owned(),
            status: orders::status(r, now).to_owned(),
            testmode: r.testmode,
            secret: r.secret.clone(),
            email: r.email.clone(),
            phone: r.phone.clone(),
            locale: r.locale.clone(),
            datetime: r.datetime,
            expires: r.expires,
            payment_date: r.payment_date,
            payment_provider: o.payments.last().map(|p| p.provider.clone()),
            total: Money(r.total_cents),
            comment: r.comment.clone(),
            invoice_address: r.invoice_address.as_ref().map(invoice_address),
            positions: o.positions.iter().map(|p| self.position(&o, p)).collect(),
            fees: o.fees.iter().map(|f| fee(f, r.status == "c")).collect(),
            payments: o.payments.iter().map(payment).collect(),
            refunds: o.refunds.iter().map(super::refunds::refund).collect(),
            require_approval: r.require_approval,
            sales_channel: r.sales_channel.clone(),
            last_modified: r.last_modified,
            cancellation_date: r.cancellation_date,
            api_meta: object(&r.api_meta),
        }
    }

    fn position(&self, o: &Order, p: &order_position::Model) -> PositionOut {
        let seat = p.seat_id.and_then(|id| self.seats.get(&id));
        PositionOut {
            pdf_data: self.tickets.as_ref().map(|(ev, names)| {
                pdf_data_out(orders::ticket::pdf_data(ev, &o.row, p, names, seat))
            }),
            checkins: o
                .checkins
                .iter()
                .filter(|c| c.position_id == p.id)
                .map(|c| PositionCheckinOut {
                    id: c.id,
                    list: c.list_id,
                    datetime: c.datetime,
                    kind: c.kind.clone(),
                    gate: c.gate_id,
                    auto_checked_in: c.auto_checked_in,
                })
                .collect(),
            id: p.id,
            order: o.row.code.clone(),
            positionid: p.positionid,
            item: p.item_id,
            variation: p.variation_id,
            price: Money(p.price_cents),
            attendee_name: orders::display_name(&p.attendee_name_parts),
            attendee_name_parts: strings(&p.attendee_name_parts),
            attendee_email: p.attendee_email.clone(),
            voucher: p.voucher_id,
            tax_rate: Decimal2(p.tax_rate_bps),
            tax_value: Money(p.tax_value_cents),
            tax_rule: p.tax_rule_id,
            secret: p.secret.clone(),
            addon_to: None,
            subevent: p.subevent_id,
            seat: seat.map(|s| SeatRef {
                id: s.id,
                name: s.name.clone(),
                seat_guid: s.seat_guid.clone(),
            }),
            answers: serde_json::from_value::<Vec<Value>>(p.answers.clone())
                .unwrap_or_default()
                .iter()
                .map(answer)
                .collect(),
            canceled: o.row.status == "c",
        }
    }
}

fn answer(v: &Value) -> Answer {
    let ids = |key: &str| -> Vec<i64> {
        v[key]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default()
    };
    Answer {
        question: v["question"].as_i64().unwrap_or_default(),
        question_identifier: v["question_identifier"].as_str().map(str::to_owned),
        answer: v["answer"].as_str().unwrap_or_default().to_owned(),
        options: ids("options"),
        option_identifiers: Some(
            v["option_identifiers"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        ),
    }
}

fn invoice_address(v: &Value) -> InvoiceAddress {
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    InvoiceAddress {
        is_business: v["is_business"].as_bool().unwrap_or(false),
        company: text("company"),
        name: orders::display_name(&v["name_parts"]),
        name_parts: strings(&v["name_parts"]),
        street: text("street"),
        zipcode: text("zipcode"),
        city: text("city"),
        country: text("country"),
        state: text("state"),
        internal_reference: text("internal_reference"),
        vat_id: text("vat_id"),
    }
}

fn fee(f: &order_fee::Model, canceled: bool) -> FeeOut {
    FeeOut {
        id: f.id,
        fee_type: f.fee_type.clone(),
        value: Money(f.value_cents),
        description: f.description.clone(),
        internal_type: f.internal_type.clone(),
        tax_rate: Decimal2(f.tax_rate_bps),
        tax_value: Money(f.tax_value_cents),
        tax_rule: f.tax_rule_id,
        canceled,
    }
}

/// A payment as the API shows it.
pub fn payment(p: &order_payment::Model) -> PaymentOut {
    PaymentOut {
        local_id: p.local_id,
        state: p.state.clone(),
        amount: Money(p.amount_cents),
        created: p.created,
        payment_date: p.payment_date,
        provider: p.provider.clone(),
        payment_url: p.details["payment_url"].as_str().map(str::to_owned),
        details: object(&p.details["provider"]),
    }
}

/// A position of a new order.
#[derive(Object)]
pub struct PositionCreate {
    /// The item.
    pub item: i64,
    /// The variation; required for items with variations.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// The price, taxes included; computed from the product (and voucher) when not sent.
    pub price: Option<Money>,
    /// Attendee name parts. Each at most 255 characters.
    #[oai(default, validator(max_length = 255, max_properties = 100))]
    pub attendee_name_parts: BTreeMap<String, String>,
    /// Attendee name, stored as the `full_name` part.
    #[oai(nullable, validator(max_length = 255))]
    pub attendee_name: Option<String>,
    /// Attendee e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub attendee_email: Option<String>,
    /// Answers to the event's questions, at most 1,000.
    #[oai(default, validator(max_items = 1000))]
    pub answers: Vec<Answer>,
    /// The date of a series; required in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat's identifier in the seating plan.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: Option<String>,
    /// A voucher code.
    #[oai(nullable, validator(max_length = 255))]
    pub voucher: Option<String>,
}

/// A fee of a new order.
#[derive(Object)]
pub struct FeeCreate {
    /// `payment`, `shipping`, `service`, `cancellation`, `insurance`, `late`, `other` or
    /// `giftcard`.
    #[oai(validator(max_length = 100))]
    pub fee_type: String,
    /// Amount, taxes included.
    pub value: Money,
    /// Description.
    #[oai(default, validator(max_length = 190))]
    pub description: String,
    /// Internal type.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_type: Option<String>,
    /// A tax rule of the event.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
}

/// A new order.
#[derive(Object)]
pub struct OrderCreate {
    /// `n` pending (default) or `p` paid.
    #[oai(default = "default_status", validator(max_length = 3))]
    pub status: String,
    /// Customer e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub email: Option<String>,
    /// Customer phone.
    #[oai(nullable, validator(max_length = 128))]
    pub phone: Option<String>,
    /// Customer language: one of the event's `locales`; its default `locale` when not sent.
    #[oai(validator(max_length = 32))]
    pub locale: Option<String>,
    /// Sales channel, one of the event's.
    #[oai(default = "default_channel", validator(max_length = 190))]
    pub sales_channel: String,
    /// Payment provider identifier: `manual` or one of a plugin the event enables.
    #[oai(nullable, validator(max_length = 255))]
    pub payment_provider: Option<String>,
    /// Invoice address.
    #[oai(nullable)]
    pub invoice_address: Option<InvoiceAddress>,
    /// Positions; at least one, at most 500 (as pretix's `PRETIX_MAX_ORDER_SIZE`).
    #[oai(validator(max_items = 500))]
    pub positions: Vec<PositionCreate>,
    /// Fees (not computed by the service), at most 100.
    #[oai(default, validator(max_items = 100))]
    pub fees: Vec<FeeCreate>,
    /// Internal comment. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
    /// Send the order confirmation e-mail.
    #[oai(default)]
    pub send_mail: bool,
    /// The order waits for the organizer's approval (`approve/` or `deny/`); it cannot be
    /// created paid.
    #[oai(default)]
    pub require_approval: bool,
    /// Cart IDs whose reserved quota and seats are credited to the order; the carts are
    /// deleted if and only if the order is created. At most 500, as positions.
    #[oai(default, validator(max_length = 255, max_items = 500))]
    pub consume_carts: Vec<String>,
    /// Validate and price only; nothing is kept.
    #[oai(default)]
    pub simulate: bool,
    /// Place it in test mode.
    #[oai(default)]
    pub testmode: bool,
    /// Free data of the client, at most 100 keys and 10,000 characters written as JSON
    /// (pretix sets no limit).
    #[oai(default, validator(max_properties = 100))]
    pub api_meta: BTreeMap<String, Value>,
}

/// Most characters of an order's `api_meta` written as JSON. Its values are free JSON, whose
/// length no schema can bound, so it is counted whole.
pub const MAX_API_META_CHARS: usize = 10_000;

fn default_status() -> String {
    "n".into()
}

fn default_channel() -> String {
    "web".into()
}

impl OrderCreate {
    fn into_new(self) -> NewOrder {
        NewOrder {
            paid: self.status == "p",
            require_approval: self.require_approval,
            email: self.email,
            phone: self.phone,
            locale: self.locale,
            sales_channel: self.sales_channel,
            payment_provider: self.payment_provider,
            invoice_address: self.invoice_address.map(|a| {
                serde_json::json!({
                    "is_business": a.is_business, "company": a.company,
                    "name_parts": a.name_parts, "street": a.street, "zipcode": a.zipcode,
                    "city": a.city, "country": a.country, "state": a.state,
                    "internal_reference": a.internal_reference, "vat_id": a.vat_id,
                })
            }),
            positions: self.positions.into_iter().map(position_input).collect(),
            fees: self
                .fees
                .into_iter()
                .map(|f| FeeInput {
                    fee_type: f.fee_type,
                    value: f.value.0,
                    description: f.description,
                    internal_type: f.internal_type,
                    tax_rule: f.tax_rule,
                })
                .collect(),
            comment: self.comment,
            consume_carts: self.consume_carts,
            simulate: self.simulate,
            send_mail: self.send_mail,
            testmode: self.testmode,
            api_meta: Value::Object(self.api_meta.into_iter().collect()),
        }
    }
}

fn position_input(p: PositionCreate) -> PositionInput {
    let mut parts: Map<String, Value> = p
        .attendee_name_parts
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    if let Some(name) = p.attendee_name.filter(|n| !n.is_empty())
        && parts.is_empty()
    {
        parts.insert("full_name".into(), Value::String(name));
    }
    PositionInput {
        item: p.item,
        variation: p.variation,
        price: p.price.map(|m| m.0),
        attendee_name_parts: parts,
        attendee_email: p.attendee_email,
        answers: p
            .answers
            .into_iter()
            .map(|a| AnswerInput {
                question: a.question,
                answer: a.answer,
                options: a.options,
            })
            .collect(),
        subevent: p.subevent,
        seat: p.seat,
        voucher: p.voucher,
    }
}

/// The new term of an order.
#[derive(Object)]
pub struct ExtendBody {
    /// The new end of the payment term.
    pub expires: DateTime<Utc>,
    /// Hold the quota again even if the products are no longer available.
    #[oai(default)]
    pub force: bool,
}

/// Options of a cancellation.
#[derive(Object, Default)]
pub struct CancelBody {
    /// Tell the customer by e-mail.
    #[oai(default)]
    pub send_email: bool,
}

/// Options of an approval.
#[derive(Object)]
pub struct ApproveBody {
    /// Tell the customer by e-mail (default true).
    #[oai(default = "yes")]
    pub send_email: bool,
}

/// Options of a denial.
#[derive(Object)]
pub struct DenyBody {
    /// Tell the customer by e-mail, with the comment (default true).
    #[oai(default = "yes")]
    pub send_email: bool,
    /// Why, for the customer.
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
}

fn yes() -> bool {
    true
}

/// Order operations.
pub struct OrdersApi;

/// Checks what the order's fields ask of the event before anything is read for it.
fn check_order(
    body: &OrderCreate,
    ev: &EventAccess,
    values: &BTreeMap<&'static str, Value>,
) -> Result<(), ApiError> {
    let mut errors = crate::http::FieldErrors::new();
    let api_meta_chars = serde_json::to_string(&body.api_meta).map_or(0, |s| s.chars().count());
    if api_meta_chars > MAX_API_META_CHARS {
        errors.push(
            "api_meta",
            format!("Ensure this field has no more than {MAX_API_META_CHARS} characters."),
        );
    }
    if !matches!(body.status.as_str(), "n" | "p") {
        errors.push(
            "status",
            format!("\"{}\" is not a valid choice.", body.status),
        );
    } else if body.status == "p" && body.require_approval {
        errors.push(
            "require_approval",
            "An order that needs approval cannot be created paid.",
        );
    }
    if body
        .email
        .as_deref()
        .is_some_and(|e| !e.is_empty() && !is_email(e))
    {
        errors.push("email", "Enter a valid email address.");
    }
    let locales = crate::domain::events::string_list(values.get("locales").unwrap_or(&Value::Null));
    if let Some(l) = &body.locale
        && !locales.contains(l)
    {
        errors.push("locale", format!("\"{l}\" is not a valid choice."));
    }
    if !crate::domain::events::string_list(&ev.event.sales_channels).contains(&body.sales_channel) {
        errors.push(
            "sales_channel",
            format!("Unknown sales channel: '{}'.", body.sales_channel),
        );
    }
    if body.positions.is_empty() {
        errors.push("positions", "An order cannot be empty.");
    }
    errors.into_result()
}

/// An order of the event the caller may view (`can_view_orders`), with the checked access;
/// 403 when either is missing.
pub(super) async fn viewed(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
    code: &str,
) -> Result<(EventAccess, Order), ApiError> {
    let ev = auth
        .0
        .event(&state.db, organizer, event, Some(Permission::ViewOrders))
        .await?;
    let o = orders::find(&state.db, ev.event.id, code)
        .await?
        .ok_or_else(ApiError::forbidden)?;
    Ok((ev, o))
}

/// The event of an order change, for a caller with `can_change_orders`.
pub(crate) async fn change_orders(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
) -> Result<EventAccess, ApiError> {
    auth.0
        .event(&state.db, organizer, event, Some(Permission::ChangeOrders))
        .await
}

pub(crate) fn lifecycle_error(e: LifecycleError) -> ApiError {
    match e {
        LifecycleError::NotFound => ApiError::forbidden(),
        LifecycleError::Refused(m) => ApiError::bad_request(m),
        LifecycleError::Invalid(body) => {
            ApiError::with_body(poem::http::StatusCode::BAD_REQUEST, body)
        }
        LifecycleError::Db(e) => e.into(),
    }
}

pub(crate) fn seller<'a>(state: &'a AppState, ev: &'a EventAccess) -> Seller<'a> {
    state.seller(&ev.organizer.slug)
}

fn shown(state: &AppState, ev: &EventAccess, o: Order) -> OrderOut {
    OrderView::new(state, ev, std::slice::from_ref(&o)).show(o)
}

#[OpenApi(tag = "Tag::Orders")]
impl OrdersApi {
    /// List orders
    ///
    /// Filters `status` (`n`, `p`, `e`, `c`), `email`, `code`, `testmode`, `modified_since`
    /// (changed at or after), `created_since` (placed at or after), `subevent_after` /
    /// `subevent_before` (with a ticket for a date ending after / beginning before);
    /// `ordering` by `datetime` (default), `code`, `status` or `last_modified`, `-` for
    /// descending. `exclude` (repeatable, dotted for position fields: `positions.checkins`)
    /// leaves fields out; `pdf_data=true` adds each ticket's text variables. The
    /// `X-Page-Generated` header is the server's time when the request began: scanners pass
    /// it as the next sync's `modified_since`. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_orders(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        status: Query<Option<String>>,
        email: Query<Option<String>>,
        code: Query<Option<String>>,
        modified_since: Query<Option<DateTime<Utc>>>,
        created_since: Query<Option<DateTime<Utc>>>,
        subevent_after: Query<Option<DateTime<Utc>>>,
        subevent_before: Query<Option<DateTime<Utc>>>,
        testmode: Query<Option<bool>>,
        #[oai(validator(max_items = 50))] exclude: Query<Vec<String>>,
        pdf_data: Query<Option<bool>>,
        ordering: Query<Option<String>>,
    ) -> ListResult<FeedAnswer<Shaped<Page<OrderOut>>>> {
        let began = Utc::now();
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        if let Some(o) = ordering.0.as_deref()
            && !orders::ORDERINGS.contains(&o)
        {
            return Err(
                ApiError::field("ordering", format!("Ordering by '{o}' is not possible.")).into(),
            );
        }
        if exclude.0.iter().any(|e| e.chars().count() > 100) {
            return Err(ApiError::field(
                "exclude",
                "Ensure each value has no more than 100 characters.",
            )
            .into());
        }
        let filter = OrderFilter {
            status: status.0,
            email: email.0,
            code: code.0,
            modified_since: modified_since.0,
            created_since: created_since.0,
            subevent_after: subevent_after.0,
            subevent_before: subevent_before.0,
            testmode: testmode.0,
            ordering: ordering.0,
        };
        let q = orders::query(ev.event.id, &filter, Utc::now());
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(orders::count(&state.db, q.clone()).await?)?;
        let rows = orders::page(&state.db, q, window.offset, window.limit).await?;
        let mut view = OrderView::new(&state, &ev, &rows);
        if pdf_data.0 == Some(true) {
            let names =
                TicketNames::load(&state.db, rows.iter().flat_map(|o| &o.positions)).await?;
            view = view.with_pdf_data(&ev.event, names);
        }
        let page = window.page(rows.into_iter().map(|o| view.show(o)).collect::<Vec<_>>());
        let mut body = page.to_json().unwrap_or_default();
        if let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) {
            for order in results {
                exclude_fields(order, &exclude.0);
            }
        }
        Ok(FeedAnswer::new(Shaped::new(body), began))
    }

    /// Show an order
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code",
        method = "get"
    )]
    async fn get_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> ReadResult<Json<OrderOut>> {
        let (ev, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Create an order
    ///
    /// External checkout: the whole order is created, or nothing. Quotas, seats and
    /// vouchers are checked (each position that does not fit gets its own error in the
    /// `positions` list); time frames, minimum and maximum counts, bundles and fees are not.
    /// With `payment_provider` the order has a payment in state `created` with a
    /// `payment_url`. `simulate: true` validates and prices without saving. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders",
        method = "post"
    )]
    async fn create_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<OrderCreate>,
    ) -> WriteResult<Created<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let cache = state.cache.current().await;
        let values = settings::of_event(&state.db, &state.settings, cache, &ev.event).await?;
        check_order(&body.0, &ev, &values)?;
        let provider =
            match body.0.payment_provider.as_deref() {
                None => None,
                Some(id) => Some(state.plugins.payment_provider(&ev.event, id).ok_or_else(
                    || {
                        ApiError::field(
                            "payment_provider",
                            "The given payment provider is not known.",
                        )
                    },
                )?),
            };
        let ctx = PlaceContext {
            public_url: state.public_url.clone(),
            organizer: ev.organizer.slug.clone(),
            event: ev.event.clone(),
            settings: values,
            provider,
            plugins: state.plugins.clone(),
        };
        let together = Some(&state.placements);
        let placed = match orders::place(&state.db, cache, together, ctx, body.0.into_new()).await {
            Ok(o) => o,
            Err(PlaceError::Invalid(body)) => {
                return Err(ApiError::with_body(poem::http::StatusCode::BAD_REQUEST, body).into());
            }
            Err(PlaceError::Db(e)) => return Err(e.into()),
        };
        state.mailer.wake();
        Ok(Created::Created(Json(shown(&state, &ev, placed))))
    }

    /// Mark an order paid
    ///
    /// Confirms its open payment (or records a manual one). An expired order is paid only
    /// while its products are still available. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_paid",
        method = "post"
    )]
    async fn mark_paid(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::mark_paid(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Give an order's tickets new secrets
    ///
    /// The old secrets stop admitting anyone; with signed secrets (`pretix_sig1`) they are
    /// listed in `revokedsecrets/`, since offline scanners would still accept their
    /// signatures. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/regenerate_secrets",
        method = "post"
    )]
    async fn regenerate_secrets(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::regenerate_secrets(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Cancel an order
    ///
    /// Gives back its quota, seats and voucher redemptions. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_canceled",
        method = "post"
    )]
    async fn mark_canceled(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<CancelBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::cancel(seller(&state, &ev), &ev.event, &code, body.0.send_email)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Approve an order
    ///
    /// For a pending order that waits for approval: its payment term starts now; a free
    /// order is paid at once. Anything else is 400. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/approve",
        method = "post"
    )]
    async fn approve(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<ApproveBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::approve(seller(&state, &ev), &ev.event, &code, body.0.send_email)
            .await
            .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Deny an order
    ///
    /// For a pending order that waits for approval: it is canceled, and the customer is
    /// told with the comment. Anything else is 400. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/deny",
        method = "post"
    )]
    async fn deny(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<DenyBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let b = body.0;
        let o = orders::deny(
            seller(&state, &ev),
            &ev.event,
            &code,
            b.send_email,
            &b.comment,
        )
        .await
        .map_err(lifecycle_error)?;
        state.mailer.wake();
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Mark a paid order pending
    ///
    /// Only a paid order (else 400); it holds its quota as pending again. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_pending",
        method = "post"
    )]
    async fn mark_pending(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::mark_pending(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Mark a pending order expired
    ///
    /// Only a pending order that has not expired (else 400); its quota is free at once.
    /// Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/mark_expired",
        method = "post"
    )]
    async fn mark_expired(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let o = orders::mark_expired(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// Extend an order's payment term
    ///
    /// For pending and expired orders. An expired order holds its quota again only while
    /// its products are available, unless `force`. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/extend",
        method = "post"
    )]
    async fn extend(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<ExtendBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::extend(
            seller(&state, &ev),
            &ev.event,
            &code,
            body.0.expires,
            body.0.force,
        )
        .await
        .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o)))
    }

    /// List an order's payments
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_payments(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        page: Query<Option<String>>,
    ) -> ListResult<Json<Page<PaymentOut>>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, None);
        Ok(Json(page.page_of(&o.payments, payment)?))
    }

    /// Show a payment
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id",
        method = "get"
    )]
    async fn get_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> ReadResult<Json<PaymentOut>> {
        let (_, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let p = o
            .payments
            .iter()
            .find(|p| p.local_id == *local_id)
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(payment(p)))
    }

    /// Confirm a payment
    ///
    /// Marks the payment confirmed and the order paid. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/payments/:local_id/confirm",
        method = "post"
    )]
    async fn confirm_payment(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        local_id: Path<i32>,
    ) -> WriteResult<Json<PaymentOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let o = orders::confirm_payment(seller(&state, &ev), &ev.event, &code, *local_id)
            .await
            .map_err(lifecycle_error)?;
        let p = o
            .payments
            .iter()
            .find(|p| p.local_id == *local_id)
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(payment(p)))
    }
}

/// Removes the fields `exclude` names from an order: `fees`, or dotted for the fields of
/// each position, `positions.checkins`. Unknown names are ignored, as pretix does.
fn exclude_fields(order: &mut Value, exclude: &[String]) {
    for path in exclude {
        match path.split_once('.') {
            None => {
                if let Some(o) = order.as_object_mut() {
                    o.remove(path);
                }
            }
            Some((list, field)) => {
                if let Some(items) = order.get_mut(list).and_then(Value::as_array_mut) {
                    for item in items {
                        exclude_fields(item, &[field.to_owned()]);
                    }
                }
            }
        }
    }
}
