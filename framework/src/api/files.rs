//! File uploads (`POST /api/v1/upload`) and the public media files resources point to.

use poem::error::{ReadBodyError, ResponseError};
use poem::http::{StatusCode, header};
use poem::web::{Data, Path};
use poem::{Request, RequestBody, Response, handler};
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions, Object, OpenApi};

use super::Tag;
use crate::domain::files;
use crate::http::error::WriteResult;
use crate::http::{ApiError, Auth, Created};
use crate::state::AppState;

/// A raw file body with its media type and the file name of its `Content-Disposition`.
#[derive(Debug)]
pub struct FileBody {
    /// File name.
    pub filename: String,
    /// Media type.
    pub content_type: String,
    /// Contents.
    pub data: Vec<u8>,
}

/// The file name of `Content-Disposition: attachment; filename=...`.
fn disposition_filename(value: &str) -> Option<String> {
    let mut parts = value.split(';').map(str::trim);
    if !parts.next()?.eq_ignore_ascii_case("attachment") {
        return None;
    }
    let name = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("filename")
            .then(|| v.trim().trim_matches('"').to_owned())
    })?;
    // Keep the last path component only; a name is never a path.
    let name = name.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_owned())
}

impl<'a> ApiExtractor<'a> for FileBody {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(_registry: &mut Registry) {}

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: Some(
                "The file itself; `Content-Type` and \
                 `Content-Disposition: attachment; filename=<name>` are required.",
            ),
            content: vec![MetaMediaType {
                content_type: "*/*",
                schema: MetaSchemaRef::Inline(Box::new(MetaSchema::new_with_format(
                    "string", "binary",
                ))),
            }],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let content_type = request
            .content_type()
            .and_then(|ct| ct.parse::<mime::Mime>().ok())
            .map(|m| m.essence_str().to_owned())
            .ok_or_else(|| ApiError::bad_request("A Content-Type header is required."))?;
        if !files::ACCEPTED_TYPES.contains(&content_type.as_str()) {
            return Err(ApiError::detail(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("Unsupported media type \"{content_type}\" in request."),
            )
            .into());
        }
        let filename = request
            .headers()
            .get(header::CONTENT_DISPOSITION)
            .and_then(|v| v.to_str().ok())
            .and_then(disposition_filename)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "A Content-Disposition header of the form \
                     'attachment; filename=<name>' is required.",
                )
            })?;
        let data = body
            .take()?
            .into_bytes_limit(files::MAX_SIZE)
            .await
            .map_err(|e| match e {
                ReadBodyError::PayloadTooLarge => ApiError::detail(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "The uploaded file is too large (10 MB at most).",
                ),
                other => ApiError::bad_request(format!("The upload could not be read: {other}")),
            })?
            .to_vec();
        if data.is_empty() {
            return Err(ApiError::bad_request("The uploaded file is empty.").into());
        }
        Ok(Self {
            filename,
            content_type,
            data,
        })
    }
}

/// The ID of an uploaded file.
#[derive(Object)]
pub struct UploadedFile {
    /// File ID (`file:<key>`), usable by the same caller for 24 hours.
    pub id: String,
}

/// File upload operations.
pub struct FilesApi;

#[OpenApi(tag = "Tag::Files")]
impl FilesApi {
    /// Upload a file
    ///
    /// Send the file as the raw body. The answer's `id` goes into the field that takes the
    /// file (e.g. an item's `picture`); it is valid for 24 hours and only for the same
    /// caller. Accepted types: PNG, JPEG, GIF, WebP images and PDF, up to 10 MB.
    #[oai(path = "/api/v1/upload", method = "post")]
    async fn upload(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        body: FileBody,
    ) -> WriteResult<Created<UploadedFile>> {
        let id = files::upload(
            &state.db,
            &auth.0.identity(),
            &body.filename,
            &body.content_type,
            body.data,
        )
        .await?;
        Ok(Created::Created(Json(UploadedFile { id })))
    }
}

/// Serves a claimed file under `/media/{key}/{filename}`, publicly.
#[handler]
pub async fn media(
    state: Data<&AppState>,
    Path((key, _filename)): Path<(String, String)>,
) -> Response {
    match files::claimed(&state.db, &key).await {
        Ok(Some(f)) => Response::builder()
            .content_type(f.content_type)
            .header(header::CACHE_CONTROL, "public, max-age=31536000, immutable")
            .body(f.data),
        Ok(None) => ApiError::not_found("Not found.").as_response(),
        Err(e) => ApiError::from(e).as_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::disposition_filename;

    #[test]
    fn the_file_name_comes_from_an_attachment_disposition() {
        assert_eq!(
            disposition_filename("attachment; filename=\"logo.png\"").as_deref(),
            Some("logo.png")
        );
        assert_eq!(
            disposition_filename("attachment; filename=../../x.png").as_deref(),
            Some("x.png")
        );
        assert_eq!(disposition_filename("inline; filename=a.png"), None);
        assert_eq!(disposition_filename("attachment"), None);
        assert_eq!(disposition_filename("attachment; filename=\"\""), None);
    }
}
