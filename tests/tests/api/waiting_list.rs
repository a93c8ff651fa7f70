use sea_orm::TransactionTrait;
use serde_json::{Value, json};
use tessera::domain::availability::{self, HoldKind};
use tessera_tests::TestApp;

use crate::catalogue_support::{
    EVENT, another_event, catalogue_app, created, id, item, plain_item,
};
use crate::config_support::add_event;

fn entries() -> String {
    format!("{EVENT}/waitinglistentries/")
}

fn one(entry: i64) -> String {
    format!("{EVENT}/waitinglistentries/{entry}/")
}

fn send(entry: i64) -> String {
    format!("{EVENT}/waitinglistentries/{entry}/send_voucher/")
}

/// Holds `n` units of the quota as `kind`, as orders do.
async fn hold(app: &TestApp, quota: i64, kind: HoldKind, n: i64) {
    let txn = app.db.begin().await.expect("begin");
    availability::adjust(&txn, &[quota], kind, None, n)
        .await
        .expect("adjust");
    txn.commit().await.expect("commit");
}

async fn availability_of(app: &TestApp, token: &str, quota: i64) -> Value {
    let r = app
        .get(&format!("{EVENT}/quotas/{quota}/availability/"), token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// `(waiting_list, blocking_vouchers, available_number)` of a quota of `conf`.
async fn counters(app: &TestApp, token: &str, quota: i64) -> (i64, i64, i64) {
    let a = availability_of(app, token, quota).await;
    let n = |k: &str| a[k].as_i64().unwrap_or(-1);
    (
        n("waiting_list"),
        n("blocking_vouchers"),
        n("available_number"),
    )
}

struct Setup {
    app: TestApp,
    token: String,
    /// An item whose quota (size 1) is sold out.
    item: i64,
    quota: i64,
}

/// `conf` with its waiting list enabled and an item sold out by one paid order.
async fn sold_out() -> Setup {
    let (app, _, token) = catalogue_app().await;
    let r = app
        .patch(
            &format!("{EVENT}/settings/"),
            &token,
            json!({"waiting_list_enabled": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let item = plain_item(&app, &token, "Ticket").await;
    let quota = id(&created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Q", "size": 1, "items": [item]}),
    )
    .await);
    hold(&app, quota, HoldKind::Paid, 1).await;
    Setup {
        app,
        token,
        item,
        quota,
    }
}

async fn wait(s: &Setup, body: Value) -> Value {
    created(&s.app, &entries(), &s.token, body).await
}

#[tokio::test]
async fn somebody_waits_for_a_sold_out_product_and_holds_one_unit_of_it() {
    let s = sold_out().await;
    let e = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    let created_at = e["created"].as_str().expect("created").to_owned();
    assert_eq!(
        e,
        json!({"id": e["id"], "created": created_at, "name": null, "name_parts": null,
               "email": "jane@example.org", "phone": null, "voucher": null, "item": s.item,
               "variation": null, "locale": "en", "subevent": null, "priority": 0})
    );
    assert_eq!(s.app.get(&one(id(&e)), &s.token).await.body, e);
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (1, 0, 0));
    wait(
        &s,
        json!({"email": "joe@example.org", "item": s.item, "locale": "de", "phone": "+49 30 1234",
               "priority": 5, "name": "Joe"}),
    )
    .await;
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (2, 0, 0));
}

#[tokio::test]
async fn nobody_waits_for_an_available_product_or_without_a_waiting_list() {
    let s = sold_out().await;
    let body = json!({"email": "jane@example.org", "item": s.item});
    // Capacity back: available, so nobody may wait.
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    let r = s.app.post(&entries(), &s.token, body.clone()).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body["detail"].is_string());

    // Sold out again, for an item that allows no waiting list.
    hold(&s.app, s.quota, HoldKind::Paid, 1).await;
    s.app
        .patch(
            &format!("{EVENT}/items/{}/", s.item),
            &s.token,
            json!({"allow_waitinglist": false}),
        )
        .await;
    assert_eq!(
        s.app.post(&entries(), &s.token, body.clone()).await.status,
        403
    );
    s.app
        .patch(
            &format!("{EVENT}/items/{}/", s.item),
            &s.token,
            json!({"allow_waitinglist": true}),
        )
        .await;
    wait(&s, body.clone()).await;

    s.app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"waiting_list_enabled": false}),
        )
        .await;
    let r = s
        .app
        .post(
            &entries(),
            &s.token,
            json!({"email": "joe@example.org", "item": s.item}),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (1, 0, 0));
}

#[tokio::test]
async fn the_waiting_list_itself_does_not_make_a_product_unavailable_for_it() {
    let s = sold_out().await;
    wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    // One unit free again: held by Jane's entry, so the shop has none, but it is there for
    // the waiting list, and nobody else joins it.
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (1, 0, 0));
    let r = s
        .app
        .post(
            &entries(),
            &s.token,
            json!({"email": "joe@example.org", "item": s.item}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn entries_follow_the_rules_of_their_fields() {
    let s = sold_out().await;
    another_event(&s.app, "second").await;
    let foreign = id(&created(
        &s.app,
        "/api/v1/organizers/acme/events/second/items/",
        &s.token,
        json!({"name": {"en": "F"}, "default_price": "1"}),
    )
    .await);
    let shirts = item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Shirt"}, "default_price": "20.00",
               "variations": [{"value": {"en": "S"}}, {"value": {"en": "M"}}]}),
    )
    .await;
    let small = id(&shirts["variations"][0]);
    let q = id(&created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "S", "size": 0, "items": [id(&shirts)], "variations": [small]}),
    )
    .await);
    wait(&s, json!({"email": "Jane@Example.org", "item": s.item})).await;
    for (body, field) in [
        (json!({"email": "jane", "item": s.item}), "email"),
        (json!({"item": s.item}), "email"),
        (json!({"email": "a@b.de"}), "item"),
        (json!({"email": "a@b.de", "item": foreign}), "item"),
        (json!({"email": "a@b.de", "item": id(&shirts)}), "variation"),
        (
            json!({"email": "a@b.de", "item": s.item, "variation": small}),
            "variation",
        ),
        (
            json!({"email": "a@b.de", "item": s.item, "subevent": 1}),
            "subevent",
        ),
        (
            json!({"email": "a@b.de", "item": s.item, "name": "A", "name_parts": {"given_name": "A"}}),
            "name",
        ),
        (
            json!({"email": "jane@example.ORG", "item": s.item}),
            "non_field_errors",
        ),
    ] {
        let r = s.app.post(&entries(), &s.token, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{body}: {}", r.body);
    }
    let e = wait(
        &s,
        json!({"email": "jane@example.org", "item": id(&shirts), "variation": small}),
    )
    .await;
    assert_eq!(e["variation"], small);
    assert_eq!(counters(&s.app, &s.token, q).await.0, 1);
    assert_eq!(s.app.get(&entries(), &s.token).await.body["count"], 2);
}

#[tokio::test]
async fn a_name_is_kept_in_parts() {
    let s = sold_out().await;
    let plain = wait(
        &s,
        json!({"email": "a@example.org", "item": s.item, "name": "Jane Doe"}),
    )
    .await;
    assert_eq!(plain["name"], "Jane Doe");
    assert_eq!(plain["name_parts"], json!({"_legacy": "Jane Doe"}));
    let parts = wait(
        &s,
        json!({"email": "b@example.org", "item": s.item,
               "name_parts": {"family_name": "Doe", "given_name": "John"}}),
    )
    .await;
    assert_eq!(parts["name"], "John Doe");
    let r = s
        .app
        .patch(&one(id(&parts)), &s.token, json!({"name": null}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], json!(null));
    assert_eq!(r.body["name_parts"], json!(null));
}

#[tokio::test]
async fn an_entry_is_changed_and_deleted_and_its_hold_moves_with_it() {
    let s = sold_out().await;
    let other = plain_item(&s.app, &s.token, "Other").await;
    let other_quota = id(&created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "O", "size": 1, "items": [other]}),
    )
    .await);
    let e = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    let url = one(id(&e));
    let r = s
        .app
        .patch(
            &url,
            &s.token,
            json!({"email": "jane.doe@example.org", "priority": 3}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        (r.body["email"].clone(), r.body["priority"].clone()),
        (json!("jane.doe@example.org"), json!(3))
    );
    assert_eq!(r.body["created"], e["created"]);

    // The other item is available: nobody may wait for it.
    let r = s.app.patch(&url, &s.token, json!({"item": other})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(counters(&s.app, &s.token, s.quota).await.0, 1);

    hold(&s.app, other_quota, HoldKind::Paid, 1).await;
    let r = s
        .app
        .put(
            &url,
            &s.token,
            json!({"email": "jane@example.org", "item": other}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["priority"], 0);
    assert_eq!(counters(&s.app, &s.token, s.quota).await.0, 0);
    assert_eq!(counters(&s.app, &s.token, other_quota).await.0, 1);

    assert_eq!(s.app.delete(&url, &s.token).await.status, 204);
    assert_eq!(counters(&s.app, &s.token, other_quota).await.0, 0);
    assert_eq!(s.app.get(&url, &s.token).await.status, 403);
}

#[tokio::test]
async fn a_voucher_sent_to_a_waiting_person_blocks_the_unit_their_entry_held() {
    let s = sold_out().await;
    s.app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"waiting_list_hours": 5}),
        )
        .await;
    let e = wait(
        &s,
        json!({"email": "jane@example.org", "item": s.item, "name": "Jane"}),
    )
    .await;
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    let before = chrono::Utc::now();
    let r = s.app.post(&send(id(&e)), &s.token, json!({})).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, json!(null));
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (0, 1, 0));

    let entry = s.app.get(&one(id(&e)), &s.token).await.body;
    let voucher_id = entry["voucher"].as_i64().expect("voucher assigned");
    let v = s
        .app
        .get(&format!("{EVENT}/vouchers/{voucher_id}/"), &s.token)
        .await
        .body;
    assert_eq!(v["max_usages"], 1);
    assert_eq!(v["block_quota"], true);
    assert_eq!(v["item"], s.item);
    assert_eq!(v["variation"], json!(null));
    assert_eq!(v["tag"], "waiting-list");
    assert!(
        v["comment"]
            .as_str()
            .is_some_and(|c| c.contains("jane@example.org")),
        "{v}"
    );
    let until: chrono::DateTime<chrono::Utc> = v["valid_until"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("valid_until");
    let minutes = (until - before).num_minutes();
    assert!((299..=301).contains(&minutes), "{until}");

    let r = s.app.post(&send(id(&e)), &s.token, json!({})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["detail"].is_string(), "{}", r.body);
    let has_voucher = s
        .app
        .get(&format!("{}?has_voucher=true", entries()), &s.token)
        .await;
    assert_eq!(has_voucher.body["count"], 1);
}

/// The mails in the outbox, oldest first: `(to, subject, body)`.
async fn outbox(app: &TestApp) -> Vec<(String, String, String)> {
    tessera_tests::outbox(&app.db)
        .await
        .into_iter()
        .map(|m| (m.to_address, m.subject, m.body_text))
        .collect()
}

#[tokio::test]
async fn the_voucher_is_mailed_in_the_language_of_the_waiting_person() {
    let s = sold_out().await;
    let shirts = item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Shirt", "de": "Hemd"}, "default_price": "20.00",
               "variations": [{"value": {"en": "Small", "de": "Klein"}}]}),
    )
    .await;
    let small = id(&shirts["variations"][0]);
    let shirt_quota = id(&created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "S", "size": 1, "items": [id(&shirts)], "variations": [small]}),
    )
    .await);
    hold(&s.app, shirt_quota, HoldKind::Paid, 1).await;
    let jane = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    let jana = wait(
        &s,
        json!({"email": "jana@example.de", "item": id(&shirts), "variation": small,
               "locale": "de"}),
    )
    .await;
    assert_eq!(
        s.app
            .post(&send(id(&jane)), &s.token, json!({}))
            .await
            .status,
        400
    );
    assert!(
        outbox(&s.app).await.is_empty(),
        "a refused voucher is not mailed"
    );

    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    hold(&s.app, shirt_quota, HoldKind::Paid, -1).await;
    assert_eq!(
        s.app
            .post(&send(id(&jane)), &s.token, json!({}))
            .await
            .status,
        204
    );
    assert_eq!(
        s.app
            .post(&send(id(&jana)), &s.token, json!({}))
            .await
            .status,
        204
    );
    let code = |entry: &Value| {
        let (app, token) = (&s.app, &s.token);
        let entry = id(entry);
        async move {
            let voucher = app.get(&one(entry), token).await.body["voucher"].clone();
            app.get(&format!("{EVENT}/vouchers/{voucher}/"), token)
                .await
                .body["code"]
                .as_str()
                .expect("code")
                .to_owned()
        }
    };
    let mails = outbox(&s.app).await;
    assert_eq!(mails.len(), 2);
    let (to, subject, body) = &mails[0];
    assert_eq!(to, "jane@example.org");
    assert_eq!(
        subject,
        "You have been selected from the waiting list for conf"
    );
    assert!(body.contains(&code(&jane).await), "{body}");
    assert!(
        body.contains("Ticket") && body.contains("48 hours"),
        "{body}"
    );
    let redeem = format!(
        "http://tessera.test/acme/conf/redeem?voucher={}",
        code(&jane).await
    );
    assert!(body.contains(&redeem), "the mail leads to the shop: {body}");
    let (to, subject, body) = &mails[1];
    assert_eq!(to, "jana@example.de");
    assert_eq!(subject, "Sie wurden von der Warteliste für conf ausgewählt");
    assert!(body.contains(&code(&jana).await), "{body}");
    assert!(body.contains("Hemd – Klein"), "{body}");
}

#[tokio::test]
async fn an_entry_with_a_voucher_cannot_be_changed_or_deleted() {
    let s = sold_out().await;
    let e = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    assert_eq!(
        s.app.post(&send(id(&e)), &s.token, json!({})).await.status,
        204
    );
    let url = one(id(&e));
    for r in [
        s.app.patch(&url, &s.token, json!({"priority": 1})).await,
        s.app
            .put(
                &url,
                &s.token,
                json!({"email": "jane@example.org", "item": s.item}),
            )
            .await,
        s.app.delete(&url, &s.token).await,
    ] {
        assert_eq!(r.status, 403);
        assert!(r.body["detail"].is_string());
    }
    assert_eq!(s.app.get(&url, &s.token).await.body["priority"], 0);
    // Deleting the voucher (never redeemed) takes its entry along, as pretix does.
    let voucher = s.app.get(&url, &s.token).await.body["voucher"].clone();
    let r = s
        .app
        .delete(&format!("{EVENT}/vouchers/{voucher}/"), &s.token)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(s.app.get(&url, &s.token).await.status, 403);
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (0, 0, 1));
}

#[tokio::test]
async fn vouchers_go_out_only_while_the_product_is_available_without_the_waiting_list() {
    let s = sold_out().await;
    let jane = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    let joe = wait(&s, json!({"email": "joe@example.org", "item": s.item})).await;
    let r = s.app.post(&send(id(&jane)), &s.token, json!({})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["detail"].is_string(), "{}", r.body);
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (2, 0, 0));

    // One unit back: enough for one of the two waiting, whatever the waiting list holds.
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    assert_eq!(
        s.app
            .post(&send(id(&joe)), &s.token, json!({}))
            .await
            .status,
        204
    );
    assert_eq!(counters(&s.app, &s.token, s.quota).await, (1, 1, 0));
    let r = s.app.post(&send(id(&jane)), &s.token, json!({})).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        s.app.get(&one(id(&jane)), &s.token).await.body["voucher"],
        json!(null)
    );
    assert_eq!(
        s.app.post(&send(999_999), &s.token, json!({})).await.status,
        403
    );
}

#[tokio::test]
async fn the_list_filters_and_orders_like_pretix() {
    let s = sold_out().await;
    let other = plain_item(&s.app, &s.token, "Other").await;
    let other_quota = id(&created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "O", "size": 1, "items": [other]}),
    )
    .await);
    hold(&s.app, other_quota, HoldKind::Paid, 1).await;
    let a = id(&wait(
        &s,
        json!({"email": "zoe@example.org", "item": s.item, "locale": "de"}),
    )
    .await);
    let b = id(&wait(&s, json!({"email": "adam@example.org", "item": other})).await);
    let c = id(&wait(&s, json!({"email": "mia@example.org", "item": s.item})).await);
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    assert_eq!(s.app.post(&send(c), &s.token, json!({})).await.status, 204);
    let list = |q: String| {
        let (app, token) = (&s.app, &s.token);
        async move {
            let r = app.get(&format!("{}?{q}", entries()), token).await;
            assert_eq!(r.status, 200, "{q}: {}", r.body);
            r.body["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(id)
                .collect::<Vec<i64>>()
        }
    };
    assert_eq!(list(String::new()).await, vec![a, b, c]);
    assert_eq!(list("email=ADAM@example.org".into()).await, vec![b]);
    assert_eq!(list("locale=de".into()).await, vec![a]);
    assert_eq!(list("has_voucher=true".into()).await, vec![c]);
    assert_eq!(list("has_voucher=false".into()).await, vec![a, b]);
    assert_eq!(list(format!("item={other}")).await, vec![b]);
    assert_eq!(list("variation=1".into()).await, Vec::<i64>::new());
    assert_eq!(list("ordering=email".into()).await, vec![b, c, a]);
    assert_eq!(list("ordering=-created".into()).await, vec![c, b, a]);
    assert_eq!(list("ordering=-id".into()).await, vec![c, b, a]);
    assert_eq!(list("ordering=item".into()).await, vec![a, c, b]);
    let r = s
        .app
        .get(&format!("{}?ordering=phone", entries()), &s.token)
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn a_series_needs_a_date_and_holds_that_dates_quota() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    add_event(&app, org, "tour", true).await;
    let token = app.admin_token("acme").await;
    let base = "/api/v1/organizers/acme/events/tour";
    app.patch(
        &format!("{base}/settings/"),
        &token,
        json!({"waiting_list_enabled": true}),
    )
    .await;
    let date = id(&created(
        &app,
        &format!("{base}/subevents/"),
        &token,
        json!({"name": {"en": "Stop"}, "date_from": "2030-01-01T10:00:00Z", "active": true}),
    )
    .await);
    let ticket = id(&created(
        &app,
        &format!("{base}/items/"),
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "10"}),
    )
    .await);
    let q = id(&created(
        &app,
        &format!("{base}/quotas/"),
        &token,
        json!({"name": "Q", "size": 0, "items": [ticket], "subevent": date}),
    )
    .await);
    let url = format!("{base}/waitinglistentries/");
    let r = app
        .post(
            &url,
            &token,
            json!({"email": "a@example.org", "item": ticket}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["subevent"][0].is_string(), "{}", r.body);
    let e = created(
        &app,
        &url,
        &token,
        json!({"email": "a@example.org", "item": ticket, "subevent": date}),
    )
    .await;
    assert_eq!(e["subevent"], date);
    let a = app
        .get(&format!("{base}/quotas/{q}/availability/"), &token)
        .await;
    assert_eq!(a.body["waiting_list"], 1);
    let r = app.get(&format!("{url}?subevent={date}"), &token).await;
    assert_eq!(r.body["count"], 1);
}

#[tokio::test]
async fn entries_are_read_with_can_view_orders_and_written_with_can_change_orders() {
    let s = sold_out().await;
    let e = id(&wait(&s, json!({"email": "jane@example.org", "item": s.item})).await);
    let app = &s.app;
    let viewer = app.token("acme", &["can_view_orders"]).await;
    let changer = app.token("acme", &["can_change_orders"]).await;
    let vouchers = app
        .token(
            "acme",
            &[
                "can_view_vouchers",
                "can_change_vouchers",
                "can_change_items",
            ],
        )
        .await;
    app.organizer("rival").await;
    let stranger = app.admin_token("rival").await;
    assert_eq!(app.get(&entries(), &viewer).await.status, 200);
    assert_eq!(app.get(&one(e), &viewer).await.status, 200);
    for token in [&changer, &vouchers, &stranger] {
        assert_eq!(app.get(&entries(), token).await.status, 403);
        assert_eq!(app.get(&one(e), token).await.status, 403);
    }
    let body = json!({"email": "joe@example.org", "item": s.item});
    for token in [&viewer, &vouchers, &stranger] {
        assert_eq!(app.post(&entries(), token, body.clone()).await.status, 403);
        assert_eq!(
            app.patch(&one(e), token, json!({"priority": 1}))
                .await
                .status,
            403
        );
        assert_eq!(app.put(&one(e), token, body.clone()).await.status, 403);
        assert_eq!(app.post(&send(e), token, json!({})).await.status, 403);
        assert_eq!(app.delete(&one(e), token).await.status, 403);
    }
    assert_eq!(app.post(&entries(), &changer, body).await.status, 201);
    assert_eq!(
        app.patch(&one(e), &changer, json!({"priority": 1}))
            .await
            .status,
        200
    );
    assert_eq!(app.post(&send(e), &changer, json!({})).await.status, 400);
    assert_eq!(app.delete(&one(e), &changer).await.status, 204);
    let r = app
        .call(poem::http::Method::GET, &entries(), None, None)
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn a_response_time_stored_beyond_its_bounds_sends_a_voucher_valid_for_a_year() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
    use tessera::db::entities::{event, setting};
    let s = sold_out().await;
    let conf = event::Entity::find()
        .filter(event::Column::Slug.eq("conf"))
        .one(&s.app.db)
        .await
        .expect("query")
        .expect("conf");
    // As written before the setting had bounds: hours beyond any calendar.
    setting::Entity::insert(setting::ActiveModel {
        scope: Set("event".into()),
        owner_id: Set(conf.id),
        key: Set("waiting_list_hours".into()),
        value: Set(json!(1_000_000_000_000_000_i64)),
    })
    .exec(&s.app.db)
    .await
    .expect("setting stored");
    let e = wait(&s, json!({"email": "jane@example.org", "item": s.item})).await;
    hold(&s.app, s.quota, HoldKind::Paid, -1).await;
    let before = chrono::Utc::now();
    let r = s.app.post(&send(id(&e)), &s.token, json!({})).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let entry = s.app.get(&one(id(&e)), &s.token).await.body;
    let voucher_id = entry["voucher"].as_i64().expect("voucher assigned");
    let v = s
        .app
        .get(&format!("{EVENT}/vouchers/{voucher_id}/"), &s.token)
        .await
        .body;
    let until: chrono::DateTime<chrono::Utc> = v["valid_until"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("valid_until");
    let hours = (until - before).num_hours();
    assert!((8_759..=8_760).contains(&hours), "a year at most: {until}");
}
