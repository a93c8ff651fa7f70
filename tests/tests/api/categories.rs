use poem::http::Method;
use serde_json::json;
use tessera_tests::TestApp;

use crate::config_support::{add_event, add_item, item_row};

const CATEGORIES: &str = "/api/v1/organizers/acme/events/conf/categories/";

async fn app_with_event() -> (TestApp, i64) {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf", false).await;
    (app, event)
}

#[tokio::test]
async fn a_category_is_created_shown_changed_replaced_and_deleted() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_items"]).await;

    let r = app
        .post(
            CATEGORIES,
            &token,
            json!({"name": {"en": "Tickets", "de": "Karten"}, "internal_name": "main", "description": {"en": "All *tickets*"}, "position": 3}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "Tickets", "de": "Karten"}));
    assert_eq!(r.body["internal_name"], "main");
    assert_eq!(r.body["description"], json!({"en": "All *tickets*"}));
    assert_eq!(r.body["position"], 3);
    assert_eq!(r.body["is_addon"], false);
    let id = r.body["id"].as_i64().expect("id");
    let one = format!("{CATEGORIES}{id}/");

    let r = app
        .patch(
            &one,
            &token,
            json!({"is_addon": true, "internal_name": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["is_addon"], true);
    assert_eq!(r.body["internal_name"], json!(null));
    assert_eq!(r.body["position"], 3);
    assert_eq!(r.body["name"]["de"], "Karten");

    let r = app
        .put(&one, &token, json!({"name": {"en": "Extras"}}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "Extras"}));
    assert_eq!(r.body["description"], json!(null));
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["is_addon"], false);

    let r = app.get(&one, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"]["en"], "Extras");

    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&one, &token).await.status, 403);
    assert_eq!(app.get(CATEGORIES, &token).await.body["count"], 0);
}

#[tokio::test]
async fn a_category_without_a_name_is_400() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_items"]).await;
    let r = app
        .post(CATEGORIES, &token, json!({"position": "first"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["name"][0].is_string());
    assert!(r.body["position"][0].is_string());
}

#[tokio::test]
async fn categories_are_listed_by_position_then_id_and_filtered_by_is_addon() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_items"]).await;
    for (name, position, is_addon) in [("c", 2, false), ("a", 1, true), ("b", 1, false)] {
        let r = app
            .post(
                CATEGORIES,
                &token,
                json!({"name": {"en": name}, "position": position, "is_addon": is_addon}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let names = |body: &serde_json::Value| -> Vec<String> {
        body["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|c| c["name"]["en"].as_str().expect("name").to_owned())
            .collect()
    };
    let r = app.get(CATEGORIES, &token).await;
    assert_eq!(r.body["count"], 3);
    assert_eq!(names(&r.body), ["a", "b", "c"]);
    let r = app
        .get(&format!("{CATEGORIES}?is_addon=true"), &token)
        .await;
    assert_eq!(names(&r.body), ["a"]);
    let r = app
        .get(&format!("{CATEGORIES}?is_addon=false"), &token)
        .await;
    assert_eq!(names(&r.body), ["b", "c"]);
}

#[tokio::test]
async fn a_category_name_is_a_plain_string_in_the_language_asked_for() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_items"]).await;
    let r = app
        .post(
            CATEGORIES,
            &token,
            json!({"name": {"en": "Tickets", "de": "Karten"}}),
        )
        .await;
    let id = r.body["id"].as_i64().expect("id");
    let r = app.get(&format!("{CATEGORIES}{id}/?lang=de"), &token).await;
    assert_eq!(r.body["name"], "Karten");
    let r = app.get(&format!("{CATEGORIES}?lang=de"), &token).await;
    assert_eq!(r.body["results"][0]["name"], "Karten");
    let r = app.get(&format!("{CATEGORIES}?lang=fr"), &token).await;
    assert_eq!(r.body["results"][0]["name"], "Tickets");
}

#[tokio::test]
async fn deleting_a_category_leaves_its_items_without_a_category() {
    let (app, event) = app_with_event().await;
    let token = app.token("acme", &["can_change_items"]).await;
    let doomed = app
        .post(CATEGORIES, &token, json!({"name": {"en": "Old"}}))
        .await
        .body["id"]
        .as_i64()
        .expect("id");
    let kept = app
        .post(CATEGORIES, &token, json!({"name": {"en": "Kept"}}))
        .await
        .body["id"]
        .as_i64()
        .expect("id");
    let orphan = add_item(&app, event, Some(doomed), None).await;
    let other = add_item(&app, event, Some(kept), None).await;

    let r = app.delete(&format!("{CATEGORIES}{doomed}/"), &token).await;
    assert_eq!(r.status, 204);

    let orphan = item_row(&app, orphan).await;
    assert_eq!(orphan.category_id, None);
    assert_eq!(item_row(&app, other).await.category_id, Some(kept));
}

#[tokio::test]
async fn reading_needs_any_access_and_writing_needs_can_change_items() {
    let (app, _) = app_with_event().await;
    let writer = app.token("acme", &["can_change_items"]).await;
    let reader = app.token("acme", &["can_view_orders"]).await;
    let settings = app.token("acme", &["can_change_event_settings"]).await;
    let id = app
        .post(CATEGORIES, &writer, json!({"name": {"en": "A"}}))
        .await
        .body["id"]
        .as_i64()
        .expect("id");
    let one = format!("{CATEGORIES}{id}/");

    assert_eq!(app.get(CATEGORIES, &reader).await.status, 200);
    assert_eq!(app.get(&one, &reader).await.status, 200);
    let body = json!({"name": {"en": "B"}});
    assert_eq!(
        app.post(CATEGORIES, &reader, body.clone()).await.status,
        403
    );
    assert_eq!(
        app.post(CATEGORIES, &settings, body.clone()).await.status,
        403
    );
    assert_eq!(app.patch(&one, &reader, body.clone()).await.status, 403);
    assert_eq!(app.put(&one, &reader, body).await.status, 403);
    assert_eq!(app.delete(&one, &reader).await.status, 403);
    assert_eq!(app.get(&one, &writer).await.body["name"]["en"], "A");
}

#[tokio::test]
async fn another_organizers_token_is_403_and_no_token_is_401() {
    let (app, _) = app_with_event().await;
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    let mine = app.admin_token("acme").await;
    let id = app
        .post(CATEGORIES, &mine, json!({"name": {"en": "A"}}))
        .await
        .body["id"]
        .as_i64()
        .expect("id");

    assert_eq!(app.get(CATEGORIES, &theirs).await.status, 403);
    assert_eq!(
        app.get(&format!("{CATEGORIES}{id}/"), &theirs).await.status,
        403
    );
    assert_eq!(
        app.post(CATEGORIES, &theirs, json!({"name": {"en": "x"}}))
            .await
            .status,
        403
    );
    let r = app.call(Method::GET, CATEGORIES, None, None).await;
    assert_eq!(r.status, 401);
    assert!(r.body["detail"].is_string());
}

#[tokio::test]
async fn a_category_of_another_event_is_not_reachable_through_this_one() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "conf", false).await;
    add_event(&app, org, "other-conf", false).await;
    let token = app.admin_token("acme").await;
    let id = app
        .post(
            "/api/v1/organizers/acme/events/other-conf/categories/",
            &token,
            json!({"name": {"en": "Elsewhere"}}),
        )
        .await
        .body["id"]
        .as_i64()
        .expect("id");
    let here = format!("{CATEGORIES}{id}/");
    assert_eq!(app.get(&here, &token).await.status, 403);
    assert_eq!(app.delete(&here, &token).await.status, 403);
    assert_eq!(app.get(CATEGORIES, &token).await.body["count"], 0);
}
