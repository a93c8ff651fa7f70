//! Refunds, as pretix: a payment given back through its provider in parts, never beyond
//! what was paid on it; refunds recorded as made elsewhere and moved through their states;
//! a refund to a gift card credited through its ledger; the order canceled on request.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, shop};

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

/// A paid order of one ticket (23.00), its payment 1 confirmed.
async fn paid(s: &Shop) -> String {
    code(
        &s.ordered(1, json!({"status": "p", "payment_provider": "manual"}))
            .await,
    )
}

fn refunds(c: &str) -> String {
    format!("{EVENT}/orders/{c}/refunds/")
}

async fn refund_payment(s: &Shop, c: &str, body: Value) -> tessera_tests::Reply {
    let path = format!("{EVENT}/orders/{c}/payments/1/refund/");
    s.app.post(&path, &s.token, body).await
}

#[tokio::test]
async fn a_payment_is_given_back_in_parts_and_never_beyond_what_was_paid_on_it() {
    let s = shop(Some(5)).await;
    let c = paid(&s).await;
    let first = refund_payment(&s, &c, json!({"amount": "10.00"})).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["state"], "done");
    assert_eq!(first.body["payment"], 1);
    assert_eq!(
        (
            first.body["local_id"].clone(),
            first.body["provider"].clone()
        ),
        (json!(1), json!("manual"))
    );

    let over = refund_payment(&s, &c, json!({"amount": "13.01"})).await;
    assert_eq!(over.status, 400, "{}", over.body);
    assert_eq!(
        over.body["amount"][0],
        "Invalid refund amount, only 13.00 are available to refund."
    );

    let rest = refund_payment(&s, &c, json!({})).await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    assert_eq!(rest.body["amount"], "13.00");
    let payment = s
        .app
        .get(&format!("{EVENT}/orders/{c}/payments/1/"), &s.token)
        .await;
    assert_eq!(payment.body["state"], "refunded");
    assert_eq!(refund_payment(&s, &c, json!({})).await.status, 400);

    let list = s.app.get(&refunds(&c), &s.token).await;
    assert_eq!(list.body["count"], 2, "{}", list.body);
    let order = s.app.get(&format!("{EVENT}/orders/{c}/"), &s.token).await;
    assert_eq!(
        order.body["refunds"][1]["amount"], "13.00",
        "{}",
        order.body
    );
    assert_eq!(order.body["status"], "p", "a refund alone does not cancel");
}

#[tokio::test]
async fn only_confirmed_payments_are_refunded_and_mark_canceled_cancels_the_order() {
    let s = shop(Some(5)).await;
    let pending = code(&s.ordered(1, json!({"payment_provider": "manual"})).await);
    let r = refund_payment(&s, &pending, json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["detail"], "Only confirmed payments can be refunded.");

    let c = paid(&s).await;
    assert_eq!(s.availability(s.quota).await["available_number"], 3);
    let r = refund_payment(&s, &c, json!({"mark_canceled": true})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let order = s.app.get(&format!("{EVENT}/orders/{c}/"), &s.token).await;
    assert_eq!(order.body["status"], "c");
    assert_eq!(s.availability(s.quota).await["available_number"], 4);
}

#[tokio::test]
async fn a_recorded_refund_moves_through_pretix_states_and_refuses_the_others() {
    let s = shop(Some(5)).await;
    let c = paid(&s).await;
    let base = refunds(&c);
    let made = s
        .app
        .post(&base, &s.token, json!({"state": "created", "amount": "5.00", "payment": 1, "provider": "manual", "comment": "goodwill"}))
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["comment"], "goodwill");
    let done = s
        .app
        .post(&format!("{base}1/done/"), &s.token, json!({}))
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["state"], "done");
    assert!(done.body["execution_date"].is_string());
    let again = s
        .app
        .post(&format!("{base}1/done/"), &s.token, json!({}))
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body["detail"],
        "You cannot mark a refund as done that is not in created or transit state."
    );
    assert_eq!(
        s.app
            .post(&format!("{base}1/cancel/"), &s.token, json!({}))
            .await
            .status,
        400
    );
    assert_eq!(
        s.app
            .post(&format!("{base}1/process/"), &s.token, json!({}))
            .await
            .status,
        400
    );

    let transit = s
        .app
        .post(
            &base,
            &s.token,
            json!({"state": "transit", "amount": "1.00", "provider": "manual"}),
        )
        .await;
    assert_eq!(transit.status, 201, "{}", transit.body);
    let canceled = s
        .app
        .post(&format!("{base}2/cancel/"), &s.token, json!({}))
        .await;
    assert_eq!(canceled.body["state"], "canceled", "{}", canceled.body);

    let external = s.app.post(&base, &s.token, json!({"state": "external", "amount": "18.00", "provider": "manual", "source": "external"})).await;
    assert_eq!(external.status, 201, "{}", external.body);
    let processed = s
        .app
        .post(
            &format!("{base}3/process/"),
            &s.token,
            json!({"mark_canceled": true}),
        )
        .await;
    assert_eq!(processed.body["state"], "done", "{}", processed.body);
    let order = s.app.get(&format!("{EVENT}/orders/{c}/"), &s.token).await;
    assert_eq!(order.body["status"], "c");

    for (body, field) in [
        (
            json!({"state": "done", "amount": "30.00", "payment": 1, "provider": "manual"}),
            "amount",
        ),
        (
            json!({"state": "failed", "amount": "1.00", "provider": "manual"}),
            "state",
        ),
        (
            json!({"state": "done", "amount": "1.00", "payment": 7, "provider": "manual"}),
            "payment",
        ),
        (
            json!({"state": "done", "amount": "0.00", "provider": "manual"}),
            "amount",
        ),
        (
            json!({"state": "done", "amount": "1.00", "provider": "manual", "source": "robot"}),
            "source",
        ),
    ] {
        let r = s.app.post(&base, &s.token, body).await;
        assert_eq!(r.status, 400, "{field}: {}", r.body);
        assert!(r.body[field].is_array(), "{field}: {}", r.body);
    }
    assert_eq!(
        s.app.get(&base, &s.token).await.body["count"],
        3,
        "nothing half-written"
    );
}

#[tokio::test]
async fn a_refund_to_a_gift_card_credits_it_through_its_ledger() {
    let s = shop(Some(5)).await;
    let c = paid(&s).await;
    let card = s
        .app
        .post(
            "/api/v1/organizers/acme/giftcards/",
            &s.token,
            json!({"value": "0.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(card.status, 201, "{}", card.body);
    let id = card.body["id"].as_i64().expect("id");
    let r = s
        .app
        .post(&refunds(&c), &s.token, json!({"state": "done", "amount": "23.00", "payment": 1, "provider": "giftcard", "info": {"gift_card": id}}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let card = s
        .app
        .get(
            &format!("/api/v1/organizers/acme/giftcards/{id}/"),
            &s.token,
        )
        .await;
    assert_eq!(card.body["value"], "23.00");
    let ledger = s
        .app
        .get(
            &format!("/api/v1/organizers/acme/giftcards/{id}/transactions/"),
            &s.token,
        )
        .await;
    assert_eq!(ledger.body["count"], 2, "{}", ledger.body);

    let unknown = s
        .app
        .post(&refunds(&c), &s.token, json!({"state": "done", "amount": "1.00", "provider": "giftcard", "info": {"gift_card": 999999}}))
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(unknown.body["info"].is_array());
}

#[tokio::test]
async fn refunds_are_read_with_can_view_orders_and_written_with_can_change_orders() {
    let s = shop(Some(5)).await;
    let c = paid(&s).await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    assert_eq!(s.app.get(&refunds(&c), &viewer).await.status, 200);
    let body = json!({"state": "done", "amount": "1.00", "provider": "manual"});
    assert_eq!(s.app.post(&refunds(&c), &viewer, body).await.status, 403);
    let path = format!("{EVENT}/orders/{c}/payments/1/refund/");
    assert_eq!(s.app.post(&path, &viewer, json!({})).await.status, 403);
    let nobody = s.app.token("acme", &["can_view_vouchers"]).await;
    assert_eq!(s.app.get(&refunds(&c), &nobody).await.status, 403);
}

#[tokio::test]
async fn concurrent_full_refunds_of_one_payment_give_it_back_once() {
    let s = shop(Some(5)).await;
    let c = paid(&s).await;
    let (a, b) = tokio::join!(
        refund_payment(&s, &c, json!({})),
        refund_payment(&s, &c, json!({}))
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 400], "{} / {}", a.body, b.body);
    assert_eq!(s.app.get(&refunds(&c), &s.token).await.body["count"], 1);
}
