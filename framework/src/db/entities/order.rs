//! An order of an event.

use sea_orm::entity::prelude::*;

/// A row of `orders`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "orders")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Order code, unique per event.
    pub code: String,
    /// Status as stored: `n` pending, `p` paid, `c` canceled (expired is pending past its term).
    pub status: String,
    /// When it was placed.
    pub datetime: DateTimeUtc,
    /// Placed in test mode.
    pub testmode: bool,
    /// Secret of the order's links.
    pub secret: String,
    /// Customer e-mail.
    pub email: Option<String>,
    /// Customer phone.
    pub phone: Option<String>,
    /// Customer language.
    pub locale: String,
    /// End of the payment term.
    pub expires: Option<DateTimeUtc>,
    /// Whether it stops holding quota when the term has passed.
    pub expires_automatically: bool,
    /// When it was paid.
    pub payment_date: Option<DateTimeUtc>,
    /// When it was canceled.
    pub cancellation_date: Option<DateTimeUtc>,
    /// Total in cents.
    pub total_cents: i64,
    /// Internal comment.
    pub comment: String,
    /// Sales channel.
    pub sales_channel: String,
    /// Invoice address.
    pub invoice_address: Option<Json>,
    /// Free data of API clients.
    pub api_meta: Json,
    /// Last change.
    pub last_modified: Option<DateTimeUtc>,
    /// Waits for the organizer's approval (pending, no payment term until approved).
    pub require_approval: bool,
    /// Whether the check-in staff should look at this order's tickets.
    pub checkin_attention: bool,
    /// A text shown to the check-in staff.
    pub checkin_text: Option<String>,
    /// A day the organizer means to follow the order up.
    pub custom_followup_at: Option<Date>,
    /// Whether the tickets of a pending order admit.
    pub valid_if_pending: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
