//! What an operator runs the service with: the probes `/healthz` and `/readyz`, and the
//! Prometheus metrics at `/metrics`, reachable only where the configuration says.

use poem::http::Method;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::json;
use tessera::domain::mail::{self, Mail};
use tessera_tests::{Reply, TestApp};

const TOKEN: &str = "a-long-random-metrics-token";

async fn get(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> Reply {
    app.raw(Method::GET, path, headers, Vec::new()).await
}

/// `/metrics` with the right token.
async fn scrape(app: &TestApp) -> String {
    let auth = format!("Bearer {TOKEN}");
    let r = get(app, "/metrics", &[("Authorization", &auth)]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/plain"))
    );
    r.body.as_str().expect("text").to_owned()
}

/// The value of the sample of `name` whose labels include `labels`, if there is one.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, set) = match series.split_once('{') {
                Some((metric, rest)) => (metric, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            let has = |(k, v): &(&str, &str)| {
                set.split("\",")
                    .any(|pair| pair.trim_end_matches('"') == format!("{k}=\"{v}"))
            };
            (metric == name && labels.iter().all(has)).then(|| value.parse().ok())?
        })
}

async fn execute(app: &TestApp, sql: &str) {
    app.db
        .execute_raw(Statement::from_string(app.db.get_database_backend(), sql))
        .await
        .expect(sql);
}

fn free_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    format!(
        "127.0.0.1:{}",
        listener.local_addr().expect("address").port()
    )
}

#[tokio::test]
async fn healthz_answers_ok_without_touching_the_database() {
    let app = TestApp::spawn().await;
    app.db.close_by_ref().await.expect("close the pool");
    let r = get(&app, "/healthz", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!({"status": "ok"}));
    assert_eq!(get(&app, "/healthz/", &[]).await.status, 200);
}

#[tokio::test]
async fn readyz_answers_ok_on_a_migrated_database() {
    let app = TestApp::spawn().await;
    let r = get(&app, "/readyz", &[]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, json!({"status": "ok"}));
}

#[tokio::test]
async fn readyz_answers_503_when_the_database_does_not_answer() {
    let app = TestApp::spawn().await;
    app.db.close_by_ref().await.expect("close the pool");
    let r = get(&app, "/readyz", &[]).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.body, json!({"detail": "The database does not answer."}));
}

#[tokio::test]
async fn readyz_answers_503_naming_a_migration_that_is_not_applied() {
    let app = TestApp::spawn().await;
    let backend = app.db.get_database_backend();
    let last = app
        .db
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT version FROM seaql_migrations ORDER BY version DESC LIMIT 1",
        ))
        .await
        .expect("query")
        .expect("a migration")
        .try_get::<String>("", "version")
        .expect("version");
    execute(
        &app,
        &format!("DELETE FROM seaql_migrations WHERE version = '{last}'"),
    )
    .await;
    let r = get(&app, "/readyz", &[]).await;
    assert_eq!(r.status, 503);
    let detail = r.body["detail"].as_str().expect("detail");
    assert!(detail.contains(&last), "{detail}");
    assert!(detail.contains("tessera migrate"), "{detail}");
}

#[tokio::test]
async fn probes_are_never_rate_limited() {
    let app = TestApp::spawn_with(|c| c.anonymous_rate_limit_per_minute = Some(2)).await;
    let base = app.serve().await;
    let client = reqwest::Client::new();
    for _ in 0..5 {
        for probe in ["/healthz", "/readyz"] {
            let r = client
                .get(format!("{base}{probe}"))
                .send()
                .await
                .expect("probe");
            assert_eq!(r.status().as_u16(), 200, "{probe}");
        }
    }
    // The anonymous limit is in force for everything else from that address.
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let r = client
            .get(format!("{base}/api/v1/organizers/"))
            .send()
            .await
            .expect("request");
        statuses.push(r.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 429]);
}

#[tokio::test]
async fn probes_and_metrics_are_not_in_the_api_document() {
    let app = TestApp::spawn().await;
    let doc = tessera::openapi_document(app.plugins());
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.keys().all(|p| {
        !["healthz", "readyz", "metrics"]
            .iter()
            .any(|n| p.contains(n))
    }));
}

#[tokio::test]
async fn metrics_are_not_served_without_configuration() {
    let app = TestApp::spawn().await;
    let r = get(&app, "/metrics", &[]).await;
    assert_eq!(r.status, 404);
    let r = get(&app, "/metrics", &[("Authorization", "Bearer anything")]).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn metrics_ask_for_the_configured_token() {
    let app = TestApp::spawn_with(|c| c.metrics_token = Some(TOKEN.into())).await;
    let r = get(&app, "/metrics", &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some("Bearer realm=\"metrics\"")
    );
    for wrong in [
        "Bearer wrong".to_owned(),
        format!("Bearer {TOKEN}x"),
        format!("Token {TOKEN}"),
    ] {
        let r = get(&app, "/metrics", &[("Authorization", &wrong)]).await;
        assert_eq!(r.status, 401, "{wrong}");
        assert!(r.body["detail"].is_string(), "{wrong}");
    }
    let r = app
        .raw(
            Method::POST,
            "/metrics",
            &[("Authorization", &format!("Bearer {TOKEN}"))],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 405);
    assert!(
        scrape(&app)
            .await
            .contains("# TYPE http_requests_total counter")
    );
}

#[tokio::test]
async fn metrics_count_a_request_under_its_route_template_with_its_status() {
    let app = TestApp::spawn_with(|c| c.metrics_token = Some(TOKEN.into())).await;
    app.organizer("metricsorg").await;
    let token = app.admin_token("metricsorg").await;
    let card = app
        .post(
            "/api/v1/organizers/metricsorg/giftcards/",
            &token,
            json!({"value": "5.00", "currency": "EUR", "secret": "SECRETCARD4711"}),
        )
        .await;
    assert_eq!(card.status, 201, "{}", card.body);
    let id = card.body["id"].as_i64().expect("id");
    let path = format!("/api/v1/organizers/metricsorg/giftcards/{id}/");
    assert_eq!(app.get(&path, &token).await.status, 200);
    assert_eq!(app.get(&path, "not-a-token").await.status, 401);
    assert_eq!(get(&app, "/no/such/thing/here", &[]).await.status, 404);

    let text = scrape(&app).await;
    let route = "/api/v1/organizers/{organizer}/giftcards/{id}/";
    let count = |method: &str, status: &str| {
        sample(
            &text,
            "http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert!(count("GET", "200").is_some_and(|n| n >= 1.0), "{text}");
    assert!(count("GET", "401").is_some_and(|n| n >= 1.0), "{text}");
    assert!(
        sample(
            &text,
            "http_requests_total",
            &[
                ("route", "/api/v1/organizers/{organizer}/giftcards/"),
                ("method", "POST"),
                ("status", "201"),
            ],
        )
        .is_some()
    );
    assert!(
        sample(
            &text,
            "http_requests_total",
            &[("route", "unmatched"), ("method", "GET"), ("status", "404")],
        )
        .is_some()
    );
    assert!(
        sample(
            &text,
            "http_request_duration_seconds_count",
            &[("route", route), ("method", "GET")],
        )
        .is_some_and(|n| n >= 2.0)
    );
    assert!(
        sample(
            &text,
            "http_request_duration_seconds_bucket",
            &[("route", route), ("method", "GET"), ("le", "+Inf")],
        )
        .is_some()
    );
    // Never a raw path: no slug, no ID-bearing path, no secret.
    assert!(!text.contains("metricsorg"));
    assert!(!text.contains("SECRETCARD4711"));
    assert!(!text.contains("/no/such"));
}

#[tokio::test]
async fn metrics_show_the_outbox_depth_and_the_database_pool() {
    let app = TestApp::spawn_with(|c| c.metrics_token = Some(TOKEN.into())).await;
    for to in ["a@example.org", "b@example.org", "c@example.org"] {
        mail::queue(&app.db, Mail::text(to, "Hello", "Body"))
            .await
            .expect("queue");
    }
    execute(
        &app,
        "UPDATE outbox_mails SET state = 'failed' WHERE to_address = 'c@example.org'",
    )
    .await;
    let text = scrape(&app).await;
    assert_eq!(
        sample(&text, "outbox_mails", &[("state", "queued")]),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "outbox_mails", &[("state", "failed")]),
        Some(1.0)
    );
    assert_eq!(sample(&text, "db_pool_max_connections", &[]), Some(8.0));
    let in_use = sample(&text, "db_pool_connections", &[("state", "in_use")]).expect("in use");
    let idle = sample(&text, "db_pool_connections", &[("state", "idle")]).expect("idle");
    assert!(in_use + idle >= 1.0 && in_use + idle <= 8.0, "{text}");
}

#[tokio::test]
async fn metrics_show_the_waits_for_write_transactions_and_quota_locks() {
    let app = TestApp::spawn_with(|c| c.metrics_token = Some(TOKEN.into())).await;
    let txn = tessera::db::begin_write(&app.db).await.expect("begin");
    tessera::domain::availability::lock_quotas(&txn, &[1])
        .await
        .expect("lock");
    drop(txn);
    let text = scrape(&app).await;
    for lock in ["write_transaction", "quotas"] {
        assert!(
            sample(&text, "db_lock_wait_seconds_count", &[("lock", lock)])
                .is_some_and(|n| n >= 1.0),
            "{lock}: {text}"
        );
    }
}

#[tokio::test]
async fn a_separate_metrics_address_serves_metrics_and_probes_and_the_main_address_does_not() {
    let metrics_bind = free_address();
    let bind = metrics_bind.clone();
    let app = TestApp::spawn_with(move |c| c.metrics_bind = Some(bind)).await;
    let listener = tessera::ops::listen(&app.state)
        .await
        .expect("bind the metrics address")
        .expect("a metrics address is configured");
    let main = app.serve().await;
    let client = reqwest::Client::new();
    let status = |url: String| {
        let client = client.clone();
        async move {
            let r = client.get(url).send().await.expect("request");
            (r.status().as_u16(), r.text().await.expect("body"))
        }
    };
    let ops = format!("http://{metrics_bind}");
    let (code, text) = status(format!("{ops}/metrics")).await;
    assert_eq!(code, 200);
    assert!(
        sample(&text, "db_pool_max_connections", &[]).is_some(),
        "{text}"
    );
    assert_eq!(status(format!("{ops}/healthz")).await.0, 200);
    assert_eq!(status(format!("{ops}/readyz")).await.0, 200);
    // Nothing else is there.
    assert_eq!(status(format!("{ops}/api/v1/organizers/")).await.0, 404);
    assert_eq!(status(format!("{ops}/docs/")).await.0, 404);
    // The main address has the probes, not the metrics.
    assert_eq!(status(format!("{main}/metrics")).await.0, 404);
    assert_eq!(status(format!("{main}/healthz")).await.0, 200);
    listener.abort();
}

#[tokio::test]
async fn the_metrics_address_asks_for_the_token_when_one_is_set() {
    let metrics_bind = free_address();
    let bind = metrics_bind.clone();
    let app = TestApp::spawn_with(move |c| {
        c.metrics_bind = Some(bind);
        c.metrics_token = Some(TOKEN.into());
    })
    .await;
    let listener = tessera::ops::listen(&app.state)
        .await
        .expect("bind")
        .expect("listener");
    let client = reqwest::Client::new();
    let url = format!("http://{metrics_bind}/metrics");
    let r = client.get(&url).send().await.expect("request");
    assert_eq!(r.status().as_u16(), 401);
    let r = client
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 200);
    // The probes never ask for it.
    let r = client
        .get(format!("http://{metrics_bind}/readyz"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 200);
    listener.abort();
}

#[tokio::test]
async fn the_metrics_address_closes_a_connection_that_sends_no_request_in_time() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let metrics_bind = free_address();
    let bind = metrics_bind.clone();
    let app = TestApp::spawn_with(move |c| {
        c.metrics_bind = Some(bind);
        c.header_read_timeout_secs = 1;
    })
    .await;
    let listener = tessera::ops::listen(&app.state)
        .await
        .expect("bind the metrics address")
        .expect("a metrics address is configured");
    let mut slow = tokio::net::TcpStream::connect(&metrics_bind)
        .await
        .expect("connect");
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: ops")
        .await
        .expect("write");
    let started = std::time::Instant::now();

    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), slow.read(&mut buf))
        .await
        .expect("closed before 10 s");

    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(started.elapsed() < std::time::Duration::from_millis(2500));
    let ok = reqwest::get(format!("http://{metrics_bind}/healthz"))
        .await
        .expect("request");
    assert_eq!(ok.status().as_u16(), 200);
    listener.abort();
}
