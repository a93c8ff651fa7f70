//! Cart positions: reservations that hold quota and seats like orders, expire by
//! themselves, and become orders through `consume_carts`.

use serde_json::{Value, json};

use crate::selling_races::seat_the_shop;
use crate::selling_support::{EVENT, Shop, shop};

impl Shop {
    async fn cart(&self, body: Value) -> tessera_tests::Reply {
        self.app
            .post(&format!("{EVENT}/cartpositions/"), &self.token, body)
            .await
    }
}

#[tokio::test]
async fn a_cart_position_reserves_quota_until_it_is_deleted() {
    let s = shop(Some(1)).await;
    let r = s
        .cart(json!({"cart_id": "c1", "item": s.ticket, "price": "23.00",
                     "attendee_name_parts": {"full_name": "Ada"}}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["cart_id"], "c1");
    assert_eq!(r.body["price"], "23.00");
    assert_eq!(r.body["attendee_name"], "Ada");
    assert!(r.body["expires"].is_string());
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["cart_positions"].clone(), a["available_number"].clone()),
        (json!(1), json!(0))
    );
    let full = s
        .cart(json!({"cart_id": "c2", "item": s.ticket, "price": "23.00"}))
        .await;
    assert_eq!(full.status, 400);
    assert!(
        full.body["item"][0]
            .as_str()
            .expect("msg")
            .contains("quota")
    );
    assert_eq!(
        s.order(json!({"positions": [{"item": s.ticket}]}))
            .await
            .status,
        400
    );
    let id = r.body["id"].as_i64().expect("id");
    let list = s
        .app
        .get(&format!("{EVENT}/cartpositions/?cart_id=c1"), &s.token)
        .await;
    assert_eq!(list.body["count"], 1);
    let one = s
        .app
        .get(&format!("{EVENT}/cartpositions/{id}/"), &s.token)
        .await;
    assert_eq!(one.body["id"], id);
    assert_eq!(
        s.app
            .delete(&format!("{EVENT}/cartpositions/{id}/"), &s.token)
            .await
            .status,
        204
    );
    assert_eq!(
        s.app
            .delete(&format!("{EVENT}/cartpositions/{id}/"), &s.token)
            .await
            .status,
        403
    );
    assert_eq!(s.availability(s.quota).await["available_number"], 1);
}

#[tokio::test]
async fn an_expired_cart_position_stops_counting_at_once() {
    let s = shop(Some(1)).await;
    let soon = (chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339();
    let r = s
        .cart(json!({"cart_id": "c1", "item": s.ticket, "price": "23.00", "expires": soon}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(s.availability(s.quota).await["available_number"], 0);
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["cart_positions"].clone(), a["available_number"].clone()),
        (json!(0), json!(1))
    );
    s.ordered(1, json!({})).await;
}

#[tokio::test]
async fn cart_positions_are_checked_like_order_positions() {
    let s = shop(Some(5)).await;
    for (body, field) in [
        (
            json!({"cart_id": "c", "item": 999_999, "price": "1.00"}),
            "item",
        ),
        (
            json!({"cart_id": "c", "item": s.ticket, "price": "-1.00"}),
            "price",
        ),
        (
            json!({"cart_id": "c", "item": s.ticket, "price": "1.00", "subevent": 3}),
            "subevent",
        ),
        (
            json!({"cart_id": "c", "item": s.ticket, "price": "1.00", "expires": "2001-01-01T00:00:00Z"}),
            "expires",
        ),
        (json!({"item": s.ticket, "price": "1.00"}), "cart_id"),
    ] {
        let r = s.cart(body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field].is_array(), "{field}: {}", r.body);
    }
    assert_eq!(s.availability(s.quota).await["cart_positions"], 0);
}

#[tokio::test]
async fn cart_positions_need_can_change_orders_to_create_and_can_view_orders_to_read() {
    let s = shop(Some(5)).await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let body = json!({"cart_id": "c", "item": s.ticket, "price": "1.00"});
    let url = format!("{EVENT}/cartpositions/");
    assert_eq!(s.app.post(&url, &viewer, body.clone()).await.status, 403);
    let id = s.cart(body).await.body["id"].as_i64().expect("id");
    assert_eq!(s.app.get(&url, &viewer).await.status, 200);
    assert_eq!(
        s.app.delete(&format!("{url}{id}/"), &viewer).await.status,
        403
    );
    let nobody = s.app.token("acme", &["can_change_items"]).await;
    assert_eq!(s.app.get(&url, &nobody).await.status, 403);
}

#[tokio::test]
async fn consuming_carts_credits_their_quota_to_the_order_and_deletes_them_only_on_success() {
    let s = shop(Some(3)).await;
    for cart in ["mine", "mine", "theirs"] {
        let r = s
            .cart(json!({"cart_id": cart, "item": s.ticket, "price": "23.00"}))
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let two = json!([{"item": s.ticket}, {"item": s.ticket}]);
    let r = s.order(json!({"positions": two})).await;
    assert_eq!(r.status, 400, "no quota without the carts: {}", r.body);
    let three = json!([{"item": s.ticket}, {"item": s.ticket}, {"item": s.ticket}]);
    let r = s
        .order(json!({"positions": three, "consume_carts": ["mine"]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let kept = s
        .app
        .get(&format!("{EVENT}/cartpositions/?cart_id=mine"), &s.token)
        .await;
    assert_eq!(kept.body["count"], 2, "a failed order keeps the carts");
    let r = s
        .order(json!({"positions": two, "consume_carts": ["mine"]}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let gone = s
        .app
        .get(&format!("{EVENT}/cartpositions/?cart_id=mine"), &s.token)
        .await;
    assert_eq!(gone.body["count"], 0);
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["cart_positions"].clone(), a["pending_orders"].clone()),
        (json!(1), json!(2))
    );
}

#[tokio::test]
async fn a_seat_is_sold_once_and_never_while_another_cart_holds_it() {
    let s = shop(None).await;
    seat_the_shop(&s, 3).await;
    let seat = |guid: &str| json!({"item": s.ticket, "seat": guid});
    let needs_seat = s.order(json!({"positions": [{"item": s.ticket}]})).await;
    assert!(
        needs_seat.body["positions"][0]["seat"].is_array(),
        "{}",
        needs_seat.body
    );
    let unknown = s.order(json!({"positions": [seat("zz")]})).await;
    assert!(
        unknown.body["positions"][0]["seat"].is_array(),
        "{}",
        unknown.body
    );
    let twice = s
        .order(json!({"positions": [seat("s0"), seat("s0")]}))
        .await;
    assert_eq!(twice.status, 400);
    assert!(
        twice.body["positions"][1]["seat"].is_array(),
        "{}",
        twice.body
    );
    let o = s.ordered(0, json!({"positions": [seat("s0")]})).await;
    assert_eq!(o["positions"][0]["seat"]["seat_guid"], "s0");
    let sold = s.order(json!({"positions": [seat("s0")]})).await;
    assert!(
        sold.body["positions"][0]["seat"].is_array(),
        "{}",
        sold.body
    );
    let held = s
        .cart(json!({"cart_id": "c", "item": s.ticket, "price": "1.00", "seat": "s1"}))
        .await;
    assert_eq!(held.status, 201, "{}", held.body);
    let taken = s
        .cart(json!({"cart_id": "d", "item": s.ticket, "price": "1.00", "seat": "s1"}))
        .await;
    assert!(taken.body["seat"].is_array(), "{}", taken.body);
    let r = s.order(json!({"positions": [seat("s1")]})).await;
    assert!(r.body["positions"][0]["seat"].is_array(), "{}", r.body);
    let mine = s
        .order(json!({"positions": [seat("s1")], "consume_carts": ["c"]}))
        .await;
    assert_eq!(mine.status, 201, "{}", mine.body);
    let code = o["code"].as_str().expect("code");
    s.act(code, "mark_canceled", json!({})).await;
    s.ordered(0, json!({"positions": [seat("s0")]})).await;
    let block = s
        .app
        .get(&format!("{EVENT}/seats/?page_size=10"), &s.token)
        .await;
    let s2 = block.body["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["seat_guid"] == "s2"))
        .and_then(|x| x["id"].as_i64())
        .expect("s2");
    let r = s
        .app
        .patch(
            &format!("{EVENT}/seats/{s2}/"),
            &s.token,
            json!({"blocked": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let blocked = s.order(json!({"positions": [seat("s2")]})).await;
    assert!(
        blocked.body["positions"][0]["seat"].is_array(),
        "{}",
        blocked.body
    );
}
