//! Orders that cost nothing, as pretix: paid as they are placed, with one confirmed payment
//! of the core's `free` provider, the "paid" confirmation and the tickets on their page;
//! `free` named for an order with a total is refused.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, shop};

fn free_payment(o: &Value) -> &Value {
    let payments = o["payments"].as_array().expect("payments");
    assert_eq!(payments.len(), 1, "{o}");
    assert_eq!(payments[0]["provider"], "free", "{o}");
    assert_eq!(payments[0]["state"], "confirmed", "{o}");
    assert_eq!(payments[0]["amount"], "0.00", "{o}");
    assert!(payments[0]["payment_date"].is_string(), "{o}");
    &payments[0]
}

async fn page(s: &Shop, o: &Value) -> String {
    let url = o["url"].as_str().expect("url");
    let path = url.strip_prefix("http://tessera.test").expect("public url");
    let r = s.app.get(path, "").await;
    assert_eq!(r.status, 200);
    r.body.as_str().expect("html").to_owned()
}

#[tokio::test]
async fn a_free_order_is_paid_at_once_with_the_free_provider_the_paid_mail_and_its_tickets() {
    let s = shop(Some(10)).await;
    let o = s
        .ordered(
            0,
            json!({"send_mail": true, "positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    assert_eq!(o["status"], "p", "{o}");
    assert_eq!(o["total"], "0.00");
    free_payment(&o);
    let a = s.availability(s.quota).await;
    assert_eq!(a["paid_orders"], 1, "{a}");
    assert_eq!(a["pending_orders"], 0, "{a}");

    let mails = tessera_tests::outbox(&s.app.db).await;
    assert_eq!(mails.len(), 1);
    let body = &mails[0].body_text;
    assert!(body.contains("The order is paid."), "{body}");
    assert!(!body.contains("Please pay"), "{body}");
    let secret = o["positions"][0]["secret"].as_str().expect("secret");
    assert!(page(&s, &o).await.contains(secret), "the ticket is shown");
}

#[tokio::test]
async fn a_speakers_voucher_makes_a_free_order_that_is_paid() {
    let s = shop(Some(10)).await;
    created(
        &s.app,
        &format!("{EVENT}/vouchers/"),
        &s.token,
        json!({"code": "SPEAKER", "price_mode": "set", "value": "0.00"}),
    )
    .await;
    let o = s
        .ordered(
            0,
            json!({"positions": [{"item": s.ticket, "voucher": "SPEAKER"}]}),
        )
        .await;
    assert_eq!(o["status"], "p", "{o}");
    free_payment(&o);
}

#[tokio::test]
async fn a_free_order_naming_a_provider_is_paid_with_free_as_pretix_does() {
    let s = shop(Some(10)).await;
    let o = s
        .ordered(
            0,
            json!({"payment_provider": "manual", "positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    assert_eq!(o["status"], "p", "{o}");
    free_payment(&o);
    let named = s
        .ordered(
            0,
            json!({"payment_provider": "free", "positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    free_payment(&named);
}

#[tokio::test]
async fn free_for_an_order_with_a_total_is_400_and_keeps_nothing() {
    let s = shop(Some(10)).await;
    let r = s
        .order(json!({
            "email": "ada@example.org",
            "payment_provider": "free",
            "positions": [{"item": s.ticket}],
        }))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!(["You cannot use the \"free\" payment provider for non-free orders."])
    );
    let list = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    assert_eq!(list.body["count"], 0, "{}", list.body);
    assert_eq!(s.availability(s.quota).await["available_number"], 10);
}

#[tokio::test]
async fn a_free_order_that_waits_for_approval_stays_pending_and_unpaid() {
    let s = shop(Some(10)).await;
    let o = s
        .ordered(
            0,
            json!({"require_approval": true, "positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    assert_eq!(o["status"], "n", "{o}");
    assert_eq!(o["require_approval"], true);
    assert_eq!(o["payments"], json!([]));
}
