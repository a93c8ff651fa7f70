//! Card payments through the `stripe` plugin: the payment page and its form, Stripe's signed
//! notices, refunds, and the plugin's settings. Against localstripe where Stripe must
//! answer (see `tessera_tests::stripe`); notices that Stripe would sign are signed here.

use std::time::Duration;

use serde_json::json;

use tessera_tests::stripe::{
    LocalStripe, PUBLISHABLE_KEY, SECRET_KEY, WEBHOOK_SECRET, card_event, card_order, notify,
    open_page, order, paid_card_order, post_page, signed, stripe_app,
};

const SETTINGS: &str = "/api/v1/organizers/shop/events/conf/settings/";

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A Stripe event of `kind` about the PaymentIntent `intent` of payment 1 of `code`, as
/// Stripe sends it (the service reads the intent itself from Stripe).
fn intent_event(id: &str, kind: &str, code: &str, intent: &str) -> String {
    json!({
        "id": id, "object": "event", "type": kind,
        "data": {"object": {
            "id": intent, "object": "payment_intent",
            "metadata": {"organizer": "shop", "event": "conf", "order": code, "payment": "1"}
        }}
    })
    .to_string()
}

#[tokio::test]
async fn a_card_entered_on_the_payment_page_pays_the_order_once_and_the_api_shows_the_card() {
    let Some(stripe) = LocalStripe::start("card payment").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, path) = card_order(&app, &token).await;
    let page = open_page(&app, &path).await;
    assert!(page.html.contains(PUBLISHABLE_KEY), "{}", page.html);
    assert!(
        page.html
            .contains(&format!("{}/js.stripe.com/v3/", stripe.base))
    );
    assert!(page.html.contains("Pay 23.00 EUR"));
    assert!(!page.html.contains(SECRET_KEY));
    let method = stripe.card("4242424242424242").await;
    let r = post_page(&app, &path, &page, &[("payment_method", &method)]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert!(r.header("location").is_some_and(|l| l.ends_with(&format!(
        "/order/{code}/{}/",
        path.split('/').nth(5).unwrap_or_default()
    ))));
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "p");
    let p = &o["payments"][0];
    assert_eq!(p["state"], "confirmed");
    assert_eq!(p["details"]["payment_method"], method.as_str());
    assert_eq!(p["details"]["last4"], "4242");
    assert_eq!(p["details"]["brand"], "visa");
    let intent = p["details"]["id"].as_str().expect("intent").to_owned();
    assert!(intent.starts_with("pi_"));
    assert!(!o.to_string().contains("_secret_"), "no client secret: {o}");
    // Sending the form again finds the payment paid and charges nothing more.
    let r = post_page(&app, &path, &page, &[("payment_method", &method)]).await;
    assert_eq!(r.status, 303);
    assert_eq!(stripe.intents().await.len(), 1);
}

#[tokio::test]
async fn a_form_sent_twice_at_once_makes_one_charge() {
    let Some(stripe) = LocalStripe::start("double submit").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, path) = card_order(&app, &token).await;
    let page = open_page(&app, &path).await;
    let (a, b) = (
        stripe.card("4242424242424242").await,
        stripe.card("4242424242424242").await,
    );
    let (fa, fb) = (
        [("payment_method", a.as_str())],
        [("payment_method", b.as_str())],
    );
    let (r1, r2) = tokio::join!(
        post_page(&app, &path, &page, &fa),
        post_page(&app, &path, &page, &fb),
    );
    let statuses = [r1.status, r2.status];
    assert!(statuses.contains(&303), "{statuses:?}");
    // The other one either waited its turn (and found the order paid) or was told the
    // payment is being processed.
    for r in [&r1, &r2] {
        if r.status == 200 {
            assert!(String::from_utf8_lossy(&r.bytes).contains("being processed"));
            assert_eq!(r.header("refresh"), Some("3"));
        }
    }
    assert_eq!(stripe.intents().await.len(), 1);
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "p");
    assert_eq!(o["payments"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_declined_card_shows_why_and_the_order_stays_pending_for_another_card() {
    let Some(stripe) = LocalStripe::start("declined card").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, path) = card_order(&app, &token).await;
    let page = open_page(&app, &path).await;
    let declined = stripe.card("4000000000000341").await;
    let r = post_page(&app, &path, &page, &[("payment_method", &declined)]).await;
    assert_eq!(r.status, 200);
    let html = String::from_utf8_lossy(&r.bytes);
    assert!(html.contains("Your card was declined."), "{html}");
    assert!(
        html.contains("id=\"stripe-form\""),
        "the form is offered again"
    );
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "n");
    assert_eq!(o["payments"][0]["state"], "created");
    let good = stripe.card("4242424242424242").await;
    let r = post_page(&app, &path, &page, &[("payment_method", &good)]).await;
    assert_eq!(r.status, 303);
    assert_eq!(order(&app, &token, &code).await["status"], "p");
}

#[tokio::test]
async fn a_card_that_asks_the_bank_is_paid_by_stripes_signed_notice() {
    let Some(stripe) = LocalStripe::start("3-D Secure").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let base = app.serve().await;
    stripe
        .send_webhooks_to(&format!("{base}/_stripe/webhook/"))
        .await;
    let token = card_event(&app).await;
    let (code, path) = card_order(&app, &token).await;
    let page = open_page(&app, &path).await;
    let method = stripe.card("4000002500003155").await;
    let r = post_page(&app, &path, &page, &[("payment_method", &method)]).await;
    assert_eq!(r.status, 200);
    let html = String::from_utf8_lossy(&r.bytes).into_owned();
    let secret = html
        .split("data-action=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the page asks the bank");
    assert_eq!(order(&app, &token, &code).await["status"], "n");
    // The API never shows the client secret.
    assert!(
        !order(&app, &token, &code)
            .await
            .to_string()
            .contains(secret)
    );
    let answered = stripe.authenticate(secret, true).await;
    assert_eq!(answered["status"], "succeeded");
    let mut paid = false;
    for _ in 0..100 {
        if order(&app, &token, &code).await["status"] == "p" {
            paid = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(paid, "the notice paid the order");
    // The page's own look afterwards finds it paid: no second confirmation.
    let page = open_page(&app, &path).await;
    let r = post_page(&app, &path, &page, &[("check", "1")]).await;
    assert_eq!(r.status, 303);
    let o = order(&app, &token, &code).await;
    assert_eq!(o["payments"].as_array().map(Vec::len), Some(1));
    assert_eq!(o["payments"][0]["state"], "confirmed");
}

#[tokio::test]
async fn notices_without_a_valid_recent_signature_are_refused_and_change_nothing() {
    let app = stripe_app("http://127.0.0.1:9").await;
    let token = card_event(&app).await;
    let (code, _) = card_order(&app, &token).await;
    let body = intent_event("evt_1", "payment_intent.succeeded", &code, "pi_1");
    for (signature, why) in [
        (None, "not signed"),
        (Some(signed(&body, now(), "whsec_wrong")), "does not match"),
        (Some(signed(&body, now() - 301, WEBHOOK_SECRET)), "too old"),
        (Some("t=1,v0=abc".to_owned()), "no v1"),
        (Some(signed("{}", now(), WEBHOOK_SECRET)), "does not match"),
    ] {
        let r = notify(&app, &body, signature.as_deref()).await;
        assert_eq!(r.status, 400, "{signature:?}");
        assert!(
            r.body.as_str().is_some_and(|b| b.contains(why)),
            "{}",
            r.body
        );
    }
    let unknown = intent_event("evt_2", "payment_intent.succeeded", "ZZZZZ", "pi_1");
    let r = notify(
        &app,
        &unknown,
        Some(&signed(&unknown, now(), WEBHOOK_SECRET)),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = notify(&app, "not json", None).await;
    assert_eq!(r.status, 400);
    let nul = intent_event("evt_3", "payment_intent.succeeded", "AB\u{0}", "pi_1");
    let r = notify(&app, &nul, None).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(order(&app, &token, &code).await["status"], "n");
}

#[tokio::test]
async fn a_signed_notice_is_acted_on_once_however_often_it_arrives() {
    let Some(stripe) = LocalStripe::start("notices once").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, _) = card_order(&app, &token).await;
    // The buyer's attempts reached Stripe, but the page's answers were lost.
    let declined = stripe.pay_directly(&code, "4000000000000341").await;
    let failed = intent_event("evt_f", "payment_intent.payment_failed", &code, &declined);
    let r = notify(&app, &failed, Some(&signed(&failed, now(), WEBHOOK_SECRET))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "n", "a failed attempt leaves the order open");
    assert_eq!(o["payments"][0]["state"], "created");
    assert_eq!(o["payments"][0]["details"]["id"], declined.as_str());
    let paid = stripe.pay_directly(&code, "4242424242424242").await;
    let body = intent_event("evt_s", "payment_intent.succeeded", &code, &paid);
    let signature = signed(&body, now(), WEBHOOK_SECRET);
    let (a, b) = tokio::join!(
        notify(&app, &body, Some(&signature)),
        notify(&app, &body, Some(&signature))
    );
    assert_eq!((a.status, b.status), (200, 200));
    let said = [a.body.as_str(), b.body.as_str()];
    assert!(said.contains(&Some("Acted on before.")), "{said:?}");
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "p");
    assert_eq!(o["payments"].as_array().map(Vec::len), Some(1));
    assert_eq!(o["payments"][0]["details"]["id"], paid.as_str());
    assert_eq!(o["payments"][0]["details"]["last4"], "4242");
    // Later events about the declined attempt find the payment paid.
    let late = intent_event(
        "evt_late",
        "payment_intent.payment_failed",
        &code,
        &declined,
    );
    let r = notify(&app, &late, Some(&signed(&late, now(), WEBHOOK_SECRET))).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        order(&app, &token, &code).await["payments"][0]["state"],
        "confirmed"
    );
}

#[tokio::test]
async fn a_notice_tells_what_stripe_says_not_what_the_notice_says() {
    let Some(stripe) = LocalStripe::start("notice read at stripe").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, _) = card_order(&app, &token).await;
    let declined = stripe.pay_directly(&code, "4000000000000341").await;
    // Signed, but the intent it names was not paid: Stripe's word counts.
    let forged = intent_event("evt_x", "payment_intent.succeeded", &code, &declined);
    let r = notify(&app, &forged, Some(&signed(&forged, now(), WEBHOOK_SECRET))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(order(&app, &token, &code).await["status"], "n");
    let unknown = intent_event("evt_y", "payment_intent.succeeded", &code, "pi_unknown");
    let r = notify(
        &app,
        &unknown,
        Some(&signed(&unknown, now(), WEBHOOK_SECRET)),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(order(&app, &token, &code).await["status"], "n");
}

#[tokio::test]
async fn money_arriving_twice_for_a_payment_is_recorded_as_a_second_payment() {
    let Some(stripe) = LocalStripe::start("second intent").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, _) = paid_card_order(&app, &token, &stripe).await;
    let again = stripe.pay_directly(&code, "4242424242424242").await;
    let body = intent_event("evt_2nd", "payment_intent.succeeded", &code, &again);
    for _ in 0..2 {
        let r = notify(&app, &body, Some(&signed(&body, now(), WEBHOOK_SECRET))).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let o = order(&app, &token, &code).await;
    assert_eq!(o["status"], "p");
    let payments = o["payments"].as_array().expect("payments");
    assert_eq!(payments.len(), 2, "{o}");
    assert_eq!(payments[1]["state"], "confirmed");
    assert_eq!(payments[1]["amount"], "23.00");
    assert_eq!(payments[1]["provider"], "stripe");
    assert_eq!(payments[1]["details"]["id"], again.as_str());
    // The organizer gives the second one back.
    let r = app
        .post(
            &format!("/api/v1/organizers/shop/events/conf/orders/{code}/payments/2/refund/"),
            &token,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(stripe.refunds(&again).await.len(), 1);
    assert_eq!(order(&app, &token, &code).await["status"], "p");
}

#[tokio::test]
async fn refunds_through_the_api_reach_stripe_in_part_and_in_full() {
    let Some(stripe) = LocalStripe::start("refunds").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, intent) = paid_card_order(&app, &token, &stripe).await;
    let refund = format!("/api/v1/organizers/shop/events/conf/orders/{code}/payments/1/refund/");
    let r = app.post(&refund, &token, json!({"amount": "5.00"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["state"], "done");
    assert_eq!(r.body["provider"], "stripe");
    let at_stripe = stripe.refunds(&intent).await;
    assert_eq!(at_stripe.len(), 1);
    assert_eq!(at_stripe[0]["amount"], 500);
    assert_eq!(r.body["details"]["id"], at_stripe[0]["id"]);
    assert_eq!(
        order(&app, &token, &code).await["payments"][0]["state"],
        "confirmed"
    );
    let r = app.post(&refund, &token, json!({"amount": "20.00"})).await;
    assert_eq!(r.status, 400, "more than is left");
    let r = app.post(&refund, &token, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["amount"], "18.00");
    assert_eq!(stripe.refunds(&intent).await.len(), 2);
    let o = order(&app, &token, &code).await;
    assert_eq!(o["payments"][0]["state"], "refunded");
    let r = app
        .get(
            &format!("/api/v1/organizers/shop/events/conf/orders/{code}/refunds/"),
            &token,
        )
        .await;
    assert_eq!(r.body["count"], 2);

    // A refund Stripe cannot make is recorded as failed, as in pretix, and gives nothing
    // back.
    let (other, _) = card_order(&app, &token).await;
    let payments = format!("/api/v1/organizers/shop/events/conf/orders/{other}/payments/");
    let r = app
        .post(
            &payments,
            &token,
            json!({"state": "confirmed", "amount": "23.00", "provider": "stripe", "send_email": false}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = app
        .post(&format!("{payments}2/refund/"), &token, json!({}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "External error: This payment was not made through Stripe."
    );
    let o = order(&app, &token, &other).await;
    assert_eq!(o["payments"][1]["state"], "confirmed");
    assert_eq!(o["refunds"][0]["state"], "failed", "{o}");
}

#[tokio::test]
async fn a_refund_made_at_stripe_is_recorded_once_as_external() {
    let Some(stripe) = LocalStripe::start("refund at stripe").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, intent) = paid_card_order(&app, &token, &stripe).await;
    let made = stripe.refund_directly(&intent, 700).await;
    assert_eq!(made["status"], "succeeded", "{made}");
    // Since API version 2022-11-15 a charge carries no list of its refunds: the service
    // asks Stripe for them.
    let refunded = |id: &str| {
        json!({
            "id": id, "object": "event", "type": "charge.refunded",
            "data": {"object": {
                "id": "ch_1", "object": "charge", "payment_intent": intent,
                "metadata": {"organizer": "shop", "event": "conf", "order": code, "payment": "1"}
            }}
        })
        .to_string()
    };
    for id in ["evt_r1", "evt_r2"] {
        let body = refunded(id);
        let r = notify(&app, &body, Some(&signed(&body, now(), WEBHOOK_SECRET))).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let r = app
        .get(
            &format!("/api/v1/organizers/shop/events/conf/orders/{code}/refunds/"),
            &token,
        )
        .await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let refund = &r.body["results"][0];
    assert_eq!(refund["state"], "external");
    assert_eq!(refund["source"], "external");
    assert_eq!(refund["amount"], "7.00");
    assert_eq!(refund["details"]["id"], made["id"]);
}

#[tokio::test]
async fn stripe_settings_are_checked_and_keys_are_never_shown() {
    let app = stripe_app("http://127.0.0.1:9").await;
    let token = card_event(&app).await;
    for (key, value) in [
        ("payment_stripe_secret_key", json!(PUBLISHABLE_KEY)),
        ("payment_stripe_publishable_key", json!(SECRET_KEY)),
        ("payment_stripe_webhook_secret", json!("sk_test_x")),
        ("payment_stripe_endpoint", json!("sandbox")),
        ("payment_stripe_postfix", json!("<script>")),
        ("payment_stripe__fee_abs", json!("1.234")),
        ("payment_stripe__fee_percent", json!("-3")),
    ] {
        let r = app.patch(SETTINGS, &token, json!({key: value})).await;
        assert_eq!(r.status, 400, "{key}: {}", r.body);
        assert!(r.body.get(key).is_some(), "{}", r.body);
    }
    let r = app.get(SETTINGS, &token).await;
    assert_eq!(r.body["payment_stripe_secret_key"], "********");
    assert_eq!(r.body["payment_stripe_webhook_secret"], "********");
    assert_eq!(r.body["payment_stripe_publishable_key"], PUBLISHABLE_KEY);
    let all = r.body.to_string();
    assert!(!all.contains(SECRET_KEY) && !all.contains(WEBHOOK_SECRET));
    let r = app.get(&format!("{SETTINGS}?explain=true"), &token).await;
    assert_eq!(r.body["payment_stripe_secret_key"]["is_set"], true);
    assert_eq!(r.body["payment_stripe_secret_key"]["value"], "********");
    // Sending the settings back as read keeps the keys.
    let r = app
        .patch(
            SETTINGS,
            &token,
            json!({"payment_stripe_secret_key": "********", "payment_stripe_postfix": "CONF"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.body.to_string().contains(SECRET_KEY));
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use tessera::db::entities::setting;
    let stored = setting::Entity::find()
        .filter(setting::Column::Key.eq("payment_stripe_secret_key"))
        .one(&app.db)
        .await
        .expect("query")
        .expect("stored")
        .value;
    assert_eq!(stored, SECRET_KEY);
    // Live keys on the test endpoint take no orders.
    let r = app
        .patch(SETTINGS, &token, json!({"payment_stripe_endpoint": "live"}))
        .await;
    assert_eq!(r.status, 200);
    let r = app
        .post(
            "/api/v1/organizers/shop/events/conf/orders/",
            &token,
            json!({"email": "b@example.org", "payment_provider": "stripe",
                   "positions": [{"item": app.get("/api/v1/organizers/shop/events/conf/items/", &token).await.body["results"][0]["id"]}]}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn payments_are_recorded_and_canceled_through_the_api_as_in_pretix() {
    let Some(stripe) = LocalStripe::start("payments API").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let (code, path) = card_order(&app, &token).await;
    let payments = format!("/api/v1/organizers/shop/events/conf/orders/{code}/payments/");
    // A card that asks the bank leaves an open intent at Stripe; canceling the payment
    // cancels the intent.
    let page = open_page(&app, &path).await;
    let method = stripe.card("4000002500003155").await;
    assert_eq!(
        post_page(&app, &path, &page, &[("payment_method", &method)])
            .await
            .status,
        200
    );
    let r = app
        .post(&format!("{payments}1/cancel/"), &token, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["state"], "canceled");
    let intents = stripe.intents().await;
    assert_eq!(intents.len(), 1);
    assert_eq!(intents[0]["status"], "canceled");
    let r = app
        .post(&format!("{payments}1/cancel/"), &token, json!({}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["detail"], "Invalid state of payment");
    // The page of a canceled payment offers no form.
    let r = app
        .raw(poem::http::Method::GET, &path, &[], Vec::new())
        .await;
    assert!(!String::from_utf8_lossy(&r.bytes).contains("stripe-form"));

    let r = app
        .post(
            &payments,
            &token,
            json!({"state": "created", "amount": "23.00", "provider": "stripe"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["local_id"], 2);
    let page_path = r.body["payment_url"]
        .as_str()
        .expect("payment url")
        .trim_start_matches("http://tessera.test")
        .to_owned();
    let page = open_page(&app, &page_path).await;
    let good = stripe.card("4242424242424242").await;
    assert_eq!(
        post_page(&app, &page_path, &page, &[("payment_method", &good)])
            .await
            .status,
        303
    );
    assert_eq!(order(&app, &token, &code).await["status"], "p");

    let r = app
        .post(
            &payments,
            &token,
            json!({"state": "paid", "amount": "1.00", "provider": "manual"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body.get("state").is_some(), "{}", r.body);
    let nul = json!({"state": "created", "amount": "1.00", "provider": "manual",
                     "info": {"a": ["x\u{0}"]}});
    let r = app.post(&payments, &token, nul).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.get("info").is_some(), "{}", r.body);
    let (other, _) = card_order(&app, &token).await;
    let r = app
        .post(
            &format!("/api/v1/organizers/shop/events/conf/orders/{other}/payments/"),
            &token,
            json!({"state": "confirmed", "amount": "23.00", "provider": "manual", "info": {"note": "cash"},
                   "send_email": false}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["state"], "confirmed");
    assert_eq!(r.body["details"]["note"], "cash");
    let o = order(&app, &token, &other).await;
    assert_eq!(o["status"], "p");
    assert_eq!(
        o["payments"][0]["state"], "created",
        "the card payment stays open"
    );

    // A canceled order takes no card.
    let (canceled, path) = card_order(&app, &token).await;
    let page = open_page(&app, &path).await;
    let cancel = format!("/api/v1/organizers/shop/events/conf/orders/{canceled}/mark_canceled/");
    let r = app.post(&cancel, &token, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let card = stripe.card("4242424242424242").await;
    let before = stripe.intents().await.len();
    let r = post_page(&app, &path, &page, &[("payment_method", &card)]).await;
    assert!(r.status == 303 || !String::from_utf8_lossy(&r.bytes).contains("stripe-form"));
    assert_eq!(stripe.intents().await.len(), before, "nothing was charged");
}

#[tokio::test]
async fn a_buyer_who_cancels_a_card_paid_order_gets_the_rest_back_on_the_card() {
    let Some(stripe) = LocalStripe::start("self-service refund").await else {
        return;
    };
    let app = stripe_app(&stripe.base).await;
    let token = card_event(&app).await;
    let r = app
        .patch(
            SETTINGS,
            &token,
            json!({"cancel_allow_user_paid": true, "cancel_allow_user_paid_keep": "3.00"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    app.state.cache.refresh().await;
    let (code, intent) = paid_card_order(&app, &token, &stripe).await;
    let url = order(&app, &token, &code).await["url"]
        .as_str()
        .expect("url")
        .to_owned();
    let page = url
        .strip_prefix("http://tessera.test")
        .expect("a page")
        .trim_end_matches('/')
        .to_owned();
    let mut browser = crate::browser_support::Browser::new(&app);
    let form = browser.get(&format!("{page}/cancel")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let csrf = crate::browser_support::csrf_field(crate::browser_support::html(&form));
    let r = browser
        .post(
            &format!("{page}/cancel/do"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(
        r.header("location"),
        Some(format!("{page}/?canceled=1").as_str())
    );
    let at_stripe = stripe.refunds(&intent).await;
    assert_eq!(at_stripe.len(), 1);
    assert_eq!(at_stripe[0]["amount"], 2000);
    let o = order(&app, &token, &code).await;
    assert_eq!(o["total"], "3.00");
    assert_eq!(o["refunds"][0]["provider"], "stripe");
    assert_eq!(o["refunds"][0]["source"], "buyer");
    assert_eq!(o["refunds"][0]["state"], "done");
}
