//! Clients generated from the checked-in OpenAPI document (`openapi/openapi.json`) work as
//! their users expect:
//! - openapi-python-client generates a Python client with no warning and no schema or
//!   operation left out, and that client alone runs the README's tour
//!   (`tests/clients/tour.py`) against `tessera serve` on a fresh database (SQLite, or
//!   PostgreSQL when `TESSERA_TEST_DATABASE_URL` is set), checking every typed answer;
//! - openapi-typescript generates TypeScript types that `tsc --strict` accepts together
//!   with code written against them (`tests/clients/usage.ts`).
//!
//! The generators are pinned (`.ci/requirements-clients.txt`,
//! `tests/clients/package-lock.json`) and installed by `.ci/setup`. Without them the tests
//! are skipped, unless `TESSERA_GENERATED_CLIENTS=required` (as `.ci/run` sets), where they
//! fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tessera_tests::fresh_database;
use tessera_tests::process::{Server, installed_tool, organizer_with_admin_token, workspace};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

fn document() -> PathBuf {
    workspace().join("openapi/openapi.json")
}

/// Standard output and error of a finished command, asserting that it succeeded.
fn succeeded(what: &str, out: Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_client_generated_from_the_document_runs_the_readme_tour() {
    let Some(generator) = installed_tool(
        ".ci/venv-clients/bin/openapi-python-client",
        "TESSERA_GENERATED_CLIENTS",
        "openapi-python-client",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    // The generator formats the client with ruff from its own environment.
    let venv_bin = generator.parent().expect("venv bin");
    let path = format!(
        "{}:{}",
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(&generator)
        .args(["generate", "--meta", "none", "--path"])
        .arg(document())
        .arg("--output-path")
        .arg(dir.path().join("tessera_client"))
        .env("PATH", &path)
        .output()
        .expect("run openapi-python-client");
    let log = succeeded("openapi-python-client", out);
    for sign in ["warning", "unable", "skipping", "could not", "error"] {
        assert!(
            !log.to_lowercase().contains(sign),
            "the generator did not run clean:\n{log}"
        );
    }

    let db = fresh_database().await;
    let bin = Path::new(BIN);
    let auth = organizer_with_admin_token(bin, &db.url, "acme");
    let token = auth.trim_start_matches("Token ");
    let mut server = Server::new_logging_aside(bin, &db.url);
    server.start().await;
    let out = Command::new(venv_bin.join("python"))
        .arg(workspace().join("tests/clients/tour.py"))
        .env("PYTHONPATH", dir.path())
        .env("TESSERA_URL", server.base())
        .env("TESSERA_TOKEN", token)
        .env("TESSERA_ORGANIZER", "acme")
        .output()
        .expect("run the tour");
    let log = succeeded("the tour through the generated client", out);
    assert!(log.contains("tour passed"), "{log}");
}

#[test]
fn typescript_types_generated_from_the_document_compile_strictly() {
    let Some(modules) = installed_tool(
        "tests/clients/node_modules/.bin",
        "TESSERA_GENERATED_CLIENTS",
        "openapi-typescript",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let types = dir.path().join("tessera.ts");
    // Fields with a default are optional in request bodies, as the document says; the
    // generator's default would make them required.
    let out = Command::new(modules.join("openapi-typescript"))
        .arg(document())
        .arg("--output")
        .arg(&types)
        .args(["--default-non-nullable", "false"])
        .output()
        .expect("run openapi-typescript");
    let log = succeeded("openapi-typescript", out);
    assert!(!log.contains('⚠'), "openapi-typescript warned:\n{log}");
    let usage = dir.path().join("usage.ts");
    std::fs::copy(workspace().join("tests/clients/usage.ts"), &usage).expect("copy usage.ts");
    let out = Command::new(modules.join("tsc"))
        .args([
            "--strict",
            "--noEmit",
            "--target",
            "es2022",
            "--module",
            "es2022",
            "--moduleResolution",
            "bundler",
        ])
        .arg(&usage)
        .arg(&types)
        .output()
        .expect("run tsc");
    succeeded("tsc --strict", out);
}
