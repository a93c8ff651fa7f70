//! Devices and gates of an organizer: `/api/v1/organizers/{o}/devices/` and `gates/`.

use serde_json::json;
use tessera::domain::devices;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera_tests::TestApp;

const DEVICES: &str = "/api/v1/organizers/acme/devices/";
const GATES: &str = "/api/v1/organizers/acme/gates/";

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    app.event("acme", "expo").await;
    let token = app.device_admin_token("acme").await;
    (app, token)
}

#[tokio::test]
async fn a_device_is_created_with_its_qr_payload_shown_and_changed() {
    let (app, token) = setup().await;
    let r = app
        .post(
            DEVICES,
            &token,
            json!({"name": "Entrance", "limit_events": ["expo", "conf"], "security_profile": "pretixscan"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["device_id"], 1);
    assert_eq!(r.body["name"], "Entrance");
    assert_eq!(r.body["all_events"], false);
    assert_eq!(r.body["limit_events"], json!(["conf", "expo"]));
    assert_eq!(r.body["security_profile"], "pretixscan");
    assert_eq!(r.body["revoked"], false);
    assert_eq!(r.body["initialized"], json!(null));
    assert_eq!(r.body["gate"], json!(null));
    let serial = r.body["unique_serial"].as_str().expect("serial");
    assert_eq!(serial.len(), 16);
    assert!(
        serial
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    );
    let token_text = r.body["initialization_token"].as_str().expect("token");
    assert_eq!(token_text.len(), 16);
    assert!(
        token_text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    );
    assert_eq!(
        r.body["qr_payload"],
        json!({"handshake_version": 1, "url": "http://tessera.test", "token": token_text})
    );

    let second = app
        .post(DEVICES, &token, json!({"name": "Exit", "all_events": true}))
        .await;
    assert_eq!(second.status, 201, "{}", second.body);
    assert_eq!(second.body["device_id"], 2);
    assert_eq!(second.body["security_profile"], "full");

    let shown = app.get(&format!("{DEVICES}1/"), &token).await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert_eq!(shown.body["initialization_token"], token_text);
    assert!(shown.body.get("qr_payload").is_none());

    let list = app.get(DEVICES, &token).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["count"], 2);
    assert_eq!(
        list.body["results"][0]["limit_events"],
        json!(["conf", "expo"])
    );

    let patched = app
        .patch(
            &format!("{DEVICES}1/"),
            &token,
            json!({"name": "Main entrance", "limit_events": ["conf"], "security_profile": "service_checkin_online_kiosk"}),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.body["name"], "Main entrance");
    assert_eq!(patched.body["limit_events"], json!(["conf"]));
    assert_eq!(
        patched.body["security_profile"],
        "service_checkin_online_kiosk"
    );

    let put = app
        .put(
            &format!("{DEVICES}1/"),
            &token,
            json!({"name": "Door", "all_events": true}),
        )
        .await;
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.body["all_events"], true);
    assert_eq!(put.body["limit_events"], json!([]));
    assert_eq!(put.body["security_profile"], "full");
}

#[tokio::test]
async fn devices_cannot_be_deleted() {
    let (app, token) = setup().await;
    app.post(DEVICES, &token, json!({"name": "Entrance"})).await;
    let r = app.delete(&format!("{DEVICES}1/"), &token).await;
    assert_eq!(r.status, 405, "{}", r.body);
    assert_eq!(app.get(&format!("{DEVICES}1/"), &token).await.status, 200);
}

#[tokio::test]
async fn unknown_events_and_profiles_and_foreign_gates_are_field_errors() {
    let (app, token) = setup().await;
    let r = app
        .post(
            DEVICES,
            &token,
            json!({"name": "X", "limit_events": ["nope"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["limit_events"].is_array(), "{}", r.body);

    let r = app
        .post(
            DEVICES,
            &token,
            json!({"name": "X", "security_profile": "everything"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["security_profile"].is_array(), "{}", r.body);

    app.organizer("other").await;
    let other = app.device_admin_token("other").await;
    let foreign = app
        .post(
            "/api/v1/organizers/other/gates/",
            &other,
            json!({"name": "Theirs"}),
        )
        .await;
    let gate = foreign.body["id"].as_i64().expect("gate");
    let r = app
        .post(DEVICES, &token, json!({"name": "X", "gate": gate}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["gate"].is_array(), "{}", r.body);

    let r = app.post(DEVICES, &token, json!({"limit_events": []})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["name"].is_array(), "{}", r.body);
    assert_eq!(app.get(DEVICES, &token).await.body["count"], 0);
}

#[tokio::test]
async fn devices_need_the_organizer_settings_permission_and_stay_within_their_organizer() {
    let (app, token) = setup().await;
    app.post(DEVICES, &token, json!({"name": "Entrance"})).await;
    let weak = app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(app.get(DEVICES, &weak).await.status, 403);
    assert_eq!(
        app.post(DEVICES, &weak, json!({"name": "X"})).await.status,
        403
    );
    assert_eq!(app.get(GATES, &weak).await.status, 403);

    app.organizer("other").await;
    let other = app.device_admin_token("other").await;
    assert_eq!(app.get(DEVICES, &other).await.status, 403);
    assert_eq!(app.get(&format!("{DEVICES}1/"), &other).await.status, 403);
    let theirs = app.get("/api/v1/organizers/other/devices/", &other).await;
    assert_eq!(theirs.body["count"], 0);
    assert_eq!(
        app.get("/api/v1/organizers/other/devices/1/", &other)
            .await
            .status,
        403
    );
}

#[tokio::test]
async fn a_revoked_device_stays_revoked() {
    let (app, token) = setup().await;
    app.post(DEVICES, &token, json!({"name": "Lost"})).await;
    let r = app
        .patch(&format!("{DEVICES}1/"), &token, json!({"revoked": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["revoked"], true);
    let r = app
        .patch(&format!("{DEVICES}1/"), &token, json!({"revoked": false}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["revoked"].is_array(), "{}", r.body);
}

#[tokio::test]
async fn gates_are_created_with_generated_identifiers_changed_and_deleted() {
    let (app, token) = setup().await;
    let r = app.post(GATES, &token, json!({"name": "North"})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let identifier = r.body["identifier"].as_str().expect("identifier");
    assert_eq!(identifier.len(), 8);
    assert!(
        identifier
            .bytes()
            .all(|b| b"ABCDEFGHJKLMNPQRSTUVWXYZ3789".contains(&b))
    );
    let id = r.body["id"].as_i64().expect("id");

    let r = app
        .post(
            GATES,
            &token,
            json!({"name": "South", "identifier": "SOUTH"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let south = r.body["id"].as_i64().expect("id");

    let clash = app
        .post(
            GATES,
            &token,
            json!({"name": "Again", "identifier": "SOUTH"}),
        )
        .await;
    assert_eq!(clash.status, 400);
    assert!(clash.body["identifier"].is_array(), "{}", clash.body);
    let clash = app
        .patch(
            &format!("{GATES}{id}/"),
            &token,
            json!({"identifier": "SOUTH"}),
        )
        .await;
    assert_eq!(clash.status, 400);

    let r = app
        .patch(
            &format!("{GATES}{id}/"),
            &token,
            json!({"name": "North gate"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "North gate");
    assert_eq!(r.body["identifier"], identifier);
    let r = app
        .put(
            &format!("{GATES}{id}/"),
            &token,
            json!({"name": "N", "identifier": "NORTH"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["identifier"], "NORTH");

    let list = app.get(GATES, &token).await;
    assert_eq!(list.body["count"], 2);

    // A device at the gate stands at none once the gate is deleted.
    let d = app
        .post(DEVICES, &token, json!({"name": "Scanner", "gate": south}))
        .await;
    assert_eq!(d.status, 201, "{}", d.body);
    assert_eq!(d.body["gate"], south);
    let r = app.delete(&format!("{GATES}{south}/"), &token).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        app.get(&format!("{GATES}{south}/"), &token).await.status,
        403
    );
    let shown = app.get(&format!("{DEVICES}1/"), &token).await;
    assert_eq!(shown.body["gate"], json!(null));
}

#[tokio::test]
async fn other_organizers_gates_are_invisible() {
    let (app, token) = setup().await;
    let r = app.post(GATES, &token, json!({"name": "North"})).await;
    let id = r.body["id"].as_i64().expect("id");
    app.organizer("other").await;
    let other = app.device_admin_token("other").await;
    assert_eq!(
        app.get(&format!("/api/v1/organizers/other/gates/{id}/"), &other)
            .await
            .status,
        403
    );
    assert_eq!(
        app.delete(&format!("/api/v1/organizers/other/gates/{id}/"), &other)
            .await
            .status,
        403
    );
    // Another organizer may use the same identifier.
    let same = app
        .post(
            "/api/v1/organizers/other/gates/",
            &other,
            json!({"name": "N", "identifier": r.body["identifier"]}),
        )
        .await;
    assert_eq!(same.status, 201, "{}", same.body);
}

#[tokio::test]
async fn a_team_gives_a_device_only_events_it_holds_every_device_permission_on() {
    let (app, admin) = setup().await;
    let settings_only = PermissionSet::from_iter([Permission::ChangeOrganizerSettings]);
    let limited = app.token_for("acme", Some(settings_only), &["conf"]).await;
    for body in [
        json!({"name": "Everywhere", "all_events": true}),
        json!({"name": "Theirs", "limit_events": ["expo"]}),
        json!({"name": "Ours", "limit_events": ["conf"]}),
    ] {
        let r = app.post(DEVICES, &limited, body.clone()).await;
        assert_eq!(r.status, 403, "{body}: {}", r.body);
    }
    let doors = devices::acts_with().with(Permission::ChangeOrganizerSettings);
    let door_team = app.token_for("acme", Some(doors), &["conf"]).await;
    let r = app
        .post(
            DEVICES,
            &door_team,
            json!({"name": "Everywhere", "all_events": true}),
        )
        .await;
    assert_eq!(
        r.status, 403,
        "all events need a grant for all events: {}",
        r.body
    );
    let r = app
        .post(
            DEVICES,
            &door_team,
            json!({"name": "Ours", "limit_events": ["conf"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let ours = r.body["device_id"].as_i64().expect("an ID");
    for body in [
        json!({"all_events": true}),
        json!({"limit_events": ["conf", "expo"]}),
    ] {
        let r = app
            .patch(&format!("{DEVICES}{ours}/"), &door_team, body.clone())
            .await;
        assert_eq!(r.status, 403, "{body}: {}", r.body);
    }
    let r = app
        .post(
            DEVICES,
            &admin,
            json!({"name": "Admin's", "all_events": true}),
        )
        .await;
    let theirs = r.body["device_id"].as_i64().expect("an ID");
    let r = app
        .patch(
            &format!("{DEVICES}{theirs}/"),
            &door_team,
            json!({"limit_events": ["conf"], "all_events": false}),
        )
        .await;
    assert_eq!(
        r.status, 403,
        "a device of all events stays out of reach: {}",
        r.body
    );
    let r = app
        .put(
            &format!("{DEVICES}{theirs}/"),
            &door_team,
            json!({"name": "Mine now", "limit_events": ["conf"]}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&format!("{DEVICES}{theirs}/"), &admin).await;
    assert_eq!(r.body["all_events"], true, "unchanged: {}", r.body);
    assert_eq!(r.body["name"], "Admin's");
    assert!(r.body["initialization_token"].is_string(), "{}", r.body);
    // Whoever holds the initialization token becomes the device: only those who may
    // configure it see it.
    for token in [&limited, &door_team] {
        let r = app.get(&format!("{DEVICES}{theirs}/"), token).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(
            r.body["initialization_token"],
            serde_json::Value::Null,
            "{}",
            r.body
        );
        let list = app.get(DEVICES, token).await;
        for d in list.body["results"].as_array().expect("results") {
            if d["device_id"] == theirs {
                assert_eq!(d["initialization_token"], serde_json::Value::Null, "{d}");
            }
        }
    }
    let r = app.get(&format!("{DEVICES}{ours}/"), &door_team).await;
    assert!(
        r.body["initialization_token"].is_string(),
        "its own: {}",
        r.body
    );
}
