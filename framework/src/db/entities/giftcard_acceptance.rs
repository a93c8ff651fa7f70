//! An organizer (acceptor) that accepts the gift cards of another (issuer).

use sea_orm::entity::prelude::*;

/// A row of `giftcard_acceptances`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "giftcard_acceptances")]
pub struct Model {
    /// The organizer whose cards are accepted.
    #[sea_orm(primary_key, auto_increment = false)]
    pub issuer_id: i64,
    /// The organizer that accepts them.
    #[sea_orm(primary_key, auto_increment = false)]
    pub acceptor_id: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
