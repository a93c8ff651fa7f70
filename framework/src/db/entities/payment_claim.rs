//! A payment being worked on by one request, until `until`.

use sea_orm::entity::prelude::*;

/// A row of `payment_claims`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "payment_claims")]
pub struct Model {
    /// The payment.
    #[sea_orm(primary_key, auto_increment = false)]
    pub payment_id: i64,
    /// When the claim ends even if its request never finished.
    pub until: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
