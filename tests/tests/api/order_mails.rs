//! The mails about orders: the confirmation of `send_mail: true`, and the cancellation of
//! `send_email: true`, written to the outbox with the order and in the customer's language.

use serde_json::json;
use tessera::db::entities::outbox_mail;

use crate::selling_support::{EVENT, Shop, shop};

async fn outbox(s: &Shop) -> Vec<outbox_mail::Model> {
    tessera_tests::outbox(&s.app.db).await
}

#[tokio::test]
async fn send_mail_confirms_the_order_with_its_tickets_total_and_page() {
    let s = shop(Some(10)).await;
    let o = s
        .ordered(2, json!({"send_mail": true, "payment_provider": "manual"}))
        .await;
    let code = o["code"].as_str().expect("code");

    let mails = outbox(&s).await;
    assert_eq!(mails.len(), 1);
    let m = &mails[0];
    assert_eq!(m.to_address, "ada@example.org");
    assert_eq!(m.subject, format!("Your order for conf: {code}"));
    assert_eq!(m.event_id, Some(s.event));
    assert_eq!(m.state, "queued");
    let body = &m.body_text;
    assert_eq!(body.matches("- Ticket: EUR 23.00").count(), 2, "{body}");
    assert!(body.contains("Total: EUR 46.00"), "{body}");
    assert!(body.contains("Please pay EUR 46.00 by "), "{body}");
    assert!(body.contains(o["url"].as_str().expect("url")), "{body}");
}

#[tokio::test]
async fn a_paid_order_is_confirmed_as_paid_in_german_for_a_german_customer() {
    let s = shop(Some(10)).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"locales": ["en", "de"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = s
        .ordered(
            1,
            json!({"send_mail": true, "status": "p", "locale": "de", "email": "jana@example.de"}),
        )
        .await;

    let mails = outbox(&s).await;
    assert_eq!(mails.len(), 1);
    let m = &mails[0];
    assert_eq!(m.to_address, "jana@example.de");
    assert_eq!(
        m.subject,
        format!(
            "Ihre Bestellung für conf: {}",
            o["code"].as_str().expect("code")
        )
    );
    assert!(
        m.body_text.contains("Die Bestellung ist bezahlt."),
        "{}",
        m.body_text
    );
    assert!(m.body_text.contains("Summe: EUR 23.00"), "{}", m.body_text);
}

#[tokio::test]
async fn no_mail_goes_out_unasked_simulated_refused_or_without_an_address() {
    let s = shop(Some(1)).await;
    let simulated = s
        .order(
            json!({"email": "a@example.org", "send_mail": true, "simulate": true,
                      "positions": [{"item": s.ticket}]}),
        )
        .await;
    s.ordered(1, json!({})).await;
    let refused = s
        .order(json!({"email": "a@example.org", "send_mail": true,
                      "positions": [{"item": s.ticket}]}))
        .await;
    let unlimited = shop(None).await;
    let no_address = unlimited
        .order(json!({"send_mail": true, "positions": [{"item": unlimited.ticket}]}))
        .await;

    assert_eq!(simulated.status, 201, "{}", simulated.body);
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(no_address.status, 201, "{}", no_address.body);
    assert!(outbox(&s).await.is_empty());
    assert!(outbox(&unlimited).await.is_empty());
}

#[tokio::test]
async fn a_cancellation_is_mailed_only_when_asked() {
    let s = shop(Some(10)).await;
    let quiet = s.ordered(1, json!({})).await;
    let told = s.ordered(1, json!({})).await;
    let code = |o: &serde_json::Value| o["code"].as_str().expect("code").to_owned();

    let r = s.act(&code(&quiet), "mark_canceled", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(outbox(&s).await.is_empty());
    let r = s
        .act(&code(&told), "mark_canceled", json!({"send_email": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let mails = outbox(&s).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(
        mails[0].subject,
        format!("Your order for conf has been canceled: {}", code(&told))
    );
    assert!(
        mails[0]
            .body_text
            .contains(told["url"].as_str().expect("url"))
    );
}

#[tokio::test]
async fn a_refused_cancellation_mails_nothing() {
    let s = shop(Some(10)).await;
    let o = s.ordered(1, json!({})).await;
    let code = o["code"].as_str().expect("code");
    s.act(code, "mark_canceled", json!({})).await;

    let again = s
        .act(code, "mark_canceled", json!({"send_email": true}))
        .await;

    assert_eq!(again.status, 400, "{}", again.body);
    assert!(outbox(&s).await.is_empty());
}
