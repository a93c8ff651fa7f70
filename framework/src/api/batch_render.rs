//! Tickets rendered in a batch, as pretix's ticket output plugin offers them:
//! `ticketpdfrenderer/render_batch/` makes one PDF of up to 1000 positions' tickets and
//! answers where to fetch it; `ticketpdfrenderer/download/{job}/{file}/` serves it to the
//! caller who asked, for 24 hours. The rules are `domain::tickets::batch_render`'s.

use poem::web::Data;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use super::Tag;
use crate::domain::extensions::tickets::TicketFile;
use crate::domain::files;
use crate::domain::permissions::Permission;
use crate::domain::tickets::Download;
use crate::domain::tickets::batch_render::{self, FILE_NAME, PURPOSE, Part};
use crate::http::error::{ReadResult, WriteResult};
use crate::http::{ApiError, Auth, JsonBody, MadeFile, TicketDownload};
use crate::state::AppState;

/// One ticket of a batch.
#[derive(Object)]
#[oai(rename = "RenderPart")]
pub struct PartIn {
    /// The position's ID.
    pub orderposition: i64,
    /// A ticket layout of the event to print it with instead of its own.
    pub override_layout: Option<i64>,
    /// The identifier of a sales channel to choose its layout for instead of its order's.
    #[oai(validator(max_length = 190))]
    pub override_channel: Option<String>,
}

/// What to render.
#[derive(Object)]
#[oai(rename = "RenderBatch")]
pub struct BatchIn {
    /// The tickets, in the order of the file's pages (at most 1000).
    pub parts: Vec<PartIn>,
}

/// Where the rendered file is fetched.
#[derive(Object)]
#[oai(rename = "RenderJob")]
pub struct JobOut {
    /// The URL of the file.
    pub download: String,
}

/// 202 with where to fetch the file.
#[derive(ApiResponse)]
pub enum Accepted {
    /// Rendered; fetch it at `download` within 24 hours.
    #[oai(status = 202)]
    Accepted(Json<JobOut>),
}

/// Batch rendering operations.
pub struct BatchRenderApi;

#[OpenApi(tag = "Tag::Orders")]
impl BatchRenderApi {
    /// Render tickets in a batch
    ///
    /// One PDF of the tickets of up to 1000 positions of the event, each with the layout
    /// chosen for it, or the one `override_layout` names, or as if sold in
    /// `override_channel`. 400 with errors per part for positions (canceled ones included),
    /// layouts or channels the event does not have. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketpdfrenderer/render_batch",
        method = "post"
    )]
    async fn render_batch(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<BatchIn>,
    ) -> WriteResult<Accepted> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let parts: Vec<Part> = body
            .0
            .parts
            .into_iter()
            .map(|p| Part {
                position: p.orderposition,
                layout: p.override_layout,
                channel: p.override_channel,
            })
            .collect();
        let caller = auth.0.identity();
        let cache = state.cache.current().await;
        let key = batch_render::render_batch(&state.db, cache, &ev.event, &caller, &parts)
            .await?
            .map_err(ApiError::fields)?;
        let download = format!(
            "{}/api/v1/organizers/{}/events/{}/ticketpdfrenderer/download/{key}/{key}/",
            state.public_url, ev.organizer.slug, ev.event.slug
        );
        Ok(Accepted::Accepted(Json(JobOut { download })))
    }

    /// Fetch tickets rendered in a batch
    ///
    /// The PDF `render_batch` made, for the caller who asked, within 24 hours; 410 with
    /// `{"status": "failed"}` for an unknown, expired or another caller's file. Needs
    /// `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketpdfrenderer/download/:job/:file",
        method = "get"
    )]
    async fn download(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        #[oai(name = "job")] _job: Path<String>,
        file: Path<String>,
    ) -> ReadResult<MadeFile> {
        auth.0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let caller = auth.0.identity();
        let Some(made) = files::made(&state.db, (PURPOSE, &caller), &file).await? else {
            return Ok(MadeFile::Gone);
        };
        let file = TicketFile {
            content_type: made.content_type,
            extension: ".pdf".into(),
            data: made.data,
        };
        let file_name = FILE_NAME.to_owned();
        Ok(MadeFile::Ready(TicketDownload(Download {
            file,
            file_name,
        })))
    }
}
