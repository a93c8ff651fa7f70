//! The OAuth 2.0 provider's rules: applications (clients), what users grant them, codes,
//! access and refresh tokens. Every secret is random ([`tokens::generate`]) and stored as a
//! SHA-256 digest; codes and refresh tokens are used once, each by a conditional `UPDATE`,
//! so two concurrent exchanges of one code cannot both succeed, on either backend.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr,
    EntityTrait, QueryFilter, QueryOrder, Set, Statement,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::db::begin_write;
use crate::db::entities::{
    oauth_access_token, oauth_application, oauth_authorization, oauth_code, oauth_refresh_token,
    organizer,
};
use crate::domain::tokens;

/// Seconds an access token is valid.
pub const ACCESS_TOKEN_SECONDS: i64 = 86_400;
/// Seconds an authorization code is valid.
pub const CODE_SECONDS: i64 = 600;
/// Longest redirect URI accepted.
pub const MAX_REDIRECT_URI_LEN: usize = 2_000;
/// Most redirect URIs an application may list.
pub const MAX_REDIRECT_URIS: usize = 20;

/// What a token may do: read organizer data, change it, read the user's profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scope {
    /// `read`: safe requests on granted organizers.
    pub read: bool,
    /// `write`: unsafe requests on granted organizers.
    pub write: bool,
    /// `profile`: the user's profile (`/api/v1/me`).
    pub profile: bool,
}

impl Scope {
    /// Parses a space-separated scope; `None` when empty or naming an unknown scope.
    pub fn parse(text: &str) -> Option<Self> {
        let mut scope = Self::default();
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            match word {
                "read" => scope.read = true,
                "write" => scope.write = true,
                "profile" => scope.profile = true,
                _ => return None,
            }
        }
        (scope != Self::default()).then_some(scope)
    }

    /// Whether the scope covers a request with this method: `write` for unsafe methods,
    /// `read` for safe ones.
    pub fn covers_method(&self, method: &str) -> bool {
        if matches!(method, "GET" | "HEAD" | "OPTIONS") {
            self.read
        } else {
            self.write
        }
    }
}

impl Scope {
    /// What the scope lets an application do, one phrase per scope word, for people.
    pub fn describe(&self) -> Vec<&'static str> {
        [
            (
                self.profile,
                "See your profile: name, email address, language and time zone.",
            ),
            (self.read, "Read the data of the organizers you choose."),
            (self.write, "Change the data of the organizers you choose."),
        ]
        .into_iter()
        .filter_map(|(on, phrase)| on.then_some(phrase))
        .collect()
    }
}

impl std::fmt::Display for Scope {
    /// The canonical form: `read write profile`, in that order.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<&str> = [
            (self.read, "read"),
            (self.write, "write"),
            (self.profile, "profile"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect();
        f.write_str(&words.join(" "))
    }
}

/// Why a request of the OAuth flow was refused, in RFC 6749's terms.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The code or refresh token is unknown, used, expired, revoked, or issued to another
    /// client or redirect URI, or the PKCE verifier does not match.
    #[error("invalid_grant")]
    InvalidGrant,
    /// A parameter is missing or malformed.
    #[error("invalid_request: {0}")]
    InvalidRequest(&'static str),
    /// The scope is empty or unknown.
    #[error("invalid_scope")]
    InvalidScope,
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Whether `uri` may be a redirect URI: an absolute `http` or `https` URL whose host is a
/// name, an IPv4 address or a bracketed IPv6 address with an optional port, no user info, no
/// fragment, no whitespace, bounded in length.
pub fn is_valid_redirect_uri(uri: &str) -> bool {
    uri.len() <= MAX_REDIRECT_URI_LEN
        && !uri.contains('#')
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
        && origin(uri).is_some()
}

/// The origin (`scheme://host[:port]`) of an `http` or `https` URL, when its host is made of
/// the characters hosts are made of: letters, digits, `.`, `-`, a bracketed IPv6 address, and
/// an optional numeric port. Such an origin is safe to name in a `Content-Security-Policy`.
pub fn origin(uri: &str) -> Option<&str> {
    let scheme_len = if uri.starts_with("https://") {
        8
    } else if uri.starts_with("http://") {
        7
    } else {
        return None;
    };
    let authority = uri[scheme_len..].split(['/', '?']).next()?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') && !port.contains(']') => (host, Some(port)),
        _ => (authority, None),
    };
    let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    } else {
        !host.is_empty()
            && !host.starts_with(['.', '-'])
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    };
    let port_ok =
        port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok());
    (host_ok && port_ok).then(|| &uri[..scheme_len + authority.len()])
}

/// `uri` with `params` appended to its query (the redirect of an authorization answer).
pub fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    let separator = match uri.contains('?') {
        true if uri.ends_with(['?', '&']) => "",
        true => "&",
        false => "?",
    };
    format!("{uri}{separator}{}", query.finish())
}

/// The redirect URIs an application allows.
pub fn redirect_uris(app: &oauth_application::Model) -> Vec<String> {
    serde_json::from_value(app.redirect_uris.clone()).unwrap_or_default()
}

/// Why an application could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum ApplicationError {
    /// The name or a redirect URI is not acceptable; the message says which, for the person
    /// who typed it.
    #[error("{0}")]
    Invalid(String),
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Checks an application's name and redirect URIs; the error names the first problem (for
/// a redirect URI, the URI itself).
pub fn check_application(name: &str, uris: &[String]) -> Result<(), String> {
    if name.trim().is_empty() || name.chars().count() > 255 {
        return Err("The name must have 1 to 255 characters.".to_owned());
    }
    if uris.is_empty() {
        return Err("Enter at least one redirect URI.".to_owned());
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(format!("Enter at most {MAX_REDIRECT_URIS} redirect URIs."));
    }
    if let Some(bad) = uris.iter().find(|u| !is_valid_redirect_uri(u)) {
        let shown: String = bad.chars().take(100).collect();
        return Err(format!(
            "\"{shown}\" is not a valid redirect URI: use an absolute http:// or https:// URL \
             with a host, without a fragment (#) or spaces, of at most {MAX_REDIRECT_URI_LEN} \
             characters."
        ));
    }
    Ok(())
}

/// The redirect URIs typed one per line: each line trimmed, empty lines left out.
pub fn redirect_uris_from_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Registers an application (see [`check_application`]), owned by the user `owner` when
/// given. Returns it with its client secret, which is stored only as a hash and never shown
/// again.
pub async fn create_application(
    db: &impl ConnectionTrait,
    name: &str,
    uris: &[String],
    owner: Option<i64>,
) -> Result<(oauth_application::Model, String), ApplicationError> {
    check_application(name, uris).map_err(ApplicationError::Invalid)?;
    let secret = tokens::generate();
    let app = oauth_application::ActiveModel {
        name: Set(name.trim().to_owned()),
        client_id: Set(tokens::random_from(
            b"abcdefghijklmnopqrstuvwxyz0123456789",
            40,
        )),
        client_secret_hash: Set(tokens::hash(&secret)),
        redirect_uris: Set(json!(uris)),
        user_id: Set(owner),
        active: Set(true),
        created: Set(crate::values::now()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((app, secret))
}

/// Gives an application a new client secret (the old one stops working) and returns it.
pub async fn regenerate_secret(
    db: &impl ConnectionTrait,
    app: &oauth_application::Model,
) -> Result<String, DbErr> {
    let secret = tokens::generate();
    oauth_application::ActiveModel {
        id: Set(app.id),
        client_secret_hash: Set(tokens::hash(&secret)),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(secret)
}

/// The active application with this client ID.
pub async fn application(
    db: &impl ConnectionTrait,
    client_id: &str,
) -> Result<Option<oauth_application::Model>, DbErr> {
    oauth_application::Entity::find()
        .filter(oauth_application::Column::ClientId.eq(client_id))
        .filter(oauth_application::Column::Active.eq(true))
        .one(db)
        .await
}

/// The active application these client credentials authenticate; `None` for an unknown
/// client or a wrong secret.
pub async fn authenticate_client(
    db: &impl ConnectionTrait,
    client_id: &str,
    secret: &str,
) -> Result<Option<oauth_application::Model>, DbErr> {
    Ok(application(db, client_id)
        .await?
        .filter(|app| tokens::matches(&app.client_secret_hash, secret)))
}

/// The parameters of an authorization request (`/api/v1/oauth/authorize`), as sent.
#[derive(Debug, Clone, Default)]
pub struct AuthorizeParams {
    /// The application's client ID.
    pub client_id: Option<String>,
    /// Must be `code`.
    pub response_type: Option<String>,
    /// Space-separated scopes; all of `read write profile` when missing.
    pub scope: Option<String>,
    /// One of the application's redirect URIs; its first one when missing.
    pub redirect_uri: Option<String>,
    /// Echoed in every redirect.
    pub state: Option<String>,
    /// `auto` may skip the consent page (see [`may_skip_consent`]).
    pub approval_prompt: Option<String>,
    /// A PKCE challenge.
    pub code_challenge: Option<String>,
    /// Must be `S256` when a challenge is sent.
    pub code_challenge_method: Option<String>,
}

/// A checked authorization request: the application, where to answer, and what it asks.
#[derive(Debug, Clone)]
pub struct AuthorizeRequest {
    /// The application asking.
    pub app: oauth_application::Model,
    /// Where the answer goes (registered for the application).
    pub redirect_uri: String,
    /// What it asks for.
    pub scope: Scope,
    /// Echoed in the answer.
    pub state: Option<String>,
    /// Whether the client asked to skip the consent page when it can.
    pub approval_prompt_auto: bool,
    /// The PKCE S256 challenge.
    pub code_challenge: Option<String>,
}

impl AuthorizeRequest {
    /// The redirect answering this request with `params`, `state` appended when sent.
    pub fn answer(&self, params: &[(&str, &str)]) -> String {
        let mut all = params.to_vec();
        if let Some(state) = &self.state {
            all.push(("state", state));
        }
        with_query(&self.redirect_uri, &all)
    }
}

/// Why an authorization request cannot go on, told to the person on a page: an invalid
/// request is never redirected, not even to a registered client, since anyone may register
/// a client with any redirect URI (RFC 9700 4.11.2). Only the person's own refusal on the
/// consent page goes back to the client (`access_denied`).
#[derive(Debug, Clone, Copy)]
pub struct AuthorizeRefusal(pub &'static str);

/// Checks an authorization request: an unknown client, an unregistered redirect URI, a
/// missing or other `response_type`, an unknown scope or an unsupported PKCE method is an
/// [`AuthorizeRefusal`].
pub async fn check_authorize(
    db: &impl ConnectionTrait,
    params: &AuthorizeParams,
) -> Result<Result<AuthorizeRequest, AuthorizeRefusal>, DbErr> {
    let Some(client_id) = params.client_id.as_deref().filter(|c| c.len() <= 100) else {
        return Ok(Err(AuthorizeRefusal("The application is not known.")));
    };
    let Some(app) = application(db, client_id).await? else {
        return Ok(Err(AuthorizeRefusal("The application is not known.")));
    };
    let registered = redirect_uris(&app);
    let redirect_uri = match &params.redirect_uri {
        Some(uri) if registered.contains(uri) => uri.clone(),
        Some(_) => {
            return Ok(Err(AuthorizeRefusal(
                "The redirect URI is not registered for this application.",
            )));
        }
        None => match registered.first() {
            Some(first) => first.clone(),
            None => {
                return Ok(Err(AuthorizeRefusal(
                    "The application has no redirect URI.",
                )));
            }
        },
    };
    let mut request = AuthorizeRequest {
        app,
        redirect_uri,
        scope: Scope::default(),
        state: params.state.clone(),
        approval_prompt_auto: params.approval_prompt.as_deref() == Some("auto"),
        code_challenge: params.code_challenge.clone(),
    };
    let error = match params.response_type.as_deref() {
        None => Some("The request names no response type."),
        Some("code") => None,
        Some(_) => Some("Only the response type \"code\" is supported."),
    }
    .or_else(|| {
        let scope = params.scope.as_deref().unwrap_or("read write profile");
        match Scope::parse(scope) {
            Some(parsed) => {
                request.scope = parsed;
                None
            }
            None => Some("The request asks for an unknown scope."),
        }
    })
    .or_else(|| {
        let method_ok = params.code_challenge_method.as_deref() == Some("S256");
        match &params.code_challenge {
            None => None,
            Some(c) if method_ok && is_valid_challenge(c) => None,
            Some(_) => Some("The PKCE challenge is not a valid S256 challenge."),
        }
    });
    Ok(match error {
        Some(error) => Err(AuthorizeRefusal(error)),
        None => Ok(request),
    })
}

/// Whether a PKCE challenge has the form of an S256 challenge's (RFC 7636 4.2: 43
/// characters of base64url; up to 128 accepted, as the verifier's alphabet).
fn is_valid_challenge(challenge: &str) -> bool {
    (43..=128).contains(&challenge.len())
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// Whether the consent page may be skipped: the client asked `approval_prompt=auto` for the
/// `profile` scope alone, and the user granted this application exactly that before.
pub async fn may_skip_consent(
    db: &impl ConnectionTrait,
    request: &AuthorizeRequest,
    user_id: i64,
) -> Result<bool, DbErr> {
    let profile_only = Scope {
        profile: true,
        ..Scope::default()
    };
    if !request.approval_prompt_auto || request.scope != profile_only {
        return Ok(false);
    }
    Ok(oauth_authorization::Entity::find()
        .filter(oauth_authorization::Column::UserId.eq(user_id))
        .filter(oauth_authorization::Column::ApplicationId.eq(request.app.id))
        .one(db)
        .await?
        .is_some_and(|a| Scope::parse(&a.scope) == Some(profile_only)))
}

/// Records that a user grants an application `scope` on these organizers (updating an
/// earlier grant of the same application), and returns a new authorization code for
/// `redirect_uri`, valid for [`CODE_SECONDS`]. `code_challenge` is a PKCE S256 challenge.
pub async fn authorize(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    user_id: i64,
    scope: &str,
    organizer_ids: &[i64],
    redirect_uri: &str,
    code_challenge: Option<&str>,
) -> Result<String, OAuthError> {
    let scope = Scope::parse(scope).ok_or(OAuthError::InvalidScope)?;
    if !redirect_uris(app).iter().any(|u| u == redirect_uri) {
        return Err(OAuthError::InvalidRequest("Mismatching redirect URI."));
    }
    if code_challenge.is_some_and(|c| !is_valid_challenge(c)) {
        return Err(OAuthError::InvalidRequest("Invalid code challenge."));
    }
    // One statement records the grant (a concurrent revoke waits for, or precedes, it),
    // and the code is issued in the same transaction.
    let txn = begin_write(db).await?;
    let granted = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "INSERT INTO oauth_authorizations \
             (application_id, user_id, scope, organizer_ids, created) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (user_id, application_id) \
             DO UPDATE SET scope = excluded.scope, organizer_ids = excluded.organizer_ids \
             RETURNING id",
            [
                app.id.into(),
                user_id.into(),
                scope.to_string().into(),
                json!(organizer_ids).into(),
                crate::values::now().into(),
            ],
        ))
        .await?
        .ok_or_else(|| DbErr::RecordNotInserted)?;
    let authorization_id: i64 = granted.try_get("", "id")?;
    let code = tokens::generate();
    oauth_code::ActiveModel {
        authorization_id: Set(authorization_id),
        code_hash: Set(tokens::hash(&code)),
        redirect_uri: Set(redirect_uri.to_owned()),
        code_challenge: Set(code_challenge.map(str::to_owned)),
        expires: Set(crate::values::now() + TimeDelta::seconds(CODE_SECONDS)),
        used: Set(false),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    crate::db::commit(txn).await?;
    Ok(code)
}

/// A new access token with its refresh token.
#[derive(Debug, Clone)]
pub struct TokenPair {
    /// The access token.
    pub access_token: String,
    /// The refresh token.
    pub refresh_token: String,
    /// Seconds the access token is valid.
    pub expires_in: i64,
    /// The granted scope, space separated.
    pub scope: String,
}

/// The authorization a code or refresh token belongs to, when it belongs to `app`.
async fn authorization_of(
    db: &impl ConnectionTrait,
    app: &oauth_application::Model,
    authorization_id: i64,
) -> Result<oauth_authorization::Model, OAuthError> {
    oauth_authorization::Entity::find_by_id(authorization_id)
        .one(db)
        .await?
        .filter(|a| a.application_id == app.id)
        .ok_or(OAuthError::InvalidGrant)
}

/// The PKCE S256 challenge of a verifier (RFC 7636 4.2).
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether a PKCE verifier answers an S256 challenge.
fn verifier_matches(challenge: &str, verifier: &str) -> bool {
    use subtle::ConstantTimeEq;
    let computed = s256_challenge(verifier);
    computed.as_bytes().ct_eq(challenge.as_bytes()).into()
}

/// Exchanges an authorization code for a token pair. The code must have been issued to
/// `app` for `redirect_uri`, be unexpired and unused, and, when a PKCE challenge was
/// stored, come with its verifier. It can be exchanged once; presented again, it revokes
/// every live token of its authorization.
pub async fn exchange_code(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    code: &str,
    redirect_uri: &str,
    code_verifier: Option<&str>,
) -> Result<TokenPair, OAuthError> {
    let found = oauth_code::Entity::find()
        .filter(oauth_code::Column::CodeHash.eq(tokens::hash(code)))
        .one(db)
        .await?
        .ok_or(OAuthError::InvalidGrant)?;
    if found.used && found.expires > crate::values::now() {
        // A code presented twice while valid: one of the two is not the client (RFC 6749
        // 4.1.2). An expired one revokes nothing, so an old code cannot log anyone out.
        return Err(revoke_after_replay(db, app, found.authorization_id).await);
    }
    if found.used {
        return Err(OAuthError::InvalidGrant);
    }
    if found.expires <= crate::values::now() || found.redirect_uri != redirect_uri {
        return Err(OAuthError::InvalidGrant);
    }
    let pkce_ok = match (&found.code_challenge, code_verifier) {
        (None, None) => true,
        (Some(challenge), Some(verifier)) => verifier_matches(challenge, verifier),
        _ => false,
    };
    if !pkce_ok {
        return Err(OAuthError::InvalidGrant);
    }
    let authorization = authorization_of(db, app, found.authorization_id).await?;
    let txn = begin_write(db).await?;
    if !lock_authorization(&txn, authorization.id, Lock::Shared).await? {
        return Err(OAuthError::InvalidGrant);
    }
    let claimed = oauth_code::Entity::update_many()
        .col_expr(oauth_code::Column::Used, true.into())
        .filter(oauth_code::Column::Id.eq(found.id))
        .filter(oauth_code::Column::Used.eq(false))
        .exec(&txn)
        .await?;
    if claimed.rows_affected != 1 {
        txn.rollback().await?;
        return Err(revoke_after_replay(db, app, authorization.id).await);
    }
    let pair = issue(&txn, &authorization).await?;
    crate::db::commit(txn).await?;
    Ok(pair)
}

/// After a used code or a rotated refresh token came back (someone holds a copy): every
/// live token of the authorization is revoked, when it is `app`'s (RFC 6749 4.1.2, RFC 9700
/// 4.14.2). The person signs in to the application again; the copy's holder has nothing.
/// Gives the refusal to answer.
async fn revoke_after_replay(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    authorization_id: i64,
) -> OAuthError {
    let revoked = async {
        let txn = begin_write(db).await?;
        if belongs_to(&txn, app, authorization_id).await? {
            oauth_refresh_token::Entity::update_many()
                .col_expr(
                    oauth_refresh_token::Column::Revoked,
                    Some(crate::values::now()).into(),
                )
                .filter(oauth_refresh_token::Column::AuthorizationId.eq(authorization_id))
                .filter(oauth_refresh_token::Column::Revoked.is_null())
                .exec(&txn)
                .await?;
            oauth_access_token::Entity::delete_many()
                .filter(oauth_access_token::Column::AuthorizationId.eq(authorization_id))
                .exec(&txn)
                .await?;
        }
        crate::db::commit(txn).await
    };
    match revoked.await {
        Ok(()) => OAuthError::InvalidGrant,
        Err(e) => e.into(),
    }
}

/// Exchanges a refresh token of `app` for a new pair. The refresh token is revoked and the
/// access tokens issued with it are deleted at once. A revoked refresh token presented again
/// revokes every live token of its authorization.
pub async fn refresh(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    refresh_token: &str,
) -> Result<TokenPair, OAuthError> {
    let found = oauth_refresh_token::Entity::find()
        .filter(oauth_refresh_token::Column::TokenHash.eq(tokens::hash(refresh_token)))
        .one(db)
        .await?
        .ok_or(OAuthError::InvalidGrant)?;
    if found.revoked.is_some() {
        return Err(revoke_after_replay(db, app, found.authorization_id).await);
    }
    let authorization = authorization_of(db, app, found.authorization_id).await?;
    let txn = begin_write(db).await?;
    if !lock_authorization(&txn, authorization.id, Lock::Shared).await? {
        return Err(OAuthError::InvalidGrant);
    }
    if !revoke_refresh_token(&txn, found.id).await? {
        txn.rollback().await?;
        return Err(revoke_after_replay(db, app, authorization.id).await);
    }
    let pair = issue(&txn, &authorization).await?;
    crate::db::commit(txn).await?;
    Ok(pair)
}

/// Revokes a refresh token (unless revoked already) and deletes its access tokens; whether
/// this call revoked it.
async fn revoke_refresh_token(db: &impl ConnectionTrait, id: i64) -> Result<bool, DbErr> {
    let revoked = oauth_refresh_token::Entity::update_many()
        .col_expr(
            oauth_refresh_token::Column::Revoked,
            Some(crate::values::now()).into(),
        )
        .filter(oauth_refresh_token::Column::Id.eq(id))
        .filter(oauth_refresh_token::Column::Revoked.is_null())
        .exec(db)
        .await?;
    oauth_access_token::Entity::delete_many()
        .filter(oauth_access_token::Column::RefreshTokenId.eq(id))
        .exec(db)
        .await?;
    Ok(revoked.rows_affected == 1)
}

/// Issues an access token and a refresh token under an authorization.
async fn issue(
    db: &impl ConnectionTrait,
    authorization: &oauth_authorization::Model,
) -> Result<TokenPair, DbErr> {
    let now = crate::values::now();
    let refresh_token = tokens::generate();
    let refresh_row = oauth_refresh_token::ActiveModel {
        authorization_id: Set(authorization.id),
        token_hash: Set(tokens::hash(&refresh_token)),
        created: Set(now),
        revoked: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    let access_token = tokens::generate();
    oauth_access_token::ActiveModel {
        authorization_id: Set(authorization.id),
        refresh_token_id: Set(Some(refresh_row.id)),
        token_hash: Set(tokens::hash(&access_token)),
        created: Set(now),
        expires: Set(now + TimeDelta::seconds(ACCESS_TOKEN_SECONDS)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(TokenPair {
        access_token,
        refresh_token,
        expires_in: ACCESS_TOKEN_SECONDS,
        scope: authorization.scope.clone(),
    })
}

/// Revokes a token of `app` (RFC 7009): an access token is deleted (its refresh token stays
/// usable); a refresh token is revoked and its access tokens deleted. An unknown token, or
/// one of another application, changes nothing.
pub async fn revoke(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    token: &str,
) -> Result<(), DbErr> {
    let hash = tokens::hash(token);
    let txn = crate::db::begin_write(db).await?;
    if let Some(access) = oauth_access_token::Entity::find()
        .filter(oauth_access_token::Column::TokenHash.eq(hash.as_str()))
        .one(&txn)
        .await?
    {
        if belongs_to(&txn, app, access.authorization_id).await? {
            oauth_access_token::Entity::delete_by_id(access.id)
                .exec(&txn)
                .await?;
        }
    } else if let Some(refresh) = oauth_refresh_token::Entity::find()
        .filter(oauth_refresh_token::Column::TokenHash.eq(hash.as_str()))
        .one(&txn)
        .await?
        && belongs_to(&txn, app, refresh.authorization_id).await?
    {
        revoke_refresh_token(&txn, refresh.id).await?;
    }
    crate::db::commit(txn).await
}

async fn belongs_to(
    db: &impl ConnectionTrait,
    app: &oauth_application::Model,
    authorization_id: i64,
) -> Result<bool, DbErr> {
    Ok(oauth_authorization::Entity::find_by_id(authorization_id)
        .one(db)
        .await?
        .is_some_and(|a| a.application_id == app.id))
}

/// How [`lock_authorization`] locks a row on PostgreSQL (SQLite writers take turns).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// `FOR KEY SHARE`: tokens are being issued under the authorization; it must not end
    /// meanwhile.
    Shared,
    /// `FOR UPDATE`: the authorization ends; waits for the tokens being issued under it and
    /// keeps new ones from being issued until the transaction ends.
    Exclusive,
}

/// Locks an authorization's row until the transaction ends; whether it exists. Issuing
/// tokens takes it shared and ending the authorization exclusively, so that tokens issued
/// while an authorization is revoked are either deleted with it or never issued.
async fn lock_authorization(
    db: &impl ConnectionTrait,
    authorization_id: i64,
    lock: Lock,
) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let clause = match (backend, lock) {
        (DbBackend::Postgres, Lock::Shared) => " FOR KEY SHARE",
        (DbBackend::Postgres, Lock::Exclusive) => " FOR UPDATE",
        _ => "",
    };
    let sql = format!("SELECT id FROM oauth_authorizations WHERE id = $1{clause}");
    Ok(db
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            sql,
            [authorization_id.into()],
        ))
        .await?
        .is_some())
}

/// Deletes the authorizations matching `condition` (SQL on `oauth_authorizations` with one
/// parameter `$1`, e.g. `id = $1`) with their codes, access tokens and refresh tokens.
async fn delete_authorizations(
    db: &impl ConnectionTrait,
    condition: &str,
    value: i64,
) -> Result<(), DbErr> {
    let of = format!("authorization_id IN (SELECT id FROM oauth_authorizations WHERE {condition})");
    for sql in [
        format!("DELETE FROM oauth_codes WHERE {of}"),
        format!("DELETE FROM oauth_access_tokens WHERE {of}"),
        format!("DELETE FROM oauth_refresh_tokens WHERE {of}"),
        format!("DELETE FROM oauth_authorizations WHERE {condition}"),
    ] {
        db.execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [value.into()],
        ))
        .await?;
    }
    Ok(())
}

/// Ends a user's authorization of an application (the account page): the authorization is
/// deleted with its codes and tokens, so access tokens stop working at once, refresh tokens
/// are refused and the application is no longer listed as authorized (granting it again
/// asks again). False, and nothing changes, when the user has no such authorization.
pub async fn revoke_authorization(
    db: &DatabaseConnection,
    user_id: i64,
    authorization_id: i64,
) -> Result<bool, DbErr> {
    let owned = oauth_authorization::Entity::find_by_id(authorization_id)
        .one(db)
        .await?
        .is_some_and(|a| a.user_id == user_id);
    if !owned {
        return Ok(false);
    }
    let txn = begin_write(db).await?;
    if !lock_authorization(&txn, authorization_id, Lock::Exclusive).await? {
        return Ok(false);
    }
    delete_authorizations(&txn, "id = $1", authorization_id).await?;
    crate::db::commit(txn).await?;
    Ok(true)
}

/// An application a user authorized, as the account page lists it.
#[derive(Debug, Clone)]
pub struct Authorized {
    /// The authorization's ID (to revoke it).
    pub id: i64,
    /// The application's name.
    pub application: String,
    /// Whether the application is active (an inactive one's tokens are refused).
    pub active: bool,
    /// What the user granted.
    pub scope: Scope,
    /// Names of the organizers granted, in the order granted (deleted ones left out).
    pub organizers: Vec<String>,
    /// When the user first granted access.
    pub created: DateTime<Utc>,
}

/// The applications a user authorized, by application name; two queries.
pub async fn authorizations_of(
    db: &impl ConnectionTrait,
    user_id: i64,
) -> Result<Vec<Authorized>, DbErr> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT a.id, a.scope, a.organizer_ids, a.created, p.name, p.active \
             FROM oauth_authorizations a \
             JOIN oauth_applications p ON p.id = a.application_id \
             WHERE a.user_id = $1 ORDER BY p.name, a.id",
            [user_id.into()],
        ))
        .await?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        let scope: String = row.try_get("", "scope")?;
        let organizer_ids: serde_json::Value = row.try_get("", "organizer_ids")?;
        let organizer_ids: Vec<i64> = serde_json::from_value(organizer_ids).unwrap_or_default();
        found.push((
            Authorized {
                id: row.try_get("", "id")?,
                application: row.try_get("", "name")?,
                active: row.try_get("", "active")?,
                scope: Scope::parse(&scope).unwrap_or_default(),
                organizers: Vec::new(),
                created: row.try_get("", "created")?,
            },
            organizer_ids,
        ));
    }
    let mut all_ids: Vec<i64> = found.iter().flat_map(|(_, ids)| ids.clone()).collect();
    all_ids.sort_unstable();
    all_ids.dedup();
    let names: std::collections::HashMap<i64, String> = if all_ids.is_empty() {
        Default::default()
    } else {
        organizer::Entity::find()
            .filter(organizer::Column::Id.is_in(all_ids))
            .all(db)
            .await?
            .into_iter()
            .map(|o| (o.id, o.name))
            .collect()
    };
    Ok(found
        .into_iter()
        .map(|(mut a, ids)| {
            a.organizers = ids.iter().filter_map(|id| names.get(id).cloned()).collect();
            a
        })
        .collect())
}

/// The applications a user owns, by name.
pub async fn applications_of(
    db: &impl ConnectionTrait,
    user_id: i64,
) -> Result<Vec<oauth_application::Model>, DbErr> {
    oauth_application::Entity::find()
        .filter(oauth_application::Column::UserId.eq(user_id))
        .order_by_asc(oauth_application::Column::Name)
        .order_by_asc(oauth_application::Column::Id)
        .all(db)
        .await
}

/// The application with this ID when the user owns it.
pub async fn own_application(
    db: &impl ConnectionTrait,
    user_id: i64,
    id: i64,
) -> Result<Option<oauth_application::Model>, DbErr> {
    Ok(oauth_application::Entity::find_by_id(id)
        .one(db)
        .await?
        .filter(|app| app.user_id == Some(user_id)))
}

/// Deletes an application the user owns, with every authorization granted to it and their
/// codes and tokens (which stop working at once). False, and nothing changes, when the user
/// owns no such application.
pub async fn delete_application(
    db: &DatabaseConnection,
    user_id: i64,
    id: i64,
) -> Result<bool, DbErr> {
    if own_application(db, user_id, id).await?.is_none() {
        return Ok(false);
    }
    let txn = begin_write(db).await?;
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(&txn);
    // The application first (new authorizations wait), then its authorizations (tokens
    // being issued finish first; new ones wait and then find nothing).
    for sql in [
        format!("SELECT id FROM oauth_applications WHERE id = $1{lock}"),
        format!("SELECT id FROM oauth_authorizations WHERE application_id = $1{lock}"),
    ] {
        txn.query_all_raw(Statement::from_sql_and_values(backend, sql, [id.into()]))
            .await?;
    }
    delete_authorizations(&txn, "application_id = $1", id).await?;
    oauth_application::Entity::delete_by_id(id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(true)
}

/// What a valid access token acts for.
#[derive(Debug, Clone)]
pub struct AccessToken {
    /// The token row.
    pub access_token_id: i64,
    /// The user it acts for.
    pub user_id: i64,
    /// The application it was issued to.
    pub application_id: i64,
    /// The authorization it acts under.
    pub authorization_id: i64,
    /// What it may do.
    pub scope: Scope,
    /// The organizers the user granted.
    pub organizer_ids: Vec<i64>,
}

/// The access token with this value, when it is known, unexpired, of an active application
/// and an active user; one query.
pub async fn resolve_access_token(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<AccessToken>, DbErr> {
    let sql = "SELECT t.id, t.token_hash, t.expires, a.id AS authorization_id, a.user_id, \
               a.application_id, a.scope, a.organizer_ids \
               FROM oauth_access_tokens t \
               JOIN oauth_authorizations a ON a.id = t.authorization_id \
               JOIN oauth_applications p ON p.id = a.application_id AND p.active \
               JOIN users u ON u.id = a.user_id AND u.active \
               WHERE t.token_hash = $1";
    let Some(row) = tokens::find_row(db, sql, token).await? else {
        return Ok(None);
    };
    let expires: DateTime<Utc> = row.try_get("", "expires")?;
    if expires <= crate::values::now() {
        return Ok(None);
    }
    let scope: String = row.try_get("", "scope")?;
    let organizer_ids: serde_json::Value = row.try_get("", "organizer_ids")?;
    Ok(Some(AccessToken {
        access_token_id: row.try_get("", "id")?,
        user_id: row.try_get("", "user_id")?,
        application_id: row.try_get("", "application_id")?,
        authorization_id: row.try_get("", "authorization_id")?,
        scope: Scope::parse(&scope).unwrap_or_default(),
        organizer_ids: serde_json::from_value(organizer_ids).unwrap_or_default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::{Scope, is_valid_redirect_uri, verifier_matches};

    #[test]
    fn scopes_are_read_write_and_profile_only() {
        assert_eq!(
            Scope::parse("write read").map(|s| s.to_string()).as_deref(),
            Some("read write")
        );
        assert!(Scope::parse("").is_none());
        assert!(Scope::parse("admin").is_none());
        assert!(
            Scope::parse("read")
                .is_some_and(|s| s.covers_method("GET") && !s.covers_method("POST"))
        );
    }

    #[test]
    fn redirect_uris_are_absolute_http_urls_without_fragment() {
        assert!(is_valid_redirect_uri("https://example.com/cb"));
        assert!(is_valid_redirect_uri("http://localhost:8080/cb?x=1"));
        assert!(!is_valid_redirect_uri("https://example.com/cb#x"));
        assert!(!is_valid_redirect_uri("ftp://example.com/"));
        assert!(!is_valid_redirect_uri("https:///path"));
        assert!(!is_valid_redirect_uri("/relative"));
    }

    #[test]
    fn a_pkce_verifier_matches_the_s256_challenge_made_from_it() {
        let verifier = "dBjftJeZ4CVP-mJ0GM5QGOUH5tNh66QMGOfpl7cycQ8";
        let challenge = "J4twpgVcRURQzIJwjba1ty4cYTJ1D5kfQcjHqBZNOFA";
        assert!(verifier_matches(challenge, verifier));
        assert!(!verifier_matches(challenge, "other"));
    }
}
