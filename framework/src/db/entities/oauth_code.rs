//! An OAuth authorization code: single use, short-lived, stored as a hash.

use sea_orm::entity::prelude::*;

/// A row of `oauth_codes`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_codes")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The authorization it was issued for.
    pub authorization_id: i64,
    /// Hex SHA-256 of the code.
    pub code_hash: String,
    /// The redirect URI the code was sent to; the exchange must name it again.
    pub redirect_uri: String,
    /// PKCE S256 challenge, when the client sent one.
    pub code_challenge: Option<String>,
    /// When the code stops being accepted.
    pub expires: DateTimeUtc,
    /// Whether the code was exchanged already.
    pub used: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
