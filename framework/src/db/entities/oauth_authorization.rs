//! What a user granted an OAuth application: a scope and the organizers chosen.

use sea_orm::entity::prelude::*;

/// A row of `oauth_authorizations`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_authorizations")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The application.
    pub application_id: i64,
    /// The user who granted access.
    pub user_id: i64,
    /// Space-separated scopes (`read`, `write`, `profile`).
    pub scope: String,
    /// JSON list of the organizer IDs granted.
    pub organizer_ids: Json,
    /// When access was first granted.
    pub created: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
