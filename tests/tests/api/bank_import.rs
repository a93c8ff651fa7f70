//! pretix's bank import at the organizer's root (`bankimportjobs/`, served by the
//! `banktransfer` plugin): matching by event and order code, bare code or payment
//! reference; the amount; orders already paid or canceled; a statement imported twice; the
//! currency; and who may import and see what.

use serde_json::{Value, json};
use tessera_plugin_banktransfer::BankTransfer;
use tessera_tests::{Reply, TestApp};

const ORG: &str = "/api/v1/organizers/acme";
const JOBS: &str = "/api/v1/organizers/acme/bankimportjobs/";

struct Shop {
    app: TestApp,
    token: String,
}

/// Organizer `acme` with the events `conf` (bank transfer enabled, account set) and `gala`,
/// both in EUR, each with a ticket for 23.00.
async fn shop() -> Shop {
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(BankTransfer)).await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    let s = Shop { app, token };
    for slug in ["conf", "gala"] {
        s.event(slug, "EUR").await;
    }
    let r = s
        .app
        .patch(
            &format!("{ORG}/events/conf/settings/"),
            &s.token,
            json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00",
                   "banktransfer_reference_prefix": "AC-"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    s
}

impl Shop {
    async fn event(&self, slug: &str, currency: &str) {
        let r = self
            .app
            .post(
                &format!("{ORG}/events/"),
                &self.token,
                json!({"name": {"en": slug}, "slug": slug, "currency": currency,
                       "date_from": "2030-06-01T09:00:00Z", "plugins": ["banktransfer"]}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        let item = self
            .app
            .post(
                &format!("{ORG}/events/{slug}/items/"),
                &self.token,
                json!({"name": {"en": "Ticket"}, "default_price": "23.00"}),
            )
            .await;
        let quota = self
            .app
            .post(
                &format!("{ORG}/events/{slug}/quotas/"),
                &self.token,
                json!({"name": "Hall", "size": 50, "items": [item.body["id"]]}),
            )
            .await;
        assert_eq!(quota.status, 201, "{}", quota.body);
    }

    /// A pending order of one ticket in the event, paid with `provider`; its code.
    async fn order(&self, event: &str, provider: &str) -> String {
        let items = self
            .app
            .get(&format!("{ORG}/events/{event}/items/"), &self.token)
            .await;
        let r = self
            .app
            .post(
                &format!("{ORG}/events/{event}/orders/"),
                &self.token,
                json!({"email": "ada@example.org", "payment_provider": provider,
                       "positions": [{"item": items.body["results"][0]["id"]}]}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["code"].as_str().expect("code").to_owned()
    }

    async fn order_of(&self, event: &str, code: &str) -> Value {
        self.app
            .get(&format!("{ORG}/events/{event}/orders/{code}/"), &self.token)
            .await
            .body
    }

    async fn import(&self, body: Value) -> Reply {
        self.app.post(JOBS, &self.token, body).await
    }
}

fn tx(amount: &str, reference: &str) -> Value {
    json!({"amount": amount, "reference": reference, "payer": "Ada Lovelace", "date": "2030-05-01"})
}

fn states(job: &Value) -> Vec<(String, Value)> {
    job["transactions"]
        .as_array()
        .expect("transactions")
        .iter()
        .map(|t| {
            (
                t["state"].as_str().unwrap_or("").to_owned(),
                t["order"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_statement_pays_the_orders_it_names_by_event_and_code_bare_code_or_payment_reference() {
    let s = shop().await;
    let by_slug = s.order("conf", "manual").await;
    let bare = s.order("gala", "manual").await;
    let by_reference = s.order("conf", "banktransfer").await;
    let wrong_amount = s.order("conf", "banktransfer").await;
    let statement = json!({"event": null, "transactions": [
        tx("23.00", &format!("GUTSCHRIFT conf - {} thanks", by_slug.to_lowercase())),
        tx("23.00", &format!("Order {bare}, thank you")),
        tx("23.00", &format!("ac-conf-{by_reference}")),
        tx("20.00", &format!("AC-CONF-{wrong_amount}")),
        tx("23.00", "rent for May"),
    ]});

    let r = s.import(statement.clone()).await;

    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["state"], "completed");
    assert_eq!(r.body["currency"], "EUR");
    assert_eq!(
        states(&r.body),
        vec![
            ("valid".into(), json!(by_slug)),
            ("valid".into(), json!(bare)),
            ("valid".into(), json!(by_reference)),
            ("invalid".into(), json!(wrong_amount)),
            ("nomatch".into(), Value::Null),
        ]
    );
    assert_eq!(
        r.body["transactions"][3]["message"],
        "The transaction amount is incorrect."
    );
    for (event, code) in [("conf", &by_slug), ("gala", &bare), ("conf", &by_reference)] {
        let o = s.order_of(event, code).await;
        assert_eq!(o["status"], "p", "{o}");
        let confirmed: Vec<&Value> = o["payments"]
            .as_array()
            .expect("payments")
            .iter()
            .filter(|p| p["state"] == "confirmed")
            .collect();
        assert_eq!(confirmed.len(), 1, "{o}");
        assert_eq!(confirmed[0]["provider"], "banktransfer");
        assert_eq!(confirmed[0]["amount"], "23.00");
    }
    assert_eq!(s.order_of("conf", &wrong_amount).await["status"], "n");

    let again = s.import(statement).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(
        again.body["transactions"],
        json!([]),
        "nothing is imported twice"
    );
    let o = s.order_of("conf", &by_slug).await;
    let confirmed = o["payments"]
        .as_array()
        .expect("payments")
        .iter()
        .filter(|p| p["state"] == "confirmed")
        .count();
    assert_eq!(confirmed, 1, "nothing is paid twice: {o}");

    let list = s.app.get(JOBS, &s.token).await;
    assert_eq!(list.body["count"], 2);
    assert_eq!(
        list.body["results"][0]["id"], again.body["id"],
        "newest first"
    );
    let one = s
        .app
        .get(&format!("{JOBS}{}/", r.body["id"]), &s.token)
        .await;
    assert_eq!(one.status, 200);
    assert_eq!(one.body, r.body);
}

#[tokio::test]
async fn orders_already_paid_or_canceled_are_reported_and_not_paid_again() {
    let s = shop().await;
    let paid = s.order("conf", "manual").await;
    let canceled = s.order("conf", "manual").await;
    let mark = s
        .app
        .post(
            &format!("{ORG}/events/conf/orders/{paid}/mark_paid/"),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(mark.status, 200, "{}", mark.body);
    let cancel = s
        .app
        .post(
            &format!("{ORG}/events/conf/orders/{canceled}/mark_canceled/"),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(cancel.status, 200, "{}", cancel.body);

    let r = s
        .import(json!({"event": "conf", "transactions": [
            tx("23.00", &format!("CONF-{paid}")),
            tx("23.00", &format!("CONF-{canceled}")),
        ]}))
        .await;

    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["event"], "conf");
    assert_eq!(
        states(&r.body),
        vec![
            ("already".into(), json!(paid)),
            ("error".into(), json!(canceled)),
        ]
    );
    assert_eq!(
        r.body["transactions"][1]["message"],
        "The order has already been canceled."
    );
    assert_eq!(s.order_of("conf", &canceled).await["status"], "c");
}

#[tokio::test]
async fn the_same_statement_uploaded_twice_at_once_pays_each_order_once() {
    let s = shop().await;
    let codes = [
        s.order("conf", "banktransfer").await,
        s.order("conf", "banktransfer").await,
        s.order("conf", "banktransfer").await,
    ];
    let statement = json!({"transactions": codes
        .iter()
        .map(|c| tx("23.00", &format!("CONF-{c}")))
        .collect::<Vec<_>>()});

    let (a, b) = tokio::join!(s.import(statement.clone()), s.import(statement));

    assert_eq!((a.status, b.status), (201, 201), "{} {}", a.body, b.body);
    let stored = s.app.get(JOBS, &s.token).await.body["results"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["transactions"].as_array().map_or(0, Vec::len))
        .sum::<usize>();
    assert_eq!(stored, 3, "each transaction is stored once");
    for code in &codes {
        let o = s.order_of("conf", code).await;
        assert_eq!(o["status"], "p");
        let confirmed = o["payments"]
            .as_array()
            .expect("payments")
            .iter()
            .filter(|p| p["state"] == "confirmed")
            .count();
        assert_eq!(confirmed, 1, "{o}");
    }
}

#[tokio::test]
async fn the_currency_is_that_of_the_organizers_events_and_must_be_set_when_ambiguous() {
    let s = shop().await;
    let ok = s.import(json!({"transactions": []})).await;
    assert_eq!(ok.status, 201, "{}", ok.body);
    assert_eq!(ok.body["currency"], "EUR");

    s.event("expo", "USD").await;
    let r = s.import(json!({"event": null, "transactions": []})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"currency": ["Currency is ambiguous, please set explicitly."]})
    );
    let usd = s.order("expo", "manual").await;
    let r = s
        .import(json!({"currency": "USD", "transactions": [tx("23.00", &format!("EXPO-{usd}"))]}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(states(&r.body), vec![("valid".into(), json!(usd))]);
    let r = s
        .import(json!({"event": "expo", "currency": "EUR", "transactions": []}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["currency"][0].is_string());
    let r = s.import(json!({"event": "nope", "transactions": []})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["event"][0].is_string());
    let r = s
        .import(json!({"transactions": [{"amount": "x", "reference": "r", "date": "d"}]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        s.app.get(JOBS, &s.token).await.body["count"],
        2,
        "nothing half-written"
    );
}

#[tokio::test]
async fn bank_import_jobs_answer_to_the_order_permissions_of_their_events() {
    let s = shop().await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let changer = s
        .app
        .token("acme", &["can_view_orders", "can_change_orders"])
        .await;
    let permissions = ["can_view_orders", "can_change_orders"]
        .iter()
        .filter_map(|p| tessera::domain::permissions::Permission::from_name(p))
        .collect();
    let conf_only = s.app.token_for("acme", Some(permissions), &["conf"]).await;
    s.app.organizer("other").await;
    let stranger = s.app.admin_token("other").await;
    let empty = json!({"transactions": []});

    assert_eq!(s.app.get(JOBS, &viewer).await.status, 200);
    assert_eq!(s.app.post(JOBS, &viewer, empty.clone()).await.status, 403);
    assert_eq!(s.app.post(JOBS, &changer, empty.clone()).await.status, 201);
    assert_eq!(s.app.post(JOBS, &stranger, empty.clone()).await.status, 403);
    assert_eq!(s.app.get(JOBS, &stranger).await.status, 403);
    let anonymous = s.app.call(poem::http::Method::GET, JOBS, None, None).await;
    assert_eq!(anonymous.status, 401);

    assert_eq!(
        s.app.post(JOBS, &conf_only, empty.clone()).await.status,
        403,
        "a statement for all events needs all events"
    );
    let gala = s
        .app
        .post(
            JOBS,
            &conf_only,
            json!({"event": "gala", "transactions": []}),
        )
        .await;
    assert_eq!(gala.status, 403, "{}", gala.body);
    let conf = s
        .app
        .post(
            JOBS,
            &conf_only,
            json!({"event": "conf", "transactions": []}),
        )
        .await;
    assert_eq!(conf.status, 201, "{}", conf.body);

    let seen = s.app.get(JOBS, &conf_only).await;
    assert_eq!(
        seen.body["count"], 1,
        "only its event's jobs: {}",
        seen.body
    );
    assert_eq!(seen.body["results"][0]["event"], "conf");
    let everything = s.app.get(JOBS, &s.token).await;
    assert_eq!(everything.body["count"], 2);
    let organizer_wide = everything.body["results"][1]["id"].clone();
    let hidden = s
        .app
        .get(&format!("{JOBS}{organizer_wide}/"), &conf_only)
        .await;
    assert_eq!(hidden.status, 404);
    assert_eq!(
        s.app.get(&format!("{JOBS}99999/"), &s.token).await.status,
        404
    );
}
