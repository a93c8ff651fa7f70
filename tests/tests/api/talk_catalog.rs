//! What tags, tracks and session types share as simple talk-side resources: PUT keeps the
//! optional fields a body leaves out, multi-language fields take a plain string or an object
//! of languages (bounded either way), and a track a reviewer team is limited to is not
//! deleted under the team.

use serde_json::{Value, json};
use tessera_tests::TestApp;
use tessera_tests::talk::{Conference, conference};

/// Creates an object under the conference; gives its ID.
async fn create(app: &TestApp, c: &Conference, path: &str, body: Value) -> i64 {
    let r = app
        .post(&format!("{}/{path}/", c.base), &c.write, body)
        .await;
    assert_eq!(r.status, 201, "{path}: {}", r.body);
    r.body["id"].as_i64().expect("integer")
}

#[tokio::test]
async fn put_keeps_the_optional_fields_it_leaves_out_and_requires_the_others() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    for (path, full, put, kept) in [
        (
            "tags",
            json!({"tag": "rust", "description": {"en": "Systems"}, "color": "#aa0000", "is_public": true}),
            json!({"tag": "rusty"}),
            json!({"tag": "rusty", "description": {"en": "Systems"}, "color": "#aa0000", "is_public": true}),
        ),
        (
            "tracks",
            json!({"name": {"en": "Rust"}, "description": {"en": "Systems"}, "color": "#aa0000",
                   "position": 3, "requires_access_code": true, "attendee_signup_required": true}),
            json!({"name": {"en": "Rust and C"}, "color": "#123"}),
            json!({"name": {"en": "Rust and C"}, "description": {"en": "Systems"}, "color": "#123",
                   "position": 3, "requires_access_code": true, "attendee_signup_required": true}),
        ),
        (
            "submission-types",
            json!({"name": {"en": "Talk"}, "default_duration": 45, "deadline": "2026-05-01T12:00:00Z",
                   "requires_access_code": true, "attendee_signup_required": true}),
            json!({"name": {"en": "Long talk"}}),
            json!({"name": {"en": "Long talk"}, "default_duration": 45, "deadline": "2026-05-01T12:00:00Z",
                   "requires_access_code": true, "attendee_signup_required": true}),
        ),
    ] {
        let id = create(&app, &c, path, full).await;
        let one = format!("{}/{path}/{id}/", c.base);
        let r = app.put(&one, &c.write, put).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let mut expected = kept.clone();
        expected["id"] = json!(id);
        assert_eq!(r.body, expected, "{path}");
        assert_eq!(app.get(&one, &c.read).await.body, expected, "{path}");
        let r = app.put(&one, &c.write, json!({})).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        let required = if path == "tags" { "tag" } else { "name" };
        assert_eq!(
            r.body[required],
            json!(["This field is required."]),
            "{path}: {}",
            r.body
        );
    }
    for (path, body) in [
        ("tags", json!({"tag": "web", "color": "red"})),
        ("tracks", json!({"name": "Web", "color": "#12345"})),
    ] {
        let r = app
            .post(&format!("{}/{path}/", c.base), &c.write, body)
            .await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert!(r.body["color"].is_array(), "{path}: {}", r.body);
    }
    // A new object takes the defaults of what its body leaves out.
    let r = app
        .post(
            &format!("{}/submission-types/", c.base),
            &c.write,
            json!({"name": "Workshop"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["default_duration"], 30);
    assert!(r.body["deadline"].is_null(), "{}", r.body);
    assert_eq!(r.body["requires_access_code"], false);
}

#[tokio::test]
async fn multi_language_fields_take_a_plain_string_kept_as_english() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": "Rust", "description": "Systems", "color": "#abc"}),
    )
    .await;
    let one = format!("{}/tracks/{track}/", c.base);
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.body["name"], json!({"en": "Rust"}), "{}", r.body);
    assert_eq!(r.body["description"], json!({"en": "Systems"}));
    let r = app.get(&format!("{one}?lang=en"), &c.read).await;
    assert_eq!(r.body["name"], "Rust", "{}", r.body);
    // Told apart from the others as the event's main language shows it.
    let r = app
        .post(
            &format!("{}/tracks/", c.base),
            &c.write,
            json!({"name": {"en": "Rust"}, "color": "#000"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["name"].is_array(), "{}", r.body);
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"name": {"en": "Rust", "de": "Rost"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "Rust", "de": "Rost"}));
    let kind = create(&app, &c, "submission-types", json!({"name": "Talk"})).await;
    let r = app
        .get(&format!("{}/submission-types/{kind}/", c.base), &c.read)
        .await;
    assert_eq!(r.body["name"], json!({"en": "Talk"}), "{}", r.body);
    let r = app
        .post(
            &format!("{}/tags/", c.base),
            &c.write,
            json!({"tag": "go", "description": "Gophers"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["description"], json!({"en": "Gophers"}));
}

#[tokio::test]
async fn multi_language_fields_are_bounded_as_strings_and_as_objects() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let types = format!("{}/submission-types/", c.base);
    let long = "x".repeat(101);
    let r = app.post(&types, &c.write, json!({"name": long})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["name"],
        json!(["Ensure this field has no more than 100 characters."]),
        "{}",
        r.body
    );
    let r = app
        .post(
            &types,
            &c.write,
            json!({"name": {"en": "Talk", "de": long}}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["name"]["de"],
        json!(["Ensure this field has no more than 100 characters."]),
        "{}",
        r.body
    );
    for bad in [json!(5), json!(["Talk"]), json!({"en": 5})] {
        let r = app.post(&types, &c.write, json!({"name": bad})).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(
            r.body["name"].is_array() || r.body["name"].is_object(),
            "{bad}: {}",
            r.body
        );
    }
    let r = app
        .post(&types, &c.write, json!({"name": "Ta\u{0}lk"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app.post(&types, &c.write, json!({"name": null})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["name"], json!(["This field may not be null."]));
    let r = app.post(&types, &c.write, json!({"name": " "})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["name"].is_array(), "{}", r.body);
    let r = app
        .get(&format!("{}/submission-types/", c.base), &c.read)
        .await;
    assert_eq!(r.body["count"], 0, "{}", r.body);
}

#[tokio::test]
async fn a_track_a_team_is_limited_to_is_deleted_only_once_the_team_drops_it() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let rust = create(
        &app,
        &c,
        "tracks",
        json!({"name": "Rust", "color": "#aa0000"}),
    )
    .await;
    let teams = "/api/v1/organizers/conf/teams/";
    let admin = app.admin_token("conf").await;
    let r = app
        .post(
            teams,
            &admin,
            json!({"name": "Rust reviewers", "all_events": true, "is_reviewer": true,
                   "limit_tracks": [rust]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let team = format!("{teams}{}/", r.body["id"].as_i64().expect("integer"));
    let one = format!("{}/tracks/{rust}/", c.base);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("string")
            .contains("track limits"),
        "{}",
        r.body
    );
    assert_eq!(app.get(&one, &c.read).await.status, 200);
    let r = app.get(&team, &admin).await;
    assert_eq!(r.body["limit_tracks"], json!([rust]), "{}", r.body);
    let r = app.patch(&team, &admin, json!({"limit_tracks": []})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get(&one, &c.read).await.status, 404);
    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
}
