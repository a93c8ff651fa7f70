//! The plugin framework through HTTP: settings, payment providers, endpoints and hooks of
//! compiled-in plugins (`banktransfer`, and `ledger` below), and a dynamic plugin loaded
//! from its built library (`paylink`).

use std::sync::{Arc, Mutex};

use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::payload::Json;
use serde_json::{Value, json};
use tessera::db::entities::event;
use tessera::domain::orders::Order;
use tessera::domain::webhooks::{self, Notice};
use tessera::http::Auth;
use tessera::http::auth::{EventAccess, OrganizerAccess};
use tessera::plugin::{Hook, Plugin, PluginApi, PluginLevel};
use tessera_plugin_banktransfer::BankTransfer;
use tessera_tests::{TestApp, plugin_library};

const ORG: &str = "/api/v1/organizers/acme";
const EVENT: &str = "/api/v1/organizers/acme/events/conf";
const IBAN: &str = "DE89 3704 0044 0532 0130 00";

/// A compiled-in plugin written for these tests: it records every hook it hears, refuses
/// events in another currency than EUR, and lists what it heard at an organizer endpoint.
#[derive(Clone, Default)]
struct Ledger(Arc<Mutex<Vec<String>>>);

impl Ledger {
    fn note(&self, line: String) {
        self.0.lock().expect("ledger").push(line);
    }

    fn heard(&self) -> Vec<String> {
        self.0.lock().expect("ledger").clone()
    }
}

#[async_trait::async_trait]
impl Plugin for Ledger {
    fn name(&self) -> &str {
        "ledger"
    }
    fn version(&self) -> &str {
        "1.0"
    }
    fn description(&self) -> &str {
        "Writes down what happens."
    }
    fn level(&self) -> PluginLevel {
        PluginLevel::Both
    }
    fn check_enable(&self, ev: &event::Model) -> Result<(), String> {
        match ev.currency.as_str() {
            "EUR" => Ok(()),
            _ => Err("Only events in EUR can keep a ledger.".into()),
        }
    }
    fn api(&self) -> Option<PluginApi> {
        Some(PluginApi::new(LedgerApi(self.clone())))
    }
    fn webhook_action_types(&self) -> Vec<String> {
        vec!["ledger.noted".into()]
    }
    async fn order_placed(&self, h: Hook<'_>, o: &Order) -> Result<(), sea_orm::DbErr> {
        self.note(format!("placed {} {}", h.event.slug, o.row.code));
        let notice = Notice::about(h.event.id, "ledger.noted", json!({"code": o.row.code}));
        webhooks::notify(h.txn, &notice).await
    }
    async fn order_paid(&self, h: Hook<'_>, o: &Order) -> Result<(), sea_orm::DbErr> {
        self.note(format!("paid {} {}", h.event.slug, o.row.code));
        Ok(())
    }
    async fn order_canceled(&self, h: Hook<'_>, o: &Order) -> Result<(), sea_orm::DbErr> {
        self.note(format!("canceled {} {}", h.event.slug, o.row.code));
        Ok(())
    }
    async fn event_created(&self, h: Hook<'_>) -> Result<(), sea_orm::DbErr> {
        self.note(format!("created {}", h.event.slug));
        Ok(())
    }
    async fn event_cloned(&self, h: Hook<'_>, source: &event::Model) -> Result<(), sea_orm::DbErr> {
        self.note(format!("cloned {} to {}", source.slug, h.event.slug));
        Ok(())
    }
}

struct LedgerApi(Ledger);

#[OpenApi]
impl LedgerApi {
    /// List what the ledger heard
    #[oai(
        path = "/api/v1/organizers/:organizer/plugins/ledger/entries",
        method = "get"
    )]
    async fn entries(
        &self,
        _auth: Auth,
        access: Data<&OrganizerAccess>,
        #[oai(name = "organizer")] _organizer: poem_openapi::param::Path<String>,
    ) -> Json<Value> {
        Json(json!({"organizer": access.organizer.slug, "entries": self.0.heard()}))
    }

    /// List the organizer's ledgers (a resource at the organizer's root)
    #[oai(path = "/api/v1/organizers/:organizer/ledgers", method = "get")]
    async fn ledgers(
        &self,
        _auth: Auth,
        access: Data<&OrganizerAccess>,
        #[oai(name = "organizer")] _organizer: poem_openapi::param::Path<String>,
    ) -> Json<Value> {
        Json(json!({"ledgers": [access.organizer.slug.clone()]}))
    }

    /// Show the event's ledger (a resource at the event's root); needs `can_view_orders`
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ledger",
        method = "get"
    )]
    async fn event_ledger(
        &self,
        _auth: Auth,
        access: Data<&EventAccess>,
        #[oai(name = "organizer")] _organizer: poem_openapi::param::Path<String>,
        #[oai(name = "event")] _event: poem_openapi::param::Path<String>,
    ) -> tessera::http::error::ReadResult<Json<Value>> {
        access.require(tessera::domain::permissions::Permission::ViewOrders)?;
        Ok(Json(json!({"event": access.event.slug})))
    }

    /// A core resource the plugin tries to take over
    #[oai(path = "/api/v1/organizers/:organizer/giftcards", method = "get")]
    async fn shadow(
        &self,
        _auth: Auth,
        #[oai(name = "organizer")] _organizer: poem_openapi::param::Path<String>,
    ) -> Json<Value> {
        Json(json!({"shadowed": true}))
    }
}

struct Setup {
    app: TestApp,
    token: String,
    ledger: Ledger,
}

/// A server with `banktransfer` and `ledger`, organizer `acme`, an admin token, and the
/// event `conf` (created through the API) with a ticket for 23.00 in a quota of 10.
async fn setup(plugins: Value) -> Setup {
    let ledger = Ledger::default();
    let kept = ledger.clone();
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(BankTransfer).plugin(kept)).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let s = Setup { app, token, ledger };
    let r = s
        .post(&format!("{ORG}/events/"), conf("conf", plugins))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let item = s
        .post(
            &format!("{EVENT}/items/"),
            json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
        )
        .await;
    assert_eq!(item.status, 201, "{}", item.body);
    let quota = s
        .post(
            &format!("{EVENT}/quotas/"),
            json!({"name": "Hall", "size": 10, "items": [item.body["id"]]}),
        )
        .await;
    assert_eq!(quota.status, 201, "{}", quota.body);
    s
}

/// An event's fields; `plugins` left out when null.
fn conf(slug: &str, plugins: Value) -> Value {
    let mut body = json!({
        "name": {"en": "Conference"},
        "slug": slug,
        "currency": "EUR",
        "date_from": "2030-06-01T09:00:00Z",
    });
    if !plugins.is_null() {
        body["plugins"] = plugins;
    }
    body
}

impl Setup {
    async fn post(&self, path: &str, body: Value) -> tessera_tests::Reply {
        self.app.post(path, &self.token, body).await
    }

    async fn patch(&self, path: &str, body: Value) -> tessera_tests::Reply {
        self.app.patch(path, &self.token, body).await
    }

    async fn item(&self) -> i64 {
        let items = self.app.get(&format!("{EVENT}/items/"), &self.token).await;
        items.body["results"][0]["id"].as_i64().expect("item")
    }

    /// Places a pending order of one ticket paid with `provider`.
    async fn order(&self, provider: &str) -> tessera_tests::Reply {
        let item = self.item().await;
        self.post(
            &format!("{EVENT}/orders/"),
            json!({"email": "ada@example.org", "payment_provider": provider,
                   "positions": [{"item": item}]}),
        )
        .await
    }

    async fn status(&self, code: &str) -> Value {
        let r = self
            .app
            .get(&format!("{EVENT}/orders/{code}/"), &self.token)
            .await;
        r.body["status"].clone()
    }
}

fn code(order: &tessera_tests::Reply) -> String {
    order.body["code"].as_str().expect("code").to_owned()
}

#[tokio::test]
async fn a_plugins_settings_appear_with_the_events_and_are_validated() {
    let s = setup(json!(["banktransfer"])).await;
    let r = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"banktransfer_iban": IBAN}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let shown = s
        .app
        .get(&format!("{EVENT}/settings/?explain=true"), &s.token)
        .await;
    assert_eq!(shown.body["banktransfer_iban"]["value"], IBAN);
    assert_eq!(shown.body["banktransfer_iban"]["label"], "IBAN");

    let bad = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 01", "banktransfer_bic": "COBADEFF"}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(
        bad.body["banktransfer_iban"][0]
            .as_str()
            .is_some_and(|m| m.contains("checksum"))
    );
    let kept = s.app.get(&format!("{EVENT}/settings/"), &s.token).await;
    assert_eq!(kept.body["banktransfer_iban"], IBAN, "nothing half-written");
    assert_eq!(kept.body["banktransfer_bic"], "");
}

#[tokio::test]
async fn a_plugins_provider_is_offered_only_where_the_plugin_is_enabled() {
    let s = setup(json!([])).await;
    let r = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"banktransfer_iban": IBAN, "banktransfer_account_holder": "Acme GmbH"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s.order("banktransfer").await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["payment_provider"].is_array());

    let on = s
        .patch(&format!("{EVENT}/"), json!({"plugins": ["banktransfer"]}))
        .await;
    assert_eq!(on.status, 200, "{}", on.body);
    let r = s.order("banktransfer").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let p = &r.body["payments"][0];
    assert_eq!(p["provider"], "banktransfer");
    assert_eq!(p["state"], "created");
    let reference = format!("CONF-{}", code(&r));
    assert_eq!(p["details"]["reference"], reference);
    assert_eq!(p["details"]["iban"], IBAN);
    let url = p["payment_url"].as_str().expect("payment_url");
    let page = s
        .app
        .raw(
            poem::http::Method::GET,
            url.trim_start_matches("http://tessera.test"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(page.status, 200);
    let html = page.body.as_str().unwrap_or_default();
    assert!(
        html.contains(&format!(
            "Please transfer 23.00 EUR to Acme GmbH, IBAN {}, quoting the reference {reference}.",
            p["details"]["iban"].as_str().unwrap_or_default()
        )),
        "no empty BIC: {html}"
    );
    assert_eq!(s.order("stripe").await.status, 400);
}

#[tokio::test]
async fn nobody_can_put_bank_details_on_the_organizer_for_every_event() {
    let s = setup(json!(["banktransfer"])).await;
    s.post(
        &format!("{ORG}/events/"),
        conf("gala", json!(["banktransfer"])),
    )
    .await;
    let permissions = ["can_change_organizer_settings", "can_change_event_settings"]
        .iter()
        .filter_map(|p| tessera::domain::permissions::Permission::from_name(p))
        .collect();
    let limited = s.app.token_for("acme", Some(permissions), &["gala"]).await;
    let thief = json!({"banktransfer_iban": "GB82 WEST 1234 5698 7654 32",
                       "banktransfer_account_holder": "Not Acme",
                       "banktransfer_bic": "WESTGB2L"});

    // The attack: a team that sees only `gala` sends the customers of `conf` to its account.
    for token in [&limited, &s.token] {
        let r = s
            .app
            .patch(&format!("{ORG}/settings/"), token, thief.clone())
            .await;
        assert_eq!(r.status, 400, "payment details are per event: {}", r.body);
        for key in [
            "banktransfer_iban",
            "banktransfer_account_holder",
            "banktransfer_bic",
        ] {
            assert!(r.body[key][0].is_string(), "{key}: {}", r.body);
        }
    }
    let conf = s.app.get(&format!("{EVENT}/settings/"), &s.token).await;
    assert_eq!(conf.body["banktransfer_iban"], "");
    assert_eq!(conf.body["banktransfer_account_holder"], "");
    assert_eq!(
        s.order("banktransfer").await.status,
        400,
        "no account, no bank transfer"
    );

    let own = s
        .app
        .patch(
            "/api/v1/organizers/acme/events/gala/settings/",
            &limited,
            thief,
        )
        .await;
    assert_eq!(
        own.status, 200,
        "its own event is its business: {}",
        own.body
    );
    let conf = s.app.get(&format!("{EVENT}/settings/"), &s.token).await;
    assert_eq!(conf.body["banktransfer_iban"], "");
}

#[tokio::test]
async fn the_bank_import_marks_exactly_the_matching_orders_paid() {
    let s = setup(json!(["banktransfer"])).await;
    s.patch(
        &format!("{EVENT}/settings/"),
        json!({"banktransfer_iban": IBAN, "banktransfer_reference_prefix": "AC-"}),
    )
    .await;
    let (a, b, c) = (
        code(&s.order("banktransfer").await),
        code(&s.order("banktransfer").await),
        code(&s.order("banktransfer").await),
    );
    let import = format!("{EVENT}/plugins/banktransfer/import/");
    let statement = json!([
        {"amount": "23.00", "reference": format!("Tickets ac-conf-{a} thanks"), "date": "2030-05-01"},
        {"amount": "20.00", "reference": format!("AC-CONF-{b}"), "date": "2030-05-01"},
        {"amount": "23.00", "reference": "rent for May", "date": "2030-05-02"},
    ]);
    let r = s.post(&import, statement.clone()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["matched"].as_array().map(Vec::len), Some(1));
    assert_eq!(r.body["matched"][0]["order"], a.as_str());
    assert_eq!(r.body["unmatched"].as_array().map(Vec::len), Some(2));
    assert!(
        r.body["unmatched"][0]["reason"]
            .as_str()
            .is_some_and(|m| m.contains("23.00"))
    );
    assert_eq!(s.status(&a).await, "p");
    assert_eq!(s.status(&b).await, "n");
    assert_eq!(s.status(&c).await, "n");

    let again = s.post(&import, statement).await;
    assert_eq!(again.body["matched"], json!([]), "nothing is paid twice");
    let bad = s
        .post(
            &import,
            json!([{"amount": "x", "reference": "r", "date": "d"}]),
        )
        .await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn a_bank_import_sent_with_an_idempotency_key_pays_every_matching_order_once() {
    let s = setup(json!(["banktransfer"])).await;
    s.patch(
        &format!("{EVENT}/settings/"),
        json!({"banktransfer_iban": IBAN, "banktransfer_reference_prefix": "AC-"}),
    )
    .await;
    let (a, b) = (
        code(&s.order("banktransfer").await),
        code(&s.order("banktransfer").await),
    );
    let statement = json!([
        {"amount": "23.00", "reference": format!("AC-CONF-{a}"), "date": "2030-05-01"},
        {"amount": "23.00", "reference": format!("AC-CONF-{b}"), "date": "2030-05-01"},
    ]);
    let import = format!("{EVENT}/plugins/banktransfer/import/");
    let auth = format!("Token {}", s.token);
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("X-Idempotency-Key", "statement-2030-05"),
    ];
    let send = || {
        s.app.raw(
            poem::http::Method::POST,
            &import,
            &headers,
            statement.to_string().into_bytes(),
        )
    };

    let first = send().await;
    let again = send().await;

    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["matched"].as_array().map(Vec::len), Some(2));
    assert_eq!(again.body, first.body, "the retry repeats the answer");
    assert_eq!(
        (s.status(&a).await, s.status(&b).await),
        ("p".into(), "p".into())
    );
}

#[tokio::test]
async fn a_plugins_endpoints_answer_only_where_it_is_enabled_and_honour_permissions() {
    let s = setup(json!([])).await;
    let import = format!("{EVENT}/plugins/banktransfer/import/");
    let r = s.post(&import, json!([])).await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(r.body["detail"].is_string());

    s.patch(&format!("{EVENT}/"), json!({"plugins": ["banktransfer"]}))
        .await;
    assert_eq!(s.post(&import, json!([])).await.status, 200);
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    assert_eq!(s.app.post(&import, &viewer, json!([])).await.status, 403);
    assert_eq!(
        s.app
            .call(poem::http::Method::POST, &import, None, Some(json!([])))
            .await
            .status,
        401
    );
    s.app.organizer("other").await;
    let stranger = s.app.admin_token("other").await;
    assert_eq!(s.app.post(&import, &stranger, json!([])).await.status, 403);
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/plugins/banktransfer/unknown/"), &s.token)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn hooks_hear_of_orders_and_events_that_enable_the_plugin() {
    let s = setup(json!(["ledger", "banktransfer"])).await;
    let placed = code(&s.order("manual").await);
    s.post(&format!("{EVENT}/orders/{placed}/mark_paid/"), json!({}))
        .await;
    s.post(
        &format!("{EVENT}/orders/{placed}/mark_canceled/"),
        json!({}),
    )
    .await;
    let clone = s
        .post(&format!("{EVENT}/clone/"), conf("copy", json!(null)))
        .await;
    assert_eq!(clone.status, 201, "{}", clone.body);
    assert_eq!(clone.body["plugins"], json!(["ledger", "banktransfer"]));
    let r = s
        .post(&format!("{ORG}/events/"), conf("plain", json!([])))
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(
        s.ledger.heard(),
        vec![
            "created conf".to_owned(),
            format!("placed conf {placed}"),
            format!("paid conf {placed}"),
            format!("canceled conf {placed}"),
            "cloned conf to copy".to_owned(),
        ]
    );
    let entries = s
        .app
        .get(&format!("{ORG}/plugins/ledger/entries/"), &s.token)
        .await;
    assert_eq!(entries.status, 200, "{}", entries.body);
    assert_eq!(entries.body["entries"].as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn enabling_runs_the_plugins_own_checks_and_only_registered_names() {
    let s = setup(json!([])).await;
    let mut usd = conf("usd", json!(["ledger"]));
    usd["currency"] = json!("USD");
    let r = s.post(&format!("{ORG}/events/"), usd).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body["plugins"][0]
            .as_str()
            .is_some_and(|m| m.contains("EUR"))
    );
    let r = s
        .patch(&format!("{EVENT}/"), json!({"plugins": ["paylink"]}))
        .await;
    assert_eq!(r.status, 400, "not loaded here: {}", r.body);
}

#[tokio::test]
async fn compiled_in_plugin_endpoints_are_in_the_openapi_document() {
    let s = setup(json!([])).await;
    let doc = s
        .app
        .call(poem::http::Method::GET, "/api/v1/openapi.json", None, None)
        .await
        .body;
    let import = &doc["paths"]["/api/v1/organizers/{organizer}/events/{event}/plugins/banktransfer/import/"]
        ["post"];
    assert_eq!(import["summary"], "Import bank transactions");
    assert!(
        doc["paths"]["/api/v1/organizers/{organizer}/plugins/ledger/entries/"]["get"].is_object()
    );
}

/// A server that loads the dynamic plugins in `dir`, with `acme`, `conf` and a ticket.
async fn with_plugin_dir(dir: &std::path::Path) -> Setup {
    let dir = dir.to_owned();
    let ledger = Ledger::default();
    let app = TestApp::spawn_app(move |c| c.plugin_dir = Some(dir), |a| a).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let s = Setup { app, token, ledger };
    let r = s
        .post(&format!("{ORG}/events/"), conf("conf", json!([])))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let item = s
        .post(
            &format!("{EVENT}/items/"),
            json!({"name": {"en": "Ticket"}, "default_price": "10.00"}),
        )
        .await;
    s.post(
        &format!("{EVENT}/quotas/"),
        json!({"name": "Hall", "size": 10, "items": [item.body["id"]]}),
    )
    .await;
    s
}

/// A directory holding the paylink library and the broken fixtures.
fn plugin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for package in [
        "tessera-plugin-paylink",
        "tessera-fixture-wrong-abi",
        "tessera-fixture-missing-symbol",
        "tessera-fixture-bad-manifest",
    ] {
        let built = plugin_library(package);
        let name = built.file_name().expect("file name");
        std::fs::copy(&built, dir.path().join(name)).expect("copy library");
    }
    std::fs::write(dir.path().join("libnot_a_library.so"), b"not a library").expect("write");
    dir
}

#[tokio::test]
async fn a_dynamic_plugin_works_end_to_end_and_broken_libraries_are_refused() {
    let dir = plugin_dir();
    let s = with_plugin_dir(dir.path()).await;
    let names: Vec<String> = s
        .app
        .plugins()
        .all()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(names, vec!["paylink"], "the broken libraries are refused");

    let links = format!("{EVENT}/plugins/paylink/links/");
    assert_eq!(s.post(&links, json!({"amount": "1.00"})).await.status, 404);
    let on = s
        .patch(&format!("{EVENT}/"), json!({"plugins": ["paylink"]}))
        .await;
    assert_eq!(on.status, 200, "{}", on.body);

    let bad = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"paylink_base_url": "http://pay.example"}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body["paylink_base_url"].is_array());
    let good = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"paylink_base_url": "https://pay.example/checkout"}),
        )
        .await;
    assert_eq!(good.status, 200, "{}", good.body);
    assert_eq!(
        good.body["paylink_base_url"],
        "https://pay.example/checkout"
    );

    let order = s.order("paylink").await;
    assert_eq!(order.status, 201, "{}", order.body);
    let url = order.body["payments"][0]["payment_url"]
        .as_str()
        .expect("payment_url");
    assert!(
        url.starts_with("https://pay.example/checkout?order="),
        "its own payment_url: {url}"
    );
    assert!(url.contains(&code(&order)));

    let link = s
        .post(&links, json!({"amount": "10.00", "reference": "R1"}))
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    assert!(
        link.body["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://pay.example/checkout") && u.contains("R1"))
    );
    let missing = s.post(&links, json!({"reference": "R1"})).await;
    assert_eq!(missing.status, 400);
    assert!(missing.body["amount"].is_array());
    let outsider = s.app.token("acme", &["can_change_items"]).await;
    assert_eq!(
        s.app
            .post(
                &links,
                &outsider,
                json!({"amount": "1.00", "reference": "R"})
            )
            .await
            .status,
        403
    );
    let doc = s
        .app
        .call(poem::http::Method::GET, "/api/v1/openapi.json", None, None)
        .await
        .body;
    assert!(doc["paths"]["/api/v1/organizers/{organizer}/events/{event}/plugins/paylink/links/"]["post"]["summary"].is_string());
}

#[tokio::test]
async fn a_provider_that_cannot_refund_refuses_and_nothing_is_recorded() {
    let s = setup(json!(["banktransfer"])).await;
    let settings = json!({"banktransfer_iban": IBAN, "banktransfer_account_holder": "Acme GmbH"});
    assert_eq!(
        s.patch(&format!("{EVENT}/settings/"), settings)
            .await
            .status,
        200
    );
    let o = s.order("banktransfer").await;
    assert_eq!(o.status, 201, "{}", o.body);
    let c = code(&o);
    let paid = s
        .post(&format!("{EVENT}/orders/{c}/mark_paid/"), json!({}))
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let r = s
        .post(&format!("{EVENT}/orders/{c}/payments/1/refund/"), json!({}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "This payment method cannot refund payments."
    );
    let refunds = s
        .app
        .get(&format!("{EVENT}/orders/{c}/refunds/"), &s.token)
        .await;
    assert_eq!(refunds.body["count"], 0);
    assert_eq!(s.status(&c).await, "p");
}

#[tokio::test]
async fn a_plugin_adds_resources_at_the_organizer_and_event_roots_with_the_core_checks() {
    let s = setup(json!(["ledger"])).await;
    let ledgers = format!("{ORG}/ledgers/");
    let r = s.app.get(&ledgers, &s.token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["ledgers"], json!(["acme"]));
    let anonymous = s
        .app
        .call(poem::http::Method::GET, &ledgers, None, None)
        .await;
    assert_eq!(anonymous.status, 401);
    s.app.organizer("other").await;
    let stranger = s.app.admin_token("other").await;
    assert_eq!(s.app.get(&ledgers, &stranger).await.status, 403);

    let ledger = format!("{EVENT}/ledger/");
    let r = s.app.get(&ledger, &s.token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["event"], "conf");
    let settings_only = s.app.token("acme", &["can_change_event_settings"]).await;
    assert_eq!(s.app.get(&ledger, &settings_only).await.status, 403);
    assert_eq!(s.app.get(&ledger, &stranger).await.status, 403);
    s.patch(&format!("{EVENT}/"), json!({"plugins": []})).await;
    let off = s.app.get(&ledger, &s.token).await;
    assert_eq!(off.status, 404, "not enabled on the event: {}", off.body);
}

#[tokio::test]
async fn a_plugin_cannot_shadow_a_core_resource() {
    let s = setup(json!(["ledger"])).await;
    let r = s.app.get(&format!("{ORG}/giftcards/"), &s.token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["results"].is_array(), "the core answers: {}", r.body);
    assert!(r.body.get("shadowed").is_none());

    let doc = s.app.get("/api/v1/openapi.json", &s.token).await.body;
    let giftcards = &doc["paths"]["/api/v1/organizers/{organizer}/giftcards/"]["get"];
    assert_ne!(
        giftcards["summary"], "A core resource the plugin tries to take over",
        "the core's operation stays in the document"
    );
    assert!(doc["paths"]["/api/v1/organizers/{organizer}/ledgers/"]["get"].is_object());
    assert!(
        doc["paths"]["/api/v1/organizers/{organizer}/events/{event}/ledger/"]["get"].is_object()
    );
}

#[tokio::test]
async fn a_plugins_own_webhook_action_types_can_be_listened_to() {
    let s = setup(json!(["ledger"])).await;
    let hooks = format!("{ORG}/webhooks/");
    let target = "http://93.184.216.34/hook";
    let unknown = s
        .post(
            &hooks,
            json!({"target_url": target, "action_types": ["ledger.forgotten"]}),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    let r = s
        .post(
            &hooks,
            json!({"target_url": target, "action_types": ["ledger.noted"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);

    let order = s.order("manual").await;
    assert_eq!(order.status, 201, "{}", order.body);
    let calls = s
        .app
        .get(&format!("{hooks}{}/calls/", r.body["id"]), &s.token)
        .await;
    assert_eq!(calls.body["count"], 1, "{}", calls.body);
    let payload = &calls.body["results"][0]["payload"];
    assert_eq!(payload["action"], "ledger.noted");
    assert_eq!(payload["code"], order.body["code"]);
    assert_eq!(payload["event"], "conf");
}

#[tokio::test]
async fn an_event_may_name_a_plugin_by_its_pretix_counterpart_and_keeps_the_name_it_was_given() {
    let s = setup(json!(["pretix.plugins.banktransfer", "banktransfer"])).await;
    let shown = s.app.get(&format!("{EVENT}/"), &s.token).await;
    assert_eq!(
        shown.body["plugins"],
        json!(["pretix.plugins.banktransfer", "banktransfer"])
    );
    let r = s
        .patch(
            &format!("{EVENT}/settings/"),
            json!({"banktransfer_iban": IBAN, "banktransfer_account_holder": "Acme GmbH"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s.order("banktransfer").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["payments"].as_array().map(Vec::len), Some(1));
    let unknown = s
        .patch(
            &format!("{EVENT}/"),
            json!({"plugins": ["pretix.plugins.nosuchthing"]}),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
}
