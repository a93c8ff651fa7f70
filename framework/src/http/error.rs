//! The sets of error statuses each operation documents, around the error values of
//! `crate::values::error` (the spec's `{"detail"}` and `{"field": [...]}` shapes).

use std::marker::PhantomData;

use poem::{Response, error::ResponseError};
use poem_openapi::registry::{MetaMediaType, MetaResponse, MetaResponses, Registry};
use poem_openapi::{ApiResponse, Object, types::Type};

pub use crate::values::error::{ApiError, FieldErrors};

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
