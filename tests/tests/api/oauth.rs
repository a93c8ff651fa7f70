//! The OAuth 2.0 provider: token and revocation endpoints, Bearer callers and `/api/v1/me`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use poem::http::Method;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::json;
use tessera::db::entities::oauth_application;
use tessera::domain::oauth;
use tessera_tests::{Reply, TestApp, user_of};

pub const REDIRECT: &str = "https://client.example/callback";

/// A registered client and its secret.
pub async fn client(app: &TestApp) -> (oauth_application::Model, String) {
    oauth::create_application(&app.db, "Client", &[REDIRECT.to_owned()], None)
        .await
        .expect("application")
}

/// An HTTP Basic `Authorization` value.
pub fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

/// POSTs a form to an OAuth endpoint with HTTP Basic client credentials when given.
pub async fn form(app: &TestApp, path: &str, auth: Option<&str>, body: &str) -> Reply {
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    if let Some(a) = auth {
        headers.push(("Authorization", a));
    }
    app.raw(Method::POST, path, &headers, body.as_bytes().to_vec())
        .await
}

/// Exchanges a code issued for [`REDIRECT`] at the token endpoint (`extra`: more form fields).
pub async fn exchange(
    app: &TestApp,
    c: &(oauth_application::Model, String),
    code: &str,
    extra: &str,
) -> Reply {
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri=https%3A%2F%2Fclient.example%2Fcallback{extra}"
    );
    form(
        app,
        "/api/v1/oauth/token",
        Some(&basic(&c.0.client_id, &c.1)),
        &body,
    )
    .await
}

/// An access token (and refresh token) for the user with this scope on these organizers.
pub async fn tokens(
    app: &TestApp,
    c: &(oauth_application::Model, String),
    user: i64,
    scope: &str,
    organizers: &[i64],
) -> (String, String) {
    let code = oauth::authorize(&app.db, &c.0, user, scope, organizers, REDIRECT, None)
        .await
        .expect("code");
    let r = exchange(app, c, &code, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    (
        r.body["access_token"].as_str().expect("access").to_owned(),
        r.body["refresh_token"]
            .as_str()
            .expect("refresh")
            .to_owned(),
    )
}

/// A request with a Bearer token.
pub async fn bearer(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> Reply {
    let auth = format!("Bearer {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    let bytes = match body {
        Some(b) => {
            headers.push(("Content-Type", "application/json"));
            b.to_string().into_bytes()
        }
        None => Vec::new(),
    };
    app.raw(method, path, &headers, bytes).await
}

/// Exchanges a refresh token at the token endpoint.
pub async fn refresh(app: &TestApp, c: &(oauth_application::Model, String), token: &str) -> Reply {
    let body = format!("grant_type=refresh_token&refresh_token={token}");
    form(
        app,
        "/api/v1/oauth/token",
        Some(&basic(&c.0.client_id, &c.1)),
        &body,
    )
    .await
}

/// Revokes a token at the revocation endpoint (200 only for valid client credentials).
pub async fn revoke(app: &TestApp, c: &(oauth_application::Model, String), token: &str) -> Reply {
    let body = format!("token={token}");
    form(
        app,
        "/api/v1/oauth/revoke_token",
        Some(&basic(&c.0.client_id, &c.1)),
        &body,
    )
    .await
}

#[tokio::test]
async fn a_code_is_exchanged_once_for_a_bearer_token_pair() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let user = user_of(&app, "ada@example.com", &[org]).await;
    let c = client(&app).await;
    let code = oauth::authorize(&app.db, &c.0, user, "read write", &[org], REDIRECT, None)
        .await
        .expect("code");

    let r = exchange(&app, &c, &code, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(r.body["expires_in"], 86400);
    assert_eq!(r.body["scope"], "read write");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let access = r.body["access_token"].as_str().expect("token");
    let orgs = bearer(&app, Method::GET, "/api/v1/organizers/", access, None).await;
    assert_eq!(orgs.status, 200, "{}", orgs.body);
    assert_eq!(orgs.body["results"][0]["slug"], "acme");

    let again = exchange(&app, &c, &code, "").await;
    assert_eq!(again.status, 400);
    assert_eq!(again.body["error"], "invalid_grant");
}

#[tokio::test]
async fn a_code_is_bound_to_its_client_and_redirect_uri_and_expires() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let other = client(&app).await;
    let code = oauth::authorize(&app.db, &c.0, user, "read", &[], REDIRECT, None)
        .await
        .expect("code");

    let r = exchange(&app, &other, &code, "").await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri=https%3A%2F%2Fevil.example%2F"
    );
    let r = form(
        &app,
        "/api/v1/oauth/token",
        Some(&basic(&c.0.client_id, &c.1)),
        &body,
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    app.db
        .execute_raw(Statement::from_string(
            app.db.get_database_backend(),
            "UPDATE oauth_codes SET expires = '2000-01-01T00:00:00Z'",
        ))
        .await
        .expect("age");
    let r = exchange(&app, &c, &code, "").await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn a_pkce_code_needs_its_verifier() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let verifier = "a-verifier-of-at-least-forty-three-characters-long";
    let challenge = oauth::s256_challenge(verifier);
    let code = oauth::authorize(&app.db, &c.0, user, "read", &[], REDIRECT, Some(&challenge))
        .await
        .expect("code");

    let r = exchange(&app, &c, &code, "").await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let r = exchange(&app, &c, &code, "&code_verifier=wrong-verifier").await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let r = exchange(&app, &c, &code, &format!("&code_verifier={verifier}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn the_token_endpoint_needs_client_credentials() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let code = oauth::authorize(&app.db, &c.0, user, "read", &[], REDIRECT, None)
        .await
        .expect("code");
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri=https%3A%2F%2Fclient.example%2Fcallback"
    );

    let r = form(&app, "/api/v1/oauth/token", None, &body).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_client");
    assert!(
        r.header("www-authenticate")
            .is_some_and(|h| h.starts_with("Basic"))
    );
    let wrong = basic(&c.0.client_id, "wrong");
    let r = form(&app, "/api/v1/oauth/token", Some(&wrong), &body).await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let in_body = format!("{body}&client_id={}&client_secret={}", c.0.client_id, c.1);
    let r = form(&app, "/api/v1/oauth/token", None, &in_body).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn malformed_token_requests_get_oauth_errors() {
    let app = TestApp::spawn().await;
    let c = client(&app).await;
    let auth = basic(&c.0.client_id, &c.1);
    let r = form(
        &app,
        "/api/v1/oauth/token",
        Some(&auth),
        "grant_type=password",
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let r = form(
        &app,
        "/api/v1/oauth/token",
        Some(&auth),
        "grant_type=authorization_code",
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_request"))
    );
    let r = app
        .raw(
            Method::POST,
            "/api/v1/oauth/token",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_request"))
    );
}

#[tokio::test]
async fn a_refresh_ends_the_old_access_token_and_the_used_refresh_token_at_once() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let user = user_of(&app, "ada@example.com", &[org]).await;
    let c = client(&app).await;
    let (access, refresh_token) = tokens(&app, &c, user, "read", &[org]).await;

    let r = refresh(&app, &c, &refresh_token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let new_access = r.body["access_token"].as_str().expect("token").to_owned();

    let old = bearer(&app, Method::GET, "/api/v1/organizers/", &access, None).await;
    assert_eq!(old.status, 401);
    let new = bearer(&app, Method::GET, "/api/v1/organizers/", &new_access, None).await;
    assert_eq!(new.status, 200);
    let r = refresh(&app, &c, &refresh_token).await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

/// Whether a Bearer token still opens the organizer list.
async fn works(app: &TestApp, access: &str) -> bool {
    bearer(app, Method::GET, "/api/v1/organizers/", access, None)
        .await
        .status
        == 200
}

#[tokio::test]
async fn a_code_presented_again_revokes_the_tokens_issued_for_it() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let user = user_of(&app, "ada@example.com", &[org]).await;
    let c = client(&app).await;
    let code = oauth::authorize(&app.db, &c.0, user, "read", &[org], REDIRECT, None)
        .await
        .expect("code");
    let first = exchange(&app, &c, &code, "").await;
    assert_eq!(first.status, 200, "{}", first.body);
    let access = first.body["access_token"].as_str().expect("access");
    let refresh_token = first.body["refresh_token"].as_str().expect("refresh");
    assert!(works(&app, access).await);

    let again = exchange(&app, &c, &code, "").await;
    assert_eq!(
        (again.status, again.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(
        !works(&app, access).await,
        "the access token of the code is revoked"
    );
    let r = refresh(&app, &c, refresh_token).await;
    assert_eq!(r.status, 400, "and its refresh token: {}", r.body);
}

#[tokio::test]
async fn a_rotated_refresh_token_presented_again_revokes_the_live_tokens_of_its_authorization() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let user = user_of(&app, "ada@example.com", &[org]).await;
    let c = client(&app).await;
    let (_, stolen) = tokens(&app, &c, user, "read", &[org]).await;
    let r = refresh(&app, &c, &stolen).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let live_access = r.body["access_token"].as_str().expect("access").to_owned();
    let live_refresh = r.body["refresh_token"]
        .as_str()
        .expect("refresh")
        .to_owned();
    assert!(works(&app, &live_access).await);

    let replayed = refresh(&app, &c, &stolen).await;
    assert_eq!(replayed.status, 400, "{}", replayed.body);
    assert!(
        !works(&app, &live_access).await,
        "the live access token is revoked"
    );
    let r = refresh(&app, &c, &live_refresh).await;
    assert_eq!(r.status, 400, "so is the live refresh token: {}", r.body);
}

#[tokio::test]
async fn revoking_an_access_token_keeps_its_refresh_token_usable() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let (access, refresh_token) = tokens(&app, &c, user, "profile", &[]).await;

    let r = revoke(&app, &c, &access).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        bearer(&app, Method::GET, "/api/v1/me", &access, None)
            .await
            .status,
        401
    );
    assert_eq!(refresh(&app, &c, &refresh_token).await.status, 200);
}

#[tokio::test]
async fn revoking_a_refresh_token_ends_its_access_token_too() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let (access, refresh_token) = tokens(&app, &c, user, "profile", &[]).await;

    let r = revoke(&app, &c, &refresh_token).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        bearer(&app, Method::GET, "/api/v1/me", &access, None)
            .await
            .status,
        401
    );
    let r = refresh(&app, &c, &refresh_token).await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn revoking_an_unknown_token_succeeds_and_needs_the_client() {
    let app = TestApp::spawn().await;
    let c = client(&app).await;
    assert_eq!(revoke(&app, &c, "unknown").await.status, 200);
    let r = form(&app, "/api/v1/oauth/revoke_token", None, "token=unknown").await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (401, Some("invalid_client"))
    );
}

#[tokio::test]
async fn revoking_an_authorization_ends_its_tokens() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let (access, refresh_token) = tokens(&app, &c, user, "profile", &[]).await;
    let found = oauth::resolve_access_token(&app.db, &access)
        .await
        .expect("query")
        .expect("token");

    assert!(
        !oauth::revoke_authorization(&app.db, user + 1, found.authorization_id)
            .await
            .expect("revoke")
    );
    assert!(
        oauth::revoke_authorization(&app.db, user, found.authorization_id)
            .await
            .expect("revoke")
    );
    assert_eq!(
        bearer(&app, Method::GET, "/api/v1/me", &access, None)
            .await
            .status,
        401
    );
    assert_eq!(refresh(&app, &c, &refresh_token).await.status, 400);
}

#[tokio::test]
async fn a_bearer_token_sees_only_the_granted_organizers_of_the_user() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let globex = app.organizer("globex").await;
    app.organizer("initech").await;
    let user = user_of(&app, "ada@example.com", &[acme, globex]).await;
    let c = client(&app).await;
    let (access, _) = tokens(&app, &c, user, "read", &[acme]).await;

    let r = bearer(&app, Method::GET, "/api/v1/organizers/", &access, None).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(r.body["results"][0]["slug"], "acme");
    let r = bearer(
        &app,
        Method::GET,
        "/api/v1/organizers/acme/events/",
        &access,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for other in ["globex", "initech"] {
        let path = format!("/api/v1/organizers/{other}/events/");
        assert_eq!(
            bearer(&app, Method::GET, &path, &access, None).await.status,
            403
        );
    }
}

#[tokio::test]
async fn a_read_token_cannot_write_and_a_profile_token_cannot_read_organizer_data() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let user = user_of(&app, "ada@example.com", &[acme]).await;
    let c = client(&app).await;
    let (read, _) = tokens(&app, &c, user, "read", &[acme]).await;
    let body = json!({"name": "Box office"});

    let r = bearer(
        &app,
        Method::POST,
        "/api/v1/organizers/acme/teams/",
        &read,
        Some(body.clone()),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let (write, _) = tokens(&app, &c, user, "read write", &[acme]).await;
    let r = bearer(
        &app,
        Method::POST,
        "/api/v1/organizers/acme/teams/",
        &write,
        Some(body),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);

    let (profile, _) = tokens(&app, &c, user, "profile", &[acme]).await;
    let r = bearer(
        &app,
        Method::GET,
        "/api/v1/organizers/acme/events/",
        &profile,
        None,
    )
    .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn an_expired_or_unknown_bearer_token_is_refused() {
    let app = TestApp::spawn().await;
    let user = user_of(&app, "ada@example.com", &[]).await;
    let c = client(&app).await;
    let (access, _) = tokens(&app, &c, user, "profile", &[]).await;
    assert_eq!(
        bearer(&app, Method::GET, "/api/v1/me", &access, None)
            .await
            .status,
        200
    );

    app.db
        .execute_raw(Statement::from_string(
            app.db.get_database_backend(),
            "UPDATE oauth_access_tokens SET expires = '2000-01-01T00:00:00Z'",
        ))
        .await
        .expect("age");
    let r = bearer(&app, Method::GET, "/api/v1/me", &access, None).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["detail"], "Invalid token.");
    let r = bearer(&app, Method::GET, "/api/v1/organizers/", "unknown", None).await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn me_shows_the_profile_of_the_token_user_and_refuses_team_tokens() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let user = user_of(&app, "Ada@Example.com", &[]).await;
    let c = client(&app).await;
    let (access, _) = tokens(&app, &c, user, "profile", &[]).await;

    let r = bearer(&app, Method::GET, "/api/v1/me", &access, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"email": "ada@example.com", "fullname": "Ada Lovelace", "locale": "en", "is_staff": false, "timezone": "UTC"})
    );
    let team = app.admin_token("acme").await;
    assert_eq!(app.get("/api/v1/me", &team).await.status, 401);
    assert_eq!(
        app.call(Method::GET, "/api/v1/me", None, None).await.status,
        401
    );
}

#[tokio::test]
async fn basic_credentials_elsewhere_are_refused_like_any_unknown_scheme() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let auth = basic("id", "secret");
    let r = app
        .raw(
            Method::GET,
            "/api/v1/organizers/",
            &[("Authorization", &auth)],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["detail"], "Invalid token.");
}
