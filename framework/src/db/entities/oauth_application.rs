//! An OAuth application (client): its redirect URIs and the hash of its secret.

use sea_orm::entity::prelude::*;

/// A row of `oauth_applications`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_applications")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Name shown to people granting access.
    pub name: String,
    /// Public client ID.
    pub client_id: String,
    /// Hex SHA-256 of the client secret.
    pub client_secret_hash: String,
    /// JSON list of the absolute redirect URIs allowed.
    pub redirect_uris: Json,
    /// The user who owns the application, if any.
    pub user_id: Option<i64>,
    /// Inactive applications are refused.
    pub active: bool,
    /// When the application was registered.
    pub created: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
