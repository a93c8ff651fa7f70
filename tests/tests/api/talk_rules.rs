//! Rules of the talk side no other file holds a test of: the root's shape, events joining
//! and leaving the talk side, each action of a token's scopes alone, last use, versions that
//! are refused on writes or stored on a token, pages of fifty, languages of the event, paths
//! without their trailing slash, one activity log per object, expansion three levels deep
//! and what expanded lists of speakers and options cost, the default upload limit, uploads
//! of others, and the OpenAPI document of the talk side.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera_tests::talk::{
    Conference, PDF, PNG, assert_refused, conference, create, results, rows, send_upload, sql,
    talk_event, talk_user, upload, user_token,
};
use tessera_tests::{Reply, TestApp};

/// The `id` of a created object.
fn id_of(object: &Value) -> i64 {
    object["id"].as_i64().expect("an integer ID")
}

/// The `code` of a created object.
fn code_of(object: &Value) -> String {
    object["code"].as_str().expect("a code").to_owned()
}

/// The stored digest of a token, to find its row.
fn hash(token: &str) -> sea_orm::Value {
    tessera::domain::tokens::hash(token).into()
}

/// The single count a `SELECT COUNT(*) AS n ...` gives.
async fn count(app: &TestApp, query: &str, values: Vec<sea_orm::Value>) -> i64 {
    rows(app, query, values).await[0]
        .try_get("", "n")
        .expect("a count")
}

/// A request with a token, a version header and an optional JSON body.
async fn versioned(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    header: (&str, &str),
    body: Option<Value>,
) -> Reply {
    let auth = format!("Token {token}");
    let mut headers = vec![("Authorization", auth.as_str()), header];
    let bytes = match body {
        Some(b) => {
            headers.push(("Content-Type", "application/json"));
            b.to_string().into_bytes()
        }
        None => Vec::new(),
    };
    app.raw(method, path, &headers, bytes).await
}

/// The version stored on a token, if it has one yet.
async fn stored_version(app: &TestApp, token: &str) -> Option<String> {
    rows(
        app,
        "SELECT version FROM user_api_tokens WHERE token_hash = $1",
        vec![hash(token)],
    )
    .await[0]
        .try_get("", "version")
        .expect("a column")
}

/// The slugs of a plain list of events.
fn slugs(r: &Reply) -> Vec<String> {
    r.body
        .as_array()
        .expect("a plain list")
        .iter()
        .map(|e| e["slug"].as_str().expect("a slug").to_owned())
        .collect()
}

#[tokio::test]
async fn the_talk_root_has_exactly_its_four_fields_and_refuses_a_bad_token() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    for path in ["/api/", "/api"] {
        let r = app.call(Method::GET, path, None, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let keys: BTreeSet<&str> = r
            .body
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["name", "version", "api_version", "urls"]),
            "{path}: {}",
            r.body
        );
        assert!(
            r.body["name"].as_str().is_some_and(|n| !n.is_empty()),
            "{}",
            r.body
        );
        assert!(
            r.body["version"].as_str().is_some_and(|v| !v.is_empty()),
            "{}",
            r.body
        );
        assert_eq!(r.body["api_version"], "v2");
        assert_eq!(
            r.body["urls"],
            json!({"events": "http://tessera.test/api/events/"}),
            "built from the public base URL"
        );
    }
    assert_eq!(app.get("/api/", &c.read).await.status, 200);
    let r = app.get("/api/", "not-a-token").await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(r.body["detail"].is_string(), "{}", r.body);
}

#[tokio::test]
async fn an_event_is_on_the_talk_side_only_while_switched_on() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let plain = app.event("conf", "plain2026").await;
    sql(
        &app,
        "UPDATE events SET is_public = $1 WHERE id = $2",
        vec![true.into(), plain.into()],
    )
    .await;
    let admin = app.admin_token("conf").await;
    let v1 = "/api/v1/organizers/conf/events/plain2026/";
    let detail = "/api/events/plain2026/";

    for path in [detail, "/api/events/plain2026/tags/"] {
        let r = app.get(path, &c.read).await;
        assert_eq!(r.status, 404, "off the talk side, {path}: {}", r.body);
    }
    let r = app.call(Method::GET, "/api/events/", None, None).await;
    assert_eq!(slugs(&r), ["conf2026"]);

    let r = app.patch(v1, &admin, json!({"talk_enabled": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(detail, &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["slug"], "plain2026");
    assert_eq!(
        app.get("/api/events/plain2026/tags/", &c.read).await.status,
        200
    );
    let r = app
        .call(Method::GET, "/api/events/?o=slug", None, None)
        .await;
    assert_eq!(slugs(&r), ["conf2026", "plain2026"]);

    // A private one is listed for the users of its teams only; the list searches, filters
    // and orders.
    let r = app.patch(v1, &admin, json!({"is_public": false})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.call(Method::GET, "/api/events/", None, None).await;
    assert_eq!(slugs(&r), ["conf2026"]);
    assert_eq!(app.call(Method::GET, detail, None, None).await.status, 404);
    let listed = |query: &'static str| {
        let app = &app;
        let token = c.read.clone();
        async move {
            let r = app.get(&format!("/api/events/{query}"), &token).await;
            assert_eq!(r.status, 200, "{query}: {}", r.body);
            slugs(&r)
        }
    };
    assert_eq!(listed("?o=slug").await, ["conf2026", "plain2026"]);
    assert_eq!(listed("?o=-slug").await, ["plain2026", "conf2026"]);
    assert_eq!(listed("?is_public=false").await, ["plain2026"]);
    assert_eq!(listed("?is_public=true").await, ["conf2026"]);
    assert_eq!(listed("?q=PLAIN").await, ["plain2026"]);

    let r = app.patch(v1, &admin, json!({"talk_enabled": false})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.get(detail, &c.read).await.status, 404);
    assert_eq!(listed("").await, ["conf2026"]);
}

/// The statuses of seven operations on tags with `token`, each on a fresh tag: list,
/// retrieve, log, create, update, replace, destroy.
async fn tag_statuses(app: &TestApp, c: &Conference, token: &str, round: usize) -> Vec<u16> {
    let tags = format!("{}/tags/", c.base);
    let id = id_of(&create(app, c, "tags", json!({"tag": format!("fresh{round}")})).await);
    let one = format!("{tags}{id}/");
    vec![
        app.get(&tags, token).await.status,
        app.get(&one, token).await.status,
        app.get(&format!("{one}log/"), token).await.status,
        app.post(&tags, token, json!({"tag": format!("new{round}")}))
            .await
            .status,
        app.patch(&one, token, json!({"color": "#111111"}))
            .await
            .status,
        app.put(&one, token, json!({"tag": format!("put{round}")}))
            .await
            .status,
        app.delete(&one, token).await.status,
    ]
}

/// Sets a token's expiry.
async fn expire_at(app: &TestApp, token: &str, at: DateTime<Utc>) {
    sql(
        app,
        "UPDATE user_api_tokens SET expires = $1 WHERE token_hash = $2",
        vec![at.into(), hash(token)],
    )
    .await;
}

#[tokio::test]
async fn every_action_of_a_token_scope_opens_its_own_operations_only() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let (_, other) = talk_event(&app, "other", "other2026", false).await;
    let all = [200, 200, 200, 201, 200, 200, 204];
    let mut cases: Vec<(String, String, Vec<u16>)> = Vec::new();
    for (action, expected) in [
        (Action::List, [200, 403, 403, 403, 403, 403, 403]),
        (Action::Retrieve, [403, 200, 200, 403, 403, 403, 403]),
        (Action::Create, [403, 403, 403, 201, 403, 403, 403]),
        (Action::Update, [403, 403, 403, 403, 200, 200, 403]),
        (Action::Destroy, [403, 403, 403, 403, 403, 403, 204]),
        (Action::Actions, [403; 7]),
    ] {
        let mut only = Endpoints::default();
        only.0.insert("tags".into(), vec![action]);
        let token = user_token(&app, c.orga_user, &only, None).await;
        cases.push((format!("only {}", action.name()), token, expected.to_vec()));
    }
    let mut no_tags = Endpoints::all_write();
    no_tags.0.remove("tags");
    cases.push((
        "every endpoint but tags".into(),
        user_token(&app, c.orga_user, &no_tags, None).await,
        vec![403; 7],
    ));
    cases.push((
        "this event among others".into(),
        user_token(
            &app,
            c.orga_user,
            &Endpoints::all_write(),
            Some(&[other, c.event]),
        )
        .await,
        all.to_vec(),
    ));
    cases.push((
        "another event only".into(),
        user_token(&app, c.orga_user, &Endpoints::all_write(), Some(&[other])).await,
        vec![404; 7],
    ));
    let soon = user_token(&app, c.orga_user, &Endpoints::all_write(), None).await;
    expire_at(&app, &soon, Utc::now() + Duration::hours(1)).await;
    cases.push(("expiring in an hour".into(), soon, all.to_vec()));
    let gone = user_token(&app, c.orga_user, &Endpoints::all_write(), None).await;
    expire_at(&app, &gone, Utc::now() - Duration::seconds(1)).await;
    cases.push(("expired".into(), gone, vec![401; 7]));

    let (mut made, mut replaced) = (0, 0);
    for (round, (name, token, expected)) in cases.iter().enumerate() {
        let got = tag_statuses(&app, &c, token, round).await;
        assert_eq!(
            &got, expected,
            "{name}: list, retrieve, log, create, update, replace, destroy"
        );
        made += usize::from(expected[3] == 201);
        // A replaced tag stays unless the same token then deletes it.
        replaced += usize::from(expected[5] == 200 && expected[6] != 204);
    }
    let n = |pattern: &str| {
        count(
            &app,
            "SELECT COUNT(*) AS n FROM talk_tags WHERE tag LIKE $1",
            vec![pattern.into()],
        )
    };
    assert_eq!(
        n("new%").await,
        made as i64,
        "refused creations wrote nothing"
    );
    assert_eq!(
        n("put%").await,
        replaced as i64,
        "refused changes wrote nothing"
    );

    // `actions` alone moves a submission, and neither reads nor changes it.
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "Talk"})).await);
    let code = code_of(
        &create(
            &app,
            &c,
            "submissions",
            json!({"title": "Moved", "submission_type": kind}),
        )
        .await,
    );
    let mut only_actions = Endpoints::default();
    only_actions
        .0
        .insert("submissions".into(), vec![Action::Actions]);
    let mover = user_token(&app, c.orga_user, &only_actions, None).await;
    let one = format!("{}/submissions/{code}/", c.base);
    assert_eq!(app.get(&one, &mover).await.status, 403);
    assert_eq!(
        app.get(&format!("{}/submissions/", c.base), &mover)
            .await
            .status,
        403
    );
    let r = app.patch(&one, &mover, json!({"title": "Renamed"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.post(&format!("{one}accept/"), &mover, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["state"], "accepted");
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.body["title"], "Moved");
    assert_eq!(r.body["state"], "accepted");
}

/// When a token was last used, as stored.
async fn last_used(app: &TestApp, token: &str) -> Option<DateTime<Utc>> {
    rows(
        app,
        "SELECT last_used FROM user_api_tokens WHERE token_hash = $1",
        vec![hash(token)],
    )
    .await[0]
        .try_get("", "last_used")
        .expect("a column")
}

#[tokio::test]
async fn a_token_records_its_last_use_at_most_once_a_minute() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags/", c.base);
    assert_eq!(last_used(&app, &c.read).await, None);
    let before = Utc::now();
    assert_eq!(app.get(&tags, &c.read).await.status, 200);
    let first = last_used(&app, &c.read).await.expect("marked used");
    assert!(
        first >= before - Duration::seconds(1),
        "{first} after {before}"
    );
    assert_eq!(app.get(&tags, &c.read).await.status, 200);
    assert_eq!(
        last_used(&app, &c.read).await,
        Some(first),
        "within the minute"
    );

    let set = |at: DateTime<Utc>| {
        sql(
            &app,
            "UPDATE user_api_tokens SET last_used = $1 WHERE token_hash = $2",
            vec![at.into(), hash(&c.read)],
        )
    };
    set(Utc::now() - Duration::seconds(30)).await;
    let recent = last_used(&app, &c.read).await;
    assert_eq!(app.get(&tags, &c.read).await.status, 200);
    assert_eq!(last_used(&app, &c.read).await, recent, "30 seconds ago");
    let long_ago = Utc::now() - Duration::minutes(2);
    set(long_ago).await;
    assert_eq!(app.get(&tags, &c.read).await.status, 200);
    let now = last_used(&app, &c.read).await.expect("marked used");
    assert!(
        now > long_ago + Duration::minutes(1),
        "two minutes ago is rewritten: {now}"
    );

    // A token acts for its user: once the user is deactivated it authenticates no more.
    sql(
        &app,
        "UPDATE users SET active = $1 WHERE id = $2",
        vec![false.into(), c.orga_user.into()],
    )
    .await;
    let r = app.get(&tags, &c.read).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(app.get(&tags, &c.reviewer).await.status, 200);
}

#[tokio::test]
async fn an_unknown_or_removed_version_is_400_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags/", c.base);
    let kept = id_of(&create(&app, &c, "tags", json!({"tag": "kept"})).await);
    let one = format!("{tags}{kept}/");
    let fresh = user_token(&app, c.orga_user, &Endpoints::all_write(), None).await;
    for (method, path, header, body) in [
        (
            Method::POST,
            &tags,
            ("Pretalx-Version", "v3"),
            Some(json!({"tag": "new"})),
        ),
        (
            Method::POST,
            &tags,
            ("service-Version", "LEGACY"),
            Some(json!({"tag": "new"})),
        ),
        (
            Method::PATCH,
            &one,
            ("Pretalx-Version", "V2"),
            Some(json!({"tag": "changed"})),
        ),
        (
            Method::PUT,
            &one,
            ("service-Version", "v2.0"),
            Some(json!({"tag": "changed"})),
        ),
        (Method::DELETE, &one, ("Pretalx-Version", "2"), None),
    ] {
        let r = versioned(&app, method.clone(), path, &fresh, header, body).await;
        let context = format!("{method} {path} {header:?}");
        assert_eq!(r.status, 400, "{context}: {}", r.body);
        assert!(r.body["detail"].is_string(), "{context}: {}", r.body);
        assert_eq!(
            r.body.as_object().map(|o| o.len()),
            Some(1),
            "{context}: {}",
            r.body
        );
    }
    let r = app.get(&tags, &c.read).await;
    assert_eq!(r.body["count"], 1, "nothing created or deleted: {}", r.body);
    assert_eq!(results(&r.body)[0]["tag"], "kept");
    let r = app.get(&format!("{one}log/"), &c.read).await;
    assert_eq!(r.body["count"], 1, "nothing logged: {}", r.body);
    assert_eq!(
        stored_version(&app, &fresh).await,
        None,
        "a refused version fixes nothing"
    );

    // A token fixed to a version no longer served is refused until upgraded, though a
    // request may still name a served one.
    sql(
        &app,
        "UPDATE user_api_tokens SET version = $1 WHERE token_hash = $2",
        vec!["LEGACY".into(), hash(&fresh)],
    )
    .await;
    let r = app.get(&tags, &fresh).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("/orga/me")),
        "{}",
        r.body
    );
    let r = app
        .post(&tags, &fresh, json!({"tag": "through a removed version"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = versioned(
        &app,
        Method::GET,
        &tags,
        &fresh,
        ("Pretalx-Version", "v2"),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1);
    assert_eq!(
        stored_version(&app, &fresh).await.as_deref(),
        Some("LEGACY"),
        "a header changes no token"
    );
}

#[tokio::test]
async fn lists_come_fifty_a_page_and_page_size_only_lowers_it() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let now = Utc::now();
    for i in 0..55 {
        sql(
            &app,
            "INSERT INTO talk_tags (event_id, tag, color, is_public) VALUES ($1, $2, $3, $4)",
            vec![
                c.event.into(),
                format!("tag{i:02}").into(),
                "#000000".into(),
                false.into(),
            ],
        )
        .await;
        sql(
            &app,
            "INSERT INTO talk_speakers (event_id, code, name, created, updated) \
             VALUES ($1, $2, $3, $4, $5)",
            vec![
                c.event.into(),
                format!("SPK{i:03}").into(),
                format!("Speaker {i:02}").into(),
                now.into(),
                now.into(),
            ],
        )
        .await;
    }
    for path in ["tags", "speakers"] {
        let list = format!("{}/{path}/", c.base);
        let absolute = format!("http://tessera.test{list}");
        let r = app.get(&list, &c.read).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.body["count"], 55);
        assert_eq!(results(&r.body).len(), 50, "{path}");
        assert_eq!(r.body["next"], format!("{absolute}?page=2"), "{path}");
        assert_eq!(r.body["previous"], Value::Null);
        for size in ["100", "51", "0"] {
            let r = app.get(&format!("{list}?page_size={size}"), &c.read).await;
            assert_eq!(r.status, 200, "{path} {size}: {}", r.body);
            assert_eq!(
                results(&r.body).len(),
                50,
                "{path}: page_size={size} does not raise the page"
            );
        }
        let r = app.get(&format!("{list}?page=2"), &c.read).await;
        assert_eq!(results(&r.body).len(), 5, "{path}");
        assert_eq!(r.body["next"], Value::Null);
        assert_eq!(r.body["previous"], absolute.as_str(), "{path}");
        let r = app
            .get(&format!("{list}?o=-id&page_size=20&page=last"), &c.read)
            .await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(results(&r.body).len(), 15, "{path}");
        assert_eq!(
            r.body["previous"],
            format!("{absolute}?o=-id&page_size=20&page=2"),
            "{path}: the other parameters stay"
        );
        assert_eq!(r.body["next"], Value::Null);
        for page in ["3", "0", "abc"] {
            let r = app.get(&format!("{list}?page={page}"), &c.read).await;
            assert_eq!(r.status, 404, "{path} page {page}: {}", r.body);
            assert!(r.body["detail"].is_string(), "{}", r.body);
        }
    }
    let r = app
        .get(
            &format!("{}/tags/?o=tag&page_size=20&page=3", c.base),
            &c.read,
        )
        .await;
    let last: Vec<_> = results(&r.body).iter().map(|t| t["tag"].clone()).collect();
    assert_eq!(last.first(), Some(&json!("tag40")), "{}", r.body);
    assert_eq!(last.last(), Some(&json!("tag54")), "{}", r.body);
}

#[tokio::test]
async fn lang_flattens_to_the_events_languages_only_and_never_to_null() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": {"en": "Rust", "de": "Rost"}, "color": "#aa0000"}),
        )
        .await,
    );
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "bare"})).await);
    let question = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": {"en": "Shirt?", "de": "Hemd?"}, "variant": "string"}),
        )
        .await,
    );
    let track_url = format!("{}/tracks/{track}/", c.base);
    let tag_url = format!("{}/tags/{tag}/", c.base);
    let question_url = format!("{}/questions/{question}/", c.base);
    let name = |query: &str| {
        let url = format!("{track_url}{query}");
        let app = &app;
        let token = c.read.clone();
        async move {
            let r = app.get(&url, &token).await;
            assert_eq!(r.status, 200, "{url}: {}", r.body);
            r.body["name"].clone()
        }
    };
    let both = json!({"en": "Rust", "de": "Rost"});
    assert_eq!(
        name("?lang=de").await,
        both,
        "not a language of the event yet"
    );
    assert_eq!(name("?lang=en").await, "Rust");

    let r = app.get(&tag_url, &c.read).await;
    assert_eq!(r.body["description"], json!({}), "{}", r.body);
    let r = app.get(&format!("{tag_url}?lang=en"), &c.read).await;
    assert_eq!(r.body["description"], "", "{}", r.body);

    let admin = app.admin_token("conf").await;
    let r = app
        .patch(
            "/api/v1/organizers/conf/events/conf2026/settings/",
            &admin,
            json!({"locales": ["en", "de"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(&format!("{}/", c.base), &c.read).await;
    assert_eq!(r.body["locales"], json!(["en", "de"]), "{}", r.body);
    assert_eq!(name("?lang=de").await, "Rost");
    assert_eq!(name("?lang=en").await, "Rust");
    assert_eq!(name("?lang=fr").await, both);
    assert_eq!(name("").await, both);
    let r = app
        .get(&format!("{}/tracks/?lang=de", c.base), &c.read)
        .await;
    assert_eq!(results(&r.body)[0]["name"], "Rost", "{}", r.body);
    assert_eq!(results(&r.body)[0]["description"], "", "{}", r.body);
    let r = app.get(&format!("{question_url}?lang=de"), &c.read).await;
    assert_eq!(r.body["question"], "Hemd?", "{}", r.body);
    let r = app.get(&format!("{tag_url}?lang=de"), &c.read).await;
    assert_eq!(
        r.body["description"], "",
        "an empty text in a language of the event: {}",
        r.body
    );
}

#[tokio::test]
async fn every_talk_path_answers_with_and_without_its_trailing_slash() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "Talk"})).await);
    let track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": "Rust", "color": "#aa0000"}),
        )
        .await,
    );
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "rust"})).await);
    let question = create(
        &app,
        &c,
        "questions",
        json!({"question": "Level?", "variant": "choices", "target": "submission",
               "options": [{"answer": "Beginner"}]}),
    )
    .await;
    let option = question["options"][0].as_i64().expect("an option");
    let question = id_of(&question);
    let code = code_of(
        &create(
            &app,
            &c,
            "submissions",
            json!({"title": "Slashes", "submission_type": kind, "track": track}),
        )
        .await,
    );
    let r = app
        .post(
            &format!("{}/submissions/{code}/add-speaker/", c.base),
            &c.write,
            json!({"email": "ann@example.org", "name": "Ann"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let speaker = r.body["speakers"][0].as_str().expect("a code").to_owned();
    let answer = id_of(
        &create(
            &app,
            &c,
            "answers",
            json!({"question": question, "submission": code, "answer": "Beginner", "options": [option]}),
        )
        .await,
    );

    let b = &c.base;
    let mut paths = vec!["/api".to_owned(), "/api/events".to_owned(), b.clone()];
    for (list, one) in [
        ("tags", tag.to_string()),
        ("tracks", track.to_string()),
        ("submission-types", kind.to_string()),
        ("questions", question.to_string()),
        ("question-options", option.to_string()),
        ("answers", answer.to_string()),
        ("speakers", speaker.clone()),
        ("submissions", code.clone()),
    ] {
        paths.push(format!("{b}/{list}"));
        paths.push(format!("{b}/{list}/{one}"));
        paths.push(format!("{b}/{list}/{one}/log"));
    }
    for path in &paths {
        let bare = app.get(path, &c.read).await;
        let slashed = app.get(&format!("{path}/"), &c.read).await;
        assert_eq!(bare.status, 200, "{path}: {}", bare.body);
        assert_eq!(slashed.status, 200, "{path}/: {}", slashed.body);
        assert_eq!(bare.body, slashed.body, "{path}");
    }

    let r = app
        .post(&format!("{b}/tags"), &c.write, json!({"tag": "bare"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let bare_tag = format!("{b}/tags/{}", id_of(&r.body));
    let r = app
        .patch(&bare_tag, &c.write, json!({"color": "#123456"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .put(&bare_tag, &c.write, json!({"tag": "still bare"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.delete(&bare_tag, &c.write).await.status, 204);
    let r = app
        .post(
            &format!("{b}/submissions/{code}/accept"),
            &c.write,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["state"], "accepted");
    let auth = format!("Token {}", c.write);
    let r = app
        .raw(
            Method::POST,
            "/api/upload",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/pdf"),
                ("Content-Disposition", "attachment; filename=\"a.pdf\""),
            ],
            PDF.to_vec(),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn each_object_has_its_own_activity_log_even_where_ids_coincide() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tag = id_of(&create(&app, &c, "tags", json!({"tag": "one"})).await);
    let track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": "One", "color": "#aa0000"}),
        )
        .await,
    );
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "One"})).await);
    let question = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": "One?", "variant": "string"}),
        )
        .await,
    );
    assert!(
        tag == track && track == kind && kind == question,
        "the first object of each kind shares its ID: {tag} {track} {kind} {question}"
    );
    let second_tag = id_of(&create(&app, &c, "tags", json!({"tag": "two"})).await);
    let b = &c.base;
    for (path, body) in [
        (format!("{b}/tags/{tag}/"), json!({"color": "#111111"})),
        (format!("{b}/tags/{tag}/"), json!({"color": "#222222"})),
        (format!("{b}/tracks/{track}/"), json!({"color": "#333333"})),
    ] {
        let r = app.patch(&path, &c.write, body).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
    for (path, kind_name, expected) in [
        (
            format!("tags/{tag}"),
            "tag",
            vec!["update", "update", "create"],
        ),
        (format!("tags/{second_tag}"), "tag", vec!["create"]),
        (format!("tracks/{track}"), "track", vec!["update", "create"]),
        (
            format!("submission-types/{kind}"),
            "submission_type",
            vec!["create"],
        ),
        (format!("questions/{question}"), "question", vec!["create"]),
    ] {
        let r = app.get(&format!("{b}/{path}/log/"), &c.read).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        for field in ["count", "next", "previous", "results"] {
            assert!(r.body.get(field).is_some(), "{path}: {field}: {}", r.body);
        }
        let got: Vec<String> = results(&r.body)
            .iter()
            .map(|e| e["action_type"].as_str().expect("a string").to_owned())
            .collect();
        let want: Vec<String> = expected
            .iter()
            .map(|a| format!("tessera.{kind_name}.{a}"))
            .collect();
        assert_eq!(got, want, "{path}");
        assert_eq!(r.body["count"], expected.len(), "{path}");
    }

    // An object of another event is no object here, whatever its ID.
    let (other_org, _) = talk_event(&app, "other", "other2026", true).await;
    let (them, _) = talk_user(
        &app,
        "them@example.org",
        other_org,
        &[
            Permission::ChangeSubmissions,
            Permission::ChangeEventSettings,
        ],
    )
    .await;
    let theirs = user_token(&app, them, &Endpoints::all_write(), None).await;
    let r = app
        .post(
            "/api/events/other2026/tags/",
            &theirs,
            json!({"tag": "theirs"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let foreign = id_of(&r.body);
    let r = app.get(&format!("{b}/tags/{foreign}/log/"), &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .get(
            &format!("/api/events/other2026/tags/{foreign}/log/"),
            &theirs,
        )
        .await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
}

#[tokio::test]
async fn expansion_goes_three_levels_deep_never_back_to_a_kind_on_its_path_and_a_bad_path_anywhere_is_400()
 {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "Talk"})).await);
    let track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": "Rust", "color": "#aa0000"}),
        )
        .await,
    );
    let question = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": "Level?", "variant": "string", "target": "submission", "tracks": [track]}),
        )
        .await,
    );
    let code = code_of(
        &create(
            &app,
            &c,
            "submissions",
            json!({"title": "Deep", "submission_type": kind, "track": track}),
        )
        .await,
    );
    let r = app
        .post(
            &format!("{}/submissions/{code}/add-speaker/", c.base),
            &c.write,
            json!({"email": "deep@example.org", "name": "Deep"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    create(
        &app,
        &c,
        "answers",
        json!({"question": question, "submission": code, "answer": "High"}),
    )
    .await;
    let one = format!("{}/submissions/{code}/", c.base);
    let r = app
        .get(
            &format!("{one}?expand=speakers.answers,track&lang=en"),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["track"]["name"], "Rust", "{}", r.body);
    assert!(r.body["speakers"][0]["answers"].is_array(), "{}", r.body);
    assert_eq!(
        r.body["submission_type"], kind,
        "only what is asked is expanded"
    );
    let r = app
        .get(
            &format!("{}/submissions/?expand=answers.question.tracks", c.base),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        results(&r.body)[0]["answers"][0]["question"]["tracks"][0]["id"],
        track,
        "{}",
        r.body
    );
    for bad in [
        "speakers.submissions.track.nope",
        "speakers.submissions",
        "speakers.submissions.track",
        "speakers.submissions.speakers.answers",
        "answers.person.submissions",
        "answers.question.tracks.id",
        "speakers..submissions",
        "answers.question.answers",
    ] {
        let r = app.get(&format!("{one}?expand={bad}"), &c.read).await;
        assert_refused(&r, "expand", bad);
    }
}

/// Three sessions of two speakers each, with a track.
async fn three_sessions_of_two(app: &TestApp, c: &Conference) {
    let kind = id_of(&create(app, c, "submission-types", json!({"name": "Talk"})).await);
    let track = id_of(
        &create(
            app,
            c,
            "tracks",
            json!({"name": "Rust", "color": "#aa0000"}),
        )
        .await,
    );
    for n in 0..3 {
        let body =
            json!({"title": format!("Session {n}"), "submission_type": kind, "track": track});
        let code = code_of(&create(app, c, "submissions", body).await);
        for who in ["a", "b"] {
            let r = app
                .post(
                    &format!("{}/submissions/{code}/add-speaker/", c.base),
                    &c.write,
                    json!({"email": format!("{who}{n}@example.org"), "name": format!("{who} {n}")}),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
        }
    }
}

#[tokio::test]
async fn an_expansion_building_more_objects_than_its_budget_is_400_and_one_within_it_answers() {
    let app = TestApp::spawn_with(|config| config.expand_max_objects = 12).await;
    let c = conference(&app).await;
    three_sessions_of_two(&app, &c).await;
    // Six speakers, three tracks and three session types: twelve objects, the whole budget.
    let r = app
        .get(
            &format!(
                "{}/submissions/?expand=speakers,track,submission_type",
                c.base
            ),
            &c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        results(&r.body)[2]["speakers"][1]["name"].is_string(),
        "{}",
        r.body
    );
    let speakers = format!("{}/speakers/", c.base);
    let r = app
        .get(&format!("{speakers}?expand=submissions"), &c.read)
        .await;
    assert_eq!(r.status, 200, "six sessions: {}", r.body);
    // Three sessions loaded with their tracks (3 + 3), but each of the six copies carries its
    // track: 6 + 3 + 6 objects built, over the budget.
    let r = app
        .get(&format!("{speakers}?expand=submissions.track"), &c.read)
        .await;
    assert_refused(&r, "expand", "copies count what is inside them");
}

#[tokio::test]
async fn a_token_expands_only_the_kinds_of_the_endpoints_it_may_read() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    three_sessions_of_two(&app, &c).await;
    let only_submissions = Endpoints(
        [(
            "submissions".to_owned(),
            vec![Action::List, Action::Retrieve],
        )]
        .into_iter()
        .collect(),
    );
    let token = user_token(&app, c.orga_user, &only_submissions, None).await;
    let list = format!("{}/submissions/", c.base);
    let r = app.get(&list, &token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(results(&r.body)[0]["speakers"][0].is_string(), "{}", r.body);
    for field in ["speakers", "track", "answers", "slots.room"] {
        let r = app.get(&format!("{list}?expand={field}"), &token).await;
        assert_eq!(r.status, 403, "{field}: {}", r.body);
        assert!(
            !r.body.to_string().contains("@example.org"),
            "{field}: {}",
            r.body
        );
    }
    let r = app.get(&format!("{list}?expand=speakers"), &c.read).await;
    assert_eq!(
        r.status, 200,
        "a token for every endpoint expands: {}",
        r.body
    );
}

#[tokio::test]
async fn expanded_lists_of_speakers_and_question_options_cost_the_same_queries_for_one_or_three() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "Talk"})).await);
    let track = id_of(
        &create(
            &app,
            &c,
            "tracks",
            json!({"name": "Rust", "color": "#aa0000"}),
        )
        .await,
    );
    let shirt = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": "Shirt?", "variant": "string", "target": "speaker"}),
        )
        .await,
    );
    let speakers = format!(
        "{}/speakers/?expand=submissions.track,submissions.submission_type,submissions.tags,answers.question",
        c.base
    );
    let options = format!(
        "{}/question-options/?expand=question.tracks,question.submission_types",
        c.base
    );
    // The token's first use pins its version and marks it used: not part of a listing.
    assert_eq!(app.get(&speakers, &c.read).await.status, 200);
    let add = |n: usize| {
        let app = &app;
        let c = &c;
        async move {
            let code = code_of(
                &create(
                    app,
                    c,
                    "submissions",
                    json!({"title": format!("Talk {n}"), "submission_type": kind, "track": track}),
                )
                .await,
            );
            let r = app
                .post(
                    &format!("{}/submissions/{code}/add-speaker/", c.base),
                    &c.write,
                    json!({"email": format!("s{n}@example.org"), "name": format!("S{n}")}),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
            let speaker = r.body["speakers"][0].as_str().expect("a code").to_owned();
            create(
                app,
                c,
                "answers",
                json!({"question": shirt, "person": speaker, "answer": "L"}),
            )
            .await;
            create(
                app,
                c,
                "questions",
                json!({"question": format!("Choice {n}?"), "variant": "choices",
                       "tracks": [track], "submission_types": [kind],
                       "options": [{"answer": format!("Option {n}")}]}),
            )
            .await;
        }
    };
    let measure = |url: String, expected: usize| {
        let app = &app;
        let token = c.read.clone();
        async move {
            let (r, n) = tessera::db::count_queries(app.get(&url, &token)).await;
            assert_eq!(r.status, 200, "{url}: {}", r.body);
            assert_eq!(results(&r.body).len(), expected, "{url}: {}", r.body);
            (r, n)
        }
    };
    add(1).await;
    let (_, speakers_one) = measure(speakers.clone(), 1).await;
    let (_, options_one) = measure(options.clone(), 1).await;
    add(2).await;
    add(3).await;
    let (r, speakers_three) = measure(speakers.clone(), 3).await;
    for s in results(&r.body) {
        assert_eq!(s["submissions"][0]["track"]["id"], track, "{s}");
        assert_eq!(s["submissions"][0]["submission_type"]["id"], kind, "{s}");
        assert_eq!(s["answers"][0]["question"]["id"], shirt, "{s}");
    }
    let (r, options_three) = measure(options.clone(), 3).await;
    for o in results(&r.body) {
        assert_eq!(o["question"]["tracks"][0]["id"], track, "{o}");
        assert_eq!(o["question"]["submission_types"][0]["id"], kind, "{o}");
    }
    assert!(speakers_one > 0 && options_one > 0);
    assert_eq!(
        speakers_one, speakers_three,
        "speakers: {speakers_one} queries for one, {speakers_three} for three"
    );
    assert_eq!(
        options_one, options_three,
        "options: {options_one} queries for one, {options_three} for three"
    );
}

#[tokio::test]
async fn the_upload_takes_ten_mebibytes_by_default_and_not_a_byte_more() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let mut body = vec![b'a'; 10 * 1024 * 1024];
    let r = send_upload(&app, &c.write, "text/plain", "big.txt", &body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    body.push(b'a');
    let r = send_upload(&app, &c.write, "text/plain", "bigger.txt", &body).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body["detail"].is_string(), "{}", r.body);
    assert_eq!(
        count(&app, "SELECT COUNT(*) AS n FROM files", vec![]).await,
        1
    );
}

#[tokio::test]
async fn another_users_or_an_expired_upload_is_refused_by_every_field_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let kind = id_of(&create(&app, &c, "submission-types", json!({"name": "Talk"})).await);
    let code = code_of(
        &create(
            &app,
            &c,
            "submissions",
            json!({"title": "Files", "submission_type": kind}),
        )
        .await,
    );
    let speaker = code_of(&create(&app, &c, "speakers", json!({"name": "Ann"})).await);
    let slides = id_of(
        &create(
            &app,
            &c,
            "questions",
            json!({"question": "Slides", "variant": "file", "target": "submission"}),
        )
        .await,
    );
    let submission = format!("{}/submissions/{code}/", c.base);
    let person = format!("{}/speakers/{speaker}/", c.base);

    // The reviewer's uploads, an expired one of the organiser's, and one of a team token of
    // the ticketing side.
    let their_png = upload(&app, &c.reviewer, "image/png", "theirs.png", PNG).await;
    let their_pdf = upload(&app, &c.reviewer, "application/pdf", "theirs.pdf", PDF).await;
    let old_png = upload(&app, &c.write, "image/png", "old.png", PNG).await;
    let old_pdf = upload(&app, &c.write, "application/pdf", "old.pdf", PDF).await;
    for id in [&old_png, &old_pdf] {
        sql(
            &app,
            "UPDATE files SET expires = $1 WHERE id = $2",
            vec![
                (Utc::now() - Duration::seconds(1)).into(),
                id.trim_start_matches("file:").into(),
            ],
        )
        .await;
    }
    let team = app.admin_token("conf").await;
    let auth = format!("Token {team}");
    let r = app
        .raw(
            Method::POST,
            "/api/v1/upload",
            &[
                ("Authorization", &auth),
                ("Content-Type", "image/png"),
                ("Content-Disposition", "attachment; filename=\"team.png\""),
            ],
            PNG.to_vec(),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let team_png = r.body["id"].as_str().expect("a file ID").to_owned();

    for (png, pdf) in [
        (&their_png, &their_pdf),
        (&old_png, &old_pdf),
        (&team_png, &their_pdf),
    ] {
        let r = app
            .patch(&submission, &c.write, json!({"image": png}))
            .await;
        assert_refused(&r, "image", png);
        let r = app.patch(&person, &c.write, json!({"avatar": png})).await;
        assert_refused(&r, "avatar", png);
        let r = app
            .post(
                &format!("{submission}resources/"),
                &c.write,
                json!({"resource": pdf, "description": "Slides"}),
            )
            .await;
        assert_refused(&r, "resource", pdf);
        let r = app
            .post(
                &format!("{}/answers/", c.base),
                &c.write,
                json!({"question": slides, "submission": code, "answer": "slides.pdf", "answer_file": pdf}),
            )
            .await;
        assert_refused(&r, "answer_file", pdf);
    }
    let r = app.get(&submission, &c.read).await;
    assert_eq!(r.body["image"], Value::Null, "{}", r.body);
    assert_eq!(r.body["resources"], json!([]), "{}", r.body);
    assert_eq!(r.body["answers"], json!([]), "{}", r.body);
    assert_eq!(
        app.get(&person, &c.read).await.body["avatar_url"],
        Value::Null
    );
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) AS n FROM files WHERE expires IS NULL",
            vec![]
        )
        .await,
        0,
        "no upload was claimed"
    );

    // The organiser's own fresh upload is taken.
    let mine = upload(&app, &c.write, "image/png", "mine.png", PNG).await;
    let r = app.patch(&person, &c.write, json!({"avatar": mine})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["avatar_url"].is_string(), "{}", r.body);
}

#[tokio::test]
async fn the_document_gives_talk_operations_their_scheme_tags_and_version_headers() {
    let app = TestApp::spawn().await;
    let r = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(r.status, 200);
    let doc = &r.body;
    assert_eq!(
        doc["components"]["securitySchemes"]["UserTokenAuth"]["type"], "apiKey",
        "{}",
        doc["components"]["securitySchemes"]
    );
    let paths = doc["paths"].as_object().expect("paths");
    let mut talk = 0;
    for (path, item) in paths {
        let on_talk_side = path.starts_with("/api/") && !path.starts_with("/api/v1/");
        for (method, op) in item.as_object().expect("operations") {
            let name = format!("{method} {path}");
            // A device initializes without authentication (the token is in the body).
            let Some(security) = op["security"].as_array() else {
                assert_eq!(name, "post /api/v1/device/initialize", "{name}: security");
                continue;
            };
            let user_token = security.iter().any(|s| s.get("UserTokenAuth").is_some());
            if !on_talk_side {
                assert!(!user_token, "{name}: user tokens are for /api/ alone");
                continue;
            }
            talk += 1;
            assert!(user_token, "{name}: {security:?}");
            assert!(
                security.iter().any(|s| s == &json!({})),
                "{name}: anonymous callers are an alternative"
            );
            let tags = op["tags"].as_array().expect("tags");
            assert!(
                !tags.is_empty()
                    && tags
                        .iter()
                        .all(|t| t.as_str().is_some_and(|t| t.starts_with("Talk: "))),
                "{name}: {tags:?}"
            );
            let headers: BTreeSet<&str> = op["parameters"]
                .as_array()
                .expect("parameters")
                .iter()
                .filter(|p| p["in"] == "header")
                .filter_map(|p| p["name"].as_str())
                .collect();
            assert!(
                headers.contains("service-Version") && headers.contains("Pretalx-Version"),
                "{name}: {headers:?}"
            );
        }
    }
    assert!(
        paths.contains_key("/api/events/{event}/submissions/{code}/accept/"),
        "{:?}",
        paths
            .keys()
            .filter(|p| p.contains("accept"))
            .collect::<Vec<_>>()
    );
    assert!(talk > 50, "{talk} talk-side operations");
}

#[tokio::test]
async fn an_id_that_cannot_be_one_is_404_as_a_missing_object_is() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let b = &c.base;
    let r = app.get(&format!("{b}/tags/999999/"), &c.read).await;
    assert_eq!(r.status, 404, "a missing object: {}", r.body);
    for path in [
        "tags/abc/",
        "tags/abc/log/",
        "tags/99999999999999999999999/",
        "tracks/abc/",
        "submission-types/1.5/",
        "questions/abc/",
        "question-options/abc/",
        "answers/abc/",
    ] {
        let r = app.get(&format!("{b}/{path}"), &c.read).await;
        assert_eq!(r.status, 404, "{path}: {}", r.body);
        assert!(r.body["detail"].is_string(), "{path}: {}", r.body);
    }
    let r = app.delete(&format!("{b}/tags/abc/"), &c.write).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app
        .call(Method::GET, "/api/events/nowhere2026/tags/abc/", None, None)
        .await;
    assert_eq!(r.status, 404, "no such event: {}", r.body);
}
