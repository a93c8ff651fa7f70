use poem::http::Method;
use tessera_tests::TestApp;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    (app, token)
}

fn auth(token: &str) -> String {
    format!("Token {token}")
}

#[tokio::test]
async fn broken_json_is_a_400_naming_no_field() {
    let (app, token) = setup().await;
    let a = auth(&token);
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[("Authorization", &a), ("Content-Type", "application/json")],
            b"{\"value\": ".to_vec(),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["non_field_errors"][0].is_string(), "{}", r.body);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_400_detail() {
    let (app, token) = setup().await;
    let a = auth(&token);
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[("Authorization", &a), ("Content-Type", "application/json")],
            b"hello".to_vec(),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["detail"].is_string());
}

#[tokio::test]
async fn a_json_array_instead_of_an_object_is_400() {
    let (app, token) = setup().await;
    let a = auth(&token);
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[("Authorization", &a), ("Content-Type", "application/json")],
            b"[1]".to_vec(),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["non_field_errors"][0].is_string());
}

#[tokio::test]
async fn a_body_that_is_not_declared_as_json_is_415() {
    let (app, token) = setup().await;
    let a = auth(&token);
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[("Authorization", &a), ("Content-Type", "text/plain")],
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(r.status, 415);
    assert!(r.body["detail"].is_string());
}

#[tokio::test]
async fn a_json_body_without_content_type_is_accepted() {
    let (app, token) = setup().await;
    let a = auth(&token);
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[("Authorization", &a)],
            br#"{"value": "1.00", "currency": "EUR"}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 201);
}

#[tokio::test]
async fn an_unknown_enum_value_is_named() {
    let (app, token) = setup().await;
    let c = app
        .post(
            CARDS,
            &token,
            serde_json::json!({"value": "1.00", "currency": "EUR"}),
        )
        .await;
    let r = app
        .get(
            &format!("{CARDS}{}/transactions/?ordering=sideways", c.body["id"]),
            &token,
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["ordering"][0].is_string());
}

#[tokio::test]
async fn paths_work_with_and_without_the_trailing_slash() {
    let (app, token) = setup().await;
    assert_eq!(
        app.get("/api/v1/organizers/acme/giftcards/", &token)
            .await
            .status,
        200
    );
    assert_eq!(
        app.get("/api/v1/organizers/acme/giftcards", &token)
            .await
            .status,
        200
    );
    assert_eq!(app.get("/api/v1/organizers/", &token).await.status, 200);
    assert_eq!(app.get("/api/v1/organizers", &token).await.status, 200);
}

#[tokio::test]
async fn an_unknown_path_is_a_json_404() {
    let (app, token) = setup().await;
    let r = app.get("/api/v1/nothing/here/", &token).await;
    assert_eq!(r.status, 404);
    assert!(r.body["detail"].is_string());
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405_with_allow() {
    let (app, token) = setup().await;
    let r = app
        .call(Method::DELETE, "/api/v1/organizers/", Some(&token), None)
        .await;
    assert_eq!(r.status, 405);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("detail")
            .contains("DELETE")
    );
    assert_eq!(r.header("allow"), Some("GET"));
    assert_eq!(r.header("content-type"), Some("application/json"));
}
