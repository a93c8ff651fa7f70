//! Invoices as pretix issues them: when the settings say, numbered without gaps, with the
//! tax rules' rates and the EU reverse charge, cancelled by negative invoices, reissued,
//! regenerated and transmitted through pretix's API; their PDFs read back with pdftotext and
//! their EN 16931 documents checked by the validator.

use serde_json::{Value, json};
use tessera_tests::{Reply, TestApp};

use crate::einvoice_support::{assert_valid_cii, assert_valid_facturx_pdf};
use crate::pdf_support::checked_text;
use crate::selling_support::{EVENT, Shop, created, id, item, shop, shop_on};

const ISSUER: &str = "Acme Events GmbH";

/// A shop whose ticket (23.00) carries 19 % VAT included, under a German issuer with a VAT
/// ID, issuing invoices as `generate` says.
async fn invoicing_shop(generate: &str) -> Shop {
    invoicing(shop(None).await, generate).await
}

async fn invoicing(s: Shop, generate: &str) -> Shop {
    let vat = tax_rule(&s, "19.00", json!({})).await;
    patch(
        &s,
        &format!("{EVENT}/items/{}/", s.ticket),
        json!({"tax_rule": vat}),
    )
    .await;
    set(
        &s,
        json!({
            "invoice_generate": generate,
            "invoice_address_from_name": ISSUER,
            "invoice_address_from": "Hauptstraße 1",
            "invoice_address_from_zipcode": "10115",
            "invoice_address_from_city": "Berlin",
            "invoice_address_from_country": "DE",
            "invoice_address_from_vat_id": "DE123456789",
            "invoice_address_from_phone": "+49 30 123456",
            "contact_mail": "billing@acme.example",
            "invoice_introductory_text": {"en": "Thank you for your order."},
            "invoice_footer_text": "Acme Events GmbH · Register HRB 1",
        }),
    )
    .await;
    s
}

async fn tax_rule(s: &Shop, rate: &str, extra: Value) -> i64 {
    let mut body = json!({"name": {"en": "VAT", "de": "MwSt."}, "rate": rate});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    id(&created(&s.app, &format!("{EVENT}/taxrules/"), &s.token, body).await)
}

async fn set(s: &Shop, settings: Value) {
    patch(s, &format!("{EVENT}/settings/"), settings).await;
}

async fn patch(s: &Shop, path: &str, body: Value) {
    let r = s.app.patch(path, &s.token, body).await;
    assert_eq!(r.status, 200, "PATCH {path}: {}", r.body);
}

async fn get(s: &Shop, path: &str) -> Reply {
    s.app.get(path, &s.token).await
}

fn business_in(country: &str, vat_id: &str) -> Value {
    json!({
        "is_business": true, "company": "Buyer AG", "name_parts": {"full_name": "Erika Muster"},
        "street": "Ring 5", "zipcode": "1010", "city": "Wien", "country": country,
        "vat_id": vat_id,
    })
}

async fn order(s: &Shop, extra: Value) -> String {
    let mut body = json!({"invoice_address": business_in("DE", "")});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    s.ordered(1, body).await["code"]
        .as_str()
        .expect("code")
        .to_owned()
}

/// The event's invoices, with a query.
async fn invoices(s: &Shop, query: &str) -> Vec<Value> {
    let r = get(s, &format!("{EVENT}/invoices/{query}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["results"].as_array().expect("results").clone()
}

fn number(inv: &Value) -> String {
    inv["number"].as_str().expect("number").to_owned()
}

#[tokio::test]
async fn orders_placed_with_invoice_generate_true_get_consecutive_invoices_with_their_taxes() {
    let s = invoicing_shop("True").await;
    let first = order(&s, json!({})).await;
    let second = order(&s, json!({})).await;
    let all = invoices(&s, "").await;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(number(&all[0]), "CONF-00001");
    assert_eq!(number(&all[1]), "CONF-00002");
    assert_eq!(all[0]["order"], first);
    assert_eq!(all[1]["order"], second);
    let inv = &all[0];
    assert_eq!(inv["event"], "conf");
    assert_eq!(inv["is_cancellation"], false);
    assert_eq!(inv["refers"], Value::Null);
    assert_eq!(inv["locale"], "en");
    assert_eq!(inv["invoice_from_name"], ISSUER);
    assert_eq!(inv["invoice_from_vat_id"], "DE123456789");
    assert_eq!(inv["invoice_to_company"], "Buyer AG");
    assert_eq!(inv["invoice_to_name"], "Erika Muster");
    assert!(
        inv["invoice_to"]
            .as_str()
            .is_some_and(|t| t.contains("Buyer AG\nErika Muster\nRing 5\n1010 Wien")),
        "{inv}"
    );
    assert_eq!(inv["introductory_text"], "Thank you for your order.");
    assert_eq!(inv["transmission_status"], "pending");
    let line = &inv["lines"][0];
    assert_eq!(line["position"], 1);
    assert_eq!(line["description"], "Ticket");
    assert_eq!(line["gross_value"], "23.00");
    assert_eq!(line["tax_value"], "3.67");
    assert_eq!(line["tax_rate"], "19.00");
    assert_eq!(line["tax_name"], "VAT");
    assert_eq!(line["tax_code"], "S");
    assert_eq!(line["item"], s.ticket);

    let one = get(&s, &format!("{EVENT}/invoices/CONF-00001/")).await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.body["order"], first);

    let pdf = get(&s, &format!("{EVENT}/invoices/CONF-00001/download/")).await;
    assert_eq!(pdf.status, 200, "{}", pdf.body);
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    assert_eq!(
        pdf.header("content-disposition"),
        Some("attachment; filename=\"CONF-00001.pdf\"")
    );
    if let Some(text) = checked_text(&pdf.bytes) {
        for shown in [
            "CONF-00001",
            ISSUER,
            "Buyer AG",
            "Erika Muster",
            "23.00",
            "3.67",
            "19.00",
            &first,
            "Thank you for your order.",
        ] {
            assert!(text.contains(shown), "{shown} not in: {text}");
        }
    }
    let xml = get(
        &s,
        &format!("{EVENT}/invoices/CONF-00001/download/?format=xrechnung"),
    )
    .await;
    assert_eq!(xml.status, 200);
    assert_eq!(xml.header("content-type"), Some("application/xml"));
    assert_valid_cii(&xml.bytes);
}

#[tokio::test]
async fn without_invoice_generate_no_invoice_is_issued_and_create_invoice_follows_pretix() {
    let s = invoicing_shop("False").await;
    let code = order(&s, json!({})).await;
    assert!(invoices(&s, "").await.is_empty());
    let refused = s.act(&code, "create_invoice", json!({})).await;
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["detail"],
        "You cannot generate an invoice for this order."
    );

    set(&s, json!({"invoice_generate": "admin"})).await;
    let made = s.act(&code, "create_invoice", json!({})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["number"], "CONF-00001");
    assert_eq!(made.body["order"], code);
    let again = s.act(&code, "create_invoice", json!({})).await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body["detail"],
        "An invoice for this order already exists."
    );

    let free = s
        .ordered(
            1,
            json!({"positions": [{"item": s.ticket, "price": "0.00"}]}),
        )
        .await;
    let free = free["code"].as_str().expect("code");
    let none = s.act(free, "create_invoice", json!({})).await;
    assert_eq!(none.status, 400, "free orders get no invoice");
}

#[tokio::test]
async fn invoice_generate_paid_issues_the_invoice_when_the_order_is_paid() {
    let s = invoicing_shop("paid").await;
    let code = order(&s, json!({})).await;
    assert!(invoices(&s, "").await.is_empty());
    let paid = s.act(&code, "mark_paid", json!({})).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let all = invoices(&s, "").await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["order"], code);
    assert_eq!(all[0]["payment_provider_text"], "");
}

#[tokio::test]
async fn canceling_an_order_issues_a_negative_cancellation_that_refers_to_its_invoice() {
    let s = invoicing_shop("True").await;
    set(
        &s,
        json!({"invoice_numbers_prefix_cancellations": "STORNO-"}),
    )
    .await;
    let code = order(&s, json!({})).await;
    let other = order(&s, json!({})).await;
    let r = s.act(&code, "mark_canceled", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let all = invoices(&s, "?ordering=nr").await;
    let numbers: Vec<String> = all.iter().map(number).collect();
    assert_eq!(numbers, ["CONF-00001", "CONF-00002", "STORNO-00001"]);
    let cancellation = &all[2];
    assert_eq!(cancellation["is_cancellation"], true);
    assert_eq!(cancellation["refers"], "CONF-00001");
    assert_eq!(cancellation["order"], code);
    assert_eq!(cancellation["lines"][0]["gross_value"], "-23.00");
    assert_eq!(cancellation["lines"][0]["tax_value"], "-3.67");

    let only = invoices(&s, "?is_cancellation=true").await;
    assert_eq!(only.len(), 1);
    let referring = invoices(&s, "?refers=conf-00001").await;
    assert_eq!(
        referring.iter().map(number).collect::<Vec<_>>(),
        ["STORNO-00001"]
    );
    let of_order = invoices(&s, &format!("?order={}", code.to_lowercase())).await;
    assert_eq!(of_order.len(), 2);
    let by_number = invoices(&s, "?number=CONF-00002&number=STORNO-00001").await;
    assert_eq!(by_number.len(), 2);
    assert_eq!(by_number[0]["order"], other);
    let newest = invoices(&s, "?ordering=-nr").await;
    assert_eq!(number(&newest[0]), "STORNO-00001");

    let pdf = get(&s, &format!("{EVENT}/invoices/STORNO-00001/download/")).await;
    assert_eq!(pdf.status, 200);
    if let Some(text) = checked_text(&pdf.bytes) {
        assert!(
            text.contains("CONF-00001") && text.contains("STORNO-00001"),
            "{text}"
        );
        assert!(text.contains("-23.00"), "{text}");
    }
    let xml = get(
        &s,
        &format!("{EVENT}/invoices/STORNO-00001/download/?format=xrechnung"),
    )
    .await;
    assert_valid_cii(&xml.bytes);
}

#[tokio::test]
async fn eu_businesses_abroad_with_a_valid_looking_vat_id_pay_net_under_reverse_charge() {
    let s = shop(None).await;
    let s = invoicing(s, "True").await;
    let rc = tax_rule(
        &s,
        "19.00",
        json!({"eu_reverse_charge": true, "home_country": "DE"}),
    )
    .await;
    patch(
        &s,
        &format!("{EVENT}/items/{}/", s.ticket),
        json!({"tax_rule": rc}),
    )
    .await;

    let abroad = s
        .ordered(
            1,
            json!({"invoice_address": business_in("AT", "ATU12345678")}),
        )
        .await;
    assert_eq!(abroad["positions"][0]["price"], "19.33");
    assert_eq!(abroad["positions"][0]["tax_value"], "0.00");
    assert_eq!(abroad["positions"][0]["tax_rate"], "0.00");
    assert_eq!(abroad["total"], "19.33");
    let bad_id = s
        .ordered(1, json!({"invoice_address": business_in("AT", "ATU1234")}))
        .await;
    assert_eq!(bad_id["positions"][0]["price"], "23.00");
    assert_eq!(bad_id["positions"][0]["tax_value"], "3.67");
    let home = s
        .ordered(
            1,
            json!({"invoice_address": business_in("DE", "DE999999999")}),
        )
        .await;
    assert_eq!(home["positions"][0]["tax_value"], "3.67");

    let all = invoices(
        &s,
        &format!("?order={}", abroad["code"].as_str().expect("code")),
    )
    .await;
    let inv = &all[0];
    assert_eq!(inv["invoice_to_vat_id"], "ATU12345678");
    assert_eq!(inv["lines"][0]["tax_code"], "AE");
    assert_eq!(inv["lines"][0]["gross_value"], "19.33");
    let text = inv["additional_text"].as_str().expect("text");
    assert!(
        text.contains(
            "Reverse Charge: According to Article 194, 196 of Council Directive 2006/112/EEC"
        ),
        "{text}"
    );
    let n = number(inv);
    let pdf = get(&s, &format!("{EVENT}/invoices/{n}/download/")).await;
    if let Some(text) = checked_text(&pdf.bytes) {
        assert!(text.contains("Reverse Charge"), "{text}");
        assert!(text.contains("ATU12345678"), "{text}");
    }
    let xml = get(
        &s,
        &format!("{EVENT}/invoices/{n}/download/?format=xrechnung"),
    )
    .await;
    assert_valid_cii(&xml.bytes);
}

#[tokio::test]
async fn lines_of_mixed_rates_are_summed_per_rate_and_the_pdf_can_carry_the_e_invoice() {
    let s = invoicing_shop("True").await;
    let reduced = tax_rule(&s, "7.00", json!({})).await;
    let book = id(&item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Conference book"}, "default_price": "10.70", "tax_rule": reduced}),
    )
    .await);
    let r = s
        .app
        .patch(
            &format!("{EVENT}/quotas/{}/", s.quota),
            &s.token,
            json!({"items": [s.ticket, book]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = s
        .order(json!({
            "email": "ada@example.org",
            "invoice_address": business_in("DE", ""),
            "positions": [{"item": s.ticket}, {"item": book}],
            "fees": [{"fee_type": "shipping", "value": "5.00", "tax_rule": reduced}],
        }))
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let inv = &invoices(&s, "").await[0];
    let lines = inv["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), 3, "{inv}");
    assert_eq!(lines[1]["tax_rate"], "7.00");
    assert_eq!(lines[1]["tax_value"], "0.70");
    assert_eq!(lines[2]["fee_type"], "shipping");
    assert_eq!(lines[2]["description"], "Shipping fee");
    assert_eq!(lines[2]["tax_value"], "0.33");

    set(&s, json!({"invoice_einvoice_embed": true})).await;
    let pdf = get(&s, &format!("{EVENT}/invoices/CONF-00001/download/")).await;
    assert_eq!(pdf.status, 200);
    if let Some(text) = checked_text(&pdf.bytes) {
        for shown in ["7.00", "19.00", "Conference book", "Shipping fee", "38.70"] {
            assert!(text.contains(shown), "{shown} not in {text}");
        }
    }
    assert_valid_facturx_pdf(&pdf.bytes);
    let xml = get(
        &s,
        &format!("{EVENT}/invoices/CONF-00001/download/?format=facturx"),
    )
    .await;
    assert_valid_cii(&xml.bytes);
}

#[tokio::test]
async fn an_order_change_cancels_the_invoice_and_issues_one_that_shows_the_change() {
    let s = invoicing_shop("True").await;
    let code = order(&s, json!({})).await;
    let shown = get(&s, &format!("{EVENT}/orders/{code}/")).await;
    let position = shown.body["positions"][0]["id"].as_i64().expect("id");
    let r = s
        .act(
            &code,
            "change",
            json!({"patch_positions": [{"position": position, "body": {"price": "30.00"}}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let all = invoices(&s, "").await;
    let numbers: Vec<String> = all.iter().map(number).collect();
    assert_eq!(numbers, ["CONF-00001", "CONF-00002", "CONF-00003"]);
    assert_eq!(all[1]["is_cancellation"], true);
    assert_eq!(all[1]["refers"], "CONF-00001");
    assert_eq!(all[2]["lines"][0]["gross_value"], "30.00");

    let unchanged = s
        .act(
            &code,
            "change",
            json!({"reissue_invoice": false, "patch_positions": [{"position": position, "body": {"price": "31.00"}}]}),
        )
        .await;
    assert_eq!(unchanged.status, 200, "{}", unchanged.body);
    assert_eq!(invoices(&s, "").await.len(), 3);
}

#[tokio::test]
async fn reissue_and_regenerate_follow_pretix_rules() {
    let s = invoicing_shop("True").await;
    let code = order(&s, json!({})).await;
    let path = format!("{EVENT}/invoices/CONF-00001");
    let refused = s
        .app
        .post(&format!("{path}/regenerate/"), &s.token, json!({}))
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.body["detail"], "Invoice may not be regenerated.");

    set(&s, json!({"invoice_regenerate_allowed": true, "invoice_address_from_name": "Acme Renamed GmbH"})).await;
    let done = s
        .app
        .post(&format!("{path}/regenerate/"), &s.token, json!({}))
        .await;
    assert_eq!(done.status, 204, "{}", done.body);
    let inv = get(&s, &format!("{path}/")).await;
    assert_eq!(inv.body["number"], "CONF-00001");
    assert_eq!(inv.body["invoice_from_name"], "Acme Renamed GmbH");
    let pdf = get(&s, &format!("{path}/download/")).await;
    if let Some(text) = checked_text(&pdf.bytes) {
        assert!(text.contains("Acme Renamed GmbH"), "{text}");
    }

    let r = s
        .app
        .post(&format!("{path}/reissue/"), &s.token, json!({}))
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let all = invoices(&s, &format!("?order={code}")).await;
    assert_eq!(
        all.iter().map(number).collect::<Vec<_>>(),
        ["CONF-00001", "CONF-00002", "CONF-00003"]
    );
    assert_eq!(all[1]["refers"], "CONF-00001");
    assert_eq!(all[2]["is_cancellation"], false);
    for action in ["reissue", "regenerate"] {
        let again = s
            .app
            .post(&format!("{path}/{action}/"), &s.token, json!({}))
            .await;
        assert_eq!(again.status, 400, "{action}");
        assert_eq!(
            again.body["detail"],
            "The invoice has already been canceled."
        );
    }
    let unknown = s
        .app
        .post(
            &format!("{EVENT}/invoices/NOPE-1/reissue/"),
            &s.token,
            json!({}),
        )
        .await;
    assert_eq!(unknown.status, 403);
}

#[tokio::test]
async fn transmissions_fail_as_pretix_reports_them_without_a_provider() {
    let s = invoicing_shop("True").await;
    order(&s, json!({})).await;
    let path = format!("{EVENT}/invoices/CONF-00001");
    let r = s
        .app
        .post(&format!("{path}/transmit/"), &s.token, json!({}))
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let inv = get(&s, &format!("{path}/")).await;
    assert_eq!(inv.body["transmission_status"], "failed");
    assert!(inv.body["transmission_date"].is_string());
    let again = s
        .app
        .post(&format!("{path}/transmit/"), &s.token, json!({}))
        .await;
    assert_eq!(again.status, 403);
    assert_eq!(again.body["detail"], "The invoice is not in pending state.");
    let retry = s
        .app
        .post(&format!("{path}/retransmit/"), &s.token, json!({}))
        .await;
    assert_eq!(retry.status, 204, "{}", retry.body);
}

#[tokio::test]
async fn the_organizer_list_and_permissions_show_only_invoices_the_caller_may_see() {
    let app = TestApp::spawn().await;
    let s = invoicing(shop_on(app, None).await, "True").await;
    order(&s, json!({})).await;
    let all = s
        .app
        .get("/api/v1/organizers/acme/invoices/", &s.token)
        .await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert_eq!(all.body["count"], 1);
    assert_eq!(all.body["results"][0]["event"], "conf");

    let settings_only = s.app.token("acme", &["can_change_event_settings"]).await;
    let none = s
        .app
        .get("/api/v1/organizers/acme/invoices/", &settings_only)
        .await;
    assert_eq!(none.status, 200);
    assert_eq!(none.body["count"], 0);
    let event_list = s
        .app
        .get(&format!("{EVENT}/invoices/"), &settings_only)
        .await;
    assert_eq!(event_list.status, 403);
    let reader = s.app.token("acme", &["can_view_orders"]).await;
    let read = s
        .app
        .get(&format!("{EVENT}/invoices/CONF-00001/download/"), &reader)
        .await;
    assert_eq!(read.status, 200);
    let write = s
        .app
        .post(
            &format!("{EVENT}/invoices/CONF-00001/reissue/"),
            &reader,
            json!({}),
        )
        .await;
    assert_eq!(write.status, 403);
    let other = s
        .app
        .token("acme", &["can_view_orders", "can_change_orders"])
        .await;
    let foreign = s
        .app
        .get("/api/v1/organizers/other/invoices/", &other)
        .await;
    assert_eq!(foreign.status, 403);
}

#[tokio::test]
async fn numbers_follow_the_prefix_settings_and_test_mode() {
    let s = invoicing_shop("True").await;
    set(
        &s,
        json!({"invoice_numbers_prefix": "R%Y-", "invoice_numbers_counter_length": 3}),
    )
    .await;
    order(&s, json!({})).await;
    order(&s, json!({"testmode": true})).await;
    set(&s, json!({"invoice_numbers_consecutive": false})).await;
    let code = order(&s, json!({})).await;
    let year = chrono::Utc::now().format("%Y").to_string();
    let numbers: Vec<String> = invoices(&s, "").await.iter().map(number).collect();
    assert!(numbers.contains(&format!("R{year}-001")), "{numbers:?}");
    assert!(
        numbers.contains(&format!("R{year}-TEST-001")),
        "{numbers:?}"
    );
    assert!(
        numbers.contains(&format!("R{year}-{code}-1")),
        "{numbers:?}"
    );

    let bad = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"invoice_generate": "sometimes", "invoice_numbers_prefix": "R%Q"}),
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body["invoice_generate"].is_array(), "{}", bad.body);
    assert!(
        bad.body["invoice_numbers_prefix"].is_array(),
        "{}",
        bad.body
    );
}

#[tokio::test]
async fn a_number_taken_by_a_transaction_that_rolls_back_is_issued_again() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, TransactionTrait};
    use tessera::db::entities::{event, order as orders};
    use tessera::domain::invoices::numbers;

    let s = invoicing_shop("admin").await;
    let code = order(&s, json!({})).await;
    let db = &s.app.db;
    let ev = event::Entity::find_by_id(s.event)
        .one(db)
        .await
        .expect("query")
        .expect("event");
    let o = orders::Entity::find()
        .filter(orders::Column::Code.eq(code.as_str()))
        .one(db)
        .await
        .expect("query")
        .expect("order");
    let settings = [("invoice_numbers_consecutive", json!(true))]
        .into_iter()
        .collect();
    let txn = db.begin().await.expect("begin");
    let taken = numbers::next(&txn, &settings, &ev, &o, "CONF-")
        .await
        .expect("number");
    assert_eq!(taken, "00001");
    txn.rollback().await.expect("rollback");

    let made = s.act(&code, "create_invoice", json!({})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["number"], "CONF-00001");
}

#[tokio::test]
async fn invoices_speak_the_order_language_and_follow_the_line_settings() {
    let s = invoicing_shop("True").await;
    set(
        &s,
        json!({
            "locales": ["en", "de"],
            "invoice_additional_text": {"en": "Payable at once.", "de": "Zahlbar sofort."},
        }),
    )
    .await;
    let positions = json!([
        {"item": s.ticket, "attendee_name_parts": {"full_name": "Ada Lovelace"}},
        {"item": s.ticket, "price": "0.00", "attendee_name_parts": {"full_name": "Grace Hopper"}},
    ]);
    let german = s
        .ordered(1, json!({"locale": "de", "positions": positions, "invoice_address": business_in("DE", "")}))
        .await;
    let inv = &invoices(
        &s,
        &format!("?order={}", german["code"].as_str().expect("code")),
    )
    .await[0];
    assert_eq!(inv["locale"], "de");
    assert_eq!(inv["additional_text"], "Zahlbar sofort.");
    let lines = inv["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), 2, "free lines are shown by default");
    assert_eq!(lines[0]["tax_name"], "MwSt.");
    assert_eq!(lines[0]["attendee_name"], "Ada Lovelace");
    assert!(
        lines[0]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Ada Lovelace"))
    );
    let n = number(inv);
    let pdf = get(&s, &format!("{EVENT}/invoices/{n}/download/")).await;
    if let Some(text) = checked_text(&pdf.bytes) {
        assert!(
            text.contains("Rechnung") && text.contains("Zahlbar sofort."),
            "{text}"
        );
        assert!(
            text.contains("Acme Events GmbH · Register HRB 1"),
            "the footer: {text}"
        );
    }

    set(
        &s,
        json!({"invoice_include_free": false, "invoice_attendee_name": false}),
    )
    .await;
    let plain = s
        .ordered(
            1,
            json!({"positions": positions, "invoice_address": business_in("DE", "")}),
        )
        .await;
    let inv = &invoices(
        &s,
        &format!("?order={}", plain["code"].as_str().expect("code")),
    )
    .await[0];
    assert_eq!(inv["locale"], "en");
    let lines = inv["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), 1, "{inv}");
    assert_eq!(lines[0]["attendee_name"], Value::Null);
    assert_eq!(lines[0]["description"], "Ticket");
    assert_eq!(invoices(&s, "?locale=de").await.len(), 1);
}

#[tokio::test]
async fn an_e_invoice_the_settings_cannot_complete_is_refused_naming_what_it_lacks() {
    let s = invoicing_shop("True").await;
    set(
        &s,
        json!({"invoice_address_from_vat_id": "", "invoice_einvoice_embed": true}),
    )
    .await;
    order(&s, json!({})).await;
    let xml = get(
        &s,
        &format!("{EVENT}/invoices/CONF-00001/download/?format=xrechnung"),
    )
    .await;
    assert_eq!(xml.status, 409, "{}", xml.body);
    let said = xml.body["detail"].as_str().expect("detail");
    assert!(said.contains("BT-31"), "{said}");
    let pdf = get(&s, &format!("{EVENT}/invoices/CONF-00001/download/")).await;
    assert_eq!(pdf.status, 200, "the PDF goes out without the document");
    assert!(!pdf.bytes.windows(12).any(|w| w == b"factur-x.xml"));
}
