//! What buyers may do to their own orders through the order's secret link, by pretix's
//! rules: cancel them (unpaid, or paid with the rest refunded the way it was paid or to a
//! new gift card, keeping a fee as the event's settings say) until a deadline, and change
//! their answers until another. The same rules decide what the order page offers and what
//! a request may do, and a request decides again under the order's lock.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, Set,
};
use serde_json::{Value, json};

use super::lifecycle::{LifecycleError, Locked, Seller, give_back, give_back_and_cancel, open};
use super::refunds::{self, Asked, GIVING_BACK, NewRefund};
use super::{
    AnswerInput, Details, Order, OrderChange, PositionInfo, PositionPatch, complete, mails,
};
use crate::db::entities::{event, order_fee, order_position, question, question_item, subevent};
use crate::domain::cache::EventSettings;
use crate::domain::carts::checkout::{self, Ask, Attendee, Entered, Form};
use crate::domain::extensions::OrderEvent;
use crate::domain::giftcards::{self, NewCard};
use crate::domain::invoices::when::Step;
use crate::domain::mail;
use crate::domain::orders::file_answers::FILE_ANSWER;
use crate::domain::sale::Catalogue;
use crate::domain::settings::decimal;
use crate::values::reldate::{Bases, RelativeDate};

/// Fees an order keeps when a buyer cancels it and the event keeps fees.
const KEPT_FEES: [&str; 4] = ["payment", "shipping", "service", "cancellation"];

/// What a buyer may do to an order now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// Cancel it, on these terms.
    pub cancel: Option<CancelTerms>,
    /// Change attendee names, answers and the invoice address.
    pub modify: bool,
}

/// What a buyer's cancellation costs and gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelTerms {
    /// Whether the order is paid (and costs something): the rest is refunded.
    pub paid: bool,
    /// What the organizer keeps, in cents (the order then stays, at this total).
    pub fee_cents: i64,
    /// What is given back, in cents.
    pub refund_cents: i64,
    /// How the refund is given back.
    pub refund: RefundWay,
}

/// How a buyer's refund is given back (`cancel_allow_user_paid_refund_as_giftcard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundWay {
    /// The way it was paid, where the provider can.
    AsPaid,
    /// The buyer chooses: the way it was paid or a new gift card.
    BuyerChooses,
    /// To a new gift card.
    GiftCard,
    /// By the organizer, by hand.
    ByHand,
}

/// The order's event dates relevant to deadlines: the event's, or each date's of a series.
async fn deadline_bases(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    order: &Order,
) -> Result<Vec<Bases>, DbErr> {
    let zone = ev.timezone.parse().unwrap_or(chrono_tz::UTC);
    let placed = Some((order.row.datetime, order.row.expires));
    let dates: Vec<i64> = order
        .positions
        .iter()
        .filter_map(|p| p.subevent_id)
        .collect();
    if dates.is_empty() {
        return Ok(vec![Bases {
            zone,
            date_from: ev.date_from,
            date_to: ev.date_to,
            date_admission: ev.date_admission,
            presale_start: ev.presale_start,
            presale_end: ev.presale_end,
            order: placed,
        }]);
    }
    let rows = subevent::Entity::find()
        .filter(subevent::Column::Id.is_in(dates))
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|s| Bases {
            zone,
            date_from: s.date_from,
            date_to: s.date_to.or(ev.date_to),
            date_admission: s.date_admission.or(ev.date_admission),
            presale_start: s.presale_start.or(ev.presale_start),
            presale_end: s.presale_end.or(ev.presale_end),
            order: placed,
        })
        .collect())
}

/// Whether `now` is past the deadline the setting `key` gives (the earliest of the order's
/// dates' for a series); never without one.
fn past(settings: &EventSettings, key: &str, bases: &[Bases], now: DateTime<Utc>) -> bool {
    let Some(date) = settings
        .get(key)
        .and_then(Value::as_str)
        .and_then(RelativeDate::parse)
    else {
        return false;
    };
    bases
        .iter()
        .filter_map(|b| date.resolve(b))
        .min()
        .is_some_and(|deadline| now > deadline)
}

/// What has been paid on the order and not given back, in cents (pretix's
/// `payment_refund_sum`: payments refunded in full still count, as their refunds do).
fn paid_cents(order: &Order) -> i64 {
    let paid: i64 = order
        .payments
        .iter()
        .filter(|p| p.state == "confirmed" || p.state == "refunded")
        .map(|p| p.amount_cents)
        .sum();
    let given: i64 = order
        .refunds
        .iter()
        .filter(|r| GIVING_BACK.contains(&r.row.state.as_str()))
        .map(|r| r.row.amount_cents)
        .sum();
    paid - given
}

/// Whether any of the order's tickets was used to enter.
fn checked_in(order: &Order) -> bool {
    order.checkins.iter().any(|c| c.kind == "entry")
}

/// What a buyer may do to `order` at `now`.
pub async fn offer(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    settings: &EventSettings,
    order: &Order,
    now: DateTime<Utc>,
) -> Result<Offer, DbErr> {
    let bases = deadline_bases(db, ev, order).await?;
    let subevents: Vec<i64> = order
        .positions
        .iter()
        .filter_map(|p| p.subevent_id)
        .collect();
    let catalogue = Catalogue::load(db, ev, &subevents).await?;
    let asked = asked_items(db, order).await?;
    Ok(Offer {
        cancel: cancel_terms(settings, order, &catalogue, &bases, now),
        modify: may_modify(settings, order, (&catalogue, &asked), &bases, now),
    })
}

/// The order's items that have questions a buyer answers here (not hidden ones, nor file
/// questions, which the form does not ask).
async fn asked_items(db: &impl ConnectionTrait, order: &Order) -> Result<Vec<i64>, DbErr> {
    let items: Vec<i64> = order.positions.iter().map(|p| p.item_id).collect();
    let links = question_item::Entity::find()
        .filter(question_item::Column::ItemId.is_in(items))
        .all(db)
        .await?;
    let shown: Vec<i64> = question::Entity::find()
        .filter(question::Column::Id.is_in(links.iter().map(|l| l.question_id)))
        .filter(question::Column::Hidden.eq(false))
        .filter(question::Column::Type.ne(crate::domain::questions::FILE))
        .all(db)
        .await?
        .into_iter()
        .map(|q| q.id)
        .collect();
    Ok(links
        .into_iter()
        .filter(|l| shown.contains(&l.question_id))
        .map(|l| l.item_id)
        .collect())
}

/// pretix's `user_cancel_allowed` and `user_cancel_fee`.
fn cancel_terms(
    settings: &EventSettings,
    order: &Order,
    catalogue: &Catalogue,
    bases: &[Bases],
    now: DateTime<Utc>,
) -> Option<CancelTerms> {
    let o = &order.row;
    let flag = |key: &str| settings.get(key).and_then(Value::as_bool).unwrap_or(false);
    let cancelable = order
        .positions
        .iter()
        .all(|p| catalogue.item(p.item_id).is_some_and(|i| i.allow_cancel));
    if order.positions.is_empty() || !cancelable || checked_in(order) {
        return None;
    }
    let paid = o.status == "p" && o.total_cents != 0;
    let until = if paid {
        "cancel_allow_user_paid_until"
    } else {
        "cancel_allow_user_until"
    };
    if past(settings, until, bases, now) {
        return None;
    }
    let allowed = match o.status.as_str() {
        "p" if paid => flag("cancel_allow_user_paid"),
        "p" => flag("cancel_allow_user"),
        "n" => paid_cents(order) <= 0 && flag("cancel_allow_user"),
        _ => false,
    };
    if !allowed || super::expired(o, now) {
        return None;
    }
    let fee_cents = if o.total_cents == 0 {
        0
    } else {
        fee(settings, order, if paid { "paid" } else { "unpaid" })
    };
    let refund = match settings
        .get("cancel_allow_user_paid_refund_as_giftcard")
        .and_then(Value::as_str)
    {
        Some("option") => RefundWay::BuyerChooses,
        Some("force") => RefundWay::GiftCard,
        Some("manually") => RefundWay::ByHand,
        _ => RefundWay::AsPaid,
    };
    Some(CancelTerms {
        paid,
        fee_cents,
        refund_cents: if paid {
            (paid_cents(order) - fee_cents).max(0)
        } else {
            0
        },
        refund,
    })
}

/// The fee a buyer's cancellation keeps, by the `cancel_allow_user_{kind}_keep*` settings:
/// the order's fees, then a percentage of the rest, then a fixed amount; at most the total.
fn fee(settings: &EventSettings, order: &Order, kind: &str) -> i64 {
    let setting = |name: &str| {
        let key = format!("cancel_allow_user_{kind}_keep{name}");
        settings.get(key.as_str())
    };
    let total = Decimal::from(order.row.total_cents);
    let mut fee = Decimal::ZERO;
    if setting("_fees").and_then(Value::as_bool).unwrap_or(false) {
        fee += Decimal::from(
            order
                .fees
                .iter()
                .filter(|f| !f.canceled && KEPT_FEES.contains(&f.fee_type.as_str()))
                .map(|f| f.value_cents)
                .sum::<i64>(),
        );
    }
    let percent = setting("_percentage").map(decimal).unwrap_or_default();
    fee += percent / Decimal::ONE_HUNDRED * (total - fee);
    fee += setting("").map(decimal).unwrap_or_default() * Decimal::ONE_HUNDRED;
    fee.min(total)
        .round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
        .to_i64()
        .unwrap_or(0)
        .max(0)
}

/// pretix's `can_modify_answers`.
fn may_modify(
    settings: &EventSettings,
    order: &Order,
    (catalogue, asked): (&Catalogue, &[i64]),
    bases: &[Bases],
    now: DateTime<Utc>,
) -> bool {
    let flag = |key: &str| settings.get(key).and_then(Value::as_bool).unwrap_or(false);
    let allowed = matches!(
        settings.get("allow_modifications").and_then(Value::as_str),
        Some("order" | "attendee")
    );
    if !matches!(order.row.status.as_str(), "n" | "p" | "e")
        || !allowed
        || past(settings, "last_order_modification_date", bases, now)
        || (checked_in(order) && !flag("allow_modifications_after_checkin"))
    {
        return false;
    }
    if flag("invoice_address_asked") || flag("invoice_name_required") {
        return true;
    }
    let names = flag("attendee_names_asked");
    order.positions.iter().any(|p| {
        asked.contains(&p.item_id)
            || (names && catalogue.item(p.item_id).is_some_and(|i| i.admission))
    })
}

/// How a buyer asks for the refund of a paid order they cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundTo {
    /// The way it was paid.
    AsPaid,
    /// A new gift card.
    GiftCard,
}

/// A buyer's cancellation, done.
#[derive(Debug)]
pub struct Canceled {
    /// The order as it now stands.
    pub order: Order,
    /// What could not be refunded automatically and waits for the organizer, in cents.
    pub refund_left_cents: i64,
}

/// Cancels order `code` for its buyer, if the rules allow it now (decided again under the
/// order's lock): without a fee the order is canceled; with one, its positions and fees are
/// canceled and the order stays at the fee, as pretix does. For a paid order the rest is
/// then given back (outside the order's transaction: a provider's service may take seconds)
/// to a new gift card, or through the payments' providers, as far as they can; what is left
/// waits for the organizer. The customer's mail goes through the outbox: call
/// `Mailer::wake` once this returns.
pub async fn cancel(
    seller: Seller<'_>,
    ev: &event::Model,
    settings: &EventSettings,
    code: &str,
    to: RefundTo,
) -> Result<Canceled, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let order = complete(&l.txn, vec![l.order.clone()])
        .await?
        .pop()
        .ok_or(LifecycleError::NotFound)?;
    let bases = deadline_bases(&l.txn, ev, &order).await?;
    let now = crate::values::now();
    let Some(terms) = cancel_terms(settings, &order, &l.catalogue, &bases, now) else {
        return Err(LifecycleError::Refused(
            "You cannot cancel this order.".into(),
        ));
    };
    if terms.fee_cents == 0 {
        give_back_and_cancel(&mut l).await?;
    } else {
        keep_fee(&mut l, &order, terms.fee_cents, now).await?;
    }
    let invoices = l.invoices(None, Step::Canceled).await?;
    if let Some(m) = mails::canceled(ev, &l.order, &seller.shop()) {
        mail::queue(&l.txn, m.with_invoices(invoices)).await?;
    }
    let order = l.finish(Some(OrderEvent::Canceled)).await?;
    if terms.refund_cents == 0 {
        return Ok(Canceled {
            order,
            refund_left_cents: 0,
        });
    }
    let gift_card = match terms.refund {
        RefundWay::GiftCard => true,
        RefundWay::BuyerChooses => to == RefundTo::GiftCard,
        RefundWay::AsPaid => false,
        RefundWay::ByHand => {
            return Ok(Canceled {
                order,
                refund_left_cents: terms.refund_cents,
            });
        }
    };
    let refunded = if gift_card {
        to_gift_card(seller, ev, order.clone(), terms.refund_cents).await
    } else {
        through_providers(seller, ev, order.clone(), terms.refund_cents).await
    };
    // The order is canceled by now: a refund that fails waits for the organizer.
    Ok(refunded.unwrap_or_else(|error| {
        tracing::error!(?error, order = %order.row.code, "a buyer's refund was not made");
        Canceled {
            order,
            refund_left_cents: terms.refund_cents,
        }
    }))
}

/// Cancels the order's positions and fees, keeping `fee_cents` as a cancellation fee: the
/// order's new total, paid if as much was paid, else pending.
async fn keep_fee(
    l: &mut Locked<'_>,
    order: &Order,
    fee_cents: i64,
    now: DateTime<Utc>,
) -> Result<(), LifecycleError> {
    give_back(l).await?;
    order_position::Entity::update_many()
        .col_expr(order_position::Column::Canceled, true.into())
        .filter(order_position::Column::OrderId.eq(l.order.id))
        .exec(&l.txn)
        .await?;
    order_fee::Entity::update_many()
        .col_expr(order_fee::Column::Canceled, true.into())
        .filter(order_fee::Column::OrderId.eq(l.order.id))
        .exec(&l.txn)
        .await?;
    order_fee::ActiveModel {
        order_id: Set(l.order.id),
        fee_type: Set("cancellation".into()),
        value_cents: Set(fee_cents),
        description: Set(String::new()),
        internal_type: Set(None),
        tax_rule_id: Set(None),
        tax_rate_bps: Set(0),
        tax_value_cents: Set(0),
        canceled: Set(false),
        ..Default::default()
    }
    .insert(&l.txn)
    .await?;
    let mut row = l.order.clone().into_active_model();
    row.status = Set(if paid_cents(order) >= fee_cents {
        "p"
    } else {
        "n"
    }
    .into());
    row.total_cents = Set(fee_cents);
    row.cancellation_date = Set(Some(now));
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    Ok(())
}

/// Gives `amount_cents` back to a new gift card of the organizer's.
async fn to_gift_card(
    seller: Seller<'_>,
    ev: &event::Model,
    order: Order,
    amount_cents: i64,
) -> Result<Canceled, LifecycleError> {
    let card = giftcards::create(
        seller.db,
        ev.organizer_id,
        NewCard {
            secret: None,
            value_cents: 0,
            currency: ev.currency.clone(),
            testmode: order.row.testmode,
            expires: None,
            conditions: None,
        },
    )
    .await
    .map_err(|e| match e {
        giftcards::CreateError::Db(e) => LifecycleError::Db(e),
        giftcards::CreateError::SecretTaken => {
            LifecycleError::Refused("The gift card could not be made; please try again.".into())
        }
    })?;
    let (order, _) = refunds::create(
        seller,
        ev,
        &order.row.code,
        NewRefund {
            state: "done".into(),
            source: "buyer".into(),
            amount_cents,
            payment: None,
            provider: "giftcard".into(),
            execution_date: None,
            comment: "Canceled by customer".into(),
            info: json!({"gift_card": card.id, "gift_card_secret": card.secret}),
            mark_canceled: false,
        },
    )
    .await?;
    Ok(Canceled {
        order,
        refund_left_cents: 0,
    })
}

/// Gives `amount_cents` back through the confirmed payments' providers that refund by
/// themselves, largest first, as far as they can; gives what is left.
async fn through_providers(
    seller: Seller<'_>,
    ev: &event::Model,
    mut order: Order,
    amount_cents: i64,
) -> Result<Canceled, LifecycleError> {
    let mut left = amount_cents;
    let mut payments: Vec<(i32, i64)> = order
        .payments
        .iter()
        .filter(|p| p.state == "confirmed")
        .filter(|p| {
            seller
                .plugins
                .payment_provider(ev, &p.provider)
                .is_some_and(|provider| provider.refunds_by_itself())
        })
        .map(|p| {
            let given: i64 = order
                .refunds
                .iter()
                .filter(|r| r.row.payment_id == Some(p.id))
                .filter(|r| GIVING_BACK.contains(&r.row.state.as_str()))
                .map(|r| r.row.amount_cents)
                .sum();
            (p.local_id, p.amount_cents - given)
        })
        .filter(|(_, refundable)| *refundable > 0)
        .collect();
    payments.sort_by_key(|(_, refundable)| std::cmp::Reverse(*refundable));
    for (local_id, refundable) in payments {
        if left == 0 {
            break;
        }
        let amount = refundable.min(left);
        let asked = Asked {
            payment_local_id: local_id,
            amount_cents: Some(amount),
            source: "buyer",
        };
        match refunds::refund_through_provider(seller, ev, &order.row.code, asked, false).await {
            Ok((now, _)) => {
                order = now;
                left -= amount;
            }
            // A provider that cannot refund leaves this part to the organizer.
            Err(LifecycleError::Refused(_) | LifecycleError::Invalid(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Canceled {
        order,
        refund_left_cents: left,
    })
}

/// Most orders whose links one request mails again.
pub const MAX_RESENT: u64 = 10;

/// Minutes an address waits before the resend page mails it an order's link again.
pub const RESEND_PAUSE_MINUTES: i64 = 15;

/// Mails the links of the event's orders placed with `email` (compared case-insensitively;
/// the newest [`MAX_RESENT`]) to that address again, as pretix's `resend/` page, except
/// those mailed in the last [`RESEND_PAUSE_MINUTES`] (so that the page cannot flood an
/// inbox); gives how many were mailed.
pub async fn resend_links(
    seller: Seller<'_>,
    ev: &event::Model,
    email: &str,
) -> Result<usize, LifecycleError> {
    use sea_orm::{FromQueryResult, QueryOrder, QuerySelect, Statement};
    let rows =
        crate::db::entities::order::Model::find_by_statement(Statement::from_sql_and_values(
            seller.db.get_database_backend(),
            format!(
                "SELECT * FROM orders WHERE event_id = $1 AND LOWER(email) = $2 \
             ORDER BY id DESC LIMIT {MAX_RESENT}"
            ),
            [ev.id.into(), email.to_lowercase().into()],
        ))
        .all(seller.db)
        .await?;
    let since = crate::values::now() - chrono::Duration::minutes(RESEND_PAUSE_MINUTES);
    let mut sent = 0;
    for row in &rows {
        let Some(m) = mails::link(ev, row, &seller.shop()) else {
            continue;
        };
        let recent = crate::db::entities::outbox_mail::Entity::find()
            .filter(crate::db::entities::outbox_mail::Column::EventId.eq(ev.id))
            .filter(crate::db::entities::outbox_mail::Column::ToAddress.eq(m.to.as_str()))
            .filter(crate::db::entities::outbox_mail::Column::Subject.eq(m.subject.as_str()))
            .filter(crate::db::entities::outbox_mail::Column::Created.gt(since))
            .order_by_desc(crate::db::entities::outbox_mail::Column::Id)
            .limit(1)
            .one(seller.db)
            .await?;
        if recent.is_none() {
            mail::queue(seller.db, m).await?;
            sent += 1;
        }
    }
    Ok(sent)
}

/// What a buyer may change of an order, and what it holds now: the form is the checkout's
/// (attendee names, e-mails and answers per position, the invoice address) and the entries
/// are the order's.
pub async fn modify_form(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    settings: &EventSettings,
    order: &Order,
) -> Result<(Form, Entered), DbErr> {
    let of: Vec<(i64, i64)> = order.positions.iter().map(|p| (p.id, p.item_id)).collect();
    let form = checkout::form_for(db, ev, settings, &of).await?;
    let attendees = order
        .positions
        .iter()
        .map(|p| {
            let answers = p
                .answers
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| {
                    let options = a["options"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_i64)
                        .collect();
                    let text = a["answer"].as_str().unwrap_or_default().to_owned();
                    Some((a["question"].as_i64()?, (text, options)))
                })
                .collect();
            let attendee = Attendee {
                name: super::display_name(&p.attendee_name_parts).unwrap_or_default(),
                email: p.attendee_email.clone().unwrap_or_default(),
                answers,
            };
            (p.id, attendee)
        })
        .collect();
    let entered = Entered {
        email: order.row.email.clone().unwrap_or_default(),
        attendees,
        invoice_address: order.row.invoice_address.clone(),
        payment: None,
    };
    Ok((form, entered))
}

/// Why a buyer's change of their information was not made.
#[derive(Debug)]
pub enum NotModified {
    /// The rules do not allow changes (any more).
    NotAllowed,
    /// Fields with errors, by field name (as [`Form::check`] names them).
    Invalid(checkout::FieldErrors),
    /// Anything else the order's rules refused.
    Refused(LifecycleError),
}

impl From<LifecycleError> for NotModified {
    fn from(e: LifecycleError) -> Self {
        NotModified::Refused(e)
    }
}

impl From<DbErr> for NotModified {
    fn from(e: DbErr) -> Self {
        NotModified::Refused(LifecycleError::Db(e))
    }
}

/// Changes the attendee names, e-mails and answers and the invoice address of order `code`
/// to `entered`, as the order's buyer (the rules decide whether they may, and check the
/// entries as at checkout). Answers to questions the form does not ask (hidden ones, files)
/// are kept.
pub async fn modify(
    seller: Seller<'_>,
    ev: &event::Model,
    settings: &EventSettings,
    order: &Order,
    mut entered: Entered,
) -> Result<Order, NotModified> {
    let now = crate::values::now();
    if !offer(seller.db, ev, settings, order, now).await?.modify {
        return Err(NotModified::NotAllowed);
    }
    let (form, before) = modify_form(seller.db, ev, settings, order).await?;
    entered.email = before.email.clone();
    let mut errors = form.check(&mut entered, &before.email);
    // The e-mail address is not changed here (nor shown): its errors are none of the form's.
    errors.retain(|field, _| field != "email" && field != "email_repeat");
    if !errors.is_empty() {
        return Err(NotModified::Invalid(errors));
    }
    let patches = order
        .positions
        .iter()
        .filter_map(|p| {
            let a = entered.attendees.get(&p.id)?;
            let asked = &form.questions.iter().find(|(id, _)| *id == p.id)?.1;
            let was = before.attendees.get(&p.id);
            let kept = was
                .into_iter()
                .flat_map(|b| &b.answers)
                .filter(|(q, _)| !asked.iter().any(|a| a.row.id == **q))
                .map(|(q, (answer, options))| {
                    // A file answer stays the file it is.
                    let answer = if answer.starts_with(FILE_ANSWER) {
                        "file:keep".to_owned()
                    } else {
                        answer.clone()
                    };
                    (q, answer, options)
                });
            let given = a.answers.iter().map(|(q, (t, o))| (q, t.clone(), o));
            let answers = kept
                .chain(given)
                .map(|(q, answer, options)| AnswerInput {
                    question: *q,
                    answer,
                    options: options.clone(),
                })
                .collect();
            let renamed = was.is_none_or(|b| b.name != a.name);
            // Attendee data is asked of admission products only; what others hold stays.
            let personal = form.asks_attendee(p.id);
            let info = PositionInfo {
                attendee_name_parts: (personal && form.names != Ask::No && renamed)
                    .then(|| checkout::name_parts(&a.name)),
                attendee_email: (personal && form.emails != Ask::No)
                    .then(|| Some(a.email.clone()).filter(|e| !e.is_empty())),
                answers: Some(answers),
                uploader: None,
            };
            Some(PositionPatch {
                position: p.id,
                info,
                ..Default::default()
            })
        })
        .collect();
    let code = &order.row.code;
    let change = OrderChange {
        patch_positions: patches,
        ..Default::default()
    };
    let mut changed = super::change(seller, ev, code, change).await?;
    let stored = order.row.invoice_address.as_ref();
    let address = entered
        .invoice_address
        .as_ref()
        .and_then(|shown| address_with(stored, shown, form.vat_id));
    if form.invoice != Ask::No && address.as_ref() != stored {
        let details = Details {
            invoice_address: Some(address),
            ..Default::default()
        };
        changed = super::change_details(seller, ev, code, details).await?;
    }
    Ok(changed)
}

/// The fields of an invoice address the form shows.
const SHOWN_ADDRESS: [&str; 7] = [
    "is_business",
    "company",
    "name_parts",
    "street",
    "zipcode",
    "city",
    "country",
];

/// The stored invoice address with what the form shows put over it (the rest, such as a
/// state or a reference, kept); `None` when there was none and nothing was entered.
fn address_with(stored: Option<&Value>, shown: &Value, vat_id: bool) -> Option<Value> {
    let filled = SHOWN_ADDRESS
        .iter()
        .chain(&["vat_id"])
        .any(|k| match &shown[*k] {
            Value::String(v) => !v.is_empty(),
            Value::Object(parts) => parts
                .values()
                .any(|v| v.as_str().is_some_and(|v| !v.is_empty())),
            _ => false,
        });
    if stored.is_none() && !filled {
        return None;
    }
    let mut address = stored.cloned().unwrap_or_else(|| shown.clone());
    let fields = SHOWN_ADDRESS.iter().chain(vat_id.then_some(&"vat_id"));
    if let Some(map) = address.as_object_mut() {
        for k in fields {
            let unchanged_name = *k == "name_parts"
                && map.get(*k).and_then(super::display_name) == super::display_name(&shown[*k]);
            if !unchanged_name {
                map.insert((*k).to_owned(), shown[*k].clone());
            }
        }
    }
    Some(address)
}
