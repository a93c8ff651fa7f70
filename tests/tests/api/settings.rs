use serde_json::json;
use tessera_tests::TestApp;

const ORG: &str = "/api/v1/organizers/acme/settings/";
const EVENT: &str = "/api/v1/organizers/acme/events/conf/settings/";

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    let token = app
        .token(
            "acme",
            &["can_change_event_settings", "can_change_organizer_settings"],
        )
        .await;
    (app, token)
}

#[tokio::test]
async fn an_event_inherits_from_its_organizer_then_the_defaults() {
    let (app, token) = setup().await;
    assert_eq!(app.get(EVENT, &token).await.body["payment_term_days"], 14);
    let r = app
        .patch(ORG, &token, json!({"payment_term_days": 7}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["payment_term_days"], 7);
    assert_eq!(app.get(EVENT, &token).await.body["payment_term_days"], 7);
    let r = app
        .patch(EVENT, &token, json!({"payment_term_days": 3}))
        .await;
    assert_eq!(r.body["payment_term_days"], 3);
    assert_eq!(app.get(ORG, &token).await.body["payment_term_days"], 7);
    let r = app
        .patch(EVENT, &token, json!({"payment_term_days": null}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["payment_term_days"], 7,
        "null makes it inherit again"
    );
}

#[tokio::test]
async fn explain_gives_value_label_and_help_text() {
    let (app, token) = setup().await;
    let r = app.get(&format!("{EVENT}?explain=true"), &token).await;
    assert_eq!(r.status, 200);
    let s = &r.body["waiting_list_enabled"];
    assert_eq!(s["value"], false);
    assert!(s["label"].as_str().is_some_and(|l| !l.is_empty()));
    assert!(s["help_text"].is_string());
}

#[tokio::test]
async fn unknown_keys_and_invalid_values_are_400_per_key_and_change_nothing() {
    let (app, token) = setup().await;
    let r = app.patch(EVENT, &token, json!({"waiting_list_enabled": true, "no_such_key": 1, "payment_term_days": "soon", "contact_mail": "nope"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["no_such_key"][0].is_string());
    assert!(r.body["payment_term_days"][0].is_string());
    assert!(r.body["contact_mail"][0].is_string());
    assert!(r.body.get("waiting_list_enabled").is_none());
    assert_eq!(
        app.get(EVENT, &token).await.body["waiting_list_enabled"],
        false
    );
}

#[tokio::test]
async fn organizer_only_keys_cannot_be_set_on_an_event() {
    let (app, token) = setup().await;
    assert_eq!(
        app.patch(ORG, &token, json!({"giftcard_length": 12}))
            .await
            .status,
        200
    );
    let r = app
        .patch(EVENT, &token, json!({"giftcard_length": 12}))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        app.get(EVENT, &token)
            .await
            .body
            .get("giftcard_length")
            .is_none()
    );
}

#[tokio::test]
async fn put_is_not_allowed() {
    let (app, token) = setup().await;
    let r = app.put(EVENT, &token, json!({})).await;
    assert_eq!(r.status, 405);
    assert!(r.header("allow").is_some_and(|a| a.contains("PATCH")));
}

#[tokio::test]
async fn settings_need_their_permission() {
    let (app, _) = setup().await;
    let items = app.token("acme", &["can_change_items"]).await;
    assert_eq!(app.get(EVENT, &items).await.status, 403);
    assert_eq!(
        app.patch(EVENT, &items, json!({"payment_term_days": 1}))
            .await
            .status,
        403
    );
    assert_eq!(app.get(ORG, &items).await.status, 403);
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    assert_eq!(app.get(EVENT, &theirs).await.status, 403);
    assert_eq!(
        app.patch(ORG, &theirs, json!({"payment_term_days": 1}))
            .await
            .status,
        403
    );
}
