//! The OAuth 2.0 provider's token endpoints: `/api/v1/oauth/token` (RFC 6749) and
//! `/api/v1/oauth/revoke_token` (RFC 7009). Bodies are form-encoded; answers and errors are
//! the RFCs' JSON (`{"error": "invalid_grant"}`), not the spec's `detail` shape.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use poem::http::header;
use poem::web::Data;
use poem::{Request, RequestBody};
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSecurityScheme, Registry};
use poem_openapi::types::Type;
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ApiResponse, ExtractParamOptions, Object, OpenApi,
};

use super::Tag;
use crate::db::entities::oauth_application;
use crate::domain::oauth::{self, OAuthError, TokenPair};
use crate::domain::users;
use crate::http::Auth;
use crate::http::error::{ApiError, ReadResult};
use crate::state::AppState;

/// Name of the client security scheme in the OpenAPI document.
pub const CLIENT_SCHEME: &str = "OAuthClient";
/// Most parameters a form body may carry.
const MAX_PARAMS: usize = 20;
/// Longest parameter value accepted.
const MAX_VALUE_LEN: usize = 4_096;

/// Parameters of a token request.
#[derive(Object)]
#[oai(rename = "OAuthTokenRequest")]
pub struct TokenForm {
    /// `authorization_code` or `refresh_token`.
    pub grant_type: String,
    /// The authorization code (`authorization_code`).
    pub code: Option<String>,
    /// The redirect URI the code was issued for (`authorization_code`).
    pub redirect_uri: Option<String>,
    /// The PKCE verifier, when the authorization carried an S256 challenge.
    pub code_verifier: Option<String>,
    /// The refresh token (`refresh_token`).
    pub refresh_token: Option<String>,
    /// The client ID, when not sent by HTTP Basic.
    pub client_id: Option<String>,
    /// The client secret, when not sent by HTTP Basic.
    pub client_secret: Option<String>,
}

/// Parameters of a revocation request.
#[derive(Object)]
#[oai(rename = "OAuthRevokeRequest")]
pub struct RevokeForm {
    /// An access token or a refresh token.
    pub token: String,
    /// `access_token` or `refresh_token`; a hint only.
    pub token_type_hint: Option<String>,
    /// The client ID, when not sent by HTTP Basic.
    pub client_id: Option<String>,
    /// The client secret, when not sent by HTTP Basic.
    pub client_secret: Option<String>,
}

/// A form-encoded body as name/value pairs, documented with the schema of `T`. Malformed
/// bodies are not refused here: the operation answers them with `invalid_request`.
pub struct FormBody<T> {
    pairs: Result<Vec<(String, String)>, &'static str>,
    _doc: std::marker::PhantomData<T>,
}

impl<T> FormBody<T> {
    /// The value of a parameter sent once; `invalid_request` when the body was malformed or
    /// the parameter repeated.
    fn get(&self, name: &str) -> Result<Option<&str>, OAuthAnswer> {
        let pairs = self.pairs.as_ref().map_err(|m| invalid_request(m))?;
        let mut values = pairs.iter().filter(|(n, _)| n == name);
        let first = values.next().map(|(_, v)| v.as_str());
        if values.next().is_some() {
            return Err(invalid_request("A parameter was repeated."));
        }
        Ok(first.filter(|v| !v.is_empty()))
    }

    /// The value of a required parameter.
    fn required(&self, name: &str) -> Result<&str, OAuthAnswer> {
        self.get(name)?
            .ok_or_else(|| invalid_request("A required parameter is missing."))
    }
}

fn parse_form(request: &Request, bytes: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let is_form = request
        .content_type()
        .and_then(|ct| ct.parse::<mime::Mime>().ok())
        .is_some_and(|m| m.essence_str() == "application/x-www-form-urlencoded");
    if !is_form {
        return Err("The body must be application/x-www-form-urlencoded.");
    }
    let pairs: Vec<(String, String)> = form_urlencoded::parse(bytes)
        .take(MAX_PARAMS + 1)
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    if pairs.len() > MAX_PARAMS || pairs.iter().any(|(_, v)| v.len() > MAX_VALUE_LEN) {
        return Err("Too many or too long parameters.");
    }
    Ok(pairs)
}

impl<'a, T: Type> ApiExtractor<'a> for FormBody<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType {
                content_type: "application/x-www-form-urlencoded",
                schema: T::schema_ref(),
            }],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let bytes = body.take()?.into_bytes().await?;
        Ok(Self {
            pairs: parse_form(request, &bytes),
            _doc: std::marker::PhantomData,
        })
    }
}

/// Client credentials from HTTP Basic (`client_id:client_secret`, each form-encoded as RFC
/// 6749 2.3.1 says); `None` without them. Never fails: the operation decides.
pub struct ClientBasic(Option<(String, String)>);

fn basic_credentials(request: &Request) -> Option<(String, String)> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape = |s: &str| -> String {
        form_urlencoded::parse(format!("v={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((unescape(id), unescape(secret)))
}

impl<'a> ApiExtractor<'a> for ClientBasic {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            CLIENT_SCHEME,
            MetaSecurityScheme {
                ty: "http",
                description: Some(
                    "OAuth client credentials: HTTP Basic with the client ID as user name and \
                     the client secret as password (or `client_id` and `client_secret` in the \
                     form body).",
                ),
                name: None,
                key_in: None,
                scheme: Some("basic"),
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![CLIENT_SCHEME]
    }

    async fn from_request(
        request: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Self(basic_credentials(request)))
    }
}

/// A token response (RFC 6749 5.1).
#[derive(Object)]
#[oai(rename = "OAuthToken")]
pub struct TokenOut {
    /// The access token, for `Authorization: Bearer <token>`.
    pub access_token: String,
    /// Seconds the access token is valid (86400).
    pub expires_in: i64,
    /// Always `Bearer`.
    pub token_type: String,
    /// The granted scope, space separated.
    pub scope: String,
    /// The refresh token; it does not expire, and is used once.
    pub refresh_token: String,
}

impl From<TokenPair> for TokenOut {
    fn from(p: TokenPair) -> Self {
        Self {
            access_token: p.access_token,
            expires_in: p.expires_in,
            token_type: "Bearer".into(),
            scope: p.scope,
            refresh_token: p.refresh_token,
        }
    }
}

/// An OAuth error (RFC 6749 5.2).
#[derive(Object)]
#[oai(rename = "OAuthError")]
pub struct OAuthErrorOut {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`, ...
    pub error: String,
    /// What went wrong, for humans.
    pub error_description: Option<String>,
}

/// Answers of the OAuth endpoints.
#[derive(ApiResponse)]
pub enum OAuthAnswer {
    /// A new token pair.
    #[oai(status = 200)]
    Token(
        Json<Box<TokenOut>>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// The token is revoked (or was unknown).
    #[oai(status = 200)]
    Revoked(#[oai(header = "Cache-Control")] String),
    /// The request or grant is invalid.
    #[oai(status = 400)]
    BadRequest(Json<OAuthErrorOut>, #[oai(header = "Cache-Control")] String),
    /// Client authentication failed.
    #[oai(status = 401)]
    Unauthorized(
        Json<OAuthErrorOut>,
        #[oai(header = "WWW-Authenticate")] String,
    ),
}

fn error(code: &str, description: Option<&str>) -> OAuthAnswer {
    OAuthAnswer::BadRequest(
        Json(OAuthErrorOut {
            error: code.into(),
            error_description: description.map(str::to_owned),
        }),
        "no-store".into(),
    )
}

fn invalid_request(description: &str) -> OAuthAnswer {
    error("invalid_request", Some(description))
}

fn invalid_client() -> OAuthAnswer {
    OAuthAnswer::Unauthorized(
        Json(OAuthErrorOut {
            error: "invalid_client".into(),
            error_description: None,
        }),
        "Basic realm=\"api\"".into(),
    )
}

impl From<OAuthError> for OAuthAnswer {
    fn from(e: OAuthError) -> Self {
        match e {
            OAuthError::InvalidGrant => error("invalid_grant", None),
            OAuthError::InvalidRequest(m) => invalid_request(m),
            OAuthError::InvalidScope => error("invalid_scope", None),
            OAuthError::Db(e) => {
                tracing::error!(error = %e, "database error");
                error("server_error", None)
            }
        }
    }
}

impl From<sea_orm::DbErr> for OAuthAnswer {
    fn from(e: sea_orm::DbErr) -> Self {
        OAuthError::Db(e).into()
    }
}

/// The client of a request: HTTP Basic, else `client_id`/`client_secret` in the body (not
/// both); 401 `invalid_client` without valid credentials.
async fn client<T>(
    state: &AppState,
    basic: ClientBasic,
    form: &FormBody<T>,
) -> Result<oauth_application::Model, OAuthAnswer> {
    let in_body = (form.get("client_id")?, form.get("client_secret")?);
    let (id, secret) = match (basic.0, in_body) {
        (Some(creds), (None, None)) => creds,
        (None, (Some(id), Some(secret))) => (id.to_owned(), secret.to_owned()),
        _ => return Err(invalid_client()),
    };
    oauth::authenticate_client(&state.db, &id, &secret)
        .await?
        .ok_or_else(invalid_client)
}

/// OAuth token operations.
pub struct OAuthApi;

#[OpenApi(tag = "Tag::OAuth")]
impl OAuthApi {
    /// Obtain or refresh an access token
    ///
    /// Exchanges an authorization code (`grant_type=authorization_code` with `code`,
    /// `redirect_uri` and, for PKCE, `code_verifier`) or a refresh token
    /// (`grant_type=refresh_token`) for a new access token and refresh token. A refresh
    /// ends the refresh token used and the access token issued with it at once.
    #[oai(path = "/api/v1/oauth/token", method = "post")]
    async fn oauth_token(
        &self,
        state: Data<&AppState>,
        basic: ClientBasic,
        form: FormBody<TokenForm>,
    ) -> OAuthAnswer {
        let run = async {
            let app = client(&state, basic, &form).await?;
            let pair = match form.required("grant_type")? {
                "authorization_code" => {
                    let code = form.required("code")?;
                    let redirect_uri = form.required("redirect_uri")?;
                    let verifier = form.get("code_verifier")?;
                    oauth::exchange_code(&state.db, &app, code, redirect_uri, verifier).await?
                }
                "refresh_token" => {
                    let token = form.required("refresh_token")?;
                    oauth::refresh(&state.db, &app, token).await?
                }
                _ => return Err(error("unsupported_grant_type", None)),
            };
            Ok(OAuthAnswer::Token(
                Json(Box::new(pair.into())),
                "no-store".into(),
                "no-cache".into(),
            ))
        };
        run.await.unwrap_or_else(|answer| answer)
    }

    /// Revoke a token
    ///
    /// Revokes an access token (its refresh token stays usable) or a refresh token (its
    /// access tokens end too). Unknown tokens are answered with 200 as well (RFC 7009).
    #[oai(path = "/api/v1/oauth/revoke_token", method = "post")]
    async fn oauth_revoke_token(
        &self,
        state: Data<&AppState>,
        basic: ClientBasic,
        form: FormBody<RevokeForm>,
    ) -> OAuthAnswer {
        let run = async {
            let app = client(&state, basic, &form).await?;
            let token = form.required("token")?;
            oauth::revoke(&state.db, &app, token).await?;
            Ok(OAuthAnswer::Revoked("no-store".into()))
        };
        run.await.unwrap_or_else(|answer: OAuthAnswer| answer)
    }
}

/// The profile of the user an OAuth access token acts for.
#[derive(Object)]
#[oai(rename = "UserProfile")]
pub struct ProfileOut {
    /// Email address.
    pub email: String,
    /// Full name.
    pub fullname: String,
    /// Language code.
    pub locale: String,
    /// Staff of the service.
    pub is_staff: bool,
    /// Time zone name.
    pub timezone: String,
}

/// The profile operation.
pub struct ProfileApi;

#[OpenApi(tag = "Tag::OAuth")]
impl ProfileApi {
    /// Show the user's profile
    ///
    /// The user an OAuth access token acts for, with any scope. Team API tokens act for no
    /// user: they are answered with 401, as pretix's OAuth-only authentication does.
    #[oai(path = "/api/v1/me", method = "get")]
    async fn show_me(&self, state: Data<&AppState>, auth: Auth) -> ReadResult<Json<ProfileOut>> {
        let (user_id, _) = auth.0.oauth_user()?;
        let user = users::find_active(&state.db, user_id)
            .await?
            .ok_or_else(|| ApiError::unauthorized("Invalid token."))?;
        Ok(Json(ProfileOut {
            email: user.email,
            fullname: user.fullname,
            locale: user.locale,
            is_staff: user.is_staff,
            timezone: user.timezone,
        }))
    }
}
