//! Order creation (external checkout): the full order object, validation per position,
//! quotas, payments, simulation, and the confirmation page.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, id, item, shop};

#[tokio::test]
async fn an_order_is_created_pending_with_a_manual_payment_and_a_confirmation_page() {
    let s = shop(Some(10)).await;
    let r = s
        .order(json!({
            "email": "ada@example.org",
            "locale": "en",
            "sales_channel": "web",
            "payment_provider": "manual",
            "invoice_address": {"name_parts": {"full_name": "Ada Lovelace"}, "city": "London", "country": "GB"},
            "positions": [{"item": s.ticket, "variation": null, "attendee_name_parts": {"full_name": "Ada Lovelace"}}],
        }))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let o = &r.body;
    assert_eq!(o["status"], "n");
    assert_eq!(o["code"].as_str().map(str::len), Some(5));
    assert_eq!(o["email"], "ada@example.org");
    assert_eq!(o["total"], "23.00");
    assert_eq!(o["sales_channel"], "web");
    assert!(o["expires"].is_string());
    assert_eq!(o["invoice_address"]["name"], "Ada Lovelace");
    let p = &o["positions"][0];
    assert!(p["id"].is_i64());
    assert_eq!(p["positionid"], 1);
    assert_eq!(p["price"], "23.00");
    assert_eq!(p["attendee_name"], "Ada Lovelace");
    assert_eq!(p["secret"].as_str().map(str::len), Some(32));
    let pay = &o["payments"][0];
    assert_eq!(pay["state"], "created");
    assert_eq!(pay["provider"], "manual");
    assert_eq!(pay["amount"], "23.00");
    let pay_url = pay["payment_url"].as_str().expect("payment_url");
    let url = o["url"].as_str().expect("url");
    let path = url.strip_prefix("http://tessera.test").expect("public url");
    let page = s.app.get(path, "").await;
    assert_eq!(page.status, 200);
    let html = page.body.as_str().expect("html");
    assert!(html.contains(o["code"].as_str().expect("code")), "{html}");
    assert!(html.contains("Pending payment"), "{html}");
    assert!(
        !html.contains(p["secret"].as_str().expect("secret")),
        "tickets are shown once the order is paid: {html}"
    );
    let pay_page = s
        .app
        .get(
            pay_url.strip_prefix("http://tessera.test").expect("public"),
            "",
        )
        .await;
    assert_eq!(pay_page.status, 200);
    assert!(pay_page.body.as_str().expect("html").contains("23.00"));
    let wrong = path.replace(o["secret"].as_str().expect("secret"), "nope");
    assert_eq!(s.app.get(&wrong, "").await.status, 404);
}

#[tokio::test]
async fn the_order_and_payment_pages_speak_the_orders_language_and_a_received_payment_says_so() {
    let s = shop(Some(10)).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"locales": ["en", "de"], "payment_manual__enabled": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s
        .order(json!({
            "email": "ada@example.org", "locale": "de", "sales_channel": "web",
            "payment_provider": "manual",
            "positions": [{"item": s.ticket, "variation": null}],
        }))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let public = |url: &Value| {
        url.as_str()
            .and_then(|u| u.strip_prefix("http://tessera.test"))
            .expect("public url")
            .to_owned()
    };
    let (path, pay) = (
        public(&r.body["url"]),
        public(&r.body["payments"][0]["payment_url"]),
    );
    let html = |page: tessera_tests::Reply| page.body.as_str().unwrap_or_default().to_owned();
    let german = html(s.app.get(&path, "").await);
    assert!(german.contains(r#"<html lang="de">"#), "{german}");
    assert!(german.contains("Zahlung ausstehend"), "{german}");
    assert!(german.contains("Jetzt bezahlen"), "{german}");
    assert!(
        german.contains("Manual payment"),
        "the provider by name: {german}"
    );
    let english = html(s.app.get(&format!("{path}?locale=en"), "").await);
    assert!(english.contains(r#"<html lang="en">"#), "{english}");
    assert!(english.contains("Pending payment"), "{english}");
    let unknown = html(s.app.get(&format!("{path}?locale=xx"), "").await);
    assert!(unknown.contains("Zahlung ausstehend"), "{unknown}");
    let open = html(s.app.get(&pay, "").await);
    assert!(open.contains("Please pay 23.00 EUR"), "{open}");
    let code = r.body["code"].as_str().expect("code");
    let paid = s
        .app
        .post(
            &format!("{EVENT}/orders/{code}/mark_paid/"),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let received = html(s.app.get(&pay, "").await);
    assert!(
        received.contains("Diese Zahlung ist eingegangen"),
        "{received}"
    );
    assert!(
        !received.contains("Please pay"),
        "no instructions once paid: {received}"
    );
}

#[tokio::test]
async fn the_events_primary_colour_dresses_its_pages_and_only_colours_are_taken() {
    let s = shop(Some(10)).await;
    let settings = format!("{EVENT}/settings/");
    for bad in ["red", "#ffcc0", "#ffcc00; }", "#GGGGGG"] {
        let r = s
            .app
            .patch(&settings, &s.token, json!({"primary_color": bad}))
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.body["primary_color"][0].is_string(), "{}", r.body);
    }
    let r = s
        .app
        .patch(&settings, &s.token, json!({"primary_color": "#ffcc00"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = s
        .order(json!({
            "email": "ada@example.org", "locale": "en", "sales_channel": "web",
            "positions": [{"item": s.ticket, "variation": null}],
        }))
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let path = o.body["url"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://tessera.test"))
        .expect("public url");
    let page = s.app.get(path, "").await;
    let html = page.body.as_str().unwrap_or_default();
    assert!(
        html.contains("--brand: #ffcc00; --on-brand: #1d1d1f;"),
        "dark text on yellow: {html}"
    );
}

#[tokio::test]
async fn a_paid_order_holds_paid_quota_and_a_pending_one_pending_quota() {
    let s = shop(Some(10)).await;
    s.ordered(2, json!({"status": "p", "payment_provider": "manual"}))
        .await;
    let pending = s.ordered(1, json!({})).await;
    assert_eq!(pending["payments"], json!([]));
    let a = s.availability(s.quota).await;
    assert_eq!(a["paid_orders"], 2);
    assert_eq!(a["pending_orders"], 1);
    assert_eq!(a["available_number"], 7);
}

#[tokio::test]
async fn an_order_that_does_not_fit_is_refused_per_position_and_nothing_is_kept() {
    let s = shop(Some(2)).await;
    s.ordered(1, json!({})).await;
    let r = s
        .order(json!({"positions": [{"item": s.ticket}, {"item": s.ticket}]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let positions = r.body["positions"].as_array().expect("list");
    assert_eq!(positions.len(), 2);
    assert_eq!(positions[0], json!({}));
    assert!(
        positions[1]["item"][0]
            .as_str()
            .expect("msg")
            .contains("quota")
    );
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["pending_orders"].clone(), a["available_number"].clone()),
        (json!(1), json!(1))
    );
    let list = s.app.get(&format!("{EVENT}/orders/"), &s.token).await;
    assert_eq!(list.body["count"], 1);
}

#[tokio::test]
async fn invalid_positions_are_refused_each_on_its_own_field() {
    let s = shop(Some(10)).await;
    let inactive = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Old"}, "default_price": "1.00", "active": false}),
    )
    .await);
    let unquoted = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Loose"}, "default_price": "1.00"}),
    )
    .await);
    let shirt = item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Shirt"}, "default_price": "20.00",
               "variations": [{"value": {"en": "S"}}, {"value": {"en": "M"}}]}),
    )
    .await;
    let r = s
        .order(json!({"positions": [
            {"item": s.ticket},
            {"item": inactive},
            {"item": unquoted},
            {"item": id(&shirt)},
            {"item": s.ticket, "variation": shirt["variations"][0]["id"]},
            {"item": s.ticket, "subevent": 1},
            {"item": 999_999},
        ]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let p = &r.body["positions"];
    assert_eq!(p[0], json!({}));
    assert!(p[1]["item"].is_array(), "{p}");
    assert!(p[2]["item"].is_array(), "{p}");
    assert!(p[3]["variation"].is_array(), "{p}");
    assert!(p[4]["variation"].is_array(), "{p}");
    assert!(p[5]["subevent"].is_array(), "{p}");
    assert!(p[6]["item"].is_array(), "{p}");
    let empty = s.order(json!({"positions": []})).await;
    assert_eq!(empty.status, 400);
    assert!(empty.body["positions"][0].is_string(), "{}", empty.body);
}

#[tokio::test]
async fn unknown_providers_channels_locales_statuses_and_emails_are_400_on_their_field() {
    let s = shop(Some(10)).await;
    for (field, value) in [
        ("payment_provider", json!("stripe")),
        ("sales_channel", json!("nowhere")),
        ("locale", json!("xx")),
        ("status", json!("c")),
        ("email", json!("not-an-address")),
    ] {
        let r = s
            .order(json!({"positions": [{"item": s.ticket}], field: value}))
            .await;
        assert_eq!(r.status, 400, "{field}: {}", r.body);
        assert!(r.body[field][0].is_string(), "{field}: {}", r.body);
    }
    let fee = s
        .order(json!({"positions": [{"item": s.ticket}], "fees": [{"fee_type": "bribe", "value": "1.00"}]}))
        .await;
    assert_eq!(fee.status, 400);
    assert!(fee.body["fees"][0]["fee_type"].is_array(), "{}", fee.body);
    assert_eq!(s.availability(s.quota).await["pending_orders"], 0);
}

#[tokio::test]
async fn fees_and_explicit_prices_make_the_total_and_taxes_are_included() {
    let s = shop(None).await;
    let rule = id(&created(
        &s.app,
        &format!("{EVENT}/taxrules/"),
        &s.token,
        json!({"name": {"en": "VAT"}, "rate": "19.00"}),
    )
    .await);
    let taxed = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Taxed"}, "default_price": "11.90", "tax_rule": rule}),
    )
    .await);
    created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "Taxed", "size": null, "items": [taxed]}),
    )
    .await;
    let o = s
        .ordered(
            0,
            json!({
                "positions": [{"item": taxed}, {"item": s.ticket, "price": "5.00"}],
                "fees": [{"fee_type": "service", "value": "1.50", "description": "Service"}],
            }),
        )
        .await;
    assert_eq!(o["total"], "18.40");
    assert_eq!(o["positions"][0]["tax_rate"], "19.00");
    assert_eq!(o["positions"][0]["tax_value"], "1.90");
    assert_eq!(o["positions"][0]["tax_rule"], rule);
    assert_eq!(o["positions"][1]["price"], "5.00");
    assert_eq!(o["fees"][0]["value"], "1.50");
    assert_eq!(o["fees"][0]["fee_type"], "service");
}

#[tokio::test]
async fn a_simulated_order_is_priced_but_nothing_is_kept() {
    let s = shop(Some(1)).await;
    let o = s.ordered(1, json!({"simulate": true})).await;
    assert_eq!(o["total"], "23.00");
    let a = s.availability(s.quota).await;
    assert_eq!(a["pending_orders"], 0);
    assert_eq!(
        s.app.get(&format!("{EVENT}/orders/"), &s.token).await.body["count"],
        0
    );
    s.ordered(1, json!({})).await;
}

#[tokio::test]
async fn answers_are_checked_against_the_events_questions() {
    let s = shop(None).await;
    let q = created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Age?"}, "type": "N", "items": [s.ticket], "identifier": "AGE"}),
    )
    .await;
    let bad = s
        .order(json!({"positions": [{"item": s.ticket, "answers": [{"question": id(&q), "answer": "old"}]}]}))
        .await;
    assert_eq!(bad.status, 400);
    assert!(
        bad.body["positions"][0]["answers"].is_array(),
        "{}",
        bad.body
    );
    let unknown = s
        .order(json!({"positions": [{"item": s.ticket, "answers": [{"question": 999_999, "answer": "1"}]}]}))
        .await;
    assert_eq!(unknown.status, 400);
    let o = s
        .ordered(0, json!({"positions": [{"item": s.ticket, "answers": [{"question": id(&q), "answer": "42"}]}]}))
        .await;
    let a = &o["positions"][0]["answers"][0];
    assert_eq!(a["question"], id(&q));
    assert_eq!(a["answer"], "42");
    assert_eq!(a["question_identifier"], "AGE");
}

#[tokio::test]
async fn orders_need_can_change_orders_to_create_and_can_view_orders_to_read() {
    let s = shop(Some(10)).await;
    let o = s.ordered(1, json!({})).await;
    let code = o["code"].as_str().expect("code");
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let items_only = s.app.token("acme", &["can_change_items"]).await;
    let body = json!({"positions": [{"item": s.ticket}]});
    assert_eq!(
        s.app
            .post(&format!("{EVENT}/orders/"), &viewer, body.clone())
            .await
            .status,
        403
    );
    assert_eq!(
        s.app
            .post(&format!("{EVENT}/orders/"), &items_only, body)
            .await
            .status,
        403
    );
    assert_eq!(
        s.app.get(&format!("{EVENT}/orders/"), &viewer).await.status,
        200
    );
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/{code}/"), &viewer)
            .await
            .status,
        200
    );
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/"), &items_only)
            .await
            .status,
        403
    );
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/{code}/"), &items_only)
            .await
            .status,
        403
    );
    for action in ["mark_paid", "mark_canceled"] {
        let r = s
            .app
            .post(
                &format!("{EVENT}/orders/{code}/{action}/"),
                &viewer,
                json!({}),
            )
            .await;
        assert_eq!(r.status, 403, "{action}");
    }
    s.app.organizer("other").await;
    let stranger = s.app.admin_token("other").await;
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/{code}/"), &stranger)
            .await
            .status,
        403
    );
    assert_eq!(s.app.get(&format!("{EVENT}/orders/"), "").await.status, 401);
}

#[tokio::test]
async fn orders_are_listed_filtered_and_shown_by_code() {
    let s = shop(None).await;
    let a = s
        .ordered(1, json!({"email": "a@example.org", "status": "p"}))
        .await;
    let b = s.ordered(2, json!({"email": "B@example.org"})).await;
    let list = |q: &str| {
        let url = format!("{EVENT}/orders/{q}");
        let app = &s.app;
        let token = s.token.clone();
        async move { app.get(&url, &token).await.body }
    };
    assert_eq!(list("").await["count"], 2);
    assert_eq!(list("?status=p").await["results"][0]["code"], a["code"]);
    assert_eq!(list("?status=n").await["results"][0]["code"], b["code"]);
    assert_eq!(list("?email=b@example.org").await["count"], 1);
    let code = b["code"].as_str().expect("code");
    assert_eq!(list(&format!("?code={code}")).await["count"], 1);
    assert_eq!(
        list("?ordering=-datetime").await["results"][0]["code"],
        b["code"]
    );
    assert_eq!(
        list("?modified_since=2999-01-01T00:00:00Z").await["count"],
        0
    );
    let bad = s
        .app
        .get(&format!("{EVENT}/orders/?ordering=secret"), &s.token)
        .await;
    assert_eq!(bad.status, 400);
    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(shown.body["positions"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/NOPE1/"), &s.token)
            .await
            .status,
        403
    );
}

fn code(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

#[tokio::test]
async fn marking_paid_moves_the_hold_and_confirms_the_payment() {
    let s = shop(Some(5)).await;
    let o = s.ordered(2, json!({"payment_provider": "manual"})).await;
    let r = s.act(&code(&o), "mark_paid", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "p");
    assert!(r.body["payment_date"].is_string());
    assert_eq!(r.body["payments"][0]["state"], "confirmed");
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["pending_orders"].clone()),
        (json!(2), json!(0))
    );
    assert_eq!(s.act(&code(&o), "mark_paid", json!({})).await.status, 400);
    let without_payment = s.ordered(1, json!({})).await;
    let r = s.act(&code(&without_payment), "mark_paid", json!({})).await;
    assert_eq!(r.body["payments"][0]["provider"], "manual");
    assert_eq!(r.body["payments"][0]["state"], "confirmed");
}

#[tokio::test]
async fn canceling_gives_the_quota_back() {
    let s = shop(Some(2)).await;
    let paid = s.ordered(1, json!({"status": "p"})).await;
    let pending = s.ordered(1, json!({"payment_provider": "manual"})).await;
    assert_eq!(s.availability(s.quota).await["available_number"], 0);
    for o in [&paid, &pending] {
        let r = s
            .act(&code(o), "mark_canceled", json!({"send_email": false}))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["status"], "c");
    }
    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&pending)), &s.token)
        .await;
    assert_eq!(shown.body["payments"][0]["state"], "canceled");
    let a = s.availability(s.quota).await;
    assert_eq!(a["available_number"], 2);
    assert_eq!(
        (a["paid_orders"].clone(), a["pending_orders"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(
        s.act(&code(&paid), "mark_canceled", json!({})).await.status,
        400
    );
    assert_eq!(
        s.act(&code(&paid), "mark_paid", json!({})).await.status,
        400
    );
}

/// Moves an order's payment term (and its hold) into the past, as time passing would.
async fn let_term_pass(s: &Shop, code: &str) {
    use sea_orm::{ConnectionTrait, Statement};
    let backend = s.app.db.get_database_backend();
    let past = chrono::Utc::now() - chrono::Duration::hours(1);
    s.app
        .db
        .execute_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE orders SET expires = $1 WHERE code = $2",
            [past.into(), code.into()],
        ))
        .await
        .expect("expire order");
    s.app
        .db
        .execute_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE quota_holds SET expires_us = $1 WHERE kind = 'pending'",
            [past.timestamp_micros().into()],
        ))
        .await
        .expect("expire hold");
}

#[tokio::test]
async fn an_expired_order_stops_holding_quota_and_is_paid_only_while_available() {
    let s = shop(Some(1)).await;
    let o = s.ordered(1, json!({})).await;
    let_term_pass(&s, &code(&o)).await;
    let shown = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&o)), &s.token)
        .await;
    assert_eq!(shown.body["status"], "e");
    assert_eq!(
        s.app
            .get(&format!("{EVENT}/orders/?status=e"), &s.token)
            .await
            .body["count"],
        1
    );
    assert_eq!(s.availability(s.quota).await["available_number"], 1);
    let other = s.ordered(1, json!({})).await;
    let r = s.act(&code(&o), "mark_paid", json!({})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    s.act(&code(&other), "mark_canceled", json!({})).await;
    let r = s.act(&code(&o), "mark_paid", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let a = s.availability(s.quota).await;
    assert_eq!(
        (a["paid_orders"].clone(), a["available_number"].clone()),
        (json!(1), json!(0))
    );
}

#[tokio::test]
async fn extending_moves_the_term_and_revives_an_expired_order_while_available() {
    let s = shop(Some(1)).await;
    let o = s.ordered(1, json!({})).await;
    let later = (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339();
    let r = s.act(&code(&o), "extend", json!({"expires": later})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(s.availability(s.quota).await["pending_orders"], 1);
    let_term_pass(&s, &code(&o)).await;
    let blocker = s.ordered(1, json!({})).await;
    let r = s.act(&code(&o), "extend", json!({"expires": later})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let forced = s
        .act(
            &code(&o),
            "extend",
            json!({"expires": later, "force": true}),
        )
        .await;
    assert_eq!(forced.status, 200, "{}", forced.body);
    assert_eq!(forced.body["status"], "n");
    assert_eq!(s.availability(s.quota).await["pending_orders"], 2);
    let past = s
        .act(
            &code(&blocker),
            "extend",
            json!({"expires": "2000-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(past.status, 400);
}

#[tokio::test]
async fn payments_are_listed_shown_and_confirmed() {
    let s = shop(Some(5)).await;
    let o = s.ordered(1, json!({"payment_provider": "manual"})).await;
    let base = format!("{EVENT}/orders/{}/payments/", code(&o));
    let list = s.app.get(&base, &s.token).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["count"], 1);
    let one = s.app.get(&format!("{base}1/"), &s.token).await;
    assert_eq!(one.body["state"], "created");
    assert_eq!(s.app.get(&format!("{base}2/"), &s.token).await.status, 403);
    let confirmed = s
        .app
        .post(&format!("{base}1/confirm/"), &s.token, json!({}))
        .await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(confirmed.body["state"], "confirmed");
    let order = s
        .app
        .get(&format!("{EVENT}/orders/{}/", code(&o)), &s.token)
        .await;
    assert_eq!(order.body["status"], "p");
    assert_eq!(s.availability(s.quota).await["paid_orders"], 1);
    let again = s
        .app
        .post(&format!("{base}1/confirm/"), &s.token, json!({}))
        .await;
    assert_eq!(again.status, 400);
}

#[tokio::test]
async fn the_order_that_sells_out_a_quota_closing_when_sold_out_closes_it() {
    let s = shop(Some(2)).await;
    let quota = format!("{EVENT}/quotas/{}/", s.quota);
    s.app
        .patch(&quota, &s.token, json!({"close_when_sold_out": true}))
        .await;
    s.ordered(1, json!({})).await;
    assert_eq!(s.app.get(&quota, &s.token).await.body["closed"], false);
    s.ordered(1, json!({})).await;
    assert_eq!(s.app.get(&quota, &s.token).await.body["closed"], true);
}

#[tokio::test]
async fn more_than_500_positions_are_400_on_positions_even_when_simulated() {
    let s = shop(None).await;
    let expected = json!({"positions": ["Ensure this field has no more than 500 elements."]});
    for n in [501, 2_200] {
        for simulate in [false, true] {
            let r = s
                .order(json!({
                    "positions": vec![json!({"item": s.ticket}); n],
                    "simulate": simulate,
                }))
                .await;
            assert_eq!(
                r.status, 400,
                "{n} positions, simulate {simulate}: {}",
                r.body
            );
            assert_eq!(r.body, expected);
        }
    }
    assert_eq!(s.availability(s.quota).await["pending_orders"], 0);
}

#[tokio::test]
async fn an_order_of_500_positions_is_placed_and_simulated() {
    let s = shop(None).await;
    let simulated = s.ordered(500, json!({"simulate": true})).await;
    assert_eq!(simulated["positions"].as_array().map(Vec::len), Some(500));
    let o = s.ordered(500, json!({})).await;
    assert_eq!(o["positions"].as_array().map(Vec::len), Some(500));
    assert_eq!(o["positions"][499]["positionid"], 500);
    assert_eq!(o["total"], "11500.00");
}

#[tokio::test]
async fn forty_thousand_consume_carts_are_400_on_consume_carts() {
    let s = shop(None).await;
    let carts: Vec<String> = (0..40_000).map(|c| format!("cart-{c}")).collect();
    for simulate in [false, true] {
        let r = s
            .order(json!({
                "positions": [{"item": s.ticket}],
                "consume_carts": carts,
                "simulate": simulate,
            }))
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            r.body,
            json!({"consume_carts": ["Ensure this field has no more than 500 elements."]})
        );
    }
}

#[tokio::test]
async fn an_order_may_consume_500_carts() {
    let s = shop(None).await;
    let r = s
        .app
        .post(
            &format!("{EVENT}/cartpositions/"),
            &s.token,
            json!({"cart_id": "cart-499", "item": s.ticket, "price": "23.00"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let carts: Vec<String> = (0..500).map(|c| format!("cart-{c}")).collect();
    s.ordered(1, json!({"consume_carts": carts})).await;
    let left = s
        .app
        .get(
            &format!("{EVENT}/cartpositions/?cart_id=cart-499"),
            &s.token,
        )
        .await;
    assert_eq!(left.body["count"], 0, "{}", left.body);
}

#[tokio::test]
async fn orders_are_found_by_the_dates_of_their_positions() {
    let s = shop(None).await;
    let base = "/api/v1/organizers/acme/events/";
    let ev = json!({"name": {"en": "Tour"}, "slug": "tour", "currency": "EUR",
                    "date_from": "2030-06-01T09:00:00Z", "has_subevents": true});
    created(&s.app, base, &s.token, ev).await;
    let tour = format!("{base}tour");
    let ticket = id(&created(
        &s.app,
        &format!("{tour}/items/"),
        &s.token,
        json!({"name": {"en": "Ticket"}, "default_price": "10.00"}),
    )
    .await);
    let mut codes = Vec::new();
    for (day, from, to) in [
        ("June", "2030-06-01T09:00:00Z", Some("2030-06-01T18:00:00Z")),
        ("July", "2030-07-01T09:00:00Z", None),
    ] {
        let date = id(&created(
            &s.app,
            &format!("{tour}/subevents/"),
            &s.token,
            json!({"name": {"en": day}, "date_from": from, "date_to": to, "active": true}),
        )
        .await);
        created(
            &s.app,
            &format!("{tour}/quotas/"),
            &s.token,
            json!({"name": day, "size": null, "items": [ticket], "subevent": date}),
        )
        .await;
        let o = created(
            &s.app,
            &format!("{tour}/orders/"),
            &s.token,
            json!({"positions": [{"item": ticket, "subevent": date}]}),
        )
        .await;
        codes.push(o["code"].clone());
    }
    for (query, expected) in [
        (
            "subevent_after=2030-06-01T12:00:00Z",
            vec![&codes[0], &codes[1]],
        ),
        ("subevent_after=2030-06-01T19:00:00Z", vec![&codes[1]]),
        ("subevent_before=2030-06-15T00:00:00Z", vec![&codes[0]]),
        ("subevent_after=2030-08-01T00:00:00Z", vec![]),
    ] {
        let r = s
            .app
            .get(&format!("{tour}/orders/?{query}"), &s.token)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let found: Vec<&Value> = (r.body["results"].as_array().expect("results").iter())
            .map(|o| &o["code"])
            .collect();
        assert_eq!(found, expected, "{query}");
    }
}
