//! Speakers of the talk side: managed speakers created and changed by organisers, what
//! reviewers see of them, and the email address that v1 changes and v2 does not.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::Endpoints;
use tessera_tests::talk::{
    Conference, PDF, PNG, assert_refused, conference, create, results, rows, sql, talk_user,
    upload, user_token,
};
use tessera_tests::{Reply, TestApp};

/// Creates a speaker; gives the answer.
async fn new_speaker(app: &TestApp, c: &Conference, body: Value) -> Value {
    create(app, c, "speakers", body).await
}

/// A session type and a submission of it with a speaker of this address; gives the
/// submission's code and the speaker's.
async fn talk_of(
    app: &TestApp,
    c: &Conference,
    email: &str,
    track: Option<i64>,
) -> (String, String) {
    let r = app
        .get(&format!("{}/submission-types/", c.base), &c.read)
        .await;
    let kind = match results(&r.body).first() {
        Some(t) => t["id"].as_i64().expect("an integer"),
        None => create(app, c, "submission-types", json!({"name": {"en": "Talk"}})).await["id"]
            .as_i64()
            .expect("an integer"),
    };
    let body =
        json!({"title": format!("Talk of {email}"), "submission_type": kind, "track": track});
    let code = create(app, c, "submissions", body).await["code"]
        .as_str()
        .expect("a string")
        .to_owned();
    let r = app
        .post(
            &format!("{}/submissions/{code}/add-speaker/", c.base),
            &c.write,
            json!({"email": email, "name": email}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    (
        code,
        r.body["speakers"][0].as_str().expect("a string").to_owned(),
    )
}

/// Calls with a token and a version header.
async fn versioned(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    version: &str,
    body: Value,
) -> Reply {
    let auth = format!("Token {token}");
    app.raw(
        method,
        path,
        &[
            ("Authorization", &auth),
            ("Pretalx-Version", version),
            ("Content-Type", "application/json"),
        ],
        body.to_string().into_bytes(),
    )
    .await
}

#[tokio::test]
async fn organisers_create_managed_speakers_and_change_them() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let ada = new_speaker(&app, &c, json!({"name": "Ada", "email": "Ada@Example.org", "biography": "Engines.", "has_arrived": true})).await;
    let code = ada["code"].as_str().expect("a string").to_owned();
    assert_eq!(code.len(), 6);
    assert_eq!(ada["email"], "ada@example.org");
    assert_eq!(ada["is_managed"], true);
    assert_eq!(ada["locale"], "en");
    assert_eq!(ada["biography"], "Engines.");
    assert_eq!(ada["has_arrived"], true);
    assert_eq!(ada["submissions"], json!([]));
    assert_eq!(ada["answers"], json!([]));
    assert_eq!(ada["availabilities"], json!([]));
    assert_eq!(ada["avatar_url"], Value::Null);
    assert_eq!(ada["timezone"], "UTC");
    let again = new_speaker(
        &app,
        &c,
        json!({"name": "Ada again", "email": "ada@example.org"}),
    )
    .await;
    assert_ne!(
        again["code"], ada["code"],
        "email addresses are not deduplicated"
    );
    let r = app
        .post(
            &format!("{}/speakers/", c.base),
            &c.write,
            json!({"email": "x@example.org"}),
        )
        .await;
    assert_eq!(r.status, 400, "a name is required: {}", r.body);
    for (body, field) in [
        (json!({"name": "X", "locale": "xx"}), "locale"),
        (json!({"name": "X", "email": "nope"}), "email"),
        (json!({"name": " "}), "name"),
    ] {
        let r = app
            .post(&format!("{}/speakers/", c.base), &c.write, body.clone())
            .await;
        assert_refused(&r, field, &body.to_string());
    }

    let one = format!("{}/speakers/{}/", c.base, code.to_lowercase());
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["code"], code.as_str());
    let r = app
        .patch(
            &one,
            &c.write,
            json!({
                "biography": "Analytical engines.",
                "internal_notes": "Arrives late.",
                "availabilities": [
                    {"start": "2026-06-01T00:00:00Z", "end": "2026-06-02T00:00:00Z"},
                    {"start": "2026-06-03T09:00:00Z", "end": "2026-06-03T12:00:00Z"},
                    {"start": "2026-06-03T11:00:00Z", "end": "2026-06-03T13:00:00Z"},
                ],
            }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["biography"], "Analytical engines.");
    assert_eq!(r.body["internal_notes"], "Arrives late.");
    assert_eq!(r.body["name"], "Ada", "PATCH keeps what it leaves out");
    let times = r.body["availabilities"].as_array().expect("a list");
    assert_eq!(times.len(), 2, "overlapping times merge: {}", r.body);
    assert_eq!(times[0]["allDay"], true);
    assert_eq!(times[1]["allDay"], false);
    assert_eq!(times[1]["end"], "2026-06-03T13:00:00Z");
    let r = app.patch(&one, &c.write, json!({"availabilities": [{"start": "2026-06-03T12:00:00Z", "end": "2026-06-03T11:00:00Z"}]})).await;
    assert_refused(
        &r,
        "availabilities",
        "an availability ending before it starts",
    );

    let r = app
        .put(
            &one,
            &c.write,
            json!({"name": "Ada Lovelace", "biography": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Ada Lovelace");
    assert_eq!(r.body["biography"], Value::Null);
    assert_eq!(r.body["internal_notes"], "Arrives late.");
    assert_eq!(
        r.body["availabilities"].as_array().expect("a list").len(),
        2
    );
    let r = app
        .put(&one, &c.write, json!({"biography": "No name"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);

    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(results(&r.body)[0]["action_type"], "tessera.speaker.update");
    assert_eq!(results(&r.body)[2]["action_type"], "tessera.speaker.create");
    let r = app.get(&format!("{one}log/"), &c.reviewer).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .get(&format!("{}/speakers/NOPE99/", c.base), &c.read)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn version_one_changes_a_speakers_email_and_version_two_does_not() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let code = new_speaker(
        &app,
        &c,
        json!({"name": "Grace", "email": "grace@example.org"}),
    )
    .await["code"]
        .as_str()
        .expect("a string")
        .to_owned();
    let one = format!("{}/speakers/{code}/", c.base);
    let r = versioned(
        &app,
        Method::PATCH,
        &one,
        &c.write,
        "v2",
        json!({"email": "hopper@example.org", "name": "Grace H."}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["email"], "grace@example.org",
        "v2 ignores the address"
    );
    assert_eq!(r.body["name"], "Grace H.");
    let r = app
        .put(
            &one,
            &c.write,
            json!({"name": "Grace", "email": "hopper@example.org"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["email"], "grace@example.org",
        "the token's current version ignores it too"
    );
    let r = versioned(
        &app,
        Method::PATCH,
        &one,
        &c.write,
        "v1",
        json!({"email": "Hopper@Example.org"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["email"], "hopper@example.org", "v1 changes it");
    let r = versioned(
        &app,
        Method::PATCH,
        &one,
        &c.write,
        "v1",
        json!({"email": "not an address"}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let stored = rows(
        &app,
        "SELECT email FROM talk_speakers WHERE code = $1",
        vec![code.clone().into()],
    )
    .await;
    assert_eq!(
        stored[0]
            .try_get::<Option<String>>("", "email")
            .expect("a column")
            .as_deref(),
        Some("hopper@example.org")
    );
    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(results(&r.body)[0]["data"]["email"], "hopper@example.org");
    assert!(
        results(&r.body)[1]["data"].get("email").is_none(),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn reviewers_see_the_speakers_of_their_submissions_without_contact_details() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": {"en": "Mine"}, "color": "#aa0000"}),
    )
    .await["id"]
        .as_i64()
        .expect("an integer");
    let (talk, speaker) = talk_of(&app, &c, "linus@example.org", Some(track)).await;
    let (_, other) = talk_of(&app, &c, "ken@example.org", None).await;
    let bare = new_speaker(
        &app,
        &c,
        json!({"name": "Bare", "email": "bare@example.org"}),
    )
    .await;
    let list = format!("{}/speakers/", c.base);

    let r = app.get(&list, &c.read).await;
    assert_eq!(
        r.body["count"], 3,
        "organisers see every speaker: {}",
        r.body
    );
    let r = app.get(&list, &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["count"], 2,
        "reviewers see speakers of submissions: {}",
        r.body
    );
    let shown = &results(&r.body)[0];
    for field in [
        "code",
        "name",
        "biography",
        "submissions",
        "avatar_url",
        "answers",
    ] {
        assert!(shown.get(field).is_some(), "{field}: {shown}");
    }
    for field in [
        "email",
        "timezone",
        "locale",
        "is_managed",
        "has_arrived",
        "availabilities",
        "internal_notes",
    ] {
        assert!(shown.get(field).is_none(), "{field}: {shown}");
    }
    let r = app
        .get(
            &format!("{list}{}/", bare["code"].as_str().expect("a string")),
            &c.reviewer,
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.body);

    let (user, team) = talk_user(
        &app,
        "limited@example.org",
        c.organizer,
        &[Permission::Review],
    )
    .await;
    sql(
        &app,
        "INSERT INTO team_tracks (team_id, track_id) VALUES ($1, $2)",
        vec![team.into(), track.into()],
    )
    .await;
    let limited = user_token(&app, user, &Endpoints::all_read(), None).await;
    let r = app.get(&list, &limited).await;
    let listed: Vec<_> = results(&r.body)
        .iter()
        .map(|s| s["code"].as_str().expect("a string").to_owned())
        .collect();
    assert_eq!(listed, std::slice::from_ref(&speaker));
    assert_eq!(results(&r.body)[0]["submissions"], json!([talk]));
    let r = app.get(&format!("{list}{other}/"), &limited).await;
    assert_eq!(r.status, 404, "{}", r.body);

    let r = app.post(&list, &c.reviewer, json!({"name": "X"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .patch(
            &format!("{list}{speaker}/"),
            &c.reviewer,
            json!({"name": "X"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.post(&list, &c.read, json!({"name": "X"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.call(Method::GET, &list, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = app
        .call(Method::GET, &format!("{list}{speaker}/"), None, None)
        .await;
    assert_eq!(r.status, 401, "{}", r.body);
}

#[tokio::test]
async fn speakers_are_searched_ordered_and_expanded() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let (talk, _) = talk_of(&app, &c, "zed@example.org", None).await;
    app.patch(
        &format!("{}/submissions/{talk}/", c.base),
        &c.write,
        json!({"title": "Zed's talk"}),
    )
    .await;
    new_speaker(
        &app,
        &c,
        json!({"name": "Ada", "email": "first@example.org"}),
    )
    .await;
    new_speaker(
        &app,
        &c,
        json!({"name": "Bob", "email": "second@example.org"}),
    )
    .await;
    let list = format!("{}/speakers/", c.base);
    let names = |r: &Reply| -> Vec<String> {
        results(&r.body)
            .iter()
            .map(|s| s["name"].as_str().expect("a string").to_owned())
            .collect()
    };
    let r = app.get(&format!("{list}?o=name"), &c.read).await;
    assert_eq!(names(&r), ["Ada", "Bob", "zed@example.org"]);
    let r = app.get(&format!("{list}?o=-name"), &c.read).await;
    assert_eq!(names(&r), ["zed@example.org", "Bob", "Ada"]);
    let r = app.get(&format!("{list}?q=BO"), &c.read).await;
    assert_eq!(names(&r), ["Bob"]);
    let r = app.get(&format!("{list}?q=second@"), &c.read).await;
    assert_eq!(names(&r), ["Bob"], "organisers search email addresses");
    let r = app.get(&format!("{list}?q=zed@example"), &c.reviewer).await;
    assert_eq!(names(&r), ["zed@example.org"], "the name matches");
    let r = app.get(&format!("{list}?q=second@"), &c.reviewer).await;
    assert_eq!(
        r.body["count"], 0,
        "reviewers do not search email addresses"
    );
    let r = app
        .get(&format!("{list}?q=zed&expand=submissions"), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(results(&r.body)[0]["submissions"][0]["title"], "Zed's talk");
    assert_eq!(
        results(&r.body)[0]["submissions"][0]["pending_state"],
        Value::Null
    );
    let r = app
        .get(&format!("{list}?expand=submissions.track"), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for bad in ["email", "submissions.nope", "submissions.speakers"] {
        let r = app.get(&format!("{list}?expand={bad}"), &c.read).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
}

#[tokio::test]
async fn avatars_are_uploaded_pictures() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let code = new_speaker(&app, &c, json!({"name": "Pic"})).await["code"]
        .as_str()
        .expect("a string")
        .to_owned();
    let one = format!("{}/speakers/{code}/", c.base);
    let pdf = upload(&app, &c.write, "application/pdf", "cv.pdf", PDF).await;
    let r = app.patch(&one, &c.write, json!({"avatar": pdf})).await;
    assert_refused(&r, "avatar", "a PDF is no picture");
    let r = app
        .patch(&one, &c.write, json!({"avatar": "file:unknown"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let png = upload(&app, &c.write, "image/png", "me.png", PNG).await;
    let r = app.patch(&one, &c.write, json!({"avatar": png})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let url = r.body["avatar_url"].as_str().expect("a string").to_owned();
    assert!(
        url.starts_with("http://tessera.test/media/") && url.ends_with("/me.png"),
        "{url}"
    );
    let path = url.trim_start_matches("http://tessera.test").to_owned();
    assert_eq!(app.get(&path, &c.read).await.status, 200);
    let r = app
        .post(
            &format!("{}/speakers/", c.base),
            &c.write,
            json!({"name": "Copy", "avatar": png}),
        )
        .await;
    assert_eq!(r.status, 400, "an upload is used once: {}", r.body);
    let count = rows(&app, "SELECT COUNT(*) AS n FROM talk_speakers", vec![]).await;
    assert_eq!(
        count[0].try_get::<i64>("", "n").expect("a column"),
        1,
        "a refused creation leaves nothing"
    );
    let r = app.patch(&one, &c.write, json!({"avatar": null})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["avatar_url"], Value::Null);
    assert_eq!(
        app.get(&path, &c.read).await.status,
        404,
        "the picture goes with it"
    );
}
