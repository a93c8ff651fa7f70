//! Outgoing mail through a transactional outbox. Whoever causes a mail writes it with
//! [`queue`] in its own transaction, so the mail exists exactly when that transaction
//! commits; after the commit it calls [`Mailer::wake`], and the mailer's worker sends it over
//! SMTP in the background, retrying with growing pauses when the server refuses. A request
//! never waits for, nor fails because of, a mail. Without SMTP configured, mails stay
//! `queued` in the outbox, where `tessera admin outbox` shows them.

mod mailer;
mod smtp;

pub use mailer::{Delivered, MAX_ATTEMPTS, Mailer, retry_delay};
pub use smtp::MailConfigError;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use crate::db::entities::outbox_mail;

/// A mail to send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mail {
    /// The organizer it is about, if any.
    pub organizer_id: Option<i64>,
    /// The event it is about, if any.
    pub event_id: Option<i64>,
    /// The recipient's address.
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub body_text: String,
    /// An HTML alternative of the body.
    pub body_html: Option<String>,
    /// The order whose tickets go with it, when they may be had as it is sent.
    pub attach_tickets_of: Option<i64>,
    /// The invoices that go with it.
    pub attach_invoices: Vec<i64>,
}

impl Mail {
    /// A plain-text mail about no organizer or event.
    pub fn text(
        to: impl Into<String>,
        subject: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        Self {
            to: to.into(),
            subject: subject.into(),
            body_text: body.into(),
            ..Self::default()
        }
    }

    /// The same mail, about this organizer and event.
    pub fn about(mut self, organizer_id: Option<i64>, event_id: Option<i64>) -> Self {
        self.organizer_id = organizer_id;
        self.event_id = event_id;
        self
    }

    /// The same mail, carrying the tickets of this order (made when it is sent, and only
    /// when the order may have them then: see [`Attachments`]).
    pub fn with_tickets_of(mut self, order_id: i64) -> Self {
        self.attach_tickets_of = Some(order_id);
        self
    }

    /// The same mail, carrying these invoices (made when it is sent).
    pub fn with_invoices(mut self, ids: Vec<i64>) -> Self {
        self.attach_invoices = ids;
        self
    }
}

/// A file sent with a mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The name it is sent under.
    pub file_name: String,
    /// Its media type, e.g. `application/pdf`.
    pub content_type: String,
    /// The file.
    pub data: Vec<u8>,
}

/// Makes the files a mail of the outbox carries, when it is sent: the tickets of the order it
/// names. The mailer calls it; the rules for tickets implement it.
#[async_trait::async_trait]
pub trait Attachments: Send + Sync + 'static {
    /// The files of this mail; none when it carries none, or they cannot be had now.
    async fn of(&self, mail: &outbox_mail::Model) -> Result<Vec<Attachment>, DbErr>;
}

/// The files of every source, one after the other (tickets, then invoices).
pub struct AllAttachments(pub Vec<std::sync::Arc<dyn Attachments>>);

#[async_trait::async_trait]
impl Attachments for AllAttachments {
    async fn of(&self, mail: &outbox_mail::Model) -> Result<Vec<Attachment>, DbErr> {
        let mut all = Vec::new();
        for source in &self.0 {
            all.extend(source.of(mail).await?);
        }
        Ok(all)
    }
}

/// Where a mail of the outbox stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailState {
    /// Waiting to be sent, or to be tried again.
    Queued,
    /// Handed to the SMTP server.
    Sent,
    /// Given up after [`MAX_ATTEMPTS`], or undeliverable (a malformed address).
    Failed,
}

impl MailState {
    /// Every state, in the order mails go through them.
    pub const ALL: [MailState; 3] = [MailState::Queued, MailState::Sent, MailState::Failed];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            MailState::Queued => "queued",
            MailState::Sent => "sent",
            MailState::Failed => "failed",
        }
    }

    /// The state with this stored name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// Writes a mail to the outbox in the caller's transaction and gives its ID. Call
/// [`Mailer::wake`] after the transaction commits, so that it goes out at once.
pub async fn queue(txn: &impl ConnectionTrait, mail: Mail) -> Result<i64, DbErr> {
    let now = crate::values::now();
    let row = outbox_mail::ActiveModel {
        organizer_id: Set(mail.organizer_id),
        event_id: Set(mail.event_id),
        to_address: Set(mail.to),
        subject: Set(mail.subject),
        body_text: Set(mail.body_text),
        body_html: Set(mail.body_html),
        attach_tickets_of: Set(mail.attach_tickets_of),
        attach_invoices: Set(
            (!mail.attach_invoices.is_empty()).then(|| serde_json::json!(mail.attach_invoices))
        ),
        created: Set(now),
        state: Set(MailState::Queued.as_str().into()),
        attempts: Set(0),
        next_attempt_at: Set(now),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(row.id)
}

/// The mails of the outbox, newest first, at most `limit`, only those in `state` if given.
pub async fn list(
    db: &impl ConnectionTrait,
    state: Option<MailState>,
    limit: u64,
) -> Result<Vec<outbox_mail::Model>, DbErr> {
    let mut query = outbox_mail::Entity::find();
    if let Some(state) = state {
        query = query.filter(outbox_mail::Column::State.eq(state.as_str()));
    }
    query
        .order_by_desc(outbox_mail::Column::Id)
        .limit(limit)
        .all(db)
        .await
}

/// One mail of the outbox.
pub async fn find(db: &impl ConnectionTrait, id: i64) -> Result<Option<outbox_mail::Model>, DbErr> {
    outbox_mail::Entity::find_by_id(id).one(db).await
}
