//! An API token of a team. Only the SHA-256 hash of the token is stored.

use sea_orm::entity::prelude::*;

/// A row of `team_tokens`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "team_tokens")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The team the token acts for.
    pub team_id: i64,
    /// A name to recognise the token by.
    pub name: String,
    /// Hex SHA-256 of the token.
    pub token_hash: String,
    /// Inactive tokens are refused.
    pub active: bool,
    /// When the token was created.
    pub created: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
