//! Webhook calls delivered by real `tessera serve` processes on one database (SQLite, or
//! PostgreSQL when `TESSERA_TEST_DATABASE_URL` is set): with two nodes delivering, each call
//! reaches the receiver once; with the receiver failing and every node killed, the calls
//! wait in the database and are delivered once a node is back.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use poem::http::StatusCode;
use poem::listener::TcpListener;
use poem::{EndpointExt, Route, handler};
use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{Server, free_port, organizer_with_admin_token};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const EVENT: &str = "/api/v1/organizers/acme/events/conf";
const ORDERS: usize = 20;

/// The receiver: how often each notification arrived while it answered 200, and whether
/// it answers 503 for now.
#[derive(Clone, Default)]
struct Receiver {
    delivered: Arc<Mutex<HashMap<i64, usize>>>,
    refused: Arc<Mutex<usize>>,
    failing: Arc<Mutex<bool>>,
}

#[handler]
fn receive(body: Vec<u8>, r: poem::web::Data<&Receiver>) -> StatusCode {
    if *r.failing.lock().expect("failing") {
        *r.refused.lock().expect("refused") += 1;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = payload["notification_id"].as_i64().unwrap_or(-1);
    *r.delivered
        .lock()
        .expect("delivered")
        .entry(id)
        .or_default() += 1;
    StatusCode::OK
}

impl Receiver {
    async fn start(&self) -> String {
        let port = free_port();
        let app = Route::new()
            .at("/hook", poem::post(receive))
            .data(self.clone());
        tokio::spawn(poem::Server::new(TcpListener::bind(format!("127.0.0.1:{port}"))).run(app));
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        format!("http://127.0.0.1:{port}/hook")
    }

    fn delivered(&self) -> HashMap<i64, usize> {
        self.delivered.lock().expect("delivered").clone()
    }

    /// Waits until `n` notifications arrived (at most 40 s), then a little longer for
    /// any that would arrive twice.
    async fn wait_for(&self, n: usize) -> HashMap<i64, usize> {
        let started = Instant::now();
        while self.delivered().len() < n && started.elapsed() < Duration::from_secs(40) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        self.delivered()
    }
}

async fn post(client: &reqwest::Client, url: &str, auth: &str, body: &Value) -> Value {
    let r = client
        .post(url)
        .header("Authorization", auth)
        .json(body)
        .send()
        .await
        .expect("post");
    let status = r.status().as_u16();
    let answer: Value = r.json().await.unwrap_or(Value::Null);
    assert!((200..300).contains(&status), "{url}: {status} {answer}");
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_deliver_each_call_once_and_calls_wait_through_a_restart() {
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let mut nodes = [
        Server::new_logging_aside(bin, &db.url),
        Server::new_logging_aside(bin, &db.url),
    ];
    for node in &mut nodes {
        node.env("TESSERA_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "true");
        node.start().await;
    }
    let (a, b) = (nodes[0].base(), nodes[1].base());
    let client = reqwest::Client::new();
    let receiver = Receiver::default();
    let target = receiver.start().await;
    post(
        &client,
        &format!("{a}/api/v1/organizers/acme/webhooks/"),
        &auth,
        &json!({"target_url": target, "action_types": ["pretix.event.order.placed"]}),
    )
    .await;
    post(
        &client,
        &format!("{a}/api/v1/organizers/acme/events/"),
        &auth,
        &json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                "date_from": "2030-06-01T09:00:00Z"}),
    )
    .await;
    let item = post(
        &client,
        &format!("{b}{EVENT}/items/"),
        &auth,
        &json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
    )
    .await;
    post(
        &client,
        &format!("{a}{EVENT}/quotas/"),
        &auth,
        &json!({"name": "Hall", "size": null, "items": [item["id"]]}),
    )
    .await;
    let order = |base: &str, n: usize| {
        let url = format!("{base}{EVENT}/orders/");
        let body = json!({"email": format!("guest{n}@example.org"),
                          "positions": [{"item": item["id"]}]});
        let (client, auth) = (client.clone(), auth.clone());
        async move { post(&client, &url, &auth, &body).await }
    };

    for n in 0..ORDERS {
        let base = if n % 2 == 0 { &a } else { &b };
        order(base, n).await;
    }
    let delivered = receiver.wait_for(ORDERS).await;
    assert_eq!(delivered.len(), ORDERS, "every order told: {delivered:?}");
    assert!(
        delivered.values().all(|&n| n == 1),
        "each call delivered once: {delivered:?}"
    );

    *receiver.failing.lock().expect("failing") = true;
    for n in 0..ORDERS {
        order(&a, ORDERS + n).await;
    }
    let started = Instant::now();
    while *receiver.refused.lock().expect("refused") < ORDERS
        && started.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for node in &mut nodes {
        node.kill();
    }
    *receiver.failing.lock().expect("failing") = false;
    assert_eq!(
        receiver.delivered().len(),
        ORDERS,
        "nothing more while failing"
    );
    nodes[1].start().await;
    let delivered = receiver.wait_for(2 * ORDERS).await;
    assert_eq!(
        delivered.len(),
        2 * ORDERS,
        "the waiting calls are delivered after the restart: {delivered:?}"
    );
    assert!(delivered.values().all(|&n| n == 1), "{delivered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_reaches_nobody_is_logged_with_its_target_and_cause_and_shown_in_calls() {
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let mut node = Server::new_logging_aside(bin, &db.url);
    node.env("TESSERA_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "true");
    node.start().await;
    let base = node.base();
    let client = reqwest::Client::new();
    // Nothing listens there; the path and query may carry a token and stay out of the log.
    let target = format!("http://127.0.0.1:{}/hook", free_port());
    let hook = post(
        &client,
        &format!("{base}/api/v1/organizers/acme/webhooks/"),
        &auth,
        &json!({"target_url": format!("{target}?token=s3cr3t-in-query"),
                "action_types": ["pretix.event.order.placed"]}),
    )
    .await;
    post(
        &client,
        &format!("{base}/api/v1/organizers/acme/events/"),
        &auth,
        &json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                "date_from": "2030-06-01T09:00:00Z"}),
    )
    .await;
    let item = post(
        &client,
        &format!("{base}{EVENT}/items/"),
        &auth,
        &json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
    )
    .await;
    post(
        &client,
        &format!("{base}{EVENT}/quotas/"),
        &auth,
        &json!({"name": "Hall", "size": null, "items": [item["id"]]}),
    )
    .await;
    post(
        &client,
        &format!("{base}{EVENT}/orders/"),
        &auth,
        &json!({"email": "guest@example.org", "positions": [{"item": item["id"]}]}),
    )
    .await;

    let calls = format!(
        "{base}/api/v1/organizers/acme/webhooks/{}/calls/",
        hook["id"]
    );
    let started = Instant::now();
    let call = loop {
        let page: Value = client
            .get(&calls)
            .header("Authorization", &auth)
            .send()
            .await
            .expect("calls")
            .json()
            .await
            .expect("json");
        let first = page["results"][0].clone();
        if !first["last_attempt"].is_null() || started.elapsed() > Duration::from_secs(20) {
            break first;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(call["return_code"], Value::Null, "{call}");
    let error = call["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("Connection refused"),
        "the error names the cause: {call}"
    );
    assert_eq!(call["state"], "pending", "it is tried again: {call}");

    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = node.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("webhook delivery failed"))
        .unwrap_or_else(|| panic!("no failure in the log:\n{log}"));
    let origin = target.strip_suffix("/hook").expect("origin");
    assert!(
        line.contains(&format!("target={origin} ")),
        "the target: {line}"
    );
    assert!(!log.contains("/hook"), "no path in the log:\n{log}");
    assert!(line.contains("Connection refused"), "the cause: {line}");
    assert!(
        !log.contains("s3cr3t-in-query"),
        "no query in the log:\n{log}"
    );
    assert!(!log.contains('\u{1b}'), "no colour codes in a file:\n{log}");
}
