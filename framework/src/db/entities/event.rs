//! An event of an organizer.

use sea_orm::entity::prelude::*;

/// A row of `events`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer the event belongs to.
    pub organizer_id: i64,
    /// Short name used in URLs, unique per organizer, fixed after creation.
    pub slug: String,
    /// Multi-language name.
    pub name: Json,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Start of the event.
    pub date_from: DateTimeUtc,
    /// Whether the shop is publicly available.
    pub live: bool,
    /// Whether the shop is in test mode.
    pub testmode: bool,
    /// End of the event.
    pub date_to: Option<DateTimeUtc>,
    /// Admission time.
    pub date_admission: Option<DateTimeUtc>,
    /// Whether the event shows in the organizer's public list.
    pub is_public: bool,
    /// When the shop opens.
    pub presale_start: Option<DateTimeUtc>,
    /// When the shop closes.
    pub presale_end: Option<DateTimeUtc>,
    /// Multi-language location.
    pub location: Option<Json>,
    /// Latitude.
    pub geo_lat: Option<f64>,
    /// Longitude.
    pub geo_lon: Option<f64>,
    /// Whether the event is a series of dates; fixed after creation.
    pub has_subevents: bool,
    /// Names of the enabled plugins (JSON list of strings).
    pub plugins: Json,
    /// The seating plan, when reserved seating is used.
    pub seating_plan_id: Option<i64>,
    /// Seating plan category to item ID (JSON object).
    pub seat_category_mapping: Json,
    /// Time zone name.
    pub timezone: String,
    /// Values of organizer meta properties (JSON object).
    pub meta_data: Json,
    /// Sales channels (JSON list of strings).
    pub sales_channels: Json,
    /// Public key of the ticket signature scheme (base64).
    pub public_key: String,
    /// Private key of the ticket signature scheme (base64); never shown.
    pub private_key: String,
    /// Whether the talk side (`/api/events/{slug}/`) serves this event.
    pub talk_enabled: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
