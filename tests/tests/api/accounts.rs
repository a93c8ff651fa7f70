//! Users and the pages a person uses: signing in and out, the account page, CSRF tokens,
//! the session cookie and the throttling of failed sign-ins.

use poem::http::Method;
use sea_orm::EntityTrait;
use tessera::db::entities::{login_failure, session};
use tessera::domain::users::{self, NewUser};
use tessera_tests::{Reply, TestApp};

use crate::browser_support::{Browser, csrf_field, form_body, html, set_cookies};

const EMAIL: &str = "ada@example.org";
const PASSWORD: &str = "correct horse battery";

async fn user(app: &TestApp, email: &str) -> i64 {
    users::create_user(
        &app.db,
        NewUser {
            email: email.into(),
            password: PASSWORD.into(),
            fullname: "Ada Lovelace".into(),
            ..Default::default()
        },
    )
    .await
    .expect("user")
    .id
}

/// The `name=value` pair of a cookie set by the reply.
fn cookie_pair(reply: &Reply, name: &str) -> Option<String> {
    set_cookies(reply)
        .into_iter()
        .find(|c| c.starts_with(&format!("{name}=")))
        .and_then(|c| c.split(';').next().map(str::to_owned))
}

/// A sign-in page with the email typed and the browser's CSRF token left out.
fn same_form(reply: &Reply, email: &str) -> String {
    let page = html(reply);
    page.replace(email, "EMAIL")
        .replace(&csrf_field(page), "TOKEN")
}

#[tokio::test]
async fn a_user_signs_in_through_the_form_and_reaches_the_account_page() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let mut browser = Browser::new(&app);
    let signed_in = browser.sign_in(EMAIL, PASSWORD, "/account").await;
    assert_eq!(signed_in.status, 303, "{:?}", signed_in.body);
    assert_eq!(signed_in.header("location"), Some("/account"));
    let cookie = set_cookies(&signed_in)
        .into_iter()
        .find(|c| c.starts_with("tessera_session="))
        .expect("session cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    assert!(
        !cookie.contains("Secure"),
        "plain http public URL: {cookie}"
    );

    let account = browser.get("/account").await;
    assert_eq!(account.status, 200);
    let page = html(&account);
    assert!(page.contains(EMAIL), "{page}");
    assert!(page.contains("Ada Lovelace"));
    assert!(page.contains("Authorized applications"));
    assert!(page.contains("Your applications"));
    assert!(page.contains("<meta name=\"viewport\""));
    let csp = account.header("content-security-policy").expect("csp");
    assert!(csp.contains("form-action 'self'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert_eq!(account.header("cache-control"), Some("no-store"));
    assert_eq!(account.header("x-frame-options"), Some("DENY"));
}

#[tokio::test]
async fn the_session_cookie_is_secure_when_the_public_url_is_https() {
    let app = TestApp::spawn_with(|c| c.public_url = Some("https://tessera.test".into())).await;
    user(&app, EMAIL).await;
    let signed_in = Browser::new(&app)
        .sign_in(EMAIL, PASSWORD, "/account")
        .await;
    assert_eq!(signed_in.status, 303);
    let cookie = set_cookies(&signed_in)
        .into_iter()
        .find(|c| c.starts_with("tessera_session="))
        .expect("session cookie");
    assert!(cookie.contains("Secure"), "{cookie}");
}

#[tokio::test]
async fn the_email_is_compared_without_regard_to_case() {
    let app = TestApp::spawn().await;
    user(&app, "Grace@Example.ORG").await;
    let signed_in = Browser::new(&app)
        .sign_in("  GRACE@example.org ", PASSWORD, "/account")
        .await;
    assert_eq!(signed_in.status, 303);
    let taken = users::create_user(
        &app.db,
        NewUser {
            email: "grace@EXAMPLE.org".into(),
            password: PASSWORD.into(),
            ..Default::default()
        },
    )
    .await;
    assert!(taken.is_err(), "the email is taken whatever its case");
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_email_get_the_same_answer() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let mut browser = Browser::new(&app);
    let wrong_password = browser.sign_in(EMAIL, "not the password", "/account").await;
    let unknown = browser
        .sign_in("nobody@example.org", "not the password", "/account")
        .await;
    assert_eq!(wrong_password.status, 200);
    assert_eq!(unknown.status, wrong_password.status);
    assert!(html(&wrong_password).contains("Email or password is wrong."));
    assert_eq!(
        same_form(&unknown, "nobody@example.org"),
        same_form(&wrong_password, EMAIL)
    );
    assert!(cookie_pair(&wrong_password, "tessera_session").is_none());
}

#[tokio::test]
async fn a_form_posted_without_its_csrf_token_or_with_a_wrong_one_is_forbidden() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let mut browser = Browser::new(&app);
    browser.get("/login").await;
    let without = browser
        .post("/login", &[("email", EMAIL), ("password", PASSWORD)])
        .await;
    assert_eq!(without.status, 403);
    let wrong = browser
        .post(
            "/login",
            &[
                ("csrfmiddlewaretoken", "x".repeat(64).as_str()),
                ("email", EMAIL),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(wrong.status, 403);
    assert!(cookie_pair(&wrong, "tessera_session").is_none());

    // Signed in, the logout form needs the session's token.
    assert_eq!(
        browser.sign_in(EMAIL, PASSWORD, "/account").await.status,
        303
    );
    let forged = browser
        .post("/logout", &[("csrfmiddlewaretoken", "forged")])
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(forged.header("x-frame-options"), Some("DENY"));
    assert_eq!(browser.get("/account").await.status, 200, "still signed in");
}

#[tokio::test]
async fn next_leads_only_to_paths_on_this_site() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    for (next, expected) in [
        ("//evil.example", "/account"),
        ("https://evil.example", "/account"),
        ("/\\evil.example", "/account"),
        ("/account", "/account"),
        ("/account?tab=2", "/account?tab=2"),
    ] {
        let reply = Browser::new(&app).sign_in(EMAIL, PASSWORD, next).await;
        assert_eq!(reply.status, 303, "{next}");
        assert_eq!(reply.header("location"), Some(expected), "{next}");
    }
}

#[tokio::test]
async fn the_account_page_sends_someone_not_signed_in_to_the_sign_in_page() {
    let app = TestApp::spawn().await;
    let reply = Browser::new(&app).get("/account").await;
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/login?next=/account"));
    let unknown = app
        .raw(
            Method::GET,
            "/account",
            &[("Cookie", "tessera_session=not-a-session")],
            Vec::new(),
        )
        .await;
    assert_eq!(unknown.status, 303);
}

#[tokio::test]
async fn logging_out_ends_the_session() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let mut browser = Browser::new(&app);
    let signed_in = browser.sign_in(EMAIL, PASSWORD, "/account").await;
    let old_cookie = cookie_pair(&signed_in, "tessera_session").expect("cookie");
    let account = browser.get("/account").await;
    let token = csrf_field(html(&account));
    let out = browser
        .post("/logout", &[("csrfmiddlewaretoken", &token)])
        .await;
    assert_eq!(out.status, 303);
    assert_eq!(out.header("location"), Some("/login"));
    assert!(
        set_cookies(&out)
            .iter()
            .any(|c| c.starts_with("tessera_session=;") && c.contains("Max-Age=0"))
    );
    let again = app
        .raw(
            Method::GET,
            "/account",
            &[("Cookie", &old_cookie)],
            Vec::new(),
        )
        .await;
    assert_eq!(again.status, 303, "the old cookie no longer signs in");
    assert!(
        session::Entity::find()
            .all(&app.db)
            .await
            .expect("sessions")
            .is_empty()
    );
}

/// Fails to sign in as `email` until refused; gives the number of attempts and the refusal.
async fn fail_until_refused(app: &TestApp, email: &str) -> (usize, Reply) {
    let mut browser = Browser::new(app);
    for attempt in 1..=15 {
        let reply = browser.sign_in(email, "wrong password", "/account").await;
        if reply.status != 200 {
            return (attempt, reply);
        }
    }
    panic!("never refused");
}

#[tokio::test]
async fn repeated_failures_lock_the_email_with_the_same_answer_whether_or_not_it_exists() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let (known_attempts, known) = fail_until_refused(&app, EMAIL).await;
    let (unknown_attempts, unknown) = fail_until_refused(&app, "nobody@example.org").await;
    assert_eq!(known.status, 429);
    assert_eq!(unknown.status, 429);
    assert_eq!(known_attempts, 11, "ten failures lock the email");
    assert_eq!(unknown_attempts, known_attempts);
    assert_eq!(
        same_form(&unknown, "nobody@example.org"),
        same_form(&known, EMAIL)
    );
    // Locked, even the right password is refused.
    let right = Browser::new(&app)
        .sign_in(EMAIL, PASSWORD, "/account")
        .await;
    assert_eq!(right.status, 429);
    assert!(cookie_pair(&right, "tessera_session").is_none());
}

#[tokio::test]
async fn simultaneous_guesses_for_one_email_get_ten_checks_and_the_rest_are_refused_unchecked() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let guesses = (0..45).map(|i| {
        let app = &app;
        async move {
            let guess = format!("guess number {i}");
            Browser::new(app).sign_in(EMAIL, &guess, "/account").await
        }
    });
    let replies = futures::future::join_all(guesses).await;
    let checked = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!(
        (checked, refused),
        (10, 35),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let right = Browser::new(&app)
        .sign_in(EMAIL, PASSWORD, "/account")
        .await;
    assert_eq!(right.status, 429, "ten failures lock the email");
}

#[tokio::test]
async fn an_overlong_email_or_password_is_a_wrong_sign_in_and_counted_like_any_other() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let long_email = format!("{}@example.org", "a".repeat(5000));
    let mut browser = Browser::new(&app);
    let r = browser.sign_in(&long_email, PASSWORD, "/account").await;
    assert_eq!(r.status, 200, "the form again, with its error");
    assert!(html(&r).contains("Email or password is wrong."));
    let r = browser
        .sign_in(EMAIL, &"p".repeat(100_000), "/account")
        .await;
    assert_eq!(r.status, 200);
    let counted = login_failure::Entity::find()
        .all(&app.db)
        .await
        .expect("rows");
    assert!(
        counted.iter().all(|row| row.key.len() <= 300),
        "{counted:?}"
    );
    assert!(
        counted
            .iter()
            .any(|row| row.key == format!("email:{EMAIL}"))
    );
}

#[tokio::test]
async fn sign_ins_beyond_the_checks_at_once_are_answered_503_and_not_counted() {
    let app = TestApp::spawn_with(|config| {
        config.password_checks_at_once = 1;
        config.password_check_wait_ms = 0;
    })
    .await;
    user(&app, EMAIL).await;
    let attempts = (0..8).map(|i| {
        let app = &app;
        async move {
            let email = format!("nobody{i}@example.org");
            Browser::new(app)
                .sign_in(&email, "a guess", "/account")
                .await
        }
    });
    let replies = futures::future::join_all(attempts).await;
    let busy: Vec<&Reply> = replies.iter().filter(|r| r.status == 503).collect();
    assert!(
        replies.iter().all(|r| r.status == 200 || r.status == 503),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().any(|r| r.status == 200), "one check ran");
    assert!(!busy.is_empty(), "one check at a time, none waiting");
    assert_eq!(busy[0].header("retry-after"), Some("5"));
    assert!(
        html(busy[0]).contains("Too many sign-ins at once"),
        "{}",
        html(busy[0])
    );
    let counted = login_failure::Entity::find()
        .all(&app.db)
        .await
        .expect("rows")
        .into_iter()
        .filter(|row| row.key.starts_with("email:") && row.failures > 0)
        .count();
    assert_eq!(counted, 8 - busy.len(), "unchecked attempts are given back");
    let right = Browser::new(&app)
        .sign_in(EMAIL, PASSWORD, "/account")
        .await;
    assert_eq!(right.status, 303, "a lone sign-in gets its turn");
}

#[tokio::test]
async fn signing_in_clears_the_failures_of_the_email() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let mut browser = Browser::new(&app);
    for _ in 0..3 {
        browser.sign_in(EMAIL, "wrong password", "/account").await;
    }
    let key = format!("email:{EMAIL}");
    let row = login_failure::Entity::find_by_id(key.clone())
        .one(&app.db)
        .await
        .expect("query")
        .expect("counted");
    assert_eq!(row.failures, 3);
    assert_eq!(
        browser.sign_in(EMAIL, PASSWORD, "/account").await.status,
        303
    );
    assert!(
        login_failure::Entity::find_by_id(key)
            .one(&app.db)
            .await
            .expect("query")
            .is_none()
    );
}

#[tokio::test]
async fn a_session_is_kept_in_the_database_and_known_to_another_server() {
    let app = TestApp::spawn().await;
    user(&app, EMAIL).await;
    let signed_in = Browser::new(&app)
        .sign_in(EMAIL, PASSWORD, "/account")
        .await;
    let cookie = cookie_pair(&signed_in, "tessera_session").expect("cookie");
    let key = cookie.trim_start_matches("tessera_session=");
    let rows = session::Entity::find()
        .all(&app.db)
        .await
        .expect("sessions");
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].key_hash, key, "only the key's hash is stored");

    let other = tessera::App::new(tessera::Config {
        database_url: app.state.config.database_url.clone(),
        public_url: Some("http://tessera.test".into()),
        ..tessera::Config::default()
    })
    .build()
    .await
    .expect("second server");
    let endpoint = other.endpoint();
    use poem::Endpoint;
    let resp = endpoint
        .get_response(
            poem::Request::builder()
                .uri("/account".parse().expect("uri"))
                .header("Cookie", cookie.as_str())
                .finish(),
        )
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    let page = resp.into_body().into_string().await.expect("body");
    assert!(page.contains(EMAIL));
}

#[tokio::test]
async fn a_user_sees_the_organizers_of_their_teams() {
    let app = TestApp::spawn().await;
    let user_id = user(&app, EMAIL).await;
    app.organizer("acme").await;
    app.organizer("other").await;
    let team = tessera::admin::create_user(
        &app.db,
        &tessera::admin::UserRequest {
            email: "grace@example.org".into(),
            password: PASSWORD.into(),
            team: Some(("acme".into(), "staff".into())),
            ..Default::default()
        },
    )
    .await
    .expect("user in a team");
    let grants = users::organizers_of(&app.db, team.id)
        .await
        .expect("grants");
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].organizer.slug, "acme");
    assert!(
        users::organizers_of(&app.db, user_id)
            .await
            .expect("grants")
            .is_empty()
    );
}

#[tokio::test]
async fn failures_are_counted_per_client_address_too() {
    let app = TestApp::spawn().await;
    let base = app.serve().await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let page = client
        .get(format!("{base}/login"))
        .send()
        .await
        .expect("login page");
    let csrf_cookie = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| {
            c.split(';')
                .next()
                .filter(|p| p.starts_with("tessera_csrf="))
        })
        .expect("csrf cookie")
        .to_owned();
    let token = csrf_field(&page.text().await.expect("page"));
    for email in ["one@example.org", "two@example.org"] {
        let reply = client
            .post(format!("{base}/login"))
            .header("Cookie", &csrf_cookie)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(&[
                ("csrfmiddlewaretoken", &token),
                ("email", email),
                ("password", "wrong password"),
            ]))
            .send()
            .await
            .expect("sign in");
        assert_eq!(reply.status().as_u16(), 200);
    }
    let row = login_failure::Entity::find_by_id("address:127.0.0.1".to_owned())
        .one(&app.db)
        .await
        .expect("query")
        .expect("counted per address");
    assert_eq!(row.failures, 2);
}
