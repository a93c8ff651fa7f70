//! The OpenAPI document against the server it describes: schemathesis generates requests
//! for every operation from the document (valid ones and invalid ones) and checks each answer
//! against it, on a server over TCP with the demo data on a fresh database (SQLite, or
//! PostgreSQL when `TESSERA_TEST_DATABASE_URL` is set).
//!
//! schemathesis comes from PyPI, pinned in `.ci/requirements-schemathesis.txt` and installed
//! by `.ci/setup` into `.ci/venv`. Without it the test is skipped, unless
//! `TESSERA_SCHEMATHESIS=required` (as `.ci/run` sets), where it fails. The run is bounded:
//! [`MAX_EXAMPLES`] cases per operation and phase, a fixed seed (`TESSERA_SCHEMATHESIS_SEED`
//! picks another), and [`TIME_LIMIT`] in all; `tests/schemathesis/schemathesis.toml` holds
//! the settings the command line cannot give.

use std::process::Stdio;
use std::time::Duration;

use tessera_plugin_banktransfer::BankTransfer;
use tessera_tests::TestApp;
use tessera_tests::process::{installed_tool, workspace};
use tokio::process::Command;

/// The checks of the run: no server error, and every status, media type and body as
/// documented; invalid data refused, other methods refused with 405, and authentication
/// required where the document says so.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
response_schema_conformance,negative_data_rejection,unsupported_method,ignored_auth";

/// Cases per operation and phase.
const MAX_EXAMPLES: &str = "10";

/// The seed of the generated cases unless `TESSERA_SCHEMATHESIS_SEED` gives one.
const SEED: &str = "20261124";

/// The longest the whole run may take.
const TIME_LIMIT: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_answers_as_the_document_says_to_generated_requests() {
    let Some(st) = installed_tool(".ci/venv/bin/st", "TESSERA_SCHEMATHESIS", "schemathesis") else {
        return;
    };
    let app = TestApp::spawn_app(|_| {}, |app| app.plugin(BankTransfer)).await;
    let seed = tessera::admin::seed_demo(&app.state)
        .await
        .expect("demo data");
    let base = app.serve().await;
    let work = tempfile::tempdir().expect("temp dir");
    let run = Command::new(&st)
        .arg("--config-file")
        .arg(workspace().join("tests/schemathesis/schemathesis.toml"))
        .args(["run", &format!("{base}/api/v1/openapi.json")])
        .args(["--header", &format!("Authorization: Token {}", seed.token)])
        .args(["--checks", CHECKS])
        .args(["--max-examples", MAX_EXAMPLES])
        .args([
            "--seed",
            &std::env::var("TESSERA_SCHEMATHESIS_SEED").unwrap_or_else(|_| SEED.into()),
        ])
        // One worker: with two, hypothesis parses lambdas' source on two threads at once,
        // which CPython 3.11's `ast.parse` does not survive now and then ("AST constructor
        // recursion depth mismatch", a runtime error of the run, not a finding).
        .args(["--workers", "1", "--request-timeout", "30"])
        .args(["--generation-database", "none", "--no-color"])
        .env("TESSERA_DEMO_CLIENT_ID", &seed.client_id)
        .env(
            "TESSERA_DEMO_REDIRECT_URI",
            tessera::admin::DEMO_REDIRECT_URI,
        )
        .current_dir(work.path())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(TIME_LIMIT, run)
        .await
        .unwrap_or_else(|_| panic!("schemathesis ran longer than {TIME_LIMIT:?}"))
        .expect("run schemathesis");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Long generated bodies make long reports: the summary and the last failures suffice.
    let tail = &stdout[stdout.floor_char_boundary(stdout.len().saturating_sub(60_000))..];
    assert!(
        output.status.success(),
        "schemathesis found problems:\n{tail}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = stdout.lines().rev().find(|l| !l.trim().is_empty());
    println!(
        "schemathesis: {}",
        summary.unwrap_or_default().trim_matches('=')
    );
}
