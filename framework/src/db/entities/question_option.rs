//! A choice of a choice question.

use sea_orm::entity::prelude::*;

/// A row of `question_options`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "question_options")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The question.
    pub question_id: i64,
    /// Identifier, unique within the question.
    pub identifier: String,
    /// Multi-language answer text.
    pub answer: Json,
    /// Sort position.
    pub position: i32,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
