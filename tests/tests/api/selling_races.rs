//! No oversell under real concurrency: many orders and carts racing for a quota or for
//! seats, all sent at once to one server (several processes: app/tests/cli.rs).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tessera_tests::{Reply, TestApp};

use crate::selling_support::{EVENT, Shop, availability, shop};

/// Whether each request of a race carries an `X-Idempotency-Key` of its own: then each holds
/// its transaction open until its answer is stored with it.
#[derive(Clone, Copy)]
enum Keys {
    None,
    EachItsOwn,
}

/// Sends all bodies at once to `path`; gives the statuses, in order.
async fn race(app: &Arc<TestApp>, token: &str, path: &str, bodies: Vec<Value>) -> Vec<u16> {
    race_with(app, token, path, bodies, Keys::None).await
}

async fn race_with(
    app: &Arc<TestApp>,
    token: &str,
    path: &str,
    bodies: Vec<Value>,
    keys: Keys,
) -> Vec<u16> {
    let replies = race_for_replies(app, token, path, bodies, keys).await;
    replies.into_iter().map(|r| r.status).collect()
}

/// Sends all bodies at once to `path`; gives the replies, in order.
async fn race_for_replies(
    app: &Arc<TestApp>,
    token: &str,
    path: &str,
    bodies: Vec<Value>,
    keys: Keys,
) -> Vec<Reply> {
    let tasks: Vec<_> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            let (app, path) = (app.clone(), path.to_owned());
            let auth = format!("Token {token}");
            tokio::spawn(async move {
                let key = format!("buyer-{i}");
                let mut headers = vec![
                    ("Authorization", auth.as_str()),
                    ("Content-Type", "application/json"),
                ];
                if let Keys::EachItsOwn = keys {
                    headers.push(("X-Idempotency-Key", key.as_str()));
                }
                let bytes = body.to_string().into_bytes();
                app.raw(poem::http::Method::POST, &path, &headers, bytes)
                    .await
            })
        })
        .collect();
    let mut replies = Vec::new();
    for t in tasks {
        replies.push(t.await.expect("task"));
    }
    replies
}

fn tally(statuses: &[u16]) -> (usize, usize) {
    for s in statuses {
        assert!(matches!(s, 201 | 400), "unexpected status {s}");
    }
    let ok = statuses.iter().filter(|&&s| s == 201).count();
    (ok, statuses.len() - ok)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_concurrent_orders_sell_exactly_a_quota_of_one_hundred() {
    let Shop {
        app,
        token,
        ticket,
        quota,
        ..
    } = shop(Some(100)).await;
    let app = Arc::new(app);
    let bodies = (0..500)
        .map(|i| {
            json!({
                "email": format!("buyer{i}@example.org"),
                "payment_provider": "manual",
                "status": if i % 2 == 0 { "p" } else { "n" },
                "positions": [{"item": ticket}],
            })
        })
        .collect();
    let statuses = race(&app, &token, &format!("{EVENT}/orders/"), bodies).await;
    assert_eq!(tally(&statuses), (100, 400));
    let a = availability(&app, &token, quota).await;
    assert_eq!(a["available_number"], 0);
    let held = a["paid_orders"].as_i64().unwrap_or(-1) + a["pending_orders"].as_i64().unwrap_or(-1);
    assert_eq!(held, 100, "{a}");
    let orders = app.get(&format!("{EVENT}/orders/"), &token).await.body;
    assert_eq!(orders["count"], 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_orders_are_each_answered_with_their_own_order_and_a_refused_one_takes_nothing()
{
    let s = shop(Some(50)).await;
    let app = Arc::new(s.app);
    // 120 orders of one to three tickets: 240 tickets asked for, 50 to sell.
    let bodies = (0..120)
        .map(|i| {
            let position = json!({"item": s.ticket, "attendee_name_parts": {"full_name": format!("Buyer {i}")}});
            json!({
                "email": format!("buyer{i}@example.org"),
                "payment_provider": "manual",
                "status": if i % 2 == 0 { "p" } else { "n" },
                "positions": vec![position; 1 + i % 3],
            })
        })
        .collect();
    let path = format!("{EVENT}/orders/");
    let replies = race_for_replies(&app, &s.token, &path, bodies, Keys::None).await;
    let left = availability(&app, &s.token, s.quota).await;
    let available = left["available_number"].as_u64().expect("a limited quota") as usize;
    let (mut sold, mut codes) = (0, std::collections::HashSet::new());
    for (i, r) in replies.iter().enumerate() {
        let wanted = 1 + i % 3;
        match r.status {
            201 => {
                assert_eq!(r.body["email"], format!("buyer{i}@example.org"));
                assert_eq!(r.body["status"], if i % 2 == 0 { "p" } else { "n" });
                let positions = r.body["positions"].as_array().expect("positions");
                assert_eq!(positions.len(), wanted, "{}", r.body);
                for p in positions {
                    assert_eq!(p["attendee_name"], format!("Buyer {i}"));
                }
                assert_eq!(r.body["payments"][0]["provider"], "manual");
                let code = r.body["code"].as_str().expect("a code").to_owned();
                let stored = app.get(&format!("{path}{code}/"), &s.token).await;
                assert_eq!(stored.body, r.body, "the answer is the order as stored");
                assert!(codes.insert(code), "each order has a code of its own");
                sold += wanted;
            }
            400 => {
                // Refused whole: its positions that would have fitted took nothing.
                let errors = r.body["positions"]
                    .as_array()
                    .expect("one entry per position");
                assert_eq!(errors.len(), wanted, "{}", r.body);
                assert!(
                    r.body.to_string().contains("not enough quota"),
                    "{}",
                    r.body
                );
                assert!(
                    wanted > available,
                    "order {i} of {wanted} was refused with {available} left"
                );
            }
            other => panic!("order {i}: {other} {}", r.body),
        }
    }
    assert_eq!(sold + available, 50, "{left}");
    assert_eq!(
        left["paid_orders"].as_u64().unwrap_or(0) + left["pending_orders"].as_u64().unwrap_or(0),
        sold as u64,
        "{left}"
    );
    let listed = app
        .get(&format!("{path}?page_size=200"), &s.token)
        .await
        .body;
    assert_eq!(listed["count"], codes.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_its_payment_provider_refuses_is_refused_alone_among_concurrent_orders() {
    use tessera_plugin_banktransfer::BankTransfer;
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(BankTransfer)).await;
    let s = crate::selling_support::shop_on(app, Some(100)).await;
    // Bank transfer is enabled but has no account: it is offered and then not available.
    let r = s
        .app
        .patch(
            &format!("{EVENT}/"),
            &s.token,
            json!({"plugins": ["banktransfer"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let app = Arc::new(s.app);
    let provider = |i: usize| {
        if i.is_multiple_of(2) {
            "manual"
        } else {
            "banktransfer"
        }
    };
    let bodies = (0..40)
        .map(|i| json!({"payment_provider": provider(i), "positions": [{"item": s.ticket}]}))
        .collect();
    let path = format!("{EVENT}/orders/");
    let replies = race_for_replies(&app, &s.token, &path, bodies, Keys::None).await;
    for (i, r) in replies.iter().enumerate() {
        if provider(i) == "manual" {
            assert_eq!(r.status, 201, "{}", r.body);
            assert_eq!(r.body["payments"][0]["provider"], "manual");
        } else {
            assert_eq!(r.status, 400, "{}", r.body);
            assert_eq!(
                r.body,
                json!({"payment_provider": ["The payment provider is not available for this order."]})
            );
        }
    }
    let a = availability(&app, &s.token, s.quota).await;
    assert_eq!(a["pending_orders"], 20, "{a}");
    assert_eq!(app.get(&path, &s.token).await.body["count"], 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_carts_and_orders_together_never_exceed_the_quota() {
    let s = shop(Some(30)).await;
    let app = Arc::new(s.app);
    let carts: Vec<Value> = (0..60)
        .map(|i| json!({"cart_id": format!("cart{i}"), "item": s.ticket, "price": "23.00"}))
        .collect();
    let orders: Vec<Value> = (0..60)
        .map(|_| json!({"positions": [{"item": s.ticket}]}))
        .collect();
    let (cart_path, order_path) = (
        format!("{EVENT}/cartpositions/"),
        format!("{EVENT}/orders/"),
    );
    let (cart_statuses, order_statuses) = tokio::join!(
        race(&app, &s.token, &cart_path, carts),
        race(&app, &s.token, &order_path, orders),
    );
    let (carts_ok, _) = tally(&cart_statuses);
    let (orders_ok, _) = tally(&order_statuses);
    assert_eq!(carts_ok + orders_ok, 30);
    let a = availability(&app, &s.token, s.quota).await;
    assert_eq!(a["cart_positions"], carts_ok);
    assert_eq!(a["pending_orders"], orders_ok);
    assert_eq!(a["available_number"], 0);
}

/// A plan of `n` seats of category "Stalls", given to `conf` with the ticket on Stalls.
pub async fn seat_the_shop(s: &Shop, n: usize) {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use tessera::db::entities::organizer;
    let seats: Vec<Value> = (0..n)
        .map(|i| json!({"seat_guid": format!("s{i}"), "seat_number": format!("{i}"), "category": "Stalls"}))
        .collect();
    let layout = json!({
        "name": "Hall",
        "categories": [{"name": "Stalls"}],
        "zones": [{"name": "Main", "rows": [{"row_number": "1", "seats": seats}]}],
    });
    let r = s
        .app
        .post(
            "/api/v1/organizers/acme/seatingplans/",
            &s.token,
            json!({"name": "Hall", "layout": layout}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let org = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq("acme"))
        .one(&s.app.db)
        .await
        .expect("query")
        .expect("acme")
        .id;
    let mut mapping = Map::new();
    mapping.insert("Stalls".into(), json!(s.ticket));
    tessera::domain::seating::assign(
        &s.app.db,
        org,
        tessera::domain::seating::SeatScope::event(s.event),
        r.body["id"].as_i64(),
        &mapping,
    )
    .await
    .expect("assign");
}

/// Fifty buyers race for ten seats, two for each: each seat is sold once, and sold.
async fn fifty_buyers_race_for_ten_seats(keys: Keys) {
    let s = shop(None).await;
    seat_the_shop(&s, 10).await;
    let app = Arc::new(s.app);
    let bodies = (0..50)
        .map(|i| json!({"positions": [{"item": s.ticket, "seat": format!("s{}", i % 10)}]}))
        .collect();
    let statuses = race_with(&app, &s.token, &format!("{EVENT}/orders/"), bodies, keys).await;
    assert_eq!(tally(&statuses), (10, 40));
    let seats = app
        .get(&format!("{EVENT}/seats/?page_size=50"), &s.token)
        .await
        .body;
    let results = seats["results"].as_array().expect("seats");
    assert_eq!(results.len(), 10);
    assert!(results.iter().all(|seat| seat["sold"] == true), "{seats}");
    let orders = app.get(&format!("{EVENT}/orders/"), &s.token).await.body;
    assert_eq!(orders["count"], 10, "{orders}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_buyers_racing_for_ten_seats_get_each_seat_once() {
    fifty_buyers_race_for_ten_seats(Keys::None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_buyers_with_idempotency_keys_racing_for_ten_seats_get_each_seat_once() {
    fifty_buyers_race_for_ten_seats(Keys::EachItsOwn).await;
}
