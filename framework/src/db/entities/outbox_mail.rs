//! A mail in the outbox: written in the transaction that causes it, sent after it commits.

use sea_orm::entity::prelude::*;

/// A row of `outbox_mails`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "outbox_mails")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer the mail is about, if any.
    pub organizer_id: Option<i64>,
    /// The event the mail is about, if any.
    pub event_id: Option<i64>,
    /// The recipient's address.
    pub to_address: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub body_text: String,
    /// HTML alternative of the body.
    pub body_html: Option<String>,
    /// When it was queued.
    pub created: DateTimeUtc,
    /// `queued`, `sent` or `failed`.
    pub state: String,
    /// Delivery attempts so far.
    pub attempts: i32,
    /// When the next attempt is due.
    pub next_attempt_at: DateTimeUtc,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When the mail was handed to the SMTP server.
    pub sent_at: Option<DateTimeUtc>,
    /// The order whose tickets the mail carries, made when it is sent.
    pub attach_tickets_of: Option<i64>,
    /// The invoices it carries (their IDs), as PDF files.
    pub attach_invoices: Option<Json>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
