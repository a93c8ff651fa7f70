//! Test support: a fresh server on a fresh database per test, and small HTTP helpers.
//!
//! Tests run on SQLite by default and on PostgreSQL when `TESSERA_TEST_DATABASE_URL` is set:
//! each test then gets its own schema in that database.

pub mod process;
pub mod smtp;
pub mod stripe;
pub mod talk;

use std::sync::atomic::{AtomicU64, Ordering};

use poem::endpoint::BoxEndpoint;
use poem::http::{HeaderMap, Method};
use poem::{Body, Endpoint, Request};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseConnection, Statement};
use serde_json::Value;
use tempfile::TempDir;
use tessera::admin::{self, TokenRequest};
use tessera::db::entities::{file, outbox_mail};
use tessera::domain::mail::Mailer;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera::domain::teams;
use tessera::domain::users::{self, NewUser};
use tessera::{App, AppState, Config};

/// A fresh database and the URL to reach it.
pub struct TestDatabase {
    /// URL other processes can use.
    pub url: String,
    /// The temporary directory of a SQLite database.
    pub dir: Option<TempDir>,
}

fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "t{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        nanos
    )
}

/// Makes a fresh, empty database: a new schema on the PostgreSQL named by
/// `TESSERA_TEST_DATABASE_URL`, or else a new SQLite file.
pub async fn fresh_database() -> TestDatabase {
    match std::env::var("TESSERA_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(base) => {
            let schema = unique_name();
            let admin = tessera::db::connect(&base, 2)
                .await
                .expect("connect to PostgreSQL");
            admin
                .execute_raw(Statement::from_string(
                    admin.get_database_backend(),
                    format!("CREATE SCHEMA {schema}"),
                ))
                .await
                .expect("create schema");
            admin.close().await.ok();
            let sep = if base.contains('?') { '&' } else { '?' };
            TestDatabase {
                url: format!("{base}{sep}options=-c%20search_path%3D{schema}"),
                dir: None,
            }
        }
        None => {
            let dir = tempfile::tempdir().expect("temp dir");
            TestDatabase {
                url: sqlite_url(&dir.path().join("test.sqlite3")),
                dir: Some(dir),
            }
        }
    }
}

fn sqlite_url(path: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// Makes a fresh database for a server to start on. On SQLite it is a copy of a file migrated
/// once per test process, for migrating takes most of a short test's CPU time there; on
/// PostgreSQL a fresh schema the server migrates (making a database from a migrated template
/// per test took the server longer than migrating a schema).
pub async fn migrated_database() -> TestDatabase {
    static TEMPLATE: tokio::sync::OnceCell<(TempDir, std::path::PathBuf)> =
        tokio::sync::OnceCell::const_new();
    if std::env::var("TESSERA_TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        return fresh_database().await;
    }
    let (_, template) = TEMPLATE.get_or_init(sqlite_template).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("test.sqlite3");
    std::fs::copy(template, &path).expect("copy the migrated database");
    TestDatabase {
        url: sqlite_url(&path),
        dir: Some(dir),
    }
}

/// A SQLite file migrated once, written whole (no write-ahead log beside it).
async fn sqlite_template() -> (TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let migrating = dir.path().join("migrating.sqlite3");
    let template = dir.path().join("template.sqlite3");
    let db = tessera::db::connect_migrated(&sqlite_url(&migrating), 2)
        .await
        .expect("migrate the template");
    db.execute_unprepared(&format!("VACUUM INTO '{}'", template.display()))
        .await
        .expect("write the template");
    db.close().await.ok();
    (dir, template)
}

/// Every mail in the outbox, oldest first: whatever the code under test queued.
pub async fn outbox(db: &DatabaseConnection) -> Vec<outbox_mail::Model> {
    use sea_orm::{EntityTrait, QueryOrder};
    outbox_mail::Entity::find()
        .order_by_asc(outbox_mail::Column::Id)
        .all(db)
        .await
        .expect("outbox")
}

/// An answer: status, JSON body (or `Value::Null`, or the text as a string), headers.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body parsed as JSON; a non-JSON body as a string.
    pub body: Value,
    /// Response headers.
    pub headers: HeaderMap,
    /// The body as sent.
    pub bytes: Vec<u8>,
}

impl Reply {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A server on a fresh database, called in-process.
pub struct TestApp {
    /// The database.
    pub db: DatabaseConnection,
    /// The server's mailer; its worker does not run unless a test starts it.
    pub mailer: Mailer,
    /// Everything the server's handlers share.
    pub state: AppState,
    endpoint: BoxEndpoint<'static>,
    server: tessera::Server,
    _database: TestDatabase,
}

impl TestApp {
    /// The stored upload of a file ID as the API answers it (`file:<key>`, or the bare key).
    pub async fn stored_file(&self, id: &str) -> file::Model {
        use sea_orm::EntityTrait;
        file::Entity::find_by_id(id.trim_start_matches("file:").to_owned())
            .one(&self.db)
            .await
            .expect("query")
            .expect("stored")
    }

    /// The plugins the server was built with.
    pub fn plugins(&self) -> &tessera::plugin::PluginRegistry {
        self.server.plugins()
    }

    /// A server with the default configuration.
    pub async fn spawn() -> Self {
        Self::spawn_with(|_| {}).await
    }

    /// A server with a configuration changed by `f`.
    pub async fn spawn_with(f: impl FnOnce(&mut Config)) -> Self {
        Self::spawn_app(f, |app| app).await
    }

    /// A server with a configuration changed by `f`, assembled by `assemble` (to add plugins).
    pub async fn spawn_app(f: impl FnOnce(&mut Config), assemble: impl FnOnce(App) -> App) -> Self {
        if std::env::var_os("TESSERA_TEST_LOG").is_some() {
            tessera::logging::init(tessera::config::LogFormat::Text);
        }
        let database = migrated_database().await;
        let mut config = Config {
            database_url: Some(database.url.clone()),
            public_url: Some("http://tessera.test".into()),
            db_max_connections: 8,
            ..Config::default()
        };
        f(&mut config);
        let server = assemble(App::new(config)).build().await.expect("server");
        Self {
            db: server.state().db.clone(),
            mailer: server.state().mailer.clone(),
            state: server.state().clone(),
            endpoint: server.endpoint(),
            server,
            _database: database,
        }
    }

    /// Lets every cart of the server expire, as time would: its positions and what they
    /// hold end a second ago.
    pub async fn expire_carts(&self) {
        let past = chrono::Utc::now() - chrono::Duration::seconds(1);
        let backend = self.db.get_database_backend();
        for (sql, value) in [
            (
                "UPDATE quota_holds SET expires_us = $1 WHERE kind = 'cart'",
                sea_orm::Value::from(past.timestamp_micros()),
            ),
            ("UPDATE cart_positions SET expires = $1", past.into()),
        ] {
            self.db
                .execute_raw(Statement::from_sql_and_values(backend, sql, [value]))
                .await
                .expect("carts expired");
        }
    }

    /// Serves this app over TCP on a free loopback port for as long as the test runs, for
    /// what depends on the client's address; gives the base URL (`http://127.0.0.1:<port>`).
    pub async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        self.serve_on(listener)
    }

    /// [`Self::serve`] on a listener bound already (whose address the configuration may
    /// name, as `public_url`).
    pub fn serve_on(&self, listener: tokio::net::TcpListener) -> String {
        let port = listener.local_addr().expect("port").port();
        let endpoint = self.server.endpoint();
        let limits = self.server.connection_limits(None);
        let forever = std::future::pending();
        tokio::spawn(tessera::http::serve::serve(
            listener, endpoint, limits, forever,
        ));
        format!("http://127.0.0.1:{port}")
    }

    /// Sends a request with raw headers and body.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path.parse().expect("uri"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = self.endpoint.get_response(req.body(Body::from(body))).await;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().into_vec().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Reply {
            status,
            body,
            headers,
            bytes,
        }
    }

    /// Sends a request with an optional token and JSON body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let auth = token.map(|t| format!("Token {t}"));
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if let Some(a) = &auth {
            headers.push(("Authorization", a));
        }
        let bytes = match body {
            Some(b) => {
                headers.push(("Content-Type", "application/json"));
                b.to_string().into_bytes()
            }
            None => Vec::new(),
        };
        self.raw(method, path, &headers, bytes).await
    }

    /// GET with a token.
    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.call(Method::GET, path, Some(token), None).await
    }

    /// POST JSON with a token.
    pub async fn post(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }

    /// PATCH JSON with a token.
    pub async fn patch(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::PATCH, path, Some(token), Some(body))
            .await
    }

    /// PUT JSON with a token.
    pub async fn put(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::PUT, path, Some(token), Some(body)).await
    }

    /// DELETE with a token.
    pub async fn delete(&self, path: &str, token: &str) -> Reply {
        self.call(Method::DELETE, path, Some(token), None).await
    }

    /// Creates an organizer.
    pub async fn organizer(&self, slug: &str) -> i64 {
        admin::create_organizer(&self.db, slug, &format!("{slug} Ltd"))
            .await
            .expect("organizer")
            .id
    }

    /// Creates an event of an organizer directly in the database (currency EUR, starting in
    /// a year); returns its ID.
    pub async fn event(&self, organizer: &str, slug: &str) -> i64 {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
        use tessera::db::entities::{event, organizer as org};
        let organizer_id = org::Entity::find()
            .filter(org::Column::Slug.eq(organizer))
            .one(&self.db)
            .await
            .expect("query")
            .expect("organizer")
            .id;
        let row = event::ActiveModel {
            organizer_id: Set(organizer_id),
            slug: Set(slug.into()),
            name: Set(serde_json::json!({"en": slug})),
            currency: Set("EUR".into()),
            date_from: Set(chrono::Utc::now() + chrono::Duration::days(365)),
            ..Default::default()
        };
        tessera::domain::events::insert(&self.db, row)
            .await
            .expect("event")
            .id
    }

    /// A token of a new team of `organizer` with exactly these permissions.
    pub async fn token(&self, organizer: &str, permissions: &[&str]) -> String {
        let set: PermissionSet = permissions
            .iter()
            .map(|p| Permission::from_name(p).expect("permission"))
            .collect();
        self.token_for(organizer, Some(set), &[]).await
    }

    /// A token of a new team that may manage devices: `can_change_organizer_settings` and
    /// everything a device acts with, for all events.
    pub async fn device_admin_token(&self, organizer: &str) -> String {
        let set = tessera::domain::devices::acts_with().with(Permission::ChangeOrganizerSettings);
        self.token_for(organizer, Some(set), &[]).await
    }

    /// A token of a new team with every permission.
    pub async fn admin_token(&self, organizer: &str) -> String {
        self.token_for(organizer, Some(PermissionSet::all()), &[])
            .await
    }

    /// A token of a new team with these permissions, limited to these events when any.
    pub async fn token_for(
        &self,
        organizer: &str,
        permissions: Option<PermissionSet>,
        events: &[&str],
    ) -> String {
        let request = TokenRequest {
            organizer: organizer.into(),
            team: unique_name(),
            permissions: Some(permissions.unwrap_or_default()),
            events: events.iter().map(|e| e.to_string()).collect(),
        };
        admin::create_token(&self.db, &request)
            .await
            .expect("token")
            .token
    }
}

/// The dynamic library of workspace package `package` (a plugin or a test fixture), built with
/// `cargo build -p <package>` in the tests' profile (debug) once per process.
pub fn plugin_library(package: &str) -> std::path::PathBuf {
    use std::collections::BTreeSet;
    use std::path::Path;
    use std::sync::{Mutex, OnceLock, PoisonError};

    static BUILT: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut built = BUILT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if !built.contains(package) {
        let output = std::process::Command::new(option_env!("CARGO").unwrap_or("cargo"))
            .args(["build", "-p", package])
            .current_dir(&root)
            .output()
            .expect("run cargo");
        assert!(
            output.status.success(),
            "cargo build -p {package} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        built.insert(package.to_owned());
    }
    // A relative CARGO_TARGET_DIR is relative to the workspace root, where cargo ran.
    let target = root.join(std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into()));
    let file = format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        package.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    target.join("debug").join(file)
}

/// The password of the users [`user_of`] makes.
pub const USER_PASSWORD: &str = "correct horse battery";

/// A user (Ada Lovelace, password [`USER_PASSWORD`]) who belongs to a team with every
/// permission on each of these organizers; gives the user's ID.
pub async fn user_of(app: &TestApp, email: &str, organizers: &[i64]) -> i64 {
    let user = users::create_user(
        &app.db,
        NewUser {
            email: email.into(),
            password: USER_PASSWORD.into(),
            fullname: "Ada Lovelace".into(),
            ..Default::default()
        },
    )
    .await
    .expect("user");
    for org in organizers {
        let team = teams::new_team(*org, "Admins", true, PermissionSet::all())
            .insert(&app.db)
            .await
            .expect("team");
        users::add_to_team(&app.db, user.id, team.id)
            .await
            .expect("member");
    }
    user.id
}

/// Cents of a decimal string such as `"-1.50"`.
pub fn cents(v: &Value) -> i64 {
    let value: f64 = v
        .as_str()
        .expect("a decimal string")
        .parse()
        .expect("a decimal");
    (value * 100.0).round() as i64
}

/// Checks a gift card's ledger, its entries in ID order, against the values its accepted
/// bookings were answered: walked in its order it never goes below zero, the balance after
/// each entry but the first (the issue) is exactly one booking's answer, and every answer
/// has its entry. Gives the final balance.
pub fn check_ledger(entries: &[Value], mut answered: Vec<i64>) -> i64 {
    assert_eq!(
        entries.len(),
        1 + answered.len(),
        "one entry per accepted booking"
    );
    let mut balance = 0;
    let mut after_each = Vec::new();
    for e in entries {
        balance += cents(&e["value"]);
        assert!(balance >= 0, "the ledger went below zero");
        after_each.push(balance);
    }
    after_each.remove(0);
    after_each.sort_unstable();
    answered.sort_unstable();
    assert_eq!(
        answered, after_each,
        "each booking was answered the balance it left"
    );
    balance
}
