//! Sales channels as pretix's organizer resource.

use serde_json::json;
use tessera_tests::TestApp;

use crate::selling_support::{EVENT, shop};

const CHANNELS: &str = "/api/v1/organizers/acme/saleschannels/";

#[tokio::test]
async fn every_organizer_has_the_built_in_channels_and_adds_its_own() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let list = app.get(CHANNELS, &token).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let identifiers: Vec<&str> = list.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|c| c["identifier"].as_str().expect("identifier"))
        .collect();
    assert_eq!(identifiers, ["resellers", "web"]);
    assert_eq!(
        app.get(&format!("{CHANNELS}web/"), &token).await.body,
        json!({"identifier": "web", "type": "web", "label": {"en": "Online shop"}, "position": 0})
    );

    let r = app
        .post(
            CHANNELS,
            &token,
            json!({"identifier": "api.pos", "label": {"en": "Box office"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["type"], "api");
    let r = app
        .post(
            CHANNELS,
            &token,
            json!({"identifier": "api.pos", "label": {"en": "Again"}}),
        )
        .await;
    assert_eq!(r.status, 400, "identifiers are unique");
    let r = app
        .post(
            CHANNELS,
            &token,
            json!({"identifier": "pos", "label": {"en": "x"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["identifier"][0],
        "Your identifier needs to start with 'api.'."
    );
    let r = app
        .post(
            CHANNELS,
            &token,
            json!({"identifier": "api.web", "type": "web", "label": {"en": "x"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["type"][0].is_string());

    let r = app
        .patch(
            &format!("{CHANNELS}api.pos/"),
            &token,
            json!({"label": {"en": "Desk"}, "position": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["label"], json!({"en": "Desk"}));
    let r = app
        .patch(
            &format!("{CHANNELS}api.pos/"),
            &token,
            json!({"identifier": "api.other"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["identifier"][0],
        "You cannot change the identifier of a sales channel."
    );
    let only_api = app.get(&format!("{CHANNELS}?type=api"), &token).await;
    assert_eq!(only_api.body["count"], 1);

    let r = app.delete(&format!("{CHANNELS}web/"), &token).await;
    assert_eq!(r.status, 403, "built-in channels stay");
    assert_eq!(r.body["detail"], "Can only be deleted if unused.");
}

#[tokio::test]
async fn a_channel_of_its_own_sells_and_then_cannot_be_deleted() {
    let shop = shop(None).await;
    let (app, token) = (&shop.app, &shop.token);
    for identifier in ["api.pos", "api.kiosk"] {
        let r = app
            .post(
                CHANNELS,
                token,
                json!({"identifier": identifier, "label": {"en": identifier}}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = app
        .patch(
            &format!("{EVENT}/"),
            token,
            json!({"sales_channels": ["web", "api.pos", "api.kiosk"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(
            &format!("{EVENT}/items/{}/", shop.ticket),
            token,
            json!({"sales_channels": ["web", "api.pos", "api.kiosk"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(
            &format!("{EVENT}/"),
            token,
            json!({"sales_channels": ["api.nothing"]}),
        )
        .await;
    assert_eq!(r.status, 400, "a channel the organizer does not have");

    let order = shop.ordered(1, json!({"sales_channel": "api.pos"})).await;
    assert_eq!(order["sales_channel"], "api.pos");
    let r = app.delete(&format!("{CHANNELS}api.pos/"), token).await;
    assert_eq!(r.status, 403, "orders came through it");

    assert_eq!(
        app.delete(&format!("{CHANNELS}api.kiosk/"), token)
            .await
            .status,
        204
    );
    let event = app.get(&format!("{EVENT}/"), token).await.body;
    assert_eq!(event["sales_channels"], json!(["web", "api.pos"]));
    let item = app
        .get(&format!("{EVENT}/items/{}/", shop.ticket), token)
        .await
        .body;
    assert_eq!(item["sales_channels"], json!(["web", "api.pos"]));
}

#[tokio::test]
async fn sales_channels_need_can_change_organizer_settings() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(app.get(CHANNELS, &token).await.status, 403);
    app.organizer("other").await;
    let other = app.admin_token("other").await;
    assert_eq!(
        app.get(&format!("{CHANNELS}web/"), &other).await.status,
        403
    );
}
