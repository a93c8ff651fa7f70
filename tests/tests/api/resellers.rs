//! The reseller interface `/api/v1/var/`: OAuth users only, 404 for accounts they may not
//! see, organizers created with a team of every permission.

use poem::http::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;
use tessera::db::entities::organizer;
use tessera::domain::resellers;
use tessera_tests::TestApp;

use crate::oauth::{bearer, client, tokens};
use tessera_tests::user_of;

/// A user permitted on a new reseller account, and a token of theirs with this scope.
async fn reseller_user(app: &TestApp, scope: &str) -> (i64, String) {
    let user = user_of(app, "var@example.com", &[]).await;
    let account = resellers::create_reseller(&app.db, "Var GmbH", &[user])
        .await
        .expect("reseller");
    let c = client(app).await;
    let (access, _) = tokens(app, &c, user, scope, &[]).await;
    (account.id, access)
}

#[tokio::test]
async fn a_reseller_user_lists_and_shows_their_accounts() {
    let app = TestApp::spawn().await;
    let (id, access) = reseller_user(&app, "read").await;
    resellers::create_reseller(&app.db, "Other", &[])
        .await
        .expect("other");

    let r = bearer(&app, Method::GET, "/api/v1/var/", &access, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["name"], "Var GmbH");
    let r = bearer(
        &app,
        Method::GET,
        &format!("/api/v1/var/{id}/"),
        &access,
        None,
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["communication_language"], "en");
}

#[tokio::test]
async fn the_reseller_interface_refuses_team_tokens_and_anonymous_callers() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let (id, _) = reseller_user(&app, "read").await;
    let team = app.admin_token("acme").await;
    assert_eq!(app.get("/api/v1/var/", &team).await.status, 401);
    assert_eq!(
        app.get(&format!("/api/v1/var/{id}/"), &team).await.status,
        401
    );
    assert_eq!(
        app.call(Method::GET, "/api/v1/var/", None, None)
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn accounts_that_are_missing_or_not_permitted_are_not_found() {
    let app = TestApp::spawn().await;
    let (_, access) = reseller_user(&app, "read write").await;
    let other = resellers::create_reseller(&app.db, "Other", &[])
        .await
        .expect("other");
    for id in [other.id, other.id + 100] {
        let r = bearer(
            &app,
            Method::GET,
            &format!("/api/v1/var/{id}/"),
            &access,
            None,
        )
        .await;
        assert_eq!(r.status, 404);
        let path = format!("/api/v1/var/{id}/create_organizer/");
        let body = json!({"name": "New", "slug": "new"});
        assert_eq!(
            bearer(&app, Method::POST, &path, &access, Some(body))
                .await
                .status,
            404
        );
    }
}

#[tokio::test]
async fn a_reseller_creates_an_organizer_it_then_administers() {
    let app = TestApp::spawn().await;
    let (id, access) = reseller_user(&app, "read write").await;
    let path = format!("/api/v1/var/{id}/create_organizer/");

    let r = bearer(
        &app,
        Method::POST,
        &path,
        &access,
        Some(json!({"name": "Fresh Fest", "slug": "fresh"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["slug"], "fresh");
    assert_eq!(r.body["name"], "Fresh Fest");
    let org = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq("fresh"))
        .one(&app.db)
        .await
        .expect("query")
        .expect("organizer");
    assert_eq!(org.reseller_id, Some(id));

    // The user's team on it has every permission: a fresh token with the organizer granted
    // may change teams (an organizer permission) and create events.
    let c = client(&app).await;
    let user = tessera::domain::users::find_by_email(&app.db, "var@example.com")
        .await
        .expect("query")
        .expect("user")
        .id;
    let (admin, _) = tokens(&app, &c, user, "read write", &[org.id]).await;
    let teams = bearer(
        &app,
        Method::GET,
        "/api/v1/organizers/fresh/teams/",
        &admin,
        None,
    )
    .await;
    assert_eq!(teams.status, 200, "{}", teams.body);
    assert_eq!(teams.body["results"][0]["can_create_events"], true);
    assert_eq!(teams.body["results"][0]["can_change_vouchers"], true);
    assert_eq!(teams.body["results"][0]["all_events"], true);
}

#[tokio::test]
async fn bad_or_taken_slugs_are_refused() {
    let app = TestApp::spawn().await;
    app.organizer("taken").await;
    let (id, access) = reseller_user(&app, "read write").await;
    let path = format!("/api/v1/var/{id}/create_organizer/");
    for slug in ["-bad", "a/b", "taken"] {
        let r = bearer(
            &app,
            Method::POST,
            &path,
            &access,
            Some(json!({"name": "X", "slug": slug})),
        )
        .await;
        assert_eq!(r.status, 400, "{slug}: {}", r.body);
        assert!(r.body["slug"].is_array(), "{}", r.body);
    }
}

#[tokio::test]
async fn creating_an_organizer_needs_the_write_scope() {
    let app = TestApp::spawn().await;
    let (id, access) = reseller_user(&app, "read").await;
    let path = format!("/api/v1/var/{id}/create_organizer/");
    let r = bearer(
        &app,
        Method::POST,
        &path,
        &access,
        Some(json!({"name": "X", "slug": "x"})),
    )
    .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn a_profile_token_reads_no_reseller_account() {
    let app = TestApp::spawn().await;
    let (id, profile) = reseller_user(&app, "profile").await;
    for path in ["/api/v1/var/".to_owned(), format!("/api/v1/var/{id}/")] {
        let r = bearer(&app, Method::GET, &path, &profile, None).await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        assert!(!r.body.to_string().contains("Var GmbH"), "{}", r.body);
    }
    let r = bearer(&app, Method::GET, "/api/v1/me", &profile, None).await;
    assert_eq!(r.status, 200, "the profile is what it reads: {}", r.body);
}
