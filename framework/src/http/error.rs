//! Errors as the API answers them, in the spec's two shapes: `{"detail": "..."}`
//! ([`ApiError::detail`]) and `{"field": ["message"]}` ([`FieldErrors`]), each with its
//! HTTP status; a rule's [`Refusal`] becomes one here. And the sets of error statuses each
//! operation documents.

use std::marker::PhantomData;

use poem::{Response, error::ResponseError};
use poem_openapi::registry::{
    MetaMediaType, MetaResponse, MetaResponses, MetaSchema, MetaSchemaRef, Registry,
};
use poem_openapi::{ApiResponse, Object, types::Type};

use poem::http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

pub use crate::domain::refusal::Refusal;
pub use crate::values::error::FieldErrors;

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
        Self::with_body(StatusCode::BAD_REQUEST, Value::Object(errors.into_body()))
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

impl From<FieldErrors> for ApiError {
    fn from(errors: FieldErrors) -> Self {
        Self::fields(errors)
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::BadRequest(message) => Self::bad_request(message),
            Refusal::Invalid(errors) => Self::fields(errors),
            Refusal::Unauthenticated(message) => Self::unauthorized(message),
            Refusal::Forbidden(None) => Self::forbidden(),
            Refusal::Forbidden(Some(message)) => Self::forbidden_because(message),
            Refusal::NotFound(message) => Self::not_found(message),
            Refusal::Db(err) => err.into(),
            Refusal::Internal => Self::internal(),
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

impl<S> From<Refusal> for Errors<S> {
    fn from(refusal: Refusal) -> Self {
        Self(refusal.into(), PhantomData)
    }
}

impl<S> From<FieldErrors> for Errors<S> {
    fn from(errors: FieldErrors) -> Self {
        Self(errors.into(), PhantomData)
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

/// What an error status means, as the document describes it.
pub fn describe(status: u16) -> &'static str {
    match status {
        400 => {
            "Invalid input: field errors `{\"field\": [\"message\"]}`, nested like the input \
             (`{\"meta_data\": {\"key\": [\"message\"]}}`, `{\"positions\": [{}, {\"item\": [...]}]}`, \
             a list of such objects for a list body), or `{\"detail\": \"...\"}` when no field is to \
             blame (a body that is not JSON, a bad `X-Idempotency-Key`)"
        }
        401 => "Missing or invalid credentials",
        403 => "The organizer, event or object does not exist, or the caller may not access it",
        404 => "Page out of range",
        405 => "Method not allowed",
        408 => "The request body did not arrive in time",
        409 => {
            "Conflict with the current state, e.g. insufficient gift card credit, or a request with \
             the same `X-Idempotency-Key` still under way"
        }
        413 => "The request body is too large",
        414 => "The request URI is too long",
        415 => "The request body's media type is not accepted",
        429 => "Too many requests; see the `Retry-After` header",
        431 => "The request's headers are too large",
        _ => "Server fault; reported to the operator",
    }
}

/// The schema of an error body with this status: the field errors or `{"detail"}` of a 400
/// ([`InvalidInput`]) or 409 ([`ConflictBody`]), else `{"detail"}` ([`ErrorDetail`]).
pub fn error_schema(status: u16) -> MetaSchemaRef {
    match status {
        400 => InvalidInput::schema_ref(),
        409 => ConflictBody::schema_ref(),
        _ => ErrorDetail::schema_ref(),
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
                        schema: error_schema(status),
                    }],
                    headers: vec![],
                })
                .collect(),
        }
    }

    fn register(registry: &mut Registry) {
        register_error_schemas(registry);
    }
}

/// Registers the schemas of error bodies: [`ErrorDetail`], [`FieldErrors`](FieldErrorsBody),
/// one field's errors, [`InvalidInput`] and [`ConflictBody`].
pub fn register_error_schemas(registry: &mut Registry) {
    ErrorDetail::register(registry);
    FieldErrorsBody::register(registry);
    InvalidInput::register(registry);
    ConflictBody::register(registry);
}

fn reference(name: &'static str) -> MetaSchemaRef {
    MetaSchemaRef::Reference(name.into())
}

fn any_of(alternatives: Vec<MetaSchemaRef>) -> MetaSchema {
    let mut schema = MetaSchema::ANY;
    schema.any_of = alternatives;
    schema
}

fn list_of(items: MetaSchemaRef) -> MetaSchemaRef {
    let mut list = MetaSchema::new("array");
    list.items = Some(Box::new(items));
    MetaSchemaRef::Inline(Box::new(list))
}

/// A documented schema without a Rust value of its own: `$name` in the document, built by
/// `$build`, with `$register` registering what it refers to.
macro_rules! schema_only {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $build:expr, $register:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $ty;

        impl Type for $ty {
            const IS_REQUIRED: bool = true;
            type RawValueType = Self;
            type RawElementValueType = Self;

            fn name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }

            fn schema_ref() -> MetaSchemaRef {
                reference($name)
            }

            fn register(registry: &mut Registry) {
                registry.create_schema::<Self, _>($name.into(), |registry| {
                    let register: fn(&mut Registry) = $register;
                    register(registry);
                    $build
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
    };
}

schema_only!(
    /// Field errors: each offending field with its errors ([`FieldError`]).
    FieldErrorsBody,
    "FieldErrors",
    {
        let mut schema = MetaSchema::new("object");
        schema.description = Some(
            "Each offending field with its errors: a list of messages, or the errors inside it \
             (an object's fields, a list's entries in order with `{}` for valid ones)",
        );
        schema.additional_properties = Some(Box::new(FieldError::schema_ref()));
        schema
    },
    FieldError::register
);

schema_only!(
    /// The errors of one field: messages, the field errors of an object, or a list with the
    /// errors of each entry of a list (field errors, or messages for an entry that is not an
    /// object). The nested field errors are described as objects and lists of messages rather
    /// than by a reference back to [`FieldErrorsBody`]: code generators do not follow a union
    /// that contains itself.
    FieldError,
    "FieldError",
    {
        let nested = || {
            let mut object = MetaSchema::new("object");
            object.description = Some("The field errors inside it, shaped as `FieldErrors`.");
            MetaSchemaRef::Inline(Box::new(object))
        };
        let entry = any_of(vec![
            String::schema_ref(),
            nested(),
            list_of(String::schema_ref()),
        ]);
        any_of(vec![list_of(MetaSchemaRef::Inline(Box::new(entry))), nested()])
    },
    |_| {}
);

schema_only!(
    /// A 400 body: `{"detail"}`, field errors, or a list of field errors for a list body.
    InvalidInput,
    "InvalidInput",
    any_of(vec![
        ErrorDetail::schema_ref(),
        FieldErrorsBody::schema_ref(),
        list_of(FieldErrorsBody::schema_ref()),
    ]),
    |registry| {
        ErrorDetail::register(registry);
        FieldErrorsBody::register(registry);
    }
);

schema_only!(
    /// A 409 body: field errors, or `{"detail"}`.
    ConflictBody,
    "Conflict",
    any_of(vec![ErrorDetail::schema_ref(), FieldErrorsBody::schema_ref()]),
    |registry| {
        ErrorDetail::register(registry);
        FieldErrorsBody::register(registry);
    }
);

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

error_set!(
    /// Any talk-side operation: an unknown version or bad input (400), a token that does
    /// not authenticate (401), a scope or permission missing (403), an invisible event or
    /// object (404).
    TalkErrors: 400, 401, 403, 404, 429
);

/// Result of a talk-side operation.
pub type TalkResult<T> = Result<T, Errors<TalkErrors>>;
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
