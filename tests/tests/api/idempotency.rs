//! `X-Idempotency-Key` on writes: the same key repeats the answer, the work is done once.

use chrono::{Duration, Utc};
use poem::http::Method;
use sea_orm::{EntityTrait, PaginatorTrait, Set};
use serde_json::{Value, json};
use tessera::db::count_queries;
use tessera::db::entities::idempotency_key;
use tessera_tests::{Reply, TestApp};

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn setup() -> (TestApp, String, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_manage_gift_cards"]).await;
    let r = app
        .post(CARDS, &token, json!({"value": "10.00", "currency": "EUR"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let transact = format!("{CARDS}{}/transact/", r.body["id"]);
    (app, token, transact)
}

/// A request with the token, a JSON body and an idempotency key.
async fn keyed(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    key: &str,
    body: Value,
) -> Reply {
    let auth = format!("Token {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("X-Idempotency-Key", key),
    ];
    app.raw(method, path, &headers, body.to_string().into_bytes())
        .await
}

async fn spend(app: &TestApp, token: &str, transact: &str, key: &str) -> Reply {
    keyed(
        app,
        Method::POST,
        transact,
        token,
        key,
        json!({"value": "-3.00"}),
    )
    .await
}

async fn balance(app: &TestApp, token: &str, transact: &str) -> String {
    let card = transact.trim_end_matches("transact/");
    let r = app.get(card, token).await;
    r.body["value"].as_str().expect("value").to_owned()
}

/// Changes every stored key, as time or a crash would.
async fn age_keys(app: &TestApp, state: &str, created: chrono::DateTime<Utc>) {
    idempotency_key::Entity::update_many()
        .set(idempotency_key::ActiveModel {
            state: Set(state.into()),
            created: Set(created),
            ..Default::default()
        })
        .exec(&app.db)
        .await
        .expect("update");
}

async fn stored_keys(app: &TestApp) -> u64 {
    idempotency_key::Entity::find()
        .count(&app.db)
        .await
        .expect("count")
}

#[tokio::test]
async fn the_same_key_twice_repeats_the_answer_and_does_the_work_once() {
    let (app, token, transact) = setup().await;

    let first = spend(&app, &token, &transact, "spend-1").await;
    let second = spend(&app, &token, &transact, "spend-1").await;

    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(second.status, first.status);
    assert_eq!(second.body, first.body);
    assert_eq!(second.header("content-type"), first.header("content-type"));
    assert_eq!(balance(&app, &token, &transact).await, "7.00");
}

#[tokio::test]
async fn a_created_object_is_answered_again_and_created_once() {
    let (app, token, _) = setup().await;
    let body = json!({"value": "5.00", "currency": "EUR"});

    let first = keyed(&app, Method::POST, CARDS, &token, "card", body.clone()).await;
    let second = keyed(&app, Method::POST, CARDS, &token, "card", body).await;

    assert_eq!((first.status, second.status), (201, 201));
    assert_eq!(second.body, first.body);
    let cards = app.get(CARDS, &token).await;
    assert_eq!(cards.body["count"], 2, "the setup's card and this one");
}

#[tokio::test]
async fn the_trailing_slash_does_not_make_another_request() {
    let (app, token, transact) = setup().await;

    spend(&app, &token, &transact, "slash").await;
    let again = spend(&app, &token, transact.trim_end_matches('/'), "slash").await;

    assert_eq!(again.status, 200);
    assert_eq!(balance(&app, &token, &transact).await, "7.00");
}

#[tokio::test]
async fn different_credentials_with_the_same_key_are_independent() {
    let (app, token, transact) = setup().await;
    let other = app.token("acme", &["can_manage_gift_cards"]).await;

    let mine = spend(&app, &token, &transact, "shared").await;
    let theirs = spend(&app, &other, &transact, "shared").await;

    assert_eq!((mine.status, theirs.status), (200, 200));
    assert_eq!(balance(&app, &token, &transact).await, "4.00");
}

#[tokio::test]
async fn a_request_still_in_progress_with_the_key_is_answered_409_with_retry_after() {
    let (app, token, transact) = setup().await;
    spend(&app, &token, &transact, "busy").await;
    age_keys(&app, "in_progress", Utc::now()).await;

    let r = spend(&app, &token, &transact, "busy").await;

    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(r.body["detail"].as_str().expect("detail").contains("still"));
    assert_eq!(balance(&app, &token, &transact).await, "7.00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_with_one_key_do_the_work_once() {
    let (app, token, transact) = setup().await;

    let replies =
        futures::future::join_all((0..8).map(|_| spend(&app, &token, &transact, "race"))).await;

    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert!(
        statuses.iter().all(|s| [200, 409].contains(s)),
        "{statuses:?}"
    );
    assert!(statuses.contains(&200));
    assert_eq!(balance(&app, &token, &transact).await, "7.00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_keyed_debits_racing_for_one_card_take_it_to_zero_and_no_lower() {
    let (app, token, transact) = setup().await;
    let app = std::sync::Arc::new(app);

    let replies = futures::future::join_all((0..40).map(|i| {
        let (app, token, transact) = (app.clone(), token.clone(), transact.clone());
        async move {
            let debit = json!({"value": "-0.50"});
            keyed(
                &app,
                Method::POST,
                &transact,
                &token,
                &format!("d{i}"),
                debit,
            )
            .await
        }
    }))
    .await;

    let ok = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 409).count();
    assert_eq!((ok, refused), (20, 20));
    assert_eq!(balance(&app, &token, &transact).await, "0.00");
}

#[tokio::test]
async fn an_expired_key_is_treated_as_new() {
    let (app, token, transact) = setup().await;
    spend(&app, &token, &transact, "old").await;
    age_keys(&app, "done", Utc::now() - Duration::hours(25)).await;

    let r = spend(&app, &token, &transact, "old").await;

    assert_eq!(r.status, 200);
    assert_eq!(balance(&app, &token, &transact).await, "4.00");
    let again = spend(&app, &token, &transact, "old").await;
    assert_eq!(again.body, r.body, "the new answer is kept");
    assert_eq!(stored_keys(&app).await, 1);
}

#[tokio::test]
async fn a_key_abandoned_in_progress_for_minutes_is_taken_over() {
    let (app, token, transact) = setup().await;
    spend(&app, &token, &transact, "crashed").await;
    age_keys(&app, "in_progress", Utc::now() - Duration::minutes(6)).await;

    let r = spend(&app, &token, &transact, "crashed").await;

    assert_eq!(r.status, 200);
    assert_eq!(balance(&app, &token, &transact).await, "4.00");
}

#[tokio::test]
async fn a_key_used_for_another_request_is_refused_with_400() {
    let (app, token, transact) = setup().await;
    spend(&app, &token, &transact, "one-use").await;

    let body = json!({"value": "5.00", "currency": "EUR"});
    let r = keyed(&app, Method::POST, CARDS, &token, "one-use", body).await;

    assert_eq!(r.status, 400, "{}", r.body);
    let detail = r.body["detail"].as_str().expect("detail");
    assert!(detail.contains("another request"), "{detail}");
    assert_eq!(app.get(CARDS, &token).await.body["count"], 1);
}

#[tokio::test]
async fn a_refusal_is_a_final_answer_and_repeated() {
    let (app, token, transact) = setup().await;
    let overdraw = json!({"value": "-50.00"});

    let first = keyed(
        &app,
        Method::POST,
        &transact,
        &token,
        "no",
        overdraw.clone(),
    )
    .await;
    spend(&app, &token, &transact, "meanwhile").await;
    let second = keyed(&app, Method::POST, &transact, &token, "no", overdraw).await;

    assert_eq!(first.status, 409, "{}", first.body);
    assert_eq!(second.status, 409);
    assert_eq!(second.body, first.body);
}

#[tokio::test]
async fn requests_that_are_not_authenticated_writes_keep_no_key() {
    let (app, token, transact) = setup().await;

    let wrong = spend(&app, "not-a-token", &transact, "k").await;
    let anonymous = app
        .raw(
            Method::POST,
            &transact,
            &[("X-Idempotency-Key", "k")],
            Vec::new(),
        )
        .await;
    let read = keyed(&app, Method::GET, CARDS, &token, "k", Value::Null).await;

    assert_eq!(
        (wrong.status, anonymous.status, read.status),
        (401, 401, 200)
    );
    assert_eq!(stored_keys(&app).await, 0);
}

#[tokio::test]
async fn an_overlong_key_is_refused() {
    let (app, token, transact) = setup().await;

    let r = spend(&app, &token, &transact, &"k".repeat(256)).await;

    assert_eq!(r.status, 400);
    assert_eq!(balance(&app, &token, &transact).await, "10.00");
}

#[tokio::test]
async fn a_key_costs_two_queries_and_so_does_a_repeated_answer() {
    // A change of the card's terms: one transaction in the request's own task (bookings on
    // a card are applied by its queue's task, whose statements the count would not see).
    let (app, token, transact) = setup().await;
    let card = transact.trim_end_matches("transact/");
    let terms = |text: &str| json!({"conditions": text});
    app.patch(card, &token, terms("first")).await;

    settle(&app, &token).await;
    let (_, without) = count_queries(app.patch(card, &token, terms("plain"))).await;
    settle(&app, &token).await;
    let (_, with_key) = count_queries(keyed(
        &app,
        Method::PATCH,
        card,
        &token,
        "q",
        terms("keyed"),
    ))
    .await;
    settle(&app, &token).await;
    let (_, repeated) = count_queries(keyed(
        &app,
        Method::PATCH,
        card,
        &token,
        "q",
        terms("keyed"),
    ))
    .await;

    assert!(without > 0);
    assert_eq!(with_key, without + 2);
    assert_eq!(repeated, 2, "the claim that finds the key, and its answer");
}

/// Lets changes announced asynchronously (on PostgreSQL) arrive, and makes a request that
/// reads the configuration version a write left to read (on SQLite), so that the next
/// request's queries are its own.
async fn settle(app: &TestApp, token: &str) {
    let mut last = None;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let now = app.state.cache.generation().await;
        if now == last {
            break;
        }
        last = now;
    }
    app.get(CARDS, token).await;
}
