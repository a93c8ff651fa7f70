//! Length limits on stored text: every string a request body stores has a `maxLength` in
//! the document (pretix's model limits where it has them), a longer value is refused with
//! DRF's message naming the field and nothing is stored, and a value at the limit is kept.

use std::collections::HashSet;

use serde_json::{Value, json};
use tessera_tests::TestApp;

use crate::catalogue_support::{EVENT, catalogue_app, created};
use crate::selling_support::shop;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";
const EVENTS: &str = "/api/v1/organizers/acme/events/";

/// DRF's message for a string over `max` characters.
fn too_long(max: usize) -> Value {
    json!([format!(
        "Ensure this field has no more than {max} characters."
    )])
}

/// How many objects a list endpoint has.
async fn count(app: &TestApp, path: &str, token: &str) -> Value {
    let r = app.get(path, token).await;
    assert_eq!(r.status, 200, "GET {path}: {}", r.body);
    r.body["count"].clone()
}

async fn gift_card_app() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.admin_token("acme").await;
    (app, token)
}

fn card(conditions: String) -> Value {
    json!({"value": "10.00", "currency": "EUR", "conditions": conditions})
}

#[tokio::test]
async fn a_gift_card_with_50_mb_of_conditions_is_refused_with_413_and_nothing_is_stored() {
    let (app, token) = gift_card_app().await;
    let r = app
        .post(CARDS, &token, card("x".repeat(50 * 1024 * 1024)))
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(count(&app, CARDS, &token).await, 0);
}

#[tokio::test]
async fn gift_card_conditions_over_10000_characters_are_400_naming_the_field_and_nothing_is_stored()
{
    let (app, token) = gift_card_app().await;
    // Just over the limit, and far over it while the body stays under the 1 MiB body limit.
    for length in [10_001, 500_000] {
        let r = app.post(CARDS, &token, card("x".repeat(length))).await;
        assert_eq!(r.status, 400, "{length}: {}", r.body);
        assert_eq!(r.body, json!({"conditions": too_long(10_000)}));
    }
    assert_eq!(count(&app, CARDS, &token).await, 0);
    let r = app
        .post(
            CARDS,
            &token,
            json!({"value": "1.00", "currency": "EUR", "secret": "x".repeat(191)}),
        )
        .await;
    assert_eq!(r.body, json!({"secret": too_long(190)}));
}

#[tokio::test]
async fn gift_card_conditions_of_exactly_10000_characters_are_kept_counting_characters_not_bytes() {
    let (app, token) = gift_card_app().await;
    // Two bytes each in UTF-8: 20,000 bytes, 10,000 characters.
    let conditions = "ä".repeat(10_000);
    let r = app.post(CARDS, &token, card(conditions.clone())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["conditions"], json!(conditions));
    let url = format!("{CARDS}{}/", r.body["id"]);
    let r = app
        .patch(&url, &token, json!({"conditions": "a".repeat(10_001)}))
        .await;
    assert_eq!(r.body, json!({"conditions": too_long(10_000)}));
    let r = app
        .post(
            &format!("{url}transact/"),
            &token,
            json!({"value": "1.00", "text": "t".repeat(10_001)}),
        )
        .await;
    assert_eq!(r.body, json!({"text": too_long(10_000)}));
    assert_eq!(
        app.get(&url, &token).await.body["conditions"],
        json!(conditions)
    );
}

/// A valid e-mail address of `length` (over 70) characters: a local part of 64, the most
/// there may be, and labels of at most 60 before `.org`.
fn email_of(length: usize) -> String {
    let mut domain = String::from("org");
    while 65 + domain.len() < length {
        let label = (length - 65 - domain.len() - 1).min(60);
        domain = format!("{}.{domain}", "d".repeat(label));
    }
    format!("{}@{domain}", "a".repeat(64))
}

fn event(name: Value) -> Value {
    json!({"name": name, "slug": "long", "currency": "EUR", "date_from": "2030-06-01T09:00:00Z"})
}

#[tokio::test]
async fn an_event_name_over_200_characters_in_one_language_is_400_naming_that_language() {
    let (app, _, token) = catalogue_app().await;
    let before = count(&app, EVENTS, &token).await;
    let r = app
        .post(
            EVENTS,
            &token,
            event(json!({"en": "Conference", "de": "K".repeat(201)})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"name": {"de": too_long(200)}}));
    assert_eq!(count(&app, EVENTS, &token).await, before);

    let name = json!({"en": "é".repeat(200), "de": "K".repeat(200)});
    let r = app.post(EVENTS, &token, event(name.clone())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], name);
    let r = app
        .patch(
            &format!("{EVENTS}long/"),
            &token,
            json!({"location": {"en": "x".repeat(201)}}),
        )
        .await;
    assert_eq!(r.body, json!({"location": {"en": too_long(200)}}));
}

#[tokio::test]
async fn an_item_internal_name_over_255_characters_is_400_and_nothing_is_stored() {
    let (app, _, token) = catalogue_app().await;
    let items = format!("{EVENT}/items/");
    let item = |internal_name: String| json!({"name": {"en": "Ticket"}, "default_price": "10.00", "internal_name": internal_name});
    let r = app.post(&items, &token, item("i".repeat(256))).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"internal_name": too_long(255)}));
    let r = app
        .post(
            &items,
            &token,
            json!({"name": {"en": "n".repeat(256)}, "default_price": "10.00"}),
        )
        .await;
    assert_eq!(r.body, json!({"name": {"en": too_long(255)}}));
    assert_eq!(count(&app, &items, &token).await, 0);

    let kept = created(&app, &items, &token, item("i".repeat(255))).await;
    assert_eq!(kept["internal_name"], json!("i".repeat(255)));
}

#[tokio::test]
async fn a_voucher_code_over_255_characters_is_400_and_one_of_255_is_kept() {
    let (app, _, token) = catalogue_app().await;
    let vouchers = format!("{EVENT}/vouchers/");
    let r = app
        .post(&vouchers, &token, json!({"code": "A".repeat(256)}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"code": too_long(255)}));
    let r = app
        .post(
            &vouchers,
            &token,
            json!({"code": "B", "comment": "c".repeat(10_001)}),
        )
        .await;
    assert_eq!(r.body, json!({"comment": too_long(10_000)}));
    assert_eq!(count(&app, &vouchers, &token).await, 0);

    let kept = created(&app, &vouchers, &token, json!({"code": "A".repeat(255)})).await;
    assert_eq!(kept["code"], json!("A".repeat(255)));
}

#[tokio::test]
async fn an_order_email_or_comment_over_its_limit_is_400_and_no_order_is_placed() {
    let s = shop(Some(10)).await;
    let orders = format!("{EVENT}/orders/");
    let order = |email: String, comment: String| json!({"email": email, "comment": comment, "positions": [{"item": s.ticket}]});
    let r = s.order(order(email_of(255), String::new())).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"email": too_long(254)}));
    let r = s
        .order(order("ada@example.org".into(), "c".repeat(10_001)))
        .await;
    assert_eq!(r.body, json!({"comment": too_long(10_000)}));
    let r = s
        .order(json!({"email": "ada@example.org", "positions": [
            {"item": s.ticket, "attendee_name_parts": {"full_name": "n".repeat(256)}}]}))
        .await;
    assert_eq!(
        r.body,
        json!({"positions": [{"attendee_name_parts": {"full_name": too_long(255)}}]})
    );
    assert_eq!(count(&s.app, &orders, &s.token).await, 0);
    assert_eq!(s.availability(s.quota).await["available_number"], 10);

    let r = s.order(order(email_of(254), "c".repeat(10_000))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["email"], json!(email_of(254)));
    assert_eq!(r.body["comment"], json!("c".repeat(10_000)));
}

#[tokio::test]
async fn order_api_meta_over_10000_characters_as_json_is_400() {
    let s = shop(Some(10)).await;
    let meta = |length: usize| json!({"k": "m".repeat(length)});
    let r = s
        .order(
            json!({"email": "ada@example.org", "positions": [{"item": s.ticket}],
            "api_meta": meta(10_000)}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"api_meta": too_long(10_000)}));
    // `{"k":"…"}` adds eight characters to the text.
    let r = s
        .order(
            json!({"email": "ada@example.org", "positions": [{"item": s.ticket}],
            "api_meta": meta(10_000 - 8)}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn a_question_text_over_100000_characters_is_400_and_nothing_is_stored() {
    let (app, _, token) = catalogue_app().await;
    let questions = format!("{EVENT}/questions/");
    let question =
        |text: String| json!({"question": {"en": "Shirt size", "de": text}, "type": "S"});
    let r = app
        .post(&questions, &token, question("q".repeat(100_001)))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"question": {"de": too_long(100_000)}}));
    let r = app
        .post(
            &questions,
            &token,
            json!({"question": {"en": "Shirt"}, "type": "C",
                "options": [{"answer": {"en": "S"}}, {"answer": {"en": "o".repeat(10_001)}}]}),
        )
        .await;
    assert_eq!(
        r.body,
        json!({"options": [{}, {"answer": {"en": too_long(10_000)}}]})
    );
    assert_eq!(count(&app, &questions, &token).await, 0);

    let kept = created(&app, &questions, &token, question("q".repeat(100_000))).await;
    assert_eq!(kept["question"]["de"], json!("q".repeat(100_000)));
}

#[tokio::test]
async fn a_map_key_over_190_characters_is_400_without_echoing_the_key() {
    let s = shop(Some(10)).await;
    let key = "k".repeat(191);
    let r = s
        .order(json!({"email": "ada@example.org", "positions": [
            {"item": s.ticket, "attendee_name_parts": {key.clone(): "Ada"}}]}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"positions": [{"attendee_name_parts":
            ["Ensure no key of this field has more than 190 characters."]}]})
    );
    assert!(!r.body.to_string().contains(&key));
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({key.clone(): true}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"non_field_errors": ["Ensure no key of this field has more than 190 characters."]})
    );
}

#[tokio::test]
async fn a_text_setting_over_its_declared_length_is_400_and_explain_shows_the_length() {
    let (app, _, token) = catalogue_app().await;
    let settings = format!("{EVENT}/settings/");
    let r = app
        .patch(
            &settings,
            &token,
            json!({"checkout_email_helptext": "h".repeat(10_001)}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body, json!({"checkout_email_helptext": too_long(10_000)}));
    let r = app
        .patch(
            &settings,
            &token,
            json!({"checkout_email_helptext": "h".repeat(10_000)}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let shown = app.get(&format!("{settings}?explain=true"), &token).await;
    assert_eq!(shown.body["checkout_email_helptext"]["max_length"], 10_000);
    assert_eq!(shown.body["contact_mail"]["max_length"], 254);
    assert!(
        shown.body["waiting_list_enabled"]
            .get("max_length")
            .is_none()
    );
}

/// The schemas a JSON request body of the document can reach, each once. JSON bodies are
/// the ones checked against their schema; uploads and OAuth's form bodies read their own.
fn request_schemas(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let paths = doc["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("operations") {
            let media = &op["requestBody"]["content"]["application/json"];
            if media.is_object() {
                let at = format!("{method} {path}");
                walk(doc, &media["schema"], at, &mut seen, &mut out);
            }
        }
    }
    out
}

fn walk<'a>(
    doc: &'a Value,
    schema: &'a Value,
    at: String,
    seen: &mut HashSet<String>,
    out: &mut Vec<(String, &'a Value)>,
) {
    if let Some(reference) = schema["$ref"].as_str() {
        if !seen.insert(reference.to_owned()) {
            return;
        }
        let name = reference.trim_start_matches("#/components/schemas/");
        walk(
            doc,
            &doc["components"]["schemas"][name],
            name.to_owned(),
            seen,
            out,
        );
        return;
    }
    if schema["readOnly"] == true {
        return;
    }
    out.push((at.clone(), schema));
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, sub) in schema[key].as_array().into_iter().flatten().enumerate() {
            walk(doc, sub, format!("{at}.{key}[{i}]"), seen, out);
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, p) in properties {
            walk(doc, p, format!("{at}.{name}"), seen, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if schema[key].is_object() {
            walk(doc, &schema[key], format!("{at}.{key}"), seen, out);
        }
    }
}

#[test]
fn every_string_a_request_body_can_store_has_a_max_length_in_the_document() {
    let mut plugins = tessera::plugin::PluginRegistry::default();
    plugins.register(std::sync::Arc::new(
        tessera_plugin_banktransfer::BankTransfer,
    ));
    let doc = tessera::openapi_document(&plugins);
    let schemas = request_schemas(&doc);
    assert!(schemas.len() > 100, "the walk reaches the request bodies");
    let unbounded: Vec<&String> = schemas
        .iter()
        .filter(|(_, s)| {
            // Formats (dates, amounts, currencies, files) and choices are checked by value.
            s["type"] == "string"
                && s.get("maxLength").is_none()
                && s.get("format").is_none()
                && s.get("enum").is_none()
        })
        .map(|(at, _)| at)
        .collect();
    assert!(
        unbounded.is_empty(),
        "strings without maxLength: {unbounded:#?}"
    );
    // A multi-language text refers to the component of its limit.
    let event_name = &doc["components"]["schemas"]["EventCreate"]["properties"]["name"];
    assert_eq!(
        event_name["allOf"][0]["$ref"],
        "#/components/schemas/I18nString_200"
    );
    let texts = &doc["components"]["schemas"]["I18nString_200"]["additionalProperties"];
    assert_eq!(texts["maxLength"], 200);
    assert_eq!(texts["type"], "string");
}
