use serde_json::json;
use tessera_tests::TestApp;

const PROPS: &str = "/api/v1/organizers/acme/event_meta_properties/";
const EVENTS: &str = "/api/v1/organizers/acme/events/";
const ITEM_PROPS: &str = "/api/v1/organizers/acme/events/gig/item_meta_properties/";

fn gig(slug: &str) -> serde_json::Value {
    json!({"name": {"en": "Gig"}, "slug": slug, "currency": "EUR", "date_from": "2030-01-01T20:00:00Z"})
}

async fn organizer_admin(app: &TestApp) -> String {
    app.organizer("acme").await;
    app.token(
        "acme",
        &[
            "can_change_organizer_settings",
            "can_create_events",
            "can_change_event_settings",
            "can_change_items",
        ],
    )
    .await
}

#[tokio::test]
async fn an_event_property_is_created_with_choices_changed_listed_and_deleted() {
    let app = TestApp::spawn().await;
    let token = organizer_admin(&app).await;
    let r = app
        .post(
            PROPS,
            &token,
            json!({"name": "genre", "default": "jazz", "protected": true, "filter_public": true,
                   "public_label": {"en": "Genre", "de": "Genre"},
                   "choices": [{"key": "jazz", "label": {"en": "Jazz"}}, {"key": "rock"}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_i64().expect("id");
    assert_eq!(r.body["required"], false);
    assert_eq!(
        r.body["filter_allowed"], true,
        "filters are allowed by default"
    );
    assert_eq!(r.body["protected"], true);
    assert_eq!(
        r.body["public_label"],
        json!({"en": "Genre", "de": "Genre"})
    );
    assert_eq!(
        r.body["choices"],
        json!([{"key": "jazz", "label": {"en": "Jazz"}}, {"key": "rock"}])
    );

    let r = app
        .patch(&format!("{PROPS}{id}/"), &token, json!({"default": "pop"}))
        .await;
    assert_eq!(r.status, 400, "the default must be one of the choices");
    assert_eq!(
        r.body["non_field_errors"][0],
        "You cannot set a default value that is not a valid value."
    );
    let r = app
        .patch(
            &format!("{PROPS}{id}/"),
            &token,
            json!({"choices": [{"key": "jazz"}, {"key": "jazz"}]}),
        )
        .await;
    assert_eq!(r.status, 400, "choice keys are unique");
    assert!(r.body["choices"][0].is_string(), "{}", r.body);
    let r = app
        .patch(
            &format!("{PROPS}{id}/"),
            &token,
            json!({"choices": null, "default": "pop", "public_label": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["choices"],
        json!(null),
        "no choices allows any value"
    );
    assert_eq!(r.body["public_label"], json!(null));
    assert_eq!(r.body["default"], "pop");

    assert_eq!(app.get(PROPS, &token).await.body["count"], 1);
    let r = app.post(PROPS, &token, json!({"name": "genre"})).await;
    assert_eq!(r.status, 400, "names are unique");
    assert!(r.body["name"][0].is_string());
    let r = app.post(PROPS, &token, json!({"name": "bad name"})).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["name"][0],
        "The property name may only contain letters, numbers and underscores."
    );

    let mut event = gig("gig");
    event["meta_data"] = json!({"genre": "rock"});
    assert_eq!(app.post(EVENTS, &token, event).await.status, 201);
    assert_eq!(
        app.delete(&format!("{PROPS}{id}/"), &token).await.status,
        204
    );
    let shown = app.get(&format!("{EVENTS}gig/"), &token).await;
    assert_eq!(
        shown.body["meta_data"],
        json!({}),
        "values go with the property"
    );
    assert_eq!(
        app.get(&format!("{PROPS}{id}/"), &token).await.status,
        403,
        "a deleted property is not found"
    );
}

#[tokio::test]
async fn event_values_must_be_among_the_choices_and_required_ones_given() {
    let app = TestApp::spawn().await;
    let token = organizer_admin(&app).await;
    app.post(
        PROPS,
        &token,
        json!({"name": "genre", "choices": [{"key": "jazz"}, {"key": "rock"}]}),
    )
    .await;
    app.post(PROPS, &token, json!({"name": "venue", "required": true}))
        .await;
    let r = app.post(EVENTS, &token, gig("gig")).await;
    assert_eq!(r.status, 400, "venue is required");
    assert!(
        r.body["meta_data"][0]
            .as_str()
            .expect("msg")
            .contains("venue")
    );
    let mut event = gig("gig");
    event["meta_data"] = json!({"venue": "Hall", "genre": "pop"});
    let r = app.post(EVENTS, &token, event).await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["meta_data"][0]
            .as_str()
            .expect("msg")
            .contains("pop")
    );
}

#[tokio::test]
async fn protected_properties_are_kept_as_they_are_for_callers_without_organizer_settings() {
    let app = TestApp::spawn().await;
    let admin = organizer_admin(&app).await;
    app.post(PROPS, &admin, json!({"name": "budget", "protected": true}))
        .await;
    app.post(PROPS, &admin, json!({"name": "genre"})).await;
    let mut event = gig("gig");
    event["meta_data"] = json!({"budget": "A", "genre": "jazz"});
    assert_eq!(app.post(EVENTS, &admin, event).await.status, 201);

    let planner = app
        .token("acme", &["can_create_events", "can_change_event_settings"])
        .await;
    let r = app
        .patch(
            &format!("{EVENTS}gig/"),
            &planner,
            json!({"meta_data": {"budget": "Z", "genre": "rock"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["meta_data"], json!({"budget": "A", "genre": "rock"}));
    let r = app
        .patch(&format!("{EVENTS}gig/"), &planner, json!({"meta_data": {}}))
        .await;
    assert_eq!(r.body["meta_data"], json!({"budget": "A"}), "nor removed");

    let mut other = gig("other");
    other["meta_data"] = json!({"budget": "Z", "genre": "rock"});
    let r = app.post(EVENTS, &planner, other).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body["meta_data"],
        json!({"genre": "rock"}),
        "ignored silently"
    );

    let r = app
        .patch(
            &format!("{EVENTS}gig/"),
            &admin,
            json!({"meta_data": {"budget": "B"}}),
        )
        .await;
    assert_eq!(r.body["meta_data"], json!({"budget": "B"}));
}

#[tokio::test]
async fn event_properties_are_read_by_any_caller_of_the_organizer_and_changed_only_with_its_settings()
 {
    let app = TestApp::spawn().await;
    let admin = organizer_admin(&app).await;
    app.post(PROPS, &admin, json!({"name": "genre"})).await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(app.get(PROPS, &token).await.body["count"], 1);
    assert_eq!(
        app.post(PROPS, &token, json!({"name": "x"})).await.status,
        403
    );
    app.organizer("other").await;
    let stranger = app.token("other", &["can_change_organizer_settings"]).await;
    assert_eq!(app.get(PROPS, &stranger).await.status, 403);
}

#[tokio::test]
async fn item_properties_have_their_own_resource_and_show_on_the_event_and_its_items() {
    let app = TestApp::spawn().await;
    let token = organizer_admin(&app).await;
    let mut event = gig("gig");
    event["item_meta_properties"] = json!({"colour": "blue"});
    let r = app.post(EVENTS, &token, event).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["item_meta_properties"], json!({"colour": "blue"}));

    let list = app.get(ITEM_PROPS, &token).await;
    assert_eq!(list.body["count"], 1, "{}", list.body);
    let colour = &list.body["results"][0];
    assert_eq!(colour["name"], "colour");
    assert_eq!(colour["default"], "blue");
    assert_eq!(colour["allowed_values"], json!(null));

    let r = app
        .post(
            ITEM_PROPS,
            &token,
            json!({"name": "size", "required": true, "allowed_values": ["S", "M", "L"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let size = r.body["id"].as_i64().expect("id");
    assert_eq!(r.body["allowed_values"], json!(["S", "M", "L"]));
    let r = app.post(ITEM_PROPS, &token, json!({"name": "size"})).await;
    assert_eq!(r.status, 400, "names are unique per event");
    let r = app.post(ITEM_PROPS, &token, json!({"name": "si ze"})).await;
    assert_eq!(r.status, 400);

    let shown = app.get(&format!("{EVENTS}gig/"), &token).await.body;
    assert_eq!(
        shown["item_meta_properties"],
        json!({"colour": "blue", "size": ""})
    );

    let items = "/api/v1/organizers/acme/events/gig/items/";
    let r = app
        .post(
            items,
            &token,
            json!({"name": {"en": "T"}, "default_price": "1.00", "meta_data": {"size": "XL"}}),
        )
        .await;
    assert_eq!(r.status, 400, "a value outside the allowed ones");
    let r = app
        .post(
            items,
            &token,
            json!({"name": {"en": "T"}, "default_price": "1.00", "meta_data": {"size": "M"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let item = r.body["id"].as_i64().expect("id");
    assert_eq!(r.body["meta_data"], json!({"colour": "blue", "size": "M"}));

    let r = app
        .patch(
            &format!("{ITEM_PROPS}{size}/"),
            &token,
            json!({"allowed_values": null, "default": "M"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["allowed_values"], json!(null));

    assert_eq!(
        app.delete(&format!("{ITEM_PROPS}{size}/"), &token)
            .await
            .status,
        204
    );
    let shown = app.get(&format!("{items}{item}/"), &token).await.body;
    assert_eq!(
        shown["meta_data"],
        json!({"colour": "blue"}),
        "values go too"
    );

    let r = app
        .post(&format!("{EVENTS}gig/clone/"), &token, gig("gig-2"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body["item_meta_properties"],
        json!({"colour": "blue"}),
        "a clone copies the item properties"
    );
}

#[tokio::test]
async fn item_properties_are_changed_only_with_the_events_settings() {
    let app = TestApp::spawn().await;
    let admin = organizer_admin(&app).await;
    assert_eq!(app.post(EVENTS, &admin, gig("gig")).await.status, 201);
    let reader = app.token("acme", &["can_view_orders"]).await;
    assert_eq!(app.get(ITEM_PROPS, &reader).await.status, 200);
    assert_eq!(
        app.post(ITEM_PROPS, &reader, json!({"name": "x"}))
            .await
            .status,
        403
    );
}
