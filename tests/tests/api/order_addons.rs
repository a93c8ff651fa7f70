//! Add-ons in orders placed through the API, as pretix takes them: numbered positions, each
//! add-on right after its base, and add-ons the base includes in its price at no cost.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, id, item, shop};

/// A shop whose ticket has two add-on categories: workshops included in its price, dinners
/// not. Gives the shop and the IDs of a workshop (10.00) and a dinner (15.00).
async fn shop_with_addons() -> (Shop, i64, i64) {
    let s = shop(Some(10)).await;
    let category = |name: &str| {
        let (app, token) = (&s.app, &s.token);
        let name = name.to_owned();
        async move {
            id(&created(
                app,
                &format!("{EVENT}/categories/"),
                token,
                json!({"name": {"en": name}, "is_addon": true}),
            )
            .await)
        }
    };
    let (workshops, dinners) = (category("Workshops").await, category("Dinners").await);
    let extra = |name: &str, price: &str, category: i64| json!({"name": {"en": name}, "default_price": price, "category": category});
    let workshop = id(&item(&s.app, &s.token, extra("Workshop", "10.00", workshops)).await);
    let dinner = id(&item(&s.app, &s.token, extra("Dinner", "15.00", dinners)).await);
    let addons = format!("{EVENT}/items/{}/addons/", s.ticket);
    for (category, included) in [(workshops, true), (dinners, false)] {
        let rule = json!({"addon_category": category, "max_count": 2, "price_included": included});
        created(&s.app, &addons, &s.token, rule).await;
    }
    let quota = format!("{EVENT}/quotas/{}/", s.quota);
    let r = s
        .app
        .patch(
            &quota,
            &s.token,
            json!({"items": [s.ticket, workshop, dinner]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    (s, workshop, dinner)
}

fn positions(list: Value) -> Value {
    json!({"email": "ada@example.org", "positions": list})
}

#[tokio::test]
async fn add_ons_are_linked_to_their_base_and_one_the_base_includes_costs_nothing() {
    let (s, workshop, dinner) = shop_with_addons().await;
    let r = s
        .order(positions(json!([
            {"positionid": 1, "item": s.ticket},
            {"positionid": 2, "item": workshop, "addon_to": 1},
            {"positionid": 3, "item": dinner, "addon_to": 1},
            {"positionid": 4, "item": s.ticket},
            {"positionid": 5, "item": workshop, "addon_to": 4, "price": "4.00"},
        ])))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let p = &r.body["positions"];
    let base = p[0]["id"].as_i64().expect("id");
    assert_eq!(
        [&p[1]["addon_to"], &p[2]["addon_to"], &p[4]["addon_to"]],
        [&json!(base), &json!(base), &p[3]["id"]]
    );
    assert_eq!([&p[0]["addon_to"], &p[3]["addon_to"]], [&Value::Null; 2]);
    let prices: Vec<&Value> = (0..5).map(|i| &p[i]["price"]).collect();
    assert_eq!(prices, ["23.00", "0.00", "15.00", "23.00", "4.00"]);
    assert_eq!(r.body["total"], "65.00");
    let code = r.body["code"].as_str().expect("code");
    let stored = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(stored.body["positions"], r.body["positions"]);
    assert_eq!(s.availability(s.quota).await["available_number"], 5);
}

#[tokio::test]
async fn add_ons_without_position_ids_apart_from_their_base_or_with_a_voucher_are_refused() {
    let (s, workshop, _) = shop_with_addons().await;
    let voucher = json!({"code": "ADDON", "max_usages": 5});
    created(&s.app, &format!("{EVENT}/vouchers/"), &s.token, voucher).await;
    let unnumbered =
        "If you set addon_to on any position, you need to specify position IDs manually.";
    let apart = "If you set addon_to, you need to make sure that the referenced position ID exists and is transmitted directly before its add-ons.";
    let cases = [
        (
            json!([{"item": s.ticket}, {"item": workshop, "addon_to": 1}]),
            json!([{"positionid": [unnumbered]}, {"positionid": [unnumbered]}]),
        ),
        (
            json!([{"positionid": 1, "item": s.ticket}, {"item": workshop}]),
            json!([{}, {"positionid": ["If you set position IDs manually, you need to do so for all positions."]}]),
        ),
        (
            json!([{"positionid": 1, "item": s.ticket}, {"positionid": 3, "item": workshop, "addon_to": 1}]),
            json!([{}, {"positionid": ["Position IDs need to be consecutive."]}]),
        ),
        (
            json!([
                {"positionid": 1, "item": s.ticket},
                {"positionid": 2, "item": s.ticket},
                {"positionid": 3, "item": workshop, "addon_to": 1},
            ]),
            json!([{}, {}, {"addon_to": [apart]}]),
        ),
        (
            json!([{"positionid": 1, "item": workshop, "addon_to": 1}]),
            json!([{"addon_to": [apart]}]),
        ),
        (
            json!([
                {"positionid": 1, "item": s.ticket},
                {"positionid": 2, "item": workshop, "addon_to": 1, "voucher": "ADDON"},
            ]),
            json!([{}, {"voucher": ["Vouchers are currently not supported for add-on products."]}]),
        ),
    ];
    for (list, errors) in cases {
        let r = s.order(positions(list.clone())).await;
        assert_eq!(r.status, 400, "{list}: {}", r.body);
        assert_eq!(r.body["positions"], errors, "{list}");
    }
    let orders = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    assert_eq!(orders.body["count"], 0);
}

#[tokio::test]
async fn a_voucher_that_includes_every_add_on_makes_its_tickets_add_ons_free() {
    let (s, workshop, dinner) = shop_with_addons().await;
    let v = created(
        &s.app,
        &format!("{EVENT}/vouchers/"),
        &s.token,
        json!({"code": "ALLIN", "max_usages": 5, "all_addons_included": true}),
    )
    .await;
    assert_eq!(v["all_addons_included"], true);
    assert_eq!(v["all_bundles_included"], false);
    let r = s
        .order(positions(json!([
            {"positionid": 1, "item": s.ticket, "voucher": "ALLIN"},
            {"positionid": 2, "item": dinner, "addon_to": 1},
            {"positionid": 3, "item": s.ticket},
            {"positionid": 4, "item": dinner, "addon_to": 3},
            {"positionid": 5, "item": workshop, "addon_to": 3},
        ])))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let p = &r.body["positions"];
    let prices: Vec<&Value> = (0..5).map(|i| &p[i]["price"]).collect();
    assert_eq!(prices, ["23.00", "0.00", "23.00", "15.00", "0.00"]);
}
