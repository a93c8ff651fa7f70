//! An OAuth refresh token, stored as a hash; it never expires but can be revoked.

use sea_orm::entity::prelude::*;

/// A row of `oauth_refresh_tokens`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_refresh_tokens")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The authorization it acts under.
    pub authorization_id: i64,
    /// Hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was issued.
    pub created: DateTimeUtc,
    /// When it was revoked (used for a refresh, or revoked by its client or user).
    pub revoked: Option<DateTimeUtc>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
