//! The talk side's file upload, `POST /api/upload/`: a raw file kept for 24 hours for the
//! user whose token sent it, until a talk-side field (speaker avatar, submission image,
//! resource, file answer) claims it with [`files::claim_for_user`]. The storage and its
//! limits are the ticketing side's ([`files::upload`]); the types are pretalx's document
//! types.

use poem::web::Data;
use poem::{Request, RequestBody};
use poem_openapi::param::Header;
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaRequest, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions, OpenApi};

use super::TalkTag;
use crate::api::files::{UploadedFile, binary_body, read_upload, refusal, upload_headers};
use crate::domain::files;
use crate::http::error::UploadResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created};
use crate::state::AppState;

/// A raw file body with what its headers say: the media type of `Content-Type` and the file
/// name of `Content-Disposition`, each `None` when missing or malformed. Nothing is refused
/// when it is extracted, so that the caller is checked first; the body is read only by
/// [`read_upload`], once the upload is known to be allowed.
pub struct TalkFile {
    /// Media type (without parameters such as `charset`).
    pub content_type: Option<String>,
    /// File name, as sent (its last path component).
    pub filename: Option<String>,
    body: poem::Body,
}

impl<'a> ApiExtractor<'a> for TalkFile {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(_registry: &mut Registry) {}

    fn request_meta() -> Option<MetaRequest> {
        Some(binary_body(
            "The file itself, sent as its own `Content-Type` or as \
             `application/octet-stream`, which takes the type of the file name's extension; \
             `Content-Disposition: attachment; filename=<name>` is required, the name ending \
             in an extension of the type.",
        ))
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let (content_type, filename) = upload_headers(request);
        Ok(Self {
            content_type,
            filename,
            body: body.take()?,
        })
    }
}

/// Talk-side upload operations.
pub struct TalkUploadApi;

#[OpenApi(tag = "TalkTag::Files")]
impl TalkUploadApi {
    /// Upload a file (talk side)
    ///
    /// Send the file as the raw body, with its `Content-Type` and
    /// `Content-Disposition: attachment; filename=<name>` (400 without either). The answer's
    /// `id` goes into a talk-side field that takes files (speaker avatar, submission image,
    /// resource, file answer); it is valid for 24 hours and only for the user whose token
    /// uploaded it. Needs a user token that may write on some endpoint, whatever its user's
    /// teams, as pretalx (401 without a token, 403 for a read-only one). Accepted types, as
    /// pretalx's: PNG, JPEG, GIF, WebP, BMP and TIFF images, PDF, office documents (DOC, DOCX,
    /// XLS, XLSX, PPT, PPTX, RTF, ODT, ODS, ODP), plain text, CSV and ZIP (400 for any
    /// other); the file name must end in an extension of the type (400), and an image must
    /// be what its type says (400). Up to `talk_upload_max_bytes` (10 MiB unless
    /// configured; 413 beyond). Uploads share the storage and the limits of
    /// `/api/v1/upload`: each user may keep at most 100 unused uploads, 100 MiB together, at
    /// a time (429 beyond, until some are used or expire).
    #[oai(path = "/api/upload", method = "post")]
    async fn talk_upload(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// `attachment; filename=<name>`, required (400 without it; checked after the
        /// token).
        #[oai(name = "Content-Disposition")]
        _disposition: Header<Option<String>>,
        body: TalkFile,
    ) -> UploadResult<Created<UploadedFile>> {
        let user_id = talk.user_id()?;
        if !talk
            .token()
            .is_some_and(|(_, endpoints, _)| endpoints.any_write())
        {
            return Err(ApiError::forbidden_because(
                "Uploading files needs a token that may write; this one may only read.",
            )
            .into());
        }
        let content_type = body
            .content_type
            .ok_or_else(|| ApiError::bad_request("A Content-Type header is required."))?;
        let filename = body.filename.ok_or_else(|| {
            ApiError::bad_request(
                "A Content-Disposition header of the form \
                 'attachment; filename=<name>' is required.",
            )
        })?;
        let content_type = files::upload_type(&content_type, &filename, &files::DOCUMENT_TYPES)
            .unwrap_or(&content_type)
            .to_owned();
        if let Some(message) = files::check_document_name(&content_type, &filename) {
            return Err(ApiError::bad_request(message).into());
        }
        let data = read_upload(body.body, state.config.talk_upload_max_bytes).await?;
        if let Some(message) = files::check_document_contents(&content_type, &data) {
            return Err(ApiError::bad_request(message).into());
        }
        let owner = files::user_owner(user_id);
        match files::upload(&state.db, &owner, &filename, &content_type, data).await? {
            Ok(id) => Ok(Created::Created(Json(UploadedFile { id }))),
            Err(refused) => Err(refusal(refused).into()),
        }
    }
}
