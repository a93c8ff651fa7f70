//! Why a rule said no, in the rules' own words: a wrong request, wrong fields, an unknown
//! caller, a caller without the right, something that is not there, or a failure of the
//! database. The rules return it; the HTTP edge gives each kind its status and the spec's
//! body (`impl From<Refusal> for http::Refusal`), so the rules name no transport.

use sea_orm::DbErr;

use crate::values::FieldErrors;

/// A refusal of a rule, or a failure below it.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The request as a whole cannot be done (400), with the reason.
    #[error("{0}")]
    BadRequest(String),
    /// Fields are wrong (400), each with its messages.
    #[error("{0}")]
    Invalid(FieldErrors),
    /// The caller is not known (401), with the reason.
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller may not (403): the object may not exist for them, or a reason is given.
    #[error("{}", .0.as_deref().unwrap_or("forbidden"))]
    Forbidden(Option<String>),
    /// What was asked for is not there (404), with the message.
    #[error("{0}")]
    NotFound(String),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
    /// Something else failed; the cause is logged where it happened.
    #[error("internal error")]
    Internal,
}

impl Refusal {
    /// The request as a whole cannot be done.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }

    /// One field is wrong.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid(FieldErrors::new().add(field, message))
    }

    /// Several fields are wrong.
    pub fn fields(errors: FieldErrors) -> Self {
        Self::Invalid(errors)
    }

    /// The caller is not known.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::Unauthenticated(message.into())
    }

    /// The caller may not, or the object does not exist for them.
    pub fn forbidden() -> Self {
        Self::Forbidden(None)
    }

    /// The caller may not, for a reason they are told.
    pub fn forbidden_because(message: impl Into<String>) -> Self {
        Self::Forbidden(Some(message.into()))
    }

    /// What was asked for is not there.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }

    /// Something failed that the caller cannot mend.
    pub fn internal() -> Self {
        Self::Internal
    }
}

impl From<FieldErrors> for Refusal {
    fn from(errors: FieldErrors) -> Self {
        Self::Invalid(errors)
    }
}
