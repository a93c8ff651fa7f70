//! A batch of tickets rendered on request, as pretix's `ticketpdfrenderer/render_batch/`:
//! the tickets of up to [`MAX_PARTS`] positions of an event, each with the layout chosen for
//! it (or the one the part names, or as if sold in the channel it names), in one PDF kept for
//! the caller who asked ([`files::keep_made`]). The file is made before the answer, so that
//! its download never has to say "not ready".

use std::collections::HashMap;
use std::sync::Arc;

use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter};

use super::variables::TicketDetails;
use crate::db::entities::{event, order, order_position, pdf_layout};
use crate::domain::cache::Cache;
use crate::domain::files;
use crate::domain::layouts::{self, Kind};
use crate::domain::orders::ticket::TicketNames;
use crate::pdf::Prepared;
use crate::values::FieldErrors;

/// Most parts one batch may have.
pub const MAX_PARTS: usize = 1000;

/// What made files of a batch are kept for (pretix's session salt).
pub const PURPOSE: &str = "ticketoutputpdf-api";

/// The name the batch's file is downloaded as.
pub const FILE_NAME: &str = "tickets.pdf";

/// One ticket of a batch.
#[derive(Debug, Clone)]
pub struct Part {
    /// The position's ID.
    pub position: i64,
    /// The ticket layout to print it with instead of its own.
    pub layout: Option<i64>,
    /// The sales channel to choose its layout for instead of its order's.
    pub channel: Option<String>,
}

/// Renders the parts' tickets into one PDF kept for `caller` (an identity) and gives its key;
/// or the errors of the parts, entry by entry, when a position (not canceled), layout or
/// channel is not the event's.
pub async fn render_batch(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
    caller: &str,
    parts: &[Part],
) -> Result<Result<String, FieldErrors>, DbErr> {
    if parts.is_empty() {
        return Ok(Err(
            FieldErrors::new().add("parts", "This list may not be empty.")
        ));
    }
    if parts.len() > MAX_PARTS {
        let message = format!("Please do not submit more than {MAX_PARTS} parts.");
        return Ok(Err(FieldErrors::new().add("parts", message)));
    }
    let found = Found::load(db, ev, parts).await?;
    if let Some(errors) = found.errors(parts) {
        return Ok(Err(errors));
    }
    let orders = crate::domain::orders::complete(db, found.orders).await?;
    let positions = orders.iter().flat_map(|o| &o.positions);
    let names = TicketNames::of_event(db, cache, ev, positions).await?;
    let details = TicketDetails::load(db, cache, ev).await?;
    let now = crate::values::now();
    let mut chosen: HashMap<(i64, String), Arc<Prepared>> = HashMap::new();
    let mut sheets = Vec::with_capacity(parts.len());
    for part in parts {
        let Some((o, p)) = orders.iter().find_map(|o| {
            let p = o.positions.iter().find(|p| p.id == part.position)?;
            Some((o, p))
        }) else {
            continue;
        };
        let prepared = match part
            .layout
            .and_then(|id| found.layouts.iter().find(|l| l.id == id))
        {
            Some(row) => layouts::prepare(db, row).await?,
            None => {
                let channel = part.channel.clone().unwrap_or(o.row.sales_channel.clone());
                let key = (p.item_id, channel);
                match chosen.get(&key) {
                    Some(kept) => kept.clone(),
                    None => {
                        let made =
                            layouts::prepared_for(db, cache, ev.id, Kind::Ticket, key.0, &key.1)
                                .await?;
                        chosen.insert(key, made.clone());
                        made
                    }
                }
            }
        };
        let ticket = super::ticket(ev, o, p, &names, &details);
        let sheet = layouts::sheet(db, ev.id, &prepared, &ticket, now).await?;
        sheets.push((prepared, sheet));
    }
    let data = layouts::draw(sheets, "Tickets".to_owned()).await?;
    let key = files::keep_made(db, (PURPOSE, caller), FILE_NAME, "application/pdf", data).await?;
    Ok(Ok(key))
}

/// What the parts name, as far as it is the event's.
struct Found {
    positions: Vec<order_position::Model>,
    orders: Vec<order::Model>,
    layouts: Vec<pdf_layout::Model>,
    channels: Vec<String>,
}

impl Found {
    async fn load(
        db: &DatabaseConnection,
        ev: &event::Model,
        parts: &[Part],
    ) -> Result<Self, DbErr> {
        let ids: Vec<i64> = parts.iter().map(|p| p.position).collect();
        let positions = order_position::Entity::find()
            .filter(order_position::Column::Id.is_in(ids))
            .filter(order_position::Column::Canceled.eq(false))
            .all(db)
            .await?;
        let order_ids: Vec<i64> = positions.iter().map(|p| p.order_id).collect();
        let orders = order::Entity::find()
            .filter(order::Column::Id.is_in(order_ids))
            .filter(order::Column::EventId.eq(ev.id))
            .all(db)
            .await?;
        let layouts = layouts::list(db, ev.id, Kind::Ticket).await?;
        let channels = if parts.iter().any(|p| p.channel.is_some()) {
            crate::domain::sales_channels::identifiers(db, ev.organizer_id).await?
        } else {
            Vec::new()
        };
        Ok(Self {
            positions,
            orders,
            layouts,
            channels,
        })
    }

    /// The errors of the parts, entry by entry, in pretix's words; none when all are found.
    fn errors(&self, parts: &[Part]) -> Option<FieldErrors> {
        let mut any = false;
        let entries = parts
            .iter()
            .map(|part| {
                let mut e = FieldErrors::new();
                let known = self
                    .positions
                    .iter()
                    .find(|p| p.id == part.position)
                    .is_some_and(|p| self.orders.iter().any(|o| o.id == p.order_id));
                if !known {
                    let message =
                        format!("Invalid pk \"{}\" - object does not exist.", part.position);
                    e.push("orderposition", message);
                }
                if let Some(id) = part.layout
                    && !self.layouts.iter().any(|l| l.id == id)
                {
                    e.push(
                        "override_layout",
                        format!("Invalid pk \"{id}\" - object does not exist."),
                    );
                }
                if let Some(c) = &part.channel
                    && !self.channels.contains(c)
                {
                    e.push(
                        "override_channel",
                        format!("Object with identifier={c} does not exist."),
                    );
                }
                any |= !e.is_empty();
                e
            })
            .collect();
        any.then(|| {
            let mut errors = FieldErrors::new();
            errors.push_entries("parts", entries);
            errors
        })
    }
}
