//! A user's membership of a team.

use sea_orm::entity::prelude::*;

/// A row of `team_members`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "team_members")]
pub struct Model {
    /// The team.
    #[sea_orm(primary_key, auto_increment = false)]
    pub team_id: i64,
    /// The user.
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
