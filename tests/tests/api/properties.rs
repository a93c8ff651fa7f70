use serde_json::json;
use tessera_tests::TestApp;

const PROPS: &str = "/api/v1/organizers/acme/properties/";

#[tokio::test]
async fn a_property_is_created_changed_listed_and_deleted() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app
        .token(
            "acme",
            &[
                "can_change_organizer_settings",
                "can_create_events",
                "can_change_event_settings",
            ],
        )
        .await;
    let r = app
        .post(
            PROPS,
            &token,
            json!({"name": "genre", "allowed_values": ["jazz", "rock"], "default": "jazz"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_i64().expect("id");
    assert_eq!(r.body["required"], false);
    let r = app
        .patch(&format!("{PROPS}{id}/"), &token, json!({"default": "pop"}))
        .await;
    assert_eq!(r.status, 400, "the default must be allowed");
    let r = app
        .patch(&format!("{PROPS}{id}/"), &token, json!({"required": true}))
        .await;
    assert_eq!(r.body["required"], true);
    assert_eq!(app.get(PROPS, &token).await.body["count"], 1);
    assert_eq!(
        app.post(PROPS, &token, json!({"name": "genre"}))
            .await
            .status,
        400,
        "names are unique"
    );
    assert_eq!(
        app.post(PROPS, &token, json!({"name": "bad name"}))
            .await
            .status,
        400
    );

    let event = json!({"name": {"en": "Gig"}, "slug": "gig", "currency": "EUR", "date_from": "2030-01-01T20:00:00Z", "meta_data": {"genre": "rock"}});
    assert_eq!(
        app.post("/api/v1/organizers/acme/events/", &token, event)
            .await
            .status,
        201
    );
    assert_eq!(
        app.delete(&format!("{PROPS}{id}/"), &token).await.status,
        204
    );
    let gig = app.get("/api/v1/organizers/acme/events/gig/", &token).await;
    assert_eq!(gig.body["meta_data"], json!({}));
}

#[tokio::test]
async fn a_required_property_without_default_must_be_given_on_new_events() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app
        .token(
            "acme",
            &["can_change_organizer_settings", "can_create_events"],
        )
        .await;
    app.post(PROPS, &token, json!({"name": "venue", "required": true}))
        .await;
    let event = json!({"name": {"en": "Gig"}, "slug": "gig", "currency": "EUR", "date_from": "2030-01-01T20:00:00Z"});
    let r = app
        .post("/api/v1/organizers/acme/events/", &token, event)
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["meta_data"][0].is_string());
}

#[tokio::test]
async fn properties_need_can_change_organizer_settings() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(app.get(PROPS, &token).await.status, 403);
    assert_eq!(
        app.post(PROPS, &token, json!({"name": "x"})).await.status,
        403
    );
}
