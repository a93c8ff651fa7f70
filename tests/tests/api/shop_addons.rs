//! Add-ons in the shop: the checkout's add-on step offers each ticket's add-on categories,
//! holds what the buyer chooses within the rules, and the order links the add-ons to their
//! tickets.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::browser_support::{Browser, csrf_field, html};
use crate::catalogue_support::{EVENT, created, id, item};
use crate::selling_support::{Shop, availability, bank_transfer_shop};

/// A live shop selling tickets (23.00) by bank transfer. Each ticket takes exactly one
/// workshop, included in its price (A, or B of which one is left), and at most two
/// different dinners at 15.00.
struct AddOnShop {
    shop: Shop,
    workshop_a: i64,
    workshop_b: i64,
    dinner: i64,
    vegan: i64,
    rooms: i64,
}

async fn addon_shop() -> AddOnShop {
    let shop = bank_transfer_shop(Some(10), json!({})).await;
    let (app, token) = (&shop.app, &shop.token);
    let category = async |name: &str| {
        let body = json!({"name": {"en": name}, "is_addon": true});
        id(&created(app, &format!("{EVENT}/categories/"), token, body).await)
    };
    let (workshops, dinners) = (category("Workshops").await, category("Dinners").await);
    let extra = async |name: &str, price: &str, category: i64| {
        let body = json!({"name": {"en": name}, "default_price": price, "category": category});
        id(&item(app, token, body).await)
    };
    let workshop_a = extra("Workshop A", "10.00", workshops).await;
    let workshop_b = extra("Workshop B", "10.00", workshops).await;
    let dinner = extra("Dinner", "15.00", dinners).await;
    let vegan = extra("Vegan dinner", "15.00", dinners).await;
    let quota = |name: &str, size: i64, items: Vec<i64>| json!({"name": name, "size": size, "items": items});
    let quotas = format!("{EVENT}/quotas/");
    created(
        app,
        &quotas,
        token,
        quota("Workshop A", 10, vec![workshop_a]),
    )
    .await;
    let rooms = id(&created(app, &quotas, token, quota("Room B", 1, vec![workshop_b])).await);
    created(
        app,
        &quotas,
        token,
        quota("Kitchen", 10, vec![dinner, vegan]),
    )
    .await;
    let addons = format!("{EVENT}/items/{}/addons/", shop.ticket);
    for rule in [
        json!({"addon_category": workshops, "min_count": 1, "max_count": 1, "price_included": true}),
        json!({"addon_category": dinners, "min_count": 0, "max_count": 2}),
    ] {
        created(app, &addons, token, rule).await;
    }
    shop.app.state.cache.refresh().await;
    AddOnShop {
        shop,
        workshop_a,
        workshop_b,
        dinner,
        vegan,
        rooms,
    }
}

/// Posts a form of the page at `path` to `action` (the page's CSRF token added).
async fn post_from(
    browser: &mut Browser<'_>,
    path: &str,
    action: &str,
    fields: &[(&str, &str)],
) -> Reply {
    let page = browser.get(path).await;
    let token = csrf_field(html(&page));
    let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
    form.extend_from_slice(fields);
    browser.post(action, &form).await
}

/// Posts a page's form to the page itself.
async fn submit(browser: &mut Browser<'_>, path: &str, fields: &[(&str, &str)]) -> Reply {
    post_from(browser, path, path, fields).await
}

/// Puts `count` tickets in the browser's cart.
async fn add_tickets(browser: &mut Browser<'_>, s: &AddOnShop, count: &str) {
    let item = format!("item_{}", s.shop.ticket);
    let r = post_from(
        browser,
        "/acme/conf",
        "/acme/conf/cart/add",
        &[(&item, count)],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
}

fn location(r: &Reply) -> &str {
    r.header("location").unwrap_or_default()
}

/// The cart positions the add-on step offers add-ons to, in order.
fn bases(page: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for s in page.split("name=\"cp_").skip(1) {
        let id = s.split('_').next().unwrap_or_default().to_owned();
        if !found.contains(&id) {
            found.push(id);
        }
    }
    found
}

fn count(base: &str, item: i64) -> String {
    format!("cp_{base}_item_{item}")
}

#[tokio::test]
async fn a_buyer_chooses_add_ons_per_ticket_and_the_order_links_them_to_their_tickets() {
    let s = addon_shop().await;
    let mut browser = Browser::new(&s.shop.app);
    add_tickets(&mut browser, &s, "2").await;
    let r = browser.get("/acme/conf/checkout/start").await;
    assert_eq!(location(&r), "/acme/conf/checkout/addons");
    let r = browser.get("/acme/conf/checkout/questions").await;
    assert_eq!(
        location(&r),
        "/acme/conf/checkout/addons",
        "a workshop must be chosen first"
    );
    let page = browser.get("/acme/conf/checkout/addons").await;
    assert_eq!(page.status, 200);
    let body = html(&page);
    for text in [
        "Workshops",
        "Workshop A",
        "included",
        "Dinners",
        "EUR 15.00",
        "Choose 1.",
    ] {
        assert!(body.contains(text), "{text}: {body}");
    }
    let ids = bases(body);
    assert_eq!(ids.len(), 2, "{body}");
    let (a0, d0, v0, b1) = (
        count(&ids[0], s.workshop_a),
        count(&ids[0], s.dinner),
        count(&ids[0], s.vegan),
        count(&ids[1], s.workshop_b),
    );
    let fields = [(a0.as_str(), "1"), (&d0, "1"), (&v0, "1"), (&b1, "1")];
    let r = submit(&mut browser, "/acme/conf/checkout/addons", &fields).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(location(&r), "/acme/conf/checkout/questions");
    assert_eq!(
        availability(&s.shop.app, &s.shop.token, s.rooms).await["available_number"],
        0,
        "the cart holds the last workshop B"
    );
    let page = browser.get("/acme/conf").await;
    assert!(html(&page).contains("+ Workshop B"), "{}", page.body);
    assert!(html(&page).contains("EUR 76.00"), "{}", page.body);

    let email = [
        ("email", "ada@example.org"),
        ("email_repeat", "ada@example.org"),
    ];
    let r = submit(&mut browser, "/acme/conf/checkout/questions", &email).await;
    assert_eq!(location(&r), "/acme/conf/checkout/payment", "{}", r.body);
    let pay = [("payment", "banktransfer")];
    let r = submit(&mut browser, "/acme/conf/checkout/payment", &pay).await;
    assert_eq!(location(&r), "/acme/conf/checkout/confirm");
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/confirm",
        &[("confirm", "yes")],
    )
    .await;
    assert!(location(&r).starts_with("/acme/conf/order/"), "{}", r.body);

    let orders = s
        .shop
        .app
        .get(&format!("{EVENT}/orders/"), &s.shop.token)
        .await;
    let o = &orders.body["results"][0];
    assert_eq!(o["total"], "76.00");
    let p = o["positions"].as_array().expect("positions");
    let shown: Vec<(i64, &str, bool)> = p
        .iter()
        .map(|p| {
            let item = p["item"].as_i64().unwrap_or_default();
            (
                item,
                p["price"].as_str().unwrap_or_default(),
                p["addon_to"].is_i64(),
            )
        })
        .collect();
    let t = s.shop.ticket;
    assert_eq!(
        shown,
        [
            (t, "23.00", false),
            (s.workshop_a, "0.00", true),
            (s.dinner, "15.00", true),
            (s.vegan, "15.00", true),
            (t, "23.00", false),
            (s.workshop_b, "0.00", true),
        ]
    );
    assert_eq!([&p[1]["addon_to"], &p[3]["addon_to"]], [&p[0]["id"]; 2]);
    assert_eq!(p[5]["addon_to"], p[4]["id"]);
    let positionids: Vec<&Value> = p.iter().map(|p| &p["positionid"]).collect();
    assert_eq!(positionids, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        availability(&s.shop.app, &s.shop.token, s.rooms).await["available_number"],
        0,
        "the order holds it now"
    );
}

#[tokio::test]
async fn add_ons_outside_the_rules_or_sold_out_are_refused_and_change_nothing() {
    let s = addon_shop().await;
    let mut browser = Browser::new(&s.shop.app);
    add_tickets(&mut browser, &s, "1").await;
    let page = browser.get("/acme/conf/checkout/addons").await;
    let base = bases(html(&page)).remove(0);
    let (a, b, d) = (
        count(&base, s.workshop_a),
        count(&base, s.workshop_b),
        count(&base, s.dinner),
    );
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[],
            "You need to select at least 1 add-on from the category Workshops for the product Ticket.",
        ),
        (
            &[(&a, "1"), (&b, "1")],
            "You can select at most 1 add-on from the category Workshops for the product Ticket.",
        ),
        (
            &[(&a, "1"), (&d, "2")],
            "You can select every add-on from the category Dinners for the product Ticket at most once.",
        ),
        (
            &[(&a, "1"), (&d, "3")],
            "You can select at most 2 add-ons from the category Dinners for the product Ticket.",
        ),
    ];
    for (fields, message) in cases {
        let r = submit(&mut browser, "/acme/conf/checkout/addons", fields).await;
        assert_eq!(r.status, 400, "{fields:?}: {}", r.body);
        assert!(html(&r).contains(message), "{message}: {}", r.body);
    }

    // Another buyer takes the last workshop B; this one's choice of it is refused whole.
    let mut other = Browser::new(&s.shop.app);
    add_tickets(&mut other, &s, "1").await;
    let page = other.get("/acme/conf/checkout/addons").await;
    let theirs = count(&bases(html(&page))[0], s.workshop_b);
    let r = submit(&mut other, "/acme/conf/checkout/addons", &[(&theirs, "1")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/addons",
        &[(&b, "1"), (&d, "1")],
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(html(&r).contains("no longer available"), "{}", r.body);
    let page = browser.get("/acme/conf").await;
    assert!(
        !html(&page).contains("+ Dinner"),
        "nothing was added: {}",
        page.body
    );

    // Removing the other buyer's ticket takes its workshop with it.
    let page = other.get("/acme/conf").await;
    let ticket = html(&page)
        .split("name=\"id\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a removable ticket")
        .to_owned();
    let remove = [("id", ticket.as_str())];
    let r = post_from(&mut other, "/acme/conf", "/acme/conf/cart/remove", &remove).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(
        availability(&s.shop.app, &s.shop.token, s.rooms).await["available_number"],
        1
    );
    let r = submit(&mut browser, "/acme/conf/checkout/addons", &[(&b, "1")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
}

#[tokio::test]
async fn a_product_brings_its_bundle_into_the_cart_and_the_order_at_the_designated_price() {
    let s = addon_shop().await;
    let (app, token) = (&s.shop.app, &s.shop.token);
    let pass = id(&item(
        app,
        token,
        json!({"name": {"en": "Pass"}, "default_price": "50.00", "admission": true,
               "bundles": [{"bundled_item": s.dinner, "count": 1, "designated_price": "15.00"}]}),
    )
    .await);
    let quota = json!({"name": "Passes", "size": 5, "items": [pass]});
    created(app, &format!("{EVENT}/quotas/"), token, quota).await;
    let kitchen = |body: &Value| {
        body["results"]
            .as_array()
            .and_then(|q| q.iter().find(|q| q["name"] == "Kitchen"))
            .and_then(|q| q["id"].as_i64())
    };
    let quotas = app.get(&format!("{EVENT}/quotas/"), token).await;
    let kitchen = kitchen(&quotas.body).expect("kitchen");
    app.state.cache.refresh().await;

    let mut browser = Browser::new(app);
    let field = format!("item_{pass}");
    let r = post_from(
        &mut browser,
        "/acme/conf",
        "/acme/conf/cart/add",
        &[(&field, "2")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let page = browser.get("/acme/conf").await;
    let body = html(&page);
    assert_eq!(body.matches("+ Dinner").count(), 2, "{body}");
    assert!(
        body.contains("EUR 35.00") && body.contains("Total: EUR 100.00"),
        "{body}"
    );
    assert_eq!(
        availability(app, token, kitchen).await["available_number"],
        8
    );
    let r = browser.get("/acme/conf/checkout/start").await;
    assert_eq!(
        location(&r),
        "/acme/conf/checkout/questions",
        "no add-ons to choose"
    );

    let email = [
        ("email", "ada@example.org"),
        ("email_repeat", "ada@example.org"),
    ];
    let names: Vec<String> = html(&browser.get("/acme/conf/checkout/questions").await)
        .split("-name\" name=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(str::to_owned))
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(names.len(), 2, "a name per pass, none per dinner");
    let mut fields = email.to_vec();
    fields.extend(names.iter().map(|n| (n.as_str(), "Ada Lovelace")));
    let r = submit(&mut browser, "/acme/conf/checkout/questions", &fields).await;
    assert_eq!(location(&r), "/acme/conf/checkout/payment", "{}", r.body);
    let pay = [("payment", "banktransfer")];
    submit(&mut browser, "/acme/conf/checkout/payment", &pay).await;
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/confirm",
        &[("confirm", "yes")],
    )
    .await;
    assert!(location(&r).starts_with("/acme/conf/order/"), "{}", r.body);
    let orders = app.get(&format!("{EVENT}/orders/"), token).await;
    let o = &orders.body["results"][0];
    assert_eq!(o["total"], "100.00");
    let p = &o["positions"];
    let prices: Vec<&Value> = (0..4).map(|i| &p[i]["price"]).collect();
    assert_eq!(prices, ["35.00", "15.00", "35.00", "15.00"]);
    assert_eq!(
        [&p[1]["addon_to"], &p[3]["addon_to"]],
        [&p[0]["id"], &p[2]["id"]]
    );
    assert_eq!(
        availability(app, token, kitchen).await["available_number"],
        8
    );

    // A bundled dinner goes only with its pass: removing it removes the pass.
    let r = post_from(
        &mut browser,
        "/acme/conf",
        "/acme/conf/cart/add",
        &[(&field, "1")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let cart = app.get(&format!("{EVENT}/cartpositions/"), token).await;
    let dinner = cart.body["results"]
        .as_array()
        .and_then(|c| c.iter().find(|p| p["item"] == s.dinner))
        .map(|p| p["id"].to_string())
        .expect("the bundled dinner");
    let remove = [("id", dinner.as_str())];
    let r = post_from(
        &mut browser,
        "/acme/conf",
        "/acme/conf/cart/remove",
        &remove,
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let cart = app.get(&format!("{EVENT}/cartpositions/"), token).await;
    assert_eq!(cart.body["count"], 0, "{}", cart.body);
    assert_eq!(
        availability(app, token, kitchen).await["available_number"],
        8
    );

    // A bundle of a product no quota counts makes its product unsellable.
    let orphan = id(&item(
        app,
        token,
        json!({"name": {"en": "Orphan"}, "default_price": "1.00"}),
    )
    .await);
    let r = app
        .post(
            &format!("{EVENT}/items/{pass}/bundles/"),
            token,
            json!({"bundled_item": orphan}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    app.state.cache.refresh().await;
    let r = post_from(
        &mut browser,
        "/acme/conf",
        "/acme/conf/cart/add",
        &[(&field, "1")],
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(
        html(&r).contains("You selected a product which is not available for sale."),
        "{}",
        r.body
    );
    assert_eq!(
        availability(app, token, kitchen).await["available_number"],
        8
    );
}

#[tokio::test]
async fn an_add_on_keeps_its_own_order_limit_over_all_tickets_and_bundle_only_items_are_not_offered()
 {
    let s = addon_shop().await;
    let (app, token) = (&s.shop.app, &s.shop.token);
    for (item, change) in [
        (s.dinner, json!({"max_per_order": 1})),
        (s.workshop_b, json!({"require_bundling": true})),
    ] {
        let r = app
            .patch(&format!("{EVENT}/items/{item}/"), token, change)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    app.state.cache.refresh().await;
    let mut browser = Browser::new(app);
    add_tickets(&mut browser, &s, "2").await;
    let page = browser.get("/acme/conf/checkout/addons").await;
    let body = html(&page);
    assert!(
        body.contains("Workshop A") && !body.contains("Workshop B"),
        "{body}"
    );
    let ids = bases(body);
    let (a0, a1, d0, d1) = (
        count(&ids[0], s.workshop_a),
        count(&ids[1], s.workshop_a),
        count(&ids[0], s.dinner),
        count(&ids[1], s.dinner),
    );
    let both = [(a0.as_str(), "1"), (&a1, "1"), (&d0, "1"), (&d1, "1")];
    let r = submit(&mut browser, "/acme/conf/checkout/addons", &both).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        html(&r).contains("You cannot select more than 1 items of this product per order."),
        "{}",
        r.body
    );
    let one = [(a0.as_str(), "1"), (&a1, "1"), (&d0, "1")];
    let r = submit(&mut browser, "/acme/conf/checkout/addons", &one).await;
    assert_eq!(r.status, 303, "{}", r.body);
}

#[tokio::test]
async fn a_voucher_can_include_every_add_on_and_what_comes_bundled_at_no_cost() {
    let s = addon_shop().await;
    let (app, token) = (&s.shop.app, &s.shop.token);
    let pass = id(&item(
        app,
        token,
        json!({"name": {"en": "Pass"}, "default_price": "50.00", "admission": true,
               "bundles": [{"bundled_item": s.dinner, "count": 1, "designated_price": "15.00"}]}),
    )
    .await);
    let quota = json!({"name": "Passes", "size": 5, "items": [pass]});
    created(app, &format!("{EVENT}/quotas/"), token, quota).await;
    let vouchers = format!("{EVENT}/vouchers/");
    for (code, field) in [
        ("ADDONS", "all_addons_included"),
        ("BUNDLES", "all_bundles_included"),
    ] {
        let mut body = json!({"code": code, "max_usages": 5});
        body[field] = json!(true);
        let v = created(app, &vouchers, token, body).await;
        assert_eq!(v[field], true, "{v}");
    }
    app.state.cache.refresh().await;

    // The pass comes with its dinner free, and keeps its whole price.
    let mut browser = Browser::new(app);
    let field = format!("item_{pass}");
    let fields = [(field.as_str(), "1"), ("_voucher_code", "BUNDLES")];
    let r = post_from(&mut browser, "/acme/conf", "/acme/conf/cart/add", &fields).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let body = html(&browser.get("/acme/conf").await).to_owned();
    assert!(body.contains("Total: EUR 50.00"), "{body}");

    // A ticket's dinners are offered included and cost nothing.
    let mut browser = Browser::new(app);
    let field = format!("item_{}", s.shop.ticket);
    let fields = [(field.as_str(), "1"), ("_voucher_code", "ADDONS")];
    let r = post_from(&mut browser, "/acme/conf", "/acme/conf/cart/add", &fields).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let page = browser.get("/acme/conf/checkout/addons").await;
    let base = bases(html(&page)).remove(0);
    let chosen = [
        (count(&base, s.workshop_a), "1"),
        (count(&base, s.dinner), "1"),
    ];
    let chosen: Vec<(&str, &str)> = chosen.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let r = submit(&mut browser, "/acme/conf/checkout/addons", &chosen).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let body = html(&browser.get("/acme/conf").await).to_owned();
    assert!(body.contains("Total: EUR 23.00"), "{body}");
}
