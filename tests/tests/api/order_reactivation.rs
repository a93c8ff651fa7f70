//! Canceled orders brought back (`reactivate/`) and order links mailed again
//! (`resend_link/`), as pretix.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, id, shop};

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

fn secret(o: &Value) -> String {
    o["positions"][0]["secret"]
        .as_str()
        .expect("secret")
        .to_owned()
}

async fn revoked(s: &Shop) -> Vec<String> {
    let r = s
        .app
        .get(&format!("{EVENT}/revokedsecrets/"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["secret"].as_str().expect("secret").to_owned())
        .collect()
}

async fn redeemed(s: &Shop, voucher: i64) -> i64 {
    let r = s
        .app
        .get(&format!("{EVENT}/vouchers/{voucher}/"), &s.token)
        .await;
    r.body["redeemed"].as_i64().expect("redeemed")
}

async fn canceled(s: &Shop, extra: Value) -> Value {
    let o = s.ordered(1, extra).await;
    let r = s.act(&code(&o), "mark_canceled", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    o
}

#[tokio::test]
async fn a_canceled_order_comes_back_pending_with_its_quota_voucher_and_new_secrets() {
    let s = shop(Some(2)).await;
    let v = id(&created(
        &s.app,
        &format!("{EVENT}/vouchers/"),
        &s.token,
        json!({"code": "FRIEND", "max_usages": 1}),
    )
    .await);
    let o = canceled(
        &s,
        json!({"positions": [{"item": s.ticket, "voucher": "FRIEND"}]}),
    )
    .await;
    assert_eq!(redeemed(&s, v).await, 0);
    assert_eq!(s.availability(s.quota).await["available_number"], 2);

    let r = s.act(&code(&o), "reactivate", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "n");
    assert!(r.body["expires"].is_string());
    assert_eq!(redeemed(&s, v).await, 1);
    let a = s.availability(s.quota).await;
    assert_eq!(a["pending_orders"], 1, "{a}");
    assert_eq!(a["available_number"], 1, "{a}");
    assert_ne!(secret(&r.body), secret(&o), "new secrets");
    assert_eq!(
        revoked(&s).await,
        vec![secret(&o)],
        "the old secret stays revoked"
    );

    let again = s.act(&code(&o), "reactivate", json!({})).await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert_eq!(
        again.body["detail"],
        "The order is not allowed to be reactivated."
    );
}

#[tokio::test]
async fn a_canceled_paid_order_comes_back_paid() {
    let s = shop(Some(2)).await;
    let o = canceled(&s, json!({"status": "p", "payment_provider": "manual"})).await;
    let r = s.act(&code(&o), "reactivate", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "p");
    assert_eq!(s.availability(s.quota).await["paid_orders"], 1);
}

#[tokio::test]
async fn without_room_on_the_quota_reactivation_is_400_and_changes_nothing() {
    let s = shop(Some(1)).await;
    let o = canceled(&s, json!({})).await;
    s.ordered(1, json!({})).await;
    let r = s.act(&code(&o), "reactivate", json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "Some of the ordered products are no longer available."
    );
    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&o)), &s.token)
        .await;
    assert_eq!(shown.body["status"], "c");
    assert_eq!(shown.body["positions"][0]["secret"], secret(&o).as_str());
    let a = s.availability(s.quota).await;
    assert_eq!(a["pending_orders"], 1, "{a}");
    assert_eq!(a["available_number"], 0, "{a}");
}

#[tokio::test]
async fn a_voucher_used_up_meanwhile_keeps_the_order_canceled() {
    let s = shop(None).await;
    let v = id(&created(
        &s.app,
        &format!("{EVENT}/vouchers/"),
        &s.token,
        json!({"code": "ONCE1", "max_usages": 1}),
    )
    .await);
    let positions = json!({"positions": [{"item": s.ticket, "voucher": "ONCE1"}]});
    let o = canceled(&s, positions.clone()).await;
    s.ordered(0, positions).await;
    let r = s.act(&code(&o), "reactivate", json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "The voucher has been used in the meantime."
    );
    assert_eq!(redeemed(&s, v).await, 1);
}

#[tokio::test]
async fn a_reactivation_racing_an_order_for_the_last_ticket_sells_it_once() {
    let s = shop(Some(1)).await;
    for _ in 0..5 {
        let o = canceled(&s, json!({})).await;
        let body = json!({"email": "b@example.org", "positions": [{"item": s.ticket}]});
        let c = code(&o);
        let (back, new) = tokio::join!(s.act(&c, "reactivate", json!({})), s.order(body));
        let won = [back.status, new.status]
            .iter()
            .filter(|&&st| st < 300)
            .count();
        assert_eq!(
            won, 1,
            "{} {} / {} {}",
            back.status, back.body, new.status, new.body
        );
        assert_eq!(s.availability(s.quota).await["available_number"], 0);
        let winner = if back.status == 200 {
            code(&o)
        } else {
            code(&new.body)
        };
        let r = s.act(&winner, "mark_canceled", json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
}

#[tokio::test]
async fn the_link_is_mailed_again_and_an_order_without_address_is_400() {
    let s = shop(None).await;
    let o = s.ordered(1, json!({})).await;
    let r = s.act(&code(&o), "resend_link", json!({})).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let mails = tessera_tests::outbox(&s.app.db).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to_address, "ada@example.org");
    let url = o["url"].as_str().expect("url");
    assert!(mails[0].body_text.contains(url), "{}", mails[0].body_text);

    let anonymous = s.ordered(1, json!({"email": null})).await;
    let r = s.act(&code(&anonymous), "resend_link", json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "There is no email address associated with this order."
    );
    let unknown = s.act("ZZZZZ", "resend_link", json!({})).await;
    assert_eq!(unknown.status, 403, "{}", unknown.body);
}
