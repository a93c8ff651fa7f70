use sea_orm::{DatabaseTransaction, EntityTrait};
use serde_json::{Value, json};
use tessera::db::entities::item::Entity as ItemRow;
use tessera::db::entities::{item_addon, item_bundle, item_variation};
use tessera_tests::TestApp;

use crate::catalogue_support::{
    EVENT, add_order, another_event, catalogue_app, created, hold, id, item, plain_item,
    release_soon,
};

async fn item_with_variations(app: &TestApp, token: &str) -> Value {
    item(
        app,
        token,
        json!({"name": {"en": "Ticket"}, "default_price": "20.00",
               "variations": [{"value": {"en": "Regular"}}, {"value": {"en": "Reduced"}, "default_price": "10.00"}]}),
    )
    .await
}

async fn addon_category(app: &TestApp, token: &str, event: &str, is_addon: bool) -> i64 {
    id(&created(
        app,
        &format!("/api/v1/organizers/acme/events/{event}/categories/"),
        token,
        json!({"name": {"en": "Extras"}, "is_addon": is_addon}),
    )
    .await)
}

#[tokio::test]
async fn variations_are_listed_created_changed_and_deleted_with_a_read_only_price() {
    let (app, _, token) = catalogue_app().await;
    let it = item_with_variations(&app, &token).await;
    let base = format!("{EVENT}/items/{}/variations/", id(&it));

    let list = app.get(&base, &token).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["count"], 2);

    let v = created(
        &app,
        &base,
        &token,
        json!({"value": {"en": "VIP"}, "default_price": "99.00", "original_price": "120.00",
               "active": false, "description": {"en": "Best"}, "position": 5, "price": "1.00"}),
    )
    .await;
    assert_eq!(v["price"], "99.00");
    assert_eq!(v["original_price"], "120.00");
    assert_eq!(v["active"], false);
    let one = format!("{base}{}/", id(&v));

    let r = app
        .patch(&one, &token, json!({"default_price": null}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["default_price"], json!(null));
    assert_eq!(r.body["price"], "20.00");
    assert_eq!(r.body["position"], 5);

    let r = app.put(&one, &token, json!({"value": {"en": "V"}})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["description"], json!(null));

    assert_eq!(
        app.get(&format!("{base}?active=true"), &token).await.body["count"],
        3
    );
    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&one, &token).await.status, 403);
    assert_eq!(app.get(&base, &token).await.body["count"], 2);
}

#[tokio::test]
async fn an_item_without_variations_never_gets_one() {
    let (app, _, token) = catalogue_app().await;
    let plain = plain_item(&app, &token, "Shirt").await;
    let r = app
        .post(
            &format!("{EVENT}/items/{plain}/variations/"),
            &token,
            json!({"value": {"en": "XL"}}),
        )
        .await;
    assert_eq!(r.status, 403);
    let r = app.get(&format!("{EVENT}/items/{plain}/"), &token).await;
    assert_eq!(r.body["has_variations"], false);
    assert_eq!(r.body["variations"], json!([]));
}

#[tokio::test]
async fn the_last_variation_and_ordered_variations_cannot_be_deleted() {
    let (app, event_id, token) = catalogue_app().await;
    let it = item_with_variations(&app, &token).await;
    let base = format!("{EVENT}/items/{}/variations/", id(&it));
    let first = id(&it["variations"][0]);
    let second = id(&it["variations"][1]);
    add_order(&app, event_id, "n", &[(id(&it), Some(first))]).await;

    let r = app.delete(&format!("{base}{first}/"), &token).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        app.delete(&format!("{base}{second}/"), &token).await.status,
        204
    );
    // `first` is now the last one as well.
    let r = app.delete(&format!("{base}{first}/"), &token).await;
    assert_eq!(r.status, 403);

    let lone = item(
        &app,
        &token,
        json!({"name": {"en": "X"}, "default_price": "1", "variations": [{"value": {"en": "Only"}}]}),
    )
    .await;
    let r = app
        .delete(
            &format!(
                "{EVENT}/items/{}/variations/{}/",
                id(&lone),
                id(&lone["variations"][0])
            ),
            &token,
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(r.body["detail"].as_str().expect("detail").contains("last"));
}

#[tokio::test]
async fn variations_of_another_item_are_not_found_under_this_one() {
    let (app, _, token) = catalogue_app().await;
    let a = item_with_variations(&app, &token).await;
    let b = item_with_variations(&app, &token).await;
    let foreign = id(&b["variations"][0]);
    let path = format!("{EVENT}/items/{}/variations/{foreign}/", id(&a));
    assert_eq!(app.get(&path, &token).await.status, 403);
    assert_eq!(app.delete(&path, &token).await.status, 403);
}

#[tokio::test]
async fn add_ons_are_created_changed_and_deleted() {
    let (app, _, token) = catalogue_app().await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    let cat = addon_category(&app, &token, "conf", true).await;
    let base = format!("{EVENT}/items/{item_id}/addons/");
    let a = created(
        &app,
        &base,
        &token,
        json!({"addon_category": cat, "min_count": 1, "max_count": 3, "position": 2,
               "multi_allowed": true, "price_included": true}),
    )
    .await;
    assert_eq!(a["min_count"], 1);
    assert_eq!(a["multi_allowed"], true);
    let one = format!("{base}{}/", id(&a));
    let r = app.patch(&one, &token, json!({"max_count": 5})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["max_count"], 5);
    assert_eq!(r.body["min_count"], 1);
    let r = app.put(&one, &token, json!({"addon_category": cat})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["min_count"], 0);
    assert_eq!(r.body["max_count"], 1);
    let shown = app.get(&format!("{EVENT}/items/{item_id}/"), &token).await;
    assert_eq!(shown.body["addons"][0]["id"], id(&a));
    assert_eq!(app.get(&base, &token).await.body["count"], 1);
    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&base, &token).await.body["count"], 0);
}

#[tokio::test]
async fn add_ons_need_an_add_on_category_of_this_event_once_and_sane_counts() {
    let (app, _, token) = catalogue_app().await;
    another_event(&app, "second").await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    let base = format!("{EVENT}/items/{item_id}/addons/");
    let plain_cat = addon_category(&app, &token, "conf", false).await;
    let foreign_cat = addon_category(&app, &token, "second", true).await;
    let cat = addon_category(&app, &token, "conf", true).await;

    for (body, field) in [
        (json!({"addon_category": plain_cat}), "addon_category"),
        (json!({"addon_category": foreign_cat}), "addon_category"),
        (
            json!({"addon_category": cat, "min_count": 3, "max_count": 2}),
            "min_count",
        ),
        (json!({"addon_category": cat, "min_count": -1}), "min_count"),
    ] {
        let r = app.post(&base, &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{body}: {}", r.body);
    }
    created(&app, &base, &token, json!({"addon_category": cat})).await;
    let r = app
        .post(&base, &token, json!({"addon_category": cat}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["addon_category"][0].is_string());

    // The same rules hold for add-ons sent with a new item.
    let r = app
        .post(
            &format!("{EVENT}/items/"),
            &token,
            json!({"name": {"en": "T"}, "default_price": "1",
                   "addons": [{"addon_category": cat}, {"addon_category": cat}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["addons"][0].is_string());
}

#[tokio::test]
async fn bundles_are_created_changed_and_deleted() {
    let (app, _, token) = catalogue_app().await;
    let base_item = plain_item(&app, &token, "Ticket").await;
    let with_vars = item_with_variations(&app, &token).await;
    let base = format!("{EVENT}/items/{base_item}/bundles/");
    let b = created(
        &app,
        &base,
        &token,
        json!({"bundled_item": id(&with_vars), "bundled_variation": id(&with_vars["variations"][1]),
               "count": 2, "designated_price": "3.50"}),
    )
    .await;
    assert_eq!(b["count"], 2);
    assert_eq!(b["designated_price"], "3.50");
    let one = format!("{base}{}/", id(&b));
    let r = app.patch(&one, &token, json!({"count": 3})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 3);
    assert_eq!(r.body["bundled_variation"], id(&with_vars["variations"][1]));
    assert_eq!(app.get(&one, &token).await.body["count"], 3);
    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&base, &token).await.body["count"], 0);
}

#[tokio::test]
async fn bundles_refuse_foreign_items_themselves_nested_bundles_and_foreign_variations() {
    let (app, _, token) = catalogue_app().await;
    another_event(&app, "second").await;
    let foreign = id(&created(
        &app,
        "/api/v1/organizers/acme/events/second/items/",
        &token,
        json!({"name": {"en": "F"}, "default_price": "1"}),
    )
    .await);
    let base_item = plain_item(&app, &token, "Ticket").await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let package = item(
        &app,
        &token,
        json!({"name": {"en": "P"}, "default_price": "1", "bundles": [{"bundled_item": shirt}]}),
    )
    .await;
    let a = item_with_variations(&app, &token).await;
    let b = item_with_variations(&app, &token).await;
    let base = format!("{EVENT}/items/{base_item}/bundles/");

    for (body, field) in [
        (json!({"bundled_item": foreign}), "bundled_item"),
        (json!({"bundled_item": base_item}), "bundled_item"),
        (json!({"bundled_item": id(&package)}), "bundled_item"),
        (
            json!({"bundled_item": id(&a), "bundled_variation": id(&b["variations"][0])}),
            "bundled_variation",
        ),
        (json!({"bundled_item": shirt, "count": 0}), "count"),
    ] {
        let r = app.post(&base, &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{body}: {}", r.body);
    }
    assert_eq!(app.get(&base, &token).await.body["count"], 0);
}

#[tokio::test]
async fn nested_parts_can_be_read_by_any_event_token_and_written_with_can_change_items() {
    let (app, _, admin) = catalogue_app().await;
    let it = item_with_variations(&app, &admin).await;
    let reader = app.token("acme", &["can_view_orders"]).await;
    let writer = app.token("acme", &["can_change_items"]).await;
    let cat = addon_category(&app, &admin, "conf", true).await;
    let shirt = plain_item(&app, &admin, "Shirt").await;
    for (part, body) in [
        ("variations", json!({"value": {"en": "New"}})),
        ("addons", json!({"addon_category": cat})),
        ("bundles", json!({"bundled_item": shirt})),
    ] {
        let base = format!("{EVENT}/items/{}/{part}/", id(&it));
        assert_eq!(app.get(&base, &reader).await.status, 200, "{part}");
        assert_eq!(
            app.post(&base, &reader, body.clone()).await.status,
            403,
            "{part}"
        );
        let made = created(&app, &base, &writer, body).await;
        let one = format!("{base}{}/", id(&made));
        assert_eq!(app.get(&one, &reader).await.status, 200, "{part}");
        assert_eq!(app.delete(&one, &reader).await.status, 403, "{part}");
        assert_eq!(app.delete(&one, &writer).await.status, 204, "{part}");
    }
}

#[tokio::test]
async fn two_add_ons_for_one_category_sent_at_once_are_one_201_and_one_400() {
    let (app, _, token) = catalogue_app().await;
    let category = addon_category(&app, &token, "conf", true).await;
    let item_id = plain_item(&app, &token, "Ticket").await;
    let base = format!("{EVENT}/items/{item_id}/addons/");
    let body = json!({"addon_category": category});
    // Both check the category before either writes.
    let held = hold::<ItemRow>(&app, item_id).await;
    let (a, b, ()) = tokio::join!(
        app.post(&base, &token, body.clone()),
        app.post(&base, &token, body.clone()),
        release_soon(held),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 400], "{} / {}", a.body, b.body);
    let refused = if a.status == 400 { &a } else { &b };
    assert!(
        refused.body["addon_category"][0].is_string(),
        "{}",
        refused.body
    );
    assert_eq!(app.get(&base, &token).await.body["count"], 1);
}

#[tokio::test]
async fn deleting_the_last_two_variations_at_once_leaves_one() {
    let (app, _, token) = catalogue_app().await;
    let it = item_with_variations(&app, &token).await;
    let base = format!("{EVENT}/items/{}/variations/", id(&it));
    let first = format!("{base}{}/", id(&it["variations"][0]));
    let second = format!("{base}{}/", id(&it["variations"][1]));
    let held = hold::<ItemRow>(&app, id(&it)).await;
    let (a, b, ()) = tokio::join!(
        app.delete(&first, &token),
        app.delete(&second, &token),
        release_soon(held),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [204, 403], "{} / {}", a.body, b.body);
    assert_eq!(app.get(&base, &token).await.body["count"], 1);
}

#[tokio::test]
async fn an_item_within_another_items_bundle_cannot_get_bundles_itself() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let mug = plain_item(&app, &token, "Mug").await;
    item(
        &app,
        &token,
        json!({"name": {"en": "Package"}, "default_price": "1", "bundles": [{"bundled_item": shirt}]}),
    )
    .await;
    let shirt_bundles = format!("{EVENT}/items/{shirt}/bundles/");
    let r = app
        .post(&shirt_bundles, &token, json!({"bundled_item": mug}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let message = r.body["non_field_errors"][0].as_str().expect("message");
    assert!(message.contains("bundled by another item"), "{message}");
    assert_eq!(app.get(&shirt_bundles, &token).await.body["count"], 0);
    // The mug, bundled by nobody, may bundle the shirt's neighbours as before.
    let r = app
        .post(
            &format!("{EVENT}/items/{mug}/bundles/"),
            &token,
            json!({"bundled_item": plain_item(&app, &token, "Pen").await}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn a_variation_add_on_or_bundle_changed_after_it_was_deleted_is_403() {
    let (app, _, token) = catalogue_app().await;
    let category = addon_category(&app, &token, "conf", true).await;
    let it = item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "20.00",
               "variations": [{"value": {"en": "A"}}, {"value": {"en": "B"}}],
               "addons": [{"addon_category": category}],
               "bundles": [{"bundled_item": plain_item(&app, &token, "Shirt").await}]}),
    )
    .await;
    let item_id = id(&it);
    for (part, body) in [
        ("variations", json!({"position": 5})),
        ("addons", json!({"position": 5})),
        ("bundles", json!({"count": 2})),
    ] {
        let part_id = id(&it[part][0]);
        let one = format!("{EVENT}/items/{item_id}/{part}/{part_id}/");
        let held = hold_part(&app, part, part_id).await;
        let (r, ()) = tokio::join!(app.patch(&one, &token, body), async {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            delete_part(&held, part, part_id).await;
            held.commit().await.expect("commit");
        });
        assert_eq!(r.status, 403, "{part}: {}", r.body);
    }
}

/// Holds a variation, add-on or bundle row.
async fn hold_part(app: &TestApp, part: &str, part_id: i64) -> tessera::db::WriteTxn {
    match part {
        "variations" => hold::<item_variation::Entity>(app, part_id).await,
        "addons" => hold::<item_addon::Entity>(app, part_id).await,
        _ => hold::<item_bundle::Entity>(app, part_id).await,
    }
}

/// Deletes a variation, add-on or bundle row in `txn`.
async fn delete_part(txn: &DatabaseTransaction, part: &str, part_id: i64) {
    let done = match part {
        "variations" => {
            item_variation::Entity::delete_by_id(part_id)
                .exec(txn)
                .await
        }
        "addons" => item_addon::Entity::delete_by_id(part_id).exec(txn).await,
        _ => item_bundle::Entity::delete_by_id(part_id).exec(txn).await,
    };
    assert_eq!(done.expect("delete").rows_affected, 1);
}
