//! Mail: the transactional outbox, delivery over SMTP to a local sink, retries, and two
//! senders sharing one database.

use std::sync::Arc;

use chrono::{Duration, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set, TransactionTrait};
use tessera::Config;
use tessera::config::SmtpTls;
use tessera::db::entities::outbox_mail;
use tessera::domain::mail::{self, Delivered, MAX_ATTEMPTS, Mail, Mailer};
use tessera_tests::smtp::SmtpSink;
use tessera_tests::{TestApp, outbox};

fn sending_to(port: u16) -> impl FnOnce(&mut Config) {
    move |c| {
        c.smtp_host = Some("127.0.0.1".into());
        c.smtp_port = Some(port);
        c.smtp_tls = SmtpTls::None;
        c.mail_from = "Tickets <tickets@tessera.test>".into();
    }
}

async fn app_sending_to(port: u16) -> TestApp {
    TestApp::spawn_with(sending_to(port)).await
}

/// Attaches nothing to any mail.
struct NoFiles;

#[async_trait::async_trait]
impl mail::Attachments for NoFiles {
    async fn of(&self, _: &outbox_mail::Model) -> Result<Vec<mail::Attachment>, sea_orm::DbErr> {
        Ok(Vec::new())
    }
}

fn confirmation() -> Mail {
    Mail::text(
        "ada@example.com",
        "Your order ABC12",
        "Hello Ada,\n\nthank you for your order.\n",
    )
}

async fn queue(app: &TestApp, mail: Mail) -> i64 {
    let txn = app.db.begin().await.expect("begin");
    let id = mail::queue(&txn, mail).await.expect("queue");
    txn.commit().await.expect("commit");
    id
}

async fn stored(app: &TestApp, id: i64) -> outbox_mail::Model {
    mail::find(&app.db, id).await.expect("query").expect("mail")
}

/// Makes a mail due now, as if its pause had passed.
async fn make_due(app: &TestApp, id: i64) {
    outbox_mail::Entity::update_many()
        .set(outbox_mail::ActiveModel {
            next_attempt_at: Set(Utc::now() - Duration::seconds(1)),
            ..Default::default()
        })
        .filter(outbox_mail::Column::Id.eq(id))
        .exec(&app.db)
        .await
        .expect("update");
}

/// A port on which nothing listens.
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    listener.local_addr().expect("addr").port()
}

#[tokio::test]
async fn a_mail_queued_in_a_transaction_exists_only_if_it_commits() {
    let app = TestApp::spawn().await;
    let txn = app.db.begin().await.expect("begin");
    mail::queue(&txn, confirmation()).await.expect("queue");
    txn.rollback().await.expect("rollback");
    assert!(outbox(&app.db).await.is_empty());

    let id = queue(&app, confirmation()).await;

    let mails = outbox(&app.db).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].id, id);
    assert_eq!(mails[0].state, "queued");
    assert_eq!(mails[0].to_address, "ada@example.com");
    assert_eq!(mails[0].subject, "Your order ABC12");
    assert_eq!(mails[0].attempts, 0);
}

#[tokio::test]
async fn without_smtp_mails_stay_queued_in_the_outbox() {
    let app = TestApp::spawn().await;
    let id = queue(&app, confirmation()).await;
    app.mailer.wake();

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert!(!app.mailer.sends());
    assert!(app.mailer.spawn().is_none());
    assert_eq!(done, Delivered::default());
    let mail = stored(&app, id).await;
    assert_eq!(mail.state, "queued");
    assert_eq!(mail.attempts, 0);
}

#[tokio::test]
async fn a_queued_mail_is_delivered_over_smtp_and_marked_sent() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    let id = queue(&app, confirmation()).await;

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(done.sent, 1);
    let received = sink.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].from, "<tickets@tessera.test>");
    assert_eq!(received[0].to, ["<ada@example.com>"]);
    assert!(received[0].data.contains("Subject: Your order ABC12"));
    assert!(received[0].data.contains("To: ada@example.com"));
    assert!(received[0].data.contains("thank you for your order."));
    let mail = stored(&app, id).await;
    assert_eq!(mail.state, "sent");
    assert_eq!(mail.attempts, 1);
    assert!(mail.sent_at.is_some());
    assert_eq!(mail.last_error, None);
}

#[tokio::test]
async fn an_html_body_goes_out_as_an_alternative_to_the_text() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    let mut html = confirmation();
    html.body_html = Some("<p>Hello <b>Ada</b></p>".into());
    queue(&app, html).await;

    app.mailer.deliver_due().await.expect("deliver");

    let data = &sink.received()[0].data;
    assert!(data.contains("multipart/alternative"));
    assert!(data.contains("text/plain"));
    assert!(data.contains("text/html"));
}

#[tokio::test]
async fn the_worker_sends_a_mail_soon_after_it_is_woken() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    let worker = app.mailer.spawn().expect("worker");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;

    let id = queue(&app, confirmation()).await;
    app.mailer.wake();

    // Generous limits: on a busy machine (the whole suite on two cores) the worker's
    // transaction can wait seconds for the database; the test is about being woken at all.
    assert_eq!(sink.wait_for(1, 30).await.len(), 1);
    for _ in 0..300 {
        if stored(&app, id).await.state == "sent" {
            worker.abort();
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the mail was sent but not marked sent");
}

#[tokio::test]
async fn a_refused_mail_stays_queued_and_is_tried_again_later() {
    let sink = SmtpSink::start().await;
    sink.refuse(true);
    let app = app_sending_to(sink.port).await;
    let id = queue(&app, confirmation()).await;

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(done.retried, 1);
    let mail = stored(&app, id).await;
    assert_eq!(mail.state, "queued");
    assert_eq!(mail.attempts, 1);
    assert!(mail.next_attempt_at > Utc::now() + Duration::seconds(20));
    assert!(mail.last_error.expect("error").contains("451"));
    let early = app.mailer.deliver_due().await.expect("deliver");
    assert_eq!(early, Delivered::default(), "not due yet");

    sink.refuse(false);
    make_due(&app, id).await;
    let later = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(later.sent, 1);
    assert_eq!(sink.received().len(), 1);
    let mail = stored(&app, id).await;
    assert_eq!((mail.state.as_str(), mail.attempts), ("sent", 2));
    assert_eq!(mail.last_error, None);
}

#[tokio::test]
async fn an_unreachable_server_leaves_the_mail_queued_for_later() {
    let app = app_sending_to(closed_port().await).await;
    let id = queue(&app, confirmation()).await;

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(done.retried, 1);
    let mail = stored(&app, id).await;
    assert_eq!((mail.state.as_str(), mail.attempts), ("queued", 1));
    assert!(mail.next_attempt_at > Utc::now());
    assert!(mail.last_error.is_some());
}

#[tokio::test]
async fn a_mail_is_given_up_after_the_last_attempt() {
    let sink = SmtpSink::start().await;
    sink.refuse(true);
    let app = app_sending_to(sink.port).await;
    let id = queue(&app, confirmation()).await;
    outbox_mail::Entity::update_many()
        .set(outbox_mail::ActiveModel {
            attempts: Set(MAX_ATTEMPTS - 1),
            ..Default::default()
        })
        .filter(outbox_mail::Column::Id.eq(id))
        .exec(&app.db)
        .await
        .expect("update");

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(done.failed, 1);
    let mail = stored(&app, id).await;
    assert_eq!(
        (mail.state.as_str(), mail.attempts),
        ("failed", MAX_ATTEMPTS)
    );
}

#[tokio::test]
async fn a_malformed_address_is_given_up_at_once() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    let id = queue(&app, Mail::text("not an address", "Hi", "Hello")).await;

    let done = app.mailer.deliver_due().await.expect("deliver");

    assert_eq!(done.failed, 1);
    assert!(sink.received().is_empty());
    let mail = stored(&app, id).await;
    assert_eq!(mail.state, "failed");
    assert!(mail.last_error.expect("error").contains("not an address"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_mailers_on_one_database_send_each_mail_once() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    for n in 0..60 {
        queue(
            &app,
            Mail::text("ada@example.com", format!("Mail {n}"), "Hi"),
        )
        .await;
    }
    let mut config = Config::default();
    sending_to(sink.port)(&mut config);
    let other = Mailer::new(app.db.clone(), &config, Arc::new(NoFiles)).expect("mailer");

    let (a, b) = tokio::join!(app.mailer.deliver_due(), other.deliver_due());

    let (a, b) = (a.expect("deliver"), b.expect("deliver"));
    assert_eq!(a.sent + b.sent, 60);
    let mut subjects: Vec<String> = sink
        .received()
        .iter()
        .filter_map(|r| {
            r.data
                .lines()
                .find(|l| l.starts_with("Subject: "))
                .map(str::to_owned)
        })
        .collect();
    subjects.sort();
    subjects.dedup();
    assert_eq!(subjects.len(), 60);
    assert_eq!(sink.received().len(), 60);
    assert!(outbox(&app.db).await.iter().all(|m| m.state == "sent"));
}

/// The `Message-ID` header of a received message.
fn message_id(data: &str) -> &str {
    data.lines()
        .find_map(|l| l.strip_prefix("Message-ID: "))
        .expect("a Message-ID header")
}

#[tokio::test]
async fn every_attempt_at_a_mail_carries_the_same_message_id_naming_its_outbox_row() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.port).await;
    let id = queue(&app, confirmation()).await;
    app.mailer.deliver_due().await.expect("deliver");
    // As if the worker had died before it recorded the mail as sent.
    outbox_mail::Entity::update_many()
        .set(outbox_mail::ActiveModel {
            state: Set("queued".into()),
            ..Default::default()
        })
        .filter(outbox_mail::Column::Id.eq(id))
        .exec(&app.db)
        .await
        .expect("update");
    make_due(&app, id).await;

    app.mailer.deliver_due().await.expect("deliver again");

    let received = sink.received();
    assert_eq!(received.len(), 2);
    let first = message_id(&received[0].data);
    assert_eq!(first, message_id(&received[1].data));
    assert!(first.starts_with(&format!("<{id}.")), "{first}");
    assert!(first.ends_with("@tessera.test>"), "{first}");
}
