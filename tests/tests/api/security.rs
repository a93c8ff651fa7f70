//! Attacks from the security review, performed against the server: each now fails to do
//! harm. Floods are bounded loops on loopback.

use poem::http::Method;
use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, Statement};
use serde_json::{Value, json};
use tessera::db::entities::idempotency_key;
use tessera_tests::{Reply, TestApp};

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn stored_keys(app: &TestApp) -> u64 {
    idempotency_key::Entity::find()
        .count(&app.db)
        .await
        .expect("count")
}

/// A POST with this `Authorization` header, an idempotency key and a JSON body.
async fn keyed_post(
    app: &TestApp,
    path: &str,
    authorization: &str,
    key: &str,
    body: Value,
) -> Reply {
    let headers = [
        ("Authorization", authorization),
        ("Content-Type", "application/json"),
        ("X-Idempotency-Key", key),
    ];
    app.raw(Method::POST, path, &headers, body.to_string().into_bytes())
        .await
}

#[tokio::test]
async fn junk_tokens_with_idempotency_keys_store_nothing() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let long_path = format!("/api/v1/{}/", "x".repeat(6000));
    for i in 0..300 {
        let path = if i % 2 == 0 {
            long_path.as_str()
        } else {
            CARDS
        };
        let r = keyed_post(
            &app,
            path,
            &format!("Token junk{i}"),
            &format!("k{i}"),
            json!({}),
        )
        .await;
        // An unknown path is 404 whoever asks; a known one needs valid credentials.
        let expected = if i % 2 == 0 { 404 } else { 401 };
        assert_eq!(r.status, expected, "{}", r.body);
    }
    assert_eq!(stored_keys(&app).await, 0);
}

#[tokio::test]
async fn a_valid_token_on_a_path_that_is_no_operation_stores_no_key() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let auth = format!("Token {token}");
    for i in 0..50 {
        let path = format!("/api/v1/nothing/{}{i}/", "y".repeat(4000));
        let r = keyed_post(&app, &path, &auth, &format!("k{i}"), json!({})).await;
        assert_eq!(r.status, 404, "{}", r.body);
    }
    assert_eq!(stored_keys(&app).await, 0);
}

#[tokio::test]
async fn a_stored_key_holds_a_bounded_digest_of_its_path() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    // A path of an operation with a long made-up organizer: refused, and the refusal is final.
    let path = format!("/api/v1/organizers/{}/giftcards/", "o".repeat(7000));
    let card = json!({"value": "1.00", "currency": "EUR"});
    let r = keyed_post(&app, &path, &format!("Token {token}"), "k", card).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let rows = idempotency_key::Entity::find()
        .all(&app.db)
        .await
        .expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].path.len(), 64);
    assert!(rows[0].credential.len() < 40, "{}", rows[0].credential);
}

#[tokio::test]
async fn a_revoked_token_no_longer_replays_its_stored_answers() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let auth = format!("Token {token}");
    let card = json!({"value": "10.00", "currency": "EUR"});
    let first = keyed_post(&app, CARDS, &auth, "once", card.clone()).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let again = keyed_post(&app, CARDS, &auth, "once", card.clone()).await;
    assert_eq!(again.body, first.body);

    let teams = app.get("/api/v1/organizers/acme/teams/", &token).await;
    let team = teams.body["results"][0]["id"].clone();
    let tokens_path = format!("/api/v1/organizers/acme/teams/{team}/tokens/");
    let tokens = app.get(&tokens_path, &token).await;
    let id = tokens.body["results"][0]["id"].clone();
    let revoked = app.delete(&format!("{tokens_path}{id}/"), &token).await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);

    let replay = keyed_post(&app, CARDS, &auth, "once", card).await;
    assert_eq!(replay.status, 401, "{}", replay.body);
    assert_eq!(replay.body["detail"], "Invalid token.");
}

#[tokio::test]
async fn a_caller_cannot_hold_more_than_ten_thousand_keys() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let auth = format!("Token {token}");
    let first = keyed_post(
        &app,
        CARDS,
        &auth,
        "k0",
        json!({"value": "1.00", "currency": "EUR"}),
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.body);
    // Fill the caller's allowance in one statement, as ten thousand writes would have.
    let backend = app.db.get_database_backend();
    app.db
        .execute_raw(Statement::from_string(
            backend,
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9999) \
             INSERT INTO idempotency_keys (credential, idempotency_key, method, path, state, \
             headers, created) \
             SELECT k.credential, 'fill' || n.i, k.method, k.path, k.state, k.headers, k.created \
             FROM n, idempotency_keys k",
        ))
        .await
        .expect("fill");
    assert_eq!(stored_keys(&app).await, 10_000);
    let refused = keyed_post(
        &app,
        CARDS,
        &auth,
        "one-more",
        json!({"value": "1.00", "currency": "EUR"}),
    )
    .await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.body["detail"].as_str().is_some());
    assert_eq!(stored_keys(&app).await, 10_000);
    // A retry of a stored key is still answered.
    let replay = keyed_post(
        &app,
        CARDS,
        &auth,
        "k0",
        json!({"value": "1.00", "currency": "EUR"}),
    )
    .await;
    assert_eq!(replay.body, first.body);
}

#[tokio::test]
async fn rate_limits_count_the_credential_not_how_its_header_is_written() {
    let app = TestApp::spawn_with(|c| {
        c.rate_limit_per_minute = Some(3);
        c.anonymous_rate_limit_per_minute = Some(0);
    })
    .await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let spellings = [
        format!("Token {token}"),
        format!("token {token}"),
        format!("TOKEN   {token} "),
    ];
    for auth in &spellings {
        let r = app
            .raw(
                Method::GET,
                CARDS,
                &[("Authorization", auth.as_str())],
                vec![],
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let fourth = format!("tOkEn  {token}");
    let r = app
        .raw(
            Method::GET,
            CARDS,
            &[("Authorization", fourth.as_str())],
            vec![],
        )
        .await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.header("retry-after").is_some());
}

#[tokio::test]
async fn oversized_headers_and_uris_are_refused_before_any_work() {
    let app = TestApp::spawn().await;
    let huge = format!("Token {}", "a".repeat(100 * 1024));
    let r = app
        .raw(
            Method::GET,
            CARDS,
            &[("Authorization", huge.as_str())],
            vec![],
        )
        .await;
    assert_eq!(r.status, 431, "{}", r.body);
    assert!(r.body["detail"].as_str().is_some());
    let long_auth = format!("Token {}", "a".repeat(2000));
    let r = app
        .raw(
            Method::GET,
            CARDS,
            &[("Authorization", long_auth.as_str())],
            vec![],
        )
        .await;
    assert_eq!(r.status, 431);
    let r = app
        .raw(
            Method::GET,
            &format!("{CARDS}?q={}", "x".repeat(9000)),
            &[],
            vec![],
        )
        .await;
    assert_eq!(r.status, 414, "{}", r.body);
}

/// `count` requests with junk tokens from the client at `base`, with these extra headers;
/// the statuses.
async fn junk_requests(base: &str, count: usize, headers: &[(&str, &str)]) -> Vec<u16> {
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for i in 0..count {
        let mut req = client
            .get(format!("{base}{CARDS}"))
            .header("Authorization", format!("Token junk{i}"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        statuses.push(req.send().await.expect("send").status().as_u16());
    }
    statuses
}

#[tokio::test]
async fn failed_authentication_is_limited_per_client_address() {
    let app = TestApp::spawn_with(|c| {
        c.rate_limit_per_minute = Some(1000);
        c.anonymous_rate_limit_per_minute = Some(10);
    })
    .await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let base = app.serve().await;
    let statuses = junk_requests(&base, 12, &[]).await;
    assert_eq!(&statuses[..10], &[401; 10]);
    assert_eq!(&statuses[10..], &[429, 429]);
    // Requests without credentials, such as public pages, count against the address too.
    let page = reqwest::get(format!("{base}/acme/conf/order/ABC12/secret/"))
        .await
        .expect("page");
    assert_eq!(page.status().as_u16(), 429);
    // A valid credential is counted on its own.
    let ok = reqwest::Client::new()
        .get(format!("{base}{CARDS}"))
        .header("Authorization", format!("Token {token}"))
        .send()
        .await
        .expect("send");
    assert_eq!(ok.status().as_u16(), 200);
}

#[tokio::test]
async fn the_forwarded_address_counts_only_behind_a_trusted_proxy() {
    let untrusted = TestApp::spawn_with(|c| c.anonymous_rate_limit_per_minute = Some(3)).await;
    let base = untrusted.serve().await;
    // Made-up forwarded addresses do not buy a client new allowances.
    let mut statuses = Vec::new();
    for i in 0..4 {
        let forwarded = format!("198.51.100.{i}");
        statuses.extend(junk_requests(&base, 1, &[("X-Forwarded-For", &forwarded)]).await);
    }
    assert_eq!(statuses, [401, 401, 401, 429]);

    let behind_proxy = TestApp::spawn_with(|c| {
        c.anonymous_rate_limit_per_minute = Some(3);
        c.trusted_proxies = vec!["127.0.0.1".parse().expect("ip")];
    })
    .await;
    let base = behind_proxy.serve().await;
    let first = junk_requests(&base, 4, &[("X-Forwarded-For", "198.51.100.1")]).await;
    assert_eq!(first, [401, 401, 401, 429]);
    // Another client behind the proxy has its own allowance; what it wrote itself further
    // left in the header is not believed.
    let second = junk_requests(
        &base,
        3,
        &[("X-Forwarded-For", "198.51.100.1, 198.51.100.2")],
    )
    .await;
    assert_eq!(second, [401, 401, 401]);
}

#[tokio::test]
async fn refused_writes_leave_every_process_cache_alone() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.organizer("other").await;
    app.event("acme", "conf").await;
    let token = app.admin_token("acme").await;
    let stranger = app.admin_token("other").await;
    let items = "/api/v1/organizers/acme/events/conf/items/";
    let created = app
        .post(
            items,
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "10.00"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let generation = live_generation(&app).await;

    for i in 0..100 {
        let path = format!("/api/v1/organizers/acme/events/conf/items/{i}/");
        let anonymous = app.call(Method::POST, items, None, Some(json!({}))).await;
        assert_eq!(anonymous.status, 401);
        let junk = keyed_post(&app, items, "Token junk", "k", json!({})).await;
        assert_eq!(junk.status, 401);
        let foreign = app.patch(&path, &stranger, json!({"active": false})).await;
        assert_eq!(foreign.status, 403);
        let invalid = app.post(items, &token, json!({"name": 1})).await;
        assert_eq!(invalid.status, 400);
    }
    // Give an announcement, had there been one, time to arrive.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(app.state.cache.generation().await, Some(generation));

    let id = created.body["id"].clone();
    let changed = app
        .patch(
            &format!("{items}{id}/"),
            &token,
            json!({"default_price": "12.00"}),
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_ne!(app.state.cache.generation().await, Some(generation));
    let list = app.get(items, &token).await;
    assert_eq!(list.body["results"][0]["default_price"], "12.00");
}

/// The cache's generation once it is live (on PostgreSQL, once its listener is connected)
/// and settled: the announcements of the setup's own changes, which arrive asynchronously,
/// have all arrived.
async fn live_generation(app: &TestApp) -> u64 {
    let mut last = None;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let now = app.state.cache.generation().await;
        if let Some(g) = now
            && now == last
        {
            return g;
        }
        last = now;
    }
    panic!("the cache never went live and settled");
}
