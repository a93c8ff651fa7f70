use serde_json::{Value, json};
use tessera_tests::{TestApp, cents, check_ledger};

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_manage_gift_cards"]).await;
    (app, token)
}

async fn card(app: &TestApp, token: &str, body: Value) -> Value {
    let r = app.post(CARDS, token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

fn sum(entries: &Value) -> f64 {
    entries["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|e| {
            e["value"]
                .as_str()
                .expect("value")
                .parse::<f64>()
                .expect("number")
        })
        .sum()
}

#[tokio::test]
async fn a_created_card_has_every_field_and_a_generated_secret() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "23.5", "currency": "EUR", "expires": "2030-01-01T10:00:00+02:00", "conditions": "Only on Mondays"})).await;
    assert!(c["id"].is_i64());
    assert!(c["secret"].as_str().expect("secret").len() >= 8);
    assert_eq!(c["value"], "23.50");
    assert_eq!(c["currency"], "EUR");
    assert_eq!(c["testmode"], false);
    assert_eq!(c["conditions"], "Only on Mondays");
    let expires = chrono::DateTime::parse_from_rfc3339(c["expires"].as_str().expect("expires"))
        .expect("datetime");
    assert_eq!(
        expires,
        chrono::DateTime::parse_from_rfc3339("2030-01-01T08:00:00Z").expect("datetime")
    );
    let shown = app.get(&format!("{CARDS}{}/", c["id"]), &token).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.body, c);
}

#[tokio::test]
async fn the_initial_value_is_the_first_transaction() {
    let (app, token) = setup().await;
    let c = card(
        &app,
        &token,
        json!({"secret": "GIFT-1", "value": "10.00", "currency": "EUR"}),
    )
    .await;
    let t = app
        .get(&format!("{CARDS}{}/transactions/", c["id"]), &token)
        .await;
    assert_eq!(t.status, 200);
    assert_eq!(t.body["count"], 1);
    assert_eq!(t.body["results"][0]["value"], "10.00");
    assert_eq!(t.body["results"][0]["event"], Value::Null);
    assert_eq!(t.body["results"][0]["order"], Value::Null);
}

#[tokio::test]
async fn a_secret_already_used_by_the_organizer_is_400() {
    let (app, token) = setup().await;
    card(
        &app,
        &token,
        json!({"secret": "SAME", "value": "1.00", "currency": "EUR"}),
    )
    .await;
    let r = app
        .post(
            CARDS,
            &token,
            json!({"secret": "SAME", "value": "1.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["secret"][0].is_string());
    assert_eq!(app.get(CARDS, &token).await.body["count"], 1);
}

#[tokio::test]
async fn every_invalid_field_is_named_at_once() {
    let (app, token) = setup().await;
    let r = app.post(CARDS, &token, json!({"value": "abc", "currency": "EURO", "testmode": "maybe", "expires": "soon", "conditions": 5})).await;
    assert_eq!(r.status, 400);
    for field in ["value", "currency", "testmode", "expires", "conditions"] {
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
}

#[tokio::test]
async fn missing_required_fields_are_400() {
    let (app, token) = setup().await;
    let r = app.post(CARDS, &token, json!({})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["value"][0].is_string());
    assert!(r.body["currency"][0].is_string());
}

#[tokio::test]
async fn a_negative_or_too_precise_value_is_400() {
    let (app, token) = setup().await;
    let r = app
        .post(CARDS, &token, json!({"value": "-1.00", "currency": "EUR"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["value"][0].is_string());
    let r = app
        .post(CARDS, &token, json!({"value": "1.001", "currency": "EUR"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["value"][0].is_string());
    let r = app
        .post(
            CARDS,
            &token,
            json!({"secret": "bad secret!", "value": "1.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["secret"][0].is_string());
    assert_eq!(app.get(CARDS, &token).await.body["count"], 0);
}

#[tokio::test]
async fn the_list_filters_by_secret_and_testmode() {
    let (app, token) = setup().await;
    card(
        &app,
        &token,
        json!({"secret": "ALPHA", "value": "1.00", "currency": "EUR"}),
    )
    .await;
    card(
        &app,
        &token,
        json!({"secret": "BETA", "value": "1.00", "currency": "EUR", "testmode": true}),
    )
    .await;
    let r = app.get(&format!("{CARDS}?secret=ALPHA"), &token).await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["secret"], "ALPHA");
    assert_eq!(
        app.get(&format!("{CARDS}?secret=ALP"), &token).await.body["count"],
        0
    );
    let r = app.get(&format!("{CARDS}?testmode=true"), &token).await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["secret"], "BETA");
    assert_eq!(
        app.get(&format!("{CARDS}?testmode=false"), &token)
            .await
            .body["count"],
        1
    );
    let r = app.get(&format!("{CARDS}?testmode=maybe"), &token).await;
    assert_eq!(r.status, 400);
    assert!(r.body["testmode"][0].is_string());
}

#[tokio::test]
async fn patching_the_value_books_the_difference() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/", c["id"]);
    let r = app
        .patch(
            &url,
            &token,
            json!({"value": "4.00", "conditions": "changed"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["value"], "4.00");
    assert_eq!(r.body["conditions"], "changed");
    let t = app.get(&format!("{url}transactions/"), &token).await;
    assert_eq!(t.body["count"], 2);
    assert_eq!(t.body["results"][0]["value"], "-6.00");
    assert_eq!(sum(&t.body), 4.0);
}

#[tokio::test]
async fn secret_currency_and_testmode_cannot_change() {
    let (app, token) = setup().await;
    let c = card(
        &app,
        &token,
        json!({"secret": "KEEP", "value": "10.00", "currency": "EUR"}),
    )
    .await;
    let url = format!("{CARDS}{}/", c["id"]);
    let r = app
        .patch(
            &url,
            &token,
            json!({"secret": "NEW", "currency": "USD", "testmode": true}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["secret"], "KEEP");
    assert_eq!(r.body["currency"], "EUR");
    assert_eq!(r.body["testmode"], false);
}

#[tokio::test]
async fn put_replaces_the_modifiable_fields() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR", "conditions": "x", "expires": "2030-01-01T00:00:00Z"})).await;
    let url = format!("{CARDS}{}/", c["id"]);
    let r = app.put(&url, &token, json!({"value": "12.00"})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["value"], "12.00");
    assert_eq!(r.body["conditions"], Value::Null);
    assert_eq!(r.body["expires"], Value::Null);
    let r = app.put(&url, &token, json!({"conditions": "y"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["value"][0].is_string());
}

#[tokio::test]
async fn a_card_cannot_be_deleted() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let r = app.delete(&format!("{CARDS}{}/", c["id"]), &token).await;
    assert_eq!(r.status, 405);
    assert!(
        r.body["detail"]
            .as_str()
            .expect("detail")
            .contains("DELETE")
    );
    let allow = r.header("allow").expect("Allow");
    assert!(
        allow.contains("GET") && allow.contains("PATCH") && allow.contains("PUT"),
        "{allow}"
    );
    assert!(!allow.contains("DELETE"));
}

#[tokio::test]
async fn transact_adds_and_spends_credit() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/transact/", c["id"]);
    let r = app
        .post(&url, &token, json!({"value": "-2.50", "text": "coffee"}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["value"], "7.50");
    assert_eq!(r.body["id"], c["id"]);
    let r = app.post(&url, &token, json!({"value": "5.00"})).await;
    assert_eq!(r.body["value"], "12.50");
    let t = app
        .get(&format!("{CARDS}{}/transactions/", c["id"]), &token)
        .await;
    assert_eq!(t.body["count"], 3);
    assert_eq!(t.body["results"][1]["text"], "coffee");
    assert_eq!(sum(&t.body), 12.5);
}

#[tokio::test]
async fn transact_below_zero_is_409_and_changes_nothing() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let r = app
        .post(
            &format!("{CARDS}{}/transact/", c["id"]),
            &token,
            json!({"value": "-10.01"}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(r.body["value"][0].is_string());
    assert_eq!(
        app.get(&format!("{CARDS}{}/", c["id"]), &token).await.body["value"],
        "10.00"
    );
    assert_eq!(
        app.get(&format!("{CARDS}{}/transactions/", c["id"]), &token)
            .await
            .body["count"],
        1
    );
    let r = app
        .post(
            &format!("{CARDS}{}/transact/", c["id"]),
            &token,
            json!({"value": "-10.00"}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["value"], "0.00");
}

#[tokio::test]
async fn transact_needs_a_valid_value() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/transact/", c["id"]);
    for body in [
        json!({}),
        json!({"value": "ten"}),
        json!({"value": null}),
        json!({"value": true}),
    ] {
        let r = app.post(&url, &token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.body["value"][0].is_string(), "{body}: {}", r.body);
    }
}

#[tokio::test]
async fn a_card_that_does_not_exist_is_403() {
    let (app, token) = setup().await;
    assert_eq!(app.get(&format!("{CARDS}999/"), &token).await.status, 403);
    assert_eq!(
        app.post(
            &format!("{CARDS}999/transact/"),
            &token,
            json!({"value": "1.00"})
        )
        .await
        .status,
        403
    );
    let r = app.get(&format!("{CARDS}abc/"), &token).await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn transactions_can_be_listed_oldest_first_or_by_id() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "1.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/", c["id"]);
    app.post(&format!("{url}transact/"), &token, json!({"value": "2.00"}))
        .await;
    app.post(&format!("{url}transact/"), &token, json!({"value": "3.00"}))
        .await;
    let values = |r: &Value| {
        r["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|e| e["value"].as_str().expect("v").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        values(&app.get(&format!("{url}transactions/"), &token).await.body),
        ["3.00", "2.00", "1.00"]
    );
    assert_eq!(
        values(
            &app.get(&format!("{url}transactions/?ordering=datetime"), &token)
                .await
                .body
        ),
        ["1.00", "2.00", "3.00"]
    );
    assert_eq!(
        values(
            &app.get(&format!("{url}transactions/?ordering=id"), &token)
                .await
                .body
        ),
        ["1.00", "2.00", "3.00"]
    );
    assert_eq!(
        values(
            &app.get(&format!("{url}transactions/?ordering=-id"), &token)
                .await
                .body
        ),
        ["3.00", "2.00", "1.00"]
    );
    assert_eq!(
        app.get(&format!("{url}transactions/?ordering=value"), &token)
            .await
            .status,
        400
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_debits_never_take_a_card_below_zero() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "10.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/transact/", c["id"]);
    let app = std::sync::Arc::new(app);
    let tasks: Vec<_> = (0..40)
        .map(|_| {
            let (app, url, token) = (app.clone(), url.clone(), token.clone());
            tokio::spawn(async move {
                app.post(&url, &token, json!({"value": "-0.50"}))
                    .await
                    .status
            })
        })
        .collect();
    let mut ok = 0;
    let mut conflict = 0;
    for t in tasks {
        match t.await.expect("task") {
            200 => ok += 1,
            409 => conflict += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((ok, conflict), (20, 20));
    let shown = app.get(&format!("{CARDS}{}/", c["id"]), &token).await;
    assert_eq!(shown.body["value"], "0.00");
    let t = app
        .get(
            &format!("{CARDS}{}/transactions/?page_size=50", c["id"]),
            &token,
        )
        .await;
    assert_eq!(t.body["count"], 21);
    assert_eq!(sum(&t.body), 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_bookings_are_each_answered_with_the_balance_their_ledger_entry_left() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "5.00", "currency": "EUR"})).await;
    let url = format!("{CARDS}{}/transact/", c["id"]);
    let app = std::sync::Arc::new(app);
    // Debits of 1.00 and credits of 0.30 racing: some debits find the card too low.
    let tasks: Vec<_> = (0..60)
        .map(|i| {
            let (app, url, token) = (app.clone(), url.clone(), token.clone());
            let value = if i % 3 == 0 { "0.30" } else { "-1.00" };
            tokio::spawn(async move {
                let r = app.post(&url, &token, json!({"value": value})).await;
                (r.status, r.body)
            })
        })
        .collect();
    let mut answered = Vec::new();
    let mut refused = 0;
    for t in tasks {
        match t.await.expect("task") {
            (200, body) => answered.push(cents(&body["value"])),
            (409, body) => {
                assert!(body["value"].is_array(), "{body}");
                refused += 1;
            }
            (status, body) => panic!("unexpected {status}: {body}"),
        }
    }
    let ledger = app
        .get(
            &format!("{CARDS}{}/transactions/?ordering=id&page_size=100", c["id"]),
            &token,
        )
        .await;
    let entries = ledger.body["results"].as_array().expect("entries");
    assert_eq!(answered.len() + refused, 60);
    assert!(refused > 0, "the credits cannot cover 40 debits of 1.00");
    let balance = check_ledger(entries, answered);
    let shown = app.get(&format!("{CARDS}{}/", c["id"]), &token).await;
    assert_eq!(cents(&shown.body["value"]), balance);
}

#[tokio::test]
async fn times_are_given_to_the_microsecond_as_pretix_gives_them() {
    let (app, token) = setup().await;
    let c = card(&app, &token, json!({"value": "5.00", "currency": "EUR"})).await;
    let issued = c["issuance"].as_str().expect("issuance");
    let seconds_and_fraction = issued
        .split('T')
        .nth(1)
        .and_then(|t| t.split(['+', 'Z']).next())
        .expect("a time");
    let fraction = seconds_and_fraction.split('.').nth(1).unwrap_or("");
    assert!(fraction.len() <= 6, "at most microseconds: {issued}");
    let ledger = app
        .get(&format!("{CARDS}{}/transactions/", c["id"]), &token)
        .await;
    let at = ledger.body["results"][0]["datetime"]
        .as_str()
        .expect("datetime");
    assert!(
        at.ends_with('Z') && at.split('.').nth(1).is_none_or(|f| f.len() == 6 + 1),
        "in UTC with Z and microseconds, as pretix prints them: {at}"
    );
    let shown = app.get(&format!("{CARDS}{}/", c["id"]), &token).await;
    assert_eq!(shown.body["issuance"], c["issuance"], "as stored");
}
