//! The extension point: plugins compiled into the host binary register here, and events
//! switch them on by name.

pub mod payment;

use std::sync::Arc;

use crate::domain::settings::{SettingDef, SettingsRegistry};
use payment::{ManualPayment, PaymentProvider};

/// A plugin of the host app.
pub trait Plugin: Send + Sync + 'static {
    /// Name as it appears in an event's `plugins` list.
    fn name(&self) -> &'static str;
    /// Version of the plugin.
    fn version(&self) -> &'static str;
    /// One-line description.
    fn description(&self) -> &'static str;
    /// Settings the plugin declares; they appear in the settings API and inherit like core ones.
    fn settings(&self) -> Vec<SettingDef> {
        Vec::new()
    }
    /// Payment providers the plugin brings; offered for events that enable the plugin.
    fn payment_providers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        Vec::new()
    }
}

/// The plugins a host app was built with.
#[derive(Default, Clone)]
pub struct PluginRegistry {
    plugins: Vec<Arc<dyn Plugin>>,
}

impl PluginRegistry {
    /// Adds a plugin; a second plugin of the same name replaces the first.
    pub fn register(&mut self, plugin: Arc<dyn Plugin>) {
        self.plugins.retain(|p| p.name() != plugin.name());
        self.plugins.push(plugin);
    }

    /// The plugin of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Plugin>> {
        self.plugins.iter().find(|p| p.name() == name)
    }

    /// Whether a plugin of that name is registered.
    pub fn is_registered(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The core settings and those every plugin declares.
    pub fn settings(&self) -> SettingsRegistry {
        let mut registry = SettingsRegistry::default();
        for def in self.plugins.iter().flat_map(|p| p.settings()) {
            registry.declare(def);
        }
        registry
    }

    /// The payment provider of that identifier that an event with these plugins offers: the
    /// core's `manual`, or one of an enabled plugin.
    pub fn payment_provider(
        &self,
        enabled_plugins: &[String],
        identifier: &str,
    ) -> Option<Arc<dyn PaymentProvider>> {
        if identifier == "manual" {
            return Some(Arc::new(ManualPayment));
        }
        enabled_plugins
            .iter()
            .filter_map(|name| self.get(name))
            .flat_map(|p| p.payment_providers())
            .find(|p| p.identifier() == identifier)
    }

    /// Every registered plugin.
    pub fn all(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }
}
