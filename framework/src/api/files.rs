//! File uploads (`POST /api/v1/upload`) and the public media files resources point to.

use poem::error::{ReadBodyError, ResponseError};
use poem::http::{StatusCode, header};
use poem::web::{Data, Path};
use poem::{Request, RequestBody, Response, handler};
use poem_openapi::param::Header;
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions, Object, OpenApi};

use super::Tag;
use crate::domain::files::{self, UploadRefused};
use crate::http::auth::EventScope;
use crate::http::error::UploadResult;
use crate::http::{ApiError, Auth, Caller, Created};
use crate::state::AppState;

/// A raw file body with its media type and the file name of its `Content-Disposition`. The
/// headers are checked when it is extracted; the body itself is read only by [`FileBody::read`],
/// once the caller is known to be allowed to upload.
pub struct FileBody {
    /// File name, as sent (its last path component).
    pub filename: String,
    /// Media type, one of [`files::ACCEPTED_TYPES`].
    pub content_type: String,
    body: poem::Body,
}

impl FileBody {
    /// The contents: 413 beyond [`files::MAX_SIZE`], 400 when empty or unreadable.
    pub async fn read(self) -> Result<Vec<u8>, ApiError> {
        read_upload(self.body, files::MAX_SIZE).await
    }
}

/// The contents of an uploaded file's body: 413 beyond `max` bytes, 400 when empty or
/// unreadable.
pub(crate) async fn read_upload(body: poem::Body, max: usize) -> Result<Vec<u8>, ApiError> {
    let data = body
        .into_bytes_limit(max)
        .await
        .map_err(|e| match e {
            ReadBodyError::PayloadTooLarge => ApiError::detail(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "The uploaded file is too large ({} at most).",
                    size_text(max)
                ),
            ),
            other => ApiError::bad_request(format!("The upload could not be read: {other}")),
        })?
        .to_vec();
    if data.is_empty() {
        return Err(ApiError::bad_request("The uploaded file is empty."));
    }
    Ok(data)
}

/// A size for messages: whole mebibytes as "N MB", anything else in bytes.
fn size_text(bytes: usize) -> String {
    const MB: usize = 1024 * 1024;
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The file name of `Content-Disposition: attachment; filename=...`.
pub(crate) fn disposition_filename(value: &str) -> Option<String> {
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
        Some(binary_body(
            "The file itself, sent as its own `Content-Type` (`image/png`, `image/jpeg`, \
             `image/gif` or `image/webp`) or as `application/octet-stream` with a file name \
             ending in the type's extension (`.png`, `.jpg`, `.jpeg`, `.gif`, `.webp`); \
             `Content-Disposition: attachment; filename=<name>` is required.",
        ))
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let (content_type, filename) = upload_headers(request);
        let content_type = content_type
            .ok_or_else(|| ApiError::bad_request("A Content-Type header is required."))?;
        let filename = filename.ok_or_else(|| {
            ApiError::bad_request(
                "A Content-Disposition header of the form \
                 'attachment; filename=<name>' is required.",
            )
        })?;
        let content_type = files::upload_type(&content_type, &filename, &files::ACCEPTED_TYPES)
            .filter(|t| files::ACCEPTED_TYPES.contains(t))
            .ok_or_else(|| {
                ApiError::detail(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!(
                        "Unsupported media type \"{content_type}\" in request: only PNG, JPEG, \
                         GIF and WebP images are accepted (as application/octet-stream, with \
                         the file name's extension saying which)."
                    ),
                )
            })?
            .to_owned();
        Ok(Self {
            filename,
            content_type,
            body: body.take()?,
        })
    }
}

/// A request body of one file: documented as binary data in `application/octet-stream`, the
/// one binary form code generators take; the operation's description names the types.
pub(crate) fn binary_body(description: &'static str) -> MetaRequest {
    MetaRequest {
        description: Some(description),
        content: vec![MetaMediaType {
            content_type: files::OCTET_STREAM,
            schema: MetaSchemaRef::Inline(Box::new(MetaSchema::new_with_format(
                "string", "binary",
            ))),
        }],
        required: true,
    }
}

/// What the headers of an upload say: the media type of `Content-Type` (without parameters)
/// and the file name of `Content-Disposition`, each `None` when missing or malformed.
pub(crate) fn upload_headers(request: &Request) -> (Option<String>, Option<String>) {
    let content_type = request
        .content_type()
        .and_then(|ct| ct.parse::<mime::Mime>().ok())
        .map(|m| m.essence_str().to_owned());
    let filename = request
        .headers()
        .get(header::CONTENT_DISPOSITION)
        .and_then(|v| v.to_str().ok())
        .and_then(disposition_filename);
    (content_type, filename)
}

/// The ID of an uploaded file.
#[derive(Object)]
pub struct UploadedFile {
    /// File ID (`file:<key>`), usable by the same caller for 24 hours.
    pub id: String,
}

/// A stored private file (a file answer) as a download: its own media type, one of
/// [`files::ANSWER_TYPES`], and `Content-Disposition: attachment` with a file name.
pub struct StoredFile {
    /// The file.
    pub file: crate::db::entities::file::Model,
    /// The file name to save it as.
    pub filename: String,
}

impl poem::IntoResponse for StoredFile {
    fn into_response(self) -> Response {
        let content_type = if files::ANSWER_TYPES.contains(&self.file.content_type.as_str()) {
            self.file.content_type.as_str()
        } else {
            "application/octet-stream"
        };
        Response::builder()
            .content_type(content_type)
            .header(
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", self.filename),
            )
            .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
            .header(header::CONTENT_SECURITY_POLICY, MEDIA_CSP)
            .header(header::CACHE_CONTROL, "private, no-store")
            .body(self.file.data)
    }
}

impl poem_openapi::ApiResponse for StoredFile {
    fn meta() -> poem_openapi::registry::MetaResponses {
        use poem_openapi::registry::{MetaResponse, MetaResponses};
        use poem_openapi::types::Type;
        let content = (files::ANSWER_TYPES.iter())
            .chain(["application/octet-stream"].iter())
            .map(|&content_type| MetaMediaType {
                content_type,
                schema: <poem_openapi::types::Binary<Vec<u8>>>::schema_ref(),
            })
            .collect();
        MetaResponses {
            responses: vec![MetaResponse {
                description: "The file, as an attachment.",
                status: Some(200),
                status_range: None,
                content,
                headers: vec![],
            }],
        }
    }

    fn register(_registry: &mut Registry) {}
}

/// File upload operations.
pub struct FilesApi;

#[OpenApi(tag = "Tag::Files")]
impl FilesApi {
    /// Upload a file
    ///
    /// Send the file as the raw body. The answer's `id` goes into the field that takes the
    /// file (an item's `picture`, the answer to a file question); it is valid for 24 hours and
    /// only for the same caller. Uploading needs a permission of a field that takes files
    /// (`can_change_items`, `can_change_orders` or `can_change_event_settings` for some event);
    /// 403 otherwise. Accepted
    /// types are those such a field takes: PNG, JPEG, GIF and WebP images and PDF (415 for
    /// any other), whose contents must be what the `Content-Type` says (400 otherwise), up
    /// to 10 MB each (413). Each caller may keep at most 100 unused
    /// uploads, 100 MiB together, at a time; beyond that, 429 until some are used or expire.
    /// The file name is kept only as `[A-Za-z0-9._-]` (others become `_`), at most 100
    /// characters, ending in the type's extension.
    #[oai(path = "/api/v1/upload", method = "post")]
    async fn upload(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        /// `attachment; filename=<name>`: the name has a character other than `.` and space,
        /// and none of `"`, `/`, `\` and `;`.
        #[oai(
            name = "Content-Disposition",
            validator(
                pattern = r#"^attachment; *filename="?[\x20\x21\x23-\x2E\x30-\x3A\x3C-\x5B\x5D-\x7E]*[\x21\x23-\x2D\x30-\x3A\x3C-\x5B\x5D-\x7E][\x20\x21\x23-\x2E\x30-\x3A\x3C-\x5B\x5D-\x7E]*"?$"#
            )
        )]
        _disposition: Header<String>,
        body: FileBody,
    ) -> UploadResult<Created<UploadedFile>> {
        if !may_upload(&auth.0) {
            return Err(ApiError::forbidden_because(
                "Uploading files needs a permission to change something that takes them: \
                 can_change_items, can_change_orders or can_change_event_settings for some \
                 event.",
            )
            .into());
        }
        let filename = body.filename.clone();
        let content_type = body.content_type.clone();
        let data = body.read().await?;
        if !files::contents_match(&content_type, &data) {
            return Err(ApiError::bad_request(format!(
                "The file's contents are not a {} as its Content-Type \"{content_type}\" says.",
                files::type_name(&content_type)
            ))
            .into());
        }
        let stored = files::upload(
            &state.db,
            &auth.0.identity(),
            &filename,
            &content_type,
            data,
        )
        .await?;
        match stored {
            Ok(id) => Ok(Created::Created(Json(UploadedFile { id }))),
            Err(refused) => Err(refusal(refused).into()),
        }
    }
}

/// The answer to an upload [`files::upload`] refused.
pub(crate) fn refusal(refused: UploadRefused) -> ApiError {
    match refused {
        UploadRefused::OverLimit { retry_after_secs } => ApiError::detail(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "Too many unused uploads: at most {} files, {} MiB together, may wait to \
                 be used at a time. Use them, or wait until the oldest expires in {} \
                 seconds.",
                files::MAX_UNCLAIMED_FILES,
                files::MAX_UNCLAIMED_BYTES / (1024 * 1024),
                retry_after_secs
            ),
        )
        .header(header::RETRY_AFTER, &retry_after_secs.to_string()),
    }
}

/// Whether the caller holds a permission of a field that claims uploads
/// ([`files::CLAIMING_PERMISSIONS`], event permissions) for some event it can reach: whoever
/// could never claim an upload may not store one.
fn may_upload(caller: &Caller) -> bool {
    caller.grants.iter().any(|g| {
        files::CLAIMING_PERMISSIONS
            .iter()
            .any(|&p| g.permissions.has(p))
            && !matches!(&g.events, EventScope::Only(ids) if ids.is_empty())
    })
}

/// The `Content-Security-Policy` of a served file: whatever a browser renders of it runs
/// sandboxed and loads nothing, even if it is not what its type says.
const MEDIA_CSP: &str = "default-src 'none'; sandbox";

/// Serves a claimed file under `/media/{key}/{filename}`, publicly. It is served as its stored
/// type, inline, only when that type is accepted and the contents match it; anything else is
/// an `application/octet-stream` attachment. The name in the path is ignored; the
/// `Content-Disposition` carries the stored name, made safe.
#[handler]
pub async fn media(
    state: Data<&AppState>,
    Path((key, _filename)): Path<(String, String)>,
) -> Response {
    match files::claimed(&state.db, &key).await {
        Ok(Some(f)) => {
            let name = files::safe_filename(&f.filename, &f.content_type);
            let trusted = files::PICTURE_TYPES.contains(&f.content_type.as_str())
                && files::contents_match(&f.content_type, &f.data);
            let (content_type, disposition) = if trusted {
                (f.content_type.as_str(), "inline")
            } else {
                ("application/octet-stream", "attachment")
            };
            Response::builder()
                .content_type(content_type)
                .header(
                    header::CONTENT_DISPOSITION,
                    format!("{disposition}; filename=\"{name}\""),
                )
                .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
                .header(header::CONTENT_SECURITY_POLICY, MEDIA_CSP)
                .header(header::CACHE_CONTROL, "public, max-age=31536000, immutable")
                .body(f.data)
        }
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
