//! Changing a placed order, as pretix's order change (`orders/{code}/change/`): positions
//! patched, canceled, split off into an order of their own or added, fees canceled, added or
//! patched, taxes computed again. All of it in one transaction, or nothing.
//!
//! The change is first worked out in memory ([`Plan`]), in pretix's order of operations:
//! cancel, patch, split, create positions, then cancel, create and patch fees, then taxes.
//! It is then checked as a new order would be, under the same locks in the same order
//! (the order, vouchers, seats, quotas): what it takes of a quota beyond what the order held
//! must be left, each seat it takes must be free. Only then is it written.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, Set, sea_query::Expr,
};
use serde_json::{Map, Value, json};

use super::lifecycle::{
    LifecycleError, Locked, Seller, add_confirmed_payment, lock_vouchers, open_with,
};
use super::place::{
    AnswerInput, FeeInput, FileSource, MAX_POSITIONS, PositionErrors, PositionInput, check_answers,
    check_fees, fee_row, hold_of, insert_with_codes,
};
use super::{Order, demand, file_answers, hold_positions, mails, product_of};
use crate::db::entities::{
    category, event, item_addon, item_bundle, order, order_fee, order_payment, order_position,
    order_refund, seat,
};
use crate::domain::availability::{self, Demand, HoldKind};
use crate::domain::extensions::OrderEvent;
use crate::domain::invoices::when::Step;
use crate::domain::sale::{Catalogue, Product};
use crate::domain::seating::sell::{self, SeatKey};
use crate::domain::secrets::{self, Generator, TicketFacts};
use crate::domain::tax_rules::reverse_charge::Buyer;
use crate::domain::tokens::random_from;
use crate::domain::{files, mail, settings, vouchers, webhooks};

/// What to change of a position (`patch_positions`): each field sent replaces the stored one.
#[derive(Debug, Clone, Default)]
pub struct PositionPatch {
    /// The position's ID.
    pub position: i64,
    /// Another item.
    pub item: Option<i64>,
    /// Another variation (`Some(None)`: none).
    pub variation: Option<Option<i64>>,
    /// Another date of the series.
    pub subevent: Option<Option<i64>>,
    /// Another seat by its identifier (`Some(None)`: no seat).
    pub seat: Option<Option<String>>,
    /// Another price in cents, taxes included.
    pub price: Option<i64>,
    /// Another tax rule of the event (`Some(None)`: none).
    pub tax_rule: Option<Option<i64>>,
    /// Admits from this instant on.
    pub valid_from: Option<Option<DateTime<Utc>>>,
    /// Admits until this instant.
    pub valid_until: Option<Option<DateTime<Utc>>>,
    /// Another ticket secret, unique in the event.
    pub secret: Option<String>,
    /// The attendee's data and answers.
    pub info: PositionInfo,
}

/// What changes of a position's attendee: each field sent replaces the stored one; the
/// answers sent replace all of them (a question left out, or answered with nothing, loses
/// its answer), as pretix's position `PATCH`.
#[derive(Debug, Clone, Default)]
pub struct PositionInfo {
    /// Attendee name parts.
    pub attendee_name_parts: Option<Map<String, Value>>,
    /// Attendee e-mail (`Some(None)`: none).
    pub attendee_email: Option<Option<String>>,
    /// Every answer of the position.
    pub answers: Option<Vec<AnswerInput>>,
    /// Whose uploads file answers may take: the caller's identity.
    pub uploader: Option<String>,
}

impl PositionInfo {
    fn is_empty(&self) -> bool {
        self.attendee_name_parts.is_none()
            && self.attendee_email.is_none()
            && self.answers.is_none()
    }
}

/// A position added to the order (`create_positions`, `POST orderpositions/`).
#[derive(Debug, Clone, Default)]
pub struct NewPosition {
    /// The item.
    pub item: i64,
    /// The variation.
    pub variation: Option<i64>,
    /// The price in cents; the product's when not sent.
    pub price: Option<i64>,
    /// The `positionid` of the position it is an add-on to.
    pub addon_to: Option<i32>,
    /// The date of a series.
    pub subevent: Option<i64>,
    /// The seat's identifier.
    pub seat: Option<String>,
    /// Admits from this instant on.
    pub valid_from: Option<DateTime<Utc>>,
    /// Admits until this instant.
    pub valid_until: Option<DateTime<Utc>>,
    /// The attendee's data and answers (`POST orderpositions/`).
    pub info: PositionInfo,
}

/// A fee's new value (`patch_fees`).
#[derive(Debug, Clone, Copy)]
pub struct FeePatch {
    /// The fee's ID.
    pub fee: i64,
    /// The new value in cents, taxes included.
    pub value: i64,
}

/// What stays when taxes are computed again with the rules' current rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepTaxes {
    /// The net price stays; the gross price changes.
    Net,
    /// The gross price stays; the tax in it changes.
    Gross,
}

/// A change of an order, as sent.
#[derive(Debug, Clone, Default)]
pub struct OrderChange {
    /// Positions patched.
    pub patch_positions: Vec<PositionPatch>,
    /// Positions canceled (with their add-ons).
    pub cancel_positions: Vec<i64>,
    /// Positions added.
    pub create_positions: Vec<NewPosition>,
    /// Positions moved into a new order (with their add-ons).
    pub split_positions: Vec<i64>,
    /// Fees whose value changes.
    pub patch_fees: Vec<FeePatch>,
    /// Fees canceled.
    pub cancel_fees: Vec<i64>,
    /// Fees added.
    pub create_fees: Vec<FeeInput>,
    /// Compute the taxes again with the rules' current rates.
    pub recalculate_taxes: Option<KeepTaxes>,
    /// Tell the customer (of each order) by e-mail.
    pub send_email: bool,
    /// Cancel the order's invoice and issue a new one (pretix's `reissue_invoice`).
    pub reissue_invoice: bool,
    /// Check that the quotas have room for what the change adds (pretix's `check_quotas`).
    pub check_quotas: bool,
}

/// A refusal as pretix words an order change's: a 400 with a list of one message.
fn refused<T>(message: impl Into<String>) -> Result<T, LifecycleError> {
    Err(LifecycleError::Invalid(json!([message.into()])))
}

/// Errors of the elements of one list of the request, one object per element.
struct ElementErrors {
    field: &'static str,
    errors: Vec<Map<String, Value>>,
}

impl ElementErrors {
    fn new(field: &'static str, n: usize) -> Self {
        Self {
            field,
            errors: vec![Map::new(); n],
        }
    }

    fn add(&mut self, i: usize, key: &str, message: impl Into<String>) {
        self.errors[i].insert(key.into(), json!([message.into()]));
    }

    fn check(self) -> Result<(), LifecycleError> {
        if self.errors.iter().all(Map::is_empty) {
            return Ok(());
        }
        Err(LifecycleError::Invalid(json!({ self.field: self.errors })))
    }
}

fn unknown(id: i64) -> String {
    format!("Invalid pk \"{id}\" - object does not exist.")
}

/// Refuses a list that names the same object twice, as pretix does.
fn distinct(field: &'static str, ids: impl Iterator<Item = i64>) -> Result<(), LifecycleError> {
    let mut seen = BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(LifecycleError::Invalid(
                json!({ field: ["You have specified the same object twice."] }),
            ));
        }
    }
    Ok(())
}

/// Refuses IDs that are no live position (or fee) of the order.
fn known(
    field: &'static str,
    key: &str,
    ids: &[i64],
    exists: impl Fn(i64) -> bool,
) -> Result<(), LifecycleError> {
    let mut errors = ElementErrors::new(field, ids.len());
    for (i, &id) in ids.iter().enumerate() {
        if !exists(id) {
            errors.add(i, key, unknown(id));
        }
    }
    errors.check()
}

/// A position of the plan: as stored, and as it will be.
struct Line {
    before: Option<order_position::Model>,
    after: order_position::Model,
    /// What it is after the change.
    fate: Fate,
    /// Its ticket secret is made anew: what the secret says changed (signed secrets).
    renew: bool,
    /// Its seat by identifier after the change, when the change picks one.
    seat_guid: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Stays,
    Canceled,
    Split,
}

/// The change worked out in memory, before anything is locked beyond the order.
struct Plan {
    lines: Vec<Line>,
    fees: Vec<(order_fee::Model, bool)>,
    new_fees: Vec<FeeInput>,
    /// What the webhooks hear, in order: the action and what it says beside the code.
    notices: Vec<(&'static str, Value)>,
}

impl Plan {
    fn staying(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.fate == Fate::Stays)
    }

    fn total(&self) -> i64 {
        let positions: i64 = self.staying().map(|l| l.after.price_cents).sum();
        let fees: i64 = self
            .fees
            .iter()
            .filter(|(_, canceled)| !canceled)
            .map(|(f, _)| f.value_cents)
            .sum();
        positions + fees + self.new_fees.iter().map(|f| f.value).sum::<i64>()
    }

    fn split_total(&self) -> i64 {
        self.lines
            .iter()
            .filter(|l| l.fate == Fate::Split)
            .map(|l| l.after.price_cents)
            .sum()
    }

    fn line(&mut self, id: i64) -> Option<&mut Line> {
        self.lines
            .iter_mut()
            .find(|l| l.before.as_ref().is_some_and(|b| b.id == id))
    }

    /// Gives `fate` to the position and its add-ons; says what happened to each.
    fn settle(&mut self, id: i64, fate: Fate, action: &'static str) {
        let ids: Vec<i64> = self
            .lines
            .iter()
            .filter(|l| l.fate == Fate::Stays)
            .filter_map(|l| l.before.as_ref())
            .filter(|b| b.id == id || b.addon_to_id == Some(id))
            .map(|b| b.id)
            .collect();
        for pid in ids {
            let Some(l) = self.line(pid) else { continue };
            l.fate = fate;
            let p = &l.after;
            let data = json!({
                "position": p.id, "positionid": p.positionid, "old_item": p.item_id,
                "old_variation": p.variation_id, "old_price": cents(p.price_cents),
                "addon_to": p.addon_to_id,
            });
            self.notices.push((action, data));
        }
    }
}

fn cents(c: i64) -> String {
    crate::values::Money(c).to_string()
}

/// Changes the order `code` of `ev` as `c` says; gives the order as it is then. A change
/// that would leave the order empty, oversell a quota or take a taken seat is refused and
/// changes nothing. The mails it queues go through the outbox: call `Mailer::wake` after.
pub async fn change(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    c: OrderChange,
) -> Result<Order, LifecycleError> {
    distinct(
        "patch_positions",
        c.patch_positions.iter().map(|p| p.position),
    )?;
    distinct("cancel_positions", c.cancel_positions.iter().copied())?;
    distinct("split_positions", c.split_positions.iter().copied())?;
    distinct("patch_fees", c.patch_fees.iter().map(|f| f.fee))?;
    distinct("cancel_fees", c.cancel_fees.iter().copied())?;
    let more: Vec<i64> = (c
        .patch_positions
        .iter()
        .filter_map(|p| p.subevent.flatten()))
    .chain(c.create_positions.iter().filter_map(|p| p.subevent))
    .collect();
    let l = open_with(seller, ev, code, &more).await?;
    if l.order.status == "c" {
        return refused("A canceled order cannot be changed.");
    }
    let fees = order_fee::Entity::find()
        .filter(order_fee::Column::OrderId.eq(l.order.id))
        .filter(order_fee::Column::Canceled.eq(false))
        .order_by_asc(order_fee::Column::Id)
        .all(&l.txn)
        .await?;
    let has_position = |id| l.positions.iter().any(|p| p.id == id);
    let has_fee = |id| fees.iter().any(|f| f.id == id);
    let patched: Vec<i64> = c.patch_positions.iter().map(|p| p.position).collect();
    known("patch_positions", "position", &patched, has_position)?;
    known(
        "cancel_positions",
        "position",
        &c.cancel_positions,
        has_position,
    )?;
    known(
        "split_positions",
        "position",
        &c.split_positions,
        has_position,
    )?;
    let patched_fees: Vec<i64> = c.patch_fees.iter().map(|f| f.fee).collect();
    known("patch_fees", "fee", &patched_fees, has_fee)?;
    known("cancel_fees", "fee", &c.cancel_fees, has_fee)?;
    check_fees(&l.catalogue, &c.create_fees, "create_fees").map_err(LifecycleError::Invalid)?;
    let mut plan = Plan {
        lines: l
            .positions
            .iter()
            .map(|p| Line {
                before: Some(p.clone()),
                after: p.clone(),
                fate: Fate::Stays,
                renew: false,
                seat_guid: None,
            })
            .collect(),
        fees: fees.into_iter().map(|f| (f, false)).collect(),
        new_fees: c.create_fees.clone(),
        notices: Vec::new(),
    };
    for &id in &c.cancel_positions {
        plan.settle(id, Fate::Canceled, "pretix.event.order.changed.cancel");
    }
    patch_positions(&l, &mut plan, &c.patch_positions).await?;
    for &id in &c.split_positions {
        plan.settle(id, Fate::Split, "pretix.event.order.changed.split");
    }
    create_positions(&l, &mut plan, &c.create_positions).await?;
    change_fees(&l, &mut plan, &c);
    if let Some(keep) = c.recalculate_taxes {
        recalculate(&l.catalogue, l.buyer().as_ref(), &mut plan, keep);
    }
    let staying = plan.staying().count();
    if staying == 0 {
        return refused(
            "This operation would leave the order empty. Please cancel the order itself instead.",
        );
    }
    if staying > MAX_POSITIONS {
        return refused(format!(
            "Orders cannot have more than {MAX_POSITIONS} positions."
        ));
    }
    Commit::new(l, plan, c).await?.run().await
}

/// Applies `patch_positions` to the plan (positions canceled in the same change are left).
async fn patch_positions(
    l: &Locked<'_>,
    plan: &mut Plan,
    patches: &[PositionPatch],
) -> Result<(), LifecycleError> {
    let mut errors = ElementErrors::new("patch_positions", patches.len());
    let buyer = l.buyer();
    for (i, patch) in patches.iter().enumerate() {
        let catalogue = &l.catalogue;
        let Some(line) = plan.line(patch.position) else {
            continue;
        };
        if line.fate != Fate::Stays {
            continue;
        }
        let mut notices = Vec::new();
        let p = &mut line.after;
        let item = patch.item.unwrap_or(p.item_id);
        let variation = patch.variation.unwrap_or(p.variation_id);
        let subevent = patch.subevent.unwrap_or(p.subevent_id);
        let base = json!({ "position": p.id, "positionid": p.positionid });
        let with = |extra: Value| {
            let mut m = base.as_object().cloned().unwrap_or_default();
            m.extend(extra.as_object().cloned().unwrap_or_default());
            Value::Object(m)
        };
        if (item, variation, subevent) != (p.item_id, p.variation_id, p.subevent_id) {
            if let Err((field, message)) = catalogue.resolve(item, variation, subevent) {
                errors.add(i, field, message);
                continue;
            }
            if (item, variation) != (p.item_id, p.variation_id) {
                notices.push((
                    "pretix.event.order.changed.item",
                    with(json!({
                        "old_item": p.item_id, "old_variation": p.variation_id,
                        "new_item": item, "new_variation": variation,
                        "old_price": cents(p.price_cents), "new_price": cents(p.price_cents),
                        "addon_to": p.addon_to_id,
                    })),
                ));
                let tax = catalogue.tax(item, p.price_cents, buyer.as_ref());
                (p.item_id, p.variation_id) = (item, variation);
                (p.tax_rule_id, p.tax_rate_bps, p.tax_value_cents) =
                    (tax.rule_id, tax.rate_bps, tax.value_cents);
            }
            if subevent != p.subevent_id {
                notices.push((
                    "pretix.event.order.changed.subevent",
                    with(json!({ "old_subevent": p.subevent_id, "new_subevent": subevent })),
                ));
                p.subevent_id = subevent;
            }
            line.renew = true;
        }
        if let Some(seat) = &patch.seat {
            line.seat_guid = seat.clone();
            notices.push((
                "pretix.event.order.changed.seat",
                with(json!({ "new_seat": seat })),
            ));
            line.renew = true;
        }
        if let Some(rule) = patch.tax_rule
            && rule != p.tax_rule_id
        {
            if rule.is_some_and(|r| !catalogue.has_tax_rule(r)) {
                errors.add(i, "tax_rule", unknown(rule.unwrap_or_default()));
                continue;
            }
            notices.push((
                "pretix.event.order.changed.tax_rule",
                with(json!({ "old_taxrule": p.tax_rule_id, "new_taxrule": rule })),
            ));
            let tax = catalogue.fee_tax(rule, p.price_cents, buyer.as_ref());
            (p.tax_rule_id, p.tax_rate_bps, p.tax_value_cents) =
                (rule, tax.rate_bps, tax.value_cents);
        }
        if let Some(price) = patch.price
            && price != p.price_cents
        {
            notices.push((
                "pretix.event.order.changed.price",
                with(json!({
                    "old_price": cents(p.price_cents), "new_price": cents(price),
                    "addon_to": p.addon_to_id,
                })),
            ));
            let tax = catalogue.fee_tax(p.tax_rule_id, price, buyer.as_ref());
            (p.price_cents, p.tax_value_cents) = (price, tax.value_cents);
        }
        for (key, value, action) in [
            (
                "valid_from",
                patch.valid_from,
                "pretix.event.order.changed.valid_from",
            ),
            (
                "valid_until",
                patch.valid_until,
                "pretix.event.order.changed.valid_until",
            ),
        ] {
            let Some(value) = value else { continue };
            let slot = if key == "valid_from" {
                &mut p.valid_from
            } else {
                &mut p.valid_until
            };
            if *slot != value {
                notices.push((
                    action,
                    with(json!({ "old_value": *slot, "new_value": value })),
                ));
                *slot = value;
            }
        }
        if let Some(secret) = &patch.secret
            && *secret != p.secret
        {
            if secret_taken(l, secret).await? {
                return refused("You cannot assign a position secret that already exists.");
            }
            notices.push(("pretix.event.order.changed.secret", base.clone()));
            p.secret = secret.clone();
        }
        if !patch.info.is_empty() {
            match attendee(l, p, &patch.info).await? {
                Ok(()) => notices.push(("pretix.event.order.modified", base.clone())),
                Err(fields) => {
                    errors.errors[i].extend(fields);
                    continue;
                }
            }
        }
        plan.notices.extend(notices);
    }
    errors.check()
}

/// Applies a change of the attendee's data and answers to the position; gives the field
/// errors when the answers do not fit the position's product.
async fn attendee(
    l: &Locked<'_>,
    p: &mut order_position::Model,
    info: &PositionInfo,
) -> Result<Result<(), Map<String, Value>>, LifecycleError> {
    if let Some(parts) = &info.attendee_name_parts {
        p.attendee_name_parts = Value::Object(parts.clone());
    }
    if let Some(email) = &info.attendee_email {
        p.attendee_email = email.clone();
    }
    let Some(answers) = &info.answers else {
        return Ok(Ok(()));
    };
    let mut seen = BTreeSet::new();
    if let Some(twice) = answers.iter().find(|a| !seen.insert(a.question)) {
        return refused(format!("Question {} was sent twice.", twice.question));
    }
    let given = PositionInput {
        item: p.item_id,
        answers: (answers.iter())
            .filter(|a| !a.answer.is_empty() || !a.options.is_empty())
            .cloned()
            .collect(),
        ..Default::default()
    };
    let mut errors = PositionErrors::new(1);
    let source = FileSource {
        uploader: info.uploader.as_deref(),
        current: Some(&p.answers),
    };
    let checked = check_answers(
        &l.txn,
        l.event.id,
        std::slice::from_ref(&given),
        source,
        &mut errors,
    )
    .await?;
    if errors.any() {
        return Ok(Err(errors.into_objects().pop().unwrap_or_default()));
    }
    let uploader = info.uploader.as_deref().unwrap_or_default();
    if !files::claim_private(&l.txn, uploader, l.event.id, &checked.claims).await? {
        return refused("A file of the answers was used meanwhile; upload it again.");
    }
    let answers = checked
        .stored
        .into_iter()
        .next()
        .unwrap_or_else(|| json!([]));
    let dropped: Vec<String> = file_answers::references(&p.answers)
        .filter(|old| !file_answers::references(&answers).any(|new| new == *old))
        .map(str::to_owned)
        .collect();
    files::forget_private(&l.txn, l.event.id, &dropped).await?;
    p.answers = answers;
    Ok(Ok(()))
}

async fn secret_taken(l: &Locked<'_>, secret: &str) -> Result<bool, DbErr> {
    let stmt = sea_orm::Statement::from_sql_and_values(
        l.txn.get_database_backend(),
        "SELECT 1 FROM order_positions p JOIN orders o ON o.id = p.order_id \
         WHERE o.event_id = $1 AND p.secret = $2",
        [l.event.id.into(), secret.into()],
    );
    Ok(l.txn.query_one_raw(stmt).await?.is_some())
}

/// Adds `create_positions` to the plan, each checked as pretix's `add_position`: a product
/// of the event on sale, an add-on only to a position whose product offers it, a seat
/// exactly when the product is sold by seat.
async fn create_positions(
    l: &Locked<'_>,
    plan: &mut Plan,
    new: &[NewPosition],
) -> Result<(), LifecycleError> {
    if new.is_empty() {
        return Ok(());
    }
    let categories: HashMap<i64, category::Model> = category::Entity::find()
        .filter(category::Column::EventId.eq(l.event.id))
        .all(&l.txn)
        .await?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let mut errors = ElementErrors::new("create_positions", new.len());
    let mut next = order_position::Entity::find()
        .filter(order_position::Column::OrderId.eq(l.order.id))
        .order_by_desc(order_position::Column::Positionid)
        .one(&l.txn)
        .await?
        .map_or(1, |p| p.positionid + 1);
    for (i, n) in new.iter().enumerate() {
        let product = match l.catalogue.resolve(n.item, n.variation, n.subevent) {
            Ok(p) => p,
            Err((field, message)) => {
                errors.add(i, field, message);
                continue;
            }
        };
        let parent = match n.addon_to {
            None => None,
            Some(pid) => match plan
                .staying()
                .filter_map(|line| line.before.as_ref())
                .find(|b| b.positionid == pid)
            {
                Some(b) => Some(b.clone()),
                None => {
                    let message = "addon_to refers to an unknown position ID for this order.";
                    errors.add(i, "addon_to", message);
                    continue;
                }
            },
        };
        let category = l
            .catalogue
            .item(n.item)
            .and_then(|it| it.category_id)
            .and_then(|c| categories.get(&c));
        match &parent {
            None if category.is_some_and(|c| c.is_addon) => {
                return refused(
                    "This is an add-on product, please select the base position it should be added to.",
                );
            }
            Some(base) if !offers(l, base, category, &product).await? => {
                return refused(
                    "The selected base position does not allow you to add this product as an add-on.",
                );
            }
            _ => {}
        }
        let seated = l
            .catalogue
            .seating(l.event, n.subevent)
            .sold_by_seat(n.item);
        match &n.seat {
            None if seated => {
                return refused("The selected product requires you to select a seat.");
            }
            Some(_) if !seated => {
                return refused("The selected product does not allow to select a seat.");
            }
            _ => {}
        }
        let price = n
            .price
            .unwrap_or_else(|| l.catalogue.default_price(&product, l.buyer().as_ref()));
        let tax = l.catalogue.tax(n.item, price, l.buyer().as_ref());
        let mut row = order_position::Model {
            id: 0,
            order_id: l.order.id,
            positionid: next,
            item_id: n.item,
            variation_id: n.variation,
            subevent_id: n.subevent,
            price_cents: price,
            attendee_name_parts: json!({}),
            attendee_email: None,
            voucher_id: None,
            discount_id: None,
            tax_rule_id: tax.rule_id,
            tax_rate_bps: tax.rate_bps,
            tax_value_cents: tax.value_cents,
            secret: String::new(),
            seat_id: None,
            answers: json!([]),
            addon_to_id: parent.as_ref().map(|b| b.id),
            valid_from: n.valid_from,
            valid_until: n.valid_until,
            canceled: false,
        };
        if !n.info.is_empty()
            && let Err(fields) = attendee(l, &mut row, &n.info).await?
        {
            errors.errors[i].extend(fields);
            continue;
        }
        next += 1;
        plan.lines.push(Line {
            before: None,
            after: row,
            fate: Fate::Stays,
            renew: true,
            seat_guid: n.seat.clone(),
        });
    }
    errors.check()
}

/// Whether the base position's item offers the product as an add-on (its category is one
/// of the item's add-on categories) or bundles it.
async fn offers(
    l: &Locked<'_>,
    base: &order_position::Model,
    category: Option<&category::Model>,
    product: &Product,
) -> Result<bool, DbErr> {
    if let Some(c) = category {
        let addon = item_addon::Entity::find()
            .filter(item_addon::Column::ItemId.eq(base.item_id))
            .filter(item_addon::Column::AddonCategoryId.eq(c.id))
            .one(&l.txn)
            .await?;
        if addon.is_some() {
            return Ok(true);
        }
    }
    let bundles = item_bundle::Entity::find()
        .filter(item_bundle::Column::ItemId.eq(base.item_id))
        .filter(item_bundle::Column::BundledItemId.eq(product.item_id))
        .all(&l.txn)
        .await?;
    Ok(bundles
        .iter()
        .any(|b| b.bundled_variation_id == product.variation_id))
}

/// Applies `cancel_fees`, `create_fees` and `patch_fees` (fees canceled in the same change
/// are left).
fn change_fees(l: &Locked<'_>, plan: &mut Plan, c: &OrderChange) {
    for &id in &c.cancel_fees {
        if let Some((f, canceled)) = plan.fees.iter_mut().find(|(f, _)| f.id == id) {
            *canceled = true;
            plan.notices.push((
                "pretix.event.order.changed.cancelfee",
                json!({ "fee": f.id, "fee_type": f.fee_type, "old_price": cents(f.value_cents) }),
            ));
        }
    }
    for patch in &c.patch_fees {
        let Some((f, false)) = plan.fees.iter_mut().find(|(f, _)| f.id == patch.fee) else {
            continue;
        };
        if f.value_cents == patch.value {
            continue;
        }
        plan.notices.push((
            "pretix.event.order.changed.feevalue",
            json!({
                "fee": f.id, "old_price": cents(f.value_cents), "new_price": cents(patch.value),
            }),
        ));
        let tax = l
            .catalogue
            .fee_tax(f.tax_rule_id, patch.value, l.buyer().as_ref());
        (f.value_cents, f.tax_value_cents) = (patch.value, tax.value_cents);
    }
}

/// Computes the taxes of the staying positions again with their rules' current rates,
/// keeping the net or the gross price.
fn recalculate(catalogue: &Catalogue, buyer: Option<&Buyer>, plan: &mut Plan, keep: KeepTaxes) {
    let mut notices = Vec::new();
    for line in plan.lines.iter_mut().filter(|l| l.fate == Fate::Stays) {
        let p = &mut line.after;
        let current = catalogue.fee_tax(p.tax_rule_id, p.price_cents, buyer);
        if p.tax_rule_id.is_none() || current.rate_bps == p.tax_rate_bps {
            continue;
        }
        let price = match keep {
            KeepTaxes::Gross => p.price_cents,
            KeepTaxes::Net => {
                let net = p.price_cents - p.tax_value_cents;
                net + (net * current.rate_bps + 5_000).div_euclid(10_000)
            }
        };
        let tax = catalogue.fee_tax(p.tax_rule_id, price, buyer);
        notices.push((
            "pretix.event.order.changed.price",
            json!({
                "position": p.id, "positionid": p.positionid, "addon_to": p.addon_to_id,
                "old_price": cents(p.price_cents), "new_price": cents(price),
            }),
        ));
        (p.price_cents, p.tax_rate_bps, p.tax_value_cents) = (price, tax.rate_bps, tax.value_cents);
    }
    plan.notices.extend(notices);
    plan.notices
        .push(("pretix.event.order.changed.recomputed", json!({})));
}

/// The change, checked under the locks and written.
struct Commit<'a> {
    l: Locked<'a>,
    plan: Plan,
    c: OrderChange,
    now: DateTime<Utc>,
    /// What was paid on the order and not refunded.
    covered: i64,
}

/// What an order holds its quota as, and until when.
type Hold = (HoldKind, Option<DateTime<Utc>>);

/// Whether a hold of this kind until then counts now.
fn counts((kind, until): Hold, now: DateTime<Utc>) -> bool {
    kind == HoldKind::Paid || until.is_none_or(|u| u > now)
}

impl<'a> Commit<'a> {
    async fn new(l: Locked<'a>, plan: Plan, c: OrderChange) -> Result<Self, LifecycleError> {
        let covered = l.covered().await?;
        Ok(Self {
            l,
            plan,
            c,
            now: crate::values::now(),
            covered,
        })
    }

    async fn run(mut self) -> Result<Order, LifecycleError> {
        let old_total = self.l.order.total_cents;
        let new_total = self.plan.total();
        let old_row = self.l.order.clone();
        let order_row = self.next_order(old_total, new_total).await?;
        let split_row = self.split_order(new_total, &order_row).await?;
        let voucher_ids: Vec<i64> = self
            .plan
            .lines
            .iter()
            .filter(|l| l.fate == Fate::Canceled)
            .filter_map(|l| l.after.voucher_id)
            .collect();
        let used = lock_vouchers(&self.l.txn, &voucher_ids).await?;
        let seats = self.take_seats().await?;
        self.hold(&old_row, &order_row, split_row.as_ref(), &used)
            .await?;
        for v in &used {
            let n = voucher_ids.iter().filter(|&&id| id == v.id).count() as i32;
            vouchers::redeem(&self.l.txn, v, &self.l.catalogue, -n).await?;
        }
        self.write_seats(&seats).await?;
        let split = match split_row {
            Some(row) => Some(self.write_split(row).await?),
            None => None,
        };
        self.write_positions(split.as_ref().map(|s| s.id)).await?;
        self.write_fees().await?;
        self.settle_payments(&old_row, &order_row, new_total)
            .await?;
        let became_paid = old_row.status != "p" && order_row.status == "p";
        self.l.order = (order_row.into_active_model().reset_all())
            .update(&self.l.txn)
            .await?;
        self.tell(split.as_ref(), became_paid).await?;
        self.l.finish(Some(OrderEvent::Changed)).await
    }

    /// The order's row after the change: its total, and its status as what is paid now
    /// covers it or not, as pretix: a paid order that now costs more than was paid is
    /// pending under a new term; a pending order that now costs no more than was paid is
    /// paid.
    async fn next_order(
        &self,
        old_total: i64,
        new_total: i64,
    ) -> Result<order::Model, LifecycleError> {
        let mut row = self.l.order.clone();
        row.total_cents = new_total;
        row.last_modified = Some(self.now);
        let owed = new_total - self.covered;
        if row.status == "p" && new_total > old_total && owed > 0 {
            row.status = "n".into();
            row.expires = Some(self.l.new_term(self.now).await?);
        } else if row.status == "n" && !row.require_approval && new_total < old_total && owed <= 0 {
            row.status = "p".into();
            row.payment_date = Some(self.now);
        }
        Ok(row)
    }

    /// The row of the order the split positions move to (not yet written), paid when what
    /// was paid beyond the rest of the order covers it.
    async fn split_order(
        &self,
        new_total: i64,
        order_row: &order::Model,
    ) -> Result<Option<order::Model>, LifecycleError> {
        if !self.plan.lines.iter().any(|l| l.fate == Fate::Split) {
            return Ok(None);
        }
        let total = self.plan.split_total();
        let offset = (self.covered - new_total).max(0).min(total);
        let mut row = order_row.clone();
        row.id = 0;
        row.code = String::new();
        row.datetime = self.now;
        row.secret = random_from(b"abcdefghijklmnopqrstuvwxyz0123456789", 16);
        row.total_cents = total;
        row.api_meta = json!({});
        if offset >= total && !row.require_approval {
            row.status = "p".into();
            row.payment_date = Some(self.now);
        } else {
            row.status = "n".into();
            row.payment_date = None;
            if self.l.order.status == "p" {
                row.expires = Some(self.l.new_term(self.now).await?);
            }
        }
        Ok(Some(row))
    }

    /// Locks the seats the change takes and checks that each is free for the product: not
    /// sold (unless the change gives it up), not blocked, not in a live cart, taken once. A
    /// seat is found on the position's date after the change; a seat kept while the date
    /// changes no longer matches it.
    async fn take_seats(&self) -> Result<HashMap<SeatKey, seat::Model>, LifecycleError> {
        self.check_seats_fit().await?;
        let wanted: Vec<(&Line, SeatKey)> = self
            .plan
            .lines
            .iter()
            .filter(|l| l.fate == Fate::Stays)
            .filter_map(|l| Some((l, (l.after.subevent_id, l.seat_guid.clone()?))))
            .collect();
        let keys: Vec<SeatKey> = wanted.iter().map(|(_, k)| k.clone()).collect();
        let seats = sell::lock_by_guids(&self.l.txn, self.l.event.id, &keys).await?;
        let freed: BTreeSet<i64> = self.freed_seats();
        let ids: Vec<i64> = seats.values().map(|s| s.id).collect();
        let in_carts = sell::held_by_carts(&self.l.txn, &ids, self.now).await?;
        let mut taken = BTreeSet::new();
        for (line, key) in wanted {
            let Some(s) = seats.get(&key) else {
                return refused(format!("The selected seat \"{}\" is not available.", key.1));
            };
            let unavailable = format!("The selected seat \"{}\" is not available.", s.name);
            let mut check = s.clone();
            check.sold = s.sold && !freed.contains(&s.id);
            let seating = self.l.catalogue.seating(self.l.event, key.0);
            if let Some(why) = seating.refusal(line.after.item_id, Some(&check)) {
                return if check.sold {
                    refused(unavailable)
                } else {
                    refused(why)
                };
            }
            if s.blocked || in_carts.contains_key(&s.id) || !taken.insert(s.id) {
                return refused(unavailable);
            }
        }
        Ok(seats)
    }

    /// Refuses a patched position whose product or date after the change does not fit its
    /// seat, as pretix: a product sold by seat there needs one, another takes none, and a
    /// seat kept while the date changes is a seat of the old date.
    async fn check_seats_fit(&self) -> Result<(), LifecycleError> {
        for line in self.plan.lines.iter().filter(|l| l.fate == Fate::Stays) {
            let (Some(b), a) = (&line.before, &line.after) else {
                continue;
            };
            let dropped = self.seat_dropped(line);
            let moved = (b.item_id, b.subevent_id) != (a.item_id, a.subevent_id);
            if !moved && line.seat_guid.is_none() && !dropped {
                continue;
            }
            let kept = b.seat_id.filter(|_| line.seat_guid.is_none() && !dropped);
            let seated = (self.l.catalogue)
                .seating(self.l.event, a.subevent_id)
                .sold_by_seat(a.item_id);
            if seated && line.seat_guid.is_none() && kept.is_none() {
                return refused("The selected product requires you to select a seat.");
            }
            if !seated && line.seat_guid.is_some() {
                return refused("The selected product does not allow to select a seat.");
            }
            if let Some(seat) = kept.filter(|_| b.subevent_id != a.subevent_id) {
                let name = seat::Entity::find_by_id(seat)
                    .one(&self.l.txn)
                    .await?
                    .map(|s| s.name)
                    .unwrap_or_default();
                return refused(format!(
                    "You selected seat \"{name}\" for a date that does not match the selected \
                     ticket date. Please choose a seat again."
                ));
            }
        }
        Ok(())
    }

    /// The seats positions give up: those of canceled positions and those changed.
    fn freed_seats(&self) -> BTreeSet<i64> {
        self.plan
            .lines
            .iter()
            .filter(|l| l.fate == Fate::Canceled || l.seat_guid.is_some() || self.seat_dropped(l))
            .filter_map(|l| l.before.as_ref()?.seat_id)
            .collect()
    }

    fn seat_dropped(&self, line: &Line) -> bool {
        let Some(before) = &line.before else {
            return false;
        };
        self.c
            .patch_positions
            .iter()
            .any(|p| p.position == before.id && p.seat == Some(None))
    }

    /// Moves the quota holds from what the order held to what it (and the split order)
    /// holds after the change. What the change adds beyond what was held must be left,
    /// unless the caller said not to check.
    async fn hold(
        &self,
        old: &order::Model,
        new: &order::Model,
        split: Option<&order::Model>,
        used: &[crate::db::entities::voucher::Model],
    ) -> Result<(), LifecycleError> {
        let catalogue = &self.l.catalogue;
        let old_key = hold_of(old);
        let before: Vec<Product> = self.l.positions.iter().map(product_of).collect();
        let mut after: Vec<(Hold, Vec<Product>)> = Vec::new();
        let staying: Vec<Product> = self.plan.staying().map(|l| product_of(&l.after)).collect();
        after.push((hold_of(new), staying));
        if let Some(s) = split {
            let moved = self.plan.lines.iter().filter(|l| l.fate == Fate::Split);
            after.push((hold_of(s), moved.map(|l| product_of(&l.after)).collect()));
        }
        let mut diff: Demand = Demand::new();
        if counts(old_key, self.now) {
            for (q, n) in demand(catalogue, &before) {
                *diff.entry(q).or_default() -= n;
            }
        }
        for (_, products) in after.iter().filter(|(k, _)| counts(*k, self.now)) {
            for (q, n) in demand(catalogue, products) {
                *diff.entry(q).or_default() += n;
            }
        }
        let mut ids: Vec<i64> = diff.keys().copied().collect();
        ids.extend(demand(catalogue, &before).keys());
        ids.extend(
            used.iter()
                .flat_map(|v| vouchers::blocked_quotas(v, catalogue)),
        );
        ids.sort_unstable();
        ids.dedup();
        let quotas = availability::lock_quotas(&self.l.txn, &ids).await?;
        let more: Demand = diff.into_iter().filter(|(_, n)| *n > 0).collect();
        if self.c.check_quotas && !more.is_empty() {
            let short = availability::short_quotas(&self.l.txn, &quotas, &more).await?;
            if let Some(q) = short
                .first()
                .and_then(|id| quotas.iter().find(|q| q.id == *id))
            {
                return refused(format!(
                    "The quota {} does not have enough capacity left to perform the operation.",
                    q.name
                ));
            }
        }
        if counts(old_key, self.now) {
            let (kind, until) = old_key;
            hold_positions(&self.l.txn, catalogue, &self.l.positions, kind, until, -1).await?;
        }
        for ((kind, until), products) in after.iter().filter(|(k, _)| counts(*k, self.now)) {
            for (q, n) in demand(catalogue, products) {
                availability::adjust(&self.l.txn, &[q], *kind, *until, n).await?;
            }
        }
        Ok(())
    }

    /// Gives up the seats the change frees and sells those it takes.
    async fn write_seats(&mut self, seats: &HashMap<SeatKey, seat::Model>) -> Result<(), DbErr> {
        let freed: Vec<i64> = self.freed_seats().into_iter().collect();
        set_sold(&self.l, &freed, false).await?;
        let mut taken = Vec::new();
        for line in &mut self.plan.lines {
            if line.fate != Fate::Stays {
                continue;
            }
            if let Some(guid) = &line.seat_guid {
                let key = (line.after.subevent_id, guid.clone());
                line.after.seat_id = seats.get(&key).map(|s| s.id);
                taken.extend(line.after.seat_id);
            }
        }
        for p in &self.c.patch_positions {
            if p.seat == Some(None)
                && let Some(line) = self.plan.line(p.position)
            {
                line.after.seat_id = None;
            }
        }
        set_sold(&self.l, &taken, true).await
    }

    /// Writes the order the split positions move to, with the offsetting payment and refund
    /// when what was paid covers some of it.
    async fn write_split(&self, row: order::Model) -> Result<order::Model, LifecycleError> {
        let mut template = row.into_active_model();
        template.id = NotSet;
        template.code = NotSet;
        let txn = &self.l.txn;
        let split = insert_with_codes(txn, vec![template])
            .await?
            .pop()
            .ok_or_else(|| DbErr::Custom("the split order was not written".into()))?;
        let offset = (self.covered - self.plan.total())
            .max(0)
            .min(split.total_cents);
        if offset > 0 {
            order_payment::ActiveModel {
                id: NotSet,
                order_id: Set(split.id),
                local_id: Set(1),
                state: Set("confirmed".into()),
                amount_cents: Set(offset),
                provider: Set("offsetting".into()),
                created: Set(self.now),
                payment_date: Set(Some(self.now)),
                details: Set(json!({ "orders": [self.l.order.code] })),
            }
            .insert(txn)
            .await?;
            let refund = order_refund::ActiveModel {
                state: Set("done".into()),
                source: Set("admin".into()),
                amount_cents: Set(offset),
                payment_id: Set(None),
                provider: Set("offsetting".into()),
                execution_date: Set(Some(self.now)),
                details: Set(json!({ "orders": [split.code] })),
                ..Default::default()
            };
            super::refunds::insert(&self.l, refund).await?;
        } else if split.total_cents == 0 && split.status == "p" {
            add_confirmed_payment(txn, &split, self.now).await?;
        }
        Ok(split)
    }

    /// Writes the positions: canceled ones marked (their secrets revoked), changed ones with
    /// new secrets where what the secret says changed, split ones moved with new secrets,
    /// new ones added.
    async fn write_positions(&mut self, split_id: Option<i64>) -> Result<(), LifecycleError> {
        let (txn, ev) = (&self.l.txn, self.l.event);
        let cache = self.l.seller.cache.current().await;
        let values = settings::of_event(txn, self.l.seller.settings, cache, ev).await?;
        let generator = Generator::of_settings(|k| values.get(k));
        let key = secrets::signing_key(txn, generator, ev).await?;
        let revoke_changed = generator.uses_revocation_list();
        let mut added = Vec::new();
        for line in &mut self.plan.lines {
            let p = &mut line.after;
            let old_secret = line.before.as_ref().map(|b| b.secret.clone());
            let renew = match line.fate {
                Fate::Canceled => {
                    p.canceled = true;
                    false
                }
                Fate::Split => {
                    p.order_id = split_id.unwrap_or(p.order_id);
                    true
                }
                Fate::Stays => line.renew && (revoke_changed || line.before.is_none()),
            };
            if renew {
                p.secret = secrets::generate(generator, &key, TicketFacts::of(p));
            }
            let revoke = match line.fate {
                Fate::Canceled => true,
                _ => renew && revoke_changed,
            };
            if let (true, Some(secret)) = (revoke, &old_secret) {
                secrets::revoke(txn, ev.id, p.id, secret, self.now).await?;
            }
            match &line.before {
                Some(before) if before == p => {}
                Some(_) => {
                    p.clone()
                        .into_active_model()
                        .reset_all()
                        .update(txn)
                        .await?;
                }
                None => {
                    let mut row = p.clone().into_active_model().reset_all();
                    row.id = NotSet;
                    added.push(row);
                }
            }
        }
        if !added.is_empty() {
            let rows = order_position::Entity::insert_many(added)
                .exec_with_returning(txn)
                .await?;
            for row in rows {
                let data = json!({
                    "position": row.id, "positionid": row.positionid, "item": row.item_id,
                    "variation": row.variation_id, "addon_to": row.addon_to_id,
                    "price": cents(row.price_cents), "subevent": row.subevent_id,
                    "seat": row.seat_id,
                });
                self.plan
                    .notices
                    .push(("pretix.event.order.changed.add", data));
            }
        }
        Ok(())
    }

    /// Writes the fees: canceled ones marked, patched ones, new ones.
    async fn write_fees(&mut self) -> Result<(), DbErr> {
        let txn = &self.l.txn;
        for (f, canceled) in &self.plan.fees {
            let mut row = f.clone().into_active_model().reset_all();
            row.canceled = Set(*canceled);
            row.update(txn).await?;
        }
        for f in &self.plan.new_fees {
            let row = fee_row(
                &self.l.catalogue,
                self.l.buyer().as_ref(),
                self.l.order.id,
                f,
            )
            .insert(txn)
            .await?;
            self.plan.notices.push((
                "pretix.event.order.changed.addfee",
                json!({ "fee": row.id }),
            ));
        }
        Ok(())
    }

    /// Keeps the payments in step with the new total: an order paid by the change cancels
    /// its open payments (a free one gets a confirmed `free` payment); an order still
    /// pending owes the rest, which its open payment now asks for.
    async fn settle_payments(
        &self,
        old: &order::Model,
        new: &order::Model,
        new_total: i64,
    ) -> Result<(), LifecycleError> {
        if new_total == old.total_cents {
            return Ok(());
        }
        if new.status == "p" && old.status != "p" {
            self.l.cancel_open_payments().await?;
            if new_total == 0 {
                add_confirmed_payment(&self.l.txn, new, self.now).await?;
            }
            return Ok(());
        }
        let owed = new_total - self.covered;
        for p in self.l.open_payments().await? {
            let mut row = p.into_active_model();
            if owed > 0 {
                row.amount_cents = Set(owed);
            } else {
                row.state = Set("canceled".into());
            }
            row.update(&self.l.txn).await?;
        }
        Ok(())
    }

    /// Tells the webhooks of every step, the customers by mail when asked, and the split
    /// order's webhooks where it came from.
    async fn tell(
        &mut self,
        split: Option<&order::Model>,
        became_paid: bool,
    ) -> Result<(), LifecycleError> {
        let ev = self.l.event;
        for (action, mut data) in std::mem::take(&mut self.plan.notices) {
            if action == "pretix.event.order.changed.split"
                && let (Some(s), Value::Object(m)) = (split, &mut data)
            {
                m.insert("new_order".into(), s.code.clone().into());
            }
            self.l.notify(action, data).await?;
        }
        if became_paid {
            self.l.notify("pretix.event.order.paid", json!({})).await?;
        }
        let shop = self.l.seller.shop();
        if let Some(s) = split {
            let from = json!({ "original_order": self.l.order.code });
            let notice =
                webhooks::Notice::order(ev, &s.code, "pretix.event.order.changed.split_from", from);
            webhooks::notify(&self.l.txn, &notice).await?;
        }
        let step = Step::Changed {
            reissue: self.c.reissue_invoice,
        };
        let mut invoices = vec![self.l.invoices(None, step).await?];
        if let Some(s) = split {
            invoices.push(self.l.invoices(Some(s), step).await?);
        }
        if !self.c.send_email {
            return Ok(());
        }
        let mut orders = vec![self.l.order.clone()];
        orders.extend(split.cloned());
        let shown = super::complete(&self.l.txn, orders).await?;
        for (o, made) in shown.into_iter().zip(invoices) {
            if let Some(m) = mails::changed(ev, &self.l.catalogue, &o, &shop) {
                mail::queue(&self.l.txn, m.with_invoices(made)).await?;
            }
        }
        Ok(())
    }
}

/// Marks these seats sold or free.
async fn set_sold(l: &Locked<'_>, ids: &[i64], sold: bool) -> Result<(), DbErr> {
    if ids.is_empty() {
        return Ok(());
    }
    seat::Entity::update_many()
        .col_expr(seat::Column::Sold, Expr::value(sold))
        .filter(seat::Column::Id.is_in(ids.iter().copied()))
        .exec(&l.txn)
        .await?;
    Ok(())
}
