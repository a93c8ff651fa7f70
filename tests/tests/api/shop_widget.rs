//! pretix's widget on another site: its script (`/widget/v2.{lang}.js`), its "Buy"
//! (`w/{id}/cart/add`), and the shop in its frames, where no cookie of this site arrives:
//! the cart travels in the path (`w/{cart}/...`).

use poem::http::Method;
use serde_json::{Value, json};
use tessera_tests::{Reply, TestApp};

use crate::browser_support::{form_body, html};
use crate::catalogue_support::EVENT;
use crate::selling_support::{Shop, bank_transfer_shop};

/// The widget's own ID, as its script makes one.
const WIDGET: &str = "Ab3dE6gH9jK2mN5p";

/// A request without cookies, as a frame on another site sends it.
async fn get(shop: &Shop, path: &str) -> Reply {
    shop.app.raw(Method::GET, path, &[], Vec::new()).await
}

/// A form posted without cookies or CSRF token, as a frame on another site posts it.
async fn post(shop: &Shop, path: &str, form: &[(&str, &str)]) -> Reply {
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    let body = form_body(form).into_bytes();
    shop.app.raw(Method::POST, path, &headers, body).await
}

fn location(r: &Reply) -> &str {
    r.header("location").unwrap_or_default()
}

/// The widget's "Buy" of `count` tickets, as its script posts it in a frame.
async fn buy(shop: &Shop, count: &str, cart: Option<&str>) -> Reply {
    let mut path = format!(
        "/acme/conf/w/{WIDGET}/cart/add?iframe=1&next=%2Facme%2Fconf%2Fw%2F{WIDGET}%2Fcheckout%2Fstart"
    );
    if let Some(cart) = cart {
        path.push_str(&format!("&take_cart_id={cart}"));
    }
    path.push_str("&locale=en&ajax=1");
    let item = format!("item_{}", shop.ticket);
    post(shop, &path, &[(&item, count), ("widget_data", "{}")]).await
}

#[tokio::test]
async fn the_widget_script_is_pretix_bundle_wrapped_in_the_readers_language_for_any_site() {
    let app = TestApp::spawn_app(
        |_| {},
        |a| {
            a.plugin(tessera_plugin_presale::Presale::with_widget_bundle(
                "window.bundle = LANG;",
            ))
        },
    )
    .await;
    let r = app
        .raw(Method::GET, "/widget/v2.de.js", &[], Vec::new())
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/javascript; charset=utf-8")
    );
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let script = r.body.as_str().unwrap_or_default();
    assert!(script.contains("const LANG = \"de\";"), "{script}");
    assert!(script.contains("\"Buy\":\"Kaufen\""), "{script}");
    assert!(script.contains("window.bundle = LANG;"), "{script}");
    let r = app
        .raw(Method::GET, "/widget/v1.en.js", &[], Vec::new())
        .await;
    assert!(
        r.body
            .as_str()
            .unwrap_or_default()
            .contains("const LANG = \"en\";")
    );
    for missing in ["/widget/v2.xx.js", "/widget/v3.en.js", "/widget/v2.en.css"] {
        let r = app.raw(Method::GET, missing, &[], Vec::new()).await;
        assert_eq!(r.status, 404, "{missing}");
    }
    let without = TestApp::spawn_app(
        |_| {},
        |a| a.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let r = without
        .raw(Method::GET, "/widget/v2.en.js", &[], Vec::new())
        .await;
    assert_eq!(r.status, 404, "no bundle, no script");
}

#[tokio::test]
async fn a_buy_in_the_widget_fills_a_new_cart_and_its_checkout_runs_in_frames_to_the_order() {
    let shop = bank_transfer_shop(Some(10), json!({})).await;
    let r = buy(&shop, "2", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.body["success"], true, "{}", r.body);
    assert_eq!(r.body["has_cart"], true);
    let cart = r.body["cart_id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(cart.len(), 64, "{}", r.body);
    // The frame keeps the widget's language in its address, as it keeps no cookie.
    let frame = format!("/acme/conf/w/{cart}.en");
    assert_eq!(r.body["redirect"], format!("{frame}/checkout/start"));
    let list = get(
        &shop,
        &format!("/acme/conf/widget/product_list?cart_id={cart}"),
    )
    .await;
    assert_eq!(list.body["cart_exists"], true, "{}", list.body);
    assert_eq!(
        shop.availability(shop.quota).await["available_number"],
        8,
        "the cart holds two"
    );

    // The widget opens the redirect in its frame, with the cart it was given.
    let r = get(
        &shop,
        &format!("{frame}/checkout/start?iframe=1&locale=en&take_cart_id={cart}"),
    )
    .await;
    assert_eq!(location(&r), format!("{frame}/checkout/questions"));
    let page = get(&shop, &format!("{frame}/checkout/questions")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.header("x-frame-options"), None, "a frame");
    assert!(
        page.header("content-security-policy")
            .is_some_and(|p| p.contains("frame-ancestors *")),
        "{:?}",
        page.headers
    );
    for outside in [
        "href=\"/acme/conf/checkout",
        "action=\"/acme/conf/c",
        "href=\"/acme/conf\"",
    ] {
        assert!(
            !html(&page).contains(outside),
            "the links stay in the frame: {}",
            page.body
        );
    }
    let email = [
        ("email", "ada@example.org"),
        ("email_repeat", "ada@example.org"),
    ];
    let r = post(&shop, &format!("{frame}/checkout/questions"), &email).await;
    assert_eq!(
        location(&r),
        format!("{frame}/checkout/payment"),
        "{}",
        r.body
    );
    let r = post(
        &shop,
        &format!("{frame}/checkout/payment"),
        &[("payment", "banktransfer")],
    )
    .await;
    assert_eq!(
        location(&r),
        format!("{frame}/checkout/confirm"),
        "{}",
        r.body
    );
    let r = post(
        &shop,
        &format!("{frame}/checkout/confirm"),
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let placed = location(&r).to_owned();
    assert!(placed.starts_with(&format!("{frame}/order/")), "{placed}");
    assert!(set_cookies(&r).is_empty(), "a frame sets no cookie");

    let page = get(&shop, &placed).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.header("x-frame-options"), None);
    let orders = shop.app.get(&format!("{EVENT}/orders/"), &shop.token).await;
    let order = &orders.body["results"][0];
    assert_eq!(orders.body["count"], 1);
    assert_eq!(order["email"], "ada@example.org");
    assert_eq!(order["total"], "46.00");
    let code = order["code"].as_str().unwrap_or_default();
    let secret = order["secret"].as_str().unwrap_or_default();
    assert!(html(&page).contains(code), "{}", page.body);
    assert!(
        html(&page).contains(&format!("{secret}&#x2f;\" target=\"_blank\"")),
        "the order's page opens in a new tab: {}",
        page.body
    );

    // The cart's ID is no secret: once placed, its frame names the order but not its link.
    let again = get(&shop, &format!("{frame}/checkout/start")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(html(&again).contains(code), "{}", again.body);
    assert!(!html(&again).contains(secret), "{}", again.body);

    // The widget keeps the cart's ID; the next "Buy" gets a new cart.
    let again = buy(&shop, "1", Some(&cart)).await;
    assert_eq!(again.body["success"], true, "{}", again.body);
    assert_ne!(again.body["cart_id"], Value::from(cart));
}

#[tokio::test]
async fn a_buy_the_quota_cannot_serve_answers_the_widget_why_and_holds_nothing() {
    let shop = bank_transfer_shop(Some(1), json!({})).await;
    let r = buy(&shop, "2", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["success"], false, "{}", r.body);
    assert_eq!(r.body["has_cart"], false);
    assert!(
        r.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("no longer available")),
        "{}",
        r.body
    );
    assert_eq!(shop.availability(shop.quota).await["available_number"], 1);
}

#[tokio::test]
async fn a_buy_from_a_new_tab_leads_by_redirect_to_the_checkout_of_its_cart() {
    let shop = bank_transfer_shop(Some(10), json!({})).await;
    let item = format!("item_{}", shop.ticket);
    let path = format!(
        "/acme/conf/w/{WIDGET}/cart/add?iframe=1&next=%2Facme%2Fconf%2Fw%2F{WIDGET}%2Fcheckout%2Fstart"
    );
    let r = post(&shop, &path, &[(&item, "1")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let to = location(&r);
    let cart = to
        .strip_prefix("/acme/conf/w/")
        .and_then(|rest| rest.strip_suffix("/checkout/start"))
        .unwrap_or_default();
    assert_eq!(cart.len(), 64, "{to}");
    let page = get(&shop, &format!("/acme/conf/w/{cart}")).await;
    assert!(html(&page).contains("Your cart"), "{}", page.body);
}

#[tokio::test]
async fn the_widgets_frames_lead_to_the_cart_it_names_and_refuse_forms_posted_without_one() {
    let shop = bank_transfer_shop(Some(10), json!({})).await;
    let r = get(&shop, &format!("/acme/conf/w/{WIDGET}/cart/create?ajax=1")).await;
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let cart = r.body["cart_id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(cart.len(), 64, "{}", r.body);

    let r = get(
        &shop,
        &format!("/acme/conf/w/{WIDGET}?iframe=1&locale=de&take_cart_id={cart}"),
    )
    .await;
    assert_eq!(
        location(&r),
        format!("/acme/conf/w/{cart}.de?iframe=1&locale=de")
    );
    let r = get(
        &shop,
        &format!("/acme/conf/w/{WIDGET}/waitinglist?item={}", shop.ticket),
    )
    .await;
    let to = location(&r);
    assert!(
        to.starts_with("/acme/conf/w/")
            && to.ends_with(&format!("/waitinglist?item={}", shop.ticket)),
        "a new cart's frame: {to}"
    );
    let middle = to.trim_start_matches("/acme/conf/w/").split('/').next();
    assert_eq!(middle.map(str::len), Some(64), "{to}");

    let page = get(&shop, &format!("/acme/conf/w/{cart}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("x-frame-options"), None);
    let r = post(&shop, &format!("/acme/conf/w/{WIDGET}/cart/clear"), &[]).await;
    assert_eq!(r.status, 403, "a form needs the cart's frame");
    for nowhere in ["/acme/conf/w/short", "/acme/conf/w/short/checkout/start"] {
        assert_eq!(get(&shop, nowhere).await.status, 404, "{nowhere}");
    }
    let css = get(&shop, "/acme/conf/widget/v2.css").await;
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(css.header("access-control-allow-origin"), Some("*"));
    let text = css.body.as_str().unwrap_or_default();
    assert!(text.contains("--tessera-brand: #24292f;"), "{text}");
    assert!(text.contains(".pretix-widget-frame-holder"), "{text}");
    assert_eq!(get(&shop, "/acme/widget/v2.css").await.status, 200);
    assert_eq!(get(&shop, "/nobody/widget/v2.css").await.status, 404);
    assert_eq!(get(&shop, "/acme/none/widget/v2.css").await.status, 404);

    let top = get(&shop, "/acme/conf").await;
    assert_eq!(
        top.header("x-frame-options"),
        Some("DENY"),
        "the shop itself is not framed"
    );
}

fn set_cookies(r: &Reply) -> Vec<String> {
    crate::browser_support::set_cookies(r)
}
