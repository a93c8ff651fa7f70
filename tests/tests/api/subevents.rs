use chrono::{Duration, Utc};
use poem::http::Method;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::meta_property;
use tessera_tests::TestApp;

use crate::config_support::{add_event, add_item};

const DATES: &str = "/api/v1/organizers/acme/events/series/subevents/";

struct Arranged {
    app: TestApp,
    organizer: i64,
    event: i64,
    token: String,
}

async fn arrange() -> Arranged {
    let app = TestApp::spawn().await;
    let organizer = app.organizer("acme").await;
    let event = add_event(&app, organizer, "series", true).await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    Arranged {
        app,
        organizer,
        event,
        token,
    }
}

async fn add_meta_property(app: &TestApp, organizer: i64, name: &str, allowed: &[&str]) {
    meta_property::ActiveModel {
        organizer_id: Set(organizer),
        name: Set(name.into()),
        default_value: Set(String::new()),
        choices: Set((!allowed.is_empty()).then(|| {
            json!(
                allowed
                    .iter()
                    .map(|k| json!({"key": k}))
                    .collect::<Vec<_>>()
            )
        })),
        required: Set(false),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("meta property");
}

fn at(days: i64) -> String {
    (Utc::now() + Duration::days(days)).to_rfc3339()
}

async fn create(app: &TestApp, token: &str, body: Value) -> i64 {
    let r = app.post(DATES, token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_i64().expect("id")
}

fn names(body: &Value) -> Vec<String> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|s| s["name"]["en"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn a_date_is_created_shown_changed_replaced_and_deleted() {
    let a = arrange().await;
    let (app, token) = (&a.app, a.token.as_str());
    add_meta_property(app, a.organizer, "Format", &["Seminar", "Talk"]).await;
    let ticket = add_item(app, a.event, None, None).await;

    let r = app
        .post(
            DATES,
            token,
            json!({
                "name": {"en": "Monday"},
                "active": true,
                "date_from": "2030-01-07T10:00:00Z",
                "date_to": "2030-01-07T12:00:00+01:00",
                "location": {"en": "Hall A"},
                "item_price_overrides": [{"item": ticket, "price": "12.50"}],
                "meta_data": {"Format": "Talk"}
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "Monday"}));
    assert_eq!(r.body["event"], "series");
    assert_eq!(r.body["active"], true);
    assert!(
        r.body["date_from"]
            .as_str()
            .is_some_and(|d| d.starts_with("2030-01-07T10:00:00"))
    );
    assert!(
        r.body["date_to"]
            .as_str()
            .is_some_and(|d| d.starts_with("2030-01-07T11:00:00"))
    );
    assert_eq!(r.body["date_admission"], json!(null));
    assert_eq!(r.body["location"], json!({"en": "Hall A"}));
    assert_eq!(
        r.body["item_price_overrides"],
        json!([{"item": ticket, "price": "12.50"}])
    );
    assert_eq!(r.body["meta_data"], json!({"Format": "Talk"}));
    let id = r.body["id"].as_i64().expect("id");
    let one = format!("{DATES}{id}/");

    let r = app
        .patch(
            &one,
            token,
            json!({"name": {"en": "Tuesday"}, "date_to": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"]["en"], "Tuesday");
    assert_eq!(r.body["date_to"], json!(null));
    assert_eq!(r.body["item_price_overrides"][0]["price"], "12.50");
    assert_eq!(r.body["meta_data"]["Format"], "Talk");

    let r = app
        .put(
            &one,
            token,
            json!({"name": {"en": "Reset"}, "date_from": "2030-02-01T10:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["active"], false);
    assert_eq!(r.body["location"], json!(null));
    assert_eq!(r.body["item_price_overrides"], json!([]));
    assert_eq!(r.body["meta_data"], json!({}));

    let r = app.get(&one, token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"]["en"], "Reset");

    assert_eq!(app.delete(&one, token).await.status, 204);
    assert_eq!(app.get(&one, token).await.status, 403);
    assert_eq!(app.get(DATES, token).await.body["count"], 0);
}

#[tokio::test]
async fn an_event_that_is_not_a_series_has_no_dates_and_gets_none() {
    let a = arrange().await;
    add_event(&a.app, a.organizer, "single", false).await;
    let path = "/api/v1/organizers/acme/events/single/subevents/";
    let r = a
        .app
        .post(
            path,
            &a.token,
            json!({"name": {"en": "x"}, "date_from": at(10)}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["detail"], "This event does not have sub-events.");
    let r = a.app.get(path, &a.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 0);
}

#[tokio::test]
async fn dates_in_the_wrong_order_are_400() {
    let a = arrange().await;
    let (app, token) = (&a.app, a.token.as_str());
    let r = app
        .post(
            DATES,
            token,
            json!({"name": {"en": "x"}, "date_from": at(10), "date_to": at(9)}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["date_to"][0].is_string(), "{}", r.body);
    let r = app
        .post(
            DATES,
            token,
            json!({"name": {"en": "x"}, "date_from": at(10), "presale_start": at(5), "presale_end": at(4)}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["presale_end"][0].is_string(), "{}", r.body);
    let r = app.post(DATES, token, json!({"name": {"en": "x"}})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["date_from"][0].is_string());

    let id = create(
        app,
        token,
        json!({"name": {"en": "x"}, "date_from": at(10), "date_to": at(11)}),
    )
    .await;
    let r = app
        .patch(
            &format!("{DATES}{id}/"),
            token,
            json!({"date_from": at(12)}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["date_to"][0].is_string());
    assert_eq!(app.get(DATES, token).await.body["count"], 1);
}

#[tokio::test]
async fn meta_data_must_use_the_organizers_properties_and_their_allowed_values() {
    let a = arrange().await;
    let (app, token) = (&a.app, a.token.as_str());
    add_meta_property(app, a.organizer, "Format", &["Seminar", "Talk"]).await;
    add_meta_property(app, a.organizer, "Room", &[]).await;
    let other = app.organizer("other").await;
    add_meta_property(app, other, "Theirs", &[]).await;

    for meta in [
        json!({"Unknown": "x"}),
        json!({"Format": "Party"}),
        json!({"Theirs": "x"}),
    ] {
        let r = app
            .post(
                DATES,
                token,
                json!({"name": {"en": "x"}, "date_from": at(1), "meta_data": meta}),
            )
            .await;
        assert_eq!(r.status, 400, "{meta}");
        assert!(r.body["meta_data"][0].is_string(), "{}", r.body);
    }
    let id = create(
        app,
        token,
        json!({"name": {"en": "x"}, "date_from": at(1), "meta_data": {"Format": "Seminar", "Room": "anything"}}),
    )
    .await;
    let r = app
        .patch(
            &format!("{DATES}{id}/"),
            token,
            json!({"meta_data": {"Format": "Party"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = app.get(&format!("{DATES}{id}/"), token).await;
    assert_eq!(
        r.body["meta_data"],
        json!({"Format": "Seminar", "Room": "anything"})
    );
}

#[tokio::test]
async fn price_overrides_only_for_items_of_this_event() {
    let a = arrange().await;
    let (app, token) = (&a.app, a.token.as_str());
    let mine = add_item(app, a.event, None, None).await;
    let elsewhere = add_event(app, a.organizer, "elsewhere", true).await;
    let foreign = add_item(app, elsewhere, None, None).await;

    for overrides in [
        json!([{"item": foreign, "price": "1.00"}]),
        json!([{"item": 999_999, "price": "1.00"}]),
        json!([{"item": mine, "price": "1.00"}, {"item": mine, "price": "2.00"}]),
    ] {
        let r = app
            .post(
                DATES,
                token,
                json!({"name": {"en": "x"}, "date_from": at(1), "item_price_overrides": overrides}),
            )
            .await;
        assert_eq!(r.status, 400, "{overrides}");
        assert!(r.body["item_price_overrides"][0].is_string(), "{}", r.body);
    }
    let r = app
        .post(
            DATES,
            token,
            json!({"name": {"en": "x"}, "date_from": at(1), "item_price_overrides": [{"item": mine, "price": "1.5"}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body["item_price_overrides"],
        json!([{"item": mine, "price": "1.50"}])
    );
    assert_eq!(app.get(DATES, token).await.body["count"], 1);
}

#[tokio::test]
async fn dates_are_listed_by_start_and_filtered() {
    let a = arrange().await;
    let (app, token) = (&a.app, a.token.as_str());
    let now = Utc::now();
    let day = |d: i64| (now + Duration::days(d)).to_rfc3339();
    create(
        app,
        token,
        json!({"name": {"en": "later"}, "date_from": day(20), "active": true}),
    )
    .await;
    create(
        app,
        token,
        json!({"name": {"en": "past"}, "date_from": day(-10), "date_to": day(-9)}),
    )
    .await;
    create(
        app,
        token,
        json!({"name": {"en": "running"}, "date_from": day(-1), "date_to": day(1), "active": true}),
    )
    .await;
    create(
        app,
        token,
        json!({"name": {"en": "soon"}, "date_from": day(5)}),
    )
    .await;

    let list = |q: &str| format!("{DATES}?{q}");
    assert_eq!(
        names(&app.get(DATES, token).await.body),
        ["past", "running", "soon", "later"]
    );
    assert_eq!(
        names(&app.get(&list("active=true"), token).await.body),
        ["running", "later"]
    );
    assert_eq!(
        names(&app.get(&list("active=false"), token).await.body),
        ["past", "soon"]
    );
    assert_eq!(
        names(&app.get(&list("is_future=true"), token).await.body),
        ["running", "soon", "later"]
    );
    assert_eq!(
        names(&app.get(&list("is_future=false"), token).await.body),
        ["past"]
    );
    assert_eq!(
        names(&app.get(&list("is_past=true"), token).await.body),
        ["past"]
    );
    assert_eq!(
        names(&app.get(&list("is_past=false"), token).await.body),
        ["running", "soon", "later"]
    );
    let after = (now + Duration::days(3)).format("%Y-%m-%dT%H:%M:%SZ");
    assert_eq!(
        names(
            &app.get(&list(&format!("ends_after={after}")), token)
                .await
                .body
        ),
        ["soon", "later"]
    );
    assert_eq!(
        names(
            &app.get(&list("is_future=true&active=false"), token)
                .await
                .body
        ),
        ["soon"]
    );
}

#[tokio::test]
async fn reading_needs_any_access_and_writing_needs_can_change_event_settings() {
    let a = arrange().await;
    let (app, writer) = (&a.app, a.token.as_str());
    let items = app.token("acme", &["can_change_items"]).await;
    let reader = app.token("acme", &[]).await;
    let id = create(
        app,
        writer,
        json!({"name": {"en": "x"}, "date_from": at(1)}),
    )
    .await;
    let one = format!("{DATES}{id}/");
    let body = json!({"name": {"en": "y"}, "date_from": at(2)});

    assert_eq!(app.get(DATES, &reader).await.status, 200);
    assert_eq!(app.get(&one, &reader).await.status, 200);
    assert_eq!(app.post(DATES, &items, body.clone()).await.status, 403);
    assert_eq!(app.patch(&one, &items, body.clone()).await.status, 403);
    assert_eq!(app.put(&one, &items, body).await.status, 403);
    assert_eq!(app.delete(&one, &items).await.status, 403);
    assert_eq!(app.get(&one, &reader).await.body["name"]["en"], "x");
}

#[tokio::test]
async fn another_organizers_token_is_403_and_no_token_is_401() {
    let a = arrange().await;
    let app = &a.app;
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    let id = create(
        app,
        &a.token,
        json!({"name": {"en": "x"}, "date_from": at(1)}),
    )
    .await;

    assert_eq!(app.get(DATES, &theirs).await.status, 403);
    assert_eq!(app.get(&format!("{DATES}{id}/"), &theirs).await.status, 403);
    assert_eq!(
        app.get("/api/v1/organizers/acme/subevents/", &theirs)
            .await
            .status,
        403
    );
    assert_eq!(app.call(Method::GET, DATES, None, None).await.status, 401);
    assert_eq!(
        app.call(
            Method::POST,
            DATES,
            None,
            Some(json!({"name": {"en": "x"}, "date_from": at(1)}))
        )
        .await
        .status,
        401
    );
}

#[tokio::test]
async fn the_organizer_list_holds_the_dates_of_the_events_the_caller_may_see() {
    let a = arrange().await;
    let app = &a.app;
    add_event(app, a.organizer, "tour", true).await;
    create(
        app,
        &a.token,
        json!({"name": {"en": "s1"}, "date_from": at(2)}),
    )
    .await;
    let r = app
        .post(
            "/api/v1/organizers/acme/events/tour/subevents/",
            &a.token,
            json!({"name": {"en": "t1"}, "date_from": at(1)}),
        )
        .await;
    assert_eq!(r.status, 201);

    let all = app
        .get("/api/v1/organizers/acme/subevents/", &a.token)
        .await;
    assert_eq!(all.status, 200);
    assert_eq!(names(&all.body), ["t1", "s1"]);
    assert_eq!(all.body["results"][0]["event"], "tour");
    assert_eq!(all.body["results"][1]["event"], "series");

    let limited = app.token_for("acme", None, &["series"]).await;
    let some = app
        .get("/api/v1/organizers/acme/subevents/", &limited)
        .await;
    assert_eq!(some.status, 200);
    assert_eq!(names(&some.body), ["s1"]);
    let tour_only = app.token_for("acme", None, &["tour"]).await;
    let r = app
        .get("/api/v1/organizers/acme/subevents/", &tour_only)
        .await;
    assert_eq!(names(&r.body), ["t1"]);
}
