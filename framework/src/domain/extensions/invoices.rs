//! Invoice renderers: the files an invoice is made into (pretix's
//! `register_invoice_renderers`). The core decides when invoices are issued and what they
//! say ([`crate::domain::invoices`]); a renderer lays the snapshot out.

use crate::domain::invoices::Invoice;

/// An invoice file as a renderer made it.
#[derive(Debug, Clone)]
pub struct InvoiceFile {
    /// Its media type, e.g. `application/pdf`.
    pub content_type: String,
    /// The extension of its file name, with the dot, e.g. `.pdf`.
    pub extension: String,
    /// The file.
    pub data: Vec<u8>,
}

/// What a renderer is asked to make.
#[derive(Debug, Clone, Copy)]
pub struct InvoiceRequest<'a> {
    /// The invoice (or cancellation), as issued.
    pub invoice: &'a Invoice,
    /// The event's name, in the invoice's language.
    pub event_name: &'a str,
    /// The invoice as an EN 16931 document (CII, Factur-X profile EN 16931) to embed, when
    /// the organizer wants hybrid invoices: the file is then a PDF/A-3 carrying it as
    /// `factur-x.xml`, as Factur-X and ZUGFeRD ask.
    pub embedded_xml: Option<&'a [u8]>,
}

/// A way of laying out invoices. Rendering is CPU work: the rules call it off the request
/// threads.
pub trait InvoiceRenderer: Send + Sync + 'static {
    /// The identifier the event setting `invoice_renderer` names it by.
    fn identifier(&self) -> &str;

    /// A name for people.
    fn name(&self) -> &str;

    /// Makes the file; the error says why it could not.
    fn render(&self, request: InvoiceRequest<'_>) -> Result<InvoiceFile, String>;
}
