//! Errors in the spec's two shapes: `{"detail": "..."}` ([`ApiError::detail`]) and
//! `{"field": ["message"]}` ([`FieldErrors`]), each with its HTTP status. The domain
//! reports refusals with them; `http::error` documents which statuses each operation has.

use poem::http::{HeaderValue, StatusCode, header};
use poem::{Response, error::ResponseError};
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
