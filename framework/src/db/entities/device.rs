//! A scanning device of an organizer. The API token is stored only as a SHA-256 hash; the
//! initialization token is readable until it is used, and its hash is kept for ever.

use sea_orm::entity::prelude::*;

/// A row of `devices`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "devices")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer.
    pub organizer_id: i64,
    /// Number within the organizer.
    pub device_id: i64,
    /// 16 characters, unique.
    pub unique_serial: String,
    /// Name.
    pub name: String,
    /// Access to all events of the organizer.
    pub all_events: bool,
    /// Security profile name (or alias).
    pub security_profile: String,
    /// The gate it stands at.
    pub gate_id: Option<i64>,
    /// The initialization token while unused.
    pub initialization_token: Option<String>,
    /// Hex SHA-256 of the initialization token.
    pub initialization_token_hash: String,
    /// Hex SHA-256 of the API token, once initialized.
    pub api_token_hash: Option<String>,
    /// When it was initialized.
    pub initialized: Option<DateTimeUtc>,
    /// Revoked for ever.
    pub revoked: bool,
    /// When it was created.
    pub created: DateTimeUtc,
    /// Reported by the device.
    pub hardware_brand: Option<String>,
    /// Reported by the device.
    pub hardware_model: Option<String>,
    /// Reported by the device.
    pub os_name: Option<String>,
    /// Reported by the device.
    pub os_version: Option<String>,
    /// Reported by the device.
    pub software_brand: Option<String>,
    /// Reported by the device.
    pub software_version: Option<String>,
    /// Free-form information the device reports (a JSON object).
    pub info: Option<Json>,
    /// The device's RSA public key (PEM), fixed once set.
    pub rsa_pubkey: Option<String>,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
