//! The `tessera` binary: its commands, and several `tessera serve` processes on one database.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_tests::process::Server;
use tessera_tests::{TestDatabase, fresh_database};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

fn tessera(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run tessera")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error without the line an admin command starts with, naming its database
/// (`using the SQLite file ...`; see `operator.rs`).
fn stderr(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stderr);
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("using the ") => rest.to_owned(),
        _ => text.into_owned(),
    }
}

/// A fresh database brought up to date with `tessera migrate` (admin commands refuse a
/// database that is not there).
async fn migrated_database() -> TestDatabase {
    let db = fresh_database().await;
    let out = tessera(&["migrate", "--database-url", &db.url]);
    assert!(out.status.success(), "{}", stderr(&out));
    db
}

/// A fresh database with an organizer `acme`, and a token of a team with every permission.
fn organizer_with_token(db: &TestDatabase) -> String {
    let created = tessera(&[
        "admin",
        "create-organizer",
        "--slug",
        "acme",
        "--name",
        "Acme",
        "--database-url",
        &db.url,
        "--create-database",
    ]);
    assert!(created.status.success(), "{}", stderr(&created));
    let out = tessera(&[
        "admin",
        "create-token",
        "--organizer",
        "acme",
        "--all-permissions",
        "--database-url",
        &db.url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().last().expect("token line").to_owned()
}

#[tokio::test]
async fn create_token_prints_the_token_alone_on_the_last_line() {
    let db = fresh_database().await;
    let token = organizer_with_token(&db);
    assert_eq!(token.len(), 64);
    assert!(token.chars().all(|c| c.is_ascii_alphanumeric()));
}

#[tokio::test]
async fn admin_commands_honour_the_database_url_from_the_environment() {
    let db = migrated_database().await;
    let out = Command::new(BIN)
        .args([
            "admin",
            "create-organizer",
            "--slug",
            "envorg",
            "--name",
            "Env",
        ])
        .env("TESSERA_DATABASE_URL", &db.url)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let again = tessera(&[
        "admin",
        "create-organizer",
        "--slug",
        "envorg",
        "--name",
        "Env",
        "--database-url",
        &db.url,
    ]);
    assert!(
        !again.status.success(),
        "the organizer exists in that database"
    );
}

#[tokio::test]
async fn bad_arguments_give_one_line_and_a_failing_exit_code() {
    let db = fresh_database().await;
    organizer_with_token(&db);
    let cases: [&[&str]; 5] = [
        &["admin", "create-token"],
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--permission",
            "can_fly",
            "--database-url",
            &db.url,
        ],
        &[
            "admin",
            "create-token",
            "--organizer",
            "nobody",
            "--database-url",
            &db.url,
        ],
        &[
            "admin",
            "create-organizer",
            "--slug",
            "bad slug",
            "--name",
            "X",
            "--database-url",
            &db.url,
        ],
        &["launch"],
    ];
    for args in cases {
        let out = tessera(args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn openapi_prints_the_committed_document() {
    let out = tessera(&["openapi"]);
    assert!(out.status.success());
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../openapi/openapi.json"
    ))
    .expect("file");
    assert_eq!(stdout(&out), committed);
}

#[tokio::test]
async fn migrate_brings_a_new_database_up_to_date() {
    let db = fresh_database().await;
    let out = tessera(&["migrate", "--database-url", &db.url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = tessera(&["migrate", "--database-url", &db.url]);
    assert!(again.status.success(), "migrating twice is harmless");
}

#[tokio::test]
async fn admin_outbox_lists_the_mails_newest_first_and_shows_one() {
    use tessera::domain::mail::{self, Mail};
    let db = fresh_database().await;
    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    tessera::db::migrate(&conn).await.expect("migrate");
    let ada = Mail::text("ada@example.com", "Your order ABC12", "Hello Ada,\nthanks.");
    let first = mail::queue(&conn, ada).await.expect("queue");
    let bob = Mail::text("bob@example.com", "A ticket is free", "Hello Bob");
    mail::queue(&conn, bob).await.expect("queue");
    let url = db.url.as_str();

    let list = tessera(&["admin", "outbox", "--database-url", url]);
    let shown = tessera(&[
        "admin",
        "outbox",
        "--show",
        &first.to_string(),
        "--database-url",
        url,
    ]);
    let sent = tessera(&["admin", "outbox", "--state", "sent", "--database-url", url]);

    assert!(list.status.success(), "{}", stderr(&list));
    let lines: Vec<String> = stdout(&list).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].contains("SUBJECT"));
    assert!(lines[1].contains("queued") && lines[1].contains("bob@example.com"));
    assert!(lines[2].contains("Your order ABC12"));
    let shown = stdout(&shown);
    assert!(shown.contains("Subject:  Your order ABC12"), "{shown}");
    assert!(shown.contains("Hello Ada,\nthanks."), "{shown}");
    assert_eq!(stdout(&sent).trim(), "no mails");
}

#[tokio::test]
async fn admin_outbox_refuses_an_unknown_state_or_mail() {
    let db = migrated_database().await;
    let state = tessera(&[
        "admin",
        "outbox",
        "--state",
        "lost",
        "--database-url",
        &db.url,
    ]);
    let mail = tessera(&["admin", "outbox", "--show", "99", "--database-url", &db.url]);
    assert!(!state.status.success());
    assert!(
        stderr(&state).contains("unknown state \"lost\""),
        "{}",
        stderr(&state)
    );
    assert!(!mail.status.success());
    assert!(
        stderr(&mail).contains("no mail with id 99"),
        "{}",
        stderr(&mail)
    );
}

/// A `tessera serve` on the database, started; stopped when dropped.
async fn serve(db: &TestDatabase) -> Server {
    let mut server = Server::new_logging_aside(Path::new(BIN), &db.url);
    server.start().await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_never_take_a_gift_card_below_zero() {
    let db = fresh_database().await;
    let token = organizer_with_token(&db);
    let servers = [serve(&db).await, serve(&db).await];
    let client = reqwest::Client::new();
    let auth = format!("Token {token}");
    let created: Value = client
        .post(format!(
            "{}/api/v1/organizers/acme/giftcards/",
            servers[0].base()
        ))
        .header("Authorization", &auth)
        .json(&json!({"value": "100.00", "currency": "EUR"}))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("json");
    let id = created["id"].as_i64().expect("id");

    let requests = (0..200).map(|i| {
        let url = format!(
            "{}/api/v1/organizers/acme/giftcards/{id}/transact/",
            servers[i % 2].base()
        );
        let (client, auth) = (client.clone(), auth.clone());
        tokio::spawn(async move {
            client
                .post(url)
                .header("Authorization", auth)
                .json(&json!({"value": "-1.00"}))
                .send()
                .await
                .expect("send")
                .status()
                .as_u16()
        })
    });
    let statuses = futures::future::join_all(requests).await;
    let ok = statuses.iter().filter(|s| matches!(s, Ok(200))).count();
    let conflict = statuses.iter().filter(|s| matches!(s, Ok(409))).count();
    assert_eq!((ok, conflict), (100, 100), "{statuses:?}");

    let card: Value = client
        .get(format!(
            "{}/api/v1/organizers/acme/giftcards/{id}/",
            servers[1].base()
        ))
        .header("Authorization", &auth)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(card["value"], "0.00");
    let mut total = 0i64;
    let mut entries = 0;
    let mut next = Some(format!(
        "{}/api/v1/organizers/acme/giftcards/{id}/transactions/",
        servers[0].base()
    ));
    while let Some(url) = next {
        let page: Value = client
            .get(url)
            .header("Authorization", &auth)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        for e in page["results"].as_array().expect("results") {
            let v = e["value"].as_str().expect("value").replace('.', "");
            total += v.parse::<i64>().expect("cents");
            entries += 1;
        }
        next = page["next"].as_str().map(str::to_owned);
    }
    assert_eq!(entries, 101, "the initial value and 100 debits");
    assert_eq!(total, 0, "the ledger sums to the value");
}

#[tokio::test]
async fn serve_stops_cleanly_on_sigterm() {
    let db = fresh_database().await;
    organizer_with_token(&db);
    let mut served = serve(&db).await;
    let pid = served.pid().expect("running").to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let status = served.wait_for_exit().await;
    assert!(
        status.is_some_and(|s| s.success()),
        "not stopped cleanly after SIGTERM: {status:?}"
    );
}

/// GETs a JSON answer with a token.
async fn get_json(client: &reqwest::Client, url: &str, auth: &str) -> (u16, Value) {
    let r = client
        .get(url)
        .header("Authorization", auth)
        .send()
        .await
        .expect("get");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_through_one_process_reaches_what_the_other_keeps() {
    let db = fresh_database().await;
    let token = organizer_with_token(&db);
    let servers = [serve(&db).await, serve(&db).await];
    let client = reqwest::Client::new();
    let auth = format!("Token {token}");
    let events = |i: usize| format!("{}/api/v1/organizers/acme/events/", servers[i].base());
    let r = client
        .post(events(0))
        .header("Authorization", &auth)
        .json(
            &json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                      "date_from": "2030-06-01T09:00:00Z"}),
        )
        .send()
        .await
        .expect("event");
    assert_eq!(r.status().as_u16(), 201);
    let item: Value = client
        .post(format!("{}conf/items/", events(0)))
        .header("Authorization", &auth)
        .json(&json!({"name": {"en": "Ticket"}, "default_price": "10.00"}))
        .send()
        .await
        .expect("item")
        .json()
        .await
        .expect("json");
    let items = format!("{}conf/items/", events(1));
    // The second process reads the list, and keeps it.
    for _ in 0..2 {
        let (status, list) = get_json(&client, &items, &auth).await;
        assert_eq!(status, 200);
        assert_eq!(list["results"][0]["default_price"], "10.00");
    }
    let r = client
        .patch(format!("{}conf/items/{}/", events(0), item["id"]))
        .header("Authorization", &auth)
        .json(&json!({"default_price": "12.00"}))
        .send()
        .await
        .expect("patch");
    assert_eq!(r.status().as_u16(), 200);
    // The announcement travels between processes asynchronously: allow it a moment.
    let started = Instant::now();
    loop {
        let (_, list) = get_json(&client, &items, &auth).await;
        if list["results"][0]["default_price"] == "12.00" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the second process still shows {}",
            list["results"][0]["default_price"]
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// POSTs JSON and gives the status and body.
async fn post_json(client: &reqwest::Client, url: &str, auth: &str, body: Value) -> (u16, Value) {
    let r = client
        .post(url)
        .header("Authorization", auth)
        .json(&body)
        .send()
        .await
        .expect("post");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Sends every body to `path` at once, alternating between the servers; gives the count
/// of 201 answers, after checking every other answer is a clean 400 and every 201 answer is
/// the order as the other server reads it (but for its link to the server), with the
/// buyer's e-mail and a code of its own.
async fn race_orders(servers: &[Server], auth: &str, path: &str, bodies: Vec<Value>) -> usize {
    let client = reqwest::Client::new();
    let emails: Vec<Value> = bodies.iter().map(|b| b["email"].clone()).collect();
    let requests = bodies.into_iter().enumerate().map(|(i, body)| {
        let url = format!("{}{path}", servers[i % servers.len()].base());
        let (client, auth) = (client.clone(), auth.to_owned());
        tokio::spawn(async move { post_json(&client, &url, &auth, body).await })
    });
    let answers = futures::future::join_all(requests).await;
    let mut codes = std::collections::HashSet::new();
    for (i, a) in answers.into_iter().enumerate() {
        let (status, body) = a.expect("task");
        match status {
            201 => {
                assert_eq!(body["email"], emails[i], "{body}");
                let code = body["code"].as_str().expect("code").to_owned();
                let other = servers[(i + 1) % servers.len()].base();
                let (_, mut stored) =
                    get_json(&client, &format!("{other}{path}{code}/"), auth).await;
                // Each server links to itself.
                stored["url"] = body["url"].clone();
                assert_eq!(stored, body, "the answer is the order as stored");
                assert!(codes.insert(code), "each order has a code of its own");
            }
            400 => assert!(body["positions"][0].is_object(), "{body}"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    codes.len()
}

/// An event `conf` with a ticket, through the first server; gives the ticket's ID.
async fn event_with_ticket(server: &Server, auth: &str) -> i64 {
    let client = reqwest::Client::new();
    let base = format!("{}/api/v1/organizers/acme/events/", server.base());
    let (status, body) = post_json(
        &client,
        &base,
        auth,
        json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
               "date_from": "2030-06-01T09:00:00Z"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, ticket) = post_json(
        &client,
        &format!("{base}conf/items/"),
        auth,
        json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
    )
    .await;
    assert_eq!(status, 201, "{ticket}");
    ticket["id"].as_i64().expect("id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_sell_exactly_a_quota_of_one_hundred_to_five_hundred_buyers() {
    let db = fresh_database().await;
    let auth = format!("Token {}", organizer_with_token(&db));
    let servers = [serve(&db).await, serve(&db).await];
    let ticket = event_with_ticket(&servers[0], &auth).await;
    let client = reqwest::Client::new();
    let event = format!("{}/api/v1/organizers/acme/events/conf", servers[1].base());
    let (status, quota) = post_json(
        &client,
        &format!("{event}/quotas/"),
        &auth,
        json!({"name": "Hall", "size": 100, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let bodies = (0..500)
        .map(|i| json!({"email": format!("buyer{i}@example.org"), "payment_provider": "manual", "positions": [{"item": ticket}]}))
        .collect();
    let path = "/api/v1/organizers/acme/events/conf/orders/";
    assert_eq!(race_orders(&servers, &auth, path, bodies).await, 100);
    let (_, a) = get_json(
        &client,
        &format!("{event}/quotas/{}/availability/", quota["id"]),
        &auth,
    )
    .await;
    assert_eq!(a["available_number"], 0, "{a}");
    assert_eq!(
        a["pending_orders"].as_i64().unwrap_or(0) + a["paid_orders"].as_i64().unwrap_or(0),
        100
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_sell_each_of_ten_seats_once_to_fifty_buyers() {
    let db = fresh_database().await;
    let auth = format!("Token {}", organizer_with_token(&db));
    let servers = [serve(&db).await, serve(&db).await];
    let ticket = event_with_ticket(&servers[0], &auth).await;
    let client = reqwest::Client::new();
    let seats: Vec<Value> = (0..10)
        .map(|i| json!({"seat_guid": format!("s{i}"), "seat_number": format!("{i}"), "category": "Stalls"}))
        .collect();
    let layout = json!({"name": "Hall", "categories": [{"name": "Stalls"}],
                        "zones": [{"name": "Main", "rows": [{"row_number": "1", "seats": seats}]}]});
    let (status, plan) = post_json(
        &client,
        &format!("{}/api/v1/organizers/acme/seatingplans/", servers[0].base()),
        &auth,
        json!({"name": "Hall", "layout": layout}),
    )
    .await;
    assert_eq!(status, 201, "{plan}");
    let event = format!("{}/api/v1/organizers/acme/events/conf", servers[0].base());
    let r = client
        .patch(format!("{event}/"))
        .header("Authorization", &auth)
        .json(&json!({"seating_plan": plan["id"], "seat_category_mapping": {"Stalls": ticket}}))
        .send()
        .await
        .expect("patch");
    assert_eq!(r.status().as_u16(), 200);
    let (status, quota) = post_json(
        &client,
        &format!("{event}/quotas/"),
        &auth,
        json!({"name": "Hall", "size": null, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let bodies = (0..50)
        .map(|i| json!({"positions": [{"item": ticket, "seat": format!("s{}", i % 10)}]}))
        .collect();
    let path = "/api/v1/organizers/acme/events/conf/orders/";
    assert_eq!(race_orders(&servers, &auth, path, bodies).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_changing_orders_and_placing_new_ones_never_sell_a_ticket_twice() {
    let db = fresh_database().await;
    let auth = format!("Token {}", organizer_with_token(&db));
    let servers = [serve(&db).await, serve(&db).await];
    let ticket = event_with_ticket(&servers[0], &auth).await;
    let client = reqwest::Client::new();
    let event = format!("{}/api/v1/organizers/acme/events/conf", servers[0].base());
    let (status, quota) = post_json(
        &client,
        &format!("{event}/quotas/"),
        &auth,
        json!({"name": "Hall", "size": 30, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let mut codes = Vec::new();
    for _ in 0..10 {
        let body = json!({"positions": [{"item": ticket}]});
        let (status, o) = post_json(&client, &format!("{event}/orders/"), &auth, body).await;
        assert_eq!(status, 201, "{o}");
        codes.push(o["code"].as_str().expect("code").to_owned());
    }
    // 20 tickets are left; the changes ask for 20 more, the new orders for 20.
    let mut requests = Vec::new();
    for i in 0..30 {
        let base = servers[i % 2].base();
        let (url, body) = match codes.get(i / 3).filter(|_| i % 3 == 0) {
            Some(code) => (
                format!("{base}/api/v1/organizers/acme/events/conf/orders/{code}/change/"),
                json!({"create_positions": [{"item": ticket}, {"item": ticket}]}),
            ),
            None => (
                format!("{base}/api/v1/organizers/acme/events/conf/orders/"),
                json!({"positions": [{"item": ticket}]}),
            ),
        };
        let (client, auth) = (client.clone(), auth.clone());
        requests.push(tokio::spawn(async move {
            post_json(&client, &url, &auth, body).await
        }));
    }
    let mut sold = 0;
    for answer in futures::future::join_all(requests).await {
        match answer.expect("task") {
            (200, o) => {
                assert_eq!(o["positions"].as_array().map(Vec::len), Some(3), "{o}");
                sold += 2;
            }
            (201, _) => sold += 1,
            (400, body) => assert!(body.is_array() || body["positions"].is_array(), "{body}"),
            (other, body) => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(sold, 20, "every ticket left is sold, and none twice");
    let (_, a) = get_json(
        &client,
        &format!("{event}/quotas/{}/availability/", quota["id"]),
        &auth,
    )
    .await;
    assert_eq!(a["available_number"], 0, "{a}");
    assert_eq!(a["pending_orders"], 30, "{a}");
}

/// The CSRF field of a page's form.
fn csrf_field(page: &str) -> String {
    let marker = "name=\"csrfmiddlewaretoken\" value=\"";
    let start = page.find(marker).expect("csrf field") + marker.len();
    page[start..].split('"').next().expect("value").to_owned()
}

/// The `name=value` part of the cookie `name` a response sets.
fn set_cookie(resp: &reqwest::Response, name: &str) -> String {
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&format!("{name}=")))
        .and_then(|c| c.split(';').next())
        .expect("cookie")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_user_makes_a_user_who_signs_in_on_one_process_and_is_known_to_another() {
    let db = fresh_database().await;
    organizer_with_token(&db);
    let args = |email: &str| {
        vec![
            "admin".to_owned(),
            "create-user".into(),
            "--email".into(),
            email.into(),
            "--password".into(),
            "a long enough password".into(),
            "--fullname".into(),
            "Ada Lovelace".into(),
            "--organizer".into(),
            "acme".into(),
            "--team".into(),
            "staff".into(),
            "--database-url".into(),
            db.url.clone(),
        ]
    };
    let run = |email: &str| {
        let a = args(email);
        tessera(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let created = run("Ada@Example.org");
    assert!(created.status.success(), "{}", stderr(&created));
    assert!(stdout(&created).contains("created user ada@example.org"));
    let again = run("ada@example.ORG");
    assert!(!again.status.success(), "the email is taken");
    assert_eq!(
        stderr(&again).trim().lines().count(),
        1,
        "{}",
        stderr(&again)
    );

    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    let user = tessera::domain::users::find_by_email(&conn, "ada@example.org")
        .await
        .expect("query")
        .expect("user");
    let grants = tessera::domain::users::organizers_of(&conn, user.id)
        .await
        .expect("grants");
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].organizer.slug, "acme");

    let first = serve(&db).await;
    let second = serve(&db).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let form = client
        .get(format!("{}/login", first.base()))
        .send()
        .await
        .expect("login page");
    let csrf_cookie = set_cookie(&form, "tessera_csrf");
    let token = csrf_field(&form.text().await.expect("page"));
    let body = format!(
        "csrfmiddlewaretoken={token}&email=ada%40example.org&password=a+long+enough+password&next=%2Faccount"
    );
    let signed_in = client
        .post(format!("{}/login", first.base()))
        .header("Cookie", &csrf_cookie)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("sign in");
    assert_eq!(signed_in.status().as_u16(), 303);
    let session = set_cookie(&signed_in, "tessera_session");
    let account = client
        .get(format!("{}/account", second.base()))
        .header("Cookie", &session)
        .send()
        .await
        .expect("account");
    assert_eq!(account.status().as_u16(), 200);
    assert!(
        account
            .text()
            .await
            .expect("page")
            .contains("ada@example.org")
    );
}

#[tokio::test]
async fn create_oauth_app_and_create_reseller_print_their_json_alone_on_the_last_line() {
    let db = migrated_database().await;
    let user = tessera(&[
        "admin",
        "create-user",
        "--email",
        "Ada@Example.org",
        "--password",
        "correct horse battery",
        "--database-url",
        &db.url,
    ]);
    assert!(user.status.success(), "{}", stderr(&user));

    let app = tessera(&[
        "admin",
        "create-oauth-app",
        "--name",
        "Check-in sync",
        "--redirect-uri",
        "https://client.example/callback",
        "--redirect-uri",
        "http://127.0.0.1:9000/cb",
        "--user",
        "ada@example.org",
        "--database-url",
        &db.url,
    ]);
    assert!(app.status.success(), "{}", stderr(&app));
    let last: Value =
        serde_json::from_str(stdout(&app).lines().last().expect("line")).expect("json");
    assert!(last["client_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        last["client_secret"]
            .as_str()
            .is_some_and(|s| s.len() >= 32)
    );

    let reseller = tessera(&[
        "admin",
        "create-reseller",
        "--name",
        "Partner Ltd",
        "--user",
        "ada@example.org",
        "--database-url",
        &db.url,
    ]);
    assert!(reseller.status.success(), "{}", stderr(&reseller));
    let last: Value =
        serde_json::from_str(stdout(&reseller).lines().last().expect("line")).expect("json");
    assert_eq!(last["name"], "Partner Ltd");
    assert!(last["id"].as_i64().is_some());

    let unknown = tessera(&[
        "admin",
        "create-reseller",
        "--name",
        "Other",
        "--user",
        "nobody@example.org",
        "--database-url",
        &db.url,
    ]);
    assert!(!unknown.status.success());
    assert_eq!(
        stderr(&unknown).trim().lines().count(),
        1,
        "{}",
        stderr(&unknown)
    );
    let bad_uri = tessera(&[
        "admin",
        "create-oauth-app",
        "--name",
        "Bad",
        "--redirect-uri",
        "not a url",
        "--database-url",
        &db.url,
    ]);
    assert!(!bad_uri.status.success());
}

#[tokio::test]
async fn admin_event_talk_switches_the_talk_side_and_refuses_a_taken_slug() {
    use sea_orm::{EntityTrait, Set};
    use tessera::db::entities::event;
    let db = fresh_database().await;
    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    tessera::db::migrate(&conn).await.expect("migrate");
    let mut ids = Vec::new();
    for org in ["acme", "other"] {
        let org = tessera::admin::create_organizer(&conn, org, org)
            .await
            .expect("organizer");
        let row = event::ActiveModel {
            organizer_id: Set(org.id),
            slug: Set("conf".into()),
            name: Set(json!({"en": "Conf"})),
            currency: Set("EUR".into()),
            date_from: Set(chrono::Utc::now()),
            ..Default::default()
        };
        ids.push(
            tessera::domain::events::insert(&conn, row)
                .await
                .expect("event")
                .id,
        );
    }
    let talk = |id: i64| {
        let conn = conn.clone();
        async move {
            event::Entity::find_by_id(id)
                .one(&conn)
                .await
                .expect("query")
                .expect("event")
                .talk_enabled
        }
    };
    let switch = |org: &str, event: &str, flag: &str| {
        tessera(&[
            "admin",
            "event-talk",
            "--organizer",
            org,
            "--event",
            event,
            flag,
            "--database-url",
            &db.url,
        ])
    };

    let on = switch("acme", "conf", "--on");
    assert!(on.status.success(), "{}", stderr(&on));
    assert!(stdout(&on).contains("acme/conf is on"), "{}", stdout(&on));
    assert!(talk(ids[0]).await);

    let clash = switch("other", "conf", "--on");
    assert!(!clash.status.success());
    assert!(stderr(&clash).contains("slug"), "{}", stderr(&clash));
    assert_eq!(stderr(&clash).trim_end().lines().count(), 1);
    assert!(!talk(ids[1]).await);

    let off = switch("acme", "conf", "--off");
    assert!(off.status.success(), "{}", stderr(&off));
    assert!(!talk(ids[0]).await);
    let on = switch("other", "conf", "--on");
    assert!(on.status.success(), "{}", stderr(&on));
    assert!(talk(ids[1]).await);

    let missing = switch("acme", "nope", "--on");
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("no event"),
        "{}",
        stderr(&missing)
    );
    for args in [
        vec![
            "admin",
            "event-talk",
            "--organizer",
            "acme",
            "--event",
            "conf",
        ],
        vec![
            "admin",
            "event-talk",
            "--organizer",
            "acme",
            "--event",
            "conf",
            "--on",
            "--off",
        ],
    ] {
        let out = tessera(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// An event of `organizer` with the talk side switched on, made on the database directly.
async fn talk_event(conn: &tessera::db::DatabaseConnection, organizer: &str, slug: &str) {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
    use tessera::db::entities::{event, organizer as org};
    let organizer_id = org::Entity::find()
        .filter(org::Column::Slug.eq(organizer))
        .one(conn)
        .await
        .expect("query")
        .expect("organizer")
        .id;
    let row = event::ActiveModel {
        organizer_id: Set(organizer_id),
        slug: Set(slug.into()),
        name: Set(json!({"en": slug})),
        currency: Set("EUR".into()),
        date_from: Set(chrono::Utc::now() + chrono::Duration::days(365)),
        ..Default::default()
    };
    tessera::domain::events::insert(conn, row)
        .await
        .expect("event");
    tessera::admin::set_event_talk(conn, organizer, slug, true)
        .await
        .expect("talk side on");
}

#[tokio::test]
async fn create_user_token_prints_a_talk_side_token_alone_on_the_last_line() {
    use tessera::domain::talk::endpoints::Endpoints;
    use tessera::domain::talk::tokens;
    let db = fresh_database().await;
    organizer_with_token(&db);
    for args in [
        &["create-organizer", "--slug", "globex", "--name", "Globex"][..],
        &[
            "create-user",
            "--email",
            "ada@example.org",
            "--password",
            "a long enough password",
            "--organizer",
            "acme",
            "--team",
            "programme",
        ],
    ] {
        let mut all = vec!["admin"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--database-url", &db.url]);
        let out = tessera(&all);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    talk_event(&conn, "acme", "conf").await;
    talk_event(&conn, "acme", "summit").await;
    talk_event(&conn, "globex", "theirs").await;
    let user = tessera::domain::users::find_by_email(&conn, "ada@example.org")
        .await
        .expect("query")
        .expect("user")
        .id;
    let make = |extra: &[&str]| {
        let mut all = vec![
            "admin",
            "create-user-token",
            "--email",
            "ada@example.org",
            "--database-url",
            &db.url,
        ];
        all.extend_from_slice(extra);
        tessera(&all)
    };
    let last_line = |out: &Output| {
        assert!(out.status.success(), "{}", stderr(out));
        stdout(out).lines().last().expect("token line").to_owned()
    };

    let read = last_line(&make(&[]));
    assert_eq!(read.len(), 64, "{read}");
    let found = tokens::resolve(&conn, &read)
        .await
        .expect("query")
        .expect("the token authenticates");
    assert_eq!(found.user_id, user);
    assert_eq!(found.endpoints, Endpoints::all_read());
    assert_eq!(found.events, None);
    assert_eq!(found.version, None, "fixed to a version on first use");

    let write = last_line(&make(&[
        "--write",
        "--name",
        "Schedule sync",
        "--event",
        "conf",
        "--event",
        "summit",
        "--expires",
        "2099-01-31T18:00:00Z",
    ]));
    assert_eq!(write.len(), 64, "{write}");
    let found = tokens::resolve(&conn, &write)
        .await
        .expect("query")
        .expect("the token authenticates");
    assert_eq!(found.endpoints, Endpoints::all_write());
    let listed = tokens::list_for_user(&conn, user).await.expect("list");
    let row = listed.iter().find(|t| t.id == found.id).expect("listed");
    assert_eq!(row.name, "Schedule sync");
    assert_eq!(
        row.events,
        Some(vec!["conf".to_owned(), "summit".to_owned()])
    );
    assert_eq!(
        row.expires.map(|e| e.to_rfc3339()),
        Some("2099-01-31T18:00:00+00:00".to_owned())
    );

    for (extra, says) in [
        (&["--event", "nowhere"][..], "\"nowhere\""),
        (&["--event", "theirs"][..], "\"theirs\""),
        (&["--expires", "soon"][..], "invalid expiry"),
        (&["--expires", "2001-01-01"][..], "in the future"),
    ] {
        let out = make(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(stdout(&out).is_empty(), "{extra:?}: no token printed");
    }
    let nobody = tessera(&[
        "admin",
        "create-user-token",
        "--email",
        "nobody@example.org",
        "--database-url",
        &db.url,
    ]);
    assert_eq!(nobody.status.code(), Some(2), "{}", stderr(&nobody));
    assert!(stderr(&nobody).contains("no user with email"));
    assert_eq!(
        tokens::list_for_user(&conn, user)
            .await
            .expect("list")
            .len(),
        2,
        "refused tokens are not made"
    );
}

#[tokio::test]
async fn create_device_prints_a_qr_code_its_payload_and_the_token_alone_on_the_last_line() {
    let db = fresh_database().await;
    organizer_with_token(&db);
    let make = |extra: &[&str]| {
        let mut all = vec![
            "admin",
            "create-device",
            "--organizer",
            "acme",
            "--name",
            "Entrance",
            "--database-url",
            &db.url,
            "--public-url",
            "https://tickets.example.org",
        ];
        all.extend_from_slice(extra);
        tessera(&all)
    };
    let out = make(&["--profile", "pretixscan"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let token = *lines.last().expect("token line");
    assert_eq!(token.len(), 16, "{token}");
    let payload: Value = serde_json::from_str(lines[lines.len() - 2]).expect("the payload is JSON");
    assert_eq!(payload["handshake_version"], 1);
    assert_eq!(payload["token"], token);
    assert!(payload["url"].is_string());
    assert!(
        text.contains('█') || text.contains('▀') || text.contains('▄'),
        "a QR code in block characters: {text}"
    );

    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    let report = tessera::domain::devices::Report {
        hardware_brand: "Zebra".into(),
        hardware_model: "TC25".into(),
        software_brand: "pretixSCAN".into(),
        software_version: "1".into(),
        ..Default::default()
    };
    let initialized = tessera::domain::devices::initialize(&conn, token, report)
        .await
        .expect("the printed token initializes the device");
    assert_eq!(initialized.device.name, "Entrance");
    assert_eq!(initialized.device.security_profile, "pretixscan");
    assert!(initialized.device.all_events);

    for (extra, says) in [
        (vec!["--event", "nope"], "no event"),
        (vec!["--profile", "everything"], "unknown security profile"),
    ] {
        let out = make(&extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{extra:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{extra:?}: nothing printed");
    }
    let nobody = tessera(&[
        "admin",
        "create-device",
        "--organizer",
        "nobody",
        "--name",
        "X",
        "--database-url",
        &db.url,
        "--public-url",
        "https://tickets.example.org",
    ]);
    assert_eq!(nobody.status.code(), Some(2), "{}", stderr(&nobody));
}
