use std::time::{Duration, Instant};

use poem::http::Method;
use sea_orm::EntityTrait;
use serde_json::json;
use tessera::db::entities::event;
use tessera::db::entities::item::Entity as ItemRow;

use crate::catalogue_support::{
    EVENT, add_order, another_event, catalogue_app, created, hold, id, item, plain_item,
};

fn items() -> String {
    format!("{EVENT}/items/")
}

#[tokio::test]
async fn an_item_is_created_with_every_field_and_shown_as_sent() {
    let (app, _, token) = catalogue_app().await;
    let quota = created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Q", "size": 5}),
    )
    .await;
    let cat = created(
        &app,
        &format!("{EVENT}/categories/"),
        &token,
        json!({"name": {"en": "Tickets"}}),
    )
    .await;
    let tax = created(
        &app,
        &format!("{EVENT}/taxrules/"),
        &token,
        json!({"name": {"en": "VAT"}, "rate": "19.00"}),
    )
    .await;
    let body = json!({
        "name": {"en": "Ticket", "de": "Karte"},
        "internal_name": "t1",
        "default_price": "23.50",
        "category": id(&cat),
        "active": false,
        "description": {"en": "A **ticket**"},
        "free_price": true,
        "tax_rule": id(&tax),
        "admission": true,
        "position": 4,
        "sales_channels": ["web", "resellers"],
        "available_from": "2030-01-01T10:00:00Z",
        "available_until": "2030-02-01T10:00:00Z",
        "hidden_if_available": id(&quota),
        "require_voucher": true,
        "hide_without_voucher": true,
        "allow_cancel": false,
        "min_per_order": 1,
        "max_per_order": 4,
        "checkin_attention": true,
        "original_price": "30.00",
        "require_approval": true,
        "require_bundling": true,
        "generate_tickets": false,
        "allow_waitinglist": false,
        "issue_giftcard": true,
        "show_quota_left": true,
    });
    let it = item(&app, &token, body.clone()).await;
    for (key, value) in body.as_object().expect("object") {
        if key.starts_with("available_") {
            let at = |v: &serde_json::Value| {
                chrono::DateTime::parse_from_rfc3339(v.as_str().expect("datetime"))
                    .expect("rfc3339")
            };
            assert_eq!(at(&it[key]), at(value), "{key}");
        } else {
            assert_eq!(&it[key], value, "{key}");
        }
    }
    assert_eq!(it["tax_rate"], "19.00");
    assert_eq!(it["has_variations"], false);
    assert_eq!(it["variations"], json!([]));
    assert_eq!(it["addons"], json!([]));
    assert_eq!(it["bundles"], json!([]));
    assert_eq!(it["picture"], json!(null));
    assert_eq!(it["meta_data"], json!({}));

    let shown = app.get(&format!("{}{}/", items(), id(&it)), &token).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.body, it);
}

#[tokio::test]
async fn a_new_item_takes_pretix_defaults() {
    let (app, _, token) = catalogue_app().await;
    let it = item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "10"}),
    )
    .await;
    assert_eq!(it["default_price"], "10.00");
    assert_eq!(it["sales_channels"], json!(["web"]));
    assert_eq!(it["active"], true);
    assert_eq!(it["allow_cancel"], true);
    assert_eq!(it["allow_waitinglist"], true);
    assert_eq!(it["tax_rate"], "0.00");
    assert_eq!(it["tax_rule"], json!(null));
    assert_eq!(it["generate_tickets"], json!(null));
    assert_eq!(it["show_quota_left"], json!(null));
    assert_eq!(it["min_per_order"], json!(null));
}

#[tokio::test]
async fn an_item_is_changed_replaced_and_deleted() {
    let (app, _, token) = catalogue_app().await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    let one = format!("{}{item_id}/", items());

    let r = app
        .patch(
            &one,
            &token,
            json!({"default_price": "12.00", "position": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["default_price"], "12.00");
    assert_eq!(r.body["position"], 3);
    assert_eq!(r.body["name"]["en"], "Ticket");

    let r = app
        .put(
            &one,
            &token,
            json!({"name": {"en": "Pass"}, "default_price": "5.00"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "Pass"}));
    assert_eq!(r.body["position"], 0);

    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&one, &token).await.status, 403);
}

#[tokio::test]
async fn an_item_created_with_variations_add_ons_and_bundles_has_them_for_good() {
    let (app, _, token) = catalogue_app().await;
    let addon_cat = created(
        &app,
        &format!("{EVENT}/categories/"),
        &token,
        json!({"name": {"en": "Extras"}, "is_addon": true}),
    )
    .await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let it = item(
        &app,
        &token,
        json!({
            "name": {"en": "Ticket"}, "default_price": "20.00",
            "variations": [
                {"value": {"en": "Regular"}},
                {"value": {"en": "Reduced"}, "default_price": "12.00", "position": 1}
            ],
            "addons": [{"addon_category": id(&addon_cat), "min_count": 0, "max_count": 2}],
            "bundles": [{"bundled_item": shirt, "count": 1, "designated_price": "5.00"}]
        }),
    )
    .await;
    assert_eq!(it["has_variations"], true);
    let vars = it["variations"].as_array().expect("variations");
    assert_eq!(vars.len(), 2);
    assert_eq!(vars[0]["default_price"], json!(null));
    assert_eq!(vars[0]["price"], "20.00");
    assert_eq!(vars[1]["price"], "12.00");
    assert_eq!(it["addons"][0]["addon_category"], id(&addon_cat));
    assert_eq!(it["addons"][0]["max_count"], 2);
    assert_eq!(it["bundles"][0]["bundled_item"], shirt);
    assert_eq!(it["bundles"][0]["designated_price"], "5.00");

    // The item's price is what variations without their own price cost.
    let one = format!("{}{}/", items(), id(&it));
    let r = app
        .patch(&one, &token, json!({"default_price": "25.00"}))
        .await;
    assert_eq!(r.body["variations"][0]["price"], "25.00");
    assert_eq!(r.body["has_variations"], true);
}

#[tokio::test]
async fn nested_lists_sent_to_patch_or_put_are_400_pointing_to_the_nested_endpoints() {
    let (app, _, token) = catalogue_app().await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    let one = format!("{}{item_id}/", items());
    for (field, value) in [
        ("variations", json!([{"value": {"en": "A"}}])),
        ("addons", json!([])),
        ("bundles", json!([])),
    ] {
        let r = app.patch(&one, &token, json!({ field: value })).await;
        assert_eq!(r.status, 400, "{field}");
        let message = r.body["non_field_errors"][0].as_str().expect("message");
        assert!(message.contains("nested"), "{message}");
        let r = app
            .put(
                &one,
                &token,
                json!({"name": {"en": "T"}, "default_price": "1.00", field: value}),
            )
            .await;
        assert_eq!(r.status, 400, "{field}");
    }
    let r = app.get(&one, &token).await;
    assert_eq!(r.body["name"]["en"], "Ticket");
}

#[tokio::test]
async fn references_to_another_events_category_tax_rule_or_quota_are_400() {
    let (app, _, token) = catalogue_app().await;
    let second = "/api/v1/organizers/acme/events/second";
    another_event(&app, "second").await;
    let cat = created(
        &app,
        &format!("{second}/categories/"),
        &token,
        json!({"name": {"en": "C"}}),
    )
    .await;
    let tax = created(
        &app,
        &format!("{second}/taxrules/"),
        &token,
        json!({"name": {"en": "VAT"}, "rate": "7.00"}),
    )
    .await;
    let quota = created(
        &app,
        &format!("{second}/quotas/"),
        &token,
        json!({"name": "Q", "size": 1}),
    )
    .await;
    let r = app
        .post(
            &items(),
            &token,
            json!({"name": {"en": "T"}, "default_price": "1.00", "category": id(&cat),
                   "tax_rule": id(&tax), "hidden_if_available": id(&quota)}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["category"][0].is_string());
    assert!(r.body["tax_rule"][0].is_string());
    assert!(r.body["hidden_if_available"][0].is_string());
    assert_eq!(app.get(&items(), &token).await.body["count"], 0);
}

#[tokio::test]
async fn order_limits_availability_windows_prices_and_sales_channels_are_checked() {
    let (app, _, token) = catalogue_app().await;
    let r = app
        .post(
            &items(),
            &token,
            json!({"name": {"en": "T"}, "default_price": "-1.00",
                   "min_per_order": 5, "max_per_order": 2,
                   "available_from": "2030-02-01T00:00:00Z", "available_until": "2030-01-01T00:00:00Z",
                   "sales_channels": ["web", "teleshopping"]}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    for field in [
        "default_price",
        "min_per_order",
        "available_until",
        "sales_channels",
    ] {
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
    let r = app
        .post(&items(), &token, json!({"name": {"en": "T"}}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["default_price"][0].is_string());
}

#[tokio::test]
async fn meta_data_takes_only_the_events_item_properties_and_shows_their_defaults() {
    let (app, event_id, token) = catalogue_app().await;
    let event = event::Entity::find_by_id(event_id)
        .one(&app.db)
        .await
        .expect("query")
        .expect("event");
    let r = app
        .patch(
            &format!("/api/v1/organizers/acme/events/{}/", event.slug),
            &token,
            json!({"item_meta_properties": {"colour": "blue", "size": ""}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let it = item(
        &app,
        &token,
        json!({"name": {"en": "T"}, "default_price": "1.00", "meta_data": {"size": "XL"}}),
    )
    .await;
    assert_eq!(it["meta_data"], json!({"colour": "blue", "size": "XL"}));

    let r = app
        .patch(
            &format!("{}{}/", items(), id(&it)),
            &token,
            json!({"meta_data": {"weight": "3"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["meta_data"][0]
            .as_str()
            .expect("msg")
            .contains("weight")
    );
}

#[tokio::test]
async fn the_list_filters_and_orders_items() {
    let (app, _, token) = catalogue_app().await;
    let cat = created(
        &app,
        &format!("{EVENT}/categories/"),
        &token,
        json!({"name": {"en": "C"}}),
    )
    .await;
    let tax = created(
        &app,
        &format!("{EVENT}/taxrules/"),
        &token,
        json!({"name": {"en": "VAT"}, "rate": "19.00"}),
    )
    .await;
    let a = id(&item(
        &app,
        &token,
        json!({"name": {"en": "A"}, "default_price": "1", "position": 2, "admission": true,
               "category": id(&cat), "tax_rule": id(&tax)}),
    )
    .await);
    let b = id(&item(
        &app,
        &token,
        json!({"name": {"en": "B"}, "default_price": "1", "position": 1, "active": false,
               "free_price": true}),
    )
    .await);
    let ids = |body: &serde_json::Value| -> Vec<i64> {
        body["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(id)
            .collect()
    };
    let get = |q: &str| {
        let path = format!("{}{q}", items());
        let (app, token) = (&app, &token);
        async move { app.get(&path, token).await }
    };
    assert_eq!(ids(&get("").await.body), vec![b, a]);
    assert_eq!(ids(&get("?ordering=id").await.body), vec![a, b]);
    assert_eq!(ids(&get("?ordering=position").await.body), vec![b, a]);
    assert_eq!(ids(&get("?active=true").await.body), vec![a]);
    assert_eq!(ids(&get("?active=false").await.body), vec![b]);
    assert_eq!(
        ids(&get(&format!("?category={}", id(&cat))).await.body),
        vec![a]
    );
    assert_eq!(ids(&get("?admission=true").await.body), vec![a]);
    assert_eq!(ids(&get("?free_price=true").await.body), vec![b]);
    assert_eq!(ids(&get("?tax_rate=19.00").await.body), vec![a]);
    assert_eq!(ids(&get("?tax_rate=19").await.body), vec![a]);
    assert_eq!(ids(&get("?tax_rate=0").await.body), vec![b]);
    assert_eq!(get("?tax_rate=abc").await.status, 400);
    assert_eq!(get("?ordering=price").await.status, 400);
    assert_eq!(get("?active=maybe").await.status, 400);
}

#[tokio::test]
async fn lang_flattens_names_descriptions_and_variation_values() {
    let (app, _, token) = catalogue_app().await;
    let it = item(
        &app,
        &token,
        json!({"name": {"en": "Ticket", "de": "Karte"}, "default_price": "1",
               "description": {"en": "Nice", "de": "Schön"},
               "variations": [{"value": {"en": "Regular", "de": "Normal"}}]}),
    )
    .await;
    let r = app
        .get(&format!("{}{}/?lang=de", items(), id(&it)), &token)
        .await;
    assert_eq!(r.body["name"], "Karte");
    assert_eq!(r.body["description"], "Schön");
    assert_eq!(r.body["variations"][0]["value"], "Normal");
    let r = app.get(&format!("{}?lang=fr", items()), &token).await;
    assert_eq!(r.body["results"][0]["name"], "Ticket");
}

#[tokio::test]
async fn an_item_that_was_ordered_cannot_be_deleted() {
    let (app, event_id, token) = catalogue_app().await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    add_order(&app, event_id, "p", &[(item_id, None)]).await;
    let one = format!("{}{item_id}/", items());
    let r = app.delete(&one, &token).await;
    assert_eq!(r.status, 403);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("detail")
            .contains("ordered")
    );
    assert_eq!(app.get(&one, &token).await.status, 200);
}

#[tokio::test]
async fn deleting_an_item_removes_it_from_quotas_and_bundles() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let base = item(
        &app,
        &token,
        json!({"name": {"en": "T"}, "default_price": "1",
               "bundles": [{"bundled_item": shirt}]}),
    )
    .await;
    let quota = created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Q", "size": 3, "items": [shirt, id(&base)]}),
    )
    .await;
    assert_eq!(
        app.delete(&format!("{}{shirt}/", items()), &token)
            .await
            .status,
        204
    );
    let q = app
        .get(&format!("{EVENT}/quotas/{}/", id(&quota)), &token)
        .await;
    assert_eq!(q.body["items"], json!([id(&base)]));
    let b = app.get(&format!("{}{}/", items(), id(&base)), &token).await;
    assert_eq!(b.body["bundles"], json!([]));
}

#[tokio::test]
async fn listing_items_costs_the_same_queries_for_one_item_or_thirty() {
    let (app, _, token) = catalogue_app().await;
    let body = |i: usize| {
        json!({"name": {"en": format!("T{i}")}, "default_price": "1",
               "variations": [{"value": {"en": "A"}}, {"value": {"en": "B"}}],
               "bundles": []})
    };
    item(&app, &token, body(0)).await;
    let (one, q1) = tessera::db::count_queries(app.get(&items(), &token)).await;
    assert_eq!(one.body["count"], 1);
    for i in 1..30 {
        item(&app, &token, body(i)).await;
    }
    let (thirty, q30) = tessera::db::count_queries(app.get(&items(), &token)).await;
    assert_eq!(thirty.body["count"], 30);
    assert!(q1 > 0);
    assert_eq!(q1, q30, "queries for 1 item: {q1}, for 30: {q30}");
}

#[tokio::test]
async fn anyone_with_access_to_the_event_reads_items_but_only_can_change_items_writes() {
    let (app, _, admin) = catalogue_app().await;
    let item_id = plain_item(&app, &admin, "Ticket").await;
    let one = format!("{}{item_id}/", items());
    let reader = app.token("acme", &["can_view_orders"]).await;
    let writer = app.token("acme", &["can_change_items"]).await;
    app.organizer("rival").await;
    let stranger = app.admin_token("rival").await;
    another_event(&app, "other").await;
    let limited = app
        .token_for(
            "acme",
            Some(tessera::domain::permissions::PermissionSet::all()),
            &["other"],
        )
        .await;

    for token in [&reader, &writer] {
        assert_eq!(app.get(&items(), token).await.status, 200);
        assert_eq!(app.get(&one, token).await.status, 200);
    }
    for token in [&stranger, &limited] {
        assert_eq!(app.get(&items(), token).await.status, 403);
        assert_eq!(app.get(&one, token).await.status, 403);
    }
    let new = json!({"name": {"en": "N"}, "default_price": "1"});
    for token in [&reader, &stranger, &limited] {
        assert_eq!(app.post(&items(), token, new.clone()).await.status, 403);
        assert_eq!(
            app.patch(&one, token, json!({"position": 9})).await.status,
            403
        );
        assert_eq!(app.put(&one, token, new.clone()).await.status, 403);
        assert_eq!(app.delete(&one, token).await.status, 403);
    }
    assert_eq!(app.post(&items(), &writer, new.clone()).await.status, 201);
    assert_eq!(
        app.patch(&one, &writer, json!({"position": 9}))
            .await
            .status,
        200
    );
    assert_eq!(app.put(&one, &writer, new).await.status, 200);
    assert_eq!(app.delete(&one, &writer).await.status, 204);
    assert_eq!(app.get(&items(), &admin).await.body["count"], 1);
}

#[tokio::test]
async fn an_item_deleted_while_it_is_changed_is_403_not_500() {
    let (app, _, token) = catalogue_app().await;
    for method in [Method::PATCH, Method::PUT] {
        let item_id = plain_item(&app, &token, "Ticket").await;
        let one = format!("{}{item_id}/", items());
        let body = json!({"name": {"en": "Renamed"}, "default_price": "12.00"});
        let held = hold::<ItemRow>(&app, item_id).await;
        let (r, ()) = tokio::join!(
            app.call(method.clone(), &one, Some(&token), Some(body)),
            async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                ItemRow::delete_by_id(item_id)
                    .exec(&held)
                    .await
                    .expect("delete");
                held.commit().await.expect("commit");
            }
        );
        assert_eq!(r.status, 403, "{method}: {}", r.body);
    }
}

/// GETs `path` twice; the statements the second answer took.
async fn second_queries(app: &tessera_tests::TestApp, path: &str, token: &str) -> u32 {
    let first = app.get(path, token).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let (second, queries) = tessera::db::count_queries(app.get(path, token)).await;
    assert_eq!(second.body, first.body);
    queries
}

#[tokio::test]
async fn only_lists_asked_for_with_the_lists_own_parameters_are_kept_in_the_cache() {
    let (app, _, token) = catalogue_app().await;
    for name in ["A", "B", "C"] {
        plain_item(&app, &token, name).await;
    }
    let known = format!("{}?active=true&page_size=2&lang=en", items());
    // On PostgreSQL the cache starts once the process listens for changes.
    let started = Instant::now();
    while second_queries(&app, &known, &token).await > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the list is never kept"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    for unknown in [
        format!("{}?active=true&page_size=2&nonce=1", items()),
        format!("{}?active=true&active=false&page_size=2", items()),
    ] {
        assert!(
            second_queries(&app, &unknown, &token).await > 0,
            "{unknown} was kept"
        );
    }
    // Made-up parameters still answer as before, page links included.
    let r = app
        .get(&format!("{}?page_size=2&nonce=1", items()), &token)
        .await;
    assert_eq!(
        r.body["next"],
        "http://tessera.test/api/v1/organizers/acme/events/conf/items/?page_size=2&nonce=1&page=2"
    );
}
