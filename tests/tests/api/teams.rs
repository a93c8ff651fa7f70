use chrono::Utc;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::json;
use tessera::db::entities::event;
use tessera_tests::TestApp;

const TEAMS: &str = "/api/v1/organizers/acme/teams/";

async fn add_event(app: &TestApp, organizer_id: i64, slug: &str) {
    event::ActiveModel {
        organizer_id: Set(organizer_id),
        slug: Set(slug.into()),
        name: Set(json!({"en": slug})),
        currency: Set("EUR".into()),
        date_from: Set(Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("event");
}

#[tokio::test]
async fn a_team_is_created_shown_changed_and_deleted() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "conf").await;
    let token = app.token("acme", &["can_change_teams"]).await;

    let r = app
        .post(TEAMS, &token, json!({"name": "Box office", "all_events": false, "limit_events": ["conf"], "can_view_orders": true}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], "Box office");
    assert_eq!(r.body["limit_events"], json!(["conf"]));
    assert_eq!(r.body["can_view_orders"], true);
    assert_eq!(r.body["can_change_orders"], false);
    let id = r.body["id"].as_i64().expect("id");

    let r = app
        .patch(
            &format!("{TEAMS}{id}/"),
            &token,
            json!({"can_change_orders": true, "name": "Desk"}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"], "Desk");
    assert_eq!(r.body["can_change_orders"], true);
    assert_eq!(r.body["can_view_orders"], true);
    assert_eq!(r.body["limit_events"], json!(["conf"]));

    let r = app
        .put(
            &format!("{TEAMS}{id}/"),
            &token,
            json!({"name": "Reset", "all_events": true}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["can_view_orders"], false);
    assert_eq!(r.body["limit_events"], json!([]));

    assert_eq!(
        app.get(&format!("{TEAMS}{id}/"), &token).await.body["name"],
        "Reset"
    );
    assert_eq!(
        app.delete(&format!("{TEAMS}{id}/"), &token).await.status,
        204
    );
    assert_eq!(app.get(&format!("{TEAMS}{id}/"), &token).await.status, 403);
}

#[tokio::test]
async fn an_event_of_another_organizer_cannot_be_given_to_a_team() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let other = app.organizer("other").await;
    add_event(&app, other, "theirs").await;
    let token = app.token("acme", &["can_change_teams"]).await;
    let r = app
        .post(
            TEAMS,
            &token,
            json!({"name": "x", "limit_events": ["theirs"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["limit_events"][0].is_string());
}

#[tokio::test]
async fn a_team_without_a_name_is_400() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_change_teams"]).await;
    let r = app.post(TEAMS, &token, json!({"all_events": "yes"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["name"][0].is_string());
    assert!(r.body["all_events"][0].is_string());
}

#[tokio::test]
async fn a_new_token_is_shown_once_and_works() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_change_teams"]).await;
    let team = app
        .post(
            TEAMS,
            &token,
            json!({"name": "Gifts", "can_manage_gift_cards": true}),
        )
        .await;
    let team = team.body["id"].as_i64().expect("team");

    let created = app
        .post(
            &format!("{TEAMS}{team}/tokens/"),
            &token,
            json!({"name": "shop"}),
        )
        .await;
    assert_eq!(created.status, 201);
    let secret = created.body["token"].as_str().expect("token").to_owned();
    assert!(secret.len() >= 32);
    assert_eq!(created.body["active"], true);

    let list = app.get(&format!("{TEAMS}{team}/tokens/"), &token).await;
    assert_eq!(list.body["count"], 1);
    assert_eq!(list.body["results"][0]["name"], "shop");
    assert!(list.body["results"][0].get("token").is_none());
    let id = created.body["id"].as_i64().expect("id");
    assert!(
        app.get(&format!("{TEAMS}{team}/tokens/{id}/"), &token)
            .await
            .body
            .get("token")
            .is_none()
    );

    assert_eq!(
        app.get("/api/v1/organizers/acme/giftcards/", &secret)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn tokens_are_stored_hashed() {
    use sea_orm::EntityTrait;
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let rows = tessera::db::entities::team_token::Entity::find()
        .all(&app.db)
        .await
        .expect("rows");
    assert!(
        rows.iter()
            .all(|r| r.token_hash != token && r.token_hash.len() == 64)
    );
    assert!(
        rows.iter()
            .any(|r| r.token_hash == tessera::domain::tokens::hash(&token))
    );
}

#[tokio::test]
async fn team_management_needs_can_change_teams() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app
        .token(
            "acme",
            &["can_manage_gift_cards", "can_change_event_settings"],
        )
        .await;
    assert_eq!(app.get(TEAMS, &token).await.status, 403);
    assert_eq!(
        app.post(TEAMS, &token, json!({"name": "x"})).await.status,
        403
    );
}

#[tokio::test]
async fn another_organizers_team_is_403() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.organizer("other").await;
    let theirs = app.token("other", &["can_change_teams"]).await;
    let mine = app.token("acme", &["can_change_teams"]).await;
    let id = app
        .get("/api/v1/organizers/other/teams/", &theirs)
        .await
        .body["results"][0]["id"]
        .as_i64()
        .expect("team");
    assert_eq!(app.get(&format!("{TEAMS}{id}/"), &mine).await.status, 403);
    assert_eq!(
        app.get(&format!("/api/v1/organizers/other/teams/{id}/"), &mine)
            .await
            .status,
        403
    );
    assert_eq!(
        app.post(
            &format!("{TEAMS}{id}/tokens/"),
            &mine,
            json!({"name": "steal"})
        )
        .await
        .status,
        403
    );
}
