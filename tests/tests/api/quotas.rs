use sea_orm::TransactionTrait;
use serde_json::{Value, json};
use tessera::domain::availability::{self, HoldKind};
use tessera_tests::TestApp;

use crate::catalogue_support::{
    EVENT, add_order, another_event, catalogue_app, created, id, item, plain_item,
};
use crate::config_support::add_event;

fn quotas() -> String {
    format!("{EVENT}/quotas/")
}

async fn with_variations(app: &TestApp, token: &str) -> Value {
    item(
        app,
        token,
        json!({"name": {"en": "Ticket"}, "default_price": "20.00",
               "variations": [{"value": {"en": "A"}}, {"value": {"en": "B"}}]}),
    )
    .await
}

/// Holds `n` units of the quota as `kind`, the way the selling code will.
async fn hold(app: &TestApp, quota: i64, kind: HoldKind, n: i64) {
    let txn = app.db.begin().await.expect("begin");
    availability::adjust(&txn, &[quota], kind, None, n)
        .await
        .expect("adjust");
    txn.commit().await.expect("commit");
}

async fn availability_of(app: &TestApp, token: &str, quota: i64) -> Value {
    let r = app
        .get(&format!("{}{quota}/availability/", quotas()), token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[tokio::test]
async fn a_quota_is_created_shown_changed_replaced_and_deleted() {
    let (app, _, token) = catalogue_app().await;
    let plain = plain_item(&app, &token, "Shirt").await;
    let it = with_variations(&app, &token).await;
    let var = id(&it["variations"][0]);
    let q = created(
        &app,
        &quotas(),
        &token,
        json!({"name": "Main", "size": 100, "items": [plain, id(&it)], "variations": [var],
               "close_when_sold_out": true, "release_after_exit": true}),
    )
    .await;
    assert_eq!(q["name"], "Main");
    assert_eq!(q["size"], 100);
    assert_eq!(q["items"], json!([plain, id(&it)]));
    assert_eq!(q["variations"], json!([var]));
    assert_eq!(q["subevent"], json!(null));
    assert_eq!(q["close_when_sold_out"], true);
    assert_eq!(q["closed"], false);
    assert_eq!(q["release_after_exit"], true);
    assert!(q.get("available").is_none());
    let one = format!("{}{}/", quotas(), id(&q));
    assert_eq!(app.get(&one, &token).await.body, q);

    let r = app
        .patch(
            &one,
            &token,
            json!({"size": null, "items": [plain], "variations": []}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["size"], json!(null));
    assert_eq!(r.body["items"], json!([plain]));

    let r = app
        .put(&one, &token, json!({"name": "Other", "size": 5}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["items"], json!([]));
    assert_eq!(r.body["close_when_sold_out"], false);

    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&one, &token).await.status, 403);
}

#[tokio::test]
async fn quota_items_and_variations_follow_pretix_rules() {
    let (app, _, token) = catalogue_app().await;
    another_event(&app, "second").await;
    let foreign = id(&created(
        &app,
        "/api/v1/organizers/acme/events/second/items/",
        &token,
        json!({"name": {"en": "F"}, "default_price": "1"}),
    )
    .await);
    let plain = plain_item(&app, &token, "Shirt").await;
    let a = with_variations(&app, &token).await;
    let b = with_variations(&app, &token).await;

    for (body, field) in [
        (json!({"name": "Q", "items": [foreign]}), "items"),
        (
            json!({"name": "Q", "items": [plain], "variations": [id(&a["variations"][0])]}),
            "variations",
        ),
        (json!({"name": "Q", "items": [id(&a)]}), "variations"),
        (
            json!({"name": "Q", "items": [id(&a), id(&b)], "variations": [id(&a["variations"][0])]}),
            "variations",
        ),
        (json!({"name": "Q", "variations": [999_999]}), "variations"),
        (json!({"name": "Q", "size": -1}), "size"),
        (json!({"name": "Q", "subevent": 1}), "subevent"),
    ] {
        let r = app.post(&quotas(), &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{body}: {}", r.body);
    }
    assert_eq!(app.get(&quotas(), &token).await.body["count"], 0);
}

#[tokio::test]
async fn quotas_of_a_series_need_one_of_its_dates() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "tour", true).await;
    let token = app.admin_token("acme").await;
    let base = "/api/v1/organizers/acme/events/tour";
    let date = |d: &str| json!({"name": {"en": "Stop"}, "date_from": d});
    let first = created(
        &app,
        &format!("{base}/subevents/"),
        &token,
        date("2030-01-01T10:00:00Z"),
    )
    .await;
    let second = created(
        &app,
        &format!("{base}/subevents/"),
        &token,
        date("2030-02-01T10:00:00Z"),
    )
    .await;
    let r = app
        .post(
            &format!("{base}/quotas/"),
            &token,
            json!({"name": "Q", "size": 1}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["subevent"][0].is_string());
    let q1 = created(
        &app,
        &format!("{base}/quotas/"),
        &token,
        json!({"name": "Q1", "size": 1, "subevent": id(&first)}),
    )
    .await;
    created(
        &app,
        &format!("{base}/quotas/"),
        &token,
        json!({"name": "Q2", "size": 1, "subevent": id(&second)}),
    )
    .await;
    let r = app
        .get(&format!("{base}/quotas/?subevent={}", id(&first)), &token)
        .await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["id"], id(&q1));
    assert_eq!(
        app.get(&format!("{base}/quotas/"), &token).await.body["count"],
        2
    );
}

#[tokio::test]
async fn the_list_orders_by_id_or_position() {
    let (app, _, token) = catalogue_app().await;
    let a = id(&created(&app, &quotas(), &token, json!({"name": "A"})).await);
    let b = id(&created(&app, &quotas(), &token, json!({"name": "B"})).await);
    for q in ["", "?ordering=id", "?ordering=position"] {
        let r = app.get(&format!("{}{q}", quotas()), &token).await;
        let ids: Vec<i64> = r.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(id)
            .collect();
        assert_eq!(ids, vec![a, b], "{q}");
    }
    let r = app
        .get(&format!("{}?ordering=size", quotas()), &token)
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn an_untouched_quota_is_fully_available_and_an_unlimited_one_has_no_number() {
    let (app, _, token) = catalogue_app().await;
    let sized = id(&created(&app, &quotas(), &token, json!({"name": "A", "size": 10})).await);
    let a = availability_of(&app, &token, sized).await;
    assert_eq!(
        a,
        json!({"available": true, "available_number": 10, "total_size": 10,
               "pending_orders": 0, "paid_orders": 0, "exited_orders": 0,
               "cart_positions": 0, "blocking_vouchers": 0, "waiting_list": 0})
    );
    let unlimited = id(&created(&app, &quotas(), &token, json!({"name": "U", "size": null})).await);
    hold(&app, unlimited, HoldKind::Paid, 3).await;
    let a = availability_of(&app, &token, unlimited).await;
    assert_eq!(a["available"], true);
    assert_eq!(a["available_number"], json!(null));
    assert_eq!(a["total_size"], json!(null));
    assert_eq!(a["paid_orders"], 3);
}

#[tokio::test]
async fn availability_subtracts_orders_vouchers_carts_and_the_waiting_list() {
    let (app, _, token) = catalogue_app().await;
    let q = id(&created(&app, &quotas(), &token, json!({"name": "A", "size": 10})).await);
    hold(&app, q, HoldKind::Paid, 2).await;
    hold(&app, q, HoldKind::Pending, 1).await;
    hold(&app, q, HoldKind::Voucher, 2).await;
    hold(&app, q, HoldKind::Cart, 1).await;
    hold(&app, q, HoldKind::WaitingList, 1).await;
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["available_number"], 3);
    assert_eq!(a["available"], true);
    assert_eq!(a["paid_orders"], 2);
    assert_eq!(a["pending_orders"], 1);
    assert_eq!(a["blocking_vouchers"], 2);
    assert_eq!(a["cart_positions"], 1);
    assert_eq!(a["waiting_list"], 1);

    hold(&app, q, HoldKind::Cart, 5).await;
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["available_number"], 0);
    assert_eq!(a["available"], false);
}

#[tokio::test]
async fn expired_holds_stop_counting_at_once() {
    let (app, _, token) = catalogue_app().await;
    let q = id(&created(&app, &quotas(), &token, json!({"name": "A", "size": 3})).await);
    let txn = app.db.begin().await.expect("begin");
    let past = chrono::Utc::now() - chrono::Duration::seconds(1);
    let future = chrono::Utc::now() + chrono::Duration::minutes(30);
    availability::adjust(&txn, &[q], HoldKind::Cart, Some(past), 2)
        .await
        .expect("adjust");
    availability::adjust(&txn, &[q], HoldKind::Cart, Some(future), 1)
        .await
        .expect("adjust");
    txn.commit().await.expect("commit");
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["cart_positions"], 1);
    assert_eq!(a["available_number"], 2);

    let swept = availability::sweep(&app.db).await.expect("sweep");
    assert_eq!(swept, 1, "only the expired row goes");
    assert_eq!(availability_of(&app, &token, q).await, a);
}

#[tokio::test]
async fn a_closed_quota_is_not_available_and_exits_give_capacity_back_when_released() {
    let (app, _, token) = catalogue_app().await;
    let q = id(&created(
        &app,
        &quotas(),
        &token,
        json!({"name": "A", "size": 2, "closed": true}),
    )
    .await);
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["available"], false);
    assert_eq!(a["available_number"], 0);

    let one = format!("{}{q}/", quotas());
    app.patch(&one, &token, json!({"closed": false})).await;
    hold(&app, q, HoldKind::Paid, 2).await;
    hold(&app, q, HoldKind::Exited, 1).await;
    let a = availability_of(&app, &token, q).await;
    assert_eq!(
        (a["available"].clone(), a["exited_orders"].clone()),
        (json!(false), json!(1))
    );
    app.patch(&one, &token, json!({"release_after_exit": true}))
        .await;
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["available"], true);
    assert_eq!(a["available_number"], 1);
}

#[tokio::test]
async fn a_quota_that_closes_when_sold_out_stays_closed_until_opened_by_an_update() {
    let (app, _, token) = catalogue_app().await;
    let q = id(&created(
        &app,
        &quotas(),
        &token,
        json!({"name": "A", "size": 2, "close_when_sold_out": true}),
    )
    .await);
    let one = format!("{}{q}/", quotas());
    // Carts alone do not sell a quota out.
    hold(&app, q, HoldKind::Cart, 2).await;
    assert_eq!(app.get(&one, &token).await.body["closed"], false);
    hold(&app, q, HoldKind::Cart, -2).await;

    hold(&app, q, HoldKind::Paid, 2).await;
    assert_eq!(app.get(&one, &token).await.body["closed"], true);
    // Capacity coming back does not open it.
    hold(&app, q, HoldKind::Paid, -1).await;
    assert_eq!(app.get(&one, &token).await.body["closed"], true);
    assert_eq!(availability_of(&app, &token, q).await["available"], false);

    let r = app.patch(&one, &token, json!({"closed": false})).await;
    assert_eq!(r.body["closed"], false);
    assert_eq!(
        availability_of(&app, &token, q).await["available_number"],
        1
    );
}

#[tokio::test]
async fn orders_of_items_added_to_a_quota_count_at_once() {
    let (app, event_id, token) = catalogue_app().await;
    let plain = plain_item(&app, &token, "Shirt").await;
    let it = with_variations(&app, &token).await;
    let (va, vb) = (id(&it["variations"][0]), id(&it["variations"][1]));
    add_order(&app, event_id, "p", &[(plain, None), (id(&it), Some(va))]).await;
    add_order(&app, event_id, "n", &[(id(&it), Some(vb))]).await;
    add_order(&app, event_id, "c", &[(plain, None)]).await;

    let q = id(&created(
        &app,
        &quotas(),
        &token,
        json!({"name": "A", "size": 10, "items": [plain]}),
    )
    .await);
    let a = availability_of(&app, &token, q).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["pending_orders"].clone()),
        (json!(1), json!(0))
    );

    let r = app
        .patch(
            &format!("{}{q}/", quotas()),
            &token,
            json!({"items": [plain, id(&it)], "variations": [va, vb]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let a = availability_of(&app, &token, q).await;
    assert_eq!(a["paid_orders"], 2);
    assert_eq!(a["pending_orders"], 1);
    assert_eq!(a["available_number"], 7);
}

#[tokio::test]
async fn the_list_carries_availability_on_request_in_a_constant_number_of_queries() {
    let (app, _, token) = catalogue_app().await;
    let first = id(&created(&app, &quotas(), &token, json!({"name": "Q0", "size": 5})).await);
    hold(&app, first, HoldKind::Paid, 2).await;
    let url = format!("{}?with_availability=true", quotas());
    let (r, one) = tessera::db::count_queries(app.get(&url, &token)).await;
    assert_eq!(r.body["results"][0]["available"], true);
    assert_eq!(r.body["results"][0]["available_number"], 3);
    assert_eq!(r.body["results"][0]["availability"]["paid_orders"], 2);
    for i in 1..20 {
        created(
            &app,
            &quotas(),
            &token,
            json!({"name": format!("Q{i}"), "size": null}),
        )
        .await;
    }
    let (r, twenty) = tessera::db::count_queries(app.get(&url, &token)).await;
    assert_eq!(r.body["count"], 20);
    assert_eq!(r.body["results"][19]["available_number"], json!(null));
    assert_eq!(one, twenty);
    let plain = app.get(&quotas(), &token).await;
    assert!(plain.body["results"][0].get("availability").is_none());
}

#[tokio::test]
async fn quotas_are_read_by_any_event_token_and_written_with_can_change_items() {
    let (app, _, admin) = catalogue_app().await;
    let q = id(&created(&app, &quotas(), &admin, json!({"name": "A", "size": 1})).await);
    let one = format!("{}{q}/", quotas());
    let reader = app.token("acme", &["can_view_orders"]).await;
    let writer = app.token("acme", &["can_change_items"]).await;
    app.organizer("rival").await;
    let stranger = app.admin_token("rival").await;
    for token in [&reader, &writer] {
        assert_eq!(app.get(&quotas(), token).await.status, 200);
        assert_eq!(app.get(&one, token).await.status, 200);
        assert_eq!(
            app.get(&format!("{one}availability/"), token).await.status,
            200
        );
    }
    assert_eq!(
        app.get(&format!("{one}availability/"), &stranger)
            .await
            .status,
        403
    );
    assert_eq!(app.get(&one, &stranger).await.status, 403);
    for token in [&reader, &stranger] {
        assert_eq!(
            app.post(&quotas(), token, json!({"name": "B"}))
                .await
                .status,
            403
        );
        assert_eq!(app.patch(&one, token, json!({"size": 3})).await.status, 403);
        assert_eq!(app.delete(&one, token).await.status, 403);
    }
    assert_eq!(
        app.patch(&one, &writer, json!({"size": 3})).await.status,
        200
    );
    assert_eq!(app.delete(&one, &writer).await.status, 204);
    assert_eq!(
        app.get(&format!("{}999999/availability/", quotas()), &admin)
            .await
            .status,
        403
    );
}

#[tokio::test]
async fn lists_of_more_than_a_thousand_items_or_variations_are_400() {
    let (app, _, token) = catalogue_app().await;
    let ticket = plain_item(&app, &token, "Ticket").await;
    let many = |n: i64| Value::from((1..=n).collect::<Vec<i64>>());
    // Long enough to exceed what one statement takes on either database.
    for body in [
        json!({"name": "Q", "items": many(1_001)}),
        json!({"name": "Q", "items": [ticket], "variations": many(70_000)}),
    ] {
        let r = app.post(&quotas(), &token, body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        let field = if r.body["items"].is_array() {
            "items"
        } else {
            "variations"
        };
        assert_eq!(
            r.body[field][0],
            "Ensure this field has no more than 1000 elements."
        );
    }
    let q = created(
        &app,
        &quotas(),
        &token,
        json!({"name": "Q", "items": [ticket]}),
    )
    .await;
    let r = app
        .patch(
            &format!("{}{}/", quotas(), id(&q)),
            &token,
            json!({"items": many(1_001)}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["items"][0].is_string());
    // A thousand is still a list to check.
    let r = app
        .post(
            &quotas(),
            &token,
            json!({"name": "Q", "items": many(1_000)}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["items"][0],
        "One or more items do not belong to this event."
    );
}
