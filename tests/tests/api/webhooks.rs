//! Webhooks: the resource as pretix's, calls written with the changes they tell of and
//! delivered to a receiver in the test that checks their signature, retries after failures,
//! 410 Gone, the calls list and sending a failed call again, and targets on private
//! networks refused unless the operator allows them.

use std::sync::{Arc, Mutex};

use hmac::{Hmac, Mac};
use poem::http::StatusCode;
use poem::listener::TcpListener;
use poem::{EndpointExt, Route, handler, post};
use serde_json::{Value, json};
use sha2::Sha256;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera::domain::webhooks::deliver_due;
use tessera_tests::TestApp;

use crate::selling_support::{EVENT, Shop, shop_on};

const HOOKS: &str = "/api/v1/organizers/acme/webhooks/";

/// A call as received: its `X-Webhook-Signature` and its body.
type Call = (String, Vec<u8>);

/// What the receiver got, and what it answers.
#[derive(Clone, Default)]
struct Received {
    calls: Arc<Mutex<Vec<Call>>>,
    /// Statuses to answer, in turn; 200 when used up.
    answers: Arc<Mutex<Vec<u16>>>,
}

#[handler]
fn receive(req: &poem::Request, body: Vec<u8>, got: poem::web::Data<&Received>) -> StatusCode {
    let signature = req
        .header("X-Webhook-Signature")
        .unwrap_or_default()
        .to_owned();
    got.calls.lock().expect("calls").push((signature, body));
    let mut answers = got.answers.lock().expect("answers");
    let code = if answers.is_empty() {
        200
    } else {
        answers.remove(0)
    };
    StatusCode::from_u16(code).unwrap_or(StatusCode::OK)
}

/// A receiver on a loopback port; its URL.
async fn receiver(got: &Received) -> String {
    let app = Route::new().at("/hook", post(receive)).data(got.clone());
    serve_on_loopback(app, "/hook").await
}

/// Serves `app` on a loopback port once it listens; its URL for `path`.
async fn serve_on_loopback<E>(app: E, path: &str) -> String
where
    E: poem::IntoEndpoint + Send + 'static,
    E::Endpoint: 'static,
{
    let port = tessera_tests::process::free_port();
    tokio::spawn(poem::Server::new(TcpListener::bind(format!("127.0.0.1:{port}"))).run(app));
    for _ in 0..50 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    format!("http://127.0.0.1:{port}{path}")
}

/// How a receiver checks a call: the HMAC of `<t>.<body>` with the secret, and a recent `t`.
fn verify(secret: &str, header: &str, body: &[u8]) -> bool {
    let mut t = None;
    let mut v1 = None;
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = value.parse::<i64>().ok(),
            Some(("v1", value)) => v1 = Some(value.to_owned()),
            _ => {}
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else {
        return false;
    };
    let fresh = (chrono::Utc::now().timestamp() - t).abs() < 300;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    fresh && expected == v1
}

async fn allowing_private_targets() -> Shop {
    shop_with(|c| c.webhooks_allow_private_targets = true).await
}

async fn shop_with(f: impl FnOnce(&mut tessera::config::Config)) -> Shop {
    shop_on(TestApp::spawn_with(f).await, None).await
}

async fn deliver(s: &Shop) -> usize {
    deliver_due(&s.app.db, true).await.expect("delivery")
}

async fn hook(s: &Shop, url: &str, actions: &[&str]) -> Value {
    let r = s
        .app
        .post(
            HOOKS,
            &s.token,
            json!({"target_url": url, "action_types": actions, "comment": "shop"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

/// Makes every call due now, as if its retry time had come.
async fn make_due(s: &Shop) {
    use sea_orm::ConnectionTrait;
    s.app
        .db
        .execute_unprepared("UPDATE webhook_calls SET next_attempt = created")
        .await
        .expect("due");
}

#[tokio::test]
async fn an_order_placed_is_told_to_the_webhook_in_a_signed_call() {
    let s = allowing_private_targets().await;
    let got = Received::default();
    let url = receiver(&got).await;
    let created = hook(
        &s,
        &url,
        &["pretix.event.order.placed", "pretix.event.order.paid"],
    )
    .await;
    let secret = created["secret"]
        .as_str()
        .expect("secret shown once")
        .to_owned();
    assert_eq!(created["enabled"], true);
    assert_eq!(created["all_events"], true);
    let shown = s
        .app
        .get(&format!("{HOOKS}{}/", created["id"]), &s.token)
        .await;
    assert!(shown.body.get("secret").is_none(), "{}", shown.body);

    let order = s.ordered(1, json!({})).await;
    let code = order["code"].as_str().expect("code").to_owned();
    assert_eq!(deliver(&s).await, 1);

    let calls = got.calls.lock().expect("calls").clone();
    assert_eq!(calls.len(), 1);
    let (signature, body) = &calls[0];
    assert!(verify(&secret, signature, body), "{signature}");
    assert!(!verify("another secret", signature, body));
    let payload: Value = serde_json::from_slice(body).expect("json");
    assert_eq!(payload["organizer"], "acme");
    assert_eq!(payload["event"], "conf");
    assert_eq!(payload["code"], code.as_str());
    assert_eq!(payload["action"], "pretix.event.order.placed");
    assert!(payload["notification_id"].is_i64());

    let list = s
        .app
        .get(&format!("{HOOKS}{}/calls/", created["id"]), &s.token)
        .await;
    assert_eq!(list.body["count"], 1);
    let call = &list.body["results"][0];
    assert_eq!(call["state"], "success");
    assert_eq!(call["success"], true);
    assert_eq!(call["return_code"], 200);
    assert!(call["execution_time"].is_f64());
    assert_eq!(call["payload"], payload);
    assert_eq!(deliver(&s).await, 0, "delivered once");

    let rotated = s
        .app
        .post(
            &format!("{HOOKS}{}/rotate_secret/", created["id"]),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let new_secret = rotated.body["secret"].as_str().expect("secret").to_owned();
    assert_ne!(new_secret, secret);
    let code = s.ordered(1, json!({})).await["code"].clone();
    s.app
        .post(
            &format!("{EVENT}/orders/{}/mark_paid/", code.as_str().unwrap_or("")),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(deliver(&s).await, 2, "placed and paid");
    // Calls of one webhook may arrive in either order: two are delivered at a time.
    let calls = got.calls.lock().expect("calls").clone();
    let mut actions = Vec::new();
    for (signature, body) in &calls[1..] {
        assert!(verify(&new_secret, signature, body));
        assert!(
            !verify(&secret, signature, body),
            "the old secret no longer signs"
        );
        let payload: Value = serde_json::from_slice(body).expect("json");
        actions.push(payload["action"].as_str().unwrap_or_default().to_owned());
    }
    actions.sort();
    assert_eq!(
        actions,
        ["pretix.event.order.paid", "pretix.event.order.placed"]
    );
}

#[tokio::test]
async fn a_failing_receiver_is_called_again_later_and_410_disables_the_webhook() {
    let s = allowing_private_targets().await;
    let got = Received::default();
    *got.answers.lock().expect("answers") = vec![500, 503];
    let url = receiver(&got).await;
    let created = hook(&s, &url, &["pretix.event.order.placed"]).await;
    let calls_url = format!("{HOOKS}{}/calls/", created["id"]);
    s.ordered(1, json!({})).await;

    assert_eq!(deliver(&s).await, 1);
    assert_eq!(deliver(&s).await, 0, "the retry waits");
    let call = s.app.get(&calls_url, &s.token).await.body["results"][0].clone();
    assert_eq!(call["state"], "pending");
    assert_eq!(call["return_code"], 500);
    assert_eq!(call["attempts"], 1);
    assert!(call["next_attempt"].is_string());
    make_due(&s).await;
    assert_eq!(deliver(&s).await, 1);
    make_due(&s).await;
    assert_eq!(deliver(&s).await, 1);
    let call = s.app.get(&calls_url, &s.token).await.body["results"][0].clone();
    assert_eq!(call["state"], "success", "{call}");
    assert_eq!(call["attempts"], 3);
    assert_eq!(call["is_retry"], true);
    assert_eq!(got.calls.lock().expect("calls").len(), 3);

    *got.answers.lock().expect("answers") = vec![410];
    s.ordered(1, json!({})).await;
    assert_eq!(deliver(&s).await, 1);
    let shown = s
        .app
        .get(&format!("{HOOKS}{}/", created["id"]), &s.token)
        .await;
    assert_eq!(shown.body["enabled"], false, "gone: {}", shown.body);
    let gone = s.app.get(&calls_url, &s.token).await.body["results"][0].clone();
    assert_eq!(gone["state"], "failed");
    assert_eq!(gone["return_code"], 410);
    s.ordered(1, json!({})).await;
    make_due(&s).await;
    assert_eq!(deliver(&s).await, 0, "a disabled webhook gets no calls");

    s.app
        .patch(
            &format!("{HOOKS}{}/", created["id"]),
            &s.token,
            json!({"enabled": true}),
        )
        .await;
    let retry = s
        .app
        .post(
            &format!("{calls_url}{}/retry/", gone["id"]),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.body["state"], "pending");
    assert_eq!(deliver(&s).await, 1);
    // No call was written while the webhook was disabled: the one sent again is the newest.
    let again = s.app.get(&calls_url, &s.token).await.body["results"][0].clone();
    assert_eq!(again["id"], gone["id"]);
    assert_eq!(again["state"], "success", "{again}");
    let not_failed = s
        .app
        .post(
            &format!("{calls_url}{}/retry/", gone["id"]),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(not_failed.status, 400);
}

#[tokio::test]
async fn webhooks_hear_only_their_action_types_and_events() {
    let s = allowing_private_targets().await;
    let got = Received::default();
    let url = receiver(&got).await;
    let paid_only = hook(&s, &url, &["pretix.event.order.paid"]).await;
    let r = s
        .app
        .post(
            HOOKS,
            &s.token,
            json!({"target_url": url, "action_types": ["pretix.event.order.placed"],
                   "all_events": false, "limit_events": []}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    s.ordered(1, json!({})).await;
    assert_eq!(
        deliver(&s).await,
        0,
        "nobody listens to placed orders of this event"
    );

    let limited = s
        .app
        .patch(
            &format!("{HOOKS}{}/", r.body["id"]),
            &s.token,
            json!({"limit_events": ["conf"]}),
        )
        .await;
    assert_eq!(limited.status, 200, "{}", limited.body);
    assert_eq!(limited.body["limit_events"], json!(["conf"]));
    s.ordered(1, json!({})).await;
    assert_eq!(deliver(&s).await, 1);

    let deleted = s
        .app
        .delete(&format!("{HOOKS}{}/", paid_only["id"]), &s.token)
        .await;
    assert_eq!(deleted.status, 204);
    let shown = s
        .app
        .get(&format!("{HOOKS}{}/", paid_only["id"]), &s.token)
        .await;
    assert_eq!(shown.body["enabled"], false, "DELETE disables");
}

#[tokio::test]
async fn a_webhook_added_after_orders_without_one_hears_the_next_order() {
    let s = allowing_private_targets().await;
    // Orders without any webhook write no calls (the organizer's lack of webhooks is kept).
    s.ordered(1, json!({})).await;
    assert_eq!(webhook_calls(&s).await, 0);
    let got = Received::default();
    let url = receiver(&got).await;
    let created = hook(&s, &url, &["pretix.event.order.placed"]).await;
    s.ordered(1, json!({})).await;
    assert_eq!(webhook_calls(&s).await, 1);
    assert_eq!(deliver(&s).await, 1);

    // Disabled again: nothing more is written.
    let deleted = s
        .app
        .delete(&format!("{HOOKS}{}/", created["id"]), &s.token)
        .await;
    assert_eq!(deleted.status, 204);
    s.ordered(1, json!({})).await;
    assert_eq!(webhook_calls(&s).await, 1);
}

async fn webhook_calls(s: &Shop) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    tessera::db::entities::webhook_call::Entity::find()
        .count(&s.app.db)
        .await
        .expect("count")
}

#[tokio::test]
async fn targets_on_special_purpose_networks_and_bad_input_are_refused() {
    let s = shop_with(|_| {}).await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://10.0.0.8/hook",
        "http://[::1]/hook",
        "http://localhost/hook",
        "http://[::127.0.0.1]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[2002:7f00:1::1]/hook",
        "http://198.18.0.1/hook",
        "http://240.0.0.1/hook",
        "http://192.0.0.1/hook",
        "http://[fec0::1]/hook",
    ] {
        let r = s
            .app
            .post(
                HOOKS,
                &s.token,
                json!({"target_url": url, "action_types": ["pretix.event.order.placed"]}),
            )
            .await;
        assert_eq!(r.status, 400, "{url}: {}", r.body);
        assert!(r.body["target_url"][0].is_string(), "{}", r.body);
    }
    let r = s
        .app
        .post(
            HOOKS,
            &s.token,
            json!({"target_url": "ftp://example.org/", "action_types": ["nope"],
                   "all_events": false, "limit_events": ["missing"]}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    for field in ["target_url", "action_types", "limit_events"] {
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
    assert_eq!(s.app.get(HOOKS, &s.token).await.body["count"], 0);

    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    assert_eq!(s.app.get(HOOKS, &viewer).await.status, 403);
}

#[tokio::test]
async fn changes_of_events_products_vouchers_and_gift_cards_are_told_with_their_ids() {
    let s = allowing_private_targets().await;
    let got = Received::default();
    let url = receiver(&got).await;
    hook(
        &s,
        &url,
        &[
            "pretix.event.changed",
            "pretix.event.item.added",
            "pretix.event.voucher.added",
            "pretix.giftcards.created",
            "pretix.giftcards.transaction.manual",
        ],
    )
    .await;
    let changed = s
        .app
        .patch(
            &format!("{EVENT}/"),
            &s.token,
            json!({"location": {"en": "Hall 3"}}),
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let item = crate::selling_support::item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Scarf"}, "default_price": "9.00"}),
    )
    .await;
    let voucher = s
        .app
        .post(
            &format!("{EVENT}/vouchers/"),
            &s.token,
            json!({"code": "WELCOME"}),
        )
        .await;
    assert_eq!(voucher.status, 201, "{}", voucher.body);
    let card = s
        .app
        .post(
            "/api/v1/organizers/acme/giftcards/",
            &s.token,
            json!({"value": "10.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(card.status, 201, "{}", card.body);
    let spent = s
        .app
        .post(
            &format!(
                "/api/v1/organizers/acme/giftcards/{}/transact/",
                card.body["id"]
            ),
            &s.token,
            json!({"value": "-4.00"}),
        )
        .await;
    assert_eq!(spent.status, 200, "{}", spent.body);

    assert_eq!(deliver(&s).await, 5);
    let payloads: Vec<Value> = got
        .calls
        .lock()
        .expect("calls")
        .iter()
        .map(|(_, body)| serde_json::from_slice(body).expect("json"))
        .collect();
    let find = |action: &str| {
        payloads
            .iter()
            .find(|p| p["action"] == action)
            .cloned()
            .unwrap_or_else(|| panic!("{action} in {payloads:?}"))
    };
    assert_eq!(find("pretix.event.changed")["event"], "conf");
    assert_eq!(find("pretix.event.item.added")["item_id"], item["id"]);
    assert_eq!(
        find("pretix.event.voucher.added")["voucher_id"],
        voucher.body["id"]
    );
    let gift = find("pretix.giftcards.created");
    assert_eq!(gift["giftcard"], card.body["id"]);
    assert_eq!(gift["organizer"], "acme");
    assert!(gift.get("event").is_none());
    let spent = find("pretix.giftcards.transaction.manual");
    assert_eq!(spent["giftcard"], card.body["id"]);
    assert!(spent["transaction"].is_i64(), "{spent}");
}

#[tokio::test]
async fn a_team_limited_to_events_hears_only_of_them_and_reaches_no_webhook_of_others() {
    let s = allowing_private_targets().await;
    s.app.event("acme", "other").await;
    let settings = PermissionSet::from_iter([Permission::ChangeOrganizerSettings]);
    let limited = s.app.token_for("acme", Some(settings), &["other"]).await;
    let url = "http://127.0.0.1:9/hook";
    let r = s
        .app
        .post(
            HOOKS,
            &limited,
            json!({"target_url": url, "action_types": ["pretix.event.order.placed"]}),
        )
        .await;
    assert_eq!(r.status, 403, "all events by default: {}", r.body);
    let body = json!({"target_url": url, "all_events": false, "limit_events": ["other"], "action_types": ["pretix.event.order.placed"]});
    let r = s.app.post(HOOKS, &limited, body).await;
    assert_eq!(r.status, 201, "its own event: {}", r.body);
    let own = r.body["id"].as_i64().expect("an ID");
    let r = s
        .app
        .patch(
            &format!("{HOOKS}{own}/"),
            &limited,
            json!({"all_events": true}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let theirs = hook(&s, url, &["pretix.event.order.placed"]).await["id"]
        .as_i64()
        .expect("an ID");
    let one = format!("{HOOKS}{theirs}/");
    let narrowed = json!({"all_events": false, "limit_events": ["other"]});
    assert_eq!(s.app.patch(&one, &limited, narrowed).await.status, 403);
    let rotate = format!("{one}rotate_secret/");
    assert_eq!(s.app.post(&rotate, &limited, json!({})).await.status, 403);
    assert_eq!(
        s.app.get(&format!("{one}calls/"), &limited).await.status,
        403
    );
    assert_eq!(s.app.delete(&one, &limited).await.status, 403);
    let r = s.app.get(&one, &s.token).await;
    assert_eq!(
        (r.body["all_events"].clone(), r.body["enabled"].clone()),
        (json!(true), json!(true))
    );
}

/// A receiver that holds each call for a second, counting the calls it holds at once.
#[derive(Clone, Default)]
struct Slow {
    started: Arc<std::sync::atomic::AtomicUsize>,
    holding: Arc<std::sync::atomic::AtomicUsize>,
    most_at_once: Arc<std::sync::atomic::AtomicUsize>,
}

#[handler]
async fn slowly(got: poem::web::Data<&Slow>) -> StatusCode {
    use std::sync::atomic::Ordering::SeqCst;
    got.started.fetch_add(1, SeqCst);
    let now = got.holding.fetch_add(1, SeqCst) + 1;
    got.most_at_once.fetch_max(now, SeqCst);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    got.holding.fetch_sub(1, SeqCst);
    StatusCode::OK
}

/// What the fast receiver saw: how many slow calls had started when it was called.
#[derive(Clone, Default)]
struct Fast {
    slow_started_before: Arc<Mutex<Vec<usize>>>,
    slow: Slow,
}

#[handler]
fn quickly(got: poem::web::Data<&Fast>) -> StatusCode {
    let started = got.slow.started.load(std::sync::atomic::Ordering::SeqCst);
    got.slow_started_before.lock().expect("seen").push(started);
    StatusCode::OK
}

#[tokio::test]
async fn a_slow_receiver_holds_up_only_its_own_webhook_two_calls_at_a_time() {
    let s = allowing_private_targets().await;
    let fast = Fast::default();
    let slow_url = serve_on_loopback(
        Route::new()
            .at("/slow", post(slowly))
            .data(fast.slow.clone()),
        "/slow",
    )
    .await;
    let fast_url = serve_on_loopback(
        Route::new().at("/fast", post(quickly)).data(fast.clone()),
        "/fast",
    )
    .await;
    hook(&s, &slow_url, &["pretix.event.order.placed"]).await;
    for _ in 0..6 {
        s.ordered(1, json!({})).await;
    }
    s.app.organizer("other").await;
    let theirs = s.app.admin_token("other").await;
    let body = json!({"target_url": fast_url, "action_types": ["pretix.event.added"]});
    let r = s
        .app
        .post("/api/v1/organizers/other/webhooks/", &theirs, body)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = s
        .app
        .post(
            "/api/v1/organizers/other/events/",
            &theirs,
            json!({"name": {"en": "Later"}, "slug": "later", "currency": "EUR", "date_from": "2030-01-01T10:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);

    assert_eq!(deliver(&s).await, 7);
    let seen = fast.slow_started_before.lock().expect("seen").clone();
    assert_eq!(seen.len(), 1, "the other organizer's call, once: {seen:?}");
    assert!(
        seen[0] <= 2,
        "it came before the slow webhook's third call: {seen:?}"
    );
    let slow = &fast.slow;
    assert_eq!(
        slow.started.load(std::sync::atomic::Ordering::SeqCst),
        6,
        "each call once"
    );
    assert_eq!(
        slow.most_at_once.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
}

#[handler]
fn endless(produced: poem::web::Data<&Arc<std::sync::atomic::AtomicUsize>>) -> poem::Response {
    let produced = produced.0.clone();
    let chunks = futures::stream::unfold(0usize, move |sent| {
        let produced = produced.clone();
        async move {
            (sent < 300 << 20).then(|| {
                produced.fetch_add(64 << 10, std::sync::atomic::Ordering::SeqCst);
                (
                    Ok::<_, std::io::Error>(vec![b'x'; 64 << 10]),
                    sent + (64 << 10),
                )
            })
        }
    });
    poem::Response::builder().body(poem::Body::from_bytes_stream(chunks))
}

#[tokio::test]
async fn a_receivers_endless_answer_is_read_only_as_far_as_it_is_kept() {
    let s = allowing_private_targets().await;
    let produced = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let url = serve_on_loopback(
        Route::new()
            .at("/endless", post(endless))
            .data(produced.clone()),
        "/endless",
    )
    .await;
    let created = hook(&s, &url, &["pretix.event.order.placed"]).await;
    s.ordered(1, json!({})).await;
    assert_eq!(deliver(&s).await, 1);
    let calls = s
        .app
        .get(&format!("{HOOKS}{}/calls/", created["id"]), &s.token)
        .await;
    let call = &calls.body["results"][0];
    assert_eq!(call["state"], "success", "{call}");
    assert_eq!(call["response_body"].as_str().map(str::len), Some(1000));
    let read = produced.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        read < 64 << 20,
        "{read} bytes of 300 MiB made before the call hung up"
    );
}
