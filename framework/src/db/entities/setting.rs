//! A setting value stored on one level (organizer or event).

use sea_orm::entity::prelude::*;

/// A row of `settings`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "settings")]
pub struct Model {
    /// `organizer` or `event`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    /// ID of the organizer or event.
    #[sea_orm(primary_key, auto_increment = false)]
    pub owner_id: i64,
    /// Setting key.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// JSON value.
    pub value: Json,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
