//! The extension point. A host binary assembles the core with plugins ([`crate::App::plugin`]),
//! compiled in or loaded from shared libraries at start ([`dynamic`]); each event switches
//! plugins on through its `plugins` list.
//!
//! A plugin brings what it registers: settings (into the same registry as the core's, so
//! they inherit and validate like core settings), payment providers (offered for events
//! that enable the plugin), HTTP endpoints under the plugin's own prefix ([`PluginApi`]),
//! pages for people ([`pages`]), and lifecycle hooks that run inside the core's transaction, so a plugin's writes commit
//! or roll back with the change that caused them.

pub mod api;
pub mod dynamic;
pub mod invoice_pdf;
pub mod library;

use std::sync::Arc;

use sea_orm::DbErr;

use crate::db::entities::event;
use crate::domain::devices::profiles::DeviceProfile;
use crate::domain::extensions::Extensions;
pub use crate::domain::extensions::invoices as invoice_renderer;
pub use crate::domain::extensions::pages;
pub use crate::domain::extensions::payments as payment;
pub use crate::domain::extensions::tickets as ticket_output;
pub use crate::domain::extensions::{Hook, OrderEvent};
use crate::domain::orders::Order;
use crate::domain::settings::{SettingDef, SettingsRegistry};
pub use api::PluginApi;
use invoice_renderer::InvoiceRenderer;
use payment::{ManualPayment, PaymentProvider};
use ticket_output::TicketOutput;

/// Where a plugin works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginLevel {
    /// Switched on per event, in the event's `plugins` list.
    Event,
    /// Active for every organizer; it cannot be listed on events.
    Organizer,
    /// Both: organizer endpoints always, event parts where an event enables it.
    Both,
}

/// A plugin of the host app. Only `name`, `version` and `description` are required; every
/// part a plugin does not bring has an empty default.
#[async_trait::async_trait]
pub trait Plugin: Send + Sync + 'static {
    /// Name as it appears in an event's `plugins` list (lower case, digits, `-`, `_`).
    fn name(&self) -> &str;
    /// Version of the plugin.
    fn version(&self) -> &str;
    /// One-line description.
    fn description(&self) -> &str;
    /// The name of its pretix counterpart (e.g. `pretix.plugins.banktransfer`), which an
    /// event's `plugins` list may use in its place, as pretix's clients write it.
    fn pretix_name(&self) -> Option<&str> {
        None
    }
    /// Where it works; per event unless it says otherwise.
    fn level(&self) -> PluginLevel {
        PluginLevel::Event
    }
    /// Settings the plugin declares; they appear in the settings API, inherit like core
    /// settings and are checked on PATCH. Declare each at the level pretix keeps it:
    /// payment provider settings per event ([`Level::Event`](crate::domain::settings::Level)),
    /// since a value on the organizer reaches events its writer may not see (settings on both
    /// levels are written on the organizer only by teams with access to all events). Integer
    /// settings carry their bounds in [`SettingType::Int`](crate::domain::settings::SettingType).
    fn settings(&self) -> Vec<SettingDef> {
        Vec::new()
    }
    /// Payment providers the plugin brings; offered for events that enable the plugin.
    fn payment_providers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        Vec::new()
    }
    /// Ticket outputs (files a ticket can be downloaded as) offered for events that enable
    /// the plugin.
    fn ticket_outputs(&self) -> Vec<Arc<dyn TicketOutput>> {
        Vec::new()
    }
    /// Invoice renderers events that enable the plugin may choose (`invoice_renderer`).
    fn invoice_renderers(&self) -> Vec<Arc<dyn InvoiceRenderer>> {
        Vec::new()
    }
    /// HTTP endpoints under `/api/v1/organizers/{organizer}/events/{event}/plugins/{name}/`
    /// and `/api/v1/organizers/{organizer}/plugins/{name}/`.
    fn api(&self) -> Option<PluginApi> {
        None
    }
    /// Pages for people (routes and templates), mounted beside the core's; see
    /// [`pages`] for what a page reads and answers. A page under an event checks itself
    /// that its plugin is active there ([`Extensions::active_for`]).
    fn pages(&self) -> pages::Pages {
        pages::Pages::default()
    }
    /// Device security profiles the plugin brings, beside the core's `full`,
    /// `service_checkin` and `service_checkin_online_kiosk`; devices may then be given their
    /// names (see [`crate::domain::devices::profiles`]).
    fn device_profiles(&self) -> Vec<DeviceProfile> {
        Vec::new()
    }
    /// Webhook action types the plugin notifies of, beside pretix's (see
    /// [`crate::domain::webhooks::ACTION_TYPES`]); it writes each notification with
    /// [`crate::domain::webhooks::notify`] in the transaction of its change.
    fn webhook_action_types(&self) -> Vec<String> {
        Vec::new()
    }
    /// The plugin's own checks before an event (as it would be stored) enables it; the
    /// message is answered as a 400 on `plugins`.
    fn check_enable(&self, _event: &event::Model) -> Result<(), String> {
        Ok(())
    }
    /// An order was placed.
    async fn order_placed(&self, _hook: Hook<'_>, _order: &Order) -> Result<(), DbErr> {
        Ok(())
    }
    /// An order was marked paid.
    async fn order_paid(&self, _hook: Hook<'_>, _order: &Order) -> Result<(), DbErr> {
        Ok(())
    }
    /// An order was canceled.
    async fn order_canceled(&self, _hook: Hook<'_>, _order: &Order) -> Result<(), DbErr> {
        Ok(())
    }
    /// An order was changed (positions or fees patched, canceled, added or split off).
    async fn order_changed(&self, _hook: Hook<'_>, _order: &Order) -> Result<(), DbErr> {
        Ok(())
    }
    /// An event enabling the plugin was created (`hook.event`).
    async fn event_created(&self, _hook: Hook<'_>) -> Result<(), DbErr> {
        Ok(())
    }
    /// An event was cloned from `source` into `hook.event`, which enables the plugin: copy
    /// the plugin's own data of the source here.
    async fn event_cloned(&self, _hook: Hook<'_>, _source: &event::Model) -> Result<(), DbErr> {
        Ok(())
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

    /// The plugin of that name, or of that pretix counterpart.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Plugin>> {
        self.plugins
            .iter()
            .find(|p| p.name() == name || p.pretix_name() == Some(name))
    }

    /// Whether a plugin of that name is registered.
    pub fn is_registered(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every registered plugin.
    pub fn all(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }

    /// The registered plugins an event enables, in the order of its list.
    pub fn enabled_for(&self, ev: &event::Model) -> Vec<&Arc<dyn Plugin>> {
        let mut enabled: Vec<&Arc<dyn Plugin>> = Vec::new();
        for plugin in crate::values::stored::string_list(&ev.plugins)
            .iter()
            .filter_map(|name| self.get(name))
            .filter(|p| p.level() != PluginLevel::Organizer)
        {
            // Named twice (as itself and as its pretix counterpart), it is enabled once.
            if !enabled.iter().any(|e| e.name() == plugin.name()) {
                enabled.push(plugin);
            }
        }
        enabled
    }

    /// The core settings and those every plugin declares.
    pub fn settings(&self) -> SettingsRegistry {
        let mut registry = SettingsRegistry::default();
        for def in self.plugins.iter().flat_map(|p| p.settings()) {
            registry.declare(def);
        }
        registry
    }
}

#[async_trait::async_trait]
impl Extensions for PluginRegistry {
    /// Whether the plugin of that name answers for this event: registered and enabled, or
    /// working per organizer.
    fn active_for(&self, name: &str, ev: Option<&event::Model>) -> bool {
        match (self.get(name).map(|p| p.level()), ev) {
            (None, _) => false,
            (Some(PluginLevel::Event), None) => false,
            (Some(_), None) => true,
            (Some(_), Some(ev)) => self.enabled_for(ev).iter().any(|p| p.name() == name),
        }
    }

    fn knows(&self, name: &str) -> bool {
        self.is_registered(name)
    }

    /// The device security profiles every plugin brings.
    fn device_profiles(&self) -> Vec<DeviceProfile> {
        self.plugins
            .iter()
            .flat_map(|p| p.device_profiles())
            .collect()
    }

    /// The webhook action types every plugin brings.
    fn webhook_action_types(&self) -> Vec<String> {
        self.plugins
            .iter()
            .flat_map(|p| p.webhook_action_types())
            .collect()
    }

    /// The payment providers an event offers: the core's `manual`, then those of the
    /// plugins it enables.
    fn payment_providers(&self, ev: &event::Model) -> Vec<Arc<dyn PaymentProvider>> {
        let mut all: Vec<Arc<dyn PaymentProvider>> = vec![Arc::new(ManualPayment)];
        all.extend(
            self.enabled_for(ev)
                .into_iter()
                .flat_map(|p| p.payment_providers()),
        );
        all
    }

    fn notice_takers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        self.all()
            .iter()
            .flat_map(|p| p.payment_providers())
            .filter(|p| p.takes_notices())
            .collect()
    }

    /// The built-in PDF renderer, then those of the plugins the event enables.
    fn invoice_renderers(&self, ev: &event::Model) -> Vec<Arc<dyn InvoiceRenderer>> {
        let mut all: Vec<Arc<dyn InvoiceRenderer>> = vec![Arc::new(invoice_pdf::PdfInvoices)];
        all.extend(
            self.enabled_for(ev)
                .into_iter()
                .flat_map(|p| p.invoice_renderers()),
        );
        all
    }

    /// The ticket outputs of the plugins the event enables.
    fn ticket_outputs(&self, ev: &event::Model) -> Vec<Arc<dyn TicketOutput>> {
        self.enabled_for(ev)
            .into_iter()
            .flat_map(|p| p.ticket_outputs())
            .collect()
    }

    /// Tells the plugins the event enables that one of its orders changed.
    async fn order_changed(
        &self,
        hook: Hook<'_>,
        what: OrderEvent,
        order: &Order,
    ) -> Result<(), DbErr> {
        for p in self.enabled_for(hook.event) {
            match what {
                OrderEvent::Placed => p.order_placed(hook, order).await?,
                OrderEvent::Paid => p.order_paid(hook, order).await?,
                OrderEvent::Canceled => p.order_canceled(hook, order).await?,
                OrderEvent::Changed => p.order_changed(hook, order).await?,
            }
        }
        Ok(())
    }

    /// Tells the plugins a new event enables that it was created, or cloned from `source`.
    async fn event_created(
        &self,
        hook: Hook<'_>,
        source: Option<&event::Model>,
    ) -> Result<(), DbErr> {
        for p in self.enabled_for(hook.event) {
            match source {
                Some(source) => p.event_cloned(hook, source).await?,
                None => p.event_created(hook).await?,
            }
        }
        Ok(())
    }

    /// The messages of an event's `plugins` list that cannot be: unknown names, plugins
    /// that work per organizer, and plugins being enabled (not in `before`) whose own
    /// checks refuse the event.
    fn refusals(&self, ev: &event::Model, before: &[String]) -> Vec<String> {
        let mut refused = Vec::new();
        for name in crate::values::stored::string_list(&ev.plugins) {
            match self.get(&name) {
                None => refused.push(format!("Unknown plugin: '{name}'.")),
                Some(p) if p.level() == PluginLevel::Organizer => refused.push(format!(
                    "The plugin '{name}' works per organizer and cannot be enabled on an event."
                )),
                Some(_) if before.contains(&name) => {}
                Some(p) => {
                    if let Err(message) = p.check_enable(ev) {
                        refused.push(format!("{name}: {message}"));
                    }
                }
            }
        }
        refused
    }
}
