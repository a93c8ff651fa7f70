//! The documents run as a reader runs them. The README's tour: `tessera demo` on a fresh database (its SQLite
//! file under `./data` of a directory of its own, or the PostgreSQL database of
//! `TESSERA_TEST_DATABASE_URL`, exported to the tour as `TESSERA_DATABASE_URL`), the `T=...` lines it prints pasted first, then every block marked
//! `<!-- tour -->` in order, in one bash (the demo's port in place of 8000, the only
//! change). Every `curl` of the tour is checked: a call followed by `# -> NNN ...` must
//! answer NNN, any other must succeed (2xx), and every `"key": value` the `->` line shows
//! (without `...`) must be in the answer. The deployment guide's first sale likewise, on a
//! `tessera serve` of an empty, migrated database, from `tessera admin bootstrap` to a paid
//! order. So neither can drift from the service.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tessera_tests::fresh_database;
use tessera_tests::process::{free_port, workspace};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// The marker of a block the README's tour runs, on the line before its opening fence.
const TOUR: &str = "<!-- tour -->\n```sh\n";

/// The marker of a block of the deployment guide's first sale.
const GUIDE: &str = "<!-- guide -->\n```sh\n";

/// Records every call's status and answer, numbered in order, and prints the answer as curl
/// would.
const PRELUDE: &str = r#"set -euo pipefail
curl() {
  local n out code
  n=$(( $(wc -l < "$CALLS/statuses") + 1 ))
  out="$CALLS/answer.$n"
  code=$(command curl -sS -o "$out" -w '%{http_code}' "$@")
  printf '%s\n' "$code" >> "$CALLS/statuses"
  cat "$out"
}
"#;

/// The shell blocks of a document marked with `marker`, in order.
fn marked<'a>(document: &'a str, marker: &str) -> Vec<&'a str> {
    document
        .match_indices(marker)
        .map(|(at, _)| {
            let body = &document[at + marker.len()..];
            &body[..body.find("```").expect("closing fence")]
        })
        .collect()
}

/// What the tour says of one call: the line that makes it, the status it documents (any
/// success when none) and the `"key": value` pairs its answer shows.
#[derive(Debug)]
struct Documented {
    call: String,
    status: Option<u16>,
    shows: Vec<(String, Value)>,
}

/// A line that makes a call: one that starts with `curl`, or takes a call's answer
/// (`X=$(curl ...`).
fn makes_call(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("curl ") || (line.contains("=$(curl ") && !line.starts_with('#'))
}

fn documented(block: &str) -> Vec<Documented> {
    let mut calls: Vec<Documented> = Vec::new();
    for line in block.lines() {
        if makes_call(line) {
            calls.push(Documented {
                call: line.trim().to_owned(),
                status: None,
                shows: Vec::new(),
            });
        } else if let Some(answer) = line.trim().strip_prefix("# ->") {
            let call = calls
                .last_mut()
                .expect("a documented answer follows a call");
            let answer = answer.trim();
            if let Some(status) = answer.get(..3).and_then(|s| s.parse().ok()) {
                call.status = Some(status);
            }
            call.shows.extend(pairs(answer));
        }
    }
    calls
}

/// The `"key": value` pairs of a documented answer whose value is a string, number or
/// boolean given in full (not `"..."`).
fn pairs(answer: &str) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    let mut rest = answer;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let key = &after[..end];
        let tail = &after[end + 1..];
        if let Some(value) = tail.strip_prefix(": ") {
            let literal: String = if let Some(s) = value.strip_prefix('"') {
                s.find('"')
                    .map_or(String::new(), |e| format!("\"{}\"", &s[..e]))
            } else {
                value
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
                    .collect()
            };
            if !literal.is_empty()
                && !literal.contains("...")
                && let Ok(v) = serde_json::from_str::<Value>(&literal)
                && !v.is_object()
            {
                found.push((key.to_owned(), v));
            }
            rest = &tail[1..];
        } else {
            rest = tail;
        }
    }
    found
}

/// Whether `key` has `value` somewhere in `answer`.
fn holds(answer: &Value, key: &str, value: &Value) -> bool {
    match answer {
        Value::Object(o) => o.get(key) == Some(value) || o.values().any(|v| holds(v, key, value)),
        Value::Array(a) => a.iter().any(|v| holds(v, key, value)),
        _ => false,
    }
}

/// A running `tessera demo`, stopped when dropped (also when the test fails).
struct Demo(Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tessera demo` in `dir`, serving on `port`; gives the process and the lines it prints
/// for the reader to paste (`T=...`).
fn start_demo(dir: &Path, port: u16, database: &[(&str, String)]) -> (Demo, Vec<String>) {
    let mut child = Command::new(BIN)
        .args(["demo", "--bind", &format!("127.0.0.1:{port}")])
        .current_dir(dir)
        .env_remove("TESSERA_DATABASE_URL")
        .env_remove("TESSERA_CONFIG")
        .envs(database.iter().map(|(k, v)| (k, v)))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tessera demo");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let demo = Demo(child);
    let mut pasted = Vec::new();
    for line in stdout.lines() {
        let line = line.expect("demo output");
        let name = line.split('=').next().unwrap_or_default();
        if ["T", "TALK", "P", "ID", "SECRET"].contains(&name) {
            pasted.push(line.clone());
        }
        if line.starts_with("SECRET=") {
            break;
        }
    }
    assert_eq!(
        pasted.len(),
        5,
        "the demo prints T, TALK, P, ID and SECRET: {pasted:?}"
    );
    (demo, pasted)
}

/// Runs `blocks` in order in one bash in `dir`, after `pasted` (the lines a reader pastes
/// first), with the service's port in place of 8000 and `env` set; checks every call against
/// what the blocks document; gives what the blocks printed.
fn run_as_written(
    dir: &Path,
    blocks: &[&str],
    pasted: &[String],
    port: u16,
    env: &[(&str, String)],
) -> String {
    let calls = dir.join("calls");
    std::fs::create_dir_all(&calls).expect("dir");
    std::fs::write(calls.join("statuses"), "").expect("statuses");
    let script = format!(
        "{PRELUDE}{}\n{}",
        pasted.join("\n"),
        blocks
            .join("\n")
            .replace("127.0.0.1:8000", &format!("127.0.0.1:{port}"))
    );
    let run = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("CALLS", &calls)
        .env_remove("TESSERA_DATABASE_URL")
        .env_remove("TESSERA_CONFIG")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("bash");
    let said = String::from_utf8_lossy(&run.stdout).into_owned();
    let complaints = String::from_utf8_lossy(&run.stderr);
    let tail = said.char_indices().rev().nth(2000).map_or(0, |(i, _)| i);
    let said_last = &said[tail..];

    let statuses: Vec<u16> = std::fs::read_to_string(calls.join("statuses"))
        .expect("statuses")
        .lines()
        .map(|l| l.parse().expect("status"))
        .collect();
    let expected: Vec<Documented> = blocks.iter().flat_map(|b| documented(b)).collect();
    for (n, (doc, status)) in expected.iter().zip(&statuses).enumerate() {
        let answer_text =
            std::fs::read_to_string(calls.join(format!("answer.{}", n + 1))).unwrap_or_default();
        match doc.status {
            Some(documented) => assert_eq!(
                *status,
                documented,
                "call {} `{}` answered {status}: {answer_text}",
                n + 1,
                doc.call
            ),
            None => assert!(
                (200..300).contains(status),
                "call {} `{}` answered {status}: {answer_text}",
                n + 1,
                doc.call
            ),
        }
        if !doc.shows.is_empty() {
            let answer: Value = serde_json::from_str(&answer_text).unwrap_or_else(|_| {
                panic!("call {} `{}`: not JSON: {answer_text}", n + 1, doc.call)
            });
            for (key, value) in &doc.shows {
                assert!(
                    holds(&answer, key, value),
                    "call {} `{}`: the document shows \"{key}\": {value}, the answer is {answer}",
                    n + 1,
                    doc.call
                );
            }
        }
    }
    assert!(
        run.status.success(),
        "the blocks stopped after {} calls: {complaints}\n...{said_last}",
        statuses.len()
    );
    assert_eq!(
        statuses.len(),
        expected.len(),
        "every call of the blocks was made: {complaints}"
    );
    said
}

/// The database of a test: on PostgreSQL, given as a reader who exported
/// `TESSERA_DATABASE_URL` gives it; on SQLite, nothing (the demo's own file under `./data`).
async fn database() -> (tessera_tests::TestDatabase, Vec<(&'static str, String)>) {
    let db = fresh_database().await;
    let env = if db.url.starts_with("postgres") {
        vec![("TESSERA_DATABASE_URL", db.url.clone())]
    } else {
        Vec::new()
    };
    (db, env)
}

/// Waits until something listens on `port` (at most 30 seconds).
fn wait_for(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the service serves"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn the_readme_tour_runs_as_written_and_answers_as_documented() {
    let (_db, env) = database().await;
    let readme = std::fs::read_to_string(workspace().join("README.md")).expect("README.md");
    let blocks = marked(&readme, TOUR);
    assert!(blocks.len() >= 2, "the tour's blocks are marked {TOUR:?}");
    let dir = tempfile::tempdir().expect("dir");
    let port = free_port();
    let (demo, pasted) = start_demo(dir.path(), port, &env);
    wait_for(port);
    // The reader runs the binary they built; so does the tour.
    let release = dir.path().join("target/release");
    std::fs::create_dir_all(&release).expect("dir");
    std::os::unix::fs::symlink(BIN, release.join("tessera")).expect("link");
    let said = run_as_written(dir.path(), &blocks, &pasted, port, &env);
    drop(demo);
    assert!(said.contains("queued"), "the outbox holds the tour's mails");
}

#[tokio::test]
async fn the_deployment_guide_takes_an_empty_service_to_its_first_paid_order() {
    let (db, _) = database().await;
    let guide =
        std::fs::read_to_string(workspace().join("docs/deployment.md")).expect("deployment.md");
    let blocks = marked(&guide, GUIDE);
    assert!(
        !blocks.is_empty(),
        "the first sale's blocks are marked {GUIDE:?}"
    );
    let dir = tempfile::tempdir().expect("dir");
    let migrated = Command::new(BIN)
        .args(["migrate", "--database-url", &db.url])
        .output()
        .expect("migrate");
    assert!(migrated.status.success(), "{migrated:?}");
    let mut server = tessera_tests::process::Server::new_logging_aside(Path::new(BIN), &db.url);
    server.start().await;
    let port: u16 = server
        .base()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    // On the server, `tessera` is on the PATH and reads the service's configuration; here
    // the database URL stands in for that file.
    let bin_dir = Path::new(BIN).parent().expect("dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [("TESSERA_DATABASE_URL", db.url.clone()), ("PATH", path)];
    run_as_written(dir.path(), &blocks, &[], port, &env);
}

#[test]
fn documented_answers_are_read_as_the_tour_writes_them() {
    let block = "curl a\n# -> 409 {\"value\": [\"...\"]}\nX=$(curl -s b | field id)\n\
                 echo \"$X\"\n# -> {\"status\": \"n\", \"url\": \"http://x/.../\", \"local_id\": 1, \
                 \"live\": false}\n";
    let calls = documented(block);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, Some(409));
    assert!(calls[0].shows.is_empty());
    assert_eq!(calls[1].status, None);
    assert_eq!(
        calls[1].shows,
        vec![
            ("status".to_owned(), Value::from("n")),
            ("local_id".to_owned(), Value::from(1)),
            ("live".to_owned(), Value::from(false)),
        ]
    );
}
