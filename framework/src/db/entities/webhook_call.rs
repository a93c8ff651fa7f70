//! A call of a webhook: one notification to one webhook, and how its delivery went.

use sea_orm::entity::prelude::*;

/// A row of `webhook_calls`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_calls")]
pub struct Model {
    /// ID; the payload's `notification_id`.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The webhook.
    pub webhook_id: i64,
    /// The action type, e.g. `pretix.event.order.placed`.
    pub action_type: String,
    /// The organizer's slug.
    pub organizer: String,
    /// The event's slug, for notifications about an event.
    pub event: Option<String>,
    /// What the payload says beside `notification_id`, `organizer`, `event` and `action`.
    pub payload: Json,
    /// When the change happened.
    pub created: ChronoDateTimeUtc,
    /// `pending`, `success` or `failed` (retries run out, or the webhook went away).
    pub state: String,
    /// Delivery attempts so far.
    pub attempts: i32,
    /// When the next attempt is due.
    pub next_attempt: ChronoDateTimeUtc,
    /// Until when a process delivering it holds it.
    pub claimed_until: Option<ChronoDateTimeUtc>,
    /// When it was last attempted.
    pub last_attempt: Option<ChronoDateTimeUtc>,
    /// The receiver's last status code.
    pub return_code: Option<i32>,
    /// How long the last attempt took, in milliseconds.
    pub duration_ms: Option<i64>,
    /// The start of the receiver's last answer, or why the attempt failed.
    pub response_body: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
