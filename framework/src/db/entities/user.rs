//! A person who signs in: member of teams, owner of OAuth applications.

use sea_orm::entity::prelude::*;

/// A row of `users`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Email address, stored lower-cased; unique.
    pub email: String,
    /// Argon2id hash of the password (PHC string).
    pub password_hash: String,
    /// Full name.
    pub fullname: String,
    /// Preferred language.
    pub locale: String,
    /// Time zone name.
    pub timezone: String,
    /// Staff of the service.
    pub is_staff: bool,
    /// Inactive users cannot sign in and see nothing.
    pub active: bool,
    /// When the user was created.
    pub created: DateTimeUtc,
    /// Opaque public code naming the user on the talk side.
    pub code: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
