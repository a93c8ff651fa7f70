//! A user permitted on a reseller account.

use sea_orm::entity::prelude::*;

/// A row of `reseller_users`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "reseller_users")]
pub struct Model {
    /// The reseller account.
    #[sea_orm(primary_key, auto_increment = false)]
    pub reseller_id: i64,
    /// The user.
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
