//! Vouchers redeemed by orders: the price they give, their usage limit, their scope, the
//! quota they block, and what cancellation gives back.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, id, shop};

async fn voucher(s: &Shop, body: Value) -> Value {
    created(&s.app, &format!("{EVENT}/vouchers/"), &s.token, body).await
}

async fn redeemed(s: &Shop, v: &Value) -> i64 {
    let r = s
        .app
        .get(&format!("{EVENT}/vouchers/{}/", id(v)), &s.token)
        .await;
    r.body["redeemed"].as_i64().expect("redeemed")
}

#[tokio::test]
async fn each_price_mode_sets_the_price_and_redeemed_counts_up() {
    let s = shop(None).await;
    for (mode, value, price) in [
        ("none", "0.00", "23.00"),
        ("set", "5.00", "5.00"),
        ("subtract", "3.00", "20.00"),
        ("percent", "10.00", "20.70"),
    ] {
        let code = format!("CODE-{}", mode.to_uppercase());
        let v = voucher(
            &s,
            json!({"code": code, "price_mode": mode, "value": value, "max_usages": 2}),
        )
        .await;
        let o = s
            .ordered(
                0,
                json!({"positions": [{"item": s.ticket, "voucher": code}]}),
            )
            .await;
        assert_eq!(o["positions"][0]["price"], price, "{mode}");
        assert_eq!(o["positions"][0]["voucher"], id(&v));
        assert_eq!(redeemed(&s, &v).await, 1, "{mode}");
    }
}

#[tokio::test]
async fn unknown_used_up_expired_and_foreign_vouchers_are_400_on_the_position() {
    let s = shop(None).await;
    let other = id(&crate::selling_support::item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Other"}, "default_price": "1.00"}),
    )
    .await);
    voucher(&s, json!({"code": "ONCE1"})).await;
    voucher(
        &s,
        json!({"code": "OLDIE", "valid_until": "2001-01-01T00:00:00Z"}),
    )
    .await;
    voucher(&s, json!({"code": "OTHER", "item": other})).await;
    s.ordered(
        0,
        json!({"positions": [{"item": s.ticket, "voucher": "once1"}]}),
    )
    .await;
    for code in ["NOPE1", "ONCE1", "OLDIE", "OTHER"] {
        let r = s
            .order(json!({"positions": [{"item": s.ticket, "voucher": code}]}))
            .await;
        assert_eq!(r.status, 400, "{code}: {}", r.body);
        assert!(
            r.body["positions"][0]["voucher"].is_array(),
            "{code}: {}",
            r.body
        );
    }
    voucher(&s, json!({"code": "TWICE", "max_usages": 1})).await;
    let r = s
        .order(json!({"positions": [{"item": s.ticket, "voucher": "TWICE"}, {"item": s.ticket, "voucher": "TWICE"}]}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["positions"][0], json!({}));
    assert!(r.body["positions"][1]["voucher"].is_array(), "{}", r.body);
}

#[tokio::test]
async fn a_blocking_voucher_is_redeemed_out_of_the_quota_it_holds() {
    let s = shop(Some(2)).await;
    let v = voucher(
        &s,
        json!({"code": "VIP01", "block_quota": true, "item": s.ticket}),
    )
    .await;
    s.ordered(1, json!({})).await;
    assert_eq!(s.availability(s.quota).await["available_number"], 0);
    assert_eq!(
        s.order(json!({"positions": [{"item": s.ticket}]}))
            .await
            .status,
        400
    );
    let o = s
        .ordered(
            0,
            json!({"positions": [{"item": s.ticket, "voucher": "VIP01"}]}),
        )
        .await;
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["blocking_vouchers"].clone(), a["pending_orders"].clone()),
        (json!(0), json!(2))
    );
    let code = o["code"].as_str().expect("code");
    assert_eq!(s.act(code, "mark_canceled", json!({})).await.status, 200);
    assert_eq!(redeemed(&s, &v).await, 0);
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["blocking_vouchers"].clone(), a["pending_orders"].clone()),
        (json!(1), json!(1))
    );
}

#[tokio::test]
async fn a_voucher_that_ignores_quota_sells_beyond_it() {
    let s = shop(Some(1)).await;
    voucher(
        &s,
        json!({"code": "CREW1", "allow_ignore_quota": true, "max_usages": 5}),
    )
    .await;
    s.ordered(1, json!({})).await;
    let o = s
        .ordered(
            0,
            json!({"positions": [{"item": s.ticket, "voucher": "CREW1"}]}),
        )
        .await;
    assert!(o["positions"][0]["voucher"].is_i64());
    assert_eq!(s.availability(s.quota).await["pending_orders"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_voucher_is_never_redeemed_more_often_than_allowed_under_concurrency() {
    let s = shop(None).await;
    let v = voucher(&s, json!({"code": "RACE1", "max_usages": 5})).await;
    let app = std::sync::Arc::new(s.app);
    let tasks: Vec<_> = (0..30)
        .map(|_| {
            let (app, token, ticket) = (app.clone(), s.token.clone(), s.ticket);
            tokio::spawn(async move {
                let body = json!({"positions": [{"item": ticket, "voucher": "RACE1"}]});
                app.post(&format!("{EVENT}/orders/"), &token, body)
                    .await
                    .status
            })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        match t.await.expect("task") {
            201 => ok += 1,
            400 => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(ok, 5);
    let r = app
        .get(&format!("{EVENT}/vouchers/{}/", id(&v)), &s.token)
        .await;
    assert_eq!(r.body["redeemed"], 5);
}
