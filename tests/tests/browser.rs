//! End to end in a real browser: a person authorizes an OAuth application in headless
//! Chromium, driven over WebDriver by `chromedriver`, against Tessera served over TCP.
//!
//! Chromium and chromedriver are Debian's `chromium` and `chromium-driver`, installed (pinned)
//! by `.ci/setup`. Without them the test is skipped, unless `TESSERA_BROWSER_TESTS=required`
//! (as `.ci/run` sets), where it fails.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tempfile::TempDir;
use tessera::domain::oauth;
use tessera_tests::TestApp;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The longest any one step (a page, the driver's start, the callback) may take.
const WAIT: Duration = Duration::from_secs(20);

const EMAIL: &str = "ada@example.org";
const PASSWORD: &str = tessera_tests::USER_PASSWORD;

/// Whether the browser test can run here. Missing Chromium or chromedriver is a failure when
/// `TESSERA_BROWSER_TESTS=required` and otherwise a skip, said in one line; with
/// `TESSERA_BROWSER_TESTS=skip` (`.ci/run` runs it on one database) it is skipped.
fn browser_available(test: &str) -> bool {
    if std::env::var("TESSERA_BROWSER_TESTS").is_ok_and(|v| v == "skip") {
        println!("skipped {test}: TESSERA_BROWSER_TESTS=skip");
        return false;
    }
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let required = std::env::var("TESSERA_BROWSER_TESTS").is_ok_and(|v| v == "required");
    assert!(
        !required,
        "{} missing and TESSERA_BROWSER_TESTS=required: run .ci/setup to install chromium and chromium-driver",
        missing.join(" and ")
    );
    println!(
        "skipped {test}: {} missing (run .ci/setup to install chromium and chromium-driver)",
        missing.join(" and ")
    );
    false
}

/// A running chromedriver with its browser profile; killed (with the browser it started) when
/// dropped, also when the test fails.
struct Driver {
    child: Child,
    url: String,
    profile: TempDir,
}

impl Driver {
    /// Starts chromedriver on a free loopback port and waits until it listens.
    async fn start() -> Self {
        let mut child = Command::new(CHROMEDRIVER)
            .arg("--port=0")
            // Its own process group, so that dropping the guard can end the browser too.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(WAIT, async {
            while let Some(line) = lines.next_line().await.expect("chromedriver output") {
                // "ChromeDriver was started successfully on port 41235."
                if let Some(rest) = line.split("started successfully on port ").nth(1) {
                    return rest.trim_end_matches('.').parse::<u16>().ok();
                }
            }
            None
        })
        .await
        .expect("chromedriver did not start in time")
        .expect("chromedriver's port");
        // Keep reading what it prints, so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            profile: tempfile::tempdir().expect("profile dir"),
        }
    }

    /// A new headless Chromium session with a fresh profile.
    async fn browser(&self) -> Client {
        let user_data_dir = format!("--user-data-dir={}", self.profile.path().display());
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-dev-shm-usage",
                    user_data_dir,
                ],
            },
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!("an object")
        };
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a Chromium session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // The whole group: chromedriver and the browser processes it started.
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.start_kill();
    }
}

/// A small web server of the OAuth client on 127.0.0.1 (another origin than Tessera): answers
/// every GET with a tiny page and sends the request's path and query over the channel.
async fn callback_server() -> (u16, mpsc::UnboundedReceiver<String>) {
    page_server(
        "<!doctype html><html><head><title>Client</title></head>\
         <body><p id=\"callback\">callback received</p></body></html>"
            .to_owned(),
    )
    .await
}

/// A small web server of another site: answers every GET with `page` and sends the
/// request's path and query over the channel.
async fn page_server(page: String) -> (u16, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let (tx, rx) = mpsc::unbounded_channel();
    let page = std::sync::Arc::new(page);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            let page = page.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let mut first = head.lines().next().unwrap_or_default().split(' ');
                if let (Some("GET"), Some(target)) = (first.next(), first.next()) {
                    let _ = tx.send(target.to_owned());
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (port, rx)
}

fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The value of a query parameter of a URL or a path with a query.
fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Waits for the element a page is known by, so that the browser has got there.
async fn wait_for(browser: &Client, css: &str) -> Element {
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css} within {WAIT:?}: {e}"))
}

async fn text_of(browser: &Client, css: &str) -> String {
    browser
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
        .text()
        .await
        .expect("text")
}

/// On the sign-in page: types the email and password and submits.
async fn sign_in(browser: &Client) {
    wait_for(browser, "#email")
        .await
        .send_keys(EMAIL)
        .await
        .expect("type the email");
    browser
        .find(Locator::Css("#password"))
        .await
        .expect("password field")
        .send_keys(PASSWORD)
        .await
        .expect("type the password");
    browser
        .find(Locator::Css("button[type=submit]"))
        .await
        .expect("submit button")
        .click()
        .await
        .expect("submit");
}

#[tokio::test]
async fn a_person_authorizes_an_application_in_a_real_browser_and_the_application_calls_the_api() {
    let test =
        "a_person_authorizes_an_application_in_a_real_browser_and_the_application_calls_the_api";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn().await;
    let tessera = app.serve().await;
    let acme = app.organizer("acme").await;
    let globex = app.organizer("globex").await;
    tessera_tests::user_of(&app, EMAIL, &[acme, globex]).await;
    let (callback_port, mut callbacks) = callback_server().await;
    let redirect_uri = format!("http://127.0.0.1:{callback_port}/callback");
    let (application, secret) = oauth::create_application(
        &app.db,
        "Box Office Sync",
        std::slice::from_ref(&redirect_uri),
        None,
    )
    .await
    .expect("application");
    let driver = Driver::start().await;
    let browser = driver.browser().await;

    // The application sends the person to Tessera, who is not signed in there yet.
    let authorize_path = format!(
        "/api/v1/oauth/authorize?response_type=code&client_id={}&scope=read&redirect_uri={}&state=xyz123",
        encode(&application.client_id),
        encode(&redirect_uri)
    );
    browser
        .goto(&format!("{tessera}{authorize_path}"))
        .await
        .expect("open the authorize URL");
    wait_for(&browser, "#email").await;
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.path(), "/login", "{url}");
    assert_eq!(
        query_param(url.as_str(), "next").as_deref(),
        Some(authorize_path.as_str())
    );

    // Signing in leads back to the authorization request: the consent page.
    sign_in(&browser).await;
    let allow = wait_for(&browser, "button[name=allow]").await;
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.path(), "/api/v1/oauth/authorize", "{url}");
    assert_eq!(
        query_param(url.as_str(), "state").as_deref(),
        Some("xyz123")
    );
    let page = text_of(&browser, "body").await;
    assert!(page.contains("Box Office Sync"), "{page}");
    assert!(page.contains("Read the data of the organizers"), "{page}");
    assert!(!page.contains("Change the data"), "{page}");

    // Grant acme only.
    for (organizer, wanted) in [(acme, true), (globex, false)] {
        let checkbox = browser
            .find(Locator::Css(&format!(
                "input[type=checkbox][name=organizers][value=\"{organizer}\"]"
            )))
            .await
            .unwrap_or_else(|e| panic!("a checkbox for organizer {organizer}: {e}"));
        if checkbox.is_selected().await.expect("checked") != wanted {
            checkbox.click().await.expect("tick");
        }
        assert_eq!(checkbox.is_selected().await.expect("checked"), wanted);
    }
    allow.click().await.expect("allow");

    // The browser follows the redirect to the application's own server.
    wait_for(&browser, "#callback").await;
    assert_eq!(text_of(&browser, "#callback").await, "callback received");
    let target = tokio::time::timeout(WAIT, async {
        loop {
            let target = callbacks.recv().await.expect("callback server");
            if target.starts_with("/callback") {
                return target;
            }
        }
    })
    .await
    .expect("the callback within the time");
    assert_eq!(
        query_param(&target, "state").as_deref(),
        Some("xyz123"),
        "{target}"
    );
    assert_eq!(query_param(&target, "error"), None, "{target}");
    let code = query_param(&target, "code").expect("a code");
    assert!(!code.is_empty());
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.port(), Some(callback_port), "{url}");
    browser.close().await.expect("close the browser");
    drop(driver);

    // The application, outside the browser, exchanges the code for tokens.
    let http = reqwest::Client::new();
    let response = http
        .post(format!("{tessera}/api/v1/oauth/token"))
        .basic_auth(&application.client_id, Some(&secret))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=authorization_code&code={}&redirect_uri={}",
            encode(&code),
            encode(&redirect_uri)
        ))
        .send()
        .await
        .expect("token request");
    let status = response.status();
    let body = response.text().await.expect("token answer");
    assert_eq!(status, 200, "{body}");
    let tokens: Value = serde_json::from_str(&body).expect("token JSON");
    assert_eq!(tokens["token_type"], "Bearer", "{tokens}");
    assert_eq!(tokens["scope"], "read", "{tokens}");
    let access = tokens["access_token"].as_str().expect("access token");

    // Its first API calls act for the person, on the organizer granted only.
    let call = |path: &str| {
        http.get(format!("{tessera}{path}"))
            .bearer_auth(access)
            .send()
    };
    let me = call("/api/v1/me").await.expect("/me");
    assert_eq!(me.status(), 200);
    let me: Value = me.json().await.expect("JSON");
    assert_eq!(me["email"], EMAIL, "{me}");
    let organizers = call("/api/v1/organizers/").await.expect("/organizers/");
    assert_eq!(organizers.status(), 200);
    let organizers: Value = organizers.json().await.expect("JSON");
    assert_eq!(organizers["count"], 1, "{organizers}");
    assert_eq!(organizers["results"][0]["slug"], "acme", "{organizers}");
}

/// Saves a screenshot of the page as `<name>.png` in `TESSERA_SCREENSHOT_DIR`, when set (to
/// look at the pages as a browser draws them).
async fn screenshot(browser: &Client, name: &str) {
    let Ok(dir) = std::env::var("TESSERA_SCREENSHOT_DIR") else {
        return;
    };
    let png = browser.screenshot().await.expect("screenshot");
    std::fs::write(Path::new(&dir).join(format!("{name}.png")), png).expect("write screenshot");
}

#[tokio::test]
async fn an_invited_person_creates_an_account_in_a_real_browser_and_joins_the_team() {
    let test = "an_invited_person_creates_an_account_in_a_real_browser_and_joins_the_team";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn().await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let team = app
        .post(
            "/api/v1/organizers/acme/teams/",
            &admin,
            json!({"name": "Box office", "all_events": true, "can_view_orders": true}),
        )
        .await;
    let invites = format!("/api/v1/organizers/acme/teams/{}/invites/", team.body["id"]);
    let r = app
        .post(&invites, &admin, json!({"email": "grace@example.org"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let mail = tessera_tests::outbox(&app.db)
        .await
        .pop()
        .expect("the invitation");
    let link = mail
        .body_text
        .split_whitespace()
        .find(|w| w.contains("/invite/"))
        .expect("a link");
    let path = &link[link.find("/invite/").expect("path")..];

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .set_window_size(390, 844)
        .await
        .expect("a phone-sized window");
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the invitation");
    wait_for(&browser, "#fullname").await;
    let page = text_of(&browser, "body").await;
    assert!(page.contains("Box office"), "{page}");
    screenshot(&browser, "invite").await;
    browser
        .set_window_size(1280, 900)
        .await
        .expect("a desktop-sized window");
    screenshot(&browser, "invite-desktop").await;
    for (field, value) in [
        ("#fullname", "Grace Hopper"),
        ("#password", PASSWORD),
        ("#password_repeat", PASSWORD),
    ] {
        browser
            .find(Locator::Css(field))
            .await
            .expect(field)
            .send_keys(value)
            .await
            .expect("type");
    }
    browser
        .find(Locator::Css("button[name=register]"))
        .await
        .expect("the button")
        .click()
        .await
        .expect("submit");
    wait_for(&browser, ".email").await;
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.path(), "/account", "{url}");
    assert_eq!(
        text_of(&browser, "#profile .email").await,
        "grace@example.org"
    );
    screenshot(&browser, "invite-accepted").await;
    browser.close().await.expect("close the browser");
    drop(driver);

    let members = app
        .get(
            &format!("/api/v1/organizers/acme/teams/{}/members/", team.body["id"]),
            &admin,
        )
        .await;
    assert_eq!(members.body["results"][0]["email"], "grace@example.org");
}

/// Saves a screenshot of the element `css` alone, as [`screenshot`] does of the page.
async fn screenshot_of(browser: &Client, css: &str, name: &str) {
    let Ok(dir) = std::env::var("TESSERA_SCREENSHOT_DIR") else {
        return;
    };
    let png = wait_for(browser, css)
        .await
        .screenshot()
        .await
        .expect("screenshot");
    std::fs::write(Path::new(&dir).join(format!("{name}.png")), png).expect("write screenshot");
}

/// Types `text` into the field `css`, replacing what it held.
async fn type_into(browser: &Client, css: &str, text: &str) {
    let field = wait_for(browser, css).await;
    field.clear().await.expect("clear the field");
    field.send_keys(text).await.expect("type");
}

/// Clicks the submit button `button` and waits for the page known by `then`.
async fn submit(browser: &Client, button: &str, then: &str) -> Element {
    browser
        .find(Locator::Css(button))
        .await
        .expect("submit button")
        .click()
        .await
        .expect("submit");
    wait_for(browser, then).await
}

/// Screenshots of the page at a phone's width and at a desktop's, named `<name>` and
/// `<name>-desktop`.
async fn screenshots(browser: &Client, name: &str) {
    browser
        .set_window_size(390, 844)
        .await
        .expect("a phone-sized window");
    screenshot(browser, name).await;
    browser
        .set_window_size(1280, 900)
        .await
        .expect("a desktop-sized window");
    screenshot(browser, &format!("{name}-desktop")).await;
}

#[tokio::test]
async fn a_person_resets_a_forgotten_password_in_a_real_browser_and_the_old_one_stops_working() {
    let test =
        "a_person_resets_a_forgotten_password_in_a_real_browser_and_the_old_one_stops_working";
    if !browser_available(test) {
        return;
    }
    const NEW: &str = "a brand new passphrase";
    const ONLY: &str = "main button[type=submit]";
    let app = TestApp::spawn().await;
    let tessera = app.serve().await;
    let acme = app.organizer("acme").await;
    tessera_tests::user_of(&app, EMAIL, &[acme]).await;

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("{tessera}/login"))
        .await
        .expect("open the sign-in page");
    wait_for(&browser, "#email").await;
    browser
        .find(Locator::LinkText("Forgot your password?"))
        .await
        .expect("the link")
        .click()
        .await
        .expect("follow it");
    type_into(&browser, "#reset-email", EMAIL).await;
    screenshots(&browser, "reset-request").await;
    let sent = submit(&browser, ONLY, ".notice").await;
    assert!(sent.text().await.expect("text").contains(EMAIL));

    // The page answers before the link is made (a known address takes no longer).
    let mut mail = None;
    for _ in 0..500 {
        mail = tessera_tests::outbox(&app.db)
            .await
            .into_iter()
            .rfind(|m| m.to_address == EMAIL);
        if mail.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mail = mail.expect("the reset mail");
    let link = mail
        .body_text
        .split_whitespace()
        .find(|w| w.contains("/password/reset/"))
        .expect("a link");
    let path = &link[link.find("/password/reset/").expect("path")..];
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the link");
    type_into(&browser, "#reset-new", NEW).await;
    type_into(&browser, "#reset-repeat", NEW).await;
    screenshots(&browser, "reset-form").await;
    let notice = submit(&browser, ONLY, ".notice").await;
    assert!(notice.text().await.expect("text").contains("new password"));
    assert_eq!(browser.current_url().await.expect("url").path(), "/login");

    type_into(&browser, "#email", EMAIL).await;
    type_into(&browser, "#password", PASSWORD).await;
    let refused = submit(&browser, ONLY, ".error").await;
    assert!(!refused.text().await.expect("text").is_empty());
    assert_eq!(browser.current_url().await.expect("url").path(), "/login");

    type_into(&browser, "#email", EMAIL).await;
    type_into(&browser, "#password", NEW).await;
    submit(&browser, ONLY, "#profile .email").await;
    assert_eq!(browser.current_url().await.expect("url").path(), "/account");
    screenshots(&browser, "account").await;
    type_into(&browser, "#team-token-name", "Box office sync").await;
    screenshot_of(&browser, "#team-tokens", "team-tokens-desktop").await;
    let make = "form[action$='#new-team-token'] button";
    let token = submit(&browser, make, "code.team-token").await;
    let token = token.text().await.expect("the token");
    let events = app.get("/api/v1/organizers/acme/events/", &token).await;
    assert_eq!(events.status, 200, "the token made in the browser works");
    screenshots(&browser, "team-token-made").await;
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the used link");
    let page = text_of(&browser, "body").await;
    assert!(page.contains("not valid"), "a link works once: {page}");
    browser.close().await.expect("close the browser");
}

#[tokio::test]
async fn a_buyer_sees_the_download_buttons_of_their_pdf_tickets_on_the_order_page() {
    let test = "a_buyer_sees_the_download_buttons_of_their_pdf_tickets_on_the_order_page";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn_app(
        |_| {},
        |a| a.plugin(tessera_plugin_ticketoutputpdf::PdfTickets),
    )
    .await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let made = app
        .post(
            &format!("{event}/"),
            &token,
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z",
                   "plugins": ["pretix.plugins.ticketoutputpdf"]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let item = app
        .post(
            &format!("{event}/conf/items/"),
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true}),
        )
        .await;
    let quota = json!({"name": "Hall", "size": null, "items": [item.body["id"]]});
    app.post(&format!("{event}/conf/quotas/"), &token, quota)
        .await;
    app.patch(
        &format!("{event}/conf/settings/"),
        &token,
        json!({"ticket_download": true}),
    )
    .await;
    let order = app
        .post(
            &format!("{event}/conf/orders/"),
            &token,
            json!({"email": "ada@example.org", "status": "p", "positions": [
                {"item": item.body["id"], "attendee_name_parts": {"full_name": "Ada Lovelace"}}]}),
        )
        .await;
    assert_eq!(order.status, 201, "{}", order.body);
    let page = order.body["url"]
        .as_str()
        .expect("url")
        .replace("http://tessera.test", &tessera);

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser.goto(&page).await.expect("open the order page");
    let button = wait_for(&browser, ".downloads a.button").await;
    assert_eq!(
        button.text().await.expect("text"),
        "Download all tickets (PDF)"
    );
    let href = button.attr("href").await.expect("href").expect("a link");
    assert!(href.ends_with("/download/pdf"), "{href}");
    let one = wait_for(&browser, ".ticket a.button").await;
    assert_eq!(one.text().await.expect("text"), "Download PDF");
    screenshots(&browser, "order-downloads").await;
}

/// Types a card into the Stripe.js stand-in's fields (localstripe's: plain inputs known by
/// their placeholders) and pays.
async fn pay_by_card(browser: &Client, number: &str) {
    for (field, text) in [
        ("number", number),
        ("exp_month", "12"),
        ("exp_year", "30"),
        ("cvc", "123"),
        ("postal_code", "10115"),
    ] {
        let css = format!("#stripe-card input[placeholder={field}]");
        wait_for(browser, &css)
            .await
            .send_keys(text)
            .await
            .expect("type");
    }
    browser
        .find(Locator::Css("#stripe-pay"))
        .await
        .expect("the pay button")
        .click()
        .await
        .expect("pay");
}

#[tokio::test]
async fn a_buyer_pays_by_card_in_a_real_browser_and_stripes_notice_and_refund_follow() {
    let test = "a_buyer_pays_by_card_in_a_real_browser_and_stripes_notice_and_refund_follow";
    if !browser_available(test) {
        return;
    }
    let Some(stripe) = tessera_tests::stripe::LocalStripe::start(test).await else {
        return;
    };
    let app = tessera_tests::stripe::stripe_app(&stripe.base).await;
    let tessera = app.serve().await;
    stripe
        .send_webhooks_to(&format!("{tessera}/_stripe/webhook/"))
        .await;
    let token = tessera_tests::stripe::card_event(&app).await;
    let order = |code: String| {
        let (app, token) = (&app, &token);
        async move { tessera_tests::stripe::order(app, token, &code).await }
    };

    let driver = Driver::start().await;
    let browser = driver.browser().await;

    // A declined card: the page says so, and the order waits for another card.
    let (declined, path) = tessera_tests::stripe::card_order(&app, &token).await;
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the payment page");
    pay_by_card(&browser, "4000000000000341").await;
    let said = wait_for(&browser, "#payment-message").await;
    assert!(said.text().await.expect("text").contains("declined"));
    screenshots(&browser, "payment-declined").await;
    assert_eq!(order(declined.clone()).await["status"], "n");

    // A good card pays the order; the order page says so.
    let (code, path) = tessera_tests::stripe::card_order(&app, &token).await;
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the payment page");
    wait_for(&browser, "#stripe-card input").await;
    screenshots(&browser, "payment-card").await;
    pay_by_card(&browser, "4242424242424242").await;
    wait_for(&browser, ".status").await;
    assert_eq!(text_of(&browser, ".status").await, "Paid");
    assert_eq!(order(code.clone()).await["status"], "p");

    // A card that asks the bank: Stripe.js shows the bank's question, and Stripe's signed
    // notice pays the order.
    let (asked, path) = tessera_tests::stripe::card_order(&app, &token).await;
    browser
        .goto(&format!("{tessera}{path}"))
        .await
        .expect("open the payment page");
    pay_by_card(&browser, "4000002500003155").await;
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::XPath("//button[text()='Complete authentication']"))
        .await
        .expect("the bank's question")
        .click()
        .await
        .expect("answer it");
    wait_for(&browser, ".status").await;
    let mut paid = false;
    for _ in 0..100 {
        if order(asked.clone()).await["status"] == "p" {
            paid = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(paid, "the order asked of the bank is paid");

    // A refund through the API reaches Stripe, and the order shows it.
    let paid = order(code.clone()).await;
    let intent = paid["payments"][0]["details"]["id"]
        .as_str()
        .expect("intent")
        .to_owned();
    let r = app
        .post(
            &format!("/api/v1/organizers/shop/events/conf/orders/{code}/payments/1/refund/"),
            &token,
            json!({"amount": "23.00"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(stripe.refunds(&intent).await.len(), 1);
    let refunded = order(code.clone()).await;
    assert_eq!(refunded["payments"][0]["state"], "refunded");
    assert_eq!(refunded["refunds"][0]["amount"], "23.00");

    // A forged notice is refused.
    let forged = reqwest::Client::new()
        .post(format!("{tessera}/_stripe/webhook/"))
        .header("Stripe-Signature", "t=1,v1=00")
        .body(
            json!({"id": "evt_forged", "type": "payment_intent.succeeded",
                   "data": {"object": {"object": "payment_intent", "id": "pi_x", "status": "succeeded",
                   "metadata": {"organizer": "shop", "event": "conf", "order": declined, "payment": "1"}}}})
            .to_string(),
        )
        .send()
        .await
        .expect("post");
    assert_eq!(forged.status().as_u16(), 400);
    assert_eq!(order(declined).await["status"], "n");
}

#[tokio::test]
async fn a_buyer_buys_two_tickets_with_an_add_on_a_voucher_and_an_answer_in_a_real_browser_and_sees_them_paid_after_the_bank_import()
 {
    let test = "a_buyer_buys_two_tickets_with_an_add_on_a_voucher_and_an_answer_in_a_real_browser_and_sees_them_paid_after_the_bank_import";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn_app(
        |_| {},
        |a| {
            a.plugin(tessera_plugin_presale::Presale::default())
                .plugin(tessera_plugin_banktransfer::BankTransfer)
        },
    )
    .await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let made = app
        .post(
            &format!("{event}/"),
            &token,
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z", "location": {"en": "Berlin"},
                   "plugins": ["banktransfer"]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let item = app
        .post(
            &format!("{event}/conf/items/"),
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true,
                   "description": {"en": "Two days of **talks**."}}),
        )
        .await;
    let ticket = item.body["id"].as_i64().expect("ticket");
    let workshops = app
        .post(
            &format!("{event}/conf/categories/"),
            &token,
            json!({"name": {"en": "Workshops"}, "is_addon": true}),
        )
        .await;
    let workshops = workshops.body["id"].as_i64().expect("category");
    let workshop = app
        .post(
            &format!("{event}/conf/items/"),
            &token,
            json!({"name": {"en": "Rust workshop"}, "default_price": "10.00",
                   "category": workshops, "admission": false}),
        )
        .await;
    let workshop = workshop.body["id"].as_i64().expect("workshop");
    app.post(
        &format!("{event}/conf/quotas/"),
        &token,
        json!({"name": "Hall", "size": 100, "items": [ticket, workshop]}),
    )
    .await;
    let rule = app
        .post(
            &format!("{event}/conf/items/{ticket}/addons/"),
            &token,
            json!({"addon_category": workshops, "min_count": 0, "max_count": 1}),
        )
        .await;
    assert_eq!(rule.status, 201, "{}", rule.body);
    let question = app
        .post(
            &format!("{event}/conf/questions/"),
            &token,
            json!({"question": {"en": "Lunch"}, "type": "C", "required": true, "items": [ticket],
                   "options": [{"answer": {"en": "Vegetarian"}}, {"answer": {"en": "Vegan"}}]}),
        )
        .await;
    assert_eq!(question.status, 201, "{}", question.body);
    let voucher = app
        .post(
            &format!("{event}/conf/vouchers/"),
            &token,
            json!({"code": "SPEAKER", "max_usages": 2, "price_mode": "subtract", "value": "3.00"}),
        )
        .await;
    assert_eq!(voucher.status, 201, "{}", voucher.body);
    let settings = app
        .patch(
            &format!("{event}/conf/settings/"),
            &token,
            json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00",
                   "attendee_names_asked": true, "attendee_names_required": true,
                   "invoice_address_asked": false}),
        )
        .await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    let live = app
        .patch(&format!("{event}/conf/"), &token, json!({"live": true}))
        .await;
    assert_eq!(live.status, 200, "{}", live.body);

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("{tessera}/acme/conf/redeem?voucher=SPEAKER"))
        .await
        .expect("redeem the voucher");
    wait_for(&browser, ".notice").await;
    assert!(text_of(&browser, "main").await.contains("EUR 20.00"));
    screenshots(&browser, "shop-event").await;
    type_into(&browser, &format!("input[name=item_{ticket}]"), "2").await;
    submit(&browser, ".submit-row button", "#cart").await;
    assert!(
        text_of(&browser, "#cart")
            .await
            .contains("Total: EUR 40.00")
    );
    screenshots(&browser, "shop-cart").await;

    browser
        .find(Locator::Css("#cart a.button"))
        .await
        .expect("checkout link")
        .click()
        .await
        .expect("to the checkout");
    let first = wait_for(&browser, "input[name^=cp_]").await;
    assert!(text_of(&browser, "main").await.contains("Rust workshop"));
    first.clear().await.expect("clear");
    first.send_keys("1").await.expect("one workshop");
    screenshots(&browser, "shop-addons").await;
    submit(&browser, "form button[type=submit]", "#email").await;
    type_into(&browser, "#email", EMAIL).await;
    type_into(&browser, "#email_repeat", EMAIL).await;
    let names = browser
        .find_all(Locator::Css("input[id$='-name'][required]"))
        .await
        .expect("name fields");
    assert_eq!(names.len(), 2);
    for (field, name) in names.iter().zip(["Ada Lovelace", "Charles Babbage"]) {
        field.send_keys(name).await.expect("a name");
    }
    for radio in browser
        .find_all(Locator::Css("input[type=radio][value]"))
        .await
        .expect("options")
        .iter()
        .step_by(2)
    {
        radio.click().await.expect("an answer");
    }
    screenshots(&browser, "shop-questions").await;
    submit(&browser, "form button[type=submit]", "input[name=payment]").await;
    screenshots(&browser, "shop-payment").await;
    submit(&browser, "form button[type=submit]", "input[name=confirm]").await;
    assert!(text_of(&browser, "main").await.contains("EUR 50.00"));
    screenshots(&browser, "shop-confirm").await;
    submit(&browser, "form button[type=submit]", ".status").await;
    assert_eq!(text_of(&browser, ".status").await, "Pending payment");
    let url = browser.current_url().await.expect("the order page");
    let code = url
        .path()
        .split('/')
        .nth(4)
        .expect("the order's code")
        .to_owned();

    let order = app
        .get(&format!("{event}/conf/orders/{code}/"), &token)
        .await;
    assert_eq!(order.body["total"], "50.00", "{}", order.body);
    assert_eq!(order.body["positions"][1]["item"], workshop);
    assert_eq!(
        order.body["positions"][1]["addon_to"],
        order.body["positions"][0]["id"]
    );
    assert_eq!(
        order.body["positions"][0]["answers"][0]["answer"],
        "Vegetarian"
    );
    assert_eq!(
        order.body["positions"][2]["attendee_name"],
        "Charles Babbage"
    );
    let import = app
        .post(
            "/api/v1/organizers/acme/bankimportjobs/",
            &token,
            json!({"event": null, "transactions": [{"amount": "50.00",
                   "reference": format!("Order {code}"), "payer": "Ada Lovelace",
                   "date": "2030-05-01"}]}),
        )
        .await;
    assert_eq!(import.status, 201, "{}", import.body);
    browser.refresh().await.expect("reload");
    wait_for(&browser, ".status").await;
    assert_eq!(text_of(&browser, ".status").await, "Paid");
    screenshots(&browser, "shop-paid").await;
}

#[tokio::test]
async fn a_cart_left_to_expire_in_a_real_browser_gives_its_tickets_back_to_the_next_buyer() {
    let test = "a_cart_left_to_expire_in_a_real_browser_gives_its_tickets_back_to_the_next_buyer";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn_app(
        |_| {},
        |a| a.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let made = app
        .post(
            &format!("{event}/"),
            &token,
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z"}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let item = app
        .post(
            &format!("{event}/conf/items/"),
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "0.00"}),
        )
        .await;
    let ticket = item.body["id"].as_i64().expect("ticket");
    app.post(
        &format!("{event}/conf/quotas/"),
        &token,
        json!({"name": "Hall", "size": 3, "items": [ticket]}),
    )
    .await;
    let live = app
        .patch(&format!("{event}/conf/"), &token, json!({"live": true}))
        .await;
    assert_eq!(live.status, 200, "{}", live.body);

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("{tessera}/acme/conf"))
        .await
        .expect("the event page");
    let field = format!("input[name=item_{ticket}]");
    type_into(&browser, &field, "3").await;
    submit(&browser, ".submit-row button", "#cart").await;
    // Another buyer: another browser, with a profile of its own.
    let second = Driver::start().await;
    let other = second.browser().await;
    other
        .goto(&format!("{tessera}/acme/conf"))
        .await
        .expect("the event page, for another buyer");
    wait_for(&other, ".stock").await;
    assert_eq!(text_of(&other, ".stock").await, "Reserved");
    screenshots(&other, "shop-reserved").await;

    // Time passes: the cart's reservation ends.
    app.expire_carts().await;
    other.refresh().await.expect("reload");
    let max = wait_for(&other, &field)
        .await
        .attr("max")
        .await
        .expect("max")
        .expect("a maximum");
    assert_eq!(max, "3", "the tickets are back");
    browser.refresh().await.expect("reload");
    wait_for(&browser, "h1").await;
    assert!(
        browser.find(Locator::Css("#cart")).await.is_err(),
        "the cart is gone"
    );
}

#[tokio::test]
async fn a_buyer_cancels_a_paid_order_in_a_real_browser_and_gets_the_rest_as_a_gift_card() {
    let test = "a_buyer_cancels_a_paid_order_in_a_real_browser_and_gets_the_rest_as_a_gift_card";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn_app(
        |_| {},
        |a| a.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let made = app
        .post(
            &format!("{event}/"),
            &token,
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z"}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let item = app
        .post(
            &format!("{event}/conf/items/"),
            &token,
            json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true}),
        )
        .await;
    let ticket = item.body["id"].as_i64().expect("ticket");
    let quota = app
        .post(
            &format!("{event}/conf/quotas/"),
            &token,
            json!({"name": "Hall", "size": 10, "items": [ticket]}),
        )
        .await;
    let settings = app
        .patch(
            &format!("{event}/conf/settings/"),
            &token,
            json!({"cancel_allow_user_paid": true, "cancel_allow_user_paid_keep": "5.00",
                   "cancel_allow_user_paid_refund_as_giftcard": "option"}),
        )
        .await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    let placed = app
        .post(
            &format!("{event}/conf/orders/"),
            &token,
            json!({"email": EMAIL, "payment_provider": "manual",
                   "positions": [{"item": ticket}, {"item": ticket}]}),
        )
        .await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let code = placed.body["code"].as_str().expect("code").to_owned();
    let paid = app
        .post(
            &format!("{event}/conf/orders/{code}/mark_paid/"),
            &token,
            json!({}),
        )
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let page = placed.body["url"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://tessera.test"))
        .expect("the order page")
        .to_owned();

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("{tessera}{page}"))
        .await
        .expect("the order page");
    assert_eq!(text_of(&browser, ".status").await, "Paid");
    screenshots(&browser, "self-service-order").await;
    browser
        .find(Locator::LinkText("Cancel order"))
        .await
        .expect("the cancel link")
        .click()
        .await
        .expect("to the cancel page");
    wait_for(&browser, "input[name=giftcard][value=true]")
        .await
        .click()
        .await
        .expect("a gift card");
    let terms = text_of(&browser, "main").await;
    assert!(
        terms.contains("A cancellation fee of 5.00 EUR is kept."),
        "{terms}"
    );
    assert!(terms.contains("You get 41.00 EUR back."), "{terms}");
    screenshots(&browser, "self-service-cancel").await;
    submit(&browser, "form button[type=submit]", ".notice").await;
    assert_eq!(text_of(&browser, ".status").await, "Canceled (paid fee)");
    screenshots(&browser, "self-service-canceled").await;
    let refunds = text_of(&browser, ".refunds").await;
    assert!(refunds.contains("41.00 EUR, Gift card"), "{refunds}");

    let order = app
        .get(&format!("{event}/conf/orders/{code}/"), &token)
        .await;
    assert_eq!(order.body["total"], "5.00", "{}", order.body);
    assert_eq!(order.body["refunds"][0]["provider"], "giftcard");
    assert_eq!(order.body["refunds"][0]["amount"], "41.00");
    let quota = quota.body["id"].as_i64().expect("quota");
    let left = app
        .get(
            &format!("{event}/conf/quotas/{quota}/availability/"),
            &token,
        )
        .await;
    assert_eq!(left.body["available_number"], 10, "{}", left.body);
}

#[tokio::test]
async fn a_buyer_sees_a_discount_struck_through_in_the_cart_and_pays_the_discounted_total() {
    let test = "a_buyer_sees_a_discount_struck_through_in_the_cart_and_pays_the_discounted_total";
    if !browser_available(test) {
        return;
    }
    let app = TestApp::spawn_app(
        |_| {},
        |a| {
            a.plugin(tessera_plugin_presale::Presale::default())
                .plugin(tessera_plugin_banktransfer::BankTransfer)
        },
    )
    .await;
    let tessera = app.serve().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let setup = [
        (
            format!("{event}/"),
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z", "plugins": ["banktransfer"]}),
        ),
        (
            format!("{event}/conf/items/"),
            json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true}),
        ),
        (
            format!("{event}/conf/discounts/"),
            json!({"internal_name": "Third free", "condition_min_count": 3,
                   "benefit_discount_matching_percent": "100.00",
                   "benefit_only_apply_to_cheapest_n_matches": 1}),
        ),
    ];
    for (path, body) in setup {
        let r = app.post(&path, &token, body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        if path.ends_with("/items/") {
            let quota = json!({"name": "Hall", "size": 10, "items": [r.body["id"]]});
            let q = app
                .post(&format!("{event}/conf/quotas/"), &token, quota)
                .await;
            assert_eq!(q.status, 201, "{}", q.body);
        }
    }
    let settings = json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00"});
    let r = app
        .patch(&format!("{event}/conf/settings/"), &token, settings)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(&format!("{event}/conf/"), &token, json!({"live": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("{tessera}/acme/conf/"))
        .await
        .expect("the event page");
    wait_for(&browser, "input[name^=item_]").await;
    type_into(&browser, "input[name^=item_]", "3").await;
    submit(&browser, ".submit-row button", "#cart").await;
    let cart = text_of(&browser, "#cart").await;
    assert!(cart.contains("Total: EUR 46.00"), "{cart}");
    let struck = text_of(&browser, "#cart del").await;
    assert_eq!(struck, "EUR 23.00");
    screenshots(&browser, "shop-discount-cart").await;
    browser
        .find(Locator::Css("#cart a.button"))
        .await
        .expect("checkout link")
        .click()
        .await
        .expect("to the checkout");
    wait_for(&browser, "#email").await;
    type_into(&browser, "#email", EMAIL).await;
    type_into(&browser, "#email_repeat", EMAIL).await;
    submit(&browser, "form button[type=submit]", "input[name=payment]").await;
    submit(&browser, "form button[type=submit]", "input[name=confirm]").await;
    assert!(text_of(&browser, "main").await.contains("EUR 46.00"));
    screenshots(&browser, "shop-discount-confirm").await;
    submit(&browser, "form button[type=submit]", ".status").await;
    let orders = app.get(&format!("{event}/conf/orders/"), &token).await;
    assert_eq!(
        orders.body["results"][0]["total"], "46.00",
        "{}",
        orders.body
    );
}

/// pretix's widget bundle as `.ci/setup` fetches it (`TESSERA_PRETIX_WIDGET` names another
/// copy); `None` (said) when it is missing and the browser tests are not required.
fn pretix_widget_bundle(test: &str) -> Option<String> {
    let path = std::env::var("TESSERA_PRETIX_WIDGET").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/pretix-widget/widget.js"),
        std::path::PathBuf::from,
    );
    match std::fs::read_to_string(&path) {
        Ok(bundle) => Some(bundle),
        Err(error) => {
            let required = std::env::var("TESSERA_BROWSER_TESTS").is_ok_and(|v| v == "required");
            assert!(
                !required,
                "pretix's widget bundle {} cannot be read ({error}) and TESSERA_BROWSER_TESTS=required: run .ci/setup",
                path.display()
            );
            println!(
                "skipped {test}: no pretix widget bundle at {} (run .ci/setup)",
                path.display()
            );
            None
        }
    }
}

#[tokio::test]
async fn pretix_widget_on_another_site_shows_the_products_and_its_buy_leads_through_the_checkout_in_its_frame()
 {
    let test = "pretix_widget_on_another_site_shows_the_products_and_its_buy_leads_through_the_checkout_in_its_frame";
    if !browser_available(test) {
        return;
    }
    let Some(bundle) = pretix_widget_bundle(test) else {
        return;
    };
    // The widget adopts the address the product list names, so it must be the served one.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let public = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("port").port()
    );
    let app = TestApp::spawn_app(
        {
            let public = public.clone();
            move |c| c.public_url = Some(public)
        },
        |a| {
            a.plugin(tessera_plugin_presale::Presale::with_widget_bundle(&bundle))
                .plugin(tessera_plugin_banktransfer::BankTransfer)
        },
    )
    .await;
    let tessera = app.serve_on(listener);
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let event = "/api/v1/organizers/acme/events";
    let made = app
        .post(
            &format!("{event}/"),
            &token,
            json!({"name": {"en": "Conference"}, "slug": "conf", "currency": "EUR",
                   "date_from": "2030-06-01T09:00:00Z", "plugins": ["banktransfer"]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let mut ids = Vec::new();
    for (name, price) in [("Ticket", "23.00"), ("Workshop day", "49.00")] {
        let item = app
            .post(
                &format!("{event}/conf/items/"),
                &token,
                json!({"name": {"en": name}, "default_price": price, "admission": true}),
            )
            .await;
        ids.push(item.body["id"].as_i64().expect("item"));
    }
    app.post(
        &format!("{event}/conf/quotas/"),
        &token,
        json!({"name": "Hall", "size": 50, "items": ids}),
    )
    .await;
    let settings = app
        .patch(
            &format!("{event}/conf/settings/"),
            &token,
            json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00"}),
        )
        .await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    let live = app
        .patch(&format!("{event}/conf/"), &token, json!({"live": true}))
        .await;
    assert_eq!(live.status, 200, "{}", live.body);

    // pretix's embedding code on another site (`localhost` is another site than
    // `127.0.0.1`, so the frame gets no cookie of Tessera's). `skip-ssl-check` lets the
    // widget use its frame over plain HTTP, as it does on every https site.
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Our conference</title>\
         <link rel=\"stylesheet\" type=\"text/css\" href=\"{tessera}/acme/conf/widget/v2.css\">\
         <script type=\"text/javascript\" src=\"{tessera}/widget/v2.en.js\" async></script>\
         </head><body><h1>Tickets</h1>\
         <pretix-widget event=\"{tessera}/acme/conf/\" skip-ssl-check></pretix-widget>\
         </body></html>"
    );
    let (port, _) = page_server(page).await;
    let driver = Driver::start().await;
    let browser = driver.browser().await;
    browser
        .goto(&format!("http://localhost:{port}/"))
        .await
        .expect("the other site");
    wait_for(&browser, ".pretix-widget-item-title").await;
    let titles = browser
        .find_all(Locator::Css(".pretix-widget-item-title"))
        .await
        .expect("products");
    let mut names = Vec::new();
    for title in &titles {
        names.push(title.text().await.expect("a product's name"));
    }
    assert_eq!(names, ["Ticket", "Workshop day"]);
    let widget = text_of(&browser, ".pretix-widget").await;
    assert!(
        widget.contains("23.00") && widget.contains("49.00"),
        "{widget}"
    );
    screenshots(&browser, "widget-products").await;

    type_into(&browser, &format!("input[name=item_{}]", ids[0]), "2").await;
    browser
        .find(Locator::Css(".pretix-widget-action button[type=submit]"))
        .await
        .expect("the widget's Buy")
        .click()
        .await
        .expect("buy");
    let frame = wait_for(&browser, "dialog[open] iframe").await;
    frame.enter_frame().await.expect("into the widget's frame");
    type_into(&browser, "#email", EMAIL).await;
    type_into(&browser, "#email_repeat", EMAIL).await;
    browser
        .enter_parent_frame()
        .await
        .expect("back to the site");
    screenshots(&browser, "widget-checkout").await;
    let frame = wait_for(&browser, "dialog[open] iframe").await;
    frame.enter_frame().await.expect("into the widget's frame");
    submit(&browser, "form button[type=submit]", "input[name=payment]").await;
    submit(&browser, "form button[type=submit]", "input[name=confirm]").await;
    assert!(text_of(&browser, "main").await.contains("EUR 46.00"));
    submit(&browser, "form button[type=submit]", "a[target=_blank]").await;
    let placed = text_of(&browser, "main").await;

    let orders = app.get(&format!("{event}/conf/orders/"), &token).await;
    assert_eq!(orders.body["count"], 1, "{}", orders.body);
    let order = &orders.body["results"][0];
    assert_eq!(order["email"], EMAIL);
    assert_eq!(order["total"], "46.00");
    let code = order["code"].as_str().expect("the order's code");
    assert!(placed.contains(code), "{placed}");
    browser
        .enter_parent_frame()
        .await
        .expect("back to the site");
    screenshots(&browser, "widget-placed").await;
}
