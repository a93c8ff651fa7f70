use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::seat;
use tessera_tests::TestApp;

use crate::catalogue_support::{
    EVENT, another_event, catalogue_app, created, id, item, plain_item,
};
use crate::config_support::add_event;

fn vouchers() -> String {
    format!("{EVENT}/vouchers/")
}

fn one(voucher: i64) -> String {
    format!("{EVENT}/vouchers/{voucher}/")
}

/// A quota of `conf` of this size for these items; returns its ID.
async fn quota(app: &TestApp, token: &str, size: i64, items: &[i64]) -> i64 {
    id(&created(
        app,
        &format!("{EVENT}/quotas/"),
        token,
        json!({"name": "Q", "size": size, "items": items}),
    )
    .await)
}

/// `(blocking_vouchers, available_number)` of a quota of `conf`.
async fn blocked(app: &TestApp, token: &str, quota: i64) -> (Value, Value) {
    let r = app
        .get(&format!("{EVENT}/quotas/{quota}/availability/"), token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    (
        r.body["blocking_vouchers"].clone(),
        r.body["available_number"].clone(),
    )
}

/// Redeems a voucher `n` times the way order placement does, its blocked quota moving along.
async fn redeem(app: &TestApp, voucher_id: i64, n: i32) {
    use sea_orm::EntityTrait;
    use tessera::db::entities::{event, voucher};
    use tessera::domain::{availability, sale::Catalogue, vouchers};
    let v = voucher::Entity::find_by_id(voucher_id)
        .one(&app.db)
        .await
        .expect("query")
        .expect("voucher");
    let ev = event::Entity::find_by_id(v.event_id)
        .one(&app.db)
        .await
        .expect("query")
        .expect("event");
    let txn = tessera::db::begin_write(&app.db).await.expect("begin");
    let dates: Vec<i64> = v.subevent_id.into_iter().collect();
    let catalogue = Catalogue::load(&txn, &ev, &dates).await.expect("catalogue");
    availability::lock_quotas(&txn, &vouchers::blocked_quotas(&v, &catalogue))
        .await
        .expect("lock");
    vouchers::redeem(&txn, &v, &catalogue, n)
        .await
        .expect("redeem");
    txn.commit().await.expect("commit");
}

fn ids(list: &Value) -> Vec<i64> {
    list["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(id)
        .collect()
}

#[tokio::test]
async fn a_voucher_is_created_shown_changed_replaced_and_deleted() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let v = created(&app, &vouchers(), &token, json!({})).await;
    let code = v["code"].as_str().expect("code");
    assert_eq!(code.len(), 16);
    assert!(
        code.bytes()
            .all(|b| b"ABCDEFGHJKLMNPQRSTUVWXYZ3789".contains(&b)),
        "{code}"
    );
    assert_eq!(
        v,
        json!({"id": v["id"], "code": code, "max_usages": 1, "redeemed": 0, "valid_until": null,
               "block_quota": false, "allow_ignore_quota": false, "price_mode": "none",
               "value": "0.00", "item": null, "variation": null, "quota": null, "seat": null,
               "subevent": null, "tag": "", "comment": "", "show_hidden_items": true,
               "all_addons_included": false, "all_bundles_included": false})
    );
    let url = one(id(&v));
    assert_eq!(app.get(&url, &token).await.body, v);

    let r = app
        .patch(
            &url,
            &token,
            json!({"code": "SUMMER2030", "max_usages": 5, "price_mode": "percent", "value": "12.5",
                   "item": shirt, "tag": "summer", "valid_until": "2030-07-01T00:00:00Z",
                   "redeemed": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["code"], "SUMMER2030");
    assert_eq!(r.body["value"], "12.50");
    assert_eq!(r.body["price_mode"], "percent");
    assert_eq!(r.body["item"], shirt);
    assert_eq!(r.body["redeemed"], 0, "redeemed is read-only");
    assert_eq!(r.body["valid_until"], "2030-07-01T00:00:00Z");

    let r = app.put(&url, &token, json!({"comment": "only this"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["code"], "SUMMER2030", "PUT without a code keeps it");
    assert_eq!(r.body["max_usages"], 1);
    assert_eq!(r.body["item"], json!(null));
    assert_eq!(r.body["tag"], "");
    assert_eq!(r.body["comment"], "only this");

    assert_eq!(app.delete(&url, &token).await.status, 204);
    assert_eq!(app.get(&url, &token).await.status, 403);
}

#[tokio::test]
async fn codes_are_unique_in_an_event_whatever_their_case() {
    let (app, _, token) = catalogue_app().await;
    another_event(&app, "second").await;
    created(&app, &vouchers(), &token, json!({"code": "Summer2030"})).await;
    let r = app
        .post(&vouchers(), &token, json!({"code": "SUMMER2030"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["code"][0].is_string(), "{}", r.body);
    created(
        &app,
        "/api/v1/organizers/acme/events/second/vouchers/",
        &token,
        json!({"code": "SUMMER2030"}),
    )
    .await;
    let other = created(&app, &vouchers(), &token, json!({"code": "WINTER2030"})).await;
    let r = app
        .patch(&one(id(&other)), &token, json!({"code": "summer2030"}))
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .patch(&one(id(&other)), &token, json!({"code": "winter2030"}))
        .await;
    assert_eq!(r.status, 200, "its own code in another case: {}", r.body);
    let r = app.post(&vouchers(), &token, json!({"code": "abc"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["code"][0].is_string());
}

#[tokio::test]
async fn voucher_fields_follow_pretix_rules() {
    let (app, _, token) = catalogue_app().await;
    another_event(&app, "second").await;
    let second = "/api/v1/organizers/acme/events/second";
    let foreign_item = id(&created(
        &app,
        &format!("{second}/items/"),
        &token,
        json!({"name": {"en": "F"}, "default_price": "1"}),
    )
    .await);
    let foreign_quota = id(&created(
        &app,
        &format!("{second}/quotas/"),
        &token,
        json!({"name": "F"}),
    )
    .await);
    let shirt = plain_item(&app, &token, "Shirt").await;
    let ticket = item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "20.00",
               "variations": [{"value": {"en": "A"}}]}),
    )
    .await;
    let other_variant = item(
        &app,
        &token,
        json!({"name": {"en": "Other"}, "default_price": "20.00",
               "variations": [{"value": {"en": "B"}}]}),
    )
    .await;
    let q = quota(&app, &token, 10, &[shirt]).await;
    for (body, field) in [
        (json!({"max_usages": 0}), "max_usages"),
        (json!({"value": "-1.00"}), "value"),
        (json!({"price_mode": "percent", "value": "100.01"}), "value"),
        (json!({"price_mode": "half"}), "price_mode"),
        (json!({"item": foreign_item}), "item"),
        (json!({"quota": foreign_quota}), "quota"),
        (json!({"item": shirt, "quota": q}), "quota"),
        (
            json!({"variation": id(&ticket["variations"][0])}),
            "variation",
        ),
        (
            json!({"item": shirt, "variation": id(&ticket["variations"][0])}),
            "variation",
        ),
        (
            json!({"item": id(&ticket), "variation": id(&other_variant["variations"][0])}),
            "variation",
        ),
        (json!({"subevent": 1}), "subevent"),
        (json!({"block_quota": true}), "block_quota"),
        (
            json!({"block_quota": true, "item": id(&ticket)}),
            "block_quota",
        ),
        (
            json!({"block_quota": true, "item": id(&other_variant),
                "variation": id(&other_variant["variations"][0])}),
            "block_quota",
        ),
        (json!({"seat": "nowhere"}), "seat"),
        (json!({"valid_until": "soon"}), "valid_until"),
    ] {
        let r = app.post(&vouchers(), &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{body}: {}", r.body);
    }
    assert_eq!(app.get(&vouchers(), &token).await.body["count"], 0);
    let ok = created(
        &app,
        &vouchers(),
        &token,
        json!({"item": id(&ticket), "variation": id(&ticket["variations"][0]),
               "price_mode": "set", "value": "5"}),
    )
    .await;
    assert_eq!(ok["value"], "5.00");
}

#[tokio::test]
async fn a_blocking_voucher_holds_its_unused_redemptions_of_its_products_quotas() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let cap = plain_item(&app, &token, "Cap").await;
    let shirts = quota(&app, &token, 10, &[shirt]).await;
    let caps = quota(&app, &token, 10, &[cap]).await;
    let v = created(
        &app,
        &vouchers(),
        &token,
        json!({"item": shirt, "block_quota": true, "max_usages": 3}),
    )
    .await;
    let url = one(id(&v));
    assert_eq!(blocked(&app, &token, shirts).await, (json!(3), json!(7)));

    app.patch(&url, &token, json!({"max_usages": 5})).await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(5), json!(5)));

    let r = app.patch(&url, &token, json!({"block_quota": false})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(10)));
    app.patch(&url, &token, json!({"block_quota": true})).await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(5), json!(5)));

    let r = app.patch(&url, &token, json!({"item": cap})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(10)));
    assert_eq!(blocked(&app, &token, caps).await, (json!(5), json!(5)));

    let r = app
        .patch(&url, &token, json!({"item": null, "quota": shirts}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(blocked(&app, &token, caps).await, (json!(0), json!(10)));
    assert_eq!(blocked(&app, &token, shirts).await, (json!(5), json!(5)));

    assert_eq!(app.delete(&url, &token).await.status, 204);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(10)));
}

#[tokio::test]
async fn a_blocking_voucher_needs_enough_quota_unless_it_ignores_quota() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 2, &[shirt]).await;
    let body = json!({"item": shirt, "block_quota": true, "max_usages": 3});
    let r = app.post(&vouchers(), &token, body.clone()).await;
    assert_eq!(r.status, 400);
    assert!(r.body["block_quota"][0].is_string(), "{}", r.body);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(2)));

    let v = created(
        &app,
        &vouchers(),
        &token,
        json!({"item": shirt, "block_quota": true, "max_usages": 2}),
    )
    .await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(0)));
    // A change that blocks more is refused, and what was held stays held.
    let r = app
        .patch(&one(id(&v)), &token, json!({"max_usages": 3}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(0)));
    // A change that blocks no more never checks.
    let r = app
        .patch(&one(id(&v)), &token, json!({"comment": "VIP"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(0)));

    let mut ignoring = body;
    ignoring["allow_ignore_quota"] = json!(true);
    created(&app, &vouchers(), &token, ignoring).await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(5), json!(0)));
}

#[tokio::test]
async fn expired_vouchers_block_nothing_until_valid_again() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 1, &[shirt]).await;
    let v = created(
        &app,
        &vouchers(),
        &token,
        json!({"item": shirt, "block_quota": true, "max_usages": 4,
               "valid_until": "2020-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(1)));
    let later = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    let r = app
        .patch(&one(id(&v)), &token, json!({"valid_until": later}))
        .await;
    assert_eq!(r.status, 400, "valid again, it needs 4 of 1: {}", r.body);
    let r = app
        .patch(
            &one(id(&v)),
            &token,
            json!({"valid_until": later, "max_usages": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(1), json!(0)));
}

#[tokio::test]
async fn redeemed_vouchers_keep_their_redemptions_and_cannot_be_deleted() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 10, &[shirt]).await;
    let v = created(
        &app,
        &vouchers(),
        &token,
        json!({"item": shirt, "block_quota": true, "max_usages": 4}),
    )
    .await;
    let url = one(id(&v));
    // Two redemptions, as order placement books them: the hold shrinks with them.
    redeem(&app, id(&v), 2).await;
    assert_eq!(app.get(&url, &token).await.body["redeemed"], 2);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(8)));

    let r = app
        .patch(&url, &token, json!({"max_usages": 1, "redeemed": 0}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["max_usages"][0].is_string());
    let r = app.delete(&url, &token).await;
    assert_eq!(r.status, 403);
    assert!(r.body["detail"].is_string());
    assert_eq!(app.get(&url, &token).await.status, 200);
    let r = app.patch(&url, &token, json!({"max_usages": 3})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["redeemed"], 2);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(1), json!(9)));
    app.patch(&url, &token, json!({"max_usages": 2})).await;
    assert_eq!(blocked(&app, &token, shirts).await, (json!(0), json!(10)));
}

#[tokio::test]
async fn blocking_in_a_series_needs_one_of_its_dates() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "tour", true).await;
    let token = app.admin_token("acme").await;
    let base = "/api/v1/organizers/acme/events/tour";
    let date = |d: &str| json!({"name": {"en": "Stop"}, "date_from": d});
    let first = id(&created(
        &app,
        &format!("{base}/subevents/"),
        &token,
        date("2030-01-01T10:00:00Z"),
    )
    .await);
    let second = id(&created(
        &app,
        &format!("{base}/subevents/"),
        &token,
        date("2030-02-01T10:00:00Z"),
    )
    .await);
    let ticket = id(&created(
        &app,
        &format!("{base}/items/"),
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "10"}),
    )
    .await);
    let mut quotas = Vec::new();
    for s in [first, second] {
        quotas.push(id(&created(
            &app,
            &format!("{base}/quotas/"),
            &token,
            json!({"name": "Q", "size": 5, "items": [ticket], "subevent": s}),
        )
        .await));
    }
    let r = app
        .post(
            &format!("{base}/vouchers/"),
            &token,
            json!({"item": ticket, "block_quota": true}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["subevent"][0].is_string(), "{}", r.body);
    created(
        &app,
        &format!("{base}/vouchers/"),
        &token,
        json!({"item": ticket, "block_quota": true, "subevent": second, "max_usages": 2}),
    )
    .await;
    let held = |q: i64| format!("{base}/quotas/{q}/availability/");
    assert_eq!(
        app.get(&held(quotas[0]), &token).await.body["blocking_vouchers"],
        0
    );
    assert_eq!(
        app.get(&held(quotas[1]), &token).await.body["blocking_vouchers"],
        2
    );
    let r = app
        .get(&format!("{base}/vouchers/?subevent={second}"), &token)
        .await;
    assert_eq!(r.body["count"], 1);
}

#[tokio::test]
async fn a_seat_voucher_is_used_once_and_takes_a_free_seat() {
    let (app, event_id, token) = catalogue_app().await;
    for (guid, blocked) in [("a1", false), ("a2", true), ("a3", false)] {
        seat::ActiveModel {
            event_id: Set(event_id),
            seat_guid: Set(guid.into()),
            name: Set(format!("Seat {guid}")),
            zone_name: Set("Stalls".into()),
            row_name: Set("1".into()),
            seat_number: Set(guid.into()),
            category: Set("Stalls".into()),
            blocked: Set(blocked),
            sold: Set(false),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .expect("seat");
    }
    let v = created(&app, &vouchers(), &token, json!({"seat": "a1"})).await;
    assert_eq!(v["seat"], "a1");
    assert_eq!(app.get(&one(id(&v)), &token).await.body["seat"], "a1");
    let r = app
        .patch(&one(id(&v)), &token, json!({"comment": "kept"}))
        .await;
    assert_eq!(r.body["seat"], "a1", "{}", r.body);
    for body in [
        json!({"seat": "a1"}),
        json!({"seat": "a2"}),
        json!({"seat": "a3", "max_usages": 2}),
    ] {
        let r = app.post(&vouchers(), &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.body["seat"][0].is_string(), "{body}: {}", r.body);
    }
    let r = app.patch(&one(id(&v)), &token, json!({"seat": "a3"})).await;
    assert_eq!(r.body["seat"], "a3");
    created(&app, &vouchers(), &token, json!({"seat": "a1"})).await;
}

#[tokio::test]
async fn the_list_filters_and_orders_like_pretix() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 100, &[shirt]).await;
    let a = id(&created(
        &app,
        &vouchers(),
        &token,
        json!({"code": "BBBBB1", "max_usages": 3, "price_mode": "set", "value": "5.00",
               "item": shirt, "tag": "press", "block_quota": true}),
    )
    .await);
    let b = id(&created(
        &app,
        &vouchers(),
        &token,
        json!({"code": "AAAAA2", "quota": shirts, "price_mode": "percent", "value": "10",
               "valid_until": "2020-01-01T00:00:00Z", "allow_ignore_quota": true}),
    )
    .await);
    let c = id(&created(
        &app,
        &vouchers(),
        &token,
        json!({"code": "CCCCC3", "tag": "press"}),
    )
    .await);
    redeem(&app, c, 1).await;
    let list = |q: &str| {
        let app = &app;
        let token = &token;
        let url = format!("{}?{q}", vouchers());
        async move {
            let r = app.get(&url, token).await;
            assert_eq!(r.status, 200, "{url}: {}", r.body);
            ids(&r.body)
        }
    };
    assert_eq!(list("").await, vec![a, b, c]);
    assert_eq!(list("code=bbbbb1").await, vec![a]);
    assert_eq!(list("max_usages=3").await, vec![a]);
    assert_eq!(list("redeemed=1").await, vec![c]);
    assert_eq!(list("block_quota=true").await, vec![a]);
    assert_eq!(list("allow_ignore_quota=true").await, vec![b]);
    assert_eq!(list("price_mode=percent").await, vec![b]);
    assert_eq!(list("value=5.00").await, vec![a]);
    assert_eq!(list(&format!("item={shirt}")).await, vec![a]);
    assert_eq!(list(&format!("quota={shirts}")).await, vec![b]);
    assert_eq!(list("tag=press").await, vec![a, c]);
    assert_eq!(list("active=true").await, vec![a]);
    assert_eq!(list("active=false").await, vec![b, c]);
    assert_eq!(list("ordering=code").await, vec![b, a, c]);
    assert_eq!(list("ordering=-code").await, vec![c, a, b]);
    assert_eq!(list("ordering=-value").await, vec![b, a, c]);
    assert_eq!(list("ordering=-redeemed").await, vec![c, b, a]);
    assert_eq!(list("ordering=max_usages").await, vec![b, c, a]);
    assert_eq!(list("ordering=-id").await, vec![c, b, a]);
    for bad in [
        "ordering=comment",
        "value=abc",
        "price_mode=half",
        "active=maybe",
    ] {
        let r = app.get(&format!("{}?{bad}", vouchers()), &token).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
}

#[tokio::test]
async fn vouchers_are_read_with_can_view_vouchers_and_written_with_can_change_vouchers() {
    let (app, _, admin) = catalogue_app().await;
    let v = id(&created(&app, &vouchers(), &admin, json!({})).await);
    let viewer = app.token("acme", &["can_view_vouchers"]).await;
    let changer = app.token("acme", &["can_change_vouchers"]).await;
    let orders = app
        .token(
            "acme",
            &["can_view_orders", "can_change_orders", "can_change_items"],
        )
        .await;
    app.organizer("rival").await;
    let stranger = app.admin_token("rival").await;

    assert_eq!(app.get(&vouchers(), &viewer).await.status, 200);
    assert_eq!(app.get(&one(v), &viewer).await.status, 200);
    for token in [&changer, &orders, &stranger] {
        assert_eq!(app.get(&vouchers(), token).await.status, 403);
        assert_eq!(app.get(&one(v), token).await.status, 403);
    }
    for token in [&viewer, &orders, &stranger] {
        assert_eq!(app.post(&vouchers(), token, json!({})).await.status, 403);
        assert_eq!(
            app.post(&format!("{}batch_create/", vouchers()), token, json!([{}]))
                .await
                .status,
            403
        );
        assert_eq!(
            app.patch(&one(v), token, json!({"tag": "x"})).await.status,
            403
        );
        assert_eq!(app.put(&one(v), token, json!({})).await.status, 403);
        assert_eq!(app.delete(&one(v), token).await.status, 403);
    }
    assert_eq!(app.post(&vouchers(), &changer, json!({})).await.status, 201);
    assert_eq!(
        app.patch(&one(v), &changer, json!({"tag": "x"}))
            .await
            .status,
        200
    );
    assert_eq!(app.put(&one(v), &changer, json!({})).await.status, 200);
    assert_eq!(app.delete(&one(v), &changer).await.status, 204);
    assert_eq!(app.get(&one(999_999), &admin).await.status, 403);
    let r = app
        .call(poem::http::Method::GET, &vouchers(), None, None)
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn a_batch_is_created_all_or_none() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 3, &[shirt]).await;
    let batch = format!("{}batch_create/", vouchers());
    let r = app
        .post(
            &batch,
            &token,
            json!([{"code": "FIRST1"}, {"item": shirt, "block_quota": true, "max_usages": 2}]),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body[0]["code"], "FIRST1");
    assert_eq!(r.body[1]["code"].as_str().map(str::len), Some(16));
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(1)));

    for (body, errors) in [
        (
            json!([{"code": "TWICE1"}, {"code": "twice1"}]),
            json!([{}, {"code": ["Duplicate voucher code in request."]}]),
        ),
        (json!([{"code": "NEW001"}, {"max_usages": 0}]), json!(null)),
        (json!([{"code": "NEW002"}, {"code": "first1"}]), json!(null)),
        (
            json!([{"item": shirt, "block_quota": true}, {"item": shirt, "block_quota": true}]),
            json!(null),
        ),
    ] {
        let r = app.post(&batch, &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let list = r.body.as_array().expect("a list of errors");
        assert_eq!(list.len(), 2, "{}", r.body);
        assert_eq!(list[0], json!({}), "{}", r.body);
        assert!(
            !list[1].as_object().expect("errors").is_empty(),
            "{}",
            r.body
        );
        if !errors.is_null() {
            assert_eq!(r.body, errors);
        }
    }
    assert_eq!(app.get(&vouchers(), &token).await.body["count"], 2);
    assert_eq!(blocked(&app, &token, shirts).await, (json!(2), json!(1)));
    let r = app.post(&batch, &token, json!({"code": "NOLIST"})).await;
    assert_eq!(r.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_blocking_vouchers_never_block_more_than_the_quota() {
    let (app, _, token) = catalogue_app().await;
    let shirt = plain_item(&app, &token, "Shirt").await;
    let shirts = quota(&app, &token, 5, &[shirt]).await;
    let url = vouchers();
    let body = json!({"item": shirt, "block_quota": true});
    let requests = (0..20).map(|_| app.post(&url, &token, body.clone()));
    let statuses: Vec<u16> = futures::future::join_all(requests)
        .await
        .into_iter()
        .map(|r| r.status)
        .collect();
    let made = statuses.iter().filter(|&&s| s == 201).count();
    let refused = statuses.iter().filter(|&&s| s == 400).count();
    assert_eq!((made, refused), (5, 15), "{statuses:?}");
    assert_eq!(blocked(&app, &token, shirts).await, (json!(5), json!(0)));
    assert_eq!(app.get(&vouchers(), &token).await.body["count"], 5);
}
