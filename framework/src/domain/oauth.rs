//! The OAuth 2.0 provider's rules: applications (clients), what users grant them, codes,
//! access and refresh tokens. Every secret is random ([`tokens::generate`]) and stored as a
//! SHA-256 digest; codes and refresh tokens are used once, each by a conditional `UPDATE`,
//! so two concurrent exchanges of one code cannot both succeed, on either backend.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set, TransactionTrait,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::db::entities::{
    oauth_access_token, oauth_application, oauth_authorization, oauth_code, oauth_refresh_token,
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

/// Whether `uri` may be a redirect URI: an absolute `http` or `https` URL with a host, no
/// fragment, no whitespace, bounded in length.
pub fn is_valid_redirect_uri(uri: &str) -> bool {
    let rest = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"));
    uri.len() <= MAX_REDIRECT_URI_LEN
        && !uri.contains('#')
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
        && rest.is_some_and(|r| {
            let host = r.split(['/', '?']).next().unwrap_or_default();
            !host.is_empty() && !host.starts_with(':') && !host.contains('@')
        })
}

/// The redirect URIs an application allows.
pub fn redirect_uris(app: &oauth_application::Model) -> Vec<String> {
    serde_json::from_value(app.redirect_uris.clone()).unwrap_or_default()
}

/// Registers an application. Returns it with its client secret, which is stored only as a
/// hash and never shown again.
pub async fn create_application(
    db: &impl ConnectionTrait,
    name: &str,
    uris: &[String],
    owner: Option<i64>,
) -> Result<(oauth_application::Model, String), OAuthError> {
    if name.trim().is_empty() || name.chars().count() > 255 {
        return Err(OAuthError::InvalidRequest(
            "The name must have 1 to 255 characters.",
        ));
    }
    if uris.is_empty()
        || uris.len() > MAX_REDIRECT_URIS
        || !uris.iter().all(|u| is_valid_redirect_uri(u))
    {
        return Err(OAuthError::InvalidRequest(
            "Redirect URIs must be 1 to 20 absolute http(s) URLs without a fragment.",
        ));
    }
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
        created: Set(Utc::now()),
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

/// Records that a user grants an application `scope` on these organizers (updating an
/// earlier grant of the same application), and returns a new authorization code for
/// `redirect_uri`, valid for [`CODE_SECONDS`]. `code_challenge` is a PKCE S256 challenge.
pub async fn authorize(
    db: &impl ConnectionTrait,
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
    if code_challenge.is_some_and(|c| !(43..=128).contains(&c.len())) {
        return Err(OAuthError::InvalidRequest("Invalid code challenge."));
    }
    let existing = oauth_authorization::Entity::find()
        .filter(oauth_authorization::Column::UserId.eq(user_id))
        .filter(oauth_authorization::Column::ApplicationId.eq(app.id))
        .one(db)
        .await?;
    let authorization_id = match existing {
        Some(found) => {
            oauth_authorization::ActiveModel {
                id: Set(found.id),
                scope: Set(scope.to_string()),
                organizer_ids: Set(json!(organizer_ids)),
                ..Default::default()
            }
            .update(db)
            .await?
            .id
        }
        None => {
            oauth_authorization::ActiveModel {
                application_id: Set(app.id),
                user_id: Set(user_id),
                scope: Set(scope.to_string()),
                organizer_ids: Set(json!(organizer_ids)),
                created: Set(Utc::now()),
                ..Default::default()
            }
            .insert(db)
            .await?
            .id
        }
    };
    let code = tokens::generate();
    oauth_code::ActiveModel {
        authorization_id: Set(authorization_id),
        code_hash: Set(tokens::hash(&code)),
        redirect_uri: Set(redirect_uri.to_owned()),
        code_challenge: Set(code_challenge.map(str::to_owned)),
        expires: Set(Utc::now() + TimeDelta::seconds(CODE_SECONDS)),
        used: Set(false),
        ..Default::default()
    }
    .insert(db)
    .await?;
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
/// stored, come with its verifier. It can be exchanged once.
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
        .filter(|c| !c.used && c.expires > Utc::now() && c.redirect_uri == redirect_uri)
        .ok_or(OAuthError::InvalidGrant)?;
    let pkce_ok = match (&found.code_challenge, code_verifier) {
        (None, None) => true,
        (Some(challenge), Some(verifier)) => verifier_matches(challenge, verifier),
        _ => false,
    };
    if !pkce_ok {
        return Err(OAuthError::InvalidGrant);
    }
    let authorization = authorization_of(db, app, found.authorization_id).await?;
    let txn = db.begin().await?;
    let claimed = oauth_code::Entity::update_many()
        .col_expr(oauth_code::Column::Used, true.into())
        .filter(oauth_code::Column::Id.eq(found.id))
        .filter(oauth_code::Column::Used.eq(false))
        .exec(&txn)
        .await?;
    if claimed.rows_affected != 1 {
        return Err(OAuthError::InvalidGrant);
    }
    let pair = issue(&txn, &authorization).await?;
    txn.commit().await?;
    Ok(pair)
}

/// Exchanges a refresh token of `app` for a new pair. The refresh token is revoked and the
/// access tokens issued with it are deleted at once.
pub async fn refresh(
    db: &DatabaseConnection,
    app: &oauth_application::Model,
    refresh_token: &str,
) -> Result<TokenPair, OAuthError> {
    let found = oauth_refresh_token::Entity::find()
        .filter(oauth_refresh_token::Column::TokenHash.eq(tokens::hash(refresh_token)))
        .one(db)
        .await?
        .filter(|t| t.revoked.is_none())
        .ok_or(OAuthError::InvalidGrant)?;
    let authorization = authorization_of(db, app, found.authorization_id).await?;
    let txn = db.begin().await?;
    if !revoke_refresh_token(&txn, found.id).await? {
        return Err(OAuthError::InvalidGrant);
    }
    let pair = issue(&txn, &authorization).await?;
    txn.commit().await?;
    Ok(pair)
}

/// Revokes a refresh token (unless revoked already) and deletes its access tokens; whether
/// this call revoked it.
async fn revoke_refresh_token(db: &impl ConnectionTrait, id: i64) -> Result<bool, DbErr> {
    let revoked = oauth_refresh_token::Entity::update_many()
        .col_expr(
            oauth_refresh_token::Column::Revoked,
            Some(Utc::now()).into(),
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
    let now = Utc::now();
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
    let txn = db.begin().await?;
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
    txn.commit().await
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

/// Ends a user's authorization of an application (the account page): its access tokens are
/// deleted and its refresh tokens revoked. False when the user has no such authorization.
pub async fn revoke_authorization(
    db: &DatabaseConnection,
    user_id: i64,
    authorization_id: i64,
) -> Result<bool, DbErr> {
    let Some(found) = oauth_authorization::Entity::find_by_id(authorization_id)
        .one(db)
        .await?
        .filter(|a| a.user_id == user_id)
    else {
        return Ok(false);
    };
    let txn = db.begin().await?;
    oauth_access_token::Entity::delete_many()
        .filter(oauth_access_token::Column::AuthorizationId.eq(found.id))
        .exec(&txn)
        .await?;
    oauth_refresh_token::Entity::update_many()
        .col_expr(
            oauth_refresh_token::Column::Revoked,
            Some(Utc::now()).into(),
        )
        .filter(oauth_refresh_token::Column::AuthorizationId.eq(found.id))
        .filter(oauth_refresh_token::Column::Revoked.is_null())
        .exec(&txn)
        .await?;
    oauth_code::Entity::update_many()
        .col_expr(oauth_code::Column::Used, true.into())
        .filter(oauth_code::Column::AuthorizationId.eq(found.id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
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
    if expires <= Utc::now() {
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
