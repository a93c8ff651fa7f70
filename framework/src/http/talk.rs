//! The caller of a talk-side (`/api/`) operation: anonymous or a user API token, with the
//! API version in force. Add `talk: Talk` to an operation; it documents the user token
//! scheme and answers 401 for credentials that do not authenticate and 400 for an
//! unknown version, before the operation runs.

use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};

use super::auth::authenticate;
use super::error::ApiError;
use crate::domain::grants::CallerKind;
use crate::domain::talk::access::TalkCaller;
use crate::domain::talk::tokens::pin_version;
use crate::domain::talk::version::{self, ApiVersion};
use crate::state::AppState;

/// Name of the user API token scheme in the OpenAPI document.
pub const USER_TOKEN_SCHEME: &str = "UserTokenAuth";

/// The caller of a talk-side operation.
#[derive(Debug, Clone)]
pub struct Talk(pub TalkCaller);

impl std::ops::Deref for Talk {
    type Target = TalkCaller;

    fn deref(&self) -> &TalkCaller {
        &self.0
    }
}

impl<'a> ApiExtractor<'a> for Talk {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            USER_TOKEN_SCHEME,
            MetaSecurityScheme {
                ty: "apiKey",
                description: Some(
                    "A user API token of the talk side: `Authorization: Token <token>`, made \
                     on /orga/me. It acts with its user's permissions within its scopes. \
                     Operations that show public data also answer anonymous requests.",
                ),
                name: Some("Authorization"),
                key_in: Some("header"),
                scheme: None,
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![USER_TOKEN_SCHEME]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Talk(talk_caller(req).await?))
    }
}

/// The talk-side caller of a request: its token (401 when one is sent and does not
/// authenticate) and the version in force: the request's version header, else the
/// token's, else the current one. A token used for the first time is fixed to that
/// version; an unknown version is 400 and fixes nothing.
pub async fn talk_caller(req: &Request) -> Result<TalkCaller, ApiError> {
    let caller = match req.headers().get(poem::http::header::AUTHORIZATION) {
        Some(_) => Some(authenticate(req).await?),
        None => None,
    };
    let requested = version::HEADERS
        .iter()
        .find_map(|name| req.headers().get(*name))
        .map(|v| v.to_str().unwrap_or_default().trim().to_owned());
    let token = match caller.as_ref().map(|c| &c.kind) {
        Some(CallerKind::UserToken {
            token_id, version, ..
        }) => Some((*token_id, version.clone())),
        Some(_) => return Err(ApiError::unauthorized("Invalid token.")),
        None => None,
    };
    let pinned = token.as_ref().and_then(|(_, v)| v.clone());
    let version = match requested.or(pinned.clone()) {
        Some(name) => ApiVersion::parse(&name)?,
        None => version::CURRENT,
    };
    if let (Some((token_id, _)), None) = (token, pinned) {
        let state = req.data::<AppState>().ok_or_else(ApiError::internal)?;
        pin_version(&state.db, token_id, version).await?;
    }
    Ok(TalkCaller { caller, version })
}
