//! Refunds, as pretix: money given back through a payment's provider
//! ([`refund_payment`]), or a refund recorded as made elsewhere ([`create`]), then moved
//! through its states ([`transition`]). Each is written under the order's lock, with the
//! payment's state, the order's cancellation and a gift card's credit in the same
//! transaction; a payment never gives back more than was paid on it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, Set,
};
use serde_json::{Value, json};

use super::lifecycle::{Locked, Seller, Told, give_back_and_cancel, open, refused};
pub use super::read_model::Refund;
use super::{LifecycleError, Order};
use crate::db::entities::{event, order_payment, order_refund};
use crate::domain::extensions::OrderEvent;
use crate::domain::extensions::payments::PaymentProvider;
use crate::domain::giftcards::{self, TransactError, Visibility};
use crate::domain::invoices::when::Step as InvoiceStep;

/// States a refund can be in.
pub const STATES: [&str; 6] = [
    "created", "transit", "done", "canceled", "failed", "external",
];

/// Who started a refund.
pub const SOURCES: [&str; 3] = ["admin", "buyer", "external"];

/// States whose amount counts as given back (or on its way).
pub(super) const GIVING_BACK: [&str; 3] = ["created", "transit", "done"];

/// A refund to record.
#[derive(Debug, Clone)]
pub struct NewRefund {
    /// Its state: `created`, `transit`, `done` or `external`.
    pub state: String,
    /// Who started it.
    pub source: String,
    /// Amount in cents.
    pub amount_cents: i64,
    /// The payment it gives back, by number.
    pub payment: Option<i32>,
    /// The provider it went through; `giftcard` credits `info.gift_card`.
    pub provider: String,
    /// When it was done.
    pub execution_date: Option<DateTime<Utc>>,
    /// Internal comment.
    pub comment: String,
    /// Provider details.
    pub info: Value,
    /// Cancel the order too.
    pub mark_canceled: bool,
}

/// What a refund's state may change to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `created` or `transit` to `done`.
    Done,
    /// An `external` refund acknowledged (`done`), optionally canceling the order.
    Process {
        /// Cancel the order too.
        mark_canceled: bool,
    },
    /// `created`, `transit` or `external` to `canceled`.
    Cancel,
}

/// Why a refund was refused: a field error or a message.
fn field<T>(name: &str, message: &str) -> Result<T, LifecycleError> {
    Err(LifecycleError::Invalid(json!({ name: [message] })))
}

/// The refunds of orders, by order ID and number.
pub async fn of_orders(db: &impl ConnectionTrait, order_ids: &[i64]) -> Result<Vec<Refund>, DbErr> {
    if order_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = order_refund::Entity::find()
        .filter(order_refund::Column::OrderId.is_in(order_ids.iter().copied()))
        .order_by_asc(order_refund::Column::OrderId)
        .order_by_asc(order_refund::Column::LocalId)
        .all(db)
        .await?;
    with_payment_numbers(db, rows).await
}

async fn with_payment_numbers(
    db: &impl ConnectionTrait,
    rows: Vec<order_refund::Model>,
) -> Result<Vec<Refund>, DbErr> {
    let ids: Vec<i64> = rows.iter().filter_map(|r| r.payment_id).collect();
    let payments = if ids.is_empty() {
        Vec::new()
    } else {
        order_payment::Entity::find()
            .filter(order_payment::Column::Id.is_in(ids))
            .all(db)
            .await?
    };
    Ok(rows
        .into_iter()
        .map(|row| Refund {
            payment: row
                .payment_id
                .and_then(|id| payments.iter().find(|p| p.id == id))
                .map(|p| p.local_id),
            row,
        })
        .collect())
}

/// How much of a payment can still be given back.
async fn refundable(
    txn: &impl ConnectionTrait,
    payment: &order_payment::Model,
) -> Result<i64, DbErr> {
    let given: i64 = order_refund::Entity::find()
        .filter(order_refund::Column::PaymentId.eq(payment.id))
        .filter(order_refund::Column::State.is_in(GIVING_BACK))
        .all(txn)
        .await?
        .iter()
        .map(|r| r.amount_cents)
        .sum();
    Ok(payment.amount_cents - given)
}

/// The order's payment `local_id`, read in its transaction.
pub(super) async fn payment_in(
    l: &Locked<'_>,
    local_id: i32,
) -> Result<Option<order_payment::Model>, DbErr> {
    order_payment::Entity::find()
        .filter(order_payment::Column::OrderId.eq(l.order.id))
        .filter(order_payment::Column::LocalId.eq(local_id))
        .one(&l.txn)
        .await
}

/// Gives back `amount_cents` (all that is left when `None`) of a confirmed payment through
/// its provider, as pretix: the refund is written `created` first (its amount counts as
/// given back from then on, so refunds asked at once never give back more than was paid),
/// the provider is asked outside any transaction (its service may take seconds, and on
/// SQLite a transaction holds every writer), and the refund becomes `done`, or `failed`
/// with the provider's word as an external error. With `mark_canceled` the order is
/// canceled with the refund.
pub async fn refund_payment(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    payment_local_id: i32,
    amount_cents: Option<i64>,
    mark_canceled: bool,
) -> Result<(Order, Refund), LifecycleError> {
    let asked = Asked {
        payment_local_id,
        amount_cents,
        source: "admin",
    };
    refund_through_provider(seller, ev, code, asked, mark_canceled).await
}

/// A refund through a payment's provider, as asked: of which payment, how much (all that
/// is left when `None`), started by whom (one of [`SOURCES`]).
pub(super) struct Asked {
    /// The payment's number within the order.
    pub(super) payment_local_id: i32,
    /// How much, in cents; all that is left when `None`.
    pub(super) amount_cents: Option<i64>,
    /// Who started the refund.
    pub(super) source: &'static str,
}

/// [`refund_payment`], started by `asked.source`.
pub(super) async fn refund_through_provider(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    asked: Asked,
    mark_canceled: bool,
) -> Result<(Order, Refund), LifecycleError> {
    let (provider, (ctx, record), refund) = start_refund(seller, ev, code, &asked).await?;
    let reference = format!(
        "{}-{}-{}-R{}",
        seller.organizer, ev.slug, code, refund.local_id
    );
    let answer = provider
        .refund(&ctx, &record, refund.amount_cents, &reference)
        .await;
    let l = open(seller, ev, code).await?;
    let mut row = order_refund::Entity::find_by_id(refund.id)
        .one(&l.txn)
        .await?
        .ok_or(LifecycleError::NotFound)?
        .into_active_model();
    let failed = answer.as_ref().err().cloned();
    match answer {
        Ok(details) => {
            row.state = Set("done".into());
            row.details = Set(details);
            row.execution_date = Set(Some(crate::values::now()));
        }
        Err(_) => row.state = Set("failed".into()),
    }
    let refund = row.update(&l.txn).await?;
    if let Some(why) = failed {
        l.finish(None).await?;
        return refused(&format!("External error: {why}"));
    }
    let payment = order_payment::Entity::find_by_id(refund.payment_id.unwrap_or_default())
        .one(&l.txn)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    settle_payment(&l, &payment).await?;
    finish(l, refund, mark_canceled).await
}

/// The first half of [`refund_payment`], under the order's lock: checks the payment and the
/// amount, and writes the refund `created`; gives the provider to ask and the refund.
async fn start_refund(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    asked: &Asked,
) -> Result<(Arc<dyn PaymentProvider>, Told, order_refund::Model), LifecycleError> {
    let l = open(seller, ev, code).await?;
    let payment = payment_in(&l, asked.payment_local_id)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    if payment.state != "confirmed" {
        return refused("Only confirmed payments can be refunded.");
    }
    let left = refundable(&l.txn, &payment).await?;
    let amount = asked.amount_cents.unwrap_or(left);
    if amount <= 0 || amount > left {
        return field(
            "amount",
            &format!(
                "Invalid refund amount, only {} are available to refund.",
                crate::values::Money(left.max(0)).to_decimal_string()
            ),
        );
    }
    let Some((provider, told)) = seller.provider_of(&l.txn, ev, &l.order, &payment).await? else {
        return refused("The payment method of this payment is not available any more.");
    };
    if !provider.can_refund() {
        return refused("This payment method cannot refund payments.");
    }
    let refund = insert(
        &l,
        order_refund::ActiveModel {
            state: Set("created".into()),
            source: Set(asked.source.into()),
            amount_cents: Set(amount),
            payment_id: Set(Some(payment.id)),
            provider: Set(payment.provider.clone()),
            details: Set(json!({})),
            ..Default::default()
        },
    )
    .await?;
    l.finish(None).await?;
    Ok((provider, told, refund))
}

/// Records a refund made elsewhere (or on its way). A `giftcard` refund that is `done`
/// credits the card named in `info.gift_card` through its ledger.
pub async fn create(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    new: NewRefund,
) -> Result<(Order, Refund), LifecycleError> {
    let l = open(seller, ev, code).await?;
    if !["created", "transit", "done", "external"].contains(&new.state.as_str()) {
        return field(
            "state",
            "Refunds can only be created in the states created, transit, done and external.",
        );
    }
    if new.amount_cents <= 0 {
        return field("amount", "The amount must be positive.");
    }
    let payment = match new.payment {
        Some(n) => match payment_in(&l, n).await? {
            Some(p) => Some(p),
            None => return field("payment", "No payment of this number in the order."),
        },
        None => None,
    };
    if let Some(p) = &payment
        && new.state != "external"
        && new.amount_cents > refundable(&l.txn, p).await?
    {
        return field(
            "amount",
            "The amount is more than was paid on this payment.",
        );
    }
    let now = crate::values::now();
    let done = new.state == "done";
    if new.provider == "giftcard" && done {
        credit_card(&l, &new.info, new.amount_cents, now).await?;
    }
    let refund = insert(
        &l,
        order_refund::ActiveModel {
            state: Set(new.state),
            source: Set(new.source),
            amount_cents: Set(new.amount_cents),
            payment_id: Set(payment.as_ref().map(|p| p.id)),
            provider: Set(new.provider),
            execution_date: Set(new.execution_date.or(done.then_some(now))),
            comment: Set(new.comment),
            details: Set(new.info),
            ..Default::default()
        },
    )
    .await?;
    if let Some(p) = &payment {
        settle_payment(&l, p).await?;
    }
    finish(l, refund, new.mark_canceled).await
}

/// Moves a refund on: see [`Step`]; anything else is 400, as pretix words it.
pub async fn transition(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    local_id: i32,
    step: Step,
) -> Result<(Order, Refund), LifecycleError> {
    let l = open(seller, ev, code).await?;
    let current = order_refund::Entity::find()
        .filter(order_refund::Column::OrderId.eq(l.order.id))
        .filter(order_refund::Column::LocalId.eq(local_id))
        .one(&l.txn)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    let state = current.state.as_str();
    let (to, cancel_order) = match step {
        Step::Done if matches!(state, "created" | "transit") => ("done", false),
        Step::Done => {
            return refused(
                "You cannot mark a refund as done that is not in created or transit state.",
            );
        }
        Step::Process { mark_canceled } if state == "external" => ("done", mark_canceled),
        Step::Process { .. } => return refused("You can only process external refunds."),
        Step::Cancel if matches!(state, "created" | "transit" | "external") => ("canceled", false),
        Step::Cancel => {
            return refused("You can only cancel refunds in created, transit or external state.");
        }
    };
    let now = crate::values::now();
    if to == "done" && current.provider == "giftcard" {
        credit_card(&l, &current.details, current.amount_cents, now).await?;
    }
    let payment_id = current.payment_id;
    let mut row = current.into_active_model();
    row.state = Set(to.into());
    if to == "done" {
        row.execution_date = Set(Some(now));
    }
    let saved = row.update(&l.txn).await?;
    if let Some(id) = payment_id
        && let Some(p) = order_payment::Entity::find_by_id(id).one(&l.txn).await?
    {
        settle_payment(&l, &p).await?;
    }
    finish(l, saved, cancel_order).await
}

/// Stores a refund under the order's next number.
pub(super) async fn insert(
    l: &Locked<'_>,
    mut row: order_refund::ActiveModel,
) -> Result<order_refund::Model, DbErr> {
    let next = order_refund::Entity::find()
        .filter(order_refund::Column::OrderId.eq(l.order.id))
        .order_by_desc(order_refund::Column::LocalId)
        .one(&l.txn)
        .await?
        .map_or(1, |r| r.local_id + 1);
    row.id = NotSet;
    row.order_id = Set(l.order.id);
    row.local_id = Set(next);
    row.created = Set(crate::values::now());
    if row.comment.is_not_set() {
        row.comment = Set(String::new());
    }
    row.insert(&l.txn).await
}

/// A payment given back in full is `refunded`; one with something left is `confirmed`.
pub(super) async fn settle_payment(l: &Locked<'_>, p: &order_payment::Model) -> Result<(), DbErr> {
    if !matches!(p.state.as_str(), "confirmed" | "refunded") {
        return Ok(());
    }
    let state = if refundable(&l.txn, p).await? <= 0 {
        "refunded"
    } else {
        "confirmed"
    };
    if p.state != state {
        let mut row = p.clone().into_active_model();
        row.state = Set(state.into());
        row.update(&l.txn).await?;
    }
    Ok(())
}

/// Books a refund on the gift card `info.gift_card` (of the organizer or one it accepts).
async fn credit_card(
    l: &Locked<'_>,
    info: &Value,
    amount_cents: i64,
    now: DateTime<Utc>,
) -> Result<(), LifecycleError> {
    let Some(card) = info.get("gift_card").and_then(Value::as_i64) else {
        return field(
            "info",
            "A refund to a gift card names it: {\"gift_card\": <id>}.",
        );
    };
    let vis = Visibility {
        organizer_id: l.event.organizer_id,
        include_accepted: true,
    };
    let text = Some(format!("Refund of order {}", l.order.code));
    match giftcards::transact_in(&l.txn, vis, card, amount_cents, text, now).await {
        Ok(_) => Ok(()),
        Err(TransactError::NotFound) => field("info", "Unknown gift card."),
        Err(TransactError::InsufficientCredit) => refused("The gift card cannot take this amount."),
        Err(TransactError::Db(e)) => Err(e.into()),
    }
}

/// Cancels the order when asked, commits, and answers the order with the refund.
async fn finish(
    mut l: Locked<'_>,
    refund: order_refund::Model,
    cancel_order: bool,
) -> Result<(Order, Refund), LifecycleError> {
    let canceled = cancel_order && l.order.status != "c";
    if canceled {
        give_back_and_cancel(&mut l).await?;
    }
    let action = match refund.state.as_str() {
        "done" => "pretix.event.order.refund.done",
        "canceled" => "pretix.event.order.refund.canceled",
        _ => "pretix.event.order.refund.created",
    };
    l.notify(action, serde_json::json!({"refund": refund.local_id}))
        .await?;
    if canceled {
        l.notify("pretix.event.order.canceled", serde_json::json!({}))
            .await?;
        l.invoices(None, InvoiceStep::Canceled).await?;
    }
    let refund = with_payment_numbers(&l.txn, vec![refund])
        .await?
        .pop()
        .ok_or(LifecycleError::NotFound)?;
    let order = l.finish(canceled.then_some(OrderEvent::Canceled)).await?;
    Ok((order, refund))
}

/// Records the refunds a payment's provider says it made (a notice from its service) that
/// are not recorded yet, by their reference (`details.id` of the recorded ones, as
/// [`refund_payment`] keeps the provider's answer): `external`, as pretix records money
/// given back outside it, for the organizer to process. Gives how many were new.
pub(super) async fn record_provider_refunds(
    l: &mut Locked<'_>,
    payment: &order_payment::Model,
    refunds: Vec<crate::domain::extensions::payments::ProviderRefund>,
) -> Result<usize, LifecycleError> {
    let known = order_refund::Entity::find()
        .filter(order_refund::Column::PaymentId.eq(payment.id))
        .all(&l.txn)
        .await?;
    let mut new = 0;
    for r in refunds {
        if r.amount_cents <= 0
            || known
                .iter()
                .any(|k| k.details.get("id").and_then(Value::as_str) == Some(&r.reference))
        {
            continue;
        }
        let mut details = r.details;
        if let Some(d) = details.as_object_mut() {
            d.insert("id".into(), r.reference.into());
        }
        let refund = insert(
            &*l,
            order_refund::ActiveModel {
                state: Set("external".into()),
                source: Set("external".into()),
                amount_cents: Set(r.amount_cents),
                payment_id: Set(Some(payment.id)),
                provider: Set(payment.provider.clone()),
                execution_date: Set(Some(crate::values::now())),
                details: Set(details),
                ..Default::default()
            },
        )
        .await?;
        l.notify(
            "pretix.event.order.refund.created.externally",
            json!({"refund": refund.local_id}),
        )
        .await?;
        new += 1;
    }
    Ok(new)
}
