//! Two `tessera serve` processes on one PostgreSQL database booking on one gift card at
//! once: each process applies its concurrent bookings together, and the two processes'
//! batches take turns on the card's row lock. The ledger never goes below zero, the card's
//! value is the sum of its ledger, and every accepted booking was answered the balance its
//! ledger entry left. It needs PostgreSQL (`TESSERA_TEST_DATABASE_URL`) and says so in one
//! line without it.

use std::path::Path;

use serde_json::{Value, json};
use tessera_tests::process::{organizer_with_admin_token, started_pair};
use tessera_tests::{cents, check_ledger, fresh_database};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const CARDS: &str = "/api/v1/organizers/acme/giftcards/";
/// Bookings sent to each process.
const EACH: usize = 150;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bookings_on_one_card_through_two_processes_are_exact() {
    if std::env::var("TESSERA_TEST_DATABASE_URL").map_or(true, |u| u.is_empty()) {
        println!(
            "skipped: the two-process gift card test needs PostgreSQL (TESSERA_TEST_DATABASE_URL)"
        );
        return;
    }
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let nodes = started_pair(bin, &db.url).await;
    let bases = [nodes[0].base(), nodes[1].base()];
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{}{CARDS}", bases[0]))
        .header("Authorization", &auth)
        .json(&json!({"value": "20.00", "currency": "EUR"}))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("card");
    let id = created["id"].as_i64().expect("card id");

    // Debits of 0.50 and credits of 0.20, about a third credits: the card runs dry on the
    // way and some debits are refused.
    let tasks: Vec<_> = (0..2 * EACH)
        .map(|i| {
            let url = format!("{}{CARDS}{id}/transact/", bases[i % 2]);
            let (client, auth) = (client.clone(), auth.clone());
            let value = if i % 3 == 0 { "0.20" } else { "-0.50" };
            tokio::spawn(async move {
                let r = client
                    .post(url)
                    .header("Authorization", auth)
                    .json(&json!({"value": value, "text": format!("booking {i}")}))
                    .send()
                    .await
                    .expect("transact");
                let status = r.status().as_u16();
                (status, r.json::<Value>().await.unwrap_or(Value::Null))
            })
        })
        .collect();
    let mut answered = Vec::new();
    let mut refused = 0;
    for t in tasks {
        match t.await.expect("task") {
            (200, body) => answered.push(cents(&body["value"])),
            (409, _) => refused += 1,
            (status, body) => panic!("unexpected {status}: {body}"),
        }
    }
    assert!(refused > 0, "the card cannot cover every debit");

    let mut entries = Vec::new();
    let mut page = Some(format!(
        "{}{CARDS}{id}/transactions/?ordering=id&page_size=100",
        bases[1]
    ));
    while let Some(url) = page {
        let body: Value = client
            .get(&url)
            .header("Authorization", &auth)
            .send()
            .await
            .expect("ledger")
            .json()
            .await
            .expect("ledger page");
        entries.extend(body["results"].as_array().expect("results").iter().cloned());
        page = body["next"].as_str().map(str::to_owned);
    }
    let balance = check_ledger(&entries, answered);
    let card: Value = client
        .get(format!("{}{CARDS}{id}/", bases[0]))
        .header("Authorization", &auth)
        .send()
        .await
        .expect("card")
        .json()
        .await
        .expect("card body");
    assert_eq!(cents(&card["value"]), balance);
}
