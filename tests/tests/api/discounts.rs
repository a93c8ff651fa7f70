//! Automatic discounts as pretix 2026's `discounts/` resource keeps them, and as they price
//! orders placed through the API and the shop's cart and checkout.

use serde_json::{Value, json};

use crate::browser_support::{Browser, csrf_field, html};
use crate::catalogue_support::{EVENT, created, id};
use crate::selling_support::{Shop, bank_transfer_shop, shop};

const DISCOUNTS: &str = "/api/v1/organizers/acme/events/conf/discounts/";

/// "Buy two, get one free" on every product.
fn third_free() -> Value {
    json!({
        "internal_name": "Third free",
        "condition_min_count": 3,
        "benefit_discount_matching_percent": "100.00",
        "benefit_only_apply_to_cheapest_n_matches": 1,
    })
}

async fn discount(s: &Shop, body: Value) -> i64 {
    id(&created(&s.app, DISCOUNTS, &s.token, body).await)
}

fn prices(order: &Value) -> Vec<&str> {
    order["positions"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| p["price"].as_str().unwrap_or(""))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn discounts_are_created_listed_filtered_changed_and_deleted_as_pretix_keeps_them() {
    let s = shop(Some(10)).await;
    let r = s.app.post(DISCOUNTS, &s.token, third_free()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let expected = json!({
        "id": r.body["id"],
        "active": true,
        "internal_name": "Third free",
        "position": 0,
        "all_sales_channels": true,
        "limit_sales_channels": [],
        "available_from": null,
        "available_until": null,
        "subevent_mode": "mixed",
        "subevent_date_from": null,
        "subevent_date_until": null,
        "condition_all_products": true,
        "condition_limit_products": [],
        "condition_apply_to_addons": true,
        "condition_min_count": 3,
        "condition_min_value": "0.00",
        "benefit_discount_matching_percent": "100.00",
        "benefit_only_apply_to_cheapest_n_matches": 1,
        "benefit_same_products": true,
        "benefit_limit_products": [],
        "benefit_apply_to_addons": true,
        "benefit_ignore_voucher_discounted": false,
        "condition_ignore_voucher_discounted": false,
    });
    assert_eq!(r.body, expected);
    let first = id(&r.body);
    let second = discount(
        &s,
        json!({"internal_name": "Big spender", "position": 1, "active": false,
               "condition_min_value": "100.00", "benefit_discount_matching_percent": "5.5",
               "condition_all_products": false, "condition_limit_products": [s.ticket],
               "all_sales_channels": false, "limit_sales_channels": ["web"]}),
    )
    .await;
    let list = s.app.get(DISCOUNTS, &s.token).await;
    assert_eq!(list.body["count"], 2);
    assert_eq!(list.body["results"][0], expected);
    let inactive = s
        .app
        .get(&format!("{DISCOUNTS}?active=false"), &s.token)
        .await;
    assert_eq!(inactive.body["count"], 1);
    let d = &inactive.body["results"][0];
    assert_eq!(d["id"], second);
    assert_eq!(d["benefit_discount_matching_percent"], "5.50");
    assert_eq!(d["condition_limit_products"], json!([s.ticket]));
    assert_eq!(d["limit_sales_channels"], json!(["web"]));

    let one = format!("{DISCOUNTS}{first}/");
    let r = s
        .app
        .patch(&one, &s.token, json!({"active": false, "position": 5}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        [&r.body["active"], &r.body["position"]],
        [&json!(false), &json!(5)]
    );
    assert_eq!(r.body["condition_min_count"], 3, "a patch keeps the rest");
    let r = s
        .app
        .put(
            &one,
            &s.token,
            json!({"internal_name": "Renamed", "condition_min_count": 2}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["active"], true, "a put resets what it omits");
    assert_eq!(
        r.body["benefit_only_apply_to_cheapest_n_matches"],
        Value::Null
    );
    assert_eq!(s.app.delete(&one, &s.token).await.status, 204);
    assert_eq!(s.app.get(&one, &s.token).await.status, 403);
}

#[tokio::test]
async fn a_discount_breaking_pretixs_rules_is_refused_with_its_message_and_not_written() {
    let s = shop(Some(10)).await;
    let other_event_item = 999_999;
    let cases = [
        (
            json!({"internal_name": "x", "condition_min_count": 2, "condition_min_value": "10.00"}),
            "non_field_errors",
            "You can either set a minimum number of matching products or a minimum value, not both.",
        ),
        (
            json!({"internal_name": "x"}),
            "non_field_errors",
            "You need to either set a minimum number of matching products or a minimum value.",
        ),
        (
            json!({"internal_name": "x", "condition_min_value": "10.00", "benefit_only_apply_to_cheapest_n_matches": 1}),
            "non_field_errors",
            "You cannot apply the discount only to some of the matched products if you are matching on a minimum value.",
        ),
        (
            json!({"internal_name": "x", "condition_min_count": 2, "subevent_mode": "distinct", "benefit_same_products": false}),
            "benefit_same_products",
            "You cannot apply the discount to a different set of products if the discount is only valid for bookings of different dates.",
        ),
        (
            json!({"internal_name": "x", "condition_min_count": 2, "subevent_mode": "sometimes"}),
            "subevent_mode",
            "\"sometimes\" is not a valid choice.",
        ),
        (
            json!({"internal_name": "x", "condition_min_count": 2, "condition_all_products": false, "condition_limit_products": [other_event_item]}),
            "condition_limit_products",
            "Invalid pk \"999999\" - object does not exist.",
        ),
        (
            json!({"internal_name": "x", "condition_min_count": 2, "all_sales_channels": false, "limit_sales_channels": ["moon"]}),
            "limit_sales_channels",
            "Object with identifier=moon does not exist.",
        ),
        (
            json!({"internal_name": "x", "condition_min_count": 2, "benefit_discount_matching_percent": "100.01"}),
            "benefit_discount_matching_percent",
            "Ensure this value is between 0 and 100.",
        ),
        (
            json!({"condition_min_count": 2}),
            "internal_name",
            "This field is required.",
        ),
    ];
    for (body, field, message) in cases {
        let r = s.app.post(DISCOUNTS, &s.token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body[field], json!([message]), "{body}: {}", r.body);
    }
    let r = s
        .app
        .post(
            DISCOUNTS,
            &s.token,
            json!({"internal_name": "x", "condition_min_count": -1}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(s.app.get(DISCOUNTS, &s.token).await.body["count"], 0);
}

#[tokio::test]
async fn an_order_sent_without_prices_pays_the_discounted_prices_and_names_the_discount() {
    let s = shop(Some(10)).await;
    let d = discount(&s, third_free()).await;
    let o = s.ordered(4, json!({})).await;
    // Of equal prices the later lines count as the cheapest: the last three are one group,
    // the fourth of them free; the first is left over.
    assert_eq!(prices(&o), ["23.00", "23.00", "23.00", "0.00"]);
    let named: Vec<&Value> = o["positions"]
        .as_array()
        .map(|p| p.iter().map(|p| &p["discount"]).collect())
        .unwrap_or_default();
    assert_eq!(named, [&Value::Null, &json!(d), &json!(d), &json!(d)]);
    assert_eq!(o["total"], "69.00");
    let code = o["code"].as_str().unwrap_or_default();
    let stored = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(stored.body["positions"], o["positions"]);
    let r = s.app.delete(&format!("{DISCOUNTS}{d}/"), &s.token).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "You cannot delete this discount because it already has been used as part of an order."
    );
}

#[tokio::test]
async fn prices_sent_stand_and_a_discount_the_client_sends_is_believed() {
    let s = shop(Some(10)).await;
    let d = discount(&s, third_free()).await;
    let ticket = json!({"item": s.ticket});
    let sent = json!({"item": s.ticket, "price": "23.00"});
    let o = s
        .ordered(0, json!({"positions": [ticket, ticket, sent, sent]}))
        .await;
    // Only lines without a price are repriced: the free one would have been a sent one.
    assert_eq!(prices(&o), ["23.00", "23.00", "23.00", "23.00"]);
    let mine = json!({"item": s.ticket, "price": "20.00", "discount": d});
    let o = s
        .ordered(0, json!({"positions": [mine, ticket, ticket]}))
        .await;
    assert_eq!(prices(&o), ["20.00", "23.00", "23.00"]);
    assert_eq!(o["positions"][0]["discount"], d);
    assert_eq!(o["positions"][1]["discount"], Value::Null);
    for (position, message) in [
        (
            json!({"item": s.ticket, "discount": d}),
            "You can only specify a discount if you do the price computation, but price is not set.".to_owned(),
        ),
        (
            json!({"item": s.ticket, "price": "1.00", "discount": 424242}),
            "Invalid pk \"424242\" - object does not exist.".to_owned(),
        ),
    ] {
        let r = s
            .order(json!({"email": "ada@example.org", "positions": [position]}))
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.body["positions"][0]["discount"], json!([message]));
    }
}

#[tokio::test]
async fn a_discount_only_for_other_channels_or_later_leaves_prices_alone() {
    let s = shop(Some(10)).await;
    let later = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let mut for_resellers = third_free();
    for_resellers["all_sales_channels"] = json!(false);
    for_resellers["limit_sales_channels"] = json!(["resellers"]);
    let mut not_yet = third_free();
    not_yet["available_from"] = json!(later);
    let d = discount(&s, for_resellers).await;
    discount(&s, not_yet).await;
    let o = s.ordered(3, json!({})).await;
    assert_eq!(prices(&o), ["23.00", "23.00", "23.00"]);
    let r = s
        .app
        .patch(
            &format!("{DISCOUNTS}{d}/"),
            &s.token,
            json!({"limit_sales_channels": ["resellers", "web"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = s.ordered(3, json!({})).await;
    assert_eq!(
        prices(&o),
        ["23.00", "23.00", "0.00"],
        "the web channel has it now"
    );
}

#[tokio::test]
async fn the_shop_shows_the_discounted_cart_and_the_order_pays_what_it_showed() {
    let s = bank_transfer_shop(Some(10), json!({})).await;
    let d = discount(&s, third_free()).await;
    s.app.state.cache.refresh().await;
    let mut browser = Browser::new(&s.app);
    let page = browser.get("/acme/conf").await;
    let token = csrf_field(html(&page));
    let item = format!("item_{}", s.ticket);
    let r = browser
        .post(
            "/acme/conf/cart/add",
            &[("csrfmiddlewaretoken", token.as_str()), (&item, "3")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let page = browser.get("/acme/conf").await;
    let body = html(&page);
    assert!(body.contains("<del>EUR 23.00</del> EUR 0.00"), "{body}");
    assert!(body.contains("EUR 46.00"), "{body}");
    let mut submit = async |path: &str, fields: &[(&str, &str)]| {
        let page = browser.get(path).await;
        let token = csrf_field(html(&page));
        let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
        form.extend_from_slice(fields);
        browser.post(path, &form).await
    };
    let email = [
        ("email", "ada@example.org"),
        ("email_repeat", "ada@example.org"),
    ];
    submit("/acme/conf/checkout/questions", &email).await;
    submit(
        "/acme/conf/checkout/payment",
        &[("payment", "banktransfer")],
    )
    .await;
    let r = submit("/acme/conf/checkout/confirm", &[("confirm", "yes")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let orders = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    let o = &orders.body["results"][0];
    assert_eq!(o["total"], "46.00");
    assert_eq!(prices(o), ["23.00", "23.00", "0.00"]);
    assert_eq!(o["positions"][2]["discount"], d);
}

#[tokio::test]
async fn a_confirmation_at_prices_no_longer_valid_places_nothing_and_shows_the_new_ones() {
    let s = bank_transfer_shop(Some(10), json!({})).await;
    let d = discount(&s, third_free()).await;
    s.app.state.cache.refresh().await;
    let mut browser = Browser::new(&s.app);
    let item = format!("item_{}", s.ticket);
    let page = browser.get("/acme/conf").await;
    let token = csrf_field(html(&page));
    let add = [("csrfmiddlewaretoken", token.as_str()), (&item, "3")];
    assert_eq!(browser.post("/acme/conf/cart/add", &add).await.status, 303);
    for (path, fields) in [
        (
            "/acme/conf/checkout/questions",
            vec![
                ("email", "ada@example.org"),
                ("email_repeat", "ada@example.org"),
            ],
        ),
        (
            "/acme/conf/checkout/payment",
            vec![("payment", "banktransfer")],
        ),
    ] {
        let token = csrf_field(html(&browser.get(path).await));
        let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
        form.extend(fields);
        assert_eq!(browser.post(path, &form).await.status, 303);
    }
    let confirm = "/acme/conf/checkout/confirm";
    let page = browser.get(confirm).await;
    let body = html(&page).to_owned();
    assert!(body.contains("name=\"total\" value=\"4600\""), "{body}");
    let token = csrf_field(&body);
    let r = s
        .app
        .patch(
            &format!("{DISCOUNTS}{d}/"),
            &s.token,
            json!({"active": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let form = [
        ("csrfmiddlewaretoken", token.as_str()),
        ("confirm", "yes"),
        ("total", "4600"),
    ];
    let r = browser.post(confirm, &form).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let body = html(&r);
    assert!(body.contains("has changed in the meantime"), "{body}");
    assert!(body.contains("EUR 69.00"), "{body}");
    let orders = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    assert_eq!(orders.body["count"], 0);
}

#[tokio::test]
async fn an_event_takes_at_most_two_hundred_discounts() {
    use sea_orm::EntityTrait;
    use tessera::db::entities::event;
    use tessera::domain::discounts::manage::{self, DiscountFields, MAX_PER_EVENT};
    let s = shop(Some(10)).await;
    let db = &s.app.state.db;
    let ev = event::Entity::find_by_id(s.event)
        .one(db)
        .await
        .expect("read")
        .expect("event");
    for n in 0..MAX_PER_EVENT {
        let f = DiscountFields {
            internal_name: format!("d{n}"),
            condition_min_count: 2,
            ..DiscountFields::default()
        };
        manage::create(db, &ev, f).await.expect("created");
    }
    let r = s.app.post(DISCOUNTS, &s.token, third_free()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["non_field_errors"],
        json!(["An event can have at most 200 discounts."])
    );
    let count = s.app.get(DISCOUNTS, &s.token).await.body["count"].clone();
    assert_eq!(count, 200);
}
