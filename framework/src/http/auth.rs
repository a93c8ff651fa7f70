//! Reading who is calling from a request: the `Authorization` header's credentials, handed
//! to `domain::access`, which decides who they stand for and what they may do. The
//! [`Auth`] extractor documents the security schemes.

use poem::http::header;
use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};

use super::error::ApiError;
use crate::domain::access;
pub use crate::domain::access::Credentials;
pub use crate::domain::grants::{
    Caller, CallerKind, EventAccess, EventScope, Grant, OrganizerAccess, OrganizerRef,
};
use crate::state::AppState;

/// Whether a path belongs to the talk side (`/api/`, but not the ticketing side's
/// `/api/v1/`), where `Token` names a user API token rather than a team token.
pub fn is_talk_path(path: &str) -> bool {
    (path == "/api" || path.starts_with("/api/")) && !path.starts_with("/api/v1")
}

/// Parses an `Authorization` header value of a request to `path`; `None` for an unknown
/// scheme or an empty value.
pub fn credentials(header: &str, path: &str) -> Option<Credentials> {
    let (scheme, value) = header.trim().split_once(' ')?;
    let value = value.trim().to_owned();
    if value.is_empty() {
        return None;
    }
    match scheme.to_ascii_lowercase().as_str() {
        "token" if is_talk_path(path) => Some(Credentials::UserToken(value)),
        "token" => Some(Credentials::Token(value)),
        "bearer" => Some(Credentials::Bearer(value)),
        "device" => Some(Credentials::Device(value)),
        _ => None,
    }
}

/// The authenticated caller of an operation: add `auth: Auth` to an operation to require
/// credentials. Missing or invalid credentials are answered with 401.
#[derive(Debug, Clone)]
pub struct Auth(pub Caller);

/// Name of the token security scheme in the OpenAPI document.
pub const TOKEN_SCHEME: &str = "TokenAuth";
/// Name of the OAuth access token security scheme in the OpenAPI document.
pub const BEARER_SCHEME: &str = "BearerAuth";

impl<'a> ApiExtractor<'a> for Auth {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            TOKEN_SCHEME,
            MetaSecurityScheme {
                ty: "apiKey",
                description: Some("A team API token: `Authorization: Token <token>`."),
                name: Some("Authorization"),
                key_in: Some("header"),
                scheme: None,
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
        registry.create_security_scheme(
            BEARER_SCHEME,
            MetaSecurityScheme {
                ty: "http",
                description: Some(
                    "An OAuth access token: `Authorization: Bearer <token>`; it acts for a user \
                     on the organizers they granted, within its scope.",
                ),
                name: None,
                key_in: None,
                scheme: Some("bearer"),
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![TOKEN_SCHEME, BEARER_SCHEME]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Auth(authenticate(req).await?))
    }
}

/// The outcome of authenticating a request, resolved once before routing (see the
/// middleware) and reused by every extractor of the request.
#[derive(Debug, Clone)]
pub struct Resolved(pub Result<Caller, ApiError>);

/// The caller of a request, from its `Authorization` header; 401 without valid
/// credentials.
pub async fn authenticate(req: &Request) -> Result<Caller, ApiError> {
    if let Some(Resolved(outcome)) = req.extensions().get::<Resolved>() {
        return outcome.clone();
    }
    let state = req.data::<AppState>().ok_or_else(ApiError::internal)?;
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized(
            "Authentication credentials were not provided.",
        ));
    };
    let path = req.uri().path();
    let Some(creds) = value.to_str().ok().and_then(|v| credentials(v, path)) else {
        return Err(ApiError::unauthorized("Invalid token."));
    };
    let generation = state.cache.generation().await;
    access::resolve(
        &state.db,
        &state.cache,
        generation,
        &creds,
        req.method().as_str(),
    )
    .await?
    .ok_or_else(|| ApiError::unauthorized("Invalid token."))
}

#[cfg(test)]
mod tests {
    use super::{Credentials, credentials};

    #[test]
    fn authorization_headers_parse_by_scheme() {
        let v1 = "/api/v1/organizers/";
        assert_eq!(
            credentials("Token abc", v1),
            Some(Credentials::Token("abc".into()))
        );
        assert_eq!(
            credentials("token  abc ", v1),
            Some(Credentials::Token("abc".into()))
        );
        assert_eq!(
            credentials("Bearer x", v1),
            Some(Credentials::Bearer("x".into()))
        );
        assert_eq!(
            credentials("Device y", v1),
            Some(Credentials::Device("y".into()))
        );
        assert_eq!(credentials("Basic zz", v1), None);
        assert_eq!(credentials("Token", v1), None);
        assert_eq!(credentials("Token ", v1), None);
    }

    #[test]
    fn tokens_under_the_talk_side_are_user_tokens() {
        assert_eq!(
            credentials("Token abc", "/api/events/x/submissions/"),
            Some(Credentials::UserToken("abc".into()))
        );
        assert_eq!(
            credentials("Token abc", "/api/upload"),
            Some(Credentials::UserToken("abc".into()))
        );
        assert_eq!(
            credentials("Token abc", "/api/v1"),
            Some(Credentials::Token("abc".into()))
        );
    }
}
