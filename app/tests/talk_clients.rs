//! The talk side as the pretalx clients conference tools use see it: pytanis 0.10 (with its
//! default expansions and the `v1` version header) and pretalx-client 0.1.1 (with a token and
//! anonymously), unchanged, read the demo conference from a `tessera serve` process on a
//! fresh database (SQLite, or PostgreSQL when `TESSERA_TEST_DATABASE_URL` is set).
//!
//! The conference is seeded as a user would: `tessera demo` (then stopped), and through the
//! talk-side API 40 more submissions with a speaker and an answer each, so that submissions
//! and answers take two pages. What each client returns is compared with what a plain HTTP
//! reader gets from the same endpoints (every page, `count` equal to the items), and that
//! with the rows in the database: the same items, counted in full, with the same fields where
//! the client shows them. The clients swallow what their models refuse (pytanis logs an error
//! and drops the item; pretalx-client logs and falls back to a dictionary): such log lines are
//! failures too. All problems of a run are reported together.
//!
//! The clients come from PyPI, pinned in `.ci/requirements-talk-clients.txt` and installed by
//! `.ci/setup` into `.ci/venv-talk-clients`; the scripts that drive them are in
//! `tests/talk_clients/`. Without that environment the test is skipped, unless
//! `TESSERA_TALK_CLIENTS=required` (as `.ci/run` sets), where it fails.
//!
//! What each client reads is listed in [`PYTANIS`], [`PRETALX_CLIENT`] and
//! [`PRETALX_CLIENT_ANONYMOUS`].

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use tessera::admin::DEMO_EVENT;
use tessera_tests::process::{Server, free_port, installed_tool, workspace};
use tessera_tests::{TestDatabase, fresh_database};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// What pytanis reads (always with a token), by the names of its methods.
const PYTANIS: &[&str] = &[
    "submissions",
    "talks",
    "speakers",
    "reviews",
    "rooms",
    "tags",
    "tracks",
    "submission_types",
    "questions",
    "answers",
];

/// What pretalx-client reads with a token, by the names of its `fetch_` methods.
const PRETALX_CLIENT: &[&str] = &[
    "rooms",
    "submission_types",
    "tracks",
    "tags",
    "speakers",
    "talks",
    "submissions",
    "slots",
];

/// What pretalx-client reads anonymously: the public schedule's data (the events are read
/// in every run). Not tags: pretalx answers 401 to anonymous reads of them, and so do we.
const PRETALX_CLIENT_ANONYMOUS: &[&str] = &[
    "rooms",
    "submission_types",
    "tracks",
    "speakers",
    "talks",
    "slots",
];

/// Submissions added through the API to the demo's twelve: more than a page in all.
const EXTRA_SUBMISSIONS: usize = 40;

/// The longest a client's run may take.
const CLIENT_TIME_LIMIT: Duration = Duration::from_secs(180);

/// The path of a client's resource name under `/api/events/{event}/`.
fn path_of(resource: &str) -> &str {
    match resource {
        "submission_types" => "submission-types",
        "talks" => "submissions",
        other => other,
    }
}

/// The key naming an item of the resource.
fn key_of(resource: &str) -> &'static str {
    match resource {
        "submissions" | "talks" | "speakers" => "code",
        _ => "id",
    }
}

/// An item's key as text (codes and IDs alike).
fn key(item: &Value, name: &str) -> String {
    match &item[name] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The English text of a multi-language value (or the text itself).
fn en(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .get("en")
            .or_else(|| map.values().next())
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// Runs `tessera demo` on the database until it has printed its tokens, then stops it;
/// gives the talk-side token of the demo user (an organiser with every permission).
async fn seed_demo(db: &TestDatabase) -> String {
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        let mut demo = std::process::Command::new(BIN)
            .args(["demo", "--bind", &format!("127.0.0.1:{}", free_port())])
            .args(["--database-url", &url])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn tessera demo");
        let stdout = demo.stdout.take().expect("demo's output");
        let mut lines = BufReader::new(stdout).lines();
        let mut token = None;
        while let Some(line) = lines.next() {
            let line = line.expect("demo's output");
            if line.starts_with("The talk side (/api/)") {
                token = lines
                    .by_ref()
                    .map(|l| l.expect("demo's output"))
                    .find(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_owned());
                break;
            }
        }
        demo.kill().expect("stop tessera demo");
        demo.wait().expect("reap tessera demo");
        token.expect("tessera demo printed no talk-side token")
    })
    .await
    .expect("seed")
}

/// A talk-side HTTP client of one event.
struct Api {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Api {
    fn url(&self, path: &str) -> String {
        format!("{}/api/events/{DEMO_EVENT}/{path}", self.base)
    }

    fn request(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.header("Authorization", format!("Token {token}")),
            None => request,
        }
    }

    async fn get(&self, url: &str) -> (u16, Value) {
        let r = self.request(self.http.get(url)).send().await.expect("GET");
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// A write that must succeed; its answer.
    async fn post(&self, path: &str, body: Value) -> Value {
        let r = self
            .request(self.http.post(self.url(path)))
            .json(&body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        let answer: Value = r.json().await.unwrap_or(Value::Null);
        assert!(
            (200..300).contains(&status),
            "POST {path} {body}: {status} {answer}"
        );
        answer
    }

    /// Every item of a list, page by page through `next`; checks that `count` is the number
    /// of items. `Err` with the status and body of a refusal.
    async fn all(&self, path: &str) -> Result<Vec<Value>, String> {
        let mut url = self.url(path);
        let mut items = Vec::new();
        let mut count = None;
        loop {
            let (status, page) = self.get(&url).await;
            if status != 200 {
                return Err(format!("GET {url}: {status} {page}"));
            }
            count.get_or_insert(page["count"].as_u64());
            items.extend(page["results"].as_array().cloned().unwrap_or_default());
            match page["next"].as_str() {
                Some(next) => url = next.to_owned(),
                None => break,
            }
        }
        let count = count.flatten().unwrap_or_default();
        assert_eq!(count as usize, items.len(), "GET {path}: count and items");
        Ok(items)
    }
}

/// Adds [`EXTRA_SUBMISSIONS`] submissions, each with a new speaker and an answer to the
/// demo's choice question; half of them accepted, a quarter confirmed.
async fn seed_more(api: &Api) {
    let types = api.all("submission-types/").await.expect("types");
    let talk = types[0]["id"].clone();
    let questions = api
        .all("questions/?expand=options")
        .await
        .expect("questions");
    let choice = questions
        .iter()
        .find(|q| q["variant"] == "choices" && q["target"] == "submission")
        .expect("the demo's choice question");
    let option = choice["options"][0]["id"].clone();
    for i in 0..EXTRA_SUBMISSIONS {
        let created = api
            .post(
                "submissions/",
                json!({
                    "title": format!("Extra session {i}"),
                    "submission_type": talk,
                    "abstract": format!("Abstract {i}."),
                    "description": format!("Description {i}."),
                }),
            )
            .await;
        let code = created["code"].as_str().expect("code").to_owned();
        api.post(
            &format!("submissions/{code}/add-speaker/"),
            json!({"email": format!("speaker{i}@example.org"), "name": format!("Speaker {i}")}),
        )
        .await;
        api.post(
            "answers/",
            json!({"question": choice["id"], "answer": "chosen", "submission": code, "options": [option]}),
        )
        .await;
        if i % 2 == 0 {
            api.post(&format!("submissions/{code}/accept/"), json!({}))
                .await;
        }
        if i % 4 == 0 {
            api.post(&format!("submissions/{code}/confirm/"), json!({}))
                .await;
        }
    }
}

/// How many rows of the event a query counts (`$1` is the event's ID).
async fn db_count(db: &TestDatabase, sql: &str) -> usize {
    let conn = tessera::db::connect(&db.url, 1).await.expect("connect");
    let backend = conn.get_database_backend();
    let event = conn
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            "SELECT id FROM events WHERE slug = $1 AND talk_enabled = $2",
            [DEMO_EVENT.into(), true.into()],
        ))
        .await
        .expect("event")
        .expect("the demo event")
        .try_get::<i64>("", "id")
        .expect("id");
    let row = conn
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            format!("SELECT COUNT(*) AS n FROM ({sql}) AS counted"),
            [event.into()],
        ))
        .await
        .expect("count")
        .expect("a row");
    conn.close().await.ok();
    row.try_get::<i64>("", "n").expect("n") as usize
}

/// The rows each resource has in the database, for the resources whose tables are known.
fn table_of(resource: &str) -> Option<&'static str> {
    Some(match resource {
        "submissions" => "SELECT id FROM talk_submissions WHERE event_id = $1",
        "speakers" => "SELECT id FROM talk_speakers WHERE event_id = $1",
        "tags" => "SELECT id FROM talk_tags WHERE event_id = $1",
        "tracks" => "SELECT id FROM talk_tracks WHERE event_id = $1",
        "submission_types" => "SELECT id FROM talk_submission_types WHERE event_id = $1",
        "questions" => "SELECT id FROM talk_questions WHERE event_id = $1",
        "answers" => {
            "SELECT a.id FROM talk_answers a JOIN talk_questions q ON q.id = a.question_id \
             WHERE q.event_id = $1"
        }
        _ => return None,
    })
}

/// What a reader gets through plain HTTP, per resource path: the organiser's is checked
/// against the database (`db`) where its table is known.
struct Truth {
    lists: BTreeMap<String, Vec<Value>>,
}

impl Truth {
    async fn read(api: &Api, db: Option<&TestDatabase>, resources: &[&str]) -> Self {
        let mut lists = BTreeMap::new();
        for resource in resources {
            let path = path_of(resource);
            if lists.contains_key(path) {
                continue;
            }
            let items = api
                .all(&format!("{path}/"))
                .await
                .unwrap_or_else(|e| panic!("the plain read of {path}/: {e}"));
            assert!(!items.is_empty(), "{path}/ lists nothing: seed some");
            if let Some((db, sql)) = db.zip(table_of(path.replace('-', "_").as_str())) {
                assert_eq!(
                    db_count(db, sql).await,
                    items.len(),
                    "{path}/ lists every row of the database"
                );
            }
            lists.insert(path.to_owned(), items);
        }
        Self { lists }
    }

    fn of(&self, resource: &str) -> &[Value] {
        self.lists.get(path_of(resource)).map_or(&[], Vec::as_slice)
    }

    fn keyed(&self, resource: &str) -> BTreeMap<String, &Value> {
        let name = key_of(resource);
        self.of(resource)
            .iter()
            .map(|item| (key(item, name), item))
            .collect()
    }

    /// `{id: English name}` of a resource with names.
    fn names(&self, resource: &str) -> BTreeMap<String, String> {
        self.of(resource)
            .iter()
            .map(|item| (key(item, "id"), en(&item["name"])))
            .collect()
    }
}

/// Runs a client's script; its report.
async fn run_client(python: &Path, script: &str, base: &str, token: &str, live: &[&str]) -> Value {
    let run = Command::new(python)
        .arg(workspace().join("tests/talk_clients").join(script))
        .args([base, DEMO_EVENT, token, &live.join(",")])
        .env("TQDM_DISABLE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(CLIENT_TIME_LIMIT, run)
        .await
        .unwrap_or_else(|_| panic!("{script} ran longer than {CLIENT_TIME_LIMIT:?}"))
        .expect("run the client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed:\n{stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{script} printed no report ({e}):\n{stderr}"))
}

/// The problems a report states itself: its errors and its log lines (each different line
/// once, with how often it came).
fn stated(client: &str, report: &Value, problems: &mut Vec<String>) {
    for error in report["errors"].as_array().into_iter().flatten() {
        problems.push(format!("{client}: {error}"));
    }
    let mut lines = BTreeMap::<String, usize>::new();
    for line in report["log"].as_array().into_iter().flatten() {
        *lines.entry(line.to_string()).or_default() += 1;
    }
    for (line, times) in lines {
        problems.push(format!("{client} logged ({times}x): {line}"));
    }
}

/// Collects the problems of a run.
struct Problems {
    client: &'static str,
    list: Vec<String>,
}

impl Problems {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.list.push(format!("{}: {}", self.client, what()));
        }
    }

    /// The same set of keys as the truth.
    fn same_keys(&mut self, resource: &str, got: BTreeSet<String>, truth: &Truth) {
        let want: BTreeSet<String> = truth.keyed(resource).into_keys().collect();
        self.check(got == want, || {
            format!(
                "{resource}: missing {:?}, extra {:?}",
                want.difference(&got).collect::<Vec<_>>(),
                got.difference(&want).collect::<Vec<_>>()
            )
        });
    }
}

/// pytanis' lists: counts, items and fields against the truth.
fn check_pytanis(report: &Value, live: &[&str], truth: &Truth, problems: &mut Problems) {
    let slugs: Vec<_> = report["events"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["slug"].clone())
        .collect();
    problems.check(slugs.contains(&json!(DEMO_EVENT)), || {
        format!("events(): {slugs:?} lacks {DEMO_EVENT}")
    });
    problems.check(report["event"]["slug"] == DEMO_EVENT, || {
        format!("event(): {}", report["event"])
    });
    for resource in live {
        let Some(found) = report["resources"].get(*resource) else {
            continue; // its error is in the report
        };
        let items = found["items"].as_array().cloned().unwrap_or_default();
        let count = found["count"].as_u64().unwrap_or_default() as usize;
        problems.check(count == items.len(), || {
            format!(
                "{resource}: count {count}, {} items (the others were refused)",
                items.len()
            )
        });
        let want = truth.keyed(resource);
        let name = key_of(resource);
        problems.same_keys(
            resource,
            items.iter().map(|i| key(i, name)).collect(),
            truth,
        );
        if let Some(single) = report["single"].get(*resource) {
            problems.check(single["equal"] == true, || {
                format!("{resource}: the first item read alone differs: {single}")
            });
        }
        for item in &items {
            let Some(expected) = want.get(&key(item, name)) else {
                continue;
            };
            let differs = match *resource {
                "submissions" | "talks" => {
                    let speakers: Vec<_> = item["speakers"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| s["code"].clone())
                        .collect();
                    item["title"] != expected["title"]
                        || item["state"] != expected["state"]
                        || json!(speakers) != expected["speakers"]
                        || item["submission_type_id"] != expected["submission_type"]
                        || item["slots"].as_array().map(Vec::len)
                            != expected["slots"].as_array().map(Vec::len)
                }
                "speakers" => {
                    item["name"] != expected["name"]
                        || item["email"] != expected["email"]
                        || item["submissions"] != expected["submissions"]
                }
                "questions" => en(&item["question"]) != en(&expected["question"]),
                "answers" => item["answer"] != expected["answer"],
                "tags" => item["tag"] != expected["tag"],
                "reviews" => item["submission"] != expected["submission"],
                _ => en(&item["name"]) != en(&expected["name"]),
            };
            problems.check(!differs, || {
                format!("{resource}: pytanis read {item}, the API says {expected}")
            });
        }
    }
    if live.contains(&"talks") {
        let titles: BTreeSet<_> = report["confirmed_talks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| en(&t["title"]))
            .collect();
        let want: BTreeSet<_> = truth
            .of("submissions")
            .iter()
            .filter(|s| s["state"] == "confirmed")
            .map(|s| en(&s["title"]))
            .collect();
        problems.check(titles == want, || {
            format!("get_talks_as_json: {titles:?}, confirmed: {want:?}")
        });
    }
}

/// pretalx-client's reads against the truth (the organiser's, or the anonymous one).
fn check_pretalx_client(report: &Value, live: &[&str], truth: &Truth, problems: &mut Problems) {
    let slugs: Vec<_> = report["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["slug"].clone())
        .collect();
    problems.check(slugs.contains(&json!(DEMO_EVENT)), || {
        format!("fetch_events: {slugs:?} lacks {DEMO_EVENT}")
    });
    problems.check(report["event"]["slug"] == DEMO_EVENT, || {
        format!("fetch_event: {}", report["event"])
    });
    let found = &report["resources"];
    for resource in ["rooms", "submission_types", "tracks"] {
        if live.contains(&resource) && found.get(resource).is_some() {
            let got: BTreeMap<String, String> =
                serde_json::from_value(found[resource].clone()).unwrap_or_default();
            let want = truth.names(resource);
            problems.check(got == want, || {
                format!("fetch_{resource}: {got:?}, the API says {want:?}")
            });
        }
    }
    if live.contains(&"rooms") && found.get("rooms_full").is_some() {
        let ids = found["rooms_full"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| key(r, "id"));
        problems.same_keys("rooms", ids.collect(), truth);
    }
    if live.contains(&"tags") && found.get("tags").is_some() {
        // The client reads tags' `name`, which tags do not have (they have `tag`), so every
        // name is empty: only the IDs tell.
        let ids = found["tags"].as_object().into_iter().flatten();
        problems.same_keys("tags", ids.map(|(id, _)| id.clone()).collect(), truth);
    }
    if live.contains(&"speakers") && found.get("speakers").is_some() {
        let speakers = found["speakers"].as_array().cloned().unwrap_or_default();
        problems.same_keys(
            "speakers",
            speakers.iter().map(|s| key(s, "code")).collect(),
            truth,
        );
        let want = truth.keyed("speakers");
        for speaker in &speakers {
            let Some(expected) = want.get(&key(speaker, "code")) else {
                continue;
            };
            let email = expected["email"].as_str().unwrap_or_default();
            problems.check(
                speaker["name"] == expected["name"]
                    && speaker["email"] == email
                    && speaker["submissions"] == expected["submissions"],
                || format!("fetch_speakers: {speaker}, the API says {expected}"),
            );
        }
    }
    let types = truth.names("submission_types");
    let tracks = truth.names("tracks");
    let submissions = truth.of("submissions");
    let talk_like = |states: &[&str], got: &Value, what: &str, problems: &mut Problems| {
        let got = got.as_array().cloned().unwrap_or_default();
        let want: BTreeMap<String, &Value> = submissions
            .iter()
            .filter(|s| states.iter().any(|state| s["state"] == *state))
            .map(|s| (key(s, "code"), s))
            .collect();
        let codes: BTreeSet<String> = got.iter().map(|t| key(t, "code")).collect();
        problems.check(
            codes.len() == got.len() && codes == want.keys().cloned().collect(),
            || {
                format!(
                    "{what}: {} items, codes {codes:?}; the API has {:?}",
                    got.len(),
                    want.keys().collect::<Vec<_>>()
                )
            },
        );
        for talk in &got {
            let Some(expected) = want.get(&key(talk, "code")) else {
                continue;
            };
            let type_name = types
                .get(&key(expected, "submission_type"))
                .cloned()
                .unwrap_or_default();
            let track = tracks
                .get(&key(expected, "track"))
                .cloned()
                .unwrap_or_default();
            problems.check(
                talk["title"] == expected["title"]
                    && talk["state"] == expected["state"]
                    && talk["speaker_codes"] == expected["speakers"]
                    && talk["submission_type"] == type_name.as_str()
                    && talk["track"] == track.as_str(),
                || format!("{what}: {talk}, the API says {expected}"),
            );
        }
    };
    if live.contains(&"talks") && found.get("talks").is_some() {
        talk_like(
            &["confirmed", "accepted"],
            &found["talks"],
            "fetch_talks",
            problems,
        );
    }
    if live.contains(&"submissions") && found.get("submissions").is_some() {
        let every: Vec<&str> = submissions
            .iter()
            .filter_map(|s| s["state"].as_str())
            .collect();
        talk_like(&every, &found["submissions"], "fetch_submissions", problems);
        talk_like(
            &["confirmed"],
            &found["submissions_confirmed"],
            "fetch_submissions(state=confirmed)",
            problems,
        );
    }
    if live.contains(&"slots") && found.get("slots").is_some() {
        let rooms = truth.names("rooms");
        let got: BTreeSet<(String, String, String)> = found["slots"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| (key(s, "code"), key(s, "start"), key(s, "room")))
            .collect();
        let want: BTreeSet<(String, String, String)> = truth
            .of("slots")
            .iter()
            .map(|s| {
                let room = rooms.get(&key(s, "room")).cloned().unwrap_or_default();
                (key(s, "submission"), key(s, "start"), room)
            })
            .collect();
        problems.check(
            got == want && found["slots"].as_array().map(Vec::len) == Some(truth.of("slots").len()),
            || format!("fetch_schedule: {got:?}, the API says {want:?}"),
        );
    }
}

/// What the anonymous reader must never see.
fn no_private_fields(report: &Value, problems: &mut Problems) {
    for speaker in report["resources"]["speakers"]
        .as_array()
        .into_iter()
        .flatten()
    {
        problems.check(speaker["email"] == "", || {
            format!("an anonymous reader sees a speaker's email: {speaker}")
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytanis_and_pretalx_client_read_the_whole_conference_unchanged() {
    let Some(python) = installed_tool(
        ".ci/venv-talk-clients/bin/python",
        "TESSERA_TALK_CLIENTS",
        "the pretalx clients",
    ) else {
        return;
    };
    let db = fresh_database().await;
    let token = seed_demo(&db).await;
    let mut server = Server::new_logging_aside(Path::new(BIN), &db.url);
    server.start().await;
    let base = server.base();
    let http = reqwest::Client::new();
    let orga = Api {
        http: http.clone(),
        base: base.clone(),
        token: Some(token.clone()),
    };
    let anonymous = Api {
        http,
        base: base.clone(),
        token: None,
    };
    seed_more(&orga).await;

    let every: Vec<&str> = [PYTANIS, PRETALX_CLIENT].concat();
    let truth = Truth::read(&orga, Some(&db), &every).await;

    let mut problems = Vec::new();

    let live = PYTANIS;
    let report = run_client(&python, "pytanis_reads.py", &base, &token, live).await;
    stated("pytanis", &report, &mut problems);
    let mut found = Problems {
        client: "pytanis",
        list: Vec::new(),
    };
    check_pytanis(&report, live, &truth, &mut found);
    problems.extend(found.list);

    let live = PRETALX_CLIENT;
    let report = run_client(&python, "pretalx_client_reads.py", &base, &token, live).await;
    stated("pretalx-client", &report, &mut problems);
    let mut found = Problems {
        client: "pretalx-client",
        list: Vec::new(),
    };
    check_pretalx_client(&report, live, &truth, &mut found);
    problems.extend(found.list);

    let live = PRETALX_CLIENT_ANONYMOUS;
    let public = Truth::read(&anonymous, None, live).await;
    let report = run_client(&python, "pretalx_client_reads.py", &base, "", live).await;
    stated("pretalx-client (anonymous)", &report, &mut problems);
    let mut found = Problems {
        client: "pretalx-client (anonymous)",
        list: Vec::new(),
    };
    check_pretalx_client(&report, live, &public, &mut found);
    no_private_fields(&report, &mut found);
    // What the public sees is part of what the organiser sees.
    for resource in live {
        let all = truth.keyed(resource);
        for item in public.keyed(resource).keys() {
            found.check(all.is_empty() || all.contains_key(item), || {
                format!("{resource}: {item} is public but not the organiser's")
            });
        }
    }
    problems.extend(found.list);

    assert!(
        problems.is_empty(),
        "{} problems:\n{}\n(server log: {})",
        problems.len(),
        problems.join("\n"),
        server.log_text()
    );
}
