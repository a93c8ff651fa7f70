//! The request log of a real `tessera serve`: a path that carries a secret (a ticket's
//! secret at check-in, an order page's secret) is written with the secret redacted, whatever
//! the answer was.

use tessera_tests::fresh_database;
use tessera_tests::process::{Server, organizer_with_admin_token};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

#[tokio::test]
async fn secrets_in_paths_never_reach_the_request_log() {
    let database = fresh_database().await;
    let mut server = Server::new_logging_aside(std::path::Path::new(BIN), &database.url);
    server.env("RUST_LOG", "info");
    server.start().await;
    let token = organizer_with_admin_token(std::path::Path::new(BIN), &database.url, "acme");
    let client = reqwest::Client::new();
    let base = server.base();
    let secrets = ["leakyticketsecret01", "leaky%2Fslashed%2Fsecret02"];
    for secret in secrets {
        let path = format!(
            "{base}/api/v1/organizers/acme/events/conf/checkinlists/1/positions/{secret}/redeem/"
        );
        let r = client
            .post(&path)
            .header("Authorization", &token)
            .json(&serde_json::json!({}))
            .send()
            .await
            .expect("redeem");
        assert!(r.status().is_client_error(), "{}", r.status());
    }
    let page = client
        .get(format!("{base}/acme/conf/order/ABC12/leakyordersecret03/"))
        .send()
        .await
        .expect("order page");
    assert_eq!(page.status().as_u16(), 404);
    // The log is written as requests end; give the last line a moment.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.log_text();
    for secret in [
        "leakyticketsecret01",
        "leaky",
        "secret02",
        "leakyordersecret03",
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
    assert!(
        log.matches("positions/<redacted>/redeem").count() >= 2,
        "{log}"
    );
}
