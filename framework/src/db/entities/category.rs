//! A category of an event's items.

use sea_orm::entity::prelude::*;

/// A row of `categories`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "categories")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// Multi-language name.
    pub name: Json,
    /// Name shown in the back end only.
    pub internal_name: Option<String>,
    /// Multi-language description.
    pub description: Option<Json>,
    /// Sort position.
    pub position: i32,
    /// Whether the category holds add-ons only.
    pub is_addon: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
