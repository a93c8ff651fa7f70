//! A reseller account: creates organizers for its customers.

use sea_orm::entity::prelude::*;

/// A row of `resellers`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "resellers")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Internal name.
    pub name: String,
    /// Name shown to customers.
    pub public_name: String,
    /// Public web site.
    pub public_url: String,
    /// Support mail address.
    pub support_email: String,
    /// Support phone number.
    pub support_phone: String,
    /// Language code for communication.
    pub communication_language: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
