//! Rooms of the talk side: organisers of the event's settings write them; a room in the
//! schedule cannot be hidden or deleted; the public reads the rooms that are not hidden
//! once a schedule is released.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::Endpoints;
use tessera_tests::TestApp;
use tessera_tests::talk::{
    Conference, assert_refused, conference, create, results, rows, sql, talk_user, user_token,
};

fn id_of(object: &Value) -> i64 {
    object["id"].as_i64().expect("an ID")
}

fn rooms_url(c: &Conference) -> String {
    format!("{}/rooms/", c.base)
}

fn room_url(c: &Conference, id: i64) -> String {
    format!("{}/rooms/{id}/", c.base)
}

/// An accepted session whose slot in the schedule in progress is in `room`; gives the
/// slot's ID.
async fn scheduled_in(app: &TestApp, c: &Conference, room: i64) -> i64 {
    let kind = id_of(
        &create(
            app,
            c,
            "submission-types",
            json!({"name": {"en": "Talk"}, "default_duration": 30}),
        )
        .await,
    );
    let s = create(
        app,
        c,
        "submissions",
        json!({"title": "T", "submission_type": kind}),
    )
    .await;
    let code = s["code"].as_str().expect("a code");
    let r = app
        .post(
            &format!("{}/submissions/{code}/accept/", c.base),
            &c.write,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .get(&format!("{}/slots/?submission={code}", c.base), &c.read)
        .await;
    let slot = id_of(&results(&r.body)[0]);
    let r = app
        .patch(
            &format!("{}/slots/{slot}/", c.base),
            &c.write,
            json!({"room": room}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    slot
}

#[tokio::test]
async fn organisers_create_change_list_and_delete_rooms_with_a_log() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let r = app
        .post(
            &rooms_url(&c),
            &c.write,
            json!({
                "name": "Main hall",
                "capacity": 400,
                "guid": "{0D5C3A4E-9F7B-4C1A-8E2D-3B4A5C6D7E8F}",
                "availabilities": [
                    {"start": "2030-06-01T12:00:00Z", "end": "2030-06-01T14:00:00Z"},
                    {"start": "2030-06-01T00:00:00Z", "end": "2030-06-01T12:00:00Z"},
                    {"start": "2030-06-03T09:00:00Z", "end": "2030-06-03T10:00:00Z"}
                ]
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = id_of(&r.body);
    assert_eq!(r.body["name"], json!({"en": "Main hall"}));
    assert_eq!(r.body["description"], json!({}), "never null");
    assert_eq!(r.body["speaker_info"], json!({}));
    assert_eq!(r.body["guid"], "0d5c3a4e-9f7b-4c1a-8e2d-3b4a5c6d7e8f");
    assert_eq!(r.body["uuid"], r.body["guid"]);
    assert_eq!(r.body["capacity"], 400);
    assert_eq!(r.body["position"], Value::Null);
    assert_eq!(r.body["hidden"], false);
    let spans = r.body["availabilities"].as_array().expect("a list");
    assert_eq!(spans.len(), 2, "touching spans merge: {spans:?}");
    assert_eq!(spans[0]["allDay"], false);

    let one = room_url(&c, id);
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"description": {"en": "Ground floor", "de": "Erdgeschoss"}, "guid": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["capacity"], 400);
    assert_eq!(r.body["guid"], Value::Null);
    let uuid = r.body["uuid"].as_str().expect("a UUID").to_owned();
    assert_eq!(uuid.len(), 36);
    assert_eq!(&uuid[14..15], "8");
    let r = app
        .put(
            &one,
            &c.write,
            json!({"name": {"en": "Hall A"}, "position": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["description"]["de"], "Erdgeschoss",
        "PUT keeps what it omits"
    );
    assert_eq!(r.body["availabilities"].as_array().map(Vec::len), Some(2));
    assert_eq!(r.body["uuid"], uuid, "stable");
    let r = app.get(&format!("{one}?lang=en"), &c.read).await;
    assert_eq!(r.body["description"], "Ground floor");
    assert_eq!(r.body["name"], "Hall A");

    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(results(&r.body)[0]["action_type"], "tessera.room.update");
    assert_eq!(results(&r.body)[2]["action_type"], "tessera.room.create");
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get(&one, &c.read).await.status, 404);
    let left = rows(
        &app,
        "SELECT COUNT(*) AS n FROM talk_room_availabilities",
        vec![],
    )
    .await;
    assert_eq!(left[0].try_get::<i64>("", "n").expect("a count"), 0);
}

#[tokio::test]
async fn room_bodies_are_checked_and_a_refused_one_changes_nothing() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let existing = create(
        &app,
        &c,
        "rooms",
        json!({"name": "Kept", "guid": "0d5c3a4e-9f7b-4c1a-8e2d-3b4a5c6d7e8f"}),
    )
    .await;
    let long = "x".repeat(101);
    for (body, field) in [
        (json!({}), "name"),
        (json!({"name": {"en": " "}}), "name"),
        (json!({"name": long}), "name"),
        (json!({"name": "R", "capacity": 0}), "capacity"),
        (json!({"name": "R", "position": -1}), "position"),
        (json!({"name": "R", "guid": "not-a-uuid"}), "guid"),
        (
            json!({"name": "R", "guid": "0D5C3A4E9F7B4C1A8E2D3B4A5C6D7E8F"}),
            "guid",
        ),
        (
            json!({"name": "R", "description": {"en": "d".repeat(1001)}}),
            "description",
        ),
        (
            json!({"name": "R", "availabilities": [
                {"start": "2030-06-01T12:00:00Z", "end": "2030-06-01T11:00:00Z"}
            ]}),
            "availabilities",
        ),
    ] {
        let r = app.post(&rooms_url(&c), &c.write, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body.get(field).is_some(), "{body}: {}", r.body);
    }
    let r = app
        .patch(
            &room_url(&c, id_of(&existing)),
            &c.write,
            json!({"name": ""}),
        )
        .await;
    assert_refused(&r, "name", "an empty name");
    let r = app.get(&rooms_url(&c), &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["name"], json!({"en": "Kept"}));
}

#[tokio::test]
async fn a_room_in_the_schedule_is_neither_hidden_nor_deleted() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let room = id_of(&create(&app, &c, "rooms", json!({"name": "Used"})).await);
    let slot = scheduled_in(&app, &c, room).await;
    let r = app
        .patch(&room_url(&c, room), &c.write, json!({"hidden": true}))
        .await;
    assert_refused(&r, "hidden", "a room in progress");
    let r = app.delete(&room_url(&c, room), &c.write).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["detail"].is_string(), "{}", r.body);

    // Out of the schedule in progress it may be hidden, but a schedule used it once: it
    // stays.
    let r = app
        .post(
            &format!("{}/schedules/release/", c.base),
            &c.write,
            json!({"version": "v1"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let copy = rows(
        &app,
        "SELECT sl.id FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
         WHERE sc.version IS NULL AND sc.event_id = $1",
        vec![c.event.into()],
    )
    .await[0]
        .try_get::<i64>("", "id")
        .expect("an ID");
    assert_ne!(copy, slot);
    let r = app
        .patch(
            &format!("{}/slots/{copy}/", c.base),
            &c.write,
            json!({"room": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(&room_url(&c, room), &c.write, json!({"hidden": true}))
        .await;
    assert_refused(&r, "hidden", "a room in the current schedule");
    let r = app.delete(&room_url(&c, room), &c.write).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(app.get(&room_url(&c, room), &c.read).await.status, 200);
}

#[tokio::test]
async fn rooms_come_100_a_page_and_the_public_sees_the_shown_ones_without_organiser_fields() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    for i in 0..104 {
        sql(
            &app,
            "INSERT INTO talk_rooms (event_id, name, position, hidden) VALUES ($1, $2, $3, $4)",
            vec![
                c.event.into(),
                json!({"en": format!("Room {i:03}")}).into(),
                (103 - i).into(),
                (i % 50 == 0).into(),
            ],
        )
        .await;
    }
    let r = app.get(&rooms_url(&c), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 104);
    assert_eq!(results(&r.body).len(), 100);
    assert!(
        r.body["next"]
            .as_str()
            .is_some_and(|n| n.ends_with("page=2"))
    );
    assert_eq!(results(&r.body)[0]["name"]["en"], "Room 103", "by position");
    let r = app
        .get(&format!("{}?page_size=10&o=-name", rooms_url(&c)), &c.read)
        .await;
    assert_eq!(results(&r.body).len(), 10);
    assert_eq!(results(&r.body)[0]["name"]["en"], "Room 103");
    let r = app
        .get(&format!("{}?hidden=true", rooms_url(&c)), &c.read)
        .await;
    assert_eq!(r.body["count"], 3, "{}", r.body);
    let r = app
        .get(&format!("{}?q=room%2007", rooms_url(&c)), &c.read)
        .await;
    assert_eq!(r.body["count"], 10, "{}", r.body);

    // Reviewers and organisers of the call for papers alone do not see organiser fields;
    // the public sees nothing before a release, then the rooms that are not hidden.
    let (cfp_user, _) = talk_user(
        &app,
        "cfp@example.org",
        c.organizer,
        &[Permission::ChangeSubmissions],
    )
    .await;
    let cfp = user_token(&app, cfp_user, &Endpoints::all_write(), None).await;
    let r = app.get(&rooms_url(&c), &cfp).await;
    assert_eq!(r.body["count"], 104, "{}", r.body);
    assert!(results(&r.body)[0].get("speaker_info").is_none());
    let r = app
        .post(&rooms_url(&c), &cfp, json!({"name": "Mine"}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&rooms_url(&c), &c.reviewer).await;
    assert_eq!(
        r.status, 403,
        "reviewers read rooms once the agenda is public: {}",
        r.body
    );
    let list = rooms_url(&c);
    let anonymous = || app.call(Method::GET, &list, None, None);
    assert_eq!(anonymous().await.status, 401);
    let r = app
        .post(
            &format!("{}/schedules/release/", c.base),
            &c.write,
            json!({"version": "v1"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = anonymous().await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 101, "{}", r.body);
    assert!(
        results(&r.body)
            .iter()
            .all(|room| room["hidden"] == false && room.get("availabilities").is_none())
    );
    let hidden = rows(
        &app,
        "SELECT id FROM talk_rooms WHERE hidden = $1 ORDER BY id LIMIT 1",
        vec![true.into()],
    )
    .await[0]
        .try_get::<i64>("", "id")
        .expect("an ID");
    let r = app
        .call(Method::GET, &room_url(&c, hidden), None, None)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .call(
            Method::GET,
            &format!("{}log/", room_url(&c, hidden + 1)),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 401, "the log is the team's: {}", r.body);
    let r = app.delete(&room_url(&c, hidden), &c.read).await;
    assert_eq!(r.status, 403, "a read token: {}", r.body);
}
