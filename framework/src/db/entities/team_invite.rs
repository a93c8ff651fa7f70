//! An invitation to join a team, sent by e-mail.

use sea_orm::entity::prelude::*;

/// A row of `team_invites`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "team_invites")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The team.
    pub team_id: i64,
    /// The address invited, lower-cased.
    pub email: String,
    /// Hash of the token in the invitation's link.
    pub token_hash: String,
    /// When it was sent.
    pub created: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
