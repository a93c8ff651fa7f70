//! A fault test on PostgreSQL: two `tessera serve` processes on one database take a storm
//! of order creations (each queueing a confirmation mail) and gift card debits; one of them
//! is killed with SIGKILL in the middle of it and started again, and the storm goes on
//! against both. Afterwards every answered write is in the database, the quota is not
//! oversold, every card's value is the sum of its ledger, and every queued mail reached the
//! SMTP sink once. Loopback only; bounded in requests and time. It needs PostgreSQL
//! (`TESSERA_TEST_DATABASE_URL`) and says so in one line without it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement, Value as SqlValue};
use serde_json::{Value, json};
use tessera_tests::process::{Server, admin};
use tessera_tests::smtp::SmtpSink;
use tessera_tests::{TestDatabase, fresh_database};

/// Orders tried, one ticket each: far more than the quota holds.
const ORDERS: usize = 240;
/// Tickets on the quota.
const QUOTA: i64 = 90;
/// Debits of 1.00 tried, spread over the cards: more than their value.
const DEBITS: usize = 240;
/// Gift cards, each worth [`CARD_VALUE`] units of 1.00.
const CARDS: usize = 4;
const CARD_VALUE: i64 = 30;
/// Requests in flight at once.
const CONCURRENCY: usize = 16;
/// How long everything may take, from the first process's start to the last check.
const BUDGET: Duration = Duration::from_secs(60);

const EVENT: &str = "/api/v1/organizers/acme/events/conf";

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// A `tessera serve` on the database, sending its mail to the sink on `smtp_port`.
fn node(db: &TestDatabase, logs: &Path, name: &str, smtp_port: u16) -> Server {
    let mut node = Server::new(Path::new(BIN), &db.url, logs, name);
    node.env("TESSERA_SMTP_HOST", "127.0.0.1")
        .env("TESSERA_SMTP_PORT", &smtp_port.to_string())
        .env("TESSERA_SMTP_TLS", "none")
        .env("TESSERA_MAIL_FROM", "Tickets <tickets@tessera.test>")
        .env("TESSERA_DB_MAX_CONNECTIONS", "8");
    node
}

/// One request of the storm.
#[derive(Debug, Clone)]
enum Job {
    /// An order of one ticket, with a confirmation mail to `buyer{n}@example.org`.
    Order(usize),
    /// A debit of 1.00 from a card, with the text `debit {n}`.
    Debit { n: usize, card: i64 },
}

/// What a request of the storm was answered; `None` when no answer came (the process died).
#[derive(Debug)]
struct Answer {
    job: Job,
    status: Option<u16>,
    body: Value,
}

async fn post(client: &reqwest::Client, url: &str, auth: &str, body: &Value) -> (u16, Value) {
    let r = client
        .post(url)
        .header("Authorization", auth)
        .json(body)
        .send()
        .await
        .expect("post");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Sends the jobs, [`CONCURRENCY`] at a time, alternating between the nodes; counts the
/// answers in `done` as they come.
async fn storm(
    client: &reqwest::Client,
    bases: [String; 2],
    auth: &str,
    ticket: i64,
    jobs: Vec<(usize, Job)>,
    done: Arc<AtomicUsize>,
) -> Vec<Answer> {
    futures::stream::iter(jobs)
        .map(|(i, job)| {
            // Orders and debits alternate in the list; each kind alternates between nodes.
            let base = &bases[(i + i / 2) % 2];
            let url = match &job {
                Job::Order(_) => format!("{base}{EVENT}/orders/"),
                Job::Debit { card, .. } => {
                    format!("{base}/api/v1/organizers/acme/giftcards/{card}/transact/")
                }
            };
            let body = match &job {
                Job::Order(n) => json!({
                    "email": format!("buyer{n}@example.org"),
                    "send_mail": true,
                    "payment_provider": "manual",
                    "positions": [{"item": ticket}],
                }),
                Job::Debit { n, .. } => json!({"value": "-1.00", "text": format!("debit {n}")}),
            };
            let (client, done) = (client.clone(), done.clone());
            async move {
                let sent = client
                    .post(url)
                    .header("Authorization", auth)
                    .json(&body)
                    .send()
                    .await;
                let answer = match sent {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        match r.bytes().await {
                            Ok(bytes) => Answer {
                                job,
                                status: Some(status),
                                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                            },
                            Err(_) => Answer {
                                job,
                                status: None,
                                body: Value::Null,
                            },
                        }
                    }
                    Err(_) => Answer {
                        job,
                        status: None,
                        body: Value::Null,
                    },
                };
                done.fetch_add(1, Ordering::SeqCst);
                answer
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await
}

async fn scalar(db: &DatabaseConnection, sql: &str, values: Vec<SqlValue>) -> i64 {
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            values,
        ))
        .await
        .expect(sql)
        .expect("a row");
    row.try_get_by_index::<i64>(0).expect("a number")
}

async fn rows(db: &DatabaseConnection, sql: &str) -> Vec<sea_orm::QueryResult> {
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .expect(sql)
}

/// The outbox ID a message's `Message-ID` names (`<{id}.{micros}@{domain}>`).
fn outbox_id(data: &str) -> i64 {
    let header = data
        .lines()
        .find_map(|l| l.strip_prefix("Message-ID: <"))
        .unwrap_or_else(|| panic!("no Message-ID in {data}"));
    header
        .split('.')
        .next()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no outbox ID in Message-ID {header}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_killed_in_a_storm_of_orders_and_debits_loses_no_answered_write_and_no_mail() {
    if std::env::var("TESSERA_TEST_DATABASE_URL").map_or(true, |u| u.is_empty()) {
        println!("skipped: the crash test needs PostgreSQL (TESSERA_TEST_DATABASE_URL)");
        return;
    }
    let began = Instant::now();
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    admin(
        bin,
        &db.url,
        &[
            "admin",
            "create-organizer",
            "--slug",
            "acme",
            "--name",
            "Acme",
        ],
    );
    let token = admin(
        bin,
        &db.url,
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--all-permissions",
        ],
    );
    let auth = format!("Token {}", token.lines().last().expect("token line"));
    let sink = SmtpSink::start().await;
    let logs = tempfile::tempdir().expect("temp dir");
    let mut nodes = [
        node(&db, logs.path(), "a", sink.port),
        node(&db, logs.path(), "b", sink.port),
    ];
    for node in &mut nodes {
        node.start().await;
    }
    let bases = [nodes[0].base(), nodes[1].base()];
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .expect("client");

    // The shop: an event with a ticket on a quota, and gift cards with value.
    let events = format!("{}/api/v1/organizers/acme/events/", bases[0]);
    let (status, event) = post(
        &client,
        &events,
        &auth,
        &json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                "date_from": "2030-06-01T09:00:00Z"}),
    )
    .await;
    assert_eq!(status, 201, "{event}");
    let (status, item) = post(
        &client,
        &format!("{}{EVENT}/items/", bases[0]),
        &auth,
        &json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
    )
    .await;
    assert_eq!(status, 201, "{item}");
    let ticket = item["id"].as_i64().expect("item id");
    let (status, quota) = post(
        &client,
        &format!("{}{EVENT}/quotas/", bases[1]),
        &auth,
        &json!({"name": "Hall", "size": QUOTA, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let quota = quota["id"].as_i64().expect("quota id");
    let mut cards = Vec::new();
    for _ in 0..CARDS {
        let (status, card) = post(
            &client,
            &format!("{}/api/v1/organizers/acme/giftcards/", bases[1]),
            &auth,
            &json!({"value": format!("{CARD_VALUE}.00"), "currency": "EUR"}),
        )
        .await;
        assert_eq!(status, 201, "{card}");
        cards.push(card["id"].as_i64().expect("card id"));
    }

    // The storm: orders and debits interleaved; the second half starts once the killed
    // node is back.
    let jobs: Vec<(usize, Job)> = (0..ORDERS.max(DEBITS))
        .flat_map(|n| {
            let order = (n < ORDERS).then_some(Job::Order(n));
            let debit = (n < DEBITS).then(|| Job::Debit {
                n,
                card: cards[n % CARDS],
            });
            order.into_iter().chain(debit)
        })
        .enumerate()
        .collect();
    let half = jobs.len() / 2;
    let (first, second) = (jobs[..half].to_vec(), jobs[half..].to_vec());
    let done = Arc::new(AtomicUsize::new(0));
    let first_half = tokio::spawn({
        let (client, bases, auth) = (client.clone(), bases.clone(), auth.clone());
        let done = done.clone();
        async move { storm(&client, bases, &auth, ticket, first, done).await }
    });
    while done.load(Ordering::SeqCst) < half / 2 {
        assert!(!first_half.is_finished(), "the storm ended before the kill");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    nodes[1].kill();
    let killed_at = done.load(Ordering::SeqCst);
    // Let the sink take in what the dead process had already written to it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let received_before_kill = sink.received().len();
    let mut answers = first_half.await.expect("first half");
    nodes[1].start().await;
    let second_half = storm(&client, bases.clone(), &auth, ticket, second, done).await;
    answers.extend(second_half);
    let storm_over = began.elapsed();

    // The outbox drains: the mails the dead process had claimed come back after a lease.
    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    let unsent = "SELECT COUNT(*) FROM outbox_mails WHERE state <> 'sent'";
    while scalar(&conn, unsent, vec![]).await > 0 {
        assert!(
            began.elapsed() < BUDGET,
            "mails still unsent after {:?}: {} left\n{}",
            began.elapsed(),
            scalar(&conn, unsent, vec![]).await,
            nodes[1].log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Nothing more is on its way to the sink.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Every answered order and debit is stored.
    let no_answer = answers.iter().filter(|a| a.status.is_none()).count();
    let mut sold_answered = 0;
    let mut debited: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for a in &answers {
        match (&a.job, a.status) {
            (Job::Order(_), Some(201)) => {
                sold_answered += 1;
                let code = a.body["code"].as_str().expect("order code");
                let stored = scalar(
                    &conn,
                    "SELECT COUNT(*) FROM orders WHERE code = $1",
                    vec![code.into()],
                )
                .await;
                assert_eq!(stored, 1, "order {code} was answered 201");
            }
            (Job::Order(_), Some(400) | None) => {}
            (Job::Debit { n, card }, Some(200)) => {
                debited.entry(*card).or_default().push(format!("debit {n}"));
            }
            (Job::Debit { .. }, Some(409) | None) => {}
            (job, status) => panic!("{job:?} answered {status:?}: {}", a.body),
        }
    }
    for (card, texts) in &debited {
        for text in texts {
            let stored = scalar(
                &conn,
                "SELECT COUNT(*) FROM giftcard_transactions \
                 WHERE card_id = $1 AND text = $2 AND value_cents = -100",
                vec![(*card).into(), text.clone().into()],
            )
            .await;
            assert_eq!(stored, 1, "{text} on card {card} was answered 200");
        }
    }

    // Nothing is oversold, and the quota's holds agree with the orders.
    let sold = scalar(
        &conn,
        "SELECT COUNT(*) FROM order_positions p JOIN orders o ON o.id = p.order_id \
         WHERE o.status IN ('n', 'p') AND p.item_id = $1",
        vec![ticket.into()],
    )
    .await;
    let held = scalar(
        &conn,
        "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM quota_holds \
         WHERE quota_id = $1 AND kind IN ('paid', 'pending')",
        vec![quota.into()],
    )
    .await;
    assert!(sold <= QUOTA, "{sold} tickets sold on a quota of {QUOTA}");
    assert_eq!(
        sold, QUOTA,
        "{ORDERS} orders tried should sell the quota out"
    );
    assert_eq!(held, sold, "the quota's holds count the orders");
    assert!(sold >= sold_answered);

    // Every card's value is the sum of its ledger, and never below zero.
    for card in &cards {
        let value = scalar(
            &conn,
            "SELECT value_cents FROM giftcards WHERE id = $1",
            vec![(*card).into()],
        )
        .await;
        let ledger = scalar(
            &conn,
            "SELECT CAST(SUM(value_cents) AS BIGINT) FROM giftcard_transactions \
             WHERE card_id = $1",
            vec![(*card).into()],
        )
        .await;
        assert_eq!(value, ledger, "card {card}");
        assert!(value >= 0, "card {card} is at {value}");
        let answered = debited.get(card).map_or(0, Vec::len) as i64;
        assert!(
            CARD_VALUE * 100 - value >= answered * 100,
            "card {card}: {answered} debits answered, value {value}"
        );
    }

    // Each order queued one mail, and each mail reached the sink once, with its address.
    let orders = scalar(&conn, "SELECT COUNT(*) FROM orders", vec![]).await;
    let outbox: BTreeMap<i64, String> = rows(&conn, "SELECT id, to_address FROM outbox_mails")
        .await
        .iter()
        .map(|r| {
            let id: i64 = r.try_get_by_index(0).expect("id");
            let to: String = r.try_get_by_index(1).expect("to");
            (id, to)
        })
        .collect();
    assert_eq!(outbox.len() as i64, orders, "one mail per order");
    let received = sink.received();
    let mut copies: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (index, message) in received.iter().enumerate() {
        let id = outbox_id(&message.data);
        let to = outbox
            .get(&id)
            .unwrap_or_else(|| panic!("message {id} is no mail of the outbox"));
        assert_eq!(message.to, [format!("<{to}>")], "mail {id}");
        copies.entry(id).or_default().push(index);
    }
    let delivered: BTreeSet<i64> = copies.keys().copied().collect();
    let queued: BTreeSet<i64> = outbox.keys().copied().collect();
    assert_eq!(delivered, queued, "every queued mail was delivered");
    // The one mail the killed process may have had accepted by the sink but not yet recorded
    // as sent goes out again after its lease, with the same Message-ID: only that one, only
    // across the kill.
    let twice: Vec<(&i64, &Vec<usize>)> = copies.iter().filter(|(_, c)| c.len() > 1).collect();
    assert!(twice.len() <= 1, "mails sent more than once: {twice:?}");
    for (id, at) in &twice {
        assert_eq!(at.len(), 2, "mail {id} went out {} times", at.len());
        assert!(
            at[0] < received_before_kill && at[1] >= received_before_kill,
            "mail {id} went out twice, not across the kill: {at:?}"
        );
    }

    let took = began.elapsed();
    println!(
        "{} requests ({} unanswered, killed after {killed_at}); {sold} tickets, {} mails \
         ({} twice across the kill); storm over after {storm_over:?}, all checked after {took:?}",
        answers.len(),
        no_answer,
        outbox.len(),
        twice.len(),
    );
    assert!(took < BUDGET, "took {took:?}");
}
