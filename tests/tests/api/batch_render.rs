//! Tickets rendered in a batch (pretix's `ticketpdfrenderer/render_batch/`): one PDF of many
//! positions' tickets, each with its layout or the one the part names, fetched by the caller
//! who asked and nobody else.

use serde_json::{Value, json};
use tessera_plugin_ticketoutputpdf::{Badges, PdfTickets};
use tessera_tests::TestApp;

use crate::pdf_support::checked_text;
use crate::selling_support::{EVENT, Shop, created, shop_on};

const RENDER: &str = "/api/v1/organizers/acme/events/conf/ticketpdfrenderer/render_batch/";

async fn ticket_shop() -> Shop {
    let app = TestApp::spawn_app(|_| {}, |a| a.plugin(PdfTickets).plugin(Badges)).await;
    let s = shop_on(app, None).await;
    let plugins = json!({"plugins": ["pretix.plugins.ticketoutputpdf"]});
    let on = s.app.patch(&format!("{EVENT}/"), &s.token, plugins).await;
    assert_eq!(on.status, 200, "{}", on.body);
    s
}

/// The IDs of the positions of a paid order for these attendees.
async fn positions_for(s: &Shop, names: &[&str]) -> Vec<i64> {
    let positions: Vec<Value> = names
        .iter()
        .map(|n| json!({"item": s.ticket, "attendee_name_parts": {"full_name": n}}))
        .collect();
    let o = s
        .ordered(1, json!({"status": "p", "positions": positions}))
        .await;
    o["positions"]
        .as_array()
        .expect("positions")
        .iter()
        .map(|p| p["id"].as_i64().expect("id"))
        .collect()
}

/// The path of a download URL, for the test client.
fn path_of(url: &str) -> &str {
    &url[url.find("/api/").expect("an API URL")..]
}

#[tokio::test]
async fn a_batch_is_rendered_into_one_pdf_that_only_the_caller_who_asked_may_fetch() {
    let s = ticket_shop().await;
    let first = positions_for(&s, &["Jiří Dvořák", "山田太郎"]).await;
    let second = positions_for(&s, &["Ada Lovelace"]).await;
    let text = json!({"type": "textarea", "left": 10, "bottom": 200, "width": 150,
        "fontsize": 16, "fontfamily": "Open Sans", "bold": false, "italic": false,
        "align": "left", "content": "other", "text": "Printed for the press desk",
        "color": [0, 0, 0]});
    let mut name = text.clone();
    name["content"] = json!("attendee_name");
    let standard = json!({"name": "Standard", "layout": [name], "default": true});
    created(
        &s.app,
        &format!("{EVENT}/ticketlayouts/"),
        &s.token,
        standard,
    )
    .await;
    let layout = created(
        &s.app,
        &format!("{EVENT}/ticketlayouts/"),
        &s.token,
        json!({"name": "Press", "layout": [text]}),
    )
    .await;
    let reader = s.app.token("acme", &["can_view_orders"]).await;
    let body = json!({"parts": [
        {"orderposition": second[0]},
        {"orderposition": first[1], "override_layout": layout["id"]},
        {"orderposition": first[0], "override_channel": "web"}]});

    let r = s.app.post(RENDER, &reader, body).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let url = r.body["download"].as_str().expect("download");
    assert!(
        url.starts_with(
            "http://tessera.test/api/v1/organizers/acme/events/conf/ticketpdfrenderer/download/"
        ),
        "{url}"
    );
    let file = s.app.get(path_of(url), &reader).await;
    assert_eq!(file.status, 200);
    assert_eq!(file.header("content-type"), Some("application/pdf"));
    if let Some(text) = checked_text(&file.bytes) {
        assert_eq!(text.matches('\u{c}').count(), 3, "one page a part: {text}");
        let pages: Vec<&str> = text.split('\u{c}').collect();
        assert!(pages[0].contains("Ada Lovelace"), "{text}");
        assert!(pages[1].contains("Printed for the press desk"), "{text}");
        assert!(
            !pages[1].contains("山田太郎"),
            "the press layout prints no name"
        );
        assert!(pages[2].contains("Jiří Dvořák"), "{text}");
    }

    let other = s.app.token("acme", &["can_view_orders"]).await;
    let refused = s.app.get(path_of(url), &other).await;
    assert_eq!(refused.status, 410);
    assert_eq!(
        refused.body,
        json!({"status": "failed", "message": "Unknown file ID or export failed"})
    );
    let unknown = s
        .app
        .get(
            &format!("{EVENT}/ticketpdfrenderer/download/x/0123/"),
            &reader,
        )
        .await;
    assert_eq!(unknown.status, 410);
    let nobody = s.app.token("acme", &[]).await;
    let body = json!({"parts": [{"orderposition": second[0]}]});
    assert_eq!(s.app.post(RENDER, &nobody, body).await.status, 403);
}

#[tokio::test]
async fn a_batch_naming_what_the_event_lacks_is_refused_part_by_part() {
    let s = ticket_shop().await;
    let ours = positions_for(&s, &["Ada Lovelace"]).await;
    let body = json!({"parts": [
        {"orderposition": ours[0]},
        {"orderposition": 987654},
        {"orderposition": ours[0], "override_layout": 987654, "override_channel": "kiosk"}]});
    let r = s.app.post(RENDER, &s.token, body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"parts": [
            {},
            {"orderposition": ["Invalid pk \"987654\" - object does not exist."]},
            {"override_layout": ["Invalid pk \"987654\" - object does not exist."],
             "override_channel": ["Object with identifier=kiosk does not exist."]}]})
    );
    let many: Vec<Value> = (0..1001)
        .map(|_| json!({"orderposition": ours[0]}))
        .collect();
    let r = s.app.post(RENDER, &s.token, json!({"parts": many})).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"parts": ["Please do not submit more than 1000 parts."]})
    );
    let r = s.app.post(RENDER, &s.token, json!({"parts": []})).await;
    assert_eq!(r.status, 400);
    let r = s.app.post(RENDER, &s.token, json!({})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["parts"].is_array(), "{}", r.body);
}
