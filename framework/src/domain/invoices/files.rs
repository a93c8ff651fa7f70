//! The files of invoices: made by the renderer the event chooses (`invoice_renderer`, else
//! the built-in), with the EN 16931 document embedded when the organizer wants hybrid
//! invoices (`invoice_einvoice_embed`), for downloads and for the mails that carry them.

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbErr, EntityTrait};
use serde_json::Value;

use super::Invoice;
use super::einvoice::{self, Profile, Seller};
use crate::db::entities::{event, outbox_mail};
use crate::domain::cache::{Cache, EventSettings};
use crate::domain::extensions::Extensions;
use crate::domain::extensions::invoices::{InvoiceFile, InvoiceRenderer, InvoiceRequest};
use crate::domain::mail::{Attachment, Attachments};
use crate::domain::settings::{self, SettingsRegistry};

/// Why an invoice file could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The renderer failed.
    #[error("the invoice renderer failed: {0}")]
    Renderer(String),
    /// The rendering task was lost.
    #[error("the rendering task ended unexpectedly")]
    Lost,
}

/// The renderer the event's `invoice_renderer` names, else the built-in one.
pub fn renderer(
    extensions: &dyn Extensions,
    ev: &event::Model,
    values: &EventSettings,
) -> Option<Arc<dyn InvoiceRenderer>> {
    let chosen = values.get("invoice_renderer").and_then(Value::as_str);
    let all = extensions.invoice_renderers(ev);
    let named = all.iter().find(|r| Some(r.identifier()) == chosen).cloned();
    named.or_else(|| all.into_iter().next())
}

/// What the e-invoice takes from the settings rather than the snapshot: the seller's
/// contact, the account of the bank transfer plugin when the event has one, the time zone;
/// and the order's e-mail address as the buyer's.
pub fn seller(values: &EventSettings, ev: &event::Model, invoice: &Invoice) -> Seller {
    let text = |key: &str| {
        values
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Seller {
        email: text("contact_mail"),
        phone: text("invoice_address_from_phone"),
        iban: text("banktransfer_iban"),
        bic: text("banktransfer_bic"),
        buyer_email: invoice.order_email.clone().unwrap_or_default(),
        time_zone: crate::domain::talk::schedule::event_tz(ev),
    }
}

/// The invoice's file, made off the request threads.
pub async fn render(
    extensions: &dyn Extensions,
    ev: &event::Model,
    values: &EventSettings,
    invoice: Invoice,
) -> Result<InvoiceFile, FileError> {
    let renderer = renderer(extensions, ev, values).ok_or(FileError::Lost)?;
    let embed = values
        .get("invoice_einvoice_embed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let seller = seller(values, ev, &invoice);
    let event_name = crate::values::I18nString::from_stored(&ev.name).localize(&invoice.row.locale);
    tokio::task::spawn_blocking(move || {
        // A hybrid invoice carries only a document that can be valid; without what EN 16931
        // needs (the issuer's VAT or tax ID, say), the PDF goes out alone.
        let complete = || einvoice::missing(&invoice, Profile::FacturX, &seller).is_empty();
        let xml = (embed && complete()).then(|| einvoice::cii(&invoice, Profile::FacturX, &seller));
        renderer.render(InvoiceRequest {
            invoice: &invoice,
            event_name: &event_name,
            embedded_xml: xml.as_deref(),
        })
    })
    .await
    .map_err(|_| FileError::Lost)?
    .map_err(FileError::Renderer)
}

/// The invoices a mail carries, as files: those the step it tells of made, when the event
/// attaches invoices to mails (decided as the mail was queued).
pub struct MailedInvoices {
    db: DatabaseConnection,
    registry: Arc<SettingsRegistry>,
    cache: Arc<Cache>,
    extensions: Arc<dyn Extensions>,
}

impl MailedInvoices {
    /// Invoices made from this database, with these settings and extensions.
    pub fn new(
        db: DatabaseConnection,
        registry: Arc<SettingsRegistry>,
        cache: Arc<Cache>,
        extensions: Arc<dyn Extensions>,
    ) -> Self {
        Self {
            db,
            registry,
            cache,
            extensions,
        }
    }
}

#[async_trait::async_trait]
impl Attachments for MailedInvoices {
    async fn of(&self, mail: &outbox_mail::Model) -> Result<Vec<Attachment>, DbErr> {
        let ids: Vec<i64> = mail
            .attach_invoices
            .as_ref()
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let invoices = super::by_ids(&self.db, &ids).await?;
        let Some(first) = invoices.first() else {
            return Ok(Vec::new());
        };
        let Some(ev) = event::Entity::find_by_id(first.row.event_id)
            .one(&self.db)
            .await?
        else {
            return Ok(Vec::new());
        };
        let cache = self.cache.current().await;
        let values = settings::of_event(&self.db, &self.registry, cache, &ev).await?;
        let mut files = Vec::with_capacity(invoices.len());
        for inv in invoices {
            let row = inv.row.clone();
            match render(&*self.extensions, &ev, &values, inv).await {
                Ok(file) => files.push(Attachment {
                    file_name: super::file_name(&row, &file.extension),
                    content_type: file.content_type,
                    data: file.data,
                }),
                Err(error) => {
                    tracing::warn!(%error, invoice = %row.full_invoice_no, "invoice left out of a mail");
                }
            }
        }
        Ok(files)
    }
}
