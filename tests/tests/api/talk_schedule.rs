//! The program of the talk side: accepted sessions get slots in the schedule in progress,
//! releases freeze it under a version name used once, slots change only in progress, and
//! the public reads the current schedule once one is released.

use std::sync::Arc;

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera_tests::talk::{
    Conference, assert_refused, conference, create, results, rows, sql, talk_event, user_token,
};
use tessera_tests::{Reply, TestApp};

/// A conference on 1 and 2 June 2030 in Berlin, with a 30-minute session type and a room.
struct Program {
    c: Conference,
    kind: i64,
    room: i64,
}

impl Program {
    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.c.base)
    }
}

/// Sets up a [`Program`].
async fn program(app: &TestApp) -> Program {
    let c = conference(app).await;
    sql(
        app,
        "UPDATE events SET date_from = $1, date_to = $2, timezone = $3 WHERE id = $4",
        vec![
            at("2030-06-01T08:00:00Z").into(),
            at("2030-06-02T18:00:00Z").into(),
            "Europe/Berlin".into(),
            c.event.into(),
        ],
    )
    .await;
    let kind = create(
        app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}, "default_duration": 30}),
    )
    .await["id"]
        .as_i64()
        .expect("an ID");
    let room = create(app, &c, "rooms", json!({"name": "Hall", "position": 1})).await["id"]
        .as_i64()
        .expect("an ID");
    Program { c, kind, room }
}

fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    text.parse().expect("a time")
}

/// A session with one speaker, moved through `states` (e.g. `["accept", "confirm"]`);
/// gives its code.
async fn session(app: &TestApp, p: &Program, title: &str, moves: &[&str]) -> String {
    let s = create(
        app,
        &p.c,
        "submissions",
        json!({"title": title, "submission_type": p.kind, "abstract": "About it."}),
    )
    .await;
    let code = s["code"].as_str().expect("a code").to_owned();
    let one = p.url(&format!("submissions/{code}/"));
    let local: String = title.chars().filter(char::is_ascii_alphanumeric).collect();
    let speaker = format!("{}@example.org", local.to_lowercase());
    let r = app
        .post(
            &format!("{one}add-speaker/"),
            &p.c.write,
            json!({"email": speaker, "name": format!("Speaker of {title}")}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for m in moves {
        let r = app.post(&format!("{one}{m}/"), &p.c.write, json!({})).await;
        assert_eq!(r.status, 200, "{m}: {}", r.body);
    }
    code
}

/// The schedule in progress with its slots expanded, as organisers see it.
async fn wip(app: &TestApp, p: &Program) -> Value {
    let r = app
        .get(&p.url("schedules/wip/?expand=slots"), &p.c.write)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// The slots of a session in the schedule in progress.
async fn wip_slots_of(app: &TestApp, p: &Program, code: &str) -> Vec<Value> {
    wip(app, p).await["slots"]
        .as_array()
        .expect("slots")
        .iter()
        .filter(|s| s["submission"] == code)
        .cloned()
        .collect()
}

/// Places a slot in the room at `start`.
async fn place(app: &TestApp, p: &Program, slot: i64, start: &str) -> Reply {
    app.patch(
        &p.url(&format!("slots/{slot}/")),
        &p.c.write,
        json!({"room": p.room, "start": start}),
    )
    .await
}

/// Releases the schedule in progress as `version`.
async fn release(app: &TestApp, p: &Program, version: &str) -> Reply {
    app.post(
        &p.url("schedules/release/"),
        &p.c.write,
        json!({"version": version, "comment": "First"}),
    )
    .await
}

/// A break in the schedule in progress, written to the database (the API makes none).
async fn a_break(app: &TestApp, p: &Program) -> i64 {
    let wip_id = wip(app, p).await["id"].as_i64().expect("an ID");
    let r = rows(
        app,
        "INSERT INTO talk_slots (schedule_id, room_id, start, \"end\", slot_type, description, \
         is_visible) VALUES ($1, $2, $3, $4, 'break', $5, $6) RETURNING id",
        vec![
            wip_id.into(),
            p.room.into(),
            at("2030-06-01T10:00:00Z").into(),
            at("2030-06-01T10:15:00Z").into(),
            json!({"en": "Coffee"}).into(),
            true.into(),
        ],
    )
    .await;
    r[0].try_get("", "id").expect("an ID")
}

fn ids(r: &Reply) -> Vec<i64> {
    results(&r.body)
        .iter()
        .map(|o| o["id"].as_i64().expect("an ID"))
        .collect()
}

#[tokio::test]
async fn accepted_and_confirmed_sessions_have_slots_in_progress_and_others_lose_them() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let code = session(&app, &p, "Ownership", &[]).await;
    assert!(wip_slots_of(&app, &p, &code).await.is_empty());
    let one = p.url(&format!("submissions/{code}/"));

    app.post(&format!("{one}accept/"), &p.c.write, json!({}))
        .await;
    let slots = wip_slots_of(&app, &p, &code).await;
    assert_eq!(slots.len(), 1, "{slots:?}");
    assert_eq!(slots[0]["is_visible"], false);
    assert_eq!(slots[0]["start"], Value::Null);
    assert_eq!(slots[0]["duration"], 30);

    let r = app
        .post(&format!("{one}confirm/"), &p.c.write, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slot = wip_slots_of(&app, &p, &code).await[0]["id"]
        .as_i64()
        .expect("an ID");
    let r = place(&app, &p, slot, "2030-06-01T09:00:00Z").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["is_visible"], true);
    assert_eq!(r.body["start"], "2030-06-01T11:00:00+02:00");
    assert_eq!(r.body["end"], "2030-06-01T11:30:00+02:00");

    // More slots for a session held several times; a longer session ends later.
    let r = app
        .patch(&one, &p.c.write, json!({"slot_count": 2, "duration": 45}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slots = wip_slots_of(&app, &p, &code).await;
    assert_eq!(slots.len(), 2, "{slots:?}");
    let placed = slots.iter().find(|s| s["id"] == slot).expect("kept");
    assert_eq!(placed["end"], "2030-06-01T11:45:00+02:00");
    let r = app.patch(&one, &p.c.write, json!({"slot_count": 1})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slots = wip_slots_of(&app, &p, &code).await;
    assert_eq!(slots.len(), 1);
    assert_eq!(slots[0]["id"], slot, "the unscheduled slot goes first");

    // A pending acceptance already asks for a slot; canceling drops it.
    let pending = session(&app, &p, "Pending", &[]).await;
    let r = app
        .patch(
            &p.url(&format!("submissions/{pending}/")),
            &p.c.write,
            json!({"pending_state": "accepted"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(wip_slots_of(&app, &p, &pending).await.len(), 1);
    let r = app
        .post(&format!("{one}cancel/"), &p.c.write, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(wip_slots_of(&app, &p, &code).await.is_empty());
    let rejected = session(&app, &p, "Rejected", &["accept", "reject"]).await;
    assert!(wip_slots_of(&app, &p, &rejected).await.is_empty());
}

#[tokio::test]
async fn a_release_freezes_the_schedule_in_progress_under_a_version_used_once() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let confirmed = session(&app, &p, "Confirmed", &["accept", "confirm"]).await;
    let accepted = session(&app, &p, "Accepted", &["accept"]).await;
    for (code, start) in [
        (&confirmed, "2030-06-01T09:00:00Z"),
        (&accepted, "2030-06-01T11:00:00Z"),
    ] {
        let slot = wip_slots_of(&app, &p, code).await[0]["id"]
            .as_i64()
            .expect("an ID");
        assert_eq!(place(&app, &p, slot, start).await.status, 200);
    }
    let coffee = a_break(&app, &p).await;
    let in_progress = wip(&app, &p).await["id"].as_i64().expect("an ID");

    let r = release(&app, &p, "v1").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let v1 = r.body["id"].as_i64().expect("an ID");
    assert_eq!(
        v1, in_progress,
        "the schedule in progress is the one released"
    );
    assert_eq!(r.body["version"], "v1");
    assert_eq!(r.body["comment"], json!({"en": "First"}));
    assert!(r.body["published"].is_string());
    assert_eq!(r.body["slots"].as_array().expect("slots").len(), 3);
    let r = app
        .get(&p.url(&format!("slots/?schedule={v1}&o=start")), &p.c.read)
        .await;
    let visible: Vec<(Value, Value)> = results(&r.body)
        .iter()
        .map(|s| (s["submission"].clone(), s["is_visible"].clone()))
        .collect();
    assert_eq!(
        visible,
        [
            (json!(confirmed), json!(true)),
            (Value::Null, json!(true)),
            (json!(accepted), json!(false)),
        ],
        "confirmed sessions and breaks are public, accepted ones not yet"
    );
    let latest = app.get(&p.url("schedules/latest/"), &p.c.read).await;
    assert_eq!(latest.body["id"], v1);
    let next = wip(&app, &p).await;
    assert_ne!(next["id"], v1);
    assert_eq!(next["version"], "wip");
    assert_eq!(next["slots"].as_array().expect("slots").len(), 3);
    assert!(
        next["slots"]
            .as_array()
            .expect("slots")
            .iter()
            .all(|s| s["id"] != coffee),
        "the new schedule has copies"
    );

    // A version used before (in any case), a reserved or a blank one: 400, nothing changes.
    for version in ["V1", "wip", "Latest", "  "] {
        let r = release(&app, &p, version).await;
        assert_refused(&r, "version", version);
    }
    let r = app
        .post(&p.url("schedules/release/"), &p.c.write, json!({}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let all = app.get(&p.url("schedules/"), &p.c.read).await;
    assert_eq!(all.body["count"], 2, "{}", all.body);
    assert_eq!(
        results(&all.body)
            .iter()
            .map(|s| s["version"].clone())
            .collect::<Vec<_>>(),
        [json!("wip"), json!("v1")]
    );
    assert_eq!(wip(&app, &p).await["id"], next["id"]);
    let r = release(&app, &p, "v2").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let v2 = r.body["id"].as_i64().expect("an ID");

    // Versions by name, and the current one, as URLs.
    let r = app
        .get(&p.url("schedules/by-version/?version=v1"), &p.c.write)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body,
        format!("http://tessera.test/api/events/conf2026/schedules/{v1}/")
    );
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/plain"))
    );
    let r = app
        .get(&p.url("schedules/by-version/?latest=1"), &p.c.write)
        .await;
    assert_eq!(
        r.body,
        format!("http://tessera.test/api/events/conf2026/schedules/{v2}/")
    );
    for query in ["version=v9", "version=V1"] {
        let r = app
            .get(
                &p.url(&format!("schedules/by-version/?{query}")),
                &p.c.write,
            )
            .await;
        assert_eq!(r.status, 404, "{query}: {}", r.body);
    }
    let r = app.get(&p.url("schedules/by-version/"), &p.c.write).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app.get(&p.url("schedules/?q=V"), &p.c.read).await;
    assert_eq!(r.body["count"], 2, "{}", r.body);
    let log = rows(
        &app,
        "SELECT data FROM talk_log WHERE object_type = 'schedule' AND action_type = $1",
        vec!["tessera.schedule.release".into()],
    )
    .await;
    assert_eq!(log.len(), 2);
}

#[tokio::test]
async fn only_organisers_release_and_read_the_schedule_in_progress() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let r = app
        .post(
            &p.url("schedules/release/"),
            &p.c.reviewer,
            json!({"version": "v1"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .post(
            &p.url("schedules/release/"),
            &p.c.read,
            json!({"version": "v1"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&p.url("schedules/wip/"), &p.c.reviewer).await;
    assert_eq!(r.status, 200, "reviewers see it: {}", r.body);
    let r = app.get(&p.url("schedules/latest/"), &p.c.read).await;
    assert_eq!(r.status, 404, "nothing released yet: {}", r.body);
    for id in ["0", "nothing"] {
        let r = app
            .get(&p.url(&format!("schedules/{id}/")), &p.c.read)
            .await;
        assert_eq!(r.status, 404, "{id}: {}", r.body);
    }
    let r = app
        .get(&p.url("schedules/wip/?expand=slots.nothing"), &p.c.read)
        .await;
    assert_refused(&r, "expand", "an unknown field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_releases_of_one_version_at_once_give_one_201_and_one_400() {
    let app = Arc::new(TestApp::spawn().await);
    let p = program(&app).await;
    session(&app, &p, "Raced", &["accept", "confirm"]).await;
    for round in 0..3 {
        let version = format!("r{round}");
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let (app, url, token) =
                    (app.clone(), p.url("schedules/release/"), p.c.write.clone());
                let body = json!({"version": version});
                tokio::spawn(async move { app.post(&url, &token, body).await.status })
            })
            .collect();
        let mut statuses = Vec::new();
        for t in tasks {
            statuses.push(t.await.expect("a task"));
        }
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 400], "round {round}");
    }
    let counts = rows(
        &app,
        "SELECT COUNT(*) AS n, COUNT(version) AS released FROM talk_schedules WHERE event_id = $1",
        vec![p.c.event.into()],
    )
    .await;
    assert_eq!(counts[0].try_get::<i64>("", "n").expect("a count"), 4);
    assert_eq!(
        counts[0].try_get::<i64>("", "released").expect("a count"),
        3
    );
    let copies = rows(
        &app,
        "SELECT sc.version, COUNT(sl.id) AS n FROM talk_schedules sc \
         LEFT JOIN talk_slots sl ON sl.schedule_id = sc.id WHERE sc.event_id = $1 \
         GROUP BY sc.id, sc.version",
        vec![p.c.event.into()],
    )
    .await;
    assert!(
        copies
            .iter()
            .all(|r| r.try_get::<i64>("", "n").expect("a count") == 1),
        "every schedule has the one slot once"
    );
}

#[tokio::test]
async fn slots_change_only_in_progress_and_only_breaks_take_an_end_and_a_description() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let code = session(&app, &p, "Moved", &["accept", "confirm"]).await;
    let slot = wip_slots_of(&app, &p, &code).await[0]["id"]
        .as_i64()
        .expect("an ID");
    let url = p.url(&format!("slots/{slot}/"));

    // A session's slot: room and start; its end follows from its duration.
    let r = app
        .put(
            &url,
            &p.c.write,
            json!({"room": p.room, "start": "2030-06-01T13:00:00+02:00"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["end"], "2030-06-01T13:30:00+02:00");
    for (body, field) in [
        (json!({"end": "2030-06-01T14:00:00Z"}), "end"),
        (json!({"description": "Lunch"}), "description"),
        (json!({"start": "2030-05-31T21:00:00Z"}), "start"),
        (json!({"start": "2030-06-02T21:50:00Z"}), "end"),
        (json!({"room": 999_999}), "room"),
    ] {
        let r = app.patch(&url, &p.c.write, body.clone()).await;
        assert_refused(&r, field, &body.to_string());
    }
    let hidden = create(
        &app,
        &p.c,
        "rooms",
        json!({"name": "Closet", "hidden": true}),
    )
    .await;
    let r = app
        .patch(&url, &p.c.write, json!({"room": hidden["id"]}))
        .await;
    assert_refused(&r, "room", "a hidden room");
    let r = app.patch(&url, &p.c.reviewer, json!({"start": null})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&url, &p.c.write).await;
    assert_eq!(
        r.body["start"], "2030-06-01T13:00:00+02:00",
        "nothing changed"
    );

    // A break: start, end and description.
    let coffee = a_break(&app, &p).await;
    let break_url = p.url(&format!("slots/{coffee}/"));
    let r = app
        .patch(
            &break_url,
            &p.c.write,
            json!({"end": "2030-06-01T10:30:00Z", "description": {"en": "Long coffee"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["duration"], 30);
    assert_eq!(r.body["description"], json!({"en": "Long coffee"}));
    assert_eq!(r.body["slot_type"], "break");
    let r = app
        .patch(
            &break_url,
            &p.c.write,
            json!({"end": "2030-06-01T09:00:00Z"}),
        )
        .await;
    assert_refused(&r, "end", "an end before the start");
    let logged = rows(
        &app,
        "SELECT COUNT(*) AS n FROM talk_log WHERE object_type = 'slot'",
        vec![],
    )
    .await;
    assert_eq!(logged[0].try_get::<i64>("", "n").expect("a count"), 2);

    // Unscheduled, then released: the released slot is 400 to change, and stays.
    let r = app.patch(&url, &p.c.write, json!({"start": null})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["start"], Value::Null);
    assert_eq!(r.body["end"], Value::Null);
    assert_eq!(
        place(&app, &p, slot, "2030-06-01T12:00:00Z").await.status,
        200
    );
    assert_eq!(release(&app, &p, "v1").await.status, 201);
    for body in [
        json!({"start": "2030-06-01T15:00:00Z"}),
        json!({"room": null}),
    ] {
        let r = app.patch(&url, &p.c.write, body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert!(r.body["detail"].is_string(), "{}", r.body);
    }
    let r = app.get(&url, &p.c.write).await;
    assert_eq!(r.body["start"], "2030-06-01T14:00:00+02:00");
    assert_eq!(r.body["room"], p.room);
    let copy = wip_slots_of(&app, &p, &code).await[0]["id"]
        .as_i64()
        .expect("an ID");
    assert_ne!(copy, slot);
    assert_eq!(
        place(&app, &p, copy, "2030-06-01T15:00:00Z").await.status,
        200,
        "its copy in progress changes"
    );
}

#[tokio::test]
async fn the_public_reads_the_current_schedule_once_one_is_released() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let public = session(&app, &p, "Public", &["accept", "confirm"]).await;
    let unconfirmed = session(&app, &p, "Unconfirmed", &["accept"]).await;
    for (code, start) in [
        (&public, "2030-06-01T09:00:00Z"),
        (&unconfirmed, "2030-06-01T10:00:00Z"),
    ] {
        let slot = wip_slots_of(&app, &p, code).await[0]["id"]
            .as_i64()
            .expect("an ID");
        assert_eq!(place(&app, &p, slot, start).await.status, 200);
    }
    let anonymous = |path: &str| {
        let url = p.url(path);
        let app = &app;
        async move { app.call(Method::GET, &url, None, None).await }
    };
    for path in ["rooms/", "slots/", "schedules/", "schedules/latest/"] {
        let r = anonymous(path).await;
        assert_eq!(r.status, 401, "{path} before a release: {}", r.body);
    }
    let r = app.get(&p.url("slots/"), &p.c.read).await;
    assert_eq!(r.body["count"], 0, "no current schedule: {}", r.body);

    assert_eq!(release(&app, &p, "v1").await.status, 201);
    let r = anonymous("slots/").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "only the confirmed session: {}", r.body);
    let slot = &results(&r.body)[0];
    assert_eq!(slot["submission"], public);
    assert_eq!(slot["room"], p.room);
    assert!(slot.get("is_visible").is_none() && slot.get("slot_type").is_none());
    let r = anonymous("slots/?is_visible=false").await;
    assert_eq!(r.body["count"], 0, "{}", r.body);
    let r = anonymous("schedules/").await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let r = anonymous("schedules/latest/").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["slots"].as_array().expect("slots").len(), 1);
    let r = anonymous("schedules/wip/").await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = anonymous("rooms/").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(results(&r.body)[0].get("availabilities").is_none());
    let r = app.get(&p.url("slots/"), &p.c.reviewer).await;
    assert_eq!(r.body["count"], 2, "{}", r.body);
    assert!(
        results(&r.body)
            .iter()
            .all(|s| s["is_visible"].is_boolean())
    );

    // A private event: 401 for anonymous callers, released schedule or not.
    sql(
        &app,
        "UPDATE events SET is_public = $1 WHERE id = $2",
        vec![false.into(), p.c.event.into()],
    )
    .await;
    for path in ["rooms/", "slots/", "schedules/"] {
        let r = anonymous(path).await;
        assert_eq!(r.status, 401, "{path}: {}", r.body);
    }
}

#[tokio::test]
async fn slot_lists_filter_search_order_and_expand_in_constant_queries() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let second = create(&app, &p.c, "rooms", json!({"name": "Annex", "position": 2})).await["id"]
        .as_i64()
        .expect("an ID");
    let mut codes = Vec::new();
    let mut counts = Vec::new();
    for (i, title) in ["Alpha", "Beta", "Gamma"].iter().enumerate() {
        let code = session(&app, &p, title, &["accept", "confirm"]).await;
        let slot = wip_slots_of(&app, &p, &code).await[0]["id"]
            .as_i64()
            .expect("an ID");
        let r = app
            .patch(
                &p.url(&format!("slots/{slot}/")),
                &p.c.write,
                json!({"room": if i == 1 { second } else { p.room },
                       "start": format!("2030-06-01T1{}:00:00Z", 2 - i)}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        codes.push(code);
        assert_eq!(release(&app, &p, &format!("v{i}")).await.status, 201);
        if i == 1 {
            continue;
        }
        let url = p.url("slots/?expand=room,schedule,submission.speakers,submission.track");
        // The token's first uses pin its version and note its use: not part of the list.
        app.get(&url, &p.c.read).await;
        app.get(&url, &p.c.read).await;
        let (r, n) = tessera::db::count_queries(app.get(&url, &p.c.read)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["count"], i + 1);
        assert!(
            results(&r.body)
                .iter()
                .all(|s| s["room"]["name"].is_object()
                    && s["schedule"]["version"] == format!("v{i}")
                    && s["schedule"].get("slots").is_none()
                    && s["submission"]["speakers"][0]["name"].is_string())
        );
        let (r, anonymous) = tessera::db::count_queries(app.call(
            Method::GET,
            &p.url("slots/?expand=room"),
            None,
            None,
        ))
        .await;
        assert_eq!(r.body["count"], i + 1, "{}", r.body);
        counts.push((n, anonymous));
    }
    assert_eq!(counts[0], counts[1], "{counts:?}");

    let list = |query: String| {
        let url = p.url(&format!("slots/?{query}"));
        let token = p.c.read.clone();
        let app = &app;
        async move { app.get(&url, &token).await }
    };
    let r = list("o=start".into()).await;
    let starts: Vec<Value> = results(&r.body)
        .iter()
        .map(|s| s["submission"].clone())
        .collect();
    assert_eq!(starts, [json!(codes[2]), json!(codes[1]), json!(codes[0])]);
    let r = list("o=-submission__title".into()).await;
    assert_eq!(results(&r.body)[0]["submission"], codes[2]);
    let r = list(format!("room={second}")).await;
    assert_eq!(
        r.body["count"], 3,
        "in two released versions and in progress: {}",
        r.body
    );
    let r = list(format!("room={second}&schedule_version=V2")).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let r = list(format!("submission={}", codes[0].to_lowercase())).await;
    assert_eq!(
        r.body["count"], 4,
        "three releases and in progress: {}",
        r.body
    );
    let r = list("speaker=NOBODY".into()).await;
    assert_refused(&r, "speaker", "an unknown speaker");
    let speaker = rows(
        &app,
        "SELECT sp.code FROM talk_speakers sp JOIN talk_submission_speakers ss \
         ON ss.speaker_id = sp.id JOIN talk_submissions s ON s.id = ss.submission_id \
         WHERE s.code = $1",
        vec![codes[1].clone().into()],
    )
    .await[0]
        .try_get::<String>("", "code")
        .expect("a code");
    let r = list(format!("speaker={speaker}&schedule_version=v2")).await;
    assert_eq!(ids(&r).len(), 1, "{}", r.body);
    for (query, field) in [
        ("submission=NOPE".to_owned(), "submission"),
        ("schedule=999999".to_owned(), "schedule"),
        ("schedule_version=v9".to_owned(), "schedule_version"),
        ("room=999999".to_owned(), "room"),
    ] {
        let r = list(query.clone()).await;
        assert_refused(&r, field, &query);
    }
    let r = list("q=speaker%20of%20gam".into()).await;
    assert_eq!(r.body["count"], 1, "the current schedule's: {}", r.body);
    let r = list("is_visible=true&q=BETA".into()).await;
    assert_eq!(r.body["count"], 3, "{}", r.body);
    let r = list("expand=submission.nothing".into()).await;
    assert_refused(&r, "expand", "an unknown field");
}

#[tokio::test]
async fn a_scheduled_session_slot_is_an_icalendar_file() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let code = session(&app, &p, "Calendars, too", &["accept", "confirm"]).await;
    let slot = wip_slots_of(&app, &p, &code).await[0]["id"]
        .as_i64()
        .expect("an ID");
    let r = app
        .get(&p.url(&format!("slots/{slot}/ical/")), &p.c.write)
        .await;
    assert_eq!(r.status, 404, "not scheduled yet: {}", r.body);
    assert_eq!(
        place(&app, &p, slot, "2030-06-01T09:00:00Z").await.status,
        200
    );
    let r = app
        .get(&p.url(&format!("slots/{slot}/ical/")), &p.c.write)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/calendar"))
    );
    assert_eq!(
        r.header("content-disposition"),
        Some(format!("attachment; filename=\"conf2026-{code}.ics\"").as_str())
    );
    let ics = r.body.as_str().expect("text");
    assert!(
        ics.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"),
        "{ics}"
    );
    for line in [
        format!("UID:tessera-conf2026-{code}@tessera.test"),
        "DTSTART:20300601T090000Z".into(),
        "DTEND:20300601T093000Z".into(),
        "SUMMARY:Calendars\\, too - Speaker of Calendars\\, too".into(),
        "LOCATION:Hall".into(),
        "DESCRIPTION:About it.".into(),
    ] {
        assert!(ics.contains(&format!("\r\n{line}\r\n")), "{line} in {ics}");
    }
    assert!(ics.ends_with("END:VEVENT\r\nEND:VCALENDAR\r\n"));

    let coffee = a_break(&app, &p).await;
    let r = app
        .get(&p.url(&format!("slots/{coffee}/ical/")), &p.c.write)
        .await;
    assert_eq!(r.status, 404, "a break: {}", r.body);
    let r = app
        .get(&p.url(&format!("slots/{slot}/ical/")), &p.c.read)
        .await;
    assert_eq!(
        r.status, 403,
        "a custom action needs the actions scope: {}",
        r.body
    );
    let r = app
        .call(
            Method::GET,
            &p.url(&format!("slots/{slot}/ical/")),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(release(&app, &p, "v1").await.status, 201);
    let r = app
        .call(
            Method::GET,
            &p.url(&format!("slots/{slot}/ical/")),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "the public's, once released: {}", r.body);
}

#[tokio::test]
async fn a_token_scoped_to_slots_alone_reads_slots_but_not_schedules() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let mut slots_only = Endpoints::default();
    slots_only
        .0
        .insert("slots".into(), vec![Action::List, Action::Retrieve]);
    let token = user_token(&app, p.c.orga_user, &slots_only, None).await;
    assert_eq!(app.get(&p.url("slots/"), &token).await.status, 200);
    assert_eq!(app.get(&p.url("schedules/"), &token).await.status, 403);
    assert_eq!(app.get(&p.url("rooms/"), &token).await.status, 403);
    let (_, other) = talk_event(&app, "other", "other2026", false).await;
    let r = app.get("/api/events/other2026/slots/", &p.c.read).await;
    assert_eq!(
        r.status, 404,
        "another organizer's event: {} ({other})",
        r.body
    );
}

#[tokio::test]
async fn the_public_sees_the_scheduled_sessions_and_their_speakers_without_organiser_fields() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let public = session(&app, &p, "Public", &["accept", "confirm"]).await;
    let hidden = session(&app, &p, "Hidden", &[]).await;
    let slot = wip_slots_of(&app, &p, &public).await[0]["id"]
        .as_i64()
        .expect("an ID");
    assert_eq!(
        place(&app, &p, slot, "2030-06-01T09:00:00Z").await.status,
        200
    );
    let anonymous = |path: &str| {
        let url = p.url(path);
        let app = &app;
        async move { app.call(Method::GET, &url, None, None).await }
    };
    assert_eq!(anonymous("submissions/").await.status, 401);

    assert_eq!(release(&app, &p, "v1").await.status, 201);
    let r = anonymous("submissions/?expand=slots.room,speakers").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "only the scheduled session: {}", r.body);
    let s = &results(&r.body)[0];
    assert_eq!(s["code"], public);
    assert_eq!(s["slots"][0]["room"]["id"], p.room, "{s}");
    for organiser_field in ["notes", "internal_notes", "pending_state", "created"] {
        assert!(s.get(organiser_field).is_none(), "{organiser_field}: {s}");
    }
    let speaker = &s["speakers"][0];
    assert_eq!(speaker["name"], "Speaker of Public");
    assert!(speaker.get("email").is_none(), "{speaker}");
    let r = anonymous(&format!("submissions/{hidden}/")).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = anonymous("speakers/").await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let r = anonymous(&format!("submission-types/{}/", p.kind)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    for log in [
        format!("submission-types/{}/log/", p.kind),
        format!("rooms/{}/log/", p.room),
    ] {
        let r = anonymous(&log).await;
        assert_eq!(r.status, 401, "logs are for the teams: {log}: {}", r.body);
    }
    let r = app
        .get(&p.url(&format!("submissions/{public}/")), &p.c.write)
        .await;
    assert_eq!(r.body["slots"], json!([slot]), "{}", r.body);
}

#[tokio::test]
async fn a_session_in_a_released_schedule_cannot_be_deleted_and_the_release_keeps_it() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let kept = session(&app, &p, "Kept", &["accept", "confirm"]).await;
    let submitted = session(&app, &p, "Submitted", &[]).await;
    let released = release(&app, &p, "v1").await;
    assert_eq!(released.status, 201, "{}", released.body);
    let slots_before = app
        .get(&p.url("slots/?schedule_version=v1"), &p.c.write)
        .await;

    let r = app
        .delete(&p.url(&format!("submissions/{kept}/")), &p.c.write)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("detail")
            .contains("released")
    );
    let r = app
        .get(&p.url(&format!("submissions/{kept}/")), &p.c.write)
        .await;
    assert_eq!(r.status, 200, "still there: {}", r.body);
    let slots_after = app
        .get(&p.url("slots/?schedule_version=v1"), &p.c.write)
        .await;
    assert_eq!(slots_after.body, slots_before.body);

    let r = app
        .delete(&p.url(&format!("submissions/{submitted}/")), &p.c.write)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
}

#[tokio::test]
async fn an_anonymous_expansion_looping_between_speakers_and_sessions_is_refused_before_any_work() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let code = session(&app, &p, "Public", &["accept", "confirm"]).await;
    let r = app
        .post(
            &p.url(&format!("submissions/{code}/add-speaker/")),
            &p.c.write,
            json!({"email": "second@example.org", "name": "Second Speaker"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slot = wip_slots_of(&app, &p, &code).await[0]["id"]
        .as_i64()
        .expect("an ID");
    assert_eq!(
        place(&app, &p, slot, "2030-06-01T09:00:00Z").await.status,
        200
    );
    assert_eq!(release(&app, &p, "v1").await.status, 201);
    let anonymous = |path: String| {
        let app = &app;
        async move { app.call(Method::GET, &path, None, None).await }
    };
    // Each level doubles the answer: 2^20 copies of the session from 270 characters.
    let attack = ["speakers", "submissions"].repeat(20).join(".");
    let r = anonymous(p.url(&format!("submissions/?expand={attack}"))).await;
    assert_refused(&r, "expand", "a loop");
    let r = anonymous(p.url(&format!("submissions/{code}/?expand={attack}"))).await;
    assert_refused(&r, "expand", "a loop on one session");
    let r = anonymous(p.url("slots/?expand=submission.speakers,room")).await;
    assert_eq!(r.status, 200, "three levels, no loop: {}", r.body);
    let speakers = &results(&r.body)[0]["submission"]["speakers"];
    assert_eq!(speakers.as_array().map(Vec::len), Some(2), "{}", r.body);
}
