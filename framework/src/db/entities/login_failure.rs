//! Failed sign-ins counted per email address or per client address, to slow down guessing.

use sea_orm::entity::prelude::*;

/// A row of `login_failures`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "login_failures")]
pub struct Model {
    /// `email:<address>` or `address:<client address>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// Failures since `first_failure`.
    pub failures: i32,
    /// Start of the counting window.
    pub first_failure: DateTimeUtc,
    /// Sign-ins under this key are refused until then.
    pub locked_until: Option<DateTimeUtc>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
