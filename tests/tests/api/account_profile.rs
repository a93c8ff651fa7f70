//! The profile section of the account page: a person changes their name, and their
//! password (the current one checked; every other session signed out, this browser kept
//! signed in).

use tessera_tests::{TestApp, USER_PASSWORD as PASSWORD, user_of};

use crate::browser_support::{Browser, csrf_field, html};

const NEW: &str = "a brand new passphrase";

/// A browser signed in as Ada, and her account page's CSRF token.
async fn ada(app: &TestApp) -> (Browser<'_>, String) {
    let acme = app.organizer("acme").await;
    user_of(app, "ada@example.org", &[acme]).await;
    let mut browser = Browser::new(app);
    let reply = browser
        .sign_in("ada@example.org", PASSWORD, "/account")
        .await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    let page = browser.get("/account").await;
    assert_eq!(page.status, 200);
    let csrf = csrf_field(html(&page));
    (browser, csrf)
}

async fn change_password(
    browser: &mut Browser<'_>,
    csrf: &str,
    current: &str,
    new: &str,
    repeat: &str,
) -> tessera_tests::Reply {
    browser
        .post(
            "/account/password",
            &[
                ("csrfmiddlewaretoken", csrf),
                ("current", current),
                ("new", new),
                ("repeat", repeat),
            ],
        )
        .await
}

#[tokio::test]
async fn the_account_page_shows_the_profile_with_labelled_fields() {
    let app = TestApp::spawn().await;
    let (mut browser, _) = ada(&app).await;
    let page = browser.get("/account").await;
    let page = html(&page);
    assert!(page.contains("ada@example.org"));
    for id in [
        "profile-fullname",
        "password-current",
        "password-new",
        "password-repeat",
    ] {
        assert!(page.contains(&format!("<label for=\"{id}\">")), "{id}");
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
}

#[tokio::test]
async fn a_person_changes_their_name() {
    let app = TestApp::spawn().await;
    let (mut browser, csrf) = ada(&app).await;
    let saved = browser
        .post(
            "/account/profile",
            &[
                ("csrfmiddlewaretoken", &csrf),
                ("fullname", "  Augusta Ada King "),
            ],
        )
        .await;
    assert_eq!(saved.status, 303);
    let page = browser.get("/account").await;
    assert!(html(&page).contains("value=\"Augusta Ada King\""));

    let long = "x".repeat(256);
    let refused = browser
        .post(
            "/account/profile",
            &[("csrfmiddlewaretoken", &csrf), ("fullname", &long)],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(html(&refused).contains("no more than 255 characters"));
    let control = browser
        .post(
            "/account/profile",
            &[("csrfmiddlewaretoken", &csrf), ("fullname", "Ada\u{0}King")],
        )
        .await;
    assert_eq!(control.status, 400);
    assert!(html(&control).contains("without control characters"));
    let page = browser.get("/account").await;
    assert!(
        html(&page).contains("value=\"Augusta Ada King\""),
        "unchanged"
    );
}

#[tokio::test]
async fn a_new_password_needs_the_current_one_and_the_same_new_one_twice() {
    let app = TestApp::spawn().await;
    let (mut browser, csrf) = ada(&app).await;
    for (current, new, repeat, says) in [
        (
            "wrong password!",
            NEW,
            NEW,
            "Your current password is wrong.",
        ),
        (
            PASSWORD,
            NEW,
            "another new passphrase",
            "The two new passwords differ.",
        ),
        (PASSWORD, "short", "short", "between 8 and 1024 characters"),
    ] {
        let reply = change_password(&mut browser, &csrf, current, new, repeat).await;
        assert_eq!(reply.status, 400, "{says}");
        assert!(html(&reply).contains(says), "{says}");
    }
    let mut again = Browser::new(&app);
    let signed_in = again.sign_in("ada@example.org", PASSWORD, "/account").await;
    assert_eq!(signed_in.status, 303, "the password is unchanged");
    let forged = change_password(&mut browser, "forged", PASSWORD, NEW, NEW).await;
    assert_eq!(forged.status, 403, "the CSRF token is checked");
}

#[tokio::test]
async fn a_new_password_signs_out_every_other_session_and_keeps_this_one() {
    let app = TestApp::spawn().await;
    let (mut browser, csrf) = ada(&app).await;
    let mut elsewhere = Browser::new(&app);
    let other = elsewhere
        .sign_in("ada@example.org", PASSWORD, "/account")
        .await;
    assert_eq!(other.status, 303);

    let changed = change_password(&mut browser, &csrf, PASSWORD, NEW, NEW).await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    let page = browser.get("/account?changed=password").await;
    assert_eq!(page.status, 200, "this browser stays signed in");
    assert!(html(&page).contains("Your password was changed."));
    let gone = elsewhere.get("/account").await;
    assert_eq!(gone.status, 303, "the other session ended");

    let mut old = Browser::new(&app);
    let refused = old.sign_in("ada@example.org", PASSWORD, "/account").await;
    assert_eq!(refused.status, 200, "the old password is refused");
    assert!(html(&refused).contains("Email or password is wrong."));
    let mut new = Browser::new(&app);
    let accepted = new.sign_in("ada@example.org", NEW, "/account").await;
    assert_eq!(accepted.status, 303, "the new one works");
}
