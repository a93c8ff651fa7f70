use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::{item, order, quota};
use tessera_tests::TestApp;

const EVENTS: &str = "/api/v1/organizers/acme/events/";

fn conf(slug: &str) -> Value {
    json!({
        "name": {"en": "Conference", "de": "Konferenz"},
        "slug": slug,
        "currency": "EUR",
        "date_from": "2030-06-01T09:00:00Z",
        "date_to": "2030-06-02T18:00:00+02:00",
    })
}

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app
        .token(
            "acme",
            &[
                "can_create_events",
                "can_change_event_settings",
                "can_change_organizer_settings",
            ],
        )
        .await;
    (app, token)
}

async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let r = app.post(EVENTS, token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

async fn event_id(app: &TestApp, slug: &str) -> i64 {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    tessera::db::entities::event::Entity::find()
        .filter(tessera::db::entities::event::Column::Slug.eq(slug))
        .one(&app.db)
        .await
        .expect("query")
        .expect("event")
        .id
}

#[tokio::test]
async fn a_created_event_has_every_field_with_defaults() {
    let (app, token) = setup().await;
    let e = create(&app, &token, conf("conf")).await;
    assert_eq!(e["slug"], "conf");
    assert_eq!(e["name"], json!({"en": "Conference", "de": "Konferenz"}));
    assert_eq!(e["live"], false);
    assert_eq!(e["testmode"], false);
    assert_eq!(e["is_public"], true);
    assert_eq!(e["has_subevents"], false);
    assert_eq!(e["currency"], "EUR");
    assert_eq!(e["timezone"], "UTC");
    assert_eq!(e["plugins"], json!([]));
    assert_eq!(e["sales_channels"], json!(["web"]));
    assert_eq!(e["meta_data"], json!({}));
    assert_eq!(e["seating_plan"], Value::Null);
    assert_eq!(e["location"], Value::Null);
    let to = chrono::DateTime::parse_from_rfc3339(e["date_to"].as_str().expect("date_to"))
        .expect("datetime");
    assert_eq!(
        to,
        chrono::DateTime::parse_from_rfc3339("2030-06-02T16:00:00Z").expect("datetime")
    );
    let keys = e["valid_keys"]["pretix_sig1"]
        .as_array()
        .expect("valid_keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(app.get(&format!("{EVENTS}conf/"), &token).await.body, e);
}

#[tokio::test]
async fn valid_keys_are_only_in_the_detail_view() {
    let (app, token) = setup().await;
    create(&app, &token, conf("conf")).await;
    let list = app.get(EVENTS, &token).await;
    assert_eq!(list.body["count"], 1);
    assert!(list.body["results"][0].get("valid_keys").is_none());
}

#[tokio::test]
async fn an_event_cannot_be_created_live() {
    let (app, token) = setup().await;
    let mut body = conf("conf");
    body["live"] = json!(true);
    let r = app.post(EVENTS, &token, body).await;
    assert_eq!(r.status, 400);
    assert!(r.body["live"][0].is_string());
    assert_eq!(app.get(EVENTS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn broken_rules_are_named_per_field() {
    let (app, token) = setup().await;
    let mut body = conf("conf");
    body["date_to"] = json!("2030-05-01T00:00:00Z");
    body["presale_start"] = json!("2030-05-01T00:00:00Z");
    body["presale_end"] = json!("2030-04-01T00:00:00Z");
    body["timezone"] = json!("Mars/Olympus");
    body["plugins"] = json!(["no.such.plugin"]);
    body["sales_channels"] = json!(["carrier-pigeon"]);
    let r = app.post(EVENTS, &token, body).await;
    assert_eq!(r.status, 400);
    for field in [
        "date_to",
        "presale_end",
        "timezone",
        "plugins",
        "sales_channels",
    ] {
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
    let r = app
        .post(EVENTS, &token, json!({"slug": "x", "currency": "XYZ"}))
        .await;
    assert_eq!(r.status, 400);
    for field in ["name", "currency", "date_from"] {
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
}

#[tokio::test]
async fn a_slug_is_unique_per_organizer_and_fixed() {
    let (app, token) = setup().await;
    create(&app, &token, conf("conf")).await;
    let r = app.post(EVENTS, &token, conf("conf")).await;
    assert_eq!(r.status, 400);
    assert!(r.body["slug"][0].is_string());
    let r = app
        .patch(&format!("{EVENTS}conf/"), &token, json!({"slug": "other"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["slug"][0].is_string());
    let r = app
        .patch(
            &format!("{EVENTS}conf/"),
            &token,
            json!({"has_subevents": true}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["has_subevents"][0].is_string());
    // Another organizer may use the same slug.
    app.organizer("other").await;
    let theirs = app.token("other", &["can_create_events"]).await;
    assert_eq!(
        app.post("/api/v1/organizers/other/events/", &theirs, conf("conf"))
            .await
            .status,
        201
    );
}

#[tokio::test]
async fn a_slug_the_shops_paths_take_is_refused() {
    let (app, token) = setup().await;
    for taken in ["widget", "Redeem"] {
        let r = app.post(EVENTS, &token, conf(taken)).await;
        assert_eq!(r.status, 400, "{taken}: {}", r.body);
        assert_eq!(
            r.body["slug"][0],
            format!("This field has an invalid value: {taken}.")
        );
    }
}

#[tokio::test]
async fn patch_changes_only_the_sent_fields() {
    let (app, token) = setup().await;
    create(&app, &token, conf("conf")).await;
    let r = app
        .patch(&format!("{EVENTS}conf/"), &token, json!({"is_public": false, "location": {"en": "Berlin"}, "date_to": null, "geo_lat": 52.5}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["is_public"], false);
    assert_eq!(r.body["location"], json!({"en": "Berlin"}));
    assert_eq!(r.body["date_to"], Value::Null);
    assert_eq!(r.body["geo_lat"], 52.5);
    assert_eq!(r.body["name"]["de"], "Konferenz");
}

#[tokio::test]
async fn going_live_needs_a_quota_and_a_payment_provider_for_priced_items() {
    let (app, token) = setup().await;
    create(&app, &token, conf("conf")).await;
    let id = event_id(&app, "conf").await;
    let url = format!("{EVENTS}conf/");
    let r = app.patch(&url, &token, json!({"live": true})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["live"][0].is_string());

    quota::ActiveModel {
        event_id: Set(id),
        name: Set("All".into()),
        size: Set(Some(10)),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("quota");
    item::ActiveModel {
        event_id: Set(id),
        name: Set(json!({"en": "Ticket"})),
        default_price_cents: Set(2300),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item");
    let r = app.patch(&url, &token, json!({"live": true})).await;
    assert_eq!(r.status, 400, "no payment provider yet");
    assert!(
        r.body["live"][0]
            .as_str()
            .expect("message")
            .contains("payment")
    );

    let r = app
        .patch(
            &format!("{url}settings/"),
            &token,
            json!({"payment_manual__enabled": true}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = app.patch(&url, &token, json!({"live": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["live"], true);
}

#[tokio::test]
async fn an_event_with_orders_cannot_be_deleted() {
    let (app, token) = setup().await;
    create(&app, &token, conf("sold")).await;
    create(&app, &token, conf("empty")).await;
    let id = event_id(&app, "sold").await;
    order::ActiveModel {
        event_id: Set(id),
        code: Set("ABC12".into()),
        status: Set("p".into()),
        datetime: Set(chrono::Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("order");
    let r = app.delete(&format!("{EVENTS}sold/"), &token).await;
    assert_eq!(r.status, 403);
    assert!(r.body["detail"].is_string());
    assert_eq!(
        app.delete(&format!("{EVENTS}empty/"), &token).await.status,
        204
    );
    assert_eq!(
        app.get(&format!("{EVENTS}empty/"), &token).await.status,
        403
    );
    assert_eq!(app.get(&format!("{EVENTS}sold/"), &token).await.status, 200);
}

#[tokio::test]
async fn the_list_filters_and_orders_as_the_spec_lists() {
    let (app, token) = setup().await;
    let mut past = conf("past");
    past["date_from"] = json!("2020-01-01T10:00:00Z");
    past["date_to"] = json!("2020-01-02T10:00:00Z");
    past["is_public"] = json!(false);
    create(&app, &token, past).await;
    create(&app, &token, conf("future")).await;
    let mut series = conf("series");
    series["has_subevents"] = json!(true);
    series["sales_channels"] = json!(["resellers"]);
    create(&app, &token, series).await;

    let slugs = |r: &Value| {
        r["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|e| e["slug"].as_str().expect("slug").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        slugs(&app.get(EVENTS, &token).await.body),
        ["future", "past", "series"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?ordering=-slug"), &token)
                .await
                .body
        ),
        ["series", "past", "future"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?ordering=date_from"), &token)
                .await
                .body
        ),
        ["past", "future", "series"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?is_public=false"), &token)
                .await
                .body
        ),
        ["past"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?has_subevents=true"), &token)
                .await
                .body
        ),
        ["series"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?is_future=true"), &token)
                .await
                .body
        ),
        ["future"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?is_future=false"), &token)
                .await
                .body
        ),
        ["past", "series"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?is_past=true"), &token)
                .await
                .body
        ),
        ["past"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?ends_after=2025-01-01T00:00:00Z"), &token)
                .await
                .body
        ),
        ["future"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?sales_channel=resellers"), &token)
                .await
                .body
        ),
        ["series"]
    );
    assert_eq!(
        slugs(&app.get(&format!("{EVENTS}?live=true"), &token).await.body),
        Vec::<String>::new()
    );
    assert_eq!(
        app.get(&format!("{EVENTS}?ordering=price"), &token)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn the_list_filters_by_meta_data_with_defaults() {
    let (app, token) = setup().await;
    let r = app
        .post("/api/v1/organizers/acme/event_meta_properties/", &token, json!({"name": "type", "default": "conference", "choices": [{"key": "conference"}, {"key": "concert"}]}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    app.post(
        "/api/v1/organizers/acme/event_meta_properties/",
        &token,
        json!({"name": "region"}),
    )
    .await;
    let mut gig = conf("gig");
    gig["meta_data"] = json!({"type": "concert", "region": "north"});
    create(&app, &token, gig).await;
    create(&app, &token, conf("talks")).await;

    let e = app.get(&format!("{EVENTS}talks/"), &token).await;
    assert_eq!(
        e.body["meta_data"],
        json!({"type": "conference"}),
        "defaults are shown"
    );
    let slugs = |r: &Value| {
        r["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|e| e["slug"].as_str().expect("slug").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?attr[type]=conference"), &token)
                .await
                .body
        ),
        ["talks"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?attr%5Btype%5D=concert"), &token)
                .await
                .body
        ),
        ["gig"]
    );
    assert_eq!(
        slugs(
            &app.get(&format!("{EVENTS}?attr[region]="), &token)
                .await
                .body
        ),
        ["talks"]
    );

    let mut bad = conf("bad");
    bad["meta_data"] = json!({"type": "opera"});
    let r = app.post(EVENTS, &token, bad).await;
    assert_eq!(r.status, 400);
    assert!(r.body["meta_data"][0].is_string());
    let mut unknown = conf("bad");
    unknown["meta_data"] = json!({"colour": "red"});
    assert_eq!(app.post(EVENTS, &token, unknown).await.status, 400);
}

#[tokio::test]
async fn a_clone_copies_the_configuration_and_takes_the_sent_fields() {
    let (app, token) = setup().await;
    let mut source = conf("conf");
    source["is_public"] = json!(false);
    source["testmode"] = json!(true);
    source["timezone"] = json!("Europe/Berlin");
    source["item_meta_properties"] = json!({"day": "1"});
    create(&app, &token, source).await;
    let src_id = event_id(&app, "conf").await;
    app.patch(
        &format!("{EVENTS}conf/settings/"),
        &token,
        json!({"waiting_list_enabled": true, "payment_term_days": 3}),
    )
    .await;
    item::ActiveModel {
        event_id: Set(src_id),
        name: Set(json!({"en": "Ticket"})),
        default_price_cents: Set(2300),
        position: Set(2),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item");

    let mut body = conf("conf-2031");
    body["date_from"] = json!("2031-06-01T09:00:00Z");
    body["date_to"] = json!("2031-06-02T09:00:00Z");
    let r = app
        .post(&format!("{EVENTS}conf/clone/"), &token, body)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let copy = r.body;
    let original = app.get(&format!("{EVENTS}conf/"), &token).await.body;
    assert_eq!(copy["slug"], "conf-2031");
    assert_eq!(
        copy["date_from"]
            .as_str()
            .map(|s| s.starts_with("2031-06-01")),
        Some(true)
    );
    for field in [
        "is_public",
        "testmode",
        "has_subevents",
        "plugins",
        "timezone",
        "item_meta_properties",
        "sales_channels",
        "meta_data",
        "currency",
        "name",
    ] {
        assert_eq!(copy[field], original[field], "{field}");
    }
    assert_ne!(
        copy["valid_keys"], original["valid_keys"],
        "a clone gets its own keys"
    );
    let settings = app
        .get(&format!("{EVENTS}conf-2031/settings/"), &token)
        .await
        .body;
    assert_eq!(settings["waiting_list_enabled"], true);
    assert_eq!(settings["payment_term_days"], 3);

    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let copy_id = event_id(&app, "conf-2031").await;
    let items = item::Entity::find()
        .filter(item::Column::EventId.eq(copy_id))
        .all(&app.db)
        .await
        .expect("items");
    assert_eq!(items.len(), 1);
    assert_eq!((items[0].default_price_cents, items[0].position), (2300, 2));
}

#[tokio::test]
async fn sent_values_win_over_the_clones_copies() {
    let (app, token) = setup().await;
    let mut source = conf("conf");
    source["is_public"] = json!(false);
    create(&app, &token, source).await;
    let mut body = conf("copy");
    body["is_public"] = json!(true);
    body["has_subevents"] = json!(true);
    let r = app
        .post(&format!("{EVENTS}conf/clone/"), &token, body)
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.body["is_public"], true);
    assert_eq!(r.body["has_subevents"], true);
}

#[tokio::test]
async fn cloning_another_organizers_event_is_403() {
    let (app, token) = setup().await;
    app.organizer("other").await;
    let theirs = app.token("other", &["can_create_events"]).await;
    app.post("/api/v1/organizers/other/events/", &theirs, conf("secret"))
        .await;
    let r = app
        .post(&format!("{EVENTS}secret/clone/"), &token, conf("stolen"))
        .await;
    assert_eq!(r.status, 403);
    let r = app
        .post(
            "/api/v1/organizers/other/events/secret/clone/",
            &token,
            conf("stolen"),
        )
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn event_permissions_follow_the_team() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    app.event("acme", "hidden").await;
    let creator = app.token("acme", &["can_create_events"]).await;
    let viewer = app.token("acme", &["can_view_orders"]).await;
    let limited = app
        .token_for(
            "acme",
            Some(
                [tessera::domain::permissions::Permission::ChangeEventSettings]
                    .into_iter()
                    .collect(),
            ),
            &["conf"],
        )
        .await;

    assert_eq!(app.post(EVENTS, &viewer, conf("x")).await.status, 403);
    assert_eq!(app.post(EVENTS, &creator, conf("x")).await.status, 201);
    assert_eq!(
        app.get(&format!("{EVENTS}conf/"), &creator).await.status,
        403,
        "creating is not changing"
    );
    assert_eq!(
        app.get(&format!("{EVENTS}conf/"), &viewer).await.status,
        403
    );
    assert_eq!(
        app.get(&format!("{EVENTS}conf/"), &limited).await.status,
        200
    );
    assert_eq!(
        app.get(&format!("{EVENTS}hidden/"), &limited).await.status,
        403
    );
    let list = app.get(EVENTS, &limited).await;
    assert_eq!(list.body["count"], 1);
    assert_eq!(
        app.get(&format!("{EVENTS}nothing/"), &limited).await.status,
        403
    );
    assert_eq!(
        app.call(poem::http::Method::GET, EVENTS, None, None)
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn lang_flattens_multi_language_strings_with_fallback() {
    let (app, token) = setup().await;
    let mut body = conf("conf");
    body["location"] = json!({"en": "Berlin", "de": ""});
    create(&app, &token, body).await;
    let de = app.get(&format!("{EVENTS}conf/?lang=de"), &token).await;
    assert_eq!(de.body["name"], "Konferenz");
    assert_eq!(
        de.body["location"], "Berlin",
        "an empty translation falls back"
    );
    let fr = app.get(&format!("{EVENTS}conf/?lang=fr"), &token).await;
    assert_eq!(fr.body["name"], "Conference");
    let list = app.get(&format!("{EVENTS}?lang=de"), &token).await;
    assert_eq!(list.body["results"][0]["name"], "Konferenz");
    assert_eq!(
        app.get(&format!("{EVENTS}conf/"), &token).await.body["name"]["de"],
        "Konferenz"
    );
}

struct Stamps;

impl tessera::Plugin for Stamps {
    fn name(&self) -> &'static str {
        "stamps"
    }
    fn version(&self) -> &'static str {
        "1.0"
    }
    fn description(&self) -> &'static str {
        "Collects stamps."
    }
}

#[tokio::test]
async fn only_registered_plugins_can_be_enabled() {
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(Stamps)).await;
    app.organizer("acme").await;
    let token = app
        .token("acme", &["can_create_events", "can_change_event_settings"])
        .await;
    let mut body = conf("conf");
    body["plugins"] = json!(["stamps"]);
    let r = app.post(EVENTS, &token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["plugins"], json!(["stamps"]));
    let r = app
        .patch(
            &format!("{EVENTS}conf/"),
            &token,
            json!({"plugins": ["stamps", "tickets.pdf"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["plugins"][0]
            .as_str()
            .expect("message")
            .contains("tickets.pdf")
    );
    let r = app
        .patch(&format!("{EVENTS}conf/"), &token, json!({"plugins": []}))
        .await;
    assert_eq!(r.body["plugins"], json!([]));
}

#[tokio::test]
async fn a_clone_remaps_items_to_the_copied_categories_and_tax_rules() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    create(&app, &token, conf("conf")).await;
    let base = format!("{EVENTS}conf/");
    let cat = app
        .post(
            &format!("{base}categories/"),
            &token,
            json!({"name": {"en": "Tickets"}, "position": 3}),
        )
        .await;
    assert_eq!(cat.status, 201, "{}", cat.body);
    let rule = app
        .post(
            &format!("{base}taxrules/"),
            &token,
            json!({"name": {"en": "VAT"}, "rate": "19.00"}),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.body);
    let src_id = event_id(&app, "conf").await;
    item::ActiveModel {
        event_id: Set(src_id),
        name: Set(json!({"en": "Ticket"})),
        category_id: Set(cat.body["id"].as_i64()),
        tax_rule_id: Set(rule.body["id"].as_i64()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item");

    assert_eq!(
        app.post(&format!("{base}clone/"), &token, conf("copy"))
            .await
            .status,
        201
    );
    let copied_cats = app
        .get(&format!("{EVENTS}copy/categories/"), &token)
        .await
        .body;
    let copied_rules = app
        .get(&format!("{EVENTS}copy/taxrules/"), &token)
        .await
        .body;
    assert_eq!(copied_cats["count"], 1);
    assert_eq!(copied_rules["count"], 1);
    let (new_cat, new_rule) = (&copied_cats["results"][0], &copied_rules["results"][0]);
    assert_ne!(new_cat["id"], cat.body["id"]);
    for field in [
        "name",
        "position",
        "is_addon",
        "description",
        "internal_name",
    ] {
        assert_eq!(new_cat[field], cat.body[field], "category {field}");
    }
    for field in ["name", "rate", "price_includes_tax", "eu_reverse_charge"] {
        assert_eq!(new_rule[field], rule.body[field], "tax rule {field}");
    }
    let copy_id = event_id(&app, "copy").await;
    let items = item::Entity::find()
        .filter(item::Column::EventId.eq(copy_id))
        .all(&app.db)
        .await
        .expect("items");
    assert_eq!(items[0].category_id, new_cat["id"].as_i64());
    assert_eq!(items[0].tax_rule_id, new_rule["id"].as_i64());
}

fn hall() -> Value {
    json!({
        "name": "Hall",
        "categories": [{"name": "Stalls"}, {"name": "Balcony"}],
        "zones": [{"name": "Main", "rows": [
            {"row_number": "1", "seats": [
                {"seat_guid": "a1", "seat_number": "1", "category": "Stalls"},
                {"seat_guid": "a2", "seat_number": "2", "category": "Stalls"}
            ]},
            {"row_number": "2", "seats": [{"seat_guid": "b1", "seat_number": "1", "category": "Balcony"}]}
        ]}]
    })
}

#[tokio::test]
async fn setting_a_seating_plan_creates_seats_and_a_clone_takes_plan_mapping_and_blocks() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    create(&app, &token, conf("conf")).await;
    let plan = app
        .post(
            "/api/v1/organizers/acme/seatingplans/",
            &token,
            json!({"name": "Hall", "layout": hall()}),
        )
        .await;
    assert_eq!(plan.status, 201, "{}", plan.body);
    let src_id = event_id(&app, "conf").await;
    let ticket = item::ActiveModel {
        event_id: Set(src_id),
        name: Set(json!({"en": "Seat"})),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item");

    let url = format!("{EVENTS}conf/");
    let r = app.patch(&url, &token, json!({"seating_plan": plan.body["id"], "seat_category_mapping": {"Stalls": ticket.id, "Balcony": null}})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["seating_plan"], plan.body["id"]);
    assert_eq!(r.body["seat_category_mapping"]["Stalls"], ticket.id);
    let seats = app.get(&format!("{url}seats/"), &token).await;
    assert_eq!(seats.body["count"], 3);
    let a1 = seats.body["results"]
        .as_array()
        .expect("seats")
        .iter()
        .find(|s| s["seat_guid"] == "a1")
        .expect("a1")["id"]
        .clone();
    assert_eq!(
        app.patch(
            &format!("{url}seats/{a1}/"),
            &token,
            json!({"blocked": true})
        )
        .await
        .status,
        200
    );

    let other = app.event("acme", "other").await;
    let foreign = item::ActiveModel {
        event_id: Set(other),
        name: Set(json!({"en": "X"})),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item");
    let r = app
        .patch(
            &url,
            &token,
            json!({"seat_category_mapping": {"Stalls": foreign.id}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["seat_category_mapping"][0].is_string(), "{}", r.body);
    let r = app
        .patch(
            &url,
            &token,
            json!({"seat_category_mapping": {"Opera box": null}}),
        )
        .await;
    assert_eq!(r.status, 400);

    let r = app
        .post(&format!("{url}clone/"), &token, conf("copy"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["seating_plan"], plan.body["id"]);
    let copy_id = event_id(&app, "copy").await;
    let copied_item = item::Entity::find()
        .filter(item::Column::EventId.eq(copy_id))
        .one(&app.db)
        .await
        .expect("q")
        .expect("item");
    assert_eq!(
        r.body["seat_category_mapping"]["Stalls"], copied_item.id,
        "the mapping points to the copied item"
    );
    let seats = app.get(&format!("{EVENTS}copy/seats/"), &token).await;
    assert_eq!(seats.body["count"], 3);
    let blocked = app
        .get(&format!("{EVENTS}copy/seats/?blocked=true"), &token)
        .await;
    assert_eq!(blocked.body["count"], 1);
    assert_eq!(blocked.body["results"][0]["seat_guid"], "a1");

    let r = app
        .delete(
            &format!("/api/v1/organizers/acme/seatingplans/{}/", plan.body["id"]),
            &token,
        )
        .await;
    assert_eq!(r.status, 403, "the plan is in use");
}

/// Whether the event with this ID has the talk side switched on, as stored.
async fn talk_enabled(app: &TestApp, id: i64) -> bool {
    use sea_orm::EntityTrait;
    tessera::db::entities::event::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .expect("query")
        .expect("event")
        .talk_enabled
}

#[tokio::test]
async fn the_talk_side_is_off_until_switched_on_by_create_or_patch() {
    let (app, token) = setup().await;
    let plain = create(&app, &token, conf("plain")).await;
    assert_eq!(plain["talk_enabled"], false);

    let mut body = conf("talks");
    body["talk_enabled"] = json!(true);
    let talks = create(&app, &token, body).await;
    assert_eq!(talks["talk_enabled"], true);
    assert!(talk_enabled(&app, event_id(&app, "talks").await).await);
    assert_eq!(
        app.get(&format!("{EVENTS}talks/"), &token).await.body["talk_enabled"],
        true
    );

    let r = app
        .patch(
            &format!("{EVENTS}plain/"),
            &token,
            json!({"talk_enabled": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["talk_enabled"], true);
    let r = app
        .patch(
            &format!("{EVENTS}talks/"),
            &token,
            json!({"talk_enabled": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["talk_enabled"], false);
    assert!(!talk_enabled(&app, event_id(&app, "talks").await).await);
    // Other changes leave it as it is.
    let r = app
        .patch(
            &format!("{EVENTS}plain/"),
            &token,
            json!({"is_public": false}),
        )
        .await;
    assert_eq!(r.body["talk_enabled"], true);
    let list = app.get(EVENTS, &token).await;
    let flags: Vec<(&str, bool)> = list.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|e| {
            (
                e["slug"].as_str().unwrap_or_default(),
                e["talk_enabled"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(flags, [("plain", true), ("talks", false)]);

    let r = app
        .patch(
            &format!("{EVENTS}plain/"),
            &token,
            json!({"talk_enabled": "yes"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["talk_enabled"][0].is_string(), "{}", r.body);
}

#[tokio::test]
async fn a_clone_joins_the_talk_side_only_when_asked() {
    let (app, token) = setup().await;
    let mut body = conf("talks");
    body["talk_enabled"] = json!(true);
    create(&app, &token, body).await;
    let clone = format!("{EVENTS}talks/clone/");
    let r = app.post(&clone, &token, conf("copy")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["talk_enabled"], false);
    let mut body = conf("copy2");
    body["talk_enabled"] = json!(true);
    let r = app.post(&clone, &token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["talk_enabled"], true);
}

#[tokio::test]
async fn talk_side_slugs_are_unique_across_organizers() {
    let (app, token) = setup().await;
    app.organizer("other").await;
    let theirs = app
        .token("other", &["can_create_events", "can_change_event_settings"])
        .await;
    let other_events = "/api/v1/organizers/other/events/";
    let mut on = conf("conf");
    on["talk_enabled"] = json!(true);
    let r = app.post(other_events, &theirs, on.clone()).await;
    assert_eq!(r.status, 201, "{}", r.body);

    // The same slug is fine off the talk side ...
    create(&app, &token, conf("conf")).await;
    // ... but not on it, by create or by change.
    let r = app
        .post(EVENTS, &token, {
            let mut body = on.clone();
            body["slug"] = json!("conf2");
            body
        })
        .await;
    assert_eq!(r.status, 201, "another slug is free: {}", r.body);
    let r = app
        .patch(
            &format!("{EVENTS}conf/"),
            &token,
            json!({"talk_enabled": true}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["slug"][0]
            .as_str()
            .is_some_and(|m| m.contains("talk side"))
    );
    assert!(!talk_enabled(&app, event_id_of(&app, "acme", "conf").await).await);

    // Creating with it on is refused too (under a third organizer, without a clash of its own).
    app.organizer("third").await;
    let third = app.token("third", &["can_create_events"]).await;
    let r = app
        .post("/api/v1/organizers/third/events/", &third, on.clone())
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["slug"][0].is_string(), "{}", r.body);

    // Once the other organizer switches it off, the slug is free for the talk side.
    let r = app
        .patch(
            &format!("{other_events}conf/"),
            &theirs,
            json!({"talk_enabled": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(
            &format!("{EVENTS}conf/"),
            &token,
            json!({"talk_enabled": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Switching on what is on already, or changing something else, is no clash with itself.
    let r = app
        .patch(
            &format!("{EVENTS}conf/"),
            &token,
            json!({"talk_enabled": true, "is_public": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The ID of an organizer's event.
async fn event_id_of(app: &TestApp, organizer: &str, slug: &str) -> i64 {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use tessera::db::entities::{event, organizer as org};
    let org = org::Entity::find()
        .filter(org::Column::Slug.eq(organizer))
        .one(&app.db)
        .await
        .expect("query")
        .expect("organizer");
    event::Entity::find()
        .filter(event::Column::OrganizerId.eq(org.id))
        .filter(event::Column::Slug.eq(slug))
        .one(&app.db)
        .await
        .expect("query")
        .expect("event")
        .id
}

#[tokio::test]
async fn two_organizers_racing_for_a_talk_side_slug_get_one_200_and_one_400() {
    let (app, token) = setup().await;
    app.organizer("other").await;
    let theirs = app
        .token("other", &["can_create_events", "can_change_event_settings"])
        .await;
    for round in 0..5 {
        let slug = format!("race{round}");
        create(&app, &token, conf(&slug)).await;
        let r = app
            .post("/api/v1/organizers/other/events/", &theirs, conf(&slug))
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        let on = json!({"talk_enabled": true});
        let ours = format!("{EVENTS}{slug}/");
        let other = format!("/api/v1/organizers/other/events/{slug}/");
        let (a, b) = tokio::join!(
            app.patch(&ours, &token, on.clone()),
            app.patch(&other, &theirs, on.clone())
        );
        let mut statuses = [a.status, b.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 400], "{} / {}", a.body, b.body);
        let refused = if a.status == 400 { &a } else { &b };
        assert!(refused.body["slug"][0].is_string(), "{}", refused.body);
        let on_talk = talk_enabled(&app, event_id_of(&app, "acme", &slug).await).await as u8
            + talk_enabled(&app, event_id_of(&app, "other", &slug).await).await as u8;
        assert_eq!(on_talk, 1);
    }
}
