//! The order resources' wire types: an order, its positions, fees, payments and refunds as
//! the API shows them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::NaiveDate;
use poem_openapi::Object;
use poem_openapi::types::MaybeUndefined;
use serde_json::{Map, Value};

use crate::db::entities::{event, order_fee, order_payment, order_position, seat};
use crate::domain::cache::EventSettings;
use crate::domain::orders::refunds::Refund;
use crate::domain::orders::ticket::TicketNames;
use crate::domain::orders::{self, Details, Order, file_answers};
use crate::domain::tickets::variables::TicketDetails;
use crate::domain::{settings, tickets};
use crate::http::auth::EventAccess;
use crate::http::{Decimal2, Money, patched};
use crate::state::AppState;
use crate::values::Timestamp;
use sea_orm::DbErr;

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
    /// The automatic discount that priced it.
    #[oai(nullable)]
    pub discount: Option<i64>,
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
    /// The ticket files of the position, once the order may have them and when its
    /// product has a ticket.
    pub downloads: Vec<DownloadOut>,
}

/// A ticket file to download.
#[derive(Object)]
#[oai(rename = "TicketDownloadLink")]
pub struct DownloadOut {
    /// The output's identifier, e.g. `pdf`.
    pub output: String,
    /// Where the file is.
    pub url: String,
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
    pub datetime: Timestamp,
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
    pub created: Timestamp,
    /// When it was confirmed.
    #[oai(nullable)]
    pub payment_date: Option<Timestamp>,
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
    pub datetime: Timestamp,
    /// End of the payment term.
    #[oai(nullable)]
    pub expires: Option<Timestamp>,
    /// When it was paid.
    #[oai(nullable)]
    pub payment_date: Option<Timestamp>,
    /// Provider of the latest payment.
    #[oai(nullable)]
    pub payment_provider: Option<String>,
    /// Fees.
    pub fees: Vec<FeeOut>,
    /// Total.
    pub total: Money,
    /// Internal comment.
    pub comment: String,
    /// A day the organizer means to follow the order up.
    #[oai(nullable)]
    pub custom_followup_at: Option<NaiveDate>,
    /// Invoice address.
    #[oai(nullable)]
    pub invoice_address: Option<InvoiceAddress>,
    /// Positions.
    pub positions: Vec<PositionOut>,
    /// Payments.
    pub payments: Vec<PaymentOut>,
    /// Refunds.
    pub refunds: Vec<RefundOut>,
    /// Whether it awaits approval.
    pub require_approval: bool,
    /// Sales channel.
    pub sales_channel: String,
    /// The confirmation page.
    pub url: String,
    /// Last change.
    #[oai(nullable)]
    pub last_modified: Option<Timestamp>,
    /// When it was canceled.
    #[oai(nullable)]
    pub cancellation_date: Option<Timestamp>,
    /// Whether the check-in staff should look at this order's tickets.
    pub checkin_attention: bool,
    /// A text shown to the check-in staff.
    #[oai(nullable)]
    pub checkin_text: Option<String>,
    /// Whether the tickets of a pending order admit.
    pub valid_if_pending: bool,
    /// Free data of API clients.
    pub api_meta: BTreeMap<String, Value>,
    /// The order's ticket files, once it is paid (or pending with tickets valid then).
    pub downloads: Vec<DownloadOut>,
}

pub(super) fn object(v: &Value) -> BTreeMap<String, Value> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

pub(super) fn strings(v: &Value) -> BTreeMap<String, String> {
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
    pdf_data: Option<(&'a event::Model, std::sync::Arc<TicketDetails>)>,
    names: Option<TicketNames>,
    downloads: Downloads,
}

/// What `downloads` lists: the ticket outputs offered to buyers, with the event's settings
/// deciding which orders and positions have tickets.
struct Downloads {
    outputs: Vec<String>,
    settings: Arc<EventSettings>,
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

/// What `downloads` depends on: the outputs offered to buyers with the event's settings,
/// and the positions' products when there is an output.
async fn downloads_of(
    db: &impl sea_orm::ConnectionTrait,
    state: &AppState,
    ev: &EventAccess,
    orders: &[Order],
) -> Result<(Downloads, Option<TicketNames>), DbErr> {
    let cache = state.cache.current().await;
    let settings = settings::of_event(db, &state.settings, cache, &ev.event).await?;
    let outputs: Vec<String> = tickets::outputs(&*state.plugins, &ev.event, &settings)
        .into_iter()
        .filter(|o| o.offered_to_customers())
        .map(|o| o.identifier().to_owned())
        .collect();
    let names = if outputs.is_empty() {
        None
    } else {
        Some(TicketNames::load(db, orders.iter().flat_map(|o| &o.positions)).await?)
    };
    Ok((Downloads { outputs, settings }, names))
}

impl<'a> OrderView<'a> {
    /// Prepares the view of these orders: the seats they hold, and the ticket outputs and
    /// settings their `downloads` depend on (with the positions' products when the event
    /// offers an output).
    pub async fn load(
        state: &'a AppState,
        ev: &'a EventAccess,
        orders: &[Order],
    ) -> Result<Self, DbErr> {
        // A request holding its transaction (an idempotent write) reads through it.
        let (downloads, names) = if crate::db::unit_of_work::is_holding() {
            let txn = crate::db::begin_write(&state.db).await?;
            downloads_of(&*txn, state, ev, orders).await?
        } else {
            downloads_of(&state.db, state, ev, orders).await?
        };
        Ok(Self {
            public_url: &state.public_url,
            organizer: &ev.organizer.slug,
            event: &ev.event.slug,
            seats: orders
                .iter()
                .flat_map(|o| &o.seats)
                .map(|s| (s.id, s.clone()))
                .collect(),
            pdf_data: None,
            names,
            downloads,
        })
    }

    /// Shows each position's text variables (`pdf_data`), with the names and details
    /// loaded for them.
    pub fn with_pdf_data(
        mut self,
        ev: &'a event::Model,
        names: TicketNames,
        details: std::sync::Arc<TicketDetails>,
    ) -> Self {
        self.pdf_data = Some((ev, details));
        self.names = Some(names);
        self
    }

    /// The download links of an order (`position` none) or of one of its positions.
    fn downloads(&self, o: &Order, position: Option<&order_position::Model>) -> Vec<DownloadOut> {
        let d = &self.downloads;
        if d.outputs.is_empty()
            || !tickets::lists_downloads(&o.row, &d.settings, crate::values::now())
        {
            return Vec::new();
        }
        let base = format!(
            "{}/api/v1/organizers/{}/events/{}",
            self.public_url, self.organizer, self.event
        );
        let resource = match position {
            Some(p) => {
                let has = self
                    .names
                    .as_ref()
                    .is_some_and(|n| tickets::has_ticket(p, n, &d.settings));
                if !has {
                    return Vec::new();
                }
                format!("{base}/orderpositions/{}/download", p.id)
            }
            None => format!("{base}/orders/{}/download", o.row.code),
        };
        d.outputs
            .iter()
            .map(|output| DownloadOut {
                output: output.clone(),
                url: format!("{resource}/{output}/"),
            })
            .collect()
    }

    /// The order as shown.
    pub fn show(&self, o: Order) -> OrderOut {
        let r = &o.row;
        let now = crate::values::now();
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
            datetime: r.datetime.into(),
            expires: r.expires.map(Into::into),
            payment_date: r.payment_date.map(Into::into),
            payment_provider: o.payments.last().map(|p| p.provider.clone()),
            total: Money(r.total_cents),
            comment: r.comment.clone(),
            custom_followup_at: r.custom_followup_at,
            invoice_address: r.invoice_address.as_ref().map(invoice_address),
            positions: o.positions.iter().map(|p| self.position(&o, p)).collect(),
            fees: o.fees.iter().map(|f| fee(f, r.status == "c")).collect(),
            payments: o.payments.iter().map(payment).collect(),
            refunds: o.refunds.iter().map(refund).collect(),
            require_approval: r.require_approval,
            sales_channel: r.sales_channel.clone(),
            last_modified: r.last_modified.map(Into::into),
            cancellation_date: r.cancellation_date.map(Into::into),
            checkin_attention: r.checkin_attention,
            checkin_text: r.checkin_text.clone(),
            valid_if_pending: r.valid_if_pending,
            api_meta: object(&r.api_meta),
            downloads: self.downloads(&o, None),
        }
    }

    /// A position of the order as shown.
    pub fn position(&self, o: &Order, p: &order_position::Model) -> PositionOut {
        let seat = p.seat_id.and_then(|id| self.seats.get(&id));
        PositionOut {
            pdf_data: self.pdf_data.as_ref().zip(self.names.as_ref()).map(
                |((ev, details), names)| {
                    let t = tickets::ticket(ev, o, p, names, details);
                    pdf_data_out(t.variables(&o.row.locale, crate::values::now()))
                },
            ),
            downloads: self.downloads(o, Some(p)),
            checkins: o
                .checkins
                .iter()
                .filter(|c| c.position_id == p.id)
                .map(|c| PositionCheckinOut {
                    id: c.id,
                    list: c.list_id,
                    datetime: c.datetime.into(),
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
            discount: p.discount_id,
            tax_rate: Decimal2(p.tax_rate_bps),
            tax_value: Money(p.tax_value_cents),
            tax_rule: p.tax_rule_id,
            secret: p.secret.clone(),
            addon_to: p.addon_to_id,
            subevent: p.subevent_id,
            seat: seat.map(|s| SeatRef {
                id: s.id,
                name: s.name.clone(),
                seat_guid: s.seat_guid.clone(),
            }),
            answers: serde_json::from_value::<Vec<Value>>(p.answers.clone())
                .unwrap_or_default()
                .iter()
                .map(|a| self.answer(p.id, a))
                .collect(),
            canceled: p.canceled || o.row.status == "c",
        }
    }
}

impl OrderView<'_> {
    /// An answer as shown: a file answer as the URL serving it.
    fn answer(&self, position: i64, v: &Value) -> Answer {
        let mut out = answer(v);
        if file_answers::is_file(&out.answer) {
            out.answer = file_answers::url(
                self.public_url,
                self.organizer,
                self.event,
                position,
                out.question,
            );
        }
        out
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

pub(super) fn invoice_address(v: &Value) -> InvoiceAddress {
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

pub(super) fn fee(f: &order_fee::Model, canceled: bool) -> FeeOut {
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
        created: p.created.into(),
        payment_date: p.payment_date.map(Into::into),
        provider: p.provider.clone(),
        payment_url: p.details["payment_url"].as_str().map(str::to_owned),
        details: object(&p.details["provider"]),
    }
}

/// A refund of an order.
#[derive(Object)]
#[oai(rename = "OrderRefund")]
pub struct RefundOut {
    /// Number within the order.
    pub local_id: i32,
    /// `created`, `transit`, `done`, `canceled`, `failed` or `external`.
    pub state: String,
    /// `admin`, `buyer` or `external`.
    pub source: String,
    /// Amount.
    pub amount: Money,
    /// The payment it gives back, by number.
    #[oai(nullable)]
    pub payment: Option<i32>,
    /// When it was created.
    pub created: Timestamp,
    /// When it was done.
    #[oai(nullable)]
    pub execution_date: Option<Timestamp>,
    /// Internal comment.
    pub comment: String,
    /// Payment provider.
    pub provider: String,
    /// Provider details.
    pub details: BTreeMap<String, Value>,
}

/// A refund as the API shows it.
pub fn refund(r: &Refund) -> RefundOut {
    RefundOut {
        local_id: r.row.local_id,
        state: r.row.state.clone(),
        source: r.row.source.clone(),
        amount: Money(r.row.amount_cents),
        payment: r.payment,
        created: r.row.created.into(),
        execution_date: r.row.execution_date.map(Into::into),
        comment: r.row.comment.clone(),
        provider: r.row.provider.clone(),
        details: r
            .row
            .details
            .as_object()
            .map(|m| m.clone().into_iter().collect())
            .unwrap_or_default(),
    }
}

/// A change of an order's details (`PATCH`), as pretix's: what it leaves out stays.
#[derive(Object)]
pub struct OrderPatch {
    /// Customer e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub email: MaybeUndefined<String>,
    /// Customer phone.
    #[oai(nullable, validator(max_length = 128))]
    pub phone: MaybeUndefined<String>,
    /// Customer language: one of the event's `locales`.
    #[oai(validator(max_length = 32))]
    pub locale: Option<String>,
    /// Internal comment. At most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub comment: Option<String>,
    /// A day the organizer means to follow the order up.
    #[oai(nullable)]
    pub custom_followup_at: MaybeUndefined<NaiveDate>,
    /// Whether the check-in staff should look at this order's tickets.
    pub checkin_attention: Option<bool>,
    /// A text shown to the check-in staff. At most 10,000 characters.
    #[oai(nullable, validator(max_length = 10000))]
    pub checkin_text: MaybeUndefined<String>,
    /// Invoice address; null removes it.
    #[oai(nullable)]
    pub invoice_address: MaybeUndefined<InvoiceAddress>,
    /// Whether the tickets of a pending order admit.
    pub valid_if_pending: Option<bool>,
    /// A new end of the payment term of a pending order (as `extend/`: an expired order
    /// holds its quota again only while its products are available).
    pub expires: Option<Timestamp>,
    /// Free data of the client, at most 100 keys and 10,000 characters written as JSON.
    #[oai(validator(max_properties = 100))]
    pub api_meta: Option<BTreeMap<String, Value>>,
}

impl From<OrderPatch> for Details {
    fn from(b: OrderPatch) -> Self {
        Self {
            email: patched(b.email),
            phone: patched(b.phone),
            locale: b.locale,
            comment: b.comment,
            custom_followup_at: patched(b.custom_followup_at),
            checkin_attention: b.checkin_attention,
            checkin_text: patched(b.checkin_text),
            invoice_address: patched(b.invoice_address).map(|a| a.map(stored_address)),
            valid_if_pending: b.valid_if_pending,
            api_meta: b.api_meta.map(|m| Value::Object(m.into_iter().collect())),
            expires: b.expires.map(Into::into),
        }
    }
}

/// An invoice address as an order stores it.
pub(super) fn stored_address(a: InvoiceAddress) -> Value {
    serde_json::json!({
        "is_business": a.is_business, "company": a.company,
        "name_parts": a.name_parts, "street": a.street, "zipcode": a.zipcode,
        "city": a.city, "country": a.country, "state": a.state,
        "internal_reference": a.internal_reference, "vat_id": a.vat_id,
    })
}
