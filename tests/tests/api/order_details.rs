//! An order's details changed by a support desk (`PATCH orders/{code}/`), as pretix: what
//! the body leaves out stays, read-only fields are ignored, and a refusal changes nothing.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::selling_support::{EVENT, Shop, shop};

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

async fn patch(s: &Shop, code: &str, body: Value) -> Reply {
    s.app
        .patch(&format!("{EVENT}/orders/{code}/"), &s.token, body)
        .await
}

#[tokio::test]
async fn a_desk_changes_contact_notes_and_the_check_in_note_and_the_rest_stays() {
    let s = shop(Some(5)).await;
    let o = s
        .ordered(1, json!({"phone": "+49301234567", "comment": "first"}))
        .await;
    assert_eq!(o["checkin_attention"], false);
    assert_eq!(o["checkin_text"], Value::Null);
    assert_eq!(o["custom_followup_at"], Value::Null);
    assert_eq!(o["valid_if_pending"], false);

    let r = patch(
        &s,
        &code(&o),
        json!({
            "email": "grace@example.org",
            "comment": "Called back",
            "custom_followup_at": "2027-01-15",
            "checkin_attention": true,
            "checkin_text": "Bring the lanyard",
            "valid_if_pending": true,
            "invoice_address": {"company": "Analytical Engines Ltd", "city": "London", "country": "GB"},
            "api_meta": {"crm": 42},
            "status": "c",
            "total": "0.00",
        }),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let b = &r.body;
    assert_eq!(b["email"], "grace@example.org");
    assert_eq!(b["phone"], "+49301234567", "left out, so kept");
    assert_eq!(b["comment"], "Called back");
    assert_eq!(b["custom_followup_at"], "2027-01-15");
    assert_eq!(b["checkin_attention"], true);
    assert_eq!(b["checkin_text"], "Bring the lanyard");
    assert_eq!(b["valid_if_pending"], true);
    assert_eq!(b["invoice_address"]["company"], "Analytical Engines Ltd");
    assert_eq!(b["api_meta"], json!({"crm": 42}));
    assert_eq!(b["status"], "n", "read-only fields are ignored");
    assert_eq!(b["total"], "23.00");

    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&o)), &s.token)
        .await;
    assert_eq!(shown.body["checkin_text"], "Bring the lanyard");

    let cleared = patch(
        &s,
        &code(&o),
        json!({"phone": null, "checkin_text": null, "invoice_address": null}),
    )
    .await;
    assert_eq!(cleared.status, 200, "{}", cleared.body);
    assert_eq!(cleared.body["phone"], Value::Null);
    assert_eq!(cleared.body["checkin_text"], Value::Null);
    assert_eq!(cleared.body["invoice_address"], Value::Null);
    assert_eq!(cleared.body["comment"], "Called back");
}

#[tokio::test]
async fn a_language_the_event_does_not_offer_or_a_bad_address_is_400_and_changes_nothing() {
    let s = shop(Some(5)).await;
    let o = s.ordered(1, json!({})).await;
    let r = patch(&s, &code(&o), json!({"locale": "xx", "comment": "lost"})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"locale": ["\"xx\" is not a supported locale for this event."]})
    );
    let r = patch(
        &s,
        &code(&o),
        json!({"email": "not an address", "comment": "lost"}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"email": ["Enter a valid email address."]}));
    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&o)), &s.token)
        .await;
    assert_eq!(shown.body["comment"], "");
    assert_eq!(shown.body["email"], "ada@example.org");
    assert_eq!(patch(&s, "ZZZZZ", json!({})).await.status, 403);
}

#[tokio::test]
async fn the_term_of_a_pending_order_moves_and_a_paid_order_has_none_to_move() {
    let s = shop(Some(5)).await;
    let o = s.ordered(1, json!({})).await;
    let r = patch(&s, &code(&o), json!({"expires": "2099-01-01T12:00:00Z"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["expires"], "2099-01-01T12:00:00Z");
    assert_eq!(s.availability(s.quota).await["pending_orders"], 1);

    let paid = s
        .ordered(1, json!({"status": "p", "payment_provider": "manual"}))
        .await;
    let r = patch(&s, &code(&paid), json!({"expires": "2099-01-01T12:00:00Z"})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"expires": ["Only a pending order's term can be changed."]})
    );
}

#[tokio::test]
async fn changing_details_needs_can_change_orders() {
    let s = shop(Some(5)).await;
    let o = s.ordered(1, json!({})).await;
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/orders/{}/", code(&o)),
            &viewer,
            json!({"comment": "nope"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}
