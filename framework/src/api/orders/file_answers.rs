//! The files of positions' file answers (`orderpositions/{id}/answer/{question}/`) and the
//! images ticket layouts take from them (`orderpositions/{id}/pdf_image/{key}/`), served to
//! callers who may read orders.

use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::Path;

use crate::api::Tag;
use crate::api::files::StoredFile;
use crate::db::entities::{file, order_position};
use crate::domain::files;
use crate::domain::orders::{Order, file_answers, positions};
use crate::domain::permissions::Permission;
use crate::http::error::ReadResult;
use crate::http::{ApiError, Auth};
use crate::state::AppState;

/// File answer operations.
pub struct FileAnswersApi;

/// The live position of the event with its order, for a caller who may read orders; 404
/// for an unknown one.
async fn position(
    state: &AppState,
    auth: &Auth,
    (organizer, event): (&str, &str),
    id: i64,
) -> Result<(String, Order, order_position::Model), ApiError> {
    let ev = auth
        .0
        .event(&state.db, organizer, event, Some(Permission::ViewOrders))
        .await?;
    let (o, p) = positions::find(&state.db, ev.event.id, id, false)
        .await?
        .ok_or_else(|| ApiError::not_found("Not found."))?;
    Ok((ev.event.slug, o, p))
}

/// `EVENT-CODE-1` and, when given, `-{suffix}`, with the stored file's extension, made safe
/// for a header.
fn download_name(
    event: &str,
    o: &Order,
    p: &order_position::Model,
    suffix: &str,
    f: &file::Model,
) -> String {
    let extension = f.filename.rsplit_once('.').map_or("bin", |(_, e)| e);
    let name = format!(
        "{}-{}-{}{suffix}.{extension}",
        event.to_uppercase(),
        o.row.code,
        p.positionid
    );
    files::safe_filename(&name, &f.content_type)
}

#[OpenApi(tag = "Tag::Orders")]
impl FileAnswersApi {
    /// Download the file of a file answer
    ///
    /// The file a position's answer to a file question holds, as pretix: 404 when the answer
    /// is not a file. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id/answer/:question",
        method = "get"
    )]
    async fn answer_file(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        question: Path<i64>,
    ) -> ReadResult<StoredFile> {
        let (event, o, p) = position(&state, &auth, (&organizer, &event), *id).await?;
        let file = file_answers::answer_file(&state.db, o.row.event_id, &p, *question).await?;
        let filename = download_name(&event, &o, &p, "", &file);
        Ok(StoredFile { file, filename })
    }

    /// Download an image of a position's ticket layout
    ///
    /// The image behind a layout key, as pretixSCAN fetches it to print: `question_<identifier>`
    /// of a file question gives the position's image answer (or its base position's, for an
    /// add-on). 404 "Unknown key" or "No image available". Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id/pdf_image/:key",
        method = "get"
    )]
    async fn pdf_image(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        key: Path<String>,
    ) -> ReadResult<StoredFile> {
        let (event, o, p) = position(&state, &auth, (&organizer, &event), *id).await?;
        let file = file_answers::layout_image(&state.db, o.row.event_id, &p, &key).await?;
        let filename = download_name(&event, &o, &p, &format!("-{}", *key), &file);
        Ok(StoredFile { file, filename })
    }
}
