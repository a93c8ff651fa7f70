use poem::http::Method;
use serde_json::{Map, Value, json};
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

/// A list of `n` numbers from 1.
fn numbers(n: usize) -> Vec<usize> {
    (1..=n).collect()
}

/// An object of `n` keys, each mapped to `value`.
fn keys(n: usize, value: Value) -> Map<String, Value> {
    (0..n).map(|k| (format!("k{k}"), value.clone())).collect()
}

#[tokio::test]
async fn over_long_lists_and_maps_in_bodies_are_400_naming_the_field() {
    let (app, token) = setup().await;
    app.event("acme", "conf").await;
    let org = "/api/v1/organizers/acme";
    let event = "/api/v1/organizers/acme/events/conf";
    let too_many = |n: usize| json!([format!("Ensure this field has no more than {n} elements.")]);
    let cases = [
        (
            Method::POST,
            format!("{event}/quotas/"),
            json!({"items": numbers(1_001)}),
            "items",
            1_000,
        ),
        (
            Method::POST,
            format!("{event}/quotas/"),
            json!({"variations": numbers(1_001)}),
            "variations",
            1_000,
        ),
        (
            Method::POST,
            format!("{event}/questions/"),
            json!({"items": numbers(1_001)}),
            "items",
            1_000,
        ),
        (
            Method::POST,
            format!("{event}/questions/"),
            json!({"dependency_values": vec!["x"; 1_001]}),
            "dependency_values",
            1_000,
        ),
        (
            Method::POST,
            format!("{event}/items/"),
            json!({"variations": vec![json!({}); 1_001]}),
            "variations",
            1_000,
        ),
        (
            Method::POST,
            format!("{event}/items/"),
            json!({"meta_data": keys(1_001, json!("v"))}),
            "meta_data",
            1_000,
        ),
        (
            Method::PATCH,
            format!("{event}/"),
            json!({"sales_channels": vec!["web"; 1_001]}),
            "sales_channels",
            1_000,
        ),
        (
            Method::PATCH,
            format!("{event}/"),
            json!({"seat_category_mapping": keys(1_001, Value::Null)}),
            "seat_category_mapping",
            1_000,
        ),
        (
            Method::PATCH,
            format!("{event}/"),
            json!({"name": keys(101, json!("Conf"))}),
            "name",
            100,
        ),
        (
            Method::POST,
            format!("{event}/orders/"),
            json!({"fees": vec![json!({}); 101]}),
            "fees",
            100,
        ),
        (
            Method::POST,
            format!("{event}/orders/"),
            json!({"api_meta": keys(101, json!(1))}),
            "api_meta",
            100,
        ),
        (
            Method::POST,
            format!("{org}/teams/"),
            json!({"limit_events": vec!["conf"; 1_001]}),
            "limit_events",
            1_000,
        ),
        (
            Method::POST,
            format!("{org}/event_meta_properties/"),
            json!({"choices": vec![json!({"key": "a"}); 1_001]}),
            "choices",
            1_000,
        ),
    ];
    for (method, path, body, field, max) in cases {
        let r = app
            .call(method.clone(), &path, Some(&token), Some(body))
            .await;
        assert_eq!(r.status, 400, "{method} {path} {field}: {}", r.body);
        assert_eq!(r.body[field], too_many(max), "{method} {path}: {}", r.body);
    }
}

#[tokio::test]
async fn over_long_nested_lists_are_400_on_the_entry_that_has_them() {
    let (app, token) = setup().await;
    app.event("acme", "conf").await;
    let orders = "/api/v1/organizers/acme/events/conf/orders/";
    let answer = json!({"question": 1, "options": numbers(1_001)});
    let body = json!({"positions": [
        {"item": 1},
        {"item": 1, "answers": vec![json!({"question": 1}); 1_001]},
        {"item": 1, "answers": [answer]},
        {"item": 1, "attendee_name_parts": keys(101, json!("x"))},
    ]});
    let r = app.post(orders, &token, body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let positions = &r.body["positions"];
    assert_eq!(positions[0], json!({}));
    assert_eq!(
        positions[1]["answers"],
        json!(["Ensure this field has no more than 1000 elements."])
    );
    assert_eq!(
        positions[2]["answers"][0]["options"],
        json!(["Ensure this field has no more than 1000 elements."])
    );
    assert_eq!(
        positions[3]["attendee_name_parts"],
        json!(["Ensure this field has no more than 100 elements."])
    );
}
