//! The account page's OAuth sections: the applications a user authorized (revoke) and the
//! user's own applications (register, new secret shown once, delete), through a browser.

use poem::http::Method;
use tessera::db::entities::oauth_application;
use tessera::domain::oauth;
use tessera_tests::{Reply, TestApp};

use crate::browser_support::{Browser, csrf_field, html};
use crate::oauth::{REDIRECT, basic, bearer, client, form, refresh, tokens};
use tessera_tests::{USER_PASSWORD as PASSWORD, user_of};

const WRONG_TOKEN: &str = "0123456789012345678901234567890123456789012345678901234567890123";

/// A browser signed in as `email`.
async fn signed_in<'a>(app: &'a TestApp, email: &str) -> Browser<'a> {
    let mut browser = Browser::new(app);
    let reply = browser.sign_in(email, PASSWORD, "/account").await;
    assert_eq!(reply.status, 303, "{}", reply.body);
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

/// The account page (as shown) and its CSRF token.
async fn account(browser: &mut Browser<'_>) -> (String, String) {
    let reply = browser.get("/account").await;
    assert_eq!(reply.status, 200);
    (shown(&reply), csrf_field(html(&reply)))
}

/// The text of the first element whose class attribute ends with `class`.
fn text_of(page: &str, class: &str) -> String {
    let marker = format!("{class}\">");
    let start = page.find(&marker).expect(class) + marker.len();
    page[start..].split('<').next().expect("text").to_owned()
}

/// An application owned by `owner`, with the tests' redirect URI, and its secret.
async fn own_app(app: &TestApp, owner: i64, name: &str) -> (oauth_application::Model, String) {
    oauth::create_application(&app.db, name, &[REDIRECT.to_owned()], Some(owner))
        .await
        .expect("application")
}

/// Whether these client credentials are valid: the revocation endpoint answers 200 for a
/// valid client and 401 otherwise.
async fn client_status(app: &TestApp, client_id: &str, secret: &str) -> u16 {
    form(
        app,
        "/api/v1/oauth/revoke_token",
        Some(&basic(client_id, secret)),
        "token=unknown",
    )
    .await
    .status
}

/// The authorization an access token acts under.
async fn authorization_of(app: &TestApp, access: &str) -> i64 {
    oauth::resolve_access_token(&app.db, access)
        .await
        .expect("query")
        .expect("token")
        .authorization_id
}

async fn me(app: &TestApp, access: &str) -> u16 {
    bearer(app, Method::GET, "/api/v1/me", access, None)
        .await
        .status
}

fn assert_no_store(reply: &Reply) {
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert!(!html(reply).contains("<script"));
}

#[tokio::test]
async fn the_sections_list_the_users_authorizations_and_applications_and_not_another_users() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let globex = app.organizer("globex").await;
    let ada = user_of(&app, "ada@example.org", &[acme, globex]).await;
    let bob = user_of(&app, "bob@example.org", &[acme]).await;
    let scanner = oauth::create_application(&app.db, "Scanner", &[REDIRECT.to_owned()], None)
        .await
        .expect("application");
    let reports = oauth::create_application(&app.db, "Reports", &[REDIRECT.to_owned()], None)
        .await
        .expect("application");
    tokens(&app, &scanner, ada, "read write", &[acme, globex]).await;
    let (bob_access, _) = tokens(&app, &reports, bob, "profile", &[]).await;
    let dashboard = own_app(&app, ada, "Ada Dashboard").await;
    let bob_tool = own_app(&app, bob, "Bob Tool").await;

    let mut browser = signed_in(&app, "ada@example.org").await;
    let reply = browser.get("/account").await;
    assert_no_store(&reply);
    let page = shown(&reply);

    assert!(page.contains("Scanner"), "{page}");
    assert!(page.contains("Read the data of the organizers you choose."));
    assert!(page.contains("Change the data of the organizers you choose."));
    assert!(page.contains("acme Ltd, globex Ltd"));
    let own = oauth::authorizations_of(&app.db, ada).await.expect("query")[0].id;
    assert!(page.contains(&format!("/account/authorized/{own}/revoke")));
    assert!(page.contains("Ada Dashboard"));
    assert!(page.contains(&dashboard.0.client_id));
    assert!(page.contains(REDIRECT));
    assert!(page.contains(&format!("/account/applications/{}/secret", dashboard.0.id)));
    assert!(
        !page.contains(&dashboard.1),
        "a secret is never shown again"
    );

    let theirs = authorization_of(&app, &bob_access).await;
    assert!(!page.contains("Reports"));
    assert!(!page.contains(&format!("/account/authorized/{theirs}/revoke")));
    assert!(!page.contains("Bob Tool"));
    assert!(!page.contains(&bob_tool.0.client_id));
}

#[tokio::test]
async fn a_user_without_authorizations_or_applications_sees_so_and_the_registration_form() {
    let app = TestApp::spawn().await;
    user_of(&app, "ada@example.org", &[]).await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (page, _) = account(&mut browser).await;
    assert!(page.contains("You have not authorized any applications."));
    assert!(page.contains("You have no applications."));
    assert!(page.contains("action=\"/account/applications#register\""));
    assert!(page.contains("name=\"redirect_uris\""));
}

#[tokio::test]
async fn revoking_an_authorization_stops_its_tokens_at_once_and_removes_it_from_the_list() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let ada = user_of(&app, "ada@example.org", &[acme]).await;
    let c = client(&app).await;
    let (access, refresh_token) = tokens(&app, &c, ada, "read profile", &[acme]).await;
    let id = authorization_of(&app, &access).await;
    assert_eq!(me(&app, &access).await, 200);

    let mut browser = signed_in(&app, "ada@example.org").await;
    let (page, token) = account(&mut browser).await;
    let action = format!("/account/authorized/{id}/revoke");
    assert!(page.contains(&action));
    let reply = browser
        .post(&action, &[("csrfmiddlewaretoken", &token)])
        .await;
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/account#authorized"));

    assert_eq!(me(&app, &access).await, 401);
    let orgs = bearer(&app, Method::GET, "/api/v1/organizers/", &access, None).await;
    assert_eq!(orgs.status, 401);
    let r = refresh(&app, &c, &refresh_token).await;
    assert_eq!(
        (r.status, r.body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (page, _) = account(&mut browser).await;
    assert!(!page.contains(&action));
    assert!(page.contains("You have not authorized any applications."));
    assert!(
        oauth::authorizations_of(&app.db, ada)
            .await
            .expect("query")
            .is_empty()
    );
}

#[tokio::test]
async fn registering_an_application_shows_its_secret_once_and_the_secret_works() {
    let app = TestApp::spawn().await;
    let ada = user_of(&app, "ada@example.org", &[]).await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, token) = account(&mut browser).await;

    let reply = browser
        .post(
            "/account/applications",
            &[
                ("csrfmiddlewaretoken", &token),
                ("name", "  Ada Dashboard "),
                (
                    "redirect_uris",
                    "https://dash.example/cb\r\n\r\n  http://localhost:8080/cb \r\n",
                ),
            ],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("location"), None);
    assert_no_store(&reply);
    let page = shown(&reply);
    assert!(page.contains("shown only this once"), "{page}");
    let client_id = text_of(&page, "client-id");
    let secret = text_of(&page, "client-secret");
    assert_eq!(secret.len(), 64);

    let stored = oauth::applications_of(&app.db, ada).await.expect("query");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].name, "Ada Dashboard");
    assert_eq!(stored[0].client_id, client_id);
    assert_eq!(
        oauth::redirect_uris(&stored[0]),
        ["https://dash.example/cb", "http://localhost:8080/cb"]
    );
    assert_eq!(client_status(&app, &client_id, &secret).await, 200);
    assert_eq!(client_status(&app, &client_id, "wrong").await, 401);

    let (page, _) = account(&mut browser).await;
    assert!(page.contains(&client_id));
    assert!(page.contains("https://dash.example/cb"));
    assert!(!page.contains(&secret), "the secret is shown only once");
}

#[tokio::test]
async fn a_new_secret_makes_the_old_one_fail_and_the_new_one_work() {
    let app = TestApp::spawn().await;
    let ada = user_of(&app, "ada@example.org", &[]).await;
    let (own, old) = own_app(&app, ada, "Ada Dashboard").await;
    assert_eq!(client_status(&app, &own.client_id, &old).await, 200);

    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, token) = account(&mut browser).await;
    let reply = browser
        .post(
            &format!("/account/applications/{}/secret", own.id),
            &[("csrfmiddlewaretoken", &token)],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_no_store(&reply);
    let page = shown(&reply);
    assert!(page.contains("shown only this once"));
    assert!(page.contains("The previous secret no longer works."));
    assert_eq!(text_of(&page, "client-id"), own.client_id);
    let new = text_of(&page, "client-secret");
    assert_ne!(new, old);

    assert_eq!(client_status(&app, &own.client_id, &old).await, 401);
    assert_eq!(client_status(&app, &own.client_id, &new).await, 200);
}

#[tokio::test]
async fn invalid_input_is_refused_with_a_clear_message_and_the_values_typed_and_nothing_is_stored()
{
    let app = TestApp::spawn().await;
    let ada = user_of(&app, "ada@example.org", &[]).await;
    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, token) = account(&mut browser).await;
    let cases = [
        (
            "Ada Dashboard",
            "https://ok.example/cb\nftp://files.example/x",
            "\"ftp://files.example/x\" is not a valid redirect URI",
        ),
        (
            "Ada Dashboard",
            "https://ok.example/cb#fragment",
            "\"https://ok.example/cb#fragment\" is not a valid redirect URI",
        ),
        ("Ada Dashboard", "/relative", "is not a valid redirect URI"),
        ("Ada Dashboard", " \n ", "Enter at least one redirect URI."),
        (
            "   ",
            "https://ok.example/cb",
            "The name must have 1 to 255 characters.",
        ),
    ];
    for (name, uris, message) in cases {
        let reply = browser
            .post(
                "/account/applications",
                &[
                    ("csrfmiddlewaretoken", &token),
                    ("name", name),
                    ("redirect_uris", uris),
                ],
            )
            .await;
        assert_eq!(reply.status, 400, "{name:?} {uris:?}");
        let page = shown(&reply);
        assert!(page.contains(message), "{message}: {page}");
        assert!(page.contains("class=\"error\""));
        assert!(page.contains("Your applications"), "the account page again");
        assert!(page.contains(&format!("value=\"{name}\"")), "{page}");
        assert!(page.contains(&format!(">{uris}</textarea>")), "{page}");
    }

    let reply = browser
        .post(
            "/account/applications",
            &[
                ("csrfmiddlewaretoken", &token),
                ("name", "<b>Bold</b>"),
                ("redirect_uris", "https://ok.example/cb\n<script>x</script>"),
            ],
        )
        .await;
    assert_eq!(reply.status, 400);
    let page = html(&reply);
    assert!(
        page.contains("value=\"&lt;b&gt;Bold&lt;&#x2f;b&gt;\""),
        "{page}"
    );
    assert!(
        page.contains(">https:&#x2f;&#x2f;ok.example&#x2f;cb\n&lt;script&gt;x"),
        "{page}"
    );
    assert!(!page.contains("<script"));

    assert!(
        oauth::applications_of(&app.db, ada)
            .await
            .expect("query")
            .is_empty()
    );
}

/// The forms of the sections: path and fields (without the CSRF token) for ada's
/// authorization and application.
fn forms(authorization: i64, application: i64) -> Vec<(String, Vec<(&'static str, &'static str)>)> {
    vec![
        (
            format!("/account/authorized/{authorization}/revoke"),
            vec![],
        ),
        (
            "/account/applications".to_owned(),
            vec![
                ("name", "Sneaky"),
                ("redirect_uris", "https://sneaky.example/cb"),
            ],
        ),
        (
            format!("/account/applications/{application}/secret"),
            vec![],
        ),
        (
            format!("/account/applications/{application}/delete"),
            vec![],
        ),
    ]
}

#[tokio::test]
async fn forms_without_their_csrf_token_or_with_a_wrong_one_are_forbidden_and_change_nothing() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let ada = user_of(&app, "ada@example.org", &[acme]).await;
    user_of(&app, "bob@example.org", &[]).await;
    let c = client(&app).await;
    let (access, _) = tokens(&app, &c, ada, "read profile", &[acme]).await;
    let authorization = authorization_of(&app, &access).await;
    let (own, secret) = own_app(&app, ada, "Ada Dashboard").await;
    let mut bob = signed_in(&app, "bob@example.org").await;
    let (_, bobs_token) = account(&mut bob).await;

    let mut browser = signed_in(&app, "ada@example.org").await;
    for (path, fields) in forms(authorization, own.id) {
        let without = browser.post(&path, &fields).await;
        assert_eq!(without.status, 403, "{path}");
        assert!(html(&without).contains("Forbidden"));
        for token in [WRONG_TOKEN, bobs_token.as_str(), ""] {
            let mut with = vec![("csrfmiddlewaretoken", token)];
            with.extend(fields.iter().copied());
            assert_eq!(browser.post(&path, &with).await.status, 403, "{path}");
        }
    }

    assert_eq!(me(&app, &access).await, 200);
    assert_eq!(client_status(&app, &own.client_id, &secret).await, 200);
    let apps = oauth::applications_of(&app.db, ada).await.expect("query");
    assert_eq!(apps.len(), 1, "nothing registered, nothing deleted");
    assert_eq!(
        oauth::authorizations_of(&app.db, ada)
            .await
            .expect("query")
            .len(),
        1
    );
}

#[tokio::test]
async fn another_users_authorization_or_application_is_not_found_and_stays() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    user_of(&app, "ada@example.org", &[acme]).await;
    let bob = user_of(&app, "bob@example.org", &[acme]).await;
    let c = client(&app).await;
    let (bob_access, bob_refresh) = tokens(&app, &c, bob, "read profile", &[acme]).await;
    let theirs = authorization_of(&app, &bob_access).await;
    let (bob_app, bob_secret) = own_app(&app, bob, "Bob Tool").await;

    let mut browser = signed_in(&app, "ada@example.org").await;
    let (_, token) = account(&mut browser).await;
    let paths = [
        format!("/account/authorized/{theirs}/revoke"),
        format!("/account/applications/{}/secret", bob_app.id),
        format!("/account/applications/{}/delete", bob_app.id),
        "/account/authorized/999999/revoke".to_owned(),
        "/account/applications/999999/secret".to_owned(),
        "/account/applications/abc/delete".to_owned(),
    ];
    for path in paths {
        let reply = browser
            .post(&path, &[("csrfmiddlewaretoken", &token)])
            .await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(html(&reply).contains("Not found"));
        assert!(!html(&reply).contains(&bob_app.client_id));
    }

    assert_eq!(me(&app, &bob_access).await, 200);
    assert_eq!(
        client_status(&app, &bob_app.client_id, &bob_secret).await,
        200
    );
    assert_eq!(refresh(&app, &c, &bob_refresh).await.status, 200);
    assert_eq!(
        oauth::applications_of(&app.db, bob)
            .await
            .expect("query")
            .len(),
        1
    );
}

#[tokio::test]
async fn without_a_session_the_forms_lead_to_the_sign_in_page_and_change_nothing() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let ada = user_of(&app, "ada@example.org", &[acme]).await;
    let c = client(&app).await;
    let (access, _) = tokens(&app, &c, ada, "read profile", &[acme]).await;
    let authorization = authorization_of(&app, &access).await;
    let (own, secret) = own_app(&app, ada, "Ada Dashboard").await;

    let mut stranger = Browser::new(&app);
    for (path, fields) in forms(authorization, own.id) {
        let mut with = vec![("csrfmiddlewaretoken", WRONG_TOKEN)];
        with.extend(fields.iter().copied());
        let reply = stranger.post(&path, &with).await;
        assert_eq!(reply.status, 303, "{path}");
        assert_eq!(reply.header("location"), Some("/login?next=/account"));
    }

    assert_eq!(me(&app, &access).await, 200);
    assert_eq!(client_status(&app, &own.client_id, &secret).await, 200);
    assert_eq!(
        oauth::applications_of(&app.db, ada)
            .await
            .expect("query")
            .len(),
        1
    );
}

#[tokio::test]
async fn deleting_an_application_ends_every_access_granted_to_it() {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    let ada = user_of(&app, "ada@example.org", &[]).await;
    let bob = user_of(&app, "bob@example.org", &[acme]).await;
    let dashboard = own_app(&app, ada, "Ada Dashboard").await;
    let (bob_access, bob_refresh) = tokens(&app, &dashboard, bob, "read", &[acme]).await;
    let kept = own_app(&app, ada, "Ada Other").await;

    let mut browser = signed_in(&app, "ada@example.org").await;
    let (page, token) = account(&mut browser).await;
    let action = format!("/account/applications/{}/delete", dashboard.0.id);
    assert!(page.contains(&action));
    let reply = browser
        .post(&action, &[("csrfmiddlewaretoken", &token)])
        .await;
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/account#applications"));

    let orgs = bearer(&app, Method::GET, "/api/v1/organizers/", &bob_access, None).await;
    assert_eq!(orgs.status, 401);
    assert_eq!(refresh(&app, &dashboard, &bob_refresh).await.status, 401);
    assert_eq!(
        client_status(&app, &dashboard.0.client_id, &dashboard.1).await,
        401
    );
    assert!(
        oauth::authorizations_of(&app.db, bob)
            .await
            .expect("query")
            .is_empty()
    );
    let (page, _) = account(&mut browser).await;
    assert!(!page.contains(&dashboard.0.client_id));
    assert!(page.contains(&kept.0.client_id));
    assert_eq!(client_status(&app, &kept.0.client_id, &kept.1).await, 200);
}

#[tokio::test]
async fn revoking_while_a_code_is_exchanged_leaves_no_working_token() {
    let app = TestApp::spawn().await;
    let ada = user_of(&app, "ada@example.org", &[]).await;
    let c = client(&app).await;
    for _ in 0..10 {
        let code = oauth::authorize(&app.db, &c.0, ada, "profile", &[], REDIRECT, None)
            .await
            .expect("code");
        let id = oauth::authorizations_of(&app.db, ada).await.expect("query")[0].id;
        let (exchanged, revoked) = tokio::join!(
            crate::oauth::exchange(&app, &c, &code, ""),
            oauth::revoke_authorization(&app.db, ada, id)
        );
        assert!(revoked.expect("revoke"));
        assert!([200, 400].contains(&exchanged.status), "{}", exchanged.body);
        if let Some(access) = exchanged.body["access_token"].as_str() {
            assert_eq!(me(&app, access).await, 401);
        }
        assert!(
            oauth::authorizations_of(&app.db, ada)
                .await
                .expect("query")
                .is_empty()
        );
    }
}
