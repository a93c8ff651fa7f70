//! The shop's pages for buyers (the front page, an organizer's page, an event's page) and
//! the widget's product list: what is shown, at what price, what can be bought, in the
//! reader's language.

use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::event;
use tessera_tests::{Reply, TestApp};

use crate::browser_support::html;
use crate::catalogue_support::{EVENT, created, id, item};
use crate::selling_support::{Shop, shop_on};

/// A shop (event `acme/conf` with a Ticket at 23.00 on a quota of `size`) that is live.
pub async fn live_shop(size: Option<i64>) -> Shop {
    let app = TestApp::spawn_app(
        |_| {},
        |app| app.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let shop = shop_on(app, size).await;
    set_event(&shop, |e| e.live = Set(true)).await;
    shop
}

async fn set_event(shop: &Shop, f: impl FnOnce(&mut event::ActiveModel)) {
    let mut row = event::ActiveModel {
        id: Set(shop.event),
        ..Default::default()
    };
    f(&mut row);
    row.update(&shop.app.db).await.expect("event");
    shop.app.state.cache.refresh().await;
}

/// A page's HTML with the slashes its escaping writes as `&#x2f;` read back.
fn read(r: &Reply) -> String {
    html(r).replace("&#x2f;", "/")
}

async fn page(app: &TestApp, path: &str) -> Reply {
    app.raw(poem::http::Method::GET, path, &[], Vec::new())
        .await
}

async fn page_in(app: &TestApp, path: &str, language: &str) -> Reply {
    app.raw(
        poem::http::Method::GET,
        path,
        &[("Accept-Language", language)],
        Vec::new(),
    )
    .await
}

async fn settings(shop: &Shop, values: Value) {
    let r = shop
        .app
        .patch(&format!("{EVENT}/settings/"), &shop.token, values)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

async fn product_list(app: &TestApp, query: &str) -> Value {
    let r = page(app, &format!("/acme/conf/widget/product_list{query}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    r.body
}

#[tokio::test]
async fn the_front_page_lists_the_live_public_events_and_leaves_out_the_others() {
    let shop = live_shop(Some(10)).await;
    let hidden = crate::catalogue_support::another_event(&shop.app, "private").await;
    event::ActiveModel {
        id: Set(hidden),
        live: Set(true),
        is_public: Set(false),
        ..Default::default()
    }
    .update(&shop.app.db)
    .await
    .expect("event");
    crate::catalogue_support::another_event(&shop.app, "draft").await;
    let r = page(&shop.app, "/").await;
    assert_eq!(r.status, 200);
    let body = read(&r);
    assert!(body.contains(r#"href="/acme/conf""#), "{body}");
    assert!(
        !body.contains("/acme/private") && !body.contains("/acme/draft"),
        "{body}"
    );
    assert!(body.contains(r#"<html lang="en">"#));

    let r = page(&shop.app, "/acme").await;
    assert_eq!(r.status, 200);
    assert!(read(&r).contains(r#"href="/acme/conf""#));
    assert_eq!(page(&shop.app, "/nobody").await.status, 404);
    assert_eq!(page(&shop.app, "/acme/nothing").await.status, 404);
}

#[tokio::test]
async fn an_event_page_shows_its_products_by_category_with_prices_and_a_quantity_each() {
    let shop = live_shop(Some(10)).await;
    let cat = created(
        &shop.app,
        &format!("{EVENT}/categories/"),
        &shop.token,
        json!({"name": {"en": "Merchandise"}}),
    )
    .await;
    let shirt = item(
        &shop.app,
        &shop.token,
        json!({"name": {"en": "Shirt"}, "default_price": "15.00", "category": id(&cat),
               "variations": [{"value": {"en": "S"}}, {"value": {"en": "XL"}, "default_price": "17.00"}]}),
    )
    .await;
    created(
        &shop.app,
        &format!("{EVENT}/quotas/"),
        &shop.token,
        json!({"name": "Shirts", "size": 5, "items": [id(&shirt)],
               "variations": [id(&shirt["variations"][0]), id(&shirt["variations"][1])]}),
    )
    .await;
    let r = page(&shop.app, "/acme/conf").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let body = read(&r);
    assert!(body.contains("<h1>conf</h1>"), "{body}");
    assert!(
        body.contains("Ticket") && body.contains("EUR 23.00"),
        "{body}"
    );
    assert!(body.contains("<h2>Merchandise</h2>"), "{body}");
    assert!(
        body.contains("EUR 15.00") && body.contains("EUR 17.00"),
        "{body}"
    );
    let ticket_field = format!(r#"name="item_{}" min="0" max="10""#, shop.ticket);
    assert!(body.contains(&ticket_field), "{body}");
    let xl = format!(
        r#"name="variation_{}_{}" min="0" max="5""#,
        id(&shirt),
        id(&shirt["variations"][1])
    );
    assert!(body.contains(&xl), "{body}");
    assert!(body.contains(r#"action="/acme/conf/cart/add""#));
    assert!(body.contains(r#"name="csrfmiddlewaretoken""#));
    // Ungrouped products come first, then the categories in their order.
    assert!(body.find("Ticket") < body.find("Merchandise"));
    let policy = r.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
}

#[tokio::test]
async fn sold_out_products_say_so_and_offer_no_quantity_and_the_units_left_show_when_asked() {
    let shop = live_shop(Some(3)).await;
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(!body.contains("3 left"), "{body}");
    settings(&shop, json!({"show_quota_left": true})).await;
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(body.contains("3 left"), "{body}");
    assert!(body.contains(r#"max="3""#), "{body}");

    shop.ordered(3, json!({})).await;
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(body.contains("Sold out"), "{body}");
    assert!(
        !body.contains(&format!(r#"name="item_{}""#, shop.ticket)),
        "{body}"
    );
    assert!(!body.contains("Add to cart"), "{body}");
    let list = product_list(&shop.app, "").await;
    let ticket = &list["items_by_category"][0]["items"][0];
    assert_eq!(ticket["avail"], json!([10, 0]), "{list}");
    assert_eq!(ticket["order_max"], 0);
    assert_eq!(list["display_add_to_cart"], false);
}

#[tokio::test]
async fn hidden_products_show_only_with_a_voucher_that_shows_them_and_voucher_products_only_with_one()
 {
    let shop = live_shop(None).await;
    let secret = item(
        &shop.app,
        &shop.token,
        json!({"name": {"en": "Backstage"}, "default_price": "90.00", "hide_without_voucher": true}),
    )
    .await;
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
        json!({"name": "Special", "size": null, "items": [id(&secret), id(&member)]}),
    )
    .await;
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(!body.contains("Backstage"), "{body}");
    assert!(
        body.contains("Member") && body.contains("Only available with a voucher"),
        "{body}"
    );
    assert!(
        !body.contains(&format!(r#"name="item_{}""#, id(&member))),
        "{body}"
    );

    let vouchers = format!("{EVENT}/vouchers/");
    created(
        &shop.app,
        &vouchers,
        &shop.token,
        json!({"code": "SHOWME", "show_hidden_items": true, "price_mode": "set", "value": "50.00"}),
    )
    .await;
    let body = read(&page(&shop.app, "/acme/conf?voucher=showme").await);
    assert!(body.contains("Backstage"), "{body}");
    assert!(body.contains("<del>EUR 90.00</del> EUR 50.00"), "{body}");
    assert!(
        body.contains(&format!(r#"name="item_{}""#, id(&member))),
        "{body}"
    );
    assert!(
        body.contains(r#"name="_voucher_code" value="SHOWME""#),
        "{body}"
    );

    let body = read(&page(&shop.app, "/acme/conf?voucher=NOPE").await);
    assert!(
        body.contains("This voucher code is not known in our database."),
        "{body}"
    );
    assert!(!body.contains("Backstage"));
    let list = product_list(&shop.app, "?voucher=NOPE").await;
    assert_eq!(
        list["error"],
        "This voucher code is not known in our database."
    );
    assert_eq!(list["items_by_category"], json!([]));
}

#[tokio::test]
async fn a_product_not_yet_on_sale_says_when_it_will_be_and_a_closed_sale_says_why() {
    let shop = live_shop(None).await;
    let later = (Utc::now() + Duration::days(2)).to_rfc3339();
    let r = shop
        .app
        .patch(
            &format!("{EVENT}/items/{}/", shop.ticket),
            &shop.token,
            json!({"available_from": later}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(body.contains("Available from"), "{body}");
    assert!(!body.contains(&format!(r#"name="item_{}""#, shop.ticket)));
    let list = product_list(&shop.app, "").await;
    assert_eq!(
        list["items_by_category"][0]["items"][0]["current_unavailability_reason"],
        "available_from"
    );

    set_event(&shop, |e| {
        e.presale_end = Set(Some(Utc::now() - Duration::hours(1)))
    })
    .await;
    let body = read(&page(&shop.app, "/acme/conf").await);
    assert!(
        body.contains("The booking period for this event is over."),
        "{body}"
    );
    let list = product_list(&shop.app, "").await;
    assert_eq!(list["error"], "The booking period for this event is over.");
    assert_eq!(list["display_add_to_cart"], false);
}

#[tokio::test]
async fn a_shop_that_is_not_live_says_it_is_disabled() {
    let shop = live_shop(None).await;
    set_event(&shop, |e| e.live = Set(false)).await;
    let r = page(&shop.app, "/acme/conf").await;
    assert_eq!(r.status, 403);
    assert!(html(&r).contains("This ticket shop is currently disabled."));
    let list = product_list(&shop.app, "").await;
    assert_eq!(list["error"], "This ticket shop is currently disabled.");
}

#[tokio::test]
async fn the_widget_product_list_has_pretix_shape() {
    let shop = live_shop(Some(10)).await;
    let rule = created(
        &shop.app,
        &format!("{EVENT}/taxrules/"),
        &shop.token,
        json!({"name": {"en": "VAT"}, "rate": "19.00", "price_includes_tax": true}),
    )
    .await;
    let r = shop
        .app
        .patch(
            &format!("{EVENT}/items/{}/", shop.ticket),
            &shop.token,
            json!({"tax_rule": id(&rule)}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = product_list(&shop.app, "?lang=en").await;
    assert_eq!(list["target_url"], "http://tessera.test/acme/conf/");
    assert_eq!(list["currency"], "EUR");
    assert_eq!(list["error"], Value::Null);
    assert_eq!(list["display_add_to_cart"], true);
    assert_eq!(list["itemnum"], 1);
    let ticket = &list["items_by_category"][0]["items"][0];
    assert_eq!(ticket["id"], shop.ticket);
    assert_eq!(ticket["name"], "Ticket");
    assert_eq!(ticket["has_variations"], false);
    assert_eq!(
        ticket["price"],
        json!({"gross": "23.00", "net": "19.33", "tax": "3.67", "rate": "19.00",
               "name": "VAT", "includes_mixed_tax_rate": false})
    );
    assert_eq!(ticket["avail"], json!([100, null]));
    assert_eq!(ticket["order_max"], 10);
    assert_eq!(ticket["current_unavailability_reason"], Value::Null);
    let other = product_list(&shop.app, &format!("?items={}", shop.ticket + 1000)).await;
    assert_eq!(other["items_by_category"], json!([]));
    let r = page(&shop.app, "/acme/conf/5/widget/product_list").await;
    assert_eq!(r.body["error"], "This is not an event series.");
}

#[tokio::test]
async fn the_pages_speak_the_readers_language_among_the_events() {
    let shop = live_shop(Some(10)).await;
    let r = page_in(&shop.app, "/acme/conf", "de-DE,de;q=0.9").await;
    assert!(
        html(&r).contains(r#"<html lang="en">"#),
        "only English is offered"
    );
    settings(&shop, json!({"locales": ["en", "de"]})).await;
    let r = page_in(&shop.app, "/acme/conf", "fr;q=1, de-DE;q=0.9").await;
    let body = read(&r);
    assert!(body.contains(r#"<html lang="de">"#), "{body}");
    assert!(
        body.contains("In den Warenkorb") && body.contains("Anzahl"),
        "{body}"
    );
    let list = product_list(&shop.app, "?lang=de&voucher=NOPE").await;
    assert_eq!(list["error"], "Dieser Gutscheincode ist uns nicht bekannt.");
    let r = page_in(&shop.app, "/acme/conf?locale=en", "de").await;
    assert!(html(&r).contains(r#"<html lang="en">"#));
}

#[tokio::test]
async fn a_series_lists_its_dates_and_each_date_has_its_own_page() {
    let app = TestApp::spawn_app(
        |_| {},
        |app| app.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let org = app.organizer("acme").await;
    let ev = crate::config_support::add_event(&app, org, "conf", true).await;
    event::ActiveModel {
        id: Set(ev),
        live: Set(true),
        ..Default::default()
    }
    .update(&app.db)
    .await
    .expect("live");
    let token = app.admin_token("acme").await;
    let ticket = id(&item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "9.00"}),
    )
    .await);
    let when = (Utc::now() + Duration::days(30)).to_rfc3339();
    let date = created(
        &app,
        &format!("{EVENT}/subevents/"),
        &token,
        json!({"name": {"en": "Matinee"}, "date_from": when, "active": true}),
    )
    .await;
    created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Matinee", "size": 4, "items": [ticket], "subevent": id(&date)}),
    )
    .await;
    let body = read(&page(&app, "/acme/conf").await);
    let link = format!(r#"href="/acme/conf/{}""#, id(&date));
    assert!(body.contains(&link) && body.contains("Matinee"), "{body}");
    let body = read(&page(&app, &format!("/acme/conf/{}", id(&date))).await);
    assert!(
        body.contains(&format!(r#"name="item_{ticket}" min="0" max="4""#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"name="subevent" value="{}""#, id(&date))),
        "{body}"
    );
    assert_eq!(page(&app, "/acme/conf/999999").await.status, 404);
    let list = product_list(&app, "").await;
    assert_eq!(list["list_type"], "list");
    assert_eq!(list["events"][0]["subevent"], id(&date));
    assert_eq!(list["events"][0]["availability"]["reason"], "ok");
    let r = page(
        &app,
        &format!("/acme/conf/{}/widget/product_list", id(&date)),
    )
    .await;
    assert_eq!(
        r.body["items_by_category"][0]["items"][0]["order_max"], 4,
        "{}",
        r.body
    );
}
