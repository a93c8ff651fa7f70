//! The authorize endpoint and its consent page: signing in on the way, allowing and
//! cancelling, refusals with and without redirect, `approval_prompt=auto`, PKCE, and the
//! pages' policies.

use poem::http::Method;
use sea_orm::{EntityTrait, PaginatorTrait};
use tessera::db::entities::{oauth_application, oauth_authorization};
use tessera::domain::oauth as domain_oauth;
use tessera_tests::{Reply, TestApp};

use crate::browser_support::{Browser, csrf_field, encode, html};
use crate::oauth::{REDIRECT, bearer, client, exchange};
use tessera_tests::{USER_PASSWORD as PASSWORD, user_of};

const EMAIL: &str = "ada@example.org";

/// The authorize URL for a client with these extra query pairs.
fn authorize_url(client_id: &str, extra: &[(&str, &str)]) -> String {
    let mut url = format!("/api/v1/oauth/authorize?client_id={}", encode(client_id));
    for (name, value) in extra {
        url.push_str(&format!("&{name}={}", encode(value)));
    }
    url
}

/// The usual request: code, read scope, the registered redirect URI, a state.
fn read_request(client_id: &str) -> String {
    authorize_url(
        client_id,
        &[
            ("response_type", "code"),
            ("scope", "read"),
            ("redirect_uri", REDIRECT),
            ("state", "st4te"),
        ],
    )
}

fn location(reply: &Reply) -> String {
    reply.header("location").unwrap_or_default().to_owned()
}

/// The query pairs of a redirect to the client.
fn answer(reply: &Reply) -> Vec<(String, String)> {
    assert_eq!(reply.status, 302, "{}", reply.body);
    let to = location(reply);
    let query = to
        .strip_prefix(&format!("{REDIRECT}?"))
        .unwrap_or_else(|| panic!("redirect to the client: {to}"));
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The hidden fields of the consent form, as the browser would send them back.
fn hidden_fields(page: &str) -> Vec<(String, String)> {
    page.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .filter_map(|rest| {
            let (name, rest) = rest.split_once('"')?;
            let value = rest.split("value=\"").nth(1)?.split('"').next()?;
            Some((name.to_owned(), unescape(value)))
        })
        .collect()
}

/// Text of an autoescaped page as the browser reads it.
fn unescape(text: &str) -> String {
    text.replace("&#x2f;", "/")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Posts the consent form of `page` with the button `button` and these organizers ticked.
async fn answer_consent(
    browser: &mut Browser<'_>,
    page: &Reply,
    button: &str,
    organizers: &[i64],
) -> Reply {
    let mut fields = hidden_fields(html(page));
    fields.push((button.to_owned(), "1".to_owned()));
    for id in organizers {
        fields.push(("organizers".to_owned(), id.to_string()));
    }
    let borrowed: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    browser.post("/api/v1/oauth/authorize", &borrowed).await
}

/// A server with the organizer `acme`, a user in its team, and a registered client.
async fn member_and_client() -> (TestApp, i64, (oauth_application::Model, String)) {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    user_of(&app, EMAIL, &[org]).await;
    let c = client(&app).await;
    (app, org, c)
}

/// A signed-in browser on the consent page of `url`.
async fn consent_page<'a>(app: &'a TestApp, url: &str) -> (Browser<'a>, Reply) {
    let mut browser = Browser::new(app);
    let signed_in = browser.sign_in(EMAIL, PASSWORD, url).await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.body);
    assert_eq!(location(&signed_in), url);
    let page = browser.get(url).await;
    (browser, page)
}

#[tokio::test]
async fn someone_not_signed_in_goes_to_sign_in_and_comes_back_to_the_consent_page() {
    let (app, org, c) = member_and_client().await;
    let url = read_request(&c.0.client_id);

    let mut browser = Browser::new(&app);
    let first = browser.get(&url).await;
    assert_eq!(first.status, 303);
    assert_eq!(location(&first), format!("/login?next={}", encode(&url)));

    let (_, page) = consent_page(&app, &url).await;
    assert_eq!(page.status, 200);
    let text = html(&page);
    assert!(
        text.contains("<strong class=\"application\">Client</strong>"),
        "{text}"
    );
    assert!(text.contains("Read the data of the organizers you choose."));
    assert!(!text.contains("Change the data"));
    assert!(text.contains(&format!("name=\"organizers\" value=\"{org}\"")));
    assert!(text.contains("name=\"allow\"") && text.contains("name=\"cancel\""));
    assert_eq!(page.header("cache-control"), Some("no-store"));
}

#[tokio::test]
async fn allowing_redirects_with_a_code_and_the_state_and_the_grant_covers_the_chosen_organizers() {
    let app = TestApp::spawn().await;
    let chosen = app.organizer("acme").await;
    let other = app.organizer("other").await;
    user_of(&app, EMAIL, &[chosen, other]).await;
    let c = client(&app).await;
    let (mut browser, page) = consent_page(&app, &read_request(&c.0.client_id)).await;
    assert!(html(&page).contains(&format!("value=\"{other}\"")));

    let allowed = answer(&answer_consent(&mut browser, &page, "allow", &[chosen]).await);
    assert_eq!(value(&allowed, "state"), Some("st4te"));
    let code = value(&allowed, "code").expect("code");

    let token = exchange(&app, &c, code, "").await;
    assert_eq!(token.status, 200, "{}", token.body);
    assert_eq!(token.body["scope"], "read");
    let access = token.body["access_token"].as_str().expect("token");
    let mine = bearer(
        &app,
        Method::GET,
        "/api/v1/organizers/acme/events/",
        access,
        None,
    )
    .await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    let theirs = bearer(
        &app,
        Method::GET,
        "/api/v1/organizers/other/events/",
        access,
        None,
    )
    .await;
    assert_eq!(theirs.status, 403);
    let write = bearer(
        &app,
        Method::POST,
        "/api/v1/organizers/acme/giftcards/",
        access,
        Some(serde_json::json!({"value": "5.00", "currency": "EUR"})),
    )
    .await;
    assert_eq!(write.status, 403, "a read grant cannot write");
}

#[tokio::test]
async fn cancelling_redirects_with_access_denied_and_the_state_and_grants_nothing() {
    let (app, org, c) = member_and_client().await;
    let (mut browser, page) = consent_page(&app, &read_request(&c.0.client_id)).await;

    let denied = answer(&answer_consent(&mut browser, &page, "cancel", &[org]).await);
    assert_eq!(value(&denied, "error"), Some("access_denied"));
    assert_eq!(value(&denied, "state"), Some("st4te"));
    assert_eq!(value(&denied, "code"), None);
    let grants = oauth_authorization::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(grants, 0);
}

#[tokio::test]
async fn an_unknown_client_or_an_unregistered_redirect_uri_gets_a_page_and_no_redirect() {
    let (app, _, c) = member_and_client().await;
    let unknown = authorize_url("nope", &[("response_type", "code"), ("state", "s")]);
    let elsewhere = authorize_url(
        &c.0.client_id,
        &[
            ("response_type", "code"),
            ("redirect_uri", "https://evil.example/callback"),
            ("state", "s"),
        ],
    );
    let no_client = "/api/v1/oauth/authorize?response_type=code".to_owned();

    let mut anonymous = Browser::new(&app);
    let mut signed_in = Browser::new(&app);
    signed_in.sign_in(EMAIL, PASSWORD, "/account").await;
    for url in [&unknown, &elsewhere, &no_client] {
        for browser in [&mut anonymous, &mut signed_in] {
            let reply = browser.get(url).await;
            assert_eq!(reply.status, 400, "{url}");
            assert_eq!(reply.header("location"), None);
            assert!(html(&reply).contains("Authorization failed"));
        }
    }
}

#[tokio::test]
async fn an_invalid_request_for_a_registered_client_is_a_page_and_never_a_redirect() {
    let app = TestApp::spawn().await;
    let c = client(&app).await;
    let mut browser = Browser::new(&app);
    for (extra, says) in [
        (vec![("state", "s1")], "names no response type"),
        (
            vec![("response_type", "token"), ("state", "s1")],
            "Only the response type",
        ),
        (
            vec![
                ("response_type", "code"),
                ("scope", "admin"),
                ("state", "s1"),
            ],
            "unknown scope",
        ),
        (
            vec![
                ("response_type", "code"),
                ("code_challenge", "x".repeat(43).as_str()),
                ("code_challenge_method", "plain"),
                ("state", "s1"),
            ],
            "PKCE challenge",
        ),
    ] {
        let reply = browser.get(&authorize_url(&c.0.client_id, &extra)).await;
        assert_eq!(reply.status, 400, "{extra:?}");
        assert_eq!(reply.header("location"), None, "{extra:?}");
        let page = unescape(html(&reply));
        assert!(page.contains("Authorization failed"), "{page}");
        assert!(page.contains(says), "{extra:?}: {page}");
        assert!(
            !page.contains(REDIRECT),
            "no link to the client either: {page}"
        );
    }
}

#[tokio::test]
async fn without_a_redirect_uri_the_first_registered_one_is_used() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    user_of(&app, EMAIL, &[org]).await;
    let uris = [
        REDIRECT.to_owned(),
        "https://client.example/second".to_owned(),
    ];
    let (registered, secret) = domain_oauth::create_application(&app.db, "Client", &uris, None)
        .await
        .expect("app");
    let url = authorize_url(
        &registered.client_id,
        &[("response_type", "code"), ("scope", "read")],
    );
    let (mut browser, page) = consent_page(&app, &url).await;
    assert!(unescape(html(&page)).contains(REDIRECT));

    let allowed = answer(&answer_consent(&mut browser, &page, "allow", &[org]).await);
    assert_eq!(value(&allowed, "state"), None, "no state was sent");
    let code = value(&allowed, "code").expect("code");
    let token = exchange(&app, &(registered, secret), code, "").await;
    assert_eq!(token.status, 200, "{}", token.body);
}

#[tokio::test]
async fn approval_prompt_auto_skips_the_page_only_for_a_profile_request_granted_before() {
    let (app, _, c) = member_and_client().await;
    let profile = |auto: bool| {
        let mut extra = vec![
            ("response_type", "code"),
            ("scope", "profile"),
            ("state", "p"),
        ];
        if auto {
            extra.push(("approval_prompt", "auto"));
        }
        authorize_url(&c.0.client_id, &extra)
    };

    let (mut browser, page) = consent_page(&app, &profile(true)).await;
    assert_eq!(page.status, 200, "never granted: the page is shown");
    assert!(
        !html(&page).contains("name=\"organizers\""),
        "profile asks for no organizer"
    );
    let first = answer(&answer_consent(&mut browser, &page, "allow", &[]).await);
    assert!(value(&first, "code").is_some());

    let again = browser.get(&profile(true)).await;
    let pairs = answer(&again);
    assert_eq!(value(&pairs, "state"), Some("p"));
    let code = value(&pairs, "code").expect("a code without the page");
    let token = exchange(&app, &c, code, "").await;
    assert_eq!(token.body["scope"], "profile");
    let access = token.body["access_token"].as_str().expect("token");
    let me = bearer(&app, Method::GET, "/api/v1/me", access, None).await;
    assert_eq!(me.body["email"], EMAIL);

    assert_eq!(
        browser.get(&profile(false)).await.status,
        200,
        "without auto"
    );
    let read_auto = authorize_url(
        &c.0.client_id,
        &[
            ("response_type", "code"),
            ("scope", "read"),
            ("approval_prompt", "auto"),
        ],
    );
    assert_eq!(
        browser.get(&read_auto).await.status,
        200,
        "auto is for profile only"
    );
}

#[tokio::test]
async fn the_consent_form_needs_its_csrf_token_and_an_organizer_the_user_may_grant() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let foreign = app.organizer("foreign").await;
    user_of(&app, EMAIL, &[org]).await;
    let c = client(&app).await;
    let (mut browser, page) = consent_page(&app, &read_request(&c.0.client_id)).await;

    let mut forged = hidden_fields(html(&page));
    forged.retain(|(k, _)| k != "csrfmiddlewaretoken");
    forged.push(("csrfmiddlewaretoken".into(), "x".repeat(64)));
    forged.push(("allow".into(), "1".into()));
    forged.push(("organizers".into(), org.to_string()));
    let borrowed: Vec<(&str, &str)> = forged
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        browser
            .post("/api/v1/oauth/authorize", &borrowed)
            .await
            .status,
        403
    );

    let none = answer_consent(&mut browser, &page, "allow", &[]).await;
    assert_eq!(none.status, 400);
    assert!(html(&none).contains("Choose at least one of the organizers listed."));
    assert_eq!(
        csrf_field(html(&none)),
        csrf_field(html(&page)),
        "the form is shown again"
    );
    let not_mine = answer_consent(&mut browser, &page, "allow", &[foreign]).await;
    assert_eq!(not_mine.status, 400);

    let mut stranger = Browser::new(&app);
    let anonymous = answer_consent(&mut stranger, &page, "allow", &[org]).await;
    assert_eq!(anonymous.status, 403, "no session, no answer");
    let grants = oauth_authorization::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(grants, 0, "nothing was granted");
}

#[tokio::test]
async fn a_code_issued_with_a_pkce_challenge_needs_its_verifier() {
    let (app, org, c) = member_and_client().await;
    let verifier = "dBjftJeZ4CVP-mJ0GM5QGOUH5tNh66QMGOfpl7cycQ8";
    let url = authorize_url(
        &c.0.client_id,
        &[
            ("response_type", "code"),
            ("scope", "read"),
            ("code_challenge", &domain_oauth::s256_challenge(verifier)),
            ("code_challenge_method", "S256"),
        ],
    );
    let (mut browser, page) = consent_page(&app, &url).await;
    let allowed = answer(&answer_consent(&mut browser, &page, "allow", &[org]).await);
    let code = value(&allowed, "code").expect("code");

    assert_eq!(
        exchange(&app, &c, code, "").await.status,
        400,
        "no verifier"
    );
    let with = exchange(&app, &c, code, &format!("&code_verifier={verifier}")).await;
    assert_eq!(
        with.status, 200,
        "a refused attempt does not use the code up"
    );
}

#[tokio::test]
async fn the_consent_page_and_the_sign_in_page_before_it_let_their_forms_lead_to_the_client() {
    let (app, _, c) = member_and_client().await;
    let url = read_request(&c.0.client_id);

    let mut browser = Browser::new(&app);
    let sign_in = browser.get(&format!("/login?next={}", encode(&url))).await;
    let policy = sign_in
        .header("content-security-policy")
        .unwrap_or_default();
    assert!(
        policy.contains("form-action 'self' https://client.example;"),
        "{policy}"
    );
    let plain = browser.get("/login").await;
    let policy = plain.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("form-action 'self';"), "{policy}");

    let (_, page) = consent_page(&app, &url).await;
    let policy = page.header("content-security-policy").unwrap_or_default();
    assert!(
        policy.contains("form-action 'self' https://client.example;"),
        "{policy}"
    );
    assert!(policy.contains("default-src 'none'"));
}

#[tokio::test]
async fn redirect_uris_with_characters_no_host_has_are_refused_at_registration() {
    let app = TestApp::spawn().await;
    for bad in [
        "https://client.example;script-src *",
        "https://user@client.example/cb",
        "https://client.example:99999/cb",
        "https://'self'/cb",
    ] {
        let made =
            domain_oauth::create_application(&app.db, "Client", &[bad.to_owned()], None).await;
        assert!(made.is_err(), "{bad}");
    }
    let stored = oauth_application::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn consent_given_twice_at_once_keeps_one_grant_and_both_codes_work() {
    let (app, org, c) = member_and_client().await;
    let (browser, page) = consent_page(&app, &read_request(&c.0.client_id)).await;

    let answers = futures::future::join_all((0..6).map(|_| {
        let mut same = browser.clone();
        let page = &page;
        async move { answer_consent(&mut same, page, "allow", &[org]).await }
    }))
    .await;
    for reply in &answers {
        let code = value(&answer(reply), "code").expect("code").to_owned();
        assert_eq!(exchange(&app, &c, &code, "").await.status, 200);
    }
    let grants = oauth_authorization::Entity::find()
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(grants, 1);
}
