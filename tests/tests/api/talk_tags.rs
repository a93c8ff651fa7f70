//! Tags of the talk side, and the conventions every talk-side resource shares: tokens,
//! versions, search, order, pages, languages, the activity log.

use poem::http::Method;
use serde_json::json;
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::Endpoints;
use tessera_tests::TestApp;
use tessera_tests::talk::{conference, results, rows, talk_event, talk_user, user_token};

#[tokio::test]
async fn the_talk_root_names_the_current_api_version() {
    let app = TestApp::spawn().await;
    let r = app.call(Method::GET, "/api/", None, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["api_version"], "v2");
    assert!(
        r.body["urls"]["events"]
            .as_str()
            .expect("present")
            .ends_with("/api/events/")
    );
}

#[tokio::test]
async fn organisers_create_change_list_and_delete_tags_with_a_log() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags/", c.base);
    let r = app
        .post(&tags, &c.write, json!({"tag": "rust", "color": "#aa0000"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_i64().expect("present");
    assert_eq!(r.body["description"], json!({}));
    let r = app.post(&tags, &c.write, json!({"tag": "rust"})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["tag"].is_array());
    let one = format!("{}/tags/{id}", c.base);
    let r = app.patch(&one, &c.write, json!({"is_public": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["is_public"], true);
    assert_eq!(r.body["tag"], "rust");
    let r = app.get(&format!("{one}/log/"), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 2);
    assert_eq!(results(&r.body)[0]["action_type"], "tessera.tag.update");
    assert_eq!(
        results(&r.body)[0]["person"]["name"],
        "User orga@example.org"
    );
    let r = app.get(&tags, &c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1);
    let r = app.delete(&one, &c.reviewer).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.delete(&one, &c.write).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = app.get(&one, &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn lists_search_order_page_and_flatten_languages() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags", c.base);
    for t in ["beta", "alpha", "Gamma", "delta"] {
        let r = app.post(&tags, &c.write, json!({"tag": t, "description": {"en": format!("{t} en"), "de": format!("{t} de")}})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = app.get(&format!("{tags}?q=GAM"), &c.read).await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["tag"], "Gamma");
    let r = app.get(&format!("{tags}?o=-tag"), &c.read).await;
    let names: Vec<_> = results(&r.body)
        .iter()
        .map(|t| t["tag"].as_str().expect("present").to_owned())
        .collect();
    assert_eq!(names, ["delta", "beta", "alpha", "Gamma"]);
    let r = app
        .get(&format!("{tags}?page_size=3&page=last"), &c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(results(&r.body).len(), 1);
    assert!(r.body["next"].is_null());
    assert!(
        r.body["previous"]
            .as_str()
            .expect("present")
            .starts_with("http")
    );
    let r = app.get(&format!("{tags}?page_size=100"), &c.read).await;
    assert_eq!(results(&r.body).len(), 4);
    let r = app.get(&format!("{tags}?lang=en"), &c.read).await;
    assert_eq!(results(&r.body)[0]["description"], "beta en");
    let r = app.get(&format!("{tags}?lang=fr"), &c.read).await;
    assert_eq!(results(&r.body)[0]["description"]["de"], "beta de");
    let r = app.get(&format!("{tags}?page=9"), &c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn tokens_act_within_their_endpoints_actions_and_events() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags/", c.base);
    let r = app.post(&tags, &c.read, json!({"tag": "x"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let mut only_tracks = Endpoints::default();
    only_tracks.0.insert(
        "tracks".into(),
        vec![tessera::domain::talk::endpoints::Action::List],
    );
    let narrow = user_token(&app, c.orga_user, &only_tracks, None).await;
    let r = app.get(&tags, &narrow).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let (_, other) = talk_event(&app, "other", "other2026", false).await;
    let elsewhere = user_token(&app, c.orga_user, &Endpoints::all_read(), Some(&[other])).await;
    let r = app.get(&tags, &elsewhere).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app.call(Method::GET, &tags, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    // Under a private event anonymous callers are 401, as pretalx answers; under none, 404.
    let r = app
        .call(Method::GET, "/api/events/other2026/tags/", None, None)
        .await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = app
        .call(Method::GET, "/api/events/nowhere2026/tags/", None, None)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app.get(&tags, "not-a-token").await;
    assert_eq!(r.status, 401, "{}", r.body);
    sql_expire(&app, &c.read).await;
    let r = app.get(&tags, &c.read).await;
    assert_eq!(r.status, 401, "{}", r.body);
}

async fn sql_expire(app: &TestApp, token: &str) {
    tessera_tests::talk::sql(
        app,
        "UPDATE user_api_tokens SET expires = $1 WHERE token_hash = $2",
        vec![
            (chrono::Utc::now() - chrono::Duration::minutes(1)).into(),
            tessera::domain::tokens::hash(token).into(),
        ],
    )
    .await;
}

#[tokio::test]
async fn team_tokens_and_user_tokens_stay_on_their_own_side() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let team_token = app.admin_token("conf").await;
    let r = app.get(&format!("{}/tags/", c.base), &team_token).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = app.get("/api/v1/organizers/", &c.write).await;
    assert_eq!(r.status, 401, "{}", r.body);
}

#[tokio::test]
async fn a_token_is_fixed_to_its_first_version_and_a_header_overrides_it_once() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let tags = format!("{}/tags/", c.base);
    let bad = app
        .raw(
            Method::GET,
            &tags,
            &[
                ("Authorization", &format!("Token {}", c.read)),
                ("Pretalx-Version", "v9"),
            ],
            vec![],
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body["detail"].is_string());
    assert_eq!(version(&app, c.read.clone()).await, None);
    let r = app
        .raw(
            Method::GET,
            &tags,
            &[
                ("Authorization", &format!("Token {}", c.read)),
                ("service-Version", "v1"),
            ],
            vec![],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(version(&app, c.read.clone()).await.as_deref(), Some("v1"));
    let r = app.get(&tags, &c.write).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(version(&app, c.write.clone()).await.as_deref(), Some("v2"));
    let r = app
        .raw(
            Method::GET,
            &tags,
            &[
                ("Authorization", &format!("Token {}", c.write)),
                ("Pretalx-Version", "v1"),
            ],
            vec![],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(version(&app, c.write.clone()).await.as_deref(), Some("v2"));
    let r = app
        .raw(
            Method::GET,
            &tags,
            &[
                ("Authorization", &format!("Token {}", c.write)),
                ("Pretalx-Version", "LEGACY"),
            ],
            vec![],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("present")
            .contains("/orga/me")
    );
}

async fn version(app: &TestApp, token: String) -> Option<String> {
    let r = rows(
        app,
        "SELECT version FROM user_api_tokens WHERE token_hash = $1",
        vec![tessera::domain::tokens::hash(&token).into()],
    )
    .await;
    r[0].try_get::<Option<String>>("", "version")
        .expect("present")
}

#[tokio::test]
async fn reviewers_whose_team_hides_speaker_names_cannot_use_the_api() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    let (user, team) =
        talk_user(&app, "anon@example.org", c.organizer, &[Permission::Review]).await;
    tessera_tests::talk::sql(
        &app,
        "UPDATE teams SET force_hide_speaker_names = $1 WHERE id = $2",
        vec![true.into(), team.into()],
    )
    .await;
    let token = user_token(&app, user, &Endpoints::all_read(), None).await;
    let r = app.get(&format!("{}/tags/", c.base), &token).await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn the_event_list_shows_public_talk_events_and_those_of_the_users_teams() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    talk_event(&app, "hidden", "secret2026", false).await;
    let r = app.call(Method::GET, "/api/events/", None, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slugs: Vec<_> = r
        .body
        .as_array()
        .expect("present")
        .iter()
        .map(|e| e["slug"].as_str().expect("present").to_owned())
        .collect();
    assert_eq!(slugs, ["conf2026"]);
    let r = app.get(&format!("{}/", c.base), &c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["locales"], json!(["en"]));
    let r = app
        .call(Method::GET, "/api/events/secret2026/", None, None)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
}
