//! An OAuth access token, stored as a hash; valid until it expires or is revoked.

use sea_orm::entity::prelude::*;

/// A row of `oauth_access_tokens`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_access_tokens")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The authorization it acts under.
    pub authorization_id: i64,
    /// The refresh token issued with it.
    pub refresh_token_id: Option<i64>,
    /// Hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was issued.
    pub created: DateTimeUtc,
    /// When it stops being accepted.
    pub expires: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
