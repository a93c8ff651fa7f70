//! Arrangement shared by the catalogue tests: an organizer with an event, items created
//! through the API, and orders inserted directly (the selling issue adds their API).

use std::time::Duration;

use chrono::Utc;
use sea_orm::{ActiveModelTrait, EntityTrait, PrimaryKeyTrait, QuerySelect, Set};
use serde_json::{Value, json};
use tessera::db::entities::{order, order_position};
use tessera_tests::TestApp;

use crate::config_support::add_event;

/// Base path of the event `conf` of organizer `acme`.
pub const EVENT: &str = "/api/v1/organizers/acme/events/conf";

/// A fresh server with organizer `acme`, its event `conf`, and an all-powerful token.
pub async fn catalogue_app() -> (TestApp, i64, String) {
    catalogue_app_on(TestApp::spawn().await).await
}

/// [`catalogue_app`] on a server of the caller's configuration.
pub async fn catalogue_app_on(app: TestApp) -> (TestApp, i64, String) {
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf", false).await;
    let token = app.admin_token("acme").await;
    (app, event, token)
}

/// Adds another event of `acme`; returns its ID.
pub async fn another_event(app: &TestApp, slug: &str) -> i64 {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use tessera::db::entities::organizer;
    let acme = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq("acme"))
        .one(&app.db)
        .await
        .expect("query")
        .expect("acme")
        .id;
    add_event(app, acme, slug, false).await
}

/// POSTs and expects 201; returns the created object.
pub async fn created(app: &TestApp, path: &str, token: &str, body: Value) -> Value {
    let r = app.post(path, token, body).await;
    assert_eq!(r.status, 201, "POST {path}: {}", r.body);
    r.body
}

/// Creates an item of `conf` through the API; returns it.
pub async fn item(app: &TestApp, token: &str, body: Value) -> Value {
    created(app, &format!("{EVENT}/items/"), token, body).await
}

/// Creates a plain item named `name` costing 10.00; returns its ID.
pub async fn plain_item(app: &TestApp, token: &str, name: &str) -> i64 {
    id(&item(
        app,
        token,
        json!({"name": {"en": name}, "default_price": "10.00"}),
    )
    .await)
}

/// The `id` of an object.
pub fn id(v: &Value) -> i64 {
    v["id"].as_i64().expect("id")
}

/// Inserts an order of the event with status `status` (`p` paid, `n` pending) and one
/// position per `(item, variation)`; returns the order ID.
pub async fn add_order(
    app: &TestApp,
    event_id: i64,
    status: &str,
    positions: &[(i64, Option<i64>)],
) -> i64 {
    let o = order::ActiveModel {
        event_id: Set(event_id),
        code: Set(format!("C{}", rand_suffix())),
        status: Set(status.into()),
        datetime: Set(Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("order");
    for (n, (item, variation)) in positions.iter().enumerate() {
        order_position::ActiveModel {
            order_id: Set(o.id),
            positionid: Set(n as i32 + 1),
            item_id: Set(*item),
            variation_id: Set(*variation),
            subevent_id: Set(None),
            price_cents: Set(1000),
            ..Default::default()
        }
        .insert(&app.db)
        .await
        .expect("position");
    }
    o.id
}

fn rand_suffix() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Holds row `id` of `E` in a write transaction: on SQLite the database's write lock, on
/// PostgreSQL the row `FOR UPDATE`. Requests sent meanwhile read freely but wait to write
/// (on PostgreSQL: to write that row, or a row referring to it).
pub async fn hold<E>(app: &TestApp, id: i64) -> tessera::db::WriteTxn
where
    E: EntityTrait,
    E::PrimaryKey: PrimaryKeyTrait<ValueType = i64>,
{
    let txn = tessera::db::begin_write(&app.db).await.expect("begin");
    E::find_by_id(id)
        .lock_exclusive()
        .one(&txn)
        .await
        .expect("lock")
        .expect("row to hold");
    txn
}

/// Lets go of a held row after a moment, long enough for requests sent together with this
/// to have read what they check and to be waiting to write.
pub async fn release_soon(held: tessera::db::WriteTxn) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    held.commit().await.expect("commit");
}
