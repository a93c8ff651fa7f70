//! Paying through a provider's own service (a card processor): the buyer sends the
//! service's payment page, the provider talks to its service, and the step it reports is
//! applied to the payment under the order's lock; later the service's notices say what
//! became of it.
//!
//! The provider's service is called outside any transaction: a call may take seconds, and on
//! SQLite a transaction holds every writer. One request at a time works on a payment,
//! through a claim that ends by itself (`payment_claims`), so that a buyer who sends the form
//! twice is charged once. Whatever arrives first, the page's answer or the notice, confirms
//! the payment; the other finds it confirmed. A notice is acted on once
//! (`payment_notices`, written with its effect).

use chrono::Duration;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, Set,
};

use super::LifecycleError;
use super::lifecycle::{Locked, Seller, open, pay};
use super::refunds::{payment_in, record_provider_refunds, settle_payment};
use crate::db::entities::{event, order, order_payment, payment_claim, payment_notice};
use crate::domain::extensions::OrderEvent;
use crate::domain::extensions::payments::{
    Kept, NoticeChange, PaymentAddress, PaymentForm, PaymentProvider, PaymentStep,
};

/// How long a request may work on a payment before another may: longer than a provider's
/// calls may take together.
const CLAIM_SECONDS: i64 = 300;

/// Where a payment stands after the buyer's form or a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Paying {
    /// Paid, now or before.
    Paid,
    /// Still open: the page shows the provider's form again, with `message` if any.
    Open(Option<String>),
    /// Another request is working on the payment: look again in a moment.
    Busy,
    /// No longer open (canceled, failed, refunded).
    Closed,
}

/// Whether a payment in this state can still be paid.
pub fn is_open(state: &str) -> bool {
    matches!(state, "created" | "pending")
}

/// The buyer sent the payment page of payment `local_id` of order `code`: its provider acts
/// on the form's fields, and the step it reports is applied.
pub async fn pay_on_page(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    local_id: i32,
    form: &[(String, String)],
) -> Result<Paying, LifecycleError> {
    let (_, p) = payment_of(seller.db, ev, code, local_id).await?;
    if !is_open(&p.state) {
        return Ok(closed(&p));
    }
    let paid = with_claim(seller.db, p.id, async {
        // Read again under the claim: the request before may have paid it meanwhile.
        let (o, p) = payment_of(seller.db, ev, code, local_id).await?;
        if !is_open(&p.state) {
            return Ok(closed(&p));
        }
        if let Some(why) = unpayable(&o) {
            return Err(LifecycleError::Refused(why.into()));
        }
        let Some((provider, (ctx, record))) = seller.provider_of(seller.db, ev, &o, &p).await?
        else {
            return Err(LifecycleError::Refused(
                "This payment method is not available any more.".into(),
            ));
        };
        match provider.pay(&ctx, &record, form).await {
            // Without a notice, a step is always applied.
            Ok(step) => Ok(apply(seller, ev, code, local_id, step, None)
                .await?
                .unwrap_or(Paying::Busy)),
            Err(message) => Ok(Paying::Open(Some(message))),
        }
    })
    .await?;
    Ok(paid.unwrap_or(Paying::Busy))
}

/// Why the buyer cannot pay the order now (before any money is taken), if so.
fn unpayable(o: &order::Model) -> Option<&'static str> {
    match o.status.as_str() {
        "c" => Some("The order has been canceled."),
        _ if o.require_approval => Some("The order has not been approved yet."),
        _ => None,
    }
}

/// What the payment page shows to pay an open payment: its provider's form, if it brings
/// one.
pub async fn form_of(
    seller: Seller<'_>,
    ev: &event::Model,
    o: &order::Model,
    p: &order_payment::Model,
) -> Result<Option<PaymentForm>, DbErr> {
    if !is_open(&p.state) || unpayable(o).is_some() {
        return Ok(None);
    }
    Ok(seller
        .provider_of(seller.db, ev, o, p)
        .await?
        .and_then(|(provider, (ctx, record))| provider.payment_form(&ctx, &record)))
}

/// What a provider's notice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Noticed {
    /// Acted on; where the payment stands now.
    Applied(Paying),
    /// Acted on before: nothing changed.
    Repeated,
}

/// Takes a notice from `provider`'s service about the payment at `address` in `ev`: the
/// provider checks it (its signature) with the event's settings, and what it says is
/// applied once. Unknown payments, payments of another provider and notices the provider
/// refuses are [`LifecycleError::Refused`], and change nothing.
pub async fn take_notice(
    seller: Seller<'_>,
    ev: &event::Model,
    provider: &dyn PaymentProvider,
    address: &PaymentAddress,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<Noticed, LifecycleError> {
    let unknown = || LifecycleError::Refused("Unknown payment.".into());
    let (o, p) = payment_of(seller.db, ev, &address.order_code, address.local_id)
        .await
        .map_err(|e| match e {
            LifecycleError::NotFound => unknown(),
            e => e,
        })?;
    if p.provider != provider.identifier() {
        return Err(unknown());
    }
    let Some((offered, (ctx, record))) = seller.provider_of(seller.db, ev, &o, &p).await? else {
        return Err(unknown());
    };
    let notice = offered
        .read_notice(&ctx, &record, headers, body)
        .await
        .map_err(LifecycleError::Refused)?;
    let seen = (provider.identifier(), notice.id.as_str());
    match notice.change {
        NoticeChange::Nothing => Ok(Noticed::Applied(Paying::Open(None))),
        NoticeChange::Step(step) => {
            let applied = apply(
                seller,
                ev,
                &address.order_code,
                address.local_id,
                step,
                Some(seen),
            )
            .await?;
            Ok(applied.map_or(Noticed::Repeated, Noticed::Applied))
        }
        NoticeChange::Arrived(kept, amount) if is_open(&p.state) && amount == p.amount_cents => {
            let step = PaymentStep::Paid(kept);
            let applied = apply(seller, ev, &o.code, p.local_id, step, Some(seen)).await?;
            Ok(applied.map_or(Noticed::Repeated, Noticed::Applied))
        }
        NoticeChange::Arrived(kept, amount) => {
            let mut l = open(seller, ev, &address.order_code).await?;
            if !first_notice(&l, p.id, seen).await? {
                return Ok(Noticed::Repeated);
            }
            let local_id = super::lifecycle::next_local_id(&l.txn, l.order.id).await?;
            let row = order_payment::ActiveModel {
                state: Set("created".into()),
                amount_cents: Set(amount),
                provider: Set(p.provider.clone()),
                payment_date: Set(None),
                details: Set(serde_json::json!({
                    "provider": kept.details,
                    "provider_state": kept.state,
                })),
                ..Default::default()
            };
            let extra = insert_payment(&l, local_id, row).await?;
            let paying = take_money(&mut l, extra, true).await?;
            l.finish(paying.paid_order()).await?;
            Ok(Noticed::Applied(paying.shown()))
        }
        NoticeChange::Refunded(refunds) => {
            let mut l = open(seller, ev, &address.order_code).await?;
            if !first_notice(&l, p.id, seen).await? {
                return Ok(Noticed::Repeated);
            }
            let p = reread(&l, p.id).await?;
            if record_provider_refunds(&mut l, &p, refunds).await? > 0 {
                settle_payment(&l, &p).await?;
            }
            let now = reread(&l, p.id).await?;
            l.finish(None).await?;
            Ok(Noticed::Applied(closed(&now)))
        }
    }
}

/// Applies a provider's step to a payment under the order's lock; with `notice`, only if
/// that notice was not acted on before (`None` then).
async fn apply(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    local_id: i32,
    step: PaymentStep,
    notice: Option<(&str, &str)>,
) -> Result<Option<Paying>, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let p = payment_in(&l, local_id)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    if let Some(seen) = notice
        && !first_notice(&l, p.id, seen).await?
    {
        return Ok(None);
    }
    let (kept, paying, pending) = match step {
        PaymentStep::Paid(kept) => (kept, Paying::Paid, false),
        PaymentStep::Pending(kept, message) => (kept, Paying::Open(Some(message)), true),
        PaymentStep::Action(kept) => (kept, Paying::Open(None), false),
        PaymentStep::Declined(kept, message) => (kept, Paying::Open(Some(message)), false),
    };
    // Money that arrives for a canceled or failed payment still pays, as in pretix; other
    // news of a closed payment changes nothing of it.
    let open_before = is_open(&p.state)
        || paying == Paying::Paid && matches!(p.state.as_str(), "canceled" | "failed");
    if !open_before {
        l.finish(None).await?;
        return Ok(Some(closed(&p)));
    }
    let p = keep(&l, p, kept, pending).await?;
    if paying != Paying::Paid {
        l.finish(None).await?;
        return Ok(Some(paying));
    }
    let paying = take_money(&mut l, p, true).await?;
    l.finish(paying.paid_order()).await?;
    Ok(Some(paying.shown()))
}

/// What became of money that arrived.
enum Taken {
    /// The payment is confirmed; the order was paid before.
    Confirmed,
    /// The payment is confirmed and paid the order.
    PaidOrder,
    /// The order cannot be paid (canceled, sold out since): the payment waits as `pending`
    /// for the organizer, who refunds or reactivates; why.
    Waiting(String),
}

impl Taken {
    /// The order event to tell of.
    fn paid_order(&self) -> Option<OrderEvent> {
        matches!(self, Taken::PaidOrder).then_some(OrderEvent::Paid)
    }

    /// What the payment page says.
    fn shown(self) -> Paying {
        match self {
            Taken::Waiting(why) => Paying::Open(Some(format!(
                "Your payment was received, but the order could not be marked paid: {why} \
                 The organizer will be in touch."
            ))),
            _ => Paying::Paid,
        }
    }
}

/// Confirms payment `p`, whose money arrived, paying the order with it where it can, in the
/// order's transaction (the buyer is told when `notify`).
async fn take_money(
    l: &mut Locked<'_>,
    p: order_payment::Model,
    notify: bool,
) -> Result<Taken, LifecycleError> {
    if l.order.status == "p" {
        l.confirm(p, crate::values::now()).await?;
        return Ok(Taken::Confirmed);
    }
    let id = p.id;
    match pay(l, Some(p), notify).await {
        Ok(()) => Ok(Taken::PaidOrder),
        // `pay` refuses before it writes anything.
        Err(LifecycleError::Refused(why)) => {
            let mut row = reread(l, id).await?.into_active_model();
            row.state = Set("pending".into());
            row.update(&l.txn).await?;
            Ok(Taken::Waiting(why))
        }
        Err(e) => Err(e),
    }
}

/// Stores a new payment of the order under number `local_id`, made now, with the rest of
/// `row`.
async fn insert_payment(
    l: &Locked<'_>,
    local_id: i32,
    mut row: order_payment::ActiveModel,
) -> Result<order_payment::Model, DbErr> {
    row.id = sea_orm::ActiveValue::NotSet;
    row.order_id = Set(l.order.id);
    row.local_id = Set(local_id);
    row.created = Set(crate::values::now());
    row.insert(&l.txn).await
}

/// Writes what the provider kept into the payment (and marks it `pending` when asked).
async fn keep(
    l: &Locked<'_>,
    p: order_payment::Model,
    kept: Kept,
    pending: bool,
) -> Result<order_payment::Model, DbErr> {
    let mut details = p.details.clone();
    if let Some(d) = details.as_object_mut() {
        if !serde_json::Value::is_null(&kept.details) {
            d.insert("provider".into(), kept.details);
        }
        if !serde_json::Value::is_null(&kept.state) {
            d.insert("provider_state".into(), kept.state);
        }
    }
    let mut row = p.into_active_model();
    row.details = Set(details);
    if pending {
        row.state = Set("pending".into());
    }
    row.update(&l.txn).await
}

/// What the page says of a payment that is no longer open.
fn closed(p: &order_payment::Model) -> Paying {
    match p.state.as_str() {
        "confirmed" | "refunded" => Paying::Paid,
        _ => Paying::Closed,
    }
}

/// The order and its payment `local_id`.
async fn payment_of(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    code: &str,
    local_id: i32,
) -> Result<(order::Model, order_payment::Model), LifecycleError> {
    let o = order::Entity::find()
        .filter(order::Column::EventId.eq(ev.id))
        .filter(order::Column::Code.eq(code))
        .one(db)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    let p = order_payment::Entity::find()
        .filter(order_payment::Column::OrderId.eq(o.id))
        .filter(order_payment::Column::LocalId.eq(local_id))
        .one(db)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    Ok((o, p))
}

async fn reread(l: &Locked<'_>, id: i64) -> Result<order_payment::Model, LifecycleError> {
    order_payment::Entity::find_by_id(id)
        .one(&l.txn)
        .await?
        .ok_or(LifecycleError::NotFound)
}

/// Records the notice `(provider, id)` in the order's transaction; `false` when it was
/// recorded before.
async fn first_notice(l: &Locked<'_>, payment_id: i64, seen: (&str, &str)) -> Result<bool, DbErr> {
    let inserted = payment_notice::Entity::insert(payment_notice::ActiveModel {
        provider: Set(seen.0.to_owned()),
        notice_id: Set(seen.1.to_owned()),
        payment_id: Set(payment_id),
        received: Set(crate::values::now()),
    })
    .on_conflict(
        OnConflict::columns([
            payment_notice::Column::Provider,
            payment_notice::Column::NoticeId,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(&l.txn)
    .await?;
    Ok(inserted == 1)
}

/// Claims the payment for this request unless another request holds a claim that has not
/// ended; gives the claim's end, which only this request's release matches.
async fn claim(
    db: &impl ConnectionTrait,
    payment_id: i64,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbErr> {
    let now = crate::values::now();
    let until = now + Duration::seconds(CLAIM_SECONDS);
    let claimed = payment_claim::Entity::insert(payment_claim::ActiveModel {
        payment_id: Set(payment_id),
        until: Set(until),
    })
    .on_conflict(
        OnConflict::column(payment_claim::Column::PaymentId)
            .update_column(payment_claim::Column::Until)
            .action_and_where(
                Expr::col((payment_claim::Entity, payment_claim::Column::Until)).lt(now),
            )
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok((claimed == 1).then_some(until))
}

/// Ends this request's claim on the payment (not another's that took over an ended one).
async fn release(
    db: &impl ConnectionTrait,
    payment_id: i64,
    until: chrono::DateTime<chrono::Utc>,
) -> Result<(), DbErr> {
    payment_claim::Entity::delete_many()
        .filter(payment_claim::Column::PaymentId.eq(payment_id))
        .filter(payment_claim::Column::Until.eq(until))
        .exec(db)
        .await?;
    Ok(())
}

/// Runs `work` while this request holds the payment's claim; `None` (and `work` never
/// started) when another request holds it.
async fn with_claim<T>(
    db: &impl ConnectionTrait,
    payment_id: i64,
    work: impl Future<Output = Result<T, LifecycleError>>,
) -> Result<Option<T>, LifecycleError> {
    let Some(claimed) = claim(db, payment_id).await? else {
        return Ok(None);
    };
    let done = work.await;
    release(db, payment_id, claimed).await?;
    done.map(Some)
}

/// A payment recorded through the API (pretix's `POST payments/`).
#[derive(Debug, Clone)]
pub struct NewPayment {
    /// Its state; `confirmed` also marks the order paid, when it can be.
    pub state: String,
    /// Amount in cents.
    pub amount_cents: i64,
    /// When it was paid.
    pub payment_date: Option<chrono::DateTime<chrono::Utc>>,
    /// The provider's identifier.
    pub provider: String,
    /// Details, shown as the payment's `details`.
    pub info: serde_json::Value,
    /// Whether the buyer is told when it pays the order.
    pub notify: bool,
}

/// The states a payment can be in.
pub const STATES: [&str; 6] = [
    "created",
    "pending",
    "confirmed",
    "canceled",
    "failed",
    "refunded",
];

/// Records a payment of an order, as pretix's API does: in the state given, except that a
/// `confirmed` one is confirmed the way any payment is, paying the order; where the order
/// cannot be paid (its quota is gone), it stays `pending`, as in pretix. Gives the order and
/// the payment's number.
pub async fn add_payment(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    new: NewPayment,
) -> Result<(super::Order, i32), LifecycleError> {
    if !STATES.contains(&new.state.as_str()) {
        return Err(LifecycleError::Invalid(serde_json::json!({
            "state": [format!("\"{}\" is not a valid choice.", new.state)]
        })));
    }
    let mut l = open(seller, ev, code).await?;
    let local_id = super::lifecycle::next_local_id(&l.txn, l.order.id).await?;
    let confirm = new.state == "confirmed";
    let page = super::payment_page(
        seller.public_url,
        seller.organizer,
        &ev.slug,
        &l.order,
        local_id,
    );
    let row = order_payment::ActiveModel {
        state: Set(if confirm { "pending".into() } else { new.state }),
        amount_cents: Set(new.amount_cents),
        provider: Set(new.provider),
        payment_date: Set(new.payment_date),
        details: Set(serde_json::json!({"payment_url": page, "provider": new.info})),
        ..Default::default()
    };
    let p = insert_payment(&l, local_id, row).await?;
    let paid = match confirm {
        true => take_money(&mut l, p, new.notify).await?.paid_order(),
        false => None,
    };
    Ok((l.finish(paid).await?, local_id))
}

/// Cancels an open payment (pretix's `payments/{id}/cancel/`), its provider first (a card
/// payment's intent at Stripe, say), outside any transaction and while no buyer is paying
/// it (the payment's claim); a provider's refusal is an external error.
pub async fn cancel_payment(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    local_id: i32,
) -> Result<super::Order, LifecycleError> {
    let invalid = || LifecycleError::Refused("Invalid state of payment".into());
    let (_, p) = payment_of(seller.db, ev, code, local_id).await?;
    if !is_open(&p.state) {
        return Err(invalid());
    }
    let canceled = with_claim(seller.db, p.id, async {
        // Read again under the claim: a buyer's try may have kept a new intent meanwhile.
        let (o, p) = payment_of(seller.db, ev, code, local_id).await?;
        if !is_open(&p.state) {
            return Err(invalid());
        }
        if let Some((provider, (ctx, record))) = seller.provider_of(seller.db, ev, &o, &p).await? {
            provider
                .cancel_payment(&ctx, &record)
                .await
                .map_err(|e| LifecycleError::Refused(format!("External error: {e}")))?;
        }
        let l = open(seller, ev, code).await?;
        let p = payment_in(&l, local_id)
            .await?
            .ok_or(LifecycleError::NotFound)?;
        if !is_open(&p.state) {
            return Err(invalid());
        }
        let mut row = p.into_active_model();
        row.state = Set("canceled".into());
        row.update(&l.txn).await?;
        l.finish(None).await
    })
    .await?;
    canceled.ok_or_else(|| {
        LifecycleError::Refused("The payment is being paid just now; try again in a moment.".into())
    })
}
