//! What buyers do themselves through their order's link: cancel it within the event's
//! rules (unpaid, or paid with a fee kept and the rest refunded), and have the links to
//! their orders mailed again.

use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use tessera::db::entities::event;
use tessera_tests::{Reply, outbox};

use crate::browser_support::{Browser, csrf_field, html, set_cookies};
use crate::selling_support::{EVENT, Shop, shop};

const PUBLIC_URL: &str = "http://tessera.test";

/// A shop with the event's `settings` set.
async fn shop_with(settings: Value) -> Shop {
    let s = shop(Some(10)).await;
    let r = s
        .app
        .patch(&format!("{EVENT}/settings/"), &s.token, settings)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    s.app.state.cache.refresh().await;
    s
}

/// An order of two tickets with a pending manual payment (paid too, with `paid`): its code
/// and its page's path.
async fn placed(s: &Shop, paid: bool) -> (String, String) {
    let o = s.ordered(2, json!({"payment_provider": "manual"})).await;
    let code = o["code"].as_str().expect("code").to_owned();
    if paid {
        let r = s.act(&code, "mark_paid", json!({})).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let page = o["url"]
        .as_str()
        .and_then(|u| u.strip_prefix(PUBLIC_URL))
        .expect("a page under the public URL")
        .trim_end_matches('/')
        .to_owned();
    (code, page)
}

async fn order(s: &Shop, code: &str) -> Value {
    let r = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// Opens the cancel page and posts its form with `fields`.
async fn cancel(browser: &mut Browser<'_>, page: &str, fields: &[(&str, &str)]) -> Reply {
    let form = browser.get(&format!("{page}/cancel")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let token = csrf_field(html(&form));
    let mut posted = vec![("csrfmiddlewaretoken", token.as_str())];
    posted.extend_from_slice(fields);
    browser.post(&format!("{page}/cancel/do"), &posted).await
}

/// The CSRF token a page set as the browser's cookie.
fn csrf_cookie(r: &Reply) -> String {
    set_cookies(r)
        .iter()
        .find_map(|c| c.strip_prefix("tessera_csrf="))
        .and_then(|c| c.split(';').next())
        .expect("a csrf cookie")
        .to_owned()
}

#[tokio::test]
async fn a_buyer_cancels_an_unpaid_order_from_its_page_and_the_tickets_go_back_to_the_quota() {
    let s = shop_with(json!({})).await;
    let (code, page) = placed(&s, false).await;
    assert_eq!(s.availability(s.quota).await["available_number"], 8);
    let mut browser = Browser::new(&s.app);
    let shown = browser.get(&page).await;
    assert!(html(&shown).contains("Cancel order"), "{}", shown.body);

    let r = cancel(&mut browser, &page, &[]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some(format!("{page}/?canceled=1").as_str())
    );
    assert_eq!(order(&s, &code).await["status"], "c");
    assert_eq!(s.availability(s.quota).await["available_number"], 10);
    let shown = browser.get(&format!("{page}/?canceled=1")).await;
    assert!(html(&shown).contains("Your order has been canceled."));
    assert!(!html(&shown).contains("Cancel order"));
    let mails = outbox(&s.app.db).await;
    assert!(
        mails.iter().any(|m| m.subject.contains("canceled")),
        "{mails:?}"
    );
}

#[tokio::test]
async fn a_cancellation_posted_without_its_csrf_token_is_refused_and_changes_nothing() {
    let s = shop_with(json!({})).await;
    let (code, page) = placed(&s, false).await;
    let mut browser = Browser::new(&s.app);
    browser.get(&format!("{page}/cancel")).await;
    let r = browser.post(&format!("{page}/cancel/do"), &[]).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = browser
        .post(
            &format!("{page}/cancel/do"),
            &[("csrfmiddlewaretoken", &"x".repeat(64))],
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(order(&s, &code).await["status"], "n");
}

#[tokio::test]
async fn an_order_cannot_be_canceled_when_the_settings_or_a_deadline_forbid_it() {
    for settings in [
        json!({"cancel_allow_user": false}),
        json!({"cancel_allow_user_until": "2020-01-01T00:00:00Z"}),
        // The test event starts in a year or less: 400 days before it is past.
        json!({"cancel_allow_user_until": "RELDATE/400/-/event__date_from/"}),
    ] {
        let s = shop_with(settings.clone()).await;
        let (code, page) = placed(&s, false).await;
        let mut browser = Browser::new(&s.app);
        let shown = browser.get(&page).await;
        assert!(!html(&shown).contains("Cancel order"), "{settings}");
        let r = browser.get(&format!("{page}/cancel")).await;
        assert_eq!(r.status, 403, "{settings}");
        assert!(html(&r).contains("You cannot cancel this order."));
        // The page has no form; a forged post still carries the browser's token.
        let token = csrf_cookie(&r);
        let r = browser
            .post(
                &format!("{page}/cancel/do"),
                &[("csrfmiddlewaretoken", &token)],
            )
            .await;
        assert_eq!(r.status, 403, "{settings}: {}", r.body);
        assert_eq!(order(&s, &code).await["status"], "n", "{settings}");
    }
}

#[tokio::test]
async fn a_paid_order_is_only_canceled_where_the_event_allows_it_for_paid_orders() {
    let s = shop_with(json!({})).await;
    let (_, page) = placed(&s, true).await;
    let mut browser = Browser::new(&s.app);
    assert_eq!(browser.get(&format!("{page}/cancel")).await.status, 403);
    assert!(!html(&browser.get(&page).await).contains("Cancel order"));
}

#[tokio::test]
async fn a_paid_order_canceled_with_a_fee_keeps_the_fee_and_refunds_the_rest_to_a_gift_card() {
    let s = shop_with(json!({
        "cancel_allow_user_paid": true,
        "cancel_allow_user_paid_keep": "3.00",
        "cancel_allow_user_paid_keep_percentage": "10",
        "cancel_allow_user_paid_refund_as_giftcard": "force",
    }))
    .await;
    let (code, page) = placed(&s, true).await;
    let mut browser = Browser::new(&s.app);
    let form = browser.get(&format!("{page}/cancel")).await;
    // 10 % of 46.00, then 3.00: 7.60 kept, 38.40 back.
    assert!(html(&form).contains("7.60"), "{}", form.body);
    assert!(html(&form).contains("38.40"), "{}", form.body);

    let r = cancel(&mut browser, &page, &[]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let o = order(&s, &code).await;
    assert_eq!(o["status"], "p", "{o}");
    assert_eq!(o["total"], "7.60");
    assert_eq!(o["positions"], json!([]));
    assert_eq!(o["fees"][0]["fee_type"], "cancellation");
    assert_eq!(o["fees"][0]["value"], "7.60");
    assert_eq!(o["refunds"][0]["provider"], "giftcard");
    assert_eq!(o["refunds"][0]["state"], "done");
    assert_eq!(o["refunds"][0]["source"], "buyer");
    assert_eq!(o["refunds"][0]["amount"], "38.40");
    let cards = s
        .app
        .get("/api/v1/organizers/acme/giftcards/", &s.token)
        .await;
    assert_eq!(cards.body["results"][0]["value"], "38.40", "{}", cards.body);
    assert_eq!(s.availability(s.quota).await["available_number"], 10);
}

#[tokio::test]
async fn a_paid_order_whose_payment_cannot_be_refunded_leaves_the_refund_to_the_organizer() {
    let s = shop_with(json!({"cancel_allow_user_paid": true})).await;
    let (code, page) = placed(&s, true).await;
    let mut browser = Browser::new(&s.app);
    let r = cancel(&mut browser, &page, &[]).await;
    assert_eq!(
        r.header("location"),
        Some(format!("{page}/?canceled=1&refund_by_hand=1").as_str())
    );
    let o = order(&s, &code).await;
    assert_eq!(o["status"], "c");
    assert_eq!(o["refunds"], json!([]));
    let shown = browser
        .get(&format!("{page}/?canceled=1&refund_by_hand=1"))
        .await;
    assert!(html(&shown).contains("The organizer will refund what you paid."));
}

#[tokio::test]
async fn a_buyer_chooses_a_gift_card_where_the_event_offers_the_choice() {
    let s = shop_with(json!({
        "cancel_allow_user_paid": true,
        "cancel_allow_user_paid_refund_as_giftcard": "option",
    }))
    .await;
    let (code, page) = placed(&s, true).await;
    let mut browser = Browser::new(&s.app);
    let form = browser.get(&format!("{page}/cancel")).await;
    assert!(html(&form).contains("name=\"giftcard\" value=\"true\""));
    let r = cancel(&mut browser, &page, &[("giftcard", "true")]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let o = order(&s, &code).await;
    assert_eq!(o["status"], "c");
    assert_eq!(o["refunds"][0]["provider"], "giftcard");
    assert_eq!(o["refunds"][0]["amount"], "46.00");
}

#[tokio::test]
async fn two_cancellations_posted_at_once_cancel_and_refund_the_order_once() {
    let s = shop_with(json!({
        "cancel_allow_user_paid": true,
        "cancel_allow_user_paid_refund_as_giftcard": "force",
    }))
    .await;
    let (code, page) = placed(&s, true).await;
    let mut first = Browser::new(&s.app);
    let mut second = Browser::new(&s.app);
    let forms = (
        first.get(&format!("{page}/cancel")).await,
        second.get(&format!("{page}/cancel")).await,
    );
    let tokens = (csrf_field(html(&forms.0)), csrf_field(html(&forms.1)));
    let path = format!("{page}/cancel/do");
    let forms = (
        [("csrfmiddlewaretoken", tokens.0.as_str())],
        [("csrfmiddlewaretoken", tokens.1.as_str())],
    );
    let (a, b) = tokio::join!(first.post(&path, &forms.0), second.post(&path, &forms.1));
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [303, 403], "{} / {}", a.body, b.body);
    let o = order(&s, &code).await;
    assert_eq!(o["refunds"].as_array().map(Vec::len), Some(1), "{o}");
    assert_eq!(s.availability(s.quota).await["available_number"], 10);
}

#[tokio::test]
async fn the_resend_page_mails_an_addresss_order_links_and_answers_alike_for_an_unknown_one() {
    let s = shop_with(json!({})).await;
    event::ActiveModel {
        id: Set(s.event),
        live: Set(true),
        ..Default::default()
    }
    .update(&s.app.db)
    .await
    .expect("event");
    s.app.state.cache.refresh().await;
    let (code, page) = placed(&s, false).await;
    let before = outbox(&s.app.db).await.len();
    let mut browser = Browser::new(&s.app);
    let form = browser.get("/acme/conf/resend").await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(html(&form).contains("<label for=\"email\">"));
    let token = csrf_field(html(&form));

    let r = browser
        .post(
            "/acme/conf/resend",
            &[
                ("csrfmiddlewaretoken", &token),
                ("email", "ADA@example.org"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let said = "If there are orders with this email address, we have sent you links to them.";
    assert!(html(&r).contains(said));
    let mails = outbox(&s.app.db).await;
    assert_eq!(mails.len(), before + 1);
    let mail = mails.last().expect("a mail");
    assert_eq!(mail.to_address, "ada@example.org");
    assert!(mail.body_text.contains(&page), "{}", mail.body_text);
    assert!(mail.body_text.contains(&code));

    // Asked again at once, the page says the same and mails nothing more.
    let r = browser
        .post(
            "/acme/conf/resend",
            &[
                ("csrfmiddlewaretoken", &token),
                ("email", "ada@example.org"),
            ],
        )
        .await;
    assert!(html(&r).contains(said));
    assert_eq!(outbox(&s.app.db).await.len(), before + 1);
    let r = browser
        .post(
            "/acme/conf/resend",
            &[
                ("csrfmiddlewaretoken", &token),
                ("email", "bob@example.org"),
            ],
        )
        .await;
    assert!(html(&r).contains(said));
    assert_eq!(outbox(&s.app.db).await.len(), before + 1);

    let r = browser
        .post(
            "/acme/conf/resend",
            &[("csrfmiddlewaretoken", &token), ("email", "not an address")],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(html(&r).contains("Enter a valid email address."));
    let r = browser
        .post("/acme/conf/resend", &[("email", "ada@example.org")])
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(outbox(&s.app.db).await.len(), before + 1);
}

#[tokio::test]
async fn relative_deadlines_are_refused_in_settings_unless_well_formed() {
    let s = shop(Some(10)).await;
    for bad in [
        "RELDATE/1/-/tomorrow/",
        "soon",
        "RELDATE/1/-/event__date_from/later",
    ] {
        let r = s
            .app
            .patch(
                &format!("{EVENT}/settings/"),
                &s.token,
                json!({"last_order_modification_date": bad}),
            )
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(
            r.body["last_order_modification_date"].is_array(),
            "{}",
            r.body
        );
    }
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"cancel_allow_user_paid_until": "RELDATE/minutes/90/event__date_from/"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["cancel_allow_user_paid_until"],
        "RELDATE/minutes/90/event__date_from/"
    );
}

/// A live shop with the presale pages, attendee names asked, a required text question and
/// a hidden one on the ticket, and `settings`; an order of one ticket with both answered:
/// the shop, the questions (asked, hidden), the order's code and page.
/// The path of an order's page, from the order as the API answers it.
fn page_of(order: &Value) -> String {
    order["url"]
        .as_str()
        .and_then(|u| u.strip_prefix(PUBLIC_URL))
        .expect("the page")
        .trim_end_matches('/')
        .to_owned()
}

async fn modifiable(settings: Value) -> (Shop, (i64, i64), String, String) {
    let app = tessera_tests::TestApp::spawn_app(
        |_| {},
        |app| app.plugin(tessera_plugin_presale::Presale::default()),
    )
    .await;
    let s = crate::selling_support::shop_on(app, Some(10)).await;
    event::ActiveModel {
        id: Set(s.event),
        live: Set(true),
        ..Default::default()
    }
    .update(&s.app.db)
    .await
    .expect("event");
    let mut all = json!({"attendee_names_asked": true});
    all.as_object_mut()
        .expect("settings")
        .extend(settings.as_object().cloned().unwrap_or_default());
    let r = s
        .app
        .patch(&format!("{EVENT}/settings/"), &s.token, all)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let question = |text: &str, hidden: bool| {
        json!({"question": {"en": text}, "type": "S", "required": true, "hidden": hidden,
               "items": [s.ticket]})
    };
    let path = format!("{EVENT}/questions/");
    let asked = crate::selling_support::id(
        &crate::selling_support::created(&s.app, &path, &s.token, question("Company", false)).await,
    );
    let hidden = crate::selling_support::id(
        &crate::selling_support::created(&s.app, &path, &s.token, question("Notes", true)).await,
    );
    s.app.state.cache.refresh().await;
    let o = s
        .order(
            json!({"email": "ada@example.org", "positions": [{"item": s.ticket,
            "attendee_name": "Ada Byron",
            "answers": [{"question": asked, "answer": "Analytical Engines"},
                        {"question": hidden, "answer": "VIP"}]}]}),
        )
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let code = o.body["code"].as_str().expect("code").to_owned();
    let page = page_of(&o.body);
    (s, (asked, hidden), code, page)
}

#[tokio::test]
async fn a_buyer_changes_a_name_and_an_answer_and_the_hidden_answer_stays() {
    let (s, (asked, hidden), code, page) = modifiable(json!({})).await;
    let mut browser = Browser::new(&s.app);
    let shown = browser.get(&page).await;
    assert!(
        html(&shown).contains("Change your information"),
        "{}",
        shown.body
    );
    let form = browser.get(&format!("{page}/modify")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(html(&form).contains("value=\"Ada Byron\""));
    assert!(!html(&form).contains("id=\"email_repeat\""));
    assert!(!html(&form).contains("Notes"));
    let token = csrf_field(html(&form));
    let position = order(&s, &code).await["positions"][0]["id"].to_string();
    let name = format!("{position}-name");
    let answer = format!("{position}-question_{asked}");

    let r = browser
        .post(
            &format!("{page}/modify"),
            &[
                ("csrfmiddlewaretoken", &token),
                (&name, "Ada Lovelace"),
                (&answer, ""),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(html(&r).contains("This field is required."));
    assert_eq!(
        order(&s, &code).await["positions"][0]["attendee_name"],
        "Ada Byron"
    );

    let r = browser
        .post(
            &format!("{page}/modify"),
            &[
                ("csrfmiddlewaretoken", &token),
                (&name, "Ada Lovelace"),
                (&answer, "Difference Engines"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some(format!("{page}/?modified=1").as_str())
    );
    let p = &order(&s, &code).await["positions"][0];
    assert_eq!(p["attendee_name"], "Ada Lovelace");
    let answer_of = |q: i64| {
        p["answers"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["question"] == q))
            .map(|a| a["answer"].clone())
    };
    assert_eq!(answer_of(asked), Some(json!("Difference Engines")));
    assert_eq!(answer_of(hidden), Some(json!("VIP")));
    let r = browser
        .post(&format!("{page}/modify"), &[(&name, "Mallory")])
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn an_order_past_its_modification_deadline_cannot_be_changed() {
    let (s, _, code, page) =
        modifiable(json!({"last_order_modification_date": "2020-01-01T00:00:00Z"})).await;
    let mut browser = Browser::new(&s.app);
    assert!(!html(&browser.get(&page).await).contains("Change your information"));
    let r = browser.get(&format!("{page}/modify")).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(html(&r).contains("You cannot modify this order."));
    let token = csrf_cookie(&r);
    let position = order(&s, &code).await["positions"][0]["id"].to_string();
    let r = browser
        .post(
            &format!("{page}/modify"),
            &[
                ("csrfmiddlewaretoken", &token),
                (&format!("{position}-name"), "Eve"),
            ],
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        order(&s, &code).await["positions"][0]["attendee_name"],
        "Ada Byron"
    );
}

#[tokio::test]
async fn a_changed_invoice_address_keeps_what_the_form_does_not_show() {
    let (s, (asked, _), code, page) = modifiable(json!({"invoice_address_asked": true})).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/orders/{code}/"),
            &s.token,
            json!({"invoice_address": {"name_parts": {"_scheme": "given_family",
                "given_name": "Ada", "family_name": "Byron"}, "street": "1 Main St",
                "zipcode": "12345", "city": "Berlin", "country": "DE", "state": "",
                "internal_reference": "PO-7"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let name_parts = order(&s, &code).await["invoice_address"]["name_parts"].clone();
    let mut browser = Browser::new(&s.app);
    let form = browser.get(&format!("{page}/modify")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let token = csrf_field(html(&form));
    let position = order(&s, &code).await["positions"][0]["id"].to_string();
    let r = browser
        .post(
            &format!("{page}/modify"),
            &[
                ("csrfmiddlewaretoken", &token),
                (&format!("{position}-name"), "Ada Byron"),
                (&format!("{position}-question_{asked}"), "Engines"),
                ("invoice-name", "Ada Byron"),
                ("invoice-street", "2 Side St"),
                ("invoice-zipcode", "12345"),
                ("invoice-city", "Berlin"),
                ("invoice-country", "de"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let address = &order(&s, &code).await["invoice_address"];
    assert_eq!(address["street"], "2 Side St", "{address}");
    assert_eq!(address["internal_reference"], "PO-7");
    assert_eq!(
        address["name_parts"], name_parts,
        "an unchanged name keeps its parts"
    );
}

#[tokio::test]
async fn a_change_keeps_the_attendee_data_of_positions_that_are_not_asked_for_it() {
    let (s, (asked, _), _, _) = modifiable(json!({})).await;
    let parking = crate::selling_support::id(
        &crate::selling_support::item(
            &s.app,
            &s.token,
            json!({"name": {"en": "Parking"}, "default_price": "5.00", "admission": false}),
        )
        .await,
    );
    let quota = format!("{EVENT}/quotas/{}/", s.quota);
    let r = s
        .app
        .patch(&quota, &s.token, json!({"items": [s.ticket, parking]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    s.app.state.cache.refresh().await;
    let o = s
        .order(json!({"email": "ada@example.org", "positions": [
            {"item": s.ticket, "attendee_name": "Ada Byron",
             "answers": [{"question": asked, "answer": "Analytical Engines"}]},
            {"item": parking, "attendee_name": "Charles Babbage"}]}))
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let code = o.body["code"].as_str().expect("code");
    let page = page_of(&o.body);
    let mut browser = Browser::new(&s.app);
    let form = browser.get(&format!("{page}/modify")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(!html(&form).contains("Charles Babbage"), "{}", form.body);
    let ticket = o.body["positions"][0]["id"].to_string();
    let (token, name, answer) = (
        csrf_field(html(&form)),
        format!("{ticket}-name"),
        format!("{ticket}-question_{asked}"),
    );
    let fields = [
        ("csrfmiddlewaretoken", token.as_str()),
        (&name, "Ada Lovelace"),
        (&answer, "Engines"),
    ];
    let r = browser.post(&format!("{page}/modify"), &fields).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let positions = &order(&s, code).await["positions"];
    assert_eq!(positions[0]["attendee_name"], "Ada Lovelace");
    assert_eq!(positions[1]["attendee_name"], "Charles Babbage");
}
