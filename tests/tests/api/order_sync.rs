//! The orders feed offline scanners sync from: incremental pages by `modified_since` and
//! `X-Page-Generated`, `created_since`, `exclude`, `ordering`, and `pdf_data`.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, shop};

fn codes(body: &Value) -> Vec<String> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|o| o["code"].as_str().expect("code").to_owned())
        .collect()
}

fn encoded(time: &str) -> String {
    form_urlencoded::byte_serialize(time.as_bytes()).collect()
}

#[tokio::test]
async fn an_order_changed_after_the_page_was_generated_appears_in_the_next_incremental_page() {
    let s = shop(None).await;
    let first = s.ordered(1, json!({})).await;
    let second = s.ordered(1, json!({})).await;
    let full = s
        .app
        .get(
            &format!("{EVENT}/orders/?ordering=-last_modified"),
            &s.token,
        )
        .await;
    assert_eq!(full.status, 200, "{}", full.body);
    assert_eq!(full.body["count"], 2);
    let generated = full
        .header("x-page-generated")
        .expect("X-Page-Generated")
        .to_owned();
    chrono::DateTime::parse_from_rfc3339(&generated).expect("RFC 3339");

    let code = first["code"].as_str().expect("code");
    let paid = s.act(code, "mark_paid", json!({})).await;
    assert_eq!(paid.status, 200, "{}", paid.body);

    let next = s
        .app
        .get(
            &format!(
                "{EVENT}/orders/?ordering=-last_modified&modified_since={}",
                encoded(&generated)
            ),
            &s.token,
        )
        .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(codes(&next.body), vec![code.to_owned()]);
    assert_eq!(next.body["results"][0]["status"], "p");
    assert!(!codes(&next.body).contains(&second["code"].as_str().expect("code").to_owned()));
    let later = next.header("x-page-generated").expect("header");
    assert!(later > generated.as_str(), "{later} after {generated}");
}

#[tokio::test]
async fn created_since_leaves_out_older_orders_and_testmode_filters() {
    let s = shop(None).await;
    let old = s.ordered(1, json!({})).await;
    let since = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let new = s.ordered(1, json!({"testmode": true})).await;
    let r = s
        .app
        .get(
            &format!(
                "{EVENT}/orders/?ordering=datetime&created_since={}",
                encoded(&since)
            ),
            &s.token,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(codes(&r.body), vec![new["code"].as_str().expect("code")]);
    let live = s
        .app
        .get(&format!("{EVENT}/orders/?testmode=false"), &s.token)
        .await;
    assert_eq!(codes(&live.body), vec![old["code"].as_str().expect("code")]);
}

#[tokio::test]
async fn exclude_leaves_out_order_and_dotted_position_fields() {
    let s = shop(None).await;
    s.ordered(1, json!({})).await;
    let r = s
        .app
        .get(
            &format!(
                "{EVENT}/orders/?exclude=fees&exclude=payments&exclude=positions.answers&exclude=positions.downloads"
            ),
            &s.token,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let order = &r.body["results"][0];
    assert!(order.get("fees").is_none() && order.get("payments").is_none());
    assert!(order.get("refunds").is_some());
    let position = &order["positions"][0];
    assert!(position.get("answers").is_none());
    assert!(position["secret"].is_string());
    assert_eq!(position["checkins"], json!([]));
    assert_eq!(position["addon_to"], Value::Null);
    let long = "x".repeat(101);
    let refused = s
        .app
        .get(&format!("{EVENT}/orders/?exclude={long}"), &s.token)
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body["exclude"].is_array(), "{}", refused.body);
}

#[tokio::test]
async fn ordering_by_code_and_by_last_modified_descending() {
    let s = shop(None).await;
    let mut placed = Vec::new();
    for _ in 0..3 {
        placed.push(
            s.ordered(1, json!({})).await["code"]
                .as_str()
                .expect("code")
                .to_owned(),
        );
    }
    let by_code = s
        .app
        .get(&format!("{EVENT}/orders/?ordering=code"), &s.token)
        .await;
    let mut sorted = placed.clone();
    sorted.sort();
    assert_eq!(codes(&by_code.body), sorted);
    let paid = s.act(&placed[0], "mark_paid", json!({})).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let recent = s
        .app
        .get(
            &format!("{EVENT}/orders/?ordering=-last_modified"),
            &s.token,
        )
        .await;
    assert_eq!(codes(&recent.body)[0], placed[0]);
    let wrong = s
        .app
        .get(&format!("{EVENT}/orders/?ordering=secret"), &s.token)
        .await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
}

#[tokio::test]
async fn pdf_data_carries_the_tickets_text_only_when_asked_by_a_caller_who_views_orders() {
    let s = shop(None).await;
    let o = s
        .ordered(
            1,
            json!({"positions": [{"item": s.ticket, "attendee_name": "Ada Lovelace"}]}),
        )
        .await;
    let plain = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    assert!(
        plain.body["results"][0]["positions"][0]
            .get("pdf_data")
            .is_none()
    );
    let r = s
        .app
        .get(&format!("{EVENT}/orders/?pdf_data=true"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let pdf = &r.body["results"][0]["positions"][0]["pdf_data"];
    assert_eq!(pdf["attendee_name"], "Ada Lovelace");
    assert_eq!(pdf["item"], "Ticket");
    assert_eq!(pdf["order"], o["code"]);
    assert_eq!(pdf["secret"], o["positions"][0]["secret"]);
    assert!(pdf["event_name"].as_str().is_some_and(|n| !n.is_empty()));
    assert!(
        pdf["event_begin"].as_str().is_some_and(|d| d.len() == 16),
        "{pdf}"
    );
    assert_eq!(pdf["images"], json!({}));
    let other = s.app.token("acme", &["can_view_vouchers"]).await;
    let refused = s
        .app
        .get(&format!("{EVENT}/orders/?pdf_data=true"), &other)
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
}

#[tokio::test]
async fn badge_layouts_list_the_events_default_badge_and_badge_items_its_admission_items() {
    let s = shop(None).await;
    let layouts = s.app.get(&format!("{EVENT}/badgelayouts/"), &s.token).await;
    assert_eq!(layouts.status, 200, "{}", layouts.body);
    assert_eq!(layouts.body["count"], 1);
    let layout = &layouts.body["results"][0];
    assert_eq!(layout["default"], true);
    assert_eq!(layout["layout"][0]["content"], "attendee_name");
    crate::selling_support::item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Shirt"}, "default_price": "15.00", "admission": false}),
    )
    .await;
    let items = s.app.get(&format!("{EVENT}/badgeitems/"), &s.token).await;
    assert_eq!(items.status, 200, "{}", items.body);
    assert_eq!(items.body["count"], 1);
    assert_eq!(items.body["results"][0]["item"], s.ticket);
    assert_eq!(items.body["results"][0]["layout"], layout["id"]);
}

#[tokio::test]
async fn a_checkin_brings_its_order_into_the_next_incremental_page_with_the_scan() {
    let d = crate::checkin_redeem::door(json!({})).await;
    let secret = d.paid().await;
    d.paid().await;
    let path = format!("{EVENT}/orders/?ordering=-last_modified");
    let full = d.s.app.get(&path, &d.s.token).await;
    assert_eq!(full.body["count"], 2, "{}", full.body);
    let generated = full.header("x-page-generated").expect("header").to_owned();

    assert_eq!(d.scan(&secret, json!({})).await.status, 201);

    let since = format!("{path}&modified_since={}", encoded(&generated));
    let next = d.s.app.get(&since, &d.s.token).await;
    assert_eq!(next.body["count"], 1, "{}", next.body);
    let position = &next.body["results"][0]["positions"][0];
    assert_eq!(position["secret"], secret.as_str());
    assert_eq!(position["checkins"][0]["list"], d.list, "{position}");
    assert_eq!(position["checkins"][0]["type"], "entry");
}
