//! Bounded input: bodies, URIs and headers larger than accepted are refused before they
//! cost memory or work, and clients that send slowly are cut off.

use std::time::{Duration, Instant};

use poem::http::Method;
use serde_json::json;
use tessera_tests::TestApp;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn setup(f: impl FnOnce(&mut tessera::Config)) -> (TestApp, String) {
    let app = TestApp::spawn_with(f).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    (app, token)
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413_and_nothing_is_stored() {
    let (app, token) = setup(|c| c.max_body_bytes = 64 * 1024).await;
    let auth = format!("Token {token}");
    let body = json!({"value": "1.00", "currency": "EUR", "conditions": "x".repeat(100 * 1024)});
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            body.to_string().into_bytes(),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body["detail"].as_str().expect("detail").contains("65536"));
    assert_eq!(app.get(CARDS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_the_body_is_read() {
    let (app, token) = setup(|_| {}).await;
    let auth = format!("Token {token}");
    let declared = (2 * 1024 * 1024).to_string();
    let r = app
        .raw(
            Method::POST,
            CARDS,
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
                ("Content-Length", declared.as_str()),
            ],
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
}

#[tokio::test]
async fn a_body_within_the_limit_is_accepted() {
    let (app, token) = setup(|c| c.max_body_bytes = 64 * 1024).await;
    let r = app
        .post(
            CARDS,
            &token,
            json!({"value": "1.00", "currency": "EUR", "conditions": "x".repeat(1000)}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

/// How much later than its timeout the server may act, on a busy machine.
const MARGIN: Duration = Duration::from_millis(1500);

/// A served app whose connections and bodies time out after one second, with organizer
/// `acme` and its token; gives the app, the token and the served `host:port`.
async fn impatient() -> (TestApp, String, String) {
    let (app, token) = setup(|c| {
        c.header_read_timeout_secs = 1;
        c.body_read_timeout_secs = 1;
    })
    .await;
    let base = app.serve().await;
    let address = base.trim_start_matches("http://").to_owned();
    (app, token, address)
}

/// Reads what the server sends until it closes the connection, for at most `limit`; gives
/// the bytes and when it closed, or `None` when it was still open at the end.
async fn until_closed(
    read: &mut (impl AsyncReadExt + Unpin),
    limit: Duration,
) -> (String, Option<Duration>) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + limit).into(), read.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&received).into(), None),
        }
    }
    let text = String::from_utf8_lossy(&received).into_owned();
    (text, Some(started.elapsed()))
}

#[tokio::test]
async fn a_client_that_dribbles_its_headers_is_cut_off_after_the_header_timeout() {
    let (_app, _, address) = impatient().await;
    let stream = TcpStream::connect(&address).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    write
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: tessera.test\r\nX-Slow: ")
        .await
        .expect("write");
    // A byte every 200 ms: never a whole header, always something arriving.
    let dribble = tokio::spawn(async move {
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if write.write_all(b"a").await.is_err() {
                break;
            }
        }
    });

    let (answer, closed) = until_closed(&mut read, Duration::from_secs(10)).await;
    dribble.abort();

    let closed = closed.expect("the server closes the connection");
    assert!(
        closed >= Duration::from_millis(900),
        "closed after {closed:?}"
    );
    assert!(
        closed <= Duration::from_secs(1) + MARGIN,
        "closed after {closed:?}"
    );
    assert_eq!(answer, "", "no answer to a request that never arrived");
}

#[tokio::test]
async fn a_silent_connection_and_an_idle_kept_alive_one_are_closed_after_the_header_timeout() {
    let (_app, _, address) = impatient().await;
    let mut silent = TcpStream::connect(&address).await.expect("connect");
    let mut kept = TcpStream::connect(&address).await.expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: tessera.test\r\n\r\n")
        .await
        .expect("write");

    let (silence, kept_alive) = tokio::join!(
        until_closed(&mut silent, Duration::from_secs(10)),
        until_closed(&mut kept, Duration::from_secs(10)),
    );

    for (what, (_, closed)) in [("silent", &silence), ("kept alive", &kept_alive)] {
        let closed = closed.unwrap_or_else(|| panic!("the {what} connection stayed open"));
        assert!(
            closed <= Duration::from_secs(1) + MARGIN,
            "{what}: {closed:?}"
        );
    }
    let (answer, _) = kept_alive;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(r#"{"status":"ok"}"#), "{answer}");
}

#[tokio::test]
async fn requests_sent_at_a_normal_pace_are_answered_under_the_short_timeouts() {
    let (_app, token, address) = impatient().await;
    let client = reqwest::Client::new();
    let cards = format!("http://{address}{CARDS}");
    let auth = format!("Token {token}");
    for _ in 0..3 {
        let r = client
            .post(&cards)
            .header("Authorization", &auth)
            .json(&json!({"value": "1.00", "currency": "EUR"}))
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), 201);
    }
    let r = client
        .get(&cards)
        .header("Authorization", &auth)
        .send()
        .await
        .expect("get");
    let list: serde_json::Value = r.json().await.expect("json");
    assert_eq!(list["count"], 3);
}

#[tokio::test]
async fn a_body_that_arrives_too_slowly_is_answered_408_and_nothing_is_stored() {
    let (app, token, address) = impatient().await;
    let body = br#"{"value": "1.00", "currency": "EUR"}"#;
    let head = format!(
        "POST {CARDS} HTTP/1.1\r\nHost: tessera.test\r\nAuthorization: Token {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
        .write_all(&body[..10])
        .await
        .expect("some of the body");

    let (answer, closed) = until_closed(&mut stream, Duration::from_secs(10)).await;

    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive in time"), "{answer}");
    let closed = closed.expect("the server closes the connection");
    assert!(closed <= Duration::from_secs(1) + MARGIN, "{closed:?}");
    assert_eq!(app.get(CARDS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn an_upload_that_stalls_is_given_up_after_the_body_timeout() {
    let (app, token, address) = impatient().await;
    let head = format!(
        "POST /api/v1/upload HTTP/1.1\r\nHost: tessera.test\r\nAuthorization: Token {token}\r\n\
         Content-Type: image/png\r\nContent-Disposition: attachment; filename=\"a.png\"\r\n\
         Content-Length: 100000\r\n\r\n"
    );
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
        .write_all(b"\x89PNG\r\n\x1a\n")
        .await
        .expect("the start of the file");

    let (answer, closed) = until_closed(&mut stream, Duration::from_secs(10)).await;

    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("nothing arrived for 1 s"), "{answer}");
    let closed = closed.expect("the server closes the connection");
    assert!(closed <= Duration::from_secs(1) + MARGIN, "{closed:?}");
    use sea_orm::{EntityTrait, PaginatorTrait};
    let stored = tessera::db::entities::file::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn a_connection_beyond_max_connections_waits_until_one_closes() {
    let (app, _) = setup(|c| c.max_connections = 1).await;
    let address = app.serve().await.trim_start_matches("http://").to_owned();
    let holder = TcpStream::connect(&address).await.expect("connect");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut waiting = TcpStream::connect(&address).await.expect("connect");
    waiting
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: tessera.test\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");

    let (nothing, closed) = until_closed(&mut waiting, Duration::from_secs(1)).await;
    assert_eq!(
        (nothing.as_str(), closed),
        ("", None),
        "served beside the holder"
    );
    drop(holder);
    let (answer, closed) = until_closed(&mut waiting, Duration::from_secs(10)).await;

    assert!(closed.is_some(), "not served after the holder closed");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn an_encoded_nul_in_a_path_names_nothing_and_in_a_query_is_refused() {
    let (app, token) = setup(|_| {}).await;
    let r = app
        .get("/api/v1/organizers/ac%00me/giftcards/", &token)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(r.body["detail"], "Not found.");
    let r = app.get(&format!("{CARDS}?secret=a%00b"), &token).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["detail"].as_str().expect("detail").contains("NUL"));
    let r = app.get(&format!("{CARDS}?secret=a%2500b"), &token).await;
    assert_eq!(r.status, 200, "a literal `%00` is text: {}", r.body);
}

/// A connection to `address` from the loopback address `from` (127.0.0.0/8 is all this
/// machine's).
async fn connect_from(from: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("an address"))
        .expect("bind");
    socket
        .connect(address.parse().expect("an address"))
        .await
        .expect("connect")
}

#[tokio::test]
async fn one_address_holding_its_share_of_connections_is_refused_more_and_others_are_served() {
    let (app, _) = setup(|c| {
        c.max_connections = 8;
        c.max_connections_per_address = 2;
    })
    .await;
    let address = app.serve().await.trim_start_matches("http://").to_owned();
    let _held = [
        connect_from("127.0.0.1", &address).await,
        connect_from("127.0.0.1", &address).await,
    ];
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = connect_from("127.0.0.1", &address).await;
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: tessera.test\r\n\r\n")
        .await
        .ok();
    let (answer, closed) = until_closed(&mut third, Duration::from_secs(5)).await;
    assert_eq!(answer, "", "closed unanswered");
    assert!(
        closed.is_some(),
        "the third connection of one address is closed"
    );

    let mut other = connect_from("127.0.0.2", &address).await;
    other
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: tessera.test\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let (answer, closed) = until_closed(&mut other, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "another address is served at once");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn an_upload_that_keeps_trickling_is_given_up_once_it_falls_behind_the_minimum_rate() {
    let (app, token, address) = impatient().await;
    let head = format!(
        "POST /api/v1/upload HTTP/1.1\r\nHost: tessera.test\r\nAuthorization: Token {token}\r\n\
         Content-Type: image/png\r\nContent-Disposition: attachment; filename=\"a.png\"\r\n\
         Content-Length: 100000\r\n\r\n"
    );
    let stream = TcpStream::connect(&address).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    write.write_all(head.as_bytes()).await.expect("head");
    write.write_all(b"\x89PNG\r\n\x1a\n").await.expect("start");
    // A byte every 200 ms: never a pause of the timeout, far below 1,024 bytes a second.
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if write.write_all(b"a").await.is_err() {
                break;
            }
        }
    });
    let (answer, closed) = until_closed(&mut read, Duration::from_secs(15)).await;
    trickle.abort();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("slower than 1024 bytes a second"),
        "{answer}"
    );
    let closed = closed.expect("the server closes the connection");
    assert!(closed <= Duration::from_secs(1) + MARGIN, "{closed:?}");
    use sea_orm::{EntityTrait, PaginatorTrait};
    let stored = tessera::db::entities::file::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(stored, 0);
}
