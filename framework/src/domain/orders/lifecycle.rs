//! What happens to an order after it was placed: payment, cancellation, a longer term.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, DatabaseTransaction, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use super::mails::{self, Storefront};
use super::place::payment_context;
use super::{Order, complete, demand, expired, hold_positions, lock, pending_until, product_of};
use crate::db::begin_write;
use crate::db::entities::{
    event, order, order_payment, order_position, order_refund, seat, voucher,
};
use crate::domain::availability::{self, HoldKind};
use crate::domain::cache::Cache;
use crate::domain::extensions::payments::{
    FreeOrder, PaymentContext, PaymentProvider, PaymentRecord,
};
use crate::domain::extensions::{Extensions, Hook, OrderEvent};
use crate::domain::invoices::build::Issuing;
use crate::domain::invoices::when::{Step, mailed};
use crate::domain::mail;
use crate::domain::sale::{Catalogue, Product};
use crate::domain::secrets::{self, Generator, TicketFacts};
use crate::domain::settings::SettingsRegistry;
use crate::domain::tax_rules::reverse_charge::Buyer;
use crate::domain::{settings, vouchers, webhooks};
use sea_orm::DatabaseConnection;

/// Why a change of an order was refused.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// No such order (or payment) in the event.
    #[error("no such order (or payment) in the event")]
    NotFound,
    /// Not possible in the order's state: a message for the client (400).
    #[error("not possible in the order's state")]
    Refused(String),
    /// Invalid input: field errors for the client (400).
    #[error("invalid input")]
    Invalid(serde_json::Value),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why paying a paid order is refused.
pub const ALREADY_PAID: &str = "The order has already been paid.";

pub(super) fn refused<T>(message: &str) -> Result<T, LifecycleError> {
    Err(LifecycleError::Refused(message.to_owned()))
}

/// Who acts on an organizer's orders: the server's parts the rules need (database, plugins,
/// settings, cache, public URL) and the organizer, whose storefront the customer knows.
#[derive(Clone, Copy)]
pub struct Seller<'a> {
    /// The connection pool.
    pub db: &'a DatabaseConnection,
    /// The registered plugins (payment providers, order hooks).
    pub plugins: &'a dyn Extensions,
    /// Every declared setting.
    pub settings: &'a SettingsRegistry,
    /// The process cache.
    pub cache: &'a Cache,
    /// The public base URL, without trailing slash.
    pub public_url: &'a str,
    /// The organizer's slug.
    pub organizer: &'a str,
}

impl Seller<'_> {
    pub(super) fn shop(&self) -> Storefront<'_> {
        Storefront {
            public_url: self.public_url,
            organizer: self.organizer,
        }
    }

    /// The provider of a stored payment, and what it is told of it; `None` when the event
    /// no longer offers the provider (its plugin was switched off), which then has no say.
    pub(super) async fn provider_of(
        &self,
        txn: &impl sea_orm::ConnectionTrait,
        ev: &event::Model,
        o: &order::Model,
        p: &order_payment::Model,
    ) -> Result<Option<(std::sync::Arc<dyn PaymentProvider>, Told)>, DbErr> {
        let Some(provider) = self.plugins.payment_provider(ev, &p.provider) else {
            return Ok(None);
        };
        let cache = self.cache.current().await;
        let values = settings::of_event(txn, self.settings, cache, ev).await?;
        let ctx = payment_context(&self.shop(), ev, &values, o, p.local_id);
        let record = PaymentRecord {
            local_id: p.local_id,
            amount_cents: p.amount_cents,
            details: p.details.get("provider").cloned().unwrap_or_default(),
            state: p.details.get("provider_state").cloned().unwrap_or_default(),
        };
        Ok(Some((provider, (ctx, record))))
    }
}

/// What a provider is told of a payment.
pub(super) type Told = (PaymentContext, PaymentRecord);

/// An order locked in a transaction, with its positions and the catalogue they are of.
pub(super) struct Locked<'a> {
    pub(super) seller: Seller<'a>,
    pub(super) event: &'a event::Model,
    pub(super) txn: crate::db::WriteTxn,
    pub(super) order: order::Model,
    pub(super) positions: Vec<order_position::Model>,
    pub(super) catalogue: Catalogue,
    /// Whether the webhooks were told of the change already ([`Locked::notify`]); if not,
    /// [`Locked::finish`] tells them what its order event means.
    told: bool,
}

/// Locks the order (404 when the event has none of this code) and reads its positions.
pub(super) async fn open<'a>(
    seller: Seller<'a>,
    ev: &'a event::Model,
    code: &str,
) -> Result<Locked<'a>, LifecycleError> {
    open_with(seller, ev, code, &[]).await
}

/// [`open`], with the catalogue also of the dates `more_subevents` (a change that moves
/// positions to other dates).
pub(super) async fn open_with<'a>(
    seller: Seller<'a>,
    ev: &'a event::Model,
    code: &str,
    more_subevents: &[i64],
) -> Result<Locked<'a>, LifecycleError> {
    let txn = begin_write(seller.db).await?;
    let order = lock(&txn, ev.id, code)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    let positions = order_position::Entity::find()
        .filter(order_position::Column::OrderId.eq(order.id))
        .filter(order_position::Column::Canceled.eq(false))
        .order_by_asc(order_position::Column::Positionid)
        .all(&txn)
        .await?;
    let mut subevents: Vec<i64> = positions.iter().filter_map(|p| p.subevent_id).collect();
    subevents.extend_from_slice(more_subevents);
    let catalogue = Catalogue::load(&txn, ev, &subevents).await?;
    Ok(Locked {
        seller,
        event: ev,
        txn,
        order,
        positions,
        catalogue,
        told: false,
    })
}

impl Locked<'_> {
    /// Issues and cancels the invoices a step of this order (or of `other`, an order split
    /// off it) calls for; gives the IDs of those a mail about the step carries.
    pub(super) async fn invoices(
        &self,
        other: Option<&order::Model>,
        step: Step,
    ) -> Result<Vec<i64>, DbErr> {
        let cache = self.seller.cache.current().await;
        let values = settings::of_event(&self.txn, self.seller.settings, cache, self.event).await?;
        let issuing = Issuing {
            txn: &self.txn,
            event: self.event,
            settings: &values,
            catalogue: &self.catalogue,
            now: crate::values::now(),
        };
        let made = issuing.after(other.unwrap_or(&self.order), step).await?;
        Ok(mailed(&values, made.iter().map(|i| i.id)))
    }

    /// The buyer of the order, as the tax rules see them.
    pub(super) fn buyer(&self) -> Option<Buyer> {
        Buyer::of_address(self.order.invoice_address.as_ref())
    }

    fn products(&self) -> Vec<Product> {
        self.positions.iter().map(product_of).collect()
    }

    async fn lock_quotas(
        &self,
        extra: &[i64],
    ) -> Result<Vec<crate::db::entities::quota::Model>, DbErr> {
        let mut ids: Vec<i64> = demand(&self.catalogue, &self.products())
            .into_keys()
            .collect();
        ids.extend_from_slice(extra);
        ids.sort_unstable();
        ids.dedup();
        availability::lock_quotas(&self.txn, &ids).await
    }

    /// The end of a payment term that starts `now`: the event's `payment_term_days`.
    pub(super) async fn new_term(
        &self,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, LifecycleError> {
        let settings = self.seller.settings;
        let values = settings::of_event(&self.txn, settings, None, self.event).await?;
        let days = values
            .get("payment_term_days")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(14);
        match super::place::payment_term_end(&self.event.timezone, days, now) {
            Some(end) => Ok(end),
            None => refused("The payment term of this event is too long."),
        }
    }

    /// Moves the payment term of a pending or expired order to `expires`. An expired order
    /// holds its quota again only if its products are still available, unless `force`.
    pub(super) async fn extend_to(
        &mut self,
        expires: DateTime<Utc>,
        force: bool,
    ) -> Result<(), LifecycleError> {
        let now = crate::values::now();
        if self.order.status != "n" {
            return refused("Only pending or expired orders can be extended.");
        }
        if expires <= now {
            return refused("The new expiry date must be in the future.");
        }
        let mut changed = self.order.clone();
        changed.expires = Some(expires);
        if expired(&self.order, now) {
            self.hold_again(HoldKind::Pending, pending_until(&changed), force)
                .await?;
        } else {
            self.move_hold(
                (HoldKind::Pending, pending_until(&self.order)),
                (HoldKind::Pending, pending_until(&changed)),
            )
            .await?;
        }
        let mut row = self.order.clone().into_active_model();
        row.expires = Set(Some(expires));
        row.last_modified = Set(Some(now));
        self.order = row.update(&self.txn).await?;
        Ok(())
    }

    /// Gives every ticket of the order a new secret. With signed secrets the old ones go to
    /// the revocation list, since scanners would otherwise still accept their signatures
    /// offline, unless they are there already (`old_revoked`: a cancellation put them there).
    pub(super) async fn new_secrets(&mut self, old_revoked: bool) -> Result<(), LifecycleError> {
        let (ev, now) = (self.event, crate::values::now());
        let cache = self.seller.cache.current().await;
        let values = settings::of_event(&self.txn, self.seller.settings, cache, ev).await?;
        let generator = Generator::of_settings(|k| values.get(k));
        let key = secrets::signing_key(&self.txn, generator, ev).await?;
        let mut fresh_positions = Vec::with_capacity(self.positions.len());
        for p in std::mem::take(&mut self.positions) {
            let fresh = secrets::generate(generator, &key, TicketFacts::of(&p));
            if !old_revoked && generator.uses_revocation_list() {
                secrets::revoke(&self.txn, ev.id, p.id, &p.secret, now).await?;
            }
            let mut row = p.into_active_model();
            row.secret = Set(fresh);
            fresh_positions.push(row.update(&self.txn).await?);
        }
        self.positions = fresh_positions;
        Ok(())
    }

    /// Holds the positions again as `kind` until `until`, checking that they fit, for an
    /// order whose term has passed and whose hold has lapsed.
    pub(super) async fn hold_again(
        &self,
        kind: HoldKind,
        until: Option<DateTime<Utc>>,
        force: bool,
    ) -> Result<(), LifecycleError> {
        let quotas = self.lock_quotas(&[]).await?;
        let wanted = demand(&self.catalogue, &self.products());
        if force {
            for (q, n) in wanted {
                availability::adjust(&self.txn, &[q], kind, until, n).await?;
            }
            return Ok(());
        }
        match availability::reserve(&self.txn, &quotas, &wanted, kind, until).await? {
            Ok(()) => Ok(()),
            Err(_) => refused("Some of the ordered products are no longer available."),
        }
    }

    /// Moves the positions' hold from one kind and expiry to another (nothing when they are
    /// the same), for an order whose hold has not lapsed.
    async fn move_hold(
        &self,
        from: (HoldKind, Option<DateTime<Utc>>),
        to: (HoldKind, Option<DateTime<Utc>>),
    ) -> Result<(), DbErr> {
        if from == to {
            return Ok(());
        }
        self.lock_quotas(&[]).await?;
        let (c, p) = (&self.catalogue, &self.positions);
        hold_positions(&self.txn, c, p, from.0, from.1, -1).await?;
        hold_positions(&self.txn, c, p, to.0, to.1, 1).await
    }

    /// Tells the organizer's webhooks of a change of the order (`extra` beside its code), in
    /// the order's transaction.
    pub(super) async fn notify(
        &mut self,
        action: &'static str,
        extra: serde_json::Value,
    ) -> Result<(), DbErr> {
        self.told = true;
        let notice = webhooks::Notice::order(self.event, &self.order.code, action, extra);
        webhooks::notify(&self.txn, &notice).await
    }

    /// The order's payments not yet confirmed, canceled or failed.
    pub(super) async fn open_payments(&self) -> Result<Vec<order_payment::Model>, DbErr> {
        order_payment::Entity::find()
            .filter(order_payment::Column::OrderId.eq(self.order.id))
            .filter(order_payment::Column::State.is_in(["created", "pending"]))
            .order_by_asc(order_payment::Column::LocalId)
            .all(&self.txn)
            .await
    }

    /// Cancels the order's open payments; their providers may refuse (400).
    pub(super) async fn cancel_open_payments(&self) -> Result<(), LifecycleError> {
        for p in self.open_payments().await? {
            if let Some((provider, (ctx, record))) = self
                .seller
                .provider_of(&self.txn, self.event, &self.order, &p)
                .await?
            {
                provider
                    .cancel_payment(&ctx, &record)
                    .await
                    .map_err(LifecycleError::Refused)?;
            }
            let mut row = p.into_active_model();
            row.state = Set("canceled".into());
            row.update(&self.txn).await?;
        }
        Ok(())
    }

    /// What was paid on the order and not refunded, in cents.
    pub(super) async fn covered(&self) -> Result<i64, DbErr> {
        let paid: i64 = order_payment::Entity::find()
            .filter(order_payment::Column::OrderId.eq(self.order.id))
            .filter(order_payment::Column::State.eq("confirmed"))
            .all(&self.txn)
            .await?
            .iter()
            .map(|p| p.amount_cents)
            .sum();
        let refunded: i64 = order_refund::Entity::find()
            .filter(order_refund::Column::OrderId.eq(self.order.id))
            .filter(order_refund::Column::State.eq("done"))
            .all(&self.txn)
            .await?
            .iter()
            .map(|r| r.amount_cents)
            .sum();
        Ok(paid - refunded)
    }

    /// Tells the plugins what happened, if anything they hear of, and the webhooks unless
    /// they were told already; commits.
    pub(super) async fn finish(
        mut self,
        what: Option<OrderEvent>,
    ) -> Result<Order, LifecycleError> {
        if let Some(what) = what
            && !self.told
        {
            for action in webhooks::order_actions(what, self.order.require_approval) {
                self.notify(action, json!({})).await?;
            }
        }
        let order = self.order.clone();
        let shown = complete(&self.txn, vec![order])
            .await?
            .pop()
            .ok_or(LifecycleError::NotFound)?;
        if let Some(what) = what {
            let hook = Hook {
                txn: &self.txn,
                event: self.event,
            };
            self.seller
                .plugins
                .order_changed(hook, what, &shown)
                .await?;
        }
        crate::db::commit(self.txn).await?;
        Ok(shown)
    }

    /// Asks the payment's provider to confirm it, then marks it confirmed.
    pub(super) async fn confirm(
        &self,
        p: order_payment::Model,
        now: DateTime<Utc>,
    ) -> Result<(), LifecycleError> {
        self.provider_confirms(&p).await?;
        mark_confirmed(&self.txn, p, now).await
    }

    /// Asks the payment's provider whether it may be confirmed (an `Err` refuses).
    async fn provider_confirms(&self, p: &order_payment::Model) -> Result<(), LifecycleError> {
        if let Some((provider, (ctx, record))) = self
            .seller
            .provider_of(&self.txn, self.event, &self.order, p)
            .await?
        {
            provider
                .confirm_payment(&ctx, &record)
                .await
                .map_err(LifecycleError::Refused)?;
        }
        Ok(())
    }
}

/// Marks a payment confirmed at `now`.
async fn mark_confirmed(
    txn: &DatabaseTransaction,
    p: order_payment::Model,
    now: DateTime<Utc>,
) -> Result<(), LifecycleError> {
    let mut row = p.into_active_model();
    row.state = Set("confirmed".into());
    row.payment_date = Set(Some(now));
    row.update(txn).await?;
    Ok(())
}

/// Marks a pending (or expired) order paid, confirming its open payment or adding a manual
/// one. An expired order is only paid if its products are still available. With `notify`,
/// the customer is told, with the tickets (call `Mailer::wake` once this returns).
pub async fn mark_paid(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    notify: bool,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    pay(&mut l, None, notify).await?;
    l.finish(Some(OrderEvent::Paid)).await
}

/// Confirms a payment of an order and marks the order paid (if it is not already), telling
/// the customer then with `notify` (call `Mailer::wake` once this returns).
pub async fn confirm_payment(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    local_id: i32,
    notify: bool,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let payment = order_payment::Entity::find()
        .filter(order_payment::Column::OrderId.eq(l.order.id))
        .filter(order_payment::Column::LocalId.eq(local_id))
        .one(&l.txn)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    if !matches!(payment.state.as_str(), "created" | "pending") {
        return refused("Only payments that are created or pending can be confirmed.");
    }
    if l.order.status == "p" {
        l.confirm(payment, crate::values::now()).await?;
        l.finish(None).await
    } else {
        pay(&mut l, Some(payment), notify).await?;
        l.finish(Some(OrderEvent::Paid)).await
    }
}

/// Money received outside the shop, such as a transfer found on a bank statement: pays the
/// order through the provider's open payment of this amount, or a new one, keeping `info`
/// in the payment's details; the provider's other open payments of the order are canceled.
/// The customer is told (the mailer finds the mail within seconds).
pub async fn receive_payment(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    provider: &str,
    amount_cents: i64,
    info: serde_json::Value,
) -> Result<Order, LifecycleError> {
    use order_payment::Column;
    let mut l = open(seller, ev, code).await?;
    let found = order_payment::Entity::find()
        .filter(Column::OrderId.eq(l.order.id))
        .filter(Column::Provider.eq(provider))
        .filter(Column::AmountCents.eq(amount_cents))
        .filter(Column::State.is_in(["created", "pending"]))
        .order_by_desc(Column::LocalId)
        .one(&l.txn)
        .await?;
    let now = crate::values::now();
    let mut row = match found {
        Some(p) => p.into_active_model(),
        None => order_payment::ActiveModel {
            id: NotSet,
            order_id: Set(l.order.id),
            local_id: Set(next_local_id(&l.txn, l.order.id).await?),
            state: Set("created".into()),
            amount_cents: Set(amount_cents),
            provider: Set(provider.to_owned()),
            created: Set(now),
            payment_date: Set(None),
            details: Set(json!({})),
        }
        .insert(&l.txn)
        .await?
        .into_active_model(),
    };
    let mut details = row.details.take().unwrap_or_else(|| json!({}));
    if let Some(d) = details.as_object_mut() {
        d.insert("info".into(), info);
    }
    row.details = Set(details);
    let payment = row.update(&l.txn).await?;
    let kept = payment.id;
    pay(&mut l, Some(payment), true).await?;
    order_payment::Entity::update_many()
        .col_expr(Column::State, sea_orm::sea_query::Expr::value("canceled"))
        .filter(Column::OrderId.eq(l.order.id))
        .filter(Column::Provider.eq(provider))
        .filter(Column::State.is_in(["created", "pending"]))
        .filter(Column::Id.ne(kept))
        .exec(&l.txn)
        .await?;
    l.finish(Some(OrderEvent::Paid)).await
}

/// The local ID of an order's next payment.
pub(super) async fn next_local_id(txn: &DatabaseTransaction, order_id: i64) -> Result<i32, DbErr> {
    Ok(order_payment::Entity::find()
        .filter(order_payment::Column::OrderId.eq(order_id))
        .order_by_desc(order_payment::Column::LocalId)
        .one(txn)
        .await?
        .map_or(1, |p| p.local_id + 1))
}

/// Marks the order paid through this payment (else its oldest open one, else a manual one),
/// holding its quota as paid; with `notify`, queues the mail that says so.
pub(super) async fn pay(
    l: &mut Locked<'_>,
    payment: Option<order_payment::Model>,
    notify: bool,
) -> Result<(), LifecycleError> {
    let now = crate::values::now();
    match l.order.status.as_str() {
        "p" => return refused(ALREADY_PAID),
        "c" => return refused("The order has been canceled."),
        _ if l.order.require_approval => return refused("The order has not been approved yet."),
        _ => {}
    }
    let payment = match payment {
        Some(p) => Some(p),
        None => {
            order_payment::Entity::find()
                .filter(order_payment::Column::OrderId.eq(l.order.id))
                .filter(order_payment::Column::State.is_in(["created", "pending"]))
                .order_by_asc(order_payment::Column::LocalId)
                .one(&l.txn)
                .await?
        }
    };
    // Every refusal comes before the first write: a caller may go on with the transaction.
    if let Some(p) = &payment {
        l.provider_confirms(p).await?;
    }
    if expired(&l.order, now) {
        l.hold_again(HoldKind::Paid, None, false).await?;
    } else {
        l.lock_quotas(&[]).await?;
        let positions = l.positions.clone();
        hold_positions(
            &l.txn,
            &l.catalogue,
            &positions,
            HoldKind::Pending,
            pending_until(&l.order),
            -1,
        )
        .await?;
        hold_positions(&l.txn, &l.catalogue, &positions, HoldKind::Paid, None, 1).await?;
    }
    match payment {
        Some(p) => mark_confirmed(&l.txn, p, now).await?,
        None => add_confirmed_payment(&l.txn, &l.order, now).await?,
    }
    let mut row = l.order.clone().into_active_model();
    row.status = Set("p".into());
    row.payment_date = Set(Some(now));
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    let invoices = l.invoices(None, Step::Paid).await?;
    if notify && let Some(m) = mails::paid(l.event, &l.order, &l.seller.shop()) {
        mail::queue(&l.txn, m.with_invoices(invoices)).await?;
    }
    Ok(())
}

/// Records a payment made outside the service: `manual`, or `free` for an order that costs
/// nothing, as pretix pays a free order it approves.
pub(super) async fn add_confirmed_payment(
    txn: &DatabaseTransaction,
    o: &order::Model,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let next = next_local_id(txn, o.id).await?;
    order_payment::ActiveModel {
        id: NotSet,
        order_id: Set(o.id),
        local_id: Set(next),
        state: Set("confirmed".into()),
        amount_cents: Set(o.total_cents),
        provider: Set(if o.total_cents == 0 {
            FreeOrder::IDENTIFIER
        } else {
            "manual"
        }
        .into()),
        created: Set(now),
        payment_date: Set(Some(now)),
        details: Set(json!({})),
    }
    .insert(txn)
    .await?;
    Ok(())
}

/// Cancels a pending, expired or paid order: its quota, seats and voucher redemptions are
/// given back, its open payments canceled (their providers may refuse). With `notify`, the
/// customer is told by e-mail (through the outbox: call `Mailer::wake` once this returns).
pub async fn cancel(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    notify: bool,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    if l.order.status == "c" {
        return refused("The order has already been canceled.");
    }
    give_back_and_cancel(&mut l).await?;
    let invoices = l.invoices(None, Step::Canceled).await?;
    if notify && let Some(m) = mails::canceled(ev, &l.order, &seller.shop()) {
        mail::queue(&l.txn, m.with_invoices(invoices)).await?;
    }
    l.finish(Some(OrderEvent::Canceled)).await
}

/// Gives back an order's quota, seats and voucher redemptions, cancels its open payments
/// (their providers may refuse), revokes its secrets and marks it canceled.
pub(super) async fn give_back_and_cancel(l: &mut Locked<'_>) -> Result<(), LifecycleError> {
    give_back(l).await?;
    let now = crate::values::now();
    let mut row = l.order.clone().into_active_model();
    row.status = Set("c".into());
    row.cancellation_date = Set(Some(now));
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    Ok(())
}

/// Gives back what an order's positions hold (quota, seats, voucher redemptions), cancels
/// its open payments (their providers may refuse) and revokes its tickets' secrets; the
/// order's row is the caller's to change.
pub(super) async fn give_back(l: &mut Locked<'_>) -> Result<(), LifecycleError> {
    let now = crate::values::now();
    let voucher_ids: Vec<i64> = l.positions.iter().filter_map(|p| p.voucher_id).collect();
    let used = lock_vouchers(&l.txn, &voucher_ids).await?;
    let blocked: Vec<i64> = used
        .iter()
        .flat_map(|v| vouchers::blocked_quotas(v, &l.catalogue))
        .collect();
    l.lock_quotas(&blocked).await?;
    let positions = l.positions.clone();
    let (kind, until) = if l.order.status == "p" {
        (HoldKind::Paid, None)
    } else {
        (HoldKind::Pending, pending_until(&l.order))
    };
    hold_positions(&l.txn, &l.catalogue, &positions, kind, until, -1).await?;
    for v in &used {
        let n = voucher_ids.iter().filter(|&&id| id == v.id).count() as i32;
        vouchers::redeem(&l.txn, v, &l.catalogue, -n).await?;
    }
    let seats: Vec<i64> = positions.iter().filter_map(|p| p.seat_id).collect();
    if !seats.is_empty() {
        seat::Entity::update_many()
            .col_expr(seat::Column::Sold, sea_orm::sea_query::Expr::value(false))
            .filter(seat::Column::Id.is_in(seats))
            .exec(&l.txn)
            .await?;
    }
    l.cancel_open_payments().await?;
    // Scanners that hold no order data learn of canceled tickets from the revocation list.
    for p in &positions {
        secrets::revoke(&l.txn, l.event.id, p.id, &p.secret, now).await?;
    }
    Ok(())
}

pub(super) async fn lock_vouchers(
    txn: &DatabaseTransaction,
    ids: &[i64],
) -> Result<Vec<voucher::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let codes: Vec<String> = voucher::Entity::find()
        .filter(voucher::Column::Id.is_in(ids.iter().copied()))
        .all(txn)
        .await?
        .into_iter()
        .map(|v| v.code)
        .collect();
    let event_id = voucher::Entity::find_by_id(ids[0])
        .one(txn)
        .await?
        .map_or(0, |v| v.event_id);
    vouchers::lock_by_codes(txn, event_id, &codes).await
}

/// Approves an order that waits for approval: its payment term starts now (the event's
/// `payment_term_days`) and a free order is paid at once. With `notify`, the customer is told
/// (through the outbox).
pub async fn approve(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    notify: bool,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    if !awaits_approval(&l.order) {
        return refused("This order is not pending approval.");
    }
    let now = crate::values::now();
    let expires = l.new_term(now).await?;
    let mut row = l.order.clone().into_active_model();
    row.require_approval = Set(false);
    row.expires = Set(Some(expires));
    row.last_modified = Set(Some(now));
    let approved = row.update(&l.txn).await?;
    l.move_hold(
        (HoldKind::Pending, pending_until(&l.order)),
        (HoldKind::Pending, pending_until(&approved)),
    )
    .await?;
    l.order = approved;
    l.notify("pretix.event.order.approved", json!({})).await?;
    let free = l.order.total_cents == 0;
    if free {
        pay(&mut l, None, false).await?;
        for action in webhooks::order_actions(OrderEvent::Paid, false) {
            l.notify(action, json!({})).await?;
        }
    }
    let invoices = l.invoices(None, Step::Approved).await?;
    if notify && let Some(m) = mails::approved(ev, &l.order, &seller.shop()) {
        mail::queue(&l.txn, m.with_invoices(invoices)).await?;
    }
    l.finish(free.then_some(OrderEvent::Paid)).await
}

/// Denies an order that waits for approval: it is canceled as [`cancel`] does, and with
/// `notify` the customer is told, with `comment` as the reason.
pub async fn deny(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    notify: bool,
    comment: &str,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    if !awaits_approval(&l.order) {
        return refused("This order is not pending approval.");
    }
    give_back_and_cancel(&mut l).await?;
    l.notify("pretix.event.order.denied", json!({})).await?;
    let invoices = l.invoices(None, Step::Ended).await?;
    if notify && let Some(m) = mails::denied(ev, &l.order, &seller.shop(), comment) {
        mail::queue(&l.txn, m.with_invoices(invoices)).await?;
    }
    l.finish(Some(OrderEvent::Canceled)).await
}

/// Whether an order waits for the organizer's approval.
fn awaits_approval(o: &order::Model) -> bool {
    o.require_approval && o.status == "n"
}

/// Marks a paid order unpaid again (pending under its old term), as pretix's
/// `mark_pending`; its payments stay as they are.
pub async fn mark_pending(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    if l.order.status != "p" {
        return refused("The order is not paid.");
    }
    let mut row = l.order.clone().into_active_model();
    row.status = Set("n".into());
    row.last_modified = Set(Some(crate::values::now()));
    let pending = row.update(&l.txn).await?;
    l.move_hold(
        (HoldKind::Paid, None),
        (HoldKind::Pending, pending_until(&pending)),
    )
    .await?;
    l.order = pending;
    l.notify("pretix.event.order.unpaid", json!({})).await?;
    l.finish(None).await
}

/// Expires a pending order now: it stops holding its quota (`extend` or `mark_paid` can
/// bring it back while its products are available).
pub async fn mark_expired(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let now = crate::values::now();
    if l.order.status != "n" || expired(&l.order, now) {
        return refused("The order is not pending.");
    }
    l.lock_quotas(&[]).await?;
    let positions = l.positions.clone();
    let until = pending_until(&l.order);
    hold_positions(
        &l.txn,
        &l.catalogue,
        &positions,
        HoldKind::Pending,
        until,
        -1,
    )
    .await?;
    let mut row = l.order.clone().into_active_model();
    row.expires = Set(Some(now));
    row.expires_automatically = Set(true);
    row.require_approval = Set(false);
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    l.notify("pretix.event.order.expired", json!({})).await?;
    l.invoices(None, Step::Ended).await?;
    l.finish(None).await
}

/// Moves the payment term of a pending or expired order to `expires`. An expired order
/// holds its quota again only if its products are still available, unless `force`.
pub async fn extend(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    expires: DateTime<Utc>,
    force: bool,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    l.extend_to(expires, force).await?;
    l.finish(None).await
}

/// Gives every ticket of an order a new secret (the old ones stop admitting anyone). With
/// signed secrets the old ones go to the revocation list, since scanners would otherwise
/// still accept their valid signatures offline.
pub async fn regenerate_secrets(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let now = crate::values::now();
    l.new_secrets(false).await?;
    let mut row = l.order.clone().into_active_model();
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    l.finish(None).await
}

/// Mails the customer the link to their order again, as pretix's `resend_link`; refused for
/// an order without an e-mail address. The mail goes through the outbox: call
/// `Mailer::wake` once this returns.
pub async fn resend_link(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<(), LifecycleError> {
    let txn = begin_write(seller.db).await?;
    let order = lock(&txn, ev.id, code)
        .await?
        .ok_or(LifecycleError::NotFound)?;
    let Some(m) = mails::link(ev, &order, &seller.shop()) else {
        return refused("There is no email address associated with this order.");
    };
    mail::queue(&txn, m).await?;
    crate::db::commit(txn).await?;
    Ok(())
}
