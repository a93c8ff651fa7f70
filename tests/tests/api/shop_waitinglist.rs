//! The shop's waiting list: a sold-out product links to a form where a buyer leaves their
//! address, and the waiting list's rules decide whether they may wait.

use sea_orm::{ActiveModelTrait, Set};
use serde_json::json;
use tessera::db::entities::event;
use tessera_tests::{Reply, TestApp};

use crate::browser_support::{Browser, csrf_field, html};
use crate::catalogue_support::EVENT;
use crate::selling_support::{Shop, shop_on};

/// A live shop whose ticket has a quota of one, with the waiting list as `enabled` says.
async fn shop(enabled: bool) -> Shop {
    let app = TestApp::spawn_app(
        |_| {},
        |app| app.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let shop = shop_on(app, Some(1)).await;
    event::ActiveModel {
        id: Set(shop.event),
        live: Set(true),
        ..Default::default()
    }
    .update(&shop.app.db)
    .await
    .expect("event");
    let settings = json!({"waiting_list_enabled": enabled});
    let r = shop
        .app
        .patch(&format!("{EVENT}/settings/"), &shop.token, settings)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    shop.app.state.cache.refresh().await;
    shop
}

/// Posts the waiting list's form for the shop's ticket.
async fn join(browser: &mut Browser<'_>, shop: &Shop, email: &str) -> Reply {
    let path = format!("/acme/conf/waitinglist?item={}", shop.ticket);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let token = csrf_field(html(&page));
    let form = [("csrfmiddlewaretoken", token.as_str()), ("email", email)];
    browser.post(&path, &form).await
}

async fn entries(shop: &Shop) -> serde_json::Value {
    let r = shop
        .app
        .get(&format!("{EVENT}/waitinglistentries/"), &shop.token)
        .await;
    r.body["results"].clone()
}

#[tokio::test]
async fn a_sold_out_product_links_to_the_waiting_list_where_a_buyer_leaves_their_address_once() {
    let shop = shop(true).await;
    let mut browser = Browser::new(&shop.app);
    let link = format!("&#x2f;waitinglist?item={}", shop.ticket);
    let page = browser.get("/acme/conf").await;
    assert!(!html(&page).contains(&link), "on sale: {}", page.body);
    shop.ordered(1, json!({})).await;
    let page = browser.get("/acme/conf").await;
    assert!(html(&page).contains(&link), "sold out: {}", page.body);
    assert!(html(&page).contains("Join the waiting list"));

    let r = join(&mut browser, &shop, "not an address").await;
    assert_eq!(r.status, 400);
    assert!(
        html(&r).contains("Enter a valid email address."),
        "{}",
        r.body
    );
    assert_eq!(entries(&shop).await, json!([]));

    let r = join(&mut browser, &shop, "grace@example.org").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        html(&r).contains("We&#x27;ve added you to the waiting list"),
        "{}",
        r.body
    );
    let list = entries(&shop).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["email"], "grace@example.org");
    assert_eq!(list[0]["item"], shop.ticket);
    assert_eq!(list[0]["locale"], "en");

    let r = join(&mut browser, &shop, "grace@example.org").await;
    assert_eq!(r.status, 400);
    assert!(
        html(&r).contains("You are already on this waiting list!"),
        "{}",
        r.body
    );
    assert_eq!(entries(&shop).await.as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn nobody_waits_for_an_available_product_or_where_the_waiting_list_is_off() {
    let on = shop(true).await;
    let mut browser = Browser::new(&on.app);
    let r = join(&mut browser, &on, "grace@example.org").await;
    assert_eq!(r.status, 400);
    assert!(
        html(&r).contains("This product is currently available."),
        "{}",
        r.body
    );
    let unknown = browser.get("/acme/conf/waitinglist?item=999999").await;
    assert_eq!(unknown.status, 404);
    let hidden = crate::catalogue_support::item(
        &on.app,
        &on.token,
        json!({"name": {"en": "Secret"}, "default_price": "1.00", "active": false}),
    )
    .await;
    let path = format!("/acme/conf/waitinglist?item={}", hidden["id"]);
    let page = browser.get(&path).await;
    assert_eq!(
        page.status, 404,
        "an inactive product is not shown: {}",
        page.body
    );

    let off = shop(false).await;
    off.ordered(1, json!({})).await;
    let mut browser = Browser::new(&off.app);
    let page = browser.get("/acme/conf").await;
    assert!(!html(&page).contains("waitinglist"), "{}", page.body);
    let r = join(&mut browser, &off, "grace@example.org").await;
    assert_eq!(r.status, 400);
    assert!(
        html(&r).contains("The waiting list is disabled for this event."),
        "{}",
        r.body
    );
    assert_eq!(entries(&off).await, json!([]));
}
