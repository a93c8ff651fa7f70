//! Two `tessera serve` processes on one PostgreSQL database placing 200 orders at once on an
//! event that issues an invoice with every order: the invoices are numbered 1 to 200, each
//! number once, none skipped, and every order has one; orders refused among them (a voucher
//! that does not exist, or no room left in the quota of 200 for an order placed together
//! with others) take no number. It needs PostgreSQL (`TESSERA_TEST_DATABASE_URL`)
//! and says so in one line without it.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{organizer_with_admin_token, started_pair};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const EVENT: &str = "/api/v1/organizers/acme/events/conf";
/// Orders placed, half through each process.
const ORDERS: usize = 200;

async fn post(client: &reqwest::Client, url: &str, auth: &str, body: &Value) -> (u16, Value) {
    let r = client
        .post(url)
        .header("Authorization", auth)
        .json(body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invoices_issued_by_two_processes_at_once_are_numbered_without_gaps_or_repeats() {
    if std::env::var("TESSERA_TEST_DATABASE_URL").map_or(true, |u| u.is_empty()) {
        println!(
            "skipped: the two-process invoice numbering test needs PostgreSQL (TESSERA_TEST_DATABASE_URL)"
        );
        return;
    }
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let nodes = started_pair(bin, &db.url).await;
    let bases = [nodes[0].base(), nodes[1].base()];
    let client = reqwest::Client::new();
    let (status, event) = post(
        &client,
        &format!("{}/api/v1/organizers/acme/events/", bases[0]),
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
        &json!({"name": "Hall", "size": ORDERS, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let settings = client
        .patch(format!("{}{EVENT}/settings/", bases[1]))
        .header("Authorization", &auth)
        .json(&json!({"invoice_generate": "True", "invoice_numbers_prefix": "INV-"}))
        .send()
        .await
        .expect("settings");
    assert_eq!(settings.status().as_u16(), 200);

    // More orders than the quota holds: those that find it full are refused.
    let tasks: Vec<_> = (0..ORDERS + ORDERS * 3 / 10)
        .map(|i| {
            let url = format!("{}{EVENT}/orders/", bases[i % 2]);
            let (client, auth) = (client.clone(), auth.clone());
            // Every eleventh order names a voucher that does not exist and is refused.
            let voucher = (i % 11 == 10).then_some("NOSUCHVOUCHER");
            let body = json!({
                "email": format!("buyer{i}@example.org"),
                "invoice_address": {"company": format!("Buyer {i}"), "country": "DE"},
                "positions": [{"item": ticket, "voucher": voucher}],
            });
            tokio::spawn(async move { post(&client, &url, &auth, &body).await })
        })
        .collect();
    let mut placed = BTreeSet::new();
    for t in tasks {
        match t.await.expect("task") {
            (201, body) => {
                placed.insert(body["code"].as_str().expect("code").to_owned());
            }
            (400, _) => {}
            (status, body) => panic!("unexpected {status}: {body}"),
        }
    }
    assert_eq!(placed.len(), ORDERS);

    let mut numbers = Vec::new();
    let mut invoiced = BTreeSet::new();
    let mut page = Some(format!("{}{EVENT}/invoices/?page_size=100", bases[1]));
    while let Some(url) = page {
        let body: Value = client
            .get(&url)
            .header("Authorization", &auth)
            .send()
            .await
            .expect("invoices")
            .json()
            .await
            .expect("page");
        for inv in body["results"].as_array().expect("results") {
            numbers.push(inv["number"].as_str().expect("number").to_owned());
            invoiced.insert(inv["order"].as_str().expect("order").to_owned());
        }
        page = body["next"].as_str().map(str::to_owned);
    }
    let expected: Vec<String> = (1..=ORDERS).map(|n| format!("INV-{n:05}")).collect();
    numbers.sort();
    assert_eq!(numbers, expected, "numbers 1..{ORDERS}, each once");
    assert_eq!(invoiced, placed, "every order has its invoice");
}
