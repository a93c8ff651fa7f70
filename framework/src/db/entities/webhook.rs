//! A webhook of an organizer: where notifications of its changes are sent.

use sea_orm::entity::prelude::*;

/// A row of `webhooks`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhooks")]
pub struct Model {
    /// ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Where calls go.
    pub target_url: String,
    /// Whether calls are made.
    pub enabled: bool,
    /// Every event, or those of `webhook_events`.
    pub all_events: bool,
    /// Internal comment.
    pub comment: String,
    /// The key calls are signed with (HMAC-SHA256); shown once, when set.
    pub secret: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
