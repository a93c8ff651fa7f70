//! Two `tessera serve` processes on one PostgreSQL database, as two gates: every ticket is
//! scanned at both at the same moment, and each is admitted once (one `ok`, one
//! `already_redeemed`), with one successful check-in stored. It needs PostgreSQL
//! (`TESSERA_TEST_DATABASE_URL`) and says so in one line without it.

use std::path::Path;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{organizer_with_admin_token, started_pair};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const EVENT: &str = "/api/v1/organizers/acme/events/conf";
/// Tickets, each scanned twice at once.
const TICKETS: usize = 40;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_gates_scanning_one_ticket_at_the_same_moment_admit_it_once() {
    if std::env::var("TESSERA_TEST_DATABASE_URL").map_or(true, |u| u.is_empty()) {
        println!("skipped: the double scan test needs PostgreSQL (TESSERA_TEST_DATABASE_URL)");
        return;
    }
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let nodes = started_pair(bin, &db.url).await;
    let (a, b) = (nodes[0].base(), nodes[1].base());
    let client = reqwest::Client::new();
    let (status, event) = post(
        &client,
        &format!("{a}/api/v1/organizers/acme/events/"),
        &auth,
        &json!({"name": {"en": "Conf"}, "slug": "conf", "currency": "EUR",
                "date_from": "2030-06-01T09:00:00Z"}),
    )
    .await;
    assert_eq!(status, 201, "{event}");
    let (status, item) = post(
        &client,
        &format!("{a}{EVENT}/items/"),
        &auth,
        &json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
    )
    .await;
    assert_eq!(status, 201, "{item}");
    let ticket = item["id"].as_i64().expect("item");
    let (status, quota) = post(
        &client,
        &format!("{b}{EVENT}/quotas/"),
        &auth,
        &json!({"name": "Hall", "size": null, "items": [ticket]}),
    )
    .await;
    assert_eq!(status, 201, "{quota}");
    let (status, list) = post(
        &client,
        &format!("{a}{EVENT}/checkinlists/"),
        &auth,
        &json!({"name": "Entrance"}),
    )
    .await;
    assert_eq!(status, 201, "{list}");
    let list = list["id"].as_i64().expect("list");
    let mut secrets = Vec::new();
    for n in 0..TICKETS {
        let (status, order) = post(
            &client,
            &format!("{a}{EVENT}/orders/"),
            &auth,
            &json!({"email": format!("guest{n}@example.org"), "status": "p",
                    "positions": [{"item": ticket}]}),
        )
        .await;
        assert_eq!(status, 201, "{order}");
        secrets.push(
            order["positions"][0]["secret"]
                .as_str()
                .expect("secret")
                .to_owned(),
        );
    }
    let (url_a, url_b) = (
        format!("{a}/api/v1/organizers/acme/checkinrpc/redeem/"),
        format!("{b}/api/v1/organizers/acme/checkinrpc/redeem/"),
    );
    for secret in &secrets {
        let body = json!({"lists": [list], "secret": secret});
        let (x, y) = tokio::join!(
            post(&client, &url_a, &auth, &body),
            post(&client, &url_b, &auth, &body),
        );
        let mut statuses = [x.0, y.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 400], "{} / {}", x.1, y.1);
        let refused = if x.0 == 400 { &x.1 } else { &y.1 };
        assert_eq!(refused["reason"], "already_redeemed", "{refused}");
    }
    let conn = sea_orm::Database::connect(&db.url).await.expect("connect");
    let row = conn
        .query_one_raw(Statement::from_string(
            conn.get_database_backend(),
            "SELECT COUNT(*) AS n, COUNT(DISTINCT position_id) AS d FROM checkins WHERE successful",
        ))
        .await
        .expect("count")
        .expect("row");
    let n: i64 = row.try_get("", "n").expect("n");
    let d: i64 = row.try_get("", "d").expect("d");
    assert_eq!((n, d), (TICKETS as i64, TICKETS as i64));
}
