//! A layout of an event's PDF tickets or badges.

use sea_orm::entity::prelude::*;

/// A row of `pdf_layouts`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "pdf_layouts")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// `ticket` or `badge`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Whether products without an assignment are printed with it.
    pub is_default: bool,
    /// The areas, in pretix's layout format.
    pub layout: Json,
    /// The background PDF, a claimed upload (`<key>/<file name>`).
    pub background: Option<String>,
    /// Page width without a background, in millimetres.
    pub width_mm: f64,
    /// Page height without a background, in millimetres.
    pub height_mm: f64,
    /// Grows with every change.
    pub version: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
