//! The log of a real `tessera serve` taking a card payment through Stripe (localstripe) at
//! the most talkative level: the secret key and the webhook secret never reach it.

use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{Server, organizer_with_admin_token};
use tessera_tests::stripe::{LocalStripe, PUBLISHABLE_KEY, SECRET_KEY, WEBHOOK_SECRET};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

#[tokio::test]
async fn stripes_keys_never_reach_the_log_of_a_card_payment_and_its_refund() {
    let Some(stripe) = LocalStripe::start("stripe keys in the log").await else {
        return;
    };
    let database = fresh_database().await;
    let mut server = Server::new_logging_aside(std::path::Path::new(BIN), &database.url);
    server
        .env("RUST_LOG", "debug")
        .env("TESSERA_STRIPE_API_BASE", &stripe.base)
        .env(
            "TESSERA_STRIPE_JS_URL",
            &format!("{}/js.stripe.com/v3/", stripe.base),
        );
    server.start().await;
    let token = organizer_with_admin_token(std::path::Path::new(BIN), &database.url, "shop");
    let base = server.base();
    let api = format!("{base}/api/v1/organizers/shop/events/");
    let http = reqwest::Client::new();
    let call = |method: reqwest::Method, url: String, body: Value| {
        let (http, token) = (&http, &token);
        async move {
            let r = http
                .request(method, url)
                .header("Authorization", token)
                .json(&body)
                .send()
                .await
                .expect("call");
            assert!(r.status().is_success(), "{}", r.status());
            r.json::<Value>().await.expect("json")
        }
    };
    let post = reqwest::Method::POST;
    call(
        post.clone(),
        api.clone(),
        json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
               "date_from": "2027-06-01T09:00:00Z", "plugins": ["stripe"]}),
    )
    .await;
    let item = call(
        post.clone(),
        format!("{api}conf/items/"),
        json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true}),
    )
    .await;
    call(
        post.clone(),
        format!("{api}conf/quotas/"),
        json!({"name": "All", "size": 10, "items": [item["id"]]}),
    )
    .await;
    call(
        reqwest::Method::PATCH,
        format!("{api}conf/settings/"),
        json!({"payment_stripe__enabled": true, "payment_stripe_endpoint": "test",
               "payment_stripe_publishable_key": PUBLISHABLE_KEY,
               "payment_stripe_secret_key": SECRET_KEY,
               "payment_stripe_webhook_secret": WEBHOOK_SECRET}),
    )
    .await;
    let order = call(
        post.clone(),
        format!("{api}conf/orders/"),
        json!({"email": "buyer@example.org", "payment_provider": "stripe",
               "positions": [{"item": item["id"]}]}),
    )
    .await;
    let page = order["payments"][0]["payment_url"]
        .as_str()
        .expect("payment url")
        .to_owned();
    let opened = http.get(&page).send().await.expect("payment page");
    let csrf = opened
        .headers()
        .get("set-cookie")
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.strip_prefix("tessera_csrf="))
        .and_then(|c| c.split(';').next())
        .expect("csrf cookie")
        .to_owned();
    let method = stripe.card("4242424242424242").await;
    let paid = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(&page)
        .header("Cookie", format!("tessera_csrf={csrf}"))
        .form(&[
            ("csrfmiddlewaretoken", csrf.as_str()),
            ("payment_method", &method),
        ])
        .send()
        .await
        .expect("pay");
    assert_eq!(paid.status().as_u16(), 303);
    let code = order["code"].as_str().expect("code");
    call(
        post,
        format!("{api}conf/orders/{code}/payments/1/refund/"),
        json!({"amount": "3.00"}),
    )
    .await;
    call(
        reqwest::Method::GET,
        format!("{api}conf/settings/?explain=true"),
        json!(null),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.log_text();
    assert!(log.contains("DEBUG"), "the log is at debug level");
    for secret in [SECRET_KEY, WEBHOOK_SECRET] {
        assert!(!log.contains(secret), "{secret} in the log");
    }
}
