//! The operator's first hour with the `tessera` binary: commands that refuse to work on a
//! database that is not there, say which one they use and never guess what a token may do;
//! the first organizer in one step; a new password; a backup while the service runs; and a
//! start that fails fast, saying why, and logs plain lines without noise.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tessera_tests::process::{Server, free_port};
use tessera_tests::{TestDatabase, fresh_database};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// Runs `tessera <args>` in `dir` without any configuration from the environment, with
/// `input` on standard input.
fn tessera_in(dir: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("TESSERA_DATABASE_URL")
        .env_remove("TESSERA_CONFIG")
        .env_remove("TESSERA_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tessera");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write stdin");
    drop(stdin);
    child.wait_with_output().expect("wait")
}

/// Runs `tessera <args> --database-url <db>` in a temporary directory.
fn tessera(db: &TestDatabase, args: &[&str], input: &str) -> Output {
    let dir = tempfile::tempdir().expect("dir");
    let mut all = args.to_vec();
    all.extend(["--database-url", &db.url]);
    tessera_in(dir.path(), &all, input)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn last_line(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or_default().to_owned()
}

/// `tessera admin bootstrap` of the organizer `acme` with the administrator
/// `ops@acme.test`, whose password is `password`.
fn bootstrap(db: &TestDatabase, password: &str) -> Output {
    tessera(
        db,
        &[
            "admin",
            "bootstrap",
            "--organizer",
            "acme",
            "--organizer-name",
            "Acme Events",
            "--email",
            "ops@acme.test",
            "--password-stdin",
        ],
        &format!("{password}\n"),
    )
}

async fn password_works(db: &TestDatabase, email: &str, password: &str) -> bool {
    let conn = tessera::db::connect(&db.url, 2).await.expect("connect");
    let user = tessera::domain::users::find_by_email(&conn, email)
        .await
        .expect("query")
        .expect("user");
    tessera::domain::users::verify_password(&user, password)
}

#[tokio::test]
async fn an_admin_command_in_a_directory_without_a_database_refuses_and_names_the_file() {
    let dir = tempfile::tempdir().expect("dir");
    let out = tessera_in(dir.path(), &["admin", "outbox"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let expected = std::fs::canonicalize(dir.path())
        .expect("path")
        .join("data/tessera.sqlite3");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("the SQLite file {}", expected.display())),
        "names the file: {err}"
    );
    assert!(err.contains("--create-database"), "says the way out: {err}");
    assert!(!expected.exists(), "nothing was created");

    let created = tessera_in(dir.path(), &["admin", "outbox", "--create-database"], "");
    assert!(created.status.success(), "{}", stderr(&created));
    assert_eq!(stdout(&created).trim(), "no mails");
    assert!(expected.exists());
}

#[tokio::test]
async fn an_admin_command_says_which_database_it_uses() {
    let db = fresh_database().await;
    let out = tessera(&db, &["admin", "outbox", "--create-database"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    let expected = if db.url.starts_with("postgres") {
        "using the PostgreSQL database"
    } else {
        "using the SQLite file"
    };
    assert!(said.starts_with(expected), "{said}");
    assert!(!said.contains("password"), "{said}");
}

#[tokio::test]
async fn create_token_makes_the_operator_say_what_the_team_may_do() {
    let db = fresh_database().await;
    let organizer = tessera(
        &db,
        &[
            "admin",
            "create-organizer",
            "--slug",
            "acme",
            "--name",
            "Acme",
            "--create-database",
        ],
        "",
    );
    assert!(organizer.status.success(), "{}", stderr(&organizer));

    let unsaid = tessera(&db, &["admin", "create-token", "--organizer", "acme"], "");
    assert_eq!(unsaid.status.code(), Some(2));
    let err = stderr(&unsaid);
    assert!(
        err.contains("--all-permissions") && err.contains("--keep-permissions"),
        "names the choices: {err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let kept = tessera(
        &db,
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--keep-permissions",
        ],
        "",
    );
    assert_eq!(
        kept.status.code(),
        Some(2),
        "no team to keep: {}",
        stdout(&kept)
    );
    assert!(
        stderr(&kept).contains("has no team \"api\""),
        "{}",
        stderr(&kept)
    );

    let made = tessera(
        &db,
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--permission",
            "can_view_orders",
        ],
        "",
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let lines: Vec<String> = stdout(&made).lines().map(str::to_owned).collect();
    assert_eq!(
        lines[0],
        "created a token of the team \"api\" of acme, which may: can_view_orders; on all events"
    );
    assert_eq!(lines[1].len(), 64);

    let again = tessera(
        &db,
        &[
            "admin",
            "create-token",
            "--organizer",
            "acme",
            "--keep-permissions",
        ],
        "",
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stdout(&again).contains("which may: can_view_orders;"));
}

#[tokio::test]
async fn bootstrap_makes_the_first_organizer_its_administrator_and_a_working_token() {
    let db = fresh_database().await;
    let migrated = tessera(&db, &["migrate"], "");
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    let out = bootstrap(&db, "first hour password");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.starts_with(
            "created organizer acme and its administrator ops@acme.test in the team \"Administrators\""
        ),
        "{said}"
    );
    assert!(
        said.contains("/api/v1/organizers/acme/events/"),
        "the next step: {said}"
    );
    assert!(
        !said.contains("first hour password"),
        "a given password is not echoed"
    );
    let token = last_line(&out);
    assert_eq!(token.len(), 64, "{said}");
    assert!(password_works(&db, "ops@acme.test", "first hour password").await);

    let mut server = Server::new_logging_aside(Path::new(BIN), &db.url);
    server.start().await;
    let client = reqwest::Client::new();
    let event = client
        .post(format!("{}/api/v1/organizers/acme/events/", server.base()))
        .header("Authorization", format!("Token {token}"))
        .json(
            &serde_json::json!({"name": {"en": "First"}, "slug": "first",
                                  "currency": "EUR", "date_from": "2030-06-01T09:00:00Z"}),
        )
        .send()
        .await
        .expect("create event");
    assert_eq!(event.status().as_u16(), 201, "the token may create events");
}

#[tokio::test]
async fn a_refused_bootstrap_leaves_nothing_behind() {
    let db = fresh_database().await;
    tessera(&db, &["migrate"], "");
    let short = bootstrap(&db, "short");
    assert_eq!(short.status.code(), Some(2));
    assert!(
        stderr(&short).contains("password: Ensure this field has at least 8 characters."),
        "{}",
        stderr(&short)
    );
    let organizer = tessera(
        &db,
        &[
            "admin",
            "create-organizer",
            "--slug",
            "acme",
            "--name",
            "Acme",
        ],
        "",
    );
    assert!(
        organizer.status.success(),
        "the organizer of the refused bootstrap was not kept: {}",
        stderr(&organizer)
    );
    let taken = bootstrap(&db, "long enough password");
    assert_eq!(taken.status.code(), Some(2));
    assert!(stderr(&taken).contains("an organizer with slug \"acme\" already exists"));
}

#[tokio::test]
async fn set_password_gives_a_user_a_new_password_and_the_old_one_stops_working() {
    let db = fresh_database().await;
    tessera(&db, &["migrate"], "");
    assert!(bootstrap(&db, "the old password").status.success());

    let given = tessera(
        &db,
        &[
            "admin",
            "set-password",
            "--email",
            "OPS@acme.test",
            "--password-stdin",
        ],
        "the new password\n",
    );
    assert!(given.status.success(), "{}", stderr(&given));
    assert_eq!(
        stdout(&given).trim(),
        "set a new password for ops@acme.test; their sessions ended"
    );
    assert!(password_works(&db, "ops@acme.test", "the new password").await);
    assert!(!password_works(&db, "ops@acme.test", "the old password").await);

    let generated = tessera(
        &db,
        &["admin", "set-password", "--email", "ops@acme.test"],
        "",
    );
    assert!(generated.status.success(), "{}", stderr(&generated));
    let password = last_line(&generated);
    assert_eq!(password.len(), 20, "{}", stdout(&generated));
    assert!(password_works(&db, "ops@acme.test", &password).await);

    let unknown = tessera(
        &db,
        &["admin", "set-password", "--email", "nobody@acme.test"],
        "",
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("no user with email \"nobody@acme.test\""));
    let short = tessera(
        &db,
        &[
            "admin",
            "set-password",
            "--email",
            "ops@acme.test",
            "--password-stdin",
        ],
        "short\n",
    );
    assert_eq!(short.status.code(), Some(2));
    assert!(
        password_works(&db, "ops@acme.test", &password).await,
        "unchanged"
    );
}

#[tokio::test]
async fn backup_copies_a_sqlite_database_while_the_service_writes_and_names_pg_dump_otherwise() {
    let db = fresh_database().await;
    tessera(&db, &["migrate"], "");
    assert!(bootstrap(&db, "long enough password").status.success());
    let dir = tempfile::tempdir().expect("dir");
    let copy = dir.path().join("copy.sqlite3");
    let copy_arg = copy.to_str().expect("utf-8");
    if db.url.starts_with("postgres") {
        let out = tessera(&db, &["admin", "backup", "--to", copy_arg], "");
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "pg_dump --format=custom --file={copy_arg} --host="
            )),
            "{err}"
        );
        assert!(!copy.exists());
        return;
    }
    let mut server = Server::new_logging_aside(Path::new(BIN), &db.url);
    server.start().await;
    let out = tessera(&db, &["admin", "backup", "--to", copy_arg], "");
    assert!(out.status.success(), "{}", stderr(&out));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).expect("copy").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "readable by its owner alone");
    }
    let copied = format!("sqlite://{}", copy.display());
    let conn = tessera::db::connect(&copied, 2)
        .await
        .expect("open the copy");
    let user = tessera::domain::users::find_by_email(&conn, "ops@acme.test")
        .await
        .expect("query");
    assert!(user.is_some(), "the copy holds the data");
    let again = tessera(&db, &["admin", "backup", "--to", copy_arg], "");
    assert_eq!(again.status.code(), Some(2), "never over an existing file");
}

#[tokio::test]
async fn create_device_needs_the_address_scanners_reach() {
    let db = fresh_database().await;
    tessera(&db, &["migrate"], "");
    assert!(bootstrap(&db, "long enough password").status.success());
    let args = [
        "admin",
        "create-device",
        "--organizer",
        "acme",
        "--name",
        "Door",
    ];
    let out = tessera(&db, &args, "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("public_url"), "{}", stderr(&out));
    let mut with_url = args.to_vec();
    with_url.extend(["--public-url", "https://tickets.example.org/"]);
    let made = tessera(&db, &with_url, "");
    assert!(made.status.success(), "{}", stderr(&made));
    assert!(
        stdout(&made).contains("\"url\":\"https://tickets.example.org\""),
        "{}",
        stdout(&made)
    );
}

#[tokio::test]
async fn a_start_on_an_unreachable_database_fails_within_seconds_naming_the_host_and_cause() {
    let port = free_port();
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("postgres://tessera:hunter2-secret@127.0.0.1:{port}/tickets");
    let started = Instant::now();
    let out = tessera_in(
        dir.path(),
        &[
            "serve",
            "--bind",
            &format!("127.0.0.1:{}", free_port()),
            "--database-url",
            &url,
        ],
        "",
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "cannot connect to PostgreSQL database \"tickets\" at 127.0.0.1:{port} as \"tessera\""
        )),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "the cause: {err}");
    assert!(!err.contains("hunter2"), "never the password: {err}");
}

#[tokio::test]
async fn the_log_is_plain_text_at_the_default_level_without_migration_noise() {
    let db = fresh_database().await;
    let mut server = Server::new_logging_aside(Path::new(BIN), &db.url);
    server.env("RUST_LOG", "");
    // The second start finds the schema made: PostgreSQL then notices what already exists.
    for _ in 0..2 {
        server.start().await;
        server.kill();
    }
    let log = server.log_text();
    assert_eq!(
        log.matches(" INFO tessera::app: serving").count(),
        2,
        "{log}"
    );
    assert!(log.contains("opening the database"), "{log}");
    assert!(!log.contains('\u{1b}'), "no colour codes in a file:\n{log}");
    for noise in ["already exists", "Migration '", "Checking migration status"] {
        assert!(!log.contains(noise), "{noise} in the log:\n{log}");
    }
}
