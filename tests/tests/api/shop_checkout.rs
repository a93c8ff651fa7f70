//! The shop's checkout: the buyer's information and answers, the payment method, the
//! confirmation, and the order placed from the cart through the order rules, once.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::browser_support::{Browser, csrf_field, html};
use crate::catalogue_support::{EVENT, created, id};
use crate::selling_support::{Shop, availability, bank_transfer_shop};

/// A live shop that sells by bank transfer, asks attendee names and one required question.
async fn shop() -> (Shop, i64) {
    let names = json!({"attendee_names_asked": true, "attendee_names_required": true});
    let shop = bank_transfer_shop(Some(10), names).await;
    let question = created(
        &shop.app,
        &format!("{EVENT}/questions/"),
        &shop.token,
        json!({"question": {"en": "T-shirt size"}, "type": "C", "required": true,
               "items": [shop.ticket],
               "options": [{"answer": {"en": "M"}}, {"answer": {"en": "L"}}]}),
    )
    .await;
    shop.app.state.cache.refresh().await;
    (shop, id(&question))
}

/// Posts a page's form (its CSRF token added) and gives the reply.
async fn submit(browser: &mut Browser<'_>, path: &str, fields: &[(&str, &str)]) -> Reply {
    let page = browser.get(path).await;
    assert_eq!(page.status, 200, "GET {path}: {}", page.body);
    let token = csrf_field(html(&page));
    let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
    form.extend_from_slice(fields);
    browser.post(path, &form).await
}

/// Puts `count` tickets in the browser's cart.
async fn add(browser: &mut Browser<'_>, shop: &Shop, count: &str) {
    let page = browser.get("/acme/conf").await;
    let token = csrf_field(html(&page));
    let item = format!("item_{}", shop.ticket);
    let r = browser
        .post(
            "/acme/conf/cart/add",
            &[("csrfmiddlewaretoken", &token), (&item, count)],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
}

fn location(r: &Reply) -> &str {
    r.header("location").unwrap_or_default()
}

/// The position IDs of the questions form, in order.
fn positions(page: &str) -> Vec<String> {
    page.split("-name\" name=\"")
        .skip(1)
        .filter_map(|s| s.split('-').next())
        .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

async fn orders(shop: &Shop) -> Vec<Value> {
    let r = shop.app.get(&format!("{EVENT}/orders/"), &shop.token).await;
    r.body["results"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_buyer_checks_out_with_answers_and_bank_transfer_and_lands_on_the_order() {
    let (shop, question) = shop().await;
    let options = shop
        .app
        .get(&format!("{EVENT}/questions/{question}/"), &shop.token)
        .await
        .body["options"]
        .clone();
    let large = options[1]["id"].to_string();
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &shop, "2").await;
    let r = browser.get("/acme/conf/checkout/start").await;
    assert_eq!(location(&r), "/acme/conf/checkout/questions");

    let page = browser.get("/acme/conf/checkout/questions").await;
    let ids = positions(html(&page));
    assert_eq!(ids.len(), 2, "{}", page.body);
    let field = |p: &str, rest: &str| format!("{p}-{rest}");
    let q = format!("question_{question}");
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/questions",
        &[
            ("email", "ada@example.org"),
            ("email_repeat", "ada@example.com"),
        ],
    )
    .await;
    assert_eq!(r.status, 400);
    let body = html(&r);
    assert!(
        body.contains("Please enter the same email address twice."),
        "{body}"
    );
    assert!(body.contains("This field is required."), "{body}");
    assert!(
        body.contains(r#"value="ada@example.org""#),
        "entries stay: {body}"
    );

    let (n0, n1, q0, q1) = (
        field(&ids[0], "name"),
        field(&ids[1], "name"),
        field(&ids[0], &q),
        field(&ids[1], &q),
    );
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/questions",
        &[
            ("email", "ada@example.org"),
            ("email_repeat", "ada@example.org"),
            (&n0, "Ada Lovelace"),
            (&n1, "Charles Babbage"),
            (&q0, &large),
            (&q1, &large),
        ],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(location(&r), "/acme/conf/checkout/payment");
    let page = browser.get("/acme/conf/checkout/payment").await;
    assert!(html(&page).contains("Bank transfer"), "{}", page.body);
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/payment",
        &[("payment", "nothing")],
    )
    .await;
    assert_eq!(r.status, 400);
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/payment",
        &[("payment", "banktransfer")],
    )
    .await;
    assert_eq!(location(&r), "/acme/conf/checkout/confirm");
    let page = browser.get("/acme/conf/checkout/confirm").await;
    let body = html(&page);
    assert!(
        body.contains("Ada Lovelace") && body.contains("EUR 46.00"),
        "{body}"
    );

    let r = submit(
        &mut browser,
        "/acme/conf/checkout/confirm",
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert!(
        location(&r).starts_with("/acme/conf/order/"),
        "{}",
        location(&r)
    );
    let all = orders(&shop).await;
    assert_eq!(all.len(), 1);
    let o = &all[0];
    assert_eq!(o["email"], "ada@example.org");
    assert_eq!(o["status"], "n");
    assert_eq!(o["sales_channel"], "web");
    assert_eq!(o["total"], "46.00");
    assert_eq!(o["payment_provider"], "banktransfer");
    assert_eq!(o["positions"][0]["attendee_name"], "Ada Lovelace");
    assert_eq!(o["positions"][0]["answers"][0]["answer"], "L");
    assert_eq!(
        availability(&shop.app, &shop.token, shop.quota).await["available_number"],
        8,
        "the cart's hold became the order's"
    );
    let order = browser.get(location(&r)).await;
    assert_eq!(order.status, 200);
    let page = browser.get("/acme/conf").await;
    assert!(
        !html(&page).contains("Your cart"),
        "the cart became the order"
    );
}

#[tokio::test]
async fn a_confirmation_sent_twice_places_one_order_and_leads_both_to_it() {
    let (shop, question) = shop().await;
    let _ = question;
    let r = shop
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &shop.token,
            json!({"attendee_names_asked": false}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = shop
        .app
        .delete(&format!("{EVENT}/questions/{question}/"), &shop.token)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &shop, "1").await;
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/questions",
        &[
            ("email", "ada@example.org"),
            ("email_repeat", "ada@example.org"),
        ],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    submit(
        &mut browser,
        "/acme/conf/checkout/payment",
        &[("payment", "banktransfer")],
    )
    .await;
    let page = browser.get("/acme/conf/checkout/confirm").await;
    let token = csrf_field(html(&page));
    let form = [("csrfmiddlewaretoken", token.as_str()), ("confirm", "yes")];
    let mut again = browser.clone();
    let (first, second) = tokio::join!(
        browser.post("/acme/conf/checkout/confirm", &form),
        again.post("/acme/conf/checkout/confirm", &form),
    );
    assert_eq!(first.status, 303, "{}", first.body);
    assert_eq!(second.status, 303, "{}", second.body);
    assert_eq!(location(&first), location(&second));
    assert_eq!(orders(&shop).await.len(), 1);
}

#[tokio::test]
async fn the_checkout_forms_need_their_csrf_token() {
    let (shop, _) = shop().await;
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &shop, "1").await;
    for step in ["questions", "payment", "confirm"] {
        let r = browser
            .post(
                &format!("/acme/conf/checkout/{step}"),
                &[("email", "ada@example.org"), ("confirm", "yes")],
            )
            .await;
        assert_eq!(r.status, 403, "{step}");
    }
    assert!(orders(&shop).await.is_empty());
}

#[tokio::test]
async fn a_cart_that_costs_nothing_skips_the_payment_and_is_paid_at_once() {
    let (shop, question) = shop().await;
    let r = shop
        .app
        .patch(
            &format!("{EVENT}/items/{}/", shop.ticket),
            &shop.token,
            json!({"default_price": "0.00"}),
        )
        .await;
    assert_eq!(r.status, 200);
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &shop, "1").await;
    let page = browser.get("/acme/conf/checkout/questions").await;
    let ids = positions(html(&page));
    let options = shop
        .app
        .get(&format!("{EVENT}/questions/{question}/"), &shop.token)
        .await
        .body["options"]
        .clone();
    let medium = options[0]["id"].to_string();
    let (name, answer) = (
        format!("{}-name", ids[0]),
        format!("{}-question_{question}", ids[0]),
    );
    submit(
        &mut browser,
        "/acme/conf/checkout/questions",
        &[
            ("email", "ada@example.org"),
            ("email_repeat", "ada@example.org"),
            (&name, "Ada"),
            (&answer, &medium),
        ],
    )
    .await;
    let r = browser.get("/acme/conf/checkout/payment").await;
    assert_eq!(location(&r), "/acme/conf/checkout/confirm");
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/confirm",
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let all = orders(&shop).await;
    assert_eq!(all[0]["status"], "p");
    assert_eq!(all[0]["total"], "0.00");
}

#[tokio::test]
async fn what_expired_in_the_cart_is_left_out_of_the_order_and_the_rest_is_placed() {
    let (shop, question) = shop().await;
    let r = shop
        .app
        .delete(&format!("{EVENT}/questions/{question}/"), &shop.token)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let mut browser = Browser::new(&shop.app);
    add(&mut browser, &shop, "2").await;
    shop.app.expire_carts().await;
    add(&mut browser, &shop, "1").await;
    let page = browser.get("/acme/conf/checkout/questions").await;
    let ids = positions(html(&page));
    assert_eq!(ids.len(), 1, "only the live position is asked for");
    let name = format!("{}-name", ids[0]);
    submit(
        &mut browser,
        "/acme/conf/checkout/questions",
        &[
            ("email", "ada@example.org"),
            ("email_repeat", "ada@example.org"),
            (&name, "Ada"),
        ],
    )
    .await;
    submit(
        &mut browser,
        "/acme/conf/checkout/payment",
        &[("payment", "banktransfer")],
    )
    .await;
    let r = submit(
        &mut browser,
        "/acme/conf/checkout/confirm",
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let all = orders(&shop).await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["positions"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        availability(&shop.app, &shop.token, shop.quota).await["available_number"],
        9
    );
}

#[tokio::test]
async fn a_buyer_who_ordered_buys_again_from_the_same_browser() {
    let (shop, question) = shop().await;
    let r = shop
        .app
        .delete(&format!("{EVENT}/questions/{question}/"), &shop.token)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let mut browser = Browser::new(&shop.app);
    for round in 1..=2 {
        add(&mut browser, &shop, "1").await;
        let page = browser.get("/acme/conf/checkout/questions").await;
        let ids = positions(html(&page));
        assert_eq!(ids.len(), 1, "round {round}");
        let name = format!("{}-name", ids[0]);
        submit(
            &mut browser,
            "/acme/conf/checkout/questions",
            &[
                ("email", "ada@example.org"),
                ("email_repeat", "ada@example.org"),
                (&name, "Ada"),
            ],
        )
        .await;
        submit(
            &mut browser,
            "/acme/conf/checkout/payment",
            &[("payment", "banktransfer")],
        )
        .await;
        let r = submit(
            &mut browser,
            "/acme/conf/checkout/confirm",
            &[("confirm", "yes")],
        )
        .await;
        assert_eq!(r.status, 303, "round {round}: {}", r.body);
        assert_eq!(orders(&shop).await.len(), round);
    }
}
