//! A browser session of a signed-in user. Only the SHA-256 hash of the cookie value is
//! stored.

use sea_orm::entity::prelude::*;

/// A row of `sessions`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sessions")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Hex SHA-256 of the cookie value.
    pub key_hash: String,
    /// The signed-in user.
    pub user_id: i64,
    /// The token every form posted in this session must carry.
    pub csrf_token: String,
    /// When the session began.
    pub created: DateTimeUtc,
    /// After this instant the session is over.
    pub expires: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
