//! Orders changed as pretix changes them (`orders/{code}/change/`): positions patched,
//! canceled, split off and added, fees changed, all of it or nothing.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::selling_support::{EVENT, Shop, created, id, item, shop};

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

fn position(o: &Value, i: usize) -> i64 {
    o["positions"][i]["id"].as_i64().expect("position id")
}

async fn change(s: &Shop, code: &str, body: Value) -> Reply {
    s.act(code, "change", body).await
}

async fn order(s: &Shop, code: &str) -> Value {
    let r = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

async fn revoked(s: &Shop) -> Vec<String> {
    let r = s
        .app
        .get(&format!("{EVENT}/revokedsecrets/"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    (r.body["results"].as_array().expect("results").iter())
        .map(|r| r["secret"].as_str().expect("secret").to_owned())
        .collect()
}

/// Another item "VIP" at 50.00 on the shop's quota.
async fn vip(s: &Shop) -> i64 {
    let vip = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "VIP"}, "default_price": "50.00", "admission": true}),
    )
    .await);
    let r = s
        .app
        .patch(
            &format!("{EVENT}/quotas/{}/", s.quota),
            &s.token,
            json!({"items": [s.ticket, vip]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    vip
}

#[tokio::test]
async fn a_position_moves_to_another_item_and_price_and_the_total_follows() {
    let s = shop(Some(5)).await;
    let vip = vip(&s).await;
    let o = s.ordered(2, json!({})).await;
    let p = position(&o, 0);
    let r = change(
        &s,
        &code(&o),
        json!({"patch_positions": [{"position": p, "body": {"item": vip, "price": "50.00"}}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["positions"][0]["item"], vip);
    assert_eq!(r.body["positions"][0]["price"], "50.00");
    assert_eq!(r.body["total"], "73.00");
    assert_eq!(r.body["status"], "n");
    assert_eq!(order(&s, &code(&o)).await["total"], "73.00");
    assert_eq!(s.availability(s.quota).await["available_number"], 3);
}

#[tokio::test]
async fn a_canceled_position_gives_back_its_quota_and_its_secret_is_revoked() {
    let s = shop(Some(5)).await;
    let o = s.ordered(2, json!({})).await;
    let gone = &o["positions"][1];
    let r = change(
        &s,
        &code(&o),
        json!({"cancel_positions": [{"position": gone["id"]}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["positions"].as_array().map(Vec::len), Some(1));
    assert_eq!(r.body["total"], "23.00");
    assert_eq!(s.availability(s.quota).await["available_number"], 4);
    let secret = gone["secret"].as_str().expect("secret").to_owned();
    assert_eq!(revoked(&s).await, vec![secret]);
}

#[tokio::test]
async fn a_change_that_would_leave_the_order_empty_is_refused_and_changes_nothing() {
    let s = shop(Some(5)).await;
    let o = s.ordered(1, json!({})).await;
    let r = change(
        &s,
        &code(&o),
        json!({"cancel_positions": [{"position": position(&o, 0)}]}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!([
            "This operation would leave the order empty. Please cancel the order itself instead."
        ])
    );
    assert_eq!(order(&s, &code(&o)).await["positions"], o["positions"]);
    assert_eq!(s.availability(s.quota).await["available_number"], 4);
}

#[tokio::test]
async fn a_change_that_would_oversell_is_refused_whole_unless_quotas_are_not_checked() {
    let s = shop(Some(2)).await;
    let o = s.ordered(1, json!({})).await;
    let body = json!({
        "create_positions": [{"item": s.ticket}, {"item": s.ticket}],
        "patch_positions": [{"position": position(&o, 0), "body": {"price": "1.00"}}],
    });
    let r = change(&s, &code(&o), body.clone()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!(["The quota Hall does not have enough capacity left to perform the operation."])
    );
    let stored = order(&s, &code(&o)).await;
    assert_eq!(stored["positions"], o["positions"]);
    assert_eq!(stored["total"], "23.00");
    assert_eq!(s.availability(s.quota).await["available_number"], 1);

    let r = s
        .app
        .post(
            &format!("{EVENT}/orders/{}/change/?check_quotas=false", code(&o)),
            &s.token,
            body,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["positions"].as_array().map(Vec::len), Some(3));
    assert_eq!(r.body["positions"][2]["positionid"], 3);
    assert_eq!(r.body["total"], "47.00");
    let a = s.availability(s.quota).await;
    assert_eq!(a["available_number"], 0, "{a}");
    assert_eq!(a["pending_orders"], 3, "{a}");
}

#[tokio::test]
async fn a_split_position_makes_a_new_order_paid_by_offsetting_what_was_paid() {
    let s = shop(Some(5)).await;
    let o = s
        .ordered(2, json!({"status": "p", "payment_provider": "manual"}))
        .await;
    let moved = position(&o, 1);
    let r = change(
        &s,
        &code(&o),
        json!({"split_positions": [{"position": moved}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "p");
    assert_eq!(r.body["total"], "23.00");
    assert_eq!(r.body["refunds"][0]["provider"], "offsetting");
    assert_eq!(r.body["refunds"][0]["amount"], "23.00");
    assert_eq!(r.body["refunds"][0]["state"], "done");
    let list = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    let split = (list.body["results"].as_array().expect("orders").iter())
        .find(|x| x["code"] != o["code"])
        .expect("the split order")
        .clone();
    assert_eq!(split["status"], "p");
    assert_eq!(split["total"], "23.00");
    assert_eq!(split["email"], "ada@example.org");
    assert_eq!(split["positions"][0]["positionid"], 2);
    assert_ne!(split["positions"][0]["secret"], o["positions"][1]["secret"]);
    assert_eq!(split["payments"][0]["provider"], "offsetting");
    assert_eq!(split["payments"][0]["state"], "confirmed");
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["available_number"].clone()),
        (json!(2), json!(3))
    );
}

#[tokio::test]
async fn fees_are_canceled_added_and_patched_and_the_total_follows() {
    let s = shop(None).await;
    let o = s
        .ordered(
            1,
            json!({"fees": [{"fee_type": "shipping", "value": "5.00"},
                            {"fee_type": "service", "value": "2.00"}]}),
        )
        .await;
    let fee = |i: usize| o["fees"][i]["id"].clone();
    let r = change(
        &s,
        &code(&o),
        json!({
            "cancel_fees": [{"fee": fee(0)}],
            "patch_fees": [{"fee": fee(1), "body": {"value": "3.50"}}],
            "create_fees": [{"fee_type": "insurance", "value": "4.00", "description": "Cover"}],
        }),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let fees = r.body["fees"].as_array().expect("fees");
    let shown: Vec<(&Value, &Value)> = fees.iter().map(|f| (&f["fee_type"], &f["value"])).collect();
    assert_eq!(
        shown,
        vec![
            (&json!("service"), &json!("3.50")),
            (&json!("insurance"), &json!("4.00"))
        ]
    );
    assert_eq!(r.body["total"], "30.50");
}

#[tokio::test]
async fn a_paid_order_that_costs_more_is_pending_again_and_one_made_free_is_paid() {
    let s = shop(None).await;
    let o = s.ordered(1, json!({"status": "p"})).await;
    let p = position(&o, 0);
    let r = change(
        &s,
        &code(&o),
        json!({"patch_positions": [{"position": p, "body": {"price": "30.00"}}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "n");
    assert!(r.body["expires"].is_string());
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["pending_orders"].clone()),
        (json!(0), json!(1))
    );

    let pending = s.ordered(1, json!({"payment_provider": "manual"})).await;
    let r = change(
        &s,
        &code(&pending),
        json!({"patch_positions": [{"position": position(&pending, 0), "body": {"price": "0.00"}}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "p");
    let states: Vec<(&Value, &Value)> = (r.body["payments"].as_array().expect("payments").iter())
        .map(|p| (&p["provider"], &p["state"]))
        .collect();
    assert_eq!(
        states,
        vec![
            (&json!("manual"), &json!("canceled")),
            (&json!("free"), &json!("confirmed"))
        ]
    );
}

#[tokio::test]
async fn a_pending_order_that_costs_less_asks_its_open_payment_for_the_rest() {
    let s = shop(None).await;
    let o = s.ordered(2, json!({"payment_provider": "manual"})).await;
    let r = change(
        &s,
        &code(&o),
        json!({"cancel_positions": [{"position": position(&o, 1)}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "n");
    assert_eq!(r.body["payments"][0]["state"], "created");
    assert_eq!(r.body["payments"][0]["amount"], "23.00");
}

#[tokio::test]
async fn changed_signed_tickets_get_new_secrets_and_the_old_ones_are_revoked() {
    let s = shop(None).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"ticket_secret_generator": "pretix_sig1"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let vip = vip(&s).await;
    let o = s.ordered(2, json!({})).await;
    let (changed, kept) = (&o["positions"][0], &o["positions"][1]);
    let r = change(
        &s,
        &code(&o),
        json!({"patch_positions": [{"position": changed["id"], "body": {"item": vip}},
                                   {"position": kept["id"], "body": {"price": "20.00"}}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_ne!(r.body["positions"][0]["secret"], changed["secret"]);
    assert_eq!(
        r.body["positions"][1]["secret"], kept["secret"],
        "the price is not in it"
    );
    assert_eq!(
        revoked(&s).await,
        vec![changed["secret"].as_str().expect("secret").to_owned()]
    );
}

#[tokio::test]
async fn an_add_on_joins_a_position_whose_product_offers_it_and_leaves_with_it() {
    let s = shop(None).await;
    let extras = created(
        &s.app,
        &format!("{EVENT}/categories/"),
        &s.token,
        json!({"name": {"en": "Extras"}, "is_addon": true}),
    )
    .await;
    let workshop = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Workshop"}, "default_price": "10.00", "category": id(&extras)}),
    )
    .await);
    created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "Room", "size": 10, "items": [workshop]}),
    )
    .await;
    let o = s.ordered(2, json!({})).await;
    let r = change(
        &s,
        &code(&o),
        json!({"create_positions": [{"item": workshop}]}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!([
            "This is an add-on product, please select the base position it should be added to."
        ])
    );
    let r = change(
        &s,
        &code(&o),
        json!({"create_positions": [{"item": workshop, "addon_to": 1}]}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!(["The selected base position does not allow you to add this product as an add-on."])
    );
    created(
        &s.app,
        &format!("{EVENT}/items/{}/addons/", s.ticket),
        &s.token,
        json!({"addon_category": id(&extras), "max_count": 2}),
    )
    .await;
    let r = change(
        &s,
        &code(&o),
        json!({"create_positions": [{"item": workshop, "addon_to": 9}]}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"create_positions": [{"addon_to": ["addon_to refers to an unknown position ID for this order."]}]})
    );
    let r = change(
        &s,
        &code(&o),
        json!({"create_positions": [{"item": workshop, "addon_to": 1}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["positions"][2]["addon_to"], position(&o, 0));
    assert_eq!(r.body["positions"][2]["price"], "10.00");
    assert_eq!(r.body["total"], "56.00");
    let r = change(
        &s,
        &code(&o),
        json!({"cancel_positions": [{"position": position(&o, 0)}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["positions"].as_array().map(Vec::len), Some(1));
    assert_eq!(r.body["total"], "23.00");
}

#[tokio::test]
async fn unknown_and_repeated_objects_are_field_errors_of_their_list() {
    let s = shop(None).await;
    let o = s.ordered(2, json!({})).await;
    let other = s.ordered(1, json!({}));
    let foreign = position(&other.await, 0);
    let p = position(&o, 0);
    for (body, expected) in [
        (
            json!({"cancel_positions": [{"position": p}, {"position": foreign}]}),
            json!({"cancel_positions": [{}, {"position": [format!("Invalid pk \"{foreign}\" - object does not exist.")]}]}),
        ),
        (
            json!({"split_positions": [{"position": p}, {"position": p}]}),
            json!({"split_positions": ["You have specified the same object twice."]}),
        ),
        (
            json!({"patch_positions": [{"position": p, "body": {"item": 999_999}}]}),
            json!({"patch_positions": [{"item": ["Invalid pk \"999999\" - object does not exist."]}]}),
        ),
        (
            json!({"patch_positions": [{"position": p, "body": {"secret": o["positions"][1]["secret"]}}]}),
            json!(["You cannot assign a position secret that already exists."]),
        ),
        (
            json!({"create_fees": [{"fee_type": "bribe", "value": "1.00"}]}),
            json!({"create_fees": [{"fee_type": ["\"bribe\" is not a valid choice."]}]}),
        ),
    ] {
        let r = change(&s, &code(&o), body).await;
        assert_eq!((r.status, &r.body), (400, &expected));
    }
    assert_eq!(order(&s, &code(&o)).await["positions"], o["positions"]);
}

#[tokio::test]
async fn changing_needs_can_change_orders_and_a_canceled_order_stays_as_it_is() {
    let s = shop(None).await;
    let o = s.ordered(2, json!({})).await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let body = json!({"cancel_positions": [{"position": position(&o, 1)}]});
    let url = format!("{EVENT}/orders/{}/change/", code(&o));
    assert_eq!(s.app.post(&url, &viewer, body.clone()).await.status, 403);
    assert_eq!(
        s.act(&code(&o), "mark_canceled", json!({})).await.status,
        200
    );
    let r = change(&s, &code(&o), body).await;
    assert_eq!(
        (r.status, r.body),
        (400, json!(["A canceled order cannot be changed."]))
    );
}

#[tokio::test]
async fn webhooks_hear_each_step_and_the_customer_is_told_when_asked() {
    let app = tessera_tests::TestApp::spawn_with(|c| c.webhooks_allow_private_targets = true);
    let s = crate::selling_support::shop_on(app.await, None).await;
    let r = s
        .app
        .post(
            "/api/v1/organizers/acme/webhooks/",
            &s.token,
            json!({"target_url": "http://127.0.0.1:9/hook", "all_events": true,
                   "action_types": ["pretix.event.order.changed.*"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let o = s.ordered(2, json!({})).await;
    let r = change(
        &s,
        &code(&o),
        json!({"send_email": true,
               "cancel_positions": [{"position": position(&o, 1)}],
               "patch_positions": [{"position": position(&o, 0), "body": {"price": "20.00"}}]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    use sea_orm::{EntityTrait, QueryOrder};
    let calls = tessera::db::entities::webhook_call::Entity::find()
        .order_by_asc(tessera::db::entities::webhook_call::Column::Id)
        .all(&s.app.db)
        .await
        .expect("calls");
    let actions: Vec<&str> = calls.iter().map(|c| c.action_type.as_str()).collect();
    assert_eq!(
        actions,
        vec![
            "pretix.event.order.changed.cancel",
            "pretix.event.order.changed.price"
        ]
    );
    assert_eq!(calls[1].payload["code"], o["code"]);
    assert_eq!(calls[1].payload["new_price"], "20.00");
    let mails = tessera_tests::outbox(&s.app.db).await;
    let changed = mails.last().expect("a mail");
    assert!(
        changed.subject.contains("has been changed"),
        "{}",
        changed.subject
    );
    assert!(
        changed.body_text.contains("Total: EUR 20.00"),
        "{}",
        changed.body_text
    );
}
