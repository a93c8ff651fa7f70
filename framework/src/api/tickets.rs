//! Ticket downloads, as pretix's: `orders/{code}/download/{output}/` (the order's tickets in
//! one file) and `orderpositions/{id}/download/{output}/` (one ticket). The rules are
//! `domain::tickets`'; the files are made by the ticket outputs the event offers.

use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::Path;

use super::Tag;
use super::orders::viewed;
use crate::domain::orders;
use crate::domain::permissions::Permission;
use crate::domain::settings;
use crate::domain::tickets::{self, DownloadRefused};
use crate::http::error::ReadResult;
use crate::http::{ApiError, Auth, TicketDownload};
use crate::state::AppState;

fn refused(refusal: DownloadRefused) -> ApiError {
    match refusal {
        DownloadRefused::UnknownOutput => ApiError::not_found("Unknown output provider."),
        DownloadRefused::NotAvailable(why) => ApiError::forbidden_because(why.message()),
    }
}

/// Ticket download operations.
pub struct TicketsApi;

#[OpenApi(tag = "Tag::Orders")]
impl TicketsApi {
    /// Download an order's tickets
    ///
    /// Every ticket of the order in one file of the output (e.g. `pdf`). 404 for an output
    /// the event does not offer; 403 for a canceled or expired order, and for a pending one
    /// unless its tickets are valid while pending or the event lets pending orders have
    /// them (`ticket_download_pending`). Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/download/:output",
        method = "get"
    )]
    async fn download_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        output: Path<String>,
    ) -> ReadResult<TicketDownload> {
        let (ev, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        let cache = state.cache.current().await;
        let values = settings::of_event(&state.db, &state.settings, cache, &ev.event).await?;
        let maker = state.ticket_maker(cache, &values);
        match tickets::download(maker, &ev.event, &o, None, &output).await? {
            Ok(download) => Ok(TicketDownload(download)),
            Err(refusal) => Err(refused(refusal).into()),
        }
    }

    /// Download a position's ticket
    ///
    /// The ticket of one position in a file of the output (`pdf`, or `badge` for the door).
    /// As the order's download; 403 too when the position's product has no ticket. Needs
    /// `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id/download/:output",
        method = "get"
    )]
    async fn download_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        output: Path<String>,
    ) -> ReadResult<TicketDownload> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let (o, p) = orders::for_ticket(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(|| ApiError::not_found("Not found."))?;
        let cache = state.cache.current().await;
        let values = settings::of_event(&state.db, &state.settings, cache, &ev.event).await?;
        let maker = state.ticket_maker(cache, &values);
        match tickets::download(maker, &ev.event, &o, Some(&p), &output).await? {
            Ok(download) => Ok(TicketDownload(download)),
            Err(refusal) => Err(refused(refusal).into()),
        }
    }
}
