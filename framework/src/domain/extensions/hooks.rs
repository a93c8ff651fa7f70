//! What the rules tell extensions while a change is being made: the transaction and event it
//! happens in, and which lifecycle step of an order it is.

use sea_orm::DatabaseTransaction;

use crate::db::entities::event;

/// The transaction and event a lifecycle hook runs in.
#[derive(Clone, Copy)]
pub struct Hook<'a> {
    /// The core's transaction: the extension's writes commit with the change, or not at all.
    pub txn: &'a DatabaseTransaction,
    /// The event concerned.
    pub event: &'a event::Model,
}

/// A lifecycle step of an order, for [`super::Extensions::order_changed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderEvent {
    /// Placed.
    Placed,
    /// Marked paid.
    Paid,
    /// Canceled.
    Canceled,
    /// Changed: positions or fees patched, canceled, added or split off (an order change).
    Changed,
}
