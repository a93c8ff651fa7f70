//! The waiting list of an event: people waiting for a product that is not available, each
//! holding one unit of the product's quotas (kind [`HoldKind::WaitingList`], never expiring)
//! until a voucher is sent to them. Then the hold passes to the voucher, which blocks the
//! unit until it expires, and the entry can no longer be changed.

pub mod texts;

use chrono::TimeDelta;
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    FromQueryResult, IntoActiveModel, QueryFilter, QueryOrder, Select, Set, Statement,
};
use serde_json::Value;

use super::availability::{self, Demand, HoldKind};
use super::items::Invalid;
use super::mail::{self, Mail};
use super::orders::Storefront;
use super::sale::{Catalogue, Product};
use super::settings::{self, Scope, SettingsRegistry};
use super::vouchers::manage::{self, Voucher, VoucherFields};
use crate::db::begin_write;
use crate::db::entities::{event, waiting_list_entry};
use crate::domain::webhooks;
use crate::values::I18nString;
use texts::VoucherNotice;

/// Tag of the vouchers sent to the waiting list.
pub const VOUCHER_TAG: &str = "waiting-list";

/// Every writable field of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryFields {
    /// Parts of the name (an object of strings); `{"_legacy": name}` for a plain name.
    pub name_parts: Option<Value>,
    /// E-mail address.
    pub email: String,
    /// Phone number.
    pub phone: Option<String>,
    /// The item waited for.
    pub item_id: i64,
    /// Its variation; required for items with variations.
    pub variation_id: Option<i64>,
    /// Language of the person.
    pub locale: String,
    /// The date of a series; required in a series.
    pub subevent_id: Option<i64>,
    /// Higher is served first.
    pub priority: i32,
}

impl EntryFields {
    /// The writable fields of an entry, as they are now.
    pub fn of(e: &waiting_list_entry::Model) -> Self {
        Self {
            name_parts: e.name_parts.clone(),
            email: e.email.clone(),
            phone: e.phone.clone(),
            item_id: e.item_id,
            variation_id: e.variation_id,
            locale: e.locale.clone(),
            subevent_id: e.subevent_id,
            priority: e.priority,
        }
    }

    fn product(&self) -> Product {
        Product {
            item_id: self.item_id,
            variation_id: self.variation_id,
            subevent_id: self.subevent_id,
        }
    }
}

fn product_of(e: &waiting_list_entry::Model) -> Product {
    EntryFields::of(e).product()
}

/// The name the parts make: a plain name as given, else the parts in the usual order
/// (title, given, middle, family, full name, then any others), joined by spaces.
pub fn display_name(parts: Option<&Value>) -> Option<String> {
    let parts = parts?.as_object()?;
    if let Some(legacy) = parts.get("_legacy").and_then(Value::as_str) {
        return Some(legacy.to_owned());
    }
    const ORDER: [&str; 5] = [
        "title",
        "given_name",
        "middle_name",
        "family_name",
        "full_name",
    ];
    let mut keys: Vec<&str> = ORDER
        .iter()
        .copied()
        .filter(|k| parts.contains_key(*k))
        .collect();
    let mut others: Vec<&str> = parts
        .keys()
        .map(String::as_str)
        .filter(|k| !k.starts_with('_') && !ORDER.contains(k))
        .collect();
    others.sort_unstable();
    keys.extend(others);
    let name = keys
        .iter()
        .filter_map(|k| parts.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!name.is_empty()).then_some(name)
}

/// Why an entry was not written or deleted.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// Fields that break a rule, each with its message.
    #[error("fields that break a rule, each with its message")]
    Invalid(Invalid),
    /// Entries for this product cannot be made now (waiting list off, not for this item,
    /// or the product is available); the reason.
    #[error(
        "entries for this product cannot be made now (waiting list off, not for this item, or the product is available)"
    )]
    NotNow(&'static str),
    /// A voucher was sent to it: it can no longer be changed or deleted.
    #[error("A voucher was sent to it")]
    HasVoucher,
    /// It does not exist (any more).
    #[error("it does not exist (any more)")]
    Gone,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why no voucher was sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// A voucher was sent already, or the product is not available; the reason.
    #[error("A voucher was sent already, or the product is not available")]
    Refused(String),
    /// The entry does not exist (any more).
    #[error("the entry does not exist (any more)")]
    Gone,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Filters of the entry list; each one given must match.
#[derive(Debug, Clone, Default)]
pub struct EntryFilter {
    /// This e-mail address, ignoring case.
    pub email: Option<String>,
    /// This locale.
    pub locale: Option<String>,
    /// With (`true`) or without a voucher.
    pub has_voucher: Option<bool>,
    /// For this item.
    pub item_id: Option<i64>,
    /// For this variation.
    pub variation_id: Option<i64>,
    /// For this date.
    pub subevent_id: Option<i64>,
}

/// What the entry list can be ordered by; ties are broken by ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryOrder {
    /// ID.
    Id,
    /// Creation (the default).
    Created,
    /// E-mail address.
    Email,
    /// Item.
    Item,
}

/// The event's entries that pass the filter, in the order asked for.
pub fn query(
    event_id: i64,
    f: &EntryFilter,
    order: EntryOrder,
    descending: bool,
) -> Select<waiting_list_entry::Entity> {
    use waiting_list_entry::Column as C;
    let mut q = waiting_list_entry::Entity::find().filter(C::EventId.eq(event_id));
    if let Some(email) = &f.email {
        q = q.filter(Expr::expr(Func::lower(Expr::col(C::Email))).eq(email.to_lowercase()));
    }
    if let Some(locale) = &f.locale {
        q = q.filter(C::Locale.eq(locale.as_str()));
    }
    if let Some(has) = f.has_voucher {
        q = q.filter(if has {
            C::VoucherId.is_not_null()
        } else {
            C::VoucherId.is_null()
        });
    }
    for (col, value) in [
        (C::ItemId, f.item_id),
        (C::VariationId, f.variation_id),
        (C::SubeventId, f.subevent_id),
    ] {
        if let Some(v) = value {
            q = q.filter(col.eq(v));
        }
    }
    let col = match order {
        EntryOrder::Id => C::Id,
        EntryOrder::Created => C::Created,
        EntryOrder::Email => C::Email,
        EntryOrder::Item => C::ItemId,
    };
    if descending {
        q.order_by_desc(col).order_by_desc(C::Id)
    } else {
        q.order_by_asc(col).order_by_asc(C::Id)
    }
}

/// An entry of the event.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<waiting_list_entry::Model>, DbErr> {
    waiting_list_entry::Entity::find_by_id(id)
        .filter(waiting_list_entry::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// The event's settings for the waiting list: whether it is on, and for how many hours a
/// voucher sent from it is valid.
async fn waiting_list_settings(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    ev: &event::Model,
) -> Result<(bool, i64), DbErr> {
    let scope = Scope::Event {
        organizer_id: ev.organizer_id,
        event_id: ev.id,
    };
    let values = settings::resolve(db, registry, scope).await?;
    let enabled = values
        .get("waiting_list_enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let hours = values
        .get("waiting_list_hours")
        .and_then(Value::as_i64)
        .unwrap_or(48);
    Ok((enabled, hours))
}

const DISABLED: &str = "The waiting list is disabled for this event.";
const NOT_FOR_ITEM: &str = "The waiting list is not enabled for this product.";
const AVAILABLE: &str = "This product is currently available.";

/// Puts somebody on the waiting list: only while the event has a waiting list, the item
/// allows it and the product is not available (any of its quotas used up, the waiting list
/// not counted). The entry holds one unit of the product's quotas.
pub async fn create(
    db: &DatabaseConnection,
    registry: &SettingsRegistry,
    ev: &event::Model,
    f: EntryFields,
) -> Result<waiting_list_entry::Model, EntryError> {
    let (enabled, _) = waiting_list_settings(db, registry, ev).await?;
    if !enabled {
        return Err(EntryError::NotNow(DISABLED));
    }
    let txn = begin_write(db).await?;
    let catalogue =
        Catalogue::load(&txn, ev, &f.subevent_id.into_iter().collect::<Vec<_>>()).await?;
    let product = check(&txn, ev, None, &f, &catalogue).await?;
    let quotas = catalogue.quotas_of(&product);
    let locked = availability::lock_quotas(&txn, &quotas).await?;
    may_wait(&txn, &catalogue, &product, &locked).await?;
    availability::adjust(&txn, &quotas, HoldKind::WaitingList, None, 1).await?;
    let saved = waiting_list_entry::ActiveModel {
        event_id: Set(ev.id),
        created: Set(crate::values::now()),
        ..row(&f)
    }
    .insert(&txn)
    .await?;
    notify(&txn, ev, saved.id, "pretix.event.orders.waitinglist.added").await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Tells the organizer's webhooks of a change of a waiting list entry.
async fn notify(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    entry_id: i64,
    action: &'static str,
) -> Result<(), DbErr> {
    let extra = serde_json::json!({"waitinglistentry_id": entry_id});
    webhooks::notify(txn, &webhooks::Notice::about(ev.id, action, extra)).await
}

/// Replaces every writable field of an entry without a voucher. A change of product moves
/// its hold, and is allowed only on the terms of a new entry.
pub async fn update(
    db: &DatabaseConnection,
    registry: &SettingsRegistry,
    ev: &event::Model,
    id: i64,
    f: EntryFields,
) -> Result<waiting_list_entry::Model, EntryError> {
    let (enabled, _) = waiting_list_settings(db, registry, ev).await?;
    let txn = begin_write(db).await?;
    let old = lock(&txn, ev.id, id).await?.ok_or(EntryError::Gone)?;
    if old.voucher_id.is_some() {
        return Err(EntryError::HasVoucher);
    }
    let dates: Vec<i64> = old.subevent_id.into_iter().chain(f.subevent_id).collect();
    let catalogue = Catalogue::load(&txn, ev, &dates).await?;
    let product = check(&txn, ev, Some(old.id), &f, &catalogue).await?;
    let before = product_of(&old);
    if product != before {
        if !enabled {
            return Err(EntryError::NotNow(DISABLED));
        }
        let (from, to) = (catalogue.quotas_of(&before), catalogue.quotas_of(&product));
        let locked = availability::lock_quotas(&txn, &[from.clone(), to.clone()].concat()).await?;
        may_wait(&txn, &catalogue, &product, &locked).await?;
        availability::adjust(&txn, &from, HoldKind::WaitingList, None, -1).await?;
        availability::adjust(&txn, &to, HoldKind::WaitingList, None, 1).await?;
    }
    let mut changed = row(&f);
    changed.id = Set(old.id);
    let saved = changed.update(&txn).await?;
    notify(
        &txn,
        ev,
        saved.id,
        "pretix.event.orders.waitinglist.changed",
    )
    .await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Deletes an entry without a voucher, giving back the unit it held.
pub async fn delete(db: &DatabaseConnection, ev: &event::Model, id: i64) -> Result<(), EntryError> {
    let txn = begin_write(db).await?;
    let old = lock(&txn, ev.id, id).await?.ok_or(EntryError::Gone)?;
    if old.voucher_id.is_some() {
        return Err(EntryError::HasVoucher);
    }
    let catalogue =
        Catalogue::load(&txn, ev, &old.subevent_id.into_iter().collect::<Vec<_>>()).await?;
    let quotas = catalogue.quotas_of(&product_of(&old));
    availability::lock_quotas(&txn, &quotas).await?;
    availability::adjust(&txn, &quotas, HoldKind::WaitingList, None, -1).await?;
    notify(&txn, ev, old.id, "pretix.event.orders.waitinglist.deleted").await?;
    waiting_list_entry::Entity::delete_by_id(old.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// A voucher sent to a waiting person, with the entry it was sent for.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The entry, with its voucher set.
    pub entry: waiting_list_entry::Model,
    /// The voucher.
    pub voucher: Voucher,
}

/// Sends a voucher to a waiting person: one use, blocking one unit of the product for the
/// event's `waiting_list_hours`, limited to the product. The product must be available, the
/// waiting list not counted; the entry's own hold passes to the voucher. The voucher is
/// e-mailed to the person in their language through the outbox, with the shop's address
/// that redeems it (`shop`): call `Mailer::wake` once this returns.
pub async fn send_voucher(
    db: &DatabaseConnection,
    registry: &SettingsRegistry,
    shop: Storefront<'_>,
    ev: &event::Model,
    id: i64,
) -> Result<Sent, SendError> {
    let (_, hours) = waiting_list_settings(db, registry, ev).await?;
    // Checked: the setting is bounded, but a value must never be able to panic here.
    let valid_until = TimeDelta::try_hours(hours)
        .and_then(|h| crate::values::now().checked_add_signed(h))
        .ok_or_else(|| {
            SendError::Refused("The waiting list response time of this event is too long.".into())
        })?;
    let txn = begin_write(db).await?;
    let entry = lock(&txn, ev.id, id).await?.ok_or(SendError::Gone)?;
    if entry.voucher_id.is_some() {
        return Err(SendError::Refused(
            "A voucher has already been sent to this person.".into(),
        ));
    }
    let catalogue =
        Catalogue::load(&txn, ev, &entry.subevent_id.into_iter().collect::<Vec<_>>()).await?;
    let quotas = catalogue.quotas_of(&product_of(&entry));
    let locked = availability::lock_quotas(&txn, &quotas).await?;
    let demand: Demand = quotas.iter().map(|&q| (q, 1)).collect();
    let short = availability::short_ahead_of_waiting_list(&txn, &locked, &demand).await?;
    if quotas.is_empty() || !short.is_empty() {
        return Err(SendError::Refused(
            "This product is currently not available.".into(),
        ));
    }
    availability::adjust(&txn, &quotas, HoldKind::WaitingList, None, -1).await?;
    let fields = VoucherFields {
        max_usages: 1,
        valid_until: Some(valid_until),
        block_quota: true,
        item_id: Some(entry.item_id),
        variation_id: entry.variation_id,
        subevent_id: entry.subevent_id,
        tag: VOUCHER_TAG.into(),
        comment: format!(
            "Automatically created from waiting list entry {} for {}",
            entry.id, entry.email
        ),
        ..VoucherFields::default()
    };
    let voucher = manage::insert(&txn, ev, &fields)
        .await?
        .map_err(|invalid| {
            let reasons: Vec<String> = invalid.into_iter().map(|(_, m)| m).collect();
            SendError::Refused(reasons.join(" "))
        })?;
    let mut row = entry.into_active_model();
    row.voucher_id = Set(Some(voucher.row.id));
    let sent = Sent {
        entry: row.update(&txn).await?,
        voucher,
    };
    mail::queue(&txn, voucher_mail(shop, ev, &catalogue, &sent, hours)).await?;
    let assigned = "pretix.event.orders.waitinglist.voucher_assigned";
    notify(&txn, ev, sent.entry.id, assigned).await?;
    crate::db::commit(txn).await?;
    Ok(sent)
}

/// The e-mail with the voucher, in the person's language.
fn voucher_mail(
    shop: Storefront<'_>,
    ev: &event::Model,
    catalogue: &Catalogue,
    sent: &Sent,
    hours: i64,
) -> Mail {
    let e = &sent.entry;
    let product = catalogue.product_name(e.item_id, e.variation_id, &e.locale);
    let code = &sent.voucher.row.code;
    let url = shop.redeem_url(ev, code);
    let notice = VoucherNotice {
        event: &I18nString::from_stored(&ev.name).localize(&e.locale),
        product: &product,
        code,
        hours,
        url: &url,
    };
    let (subject, body) = texts::voucher_mail(&e.locale, &notice);
    Mail::text(&e.email, subject, body).about(Some(ev.organizer_id), Some(ev.id))
}

/// Reads an entry of the event and locks it until the transaction ends (on PostgreSQL).
async fn lock(
    txn: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<waiting_list_entry::Model>, DbErr> {
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    waiting_list_entry::Model::find_by_statement(Statement::from_sql_and_values(
        backend,
        format!("SELECT * FROM waiting_list_entries WHERE id = $1 AND event_id = $2{lock}"),
        [id.into(), event_id.into()],
    ))
    .one(txn)
    .await
}

fn row(f: &EntryFields) -> waiting_list_entry::ActiveModel {
    waiting_list_entry::ActiveModel {
        name_parts: Set(f.name_parts.clone()),
        email: Set(f.email.trim().to_owned()),
        phone: Set(f.phone.clone()),
        item_id: Set(f.item_id),
        variation_id: Set(f.variation_id),
        locale: Set(f.locale.clone()),
        subevent_id: Set(f.subevent_id),
        priority: Set(f.priority),
        ..Default::default()
    }
}

/// Whether an address looks like one: a local part, one `@`, a domain with a dot, no spaces.
pub fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Checks the fields of an entry (`id` when it exists): a valid address, a product of the
/// event that can be sold (a variation for items with variations, a date in a series), and
/// nobody waiting for the same product with the same address yet.
async fn check(
    txn: &impl ConnectionTrait,
    ev: &event::Model,
    id: Option<i64>,
    f: &EntryFields,
    catalogue: &Catalogue,
) -> Result<Product, EntryError> {
    let mut invalid = Invalid::new();
    if !valid_email(f.email.trim()) {
        invalid.push(("email", "Enter a valid email address.".into()));
    }
    let product = catalogue.resolve(f.item_id, f.variation_id, f.subevent_id);
    if let Err((field, message)) = &product {
        invalid.push((field, message.clone()));
    }
    if invalid.is_empty() && waiting_already(txn, ev.id, id, f).await? {
        invalid.push((
            "non_field_errors",
            "You are already on this waiting list! We will notify you as soon as we have a \
             ticket available for you."
                .into(),
        ));
    }
    match product {
        Ok(p) if invalid.is_empty() => Ok(p),
        _ => Err(EntryError::Invalid(invalid)),
    }
}

/// Whether another entry without a voucher waits for the same product with this address.
async fn waiting_already(
    txn: &impl ConnectionTrait,
    event_id: i64,
    id: Option<i64>,
    f: &EntryFields,
) -> Result<bool, DbErr> {
    use waiting_list_entry::Column as C;
    let same = |col: C, v: Option<i64>| match v {
        Some(v) => col.eq(v),
        None => col.is_null(),
    };
    let mut q = waiting_list_entry::Entity::find()
        .filter(C::EventId.eq(event_id))
        .filter(C::ItemId.eq(f.item_id))
        .filter(same(C::VariationId, f.variation_id))
        .filter(same(C::SubeventId, f.subevent_id))
        .filter(C::VoucherId.is_null())
        .filter(Expr::expr(Func::lower(Expr::col(C::Email))).eq(f.email.trim().to_lowercase()));
    if let Some(id) = id {
        q = q.filter(C::Id.ne(id));
    }
    Ok(q.one(txn).await?.is_some())
}

/// Refuses a waiting list entry for the product unless its item allows one and it is not
/// available now: one of its locked quotas has nothing left, the waiting list not counted.
async fn may_wait(
    txn: &impl ConnectionTrait,
    catalogue: &Catalogue,
    product: &Product,
    locked: &[crate::db::entities::quota::Model],
) -> Result<(), EntryError> {
    if !catalogue
        .item(product.item_id)
        .is_some_and(|i| i.allow_waitinglist)
    {
        return Err(EntryError::NotNow(NOT_FOR_ITEM));
    }
    let demand: Demand = catalogue
        .quotas_of(product)
        .into_iter()
        .map(|q| (q, 1))
        .collect();
    if availability::short_ahead_of_waiting_list(txn, locked, &demand)
        .await?
        .is_empty()
    {
        return Err(EntryError::NotNow(AVAILABLE));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_is_made_of_its_parts_in_the_usual_order() {
        let parts = json!({"family_name": "Doe", "given_name": "Jane", "_scheme": "given_family"});
        assert_eq!(display_name(Some(&parts)).as_deref(), Some("Jane Doe"));
        let legacy = json!({"_legacy": "J. Doe"});
        assert_eq!(display_name(Some(&legacy)).as_deref(), Some("J. Doe"));
        assert_eq!(display_name(Some(&json!({}))), None);
        assert_eq!(display_name(None), None);
    }

    #[test]
    fn addresses_need_a_local_part_and_a_domain() {
        assert!(valid_email("jane@example.org"));
        for bad in [
            "jane",
            "jane@",
            "@example.org",
            "jane@example",
            "ja ne@example.org",
            "a@b@c.de",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
    }
}
