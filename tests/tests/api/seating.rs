use chrono::Utc;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use serde_json::{Map, Value, json};
use tessera::db::entities::{event, item, seat};
use tessera::domain::seating::{self, AssignError};
use tessera::http::{ApiError, Refusal};
use tessera_tests::TestApp;

const PLANS: &str = "/api/v1/organizers/acme/seatingplans/";
const SEATS: &str = "/api/v1/organizers/acme/events/conf/seats/";

async fn add_event(app: &TestApp, organizer_id: i64, slug: &str) -> i64 {
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
    .expect("event")
    .id
}

async fn add_item(app: &TestApp, event_id: i64) -> i64 {
    item::ActiveModel {
        event_id: Set(event_id),
        name: Set(json!({"en": "Ticket"})),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item")
    .id
}

/// Two categories; seats `a1`, `a2` in row 1 (Stalls) and `b1` in row 2 (Balcony).
fn layout() -> Value {
    json!({
        "name": "Hall",
        "categories": [{"name": "Stalls", "color": "red"}, {"name": "Balcony"}],
        "zones": [{
            "name": "Main",
            "position": {"x": 0, "y": 0},
            "rows": [
                {"row_number": "1", "seats": [
                    {"seat_guid": "a1", "seat_number": "1", "category": "Stalls", "position": {"x": 1, "y": 1}},
                    {"seat_guid": "a2", "seat_number": "2", "category": "Stalls"}
                ]},
                {"row_number": "2", "seats": [
                    {"seat_guid": "b1", "seat_number": "1", "category": "Balcony"}
                ]}
            ]
        }]
    })
}

/// A layout with only seat `a1`, renamed to "Front".
fn smaller_layout() -> Value {
    json!({
        "name": "Small",
        "categories": [{"name": "Stalls"}],
        "zones": [{"name": "Front", "rows": [{"row_number": "1", "seats": [
            {"seat_guid": "a1", "seat_number": "1", "category": "Stalls"}
        ]}]}]
    })
}

async fn create_plan(app: &TestApp, token: &str, name: &str, layout: Value) -> i64 {
    create_plan_of(app, "acme", token, name, layout).await
}

async fn create_plan_of(
    app: &TestApp,
    organizer: &str,
    token: &str,
    name: &str,
    layout: Value,
) -> i64 {
    let url = format!("/api/v1/organizers/{organizer}/seatingplans/");
    let r = app
        .post(&url, token, json!({"name": name, "layout": layout}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_i64().expect("id")
}

fn mapping(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("mapping object")
}

async fn assign(
    app: &TestApp,
    org: i64,
    event: i64,
    plan: Option<i64>,
    map: Value,
) -> Result<(), AssignError> {
    seating::assign(
        &app.db,
        org,
        seating::SeatScope::event(event),
        plan,
        &mapping(map),
    )
    .await
}

/// The 400 body of a refused assignment.
fn refusal(result: Result<(), AssignError>) -> Value {
    match result {
        Err(e @ AssignError::Invalid(_)) => {
            let err = ApiError::from(Refusal::from(e));
            assert_eq!(err.status().as_u16(), 400);
            err.body().clone()
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn sell(app: &TestApp, event: i64, guid: &str) {
    seat::Entity::update_many()
        .col_expr(seat::Column::Sold, true.into())
        .filter(seat::Column::EventId.eq(event))
        .filter(seat::Column::SeatGuid.eq(guid))
        .exec(&app.db)
        .await
        .expect("sell");
}

/// An organizer `acme` with event `conf`, a plan given to it, and an admin token.
struct Seated {
    app: TestApp,
    org: i64,
    event: i64,
    plan: i64,
    token: String,
}

async fn seated() -> Seated {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf").await;
    let token = app.admin_token("acme").await;
    let plan = create_plan(&app, &token, "Hall", layout()).await;
    assign(&app, org, event, Some(plan), json!({}))
        .await
        .expect("assign");
    Seated {
        app,
        org,
        event,
        plan,
        token,
    }
}

fn guids(body: &Value) -> Vec<&str> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|s| s["seat_guid"].as_str().expect("guid"))
        .collect()
}

#[tokio::test]
async fn a_seating_plan_is_created_shown_changed_replaced_and_deleted() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_change_organizer_settings"]).await;

    let r = app
        .post(PLANS, &token, json!({"name": "Hall", "layout": layout()}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], "Hall");
    assert_eq!(r.body["layout"], layout());
    let url = format!("{PLANS}{}/", r.body["id"]);

    let r = app.get(&url, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["layout"]["zones"][0]["rows"][1]["seats"][0]["seat_guid"],
        "b1"
    );

    let r = app.patch(&url, &token, json!({"name": "Big hall"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Big hall");
    assert_eq!(r.body["layout"], layout());

    let r = app
        .put(
            &url,
            &token,
            json!({"name": "Small", "layout": smaller_layout()}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.get(&url, &token).await.body["layout"], smaller_layout());

    assert_eq!(app.delete(&url, &token).await.status, 204);
    assert_eq!(app.get(&url, &token).await.status, 403);
}

#[tokio::test]
async fn plans_are_listed_by_name_then_id_and_paginated() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let b = create_plan(&app, &token, "B", layout()).await;
    let a2 = create_plan(&app, &token, "A", layout()).await;
    let c = create_plan(&app, &token, "C", layout()).await;
    let a1 = create_plan(&app, &token, "A", layout()).await;

    let r = app.get(PLANS, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 4);
    let ids: Vec<i64> = r.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|p| p["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(ids, vec![a2, a1, b, c]);

    let r = app
        .get(&format!("{PLANS}?page_size=3&page=2"), &token)
        .await;
    assert_eq!(r.body["results"][0]["id"], c);
}

#[tokio::test]
async fn invalid_layouts_are_400_on_layout() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let mut undeclared = layout();
    undeclared["zones"][0]["rows"][0]["seats"][0]["category"] = json!("VIP");
    let mut twice = layout();
    twice["zones"][0]["rows"][1]["seats"][0]["seat_guid"] = json!("a1");
    let mut numeric_guid = layout();
    numeric_guid["zones"][0]["rows"][0]["seats"][1]["seat_guid"] = json!(7);
    let mut no_name = layout();
    no_name.as_object_mut().expect("object").remove("name");
    let mut rows_not_list = layout();
    rows_not_list["zones"][0]["rows"] = json!({"row_number": "1"});
    let mut bad_position = layout();
    bad_position["zones"][0]["rows"][0]["seats"][0]["position"] = json!({"x": "left", "y": 1});
    let cases = [
        ("not an object", json!([1, 2])),
        ("null", Value::Null),
        ("undeclared category", undeclared),
        ("seat_guid used twice", twice),
        ("seat_guid not a string", numeric_guid),
        ("name missing", no_name),
        ("rows not a list", rows_not_list),
        ("position not numeric", bad_position),
        ("no zones", json!({"name": "x", "categories": []})),
    ];
    for (what, bad) in cases {
        let r = app
            .post(PLANS, &token, json!({"name": "Hall", "layout": bad}))
            .await;
        assert_eq!(r.status, 400, "{what}: {}", r.body);
        // Messages, or field errors inside the layout for one not of the documented shape.
        let errors = &r.body["layout"];
        assert!(
            errors[0].is_string() || errors.is_object(),
            "{what}: {}",
            r.body
        );
    }
    assert_eq!(app.get(PLANS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn an_invalid_layout_is_refused_on_patch_and_put_and_the_plan_stays() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let id = create_plan(&app, &token, "Hall", layout()).await;
    let url = format!("{PLANS}{id}/");
    let bad = json!({"name": "x", "categories": [], "zones": [{"name": "z", "rows": [
        {"row_number": "1", "seats": [{"seat_guid": "s", "seat_number": "1", "category": "nope"}]}
    ]}]});
    let r = app.patch(&url, &token, json!({"layout": bad})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["layout"][0].is_string());
    let r = app
        .put(&url, &token, json!({"name": "New", "layout": bad}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["layout"][0].is_string());
    let r = app.get(&url, &token).await;
    assert_eq!(r.body["name"], "Hall");
    assert_eq!(r.body["layout"], layout());
}

#[tokio::test]
async fn extra_keys_in_a_layout_are_kept() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let mut extra = layout();
    extra["size"] = json!({"width": 800, "height": 600});
    extra["zones"][0]["rows"][0]["seats"][0]["radius"] = json!(4);
    let id = create_plan(&app, &token, "Hall", extra.clone()).await;
    let r = app.get(&format!("{PLANS}{id}/"), &token).await;
    assert_eq!(r.body["layout"], extra);
}

#[tokio::test]
async fn a_plan_in_use_cannot_be_changed_replaced_or_deleted_until_released() {
    let s = seated().await;
    let (app, token) = (&s.app, &s.token);
    let url = format!("{PLANS}{}/", s.plan);

    let r = app.patch(&url, token, json!({"name": "Other"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("in use"))
    );
    let r = app
        .put(&url, token, json!({"name": "Other", "layout": layout()}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body["detail"].is_string());
    let r = app.delete(&url, token).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body["detail"].is_string());
    assert_eq!(app.get(&url, token).await.body["name"], "Hall");

    assign(app, s.org, s.event, None, json!({}))
        .await
        .expect("release");
    assert_eq!(
        app.patch(&url, token, json!({"name": "Other"}))
            .await
            .status,
        200
    );
    assert_eq!(app.delete(&url, token).await.status, 204);
}

#[tokio::test]
async fn another_organizers_plan_is_403() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    let id = create_plan_of(&app, "other", &theirs, "Theirs", layout()).await;
    let token = app.admin_token("acme").await;
    let url = format!("{PLANS}{id}/");
    assert_eq!(app.get(&url, &token).await.status, 403);
    assert_eq!(
        app.patch(&url, &token, json!({"name": "Mine"}))
            .await
            .status,
        403
    );
    assert_eq!(
        app.put(&url, &token, json!({"name": "Mine", "layout": layout()}))
            .await
            .status,
        403
    );
    assert_eq!(app.delete(&url, &token).await.status, 403);
    assert_eq!(app.get(PLANS, &token).await.body["count"], 0);
    let other_url = format!("/api/v1/organizers/other/seatingplans/{id}/");
    assert_eq!(app.get(&other_url, &token).await.status, 403);
    assert_eq!(app.get(&other_url, &theirs).await.body["name"], "Theirs");
}

#[tokio::test]
async fn seating_plans_need_can_change_organizer_settings() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let id = create_plan(&app, &admin, "Hall", layout()).await;
    let url = format!("{PLANS}{id}/");
    let token = app
        .token("acme", &["can_change_event_settings", "can_change_items"])
        .await;
    assert_eq!(app.get(PLANS, &token).await.status, 403);
    assert_eq!(app.get(&url, &token).await.status, 403);
    let r = app
        .post(PLANS, &token, json!({"name": "x", "layout": layout()}))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        app.patch(&url, &token, json!({"name": "x"})).await.status,
        403
    );
    assert_eq!(app.delete(&url, &token).await.status, 403);
    assert_eq!(app.get(&url, &admin).await.body["name"], "Hall");
}

#[tokio::test]
async fn seating_plans_and_seats_without_a_token_are_401() {
    let s = seated().await;
    let url = format!("{PLANS}{}/", s.plan);
    for (method, path) in [
        (poem::http::Method::GET, PLANS.to_owned()),
        (poem::http::Method::GET, url.clone()),
        (poem::http::Method::DELETE, url),
        (poem::http::Method::GET, SEATS.to_owned()),
    ] {
        let r = s.app.call(method.clone(), &path, None, None).await;
        assert_eq!(r.status, 401, "{method} {path}");
    }
    let r = s
        .app
        .call(
            poem::http::Method::POST,
            PLANS,
            None,
            Some(json!({"name": "x", "layout": layout()})),
        )
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn an_event_with_a_plan_lists_its_seats_with_names_and_states() {
    let s = seated().await;
    let r = s.app.get(SEATS, &s.token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(guids(&r.body), vec!["a1", "a2", "b1"]);
    let first = &r.body["results"][0];
    assert!(first["id"].is_i64());
    assert_eq!(first["name"], "Main, Row 1, Seat 1");
    assert_eq!(first["zone_name"], "Main");
    assert_eq!(first["row_name"], "1");
    assert_eq!(first["seat_number"], "1");
    assert_eq!(first["category"], "Stalls");
    assert_eq!(first["state"], "available");
    assert_eq!(first["blocked"], false);
    assert_eq!(first["sold"], false);
    assert_eq!(r.body["results"][2]["category"], "Balcony");
}

#[tokio::test]
async fn an_event_without_a_plan_has_no_seats() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "conf").await;
    let token = app.admin_token("acme").await;
    let r = app.get(SEATS, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 0);
}

#[tokio::test]
async fn a_seat_is_blocked_released_and_filtered_by_blocked() {
    let s = seated().await;
    let (app, token) = (&s.app, &s.token);
    let id = app.get(SEATS, token).await.body["results"][1]["id"].clone();
    let url = format!("{SEATS}{id}/");

    let r = app.patch(&url, token, json!({"blocked": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["blocked"], true);
    assert_eq!(r.body["state"], "blocked");

    let r = app.get(&format!("{SEATS}?blocked=true"), token).await;
    assert_eq!(guids(&r.body), vec!["a2"]);
    assert_eq!(r.body["count"], 1);
    let r = app.get(&format!("{SEATS}?blocked=false"), token).await;
    assert_eq!(guids(&r.body), vec!["a1", "b1"]);

    let r = app.patch(&url, token, json!({"blocked": false})).await;
    assert_eq!(r.body["state"], "available");
    let r = app.get(&format!("{SEATS}?blocked=true"), token).await;
    assert_eq!(r.body["count"], 0);
}

#[tokio::test]
async fn a_sold_seat_can_be_blocked_and_stays_sold() {
    let s = seated().await;
    sell(&s.app, s.event, "a1").await;
    let r = s.app.get(SEATS, &s.token).await;
    assert_eq!(r.body["results"][0]["state"], "sold");
    let url = format!("{SEATS}{}/", r.body["results"][0]["id"]);
    let r = s.app.patch(&url, &s.token, json!({"blocked": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["blocked"], true);
    assert_eq!(r.body["sold"], true);
    assert_eq!(r.body["state"], "sold");
}

#[tokio::test]
async fn seats_are_readable_with_any_access_but_blocking_needs_can_change_event_settings() {
    let s = seated().await;
    let reader = s.app.token("acme", &["can_view_orders"]).await;
    let r = s.app.get(SEATS, &reader).await;
    assert_eq!(r.status, 200);
    let url = format!("{SEATS}{}/", r.body["results"][0]["id"]);
    let r = s.app.patch(&url, &reader, json!({"blocked": true})).await;
    assert_eq!(r.status, 403);
    let editor = s.app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(
        s.app
            .patch(&url, &editor, json!({"blocked": true}))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn seats_of_an_event_outside_the_teams_events_or_organizer_are_403() {
    let s = seated().await;
    add_event(&s.app, s.org, "other-conf").await;
    let limited = s
        .app
        .token_for(
            "acme",
            Some(tessera::domain::permissions::PermissionSet::all()),
            &["other-conf"],
        )
        .await;
    assert_eq!(s.app.get(SEATS, &limited).await.status, 403);
    s.app.organizer("rival").await;
    let rival = s.app.admin_token("rival").await;
    assert_eq!(s.app.get(SEATS, &rival).await.status, 403);
}

#[tokio::test]
async fn a_seat_of_another_event_cannot_be_changed_through_this_one() {
    let s = seated().await;
    let other = add_event(&s.app, s.org, "other-conf").await;
    assign(&s.app, s.org, other, Some(s.plan), json!({}))
        .await
        .expect("assign");
    let r = s
        .app
        .get("/api/v1/organizers/acme/events/other-conf/seats/", &s.token)
        .await;
    let url = format!("{SEATS}{}/", r.body["results"][0]["id"]);
    let r = s.app.patch(&url, &s.token, json!({"blocked": true})).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn assigning_stores_the_plan_and_a_mapping_to_the_events_items() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf").await;
    let item = add_item(&app, event).await;
    let token = app.admin_token("acme").await;
    let plan = create_plan(&app, &token, "Hall", layout()).await;
    assign(
        &app,
        org,
        event,
        Some(plan),
        json!({"Stalls": item, "Balcony": null}),
    )
    .await
    .expect("assign");
    let stored = event::Entity::find_by_id(event)
        .one(&app.db)
        .await
        .expect("query")
        .expect("event");
    assert_eq!(stored.seating_plan_id, Some(plan));
    assert_eq!(
        stored.seat_category_mapping,
        json!({"Stalls": item, "Balcony": null})
    );
    assert_eq!(app.get(SEATS, &token).await.body["count"], 3);
}

#[tokio::test]
async fn a_mapping_with_an_unknown_category_is_400_on_seat_category_mapping() {
    let s = seated().await;
    let item = add_item(&s.app, s.event).await;
    let body = refusal(assign(&s.app, s.org, s.event, Some(s.plan), json!({"VIP": item})).await);
    assert!(body["seat_category_mapping"][0].is_string(), "{body}");
    assert!(body.get("seating_plan").is_none(), "{body}");
}

#[tokio::test]
async fn a_mapping_to_an_item_of_another_event_is_400_on_seat_category_mapping() {
    let s = seated().await;
    let other = add_event(&s.app, s.org, "other-conf").await;
    let foreign = add_item(&s.app, other).await;
    let body = refusal(
        assign(
            &s.app,
            s.org,
            s.event,
            Some(s.plan),
            json!({"Stalls": foreign}),
        )
        .await,
    );
    assert!(body["seat_category_mapping"][0].is_string(), "{body}");
    let body = refusal(
        assign(
            &s.app,
            s.org,
            s.event,
            Some(s.plan),
            json!({"Stalls": "one"}),
        )
        .await,
    );
    assert!(body["seat_category_mapping"][0].is_string(), "{body}");
}

#[tokio::test]
async fn a_plan_of_another_organizer_is_400_on_seating_plan() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf").await;
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    let plan = create_plan_of(&app, "other", &theirs, "Theirs", layout()).await;
    let body = refusal(assign(&app, org, event, Some(plan), json!({})).await);
    assert!(body["seating_plan"][0].is_string(), "{body}");
    let token = app.admin_token("acme").await;
    assert_eq!(app.get(SEATS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn removing_the_plan_with_sold_seats_is_400_and_keeps_the_seats() {
    let s = seated().await;
    sell(&s.app, s.event, "b1").await;
    let body = refusal(assign(&s.app, s.org, s.event, None, json!({})).await);
    assert!(
        body["seating_plan"][0]
            .as_str()
            .is_some_and(|m| m.contains("b1")),
        "{body}"
    );
    assert_eq!(s.app.get(SEATS, &s.token).await.body["count"], 3);
    let url = format!("{PLANS}{}/", s.plan);
    assert_eq!(s.app.delete(&url, &s.token).await.status, 403);
}

#[tokio::test]
async fn removing_the_plan_without_sold_seats_removes_the_seats_and_the_mapping() {
    let s = seated().await;
    assign(&s.app, s.org, s.event, None, json!({"Stalls": null}))
        .await
        .expect("remove");
    assert_eq!(s.app.get(SEATS, &s.token).await.body["count"], 0);
    let stored = event::Entity::find_by_id(s.event)
        .one(&s.app.db)
        .await
        .expect("query")
        .expect("event");
    assert_eq!(stored.seating_plan_id, None);
    assert_eq!(stored.seat_category_mapping, json!({}));
}

#[tokio::test]
async fn switching_to_a_plan_without_a_sold_seat_is_400() {
    let s = seated().await;
    sell(&s.app, s.event, "a2").await;
    let small = create_plan(&s.app, &s.token, "Small", smaller_layout()).await;
    let body = refusal(assign(&s.app, s.org, s.event, Some(small), json!({})).await);
    assert!(body["seating_plan"][0].is_string(), "{body}");
    assert_eq!(s.app.get(SEATS, &s.token).await.body["count"], 3);
}

#[tokio::test]
async fn switching_plans_keeps_the_seats_still_in_the_plan_with_their_flags() {
    let s = seated().await;
    sell(&s.app, s.event, "a1").await;
    let before = s.app.get(SEATS, &s.token).await.body;
    let a1 = before["results"][0]["id"].clone();
    s.app
        .patch(&format!("{SEATS}{a1}/"), &s.token, json!({"blocked": true}))
        .await;
    let small = create_plan(&s.app, &s.token, "Small", smaller_layout()).await;
    assign(&s.app, s.org, s.event, Some(small), json!({}))
        .await
        .expect("switch");
    let r = s.app.get(SEATS, &s.token).await;
    assert_eq!(guids(&r.body), vec!["a1"]);
    let kept = &r.body["results"][0];
    assert_eq!(kept["id"], a1);
    assert_eq!(kept["sold"], true);
    assert_eq!(kept["blocked"], true);
    assert_eq!(kept["name"], "Front, Row 1, Seat 1");
    let url = format!("{PLANS}{}/", s.plan);
    assert_eq!(s.app.delete(&url, &s.token).await.status, 204);
}

#[tokio::test]
async fn cloning_seats_copies_blocked_flags_but_not_sales() {
    let s = seated().await;
    sell(&s.app, s.event, "a1").await;
    let first = s.app.get(SEATS, &s.token).await.body["results"][1]["id"].clone();
    s.app
        .patch(
            &format!("{SEATS}{first}/"),
            &s.token,
            json!({"blocked": true}),
        )
        .await;
    let copy = add_event(&s.app, s.org, "copy").await;
    seating::clone_seats(&s.app.db, s.event, copy)
        .await
        .expect("clone");
    let r = s
        .app
        .get("/api/v1/organizers/acme/events/copy/seats/", &s.token)
        .await;
    assert_eq!(guids(&r.body), vec!["a1", "a2", "b1"]);
    let states: Vec<&str> = r.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|s| s["state"].as_str().expect("state"))
        .collect();
    assert_eq!(states, vec!["available", "blocked", "available"]);
    assert_eq!(r.body["results"][0]["name"], "Main, Row 1, Seat 1");
}

/// A layout with `categories` categories and `seats` seats in rows of 100, every seat in the
/// last category: the worst case for a check that looks categories up one by one.
fn big_layout(categories: usize, seats: usize) -> Value {
    let names: Vec<Value> = (0..categories)
        .map(|c| json!({"name": format!("c{c}")}))
        .collect();
    let last = format!("c{}", categories.saturating_sub(1));
    let seat_list: Vec<Value> = (0..seats)
        .map(|s| json!({"seat_guid": format!("s{s}"), "seat_number": "", "category": last}))
        .collect();
    let rows: Vec<Value> = seat_list
        .chunks(100)
        .enumerate()
        .map(|(r, seats)| json!({"row_number": r.to_string(), "seats": seats}))
        .collect();
    json!({"name": "Arena", "categories": names, "zones": [{"name": "", "rows": rows}]})
}

/// A server taking bodies of up to 16 MiB: plans of 100,000 seats are larger than the
/// default limit, and the caps must hold where an operator raises it.
async fn large_bodies() -> TestApp {
    TestApp::spawn_with(|c| c.max_body_bytes = 16 * 1024 * 1024).await
}

#[tokio::test]
async fn a_layout_with_thousands_of_categories_is_refused_with_400_on_layout() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let id = create_plan(&app, &token, "Hall", layout()).await;
    let attack = big_layout(5_000, 5_000);
    let expected =
        json!({"layout": {"categories": ["Ensure this field has no more than 1000 elements."]}});
    let r = app
        .post(PLANS, &token, json!({"name": "Arena", "layout": attack}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, expected);
    let url = format!("{PLANS}{id}/");
    let r = app.patch(&url, &token, json!({"layout": attack})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, expected);
    let r = app
        .put(&url, &token, json!({"name": "Arena", "layout": attack}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, expected);
    assert_eq!(app.get(PLANS, &token).await.body["count"], 1);
    assert_eq!(app.get(&url, &token).await.body["layout"], layout());
}

#[tokio::test]
async fn a_layout_with_more_seats_than_the_cap_is_refused_with_400_on_layout() {
    let app = large_bodies().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let r = app
        .post(
            PLANS,
            &token,
            json!({"name": "Arena", "layout": big_layout(1, seating::MAX_SEATS + 1)}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"layout": ["zones[0].rows[1000].seats: a layout may have no more than 100000 seats."]})
    );
    assert_eq!(app.get(PLANS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn a_layout_with_as_many_categories_and_seats_as_allowed_is_accepted() {
    let app = large_bodies().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let full = big_layout(seating::MAX_CATEGORIES, seating::MAX_SEATS);
    let r = app
        .post(PLANS, &token, json!({"name": "Arena", "layout": full}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let categories = r.body["layout"]["categories"].as_array().map(Vec::len);
    assert_eq!(categories, Some(1_000));
    let rows = r.body["layout"]["zones"][0]["rows"]
        .as_array()
        .map(Vec::len);
    assert_eq!(rows, Some(1_000));
}

#[tokio::test]
async fn a_seat_category_mapping_with_more_keys_than_a_plan_has_categories_is_400() {
    let s = seated().await;
    let mapping: Map<String, Value> = (0..=seating::MAX_CATEGORIES)
        .map(|c| (format!("c{c}"), Value::Null))
        .collect();
    let r = s
        .app
        .patch(
            "/api/v1/organizers/acme/events/conf/",
            &s.token,
            json!({"seat_category_mapping": mapping}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"seat_category_mapping": ["Ensure this field has no more than 1000 elements."]})
    );
}
