//! The shop's cart: products put in hold their quota until the cart expires, is emptied or
//! becomes an order; the order limits and a voucher's uses hold across carts; every form
//! needs its CSRF token.

use serde_json::json;
use tessera_tests::Reply;

use crate::browser_support::{Browser, csrf_field, html};
use crate::catalogue_support::{EVENT, created, id, item};
use crate::selling_support::{Shop, availability};
use crate::shop_pages::live_shop;

/// Opens the event page and posts its form with these fields (the CSRF token added).
async fn add(browser: &mut Browser<'_>, fields: &[(&str, &str)]) -> Reply {
    let page = browser.get("/acme/conf").await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = csrf_field(html(&page));
    let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
    form.extend_from_slice(fields);
    browser.post("/acme/conf/cart/add", &form).await
}

/// Posts one of the cart's buttons (`remove`, `clear`, `extend`).
async fn press(browser: &mut Browser<'_>, action: &str, fields: &[(&str, &str)]) -> Reply {
    let page = browser.get("/acme/conf").await;
    let token = csrf_field(html(&page));
    let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
    form.extend_from_slice(fields);
    browser
        .post(&format!("/acme/conf/cart/{action}"), &form)
        .await
}

async fn left(shop: &Shop) -> i64 {
    availability(&shop.app, &shop.token, shop.quota).await["available_number"]
        .as_i64()
        .expect("a number")
}

fn field(shop: &Shop) -> String {
    format!("item_{}", shop.ticket)
}

#[tokio::test]
async fn products_put_in_the_cart_hold_their_quota_and_show_in_the_cart() {
    let shop = live_shop(Some(10)).await;
    let mut browser = Browser::new(&shop.app);
    let r = add(&mut browser, &[(&field(&shop), "2")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location"), Some("/acme/conf"));
    assert_eq!(left(&shop).await, 8);
    let page = browser.get("/acme/conf").await;
    let body = html(&page);
    assert!(body.contains("Your cart"), "{body}");
    assert_eq!(body.matches(">Remove<").count(), 2, "{body}");
    assert!(body.contains("Total: EUR 46.00"), "{body}");
    let others = Browser::new(&shop.app).get("/acme/conf").await;
    assert!(
        !html(&others).contains("Your cart"),
        "a cart is its browser's"
    );
    let api = shop
        .app
        .get(&format!("{EVENT}/cartpositions/"), &shop.token)
        .await;
    assert_eq!(api.body["count"], 2, "{}", api.body);
    assert_eq!(api.body["results"][0]["price"], "23.00");
}

#[tokio::test]
async fn a_cart_form_without_its_csrf_token_is_refused_and_holds_nothing() {
    let shop = live_shop(Some(10)).await;
    let mut browser = Browser::new(&shop.app);
    browser.get("/acme/conf").await;
    let r = browser
        .post("/acme/conf/cart/add", &[(&field(&shop), "2")])
        .await;
    assert_eq!(r.status, 403);
    let r = browser
        .post(
            "/acme/conf/cart/add",
            &[(&field(&shop), "2"), ("csrfmiddlewaretoken", "forged")],
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(left(&shop).await, 10);
}

#[tokio::test]
async fn removing_emptying_or_letting_a_cart_expire_gives_its_quota_back() {
    let shop = live_shop(Some(10)).await;
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &[(&field(&shop), "3")]).await;
    assert_eq!(left(&shop).await, 7);
    let page = browser.get("/acme/conf").await;
    let body = html(&page).to_owned();
    let marker = r#"name="id" value=""#;
    let start = body.find(marker).expect("a position") + marker.len();
    let position = body[start..].split('"').next().expect("id").to_owned();
    let r = press(&mut browser, "remove", &[("id", &position)]).await;
    assert_eq!(r.status, 303);
    assert_eq!(left(&shop).await, 8);
    press(&mut browser, "clear", &[]).await;
    assert_eq!(left(&shop).await, 10);
    assert!(!html(&browser.get("/acme/conf").await).contains("Your cart"));

    add(&mut browser, &[(&field(&shop), "4")]).await;
    assert_eq!(left(&shop).await, 6);
    shop.app.expire_carts().await;
    assert_eq!(left(&shop).await, 10);
    assert!(!html(&browser.get("/acme/conf").await).contains("Your cart"));
}

#[tokio::test]
async fn the_last_units_go_to_one_cart_and_the_next_buyer_hears_they_are_gone() {
    let shop = live_shop(Some(3)).await;
    let mut first = Browser::new(&shop.app);
    assert_eq!(add(&mut first, &[(&field(&shop), "2")]).await.status, 303);
    let mut second = Browser::new(&shop.app);
    let r = add(&mut second, &[(&field(&shop), "2")]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let body = html(&r);
    assert!(
        body.contains("Some of the products you selected are no longer available"),
        "{body}"
    );
    assert!(body.contains(r#"role="alert""#));
    assert_eq!(add(&mut second, &[(&field(&shop), "1")]).await.status, 303);
    assert_eq!(left(&shop).await, 0);
}

#[tokio::test]
async fn many_buyers_at_once_never_hold_more_than_the_quota() {
    let shop = live_shop(Some(5)).await;
    let mut browsers: Vec<Browser> = (0..12).map(|_| Browser::new(&shop.app)).collect();
    let name = field(&shop);
    let fields = [(name.as_str(), "1")];
    let replies = futures::future::join_all(browsers.iter_mut().map(|b| add(b, &fields))).await;
    let placed = replies.iter().filter(|r| r.status == 303).count();
    assert_eq!(
        placed,
        5,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.status == 303 || r.status == 400));
    assert_eq!(left(&shop).await, 0);
}

#[tokio::test]
async fn the_order_limits_hold_for_the_whole_cart() {
    let shop = live_shop(None).await;
    let r = shop
        .app
        .patch(
            &format!("{EVENT}/items/{}/", shop.ticket),
            &shop.token,
            json!({"max_per_order": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut browser = Browser::new(&shop.app);
    assert_eq!(add(&mut browser, &[(&field(&shop), "2")]).await.status, 303);
    let r = add(&mut browser, &[(&field(&shop), "2")]).await;
    assert_eq!(r.status, 400);
    assert!(html(&r).contains("You cannot select more than 3 items of this product per order."));
    for (value, message) in [
        ("two", "Please enter numbers only."),
        ("-1", "Please enter positive numbers only."),
        ("0", "You did not select any products."),
    ] {
        let r = add(&mut browser, &[(&field(&shop), value)]).await;
        assert_eq!(r.status, 400, "{value}");
        assert!(html(&r).contains(message), "{value}: {}", r.body);
    }
    let r = add(&mut browser, &[("item_999999", "1")]).await;
    assert!(html(&r).contains("The selected product is not available."));
}

#[tokio::test]
async fn a_voucher_is_used_no_more_often_than_it_may_be_across_carts() {
    let shop = live_shop(None).await;
    created(
        &shop.app,
        &format!("{EVENT}/vouchers/"),
        &shop.token,
        json!({"code": "ONCEONLY", "max_usages": 1, "price_mode": "subtract", "value": "3.00"}),
    )
    .await;
    let mut first = Browser::new(&shop.app);
    let r = add(
        &mut first,
        &[(&field(&shop), "1"), ("_voucher_code", "onceonly")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert!(html(&first.get("/acme/conf").await).contains("Total: EUR 20.00"));
    let mut second = Browser::new(&shop.app);
    let r = add(
        &mut second,
        &[(&field(&shop), "1"), ("_voucher_code", "ONCEONLY")],
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(html(&r).contains("already been used the maximum number of times"));
    shop.app.expire_carts().await;
    let r = add(
        &mut second,
        &[(&field(&shop), "1"), ("_voucher_code", "ONCEONLY")],
    )
    .await;
    assert_eq!(
        r.status, 303,
        "an expired cart frees the voucher: {}",
        r.body
    );
}

#[tokio::test]
async fn a_product_that_needs_a_voucher_goes_in_the_cart_only_with_one() {
    let shop = live_shop(None).await;
    let member = item(
        &shop.app,
        &shop.token,
        json!({"name": {"en": "Member"}, "default_price": "40.00", "require_voucher": true}),
    )
    .await;
    created(
        &shop.app,
        &format!("{EVENT}/quotas/"),
        &shop.token,
        json!({"name": "Members", "size": null, "items": [id(&member)]}),
    )
    .await;
    created(
        &shop.app,
        &format!("{EVENT}/vouchers/"),
        &shop.token,
        json!({"code": "MEMBER", "item": id(&member)}),
    )
    .await;
    let field = format!("item_{}", id(&member));
    let mut browser = Browser::new(&shop.app);
    let r = add(&mut browser, &[(&field, "1")]).await;
    assert!(html(&r).contains("You need a valid voucher code to order this product."));
    let r = add(&mut browser, &[(&field, "1"), ("_voucher_code", "MEMBER")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
}

#[tokio::test]
async fn redeeming_a_voucher_leads_to_the_event_page_with_it() {
    let shop = live_shop(None).await;
    let r = Browser::new(&shop.app)
        .get("/acme/conf/redeem?voucher=AB%20C")
        .await;
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/acme/conf?voucher=AB+C"));
}
