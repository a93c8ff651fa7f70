//! Ticket outputs: the files a ticket can be downloaded as (pretix's
//! `register_ticket_outputs`). The core decides which positions get a ticket and when an
//! order's tickets may be had ([`crate::domain::tickets`]); an output makes the file.

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr};

use crate::db::entities::{event, order};
use crate::domain::cache::Cache;
use crate::domain::tickets::variables::Ticket;

/// A ticket file as an output made it.
#[derive(Debug, Clone)]
pub struct TicketFile {
    /// Its media type, e.g. `application/pdf`.
    pub content_type: String,
    /// The extension of its file name, with the dot, e.g. `.pdf`.
    pub extension: String,
    /// The file.
    pub data: Vec<u8>,
}

/// What an output is asked to make: the tickets of some of an order's positions, in one
/// file.
#[derive(Debug)]
pub struct TicketRequest<'a> {
    /// The event.
    pub event: &'a event::Model,
    /// The order.
    pub order: &'a order::Model,
    /// The tickets, in the order they go in the file.
    pub tickets: Vec<Ticket<'a>>,
    /// The time printed on them.
    pub now: DateTime<Utc>,
    /// The process cache at its current generation, for what the output reads of the
    /// event's configuration (none while the cache is off).
    pub cache: Option<(&'a Cache, u64)>,
}

/// A kind of ticket file.
#[async_trait::async_trait]
pub trait TicketOutput: Send + Sync + 'static {
    /// The identifier downloads name it by, e.g. `pdf`; its event setting
    /// `ticketoutput_<identifier>__enabled` switches it off.
    fn identifier(&self) -> &str;

    /// A name for people, e.g. "PDF".
    fn name(&self) -> &str;

    /// Whether buyers are offered it (in `downloads`, on the order page, in mails); else
    /// only the API's download serves it (e.g. badges for the door).
    fn offered_to_customers(&self) -> bool {
        true
    }

    /// Makes the file of the request's tickets.
    async fn render(
        &self,
        db: &DatabaseConnection,
        request: &TicketRequest<'_>,
    ) -> Result<TicketFile, DbErr>;
}
