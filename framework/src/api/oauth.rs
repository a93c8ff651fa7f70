//! The OAuth 2.0 provider's token endpoints: `/api/v1/oauth/token` (RFC 6749) and
//! `/api/v1/oauth/revoke_token` (RFC 7009). Bodies are form-encoded; answers and errors are
//! the RFCs' JSON (`{"error": "invalid_grant"}`), not the spec's `detail` shape.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use poem::http::{StatusCode, header};
use poem::web::Data;
use poem::{IntoResponse, Request, RequestBody, Response};
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::registry::{
    MetaHeader, MetaMediaType, MetaRequest, MetaResponse, MetaResponses, MetaSecurityScheme,
    Registry,
};
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
use crate::web;

/// Name of the client security scheme in the OpenAPI document.
pub const CLIENT_SCHEME: &str = "OAuthClient";
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

    /// Every name/value pair; `invalid_request` when the body was malformed.
    fn pairs(&self) -> Result<&[(String, String)], &'static str> {
        self.pairs.as_deref().map_err(|m| *m)
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
    let pairs = web::parse_form(bytes);
    if pairs.len() >= web::MAX_FORM_FIELDS || pairs.iter().any(|(_, v)| v.len() > MAX_VALUE_LEN) {
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

/// The consent form of the authorization page.
#[derive(Object)]
#[oai(rename = "OAuthConsentForm")]
pub struct ConsentForm {
    /// The session's CSRF token.
    pub csrfmiddlewaretoken: String,
    /// The application's client ID.
    pub client_id: String,
    /// `code`.
    pub response_type: String,
    /// The scopes asked for, space separated.
    pub scope: Option<String>,
    /// Where the answer goes.
    pub redirect_uri: Option<String>,
    /// Echoed in the answer.
    pub state: Option<String>,
    /// The PKCE S256 challenge.
    pub code_challenge: Option<String>,
    /// `S256` with a challenge.
    pub code_challenge_method: Option<String>,
    /// The IDs of the organizers granted (repeated field).
    pub organizers: Option<Vec<i64>>,
    /// Present when the person allows.
    pub allow: Option<String>,
    /// Present when the person refuses.
    pub cancel: Option<String>,
}

/// A page or redirect of the authorization step (HTML for a person, redirects for the
/// client), documented with every status it can have.
pub struct WebPage(pub Response);

impl IntoResponse for WebPage {
    fn into_response(self) -> Response {
        self.0
    }
}

impl poem_openapi::ApiResponse for WebPage {
    fn meta() -> MetaResponses {
        let html = || {
            vec![MetaMediaType {
                content_type: "text/html; charset=utf-8",
                schema: String::schema_ref(),
            }]
        };
        let location = |description: &str| {
            vec![MetaHeader {
                name: "Location".into(),
                description: Some(description.into()),
                required: true,
                deprecated: false,
                schema: String::schema_ref(),
            }]
        };
        let response = |status, description, content, headers| MetaResponse {
            description,
            status: Some(status),
            status_range: None,
            content,
            headers,
        };
        MetaResponses {
            responses: vec![
                response(200, "The consent page.", html(), vec![]),
                response(
                    302,
                    "To the client's redirect URI with `code` or `error`, and `state` when sent.",
                    vec![],
                    location("The client's redirect URI with the answer in its query."),
                ),
                response(
                    303,
                    "To the sign-in page, which comes back here.",
                    vec![],
                    location("`/login?next=...`"),
                ),
                response(
                    400,
                    "Unknown client or unregistered redirect URI (no redirect), or no organizer chosen.",
                    html(),
                    vec![],
                ),
                response(
                    403,
                    "The form's CSRF token is missing or wrong.",
                    html(),
                    vec![],
                ),
            ],
        }
    }

    fn register(_registry: &mut Registry) {}
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

    /// The client may send its credentials in the form body instead.
    fn has_security_fallback() -> bool {
        true
    }

    async fn from_request(
        request: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Self(basic_credentials(request)))
    }
}

/// Name of the browser session's security scheme in the OpenAPI document.
pub const SESSION_SCHEME: &str = "SessionCookie";

/// Documents that an operation reads the browser's session cookie (`tessera_session`, set
/// by signing in at `/login`). Never fails: the page decides what a missing session means.
pub struct SessionCookie;

impl<'a> ApiExtractor<'a> for SessionCookie {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            SESSION_SCHEME,
            MetaSecurityScheme {
                ty: "apiKey",
                description: Some(
                    "The session of a person signed in at `/login`, in the `tessera_session` cookie.",
                ),
                name: Some(web::session::SESSION_COOKIE),
                key_in: Some("cookie"),
                scheme: None,
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![SESSION_SCHEME]
    }

    /// The page works without a session too (it sends the person to sign in).
    fn has_security_fallback() -> bool {
        true
    }

    async fn from_request(
        _request: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Self)
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
    /// What went wrong, for humans; absent when the error code says it all.
    #[oai(skip_serializing_if_is_none)]
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

/// The authorization step of the OAuth flow.
pub struct AuthorizeApi;

#[OpenApi(tag = "Tag::OAuth")]
impl AuthorizeApi {
    /// Ask a person to authorize an application
    ///
    /// The start of the authorization code flow, for a browser. Someone not signed in is
    /// sent to the sign-in page and back. An invalid request (an unknown `client_id`, a
    /// `redirect_uri` not registered for the client, a missing or other `response_type`
    /// than `code`, an unknown scope, a malformed PKCE challenge) is a 400 page, never a
    /// redirect, since anyone may register a client with any redirect URI (RFC 9700
    /// 4.11.2); only the person's own refusal is answered to the client
    /// (`error=access_denied`). The consent page names the application and the scopes and lists the organizers the
    /// person may grant. `approval_prompt=auto` skips it for a `profile`-only request the
    /// person granted this application before.
    #[oai(path = "/api/v1/oauth/authorize", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn oauth_authorize(
        &self,
        req: &Request,
        app_state: Data<&AppState>,
        _session: SessionCookie,
        /// The application's client ID.
        client_id: Query<Option<String>>,
        /// `code`.
        response_type: Query<Option<String>>,
        /// `read`, `write`, `profile`, space separated; all three when missing.
        scope: Query<Option<String>>,
        /// One of the client's registered redirect URIs; the first when missing.
        redirect_uri: Query<Option<String>>,
        /// Echoed in the redirect.
        #[oai(name = "state")]
        client_state: Query<Option<String>>,
        /// `auto` or `force`.
        approval_prompt: Query<Option<String>>,
        /// A PKCE challenge (RFC 7636).
        code_challenge: Query<Option<String>>,
        /// `S256`.
        code_challenge_method: Query<Option<String>>,
    ) -> WebPage {
        let given = |q: Query<Option<String>>| q.0.filter(|v| !v.is_empty());
        let params = oauth::AuthorizeParams {
            client_id: given(client_id),
            response_type: given(response_type),
            scope: given(scope),
            redirect_uri: given(redirect_uri),
            state: given(client_state),
            approval_prompt: given(approval_prompt),
            code_challenge: given(code_challenge),
            code_challenge_method: given(code_challenge_method),
        };
        WebPage(web::oauth::authorize_page(req, &app_state, params).await)
    }

    /// Answer an authorization request
    ///
    /// The consent page's form: `allow` (with the chosen `organizers`) redirects to the
    /// client with a code, `cancel` with `error=access_denied`; `state` is echoed. Needs the
    /// signed-in session and its CSRF token.
    #[oai(path = "/api/v1/oauth/authorize", method = "post")]
    async fn oauth_authorize_answer(
        &self,
        req: &Request,
        app_state: Data<&AppState>,
        _session: SessionCookie,
        form: FormBody<ConsentForm>,
    ) -> WebPage {
        WebPage(match form.pairs() {
            Ok(pairs) => web::oauth::authorize_answer(req, &app_state, pairs).await,
            Err(text) => web::message(StatusCode::BAD_REQUEST, "Bad request", text),
        })
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
