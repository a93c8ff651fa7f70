//! Scanning tickets: `checkinrpc/redeem/` and each list's `positions/{secret}/redeem/`, with
//! pretix's checks, reasons and messages, and every refusal recorded as a failed check-in.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::db;
use tessera_tests::Reply;

use crate::selling_support::{EVENT, Shop, created, id, shop};

pub const RPC: &str = "/api/v1/organizers/acme/checkinrpc/redeem/";

/// A shop with a paid-ticket list "Entrance" (ID `list`).
pub struct Door {
    /// The shop.
    pub s: Shop,
    /// The list.
    pub list: i64,
}

/// A shop with a check-in list made of `extra` fields.
pub async fn door(extra: Value) -> Door {
    let s = shop(Some(10)).await;
    let mut body = json!({"name": "Entrance"});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let list = id(&created(&s.app, &format!("{EVENT}/checkinlists/"), &s.token, body).await);
    Door { s, list }
}

impl Door {
    /// Places a paid order of one ticket; gives its secret.
    pub async fn paid(&self) -> String {
        self.ticket(json!({"status": "p"})).await
    }

    /// Places an order with `extra` fields; gives its first position's secret.
    pub async fn ticket(&self, extra: Value) -> String {
        let o = self.s.ordered(1, extra).await;
        o["positions"][0]["secret"]
            .as_str()
            .expect("secret")
            .to_owned()
    }

    /// Scans through the RPC with extra fields.
    pub async fn scan(&self, secret: &str, extra: Value) -> Reply {
        let mut body = json!({"lists": [self.list], "secret": secret});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        self.s.app.post(RPC, &self.s.token, body).await
    }

    /// The event's check-ins.
    pub async fn checkins(&self, query: &str) -> Value {
        let r = self
            .s
            .app
            .get(&format!("{EVENT}/checkins/{query}"), &self.s.token)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// Runs SQL on the server's database.
    pub async fn sql(&self, sql: &str, values: Vec<sea_orm::Value>) {
        db::execute(&self.s.app.db, sql, values).await.expect("sql");
    }
}

fn reason(r: &Reply) -> &str {
    r.body["reason"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_paid_ticket_is_admitted_once_and_the_second_scan_is_already_redeemed() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let first = d.scan(&secret, json!({})).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.body["status"], "ok");
    assert_eq!(first.body["position"]["secret"], secret.as_str());
    assert_eq!(first.body["list"]["id"], d.list);
    assert_eq!(first.body["list"]["event"], "conf");
    let second = d.scan(&secret, json!({})).await;
    assert_eq!(second.status, 400, "{}", second.body);
    assert_eq!(second.body["status"], "error");
    assert_eq!(reason(&second), "already_redeemed");
    assert_eq!(
        second.body["reason_explanation"],
        "This ticket has already been redeemed."
    );
    assert_eq!(second.body["position"]["checkins"][0]["type"], "entry");
    let all = d.checkins("?ordering=id").await;
    assert_eq!(all["count"], 2);
    assert_eq!(all["results"][0]["successful"], true);
    assert_eq!(all["results"][1]["successful"], false);
    assert_eq!(all["results"][1]["error_reason"], "already_redeemed");
    let failed = d.checkins("?successful=false").await;
    assert_eq!(failed["count"], 1);
}

#[tokio::test]
async fn an_unknown_secret_is_not_found_and_recorded_as_invalid() {
    let d = door(json!({})).await;
    let r = d.scan("no-such-ticket", json!({})).await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(r.body["detail"], "Not found.");
    assert_eq!(r.body["status"], "error");
    assert_eq!(reason(&r), "invalid");
    assert_eq!(r.body["list"]["id"], d.list);
    let failed = d.checkins("?error_reason=invalid").await;
    assert_eq!(failed["count"], 1);
    assert_eq!(failed["results"][0]["position"], Value::Null);
}

#[tokio::test]
async fn a_canceled_ticket_is_canceled_on_the_rpc_and_unpaid_on_the_legacy_path() {
    let d = door(json!({})).await;
    let o = d.s.ordered(1, json!({"status": "p"})).await;
    let code = o["code"].as_str().expect("code");
    let secret = o["positions"][0]["secret"].as_str().expect("secret");
    let c = d.s.act(code, "mark_canceled", json!({})).await;
    assert_eq!(c.status, 200, "{}", c.body);
    let r = d.scan(secret, json!({})).await;
    assert_eq!(r.status, 400);
    assert_eq!(reason(&r), "canceled");
    assert_eq!(
        r.body["reason_explanation"],
        "This order position has been canceled."
    );
    let legacy = format!("{EVENT}/checkinlists/{}/positions/{secret}/redeem/", d.list);
    let l = d.s.app.post(&legacy, &d.s.token, json!({})).await;
    assert_eq!(l.status, 400, "{}", l.body);
    assert_eq!(reason(&l), "unpaid");
    let l =
        d.s.app
            .post(&legacy, &d.s.token, json!({"canceled_supported": true}))
            .await;
    assert_eq!(reason(&l), "canceled");
}

#[tokio::test]
async fn a_pending_order_is_unpaid_unless_ignore_unpaid_on_a_list_including_pending() {
    let d = door(json!({"include_pending": true})).await;
    let secret = d.ticket(json!({})).await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(reason(&r), "unpaid");
    assert_eq!(r.body["position"]["order__status"], "n");
    assert_eq!(r.body["list"]["include_pending"], true);
    let r = d.scan(&secret, json!({"ignore_unpaid": true})).await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn a_pending_order_the_desk_lets_in_is_admitted_with_attention_and_its_text() {
    let d = door(json!({})).await;
    let o = d.s.ordered(1, json!({})).await;
    let code = o["code"].as_str().expect("code");
    let secret = o["positions"][0]["secret"].as_str().expect("secret");
    let r = d.scan(secret, json!({})).await;
    assert_eq!(reason(&r), "unpaid");
    assert_eq!(r.body["require_attention"], false);
    let changed =
        d.s.app
            .patch(
                &format!("{EVENT}/orders/{code}/"),
                &d.s.token,
                json!({"valid_if_pending": true, "checkin_attention": true,
                   "checkin_text": "Collect payment at the desk"}),
            )
            .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let r = d.scan(secret, json!({})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["require_attention"], true);
    assert_eq!(
        r.body["checkin_texts"],
        json!(["Collect payment at the desk"])
    );
}

#[tokio::test]
async fn ignore_unpaid_does_not_admit_on_a_list_without_pending_orders() {
    let d = door(json!({})).await;
    let secret = d.ticket(json!({})).await;
    let r = d.scan(&secret, json!({"ignore_unpaid": true})).await;
    assert_eq!(reason(&r), "unpaid");
}

#[tokio::test]
async fn an_order_awaiting_approval_is_unapproved() {
    let d = door(json!({})).await;
    let secret = d.ticket(json!({"require_approval": true})).await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(reason(&r), "unapproved", "{}", r.body);
    assert_eq!(
        r.body["reason_explanation"],
        "This order is not yet approved."
    );
}

#[tokio::test]
async fn a_product_not_on_the_list_is_refused_and_force_admits_it_as_forced() {
    let other = door(json!({})).await;
    let other_item = id(&crate::catalogue_support::item(
        &other.s.app,
        &other.s.token,
        json!({"name": {"en": "Parking"}, "default_price": "5.00"}),
    )
    .await);
    let limited = id(&created(
        &other.s.app,
        &format!("{EVENT}/checkinlists/"),
        &other.s.token,
        json!({"name": "Car park", "all_products": false, "limit_products": [other_item]}),
    )
    .await);
    let secret = other.paid().await;
    let body = json!({"lists": [limited], "secret": secret});
    let r = other.s.app.post(RPC, &other.s.token, body.clone()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(reason(&r), "product");
    assert_eq!(
        r.body["reason_explanation"],
        "This order position has an invalid product for this check-in list."
    );
    let mut forced = body;
    forced["force"] = json!(true);
    let r = other.s.app.post(RPC, &other.s.token, forced).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let rows: Vec<(bool, bool)> = forced_rows(&other).await;
    assert!(rows.contains(&(true, true)), "{rows:?}");
}

async fn forced_rows(d: &Door) -> Vec<(bool, bool)> {
    use sea_orm::{ConnectionTrait, Statement};
    let rows =
        d.s.app
            .db
            .query_all_raw(Statement::from_string(
                d.s.app.db.get_database_backend(),
                "SELECT successful, forced FROM checkins ORDER BY id",
            ))
            .await
            .expect("rows");
    rows.iter()
        .map(|r| {
            (
                r.try_get::<bool>("", "successful").expect("successful"),
                r.try_get::<bool>("", "forced").expect("forced"),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_repeated_nonce_succeeds_without_a_second_checkin_even_after_refusals() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let once = json!({"nonce": "abc123"});
    assert_eq!(d.scan(&secret, once.clone()).await.status, 201);
    let other = d.scan(&secret, json!({"nonce": "zzz"})).await;
    assert_eq!(reason(&other), "already_redeemed");
    let again = d.scan(&secret, once).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(d.checkins("?successful=true").await["count"], 1);
}

#[tokio::test]
async fn a_blocked_ticket_is_refused_as_blocked() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    d.sql(
        "INSERT INTO blocked_secrets (event_id, secret, blocked, updated) VALUES ($1, $2, $3, $4)",
        vec![
            d.s.event.into(),
            secret.clone().into(),
            true.into(),
            chrono::Utc::now().into(),
        ],
    )
    .await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(reason(&r), "blocked", "{}", r.body);
    assert_eq!(
        r.body["reason_explanation"],
        "This ticket has been blocked."
    );
    assert_eq!(r.body["position"]["blocked"], json!(["admin"]));
}

#[tokio::test]
async fn a_revoked_secret_is_refused_unless_forced() {
    let d = door(json!({})).await;
    let o = d.s.ordered(1, json!({"status": "p"})).await;
    let position = o["positions"][0]["id"].as_i64().expect("id");
    d.sql(
        "INSERT INTO revoked_secrets (event_id, position_id, secret, created) VALUES ($1, $2, $3, $4)",
        vec![
            d.s.event.into(),
            position.into(),
            "old-secret".into(),
            chrono::Utc::now().into(),
        ],
    )
    .await;
    let r = d.scan("old-secret", json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(reason(&r), "revoked");
    assert_eq!(r.body["position"]["id"], position);
    let r = d.scan("old-secret", json!({"force": true})).await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn a_ticket_outside_its_validity_is_invalid_time_on_entry_only() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    d.sql(
        "UPDATE order_positions SET valid_from = $1 WHERE secret = $2",
        vec![
            (chrono::Utc::now() + chrono::Duration::days(2)).into(),
            secret.clone().into(),
        ],
    )
    .await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(reason(&r), "invalid_time", "{}", r.body);
    assert!(
        r.body["reason_explanation"]
            .as_str()
            .is_some_and(|e| e.starts_with("This ticket is only valid after "))
    );
    let exit = d.scan(&secret, json!({"type": "exit"})).await;
    assert_eq!(exit.status, 201, "{}", exit.body);
}

#[tokio::test]
async fn two_positions_with_one_secret_are_ambiguous() {
    let d = door(json!({})).await;
    let a = d.paid().await;
    let b = d.paid().await;
    d.sql(
        "UPDATE order_positions SET secret = $1 WHERE secret = $2",
        vec![a.clone().into(), b.into()],
    )
    .await;
    let r = d.scan(&a, json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(reason(&r), "ambiguous");
}

#[tokio::test]
async fn rules_refuse_entry_with_an_explanation() {
    let d = door(json!({"rules": {"inList": [{"var": "product"}, {"objectList": [{"lookup": ["product", "999999", "VIP"]}]}]}})).await;
    let secret = d.paid().await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(reason(&r), "rules", "{}", r.body);
    assert_eq!(
        r.body["reason_explanation"],
        "Entry not permitted: Ticket type not allowed."
    );
}

#[tokio::test]
async fn an_entry_count_rule_admits_twice_on_a_list_with_multiple_entries() {
    let d = door(
        json!({"allow_multiple_entries": true, "rules": {"<": [{"var": "entries_number"}, 2]}}),
    )
    .await;
    let secret = d.paid().await;
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    let third = d.scan(&secret, json!({})).await;
    assert_eq!(reason(&third), "rules", "{}", third.body);
}

#[tokio::test]
async fn after_an_exit_a_ticket_enters_again_only_where_the_list_allows_it() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    assert_eq!(d.scan(&secret, json!({"type": "exit"})).await.status, 201);
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    let strict = door(json!({"allow_entry_after_exit": false})).await;
    let secret = strict.paid().await;
    // Only exits so far: entry is still allowed.
    assert_eq!(
        strict.scan(&secret, json!({"type": "exit"})).await.status,
        201
    );
    assert_eq!(strict.scan(&secret, json!({})).await.status, 201);
    assert_eq!(
        strict.scan(&secret, json!({"type": "exit"})).await.status,
        201
    );
    let again = strict.scan(&secret, json!({})).await;
    assert_eq!(reason(&again), "already_redeemed", "{}", again.body);
}

#[tokio::test]
async fn an_exit_gives_capacity_back_when_the_quota_releases_after_exit() {
    let d = door(json!({"allow_entry_after_exit": false})).await;
    let q =
        d.s.app
            .patch(
                &format!("{EVENT}/quotas/{}/", d.s.quota),
                &d.s.token,
                json!({"release_after_exit": true}),
            )
            .await;
    assert_eq!(q.status, 200, "{}", q.body);
    let secret = d.paid().await;
    assert_eq!(d.s.availability(d.s.quota).await["available_number"], 9);
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    assert_eq!(d.scan(&secret, json!({"type": "exit"})).await.status, 201);
    let a = d.s.availability(d.s.quota).await;
    assert_eq!(a["exited_orders"], 1, "{a}");
    assert_eq!(a["available_number"], 10);
}

#[tokio::test]
async fn an_exit_on_a_list_allowing_reentry_gives_nothing_back() {
    let d = door(json!({})).await;
    d.s.app
        .patch(
            &format!("{EVENT}/quotas/{}/", d.s.quota),
            &d.s.token,
            json!({"release_after_exit": true}),
        )
        .await;
    let secret = d.paid().await;
    assert_eq!(d.scan(&secret, json!({"type": "exit"})).await.status, 201);
    assert_eq!(d.s.availability(d.s.quota).await["available_number"], 9);
}

#[tokio::test]
async fn questions_asked_at_the_door_make_the_scan_incomplete_until_answered() {
    let d = door(json!({})).await;
    let q = id(&created(
        &d.s.app,
        &format!("{EVENT}/questions/"),
        &d.s.token,
        json!({"question": {"en": "Shirt size?"}, "type": "S", "required": true,
               "items": [d.s.ticket], "ask_during_checkin": true}),
    )
    .await);
    let secret = d.paid().await;
    let r = d.scan(&secret, json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["status"], "incomplete");
    assert_eq!(r.body["questions"][0]["id"], q);
    assert_eq!(r.body["questions"][0]["required"], true);
    assert_eq!(d.checkins("").await["count"], 0);
    let r = d
        .scan(&secret, json!({"answers": {q.to_string(): "XL"}}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["position"]["answers"][0]["answer"], "XL");
}

#[tokio::test]
async fn with_addon_match_the_parent_ticket_redeems_its_add_on() {
    let d = door(json!({})).await;
    let workshop = id(&crate::catalogue_support::item(
        &d.s.app,
        &d.s.token,
        json!({"name": {"en": "Workshop"}, "default_price": "5.00"}),
    )
    .await);
    let list = id(&created(
        &d.s.app,
        &format!("{EVENT}/checkinlists/"),
        &d.s.token,
        json!({"name": "Workshop", "all_products": false, "limit_products": [workshop], "addon_match": true}),
    )
    .await);
    let o = d.s.ordered(2, json!({"status": "p"})).await;
    let parent = o["positions"][0]["id"].as_i64().expect("id");
    let parent_secret = o["positions"][0]["secret"].as_str().expect("secret");
    let child = o["positions"][1]["id"].as_i64().expect("id");
    d.sql(
        "UPDATE order_positions SET addon_to_id = $1, item_id = $2 WHERE id = $3",
        vec![parent.into(), workshop.into(), child.into()],
    )
    .await;
    let r =
        d.s.app
            .post(
                RPC,
                &d.s.token,
                json!({"lists": [list], "secret": parent_secret}),
            )
            .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["position"]["id"], child);
    assert_eq!(r.body["position"]["addon_to"], parent);
}

#[tokio::test]
async fn the_legacy_path_takes_secrets_with_slashes_plus_and_equals() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let odd = "ab/cd+ef==";
    d.sql(
        "UPDATE order_positions SET secret = $1 WHERE secret = $2",
        vec![odd.into(), secret.into()],
    )
    .await;
    let raw = format!("{EVENT}/checkinlists/{}/positions/{odd}/redeem/", d.list);
    let r = d.s.app.post(&raw, &d.s.token, json!({})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let encoded = format!(
        "{EVENT}/checkinlists/{}/positions/ab%2Fcd%2Bef%3D%3D/redeem/",
        d.list
    );
    let r = d.s.app.post(&encoded, &d.s.token, json!({})).await;
    assert_eq!(reason(&r), "already_redeemed", "{}", r.body);
    let unknown_list = format!("{EVENT}/checkinlists/999999/positions/{odd}/redeem/");
    let r = d.s.app.post(&unknown_list, &d.s.token, json!({})).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["detail"], "No CheckinList matches the given query.");
}

#[tokio::test]
async fn bad_list_selections_are_refused_as_pretix_words_them() {
    let d = door(json!({})).await;
    let second = id(&created(
        &d.s.app,
        &format!("{EVENT}/checkinlists/"),
        &d.s.token,
        json!({"name": "Side door"}),
    )
    .await);
    let r =
        d.s.app
            .post(RPC, &d.s.token, json!({"lists": [], "secret": "x"}))
            .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"lists": ["No check-in list passed."]}));
    let r =
        d.s.app
            .post(
                RPC,
                &d.s.token,
                json!({"lists": [d.list, second], "secret": "x"}),
            )
            .await;
    assert_eq!(
        r.body,
        json!({"lists": ["Selecting two check-in lists from the same event is unsupported."]})
    );
    let r =
        d.s.app
            .post(RPC, &d.s.token, json!({"lists": [999999], "secret": "x"}))
            .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"lists": ["Invalid pk \"999999\" - object does not exist."]})
    );
    let viewer = d.s.app.token("acme", &["can_view_orders"]).await;
    let r =
        d.s.app
            .post(RPC, &viewer, json!({"lists": [d.list], "secret": "x"}))
            .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn a_device_scan_records_the_device_and_its_gate() {
    let d = door(json!({})).await;
    let admin = d.s.app.device_admin_token("acme").await;
    let gate = id(&created(
        &d.s.app,
        "/api/v1/organizers/acme/gates/",
        &admin,
        json!({"name": "North"}),
    )
    .await);
    let device = crate::device_protocol::initialized_device(
        &d.s.app,
        &admin,
        json!({"name": "Scanner", "all_events": true, "gate": gate}),
    )
    .await;
    let secret = d.paid().await;
    let r = crate::device_protocol::as_device(
        &d.s.app,
        Method::POST,
        RPC,
        &device,
        Some(json!({"lists": [d.list], "secret": secret})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let all = d.checkins(&format!("?gate={gate}")).await;
    assert_eq!(all["count"], 1);
    assert_eq!(all["results"][0]["gate"], gate);
    assert_eq!(all["results"][0]["device"], 1);
}

#[tokio::test]
async fn at_exit_all_at_everyone_inside_leaves_once_and_the_quota_gets_them_back() {
    use tessera::domain::checkin::exit_all;
    let d = door(json!({"allow_entry_after_exit": false})).await;
    let quota = format!("{EVENT}/quotas/{}/", d.s.quota);
    let q =
        d.s.app
            .patch(&quota, &d.s.token, json!({"release_after_exit": true}))
            .await;
    assert_eq!(q.status, 200, "{}", q.body);
    let (inside, outside) = (d.paid().await, d.paid().await);
    d.paid().await; // never scanned: stays where it is
    for s in [&inside, &outside] {
        assert_eq!(d.scan(s, json!({})).await.status, 201);
    }
    assert_eq!(d.scan(&outside, json!({"type": "exit"})).await.status, 201);
    assert_eq!(d.s.availability(d.s.quota).await["available_number"], 8);
    let at = chrono::Utc::now() + chrono::TimeDelta::seconds(1);
    let later = at + chrono::TimeDelta::minutes(1);
    let list = format!("{EVENT}/checkinlists/{}/", d.list);
    let r =
        d.s.app
            .patch(&list, &d.s.token, json!({"exit_all_at": at}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);

    assert_eq!(exit_all::sweep(&d.s.app.db, later).await.expect("sweep"), 1);
    assert_eq!(exit_all::sweep(&d.s.app.db, later).await.expect("sweep"), 0);

    let exits = d.checkins("?type=exit&ordering=datetime").await;
    let auto: Vec<bool> = exits["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|c| c["auto_checked_in"] == true)
        .collect();
    assert_eq!(auto, [false, true], "{exits}");
    assert_eq!(
        d.s.app.get(&list, &d.s.token).await.body["exit_all_at"],
        Value::Null
    );
    let a = d.s.availability(d.s.quota).await;
    assert_eq!(
        (a["exited_orders"].clone(), a["available_number"].clone()),
        (json!(2), json!(9)),
        "{a}"
    );
    let again = d.scan(&inside, json!({})).await;
    assert_eq!(reason(&again), "already_redeemed", "{}", again.body);
}

#[tokio::test]
async fn pdf_data_on_a_scan_carries_the_ticket_text_for_callers_who_view_orders() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let body = json!({"lists": [d.list], "secret": secret});
    let r =
        d.s.app
            .post(&format!("{RPC}?pdf_data=true"), &d.s.token, body.clone())
            .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let vars = &r.body["position"]["pdf_data"];
    assert_eq!(vars["secret"], secret.as_str(), "{vars}");
    assert!(
        vars["event_name"].as_str().is_some_and(|n| !n.is_empty()),
        "{vars}"
    );
    assert!(vars["images"].is_object());

    let scanner = d.s.app.token("acme", &["can_checkin_orders"]).await;
    let legacy = format!(
        "{EVENT}/checkinlists/{}/positions/{secret}/redeem/?pdf_data=true",
        d.list
    );
    let r = d.s.app.post(&legacy, &scanner, json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(reason(&r), "already_redeemed");
    assert!(r.body["position"].get("pdf_data").is_none(), "{}", r.body);
}

#[tokio::test]
async fn a_scan_reads_its_list_from_the_cache_and_takes_few_statements() {
    let d = door(json!({})).await;
    let (first, second) = (d.paid().await, d.paid().await);
    assert_eq!(d.scan(&first, json!({})).await.status, 201);
    // The list, its event and whether webhooks listen are kept; the scan finds the ticket,
    // reads it again under its order's lock with its check-ins, and stores the check-in.
    let (r, statements) = db::count_queries(d.scan(&second, json!({}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(statements <= 6, "{statements} statements");
}
