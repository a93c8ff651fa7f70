//! pretix-banktool 1.1.0, unchanged, uploads a bank statement to `tessera serve`, and the
//! order the statement names becomes paid. The tool runs its own command line (`test`, then
//! `upload` twice); only its online banking connection is replaced by a fixed statement
//! (`tests/banktool/upload.py`). The statement holds the order's transfer as the tool's
//! users' banks book it (the reference with the event and order code, a payer with IBAN, the
//! bank's ID), a transfer for something else, and one the tool is told to ignore. The second
//! upload of the same statement pays nothing again.
//!
//! The tool comes from PyPI, pinned in `.ci/requirements-banktool.txt` and installed by
//! `.ci/setup` into `.ci/venv-banktool`. Without that environment the test is skipped,
//! unless `TESSERA_BANKTOOL=required` (as `.ci/run` sets), where it fails.

use std::path::Path;

use serde_json::{Value, json};
use tessera_tests::fresh_database;
use tessera_tests::process::{
    Server, admin, installed_tool, organizer_with_admin_token, workspace,
};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");
const ACCOUNT: &str = "DE02120300000000202051";

/// A team token of the organizer `demo` with these arguments of `create-token`.
fn token(url: &str, args: &[&str]) -> String {
    let mut all = vec!["admin", "create-token", "--organizer", "demo"];
    all.extend_from_slice(args);
    let out = admin(Path::new(BIN), url, &all);
    out.lines().last().expect("token line").trim().to_owned()
}

struct Api {
    http: reqwest::Client,
    base: String,
    auth: String,
}

impl Api {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self
            .http
            .request(
                method.clone(),
                format!("{}/api/v1/organizers/demo/{path}", self.base),
            )
            .header("Authorization", &self.auth);
        if let Some(body) = &body {
            request = request.json(body);
        }
        let r = request.send().await.expect("request");
        let status = r.status().as_u16();
        let answer: Value = r.json().await.unwrap_or(Value::Null);
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
        answer
    }
}

/// Runs the tool with the statement; its exit code and output.
fn banktool(python: &Path, statement: &Value, args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("statement.json");
    std::fs::write(&file, statement.to_string()).expect("statement");
    let out = std::process::Command::new(python)
        .arg(workspace().join("tests/banktool/upload.py"))
        .arg(&file)
        .arg("pretix-banktool")
        .args(args)
        .output()
        .expect("run pretix-banktool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pretix_banktool_uploads_a_statement_and_the_named_order_becomes_paid() {
    let Some(python) = installed_tool(
        ".ci/venv-banktool/bin/python",
        "TESSERA_BANKTOOL",
        "pretix-banktool",
    ) else {
        return;
    };
    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let setup = Api {
        http: reqwest::Client::new(),
        base: String::new(),
        auth: organizer_with_admin_token(bin, &db.url, "demo"),
    };
    // The tool's key: a team that may view and change orders, as its setup asks.
    let key = token(
        &db.url,
        &[
            "--team",
            "Bank",
            "--permission",
            "can_view_orders",
            "--permission",
            "can_change_orders",
        ],
    );
    let mut server = Server::new_logging_aside(bin, &db.url);
    server.start().await;
    let api = Api {
        base: server.base(),
        ..setup
    };

    api.call(
        reqwest::Method::POST,
        "events/",
        Some(
            json!({"name": {"en": "Demo"}, "slug": "demo", "currency": "EUR",
                    "date_from": "2030-06-01T09:00:00Z", "plugins": ["banktransfer"]}),
        ),
    )
    .await;
    api.call(
        reqwest::Method::PATCH,
        "events/demo/settings/",
        Some(json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00"})),
    )
    .await;
    let item = api
        .call(
            reqwest::Method::POST,
            "events/demo/items/",
            Some(json!({"name": {"en": "Ticket"}, "default_price": "23.00"})),
        )
        .await;
    api.call(
        reqwest::Method::POST,
        "events/demo/quotas/",
        Some(json!({"name": "Hall", "size": 10, "items": [item["id"]]})),
    )
    .await;
    let order = api
        .call(
            reqwest::Method::POST,
            "events/demo/orders/",
            Some(
                json!({"email": "ada@example.org", "payment_provider": "banktransfer",
                        "positions": [{"item": item["id"]}]}),
            ),
        )
        .await;
    let code = order["code"].as_str().expect("code").to_owned();

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("demo.cfg");
    std::fs::write(
        &config,
        format!(
            "[banktool]\ntype = fints\n\n[fints]\nblz = 12030000\nendpoint = https://bank.invalid/fints\n\
             username = demo\niban = {ACCOUNT}\npin = 1234\n\n[pretix]\nserver = {}/\norganizer = demo\nkey = {key}\n",
            api.base
        ),
    )
    .expect("config");
    let config = config.to_str().expect("config path");
    let statement = json!([
        {"amount": "23.00", "posting_text": "GUTSCHRIFT", "purpose": format!("DEMO-{code} thanks"),
         "applicant_name": "Ada Lovelace", "applicant_iban": "DE89370400440532013000",
         "end_to_end_reference": format!("DEMO-{code}"), "bank_reference": "BANKREF1"},
        {"amount": "-1200.00", "posting_text": "DAUERAUFTRAG", "purpose": "Rent for the hall",
         "applicant_name": "Hall GmbH", "bank_reference": "BANKREF2"},
        {"amount": "5.00", "posting_text": "GUTSCHRIFT", "purpose": "IGNORE me",
         "bank_reference": "BANKREF3"},
    ]);

    let (status, out) = banktool(&python, &statement, &["test", config, "--no-fints"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("Connection successful."), "{out}");

    let upload = [
        "upload",
        config,
        "--days",
        "7",
        "--bank-ids",
        "--ignore",
        "^GUTSCHRIFT IGNORE",
    ];
    let (status, out) = banktool(&python, &statement, &upload);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("Job uploaded."), "{out}");

    let jobs = api
        .call(reqwest::Method::GET, "bankimportjobs/", None)
        .await;
    assert_eq!(jobs["count"], 1, "{jobs}");
    let job = &jobs["results"][0];
    assert_eq!(job["state"], "completed");
    assert_eq!(job["event"], Value::Null);
    assert_eq!(job["currency"], "EUR");
    let transactions = job["transactions"].as_array().expect("transactions");
    assert_eq!(transactions.len(), 2, "the ignored one is not sent: {job}");
    let paid = &transactions[0];
    assert_eq!(paid["state"], "valid", "{job}");
    assert_eq!(paid["order"], code.as_str());
    assert_eq!(paid["amount"], "23.00");
    assert_eq!(paid["external_id"], "BANKREF1");
    assert_eq!(paid["payer"], "Ada Lovelace - DE89370400440532013000");
    assert_eq!(transactions[1]["state"], "nomatch");
    let shown = api
        .call(
            reqwest::Method::GET,
            &format!("bankimportjobs/{}/", job["id"]),
            None,
        )
        .await;
    assert_eq!(&shown, job);
    let order = api
        .call(
            reqwest::Method::GET,
            &format!("events/demo/orders/{code}/"),
            None,
        )
        .await;
    assert_eq!(order["status"], "p", "{order}");
    let confirmed: Vec<&Value> = order["payments"]
        .as_array()
        .expect("payments")
        .iter()
        .filter(|p| p["state"] == "confirmed")
        .collect();
    assert_eq!(confirmed.len(), 1, "{order}");
    assert_eq!(confirmed[0]["provider"], "banktransfer");

    let (status, out) = banktool(&python, &statement, &upload);
    assert_eq!(status, 0, "{out}");
    let jobs = api
        .call(reqwest::Method::GET, "bankimportjobs/", None)
        .await;
    assert_eq!(jobs["count"], 2);
    assert_eq!(
        jobs["results"][0]["transactions"],
        json!([]),
        "a statement uploaded again brings nothing new"
    );
    let order = api
        .call(
            reqwest::Method::GET,
            &format!("events/demo/orders/{code}/"),
            None,
        )
        .await;
    let confirmed = order["payments"]
        .as_array()
        .expect("payments")
        .iter()
        .filter(|p| p["state"] == "confirmed")
        .count();
    assert_eq!(confirmed, 1, "nothing is paid twice: {order}");
}
