//! Placing an order through the API (external checkout): all of it or nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveTime, TimeDelta, TimeZone, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection,
    DatabaseTransaction, DbErr, EntityTrait, IntoActiveModel, QueryFilter, Set,
};
use serde_json::{Map, Value, json};

use super::file_answers::{self, FILE_ANSWER};
use super::mails::{self, Storefront};
use super::{Order, demand};
use crate::db::begin_write;
use crate::db::entities::{
    cart_position, event, order, order_fee, order_payment, order_position, question,
    question_option, quota, seat, voucher,
};
use crate::domain::availability::{self, HoldKind};
use crate::domain::cache::Cache;
use crate::domain::extensions::payments::{
    FREE_REFUSED, FreeOrder, PaymentContext, PaymentProvider,
};
use crate::domain::extensions::{Extensions, Hook, OrderEvent};
use crate::domain::invoices::build::{Issuing, OrderParts};
use crate::domain::invoices::when::{PlacedDrafts, mailed};
use crate::domain::mail;
use crate::domain::questions::{self, OptionIndex, check_answer_indexed, option_index};
use crate::domain::sale::{Catalogue, Product};
use crate::domain::seating::sell::{self, SeatKey};
use crate::domain::secrets::{self, Generator, TicketFacts};
use crate::domain::tax_rules::reverse_charge::Buyer;
use crate::domain::tokens::{UNAMBIGUOUS, random_from};
use crate::domain::{discounts, files, vouchers, webhooks};

/// An answer to a question, as sent.
#[derive(Debug, Clone)]
pub struct AnswerInput {
    /// The question's ID.
    pub question: i64,
    /// The answer text.
    pub answer: String,
    /// Chosen option IDs (choice questions).
    pub options: Vec<i64>,
}

/// A position of a new order, as sent.
#[derive(Debug, Clone, Default)]
pub struct PositionInput {
    /// The item.
    pub item: i64,
    /// The variation.
    pub variation: Option<i64>,
    /// The price in cents; computed (with the voucher) when not sent.
    pub price: Option<i64>,
    /// Attendee name parts.
    pub attendee_name_parts: Map<String, Value>,
    /// Attendee e-mail.
    pub attendee_email: Option<String>,
    /// Answers to questions.
    pub answers: Vec<AnswerInput>,
    /// The date of a series.
    pub subevent: Option<i64>,
    /// The seat's identifier in the plan.
    pub seat: Option<String>,
    /// A voucher code.
    pub voucher: Option<String>,
    /// The position's number as sent (all or none; consecutive from 1).
    pub positionid: Option<i32>,
    /// The number of the position it is an add-on to.
    pub addon_to: Option<i32>,
    /// The discount the client applied (with the price it sent); when any position names
    /// one, the discounts the client sent stand and none are worked out.
    pub discount: Option<i64>,
}

impl PositionInput {
    /// The seat it names, on its date.
    pub fn seat_key(&self) -> Option<SeatKey> {
        self.seat.clone().map(|guid| (self.subevent, guid))
    }
}

/// A fee of a new order, as sent.
#[derive(Debug, Clone)]
pub struct FeeInput {
    /// `payment`, `shipping`, `service`, ...
    pub fee_type: String,
    /// Amount in cents.
    pub value: i64,
    /// Description.
    pub description: String,
    /// Internal type.
    pub internal_type: Option<String>,
    /// Tax rule of the event.
    pub tax_rule: Option<i64>,
}

/// The 400 body's `cart` when [`NewOrder::whole_carts`] finds the carts taken.
pub const CART_TAKEN: &str = "The cart was already ordered or has expired.";

/// A new order, as sent.
#[derive(Debug, Clone, Default)]
pub struct NewOrder {
    /// `p` for paid, else pending.
    pub paid: bool,
    /// Pending until the organizer approves it (never together with `paid`).
    pub require_approval: bool,
    /// Customer e-mail.
    pub email: Option<String>,
    /// Customer phone.
    pub phone: Option<String>,
    /// Customer language; the event's default when not sent.
    pub locale: Option<String>,
    /// Sales channel.
    pub sales_channel: String,
    /// Payment provider identifier.
    pub payment_provider: Option<String>,
    /// Invoice address.
    pub invoice_address: Option<Value>,
    /// Positions.
    pub positions: Vec<PositionInput>,
    /// Fees.
    pub fees: Vec<FeeInput>,
    /// Internal comment.
    pub comment: String,
    /// Carts whose reservations the order takes over.
    pub consume_carts: Vec<String>,
    /// The positions are those of the consumed carts (the shop's checkout; the carts may
    /// also hold expired positions, which go with them): when the carts hold fewer (a
    /// second submit after the first took them), nothing is placed and the 400 body is
    /// `{"cart": CART_TAKEN}`.
    pub whole_carts: bool,
    /// Validate and price only.
    pub simulate: bool,
    /// Send the order confirmation to `email`.
    pub send_mail: bool,
    /// Placed in test mode.
    pub testmode: bool,
    /// Free data of the client.
    pub api_meta: Value,
    /// Whose uploads file answers may take: the caller's identity.
    pub uploader: Option<String>,
}

/// Why an order was not placed.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// Invalid input: the 400 body (`{"field": [...]}`, with `positions` a list of one
    /// object per position).
    #[error("invalid input")]
    Invalid(Value),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What the request needs besides the order: where it is sold, the event's settings and the
/// payment provider. It is owned, so that the order can wait to be placed together with
/// others.
pub struct PlaceContext {
    /// The service's public base URL.
    pub public_url: Arc<str>,
    /// The organizer's slug.
    pub organizer: String,
    /// The event.
    pub event: event::Model,
    /// The event's effective settings.
    pub settings: Arc<BTreeMap<&'static str, Value>>,
    /// The payment provider chosen, already checked to be offered for the event.
    pub provider: Option<Arc<dyn PaymentProvider>>,
    /// The plugins, whose hooks hear of the order.
    pub plugins: Arc<dyn Extensions>,
}

impl PlaceContext {
    /// Where the customer finds the order.
    pub fn shop(&self) -> Storefront<'_> {
        Storefront {
            public_url: &self.public_url,
            organizer: &self.organizer,
        }
    }
}

/// Per-position errors, one object per position, empty for positions without errors.
pub(super) struct PositionErrors(Vec<Map<String, Value>>);

impl PositionErrors {
    pub(super) fn new(n: usize) -> Self {
        Self(vec![Map::new(); n])
    }

    pub(super) fn add(&mut self, i: usize, field: &str, message: impl Into<String>) {
        let list = self.0[i]
            .entry(field)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(v) = list {
            v.push(Value::String(message.into()));
        }
    }

    pub(super) fn any(&self) -> bool {
        self.0.iter().any(|m| !m.is_empty())
    }

    /// The errors of each position, as objects.
    pub(super) fn into_objects(self) -> Vec<Map<String, Value>> {
        self.0
    }

    fn into_body(self) -> Value {
        json!({ "positions": self.0 })
    }
}

/// A position checked and priced, ready to be written.
pub(super) struct Line {
    product: Product,
    price: i64,
    voucher: Option<usize>,
    /// How much the voucher took off the listed price.
    voucher_discount: i64,
    discount: Option<i64>,
    seat: Option<seat::Model>,
    answers: Value,
}

/// Most positions an order may have, as pretix's `PRETIX_MAX_ORDER_SIZE`; also the most carts
/// one order may consume. 500 positions of 16 columns stay far below the bound variables a
/// statement may take (32,766 on SQLite, 65,535 on PostgreSQL). The positions and fees of
/// orders placed together are written in statements of at most this many rows.
pub const MAX_POSITIONS: usize = 500;

/// An order checked against the catalogue and the questions, before anything is locked.
pub struct Prepared {
    pub(super) ctx: PlaceContext,
    pub(super) new: NewOrder,
    pub(super) catalogue: Catalogue,
    /// Each position's product.
    products: Vec<Product>,
    /// Each position's answers, as stored, and the uploads they take.
    pub(super) answers: CheckedAnswers,
    /// Whether the organizer has a webhook that may hear of orders.
    listens: bool,
    /// The buyer, as the tax rules see them (from the invoice address).
    buyer: Option<Buyer>,
    /// Each position's base position, for add-ons.
    parents: Vec<Option<usize>>,
    /// Whether each position is an add-on its base includes in its price.
    included: Vec<bool>,
}

/// An order ready to be written: checked, with its lines and the vouchers they use (locked).
pub(super) struct Draft<'a> {
    pub(super) p: &'a Prepared,
    pub(super) lines: &'a [(usize, Line)],
    pub(super) vouchers: &'a [voucher::Model],
}

impl Draft<'_> {
    /// What the order costs: its positions and fees.
    fn total(&self) -> i64 {
        let positions: i64 = self.lines.iter().map(|(_, l)| l.price).sum();
        positions + self.p.new.fees.iter().map(|f| f.value).sum::<i64>()
    }

    /// Whether the order is paid as it is placed: sent as paid, or free of charge and not
    /// waiting for approval, as pretix pays those at once.
    fn paid(&self) -> bool {
        let new = &self.p.new;
        new.paid || (self.total() == 0 && !new.require_approval)
    }

    /// The provider of the order's first payment: the one sent, or `free` for an order paid
    /// at nothing that names none (or that was not sent as paid: pretix then takes `free`
    /// whatever was named).
    fn provider(&self) -> Option<&dyn PaymentProvider> {
        let free_of_charge = self.total() == 0 && self.paid();
        match self.p.ctx.provider.as_deref() {
            Some(chosen) if !free_of_charge || self.p.new.paid => Some(chosen),
            _ if free_of_charge => Some(&FreeOrder),
            _ => None,
        }
    }
}

/// Checks what can be checked without locks: sizes, products, prices, answers and fees.
pub(super) async fn prepare(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    ctx: PlaceContext,
    new: NewOrder,
) -> Result<Prepared, PlaceError> {
    if new.positions.is_empty() {
        return Err(invalid("positions", "An order cannot be empty."));
    }
    // The API's schema refuses longer lists already; this guards every other caller, since
    // the positions are written in one statement that takes a bounded number of values.
    for (field, len) in [
        ("positions", new.positions.len()),
        ("consume_carts", new.consume_carts.len()),
    ] {
        if len > MAX_POSITIONS {
            return Err(invalid(
                field,
                &format!("Ensure this field has no more than {MAX_POSITIONS} elements."),
            ));
        }
    }
    let ev = &ctx.event;
    let subevents: Vec<i64> = new.positions.iter().filter_map(|p| p.subevent).collect();
    let catalogue = Catalogue::load_kept(db, cache, ev, &subevents).await?;
    let listens = webhooks::organizer_listens(db, cache, ev.organizer_id).await?;
    let mut errors = PositionErrors::new(new.positions.len());
    let products = resolve_products(&catalogue, &new.positions, &mut errors);
    let parents = super::addons::parents(&new.positions, &mut errors);
    let included = super::addons::included(db, &catalogue, &products, &parents).await?;
    let source = FileSource {
        uploader: new.uploader.as_deref(),
        current: None,
    };
    let answers = check_answers(db, ev.id, &new.positions, source, &mut errors).await?;
    check_fees(&catalogue, &new.fees, "fees").map_err(PlaceError::Invalid)?;
    if errors.any() {
        return Err(PlaceError::Invalid(errors.into_body()));
    }
    Ok(Prepared {
        products: products.into_iter().flatten().collect(),
        buyer: Buyer::of_address(new.invoice_address.as_ref()),
        ctx,
        new,
        catalogue,
        answers,
        listens,
        parents,
        included,
    })
}

/// Places a checked order in a transaction of its own.
pub(super) async fn place_alone(
    db: &DatabaseConnection,
    p: &Prepared,
) -> Result<Order, PlaceError> {
    let (ev, new) = (&p.ctx.event, &p.new);
    let now = crate::values::now();
    let txn = begin_write(db).await?;
    let codes: Vec<String> = new
        .positions
        .iter()
        .filter_map(|p| p.voucher.clone())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    // Files first: a change claims them before it locks vouchers too.
    let uploader = new.uploader.as_deref().unwrap_or_default();
    if !files::claim_private(&txn, uploader, ev.id, &p.answers.claims).await? {
        return Err(invalid(
            "positions",
            "A file of the answers was used meanwhile; upload it again.",
        ));
    }
    let locked_vouchers = vouchers::lock_by_codes(&txn, ev.id, &codes).await?;
    let mut errors = PositionErrors::new(new.positions.len());
    let seats = lock_seats(&txn, p, &mut errors).await?;
    let lines = lines(p, &locked_vouchers, &seats, now, &mut errors);
    check_seats_free(&txn, new, &seats, now, &mut errors).await?;
    if errors.any() {
        return Err(PlaceError::Invalid(errors.into_body()));
    }
    let draft = Draft {
        p,
        lines: &lines,
        vouchers: &locked_vouchers,
    };
    let placed = write(&txn, std::slice::from_ref(&draft), now)
        .await?
        .pop()
        .ok_or_else(|| DbErr::Custom("the order was not written".into()))?;
    let invoices = draft_invoices(&txn, p, &[&placed]).await?;
    if let Err(body) = take_capacity(&txn, &draft, &placed.row, now).await? {
        return Err(PlaceError::Invalid(body));
    }
    if new.simulate {
        txn.rollback().await?;
        return Ok(placed);
    }
    let invoices = store_invoices(&txn, p, &[&placed], invoices, &[true])
        .await?
        .pop()
        .unwrap_or_default();
    announce(&txn, p, &placed, invoices).await?;
    crate::db::commit(txn).await?;
    Ok(placed)
}

/// Checks each position's voucher and seat and prices it. Positions with errors get none.
pub(super) fn lines(
    p: &Prepared,
    locked_vouchers: &[voucher::Model],
    seats: &HashMap<SeatKey, seat::Model>,
    now: DateTime<Utc>,
    errors: &mut PositionErrors,
) -> Vec<(usize, Line)> {
    let catalogue = &p.catalogue;
    let mut lines = Vec::with_capacity(p.products.len());
    let mut uses: HashMap<usize, i32> = HashMap::new();
    // Each position's voucher, for its add-ons.
    let mut redeems: HashMap<usize, &voucher::Model> = HashMap::new();
    for (i, (pos, &product)) in p.new.positions.iter().zip(&p.products).enumerate() {
        let seat = pos.seat_key().and_then(|k| seats.get(&k)).cloned();
        let voucher = match &pos.voucher {
            None => None,
            Some(code) => match locked_vouchers
                .iter()
                .position(|v| v.code.eq_ignore_ascii_case(code))
            {
                None => {
                    errors.add(i, "voucher", "Object with code does not exist.");
                    continue;
                }
                Some(vi) => {
                    let n = uses.entry(vi).or_default();
                    *n += 1;
                    let v = &locked_vouchers[vi];
                    if let Some(why) = vouchers::refusal(
                        v,
                        catalogue,
                        &product,
                        seat.as_ref().map(|s| s.id),
                        *n,
                        now,
                    ) {
                        errors.add(i, "voucher", why);
                        continue;
                    }
                    Some(vi)
                }
            },
        };
        if let Some(vi) = voucher {
            redeems.insert(i, &locked_vouchers[vi]);
        }
        // An add-on is free when its base's rule includes it, or its base's voucher includes
        // every add-on (pretix's `is_included_for_free`).
        let base_includes = p.parents[i]
            .and_then(|b| redeems.get(&b))
            .is_some_and(|v| v.all_addons_included);
        let base = match p.included[i] || base_includes {
            true => 0,
            false => catalogue.default_price(&product, p.buyer.as_ref()),
        };
        let after_voucher = match voucher {
            Some(vi) => vouchers::price(&locked_vouchers[vi], base),
            None => base,
        };
        let price = pos.price.unwrap_or(after_voucher);
        if let Some(s) = &seat
            && s.blocked
            && voucher.is_none_or(|vi| locked_vouchers[vi].seat_id != Some(s.id))
        {
            errors.add(i, "seat", "The selected seat is blocked.");
        }
        lines.push((
            i,
            Line {
                product,
                price,
                voucher,
                // A sent price above the voucher's counts as the voucher's doing only down
                // to it (pretix's `max(price, voucher price)`).
                voucher_discount: match voucher {
                    Some(_) => base - pos.price.map_or(after_voucher, |p| p.max(after_voucher)),
                    None => 0,
                },
                discount: pos.discount,
                seat,
                answers: p.answers.stored[i].clone(),
            },
        ));
    }
    discount(p, &mut lines, now);
    lines
}

/// Prices the lines with the event's discounts, as pretix does for orders sent without any
/// discount: each line whose price was not sent takes its discounted price and the discount
/// that took it. When the client named a discount for any line, what it sent stands.
fn discount(p: &Prepared, lines: &mut [(usize, Line)], now: DateTime<Utc>) {
    let sent = &p.new.positions;
    let rules = p.catalogue.discounts();
    if rules.is_empty() || sent.iter().any(|s| s.discount.is_some()) {
        return;
    }
    let input: Vec<discounts::Line> = lines
        .iter()
        .map(|(i, l)| discounts::Line {
            item_id: l.product.item_id,
            subevent_id: l.product.subevent_id,
            subevent_start: p.catalogue.date_start(l.product.subevent_id),
            price: l.price,
            addon_to: p.parents[*i].map(|b| b as i64),
            is_bundled: false,
            voucher_discount: l.voucher_discount,
        })
        .collect();
    let priced = rules.apply(&p.new.sales_channel, now, &input);
    for ((i, l), priced) in lines.iter_mut().zip(priced) {
        if sent[*i].price.is_none() {
            l.price = priced.price;
            l.discount = priced.discount;
        }
    }
}

/// Tells the plugins and webhooks of a placed order and queues its confirmation mail, in
/// its transaction.
pub(super) async fn announce(
    txn: &DatabaseTransaction,
    p: &Prepared,
    placed: &Order,
    invoices: Vec<i64>,
) -> Result<(), PlaceError> {
    let ev = &p.ctx.event;
    let hook = Hook { txn, event: ev };
    let mut happened = vec![OrderEvent::Placed];
    if placed.row.status == "p" {
        happened.push(OrderEvent::Paid);
    }
    for what in happened {
        p.ctx.plugins.order_changed(hook, what, placed).await?;
        if !p.listens {
            continue;
        }
        for action in webhooks::order_actions(what, placed.row.require_approval) {
            let notice = webhooks::Notice::order(ev, &placed.row.code, action, json!({}));
            webhooks::notify(txn, &notice).await?;
        }
    }
    if p.new.send_mail
        && let Some(m) = mails::placed(ev, &p.catalogue, placed, &p.ctx.shop())
    {
        mail::queue(txn, m.with_invoices(invoices)).await?;
    }
    Ok(())
}

/// Drafts the invoices of orders just written together (of one event, prepared as `p`),
/// before the quota locks are taken.
pub(super) async fn draft_invoices(
    txn: &DatabaseTransaction,
    p: &Prepared,
    placed: &[&Order],
) -> Result<PlacedDrafts, DbErr> {
    issuing(txn, p).draft_placed(&parts_of(placed)).await
}

/// Issues the drafted invoices of the orders `kept` says, in their transaction; gives, per
/// order, the IDs its confirmation mail carries.
pub(super) async fn store_invoices(
    txn: &DatabaseTransaction,
    p: &Prepared,
    placed: &[&Order],
    drafted: PlacedDrafts,
    kept: &[bool],
) -> Result<Vec<Vec<i64>>, DbErr> {
    let issued = issuing(txn, p)
        .store_placed(&parts_of(placed), drafted, kept)
        .await?;
    Ok(issued
        .into_iter()
        .map(|i| mailed(&p.ctx.settings, i))
        .collect())
}

fn issuing<'a>(txn: &'a DatabaseTransaction, p: &'a Prepared) -> Issuing<'a, DatabaseTransaction> {
    Issuing {
        txn,
        event: &p.ctx.event,
        settings: &p.ctx.settings,
        catalogue: &p.catalogue,
        now: crate::values::now(),
    }
}

fn parts_of<'a>(placed: &[&'a Order]) -> Vec<OrderParts<'a>> {
    placed
        .iter()
        .map(|o| OrderParts {
            order: &o.row,
            positions: &o.positions,
            fees: &o.fees,
        })
        .collect()
}

fn invalid(field: &str, message: &str) -> PlaceError {
    PlaceError::Invalid(json!({ field: [message] }))
}

fn resolve_products(
    catalogue: &Catalogue,
    positions: &[PositionInput],
    errors: &mut PositionErrors,
) -> Vec<Option<Product>> {
    positions
        .iter()
        .enumerate()
        .map(
            |(i, p)| match catalogue.resolve(p.item, p.variation, p.subevent) {
                Ok(product) => {
                    if p.price.is_some_and(|c| c < 0) {
                        errors.add(
                            i,
                            "price",
                            "Ensure this value is greater than or equal to 0.",
                        );
                    }
                    match p.discount {
                        Some(d) if !catalogue.discounts().has(d) => errors.add(
                            i,
                            "discount",
                            format!("Invalid pk \"{d}\" - object does not exist."),
                        ),
                        Some(_) if p.price.is_none() => errors.add(
                            i,
                            "discount",
                            "You can only specify a discount if you do the price computation, \
                             but price is not set.",
                        ),
                        _ => {}
                    }
                    Some(product)
                }
                Err((field, message)) => {
                    errors.add(i, field, message);
                    None
                }
            },
        )
        .collect()
}

/// Checks fees as sent: a known `fee_type` and a tax rule of the event. Gives the 400 body
/// (`{field: [one object per fee]}`) when some are wrong.
pub(super) fn check_fees(
    catalogue: &Catalogue,
    fees: &[FeeInput],
    field: &str,
) -> Result<(), Value> {
    const TYPES: [&str; 8] = [
        "payment",
        "shipping",
        "service",
        "cancellation",
        "insurance",
        "late",
        "other",
        "giftcard",
    ];
    let mut out = Vec::new();
    for f in fees {
        let mut e = Map::new();
        if !TYPES.contains(&f.fee_type.as_str()) {
            e.insert(
                "fee_type".into(),
                json!([format!("\"{}\" is not a valid choice.", f.fee_type)]),
            );
        }
        if f.tax_rule.is_some_and(|id| !catalogue.has_tax_rule(id)) {
            e.insert("tax_rule".into(), json!(["Unknown tax rule."]));
        }
        out.push(Value::Object(e));
    }
    if out
        .iter()
        .any(|e| e.as_object().is_some_and(|m| !m.is_empty()))
    {
        return Err(json!({ field: out }));
    }
    Ok(())
}

/// Where file answers come from: uploads of `uploader` (`file:<key>`), and, for a position
/// changed, its `current` answers, whose file `file:keep` keeps.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FileSource<'a> {
    pub(super) uploader: Option<&'a str>,
    pub(super) current: Option<&'a Value>,
}

/// Answers checked: what to store per position, and the uploads file answers take, to be
/// claimed ([`files::claim_private`]) in the transaction that stores them.
#[derive(Debug, Default)]
pub(super) struct CheckedAnswers {
    pub(super) stored: Vec<Value>,
    pub(super) claims: Vec<String>,
}

/// Checks each answer against the event's questions and gives the answers to store, per
/// position. A file answer names an upload of the sender (`file:<key>`, of
/// [`files::ANSWER_TYPES`]) or keeps the current file (`file:keep`); it is stored as
/// `file://<key>/<name>`.
pub(super) async fn check_answers(
    db: &impl ConnectionTrait,
    event_id: i64,
    positions: &[PositionInput],
    source: FileSource<'_>,
    errors: &mut PositionErrors,
) -> Result<CheckedAnswers, DbErr> {
    let mut stored = vec![json!([]); positions.len()];
    let mut claims = Vec::new();
    if positions.iter().all(|p| p.answers.is_empty()) {
        return Ok(CheckedAnswers { stored, claims });
    }
    let rows = question::Entity::find()
        .filter(question::Column::EventId.eq(event_id))
        .all(db)
        .await?;
    let complete = questions::complete(db, rows).await?;
    // Indexed once, so that each answer costs time in proportion to what it sends: an order
    // has up to 500 positions with many answers each.
    let questions: HashMap<i64, (&questions::Question, OptionIndex<'_>)> = complete
        .iter()
        .map(|q| (q.row.id, (q, option_index(q.row.id, &q.options))))
        .collect();
    for (i, p) in positions.iter().enumerate() {
        let mut out = Vec::new();
        for a in &p.answers {
            // `items` is ascending.
            let Some((q, options)) = questions
                .get(&a.question)
                .filter(|(q, _)| q.items.binary_search(&p.item).is_ok())
            else {
                errors.add(
                    i,
                    "answers",
                    format!("Question {} does not apply to this item.", a.question),
                );
                continue;
            };
            if a.options.iter().any(|o| !options.contains_key(o)) {
                errors.add(i, "answers", "Invalid option selected.");
                continue;
            }
            let text = match check_answer_indexed(&q.row, options, &a.answer, &a.options) {
                Ok(text) if q.row.r#type == questions::FILE && !text.is_empty() => {
                    file_answer(db, source, q.row.id, &text, &mut claims).await?
                }
                checked => checked,
            };
            match text {
                Ok(text) => out.push(answer_json(q, options, text, &a.options)),
                Err(message) => errors.add(i, "answers", message),
            }
        }
        stored[i] = Value::Array(out);
    }
    Ok(CheckedAnswers { stored, claims })
}

/// The stored text of a file answer (`file://<key>/<name>`): the current file for
/// `file:keep`, else the sender's upload, added to `claims`.
async fn file_answer(
    db: &impl ConnectionTrait,
    source: FileSource<'_>,
    question: i64,
    sent: &str,
    claims: &mut Vec<String>,
) -> Result<Result<String, String>, DbErr> {
    let not_found = || Err(format!("The submitted file ID \"{sent}\" was not found."));
    if sent == "file:keep" {
        let kept = source
            .current
            .and_then(|answers| file_answers::reference(answers, question));
        return Ok(kept.map_or_else(not_found, |r| Ok(format!("{FILE_ANSWER}{r}"))));
    }
    let Some(uploader) = source.uploader else {
        return Ok(not_found());
    };
    Ok(
        match files::unclaimed(db, uploader, sent, &files::ANSWER_TYPES).await? {
            Ok(reference) if claims.contains(&reference) => Err(format!(
                "The submitted file ID \"{sent}\" is used for another answer already."
            )),
            Ok(reference) => {
                claims.push(reference.clone());
                Ok(format!("{FILE_ANSWER}{reference}"))
            }
            Err(files::ClaimRefused::Unknown) => not_found(),
            Err(files::ClaimRefused::WrongType) => Err(format!(
                "The submitted file \"{sent}\" has a file type that is not allowed in this \
                 field."
            )),
        },
    )
}

/// The stored answer; its options in the question's order (by position, then ID).
fn answer_json(
    q: &questions::Question,
    options: &OptionIndex<'_>,
    answer: String,
    option_ids: &[i64],
) -> Value {
    let ids: HashSet<i64> = option_ids.iter().copied().collect();
    let mut chosen: Vec<&question_option::Model> = ids
        .iter()
        .filter_map(|id| options.get(id).copied())
        .collect();
    chosen.sort_by_key(|o| (o.position, o.id));
    json!({
        "question": q.row.id,
        "question_identifier": q.row.identifier,
        "answer": answer,
        "options": chosen.iter().map(|o| o.id).collect::<Vec<_>>(),
        "option_identifiers": chosen.iter().map(|o| o.identifier.clone()).collect::<Vec<_>>(),
    })
}

/// Reads and locks the seats the positions name; unknown seats, seats of another product
/// and seats named twice are errors, as is a missing seat for a product sold by seat. In a
/// series, each position's seat is one of its date's.
async fn lock_seats(
    txn: &DatabaseTransaction,
    p: &Prepared,
    errors: &mut PositionErrors,
) -> Result<HashMap<SeatKey, seat::Model>, DbErr> {
    let ev = &p.ctx.event;
    let keys: Vec<SeatKey> = p
        .new
        .positions
        .iter()
        .filter_map(|p| p.seat_key())
        .collect();
    let seats = sell::lock_by_guids(txn, ev.id, &keys).await?;
    let mut seen = HashSet::new();
    for (i, pos) in p.new.positions.iter().enumerate() {
        let seating = p.catalogue.seating(ev, pos.subevent);
        match pos.seat_key() {
            None if seating.sold_by_seat(pos.item) => {
                errors.add(i, "seat", "The product requires you to select a seat.");
            }
            None => {}
            Some(key) => {
                if let Some(why) = seating.refusal(pos.item, seats.get(&key)) {
                    errors.add(i, "seat", why);
                } else if !seen.insert(key) {
                    errors.add(i, "seat", "The seat is selected twice in this order.");
                }
            }
        }
    }
    Ok(seats)
}

/// Seats held by live carts other than those the order consumes are taken.
async fn check_seats_free(
    txn: &DatabaseTransaction,
    new: &NewOrder,
    seats: &HashMap<SeatKey, seat::Model>,
    now: DateTime<Utc>,
    errors: &mut PositionErrors,
) -> Result<(), DbErr> {
    let ids: Vec<i64> = seats.values().map(|s| s.id).collect();
    let held = sell::held_by_carts(txn, &ids, now).await?;
    for (i, p) in new.positions.iter().enumerate() {
        let Some(s) = p.seat_key().and_then(|k| seats.get(&k)) else {
            continue;
        };
        let carts = held.get(&s.id).map(Vec::as_slice).unwrap_or_default();
        if carts.iter().any(|c| !new.consume_carts.contains(c)) {
            errors.add(i, "seat", "The selected seat is reserved by another cart.");
        }
    }
    Ok(())
}

/// The end of the payment term: `days` after today, at the end of that day in the event's
/// time zone (`timezone`), as pretix sets it. `None` when that day is beyond the calendar
/// (the setting is bounded far below, but the arithmetic must not trust its callers).
pub fn payment_term_end(timezone: &str, days: i64, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let tz: chrono_tz::Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
    let term = TimeDelta::try_days(days)?;
    let local = now
        .with_timezone(&tz)
        .date_naive()
        .checked_add_signed(term)?;
    let end = local.and_time(NaiveTime::from_hms_opt(23, 59, 59).unwrap_or_default());
    match tz.from_local_datetime(&end).earliest() {
        Some(t) => Some(t.with_timezone(&Utc)),
        // 23:59:59 does not exist that day (a time zone change): the term counted from now.
        None => now.checked_add_signed(term),
    }
}

fn setting_i64(settings: &BTreeMap<&'static str, Value>, key: &str, default: i64) -> i64 {
    settings.get(key).and_then(Value::as_i64).unwrap_or(default)
}

/// Writes the orders, their positions, fees and payments, and sells their seats; gives each
/// order as written, in the drafts' order. A few statements for all of them.
pub(super) async fn write(
    txn: &DatabaseTransaction,
    drafts: &[Draft<'_>],
    now: DateTime<Utc>,
) -> Result<Vec<Order>, PlaceError> {
    let mut templates = Vec::with_capacity(drafts.len());
    for d in drafts {
        templates.push(order_row(d, now)?);
    }
    let rows = insert_with_codes(txn, templates).await?;
    let (mut position_rows, mut fee_rows, mut payment_rows) = (Vec::new(), Vec::new(), Vec::new());
    let mut keys: Vec<(Generator, String)> = Vec::new();
    for (d, row) in drafts.iter().zip(&rows) {
        let ctx = &d.p.ctx;
        let generator = Generator::of_settings(|k| ctx.settings.get(k));
        if !keys.iter().any(|(g, _)| *g == generator) {
            let key = secrets::signing_key(txn, generator, &ctx.event).await?;
            keys.push((generator, key));
        }
        let key = keys
            .iter()
            .find(|(g, _)| *g == generator)
            .map(|(_, k)| k.as_str());
        position_rows.extend(positions_of(d, row, generator, key.unwrap_or_default()));
        fee_rows.extend(fees_of(d, row));
        if let Some(provider) = d.provider() {
            payment_rows.push(payment_of(&d.p.ctx, provider, row, d.paid(), now).await?);
        }
    }
    let mut positions = by_order(insert_chunked(txn, position_rows).await?, |p| p.order_id);
    for (d, row) in drafts.iter().zip(&rows) {
        if let Some(written) = positions.get_mut(&row.id) {
            super::addons::link(txn, &d.p.parents, written).await?;
        }
    }
    let mut fees = by_order(insert_chunked(txn, fee_rows).await?, |f| f.order_id);
    let mut payments = by_order(insert_chunked(txn, payment_rows).await?, |p| p.order_id);
    sell_seats(txn, drafts.iter().flat_map(|d| d.lines)).await?;
    Ok(drafts
        .iter()
        .zip(rows)
        .map(|(d, row)| {
            let mut positions = positions.remove(&row.id).unwrap_or_default();
            positions.sort_by_key(|p| p.positionid);
            let mut fees = fees.remove(&row.id).unwrap_or_default();
            fees.sort_by_key(|f| f.id);
            Order {
                checkins: Vec::new(),
                refunds: Vec::new(),
                positions,
                fees,
                payments: payments.remove(&row.id).unwrap_or_default(),
                seats: d.lines.iter().filter_map(|(_, l)| l.seat.clone()).collect(),
                row,
            }
        })
        .collect())
}

/// Deletes orders written in this transaction that are not placed after all.
pub(super) async fn unwrite(txn: &DatabaseTransaction, ids: &[i64]) -> Result<(), DbErr> {
    if ids.is_empty() {
        return Ok(());
    }
    let ids = ids.to_vec();
    order_position::Entity::delete_many()
        .filter(order_position::Column::OrderId.is_in(ids.clone()))
        .exec(txn)
        .await?;
    order_fee::Entity::delete_many()
        .filter(order_fee::Column::OrderId.is_in(ids.clone()))
        .exec(txn)
        .await?;
    order_payment::Entity::delete_many()
        .filter(order_payment::Column::OrderId.is_in(ids.clone()))
        .exec(txn)
        .await?;
    order::Entity::delete_many()
        .filter(order::Column::Id.is_in(ids))
        .exec(txn)
        .await?;
    Ok(())
}

/// Inserts rows in statements of at most [`MAX_POSITIONS`] rows; gives them as stored.
async fn insert_chunked<A>(
    txn: &DatabaseTransaction,
    mut rows: Vec<A>,
) -> Result<Vec<<A::Entity as EntityTrait>::Model>, DbErr>
where
    A: ActiveModelTrait + Send,
    <A::Entity as EntityTrait>::Model: IntoActiveModel<A>,
{
    let mut stored = Vec::with_capacity(rows.len());
    while !rows.is_empty() {
        let rest = rows.split_off(rows.len().min(MAX_POSITIONS));
        stored.extend(
            A::Entity::insert_many(rows)
                .exec_with_returning(txn)
                .await?,
        );
        rows = rest;
    }
    Ok(stored)
}

/// Rows by the order they belong to.
fn by_order<T>(rows: Vec<T>, order_id: impl Fn(&T) -> i64) -> HashMap<i64, Vec<T>> {
    let mut out: HashMap<i64, Vec<T>> = HashMap::new();
    for row in rows {
        out.entry(order_id(&row)).or_default().push(row);
    }
    out
}

/// The order's row, without its code.
fn order_row(d: &Draft<'_>, now: DateTime<Utc>) -> Result<order::ActiveModel, PlaceError> {
    let (ctx, new) = (&d.p.ctx, &d.p.new);
    let ev = &ctx.event;
    let days = setting_i64(&ctx.settings, "payment_term_days", 14);
    let Some(expires) = payment_term_end(&ev.timezone, days, now) else {
        return Err(PlaceError::Invalid(json!({
            "payment_term_days": ["The payment term of this event is too long."]
        })));
    };
    let expires_automatically = ctx
        .settings
        .get("payment_term_expire_automatically")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let paid = d.paid();
    let locale = new.locale.clone().unwrap_or_else(|| {
        ctx.settings
            .get("locale")
            .and_then(Value::as_str)
            .unwrap_or("en")
            .to_owned()
    });
    Ok(order::ActiveModel {
        id: NotSet,
        event_id: Set(ev.id),
        code: NotSet,
        status: Set(if paid { "p" } else { "n" }.into()),
        datetime: Set(now),
        testmode: Set(new.testmode),
        secret: Set(random_from(b"abcdefghijklmnopqrstuvwxyz0123456789", 16)),
        email: Set(new.email.clone()),
        phone: Set(new.phone.clone()),
        locale: Set(locale),
        expires: Set(Some(expires)),
        expires_automatically: Set(expires_automatically),
        payment_date: Set(paid.then_some(now)),
        cancellation_date: Set(None),
        total_cents: Set(d.total()),
        comment: Set(new.comment.clone()),
        sales_channel: Set(new.sales_channel.clone()),
        invoice_address: Set(new.invoice_address.clone()),
        api_meta: Set(new.api_meta.clone()),
        last_modified: Set(Some(now)),
        require_approval: Set(new.require_approval && !paid),
        checkin_attention: Set(false),
        checkin_text: Set(None),
        custom_followup_at: Set(None),
        valid_if_pending: Set(false),
    })
}

/// Inserts the orders of one event, each under a fresh code, drawing again for those whose
/// code is taken; gives their rows in the templates' order.
pub(super) async fn insert_with_codes(
    txn: &DatabaseTransaction,
    templates: Vec<order::ActiveModel>,
) -> Result<Vec<order::Model>, DbErr> {
    let mut rows: Vec<Option<order::Model>> = vec![None; templates.len()];
    let mut waiting: Vec<usize> = (0..templates.len()).collect();
    while !waiting.is_empty() {
        // Distinct within the statement, so that each returned row tells whose it is.
        let mut codes = HashSet::with_capacity(waiting.len());
        let drawn: Vec<(usize, String)> = waiting
            .iter()
            .map(|&i| {
                loop {
                    let code = random_from(UNAMBIGUOUS, 5);
                    if codes.insert(code.clone()) {
                        break (i, code);
                    }
                }
            })
            .collect();
        let attempt = drawn.iter().map(|(i, code)| {
            let mut row = templates[*i].clone();
            row.code = Set(code.clone());
            row
        });
        let inserted = order::Entity::insert_many(attempt)
            .on_conflict_do_nothing_on([order::Column::EventId, order::Column::Code])
            .exec_with_returning_many(txn)
            .await;
        let inserted = match inserted {
            Ok(sea_orm::TryInsertResult::Inserted(models)) => models,
            // Every code taken: sea-orm reports an insert that returned no row as such.
            Ok(_) | Err(DbErr::RecordNotFound(_) | DbErr::RecordNotInserted) => Vec::new(),
            Err(e) => return Err(e),
        };
        let mut by_code: HashMap<String, order::Model> =
            inserted.into_iter().map(|m| (m.code.clone(), m)).collect();
        waiting.clear();
        for (i, code) in drawn {
            match by_code.remove(&code) {
                Some(model) => rows[i] = Some(model),
                None => waiting.push(i),
            }
        }
    }
    Ok(rows.into_iter().flatten().collect())
}

/// The rows of the draft's positions, with their tickets' secrets made with `key`.
fn positions_of(
    d: &Draft<'_>,
    row: &order::Model,
    generator: Generator,
    key: &str,
) -> Vec<order_position::ActiveModel> {
    let catalogue = &d.p.catalogue;
    d.lines
        .iter()
        .enumerate()
        .map(|(n, (i, l))| {
            let p = &d.p.new.positions[*i];
            let tax = catalogue.tax(l.product.item_id, l.price, d.p.buyer.as_ref());
            order_position::ActiveModel {
                id: NotSet,
                order_id: Set(row.id),
                positionid: Set(n as i32 + 1),
                item_id: Set(l.product.item_id),
                variation_id: Set(l.product.variation_id),
                subevent_id: Set(l.product.subevent_id),
                price_cents: Set(l.price),
                attendee_name_parts: Set(Value::Object(p.attendee_name_parts.clone())),
                attendee_email: Set(p.attendee_email.clone()),
                voucher_id: Set(l.voucher.map(|vi| d.vouchers[vi].id)),
                discount_id: Set(l.discount),
                tax_rule_id: Set(tax.rule_id),
                tax_rate_bps: Set(tax.rate_bps),
                tax_value_cents: Set(tax.value_cents),
                secret: Set(secrets::generate(
                    generator,
                    key,
                    TicketFacts {
                        item: l.product.item_id,
                        variation: l.product.variation_id,
                        subevent: l.product.subevent_id,
                    },
                )),
                seat_id: Set(l.seat.as_ref().map(|s| s.id)),
                answers: Set(l.answers.clone()),
                addon_to_id: Set(None),
                valid_from: Set(None),
                valid_until: Set(None),
                canceled: Set(false),
            }
        })
        .collect()
}

/// The rows of the draft's fees.
fn fees_of<'a>(
    d: &'a Draft<'_>,
    row: &'a order::Model,
) -> impl Iterator<Item = order_fee::ActiveModel> + 'a {
    d.p.new
        .fees
        .iter()
        .map(|f| fee_row(&d.p.catalogue, d.p.buyer.as_ref(), row.id, f))
}

/// The row of a fee as sent, of the order `order_id`, with the tax its rule includes.
pub(super) fn fee_row(
    catalogue: &Catalogue,
    buyer: Option<&Buyer>,
    order_id: i64,
    f: &FeeInput,
) -> order_fee::ActiveModel {
    let tax = catalogue.fee_tax(f.tax_rule, f.value, buyer);
    order_fee::ActiveModel {
        id: NotSet,
        order_id: Set(order_id),
        fee_type: Set(f.fee_type.clone()),
        value_cents: Set(f.value),
        description: Set(f.description.clone()),
        internal_type: Set(f.internal_type.clone()),
        tax_rule_id: Set(tax.rule_id),
        tax_rate_bps: Set(tax.rate_bps),
        tax_value_cents: Set(tax.value_cents),
        canceled: Set(false),
    }
}

/// The service's payment page of a payment.
pub fn payment_page(
    public_url: &str,
    org: &str,
    ev: &str,
    o: &order::Model,
    local_id: i32,
) -> String {
    format!(
        "{}/pay/{local_id}/",
        super::confirmation_page(public_url, org, ev, o).trim_end_matches('/')
    )
}

/// What a payment provider is told of an order's payment number `local_id`.
pub(super) fn payment_context(
    shop: &Storefront<'_>,
    ev: &event::Model,
    settings: &BTreeMap<&'static str, Value>,
    o: &order::Model,
    local_id: i32,
) -> PaymentContext {
    PaymentContext {
        organizer: shop.organizer.to_owned(),
        event: ev.slug.clone(),
        order_code: o.code.clone(),
        amount_cents: o.total_cents,
        currency: ev.currency.clone(),
        sales_channel: o.sales_channel.clone(),
        email: o.email.clone(),
        expires: o.expires,
        settings: settings.clone(),
        default_payment_url: payment_page(shop.public_url, shop.organizer, &ev.slug, o, local_id),
    }
}

/// The order's first payment, as its provider creates it.
async fn payment_of(
    ctx: &PlaceContext,
    provider: &dyn PaymentProvider,
    o: &order::Model,
    paid: bool,
    now: DateTime<Utc>,
) -> Result<order_payment::ActiveModel, PlaceError> {
    let pctx = payment_context(&ctx.shop(), &ctx.event, &ctx.settings, o, 1);
    if provider.identifier() == FreeOrder::IDENTIFIER && o.total_cents != 0 {
        return Err(PlaceError::Invalid(json!([FREE_REFUSED])));
    }
    if !provider.is_available(&pctx) {
        return Err(invalid(
            "payment_provider",
            "The payment provider is not available for this order.",
        ));
    }
    let created = provider
        .create_payment(&pctx)
        .await
        .map_err(|m| PlaceError::Invalid(json!({ "payment_provider": [m] })))?;
    let details = json!({
        "payment_url": created.payment_url.unwrap_or(pctx.default_payment_url),
        "instructions": created.instructions,
        "provider": created.details,
    });
    Ok(order_payment::ActiveModel {
        id: NotSet,
        order_id: Set(o.id),
        local_id: Set(1),
        state: Set(if paid { "confirmed" } else { "created" }.into()),
        amount_cents: Set(o.total_cents),
        provider: Set(provider.identifier().to_owned()),
        created: Set(now),
        payment_date: Set(paid.then_some(now)),
        details: Set(details),
    })
}

async fn sell_seats<'a>(
    txn: &DatabaseTransaction,
    lines: impl IntoIterator<Item = &'a (usize, Line)>,
) -> Result<(), DbErr> {
    let ids: Vec<i64> = lines
        .into_iter()
        .filter_map(|(_, l)| l.seat.as_ref().map(|s| s.id))
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    seat::Entity::update_many()
        .col_expr(seat::Column::Sold, sea_orm::sea_query::Expr::value(true))
        .filter(seat::Column::Id.is_in(ids))
        .exec(txn)
        .await?;
    Ok(())
}

/// The quotas the draft's positions count against.
pub(super) fn quotas_of(d: &Draft<'_>) -> impl Iterator<Item = i64> {
    d.lines
        .iter()
        .flat_map(|(_, l)| d.p.catalogue.quotas_of(&l.product))
}

/// What an order holds of its quotas: paid for good, or pending until its term ends.
pub(super) fn hold_of(o: &order::Model) -> (HoldKind, Option<DateTime<Utc>>) {
    if o.status == "p" {
        (HoldKind::Paid, None)
    } else {
        (HoldKind::Pending, super::pending_until(o))
    }
}

/// What is left of locked quotas while orders are fitted in, one after the other.
pub(super) struct Left<'a> {
    /// Units left per quota; `None` for unlimited.
    left: HashMap<i64, Option<i64>>,
    quotas: &'a [quota::Model],
}

impl<'a> Left<'a> {
    /// What is left of `quotas` (locked) with their `availability` read under the lock.
    pub(super) fn new(
        quotas: &'a [quota::Model],
        availability: &HashMap<i64, availability::Availability>,
    ) -> Self {
        let left = quotas
            .iter()
            .map(|q| {
                let n = match availability.get(&q.id) {
                    _ if q.closed => Some(0),
                    Some(a) => a.available_number,
                    None => Some(0),
                };
                (q.id, n)
            })
            .collect();
        Self { left, quotas }
    }

    /// Takes one unit of each quota of each position of the draft; when some position does
    /// not fit, takes nothing and gives the 400 body, with an error for each position that
    /// does not fit.
    pub(super) fn take(&mut self, d: &Draft<'_>) -> Result<(), Value> {
        let before = self.left.clone();
        let mut errors = PositionErrors::new(d.p.new.positions.len());
        for (i, l) in d.lines {
            if l.voucher
                .is_some_and(|vi| d.vouchers[vi].allow_ignore_quota)
            {
                continue;
            }
            let qs = d.p.catalogue.quotas_of(&l.product);
            match qs
                .iter()
                .find(|q| self.left.get(q).copied().flatten().is_some_and(|n| n < 1))
            {
                Some(short) => errors.add(
                    *i,
                    "item",
                    format!(
                        "There is not enough quota available on quota \"{}\" to perform the operation.",
                        self.name(*short)
                    ),
                ),
                None => {
                    for q in qs {
                        if let Some(Some(n)) = self.left.get_mut(&q) {
                            *n -= 1;
                        }
                    }
                }
            }
        }
        if errors.any() {
            self.left = before;
            return Err(errors.into_body());
        }
        Ok(())
    }

    fn name(&self, id: i64) -> &str {
        self.quotas
            .iter()
            .find(|q| q.id == id)
            .map(|q| q.name.as_str())
            .unwrap_or_default()
    }
}

/// Takes the consumed carts' reservations, redeems vouchers and holds the quotas, checking
/// under the quota locks that each position fits. Gives the 400 body when some do not.
async fn take_capacity(
    txn: &DatabaseTransaction,
    d: &Draft<'_>,
    o: &order::Model,
    now: DateTime<Utc>,
) -> Result<Result<(), Value>, DbErr> {
    let catalogue = &d.p.catalogue;
    let carts = take_carts(txn, d.p.ctx.event.id, &d.p.new.consume_carts).await?;
    if d.p.new.whole_carts && carts.len() < d.p.new.positions.len() {
        return Ok(Err(json!({ "cart": CART_TAKEN })));
    }
    let cart_products: Vec<(Product, DateTime<Utc>)> = carts
        .iter()
        .filter(|c| c.expires > now)
        .map(|c| {
            (
                Product {
                    item_id: c.item_id,
                    variation_id: c.variation_id,
                    subevent_id: c.subevent_id,
                },
                c.expires,
            )
        })
        .collect();
    let mut quota_ids: Vec<i64> = quotas_of(d).collect();
    for (_, l) in d.lines {
        if let Some(vi) = l.voucher {
            quota_ids.extend(vouchers::blocked_quotas(&d.vouchers[vi], catalogue));
        }
    }
    for (p, _) in &cart_products {
        quota_ids.extend(catalogue.quotas_of(p));
    }
    quota_ids.sort_unstable();
    quota_ids.dedup();
    let mut redemptions: BTreeMap<usize, i32> = BTreeMap::new();
    for (_, l) in d.lines {
        if let Some(vi) = l.voucher {
            *redemptions.entry(vi).or_default() += 1;
        }
    }
    let (quotas, availability) = if cart_products.is_empty() && redemptions.is_empty() {
        // Nothing changes the holds between the lock and the check: one round trip.
        availability::lock_and_read(txn, &quota_ids).await?
    } else {
        let quotas = availability::lock_quotas(txn, &quota_ids).await?;
        for (p, expires) in &cart_products {
            availability::adjust(
                txn,
                &catalogue.quotas_of(p),
                HoldKind::Cart,
                Some(*expires),
                -1,
            )
            .await?;
        }
        for (&vi, &n) in &redemptions {
            vouchers::redeem(txn, &d.vouchers[vi], catalogue, n).await?;
        }
        let availability = availability::of_quotas(txn, &quotas).await?;
        (quotas, availability)
    };
    if let Err(body) = Left::new(&quotas, &availability).take(d) {
        return Ok(Err(body));
    }
    let (kind, until) = hold_of(o);
    let all: Vec<Product> = d.lines.iter().map(|(_, l)| l.product).collect();
    availability::hold(txn, &quotas, &demand(catalogue, &all), kind, until).await?;
    Ok(Ok(()))
}

/// Deletes the positions of these carts of the event, giving them back.
async fn take_carts(
    txn: &DatabaseTransaction,
    event_id: i64,
    cart_ids: &[String],
) -> Result<Vec<cart_position::Model>, DbErr> {
    if cart_ids.is_empty() {
        return Ok(Vec::new());
    }
    // Deleting is what locks them: a concurrent order consuming the same carts finds them
    // gone and credits nothing. One statement by cart ID (at most 500 of them, see the API),
    // not by position ID: a cart may hold any number of positions.
    cart_position::Entity::delete_many()
        .filter(cart_position::Column::EventId.eq(event_id))
        .filter(cart_position::Column::CartId.is_in(cart_ids.iter().cloned()))
        .exec_with_returning(txn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payment_term_ends_at_the_end_of_its_last_day_and_never_overflows() {
        let now = DateTime::parse_from_rfc3339("2030-05-01T10:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("instant");
        let end = payment_term_end("Europe/Berlin", 14, now).expect("a term");
        assert_eq!(end.to_rfc3339(), "2030-05-15T21:59:59+00:00");
        assert_eq!(payment_term_end("Europe/Berlin", i64::MAX, now), None);
        assert_eq!(payment_term_end("UTC", 1_000_000_000_000, now), None);
    }
}
