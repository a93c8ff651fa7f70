//! A process that dies while answering a request with `X-Idempotency-Key` makes its retry
//! do the work exactly once: the answer is stored in the transaction of the work. The
//! process is made to die at a test-only fault point (`TESSERA_FAULT_POINT`).

use std::path::Path;

use chrono::{Duration, Utc};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{Server, admin};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

/// Posts a debit of 1.00 with the key; `None` when no answer came (the process died).
async fn debit(server: &Server, token: &str, card: i64, key: &str) -> Option<(u16, Value)> {
    let resp = reqwest::Client::new()
        .post(format!("{}{CARDS}{card}/transact/", server.base()))
        .header("Authorization", format!("Token {token}"))
        .header("X-Idempotency-Key", key)
        .json(&json!({"value": "-1.00"}))
        .send()
        .await
        .ok()?;
    let status = resp.status().as_u16();
    Some((status, resp.json().await.ok()?))
}

/// The card's value and the number of its ledger entries (the first is its issue), from
/// the database.
async fn card_state(db: &sea_orm::DatabaseConnection, card: i64) -> (i64, i64) {
    let backend = db.get_database_backend();
    let one = |sql: &str| Statement::from_sql_and_values(backend, sql, [card.into()]);
    let value = db
        .query_one_raw(one("SELECT value_cents AS n FROM giftcards WHERE id = $1"))
        .await
        .expect("query")
        .expect("card");
    let entries = db
        .query_one_raw(one(
            "SELECT count(*) AS n FROM giftcard_transactions WHERE card_id = $1",
        ))
        .await
        .expect("query")
        .expect("count");
    (
        value.try_get::<i64>("", "n").expect("value"),
        entries.try_get::<i64>("", "n").expect("entries"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_dying_before_or_after_storing_an_idempotent_answer_does_the_work_once() {
    let test_db = fresh_database().await;
    let dir = tempfile::tempdir().expect("dir");
    let bin = Path::new(BIN);
    admin(bin, &test_db.url, &["migrate"]);
    admin(
        bin,
        &test_db.url,
        &[
            "admin",
            "create-organizer",
            "--slug",
            "acme",
            "--name",
            "Acme",
        ],
    );
    let out = admin(
        bin,
        &test_db.url,
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--all-permissions",
        ],
    );
    let token = out.lines().last().expect("token line").to_owned();
    let db = tessera::db::connect(&test_db.url, 2)
        .await
        .expect("connect");

    let mut server = Server::new(bin, &test_db.url, dir.path(), "serve");
    server.start().await;
    let created = reqwest::Client::new()
        .post(format!("{}{CARDS}", server.base()))
        .header("Authorization", format!("Token {token}"))
        .json(&json!({"value": "10.00", "currency": "EUR"}))
        .send()
        .await
        .expect("create card");
    assert_eq!(created.status().as_u16(), 201);
    let card = created.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id");
    server.kill();

    // Dying after the work, before work and answer commit: nothing is left of either.
    server.env("TESSERA_FAULT_POINT", "idempotency-before-answer");
    server.start().await;
    assert_eq!(debit(&server, &token, card, "first").await, None);
    assert!(
        server.wait_for_exit().await.is_some(),
        "the fault point did not end the process"
    );
    assert_eq!(card_state(&db, card).await, (1000, 1));

    // Five minutes later the claim counts as abandoned; the retry does the work, once.
    let earlier = Utc::now() - Duration::minutes(6);
    db.execute_raw(Statement::from_sql_and_values(
        db.get_database_backend(),
        "UPDATE idempotency_keys SET created = $1 WHERE idempotency_key = 'first'",
        [earlier.into()],
    ))
    .await
    .expect("age the claim");
    server.unset("TESSERA_FAULT_POINT");
    server.start().await;
    let (status, body) = debit(&server, &token, card, "first").await.expect("answer");
    assert_eq!((status, &body["value"]), (200, &json!("9.00")), "{body}");
    assert_eq!(
        debit(&server, &token, card, "first").await,
        Some((status, body))
    );
    assert_eq!(card_state(&db, card).await, (900, 2));
    server.kill();

    // Dying after work and answer committed, before answering: the retry gets the answer.
    server.env("TESSERA_FAULT_POINT", "idempotency-after-answer");
    server.start().await;
    assert_eq!(debit(&server, &token, card, "second").await, None);
    assert!(
        server.wait_for_exit().await.is_some(),
        "the fault point did not end the process"
    );
    assert_eq!(card_state(&db, card).await, (800, 3));
    server.unset("TESSERA_FAULT_POINT");
    server.start().await;
    let (status, body) = debit(&server, &token, card, "second")
        .await
        .expect("answer");
    assert_eq!((status, &body["value"]), (200, &json!("8.00")), "{body}");
    assert_eq!(card_state(&db, card).await, (800, 3));
}
