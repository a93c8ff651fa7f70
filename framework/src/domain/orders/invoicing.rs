//! What the API does to an order's invoices under the order's lock, as pretix's invoice
//! actions: issue one on request, take one's snapshot again under its number, cancel and
//! reissue it.

use chrono::Duration;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};

use super::lifecycle::{LifecycleError, Locked, Seller, open};
use crate::db::entities::{event, invoice, order};
use crate::domain::invoices::build::Issuing;
use crate::domain::invoices::transmission;
use crate::domain::invoices::when::NotIssuedOr;
use crate::domain::settings;

/// Why an invoice action was refused.
#[derive(Debug, thiserror::Error)]
pub enum InvoicingError {
    /// No such order or invoice in the event.
    #[error("not found")]
    NotFound,
    /// Not possible: a message for the client (400).
    #[error("{0}")]
    Refused(&'static str),
    /// Not allowed: a message for the client (403).
    #[error("{0}")]
    Forbidden(&'static str),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl From<LifecycleError> for InvoicingError {
    fn from(e: LifecycleError) -> Self {
        match e {
            LifecycleError::Db(e) => InvoicingError::Db(e),
            _ => InvoicingError::NotFound,
        }
    }
}

/// pretix's refusal of an action on a cancelled invoice.
const ALREADY_CANCELED: &str = "The invoice has already been canceled.";

async fn with_issuing<T>(
    l: &Locked<'_>,
    work: impl AsyncFnOnce(&Issuing<'_, crate::db::WriteTxn>) -> Result<T, InvoicingError>,
) -> Result<T, InvoicingError> {
    let cache = l.seller.cache.current().await;
    let values = settings::of_event(&l.txn, l.seller.settings, cache, l.event).await?;
    let issuing = Issuing {
        txn: &l.txn,
        event: l.event,
        settings: &values,
        catalogue: &l.catalogue,
        now: crate::values::now(),
    };
    work(&issuing).await
}

/// Issues an invoice of the order on request (pretix's `create_invoice`).
pub async fn create_invoice(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<invoice::Model, InvoicingError> {
    let l = open(seller, ev, code).await?;
    let issued = with_issuing(&l, async |i| match i.on_request(&l.order).await {
        Ok(inv) => Ok(inv),
        Err(NotIssuedOr::Not(why)) => Err(InvoicingError::Refused(why.message())),
        Err(NotIssuedOr::Db(e)) => Err(e.into()),
    })
    .await?;
    l.finish(None).await?;
    Ok(issued)
}

/// The invoice's order, locked, and the invoice as it is under that lock.
async fn locked<'a>(
    seller: Seller<'a>,
    ev: &'a event::Model,
    inv: &invoice::Model,
) -> Result<(Locked<'a>, invoice::Model), InvoicingError> {
    let code = order::Entity::find_by_id(inv.order_id)
        .one(seller.db)
        .await?
        .ok_or(InvoicingError::NotFound)?
        .code;
    let l = open(seller, ev, &code).await?;
    let current = invoice::Entity::find_by_id(inv.id)
        .filter(invoice::Column::EventId.eq(ev.id))
        .one(&l.txn)
        .await?
        .ok_or(InvoicingError::NotFound)?;
    if current.shredded {
        return Err(InvoicingError::Forbidden(
            "The invoice file is no longer stored on the server.",
        ));
    }
    Ok((l, current))
}

/// Takes the invoice's snapshot again under its number (pretix's `regenerate`), when the
/// event allows it (`invoice_regenerate_allowed`), it was not transmitted, exported or
/// cancelled, and it is at most a day old.
pub async fn regenerate(
    seller: Seller<'_>,
    ev: &event::Model,
    inv: &invoice::Model,
) -> Result<(), InvoicingError> {
    let (l, inv) = locked(seller, ev, inv).await?;
    if inv.canceled {
        return Err(InvoicingError::Refused(ALREADY_CANCELED));
    }
    with_issuing(&l, async |i| {
        let allowed = i
            .settings
            .get("invoice_regenerate_allowed")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let untransmitted = [
            transmission::UNKNOWN,
            transmission::PENDING,
            transmission::FAILED,
        ]
        .contains(&inv.transmission_status.as_str());
        if !allowed || !untransmitted {
            return Err(InvoicingError::Forbidden("Invoice may not be regenerated."));
        }
        if inv.sent_to_organizer == Some(true) {
            return Err(InvoicingError::Forbidden(
                "The invoice file has already been exported.",
            ));
        }
        if i.today() - inv.date > Duration::days(1) {
            return Err(InvoicingError::Forbidden(
                "The invoice file is too old to be regenerated.",
            ));
        }
        i.regenerate(&l.order, &inv).await?;
        Ok(())
    })
    .await?;
    l.finish(None).await?;
    Ok(())
}

/// Cancels the invoice and, when the order still qualifies, issues a new one (pretix's
/// `reissue`).
pub async fn reissue(
    seller: Seller<'_>,
    ev: &event::Model,
    inv: &invoice::Model,
) -> Result<(), InvoicingError> {
    let (l, inv) = locked(seller, ev, inv).await?;
    if inv.canceled || inv.is_cancellation {
        return Err(InvoicingError::Refused(ALREADY_CANCELED));
    }
    with_issuing(&l, async |i| {
        i.cancel(&l.order, &inv).await?;
        if crate::domain::invoices::when::qualified(i.settings, &l.order, i.now) {
            i.issue(&l.order).await?;
        }
        Ok(())
    })
    .await?;
    l.finish(None).await?;
    Ok(())
}
