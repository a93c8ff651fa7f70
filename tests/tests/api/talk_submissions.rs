//! Submissions of the talk side: writing them, their states, speakers and resources, who
//! sees what, the listing conventions, and pretalx's former `talks/` address.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera_tests::talk::{
    Conference, PDF, PNG, assert_refused, conference, create, results, rows, sql, talk_event,
    talk_user, upload, user_token,
};
use tessera_tests::{Reply, TestApp};

/// A conference with a session type (45 minutes) and a track; gives their IDs.
async fn cfp(app: &TestApp) -> (Conference, i64, i64) {
    let c = conference(app).await;
    let kind = create(
        app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}, "default_duration": 45}),
    )
    .await;
    let track = create(
        app,
        &c,
        "tracks",
        json!({"name": {"en": "Rust", "de": "Rost"}, "color": "#aa0000"}),
    )
    .await;
    (c, id_of(&kind), id_of(&track))
}

/// The `id` of a created object.
fn id_of(object: &Value) -> i64 {
    object["id"].as_i64().expect("an integer")
}

/// Creates a submission; gives its code.
async fn submit(app: &TestApp, c: &Conference, body: Value) -> String {
    let created = create(app, c, "submissions", body).await;
    created["code"].as_str().expect("a string").to_owned()
}

/// The stored state of a submission.
async fn state_of(app: &TestApp, code: &str) -> String {
    let r = rows(
        app,
        "SELECT state FROM talk_submissions WHERE code = $1",
        vec![code.into()],
    )
    .await;
    r[0].try_get("", "state").expect("a column")
}

/// How many log entries a submission has.
async fn log_count(app: &TestApp, c: &Conference, code: &str) -> i64 {
    let r = app
        .get(&format!("{}/submissions/{code}/log/", c.base), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["count"].as_i64().expect("an integer")
}

fn codes(r: &Reply) -> Vec<String> {
    results(&r.body)
        .iter()
        .map(|s| s["code"].as_str().expect("a string").to_owned())
        .collect()
}

#[tokio::test]
async fn organisers_create_read_change_and_delete_submissions_with_a_log() {
    let app = TestApp::spawn().await;
    let (c, kind, track) = cfp(&app).await;
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "rust"})).await);
    let list = format!("{}/submissions/", c.base);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"title": "Ownership", "submission_type": kind, "abstract": "Borrowing."}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let code = r.body["code"].as_str().expect("a string").to_owned();
    assert_eq!(code.len(), 6);
    assert!(
        code.chars()
            .all(|ch| "ABCDEFGHJKLMNPQRSTUVWXYZ3789".contains(ch)),
        "{code}"
    );
    assert_eq!(r.body["state"], "submitted");
    assert_eq!(r.body["duration"], 45);
    assert_eq!(r.body["abstract"], "Borrowing.");
    assert_eq!(r.body["speakers"], json!([]));
    assert_eq!(r.body["slots"], json!([]));
    assert_eq!(r.body["content_locale"], "en");
    assert_eq!(r.body["pending_state"], Value::Null);
    assert_eq!(r.body["anonymised_data"], json!({}));
    assert_eq!(r.body["invitations"], json!([]));
    assert_eq!(r.body["assigned_reviewers"], json!([]));
    assert!(r.body["created"].is_string());

    let one = format!("{list}{}/", code.to_lowercase());
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["code"], code.as_str());

    let r = app
        .patch(&one, &c.write, json!({"title": "Ownership, really", "duration": 30, "track": track, "tags": [tag], "is_featured": true, "notes": "n"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["title"], "Ownership, really");
    assert_eq!(r.body["duration"], 30);
    assert_eq!(r.body["track"], track);
    assert_eq!(r.body["tags"], json!([tag]));
    assert_eq!(r.body["is_featured"], true);
    assert_eq!(r.body["abstract"], "Borrowing.");

    for (body, field) in [
        (json!({"content_locale": "xx"}), "content_locale"),
        (json!({"submission_type": 999_999}), "submission_type"),
        (json!({"track": 999_999}), "track"),
        (json!({"tags": [999_999]}), "tags"),
        (json!({"title": "   "}), "title"),
        (json!({"anonymised_data": [1]}), "anonymised_data"),
    ] {
        let r = app.patch(&one, &c.write, body.clone()).await;
        assert_refused(&r, field, &body.to_string());
    }
    let r = app
        .patch(&one, &c.write, json!({"track": null, "duration": null}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["track"], Value::Null);
    assert_eq!(r.body["duration"], 45);

    let r = app
        .put(
            &one,
            &c.write,
            json!({"title": "Replaced", "submission_type": kind}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["title"], "Replaced");
    assert_eq!(r.body["tags"], json!([tag]), "PUT keeps what it leaves out");
    let r = app.put(&one, &c.write, json!({"title": "No type"})).await;
    assert_eq!(r.status, 400, "{}", r.body);

    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 4);
    assert_eq!(
        results(&r.body)[0]["action_type"],
        "tessera.submission.update"
    );
    assert_eq!(
        results(&r.body)[3]["action_type"],
        "tessera.submission.create"
    );
    assert_eq!(
        results(&r.body)[0]["person"]["name"],
        "User orga@example.org"
    );

    let r = app.delete(&one, &c.reviewer).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let logged = rows(
        &app,
        "SELECT action_type FROM talk_log WHERE object_type = 'submission' ORDER BY id DESC",
        vec![],
    )
    .await;
    assert_eq!(
        logged[0]
            .try_get::<String>("", "action_type")
            .expect("a column"),
        "tessera.submission.delete"
    );
}

#[tokio::test]
async fn every_state_move_follows_pretalx_and_a_refused_one_changes_nothing() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let code = submit(
        &app,
        &c,
        json!({"title": "States", "submission_type": kind}),
    )
    .await;
    let actions = [
        ("accept", "accepted"),
        ("reject", "rejected"),
        ("confirm", "confirmed"),
        ("cancel", "canceled"),
        ("make-submitted", "submitted"),
    ];
    let allowed: &[(&str, &[&str])] = &[
        ("submitted", &["accepted", "rejected"]),
        ("rejected", &["accepted", "submitted"]),
        (
            "accepted",
            &["confirmed", "canceled", "rejected", "submitted"],
        ),
        ("confirmed", &["accepted", "canceled"]),
        ("canceled", &["accepted", "confirmed"]),
        ("withdrawn", &["submitted"]),
    ];
    for (from, targets) in allowed {
        for (action, to) in actions {
            sql(
                &app,
                "UPDATE talk_submissions SET state = $1, is_featured = $2 WHERE code = $3",
                vec![(*from).into(), true.into(), code.clone().into()],
            )
            .await;
            let before = log_count(&app, &c, &code).await;
            let r = app
                .post(
                    &format!("{}/submissions/{code}/{action}/", c.base),
                    &c.write,
                    json!({}),
                )
                .await;
            if targets.contains(&to) {
                assert_eq!(r.status, 200, "{from} -> {action}: {}", r.body);
                assert_eq!(r.body["state"], to);
                assert_eq!(state_of(&app, &code).await, to);
                let unfeatured = matches!(to, "rejected" | "canceled");
                assert_eq!(r.body["is_featured"], !unfeatured, "{from} -> {action}");
                let r = app
                    .get(&format!("{}/submissions/{code}/log/", c.base), &c.read)
                    .await;
                assert_eq!(r.body["count"], before + 1);
                let entry = &results(&r.body)[0];
                let logged = if action == "make-submitted" {
                    "make_submitted"
                } else {
                    action
                };
                assert_eq!(entry["action_type"], format!("tessera.submission.{logged}"));
                assert_eq!(entry["data"]["previous"], *from);
            } else if *from == to {
                assert_eq!(r.status, 200, "{from} -> {action}: {}", r.body);
                assert_eq!(state_of(&app, &code).await, to);
            } else {
                assert_eq!(r.status, 400, "{from} -> {action}: {}", r.body);
                assert!(
                    r.body["detail"].as_str().expect("a string").contains(from),
                    "{}",
                    r.body
                );
                assert_eq!(
                    state_of(&app, &code).await,
                    *from,
                    "{from} -> {action} changed the state"
                );
                assert_eq!(
                    log_count(&app, &c, &code).await,
                    before,
                    "{from} -> {action} wrote a log entry"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_move_to_the_current_state_clears_the_pending_state() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let code = submit(
        &app,
        &c,
        json!({"title": "Pending", "submission_type": kind}),
    )
    .await;
    let one = format!("{}/submissions/{code}/", c.base);
    let r = app
        .patch(&one, &c.write, json!({"pending_state": "accepted"}))
        .await;
    assert_eq!(r.body["pending_state"], "accepted", "{}", r.body);
    let r = app
        .post(&format!("{one}accept/"), &c.write, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["state"], "accepted");
    assert_eq!(r.body["pending_state"], Value::Null);
    let r = app
        .patch(&one, &c.write, json!({"pending_state": "confirmed"}))
        .await;
    assert_eq!(r.body["pending_state"], "confirmed");
    let r = app
        .post(&format!("{one}accept/"), &c.write, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["pending_state"], Value::Null);
    let r = app
        .patch(&one, &c.write, json!({"pending_state": "maybe"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn speakers_are_added_by_email_found_again_and_removed() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let first = submit(&app, &c, json!({"title": "One", "submission_type": kind})).await;
    let second = submit(&app, &c, json!({"title": "Two", "submission_type": kind})).await;
    let add = |code: &str| format!("{}/submissions/{code}/add-speaker/", c.base);
    let r = app
        .post(
            &add(&first),
            &c.write,
            json!({"email": "Ada@Example.org", "name": "Ada"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let speakers = r.body["speakers"].as_array().expect("a list").clone();
    assert_eq!(speakers.len(), 1);
    let ada = speakers[0].as_str().expect("a string").to_owned();
    let r = app
        .post(
            &add(&first),
            &c.write,
            json!({"email": "grace@example.org"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let grace = r.body["speakers"][1].as_str().expect("a string").to_owned();
    assert_eq!(
        r.body["speakers"][0],
        ada.as_str(),
        "speakers keep their order"
    );
    let r = app
        .post(
            &add(&second),
            &c.write,
            json!({"email": "ada@example.ORG", "name": "Someone else"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["speakers"],
        json!([ada]),
        "the same address finds the same speaker"
    );
    let r = app
        .post(&add(&second), &c.write, json!({"email": "ada@example.org"}))
        .await;
    assert_eq!(
        r.body["speakers"],
        json!([ada]),
        "adding twice changes nothing"
    );
    let count = rows(&app, "SELECT COUNT(*) AS n FROM talk_speakers", vec![]).await;
    assert_eq!(count[0].try_get::<i64>("", "n").expect("a column"), 2);
    for body in [
        json!({"email": "not an address"}),
        json!({"email": "x@example.org", "locale": "xx"}),
    ] {
        let r = app.post(&add(&second), &c.write, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
    }

    let r = app
        .get(
            &format!("{}/submissions/{first}/?expand=speakers", c.base),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let expanded = r.body["speakers"].as_array().expect("a list");
    assert_eq!(expanded[0]["name"], "Ada");
    assert_eq!(expanded[0]["email"], "ada@example.org");
    assert_eq!(expanded[0]["is_managed"], true);
    assert_eq!(expanded[1]["name"], "Unnamed speaker");
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    assert_eq!(expanded[0]["submissions"], json!(both));

    let remove = format!("{}/submissions/{first}/remove-speaker/", c.base);
    let r = app
        .post(&remove, &c.write, json!({"user": ada.to_lowercase()}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["speakers"], json!([grace]));
    let r = app.post(&remove, &c.write, json!({"user": ada})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["detail"], "Speaker not found.");
    let r = app
        .get(&format!("{}/submissions/{first}/log/", c.base), &c.read)
        .await;
    let types: Vec<_> = results(&r.body)
        .iter()
        .map(|e| e["action_type"].as_str().expect("a string").to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "tessera.submission.speakers.remove",
            "tessera.submission.speakers.add",
            "tessera.submission.speakers.add",
            "tessera.submission.create"
        ]
    );
    assert_eq!(results(&r.body)[0]["data"]["code"], ada.as_str());
}

#[tokio::test]
async fn resources_are_links_or_uploaded_files() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let code = submit(
        &app,
        &c,
        json!({"title": "Slides", "submission_type": kind}),
    )
    .await;
    let resources = format!("{}/submissions/{code}/resources/", c.base);
    let r = app
        .post(&resources, &c.write, json!({"link": "https://example.org/slides", "description": "Slides", "is_public": false}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["resources"].as_array().expect("a list").len(), 1);
    let link_id = r.body["resources"][0].as_i64().expect("an integer");
    let file = upload(&app, &c.write, "application/pdf", "paper.pdf", PDF).await;
    let r = app
        .post(
            &resources,
            &c.write,
            json!({"resource": file, "description": "Paper"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .post(
            &resources,
            &c.write,
            json!({"resource": file, "description": "Again"}),
        )
        .await;
    assert_eq!(r.status, 400, "an upload is used once: {}", r.body);
    for body in [
        json!({"description": "Nothing"}),
        json!({"link": "https://example.org/", "resource": "file:abc", "description": "Both"}),
        json!({"link": "javascript:alert(1)", "description": "Bad"}),
        json!({"link": "https://example.org/", "description": ""}),
    ] {
        let r = app.post(&resources, &c.write, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
    }
    let r = app
        .get(
            &format!("{}/submissions/{code}/?expand=resources", c.base),
            &c.reviewer,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let shown = r.body["resources"].as_array().expect("a list");
    assert_eq!(
        shown.len(),
        2,
        "team members see private resources: {}",
        r.body
    );
    let paper = shown
        .iter()
        .find(|x| x["description"] == "Paper")
        .expect("present");
    assert!(
        paper["resource"]
            .as_str()
            .expect("a string")
            .starts_with("http://tessera.test/media/"),
        "{paper}"
    );
    assert_eq!(paper["is_public"], true);
    let page = app
        .get(
            paper["resource"]
                .as_str()
                .expect("a string")
                .trim_start_matches("http://tessera.test"),
            &c.read,
        )
        .await;
    assert_eq!(page.status, 200);
    let link = shown.iter().find(|x| x["id"] == link_id).expect("present");
    assert_eq!(link["resource"], "https://example.org/slides");

    let r = app
        .delete(&format!("{resources}{}/", paper["id"]), &c.write)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let page = app
        .get(
            paper["resource"]
                .as_str()
                .expect("a string")
                .trim_start_matches("http://tessera.test"),
            &c.read,
        )
        .await;
    assert_eq!(page.status, 404, "the file goes with its resource");
    let r = app
        .delete(&format!("{resources}{}/", paper["id"]), &c.write)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .get(&format!("{}/submissions/{code}/", c.base), &c.read)
        .await;
    assert_eq!(r.body["resources"], json!([link_id]));
    let r = app
        .get(&format!("{}/submissions/{code}/log/", c.base), &c.read)
        .await;
    assert_eq!(
        results(&r.body)[0]["action_type"],
        "tessera.submission.resources.remove"
    );
}

#[tokio::test]
async fn images_are_uploaded_pictures() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let code = submit(
        &app,
        &c,
        json!({"title": "Pictured", "submission_type": kind}),
    )
    .await;
    let one = format!("{}/submissions/{code}/", c.base);
    let pdf = upload(&app, &c.write, "application/pdf", "paper.pdf", PDF).await;
    let r = app.patch(&one, &c.write, json!({"image": pdf})).await;
    assert_refused(&r, "image", "a PDF is no image");
    let name = format!("{}.png", "cover".repeat(18));
    let png = upload(&app, &c.write, "image/png", &name, PNG).await;
    let r = app.patch(&one, &c.write, json!({"image": png})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let url = r.body["image"].as_str().expect("a string").to_owned();
    assert!(
        url.starts_with("http://tessera.test/media/") && url.ends_with(&format!("/{name}")),
        "{url}"
    );
    let r = app.patch(&one, &c.write, json!({"image": null})).await;
    assert_eq!(r.body["image"], Value::Null);
    let page = app
        .get(url.trim_start_matches("http://tessera.test"), &c.read)
        .await;
    assert_eq!(page.status, 404);
}

#[tokio::test]
async fn tokens_and_roles_decide_who_reads_and_writes_submissions() {
    let app = TestApp::spawn().await;
    let (c, kind, track) = cfp(&app).await;
    let other_track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": {"en": "Other"}, "color": "#00aa00"}),
        )
        .await,
    );
    let in_track = submit(
        &app,
        &c,
        json!({"title": "In", "submission_type": kind, "track": track}),
    )
    .await;
    let elsewhere = submit(
        &app,
        &c,
        json!({"title": "Out", "submission_type": kind, "track": other_track}),
    )
    .await;
    let list = format!("{}/submissions/", c.base);
    let one = format!("{list}{in_track}/");

    // A read-only token reads, and may neither write nor act.
    let r = app.get(&list, &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    for (method, path) in [
        (Method::POST, list.clone()),
        (Method::PATCH, one.clone()),
        (Method::POST, format!("{one}accept/")),
    ] {
        let r = app
            .call(
                method.clone(),
                &path,
                Some(&c.read),
                Some(json!({"title": "x", "submission_type": kind})),
            )
            .await;
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
    }
    let r = app.delete(&one, &c.read).await;
    assert_eq!(r.status, 403, "{}", r.body);

    // A token without the `actions` scope changes submissions but does not move them.
    let mut no_actions = Endpoints::default();
    no_actions.0.insert(
        "submissions".into(),
        vec![
            Action::List,
            Action::Retrieve,
            Action::Create,
            Action::Update,
            Action::Destroy,
        ],
    );
    let token = user_token(&app, c.orga_user, &no_actions, None).await;
    let r = app.patch(&one, &token, json!({"title": "Renamed"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    for (action, body) in [
        ("accept", json!({})),
        ("reject", json!({})),
        ("add-speaker", json!({"email": "a@example.org"})),
        ("remove-speaker", json!({"user": "ABCDEF"})),
        (
            "resources",
            json!({"link": "https://example.org/", "description": "d"}),
        ),
    ] {
        let r = app.post(&format!("{one}{action}/"), &token, body).await;
        assert_eq!(r.status, 403, "{action}: {}", r.body);
    }
    let r = app.delete(&format!("{one}resources/1/"), &token).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(state_of(&app, &in_track).await, "submitted");

    // A reviewer of all tracks reads everything but the organisers' fields, and writes nothing.
    let r = app.get(&list, &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 2);
    let shown = &results(&r.body)[0];
    for field in [
        "pending_state",
        "is_featured",
        "notes",
        "internal_notes",
        "created",
        "updated",
    ] {
        assert!(shown.get(field).is_some(), "reviewers see {field}: {shown}");
    }
    for field in [
        "review_code",
        "anonymised_data",
        "assigned_reviewers",
        "is_anonymised",
        "invitations",
        "reviews",
    ] {
        assert!(
            shown.get(field).is_none(),
            "reviewers do not see {field}: {shown}"
        );
    }
    for (method, path) in [
        (Method::POST, list.clone()),
        (Method::PATCH, one.clone()),
        (Method::POST, format!("{one}accept/")),
    ] {
        let r = app
            .call(
                method.clone(),
                &path,
                Some(&c.reviewer),
                Some(json!({"title": "x", "submission_type": kind})),
            )
            .await;
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
    }

    // A reviewer of one track sees only its submissions.
    let (user, team) = talk_user(
        &app,
        "trackreviewer@example.org",
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
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(codes(&r), std::slice::from_ref(&in_track));
    let r = app.get(&format!("{list}{elsewhere}/"), &limited).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app.get(&format!("{list}{elsewhere}/log/"), &limited).await;
    assert_eq!(r.status, 404, "{}", r.body);

    // Anonymous callers wait for the agenda; users without a part in the call for papers are
    // refused; tokens of other events see nothing.
    let r = app.call(Method::GET, &list, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = app.call(Method::GET, &one, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let (stranger, _) = talk_user(
        &app,
        "settings@example.org",
        c.organizer,
        &[Permission::ChangeEventSettings],
    )
    .await;
    let stranger = user_token(&app, stranger, &Endpoints::all_write(), None).await;
    let r = app.get(&list, &stranger).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let (_, other) = talk_event(&app, "other", "other2026", false).await;
    let elsewhere_token =
        user_token(&app, c.orga_user, &Endpoints::all_write(), Some(&[other])).await;
    let r = app.get(&list, &elsewhere_token).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .post(&format!("{one}accept/"), &elsewhere_token, json!({}))
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn lists_filter_search_order_and_expand() {
    let app = TestApp::spawn().await;
    let (c, talk, track) = cfp(&app).await;
    let workshop = id_of(
        &create(
            &app,
            &c,
            "submission-types",
            json!({"name": {"en": "Workshop"}}),
        )
        .await,
    );
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "beginner"})).await);
    let rust = submit(&app, &c, json!({"title": "Rust in production", "submission_type": talk, "track": track, "tags": [tag]})).await;
    let garden = submit(
        &app,
        &c,
        json!({"title": "Gardening", "submission_type": workshop, "is_featured": true}),
    )
    .await;
    let asynch = submit(
        &app,
        &c,
        json!({"title": "Async RUST", "submission_type": talk}),
    )
    .await;
    let base = format!("{}/submissions/", c.base);
    app.post(&format!("{base}{rust}/accept/"), &c.write, json!({}))
        .await;
    app.post(&format!("{base}{garden}/reject/"), &c.write, json!({}))
        .await;
    app.patch(
        &format!("{base}{asynch}/"),
        &c.write,
        json!({"pending_state": "accepted"}),
    )
    .await;
    app.post(
        &format!("{base}{garden}/add-speaker/"),
        &c.write,
        json!({"email": "flora@example.org", "name": "Flora Green"}),
    )
    .await;
    let mut all = vec![rust.clone(), garden.clone(), asynch.clone()];
    all.sort();

    let listed = |query: &str| {
        let app = &app;
        let url = format!("{base}?{query}");
        let token = c.read.clone();
        async move {
            let r = app.get(&url, &token).await;
            assert_eq!(r.status, 200, "{url}: {}", r.body);
            let mut got = codes(&r);
            got.sort();
            got
        }
    };
    assert_eq!(listed("").await, all);
    assert_eq!(listed("state=accepted").await, std::slice::from_ref(&rust));
    let mut two = vec![rust.clone(), garden.clone()];
    two.sort();
    assert_eq!(listed("state=accepted&state=rejected").await, two);
    assert_eq!(
        listed("pending_state=accepted").await,
        std::slice::from_ref(&asynch)
    );
    assert_eq!(
        listed(&format!("submission_type={workshop}")).await,
        std::slice::from_ref(&garden)
    );
    assert_eq!(
        listed(&format!("track={track}")).await,
        std::slice::from_ref(&rust)
    );
    assert_eq!(
        listed("is_featured=false").await.len(),
        3,
        "rejecting unfeatures"
    );
    assert_eq!(listed("content_locale=en").await, all);
    assert_eq!(listed("content_locale=de").await, Vec::<String>::new());
    assert_eq!(listed("unknown=1").await, all);
    let mut rusty = vec![rust.clone(), asynch.clone()];
    rusty.sort();
    assert_eq!(listed("q=rUsT").await, rusty);
    assert_eq!(listed("q=flora").await, std::slice::from_ref(&garden));
    assert_eq!(listed("q=100%25").await, Vec::<String>::new());
    let r = app.get(&format!("{base}?state=bogus"), &c.read).await;
    assert_eq!(r.status, 400, "{}", r.body);

    let titles = |r: &Reply| -> Vec<String> {
        results(&r.body)
            .iter()
            .map(|s| s["title"].as_str().expect("a string").to_owned())
            .collect()
    };
    let r = app.get(&format!("{base}?o=title"), &c.read).await;
    assert_eq!(
        titles(&r),
        ["Async RUST", "Gardening", "Rust in production"]
    );
    let r = app.get(&format!("{base}?o=-title"), &c.read).await;
    assert_eq!(
        titles(&r),
        ["Rust in production", "Gardening", "Async RUST"]
    );
    let r = app.get(&format!("{base}?o=state"), &c.read).await;
    assert_eq!(
        titles(&r),
        ["Rust in production", "Gardening", "Async RUST"]
    );
    let r = app.get(&format!("{base}?o=-nonsense"), &c.read).await;
    assert_eq!(
        codes(&r),
        all,
        "an unknown order keeps the default, by code"
    );

    let r = app
        .get(
            &format!("{base}{rust}/?expand=track,submission_type,tags&lang=en"),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["track"]["name"], "Rust");
    assert_eq!(r.body["submission_type"]["name"], "Talk");
    assert_eq!(r.body["tags"][0]["tag"], "beginner");
    let r = app
        .get(&format!("{base}{rust}/?expand=track&lang=fr"), &c.read)
        .await;
    assert_eq!(r.body["track"]["name"], json!({"en": "Rust", "de": "Rost"}));
    let r = app
        .get(&format!("{base}{garden}/?expand=speakers"), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["speakers"][0]["name"], "Flora Green");
    assert_eq!(
        r.body["speakers"][0]["submissions"][0], r.body["code"],
        "a speaker's sessions stay codes"
    );
    let r = app
        .get(&format!("{base}?expand=speakers,speakers,track"), &c.read)
        .await;
    assert_eq!(r.status, 200, "repeats are tolerated: {}", r.body);
    for bad in [
        "nope",
        "speakers.nope",
        "track.speakers",
        "slots.nope",
        "speakers.submissions",
    ] {
        let r = app.get(&format!("{base}?expand={bad}"), &c.read).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.body["expand"].is_array(), "{}", r.body);
    }
}

#[tokio::test]
async fn an_expanded_list_costs_the_same_queries_for_one_or_three_submissions() {
    let app = TestApp::spawn().await;
    let (c, kind, track) = cfp(&app).await;
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "t"})).await);
    let url = format!(
        "{}/submissions/?expand=speakers.answers,track,submission_type,tags,resources,answers.question",
        c.base
    );
    let question = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": {"en": "Shirt?"}, "variant": "string", "target": "submission"}),
        )
        .await,
    );
    let add = |n: usize| {
        let app = &app;
        let c = &c;
        async move {
            let code = submit(app, c, json!({"title": format!("Talk {n}"), "submission_type": kind, "track": track, "tags": [tag]})).await;
            let r = app
                .post(
                    &format!("{}/submissions/{code}/add-speaker/", c.base),
                    &c.write,
                    json!({"email": format!("s{n}@example.org")}),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
            let r = app
                .post(
                    &format!("{}/submissions/{code}/resources/", c.base),
                    &c.write,
                    json!({"link": "https://example.org/", "description": "d"}),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
            let r = app
                .post(
                    &format!("{}/answers/", c.base),
                    &c.write,
                    json!({"question": question, "answer": "L", "submission": code}),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
        }
    };
    add(1).await;
    app.get(&url, &c.read).await;
    let (r, one) = tessera::db::count_queries(app.get(&url, &c.read)).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    add(2).await;
    add(3).await;
    let (r, three) = tessera::db::count_queries(app.get(&url, &c.read)).await;
    assert_eq!(r.body["count"], 3, "{}", r.body);
    assert!(
        results(&r.body)
            .iter()
            .all(|s| s["speakers"][0]["code"].is_string() && s["track"]["id"] == track)
    );
    assert!(
        results(&r.body)
            .iter()
            .all(|s| s["answers"][0]["question"]["id"] == question),
        "{}",
        r.body
    );
    assert_eq!(
        one, three,
        "queries for one submission: {one}, for three: {three}"
    );
}

#[tokio::test]
async fn talks_is_no_resource_and_its_objects_redirect_to_submissions() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let r = app.get(&format!("{}/talks/", c.base), &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app.get(&format!("{}/talks", c.base), &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .get(
            &format!("{}/talks/ABC123/?expand=speakers&lang=en", c.base),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 301, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some("/api/events/conf2026/submissions/ABC123/?expand=speakers&lang=en")
    );
    let r = app
        .call(
            Method::GET,
            "/api/events/conf2026/talks/ABC123/log",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 301, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some("/api/events/conf2026/submissions/ABC123/log/")
    );
}

#[tokio::test]
async fn answers_of_submissions_and_speakers_expand_nested_as_the_caller_may_see_them() {
    let app = TestApp::spawn().await;
    let (c, kind, _) = cfp(&app).await;
    let code = submit(
        &app,
        &c,
        json!({"title": "Answered", "submission_type": kind}),
    )
    .await;
    let r = app
        .post(
            &format!("{}/submissions/{code}/add-speaker/", c.base),
            &c.write,
            json!({"email": "ann@example.org", "name": "Ann"}),
        )
        .await;
    let speaker = r.body["speakers"][0].as_str().expect("a string").to_owned();
    let question = async |body: Value| id_of(&create(&app, &c, "questions", body).await);
    let shirt = question(
        json!({"question": {"en": "Shirt size?"}, "variant": "string", "target": "speaker"}),
    )
    .await;
    let level = question(
        json!({"question": {"en": "Level?"}, "variant": "string", "target": "submission"}),
    )
    .await;
    let secret = question(json!({"question": {"en": "Budget?"}, "variant": "string", "target": "submission", "is_visible_to_reviewers": false})).await;
    for body in [
        json!({"question": shirt, "answer": "L", "person": speaker}),
        json!({"question": level, "answer": "Beginner", "submission": code}),
        json!({"question": secret, "answer": "1000", "submission": code}),
    ] {
        let r = app
            .post(&format!("{}/answers/", c.base), &c.write, body)
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let one = format!("{}/submissions/{code}/", c.base);
    let r = app.get(&one, &c.read).await;
    assert_eq!(
        r.body["answers"].as_array().expect("a list").len(),
        2,
        "{}",
        r.body
    );
    let r = app
        .get(
            &format!("{one}?expand=answers.question,speakers.answers&lang=en"),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answers"][0]["answer"], "Beginner");
    assert_eq!(r.body["answers"][0]["question"]["question"], "Level?");
    assert_eq!(r.body["speakers"][0]["answers"][0]["answer"], "L");
    let r = app.get(&format!("{one}?expand=answers"), &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let answers: Vec<_> = r.body["answers"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| a["answer"].clone())
        .collect();
    assert_eq!(
        answers,
        [json!("Beginner")],
        "reviewers do not see answers hidden from them"
    );
    let r = app
        .get(
            &format!("{}/speakers/{speaker}/?expand=answers", c.base),
            &c.reviewer,
        )
        .await;
    assert_eq!(r.body["answers"][0]["answer"], "L", "{}", r.body);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let left = rows(
        &app,
        "SELECT COUNT(*) AS n FROM talk_answers WHERE speaker_id IS NULL",
        vec![],
    )
    .await;
    assert_eq!(
        left[0].try_get::<i64>("", "n").expect("a column"),
        0,
        "a submission's answers go with it"
    );
}
