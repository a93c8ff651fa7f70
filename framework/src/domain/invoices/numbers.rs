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
use sea_orm::ActiveValue::Set;
use sea_orm::sea_query::{
    CommonTableExpression, Expr, ExprTrait, InsertStatement, OnConflict, Query, WithClause,
};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, Iterable,
    PaginatorTrait, QueryFilter,
};

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

/// Whether numbers are consecutive per organizer (`invoice_numbers_consecutive`, on unless
/// set off).
fn consecutive(settings: &EventSettings) -> bool {
    settings
        .get("invoice_numbers_consecutive")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true)
}

/// How many digits a consecutive number is zero-padded to (`invoice_numbers_counter_length`;
/// at most the 19 a number's column holds).
fn width(settings: &EventSettings) -> usize {
    settings
        .get("invoice_numbers_counter_length")
        .and_then(serde_json::Value::as_u64)
        .map_or(5, |w| Ord::min(w, 19)) as usize
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
    let consecutive = consecutive(settings);
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
    let width = width(settings);
    Ok(format!("{n:0width$}"))
}

/// Numbers the first invoices of new orders (one row per order, each under its prefix) and
/// stores them; gives their IDs in order. Consecutive numbers come as one run per prefix;
/// otherwise each order's code and `-1`. On PostgreSQL, one prefix's run is taken and its
/// invoices written in one statement: issuing then costs a sale one round trip while it
/// holds its quota locks.
pub async fn store(
    txn: &impl ConnectionTrait,
    settings: &EventSettings,
    ev: &event::Model,
    orders: &[OrderParts<'_>],
    mut rows: Vec<invoice::ActiveModel>,
    prefixes: &[String],
) -> Result<Vec<i64>, DbErr> {
    let consecutive = consecutive(settings);
    let width = width(settings);
    let one_prefix = prefixes.windows(2).all(|w| w[0] == w[1]);
    if consecutive
        && one_prefix
        && !rows.is_empty()
        && txn.get_database_backend() == DbBackend::Postgres
    {
        return store_run(txn, ev.organizer_id, &prefixes[0], width, rows).await;
    }
    let mut numbers = vec![String::new(); prefixes.len()];
    if consecutive {
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
                numbers[i] = format!("{:0width$}", first + k as i64);
            }
        }
    } else {
        for (i, (o, prefix)) in orders.iter().zip(prefixes).enumerate() {
            numbers[i] = next(txn, settings, ev, o.order, prefix).await?;
        }
    }
    for ((row, prefix), number) in rows.iter_mut().zip(prefixes).zip(numbers) {
        row.full_invoice_no = Set(format!("{prefix}{number}"));
        row.prefix = Set(prefix.clone());
        row.invoice_no = Set(number);
    }
    invoice::Entity::insert_many(rows)
        .exec_with_returning_keys(txn)
        .await
}

/// Advances the counter of `prefix` by the number of rows and writes them numbered from
/// the run, in one PostgreSQL statement: the counter's upsert as a common table expression
/// that each row's number reads (zero-padded to `width`, never cut).
async fn store_run(
    txn: &impl ConnectionTrait,
    organizer_id: i64,
    prefix: &str,
    width: usize,
    rows: Vec<invoice::ActiveModel>,
) -> Result<Vec<i64>, DbErr> {
    use invoice::Column;
    let by = rows.len() as i64;
    let run = CommonTableExpression::new()
        .query(counter_upsert(organizer_id, prefix, by))
        .table_name("run")
        .to_owned();
    let columns: Vec<Column> = Column::iter()
        .filter(|c| !matches!(c, Column::Id))
        .collect();
    let mut insert = Query::insert();
    insert.into_table(invoice::Entity).columns(columns.clone());
    for (k, row) in rows.iter().enumerate() {
        let n = format!(
            r#"((SELECT "last" FROM "run") - {})::text"#,
            by - 1 - k as i64
        );
        let number = format!("lpad({n}, greatest({width}, length({n})), '0')");
        let values = columns.iter().map(|&c| match c {
            Column::Prefix => Expr::val(prefix),
            Column::InvoiceNo => Expr::cust(number.clone()),
            Column::FullInvoiceNo => {
                Expr::cust_with_exprs(format!("$1 || {number}"), [Expr::val(prefix)])
            }
            c => match row.get(c).into_value() {
                Some(v) => Expr::val(v),
                None => Expr::cust("DEFAULT"),
            },
        });
        insert
            .values(values)
            .map_err(|e| DbErr::Custom(e.to_string()))?;
    }
    insert
        .returning_col(Column::Id)
        .with_cte(WithClause::new().cte(run).to_owned());
    let stmt = txn.get_database_backend().build(&insert);
    txn.query_all_raw(stmt)
        .await?
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect()
}

/// Advances the organizer's counter of the prefix by `by`, starting it at `by`; gives the
/// new value.
async fn advance(
    txn: &impl ConnectionTrait,
    organizer_id: i64,
    prefix: &str,
    by: i64,
) -> Result<i64, DbErr> {
    let stmt = txn
        .get_database_backend()
        .build(&counter_upsert(organizer_id, prefix, by));
    let row = txn
        .query_one_raw(stmt)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("invoice counter".into()))?;
    row.try_get("", "last")
}

/// The upsert that advances the organizer's counter of the prefix by `by` (starting it at
/// `by`) and returns its new `last`.
fn counter_upsert(organizer_id: i64, prefix: &str, by: i64) -> InsertStatement {
    use invoice_counter::Column;
    Query::insert()
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
        .to_owned()
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
