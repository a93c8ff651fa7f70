//! The ports the rules call to reach what extensions bring: payment providers, lifecycle
//! hooks, device profiles, webhook action types, and which extensions an event switches on;
//! and the port of the pages extensions bring ([`pages`]), which the rules' handles answer.
//!
//! The rules own these traits and types and take them as `&dyn Extensions`; the plugin
//! registry implements them and mounts the plugins' routes. So a rule never knows how an
//! extension got there (compiled in or loaded from a library), and a new kind of extension
//! (ticket outputs, invoice renderers, data exporters, pages) is one more module here with
//! one more listing method on [`Extensions`], which the registry fills from its plugins.

pub mod hooks;
pub mod invoices;
pub mod pages;
pub mod payments;
pub mod tickets;

use std::sync::Arc;

use sea_orm::DbErr;

pub use hooks::{Hook, OrderEvent};
use invoices::InvoiceRenderer;
use payments::PaymentProvider;
use tickets::TicketOutput;

use crate::db::entities::event;
use crate::domain::devices::profiles::DeviceProfile;
use crate::domain::orders::read_model::Order;

/// What the rules ask of the extensions a server was built with.
#[async_trait::async_trait]
pub trait Extensions: Send + Sync + 'static {
    /// The payment providers an event offers: the core's `manual`, then those of the
    /// extensions it enables.
    fn payment_providers(&self, ev: &event::Model) -> Vec<Arc<dyn PaymentProvider>>;

    /// The payment provider of that identifier the event offers, or the core's `free`
    /// ([`payments::FreeOrder`]), which every event has for orders that cost nothing.
    fn payment_provider(
        &self,
        ev: &event::Model,
        identifier: &str,
    ) -> Option<Arc<dyn PaymentProvider>> {
        if identifier == payments::FreeOrder::IDENTIFIER {
            return Some(Arc::new(payments::FreeOrder));
        }
        self.payment_providers(ev)
            .into_iter()
            .find(|p| p.identifier() == identifier)
    }

    /// Every payment provider of the extensions that takes notices from its service
    /// ([`PaymentProvider::takes_notices`]), whichever events enable it.
    fn notice_takers(&self) -> Vec<Arc<dyn PaymentProvider>>;

    /// The ticket outputs of the extensions the event enables, whether or not its settings
    /// switch them off ([`crate::domain::tickets::outputs`] minds those).
    fn ticket_outputs(&self, ev: &event::Model) -> Vec<Arc<dyn TicketOutput>>;

    /// The invoice renderers an event may use: the built-in one first, then those of the
    /// extensions it enables.
    fn invoice_renderers(&self, ev: &event::Model) -> Vec<Arc<dyn InvoiceRenderer>>;

    /// The device security profiles the extensions bring, beside the core's.
    fn device_profiles(&self) -> Vec<DeviceProfile>;

    /// The webhook action types the extensions notify of, beside the core's.
    fn webhook_action_types(&self) -> Vec<String>;

    /// Whether the server has an extension of that name (or of that pretix counterpart).
    fn knows(&self, name: &str) -> bool;

    /// Whether the extension of that name answers for this event (or, without one, for its
    /// organizer).
    fn active_for(&self, name: &str, ev: Option<&event::Model>) -> bool;

    /// The messages of an event's `plugins` list that cannot be, given the list it had
    /// (`before`): unknown names, and extensions that refuse to be switched on for it.
    fn refusals(&self, ev: &event::Model, before: &[String]) -> Vec<String>;

    /// Tells the extensions the event enables that one of its orders changed, inside the
    /// change's transaction.
    async fn order_changed(
        &self,
        hook: Hook<'_>,
        what: OrderEvent,
        order: &Order,
    ) -> Result<(), DbErr>;

    /// Tells the extensions a new event enables that it was created, or cloned from
    /// `source`, inside the creating transaction.
    async fn event_created(
        &self,
        hook: Hook<'_>,
        source: Option<&event::Model>,
    ) -> Result<(), DbErr>;
}
