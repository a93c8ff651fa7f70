//! Invoice numbers as pretix makes them: a prefix (the event's short form and a dash unless
//! set, date codes filled in, `TEST-` added in test mode) and a number.
//!
//! Consecutive numbers come from a counter row per organizer and prefix, advanced by one
//! upsert inside the transaction that writes the invoice. The upsert locks the row until that
//! transaction ends: a second issuer, in this process or another, waits, then sees the
//! committed value. A transaction that rolls back takes its number back with it. So every
//! number is used exactly once and none is skipped, which pretix's `max + 1` with retries
//! gives only while nothing rolls back.

use chrono::NaiveDate;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter};

use super::build::OrderParts;
use crate::db::entities::{event, invoice, invoice_counter, order};
use crate::domain::cache::EventSettings;

/// Which kind of document a number is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An invoice.
    Invoice,
    /// A cancellation: its own prefix when one is set.
    Cancellation,
}

/// The prefix of a number issued on `date`.
pub fn prefix(
    settings: &EventSettings,
    ev: &event::Model,
    o: &order::Model,
    kind: Kind,
    date: NaiveDate,
) -> String {
    let text = |key: &str| {
        settings
            .get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut prefix = text("invoice_numbers_prefix");
    if prefix.is_empty() {
        prefix = format!("{}-", ev.slug.to_uppercase());
    }
    if kind == Kind::Cancellation {
        let own = text("invoice_numbers_prefix_cancellations");
        if !own.is_empty() {
            prefix = own;
        }
    }
    if prefix.contains('%') {
        prefix = with_date(&prefix, date);
    }
    if o.testmode {
        prefix.push_str("TEST-");
    }
    prefix
}

/// The prefix with its date codes filled in (unchanged when one is not known: the settings
/// refuse those).
fn with_date(prefix: &str, date: NaiveDate) -> String {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item<'_>> = StrftimeItems::new(prefix).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return prefix.to_owned();
    }
    date.format_with_items(items.into_iter()).to_string()
}

/// The next number under `prefix`: consecutive per organizer (zero-padded to the counter
/// length), or the order's code and its count of invoices under the prefix.
pub async fn next(
    txn: &impl ConnectionTrait,
    settings: &EventSettings,
    ev: &event::Model,
    o: &order::Model,
    prefix: &str,
) -> Result<String, DbErr> {
    let consecutive = settings
        .get("invoice_numbers_consecutive")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true);
    if !consecutive {
        let issued = invoice::Entity::find()
            .filter(invoice::Column::OrderId.eq(o.id))
            .filter(invoice::Column::Prefix.eq(prefix))
            .filter(invoice::Column::InvoiceNo.starts_with(format!("{}-", o.code)))
            .count(txn)
            .await?;
        return Ok(format!("{}-{}", o.code, issued + 1));
    }
    let n = advance(txn, ev.organizer_id, prefix, 1).await?;
    let width = settings
        .get("invoice_numbers_counter_length")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(5) as usize;
    Ok(format!("{n:0width$}"))
}

/// The numbers of the first invoices of new orders, one per order under its prefix: a
/// consecutive run taken from each prefix's counter in one statement, or each order's code
/// and `-1`.
pub async fn for_new(
    txn: &impl ConnectionTrait,
    settings: &EventSettings,
    ev: &event::Model,
    orders: &[OrderParts<'_>],
    prefixes: &[String],
) -> Result<Vec<String>, DbErr> {
    let consecutive = settings
        .get("invoice_numbers_consecutive")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true);
    if !consecutive {
        let mut out = Vec::with_capacity(orders.len());
        for (o, prefix) in orders.iter().zip(prefixes) {
            out.push(next(txn, settings, ev, o.order, prefix).await?);
        }
        return Ok(out);
    }
    let width = settings
        .get("invoice_numbers_counter_length")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(5) as usize;
    let mut out = vec![String::new(); prefixes.len()];
    let mut distinct: Vec<&String> = prefixes.iter().collect();
    distinct.sort();
    distinct.dedup();
    for prefix in distinct {
        let at: Vec<usize> = (0..prefixes.len())
            .filter(|&i| &prefixes[i] == prefix)
            .collect();
        let last = advance(txn, ev.organizer_id, prefix, at.len() as i64).await?;
        let first = last - at.len() as i64 + 1;
        for (k, i) in at.into_iter().enumerate() {
            out[i] = format!("{:0width$}", first + k as i64);
        }
    }
    Ok(out)
}

/// Advances the organizer's counter of the prefix by `by`, starting it at `by`; gives the
/// new value.
async fn advance(
    txn: &impl ConnectionTrait,
    organizer_id: i64,
    prefix: &str,
    by: i64,
) -> Result<i64, DbErr> {
    use invoice_counter::Column;
    let upsert = Query::insert()
        .into_table(invoice_counter::Entity)
        .columns([Column::OrganizerId, Column::Prefix, Column::Last])
        .values_panic([organizer_id.into(), prefix.into(), by.into()])
        .on_conflict(
            OnConflict::columns([Column::OrganizerId, Column::Prefix])
                .value(
                    Column::Last,
                    Expr::col((invoice_counter::Entity, Column::Last)).add(by),
                )
                .to_owned(),
        )
        .returning_col(Column::Last)
        .to_owned();
    let stmt = txn.get_database_backend().build(&upsert);
    let row = txn
        .query_one_raw(stmt)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("invoice counter".into()))?;
    row.try_get("", "last")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_codes_in_prefixes_are_filled_in_from_the_invoice_date() {
        let date = NaiveDate::from_ymd_opt(2026, 11, 28).expect("a date");
        assert_eq!(with_date("INV-%Y-", date), "INV-2026-");
        assert_eq!(with_date("%y%m-", date), "2611-");
        assert_eq!(with_date("R-%Q-", date), "R-%Q-");
    }
}
