//! At which step of an order invoices are issued and cancelled, as pretix decides it with
//! `invoice_generate`: `False` never, `admin` and `user` on request, `True` when the order
//! is placed (or approved), `paid` when it is paid, `user_paid` on request once paid.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};
use serde_json::Value;

use super::build::{Drafts, Issuing, OrderParts};
use crate::db::entities::{invoice, order};
use crate::domain::cache::EventSettings;

/// A step of an order's life that may issue or cancel invoices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Approved by the organizer.
    Approved,
    /// Paid.
    Paid,
    /// Canceled (entirely, or down to a cancellation fee).
    Canceled,
    /// Expired or denied: its invoices are cancelled.
    Ended,
    /// Changed; `reissue` cancels the invoice and issues a new one.
    Changed {
        /// Whether to cancel and reissue the invoice.
        reissue: bool,
    },
    /// Canceled or expired, and now valid again.
    Reactivated,
}

/// The `invoice_generate` setting.
pub fn generate(settings: &EventSettings) -> &str {
    settings
        .get("invoice_generate")
        .and_then(Value::as_str)
        .unwrap_or("False")
}

/// Whether an order may have an invoice (pretix's `invoice_qualified`): it costs something,
/// awaits no approval, is neither canceled nor expired, and has a business address when only
/// businesses get invoices.
pub fn qualified(settings: &EventSettings, o: &order::Model, now: DateTime<Utc>) -> bool {
    let only_business = settings
        .get("invoice_generate_only_business")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let business = o
        .invoice_address
        .as_ref()
        .and_then(|a| a["is_business"].as_bool())
        .unwrap_or(false);
    o.total_cents != 0
        && !o.require_approval
        && !matches!(o.status.as_str(), "c" | "e")
        && !crate::domain::orders::expired(o, now)
        && (!only_business || business)
}

/// Why an order gets no invoice on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotIssued {
    /// The settings or the order's state do not allow one.
    NotAllowed,
    /// It has one already.
    Exists,
}

impl NotIssued {
    /// pretix's message.
    pub fn message(self) -> &'static str {
        match self {
            NotIssued::NotAllowed => "You cannot generate an invoice for this order.",
            NotIssued::Exists => "An invoice for this order already exists.",
        }
    }
}

/// The invoices drafted for orders just placed, with whether each order is due one.
pub struct PlacedDrafts {
    due: Vec<bool>,
    drafts: Drafts,
}

/// The items whose flag in `due` is set (the orders due an invoice, say).
fn of_due<T: Copy>(items: &[T], due: &[bool]) -> Vec<T> {
    items
        .iter()
        .zip(due)
        .filter(|(_, d)| **d)
        .map(|(i, _)| *i)
        .collect()
}

/// Whether invoices of an order are all cancelled (or there are none).
fn none_live(invoices: &[invoice::Model]) -> bool {
    invoices.iter().all(|i| i.is_cancellation || i.canceled)
}

impl<C: ConnectionTrait> Issuing<'_, C> {
    /// Drafts the invoices of orders just placed (together, in one transaction), before
    /// their locks are taken: an order gets one when it qualifies and the event issues
    /// invoices with every order (`True`), or when paid (`paid`) and it is paid already.
    pub async fn draft_placed(&self, orders: &[OrderParts<'_>]) -> Result<PlacedDrafts, DbErr> {
        let gen_setting = generate(self.settings);
        let due: Vec<bool> = orders
            .iter()
            .map(|p| {
                qualified(self.settings, p.order, self.now)
                    && (gen_setting == "True" || (gen_setting == "paid" && p.order.status == "p"))
            })
            .collect();
        let chosen = of_due(orders, &due);
        let drafts = self.draft(&chosen).await?;
        Ok(PlacedDrafts { due, drafts })
    }

    /// Numbers and stores the drafted invoices of the orders `kept` says (those that got
    /// their quotas; `orders` are those, in order); gives one per drafted order, in order.
    pub async fn store_placed(
        &self,
        orders: &[OrderParts<'_>],
        drafted: PlacedDrafts,
        kept: &[bool],
    ) -> Result<Vec<Option<i64>>, DbErr> {
        let due = drafted.due;
        let due_of_kept = of_due(&due, kept);
        let mut issued = self
            .store(
                &of_due(orders, &due_of_kept),
                drafted.drafts,
                &of_due(kept, &due),
            )
            .await?
            .into_iter();
        Ok(due
            .iter()
            .zip(kept)
            .map(|(d, k)| if *d && *k { issued.next() } else { None })
            .collect())
    }

    /// Issues an invoice on request (the API's `create_invoice`), as pretix allows it.
    pub async fn on_request(&self, o: &order::Model) -> Result<invoice::Model, NotIssuedOr> {
        let allowed = matches!(
            generate(self.settings),
            "admin" | "user" | "paid" | "user_paid" | "True"
        );
        if !allowed || !qualified(self.settings, o, self.now) {
            return Err(NotIssuedOr::Not(NotIssued::NotAllowed));
        }
        let invoices = super::of_order(self.txn, o.id).await?;
        let invoiced = invoices.iter().filter(|i| !i.is_cancellation).count();
        let cancelled = invoices.len() - invoiced;
        // Invoices that are all cancelled do not count for an order that lives on.
        let all_cancelled = matches!(o.status.as_str(), "p" | "n") && cancelled >= invoiced;
        if !invoices.is_empty() && !all_cancelled {
            return Err(NotIssuedOr::Not(NotIssued::Exists));
        }
        Ok(self.issue(o).await?)
    }

    /// Issues and cancels what the step calls for; gives the invoices and cancellations it
    /// made, oldest first (a mail about the step carries them).
    pub async fn after(&self, o: &order::Model, step: Step) -> Result<Vec<invoice::Model>, DbErr> {
        let gen_setting = generate(self.settings);
        let invoices = super::of_order(self.txn, o.id).await?;
        let live: Vec<&invoice::Model> = invoices
            .iter()
            .filter(|i| !i.is_cancellation && !i.canceled)
            .collect();
        let qualifies = qualified(self.settings, o, self.now);
        let mut made = Vec::new();
        let issue_now = match step {
            Step::Approved => qualifies && live.is_empty() && gen_setting == "True",
            Step::Paid => {
                qualifies && none_live(&invoices) && matches!(gen_setting, "True" | "paid")
            }
            Step::Canceled | Step::Ended => {
                let had = !live.is_empty();
                for inv in live {
                    made.extend(self.cancel(o, inv).await?);
                }
                step == Step::Canceled && had && qualifies
            }
            Step::Changed { reissue } => {
                if !reissue {
                    return Ok(made);
                }
                let had = !live.is_empty();
                for inv in live {
                    made.extend(self.cancel(o, inv).await?);
                }
                qualifies
                    && (had || gen_setting == "True" || (gen_setting == "paid" && o.status == "p"))
            }
            Step::Reactivated => qualifies && !invoices.is_empty() && none_live(&invoices),
        };
        if issue_now {
            made.push(self.issue(o).await?);
        }
        Ok(made)
    }
}

/// An invoice not issued on request, or the database failing.
#[derive(Debug, thiserror::Error)]
pub enum NotIssuedOr {
    /// Not issued, for the client.
    #[error("{}", .0.message())]
    Not(NotIssued),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// The IDs of the invoices a mail about the step carries: those it made, when the event
/// attaches invoices to mails (`invoice_email_attachment`).
pub fn mailed(settings: &EventSettings, made: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let attach = settings
        .get("invoice_email_attachment")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    match attach {
        true => made.into_iter().collect(),
        false => Vec::new(),
    }
}
