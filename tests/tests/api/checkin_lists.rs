//! Check-in lists of an event: CRUD, validation, counts, permissions and failed check-ins.

use serde_json::json;

use crate::checkin_redeem::door;
use crate::selling_support::{EVENT, created, id};

#[tokio::test]
async fn a_list_is_created_read_changed_and_deleted_with_its_checkins() {
    let d = door(json!({})).await;
    let path = format!("{EVENT}/checkinlists/{}/", d.list);
    let r = d.s.app.get(&path, &d.s.token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Entrance");
    assert_eq!(r.body["all_products"], true);
    assert_eq!(r.body["allow_entry_after_exit"], true);
    assert_eq!(r.body["allow_multiple_entries"], false);
    assert_eq!(r.body["rules"], json!({}));
    let r =
        d.s.app
            .patch(
                &path,
                &d.s.token,
                json!({"name": "Main door", "include_pending": true}),
            )
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Main door");
    assert_eq!(r.body["include_pending"], true);
    let r =
        d.s.app
            .put(&path, &d.s.token, json!({"name": "Only name"}))
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["include_pending"], false);
    let secret = d.paid().await;
    assert_eq!(d.scan(&secret, json!({})).await.status, 201);
    let list =
        d.s.app
            .get(&format!("{EVENT}/checkinlists/"), &d.s.token)
            .await;
    assert_eq!(list.body["count"], 1);
    assert_eq!(list.body["results"][0]["checkin_count"], 1);
    assert_eq!(list.body["results"][0]["position_count"], 1);
    let excluded =
        d.s.app
            .get(
                &format!("{EVENT}/checkinlists/?exclude=checkin_count&exclude=position_count"),
                &d.s.token,
            )
            .await;
    assert!(excluded.body["results"][0].get("checkin_count").is_none());
    assert_eq!(d.s.app.delete(&path, &d.s.token).await.status, 204);
    assert_eq!(d.checkins("").await["count"], 0);
    assert_eq!(d.s.app.get(&path, &d.s.token).await.status, 403);
}

#[tokio::test]
async fn foreign_products_dates_gates_and_bad_rules_are_field_errors() {
    let d = door(json!({})).await;
    let path = format!("{EVENT}/checkinlists/");
    let cases = [
        (
            json!({"name": "X", "limit_products": [999999]}),
            "limit_products",
            "One or more items do not belong to this event.",
        ),
        (
            json!({"name": "X", "subevent": 999999}),
            "subevent",
            "The subevent does not belong to this event.",
        ),
        (
            json!({"name": "X", "gates": [999999]}),
            "gates",
            "One or more gates do not belong to this organizer.",
        ),
        (
            json!({"name": "X", "rules": {"foo": [1]}}),
            "rules",
            "Logic operator \"foo\" is currently not allowed.",
        ),
        (
            json!({"name": "X", "rules": {"==": [{"var": "secret"}, 1]}}),
            "rules",
            "Logic variable \"secret\" is currently not allowed.",
        ),
        (
            json!({"name": "X", "rules": {"==": [{"and": [1, 2]}, 1]}}),
            "rules",
            "You cannot use OR/AND logic on a level below a comparison operator.",
        ),
    ];
    for (body, field, message) in cases {
        let r = d.s.app.post(&path, &d.s.token, body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.body[field], json!([message]), "{}", r.body);
    }
    let r = d.s.app.post(&path, &d.s.token, json!({"name": ""})).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn the_status_counts_tickets_that_entered_and_those_inside() {
    let d = door(json!({})).await;
    let a = d.paid().await;
    let b = d.paid().await;
    d.paid().await;
    assert_eq!(d.scan(&a, json!({})).await.status, 201);
    assert_eq!(d.scan(&b, json!({})).await.status, 201);
    assert_eq!(d.scan(&b, json!({"type": "exit"})).await.status, 201);
    let r =
        d.s.app
            .get(
                &format!("{EVENT}/checkinlists/{}/status/", d.list),
                &d.s.token,
            )
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["position_count"], 3);
    assert_eq!(r.body["checkin_count"], 2);
    assert_eq!(r.body["inside_count"], 1);
    assert_eq!(r.body["items"][0]["id"], d.s.ticket);
    assert_eq!(r.body["items"][0]["checkin_count"], 2);
    assert_eq!(r.body["items"][0]["position_count"], 3);
}

#[tokio::test]
async fn reading_needs_view_or_checkin_and_writing_needs_event_settings() {
    let d = door(json!({})).await;
    let path = format!("{EVENT}/checkinlists/");
    for perms in [["can_view_orders"], ["can_checkin_orders"]] {
        let t = d.s.app.token("acme", &perms).await;
        assert_eq!(d.s.app.get(&path, &t).await.status, 200);
        assert_eq!(
            d.s.app.post(&path, &t, json!({"name": "X"})).await.status,
            403
        );
    }
    let t = d.s.app.token("acme", &["can_change_items"]).await;
    assert_eq!(d.s.app.get(&path, &t).await.status, 403);
}

#[tokio::test]
async fn a_failed_checkin_a_scanner_reports_is_echoed_and_stored() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let path = format!("{EVENT}/checkinlists/{}/failed_checkins/", d.list);
    let body =
        json!({"error_reason": "unpaid", "raw_barcode": secret, "error_explanation": "offline"});
    let r = d.s.app.post(&path, &d.s.token, body.clone()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["error_reason"], "unpaid");
    assert_eq!(r.body["raw_barcode"], secret.as_str());
    let stored = d.checkins("?successful=false").await;
    assert_eq!(stored["count"], 1);
    assert_eq!(stored["results"][0]["error_reason"], "unpaid");
    assert!(stored["results"][0]["position"].is_i64());
    let viewer = d.s.app.token("acme", &["can_view_orders"]).await;
    assert_eq!(d.s.app.post(&path, &viewer, body).await.status, 403);
    let bad =
        d.s.app
            .post(
                &path,
                &d.s.token,
                json!({"error_reason": "nope", "raw_barcode": "x"}),
            )
            .await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn lists_filter_by_date_and_order_by_name() {
    let d = door(json!({})).await;
    created(
        &d.s.app,
        &format!("{EVENT}/checkinlists/"),
        &d.s.token,
        json!({"name": "Annex"}),
    )
    .await;
    let r =
        d.s.app
            .get(&format!("{EVENT}/checkinlists/?ordering=name"), &d.s.token)
            .await;
    assert_eq!(r.body["results"][0]["name"], "Annex");
    let r =
        d.s.app
            .get(&format!("{EVENT}/checkinlists/?ordering=-id"), &d.s.token)
            .await;
    assert_eq!(r.body["results"][1]["id"], d.list);
    let r =
        d.s.app
            .get(
                &format!("{EVENT}/checkinlists/?subevent_match=5"),
                &d.s.token,
            )
            .await;
    assert_eq!(r.body["count"], 2);
    let _ = id(&r.body["results"][0]);
}

#[tokio::test]
async fn the_demo_has_one_entrance_list_that_admits_its_paid_order() {
    let app = tessera_tests::TestApp::spawn().await;
    tessera::admin::seed_demo(&app.state).await.expect("seed");
    let token = tessera::admin::seed_demo(&app.state)
        .await
        .expect("seed again")
        .token;
    let base = format!(
        "/api/v1/organizers/demo/events/{}/",
        tessera::admin::DEMO_EVENT
    );
    let lists = app.get(&format!("{base}checkinlists/"), &token).await;
    assert_eq!(lists.body["count"], 1, "{}", lists.body);
    assert_eq!(lists.body["results"][0]["name"], "Entrance");
    let list = id(&lists.body["results"][0]);
    let orders = app.get(&format!("{base}orders/?status=p"), &token).await;
    let secret = orders.body["results"][0]["positions"][0]["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let r = app
        .post(
            "/api/v1/organizers/demo/checkinrpc/redeem/",
            &token,
            json!({"lists": [list], "secret": secret}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}
