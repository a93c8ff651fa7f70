//! A provider's notice about a payment, acted on once.

use sea_orm::entity::prelude::*;

/// A row of `payment_notices`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "payment_notices")]
pub struct Model {
    /// The provider's identifier.
    #[sea_orm(primary_key, auto_increment = false)]
    pub provider: String,
    /// The provider's ID of the notice.
    #[sea_orm(primary_key, auto_increment = false)]
    pub notice_id: String,
    /// The payment it was about.
    pub payment_id: i64,
    /// When it was acted on.
    pub received: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
