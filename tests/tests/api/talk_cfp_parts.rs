//! Parts of the call for papers on the talk side: session types, tracks, questions with
//! their options, and answers, with who may read and change them, the listing conventions,
//! expansion (and what it costs), and how answers are checked against their questions.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::Endpoints;
use tessera_tests::talk::{
    self, Conference, PDF, assert_refused, conference, results, rows, sql, talk_event, talk_user,
    upload, user_token,
};
use tessera_tests::{Reply, TestApp};

/// Creates an object under the conference; gives its ID.
async fn create(app: &TestApp, c: &Conference, path: &str, body: Value) -> i64 {
    talk::create(app, c, path, body).await["id"]
        .as_i64()
        .expect("integer")
}

/// A submission of the conference of session type `kind`, stored directly; gives its ID.
async fn submission(
    app: &TestApp,
    c: &Conference,
    code: &str,
    kind: i64,
    track: Option<i64>,
) -> i64 {
    let now = chrono::Utc::now();
    let r = rows(
        app,
        "INSERT INTO talk_submissions (event_id, code, title, submission_type_id, track_id, created, updated) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        vec![c.event.into(), code.into(), format!("Talk {code}").into(), kind.into(), track.into(), now.into(), now.into()],
    )
    .await;
    r[0].try_get("", "id").expect("column")
}

/// A speaker of the conference without an account, stored directly; gives its ID.
async fn speaker(app: &TestApp, c: &Conference, code: &str) -> i64 {
    let now = chrono::Utc::now();
    let r = rows(
        app,
        "INSERT INTO talk_speakers (event_id, code, name, created, updated) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        vec![c.event.into(), code.into(), format!("Speaker {code}").into(), now.into(), now.into()],
    )
    .await;
    r[0].try_get("", "id").expect("column")
}

fn ids(r: &Reply) -> Vec<i64> {
    results(&r.body)
        .iter()
        .map(|o| o["id"].as_i64().expect("integer"))
        .collect()
}

/// The tokens of a second organiser whose events are only another organizer's.
async fn elsewhere(app: &TestApp, c: &Conference) -> String {
    let (_, other) = talk_event(app, "other", "other2026", false).await;
    user_token(app, c.orga_user, &Endpoints::all_write(), Some(&[other])).await
}

#[tokio::test]
async fn organisers_create_change_list_and_delete_session_types_with_a_log() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let list = format!("{}/submission-types/", c.base);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"name": {"en": "Talk", "de": "Vortrag"}, "deadline": "2026-05-01T12:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["default_duration"], 30);
    assert_eq!(r.body["requires_access_code"], false);
    assert_eq!(r.body["attendee_signup_required"], false);
    assert_eq!(r.body["deadline"], "2026-05-01T12:00:00Z");
    let id = r.body["id"].as_i64().expect("integer");
    let r = app
        .post(&list, &c.write, json!({"name": {"en": "Talk"}}))
        .await;
    assert_refused(&r, "name", "");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"name": {"en": "Workshop"}, "default_duration": -5}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let one = format!("{list}{id}/");
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"default_duration": 45, "deadline": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["default_duration"], 45);
    assert!(r.body["deadline"].is_null());
    assert_eq!(r.body["name"]["de"], "Vortrag");
    let r = app
        .put(
            &one,
            &c.write,
            json!({"name": {"en": "Long talk"}, "requires_access_code": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // PUT keeps what it leaves out.
    assert_eq!(r.body["default_duration"], 45);
    assert_eq!(r.body["requires_access_code"], true);
    assert_eq!(r.body["name"], json!({"en": "Long talk"}));
    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(
        results(&r.body)[0]["action_type"],
        "tessera.submission_type.update"
    );
    assert_eq!(
        results(&r.body)[2]["action_type"],
        "tessera.submission_type.create"
    );
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn a_session_type_or_track_used_by_a_submission_cannot_be_deleted() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let kind = create(
        &app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}}),
    )
    .await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": {"en": "Rust"}, "color": "#abc"}),
    )
    .await;
    submission(&app, &c, "ABCDEF", kind, Some(track)).await;
    let r = app
        .delete(&format!("{}/submission-types/{kind}/", c.base), &c.write)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("string")
            .contains("in use"),
        "{}",
        r.body
    );
    let r = app
        .delete(&format!("{}/tracks/{track}/", c.base), &c.write)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        app.get(&format!("{}/tracks/{track}/", c.base), &c.read)
            .await
            .status,
        200
    );
    assert_eq!(
        app.get(&format!("{}/submission-types/{kind}/", c.base), &c.read)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn organisers_create_change_list_and_delete_tracks_with_a_log() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let list = format!("{}/tracks", c.base);
    let r = app
        .post(&list, &c.write, json!({"name": {"en": "Rust"}, "description": {"en": "Systems"}, "color": "#aa0000", "position": 2}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["position"], 2);
    assert_eq!(r.body["description"]["en"], "Systems");
    let id = r.body["id"].as_i64().expect("integer");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"name": {"en": "Web"}, "color": "red"}),
        )
        .await;
    assert_refused(&r, "color", "");
    let r = app
        .post(&list, &c.write, json!({"name": {"en": "Web"}}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"name": {"en": "Rust"}, "color": "#000"}),
        )
        .await;
    assert_refused(&r, "name", "");
    let one = format!("{list}/{id}");
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"color": "#00ff00", "position": null, "attendee_signup_required": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["color"], "#00ff00");
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["attendee_signup_required"], true);
    assert_eq!(r.body["name"]["en"], "Rust");
    let r = app
        .put(
            &one,
            &c.write,
            json!({"name": {"en": "Rust and C"}, "color": "#123456"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // PUT keeps what it leaves out.
    assert_eq!(r.body["description"], json!({"en": "Systems"}));
    assert_eq!(r.body["attendee_signup_required"], true);
    let r = app.get(&format!("{one}/log"), &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(results(&r.body)[0]["action_type"], "tessera.track.update");
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get(&one, &c.read).await.status, 404);
}

#[tokio::test]
async fn types_and_tracks_are_read_by_organisers_and_reviewers_and_changed_by_event_settings() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let other = elsewhere(&app, &c).await;
    let (cfp_only, _) = talk_user(
        &app,
        "cfp@example.org",
        c.organizer,
        &[Permission::ChangeSubmissions],
    )
    .await;
    let cfp_only = user_token(&app, cfp_only, &Endpoints::all_write(), None).await;
    for (path, body) in [
        ("submission-types", json!({"name": {"en": "Talk"}})),
        (
            "tracks",
            json!({"name": {"en": "Rust"}, "color": "#aa0000"}),
        ),
    ] {
        let list = format!("{}/{path}/", c.base);
        let id = create(&app, &c, path, body.clone()).await;
        let one = format!("{list}{id}/");
        let r = app.post(&list, &c.read, body.clone()).await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        let r = app.get(&list, &c.reviewer).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(ids(&r), [id]);
        assert_eq!(app.get(&one, &c.reviewer).await.status, 200);
        let r = app
            .patch(&one, &c.reviewer, json!({"name": {"en": "Changed"}}))
            .await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        assert_eq!(app.delete(&one, &c.reviewer).await.status, 403);
        assert_eq!(app.get(&list, &cfp_only).await.status, 200);
        let r = app
            .patch(&one, &cfp_only, json!({"name": {"en": "Changed"}}))
            .await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        // Until the schedule is released the agenda is not public.
        let r = app.call(Method::GET, &list, None, None).await;
        assert_eq!(r.status, 401, "{path}: {}", r.body);
        assert_eq!(app.call(Method::GET, &one, None, None).await.status, 401);
        let r = app.get(&list, &other).await;
        assert_eq!(r.status, 404, "{path}: {}", r.body);
    }
}

#[tokio::test]
async fn types_and_tracks_are_searched_ordered_paged_and_flattened() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    for (name, duration) in [("Talk", 30), ("Workshop", 120), ("Lightning", 5)] {
        create(
            &app,
            &c,
            "submission-types",
            json!({"name": {"en": name, "de": format!("{name} de")}, "default_duration": duration}),
        )
        .await;
    }
    let list = format!("{}/submission-types/", c.base);
    let r = app.get(&format!("{list}?q=WORK"), &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["name"]["en"], "Workshop");
    let r = app
        .get(&format!("{list}?o=-default_duration"), &c.read)
        .await;
    let durations: Vec<_> = results(&r.body)
        .iter()
        .map(|t| t["default_duration"].as_i64().expect("integer"))
        .collect();
    assert_eq!(durations, [120, 30, 5]);
    let r = app
        .get(
            &format!("{list}?o=default_duration&page_size=2&page=last"),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(results(&r.body)[0]["default_duration"], 120);
    let r = app.get(&format!("{list}?lang=en&unknown=1"), &c.read).await;
    assert_eq!(results(&r.body)[0]["name"], "Talk");
    for (name, color) in [("Web", "#111111"), ("Rust", "#222222"), ("Data", "#333333")] {
        create(
            &app,
            &c,
            "tracks",
            json!({"name": {"en": name}, "color": color}),
        )
        .await;
    }
    let list = format!("{}/tracks/", c.base);
    let r = app.get(&format!("{list}?o=-name&lang=en"), &c.read).await;
    let names: Vec<_> = results(&r.body)
        .iter()
        .map(|t| t["name"].as_str().expect("string").to_owned())
        .collect();
    assert_eq!(names, ["Web", "Rust", "Data"]);
    let r = app.get(&format!("{list}?q=ust"), &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["description"], json!({}));
}

/// A choice question with three options; gives its ID and its options' IDs.
async fn choice_question(
    app: &TestApp,
    c: &Conference,
    variant: &str,
    extra: Value,
) -> (i64, Vec<i64>) {
    let mut body = json!({
        "question": {"en": "Which topics?"},
        "variant": variant,
        "options": [{"answer": {"en": "Rust"}, "position": 1}, {"answer": {"en": "Go"}, "position": 2}, {"answer": {"en": "C"}, "position": 3}],
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let created = talk::create(app, c, "questions", body).await;
    let options = created["options"]
        .as_array()
        .expect("value")
        .iter()
        .map(|o| o.as_i64().expect("integer"))
        .collect();
    (created["id"].as_i64().expect("integer"), options)
}

#[tokio::test]
async fn organisers_create_questions_with_options_and_the_fields_only_they_see() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": {"en": "Rust"}, "color": "#aa0000"}),
    )
    .await;
    let kind = create(
        &app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}}),
    )
    .await;
    let list = format!("{}/questions/", c.base);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "How many years?"}, "variant": "number", "target": "speaker", "min_number": "1.5",
                   "max_number": "40", "tracks": [track], "submission_types": [kind], "help_text": {"en": "Roughly."}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["variant"], "number");
    assert_eq!(r.body["target"], "speaker");
    assert_eq!(r.body["question_required"], "optional");
    assert_eq!(r.body["min_number"], "1.500000");
    assert_eq!(r.body["max_number"], "40.000000");
    assert_eq!(r.body["tracks"], json!([track]));
    assert_eq!(r.body["submission_types"], json!([kind]));
    assert_eq!(r.body["options"], json!([]));
    assert_eq!(r.body["identifier"].as_str().expect("string").len(), 8);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["is_public"], false);
    assert_eq!(r.body["contains_personal_data"], true);
    assert_eq!(r.body["is_visible_to_reviewers"], true);
    let id = r.body["id"].as_i64().expect("integer");
    let r = app.post(&list, &c.write, json!({"question": {"en": "Again"}, "identifier": r.body["identifier"].as_str().expect("string").to_lowercase()})).await;
    assert_refused(&r, "identifier", "");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "Bad"}, "identifier": "no spaces"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "Tracks"}, "tracks": [track + 1000]}),
        )
        .await;
    assert_refused(&r, "tracks", "");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "Late"}, "question_required": "after_deadline"}),
        )
        .await;
    assert_refused(&r, "deadline", "");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "Kind"}, "variant": "poll"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .post(&list, &c.write, json!({"question": {"en": "Pick"}, "variant": "multiple_choice", "min_options": 3, "options": [{"answer": {"en": "A"}}, {"answer": {"en": "B"}}]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["min_options"][0],
        "This custom field only has 2 options, so it cannot require 3 of them."
    );
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": {"en": "Pick"}, "min_options": 3, "max_options": 2}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app.get(&format!("{list}{id}/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["help_text"]["en"], "Roughly.");
    let r = app.get(&format!("{list}{id}/log/"), &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(
        results(&r.body)[0]["action_type"],
        "tessera.question.create"
    );
    let r = app.get(&list, &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
}

#[tokio::test]
async fn the_target_of_a_question_cannot_change_and_its_options_are_replaced() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let (id, options) = choice_question(&app, &c, "choices", json!({})).await;
    let one = format!("{}/questions/{id}/", c.base);
    let r = app
        .patch(&one, &c.write, json!({"target": "speaker"}))
        .await;
    assert_refused(&r, "target", "");
    let r = app
        .put(
            &one,
            &c.write,
            json!({"question": {"en": "Which?"}, "variant": "choices", "target": "reviewer"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"target": "submission", "help_text": {"en": "Pick one."}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["options"], json!(options));
    let r = app
        .patch(&one, &c.write, json!({"options": [{"answer": {"en": "Zig"}}, {"answer": {"en": "Rust"}, "position": 1}]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let new_options: Vec<i64> = r.body["options"]
        .as_array()
        .expect("value")
        .iter()
        .map(|o| o.as_i64().expect("integer"))
        .collect();
    assert_eq!(new_options.len(), 2);
    assert!(
        new_options.iter().all(|o| !options.contains(o)),
        "{new_options:?}"
    );
    let r = app
        .get(&format!("{one}?expand=options&lang=en"), &c.read)
        .await;
    let texts: Vec<_> = r.body["options"]
        .as_array()
        .expect("value")
        .iter()
        .map(|o| o["answer"].as_str().expect("string").to_owned())
        .collect();
    assert_eq!(texts, ["Zig", "Rust"]);
    assert!(r.body["options"][0].get("question").is_none(), "{}", r.body);
    let r = app
        .put(
            &one,
            &c.write,
            json!({"question": {"en": "Which one?"}, "variant": "choices"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["target"], "submission");
    assert_eq!(r.body["options"].as_array().expect("array").len(), 2);
    assert_eq!(r.body["help_text"], json!({}));
    let r = app.patch(&one, &c.write, json!({"active": false})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["active"], false);
    let r = app.get(&format!("{one}log/"), &c.read).await;
    let actions: Vec<_> = results(&r.body)
        .iter()
        .map(|e| e["action_type"].as_str().expect("string").to_owned())
        .collect();
    assert_eq!(actions[0], "tessera.question.deactivate");
    assert_eq!(actions.len(), 5);
}

#[tokio::test]
async fn questions_are_filtered_searched_ordered_and_expanded() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": {"en": "Rust", "de": "Rost"}, "color": "#aa0000"}),
    )
    .await;
    let kind = create(
        &app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}}),
    )
    .await;
    let list = format!("{}/questions/", c.base);
    let a = create(&app, &c, "questions", json!({"question": {"en": "Special question"}, "variant": "text", "position": 3, "is_public": true})).await;
    let b = create(&app, &c, "questions", json!({"question": {"en": "Your shirt size"}, "variant": "boolean", "target": "speaker", "position": 1, "is_visible_to_reviewers": false})).await;
    let (d, options) = choice_question(
        &app,
        &c,
        "multiple_choice",
        json!({"position": 2, "tracks": [track], "submission_types": [kind]}),
    )
    .await;
    let r = app.get(&list, &c.read).await;
    assert_eq!(ids(&r), [b, d, a]);
    let r = app.get(&format!("{list}?o=-id"), &c.read).await;
    assert_eq!(ids(&r), [d, b, a]);
    let r = app.get(&format!("{list}?target=speaker"), &c.read).await;
    assert_eq!(ids(&r), [b]);
    let r = app.get(&format!("{list}?variant=boolean"), &c.read).await;
    assert_eq!(ids(&r), [b]);
    let r = app.get(&format!("{list}?is_public=true"), &c.read).await;
    assert_eq!(ids(&r), [a]);
    let r = app
        .get(&format!("{list}?is_visible_to_reviewers=false"), &c.read)
        .await;
    assert_eq!(ids(&r), [b]);
    let r = app.get(&format!("{list}?target=nobody"), &c.read).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app.get(&format!("{list}?q=SPECIAL"), &c.read).await;
    assert_eq!(ids(&r), [a]);
    let r = app
        .get(
            &format!("{list}{d}/?expand=options,tracks,submission_types,tracks"),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let expanded: Vec<i64> = r.body["options"]
        .as_array()
        .expect("value")
        .iter()
        .map(|o| o["id"].as_i64().expect("integer"))
        .collect();
    assert_eq!(expanded, options);
    assert_eq!(r.body["options"][0]["answer"]["en"], "Rust");
    assert_eq!(r.body["tracks"][0]["name"]["de"], "Rost");
    assert_eq!(r.body["submission_types"][0]["name"]["en"], "Talk");
    let r = app
        .get(&format!("{list}?expand=tracks&lang=en"), &c.read)
        .await;
    assert_eq!(results(&r.body)[1]["tracks"][0]["name"], "Rust");
    assert_eq!(results(&r.body)[1]["question"], "Which topics?");
    let r = app.get(&format!("{list}?expand=answers"), &c.read).await;
    assert_refused(&r, "expand", "");
    let r = app
        .get(&format!("{list}?expand=options.question"), &c.read)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn reviewers_and_the_public_see_fewer_questions_and_fields() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let list = format!("{}/questions/", c.base);
    let public = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Public"}, "is_public": true}),
    )
    .await;
    let hidden = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Private"}, "is_visible_to_reviewers": false}),
    )
    .await;
    let inactive = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Old"}, "active": false, "is_public": true}),
    )
    .await;
    let review = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Score"}, "target": "reviewer", "is_visible_to_reviewers": false}),
    )
    .await;
    let (choice, _) = choice_question(&app, &c, "choices", json!({"is_public": true})).await;
    let r = app.get(&list, &c.read).await;
    assert_eq!(r.body["count"], 5, "{}", r.body);
    let r = app.get(&list, &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut seen = ids(&r);
    seen.sort_unstable();
    assert_eq!(seen, [public, review, choice]);
    assert!(
        results(&r.body)[0].get("is_visible_to_reviewers").is_none(),
        "{}",
        r.body
    );
    assert_eq!(
        app.get(&format!("{list}{hidden}/"), &c.reviewer)
            .await
            .status,
        404
    );
    let r = app.call(Method::GET, &list, None, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(ids(&r), [public, choice]);
    let first = &results(&r.body)[0];
    for field in [
        "active",
        "is_public",
        "contains_personal_data",
        "is_visible_to_reviewers",
    ] {
        assert!(first.get(field).is_none(), "{field}: {}", r.body);
    }
    assert_eq!(
        app.call(Method::GET, &format!("{list}{inactive}/"), None, None)
            .await
            .status,
        404
    );
    let r = app
        .call(
            Method::GET,
            &format!("{}/question-options/", c.base),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3, "{}", r.body);
    let r = app
        .call(
            Method::POST,
            &list,
            None,
            Some(json!({"question": {"en": "Anonymous"}})),
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = app
        .post(&list, &c.read, json!({"question": {"en": "Read only"}}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .post(&list, &c.reviewer, json!({"question": {"en": "Reviewer"}}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&list, &elsewhere(&app, &c).await).await;
    assert_eq!(r.status, 404, "{}", r.body);
    talk_event(&app, "hidden", "hidden2026", false).await;
    let r = app
        .call(Method::GET, "/api/events/hidden2026/questions/", None, None)
        .await;
    assert_eq!(
        r.status, 401,
        "anonymous callers under a private event, as pretalx: {}",
        r.body
    );
}

#[tokio::test]
async fn question_options_are_created_changed_listed_and_deleted_unless_used() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let (question, options) = choice_question(&app, &c, "choices", json!({})).await;
    let (other, _) = choice_question(&app, &c, "multiple_choice", json!({})).await;
    let text = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Free text"}, "variant": "text"}),
    )
    .await;
    let list = format!("{}/question-options/", c.base);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": question, "answer": {"en": "Zig"}, "identifier": "OPT-ZIG"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["question"], question);
    assert_eq!(r.body["identifier"], "OPT-ZIG");
    let id = r.body["id"].as_i64().expect("integer");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": question, "answer": {"en": "Again"}, "identifier": "opt-zig"}),
        )
        .await;
    assert_refused(&r, "identifier", "");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": text, "answer": {"en": "Nope"}}),
        )
        .await;
    assert_refused(&r, "question", "");
    let r = app
        .post(
            &list,
            &c.reviewer,
            json!({"question": question, "answer": {"en": "Nope"}}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let one = format!("{list}{id}/");
    let r = app
        .patch(
            &one,
            &c.write,
            json!({"answer": {"en": "Zig!"}, "position": 9}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answer"]["en"], "Zig!");
    assert_eq!(r.body["identifier"], "OPT-ZIG");
    let r = app
        .put(&one, &c.write, json!({"answer": {"en": "Zig"}}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["question"], question);
    assert_eq!(r.body["identifier"].as_str().expect("string").len(), 8);
    let r = app
        .get(&format!("{list}?question={question}"), &c.read)
        .await;
    assert_eq!(r.body["count"], 4, "{}", r.body);
    assert!(results(&r.body).iter().all(|o| o["question"] == question));
    let r = app
        .get(&format!("{list}?q=zig&expand=question.tracks"), &c.read)
        .await;
    assert_eq!(ids(&r), [id]);
    assert_eq!(results(&r.body)[0]["question"]["id"], question);
    assert_eq!(results(&r.body)[0]["question"]["tracks"], json!([]));
    assert!(
        results(&r.body)[0]["question"].get("options").is_none(),
        "{}",
        r.body
    );
    let r = app.get(&format!("{list}?o=-id"), &c.read).await;
    assert_eq!(r.body["count"], 7, "{}", r.body);
    assert_eq!(ids(&r)[0], id);
    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.body["count"], 3, "{}", r.body);
    assert_eq!(
        results(&r.body)[2]["action_type"],
        "tessera.question_option.create"
    );
    let kind = create(
        &app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}}),
    )
    .await;
    submission(&app, &c, "ABCDEF", kind, None).await;
    let r = app.post(&format!("{}/answers/", c.base), &c.write, json!({"question": question, "submission": "ABCDEF", "answer": "x", "options": [options[0]]})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = app
        .delete(&format!("{list}{}/", options[0]), &c.write)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("value")
            .contains("used in answers"),
        "{}",
        r.body
    );
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get(&one, &c.read).await.status, 404);
    let r = app
        .delete(&format!("{}/questions/{question}/", c.base), &c.write)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("string")
            .contains("answers"),
        "{}",
        r.body
    );
    let r = app
        .delete(&format!("{}/questions/{other}/", c.base), &c.write)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = app.get(&format!("{list}?question={other}"), &c.read).await;
    assert_eq!(r.body["count"], 0, "{}", r.body);
}

/// A conference with a submission `ABCDEF` and a speaker `SPKR01`.
async fn answering(app: &TestApp) -> (Conference, i64, i64) {
    let c = conference(app).await;
    let kind = create(app, &c, "submission-types", json!({"name": {"en": "Talk"}})).await;
    let sub = submission(app, &c, "ABCDEF", kind, None).await;
    let spk = speaker(app, &c, "SPKR01").await;
    sql(
        app,
        "INSERT INTO talk_submission_speakers (submission_id, speaker_id) VALUES ($1, $2)",
        vec![sub.into(), spk.into()],
    )
    .await;
    (c, sub, spk)
}

#[tokio::test]
async fn answers_are_for_organisers_only() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let q = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Why?"}, "variant": "text"}),
    )
    .await;
    let list = format!("{}/answers/", c.base);
    let body = json!({"question": q, "submission": "ABCDEF", "answer": "Because."});
    let r = app.post(&list, &c.write, body.clone()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let one = format!("{list}{}/", r.body["id"]);
    assert_eq!(app.get(&list, &c.read).await.status, 200);
    assert_eq!(app.get(&one, &c.read).await.status, 200);
    assert_eq!(app.post(&list, &c.read, body.clone()).await.status, 403);
    assert_eq!(app.get(&list, &c.reviewer).await.status, 403);
    assert_eq!(app.get(&one, &c.reviewer).await.status, 403);
    assert_eq!(app.call(Method::GET, &list, None, None).await.status, 401);
    assert_eq!(app.get(&list, &elsewhere(&app, &c).await).await.status, 404);
    let (cfp_only, _) = talk_user(
        &app,
        "cfp@example.org",
        c.organizer,
        &[Permission::ChangeSubmissions],
    )
    .await;
    let cfp_only = user_token(&app, cfp_only, &Endpoints::all_write(), None).await;
    assert_eq!(app.get(&list, &cfp_only).await.status, 403);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get(&one, &c.read).await.status, 404);
}

#[tokio::test]
async fn creating_an_answer_again_changes_the_existing_one_and_logs_only_changes() {
    let app = TestApp::spawn().await;
    let (c, sub, _) = answering(&app).await;
    let q = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Age?"}, "variant": "number"}),
    )
    .await;
    let list = format!("{}/answers/", c.base);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "abcdef", "answer": "42"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"id": r.body["id"], "question": q, "answer": "42", "answer_file": null, "submission": "ABCDEF",
               "review": null, "person": null, "options": []})
    );
    let id = r.body["id"].clone();
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": "43"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["id"], id);
    assert_eq!(r.body["answer"], "43");
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": "43"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = app.get(&list, &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let r = app.get(&format!("{list}{id}/log/"), &c.read).await;
    assert_eq!(r.body["count"], 2, "{}", r.body);
    let entries = rows(
        &app,
        "SELECT data FROM talk_log WHERE object_type = 'submission' AND object_id = $1 ORDER BY id",
        vec![sub.into()],
    )
    .await;
    assert_eq!(entries.len(), 2);
    let last: Value = entries[1].try_get("", "data").expect("column");
    assert_eq!(
        last["changes"][format!("question-{q}")],
        json!({"old": "42", "new": "43"})
    );
    let r = app
        .patch(&format!("{list}{id}/"), &c.write, json!({"answer": "x"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .put(&format!("{list}{id}/"), &c.write, json!({"answer": "7"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answer"], "7");
}

#[tokio::test]
async fn an_answer_names_the_target_its_question_asks() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let list = format!("{}/answers/", c.base);
    let for_submission = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Why?"}, "variant": "text"}),
    )
    .await;
    let for_speaker = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Who?"}, "variant": "text", "target": "speaker"}),
    )
    .await;
    let for_reviewer = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Score?"}, "variant": "text", "target": "reviewer"}),
    )
    .await;
    let cases = [
        (
            json!({"question": for_submission, "answer": "x"}),
            "submission",
        ),
        (
            json!({"question": for_submission, "answer": "x", "submission": "ABCDEF", "person": "SPKR01"}),
            "person",
        ),
        (
            json!({"question": for_submission, "answer": "x", "submission": "ABCDEF", "review": 1}),
            "review",
        ),
        (
            json!({"question": for_submission, "answer": "x", "submission": "NOPE00"}),
            "submission",
        ),
        (
            json!({"question": for_speaker, "answer": "x", "submission": "ABCDEF"}),
            "person",
        ),
        (
            json!({"question": for_speaker, "answer": "x", "person": "SPKR01", "submission": "ABCDEF"}),
            "submission",
        ),
        (
            json!({"question": for_speaker, "answer": "x", "person": "NOPE00"}),
            "person",
        ),
        (json!({"question": for_reviewer, "answer": "x"}), "review"),
        (
            json!({"question": for_reviewer, "answer": "x", "review": 5}),
            "review",
        ),
        (
            json!({"question": for_submission + 1000, "answer": "x", "submission": "ABCDEF"}),
            "question",
        ),
        (json!({"submission": "ABCDEF"}), "question"),
    ];
    for (body, field) in cases {
        let r = app.post(&list, &c.write, body.clone()).await;
        assert_refused(&r, field, &body.to_string());
    }
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": for_speaker, "answer": "Me", "person": "spkr01"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["person"], "SPKR01");
    assert!(r.body["submission"].is_null());
    let r = app
        .get(&format!("{list}?expand=person,question"), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(results(&r.body)[0]["person"]["code"], "SPKR01");
    assert_eq!(results(&r.body)[0]["question"]["target"], "speaker");
    let r = app.get(&format!("{list}?expand=submission"), &c.read).await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn answers_are_checked_against_their_questions_kind_and_bounds() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let list = format!("{}/answers/", c.base);
    // A question's kind and bounds, and answers with what is stored of them (`None`: 400).
    type Cases<'a> = Vec<(Value, Vec<(&'a str, Option<&'a str>)>)>;
    let cases: Cases = vec![
        (
            json!({"variant": "number", "min_number": "1", "max_number": "10.5"}),
            vec![
                ("abc", None),
                ("0.99", None),
                ("10.6", None),
                ("10.5", Some("10.5")),
                (" 3 ", Some("3")),
            ],
        ),
        (
            json!({"variant": "string", "min_length": 3, "max_length": 5}),
            vec![
                ("ab", None),
                ("abcdef", None),
                ("abc", Some("abc")),
                ("äöüßé", Some("äöüßé")),
            ],
        ),
        (
            json!({"variant": "text", "max_length": 4}),
            vec![("a\nbcd", None), ("a\nbc", Some("a\nbc"))],
        ),
        (
            json!({"variant": "boolean"}),
            vec![
                ("yes", None),
                ("1", None),
                ("True", Some("True")),
                ("false", Some("False")),
            ],
        ),
        (
            json!({"variant": "url"}),
            vec![
                ("example.org", None),
                ("javascript:alert(1)", None),
                ("https://exa mple.org", None),
                ("https://example.org/x", Some("https://example.org/x")),
            ],
        ),
        (
            json!({"variant": "date", "min_date": "2026-01-01", "max_date": "2026-12-31"}),
            vec![
                ("01.02.2026", None),
                ("2025-12-31", None),
                ("2027-01-01", None),
                ("2026-02-30", None),
                ("2026-06-01", Some("2026-06-01")),
            ],
        ),
        (
            json!({"variant": "datetime", "min_datetime": "2026-01-01T00:00:00Z"}),
            vec![
                ("2026-06-01", None),
                ("2025-12-31T23:59:59Z", None),
                ("2026-06-01T12:00:00+02:00", Some("2026-06-01T10:00:00Z")),
            ],
        ),
    ];
    for (question, answers) in cases {
        let mut body = json!({"question": {"en": "Q"}});
        body.as_object_mut()
            .expect("value")
            .extend(question.as_object().expect("object").clone());
        let q = create(&app, &c, "questions", body).await;
        for (answer, stored) in answers {
            let r = app
                .post(
                    &list,
                    &c.write,
                    json!({"question": q, "submission": "ABCDEF", "answer": answer}),
                )
                .await;
            match stored {
                None => {
                    assert_eq!(r.status, 400, "{question} {answer:?}: {}", r.body);
                    assert!(
                        r.body["answer"].is_array(),
                        "{question} {answer:?}: {}",
                        r.body
                    );
                }
                Some(s) => {
                    assert_eq!(r.status, 201, "{question} {answer:?}: {}", r.body);
                    assert_eq!(r.body["answer"], s, "{question}");
                }
            }
        }
    }
    let q = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Q"}, "variant": "text"}),
    )
    .await;
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": ""}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": "x", "options": [1]}),
        )
        .await;
    assert_refused(&r, "options", "");
    let r = app.post(&list, &c.write, json!({"question": q, "submission": "ABCDEF", "answer": "x", "answer_file": "file:abc"})).await;
    assert_refused(&r, "answer_file", "");
}

#[tokio::test]
async fn choice_answers_pick_options_of_their_question_within_its_bounds() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let list = format!("{}/answers/", c.base);
    let (single, one_of) = choice_question(&app, &c, "choices", json!({})).await;
    let (multi, many_of) = choice_question(
        &app,
        &c,
        "multiple_choice",
        json!({"min_options": 2, "max_options": 2}),
    )
    .await;
    let answer = |q: i64, options: Vec<i64>| json!({"question": q, "submission": "ABCDEF", "answer": "ignored", "options": options});
    for (body, field) in [
        (
            json!({"question": single, "submission": "ABCDEF", "answer": "x"}),
            "options",
        ),
        (answer(single, vec![]), "options"),
        (answer(single, vec![many_of[0]]), "options"),
        (answer(single, vec![one_of[0], one_of[1]]), "options"),
        (answer(single, vec![999_999]), "options"),
        (answer(multi, vec![many_of[0]]), "options"),
        (answer(multi, many_of.clone()), "options"),
    ] {
        let r = app.post(&list, &c.write, body.clone()).await;
        assert_refused(&r, field, &body.to_string());
    }
    let r = app
        .post(&list, &c.write, answer(single, vec![one_of[1]]))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["answer"], "Go");
    assert_eq!(r.body["options"], json!([one_of[1]]));
    let r = app
        .post(
            &list,
            &c.write,
            answer(multi, vec![many_of[2], many_of[0], many_of[2]]),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["answer"], "Rust, C");
    assert_eq!(r.body["options"], json!([many_of[0], many_of[2]]));
    let one = format!("{list}{}/", r.body["id"]);
    let r = app.patch(&one, &c.write, json!({"options": many_of})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .get(&format!("{one}?expand=options,question"), &c.read)
        .await;
    assert_eq!(r.body["options"][0]["answer"]["en"], "Rust");
    assert!(r.body["options"][0].get("question").is_none(), "{}", r.body);
    assert!(r.body["question"].get("options").is_none(), "{}", r.body);
    assert_eq!(r.body["question"]["variant"], "multiple_choice");
    let r = app
        .patch(&one, &c.write, json!({"options": [many_of[1], many_of[2]]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answer"], "Go, C");
    let r = app
        .get(&format!("{list}?question={multi}&q=go"), &c.read)
        .await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
}

#[tokio::test]
async fn answers_are_filtered_by_question_submission_speaker_and_review() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let list = format!("{}/answers/", c.base);
    let a = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "A"}, "variant": "text"}),
    )
    .await;
    let b = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "B"}, "variant": "text", "target": "speaker"}),
    )
    .await;
    let first = create(
        &app,
        &c,
        "answers",
        json!({"question": a, "submission": "ABCDEF", "answer": "zeta"}),
    )
    .await;
    let second = create(
        &app,
        &c,
        "answers",
        json!({"question": b, "person": "SPKR01", "answer": "alpha"}),
    )
    .await;
    assert_eq!(
        ids(&app.get(&format!("{list}?question={a}"), &c.read).await),
        [first]
    );
    assert_eq!(
        ids(&app.get(&format!("{list}?submission=abcdef"), &c.read).await),
        [first]
    );
    assert_eq!(
        ids(&app.get(&format!("{list}?speaker=spkr01"), &c.read).await),
        [second]
    );
    assert_eq!(
        ids(&app.get(&format!("{list}?review=3"), &c.read).await),
        Vec::<i64>::new()
    );
    assert_eq!(
        ids(&app.get(&format!("{list}?o=answer"), &c.read).await),
        [second, first]
    );
    assert_eq!(
        ids(&app.get(&format!("{list}?q=ZET"), &c.read).await),
        [first]
    );
}

#[tokio::test]
async fn file_answers_take_an_upload_of_the_same_user_once() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let list = format!("{}/answers/", c.base);
    let q = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Slides"}, "variant": "file"}),
    )
    .await;
    let r = app
        .post(
            &list,
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": "slides.pdf"}),
        )
        .await;
    assert_refused(&r, "answer_file", "");
    let file = upload(&app, &c.write, "application/pdf", "slides.pdf", PDF).await;
    let body =
        json!({"question": q, "submission": "ABCDEF", "answer": "slides.pdf", "answer_file": file});
    let r = app.post(&list, &c.write, body.clone()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let url = r.body["answer_file"].as_str().expect("string").to_owned();
    assert!(
        url.starts_with("http") && url.ends_with("/slides.pdf"),
        "{url}"
    );
    assert!(
        r.body["answer"]
            .as_str()
            .expect("string")
            .starts_with("file://"),
        "{}",
        r.body
    );
    let r = app.post(&list, &c.write, body).await;
    assert_refused(&r, "answer_file", "");
    let r = app
        .patch(
            &format!("{list}{}/", ids(&app.get(&list, &c.read).await)[0]),
            &c.write,
            json!({"answer": "renamed"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answer_file"], url);
}

#[tokio::test]
async fn expanding_lists_of_questions_and_answers_costs_the_same_queries_for_one_or_three() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = create(
        &app,
        &c,
        "tracks",
        json!({"name": {"en": "Rust"}, "color": "#aa0000"}),
    )
    .await;
    let kind = create(
        &app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk"}}),
    )
    .await;
    let path = format!(
        "{}/questions/?expand=options,tracks,submission_types",
        c.base
    );
    // The token's first use pins its version: not part of the listing.
    assert_eq!(app.get(&path, &c.read).await.status, 200);
    let mut counts = Vec::new();
    for round in 0..3 {
        choice_question(
            &app,
            &c,
            "choices",
            json!({"tracks": [track], "submission_types": [kind], "position": round}),
        )
        .await;
        if round == 1 {
            continue;
        }
        let (r, n) = tessera::db::count_queries(app.get(&path, &c.read)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(results(&r.body).len(), round + 1);
        assert!(
            results(&r.body)
                .iter()
                .all(|q| q["options"].as_array().expect("array").len() == 3)
        );
        counts.push(n);
    }
    assert_eq!(counts[0], counts[1], "{counts:?}");
    assert!(counts[0] > 0);
    let (question, options) =
        choice_question(&app, &c, "choices", json!({"target": "speaker"})).await;
    let answers = format!("{}/answers/?expand=question.tracks,options,person", c.base);
    let mut counts = Vec::new();
    for (round, option) in options.iter().enumerate() {
        let code = format!("SPKR0{round}");
        speaker(&app, &c, &code).await;
        let body =
            json!({"question": question, "person": code, "answer": "x", "options": [option]});
        create(&app, &c, "answers", body).await;
        if round == 1 {
            continue;
        }
        let (r, n) = tessera::db::count_queries(app.get(&answers, &c.read)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(results(&r.body).len(), round + 1);
        assert_eq!(results(&r.body)[0]["person"]["code"], "SPKR00");
        counts.push(n);
    }
    assert_eq!(counts[0], counts[1], "{counts:?}");
}

#[tokio::test]
async fn null_characters_are_refused_in_bodies_paths_and_queries() {
    let app = TestApp::spawn().await;
    let (c, ..) = answering(&app).await;
    let q = create(
        &app,
        &c,
        "questions",
        json!({"question": {"en": "Q"}, "variant": "text"}),
    )
    .await;
    let r = app
        .post(
            &format!("{}/answers/", c.base),
            &c.write,
            json!({"question": q, "submission": "ABCDEF", "answer": "a\u{0}b"}),
        )
        .await;
    assert_refused(&r, "answer", "");
    let r = app
        .post(
            &format!("{}/tracks/", c.base),
            &c.write,
            json!({"name": {"en": "a\u{0}b"}, "color": "#000"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .get("/api/events/conf%002026/questions/", &c.write)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    for path in [
        "questions/?q=a%00b",
        "answers/?submission=a%00b&speaker=%00",
        "tracks/?q=%00x",
    ] {
        let r = app.get(&format!("{}/{path}", c.base), &c.write).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert!(r.body["detail"].is_string(), "{path}: {}", r.body);
    }
}
