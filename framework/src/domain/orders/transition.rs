//! A change of an order's state that an organizer asks for by name.

use chrono::{DateTime, Utc};

use super::Order;
use super::lifecycle::{
    LifecycleError, Seller, approve, cancel, deny, extend, mark_expired, mark_paid, mark_pending,
    regenerate_secrets,
};
use crate::db::entities::event;

/// A change of an order's state that an organizer asks for by name, as pretix's order
/// actions (`mark_paid`, `mark_canceled`, `approve`, ...) do.
pub enum Transition<'a> {
    /// [`mark_paid`], telling the customer with `notify`.
    MarkPaid {
        /// Tell the customer by e-mail.
        notify: bool,
    },
    /// [`regenerate_secrets`].
    RegenerateSecrets,
    /// [`cancel`], telling the customer with `notify`.
    Cancel {
        /// Tell the customer by e-mail.
        notify: bool,
    },
    /// [`approve`], telling the customer with `notify`.
    Approve {
        /// Tell the customer by e-mail.
        notify: bool,
    },
    /// [`deny`], telling the customer with `notify`, `comment` as the reason.
    Deny {
        /// Tell the customer by e-mail.
        notify: bool,
        /// Why, for the customer.
        comment: &'a str,
    },
    /// [`mark_pending`].
    MarkPending,
    /// [`reactivate`](super::reactivate::reactivate).
    Reactivate,
    /// [`mark_expired`].
    MarkExpired,
    /// [`extend`] to `expires`, holding the quota again even if sold out with `force`.
    Extend {
        /// The new end of the payment term.
        expires: DateTime<Utc>,
        /// Hold the quota again even if the products are no longer available.
        force: bool,
    },
}

impl Transition<'_> {
    /// Whether it may queue mail (call `Mailer::wake` once it returns).
    pub fn mails(&self) -> bool {
        matches!(
            self,
            Self::MarkPaid { .. } | Self::Cancel { .. } | Self::Approve { .. } | Self::Deny { .. }
        )
    }

    /// Makes the change to the order `code` of `ev`.
    pub async fn apply(
        self,
        seller: Seller<'_>,
        ev: &event::Model,
        code: &str,
    ) -> Result<Order, LifecycleError> {
        match self {
            Self::MarkPaid { notify } => mark_paid(seller, ev, code, notify).await,
            Self::RegenerateSecrets => regenerate_secrets(seller, ev, code).await,
            Self::Cancel { notify } => cancel(seller, ev, code, notify).await,
            Self::Approve { notify } => approve(seller, ev, code, notify).await,
            Self::Deny { notify, comment } => deny(seller, ev, code, notify, comment).await,
            Self::MarkPending => mark_pending(seller, ev, code).await,
            Self::Reactivate => super::reactivate::reactivate(seller, ev, code).await,
            Self::MarkExpired => mark_expired(seller, ev, code).await,
            Self::Extend { expires, force } => extend(seller, ev, code, expires, force).await,
        }
    }
}
