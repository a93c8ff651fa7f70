//! A forgotten password, reset by e-mail: the same answer whether or not an account exists,
//! at most three links an hour, a link that works once and for an hour, and a new password
//! that ends every session and the old password.

use tessera_tests::{TestApp, USER_PASSWORD as PASSWORD, user_of};

use crate::browser_support::{Browser, csrf_field, html};

const NEW: &str = "a freshly reset passphrase";

async fn with_ada() -> TestApp {
    let app = TestApp::spawn().await;
    let acme = app.organizer("acme").await;
    user_of(&app, "ada@example.org", &[acme]).await;
    app
}

/// Asks for a link for `email` as a browser does; gives the page.
async fn ask(app: &TestApp, email: &str) -> tessera_tests::Reply {
    let mut browser = Browser::new(app);
    let form = browser.get("/password/reset").await;
    assert_eq!(form.status, 200);
    let csrf = csrf_field(html(&form));
    browser
        .post(
            "/password/reset",
            &[("csrfmiddlewaretoken", &csrf), ("email", email)],
        )
        .await
}

/// The links mailed to `email`, oldest first (their paths).
async fn links(app: &TestApp, email: &str) -> Vec<String> {
    tessera_tests::outbox(&app.db)
        .await
        .into_iter()
        .filter(|m| m.to_address == email && m.subject == "Set a new password")
        .map(|m| {
            let start = m.body_text.find("/password/reset/").expect("a link");
            m.body_text[start..]
                .split_whitespace()
                .next()
                .expect("link")
                .to_owned()
        })
        .collect()
}

/// The links mailed to `email` once there are `n` of them: the page answers before the link
/// is made, so this waits for it (10 s at most), then a moment longer to see no more come.
async fn mailed(app: &TestApp, email: &str, n: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while links(app, email).await.len() < n && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let sent = links(app, email).await;
    assert_eq!(sent.len(), n, "{sent:?}");
    sent
}

/// Sets `new` (twice, or `repeat`) through the link's form.
async fn set(app: &TestApp, link: &str, new: &str, repeat: &str) -> tessera_tests::Reply {
    let mut browser = Browser::new(app);
    let form = browser.get(link).await;
    if form.status != 200 {
        return form;
    }
    let csrf = csrf_field(html(&form));
    browser
        .post(
            link,
            &[
                ("csrfmiddlewaretoken", &csrf),
                ("new", new),
                ("repeat", repeat),
            ],
        )
        .await
}

async fn signs_in(app: &TestApp, password: &str) -> bool {
    let mut browser = Browser::new(app);
    browser
        .sign_in("ada@example.org", password, "/account")
        .await
        .status
        == 303
}

#[tokio::test]
async fn asking_answers_alike_for_an_account_and_for_nobody_and_mails_only_the_account() {
    let app = with_ada().await;
    let known = ask(&app, "Ada@Example.org").await;
    let unknown = ask(&app, "nobody@example.org").await;
    assert_eq!(known.status, 200);
    assert_eq!(unknown.status, 200);
    let said = |r: &tessera_tests::Reply| {
        html(r).contains("If an account exists for") && html(r).contains("is on its way")
    };
    assert!(said(&known) && said(&unknown));
    mailed(&app, "ada@example.org", 1).await;
    assert!(
        tessera_tests::outbox(&app.db)
            .await
            .iter()
            .all(|m| m.to_address != "nobody@example.org")
    );
    let bad = ask(&app, "not an address").await;
    assert_eq!(bad.status, 400);
    assert!(html(&bad).contains("Enter a valid email address."));
}

#[tokio::test]
async fn a_link_sets_a_new_password_once_and_the_old_one_and_every_session_end() {
    let app = with_ada().await;
    let mut signed_in = Browser::new(&app);
    assert_eq!(
        signed_in
            .sign_in("ada@example.org", PASSWORD, "/account")
            .await
            .status,
        303
    );
    ask(&app, "ada@example.org").await;
    let link = mailed(&app, "ada@example.org", 1).await.remove(0);

    let differ = set(&app, &link, NEW, "something else entirely").await;
    assert_eq!(differ.status, 400);
    assert!(html(&differ).contains("The two passwords differ."));
    let short = set(&app, &link, "short", "short").await;
    assert_eq!(short.status, 400);
    assert!(html(&short).contains("between 8 and 1024 characters"));

    let done = set(&app, &link, NEW, NEW).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(signs_in(&app, NEW).await, "the new password works");
    assert!(!signs_in(&app, PASSWORD).await, "the old one does not");
    assert_eq!(
        signed_in.get("/account").await.status,
        303,
        "sessions ended"
    );
    let again = set(
        &app,
        &link,
        "yet another passphrase",
        "yet another passphrase",
    )
    .await;
    assert_eq!(again.status, 404, "used up");
    assert!(signs_in(&app, NEW).await);
}

#[tokio::test]
async fn a_new_password_ends_the_other_links_and_an_expired_link_is_refused() {
    let app = with_ada().await;
    ask(&app, "ada@example.org").await;
    ask(&app, "ada@example.org").await;
    let sent = mailed(&app, "ada@example.org", 2).await;
    assert_eq!(set(&app, &sent[0], NEW, NEW).await.status, 303);
    assert_eq!(
        set(&app, &sent[1], NEW, NEW).await.status,
        404,
        "ended with it"
    );

    ask(&app, "ada@example.org").await;
    let late = mailed(&app, "ada@example.org", 3).await.remove(2);
    tessera::db::execute(
        &app.db,
        "UPDATE password_resets SET expires = $1",
        [(tessera::values::now() - chrono::TimeDelta::minutes(1)).into()],
    )
    .await
    .expect("expire");
    assert_eq!(set(&app, &late, NEW, NEW).await.status, 404, "expired");
}

#[tokio::test]
async fn at_most_three_links_an_hour_are_mailed_and_the_answer_stays_the_same() {
    let app = with_ada().await;
    for _ in 0..5 {
        assert_eq!(ask(&app, "ada@example.org").await.status, 200);
    }
    mailed(&app, "ada@example.org", 3).await;
}

#[tokio::test]
async fn two_tabs_using_one_link_at_once_set_one_password() {
    let app = with_ada().await;
    ask(&app, "ada@example.org").await;
    let link = mailed(&app, "ada@example.org", 1).await.remove(0);
    let (a, b) = tokio::join!(
        set(&app, &link, "first tab passphrase", "first tab passphrase"),
        set(
            &app,
            &link,
            "second tab passphrase",
            "second tab passphrase"
        ),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    // A tab that opened the form after the other set the password finds the link used.
    assert_eq!(statuses[0], 303);
    assert_eq!(statuses[1], 404);
    let first = signs_in(&app, "first tab passphrase").await;
    let second = signs_in(&app, "second tab passphrase").await;
    assert!(first ^ second, "exactly one password was set");
}

#[tokio::test]
async fn forms_without_the_csrf_token_change_nothing_and_the_sign_in_page_links_here() {
    let app = with_ada().await;
    let mut browser = Browser::new(&app);
    let forged = browser
        .post("/password/reset", &[("email", "ada@example.org")])
        .await;
    assert_eq!(forged.status, 403);
    assert!(links(&app, "ada@example.org").await.is_empty());
    let login = browser.get("/login").await;
    assert!(html(&login).contains("href=\"/password/reset\""));
    let done = browser.get("/login?reset=done").await;
    assert!(html(&done).contains("Your new password is set."));
}
