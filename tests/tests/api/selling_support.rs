//! Arrangement shared by the selling tests: an event with a ticket on a quota, and calls
//! that place orders and read availability through the API.

use serde_json::{Value, json};
use tessera_tests::{Reply, TestApp};

pub use crate::catalogue_support::{EVENT, created, id, item};

/// A fresh server with event `conf` of `acme`, an all-powerful token, an item "Ticket" at
/// 23.00 and a quota of `size` on it.
pub struct Shop {
    /// The server.
    pub app: TestApp,
    /// The event's ID.
    pub event: i64,
    /// An all-powerful token.
    pub token: String,
    /// The ticket's ID.
    pub ticket: i64,
    /// The quota's ID.
    pub quota: i64,
}

/// A shop whose ticket's quota has `size` (`None`: unlimited).
pub async fn shop(size: Option<i64>) -> Shop {
    shop_on(TestApp::spawn().await, size).await
}

/// [`shop`] on a server of the caller's configuration.
pub async fn shop_on(app: TestApp, size: Option<i64>) -> Shop {
    let (app, event, token) = crate::catalogue_support::catalogue_app_on(app).await;
    let ticket = id(&item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "23.00", "admission": true}),
    )
    .await);
    let quota = id(&created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Hall", "size": size, "items": [ticket]}),
    )
    .await);
    Shop {
        app,
        event,
        token,
        ticket,
        quota,
    }
}

/// A live [`shop`] of the shop's pages that sells by bank transfer, with `settings` of the
/// event's set too.
pub async fn bank_transfer_shop(size: Option<i64>, settings: Value) -> Shop {
    use sea_orm::{ActiveModelTrait, Set};
    let app = TestApp::spawn_app(
        |_| {},
        |app| {
            app.plugin(tessera_plugin_presale::Presale::default())
                .plugin(tessera_plugin_banktransfer::BankTransfer)
        },
    )
    .await;
    let shop = shop_on(app, size).await;
    tessera::db::entities::event::ActiveModel {
        id: Set(shop.event),
        live: Set(true),
        plugins: Set(json!(["banktransfer"])),
        ..Default::default()
    }
    .update(&shop.app.db)
    .await
    .expect("event");
    let mut all = json!({"banktransfer_iban": "DE89 3704 0044 0532 0130 00"});
    if let (Some(a), Some(more)) = (all.as_object_mut(), settings.as_object()) {
        a.extend(more.clone());
    }
    let r = shop
        .app
        .patch(&format!("{EVENT}/settings/"), &shop.token, all)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    shop
}

/// The availability of a quota of the event, read with `token`.
pub async fn availability(app: &TestApp, token: &str, quota: i64) -> Value {
    let r = app
        .get(&format!("{EVENT}/quotas/{quota}/availability/"), token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

impl Shop {
    /// POSTs an order.
    pub async fn order(&self, body: Value) -> Reply {
        self.app
            .post(&format!("{EVENT}/orders/"), &self.token, body)
            .await
    }

    /// Places an order of `n` tickets and expects 201.
    pub async fn ordered(&self, n: usize, extra: Value) -> Value {
        let mut body = json!({
            "email": "ada@example.org",
            "positions": vec![json!({"item": self.ticket}); n],
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        let r = self.order(body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body
    }

    /// The availability of a quota.
    pub async fn availability(&self, quota: i64) -> Value {
        availability(&self.app, &self.token, quota).await
    }

    /// POSTs an action on an order (`mark_paid`, `mark_canceled`, `extend`).
    pub async fn act(&self, code: &str, action: &str, body: Value) -> Reply {
        self.app
            .post(
                &format!("{EVENT}/orders/{code}/{action}/"),
                &self.token,
                body,
            )
            .await
    }
}
