//! Talk-side fixtures: events with the talk side on, users in teams with talk permissions,
//! and their user API tokens.

use sea_orm::{ActiveModelTrait, ConnectionTrait, Statement};
use serde_json::Value;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera::domain::talk::endpoints::Endpoints;
use tessera::domain::teams;
use tessera::domain::users::{self, NewUser};

use crate::{TestApp, USER_PASSWORD};

/// Runs one statement on the test's database.
pub async fn sql(app: &TestApp, sql: &str, values: Vec<sea_orm::Value>) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            app.db.get_database_backend(),
            sql,
            values,
        ))
        .await
        .expect("statement");
}

/// The rows of one query.
pub async fn rows(
    app: &TestApp,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Vec<sea_orm::QueryResult> {
    app.db
        .query_all_raw(Statement::from_sql_and_values(
            app.db.get_database_backend(),
            sql,
            values,
        ))
        .await
        .expect("query")
}

/// An event of a new organizer with the talk side on; gives the organizer's and the
/// event's IDs.
pub async fn talk_event(app: &TestApp, organizer: &str, slug: &str, public: bool) -> (i64, i64) {
    let org = app.organizer(organizer).await;
    let ev = app.event(organizer, slug).await;
    sql(
        app,
        "UPDATE events SET talk_enabled = $1, is_public = $2 WHERE id = $3",
        vec![true.into(), public.into(), ev.into()],
    )
    .await;
    (org, ev)
}

/// A user in a new team of the organizer with these permissions on all its events; gives
/// the user's ID and the team's.
pub async fn talk_user(
    app: &TestApp,
    email: &str,
    organizer: i64,
    permissions: &[Permission],
) -> (i64, i64) {
    let user = users::create_user(
        &app.db,
        NewUser {
            email: email.into(),
            password: USER_PASSWORD.into(),
            fullname: format!("User {email}"),
            ..Default::default()
        },
    )
    .await
    .expect("user");
    let perms: PermissionSet = permissions.iter().copied().collect();
    let team = teams::new_team(organizer, &format!("Team of {email}"), true, perms)
        .insert(&app.db)
        .await
        .expect("team");
    users::add_to_team(&app.db, user.id, team.id)
        .await
        .expect("member");
    (user.id, team.id)
}

/// A user API token of the user with these scopes, for all events or only these.
pub async fn user_token(
    app: &TestApp,
    user: i64,
    endpoints: &Endpoints,
    events: Option<&[i64]>,
) -> String {
    let token = tessera::domain::tokens::generate();
    let rows = rows(
        app,
        "INSERT INTO user_api_tokens (user_id, name, token_hash, all_events, endpoints, created) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        vec![
            user.into(),
            "test".into(),
            tessera::domain::tokens::hash(&token).into(),
            events.is_none().into(),
            endpoints.to_json().into(),
            chrono::Utc::now().into(),
        ],
    )
    .await;
    let id: i64 = rows[0].try_get("", "id").expect("id");
    for ev in events.unwrap_or_default() {
        sql(
            app,
            "INSERT INTO user_api_token_events (token_id, event_id) VALUES ($1, $2)",
            vec![id.into(), (*ev).into()],
        )
        .await;
    }
    token
}

/// A conference: organizer `conf`, public talk event `conf2026`, and tokens of an organiser
/// of the call for papers (read-write and read-only) and of a reviewer.
pub struct Conference {
    /// The organizer's ID.
    pub organizer: i64,
    /// The event's ID.
    pub event: i64,
    /// `/api/events/conf2026`.
    pub base: String,
    /// An organiser's read-write token.
    pub write: String,
    /// The same organiser's read-only token.
    pub read: String,
    /// A reviewer's read-write token.
    pub reviewer: String,
    /// The organiser's user ID.
    pub orga_user: i64,
}

/// Sets up a [`Conference`].
pub async fn conference(app: &TestApp) -> Conference {
    let (organizer, event) = talk_event(app, "conf", "conf2026", true).await;
    let (orga_user, _) = talk_user(
        app,
        "orga@example.org",
        organizer,
        &[
            Permission::ChangeSubmissions,
            Permission::ChangeEventSettings,
        ],
    )
    .await;
    let (reviewer_user, _) = talk_user(
        app,
        "reviewer@example.org",
        organizer,
        &[Permission::Review],
    )
    .await;
    Conference {
        organizer,
        event,
        base: "/api/events/conf2026".into(),
        write: user_token(app, orga_user, &Endpoints::all_write(), None).await,
        read: user_token(app, orga_user, &Endpoints::all_read(), None).await,
        reviewer: user_token(app, reviewer_user, &Endpoints::all_write(), None).await,
        orga_user,
    }
}

/// The `results` of a paginated answer.
pub fn results(body: &Value) -> &Vec<Value> {
    body["results"].as_array().expect("results")
}

/// The first bytes of a PNG image: enough for an upload's check of its type.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// A small PDF document.
pub const PDF: &[u8] = b"%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n";

/// Sends `body` to `POST /api/upload/` as a file `name` of type `content_type`, with a user
/// token.
pub async fn send_upload(
    app: &TestApp,
    token: &str,
    content_type: &str,
    name: &str,
    body: &[u8],
) -> crate::Reply {
    let auth = format!("Token {token}");
    let disposition = format!("attachment; filename=\"{name}\"");
    app.raw(
        poem::http::Method::POST,
        "/api/upload/",
        &[
            ("Authorization", &auth),
            ("Content-Type", content_type),
            ("Content-Disposition", &disposition),
        ],
        body.to_vec(),
    )
    .await
}

/// Uploads a file with a user token; gives its ID (`file:...`).
pub async fn upload(
    app: &TestApp,
    token: &str,
    content_type: &str,
    name: &str,
    body: &[u8],
) -> String {
    let r = send_upload(app, token, content_type, name, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_str().expect("a file ID").to_owned()
}

/// Creates an object with the conference's organiser under `{base}/{path}/`; gives the
/// created object.
pub async fn create(app: &TestApp, c: &Conference, path: &str, body: Value) -> Value {
    let r = app
        .post(&format!("{}/{path}/", c.base), &c.write, body)
        .await;
    assert_eq!(r.status, 201, "{path}: {}", r.body);
    r.body
}

/// Asserts a 400 answer naming `field` among its errors.
pub fn assert_refused(r: &crate::Reply, field: &str, context: &str) {
    assert_eq!(r.status, 400, "{context}: {}", r.body);
    assert!(r.body[field].is_array(), "{context}: {}", r.body);
}
