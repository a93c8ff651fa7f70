//! PDF tickets and badges: layouts as pretix's, downloads of orders and positions, the
//! `downloads` of order JSON, and what the files say (read back with pdftotext, their QR
//! codes with zbarimg, their structure with qpdf).

use poem::http::Method;
use serde_json::{Value, json};
use tessera_plugin_ticketoutputpdf::{Badges, PdfTickets};
use tessera_tests::{Reply, TestApp};

use crate::pdf_support::{checked_text, colour_at, qr_codes};
use crate::selling_support::{EVENT, Shop, shop_on};

/// A shop whose event enables PDF tickets and badges, by their pretix names.
async fn ticket_shop() -> Shop {
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(PdfTickets).plugin(Badges)).await;
    let s = shop_on(app, None).await;
    let on = s
        .app
        .patch(
            &format!("{EVENT}/"),
            &s.token,
            json!({"plugins": ["pretix.plugins.ticketoutputpdf", "pretix.plugins.badges"]}),
        )
        .await;
    assert_eq!(on.status, 200, "{}", on.body);
    s
}

/// Places an order with these fields and positions of the ticket.
async fn order(s: &Shop, extra: Value) -> Value {
    s.ordered(1, extra).await
}

async fn get(s: &Shop, path: &str) -> Reply {
    s.app.get(path, &s.token).await
}

fn code_of(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

#[tokio::test]
async fn a_paid_order_lists_and_serves_its_pdf_tickets_under_pretix_file_names() {
    let s = ticket_shop().await;
    let o = order(
        &s,
        json!({"status": "p", "positions": [
            {"item": s.ticket, "attendee_name_parts": {"full_name": "Jiří Dvořák"}},
            {"item": s.ticket, "attendee_name_parts": {"full_name": "山田太郎"}}]}),
    )
    .await;
    let code = code_of(&o);
    let shown = get(&s, &format!("{EVENT}/orders/{code}/")).await;
    let url = format!("http://tessera.test{EVENT}/orders/{code}/download/pdf/");
    assert_eq!(
        shown.body["downloads"],
        json!([{"output": "pdf", "url": url}])
    );
    let position = shown.body["positions"][0]["id"].as_i64().expect("id");
    assert_eq!(
        shown.body["positions"][0]["downloads"][0]["url"],
        format!("http://tessera.test{EVENT}/orderpositions/{position}/download/pdf/")
    );

    let file = get(&s, &format!("{EVENT}/orders/{code}/download/pdf/")).await;
    assert_eq!(file.status, 200, "{}", file.body);
    assert_eq!(file.header("content-type"), Some("application/pdf"));
    assert_eq!(
        file.header("content-disposition"),
        Some(format!("attachment; filename=\"CONF-{code}-pdf.pdf\"").as_str())
    );
    if let Some(text) = checked_text(&file.bytes) {
        assert!(text.contains("Jiří Dvořák"), "{text}");
        assert!(text.contains("山田太郎"), "{text}");
        assert!(text.contains(&code), "{text}");
    }

    let one = get(
        &s,
        &format!("{EVENT}/orderpositions/{position}/download/pdf/"),
    )
    .await;
    assert_eq!(one.status, 200);
    assert_eq!(
        one.header("content-disposition"),
        Some(format!("attachment; filename=\"CONF-{code}-1-pdf.pdf\"").as_str())
    );
    if let Some(text) = checked_text(&one.bytes) {
        assert!(
            text.contains("Jiří Dvořák") && !text.contains("山田太郎"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn pending_canceled_and_unknown_downloads_are_refused_as_pretix_refuses_them() {
    let s = ticket_shop().await;
    let o = order(&s, json!({})).await;
    let code = code_of(&o);
    assert_eq!(o["downloads"], json!([]));
    let pending = get(&s, &format!("{EVENT}/orders/{code}/download/pdf/")).await;
    assert_eq!(pending.status, 403);
    assert_eq!(
        pending.body["detail"],
        "Downloads are not available for pending orders."
    );
    let unknown = get(&s, &format!("{EVENT}/orders/{code}/download/passbook/")).await;
    assert_eq!(unknown.status, 404);

    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"ticket_download_pending": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let shown = get(&s, &format!("{EVENT}/orders/{code}/")).await;
    assert_eq!(shown.body["downloads"][0]["output"], "pdf");
    let now = get(&s, &format!("{EVENT}/orders/{code}/download/pdf/")).await;
    assert_eq!(now.status, 200);

    let off = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"ticketoutput_pdf__enabled": false}),
        )
        .await;
    assert_eq!(off.status, 200, "{}", off.body);
    let shown = get(&s, &format!("{EVENT}/orders/{code}/")).await;
    assert_eq!(shown.body["downloads"], json!([]));
    let disabled = get(&s, &format!("{EVENT}/orders/{code}/download/pdf/")).await;
    assert_eq!(disabled.status, 404, "a disabled output is unknown");

    let canceled = order(&s, json!({"status": "p"})).await;
    let r = s.act(&code_of(&canceled), "mark_canceled", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let refused = get(
        &s,
        &format!("{EVENT}/orders/{}/download/badge/", code_of(&canceled)),
    )
    .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body["detail"],
        "Downloads are not available for canceled or expired orders."
    );
}

#[tokio::test]
async fn without_the_plugin_an_event_offers_no_ticket_files() {
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(PdfTickets)).await;
    let s = shop_on(app, None).await;
    let o = order(&s, json!({"status": "p"})).await;
    assert_eq!(o["downloads"], json!([]));
    let r = get(&s, &format!("{EVENT}/orders/{}/download/pdf/", code_of(&o))).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn products_without_tickets_are_refused_and_left_out_of_the_order_file() {
    let s = ticket_shop().await;
    let shirt = crate::selling_support::item(
        &s.app,
        &s.token,
        json!({"name": {"en": "Shirt"}, "default_price": "15.00", "admission": false,
               "generate_tickets": false}),
    )
    .await;
    let shirt = crate::selling_support::id(&shirt);
    crate::selling_support::created(
        &s.app,
        &format!("{EVENT}/quotas/"),
        &s.token,
        json!({"name": "Shirts", "size": null, "items": [shirt]}),
    )
    .await;
    let o = order(
        &s,
        json!({"status": "p", "positions": [{"item": s.ticket}, {"item": shirt}]}),
    )
    .await;
    let shirt_position = o["positions"][1]["id"].as_i64().expect("id");
    assert_eq!(o["positions"][1]["downloads"], json!([]));
    let r = get(
        &s,
        &format!("{EVENT}/orderpositions/{shirt_position}/download/pdf/"),
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body["detail"],
        "Downloads are not enabled for this product."
    );
    let all = get(&s, &format!("{EVENT}/orders/{}/download/pdf/", code_of(&o))).await;
    assert_eq!(all.status, 200);
    if let Some(text) = checked_text(&all.bytes) {
        assert_eq!(text.matches('\u{c}').count(), 1, "one page: {text:?}");
    }
}

#[tokio::test]
async fn a_tickets_qr_code_decodes_to_its_secret_which_the_door_redeems() {
    let s = ticket_shop().await;
    let o = order(&s, json!({"status": "p"})).await;
    let secret = o["positions"][0]["secret"].as_str().expect("secret");
    let file = get(&s, &format!("{EVENT}/orders/{}/download/pdf/", code_of(&o))).await;
    assert_eq!(file.status, 200);
    let Some(codes) = qr_codes(&file.bytes) else {
        return;
    };
    assert_eq!(codes, [secret.to_owned()]);
    let list = crate::selling_support::created(
        &s.app,
        &format!("{EVENT}/checkinlists/"),
        &s.token,
        json!({"name": "Entrance"}),
    )
    .await;
    let redeemed = s
        .app
        .post(
            "/api/v1/organizers/acme/checkinrpc/redeem/",
            &s.token,
            json!({"secret": codes[0], "lists": [list["id"]]}),
        )
        .await;
    assert_eq!(redeemed.status, 201, "{}", redeemed.body);
    assert_eq!(redeemed.body["status"], "ok");
}

/// A text area showing one variable, on its own line.
fn area(content: &str, row: usize) -> Value {
    json!({"type": "textarea", "left": 10, "bottom": 280 - (row as i64 % 50) * 5,
           "width": 190 - (row as i64 / 50) * 95, "fontsize": 6, "fontfamily": "Open Sans",
           "bold": false, "italic": false, "align": "left", "content": content,
           "color": [0, 0, 0]})
}

#[tokio::test]
async fn every_listed_variable_appears_in_the_text_of_the_pdf() {
    let s = ticket_shop().await;
    let variables = [
        ("order", None),
        ("positionid", Some("1")),
        ("item", Some("Ticket")),
        ("itemvar", Some("Ticket")),
        ("price", Some("EUR 23.00")),
        ("attendee_name", None),
        ("attendee_name_given_name", Some("Ada")),
        ("attendee_name_family_name", Some("Lovelace")),
        ("attendee_email", Some("ada@example.org")),
        ("email", Some("buyer@example.org")),
        ("invoice_company", Some("Analytical Engines Ltd")),
        ("invoice_city", Some("London")),
        ("event_name", Some("conf")),
        ("event_begin_date", None),
        ("organizer", Some("acme Ltd")),
        ("meta:Room", Some("Hall B")),
    ];
    let mut layout: Vec<Value> = variables
        .iter()
        .enumerate()
        .map(|(i, (v, _))| area(v, i))
        .collect();
    let mut other = area("other", variables.len());
    other["text"] = json!("Order {order}, {nope} kept");
    layout.push(other);
    let made = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Variables", "layout": layout}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(
        made.body["default"], true,
        "the first layout is the default"
    );
    let room = s
        .app
        .post(
            "/api/v1/organizers/acme/event_meta_properties/",
            &s.token,
            json!({"name": "Room"}),
        )
        .await;
    assert_eq!(room.status, 201, "{}", room.body);
    let meta = s
        .app
        .patch(
            &format!("{EVENT}/"),
            &s.token,
            json!({"meta_data": {"Room": "Hall B"}}),
        )
        .await;
    assert_eq!(meta.status, 200, "{}", meta.body);
    let o = order(
        &s,
        json!({"status": "p", "email": "buyer@example.org",
               "invoice_address": {"company": "Analytical Engines Ltd", "city": "London",
                                   "name_parts": {"full_name": "Ada"}},
               "positions": [{"item": s.ticket, "attendee_email": "ada@example.org",
                              "attendee_name_parts": {"given_name": "Ada",
                                                      "family_name": "Lovelace"}}]}),
    )
    .await;
    let code = code_of(&o);
    let file = get(&s, &format!("{EVENT}/orders/{code}/download/pdf/")).await;
    assert_eq!(file.status, 200, "{}", file.body);
    let Some(text) = checked_text(&file.bytes) else {
        return;
    };
    for (name, value) in variables {
        if let Some(v) = value {
            assert!(text.contains(v), "{name}: {v} not in {text}");
        }
    }
    assert!(text.contains(&code));
    assert!(
        text.contains(&format!("Order {code}, {{nope}} kept")),
        "{text}"
    );
}

#[tokio::test]
async fn layouts_are_checked_area_by_area_and_a_bad_one_names_the_area() {
    let s = ticket_shop().await;
    let path = format!("{EVENT}/ticketlayouts/");
    let good = json!([
        {"type": "barcodearea", "left": "130.40", "bottom": "204.50", "size": "64.00",
         "content": "secret", "nowhitespace": true, "color": [0, 0, 0, 1]},
        {"type": "textcontainer", "left": 16, "bottom": 250, "width": 100, "height": 10,
         "content": "event_name", "fontsize": 14, "fontfamily": "Open Sans", "bold": true,
         "italic": false, "align": "left", "verticalalign": "middle", "color": [0, 0, 0],
         "autoresize": true, "splitlongwords": true, "rotation": 0, "lineheight": "1"},
        {"type": "textarea", "left": 16, "bottom": 200, "width": 100, "content": "other_i18n",
         "text_i18n": {"en": "Welcome", "de": "Willkommen"}, "fontsize": 10,
         "fontfamily": "Nonexistent", "bold": false, "italic": true, "align": "center",
         "color": [200, 0, 0], "downward": true, "locale": "de"},
        {"type": "imagearea", "left": 10, "bottom": 10, "width": 20, "height": 20,
         "content": "question_photo"},
        {"type": "poweredby", "left": 88, "bottom": 10, "size": 20, "content": "white"}
    ]);
    let made = s
        .app
        .post(
            &path,
            &s.token,
            json!({"name": "Every area", "layout": good}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["layout"], good);
    let blank = "http://tessera.test/static/pretixpresale/pdf/ticket_default_a4.pdf";
    assert_eq!(made.body["background"], blank, "pretix's blank page");
    let page = s
        .app
        .raw(
            Method::GET,
            &blank["http://tessera.test".len()..],
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("application/pdf"));
    checked_text(&page.bytes);
    let written_back = s
        .app
        .patch(
            &format!("{path}{}/", made.body["id"]),
            &s.token,
            json!({"background": blank}),
        )
        .await;
    assert_eq!(written_back.status, 200, "{}", written_back.body);
    assert_eq!(written_back.body["background"], blank);

    let bad = [
        (
            json!([{"type": "barcodearea", "left": 1, "bottom": 1}]),
            "Area 1: (barcodearea) \"size\" is required.",
        ),
        (
            json!([{"type": "barcodearea", "left": 1, "bottom": 1, "size": 5},
                {"type": "textcontainer", "left": 1, "bottom": 1, "width": 1, "height": 1,
                 "content": "x", "fontsize": "big", "fontfamily": "Open Sans", "bold": false,
                 "italic": false, "align": "left", "verticalalign": "top", "color": [0, 0, 0]}]),
            "Area 2: (textcontainer) \"fontsize\" must be a number.",
        ),
        (
            json!([{"type": "textarea", "left": 1, "bottom": 1, "width": 1, "content": "x",
                 "fontsize": 5, "fontfamily": "Open Sans", "bold": false, "italic": false,
                 "align": "justify", "color": [0, 0, 0]}]),
            "Area 1: (textarea) \"align\" must be \"left\", \"center\" or \"right\".",
        ),
        (
            json!([{"type": "imagearea", "left": 1, "bottom": 1, "width": 1, "height": 1,
                 "content": "x", "size": 3}]),
            "Area 1: (imagearea) \"size\" is not a property of this type.",
        ),
        (
            json!([{"type": "poweredby", "left": 1, "bottom": 1, "size": 5, "content": "pink"}]),
            "Area 1: (poweredby) \"content\" must be \"dark\" or \"white\".",
        ),
        (json!([{"type": "qr"}]), "Area 1: (qr) is no type of area"),
        (json!({"type": "textarea"}), "A layout is a list of areas."),
    ];
    for (layout, message) in bad {
        let r = s
            .app
            .post(&path, &s.token, json!({"name": "Bad", "layout": layout}))
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        let said = r.body["layout"][0]
            .as_str()
            .expect("a field error on layout");
        assert!(
            said.starts_with("Your layout file is not a valid layout. Error message: ")
                && said.contains(message),
            "{said} / {message}"
        );
    }
    let listed = get(&s, &path).await;
    assert_eq!(listed.body["count"], 1, "nothing half-written");
    let missing = s.app.post(&path, &s.token, json!({"layout": []})).await;
    assert_eq!(missing.status, 400);
    assert!(missing.body["name"].is_array());
}

#[tokio::test]
async fn one_layout_is_the_default_and_deleting_it_promotes_the_next() {
    let s = ticket_shop().await;
    let path = format!("{EVENT}/ticketlayouts/");
    let first = crate::selling_support::created(
        &s.app,
        &path,
        &s.token,
        json!({"name": "A", "layout": []}),
    )
    .await;
    let second = crate::selling_support::created(
        &s.app,
        &path,
        &s.token,
        json!({"name": "B", "layout": [], "default": true}),
    )
    .await;
    assert_eq!(second["default"], true);
    let a = get(&s, &format!("{path}{}/", first["id"])).await;
    assert_eq!(a.body["default"], false, "one default per event");
    let gone = s
        .app
        .delete(&format!("{path}{}/", second["id"]), &s.token)
        .await;
    assert_eq!(gone.status, 204);
    let a = get(&s, &format!("{path}{}/", first["id"])).await;
    assert_eq!(a.body["default"], true);
    let missing = get(&s, &format!("{path}{}/", second["id"])).await;
    assert_eq!(missing.status, 404);
    let reader = s.app.token("acme", &["can_view_orders"]).await;
    let refused = s
        .app
        .post(&path, &reader, json!({"name": "C", "layout": []}))
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(s.app.get(&path, &reader).await.status, 200);
}

async fn upload_pdf(s: &Shop, data: Vec<u8>) -> String {
    let auth = format!("Token {}", s.token);
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/pdf"),
        (
            "Content-Disposition",
            "attachment; filename=\"background.pdf\"",
        ),
    ];
    let r = s
        .app
        .raw(Method::POST, "/api/v1/upload", &headers, data)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_str().expect("file id").to_owned()
}

#[tokio::test]
async fn a_product_assigned_to_a_layout_is_printed_on_its_background_made_by_another_tool() {
    let s = ticket_shop().await;
    let background = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/background-cairo.pdf"),
    )
    .expect("fixture");
    let file = upload_pdf(&s, background).await;
    let layout = json!([
        {"type": "textarea", "left": 20, "bottom": 200, "width": 150, "content": "other",
         "text": "Printed for {attendee_name}", "fontsize": 12, "fontfamily": "Open Sans",
         "bold": false, "italic": false, "align": "left", "color": [0, 0, 0]}
    ]);
    let made = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Special", "layout": layout, "background": file, "default": false,
                   "item_assignments": [{"item": s.ticket, "sales_channel": "web"}]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let url = made.body["background"].as_str().expect("background URL");
    assert!(url.starts_with("http://tessera.test/media/"), "{url}");
    let items = get(&s, &format!("{EVENT}/ticketlayoutitems/")).await;
    assert_eq!(items.body["results"][0]["item"], s.ticket);
    assert_eq!(items.body["results"][0]["layout"], made.body["id"]);

    let o = order(
        &s,
        json!({"status": "p", "positions": [{"item": s.ticket,
               "attendee_name_parts": {"full_name": "Grace Hopper"}}]}),
    )
    .await;
    let pdf = get(&s, &format!("{EVENT}/orders/{}/download/pdf/", code_of(&o))).await;
    assert_eq!(pdf.status, 200);
    if let Some(text) = checked_text(&pdf.bytes) {
        assert!(text.contains("SAMPLE BACKGROUND"), "{text}");
        assert!(text.contains("Printed for Grace Hopper"), "{text}");
    }

    let not_a_pdf = s
        .app
        .patch(
            &format!("{EVENT}/ticketlayouts/{}/", made.body["id"]),
            &s.token,
            json!({"background": "file:nothing"}),
        )
        .await;
    assert_eq!(not_a_pdf.status, 400);
    assert!(not_a_pdf.body["background"].is_array());
    let kept = s
        .app
        .patch(
            &format!("{EVENT}/ticketlayouts/{}/", made.body["id"]),
            &s.token,
            json!({"background": url, "name": "Renamed"}),
        )
        .await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    assert_eq!(kept.body["background"], url);
}

#[tokio::test]
async fn a_badge_is_rendered_for_a_position_with_the_events_badge_layout() {
    let s = ticket_shop().await;
    let built_in = get(&s, &format!("{EVENT}/badgelayouts/")).await;
    assert_eq!(built_in.body["count"], 1);
    let blank = built_in.body["results"][0]["background"]
        .as_str()
        .expect("a blank card's URL");
    let path = blank.strip_prefix("http://tessera.test").expect("local");
    assert_eq!(path, "/static/pretixplugins/badges/badge_default_a6l.pdf");
    let card = s.app.raw(Method::GET, path, &[], Vec::new()).await;
    assert_eq!(card.status, 200);
    checked_text(&card.bytes);
    let layout = json!([
        {"type": "textarea", "left": 10, "bottom": 50, "width": 128, "content": "attendee_name",
         "fontsize": 20, "fontfamily": "Open Sans", "bold": true, "italic": false,
         "align": "center", "color": [0, 0, 0]},
        {"type": "textarea", "left": 10, "bottom": 30, "width": 128, "content": "other",
         "text": "SPEAKER", "fontsize": 12, "fontfamily": "Open Sans", "bold": false,
         "italic": false, "align": "center", "color": [0, 0, 0]}
    ]);
    let made = s
        .app
        .post(
            &format!("{EVENT}/badgelayouts/"),
            &s.token,
            json!({"name": "Speakers", "layout": layout,
                   "item_assignments": [{"item": s.ticket}]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["size"][0]["orientation"], "landscape");
    let items = get(&s, &format!("{EVENT}/badgeitems/")).await;
    assert_eq!(items.body["results"][0]["layout"], made.body["id"]);
    let o = order(
        &s,
        json!({"status": "p", "positions": [{"item": s.ticket,
               "attendee_name_parts": {"full_name": "Katherine Johnson"}}]}),
    )
    .await;
    assert_eq!(
        o["positions"][0]["downloads"].as_array().map(Vec::len),
        Some(1),
        "badges are not offered to buyers"
    );
    let position = o["positions"][0]["id"].as_i64().expect("id");
    let badge = get(
        &s,
        &format!("{EVENT}/orderpositions/{position}/download/badge/"),
    )
    .await;
    assert_eq!(badge.status, 200, "{}", badge.body);
    if let Some(text) = checked_text(&badge.bytes) {
        assert!(
            text.contains("Katherine Johnson") && text.contains("SPEAKER"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn the_order_page_offers_the_pdf_tickets_through_its_secret_link() {
    let s = ticket_shop().await;
    let o = order(&s, json!({"status": "p"})).await;
    let page_path = o["url"]
        .as_str()
        .expect("url")
        .trim_start_matches("http://tessera.test")
        .trim_end_matches('/')
        .to_owned();
    let page = s.app.raw(Method::GET, &page_path, &[], Vec::new()).await;
    assert_eq!(page.status, 200);
    let html = page.body.as_str().expect("html");
    assert!(
        !html.contains("/download/pdf"),
        "off until ticket_download is on"
    );

    let on = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"ticket_download": true}),
        )
        .await;
    assert_eq!(on.status, 200, "{}", on.body);
    let page = s.app.raw(Method::GET, &page_path, &[], Vec::new()).await;
    // The page's attributes are escaped as HTML ("/" as "&#x2f;").
    let html = page.body.as_str().expect("html").replace("&#x2f;", "/");
    let position = o["positions"][0]["id"].as_i64().expect("id");
    let whole = format!("{page_path}/download/pdf");
    let one = format!("{page_path}/download/pdf/{position}");
    assert!(html.contains(&format!("href=\"{whole}\"")), "{html}");
    assert!(html.contains(&format!("href=\"{one}\"")), "{html}");
    for path in [whole, one] {
        let file = s.app.raw(Method::GET, &path, &[], Vec::new()).await;
        assert_eq!(file.status, 200, "{path}");
        assert_eq!(file.header("content-type"), Some("application/pdf"));
        checked_text(&file.bytes);
    }
    let wrong = page_path.replace(o["secret"].as_str().expect("secret"), "wrongsecret");
    let refused = s
        .app
        .raw(
            Method::GET,
            &format!("{wrong}/download/pdf"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(refused.status, 404);
    let badge = s
        .app
        .raw(
            Method::GET,
            &format!("{page_path}/download/badge"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(badge.status, 404, "badges are for the door");
}

#[tokio::test]
async fn an_idempotent_order_shows_its_downloads_read_through_its_own_transaction() {
    let s = ticket_shop().await;
    let auth = format!("Token {}", s.token);
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("X-Idempotency-Key", "paid-42"),
    ];
    let body = json!({"email": "ada@example.org", "status": "p",
                      "positions": [{"item": s.ticket}]});
    let path = format!("{EVENT}/orders/");
    let first = s
        .app
        .raw(Method::POST, &path, &headers, body.to_string().into_bytes())
        .await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.body["downloads"][0]["output"], "pdf");
    let again = s
        .app
        .raw(Method::POST, &path, &headers, body.to_string().into_bytes())
        .await;
    assert_eq!(again.body, first.body);
}

#[tokio::test]
async fn a_cloned_event_keeps_its_layouts_and_prints_the_copied_products_with_them() {
    let s = ticket_shop().await;
    let background = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/background-cairo.pdf"),
    )
    .expect("fixture");
    let file = upload_pdf(&s, background).await;
    let made = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Branded", "layout": [], "background": file,
                   "item_assignments": [{"item": s.ticket, "sales_channel": "web"}]}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let clone = s
        .app
        .post(
            &format!("{EVENT}/clone/"),
            &s.token,
            json!({"name": {"en": "Next year"}, "slug": "conf2", "currency": "EUR",
                   "date_from": "2031-06-01T09:00:00Z"}),
        )
        .await;
    assert_eq!(clone.status, 201, "{}", clone.body);
    let copied = get(&s, "/api/v1/organizers/acme/events/conf2/ticketlayouts/").await;
    let layout = &copied.body["results"][0];
    assert_eq!(layout["name"], "Branded");
    assert_eq!(layout["default"], true);
    assert_eq!(layout["background"], made.body["background"]);
    let items = get(&s, "/api/v1/organizers/acme/events/conf2/items/").await;
    let new_ticket = &items.body["results"][0]["id"];
    assert_ne!(new_ticket, &json!(s.ticket));
    assert_eq!(
        layout["item_assignments"],
        json!([{"item": new_ticket, "sales_channel": "web"}])
    );

    // The source's layout goes; the clone's background stays.
    let gone = s
        .app
        .delete(
            &format!("{EVENT}/ticketlayouts/{}/", made.body["id"]),
            &s.token,
        )
        .await;
    assert_eq!(gone.status, 204);
    let media = layout["background"]
        .as_str()
        .expect("url")
        .trim_start_matches("http://tessera.test")
        .to_owned();
    let still = s.app.raw(Method::GET, &media, &[], Vec::new()).await;
    assert_eq!(still.status, 200, "the shared background is kept");
}

#[tokio::test]
async fn a_tickets_first_scan_is_its_earliest_entry_at_the_door() {
    let s = ticket_shop().await;
    let layout = json!([area("first_scan", 0), area("attendee_name", 1)]);
    let made = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Door", "layout": layout}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let o = order(
        &s,
        json!({"status": "p", "positions": [
            {"item": s.ticket, "attendee_name_parts": {"full_name": "Ada Lovelace"}},
            {"item": s.ticket, "attendee_name_parts": {"full_name": "Grace Hopper"}}]}),
    )
    .await;
    let list = crate::selling_support::created(
        &s.app,
        &format!("{EVENT}/checkinlists/"),
        &s.token,
        json!({"name": "Entrance", "allow_multiple_entries": true}),
    )
    .await;
    let secret = o["positions"][1]["secret"].as_str().expect("secret");
    // Sent late by an offline scanner: the later scan arrives first.
    for (nonce, at, kind) in [
        ("n-1", "2030-06-01T12:30:00Z", "entry"),
        ("n-2", "2030-06-01T09:15:00Z", "exit"),
        ("n-3", "2030-06-01T10:45:00Z", "entry"),
    ] {
        let r = s
            .app
            .post(
                "/api/v1/organizers/acme/checkinrpc/redeem/",
                &s.token,
                json!({"secret": secret, "lists": [list["id"]], "nonce": nonce,
                       "datetime": at, "type": kind}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let code = code_of(&o);
    let read = get(&s, &format!("{EVENT}/orders/?code={code}&pdf_data=true")).await;
    let read = &read.body["results"][0];
    let scanned = read["positions"][1]["pdf_data"]["first_scan"]
        .as_str()
        .expect("first_scan")
        .to_owned();
    assert!(scanned.contains("10:45"), "{scanned}");
    assert_eq!(read["positions"][0]["pdf_data"]["first_scan"], "");
    let id = o["positions"][1]["id"].as_i64().expect("id");
    let file = get(&s, &format!("{EVENT}/orderpositions/{id}/download/pdf/")).await;
    assert_eq!(file.status, 200, "{}", file.body);
    if let Some(text) = checked_text(&file.bytes) {
        assert!(text.contains(&scanned), "{scanned} not in {text}");
        assert!(
            text.contains("Grace Hopper") && !text.contains("Ada"),
            "{text}"
        );
    }
}

/// A PNG of `width` x `height` pixels of one colour, with this opacity.
fn picture(width: u32, height: u32, [r, g, b]: [u8; 3], alpha: u8) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("header");
    let pixels: Vec<u8> = (0..width * height).flat_map(|_| [r, g, b, alpha]).collect();
    writer.write_image_data(&pixels).expect("pixels");
    writer.finish().expect("written");
    out
}

#[tokio::test]
async fn an_image_area_prints_the_attendees_picture_fitted_and_centred() {
    let s = ticket_shop().await;
    let question = crate::selling_support::created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Photo"}, "type": "F", "items": [s.ticket],
               "identifier": "photo", "required": false}),
    )
    .await;
    let layout = json!([
        {"type": "imagearea", "left": 10, "bottom": 150, "width": 80, "height": 80,
         "content": "question_photo"}
    ]);
    let made = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Photo", "layout": layout}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let auth = format!("Token {}", s.token);
    let upload = |name: &'static str, data: Vec<u8>| {
        let auth = auth.clone();
        let app = &s.app;
        async move {
            let disposition = format!("attachment; filename=\"{name}\"");
            let headers = [
                ("Authorization", auth.as_str()),
                ("Content-Type", "image/png"),
                ("Content-Disposition", disposition.as_str()),
            ];
            let r = app
                .raw(Method::POST, "/api/v1/upload", &headers, data)
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
            r.body["id"].as_str().expect("id").to_owned()
        }
    };
    // Twice as wide as high: it fills the square area's width, centred between bands.
    let red = upload("red.png", picture(40, 20, [220, 0, 0], 255)).await;
    let o = order(
        &s,
        json!({"status": "p", "positions": [{"item": s.ticket, "answers": [
            {"question": question["id"], "answer": red}]}]}),
    )
    .await;
    let id = o["positions"][0]["id"].as_i64().expect("id");
    let file = get(&s, &format!("{EVENT}/orderpositions/{id}/download/pdf/")).await;
    assert_eq!(file.status, 200, "{}", file.body);
    checked_text(&file.bytes);
    let text = String::from_utf8_lossy(&file.bytes);
    assert!(text.contains("/Subtype /Image"), "a picture is in the file");
    assert!(!text.contains("/SMask"), "an opaque picture has no mask");
    if let Some(centre) = colour_at(&file.bytes, 50.0, 190.0) {
        assert_eq!(centre, [220, 0, 0], "the picture at the area's centre");
        let above = colour_at(&file.bytes, 50.0, 225.0).expect("colour");
        assert_eq!(
            above,
            [255, 255, 255],
            "the band above the picture is blank"
        );
    }

    let glass = upload("glass.png", picture(20, 20, [0, 0, 200], 128)).await;
    let o = order(
        &s,
        json!({"status": "p", "positions": [{"item": s.ticket, "answers": [
            {"question": question["id"], "answer": glass}]}]}),
    )
    .await;
    let file = get(&s, &format!("{EVENT}/orders/{}/download/pdf/", code_of(&o))).await;
    checked_text(&file.bytes);
    assert!(String::from_utf8_lossy(&file.bytes).contains("/SMask"));
    if let Some([r, g, b]) = colour_at(&file.bytes, 50.0, 190.0) {
        assert!(
            r > 100 && g > 100 && b > 150,
            "half see-through: {r} {g} {b}"
        );
    }

    let without = order(&s, json!({"status": "p"})).await;
    let file = get(
        &s,
        &format!("{EVENT}/orders/{}/download/pdf/", code_of(&without)),
    )
    .await;
    assert!(!String::from_utf8_lossy(&file.bytes).contains("/Subtype /Image"));
    if let Some(grey) = colour_at(&file.bytes, 50.0, 190.0) {
        assert_eq!(grey, [222, 222, 222], "pretix's placeholder");
    }
}
