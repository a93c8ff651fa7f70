//! Tickets in the mail: the mails after which an order may have tickets carry its PDF,
//! made as the mail is sent; read back from what a local SMTP server received.

use base64::Engine;
use poem::http::Method;
use rand::RngCore;
use serde_json::{Value, json};
use tessera::config::SmtpTls;
use tessera::db::entities::outbox_mail;
use tessera_plugin_ticketoutputpdf::{Badges, PdfTickets};
use tessera_tests::TestApp;
use tessera_tests::smtp::{Received, SmtpSink};

use crate::pdf_support::checked_text;
use crate::selling_support::{EVENT, Shop, shop_on};

/// A shop that sends mail to `sink`, whose event offers PDF tickets and badges for download.
async fn mailing_shop(sink: &SmtpSink) -> Shop {
    let port = sink.port;
    let app = TestApp::spawn_app(
        move |c| {
            c.smtp_host = Some("127.0.0.1".into());
            c.smtp_port = Some(port);
            c.smtp_tls = SmtpTls::None;
            c.mail_from = "Tickets <tickets@tessera.test>".into();
        },
        |a| a.plugin(PdfTickets).plugin(Badges),
    )
    .await;
    let s = shop_on(app, None).await;
    let plugins = json!({"plugins": ["pretix.plugins.ticketoutputpdf", "pretix.plugins.badges"]});
    let r = s.app.patch(&format!("{EVENT}/"), &s.token, plugins).await;
    assert_eq!(r.status, 200, "{}", r.body);
    set(&s, json!({"ticket_download": true})).await;
    s
}

async fn set(s: &Shop, settings: Value) {
    let r = s
        .app
        .patch(&format!("{EVENT}/settings/"), &s.token, settings)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

fn code_of(o: &Value) -> String {
    o["code"].as_str().expect("code").to_owned()
}

/// Sends what the outbox holds and gives what the server received, in the order sent.
async fn delivered(s: &Shop, sink: &SmtpSink) -> Vec<Received> {
    s.app.mailer.deliver_due().await.expect("deliver");
    sink.received()
}

fn subject(r: &Received) -> &str {
    r.data
        .lines()
        .find_map(|l| l.strip_prefix("Subject: "))
        .unwrap_or_default()
}

/// The attachments of a received message: each file's name and decoded content.
fn attachments(r: &Received) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut rest = r.data.as_str();
    while let Some(at) = rest.find("filename=\"") {
        let after = &rest[at + "filename=\"".len()..];
        let name = after[..after.find('"').expect("closing quote")].to_owned();
        let body_start = after.find("\r\n\r\n").expect("part body") + 4;
        let body = &after[body_start..];
        let body_end = body.find("\r\n--").expect("part end");
        let encoded: String = body[..body_end].split_whitespace().collect();
        let data = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("base64");
        found.push((name, data));
        rest = &body[body_end..];
    }
    found
}

async fn stored(s: &Shop) -> Vec<outbox_mail::Model> {
    tessera_tests::outbox(&s.app.db).await
}

#[tokio::test]
async fn marking_an_order_paid_mails_the_customer_its_pdf_tickets_and_no_badge() {
    let sink = SmtpSink::start().await;
    let s = mailing_shop(&sink).await;
    let positions = json!([
        {"item": s.ticket, "attendee_name_parts": {"full_name": "Jiří Dvořák"}},
        {"item": s.ticket, "attendee_name_parts": {"full_name": "山田太郎"}}]);
    let o = s.ordered(1, json!({"positions": positions})).await;
    let code = code_of(&o);
    let r = s.act(&code, "mark_paid", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);

    let queued = stored(&s).await;
    assert_eq!(queued.len(), 1);
    assert!(
        queued[0].attach_tickets_of.is_some(),
        "the mail names its order"
    );
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 1);
    let mail = &received[0];
    assert_eq!(
        subject(mail),
        format!("Payment received for your order: {code}")
    );
    assert!(mail.data.contains("multipart/mixed"), "{}", mail.data);
    let files = attachments(mail);
    assert_eq!(files.len(), 1, "the tickets, not the door's badges");
    assert_eq!(files[0].0, format!("CONF-{code}-pdf.pdf"));
    if let Some(text) = checked_text(&files[0].1) {
        assert!(
            text.contains("Jiří Dvořák") && text.contains("山田太郎"),
            "{text}"
        );
        assert!(text.contains(&code), "{text}");
    }
}

#[tokio::test]
async fn a_mail_carries_no_tickets_the_order_may_not_have_or_the_event_keeps_out_of_mails() {
    let sink = SmtpSink::start().await;
    let s = mailing_shop(&sink).await;
    let pending = s.ordered(1, json!({"send_mail": true})).await;
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 1);
    assert_eq!(
        subject(&received[0]),
        format!("Your order for conf: {}", code_of(&pending))
    );
    assert!(
        attachments(&received[0]).is_empty(),
        "a pending order has no tickets yet"
    );

    let quiet = s
        .act(
            &code_of(&pending),
            "mark_paid",
            json!({"send_email": false}),
        )
        .await;
    assert_eq!(quiet.status, 200, "{}", quiet.body);
    assert_eq!(stored(&s).await.len(), 1, "send_email false mails nothing");

    set(&s, json!({"mail_attach_tickets": false})).await;
    let other = s.ordered(1, json!({})).await;
    let r = s.act(&code_of(&other), "mark_paid", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 2);
    assert!(
        attachments(&received[1]).is_empty(),
        "mail_attach_tickets is off"
    );

    set(
        &s,
        json!({"mail_attach_tickets": true, "ticket_download": false}),
    )
    .await;
    let third = s
        .ordered(1, json!({"status": "p", "send_mail": true}))
        .await;
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 3);
    assert_eq!(
        subject(&received[2]),
        format!("Your order for conf: {}", code_of(&third))
    );
    assert!(
        attachments(&received[2]).is_empty(),
        "buyers may not download tickets"
    );
}

#[tokio::test]
async fn a_paid_order_placed_with_send_mail_is_confirmed_with_its_tickets() {
    let sink = SmtpSink::start().await;
    let s = mailing_shop(&sink).await;
    let o = s
        .ordered(2, json!({"status": "p", "send_mail": true}))
        .await;
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 1);
    let files = attachments(&received[0]);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, format!("CONF-{}-pdf.pdf", code_of(&o)));
    assert!(files[0].1.starts_with(b"%PDF-"));
}

/// A one-page PDF whose page is an image of about `bytes` random bytes, which no compression
/// makes smaller: every ticket printed on it weighs as much.
fn heavy_background(bytes: usize) -> Vec<u8> {
    use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref};
    let side = ((bytes / 3) as f64).sqrt().ceil() as i32;
    let mut pixels = vec![0u8; usize::try_from(side * side * 3).expect("size")];
    rand::rng().fill_bytes(&mut pixels);
    let (catalog, tree, page, image, content) = (
        Ref::new(1),
        Ref::new(2),
        Ref::new(3),
        Ref::new(4),
        Ref::new(5),
    );
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids([page]).count(1);
    let mut p = pdf.page(page);
    p.media_box(Rect::new(0.0, 0.0, 595.0, 842.0))
        .parent(tree)
        .contents(content);
    p.resources().x_objects().pair(Name(b"Im0"), image);
    p.finish();
    let mut xobject = pdf.image_xobject(image, &pixels);
    xobject.width(side).height(side).bits_per_component(8);
    xobject.color_space().device_rgb();
    xobject.finish();
    let mut draw = Content::new();
    draw.save_state()
        .transform([595.0, 0.0, 0.0, 842.0, 0.0, 0.0])
        .x_object(Name(b"Im0"))
        .restore_state();
    pdf.stream(content, &draw.finish());
    pdf.finish()
}

#[tokio::test]
async fn tickets_heavier_than_four_megabytes_stay_out_of_the_mail_which_still_goes_out() {
    let sink = SmtpSink::start().await;
    let s = mailing_shop(&sink).await;
    let auth = format!("Token {}", s.token);
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/pdf"),
        ("Content-Disposition", "attachment; filename=\"heavy.pdf\""),
    ];
    let upload = s
        .app
        .raw(
            Method::POST,
            "/api/v1/upload",
            &headers,
            heavy_background(4_300_000),
        )
        .await;
    assert_eq!(upload.status, 201, "{}", upload.body);
    let layout = s
        .app
        .post(
            &format!("{EVENT}/ticketlayouts/"),
            &s.token,
            json!({"name": "Heavy", "layout": [], "default": true,
                   "background": upload.body["id"]}),
        )
        .await;
    assert_eq!(layout.status, 201, "{}", layout.body);

    let o = s.ordered(1, json!({})).await;
    let code = code_of(&o);
    let ticket = s
        .app
        .get(&format!("{EVENT}/orders/{code}/download/pdf/"), &s.token)
        .await;
    assert_eq!(ticket.status, 403, "not yet paid: {}", ticket.body);
    let r = s.act(&code, "mark_paid", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 1, "the mail goes out");
    assert_eq!(
        subject(&received[0]),
        format!("Payment received for your order: {code}")
    );
    assert!(
        attachments(&received[0]).is_empty(),
        "a ticket of over 4 MB stays out"
    );
    let ticket = s
        .app
        .get(&format!("{EVENT}/orders/{code}/download/pdf/"), &s.token)
        .await;
    assert_eq!(ticket.status, 200);
    assert!(
        ticket.bytes.len() > 4 * 1024 * 1024,
        "the order page has it: {} bytes",
        ticket.bytes.len()
    );
}

#[tokio::test]
async fn the_mail_about_a_placed_order_carries_its_invoice_unless_the_event_keeps_it_out() {
    let sink = SmtpSink::start().await;
    let s = mailing_shop(&sink).await;
    set(
        &s,
        json!({"invoice_generate": "True", "invoice_address_from_name": "Acme Events GmbH"}),
    )
    .await;
    let address = json!({"company": "Buyer AG", "country": "DE"});
    let o = s
        .ordered(1, json!({"send_mail": true, "invoice_address": address}))
        .await;
    let code = code_of(&o);
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 1);
    let files = attachments(&received[0]);
    assert_eq!(
        files.len(),
        1,
        "the invoice; a pending order has no tickets"
    );
    assert_eq!(files[0].0, "CONF-00001.pdf");
    if let Some(text) = checked_text(&files[0].1) {
        assert!(
            text.contains("CONF-00001") && text.contains("Buyer AG"),
            "{text}"
        );
        assert!(text.contains(&code), "{text}");
    }

    set(&s, json!({"invoice_email_attachment": false})).await;
    s.ordered(1, json!({"send_mail": true, "invoice_address": address}))
        .await;
    let received = delivered(&s, &sink).await;
    assert_eq!(received.len(), 2);
    assert!(attachments(&received[1]).is_empty());
}
