//! Card payments against `localstripe`, a stateful stand-in for Stripe's API with signed
//! webhooks and a Stripe.js stand-in, which `.ci/setup` installs (pinned) into
//! `.ci/venv-stripe`. Each test starts its own on a free port and stops it when done.
//! Without it the tests that need it are skipped with one line, unless
//! `TESSERA_STRIPE_TESTS=required` (as `.ci/run` sets).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::TestApp;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tessera_plugin_stripe::{Stripe, StripeConfig};
use tokio::process::{Child, Command};

/// The test keys every event here uses.
pub const SECRET_KEY: &str = "sk_test_tessera4242";
/// Its publishable key.
pub const PUBLISHABLE_KEY: &str = "pk_test_tessera4242";
/// The webhook signing secret.
pub const WEBHOOK_SECRET: &str = "whsec_tessera_test";

/// A running localstripe, stopped when dropped.
pub struct LocalStripe {
    _child: Child,
    /// Its base URL.
    pub base: String,
    http: reqwest::Client,
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.ci/venv-stripe/bin/localstripe")
}

impl LocalStripe {
    /// Starts localstripe; `None` (said in one line) when it is not installed and not
    /// required.
    pub async fn start(test: &str) -> Option<Self> {
        if !binary().exists() {
            let required = std::env::var("TESSERA_STRIPE_TESTS").is_ok_and(|v| v == "required");
            assert!(
                !required,
                "TESSERA_STRIPE_TESTS=required, but localstripe is missing: run .ci/setup"
            );
            println!("skipped {test}: localstripe is missing (run .ci/setup)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new(binary())
            .args(["--port", &port.to_string(), "--from-scratch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start localstripe");
        let base = format!("http://localhost:{port}");
        let http = reqwest::Client::new();
        // Up to a minute: Python starts slowly while the whole suite runs beside it.
        for _ in 0..1200 {
            let up = http.get(format!("{base}/js.stripe.com/v3/")).send().await;
            if up.is_ok_and(|r| r.status().is_success()) {
                return Some(Self {
                    _child: child,
                    base,
                    http,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("localstripe did not start");
    }

    /// A card payment method, as Stripe.js would make it in the browser.
    pub async fn card(&self, number: &str) -> String {
        let v = self
            .post(
                "/v1/payment_methods",
                &[
                    ("type", "card"),
                    ("card[number]", number),
                    ("card[exp_month]", "12"),
                    ("card[exp_year]", "2030"),
                    ("card[cvc]", "123"),
                ],
            )
            .await;
        v["id"].as_str().expect("payment method").to_owned()
    }

    /// Sends Stripe's webhooks to `url`, signed with [`WEBHOOK_SECRET`].
    pub async fn send_webhooks_to(&self, url: &str) {
        let r = self
            .http
            .post(format!("{}/_config/webhooks/tessera", self.base))
            .form(&[("url", url), ("secret", WEBHOOK_SECRET)])
            .send()
            .await
            .expect("register webhook");
        assert!(r.status().is_success());
    }

    /// What the buyer's bank says to a 3-D Secure question (localstripe's own call).
    pub async fn authenticate(&self, client_secret: &str, success: bool) -> Value {
        let intent = client_secret.split("_secret_").next().expect("intent");
        let path = format!("/v1/payment_intents/{intent}/_authenticate?success={success}");
        self.post(&path, &[("client_secret", client_secret)]).await
    }

    /// A PaymentIntent for payment 1 of order `code` of `shop`/`conf`, paid (or declined)
    /// with `card` at Stripe directly, as when the payment page's answer was lost; gives its
    /// ID.
    pub async fn pay_directly(&self, code: &str, card: &str) -> String {
        let method = self.card(card).await;
        let made = self
            .post(
                "/v1/payment_intents",
                &[
                    ("amount", "2300"),
                    ("currency", "eur"),
                    ("payment_method", &method),
                    ("metadata[organizer]", "shop"),
                    ("metadata[event]", "conf"),
                    ("metadata[order]", code),
                    ("metadata[payment]", "1"),
                ],
            )
            .await;
        let id = made["id"].as_str().expect("intent").to_owned();
        // A decline is Stripe's error; the intent stands all the same.
        self.post(&format!("/v1/payment_intents/{id}/confirm"), &[])
            .await;
        id
    }

    /// Gives back `amount` cents of an intent's payment at Stripe directly (its dashboard).
    pub async fn refund_directly(&self, intent: &str, amount: i64) -> Value {
        let amount = amount.to_string();
        self.post(
            "/v1/refunds",
            &[("payment_intent", intent), ("amount", &amount)],
        )
        .await
    }

    /// Stripe's refunds of an intent.
    pub async fn refunds(&self, intent: &str) -> Vec<Value> {
        let v: Value = self
            .http
            .get(format!("{}/v1/refunds", self.base))
            .basic_auth(SECRET_KEY, Some(""))
            .query(&[("payment_intent", intent)])
            .send()
            .await
            .expect("refunds")
            .json()
            .await
            .expect("json");
        v["data"].as_array().cloned().unwrap_or_default()
    }

    /// Every PaymentIntent made.
    pub async fn intents(&self) -> Vec<Value> {
        let v: Value = self
            .http
            .get(format!("{}/v1/payment_intents", self.base))
            .basic_auth(SECRET_KEY, Some(""))
            .send()
            .await
            .expect("intents")
            .json()
            .await
            .expect("json");
        v["data"].as_array().cloned().unwrap_or_default()
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> Value {
        self.http
            .post(format!("{}{path}", self.base))
            .basic_auth(SECRET_KEY, Some(""))
            .form(form)
            .send()
            .await
            .expect("localstripe")
            .json()
            .await
            .expect("json")
    }
}

/// A server with the Stripe plugin reaching Stripe at `base`.
pub async fn stripe_app(base: &str) -> TestApp {
    TestApp::spawn_app(
        |c| {
            c.stripe_api_base = base.to_owned();
            c.stripe_js_url = format!("{base}/js.stripe.com/v3/");
        },
        |app| {
            let stripe = Stripe::new(StripeConfig {
                api_base: app.config().stripe_api_base.clone(),
                js_url: app.config().stripe_js_url.clone(),
            });
            app.plugin(stripe)
        },
    )
    .await
}

/// The event `shop/conf` taking cards through Stripe (test keys), a ticket at 23.00 and a
/// quota of 10; gives an all-permissions token.
pub async fn card_event(app: &TestApp) -> String {
    app.organizer("shop").await;
    let token = app.admin_token("shop").await;
    let events = "/api/v1/organizers/shop/events/";
    let r = app
        .post(
            events,
            &token,
            json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2027-06-01T09:00:00Z", "plugins": ["pretix.plugins.stripe"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let ev = format!("{events}conf/");
    let r = app
        .post(
            &format!("{ev}items/"),
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true, "active": true}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let item = r.body["id"].clone();
    let r = app
        .post(
            &format!("{ev}quotas/"),
            &token,
            json!({"name": "All", "size": 10, "items": [item]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = app
        .patch(
            &format!("{ev}settings/"),
            &token,
            json!({
                "payment_stripe__enabled": true,
                "payment_stripe_endpoint": "test",
                "payment_stripe_publishable_key": PUBLISHABLE_KEY,
                "payment_stripe_secret_key": SECRET_KEY,
                "payment_stripe_webhook_secret": WEBHOOK_SECRET,
            }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    token
}

/// An order of one ticket to pay by card; gives its code and the path of its payment page.
pub async fn card_order(app: &TestApp, token: &str) -> (String, String) {
    let r = app
        .post(
            "/api/v1/organizers/shop/events/conf/orders/",
            token,
            json!({"email": "buyer@example.org", "locale": "en", "payment_provider": "stripe",
                   "positions": [{"item": item_id(app, token).await}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let url = r.body["payments"][0]["payment_url"]
        .as_str()
        .expect("payment url");
    let path = url.trim_start_matches("http://tessera.test").to_owned();
    (r.body["code"].as_str().expect("code").to_owned(), path)
}

async fn item_id(app: &TestApp, token: &str) -> Value {
    let r = app
        .get("/api/v1/organizers/shop/events/conf/items/", token)
        .await;
    r.body["results"][0]["id"].clone()
}

/// The payment page, and the CSRF cookie its form goes with.
pub struct Page {
    /// The page's HTML.
    pub html: String,
    /// The `tessera_csrf` token.
    pub csrf: String,
}

/// Opens the payment page at `path`.
pub async fn open_page(app: &TestApp, path: &str) -> Page {
    let r = app
        .raw(poem::http::Method::GET, path, &[], Vec::new())
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let csrf = r
        .header("set-cookie")
        .and_then(|c| c.strip_prefix("tessera_csrf="))
        .and_then(|c| c.split(';').next())
        .expect("csrf cookie")
        .to_owned();
    Page {
        // Attributes as a browser reads them (the templates escape `/` too).
        html: String::from_utf8_lossy(&r.bytes).replace("&#x2f;", "/"),
        csrf,
    }
}

/// Posts the page's form with `fields`.
pub async fn post_page(
    app: &TestApp,
    path: &str,
    page: &Page,
    fields: &[(&str, &str)],
) -> crate::Reply {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("csrfmiddlewaretoken", &page.csrf);
    for (k, v) in fields {
        form.append_pair(k, v);
    }
    let cookie = format!("tessera_csrf={}", page.csrf);
    app.raw(
        poem::http::Method::POST,
        path,
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &cookie),
        ],
        form.finish().into_bytes(),
    )
    .await
}

/// A new card order of `app`'s event paid on its payment page with a good card; gives its
/// code and its PaymentIntent's ID.
pub async fn paid_card_order(app: &TestApp, token: &str, stripe: &LocalStripe) -> (String, String) {
    let (code, path) = card_order(app, token).await;
    let page = open_page(app, &path).await;
    let method = stripe.card("4242424242424242").await;
    let r = post_page(app, &path, &page, &[("payment_method", &method)]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let intent = order(app, token, &code).await["payments"][0]["details"]["id"]
        .as_str()
        .expect("intent")
        .to_owned();
    (code, intent)
}

/// The order as the API shows it.
pub async fn order(app: &TestApp, token: &str, code: &str) -> Value {
    let r = app
        .get(
            &format!("/api/v1/organizers/shop/events/conf/orders/{code}/"),
            token,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// A notice as Stripe signs it, at Unix time `t`, with `secret`.
pub fn signed(body: &str, t: i64, secret: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
    mac.update(format!("{t}.{body}").as_bytes());
    let sig: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={t},v1={sig}")
}

/// Posts a notice to `/_stripe/webhook/` with this `Stripe-Signature` (none when `None`).
pub async fn notify(app: &TestApp, body: &str, signature: Option<&str>) -> crate::Reply {
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(s) = signature {
        headers.push(("Stripe-Signature", s));
    }
    app.raw(
        poem::http::Method::POST,
        "/_stripe/webhook/",
        &headers,
        body.as_bytes().to_vec(),
    )
    .await
}
