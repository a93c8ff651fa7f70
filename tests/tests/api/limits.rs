//! Bounded input: bodies, URIs and headers larger than accepted are refused before they
//! cost memory or work.

use poem::http::Method;
use serde_json::json;
use tessera_tests::TestApp;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn setup(f: impl FnOnce(&mut tessera::Config)) -> (TestApp, String) {
    let app = TestApp::spawn_with(f).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    (app, token)
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413_and_nothing_is_stored() {
    let (app, token) = setup(|c| c.max_body_bytes = 64 * 1024).await;
    let auth = format!("Token {token}");
    let body = json!({"value": "1.00", "currency": "EUR", "conditions": "x".repeat(100 * 1024)});
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            body.to_string().into_bytes(),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body["detail"].as_str().expect("detail").contains("65536"));
    assert_eq!(app.get(CARDS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_the_body_is_read() {
    let (app, token) = setup(|_| {}).await;
    let auth = format!("Token {token}");
    let declared = (2 * 1024 * 1024).to_string();
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
                ("Content-Length", declared.as_str()),
            ],
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
}

#[tokio::test]
async fn a_body_within_the_limit_is_accepted() {
    let (app, token) = setup(|c| c.max_body_bytes = 64 * 1024).await;
    let r = app
        .post(
            CARDS,
            &token,
            json!({"value": "1.00", "currency": "EUR", "conditions": "x".repeat(1000)}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}
