//! Invoices as pretix issues them: a snapshot of an order taken when the invoice is issued,
//! numbered without gaps per organizer and prefix, cancelled by a negative invoice that
//! refers to it, never deleted.
//!
//! [`when`] decides at which step of an order an invoice is issued or cancelled, [`build`]
//! takes the snapshot, [`numbers`] hands out the numbers, [`einvoice`] writes the EN 16931
//! document of an invoice. The files are made by the invoice renderers, a port of the rules
//! ([`crate::domain::extensions::invoices`]).

pub mod build;
pub mod einvoice;
pub mod files;
pub mod numbers;
pub mod when;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, Order, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Select,
};
use serde::{Deserialize, Serialize};

use crate::db::entities::{event, invoice, order};

/// A line of an invoice: a position or a fee of the order, as it was when it was issued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Its place among the lines, from 0 (free positions left out keep their place).
    pub position: i32,
    /// What was sold, with the attendee and printed answers on further lines.
    pub description: String,
    /// The product, for a position.
    pub item: Option<i64>,
    /// The product's variation.
    pub variation: Option<i64>,
    /// The date of a series.
    pub subevent: Option<i64>,
    /// The attendee, when invoices name them.
    pub attendee_name: Option<String>,
    /// Start of the service.
    pub period_start: Option<DateTime<Utc>>,
    /// End of the service.
    pub period_end: Option<DateTime<Utc>>,
    /// The price with tax, in cents.
    pub gross_cents: i64,
    /// The tax it includes, in cents.
    pub tax_cents: i64,
    /// The tax rate, in hundredths of a percent.
    pub tax_rate_bps: i64,
    /// The tax rule's name, in the invoice's language.
    pub tax_name: String,
    /// The tax category of EN 16931 (UNCL 5305): `S` standard, `Z` zero rate, `AE` reverse
    /// charge, `E` exempt, `O` outside the scope of VAT.
    pub tax_code: String,
    /// The fee's type, for a fee.
    pub fee_type: Option<String>,
    /// The fee's internal type.
    pub fee_internal_type: Option<String>,
    /// The event's location, when invoices show it.
    pub event_location: Option<String>,
}

impl Line {
    /// The price without tax, in cents.
    pub fn net_cents(&self) -> i64 {
        self.gross_cents - self.tax_cents
    }
}

/// An invoice with what the API shows beside its row: its order's code, its event's slug,
/// the number of the invoice it cancels, and its lines.
#[derive(Debug, Clone)]
pub struct Invoice {
    /// The stored invoice.
    pub row: invoice::Model,
    /// Its lines.
    pub lines: Vec<Line>,
    /// The order's code.
    pub order_code: String,
    /// The order's e-mail address.
    pub order_email: Option<String>,
    /// The event's slug.
    pub event_slug: String,
    /// The full number of the invoice a cancellation cancels.
    pub refers: Option<String>,
}

impl Invoice {
    /// The invoice with its lines read from its row.
    pub fn of(
        row: invoice::Model,
        (order_code, order_email): (String, Option<String>),
        event_slug: String,
        refers: Option<String>,
    ) -> Self {
        let lines = serde_json::from_value(row.lines.clone()).unwrap_or_default();
        Self {
            row,
            lines,
            order_code,
            order_email,
            event_slug,
            refers,
        }
    }

    /// The sum of the lines with tax, in cents.
    pub fn gross_cents(&self) -> i64 {
        self.lines.iter().map(|l| l.gross_cents).sum()
    }

    /// The sum of the lines' tax, in cents.
    pub fn tax_cents(&self) -> i64 {
        self.lines.iter().map(|l| l.tax_cents).sum()
    }

    /// Per tax category and rate: the net sum, the tax and the rule's name, in the order
    /// they first appear.
    pub fn tax_summary(&self) -> Vec<TaxGroup> {
        let mut groups: Vec<TaxGroup> = Vec::new();
        for l in &self.lines {
            match groups
                .iter_mut()
                .find(|g| g.code == l.tax_code && g.rate_bps == l.tax_rate_bps)
            {
                Some(g) => {
                    g.net_cents += l.net_cents();
                    g.tax_cents += l.tax_cents;
                }
                None => groups.push(TaxGroup {
                    code: l.tax_code.clone(),
                    rate_bps: l.tax_rate_bps,
                    name: l.tax_name.clone(),
                    net_cents: l.net_cents(),
                    tax_cents: l.tax_cents,
                }),
            }
        }
        groups
    }
}

/// The lines of one tax category and rate, summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxGroup {
    /// The EN 16931 category (see [`Line::tax_code`]).
    pub code: String,
    /// The rate, in hundredths of a percent.
    pub rate_bps: i64,
    /// The tax rule's name.
    pub name: String,
    /// The net amount, in cents.
    pub net_cents: i64,
    /// The tax, in cents.
    pub tax_cents: i64,
}

/// Transmission states, as pretix names them.
pub mod transmission {
    /// Waiting to be transmitted.
    pub const PENDING: &str = "pending";
    /// Being transmitted.
    pub const INFLIGHT: &str = "inflight";
    /// Transmission failed.
    pub const FAILED: &str = "failed";
    /// Not known (never tried).
    pub const UNKNOWN: &str = "unknown";
}

/// Which invoices a list shows, as pretix's filters.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Of these orders (codes, any case).
    pub orders: Vec<String>,
    /// With these full numbers (any case).
    pub numbers: Vec<String>,
    /// Cancellations only, or invoices only.
    pub is_cancellation: Option<bool>,
    /// Cancelling the invoice of this full number.
    pub refers: Option<String>,
    /// In this language.
    pub locale: Option<String>,
    /// By date (then number), not by number.
    pub by_date: bool,
    /// Newest first.
    pub descending: bool,
}

/// The invoices of the rows, with their order codes, event slugs and the numbers they refer
/// to (read in one query each).
async fn named(
    db: &impl ConnectionTrait,
    rows: Vec<invoice::Model>,
) -> Result<Vec<Invoice>, DbErr> {
    let ids = |f: fn(&invoice::Model) -> Option<i64>| -> Vec<i64> {
        let mut v: Vec<i64> = rows.iter().filter_map(f).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (order_ids, event_ids, refers_ids) = (
        ids(|r| Some(r.order_id)),
        ids(|r| Some(r.event_id)),
        ids(|r| r.refers_id),
    );
    let orders: HashMap<i64, (String, Option<String>)> = order::Entity::find()
        .select_only()
        .columns([order::Column::Id, order::Column::Code, order::Column::Email])
        .filter(order::Column::Id.is_in(order_ids))
        .into_tuple::<(i64, String, Option<String>)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(id, code, email)| (id, (code, email)))
        .collect();
    let slugs: HashMap<i64, String> = event::Entity::find()
        .select_only()
        .columns([event::Column::Id, event::Column::Slug])
        .filter(event::Column::Id.is_in(event_ids))
        .into_tuple::<(i64, String)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let numbers: HashMap<i64, String> = if refers_ids.is_empty() {
        HashMap::new()
    } else {
        invoice::Entity::find()
            .select_only()
            .columns([invoice::Column::Id, invoice::Column::FullInvoiceNo])
            .filter(invoice::Column::Id.is_in(refers_ids))
            .into_tuple::<(i64, String)>()
            .all(db)
            .await?
            .into_iter()
            .collect()
    };
    Ok(rows
        .into_iter()
        .map(|row| {
            let of_order = orders.get(&row.order_id).cloned().unwrap_or_default();
            let event_slug = slugs.get(&row.event_id).cloned().unwrap_or_default();
            let refers = row.refers_id.and_then(|id| numbers.get(&id).cloned());
            Invoice::of(row, of_order, event_slug, refers)
        })
        .collect())
}

/// The invoices of these events (one event, or those a caller reaches across an organizer)
/// that pass the filter.
fn filtered(organizer_id: i64, events: &[i64], filter: &Filter) -> Select<invoice::Entity> {
    let mut select = invoice::Entity::find()
        .filter(invoice::Column::OrganizerId.eq(organizer_id))
        .filter(invoice::Column::EventId.is_in(events.iter().copied()));
    if !filter.orders.is_empty() {
        let codes: Vec<String> = filter.orders.iter().map(|c| c.to_uppercase()).collect();
        let of_orders = Query::select()
            .column(order::Column::Id)
            .from(order::Entity)
            .and_where(Expr::expr(Func::upper(Expr::col(order::Column::Code))).is_in(codes))
            .and_where(order::Column::EventId.is_in(events.iter().copied()))
            .to_owned();
        select = select.filter(invoice::Column::OrderId.in_subquery(of_orders));
    }
    if !filter.numbers.is_empty() {
        let numbers: Vec<String> = filter.numbers.iter().map(|n| n.to_uppercase()).collect();
        select = select.filter(
            Expr::expr(Func::upper(Expr::col(invoice::Column::FullInvoiceNo))).is_in(numbers),
        );
    }
    if let Some(c) = filter.is_cancellation {
        select = select.filter(invoice::Column::IsCancellation.eq(c));
    }
    if let Some(refers) = &filter.refers {
        let referred = Query::select()
            .column(invoice::Column::Id)
            .from(invoice::Entity)
            .and_where(invoice::Column::OrganizerId.eq(organizer_id))
            .and_where(
                Expr::expr(Func::upper(Expr::col(invoice::Column::FullInvoiceNo)))
                    .eq(refers.to_uppercase()),
            )
            .to_owned();
        select = select.filter(invoice::Column::RefersId.in_subquery(referred));
    }
    if let Some(locale) = &filter.locale {
        select = select.filter(invoice::Column::Locale.eq(locale.as_str()));
    }
    select
}

/// How many invoices of these events pass the filter.
pub async fn count(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    events: &[i64],
    filter: &Filter,
) -> Result<u64, DbErr> {
    filtered(organizer_id, events, filter).count(db).await
}

/// The invoices of these events that pass the filter, `limit` from `offset` on, by number
/// (or date, then number).
pub async fn list(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    events: &[i64],
    filter: &Filter,
    offset: u64,
    limit: u64,
) -> Result<Vec<Invoice>, DbErr> {
    let dir = if filter.descending {
        Order::Desc
    } else {
        Order::Asc
    };
    let mut select = filtered(organizer_id, events, filter);
    if filter.by_date {
        select = select.order_by(invoice::Column::Date, dir.clone());
    }
    // pretix's `nr`: the full number as text.
    let rows = select
        .order_by(invoice::Column::FullInvoiceNo, dir.clone())
        .order_by(invoice::Column::Id, dir)
        .offset(offset)
        .limit(limit)
        .all(db)
        .await?;
    named(db, rows).await
}

/// The invoice of this full number in the event, with its order's code and e-mail address
/// read in the same query (and the number it refers to, for a cancellation): what its file
/// needs. The lookup goes by organizer and number, which one index answers.
pub async fn for_file(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    event_id: i64,
    number: &str,
) -> Result<Option<Invoice>, DbErr> {
    let found = invoice::Entity::find()
        .filter(invoice::Column::OrganizerId.eq(organizer_id))
        .filter(invoice::Column::FullInvoiceNo.eq(number))
        .select_also(order::Entity)
        .join(
            sea_orm::JoinType::InnerJoin,
            invoice::Entity::belongs_to(order::Entity)
                .from(invoice::Column::OrderId)
                .to(order::Column::Id)
                .into(),
        )
        .all(db)
        .await?;
    let Some((row, Some(o))) = found.into_iter().find(|(i, _)| i.event_id == event_id) else {
        return Ok(None);
    };
    let refers = match row.refers_id {
        Some(id) => invoice::Entity::find_by_id(id)
            .one(db)
            .await?
            .map(|r| r.full_invoice_no),
        None => None,
    };
    Ok(Some(Invoice::of(
        row,
        (o.code, o.email),
        String::new(),
        refers,
    )))
}

/// The row of the invoice of this full number among these events.
pub async fn find_row(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    events: &[i64],
    number: &str,
) -> Result<Option<invoice::Model>, DbErr> {
    Ok(invoice::Entity::find()
        .filter(invoice::Column::OrganizerId.eq(organizer_id))
        .filter(invoice::Column::FullInvoiceNo.eq(number))
        .all(db)
        .await?
        .into_iter()
        .find(|i| events.contains(&i.event_id)))
}

/// The invoice of this full number among these events, with its names.
pub async fn find(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    events: &[i64],
    number: &str,
) -> Result<Option<Invoice>, DbErr> {
    match find_row(db, organizer_id, events, number).await? {
        Some(row) => Ok(named(db, vec![row]).await?.pop()),
        None => Ok(None),
    }
}

/// An order's invoices, oldest first.
pub async fn of_order(
    db: &impl ConnectionTrait,
    order_id: i64,
) -> Result<Vec<invoice::Model>, DbErr> {
    invoice::Entity::find()
        .filter(invoice::Column::OrderId.eq(order_id))
        .order_by_asc(invoice::Column::Id)
        .all(db)
        .await
}

/// Invoices by ID, with their names, for files made of them (mails, the order page).
pub async fn by_ids(db: &impl ConnectionTrait, ids: &[i64]) -> Result<Vec<Invoice>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = invoice::Entity::find()
        .filter(invoice::Column::Id.is_in(ids.iter().copied()))
        .order_by_asc(invoice::Column::Id)
        .all(db)
        .await?;
    named(db, rows).await
}

/// The file name pretix gives an invoice's PDF.
pub fn file_name(inv: &invoice::Model, extension: &str) -> String {
    format!("{}{extension}", inv.full_invoice_no)
}

/// Why a transmission was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransmitRefused {
    /// `transmit` of an invoice that is not pending (403).
    NotPending,
    /// `retransmit` of an invoice being transmitted (409).
    InFlight,
}

/// Sends the invoice through the transmission its buyer chose, as pretix's `transmit` (only
/// when pending) and `retransmit` (unless in flight). No transmission provider is
/// configured yet (they will be a port of their own), so the attempt fails at once as
/// pretix's does without one: `failed`, with the reason `no_provider`.
pub async fn transmit(
    db: &impl ConnectionTrait,
    inv: &invoice::Model,
    again: bool,
) -> Result<Result<(), TransmitRefused>, DbErr> {
    let mut update = invoice::Entity::update_many()
        .col_expr(
            invoice::Column::TransmissionStatus,
            transmission::FAILED.into(),
        )
        .col_expr(
            invoice::Column::TransmissionDate,
            Expr::value(crate::values::now()),
        )
        .col_expr(
            invoice::Column::TransmissionInfo,
            Expr::value(serde_json::json!({"reason": "no_provider"})),
        )
        .filter(invoice::Column::Id.eq(inv.id));
    update = match again {
        true => update.filter(invoice::Column::TransmissionStatus.ne(transmission::INFLIGHT)),
        false => update.filter(invoice::Column::TransmissionStatus.eq(transmission::PENDING)),
    };
    if update.exec(db).await?.rows_affected == 0 {
        return Ok(Err(match again {
            true => TransmitRefused::InFlight,
            false => TransmitRefused::NotPending,
        }));
    }
    Ok(Ok(()))
}
