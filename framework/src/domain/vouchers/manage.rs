//! Vouchers as the API manages them: their fields and pretix's rules for them, generated
//! codes, and the quota a blocking voucher holds, kept in step with every change.
//!
//! A voucher that blocks quota holds its unused redemptions (`max_usages - redeemed`) of
//! [`blocked_quotas`] until `valid_until`. Every write locks the voucher first and then the
//! quotas concerned (old and new), as order placement does, takes the old hold back and
//! places the new one in the same transaction.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    FromQueryResult, QueryFilter, QueryOrder, Select, Set, Statement,
};

use super::{PriceMode, blocked_quotas};
use crate::db::entities::{
    event, item_variation, quota, seat, subevent, voucher, waiting_list_entry,
};
use crate::db::{begin_write, is_unique_violation};
use crate::domain::availability::{self, Demand, HoldKind};
use crate::domain::items::Invalid;
use crate::domain::sale::Catalogue;
use crate::domain::seating::{self, SeatScope};
use crate::domain::tokens::{UNAMBIGUOUS, random_from};
use crate::domain::webhooks;
use serde_json::json;

/// Length of generated codes.
pub const CODE_LENGTH: usize = 16;

/// Shortest code that may be chosen (pretix's limit).
pub const MIN_CODE_LENGTH: usize = 5;

/// Every writable field of a voucher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoucherFields {
    /// The code; `None` generates one for a new voucher and keeps that of an existing one.
    pub code: Option<String>,
    /// How often it can be redeemed; at least 1 and not below what was redeemed.
    pub max_usages: i32,
    /// End of validity.
    pub valid_until: Option<DateTime<Utc>>,
    /// Holds quota for its unused redemptions.
    pub block_quota: bool,
    /// Redeemable even when the quota is used up; blocks without checking what is left.
    pub allow_ignore_quota: bool,
    /// How it changes the price.
    pub price_mode: PriceMode,
    /// Price or amount in cents, or percentage in hundredths, for the price mode.
    pub value_cents: i64,
    /// Item it is limited to.
    pub item_id: Option<i64>,
    /// Variation of that item it is limited to.
    pub variation_id: Option<i64>,
    /// Quota it is limited to; never together with an item.
    pub quota_id: Option<i64>,
    /// Identifier (`seat_guid`) of the seat of the event it is limited to.
    pub seat: Option<String>,
    /// Date of a series it is limited to; needed for blocking in a series.
    pub subevent_id: Option<i64>,
    /// Tag for grouping.
    pub tag: String,
    /// Internal comment.
    pub comment: String,
    /// Shows items hidden without a voucher.
    pub show_hidden_items: bool,
    /// Offers every add-on free of charge with the product it is redeemed for.
    pub all_addons_included: bool,
    /// Includes what comes bundled with the product it is redeemed for free of charge.
    pub all_bundles_included: bool,
}

impl Default for VoucherFields {
    fn default() -> Self {
        Self {
            code: None,
            max_usages: 1,
            valid_until: None,
            block_quota: false,
            allow_ignore_quota: false,
            price_mode: PriceMode::None,
            value_cents: 0,
            item_id: None,
            variation_id: None,
            quota_id: None,
            seat: None,
            subevent_id: None,
            tag: String::new(),
            comment: String::new(),
            show_hidden_items: true,
            all_addons_included: false,
            all_bundles_included: false,
        }
    }
}

/// A voucher as shown: the row and the identifier of its seat.
#[derive(Debug, Clone)]
pub struct Voucher {
    /// The row.
    pub row: voucher::Model,
    /// The seat's `seat_guid`.
    pub seat: Option<String>,
}

impl Voucher {
    /// The writable fields, as they are now.
    pub fn fields(&self) -> VoucherFields {
        let r = &self.row;
        VoucherFields {
            code: Some(r.code.clone()),
            max_usages: r.max_usages,
            valid_until: r.valid_until,
            block_quota: r.block_quota,
            allow_ignore_quota: r.allow_ignore_quota,
            price_mode: PriceMode::parse(&r.price_mode).unwrap_or(PriceMode::None),
            value_cents: r.value_cents,
            item_id: r.item_id,
            variation_id: r.variation_id,
            quota_id: r.quota_id,
            seat: self.seat.clone(),
            subevent_id: r.subevent_id,
            tag: r.tag.clone(),
            comment: r.comment.clone(),
            show_hidden_items: r.show_hidden_items,
            all_addons_included: r.all_addons_included,
            all_bundles_included: r.all_bundles_included,
        }
    }
}

/// Why a voucher was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Fields that break a rule, each with its message; nothing was written.
    #[error("fields that break a rule, each with its message")]
    Invalid(Invalid),
    /// It was deleted meanwhile.
    #[error("it was deleted meanwhile")]
    Gone,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why a voucher was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// It was redeemed at least once.
    #[error("it was redeemed at least once")]
    Redeemed,
    /// It was deleted meanwhile.
    #[error("it was deleted meanwhile")]
    Gone,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why a batch of vouchers was not created.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The errors of each voucher, in the order sent (empty for those without); nothing was
    /// written.
    #[error("the errors of each voucher, in the order sent (empty for those without)")]
    Invalid(Vec<Invalid>),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Filters of the voucher list; each one given must match.
#[derive(Debug, Clone, Default)]
pub struct VoucherFilter {
    /// The code, ignoring case.
    pub code: Option<String>,
    /// Exactly this many usages allowed.
    pub max_usages: Option<i32>,
    /// Redeemed exactly this often.
    pub redeemed: Option<i32>,
    /// Blocking or not.
    pub block_quota: Option<bool>,
    /// Ignoring quota or not.
    pub allow_ignore_quota: Option<bool>,
    /// This price mode.
    pub price_mode: Option<PriceMode>,
    /// This value, in cents (or hundredths of a percent).
    pub value_cents: Option<i64>,
    /// Limited to this item.
    pub item_id: Option<i64>,
    /// Limited to this variation.
    pub variation_id: Option<i64>,
    /// Limited to this quota.
    pub quota_id: Option<i64>,
    /// With this tag.
    pub tag: Option<String>,
    /// Limited to this date.
    pub subevent_id: Option<i64>,
    /// `true`: redeemable now (uses left, not expired); `false`: used up or expired.
    pub active: Option<bool>,
}

/// What the voucher list can be ordered by; ties are broken by ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoucherOrder {
    /// ID (the default).
    Id,
    /// Code.
    Code,
    /// Usages allowed.
    MaxUsages,
    /// End of validity.
    ValidUntil,
    /// Value.
    Value,
    /// Redemptions.
    Redeemed,
}

/// The event's vouchers that pass the filter, in the order asked for.
pub fn query(
    event_id: i64,
    f: &VoucherFilter,
    order: VoucherOrder,
    descending: bool,
) -> Select<voucher::Entity> {
    use voucher::Column as C;
    let mut q = voucher::Entity::find().filter(C::EventId.eq(event_id));
    if let Some(code) = &f.code {
        q = q.filter(Expr::expr(Func::lower(Expr::col(C::Code))).eq(code.to_lowercase()));
    }
    let exact: [(C, Option<i64>); 7] = [
        (C::MaxUsages, f.max_usages.map(i64::from)),
        (C::Redeemed, f.redeemed.map(i64::from)),
        (C::ValueCents, f.value_cents),
        (C::ItemId, f.item_id),
        (C::VariationId, f.variation_id),
        (C::QuotaId, f.quota_id),
        (C::SubeventId, f.subevent_id),
    ];
    for (col, value) in exact {
        if let Some(v) = value {
            q = q.filter(col.eq(v));
        }
    }
    if let Some(b) = f.block_quota {
        q = q.filter(C::BlockQuota.eq(b));
    }
    if let Some(b) = f.allow_ignore_quota {
        q = q.filter(C::AllowIgnoreQuota.eq(b));
    }
    if let Some(m) = f.price_mode {
        q = q.filter(C::PriceMode.eq(m.as_str()));
    }
    if let Some(tag) = &f.tag {
        q = q.filter(C::Tag.eq(tag.as_str()));
    }
    if let Some(active) = f.active {
        let now = crate::values::now();
        let usable = Expr::col(C::Redeemed)
            .lt(Expr::col(C::MaxUsages))
            .and(C::ValidUntil.is_null().or(C::ValidUntil.gt(now)));
        q = q.filter(if active { usable } else { usable.not() });
    }
    let col = match order {
        VoucherOrder::Id => C::Id,
        VoucherOrder::Code => C::Code,
        VoucherOrder::MaxUsages => C::MaxUsages,
        VoucherOrder::ValidUntil => C::ValidUntil,
        VoucherOrder::Value => C::ValueCents,
        VoucherOrder::Redeemed => C::Redeemed,
    };
    if descending {
        q.order_by_desc(col).order_by_desc(C::Id)
    } else {
        q.order_by_asc(col).order_by_asc(C::Id)
    }
}

/// A voucher of the event.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<Voucher>, DbErr> {
    let row = voucher::Entity::find_by_id(id)
        .filter(voucher::Column::EventId.eq(event_id))
        .one(db)
        .await?;
    Ok(complete(db, row.into_iter().collect()).await?.pop())
}

/// Adds the seat identifiers to voucher rows: one query, whatever their number.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows: Vec<voucher::Model>,
) -> Result<Vec<Voucher>, DbErr> {
    let seat_ids: HashSet<i64> = rows.iter().filter_map(|r| r.seat_id).collect();
    let guids: HashMap<i64, String> = if seat_ids.is_empty() {
        HashMap::new()
    } else {
        seat::Entity::find()
            .filter(seat::Column::Id.is_in(seat_ids))
            .all(db)
            .await?
            .into_iter()
            .map(|s| (s.id, s.seat_guid))
            .collect()
    };
    Ok(rows
        .into_iter()
        .map(|row| Voucher {
            seat: row.seat_id.and_then(|s| guids.get(&s).cloned()),
            row,
        })
        .collect())
}

/// Creates a voucher, holding its quota when it blocks.
pub async fn create(
    db: &DatabaseConnection,
    ev: &event::Model,
    f: VoucherFields,
) -> Result<Voucher, WriteError> {
    let txn = begin_write(db).await?;
    let saved = insert(&txn, ev, &f).await?.map_err(WriteError::Invalid)?;
    notify(&txn, ev, saved.row.id, "pretix.event.voucher.added").await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Tells the organizer's webhooks of a change of a voucher.
async fn notify(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    voucher_id: i64,
    action: &'static str,
) -> Result<(), DbErr> {
    let notice = webhooks::Notice::about(ev.id, action, json!({"voucher_id": voucher_id}));
    webhooks::notify(txn, &notice).await
}

/// Creates every voucher or none: codes must differ from each other and from the event's
/// vouchers, seats from each other, and quota must suffice for all blocking ones together.
pub async fn create_many(
    db: &DatabaseConnection,
    ev: &event::Model,
    all: Vec<VoucherFields>,
) -> Result<Vec<Voucher>, BatchError> {
    let mut errors: Vec<Invalid> = Vec::with_capacity(all.len());
    let (mut codes, mut seats) = (HashSet::new(), HashSet::new());
    for f in &all {
        let mut invalid = Invalid::new();
        if let Some(s) = &f.seat
            && !seats.insert(s.clone())
        {
            invalid.push(("seat", "Duplicate seat ID in request.".into()));
        }
        if let Some(c) = &f.code
            && !codes.insert(c.trim().to_lowercase())
        {
            invalid.push(("code", "Duplicate voucher code in request.".into()));
        }
        errors.push(invalid);
    }
    if errors.iter().any(|e| !e.is_empty()) {
        return Err(BatchError::Invalid(errors));
    }
    let txn = begin_write(db).await?;
    let mut saved = Vec::with_capacity(all.len());
    for (n, f) in all.iter().enumerate() {
        match insert(&txn, ev, f).await? {
            Ok(v) => {
                notify(&txn, ev, v.row.id, "pretix.event.voucher.added").await?;
                saved.push(v);
            }
            Err(invalid) => {
                errors[n] = invalid;
                return Err(BatchError::Invalid(errors));
            }
        }
    }
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Inserts a voucher inside an open write transaction, holding its quota when it blocks;
/// field errors when it breaks a rule. After field errors the transaction may hold changes
/// already and must be rolled back.
pub async fn insert(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    f: &VoucherFields,
) -> Result<Result<Voucher, Invalid>, DbErr> {
    write(txn, ev, None, f).await
}

/// Replaces every writable field of a voucher: the hold of what it blocked is taken back and
/// that of what it blocks now placed, in one transaction.
pub async fn update(
    db: &DatabaseConnection,
    ev: &event::Model,
    id: i64,
    f: VoucherFields,
) -> Result<Voucher, WriteError> {
    let txn = begin_write(db).await?;
    let old = lock(&txn, ev.id, id).await?.ok_or(WriteError::Gone)?;
    let saved = write(&txn, ev, Some(&old), &f)
        .await?
        .map_err(WriteError::Invalid)?;
    notify(&txn, ev, saved.row.id, "pretix.event.voucher.changed").await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Deletes a voucher that was never redeemed, giving back the quota it held. The waiting
/// list entries it was sent to go with it, as in pretix.
pub async fn delete(
    db: &DatabaseConnection,
    ev: &event::Model,
    id: i64,
) -> Result<(), DeleteError> {
    let txn = begin_write(db).await?;
    let v = lock(&txn, ev.id, id).await?.ok_or(DeleteError::Gone)?;
    if v.redeemed > 0 {
        return Err(DeleteError::Redeemed);
    }
    notify(&txn, ev, v.id, "pretix.event.voucher.deleted").await?;
    let catalogue =
        Catalogue::load(&txn, ev, &v.subevent_id.into_iter().collect::<Vec<_>>()).await?;
    availability::lock_quotas(&txn, &blocked_quotas(&v, &catalogue)).await?;
    release(&txn, &v, &catalogue).await?;
    waiting_list_entry::Entity::delete_many()
        .filter(waiting_list_entry::Column::VoucherId.eq(v.id))
        .exec(&txn)
        .await?;
    voucher::Entity::delete_by_id(v.id).exec(&txn).await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// Reads a voucher of the event and locks it until the transaction ends (on PostgreSQL).
async fn lock(
    txn: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<voucher::Model>, DbErr> {
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    voucher::Model::find_by_statement(Statement::from_sql_and_values(
        backend,
        format!("SELECT * FROM vouchers WHERE id = $1 AND event_id = $2{lock}"),
        [id.into(), event_id.into()],
    ))
    .one(txn)
    .await
}

/// Unused redemptions: what a blocking voucher holds.
fn unused(v: &voucher::Model) -> i64 {
    i64::from(Ord::max(v.max_usages - v.redeemed, 0))
}

/// Gives back what a voucher holds of its quotas, which must be locked.
async fn release(
    txn: &impl ConnectionTrait,
    v: &voucher::Model,
    catalogue: &Catalogue,
) -> Result<(), DbErr> {
    let quotas = blocked_quotas(v, catalogue);
    availability::adjust(txn, &quotas, HoldKind::Voucher, v.valid_until, -unused(v)).await
}

/// Whether placing the hold of `new` must check what is left, as pretix decides it: only
/// for a voucher that starts to block (created, turned blocking, valid again), blocks other
/// quotas, or blocks more than before. Vouchers that ignore quota or have expired never do,
/// so that changing a comment never fails on a quota that was oversold meanwhile.
fn needs_check(
    old: Option<(&voucher::Model, &[i64])>,
    new: &voucher::Model,
    new_quotas: &[i64],
    now: DateTime<Utc>,
) -> bool {
    let expired = |v: &voucher::Model| v.valid_until.is_some_and(|t| t <= now);
    if new.allow_ignore_quota || !new.block_quota || expired(new) {
        return false;
    }
    let Some((old, old_quotas)) = old else {
        return true;
    };
    let set = |q: &[i64]| q.iter().copied().collect::<HashSet<i64>>();
    !old.block_quota
        || expired(old)
        || set(old_quotas) != set(new_quotas)
        || unused(new) > unused(old)
}

/// Validates and writes a voucher, new (`old` is `None`) or changed (`old` locked), moving
/// its hold along.
async fn write(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    old: Option<&voucher::Model>,
    f: &VoucherFields,
) -> Result<Result<Voucher, Invalid>, DbErr> {
    let dates: Vec<i64> = old
        .and_then(|o| o.subevent_id)
        .into_iter()
        .chain(f.subevent_id)
        .collect();
    let catalogue = Catalogue::load(txn, ev, &dates).await?;
    let (code, seat_id) = match check(txn, ev, old, f, &catalogue).await? {
        Ok(checked) => checked,
        Err(invalid) => return Ok(Err(invalid)),
    };
    let new = voucher::Model {
        id: old.map_or(0, |o| o.id),
        event_id: ev.id,
        code,
        max_usages: f.max_usages,
        redeemed: old.map_or(0, |o| o.redeemed),
        valid_until: f.valid_until,
        block_quota: f.block_quota,
        allow_ignore_quota: f.allow_ignore_quota,
        price_mode: f.price_mode.as_str().into(),
        value_cents: f.value_cents,
        item_id: f.item_id,
        variation_id: f.variation_id,
        quota_id: f.quota_id,
        seat_id,
        subevent_id: f.subevent_id,
        tag: f.tag.clone(),
        comment: f.comment.clone(),
        show_hidden_items: f.show_hidden_items,
        all_addons_included: f.all_addons_included,
        all_bundles_included: f.all_bundles_included,
        created: old.map_or_else(crate::values::now, |o| o.created),
    };
    let new_quotas = blocked_quotas(&new, &catalogue);
    if new.block_quota && new_quotas.is_empty() {
        return Ok(Err(vec![(
            "block_quota",
            "The selected product is not assigned to a quota, so no quota can be blocked.".into(),
        )]));
    }
    let old_quotas = old
        .map(|o| blocked_quotas(o, &catalogue))
        .unwrap_or_default();
    let mut concerned: Vec<i64> = old_quotas.iter().chain(&new_quotas).copied().collect();
    concerned.sort_unstable();
    concerned.dedup();
    let locked = availability::lock_quotas(txn, &concerned).await?;
    if let Some(o) = old {
        release(txn, o, &catalogue).await?;
    }
    let n = unused(&new);
    if needs_check(
        old.map(|o| (o, old_quotas.as_slice())),
        &new,
        &new_quotas,
        crate::values::now(),
    ) {
        let demand: Demand = new_quotas.iter().map(|&q| (q, n)).collect();
        if !availability::short_ahead_of_waiting_list(txn, &locked, &demand)
            .await?
            .is_empty()
        {
            return Ok(Err(vec![("block_quota", SOLD_OUT.into())]));
        }
    }
    availability::adjust(txn, &new_quotas, HoldKind::Voucher, new.valid_until, n).await?;
    let saved = match save(txn, new).await {
        Ok(saved) => saved,
        Err(e) if is_unique_violation(&e) => return Ok(Err(vec![("code", CODE_TAKEN.into())])),
        Err(e) => return Err(e),
    };
    Ok(Ok(Voucher {
        row: saved,
        seat: f.seat.clone(),
    }))
}

/// The message when a blocking voucher finds too little quota left.
pub const SOLD_OUT: &str = "There is not enough quota available to block the requested number of \
                            tickets: the selected product or quota is sold out or fully reserved.";

const CODE_TAKEN: &str = "A voucher with this code already exists.";

async fn save(txn: &impl ConnectionTrait, v: voucher::Model) -> Result<voucher::Model, DbErr> {
    let is_new = v.id == 0;
    let mut row = voucher::ActiveModel {
        event_id: Set(v.event_id),
        code: Set(v.code),
        max_usages: Set(v.max_usages),
        valid_until: Set(v.valid_until),
        block_quota: Set(v.block_quota),
        allow_ignore_quota: Set(v.allow_ignore_quota),
        price_mode: Set(v.price_mode),
        value_cents: Set(v.value_cents),
        item_id: Set(v.item_id),
        variation_id: Set(v.variation_id),
        quota_id: Set(v.quota_id),
        seat_id: Set(v.seat_id),
        subevent_id: Set(v.subevent_id),
        tag: Set(v.tag),
        comment: Set(v.comment),
        show_hidden_items: Set(v.show_hidden_items),
        all_addons_included: Set(v.all_addons_included),
        all_bundles_included: Set(v.all_bundles_included),
        ..Default::default()
    };
    if is_new {
        row.redeemed = Set(0);
        row.created = Set(v.created);
        row.insert(txn).await
    } else {
        // `redeemed` and `created` stay as they are: order placement changes the former.
        row.id = Set(v.id);
        row.update(txn).await
    }
}

/// Whether another voucher of the event has this code, ignoring case.
async fn code_taken(
    txn: &impl ConnectionTrait,
    event_id: i64,
    code: &str,
    except: Option<i64>,
) -> Result<bool, DbErr> {
    let stmt = Statement::from_sql_and_values(
        txn.get_database_backend(),
        "SELECT id FROM vouchers WHERE event_id = $1 AND LOWER(code) = LOWER($2) AND id <> $3",
        [event_id.into(), code.into(), except.unwrap_or(0).into()],
    );
    Ok(txn.query_one_raw(stmt).await?.is_some())
}

/// A new code no voucher of the event has.
async fn generate_code(txn: &impl ConnectionTrait, event_id: i64) -> Result<String, DbErr> {
    loop {
        let code = random_from(UNAMBIGUOUS, CODE_LENGTH);
        if !code_taken(txn, event_id, &code, None).await? {
            return Ok(code);
        }
    }
}

fn no_object(id: impl std::fmt::Display) -> String {
    format!("Invalid pk \"{id}\" - object does not exist.")
}

/// Checks pretix's rules for a voucher of `ev`; gives its code (the one sent, the old one, or
/// a new one) and the ID of its seat.
async fn check(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    old: Option<&voucher::Model>,
    f: &VoucherFields,
    catalogue: &Catalogue,
) -> Result<Result<(String, Option<i64>), Invalid>, DbErr> {
    let mut invalid = Invalid::new();
    let code = match (&f.code, old) {
        (Some(c), _) => c.trim().to_owned(),
        (None, Some(o)) => o.code.clone(),
        (None, None) => generate_code(txn, ev.id).await?,
    };
    if f.code.is_some() {
        if code.chars().count() < MIN_CODE_LENGTH {
            invalid.push((
                "code",
                format!("Ensure this field has at least {MIN_CODE_LENGTH} characters."),
            ));
        } else if code_taken(txn, ev.id, &code, old.map(|o| o.id)).await? {
            invalid.push(("code", CODE_TAKEN.into()));
        }
    }
    if f.max_usages < 1 {
        invalid.push((
            "max_usages",
            "Ensure this value is greater than or equal to 1.".into(),
        ));
    } else if let Some(o) = old.filter(|o| f.max_usages < o.redeemed) {
        invalid.push((
            "max_usages",
            format!(
                "This voucher has already been redeemed {} times. You cannot reduce the \
                 maximum number of usages below this number.",
                o.redeemed
            ),
        ));
    }
    if f.value_cents < 0 {
        invalid.push((
            "value",
            "Ensure this value is greater than or equal to 0.".into(),
        ));
    } else if f.price_mode == PriceMode::Percent && f.value_cents > 10_000 {
        invalid.push(("value", "A percentage cannot be more than 100.".into()));
    }
    check_product(txn, ev, f, catalogue, &mut invalid).await?;
    let seat_id = check_seat(txn, ev, old, f, &mut invalid).await?;
    Ok(if invalid.is_empty() {
        Ok((code, seat_id))
    } else {
        Err(invalid)
    })
}

/// Item, variation, quota and date: pretix's `clean_item_properties` and `clean_subevent`.
async fn check_product(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    f: &VoucherFields,
    catalogue: &Catalogue,
    invalid: &mut Invalid,
) -> Result<(), DbErr> {
    let item = match f.item_id {
        Some(id) => match catalogue.item(id) {
            Some(item) => Some(item),
            None => {
                invalid.push(("item", no_object(id)));
                return Ok(());
            }
        },
        None => None,
    };
    if let Some(q) = f.quota_id {
        let found = quota::Entity::find_by_id(q)
            .filter(quota::Column::EventId.eq(ev.id))
            .one(txn)
            .await?;
        if found.is_none() {
            invalid.push(("quota", no_object(q)));
        } else if item.is_some() {
            invalid.push((
                "quota",
                "You cannot select a quota and a specific product at the same time.".into(),
            ));
        }
    }
    match (item, f.variation_id) {
        (Some(item), Some(v)) if item.has_variations => {
            let belongs = item_variation::Entity::find_by_id(v)
                .one(txn)
                .await?
                .is_some_and(|var| var.item_id == item.id);
            if !belongs {
                invalid.push((
                    "variation",
                    "This variation does not belong to this product.".into(),
                ));
            }
        }
        (_, Some(_)) => invalid.push((
            "variation",
            "You cannot select a variation without having selected a product that provides \
             variations."
                .into(),
        )),
        (Some(item), None) if item.has_variations && f.block_quota => invalid.push((
            "block_quota",
            "You can only block quota if you specify a specific product variation. Otherwise \
             it might be unclear which quotas to block."
                .into(),
        )),
        _ => {}
    }
    if f.block_quota && item.is_none() && f.quota_id.is_none() {
        invalid.push((
            "block_quota",
            "You need to select a specific product or quota if this voucher should reserve \
             tickets."
                .into(),
        ));
    }
    match (ev.has_subevents, f.subevent_id) {
        (false, Some(_)) => invalid.push((
            "subevent",
            "You can not select a subevent if your event is not an event series.".into(),
        )),
        (true, None) if f.block_quota => invalid.push((
            "subevent",
            "If you want this voucher to block quota, you need to select a specific date.".into(),
        )),
        (true, Some(s)) => {
            let found = subevent::Entity::find_by_id(s)
                .filter(subevent::Column::EventId.eq(ev.id))
                .one(txn)
                .await?;
            if found.is_none() {
                invalid.push(("subevent", no_object(s)));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The seat: one of the event's (of the voucher's date, in a series), free (not blocked, sold or another voucher's), for a
/// voucher used once and not limited to a quota (pretix's `clean_seat_id`).
async fn check_seat(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    old: Option<&voucher::Model>,
    f: &VoucherFields,
    invalid: &mut Invalid,
) -> Result<Option<i64>, DbErr> {
    let Some(guid) = &f.seat else {
        return Ok(None);
    };
    let scope = SeatScope {
        event_id: ev.id,
        subevent_id: f.subevent_id,
    };
    let Some(found) = seating::seats_of(scope)
        .filter(seat::Column::SeatGuid.eq(guid.as_str()))
        .one(txn)
        .await?
    else {
        invalid.push((
            "seat",
            format!("The specified seat ID \"{guid}\" does not exist for this event."),
        ));
        return Ok(None);
    };
    let unchanged = old.is_some_and(|o| o.seat_id == Some(found.id));
    if !unchanged {
        let mut other = voucher::Entity::find()
            .filter(voucher::Column::EventId.eq(ev.id))
            .filter(voucher::Column::SeatId.eq(found.id));
        if let Some(o) = old {
            other = other.filter(voucher::Column::Id.ne(o.id));
        }
        if found.blocked || found.sold || other.one(txn).await?.is_some() {
            invalid.push((
                "seat",
                format!(
                    "The seat \"{guid}\" is currently unavailable (blocked, already sold or a \
                     different voucher)."
                ),
            ));
        }
    }
    if f.quota_id.is_some() {
        invalid.push((
            "seat",
            "You need to choose a specific product if you select a seat.".into(),
        ));
    }
    if f.max_usages > 1 {
        invalid.push((
            "seat",
            "Seat-specific vouchers can only be used once.".into(),
        ));
    }
    Ok(Some(found.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voucher(max_usages: i32, redeemed: i32, block_quota: bool) -> voucher::Model {
        voucher::Model {
            id: 1,
            event_id: 1,
            code: "ABCDEF".into(),
            max_usages,
            redeemed,
            valid_until: None,
            block_quota,
            allow_ignore_quota: false,
            price_mode: "none".into(),
            value_cents: 0,
            item_id: Some(1),
            variation_id: None,
            quota_id: None,
            seat_id: None,
            subevent_id: None,
            tag: String::new(),
            comment: String::new(),
            show_hidden_items: true,
            all_addons_included: false,
            all_bundles_included: false,
            created: crate::values::now(),
        }
    }

    #[test]
    fn only_vouchers_that_start_to_block_or_block_more_check_the_quota() {
        let now = crate::values::now();
        let old = voucher(3, 1, true);
        assert!(needs_check(None, &old, &[1], now));
        assert!(!needs_check(
            Some((&old, &[1])),
            &voucher(3, 1, true),
            &[1],
            now
        ));
        assert!(!needs_check(
            Some((&old, &[1])),
            &voucher(2, 1, true),
            &[1],
            now
        ));
        assert!(needs_check(
            Some((&old, &[1])),
            &voucher(4, 1, true),
            &[1],
            now
        ));
        assert!(needs_check(
            Some((&old, &[1])),
            &voucher(3, 1, true),
            &[2],
            now
        ));
        assert!(needs_check(
            Some((&voucher(3, 1, false), &[])),
            &old,
            &[1],
            now
        ));
        let mut ignoring = voucher(5, 0, true);
        ignoring.allow_ignore_quota = true;
        assert!(!needs_check(None, &ignoring, &[1], now));
        let mut expired = voucher(1, 0, true);
        expired.valid_until = Some(now - chrono::Duration::hours(1));
        assert!(!needs_check(None, &expired, &[1], now));
        assert!(needs_check(Some((&expired, &[1])), &old, &[1], now));
    }

    #[test]
    fn a_voucher_holds_its_unused_redemptions() {
        assert_eq!(unused(&voucher(3, 1, true)), 2);
        assert_eq!(unused(&voucher(1, 2, true)), 0);
    }
}
