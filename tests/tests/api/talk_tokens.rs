//! The talk side's user API tokens on `/orga/me`: made (shown once), listed with their
//! version (marked when deprecated), upgraded and disabled, through a browser; and expired
//! tokens deleted.

use poem::http::Method;
use tessera::admin;
use tessera::domain::talk::endpoints::Endpoints;
use tessera::domain::talk::tokens::{self, NewToken};
use tessera_tests::{Reply, TestApp, USER_PASSWORD, user_of};

use crate::browser_support::{Browser, csrf_field, html};

const WRONG_TOKEN: &str = "0123456789012345678901234567890123456789012345678901234567890123";

/// An organizer `acme` with the talk-enabled event `conf`, and Ada, in a team of acme with
/// every permission on all its events; gives Ada's ID and the event's.
async fn setup(app: &TestApp) -> (i64, i64) {
    let acme = app.organizer("acme").await;
    let event = talk_event(app, "acme", "conf").await;
    (user_of(app, "ada@example.org", &[acme]).await, event)
}

/// An event of `organizer` with the talk side switched on; gives its ID.
async fn talk_event(app: &TestApp, organizer: &str, slug: &str) -> i64 {
    let id = app.event(organizer, slug).await;
    admin::set_event_talk(&app.db, organizer, slug, true)
        .await
        .expect("talk side on");
    id
}

/// A browser signed in as `email`.
async fn signed_in<'a>(app: &'a TestApp, email: &str) -> Browser<'a> {
    let mut browser = Browser::new(app);
    let reply = browser.sign_in(email, USER_PASSWORD, "/orga/me").await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.header("location"), Some("/orga/me"));
    browser
}

/// A page's text as a browser shows it: HTML escapes replaced by their characters.
fn shown(reply: &Reply) -> String {
    html(reply)
        .replace("&#x2f;", "/")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The token page (as shown) and its CSRF token.
async fn page(browser: &mut Browser<'_>) -> (String, String) {
    let reply = browser.get("/orga/me").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    (shown(&reply), csrf_field(html(&reply)))
}

/// The text of the first element whose class attribute ends with `class`.
fn text_of(page: &str, class: &str) -> String {
    let marker = format!("{class}\">");
    let start = page.find(&marker).expect(class) + marker.len();
    page[start..].split('<').next().expect("text").to_owned()
}

/// The part of the page listing one token.
fn entry(page: &str, id: i64) -> String {
    let marker = format!("id=\"token-{id}\"");
    let start = page.find(&marker).expect("token in the list");
    let rest = &page[start..];
    let end = [rest.find("<li class=\"token\""), rest.find("</section>")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// Posts the form making a token with these fields (the CSRF token added) and gives the
/// reply.
async fn make(browser: &mut Browser<'_>, csrf: &str, fields: &[(&str, &str)]) -> Reply {
    let mut form = vec![("csrfmiddlewaretoken", csrf)];
    form.extend_from_slice(fields);
    browser.post("/orga/me/tokens", &form).await
}

/// Ada's tokens that have not expired.
async fn tokens_of(app: &TestApp, user: i64) -> Vec<tokens::TokenSummary> {
    tokens::list_for_user(&app.db, user).await.expect("list")
}

/// The status of a talk-side request with this token.
async fn api(app: &TestApp, path: &str, token: &str) -> u16 {
    app.call(Method::GET, path, Some(token), None).await.status
}

/// A token made through the domain, for a user.
async fn token_for(app: &TestApp, user: i64, name: &str) -> (i64, String) {
    let (row, token) = tokens::create(
        &app.db,
        user,
        NewToken {
            name: name.into(),
            endpoints: Endpoints::all_read(),
            events: None,
            expires: None,
        },
    )
    .await
    .expect("token");
    (row.id, token)
}

async fn set_version(app: &TestApp, token_id: i64, version: &str) {
    tessera::db::execute(
        &app.db,
        "UPDATE user_api_tokens SET version = $1 WHERE id = $2",
        [version.into(), token_id.into()],
    )
    .await
    .expect("version");
}

#[tokio::test]
async fn the_page_and_its_forms_send_someone_not_signed_in_to_the_sign_in_page() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let (id, token) = token_for(&app, ada, "kept").await;
    let mut stranger = Browser::new(&app);
    let reply = stranger.get("/orga/me").await;
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/login?next=/orga/me"));

    let upgrade = format!("/orga/me/tokens/{id}/upgrade");
    let disable = format!("/orga/me/tokens/{id}/disable");
    for path in ["/orga/me/tokens", upgrade.as_str(), disable.as_str()] {
        let reply = stranger
            .post(
                path,
                &[
                    ("csrfmiddlewaretoken", WRONG_TOKEN),
                    ("name", "sneaky"),
                    ("preset", "write"),
                    ("event_scope", "all"),
                ],
            )
            .await;
        assert_eq!(reply.status, 303, "{path}");
        assert_eq!(reply.header("location"), Some("/login?next=/orga/me"));
    }
    let left = tokens_of(&app, ada).await;
    assert_eq!(left.len(), 1, "nothing made, nothing disabled");
    assert_eq!(left[0].version, None, "not upgraded");
    assert_eq!(api(&app, "/api/events/", &token).await, 200);
}

#[tokio::test]
async fn a_token_made_on_the_page_is_shown_once_and_then_authenticates_under_api() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (before, csrf) = page(&mut browser).await;
    assert!(before.contains("You have no API tokens."), "{before}");
    assert!(before.contains("conf"), "the event is offered: {before}");

    let reply = make(
        &mut browser,
        &csrf,
        &[
            ("name", "Schedule sync"),
            ("preset", "read"),
            ("event_scope", "all"),
            ("expires", ""),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let made = shown(&reply);
    let token = text_of(&made, "secret new-token");
    assert_eq!(token.len(), 64, "{made}");
    assert!(made.contains("shown only this once"));

    let listed = tokens_of(&app, ada).await;
    assert_eq!(listed.len(), 1);
    let row = &listed[0];
    assert_eq!(row.name, "Schedule sync");
    assert_eq!(row.endpoints, Endpoints::all_read());
    assert_eq!(row.events, None);
    assert_eq!(row.version, None);
    let (again, _) = page(&mut browser).await;
    assert!(!again.contains(&token), "a token is never shown again");
    let mine = entry(&again, row.id);
    assert!(mine.contains("Schedule sync"), "{mine}");
    assert!(mine.contains("All endpoints, read only"), "{mine}");
    assert!(mine.contains("All events"), "{mine}");
    assert!(mine.contains("not used yet"), "{mine}");
    assert!(!mine.contains("/upgrade"), "{mine}");
    assert!(mine.contains(&format!("/orga/me/tokens/{}/disable", row.id)));

    assert_eq!(api(&app, "/api/events/", &token).await, 200);
    assert_eq!(api(&app, "/api/events/conf/", &token).await, 200);
    assert_eq!(api(&app, "/api/events/", WRONG_TOKEN).await, 401);
    assert_eq!(
        api(&app, "/api/v1/organizers/", &token).await,
        401,
        "a user token does not work on the ticketing side"
    );
    let (used, _) = page(&mut browser).await;
    let mine = entry(&used, row.id);
    assert!(
        mine.contains("token-version\">v2"),
        "pinned on first use: {mine}"
    );
    assert!(!mine.contains("deprecated"), "{mine}");
    assert!(
        !text_of(&mine, "token-last-used").contains("Never"),
        "{mine}"
    );
}

#[tokio::test]
async fn a_token_of_chosen_endpoints_and_events_keeps_to_them() {
    let app = TestApp::spawn().await;
    let (ada, conf) = setup(&app).await;
    talk_event(&app, "acme", "other").await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, csrf) = page(&mut browser).await;
    let conf_id = conf.to_string();
    let reply = make(
        &mut browser,
        &csrf,
        &[
            ("name", "Only conf"),
            ("preset", "custom"),
            ("endpoint_events", "retrieve"),
            ("endpoint_submissions", "list"),
            ("endpoint_submissions", "create"),
            ("event_scope", "chosen"),
            ("event", &conf_id),
            ("expires", "2099-12-31T18:00"),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let token = text_of(&shown(&reply), "secret new-token");

    let row = &tokens_of(&app, ada).await[0];
    assert_eq!(row.events, Some(vec!["conf".to_owned()]));
    assert!(row.endpoints.allows(
        "submissions",
        tessera::domain::talk::endpoints::Action::Create
    ));
    assert!(!row.endpoints.allows(
        "submissions",
        tessera::domain::talk::endpoints::Action::Destroy
    ));
    assert_eq!(
        row.expires.map(|e| e.to_rfc3339()),
        Some("2099-12-31T18:00:00+00:00".to_owned())
    );
    let (listed, _) = page(&mut browser).await;
    let mine = entry(&listed, row.id);
    assert!(mine.contains("Chosen endpoints"), "{mine}");
    assert!(mine.contains("/submissions: list, create"), "{mine}");
    assert!(mine.contains("token-events\">conf<"), "{mine}");
    assert!(mine.contains("2099-12-31 18:00 UTC"), "{mine}");

    assert_eq!(api(&app, "/api/events/conf/", &token).await, 200);
    assert_eq!(api(&app, "/api/events/other/", &token).await, 404);
    assert_eq!(
        api(&app, "/api/events/", &token).await,
        403,
        "listing events is outside its scopes"
    );
}

#[tokio::test]
async fn invalid_input_shows_the_form_again_with_its_errors_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let globex = app.organizer("globex").await;
    let theirs = talk_event(&app, "globex", "theirs").await.to_string();
    let plain = app.event("acme", "tickets-only").await.to_string();
    user_of(&app, "bob@example.org", &[globex]).await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, csrf) = page(&mut browser).await;
    let long = "n".repeat(191);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            vec![("name", "  "), ("preset", "read"), ("event_scope", "all")],
            "Give the token a name.",
        ),
        (
            vec![("name", &long), ("preset", "read"), ("event_scope", "all")],
            "at most 190 characters",
        ),
        (
            vec![
                ("name", "Nothing"),
                ("preset", "custom"),
                ("event_scope", "all"),
            ],
            "Allow at least one action on one endpoint.",
        ),
        (
            vec![
                ("name", "Fly"),
                ("preset", "custom"),
                ("endpoint_submissions", "fly"),
                ("event_scope", "all"),
            ],
            "Unknown action.",
        ),
        (
            vec![("name", "Root"), ("preset", "root"), ("event_scope", "all")],
            "Choose the permissions.",
        ),
        (
            vec![
                ("name", "No events"),
                ("preset", "read"),
                ("event_scope", "chosen"),
            ],
            "Choose at least one event, or all events.",
        ),
        (
            vec![
                ("name", "Theirs"),
                ("preset", "read"),
                ("event_scope", "chosen"),
                ("event", &theirs),
            ],
            "Choose only events of your teams",
        ),
        (
            vec![
                ("name", "Tickets"),
                ("preset", "read"),
                ("event_scope", "chosen"),
                ("event", &plain),
            ],
            "Choose only events of your teams",
        ),
        (
            vec![
                ("name", "Bad id"),
                ("preset", "read"),
                ("event_scope", "chosen"),
                ("event", "x"),
            ],
            "Unknown event.",
        ),
        (
            vec![
                ("name", "Past"),
                ("preset", "read"),
                ("event_scope", "all"),
                ("expires", "2001-01-01 00:00"),
            ],
            "The expiry must be in the future.",
        ),
        (
            vec![
                ("name", "Soon"),
                ("preset", "read"),
                ("event_scope", "all"),
                ("expires", "soon"),
            ],
            "Enter the expiry as a date and time",
        ),
    ];
    for (fields, message) in cases {
        let reply = make(&mut browser, &csrf, &fields).await;
        assert_eq!(reply.status, 400, "{fields:?}");
        let shown = shown(&reply);
        assert!(shown.contains(message), "{fields:?}: {shown}");
        assert!(shown.contains("class=\"error\""), "{fields:?}");
        let name = fields[0].1;
        assert!(
            shown.contains(&format!("name=\"name\" value=\"{name}\"")),
            "the name typed is kept: {fields:?}"
        );
        assert!(!shown.contains("new-token"), "{fields:?}");
    }
    assert!(tokens_of(&app, ada).await.is_empty(), "nothing was written");
}

#[tokio::test]
async fn forms_without_their_csrf_token_or_with_a_wrong_one_are_forbidden_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let globex = app.organizer("globex").await;
    user_of(&app, "bob@example.org", &[globex]).await;
    let (id, token) = token_for(&app, ada, "kept").await;
    set_version(&app, id, "v1").await;
    let mut bob = signed_in(&app, "bob@example.org").await;
    let (_, bobs_csrf) = page(&mut bob).await;

    let mut browser = signed_in(&app, "ada@example.org").await;
    let fields = [
        ("name", "sneaky"),
        ("preset", "write"),
        ("event_scope", "all"),
    ];
    for path in [
        "/orga/me/tokens".to_owned(),
        format!("/orga/me/tokens/{id}/upgrade"),
        format!("/orga/me/tokens/{id}/disable"),
    ] {
        let without = browser.post(&path, &fields).await;
        assert_eq!(without.status, 403, "{path}");
        assert!(html(&without).contains("Forbidden"));
        for csrf in [WRONG_TOKEN, bobs_csrf.as_str(), ""] {
            let mut with = vec![("csrfmiddlewaretoken", csrf)];
            with.extend(fields.iter().copied());
            assert_eq!(browser.post(&path, &with).await.status, 403, "{path}");
        }
    }
    let left = tokens_of(&app, ada).await;
    assert_eq!(left.len(), 1, "nothing made, nothing disabled");
    assert_eq!(left[0].version.as_deref(), Some("v1"), "not upgraded");
    assert_eq!(api(&app, "/api/events/", &token).await, 200);
}

#[tokio::test]
async fn the_list_marks_a_deprecated_version_and_upgrading_fixes_the_token_to_the_current_one() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let (old, token) = token_for(&app, ada, "Old client").await;
    let (current, _) = token_for(&app, ada, "New client").await;
    set_version(&app, old, "v1").await;
    set_version(&app, current, "v2").await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (listed, csrf) = page(&mut browser).await;
    let old_entry = entry(&listed, old);
    assert!(old_entry.contains("token-version\">v1"), "{old_entry}");
    assert!(old_entry.contains("deprecated"), "{old_entry}");
    assert!(old_entry.contains(&format!("/orga/me/tokens/{old}/upgrade")));
    let current_entry = entry(&listed, current);
    assert!(
        current_entry.contains("token-version\">v2"),
        "{current_entry}"
    );
    assert!(!current_entry.contains("deprecated"), "{current_entry}");
    assert!(!current_entry.contains("/upgrade"), "{current_entry}");
    assert!(
        listed.find("New client") < listed.find("Old client"),
        "newest first"
    );

    let reply = browser
        .post(
            &format!("/orga/me/tokens/{old}/upgrade"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.header("location"), Some("/orga/me#tokens"));
    let (after, _) = page(&mut browser).await;
    let old_entry = entry(&after, old);
    assert!(old_entry.contains("token-version\">v2"), "{old_entry}");
    assert!(!old_entry.contains("deprecated"), "{old_entry}");
    assert!(!old_entry.contains("/upgrade"), "{old_entry}");
    let row = tokens_of(&app, ada)
        .await
        .into_iter()
        .find(|t| t.id == old)
        .expect("still listed");
    assert_eq!(row.version.as_deref(), Some("v2"));
    assert_eq!(api(&app, "/api/events/", &token).await, 200);
}

#[tokio::test]
async fn disabling_a_token_stops_it_at_once_and_removes_it_from_the_list() {
    let app = TestApp::spawn().await;
    let (ada, _) = setup(&app).await;
    let (id, token) = token_for(&app, ada, "Leaving").await;
    let (kept, kept_token) = token_for(&app, ada, "Staying").await;
    assert_eq!(api(&app, "/api/events/", &token).await, 200);
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, csrf) = page(&mut browser).await;
    let reply = browser
        .post(
            &format!("/orga/me/tokens/{id}/disable"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.header("location"), Some("/orga/me#tokens"));

    assert_eq!(api(&app, "/api/events/", &token).await, 401);
    assert_eq!(api(&app, "/api/events/", &kept_token).await, 200);
    let (after, _) = page(&mut browser).await;
    assert!(!after.contains(&format!("id=\"token-{id}\"")));
    assert!(after.contains(&format!("id=\"token-{kept}\"")));
    let again = browser
        .post(
            &format!("/orga/me/tokens/{id}/disable"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(again.status, 404, "a disabled token is gone");
}

#[tokio::test]
async fn another_users_token_is_not_found_and_stays_as_it_was() {
    let app = TestApp::spawn().await;
    let (_, _) = setup(&app).await;
    let globex = app.organizer("globex").await;
    let bob = user_of(&app, "bob@example.org", &[globex]).await;
    let (theirs, their_token) = token_for(&app, bob, "Bob's").await;
    set_version(&app, theirs, "v1").await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (listed, csrf) = page(&mut browser).await;
    assert!(!listed.contains("Bob's"));
    for path in [
        format!("/orga/me/tokens/{theirs}/upgrade"),
        format!("/orga/me/tokens/{theirs}/disable"),
        "/orga/me/tokens/999999/upgrade".to_owned(),
        "/orga/me/tokens/abc/disable".to_owned(),
    ] {
        let reply = browser.post(&path, &[("csrfmiddlewaretoken", &csrf)]).await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(html(&reply).contains("Not found"));
    }
    let row = &tokens_of(&app, bob).await[0];
    assert_eq!(row.version.as_deref(), Some("v1"));
    assert_eq!(api(&app, "/api/events/", &their_token).await, 200);
}

#[tokio::test]
async fn expired_tokens_are_refused_and_deleted_while_the_others_stay() {
    let app = TestApp::spawn().await;
    let (ada, conf) = setup(&app).await;
    let (expired, expired_token) = token_for(&app, ada, "Expired").await;
    let (limited, _) = tokens::create(
        &app.db,
        ada,
        NewToken {
            name: "Limited and expired".into(),
            endpoints: Endpoints::all_write(),
            events: Some(vec![conf]),
            expires: Some(chrono::Utc::now() + chrono::Duration::days(1)),
        },
    )
    .await
    .expect("token");
    let (kept, kept_token) = token_for(&app, ada, "Kept").await;
    for id in [expired, limited.id] {
        tessera::db::execute(
            &app.db,
            "UPDATE user_api_tokens SET expires = $1 WHERE id = $2",
            [
                (chrono::Utc::now() - chrono::Duration::minutes(1)).into(),
                id.into(),
            ],
        )
        .await
        .expect("expire");
    }
    assert_eq!(api(&app, "/api/events/", &expired_token).await, 401);
    let listed: Vec<i64> = tokens_of(&app, ada).await.iter().map(|t| t.id).collect();
    assert_eq!(listed, vec![kept], "only active tokens are listed");

    assert_eq!(tokens::delete_expired(&app.db).await.expect("delete"), 2);
    let (rows, links) = (
        count(&app, "SELECT COUNT(*) AS n FROM user_api_tokens").await,
        count(&app, "SELECT COUNT(*) AS n FROM user_api_token_events").await,
    );
    assert_eq!(
        (rows, links),
        (1, 0),
        "the expired tokens went with their events"
    );
    assert_eq!(tokens::delete_expired(&app.db).await.expect("delete"), 0);
    assert_eq!(api(&app, "/api/events/", &kept_token).await, 200);
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    use sea_orm::ConnectionTrait;
    let row = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            app.db.get_database_backend(),
            sql,
        ))
        .await
        .expect("query")
        .expect("row");
    row.try_get("", "n").expect("count")
}
