//! Success responses shared by the resources.

use poem::Response;
use poem::http::header;
use poem_openapi::ApiResponse;
use poem_openapi::payload::{Json, Payload};
use poem_openapi::registry::{MetaMediaType, Registry};
use poem_openapi::types::{ToJSON, Type};

use crate::domain::tickets::Download;

/// 201 with the created object.
#[derive(ApiResponse)]
pub enum Created<T: ToJSON + Type + Send> {
    /// Created.
    #[oai(status = 201)]
    Created(Json<T>),
}

/// 204 without a body.
#[derive(ApiResponse)]
pub enum NoContent {
    /// Done.
    #[oai(status = 204)]
    NoContent,
}

/// 200 with a JSON body already serialised (a kept answer); documented as `T`.
pub struct JsonBytes<T>(
    pub std::sync::Arc<[u8]>,
    std::marker::PhantomData<fn() -> T>,
);

impl<T: ToJSON> JsonBytes<T> {
    /// Serialises a value.
    pub fn new(value: &T) -> Self {
        let bytes = serde_json::to_vec(&value.to_json()).unwrap_or_default();
        Self::from_bytes(bytes.into())
    }

    /// Wraps bytes already serialised from a `T`.
    pub fn from_bytes(bytes: std::sync::Arc<[u8]>) -> Self {
        Self(bytes, std::marker::PhantomData)
    }
}

impl<T: ToJSON> poem::IntoResponse for JsonBytes<T> {
    fn into_response(self) -> poem::Response {
        poem::Response::builder()
            .content_type(Json::<T>::CONTENT_TYPE)
            .body(self.0.to_vec())
    }
}

impl<T: ToJSON> poem_openapi::ApiResponse for JsonBytes<T> {
    fn meta() -> poem_openapi::registry::MetaResponses {
        Json::<T>::meta()
    }

    fn register(registry: &mut poem_openapi::registry::Registry) {
        <Json<T> as poem_openapi::ApiResponse>::register(registry);
    }
}

/// A ticket file, as an attachment (the API's downloads and the order page's).
pub struct TicketDownload(pub Download);

impl poem::IntoResponse for TicketDownload {
    fn into_response(self) -> Response {
        let Download { file, file_name } = self.0;
        Response::builder()
            .content_type(file.content_type)
            .header(
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file_name}\""),
            )
            .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
            .header(header::CACHE_CONTROL, "private, no-store")
            .body(file.data)
    }
}

impl poem_openapi::ApiResponse for TicketDownload {
    fn meta() -> poem_openapi::registry::MetaResponses {
        use poem_openapi::registry::{MetaResponse, MetaResponses};
        use poem_openapi::types::Type;
        MetaResponses {
            responses: vec![MetaResponse {
                description: "The ticket file, as an attachment.",
                status: Some(200),
                status_range: None,
                content: ["application/pdf", "application/octet-stream"]
                    .into_iter()
                    .map(|content_type| MetaMediaType {
                        content_type,
                        schema: <poem_openapi::types::Binary<Vec<u8>>>::schema_ref(),
                    })
                    .collect(),
                headers: vec![],
            }],
        }
    }

    fn register(_registry: &mut Registry) {}
}

/// Why a made file cannot be fetched (410), in pretix's shape.
#[derive(poem_openapi::Object)]
pub struct MadeFileGone {
    /// Always `failed`.
    pub status: String,
    /// What failed.
    pub message: String,
}

/// A file made on request and kept for its caller, fetched by its key (pretix's download of
/// an asynchronous job): 200 with the file, or 410 when it is unknown, expired or another
/// caller's.
pub enum MadeFile {
    /// The file.
    Ready(TicketDownload),
    /// Unknown, expired, or not the caller's.
    Gone,
}

impl poem::IntoResponse for MadeFile {
    fn into_response(self) -> Response {
        match self {
            Self::Ready(file) => file.into_response(),
            Self::Gone => {
                let body = MadeFileGone {
                    status: "failed".into(),
                    message: "Unknown file ID or export failed".into(),
                };
                let mut answer = Json(body).into_response();
                answer.set_status(poem::http::StatusCode::GONE);
                answer
            }
        }
    }
}

impl poem_openapi::ApiResponse for MadeFile {
    fn meta() -> poem_openapi::registry::MetaResponses {
        use poem_openapi::registry::MetaResponse;
        let mut meta = TicketDownload::meta();
        meta.responses.push(MetaResponse {
            description: "The file is unknown, expired, or another caller's.",
            status: Some(410),
            status_range: None,
            content: vec![MetaMediaType {
                content_type: "application/json",
                schema: <MadeFileGone as Type>::schema_ref(),
            }],
            headers: vec![],
        });
        meta
    }

    fn register(registry: &mut Registry) {
        <MadeFileGone as Type>::register(registry);
    }
}
