//! poem glue shared by every resource: errors, bodies, pagination, authentication, i18n,
//! money, the middleware that gives every endpoint the same behaviour, and the HTTP/1.1
//! server that bounds connections in time.

pub mod auth;
pub mod body;
pub mod document;
pub mod error;
pub mod idempotency;
pub mod limits;
pub mod middleware;
pub mod nullable_map;
pub mod pagination;
pub mod responses;
pub mod routes;
pub mod serve;
pub mod talk;

pub use crate::values::{Currency, Decimal2, FieldErrors, I18nString, Money, i18n, money};
pub use auth::{Auth, Caller};
pub use body::{JsonBody, JsonList};
pub use error::{ApiError, Refusal};
pub use nullable_map::NullableMap;
pub use pagination::{Page, PageRequest};
pub use responses::{Created, JsonBytes, MadeFile, NoContent, TicketDownload};

use poem_openapi::types::MaybeUndefined;

/// A PATCH field as a change: `None` when absent, `Some(None)` when sent as `null`.
pub fn patched<T>(field: MaybeUndefined<T>) -> Option<Option<T>> {
    match field {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(None),
        MaybeUndefined::Value(v) => Some(Some(v)),
    }
}
