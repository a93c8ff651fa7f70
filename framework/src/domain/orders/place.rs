//! Placing an order through the API (external checkout): all of it or nothing.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, NaiveTime, TimeDelta, TimeZone, Utc};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseTransaction, DbErr, EntityTrait,
    QueryFilter, Set,
};
use serde_json::{Map, Value, json};

use super::mails::{self, Storefront};
use super::{Order, demand};
use crate::db::begin_write;
use crate::db::entities::{
    cart_position, event, order, order_fee, order_payment, order_position, question,
    question_option, seat, voucher,
};
use crate::domain::availability::{self, HoldKind};
use crate::domain::cache::Cache;
use crate::domain::mail;
use crate::domain::questions::{self, OptionIndex, check_answer_indexed, option_index};
use crate::domain::sale::{Catalogue, Product};
use crate::domain::seating::sell;
use crate::domain::secrets::{self, Generator, TicketFacts};
use crate::domain::tokens::{UNAMBIGUOUS, random_from};
use crate::domain::{vouchers, webhooks};
use crate::plugin::payment::{PaymentContext, PaymentProvider};
use crate::plugin::{Hook, OrderEvent, PluginRegistry};

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
    /// Validate and price only.
    pub simulate: bool,
    /// Send the order confirmation to `email`.
    pub send_mail: bool,
    /// Placed in test mode.
    pub testmode: bool,
    /// Free data of the client.
    pub api_meta: Value,
}

/// Why an order was not placed.
#[derive(Debug)]
pub enum PlaceError {
    /// Invalid input: the 400 body (`{"field": [...]}`, with `positions` a list of one
    /// object per position).
    Invalid(Value),
    /// The database failed.
    Db(DbErr),
}

impl From<DbErr> for PlaceError {
    fn from(e: DbErr) -> Self {
        Self::Db(e)
    }
}

/// What the request needs besides the order: settings and the payment provider.
pub struct PlaceContext<'a> {
    /// Where the customer finds the order.
    pub shop: Storefront<'a>,
    /// The event.
    pub event: &'a event::Model,
    /// The event's effective settings.
    pub settings: &'a BTreeMap<&'static str, Value>,
    /// The payment provider chosen, already checked to be offered for the event.
    pub provider: Option<std::sync::Arc<dyn PaymentProvider>>,
    /// The process cache and its generation when the request began, for the event's
    /// products.
    pub cache: Option<(&'a Cache, u64)>,
    /// The plugins, whose hooks hear of the order.
    pub plugins: &'a PluginRegistry,
}

/// Per-position errors, one object per position, empty for positions without errors.
struct PositionErrors(Vec<Map<String, Value>>);

impl PositionErrors {
    fn new(n: usize) -> Self {
        Self(vec![Map::new(); n])
    }

    fn add(&mut self, i: usize, field: &str, message: impl Into<String>) {
        let list = self.0[i]
            .entry(field)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(v) = list {
            v.push(Value::String(message.into()));
        }
    }

    fn any(&self) -> bool {
        self.0.iter().any(|m| !m.is_empty())
    }

    fn into_body(self) -> Value {
        json!({ "positions": self.0 })
    }
}

/// A position checked and priced, ready to be written.
struct Line {
    product: Product,
    price: i64,
    voucher: Option<usize>,
    seat: Option<seat::Model>,
    answers: Value,
}

/// Most positions an order may have, as pretix's `PRETIX_MAX_ORDER_SIZE`; also the most carts
/// one order may consume. 500 positions of 16 columns stay far below the bound variables a
/// statement may take (32,766 on SQLite, 65,535 on PostgreSQL).
pub const MAX_POSITIONS: usize = 500;

/// Places an order in one transaction: the whole order or nothing. Quotas, seats and
/// vouchers are checked under their locks, so concurrent orders never oversell. With
/// `simulate`, everything is checked and priced and nothing is kept.
pub async fn place(
    db: &sea_orm::DatabaseConnection,
    ctx: &PlaceContext<'_>,
    new: NewOrder,
) -> Result<Order, PlaceError> {
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
    let ev = ctx.event;
    let subevents: Vec<i64> = new.positions.iter().filter_map(|p| p.subevent).collect();
    let catalogue = Catalogue::load_kept(db, ctx.cache, ev, &subevents).await?;
    let listens = webhooks::organizer_listens(db, ctx.cache, ev.organizer_id).await?;
    let mut errors = PositionErrors::new(new.positions.len());
    let products = resolve_products(&catalogue, &new.positions, &mut errors);
    let answers = check_answers(db, ev.id, &new.positions, &mut errors).await?;
    check_fees(&catalogue, &new.fees)?;
    if errors.any() {
        return Err(PlaceError::Invalid(errors.into_body()));
    }
    let now = Utc::now();
    let txn = begin_write(db).await?;
    let codes: Vec<String> = new
        .positions
        .iter()
        .filter_map(|p| p.voucher.clone())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let locked_vouchers = vouchers::lock_by_codes(&txn, ev.id, &codes).await?;
    let seats = lock_seats(&txn, ev, &new, &mut errors).await?;
    let mut lines = Vec::with_capacity(new.positions.len());
    let mut uses: HashMap<usize, i32> = HashMap::new();
    for (i, (p, product)) in new.positions.iter().zip(products).enumerate() {
        let Some(product) = product else { continue };
        let seat = p.seat.as_ref().and_then(|g| seats.get(g)).cloned();
        let voucher = match &p.voucher {
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
                        &catalogue,
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
        let base = catalogue.default_price(&product);
        let price = p.price.unwrap_or_else(|| match voucher {
            Some(vi) => vouchers::price(&locked_vouchers[vi], base),
            None => base,
        });
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
                seat,
                answers: answers[i].clone(),
            },
        ));
    }
    check_seats_free(&txn, &new, &seats, now, &mut errors).await?;
    if errors.any() {
        return Err(PlaceError::Invalid(errors.into_body()));
    }
    let placed = write(&txn, ctx, &catalogue, &new, &lines, &locked_vouchers, now).await?;
    let result = take_capacity(
        &txn,
        ctx,
        &catalogue,
        &new,
        &lines,
        &locked_vouchers,
        &placed.row,
        now,
    )
    .await?;
    if let Err(body) = result {
        return Err(PlaceError::Invalid(body));
    }
    if new.simulate {
        txn.rollback().await?;
        return Ok(placed);
    }
    let hook = Hook {
        txn: &txn,
        event: ev,
    };
    let mut happened = vec![OrderEvent::Placed];
    if new.paid {
        happened.push(OrderEvent::Paid);
    }
    for what in happened {
        ctx.plugins.order_changed(hook, what, &placed).await?;
        if !listens {
            continue;
        }
        for action in webhooks::order_actions(what, placed.row.require_approval) {
            let notice = webhooks::Notice::order(ev, &placed.row.code, action, json!({}));
            webhooks::notify(&txn, &notice).await?;
        }
    }
    if new.send_mail
        && let Some(m) = mails::placed(ev, &catalogue, &placed, &ctx.shop)
    {
        mail::queue(&txn, m).await?;
    }
    crate::db::commit(txn).await?;
    Ok(placed)
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

fn check_fees(catalogue: &Catalogue, fees: &[FeeInput]) -> Result<(), PlaceError> {
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
        return Err(PlaceError::Invalid(json!({ "fees": out })));
    }
    Ok(())
}

/// Checks each answer against the event's questions and gives the answers to store, per
/// position.
async fn check_answers(
    db: &impl ConnectionTrait,
    event_id: i64,
    positions: &[PositionInput],
    errors: &mut PositionErrors,
) -> Result<Vec<Value>, DbErr> {
    let mut stored = vec![json!([]); positions.len()];
    if positions.iter().all(|p| p.answers.is_empty()) {
        return Ok(stored);
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
            match check_answer_indexed(&q.row, options, &a.answer, &a.options) {
                Ok(text) => out.push(answer_json(q, options, text, &a.options)),
                Err(message) => errors.add(i, "answers", message),
            }
        }
        stored[i] = Value::Array(out);
    }
    Ok(stored)
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
/// and seats named twice are errors, as is a missing seat for a product sold by seat.
async fn lock_seats(
    txn: &DatabaseTransaction,
    ev: &event::Model,
    new: &NewOrder,
    errors: &mut PositionErrors,
) -> Result<HashMap<String, seat::Model>, DbErr> {
    let guids: Vec<String> = new
        .positions
        .iter()
        .filter_map(|p| p.seat.clone())
        .collect();
    let seats = sell::lock_by_guids(txn, ev.id, &guids).await?;
    let mut seen = HashSet::new();
    for (i, p) in new.positions.iter().enumerate() {
        match &p.seat {
            None if sell::sold_by_seat(ev, p.item) => {
                errors.add(i, "seat", "The product requires you to select a seat.");
            }
            None => {}
            Some(guid) => {
                if let Some(why) = sell::refusal(ev, p.item, seats.get(guid)) {
                    errors.add(i, "seat", why);
                } else if !seen.insert(guid.clone()) {
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
    seats: &HashMap<String, seat::Model>,
    now: DateTime<Utc>,
    errors: &mut PositionErrors,
) -> Result<(), DbErr> {
    let ids: Vec<i64> = seats.values().map(|s| s.id).collect();
    let held = sell::held_by_carts(txn, &ids, now).await?;
    for (i, p) in new.positions.iter().enumerate() {
        let Some(s) = p.seat.as_ref().and_then(|g| seats.get(g)) else {
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

/// Writes the order, its positions, fees and payment; redeems vouchers and sells seats.
#[allow(clippy::too_many_arguments)]
async fn write(
    txn: &DatabaseTransaction,
    ctx: &PlaceContext<'_>,
    catalogue: &Catalogue,
    new: &NewOrder,
    lines: &[(usize, Line)],
    locked_vouchers: &[voucher::Model],
    now: DateTime<Utc>,
) -> Result<Order, PlaceError> {
    let ev = ctx.event;
    let days = setting_i64(ctx.settings, "payment_term_days", 14);
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
    let positions_total: i64 = lines.iter().map(|(_, l)| l.price).sum();
    let fees_total: i64 = new.fees.iter().map(|f| f.value).sum();
    let total = positions_total + fees_total;
    let locale = new.locale.clone().unwrap_or_else(|| {
        ctx.settings
            .get("locale")
            .and_then(Value::as_str)
            .unwrap_or("en")
            .to_owned()
    });
    let template = order::ActiveModel {
        id: NotSet,
        event_id: Set(ev.id),
        code: NotSet,
        status: Set(if new.paid { "p" } else { "n" }.into()),
        datetime: Set(now),
        testmode: Set(new.testmode),
        secret: Set(random_from(b"abcdefghijklmnopqrstuvwxyz0123456789", 16)),
        email: Set(new.email.clone()),
        phone: Set(new.phone.clone()),
        locale: Set(locale),
        expires: Set(Some(expires)),
        expires_automatically: Set(expires_automatically),
        payment_date: Set(new.paid.then_some(now)),
        cancellation_date: Set(None),
        total_cents: Set(total),
        comment: Set(new.comment.clone()),
        sales_channel: Set(new.sales_channel.clone()),
        invoice_address: Set(new.invoice_address.clone()),
        api_meta: Set(new.api_meta.clone()),
        last_modified: Set(Some(now)),
        require_approval: Set(new.require_approval && !new.paid),
    };
    let row = insert_with_code(txn, template).await?;
    let generator = Generator::of_settings(|k| ctx.settings.get(k));
    let key = secrets::signing_key(txn, generator, ev).await?;
    let position_rows: Vec<order_position::ActiveModel> = lines
        .iter()
        .enumerate()
        .map(|(n, (i, l))| {
            let p = &new.positions[*i];
            let tax = catalogue.tax(l.product.item_id, l.price);
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
                voucher_id: Set(l.voucher.map(|vi| locked_vouchers[vi].id)),
                tax_rule_id: Set(tax.rule_id),
                tax_rate_bps: Set(tax.rate_bps),
                tax_value_cents: Set(tax.value_cents),
                secret: Set(secrets::generate(
                    generator,
                    &key,
                    TicketFacts {
                        item: l.product.item_id,
                        variation: l.product.variation_id,
                        subevent: l.product.subevent_id,
                    },
                )),
                seat_id: Set(l.seat.as_ref().map(|s| s.id)),
                answers: Set(l.answers.clone()),
            }
        })
        .collect();
    let positions = order_position::Entity::insert_many(position_rows)
        .exec_with_returning(txn)
        .await?;
    let mut fees = Vec::new();
    for f in &new.fees {
        let tax = catalogue.fee_tax(f.tax_rule, f.value);
        let fee = order_fee::ActiveModel {
            id: NotSet,
            order_id: Set(row.id),
            fee_type: Set(f.fee_type.clone()),
            value_cents: Set(f.value),
            description: Set(f.description.clone()),
            internal_type: Set(f.internal_type.clone()),
            tax_rule_id: Set(tax.rule_id),
            tax_rate_bps: Set(tax.rate_bps),
            tax_value_cents: Set(tax.value_cents),
        };
        fees.push(
            order_fee::Entity::insert(fee)
                .exec_with_returning(txn)
                .await?,
        );
    }
    let mut payments = Vec::new();
    if let Some(provider) = &ctx.provider {
        payments.push(create_payment(txn, ctx, provider.as_ref(), &row, new.paid, now).await?);
    }
    sell_seats(txn, lines).await?;
    Ok(Order {
        checkins: Vec::new(),
        refunds: Vec::new(),
        row,
        positions,
        fees,
        payments,
        seats: lines.iter().filter_map(|(_, l)| l.seat.clone()).collect(),
    })
}

/// Inserts the order under a fresh code, drawing again when the code is taken.
async fn insert_with_code(
    txn: &DatabaseTransaction,
    template: order::ActiveModel,
) -> Result<order::Model, DbErr> {
    loop {
        let mut row = template.clone();
        row.code = Set(random_from(UNAMBIGUOUS, 5));
        let inserted = order::Entity::insert(row)
            .on_conflict_do_nothing_on([order::Column::EventId, order::Column::Code])
            .exec_with_returning(txn)
            .await;
        match inserted {
            Ok(sea_orm::TryInsertResult::Inserted(model)) => return Ok(model),
            // A taken code: sea-orm reports an insert that returned no row as not found.
            Ok(_) | Err(DbErr::RecordNotFound(_)) => continue,
            Err(e) => return Err(e),
        }
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

async fn create_payment(
    txn: &DatabaseTransaction,
    ctx: &PlaceContext<'_>,
    provider: &dyn PaymentProvider,
    o: &order::Model,
    paid: bool,
    now: DateTime<Utc>,
) -> Result<order_payment::Model, PlaceError> {
    let pctx = payment_context(&ctx.shop, ctx.event, ctx.settings, o, 1);
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
    let payment = order_payment::ActiveModel {
        id: NotSet,
        order_id: Set(o.id),
        local_id: Set(1),
        state: Set(if paid { "confirmed" } else { "created" }.into()),
        amount_cents: Set(o.total_cents),
        provider: Set(provider.identifier().to_owned()),
        created: Set(now),
        payment_date: Set(paid.then_some(now)),
        details: Set(details),
    };
    Ok(order_payment::Entity::insert(payment)
        .exec_with_returning(txn)
        .await?)
}

async fn sell_seats(txn: &DatabaseTransaction, lines: &[(usize, Line)]) -> Result<(), DbErr> {
    let ids: Vec<i64> = lines
        .iter()
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

/// Takes the consumed carts' reservations, redeems vouchers and holds the quotas, checking
/// under the quota locks that each position fits. Gives the 400 body when some do not.
#[allow(clippy::too_many_arguments)]
async fn take_capacity(
    txn: &DatabaseTransaction,
    ctx: &PlaceContext<'_>,
    catalogue: &Catalogue,
    new: &NewOrder,
    lines: &[(usize, Line)],
    locked_vouchers: &[voucher::Model],
    o: &order::Model,
    now: DateTime<Utc>,
) -> Result<Result<(), Value>, DbErr> {
    let carts = take_carts(txn, ctx.event.id, &new.consume_carts).await?;
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
    let mut quota_ids: Vec<i64> = Vec::new();
    for (_, l) in lines {
        quota_ids.extend(catalogue.quotas_of(&l.product));
        if let Some(vi) = l.voucher {
            quota_ids.extend(vouchers::blocked_quotas(&locked_vouchers[vi], catalogue));
        }
    }
    for (p, _) in &cart_products {
        quota_ids.extend(catalogue.quotas_of(p));
    }
    quota_ids.sort_unstable();
    quota_ids.dedup();
    let mut redemptions: BTreeMap<usize, i32> = BTreeMap::new();
    for (_, l) in lines {
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
            vouchers::redeem(txn, &locked_vouchers[vi], catalogue, n).await?;
        }
        let availability = availability::of_quotas(txn, &quotas).await?;
        (quotas, availability)
    };
    let mut left: HashMap<i64, Option<i64>> = HashMap::new();
    for q in &quotas {
        let a = availability[&q.id];
        left.insert(
            q.id,
            if q.closed {
                Some(0)
            } else {
                a.available_number
            },
        );
    }
    let names: HashMap<i64, &str> = quotas.iter().map(|q| (q.id, q.name.as_str())).collect();
    let mut errors = PositionErrors::new(new.positions.len());
    for (i, l) in lines {
        if l.voucher
            .is_some_and(|vi| locked_vouchers[vi].allow_ignore_quota)
        {
            continue;
        }
        let qs = catalogue.quotas_of(&l.product);
        match qs
            .iter()
            .find(|q| left.get(q).copied().flatten().is_some_and(|n| n < 1))
        {
            Some(short) => errors.add(
                *i,
                "item",
                format!(
                    "There is not enough quota available on quota \"{}\" to perform the operation.",
                    names.get(short).copied().unwrap_or_default()
                ),
            ),
            None => {
                for q in qs {
                    if let Some(Some(n)) = left.get_mut(&q) {
                        *n -= 1;
                    }
                }
            }
        }
    }
    if errors.any() {
        return Ok(Err(errors.into_body()));
    }
    let (kind, until) = if o.status == "p" {
        (HoldKind::Paid, None)
    } else {
        (HoldKind::Pending, super::pending_until(o))
    };
    let all: Vec<Product> = lines.iter().map(|(_, l)| l.product).collect();
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
