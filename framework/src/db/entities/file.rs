//! An uploaded file: temporary until something uses it.

use sea_orm::entity::prelude::*;

/// A row of `files`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "files")]
pub struct Model {
    /// Key.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Who uploaded it (the caller's identity).
    pub owner: String,
    /// File name.
    pub filename: String,
    /// Media type.
    pub content_type: String,
    /// Contents.
    pub data: Vec<u8>,
    /// Upload time.
    pub created: DateTimeUtc,
    /// When an unused upload is forgotten; `None` once in use.
    pub expires: Option<DateTimeUtc>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
