use chrono::Utc;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::json;
use tessera::db::entities::event;
use tessera::domain::permissions::{Permission, PermissionSet};
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
    let token = app.admin_token("acme").await;

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
    let token = app.admin_token("acme").await;
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
    let token = app.admin_token("acme").await;
    let r = app.post(TEAMS, &token, json!({"all_events": "yes"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["name"][0].is_string());
    assert!(r.body["all_events"][0].is_string());
}

#[tokio::test]
async fn a_new_token_is_shown_once_and_works() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
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
    let mine = app.admin_token("acme").await;
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

/// A talk-side track of the event; gives its ID.
async fn add_track(app: &TestApp, organizer: &str, event: &str, name: &str) -> i64 {
    use sea_orm::ConnectionTrait;
    let event_id = {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        use tessera::db::entities::organizer;
        let org = organizer::Entity::find()
            .filter(organizer::Column::Slug.eq(organizer))
            .one(&app.db)
            .await
            .expect("query")
            .expect("organizer");
        event::Entity::find()
            .filter(event::Column::OrganizerId.eq(org.id))
            .filter(event::Column::Slug.eq(event))
            .one(&app.db)
            .await
            .expect("query")
            .expect("event")
            .id
    };
    let row = app
        .db
        .query_one_raw(sea_orm::Statement::from_sql_and_values(
            app.db.get_database_backend(),
            "INSERT INTO talk_tracks (event_id, name) VALUES ($1, $2) RETURNING id",
            [event_id.into(), json!({"en": name}).into()],
        ))
        .await
        .expect("insert")
        .expect("row");
    row.try_get("", "id").expect("id")
}

#[tokio::test]
async fn teams_have_the_talk_permissions_and_reviewer_limits() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "conf").await;
    let keynotes = add_track(&app, "acme", "conf", "Keynotes").await;
    let rust = add_track(&app, "acme", "conf", "Rust").await;
    let token = app.admin_token("acme").await;

    let r = app.post(TEAMS, &token, json!({"name": "Plain"})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["can_change_submissions"], false);
    assert_eq!(r.body["is_reviewer"], false);
    assert_eq!(r.body["force_hide_speaker_names"], false);
    assert_eq!(r.body["limit_tracks"], json!([]));

    let r = app
        .post(
            TEAMS,
            &token,
            json!({
                "name": "Reviewers",
                "all_events": true,
                "is_reviewer": true,
                "force_hide_speaker_names": true,
                "limit_tracks": [rust, keynotes, rust],
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["is_reviewer"], true);
    assert_eq!(r.body["can_change_submissions"], false);
    assert_eq!(r.body["force_hide_speaker_names"], true);
    assert_eq!(r.body["limit_tracks"], json!([keynotes, rust]));
    let id = r.body["id"].as_i64().expect("id");
    let one = format!("{TEAMS}{id}/");
    assert_eq!(app.get(&one, &token).await.body, r.body);

    let r = app
        .patch(
            &one,
            &token,
            json!({"limit_tracks": [rust], "can_change_submissions": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["limit_tracks"], json!([rust]));
    assert_eq!(r.body["can_change_submissions"], true);
    assert_eq!(r.body["is_reviewer"], true);
    assert_eq!(r.body["force_hide_speaker_names"], true);

    let r = app
        .patch(&one, &token, json!({"force_hide_speaker_names": false}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["force_hide_speaker_names"], false);
    assert_eq!(r.body["limit_tracks"], json!([rust]));

    let list = app.get(TEAMS, &token).await;
    let listed = list.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|t| t["id"] == id)
        .expect("listed")
        .clone();
    assert_eq!(listed["limit_tracks"], json!([rust]));
    assert_eq!(listed["can_change_submissions"], true);

    // PUT replaces everything: what it leaves out goes back to the defaults.
    let r = app
        .put(&one, &token, json!({"name": "Reset", "is_reviewer": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["limit_tracks"], json!([]));
    assert_eq!(r.body["can_change_submissions"], false);
    assert_eq!(r.body["is_reviewer"], true);
    let r = app
        .put(
            &one,
            &token,
            json!({"name": "Reset", "force_hide_speaker_names": true, "limit_tracks": [keynotes]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["force_hide_speaker_names"], true);
    assert_eq!(r.body["limit_tracks"], json!([keynotes]));
    assert_eq!(r.body["is_reviewer"], false);
}

#[tokio::test]
async fn a_team_cannot_be_limited_to_tracks_of_another_organizer_or_unknown_ones() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let other = app.organizer("other").await;
    add_event(&app, org, "conf").await;
    add_event(&app, other, "theirs").await;
    let ours = add_track(&app, "acme", "conf", "Ours").await;
    let theirs = add_track(&app, "other", "theirs", "Theirs").await;
    let token = app.admin_token("acme").await;

    for tracks in [
        json!([theirs]),
        json!([ours, 999_999]),
        json!([ours, theirs]),
    ] {
        let r = app
            .post(TEAMS, &token, json!({"name": "x", "limit_tracks": tracks}))
            .await;
        assert_eq!(r.status, 400, "{tracks}: {}", r.body);
        assert!(r.body["limit_tracks"][0].is_string(), "{}", r.body);
    }
    let r = app
        .post(TEAMS, &token, json!({"name": "x", "limit_tracks": [ours]}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let one = format!("{TEAMS}{}/", r.body["id"]);
    let r = app
        .patch(&one, &token, json!({"limit_tracks": [theirs]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        app.get(&one, &token).await.body["limit_tracks"],
        json!([ours])
    );
    let r = app
        .put(&one, &token, json!({"name": "x", "limit_tracks": ["one"]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn a_team_limited_to_one_event_grants_only_that_event_and_what_it_holds_there() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "conf").await;
    add_event(&app, org, "expo").await;
    let admin = app.admin_token("acme").await;
    let held = PermissionSet::from_iter([Permission::ChangeTeams, Permission::ViewOrders]);
    let limited = app.token_for("acme", Some(held), &["conf"]).await;
    let everything = json!({"name": "Everything", "all_events": true, "can_change_teams": true,
        "can_change_organizer_settings": true, "can_view_orders": true, "can_change_orders": true,
        "can_manage_gift_cards": true});
    let refused = [
        everything,
        json!({"name": "Expo", "all_events": false, "limit_events": ["expo"], "can_view_orders": true}),
        json!({"name": "More", "all_events": false, "limit_events": ["conf"], "can_change_orders": true}),
        json!({"name": "Cards", "all_events": false, "limit_events": [], "can_manage_gift_cards": true}),
    ];
    for body in refused {
        let r = app.post(TEAMS, &limited, body.clone()).await;
        assert_eq!(r.status, 403, "{body}: {}", r.body);
    }
    let r = app
        .post(TEAMS, &limited, json!({"name": "Desk", "all_events": false, "limit_events": ["conf"], "can_view_orders": true}))
        .await;
    assert_eq!(r.status, 201, "within its reach: {}", r.body);
    let desk = r.body["id"].as_i64().expect("an ID");
    let r = app
        .patch(
            &format!("{TEAMS}{desk}/"),
            &limited,
            json!({"all_events": true}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .post(
            &format!("{TEAMS}{desk}/tokens/"),
            &limited,
            json!({"name": "desk"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);

    let r = app
        .post(
            TEAMS,
            &admin,
            json!({"name": "Admins", "all_events": true, "can_change_orders": true}),
        )
        .await;
    let admins = r.body["id"].as_i64().expect("an ID");
    let r = app
        .post(
            &format!("{TEAMS}{admins}/tokens/"),
            &limited,
            json!({"name": "mine"}),
        )
        .await;
    assert_eq!(
        r.status, 403,
        "no token for a team beyond its reach: {}",
        r.body
    );
    let r = app
        .patch(
            &format!("{TEAMS}{admins}/"),
            &limited,
            json!({"name": "Taken"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        app.delete(&format!("{TEAMS}{admins}/"), &limited)
            .await
            .status,
        403
    );
    assert_eq!(
        app.get(&format!("{TEAMS}{admins}/"), &admin).await.body["name"],
        "Admins"
    );
}

#[tokio::test]
async fn teams_show_and_take_pretix_2026s_permission_names_beside_the_flags() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let r = app
        .post(
            "/api/v1/organizers/acme/teams/",
            &admin,
            json!({"name": "Desk", "all_events": true, "can_view_orders": true,
                   "can_change_orders": true, "can_manage_gift_cards": true}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["all_event_permissions"], false);
    assert_eq!(
        r.body["limit_event_permissions"],
        json!(["event.orders:read", "event.orders:write", "event:cancel"])
    );
    assert_eq!(
        r.body["limit_organizer_permissions"],
        json!(["organizer.giftcards:read", "organizer.giftcards:write"])
    );
    let team = format!("/api/v1/organizers/acme/teams/{}/", r.body["id"]);

    let r = app
        .patch(
            &team,
            &admin,
            json!({"limit_event_permissions": ["event.orders:read", "event.orders:checkin"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["can_view_orders"], true);
    assert_eq!(r.body["can_change_orders"], false);
    assert_eq!(r.body["can_checkin_orders"], true);
    assert_eq!(
        r.body["can_manage_gift_cards"], true,
        "organizer level untouched"
    );

    let r = app
        .patch(
            &team,
            &admin,
            json!({"all_event_permissions": true, "limit_event_permissions": []}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["all_event_permissions"], true);
    assert_eq!(r.body["limit_event_permissions"], json!([]));
    assert_eq!(r.body["can_change_event_settings"], true);

    let r = app
        .patch(
            &team,
            &admin,
            json!({"limit_event_permissions": ["event.items:write"]}),
        )
        .await;
    assert_eq!(r.status, 400, "all and a limit at once");
    assert_eq!(
        r.body["non_field_errors"][0],
        "Do not set both limit_event_permissions and all_event_permissions."
    );
    let r = app
        .patch(
            &team,
            &admin,
            json!({"can_view_orders": true, "all_organizer_permissions": true}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["non_field_errors"][0],
        "You cannot set deprecated and current permission attributes at the same time."
    );
    let r = app
        .patch(
            &team,
            &admin,
            json!({"limit_organizer_permissions": ["organizer.nothing:write"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["limit_organizer_permissions"][0].is_string());

    let limited = app
        .token("acme", &["can_change_teams", "can_view_orders"])
        .await;
    let r = app
        .post(
            "/api/v1/organizers/acme/teams/",
            &limited,
            json!({"name": "Sneaky", "all_events": true, "all_organizer_permissions": true}),
        )
        .await;
    assert_eq!(r.status, 403, "names grant no more than flags: {}", r.body);
}
