//! A gate of an organizer: where devices stand and check-in lists apply.

use sea_orm::entity::prelude::*;

/// A row of `gates`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "gates")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Name.
    pub name: String,
    /// Identifier, unique per organizer.
    pub identifier: String,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
