//! Tickets a person holds: which positions get one, when an order's tickets may be
//! downloaded, and what a ticket says ([`variables`]). Ticket files are made by the ticket
//! outputs extensions bring ([`crate::domain::extensions::tickets`]).

pub mod batch_render;
mod mailed;
pub mod variables;

pub use mailed::MailedTickets;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr};
use serde_json::Value;

use crate::db::entities::{event, order, order_position};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::extensions::Extensions;
use crate::domain::extensions::tickets::{TicketFile, TicketOutput, TicketRequest};
use crate::domain::orders::ticket::TicketNames;
use crate::domain::orders::{Order, status};
use variables::{Ticket, TicketDetails};

/// Why a ticket cannot be had, in pretix's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAvailable {
    /// The order is canceled or expired.
    CanceledOrExpired,
    /// The order is pending and its tickets are not valid yet.
    Pending,
    /// The position's product has no ticket.
    NotForProduct,
}

impl NotAvailable {
    /// The message for the client.
    pub fn message(self) -> &'static str {
        match self {
            NotAvailable::CanceledOrExpired => {
                "Downloads are not available for canceled or expired orders."
            }
            NotAvailable::Pending => "Downloads are not available for pending orders.",
            NotAvailable::NotForProduct => "Downloads are not enabled for this product.",
        }
    }
}

fn flag(settings: &EventSettings, key: &str) -> bool {
    settings.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Whether an order's tickets may be downloaded now: not canceled or expired, and paid
/// unless its tickets are valid while pending or the event lets pending orders have them.
pub fn order_allows(
    o: &order::Model,
    settings: &EventSettings,
    now: DateTime<Utc>,
) -> Result<(), NotAvailable> {
    match status(o, now) {
        "c" | "e" => Err(NotAvailable::CanceledOrExpired),
        "n" if !(o.valid_if_pending || flag(settings, "ticket_download_pending")) => {
            Err(NotAvailable::Pending)
        }
        _ => Ok(()),
    }
}

/// Whether an order lists its downloads (pretix's `downloads`): paid, or pending without
/// an approval to wait for and with tickets valid while pending.
pub fn lists_downloads(o: &order::Model, settings: &EventSettings, now: DateTime<Utc>) -> bool {
    match status(o, now) {
        "p" => true,
        "n" => {
            !o.require_approval && (o.valid_if_pending || flag(settings, "ticket_download_pending"))
        }
        _ => false,
    }
}

/// Whether a position gets a ticket (pretix's `generate_ticket`): never when canceled; as
/// its product says
/// when it says; else not for add-ons unless the event gives them tickets, nor for
/// products that admit nobody unless the event gives those tickets.
pub fn has_ticket(
    p: &order_position::Model,
    names: &TicketNames,
    settings: &EventSettings,
) -> bool {
    if p.canceled {
        return false;
    }
    let item = names.item(p.item_id);
    if let Some(explicit) = item.and_then(|i| i.generate_tickets) {
        return explicit;
    }
    if p.addon_to_id.is_some() && !flag(settings, "ticket_download_addons") {
        return false;
    }
    if !item.is_none_or(|i| i.admission) && !flag(settings, "ticket_download_nonadm") {
        return false;
    }
    true
}

/// The ticket outputs an event offers: those of the extensions it enables, unless its
/// setting `ticketoutput_<identifier>__enabled` is off.
pub fn outputs(
    extensions: &dyn Extensions,
    ev: &event::Model,
    settings: &EventSettings,
) -> Vec<Arc<dyn TicketOutput>> {
    extensions
        .ticket_outputs(ev)
        .into_iter()
        .filter(|o| {
            let key = format!("ticketoutput_{}__enabled", o.identifier());
            settings.get(key.as_str()).and_then(Value::as_bool) != Some(false)
        })
        .collect()
}

/// The outputs whose files buyers are offered for an order now (on its page, in mails):
/// those offered to customers, when the event lets buyers download tickets
/// (`ticket_download`) and the order lists its downloads.
pub fn offered(
    extensions: &dyn Extensions,
    ev: &event::Model,
    settings: &EventSettings,
    o: &order::Model,
    now: DateTime<Utc>,
) -> Vec<Arc<dyn TicketOutput>> {
    if !flag(settings, "ticket_download") || !lists_downloads(o, settings, now) {
        return Vec::new();
    }
    let mut found = outputs(extensions, ev, settings);
    found.retain(|o| o.offered_to_customers());
    found
}

/// The name a ticket file is downloaded as, as pretix names it:
/// `<EVENT>-<CODE>[-<position number>]-<output><extension>`.
pub fn file_name(
    ev: &event::Model,
    o: &order::Model,
    position: Option<i32>,
    output: &str,
    extension: &str,
) -> String {
    let event = ev.slug.to_uppercase();
    match position {
        Some(n) => format!("{event}-{}-{n}-{output}{extension}", o.code),
        None => format!("{event}-{}-{output}{extension}", o.code),
    }
}

/// What tickets are made with: the database and the process cache (an event's products,
/// details and layouts are read once per configuration), the extensions that bring the
/// outputs, and the event's settings.
#[derive(Clone, Copy)]
pub struct Maker<'a> {
    /// The connection pool.
    pub db: &'a DatabaseConnection,
    /// The process cache, at its current generation (none while it is off).
    pub cache: Option<(&'a Cache, u64)>,
    /// The extensions.
    pub extensions: &'a dyn Extensions,
    /// The event's settings.
    pub settings: &'a EventSettings,
}

/// Makes the file of an order's tickets with an output: of one position (`only`), or of
/// every position that has a ticket.
pub async fn render(
    m: Maker<'_>,
    output: &dyn TicketOutput,
    ev: &event::Model,
    (o, names): (&Order, &TicketNames),
    only: Option<i64>,
) -> Result<TicketFile, DbErr> {
    let (db, settings) = (m.db, m.settings);
    let details = TicketDetails::load(db, m.cache, ev).await?;
    let now = crate::values::now();
    let tickets = o
        .positions
        .iter()
        .filter(|p| match only {
            Some(id) => p.id == id,
            None => has_ticket(p, names, settings),
        })
        .map(|p| ticket(ev, o, p, names, &details))
        .collect();
    let request = TicketRequest {
        event: ev,
        order: &o.row,
        tickets,
        now,
        cache: m.cache,
    };
    output.render(db, &request).await
}

/// A position's ticket, with its seat (or its parent's) and first check-in.
pub fn ticket<'a>(
    ev: &'a event::Model,
    o: &'a Order,
    p: &'a order_position::Model,
    names: &'a TicketNames,
    details: &'a TicketDetails,
) -> Ticket<'a> {
    let parent = p
        .addon_to_id
        .and_then(|id| o.positions.iter().find(|q| q.id == id));
    let seat_id = p.seat_id.or_else(|| parent.and_then(|q| q.seat_id));
    Ticket {
        event: ev,
        order: &o.row,
        position: p,
        positions: &o.positions,
        seat: seat_id.and_then(|id| o.seats.iter().find(|s| s.id == id)),
        first_scan: o
            .checkins
            .iter()
            .filter(|c| c.position_id == p.id && c.kind == "entry")
            .map(|c| c.datetime)
            .min(),
        names,
        details,
    }
}

/// Why a download was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadRefused {
    /// The event offers no output of that identifier.
    UnknownOutput,
    /// The ticket cannot be had.
    NotAvailable(NotAvailable),
}

/// A ticket file ready to download, with its name.
#[derive(Debug)]
pub struct Download {
    /// The file.
    pub file: TicketFile,
    /// The name to save it as.
    pub file_name: String,
}

/// The file of an order's tickets (or of one position's, `position`) from the output
/// `identifier`, as the API serves it.
pub async fn download(
    m: Maker<'_>,
    ev: &event::Model,
    o: &Order,
    position: Option<&order_position::Model>,
    identifier: &str,
) -> Result<Result<Download, DownloadRefused>, DbErr> {
    let settings = m.settings;
    let Some(output) = outputs(m.extensions, ev, settings)
        .into_iter()
        .find(|out| out.identifier() == identifier)
    else {
        return Ok(Err(DownloadRefused::UnknownOutput));
    };
    if let Err(refused) = order_allows(&o.row, settings, crate::values::now()) {
        return Ok(Err(DownloadRefused::NotAvailable(refused)));
    }
    let names = TicketNames::of_event(m.db, m.cache, ev, &o.positions).await?;
    if let Some(p) = position
        && !has_ticket(p, &names, settings)
    {
        return Ok(Err(DownloadRefused::NotAvailable(
            NotAvailable::NotForProduct,
        )));
    }
    let only = position.map(|p| p.id);
    let file = render(m, output.as_ref(), ev, (o, &names), only).await?;
    let file_name = file_name(
        ev,
        &o.row,
        position.map(|p| p.positionid),
        identifier,
        &file.extension,
    );
    Ok(Ok(Download { file, file_name }))
}

/// The text variables of one position's ticket (pretix's `pdf_data`), loaded by its ID in
/// the order's language; none when it is gone.
pub async fn pdf_data_of(
    db: &impl sea_orm::ConnectionTrait,
    ev: &event::Model,
    position_id: i64,
) -> Result<Option<std::collections::BTreeMap<String, String>>, DbErr> {
    use sea_orm::EntityTrait;
    let Some(p) = order_position::Entity::find_by_id(position_id)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let Some(row) = order::Entity::find_by_id(p.order_id).one(db).await? else {
        return Ok(None);
    };
    let Some(o) = crate::domain::orders::complete(db, vec![row]).await?.pop() else {
        return Ok(None);
    };
    let names = TicketNames::load(db, &o.positions).await?;
    let details = TicketDetails::load(db, None, ev).await?;
    let Some(p) = o.positions.iter().find(|q| q.id == position_id) else {
        return Ok(None);
    };
    let t = ticket(ev, &o, p, &names, &details);
    Ok(Some(t.variables(&o.row.locale, crate::values::now())))
}
