//! What every handler can reach: the database, the configuration and the extensions.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::config::Config;
use crate::domain::cache::Cache;
use crate::domain::extensions::Extensions;
use crate::domain::mail::Mailer;
use crate::domain::settings::SettingsRegistry;

/// Shared state of a running server, cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The connection pool.
    pub db: DatabaseConnection,
    /// The configuration in effect.
    pub config: Arc<Config>,
    /// The public base URL, without trailing slash.
    pub public_url: Arc<str>,
    /// What the registered plugins bring, as the rules ask for it.
    pub plugins: Arc<dyn Extensions>,
    /// Every declared setting, the core's and the plugins'.
    pub settings: Arc<SettingsRegistry>,
    /// What this process keeps of the configuration between requests.
    pub cache: Arc<Cache>,
    /// Sends the mail outbox; wake it after committing a transaction that queued mail.
    pub mailer: Mailer,
    /// Gift card bookings waiting to be applied together, per card.
    pub bookings: Arc<crate::domain::giftcards::Bookings>,
    /// Plain orders waiting to be placed together, per event.
    pub placements: Arc<crate::domain::orders::Placements>,
    /// The turns of password checks in this process.
    pub password_checks: Arc<crate::domain::users::PasswordChecks>,
}

impl AppState {
    /// The parts of the server the order rules need, acting for this organizer.
    pub fn seller<'a>(&'a self, organizer: &'a str) -> crate::domain::orders::Seller<'a> {
        crate::domain::orders::Seller {
            db: &self.db,
            plugins: &*self.plugins,
            settings: &self.settings,
            cache: &self.cache,
            public_url: &self.public_url,
            organizer,
        }
    }

    /// What tickets are made with, for an event of these settings, reading through the
    /// cache at this generation.
    pub fn ticket_maker<'a>(
        &'a self,
        cache: Option<(&'a Cache, u64)>,
        settings: &'a crate::domain::cache::EventSettings,
    ) -> crate::domain::tickets::Maker<'a> {
        crate::domain::tickets::Maker {
            db: &self.db,
            cache,
            extensions: &*self.plugins,
            settings,
        }
    }
}
