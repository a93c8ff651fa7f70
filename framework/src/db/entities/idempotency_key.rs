//! An `X-Idempotency-Key` of an API write, and the answer given to it.

use sea_orm::entity::prelude::*;

/// A row of `idempotency_keys`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// SHA-256 (hex) of the caller's credentials.
    pub credential: String,
    /// The key the client sent.
    pub idempotency_key: String,
    /// The request's method.
    pub method: String,
    /// The request's path, without trailing slash.
    pub path: String,
    /// `in_progress` or `done`.
    pub state: String,
    /// The answer's status, once done.
    pub status: Option<i32>,
    /// The answer's headers worth repeating, as `[[name, value], ...]`.
    pub headers: Json,
    /// The answer's body, once done.
    pub body: Option<Vec<u8>>,
    /// When the key was first used.
    pub created: DateTimeUtc,
}

/// Relations (none declared).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
