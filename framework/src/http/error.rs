//! Error answers in the spec's two shapes: `{"detail": "..."}` and `{"field": ["message"]}`,
//! and the sets of error statuses each operation documents.

use std::marker::PhantomData;

use poem::http::{HeaderValue, StatusCode, header};
use poem::{Response, error::ResponseError};
use poem_openapi::registry::{MetaMediaType, MetaResponse, MetaResponses, Registry};
use poem_openapi::{ApiResponse, Object, types::Type};
use serde_json::{Map, Value, json};

/// An error answer of the API.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    body: Value,
    headers: Vec<(header::HeaderName, String)>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.body)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// A general error: `{"detail": message}`.
    pub fn detail(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            body: json!({ "detail": message.into() }),
            headers: Vec::new(),
        }
    }

    /// 400 with a general message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::BAD_REQUEST, message)
    }

    /// 400 for one field: `{field: [message]}`.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::fields(FieldErrors::new().add(field, message))
    }

    /// 400 with errors for several fields.
    pub fn fields(errors: FieldErrors) -> Self {
        Self::with_body(StatusCode::BAD_REQUEST, Value::Object(errors.0))
    }

    /// Any status with a body already in one of the two shapes.
    pub fn with_body(status: StatusCode, body: Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// 401, with the `WWW-Authenticate` challenge.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::UNAUTHORIZED, message).header(header::WWW_AUTHENTICATE, "Token")
    }

    /// 403: the object does not exist, or the caller may not see or change it.
    pub fn forbidden() -> Self {
        Self::detail(
            StatusCode::FORBIDDEN,
            "You do not have permission to perform this action.",
        )
    }

    /// 403 with a specific reason.
    pub fn forbidden_because(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::FORBIDDEN, message)
    }

    /// 404 with a message.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::detail(StatusCode::NOT_FOUND, message)
    }

    /// 405 naming the method, with the `Allow` header.
    pub fn method_not_allowed(method: &str, allow: &str) -> Self {
        Self::detail(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("Method \"{method}\" not allowed."),
        )
        .header(header::ALLOW, allow)
    }

    /// 409 for one field.
    pub fn conflict(field: &str, message: impl Into<String>) -> Self {
        Self::with_body(StatusCode::CONFLICT, json!({ field: [message.into()] }))
    }

    /// 429 with `Retry-After` in seconds.
    pub fn too_many_requests(retry_after_secs: u64) -> Self {
        Self::detail(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Request was throttled. Expected available in {retry_after_secs} seconds."),
        )
        .header(header::RETRY_AFTER, &retry_after_secs.to_string())
    }

    /// 500 without anything internal in it; the cause is logged where it happened.
    pub fn internal() -> Self {
        Self::detail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "A server error occurred.",
        )
    }

    /// Adds a header to the answer.
    pub fn header(mut self, name: header::HeaderName, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The JSON body.
    pub fn body(&self) -> &Value {
        &self.body
    }
}

impl ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn as_response(&self) -> Response {
        let mut resp = Response::builder()
            .status(self.status)
            .content_type("application/json")
            .body(self.body.to_string());
        for (name, value) in &self.headers {
            if let Ok(v) = HeaderValue::from_str(value) {
                resp.headers_mut().insert(name.clone(), v);
            }
        }
        resp
    }
}

impl From<sea_orm::DbErr> for ApiError {
    fn from(err: sea_orm::DbErr) -> Self {
        tracing::error!(error = %err, "database error");
        Self::internal()
    }
}

/// Field errors collected before answering 400 with all of them at once.
#[derive(Debug, Default, Clone)]
pub struct FieldErrors(Map<String, Value>);

impl FieldErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message for a field.
    pub fn add(mut self, field: &str, message: impl Into<String>) -> Self {
        self.push(field, message);
        self
    }

    /// Adds a message for a field, in place.
    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        let entry = self
            .0
            .entry(field.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            list.push(Value::String(message.into()));
        }
    }

    /// Ok when `invalid` (field, message pairs, as the domain reports them) is empty, else
    /// the 400 error naming each field.
    pub fn check(invalid: Vec<(&str, String)>) -> Result<(), ApiError> {
        invalid
            .into_iter()
            .fold(Self::new(), |errors, (field, message)| {
                errors.add(field, message)
            })
            .into_result()
    }

    /// True when no message was added.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Ok when there are none, else the 400 error.
    pub fn into_result(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::fields(self))
        }
    }
}

/// The general error body.
#[derive(Object)]
pub struct ErrorDetail {
    /// What went wrong, for humans.
    pub detail: String,
}

/// Documents which error statuses an operation can answer.
pub trait ErrorStatuses: Send + Sync + 'static {
    /// The statuses, each documented with the spec's body shapes.
    const STATUSES: &'static [u16];
}

/// The error type of an operation: an [`ApiError`], documented with the statuses of `S`.
pub struct Errors<S>(pub ApiError, PhantomData<S>);

impl<S> std::fmt::Debug for Errors<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<S> From<ApiError> for Errors<S> {
    fn from(err: ApiError) -> Self {
        Self(err, PhantomData)
    }
}

impl<S> From<sea_orm::DbErr> for Errors<S> {
    fn from(err: sea_orm::DbErr) -> Self {
        Self(err.into(), PhantomData)
    }
}

impl<S> From<Errors<S>> for poem::Error {
    fn from(err: Errors<S>) -> Self {
        poem::Error::from(err.0)
    }
}

impl<S> poem::IntoResponse for Errors<S>
where
    S: Send + Sync,
{
    fn into_response(self) -> Response {
        self.0.as_response()
    }
}

fn describe(status: u16) -> &'static str {
    match status {
        400 => {
            "Invalid input: `{\"field\": [\"message\"]}`, or `{\"detail\": \"...\"}` for a body that is not JSON"
        }
        401 => "Missing or invalid credentials",
        403 => "The organizer, event or object does not exist, or the caller may not access it",
        404 => "Page out of range",
        405 => "Method not allowed",
        409 => "Conflict with the current state, e.g. insufficient gift card credit",
        413 => "The request body is too large",
        415 => "The request body's media type is not accepted",
        429 => "Too many requests; see the `Retry-After` header",
        _ => "Server fault; reported to the operator",
    }
}

impl<S: ErrorStatuses> ApiResponse for Errors<S> {
    fn meta() -> MetaResponses {
        MetaResponses {
            responses: S::STATUSES
                .iter()
                .chain(std::iter::once(&500))
                .map(|&status| MetaResponse {
                    description: describe(status),
                    status: Some(status),
                    status_range: None,
                    content: vec![MetaMediaType {
                        content_type: "application/json",
                        schema: if status == 400 || status == 409 {
                            FieldErrorsSchema::schema_ref()
                        } else {
                            ErrorDetail::schema_ref()
                        },
                    }],
                    headers: vec![],
                })
                .collect(),
        }
    }

    fn register(registry: &mut Registry) {
        ErrorDetail::register(registry);
        FieldErrorsSchema::register(registry);
    }
}

/// Field errors: an object mapping each offending field to a list of messages.
#[derive(Debug, Clone, Copy)]
pub struct FieldErrorsSchema;

impl Type for FieldErrorsSchema {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> std::borrow::Cow<'static, str> {
        "FieldErrors".into()
    }

    fn schema_ref() -> poem_openapi::registry::MetaSchemaRef {
        poem_openapi::registry::MetaSchemaRef::Reference("FieldErrors".into())
    }

    fn register(registry: &mut Registry) {
        registry.create_schema::<Self, _>("FieldErrors".into(), |_| {
            let mut list = poem_openapi::registry::MetaSchema::new("array");
            list.items = Some(Box::new(String::schema_ref()));
            let mut schema = poem_openapi::registry::MetaSchema::new("object");
            schema.description = Some(
                "Field name to list of messages; `{\"detail\": \"...\"}` when no field is to blame",
            );
            schema.additional_properties = Some(Box::new(
                poem_openapi::registry::MetaSchemaRef::Inline(Box::new(list)),
            ));
            schema
        });
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(std::iter::once(self))
    }
}

macro_rules! error_set {
    ($(#[$doc:meta])* $name:ident: $($status:literal),+) => {
        $(#[$doc])*
        pub struct $name;
        impl ErrorStatuses for $name {
            const STATUSES: &'static [u16] = &[$($status),+];
        }
    };
}

error_set!(
    /// Reading one object.
    ReadErrors: 401, 403, 429
);
error_set!(
    /// Reading a paginated list.
    ListErrors: 400, 401, 403, 404, 429
);
error_set!(
    /// Creating or changing.
    WriteErrors: 400, 401, 403, 429
);
error_set!(
    /// Deleting or an action without input.
    DeleteErrors: 401, 403, 429
);
error_set!(
    /// Changing with a possible conflict with the current state.
    ConflictErrors: 400, 401, 403, 409, 429
);
error_set!(
    /// Uploading a file: its size, type and the caller's share of storage are limited too.
    UploadErrors: 400, 401, 403, 413, 415, 429
);

/// Result of an operation that reads one object.
pub type ReadResult<T> = Result<T, Errors<ReadErrors>>;
/// Result of an operation that lists.
pub type ListResult<T> = Result<T, Errors<ListErrors>>;
/// Result of an operation that creates or changes.
pub type WriteResult<T> = Result<T, Errors<WriteErrors>>;
/// Result of an operation that deletes.
pub type DeleteResult<T> = Result<T, Errors<DeleteErrors>>;
/// Result of an operation that can conflict with the current state.
pub type ConflictResult<T> = Result<T, Errors<ConflictErrors>>;
/// Result of an upload.
pub type UploadResult<T> = Result<T, Errors<UploadErrors>>;
