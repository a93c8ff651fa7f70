//! A meta data property that an organizer's events carry values for.

use sea_orm::entity::prelude::*;

/// A row of `meta_properties`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "meta_properties")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Property name, unique per organizer.
    pub name: String,
    /// Value of events that set none.
    pub default_value: String,
    /// Whether every event must have a value.
    pub required: bool,
    /// Whether only holders of the organizer's settings permission set values.
    pub protected: bool,
    /// Whether the public event list offers it as a filter.
    pub filter_public: bool,
    /// Name shown to the public (JSON i18n string), if any.
    pub public_label: Option<Json>,
    /// Whether lists may be filtered by it.
    pub filter_allowed: bool,
    /// The values allowed, `[{"key": .., "label": {lang: ..}}]`; none allows any.
    pub choices: Option<Json>,
    /// Place among the organizer's properties.
    pub position: i32,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
