//! The extension point: plugins compiled into the host binary register here, and events
//! switch them on by name.

use std::sync::Arc;

/// A plugin of the host app.
pub trait Plugin: Send + Sync + 'static {
    /// Name as it appears in an event's `plugins` list.
    fn name(&self) -> &'static str;
    /// Version of the plugin.
    fn version(&self) -> &'static str;
    /// One-line description.
    fn description(&self) -> &'static str;
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

    /// Every registered plugin.
    pub fn all(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }
}
