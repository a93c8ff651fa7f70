use sea_orm::{EntityTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::setting;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera_tests::TestApp;

use crate::selling_support::shop;

const ORG: &str = "/api/v1/organizers/acme/settings/";
const EVENT: &str = "/api/v1/organizers/acme/events/conf/settings/";

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    let token = app
        .token(
            "acme",
            &["can_change_event_settings", "can_change_organizer_settings"],
        )
        .await;
    (app, token)
}

#[tokio::test]
async fn an_event_inherits_from_its_organizer_then_the_defaults() {
    let (app, token) = setup().await;
    assert_eq!(app.get(EVENT, &token).await.body["payment_term_days"], 14);
    let r = app
        .patch(ORG, &token, json!({"payment_term_days": 7}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["payment_term_days"], 7);
    assert_eq!(app.get(EVENT, &token).await.body["payment_term_days"], 7);
    let r = app
        .patch(EVENT, &token, json!({"payment_term_days": 3}))
        .await;
    assert_eq!(r.body["payment_term_days"], 3);
    assert_eq!(app.get(ORG, &token).await.body["payment_term_days"], 7);
    let r = app
        .patch(EVENT, &token, json!({"payment_term_days": null}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["payment_term_days"], 7,
        "null makes it inherit again"
    );
}

#[tokio::test]
async fn explain_gives_value_label_and_help_text() {
    let (app, token) = setup().await;
    let r = app.get(&format!("{EVENT}?explain=true"), &token).await;
    assert_eq!(r.status, 200);
    let s = &r.body["waiting_list_enabled"];
    assert_eq!(s["value"], false);
    assert!(s["label"].as_str().is_some_and(|l| !l.is_empty()));
    assert!(s["help_text"].is_string());
}

#[tokio::test]
async fn unknown_keys_and_invalid_values_are_400_per_key_and_change_nothing() {
    let (app, token) = setup().await;
    let r = app.patch(EVENT, &token, json!({"waiting_list_enabled": true, "no_such_key": 1, "payment_term_days": "soon", "contact_mail": "nope"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["no_such_key"][0].is_string());
    assert!(r.body["payment_term_days"][0].is_string());
    assert!(r.body["contact_mail"][0].is_string());
    assert!(r.body.get("waiting_list_enabled").is_none());
    assert_eq!(
        app.get(EVENT, &token).await.body["waiting_list_enabled"],
        false
    );
}

#[tokio::test]
async fn organizer_only_keys_cannot_be_set_on_an_event() {
    let (app, token) = setup().await;
    assert_eq!(
        app.patch(ORG, &token, json!({"giftcard_length": 12}))
            .await
            .status,
        200
    );
    let r = app
        .patch(EVENT, &token, json!({"giftcard_length": 12}))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        app.get(EVENT, &token)
            .await
            .body
            .get("giftcard_length")
            .is_none()
    );
}

#[tokio::test]
async fn put_is_not_allowed() {
    let (app, token) = setup().await;
    let r = app.put(EVENT, &token, json!({})).await;
    assert_eq!(r.status, 405);
    assert!(r.header("allow").is_some_and(|a| a.contains("PATCH")));
}

#[tokio::test]
async fn settings_need_their_permission() {
    let (app, _) = setup().await;
    let items = app.token("acme", &["can_change_items"]).await;
    assert_eq!(app.get(EVENT, &items).await.status, 403);
    assert_eq!(
        app.patch(EVENT, &items, json!({"payment_term_days": 1}))
            .await
            .status,
        403
    );
    assert_eq!(app.get(ORG, &items).await.status, 403);
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    assert_eq!(app.get(EVENT, &theirs).await.status, 403);
    assert_eq!(
        app.patch(ORG, &theirs, json!({"payment_term_days": 1}))
            .await
            .status,
        403
    );
}

/// A token of a team with both settings permissions, limited to the event `conf`.
async fn limited_to_conf(app: &TestApp) -> String {
    let permissions: PermissionSet = [
        Permission::ChangeEventSettings,
        Permission::ChangeOrganizerSettings,
    ]
    .into_iter()
    .collect();
    app.token_for("acme", Some(permissions), &["conf"]).await
}

/// Stores a setting directly in the database, as a value written before its bounds existed.
async fn store(app: &TestApp, scope: &str, owner: i64, key: &str, value: Value) {
    setting::Entity::insert(setting::ActiveModel {
        scope: Set(scope.into()),
        owner_id: Set(owner),
        key: Set(key.into()),
        value: Set(value),
    })
    .exec(&app.db)
    .await
    .expect("setting stored");
}

#[tokio::test]
async fn a_team_limited_to_some_events_cannot_change_what_the_organizers_events_inherit() {
    let (app, admin) = setup().await;
    app.event("acme", "gala").await;
    let gala = "/api/v1/organizers/acme/events/gala/settings/";
    let limited = limited_to_conf(&app).await;

    // The attack: a reply-to address of the team's own for every event, and with it an
    // organizer-only key, which must not slip through either.
    let r = app
        .patch(
            ORG,
            &limited,
            json!({"contact_mail": "thief@example.org", "giftcard_length": 12}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("contact_mail")),
        "{}",
        r.body
    );
    let org = app.get(ORG, &admin).await.body;
    assert_eq!(org["contact_mail"], "");
    assert_eq!(org["giftcard_length"], 16, "nothing of the request written");
    assert_eq!(app.get(gala, &admin).await.body["contact_mail"], "");

    // Unsetting changes what events inherit just as well.
    let set = app
        .patch(ORG, &admin, json!({"contact_mail": "office@acme.example"}))
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let r = app
        .patch(ORG, &limited, json!({"contact_mail": null}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        app.get(gala, &admin).await.body["contact_mail"],
        "office@acme.example"
    );
}

#[tokio::test]
async fn a_limited_team_still_changes_organizer_only_settings_and_its_own_events() {
    let (app, admin) = setup().await;
    let limited = limited_to_conf(&app).await;
    let r = app
        .patch(ORG, &limited, json!({"giftcard_length": 12}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["giftcard_length"], 12);
    let r = app
        .patch(
            EVENT,
            &limited,
            json!({"contact_mail": "conf@acme.example", "payment_term_days": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.get(ORG, &admin).await.body["contact_mail"], "");
}

#[tokio::test]
async fn numbers_beyond_their_bounds_are_400_and_nothing_is_stored() {
    let (app, token) = setup().await;
    let r = app
        .patch(
            EVENT,
            &token,
            json!({"payment_term_days": 1_000_000_000_000_i64}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"payment_term_days": ["Ensure this value is less than or equal to 1000."]})
    );
    let r = app
        .patch(
            ORG,
            &token,
            json!({"reservation_time": 10_081, "waiting_list_hours": 1e20, "giftcard_length": 65,
                   "max_items_per_order": 0}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({
            "giftcard_length": ["Ensure this value is less than or equal to 64."],
            "max_items_per_order": ["Ensure this value is greater than or equal to 1."],
            "reservation_time": ["Ensure this value is less than or equal to 10080."],
            "waiting_list_hours": ["Ensure this value is less than or equal to 8760."],
        })
    );
    let shown = app.get(EVENT, &token).await.body;
    assert_eq!(shown["payment_term_days"], 14);
    assert_eq!(shown["reservation_time"], 30);
    assert_eq!(shown["waiting_list_hours"], 48);
    let r = app
        .patch(EVENT, &token, json!({"payment_term_days": 1000}))
        .await;
    assert_eq!(r.status, 200, "the bound itself is allowed: {}", r.body);
}

#[tokio::test]
async fn explain_shows_the_bounds_of_number_settings() {
    let (app, token) = setup().await;
    let r = app.get(&format!("{EVENT}?explain=true"), &token).await;
    assert_eq!(r.status, 200);
    let term = &r.body["payment_term_days"];
    assert_eq!(
        (
            term["value"].clone(),
            term["min"].clone(),
            term["max"].clone()
        ),
        (json!(14), json!(0), json!(1000))
    );
    assert_eq!(r.body["reservation_time"]["max"], 10_080);
    assert_eq!(r.body["waiting_list_hours"]["max"], 8_760);
    assert!(r.body["waiting_list_enabled"].get("max").is_none());
    let r = app.get(&format!("{ORG}?explain=true"), &token).await;
    assert_eq!(r.body["giftcard_length"]["min"], 6);
    assert_eq!(r.body["giftcard_length"]["max"], 64);
}

#[tokio::test]
async fn numbers_stored_beyond_their_bounds_count_as_the_bound_and_selling_goes_on() {
    let s = shop(None).await;
    store(
        &s.app,
        "event",
        s.event,
        "payment_term_days",
        json!(1_000_000_000_000_i64),
    )
    .await;
    store(
        &s.app,
        "event",
        s.event,
        "reservation_time",
        json!(u64::MAX),
    )
    .await;

    let before = chrono::Utc::now();
    let order = s.ordered(1, json!({})).await;
    let expires: chrono::DateTime<chrono::Utc> = order["expires"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("expires");
    let days = (expires - before).num_days();
    assert!(
        (999..=1001).contains(&days),
        "a term of 1000 days: {expires}"
    );

    let cart = s
        .app
        .post(
            &format!("{}/cartpositions/", crate::selling_support::EVENT),
            &s.token,
            json!({"cart_id": "c1", "item": s.ticket, "price": "23.00"}),
        )
        .await;
    assert_eq!(cart.status, 201, "{}", cart.body);
    let until: chrono::DateTime<chrono::Utc> = cart.body["expires"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("expires");
    let minutes = (until - before).num_minutes();
    assert!(
        (10_079..=10_081).contains(&minutes),
        "a week's reservation: {until}"
    );

    let shown = s
        .app
        .get(
            &format!("{}/settings/", crate::selling_support::EVENT),
            &s.token,
        )
        .await;
    assert_eq!(shown.body["payment_term_days"], 1000);
    assert_eq!(shown.body["reservation_time"], 10_080);
}
