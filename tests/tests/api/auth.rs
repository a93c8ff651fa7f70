use poem::http::Method;
use serde_json::json;
use tessera_tests::TestApp;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

#[tokio::test]
async fn a_request_without_credentials_is_401_with_a_challenge() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let r = app.call(Method::GET, CARDS, None, None).await;
    assert_eq!(r.status, 401);
    assert!(r.body["detail"].is_string());
    assert_eq!(r.header("www-authenticate"), Some("Token"));
}

#[tokio::test]
async fn an_unknown_token_is_401() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let r = app.get(CARDS, "not-a-token").await;
    assert_eq!(r.status, 401);
    assert!(r.body["detail"].is_string());
    assert_eq!(r.header("www-authenticate"), Some("Token"));
}

#[tokio::test]
async fn an_unknown_authorization_scheme_is_401() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let basic = format!("Basic {token}");
    let r = app
        .raw(Method::GET, CARDS, &[("Authorization", &basic)], vec![])
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn another_organizers_token_is_403_and_sees_nothing() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.organizer("other").await;
    let mine = app.admin_token("acme").await;
    let theirs = app.admin_token("other").await;
    let card = app
        .post(CARDS, &mine, json!({"value": "10.00", "currency": "EUR"}))
        .await;
    assert_eq!(card.status, 201);
    let id = card.body["id"].as_i64().expect("id");

    assert_eq!(app.get(CARDS, &theirs).await.status, 403);
    assert_eq!(app.get(&format!("{CARDS}{id}/"), &theirs).await.status, 403);
    let r = app
        .post(
            &format!("{CARDS}{id}/transact/"),
            &theirs,
            json!({"value": "-1.00"}),
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(r.body["detail"].is_string());
    // Their own organizer path does not reach our card either.
    let r = app
        .get(
            &format!("/api/v1/organizers/other/giftcards/{id}/"),
            &theirs,
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        app.get("/api/v1/organizers/other/giftcards/", &theirs)
            .await
            .body["count"],
        0
    );
}

#[tokio::test]
async fn a_token_without_the_permission_is_403() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app
        .token("acme", &["can_change_items", "can_view_orders"])
        .await;
    let r = app.get(CARDS, &token).await;
    assert_eq!(r.status, 403);
    assert!(r.body["detail"].is_string());
    let r = app
        .post(CARDS, &token, json!({"value": "1.00", "currency": "EUR"}))
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn an_organizer_that_does_not_exist_is_403_not_404() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let r = app
        .get("/api/v1/organizers/nobody/giftcards/", &token)
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        app.get("/api/v1/organizers/nobody/", &token).await.status,
        403
    );
}

#[tokio::test]
async fn a_deactivated_token_stops_working_at_once() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let teams = app.get("/api/v1/organizers/acme/teams/", &admin).await;
    let team = teams.body["results"][0]["id"].as_i64().expect("team");
    let created = app
        .post(
            &format!("/api/v1/organizers/acme/teams/{team}/tokens/"),
            &admin,
            json!({"name": "pos"}),
        )
        .await;
    let token = created.body["token"].as_str().expect("token").to_owned();
    assert_eq!(app.get(CARDS, &token).await.status, 200);

    let id = created.body["id"].as_i64().expect("id");
    let r = app
        .delete(
            &format!("/api/v1/organizers/acme/teams/{team}/tokens/{id}/"),
            &admin,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["active"], false);
    assert_eq!(app.get(CARDS, &token).await.status, 401);
}

#[tokio::test]
async fn requests_beyond_the_rate_limit_are_429_with_retry_after() {
    let app = TestApp::spawn_with(|c| c.rate_limit_per_minute = Some(3)).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let other = app.admin_token("acme").await;
    for _ in 0..3 {
        assert_eq!(app.get(CARDS, &token).await.status, 200);
    }
    let r = app.get(CARDS, &token).await;
    assert_eq!(r.status, 429);
    assert!(r.body["detail"].is_string());
    let wait: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    // The limit is per credential.
    assert_eq!(app.get(CARDS, &other).await.status, 200);
}

#[tokio::test]
async fn without_a_configured_limit_nothing_is_throttled() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    for _ in 0..100 {
        assert_eq!(app.get(CARDS, &token).await.status, 200);
    }
}
