//! Orders after creation, as pretix: approval (`approve/`, `deny/` with a reason mailed
//! through the outbox), `mark_pending/` and `mark_expired/`, each refused from states pretix
//! refuses it in, and each moving the quota's holds.

use serde_json::{Value, json};
use tessera_tests::outbox;

use crate::selling_support::{Shop, shop};

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

/// The quota's free places.
async fn free(s: &Shop) -> Value {
    s.availability(s.quota).await["available_number"].clone()
}

/// An order of one ticket waiting for approval.
async fn awaiting(s: &Shop) -> String {
    let o = s
        .ordered(1, json!({"require_approval": true, "send_mail": true}))
        .await;
    assert_eq!(o["status"], "n");
    assert_eq!(o["require_approval"], true, "{o}");
    code(&o)
}

#[tokio::test]
async fn an_order_awaiting_approval_holds_its_quota_cannot_be_paid_and_is_approved_with_a_term() {
    let s = shop(Some(5)).await;
    let c = awaiting(&s).await;
    assert_eq!(free(&s).await, 4);
    let paid = s.act(&c, "mark_paid", json!({})).await;
    assert_eq!(paid.status, 400, "{}", paid.body);
    assert_eq!(paid.body["detail"], "The order has not been approved yet.");

    let r = s.act(&c, "approve", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        (r.body["status"].clone(), r.body["require_approval"].clone()),
        (json!("n"), json!(false))
    );
    assert!(r.body["expires"].is_string(), "{}", r.body);
    assert_eq!(free(&s).await, 4);
    let again = s.act(&c, "approve", json!({})).await;
    assert_eq!(again.status, 400);
    assert_eq!(again.body["detail"], "This order is not pending approval.");
    assert_eq!(s.act(&c, "mark_paid", json!({})).await.status, 200);

    let subjects: Vec<String> = outbox(&s.app.db)
        .await
        .into_iter()
        .map(|m| m.subject)
        .collect();
    assert!(
        subjects.iter().any(|m| m.contains("has been approved")),
        "{subjects:?}"
    );
}

#[tokio::test]
async fn a_free_order_is_paid_when_approved() {
    let s = shop(Some(5)).await;
    let o = s
        .ordered(
            1,
            json!({"require_approval": true, "positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    let r = s
        .act(&code(&o), "approve", json!({"send_email": false}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "p");
    let payments = r.body["payments"].as_array().expect("payments");
    assert_eq!(payments.len(), 1, "{}", r.body);
    assert_eq!(payments[0]["provider"], "free");
    assert_eq!(payments[0]["state"], "confirmed");
    assert!(outbox(&s.app.db).await.is_empty());
}

#[tokio::test]
async fn a_denied_order_is_canceled_gives_back_its_quota_and_mails_the_reason() {
    let s = shop(Some(5)).await;
    let c = awaiting(&s).await;
    let r = s
        .act(
            &c,
            "deny",
            json!({"comment": "Only members may attend this workshop."}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "c");
    assert_eq!(free(&s).await, 5);
    let denied = outbox(&s.app.db)
        .await
        .into_iter()
        .find(|m| m.subject.contains("has been denied"))
        .expect("denial mail");
    assert!(
        denied
            .body_text
            .contains("Only members may attend this workshop."),
        "{}",
        denied.body_text
    );
    assert_eq!(s.act(&c, "deny", json!({})).await.status, 400);
}

#[tokio::test]
async fn approve_and_deny_are_refused_for_orders_that_need_no_approval() {
    let s = shop(Some(5)).await;
    let c = code(&s.ordered(1, json!({})).await);
    for action in ["approve", "deny"] {
        let r = s.act(&c, action, json!({})).await;
        assert_eq!(r.status, 400, "{action}: {}", r.body);
        assert_eq!(r.body["detail"], "This order is not pending approval.");
    }
    let bad = s
        .order(json!({"status": "p", "require_approval": true, "positions": [{"item": s.ticket}]}))
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body["require_approval"].is_array(), "{}", bad.body);
}

#[tokio::test]
async fn a_paid_order_marked_pending_holds_its_quota_as_pending_and_only_paid_orders_can_be() {
    let s = shop(Some(5)).await;
    let c = code(&s.ordered(1, json!({"status": "p"})).await);
    let r = s.act(&c, "mark_pending", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "n");
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["pending_orders"].clone()),
        (json!(0), json!(1)),
        "{a}"
    );
    let again = s.act(&c, "mark_pending", json!({})).await;
    assert_eq!(again.status, 400);
    assert_eq!(again.body["detail"], "The order is not paid.");
}

#[tokio::test]
async fn a_pending_order_marked_expired_frees_its_quota_and_only_pending_orders_can_be() {
    let s = shop(Some(1)).await;
    let c = code(&s.ordered(1, json!({})).await);
    assert_eq!(free(&s).await, 0);
    let r = s.act(&c, "mark_expired", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "e");
    assert_eq!(free(&s).await, 1);
    let again = s.act(&c, "mark_expired", json!({})).await;
    assert_eq!(again.status, 400);
    assert_eq!(again.body["detail"], "The order is not pending.");
    let paid = code(&s.ordered(1, json!({"status": "p"})).await);
    assert_eq!(s.act(&paid, "mark_expired", json!({})).await.status, 400);
    // The place went to the paid order: the expired one cannot be paid any more.
    assert_eq!(s.act(&c, "mark_paid", json!({})).await.status, 400);
}

#[tokio::test]
async fn order_state_changes_need_can_change_orders() {
    let s = shop(Some(5)).await;
    let c = awaiting(&s).await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    for action in ["approve", "deny", "mark_pending", "mark_expired"] {
        let path = format!("{}/orders/{c}/{action}/", crate::selling_support::EVENT);
        assert_eq!(
            s.app.post(&path, &viewer, json!({})).await.status,
            403,
            "{action}"
        );
    }
}
