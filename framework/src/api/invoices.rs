//! Invoices, as pretix's API has them: an event's `invoices/` and the organizer-wide list,
//! each invoice's file (`download/`, the PDF, or its EN 16931 document with
//! `?format=xrechnung`), and the actions `regenerate/`, `reissue/`, `transmit/` and
//! `retransmit/`; and `orders/{code}/create_invoice/`. The rules are
//! `domain::invoices`' and `domain::orders::invoicing`'.

use chrono::NaiveDate;
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi};

use super::Tag;
use super::orders::{change_orders, seller};
use crate::db::entities::event;
use crate::domain::extensions::tickets::TicketFile;
use crate::domain::grants::EventAccess;
use crate::domain::invoices::einvoice::{self, Profile};
use crate::domain::invoices::files::{self, FileError};
use crate::domain::invoices::{self, Filter, Invoice, Line, TransmitRefused};
use crate::domain::orders::invoicing::{self, InvoicingError};
use crate::domain::permissions::Permission;
use crate::domain::settings;
use crate::domain::tickets::Download;
use crate::http::error::{ConflictResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, Decimal2, Money, NoContent, Page, PageRequest, TicketDownload,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// A line of an invoice.
#[derive(Object)]
#[oai(rename = "InvoiceLine")]
pub struct LineOut {
    /// Its place among the lines, from 1 (free positions left out keep their place).
    pub position: i32,
    /// What was sold.
    pub description: String,
    /// The product.
    #[oai(nullable)]
    pub item: Option<i64>,
    /// The product's variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// The date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The attendee.
    #[oai(nullable)]
    pub attendee_name: Option<String>,
    /// Start of the service (as `period_start`).
    #[oai(nullable)]
    pub event_date_from: Option<Timestamp>,
    /// End of the service (as `period_end`).
    #[oai(nullable)]
    pub event_date_to: Option<Timestamp>,
    /// Start of the service.
    #[oai(nullable)]
    pub period_start: Option<Timestamp>,
    /// End of the service.
    #[oai(nullable)]
    pub period_end: Option<Timestamp>,
    /// Price with tax.
    pub gross_value: Money,
    /// Tax included.
    pub tax_value: Money,
    /// Tax rate in percent.
    pub tax_rate: Decimal2,
    /// EN 16931 tax category: `S`, `Z`, `AE`, `E` or `O`.
    #[oai(nullable)]
    pub tax_code: Option<String>,
    /// The tax rule's name.
    pub tax_name: String,
    /// The fee's type, for a fee.
    #[oai(nullable)]
    pub fee_type: Option<String>,
    /// The fee's internal type.
    #[oai(nullable)]
    pub fee_internal_type: Option<String>,
    /// The event's location.
    #[oai(nullable)]
    pub event_location: Option<String>,
}

impl From<Line> for LineOut {
    fn from(l: Line) -> Self {
        Self {
            position: l.position + 1,
            description: l.description,
            item: l.item,
            variation: l.variation,
            subevent: l.subevent,
            attendee_name: l.attendee_name,
            event_date_from: l.period_start.map(Into::into),
            event_date_to: l.period_end.map(Into::into),
            period_start: l.period_start.map(Into::into),
            period_end: l.period_end.map(Into::into),
            gross_value: Money(l.gross_cents),
            tax_value: Money(l.tax_cents),
            tax_rate: Decimal2(l.tax_rate_bps),
            tax_code: Some(l.tax_code),
            tax_name: l.tax_name,
            fee_type: l.fee_type,
            fee_internal_type: l.fee_internal_type,
            event_location: l.event_location,
        }
    }
}

/// An invoice or cancellation.
#[derive(Object)]
#[oai(rename = "Invoice")]
pub struct InvoiceOut {
    /// The event's slug.
    pub event: String,
    /// The order's code.
    pub order: String,
    /// The full number.
    pub number: String,
    /// A cancellation of the invoice `refers` names.
    pub is_cancellation: bool,
    /// The issuer's address lines.
    pub invoice_from: String,
    /// The issuer's name.
    pub invoice_from_name: String,
    /// The issuer's postal code.
    pub invoice_from_zipcode: String,
    /// The issuer's city.
    pub invoice_from_city: String,
    /// The issuer's state.
    pub invoice_from_state: String,
    /// The issuer's country.
    pub invoice_from_country: String,
    /// The issuer's tax ID.
    pub invoice_from_tax_id: String,
    /// The issuer's VAT ID.
    pub invoice_from_vat_id: String,
    /// The buyer's address as printed.
    pub invoice_to: String,
    /// Whether the buyer is a business.
    #[oai(nullable)]
    pub invoice_to_is_business: Option<bool>,
    /// The buyer's company.
    pub invoice_to_company: String,
    /// The buyer's name.
    pub invoice_to_name: String,
    /// The buyer's street.
    pub invoice_to_street: String,
    /// The buyer's postal code.
    pub invoice_to_zipcode: String,
    /// The buyer's city.
    pub invoice_to_city: String,
    /// The buyer's state.
    pub invoice_to_state: String,
    /// The buyer's country.
    pub invoice_to_country: String,
    /// The buyer's VAT ID.
    pub invoice_to_vat_id: String,
    /// The beneficiary.
    pub invoice_to_beneficiary: String,
    /// The buyer's transmission details.
    pub invoice_to_transmission_info: serde_json::Value,
    /// The buyer's custom field.
    pub custom_field: String,
    /// The invoice date.
    pub date: NaiveDate,
    /// The number of the invoice a cancellation cancels.
    #[oai(nullable)]
    pub refers: Option<String>,
    /// The language it is written in.
    pub locale: String,
    /// The text above the lines.
    pub introductory_text: String,
    /// The text below the lines.
    pub additional_text: String,
    /// What the payment method says.
    pub payment_provider_text: String,
    /// A stamp of the payment method.
    #[oai(nullable)]
    pub payment_provider_stamp: Option<String>,
    /// The footer.
    pub footer_text: String,
    /// The lines.
    pub lines: Vec<LineOut>,
    /// A currency the taxes are also shown in.
    #[oai(nullable)]
    pub foreign_currency_display: Option<String>,
    /// Its rate.
    #[oai(nullable)]
    pub foreign_currency_rate: Option<String>,
    /// The date of the rate.
    #[oai(nullable)]
    pub foreign_currency_rate_date: Option<NaiveDate>,
    /// The buyer's reference.
    pub internal_reference: String,
    /// How it reaches the buyer.
    pub transmission_type: String,
    /// The provider that transmitted it.
    #[oai(nullable)]
    pub transmission_provider: Option<String>,
    /// `pending`, `inflight`, `completed`, `failed`, `unknown` or `testmode_ignored`.
    pub transmission_status: String,
    /// When its transmission last changed.
    #[oai(nullable)]
    pub transmission_date: Option<Timestamp>,
}

impl From<Invoice> for InvoiceOut {
    fn from(inv: Invoice) -> Self {
        let r = inv.row;
        Self {
            event: inv.event_slug,
            order: inv.order_code,
            number: r.full_invoice_no,
            is_cancellation: r.is_cancellation,
            invoice_from: r.invoice_from,
            invoice_from_name: r.invoice_from_name,
            invoice_from_zipcode: r.invoice_from_zipcode,
            invoice_from_city: r.invoice_from_city,
            invoice_from_state: r.invoice_from_state,
            invoice_from_country: r.invoice_from_country,
            invoice_from_tax_id: r.invoice_from_tax_id,
            invoice_from_vat_id: r.invoice_from_vat_id,
            invoice_to: r.invoice_to,
            invoice_to_is_business: r.invoice_to_is_business,
            invoice_to_company: r.invoice_to_company,
            invoice_to_name: r.invoice_to_name,
            invoice_to_street: r.invoice_to_street,
            invoice_to_zipcode: r.invoice_to_zipcode,
            invoice_to_city: r.invoice_to_city,
            invoice_to_state: r.invoice_to_state,
            invoice_to_country: r.invoice_to_country,
            invoice_to_vat_id: r.invoice_to_vat_id,
            invoice_to_beneficiary: r.invoice_to_beneficiary,
            invoice_to_transmission_info: serde_json::json!({}),
            custom_field: r.custom_field,
            date: r.date,
            refers: inv.refers,
            locale: r.locale,
            introductory_text: r.introductory_text,
            additional_text: r.additional_text,
            payment_provider_text: r.payment_provider_text,
            payment_provider_stamp: None,
            footer_text: r.footer_text,
            lines: inv.lines.into_iter().map(Into::into).collect(),
            foreign_currency_display: None,
            foreign_currency_rate: None,
            foreign_currency_rate_date: None,
            internal_reference: r.internal_reference,
            transmission_type: r.transmission_type,
            transmission_provider: r.transmission_provider,
            transmission_status: r.transmission_status,
            transmission_date: r.transmission_date.map(Into::into),
        }
    }
}

/// Order of an invoice list.
#[derive(Enum, Clone, Copy, Default)]
pub enum InvoiceOrdering {
    /// By number (default).
    #[default]
    #[oai(rename = "nr")]
    Number,
    /// By number, descending.
    #[oai(rename = "-nr")]
    NumberDesc,
    /// By date, then number.
    #[oai(rename = "date")]
    Date,
    /// By date, descending.
    #[oai(rename = "-date")]
    DateDesc,
}

/// What a download gives.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceFormat {
    /// The invoice renderer's file (a PDF).
    #[oai(rename = "pdf")]
    Pdf,
    /// The EN 16931 document in CII syntax, XRechnung 3.0.
    #[oai(rename = "xrechnung")]
    XRechnung,
    /// The EN 16931 document in CII syntax, as embedded in Factur-X.
    #[oai(rename = "facturx")]
    FacturX,
}

/// The filters of an invoice list, as sent.
struct Sent {
    order: Vec<String>,
    number: Vec<String>,
    is_cancellation: Option<bool>,
    refers: Option<String>,
    locale: Option<String>,
    ordering: Option<InvoiceOrdering>,
}

impl Sent {
    fn filter(self) -> Filter {
        let ordering = self.ordering.unwrap_or_default();
        Filter {
            orders: self.order,
            numbers: self.number,
            is_cancellation: self.is_cancellation,
            refers: self.refers,
            locale: self.locale,
            by_date: matches!(ordering, InvoiceOrdering::Date | InvoiceOrdering::DateDesc),
            descending: matches!(
                ordering,
                InvoiceOrdering::NumberDesc | InvoiceOrdering::DateDesc
            ),
        }
    }
}

/// Most values of one filter: each is one term of the query.
const MAX_FILTER_VALUES: usize = 100;

fn refused(e: InvoicingError) -> ApiError {
    match e {
        InvoicingError::NotFound => ApiError::forbidden(),
        InvoicingError::Refused(why) => ApiError::bad_request(why),
        InvoicingError::Forbidden(why) => ApiError::forbidden_because(why),
        InvoicingError::Db(e) => e.into(),
    }
}

/// The event's invoice of this number, for a caller holding `needs` there.
async fn invoice_of(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
    number: &str,
    needs: Permission,
) -> Result<(EventAccess, Invoice), ApiError> {
    let ev = auth
        .0
        .event(&state.db, organizer, event, Some(needs))
        .await?;
    let inv = invoices::find(&state.db, ev.organizer.id, &[ev.event.id], number)
        .await?
        .ok_or_else(ApiError::forbidden)?;
    Ok((ev, inv))
}

/// The file of an invoice in the format asked for.
async fn file_of(
    state: &AppState,
    ev: &event::Model,
    inv: Invoice,
    format: Option<InvoiceFormat>,
) -> Result<TicketDownload, ApiError> {
    let cache = state.cache.current().await;
    let values = settings::of_event(&state.db, &state.settings, cache, ev).await?;
    let file = match format {
        None | Some(InvoiceFormat::Pdf) => files::render(&*state.plugins, ev, &values, inv.clone())
            .await
            .map_err(|e: FileError| {
                tracing::error!(error = %e, invoice = %inv.row.full_invoice_no, "invoice file not made");
                ApiError::internal()
            })?,
        Some(f) => {
            let profile = match f {
                InvoiceFormat::FacturX => Profile::FacturX,
                _ => Profile::XRechnung,
            };
            let seller = files::seller(&values, ev, &inv);
            let missing = einvoice::missing(&inv, profile, &seller);
            if !missing.is_empty() {
                return Err(ApiError::detail(
                    poem::http::StatusCode::CONFLICT,
                    format!(
                        "The invoice lacks what an EN 16931 e-invoice needs: {}.",
                        missing.join(", ")
                    ),
                ));
            }
            let xml = einvoice::cii(&inv, profile, &seller);
            crate::domain::extensions::invoices::InvoiceFile {
                content_type: "application/xml".into(),
                extension: ".xml".into(),
                data: xml,
            }
        }
    };
    Ok(TicketDownload(Download {
        file_name: invoices::file_name(&inv.row, &file.extension),
        file: TicketFile {
            content_type: file.content_type,
            extension: file.extension,
            data: file.data,
        },
    }))
}

/// Invoice operations.
pub struct InvoicesApi;

#[OpenApi(tag = "Tag::Orders")]
impl InvoicesApi {
    /// List an event's invoices
    ///
    /// Invoices and cancellations, by number unless `ordering` says otherwise. Filters:
    /// `order` and `number` (each repeatable, any case), `is_cancellation`, `refers` (the
    /// cancelled invoice's number) and `locale`. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_invoices(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        order: Query<Vec<String>>,
        number: Query<Vec<String>>,
        is_cancellation: Query<Option<bool>>,
        refers: Query<Option<String>>,
        locale: Query<Option<String>>,
        ordering: Query<Option<InvoiceOrdering>>,
    ) -> ListResult<Json<Page<InvoiceOut>>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let sent = Sent {
            order: order.0,
            number: number.0,
            is_cancellation: is_cancellation.0,
            refers: refers.0,
            locale: locale.0,
            ordering: ordering.0,
        };
        let request = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(
            listed(&state, &request, ev.organizer.id, &[ev.event.id], sent).await?,
        ))
    }

    /// List an organizer's invoices
    ///
    /// The invoices of every event of the organizer where the caller may view orders, with
    /// the filters of an event's list.
    #[oai(path = "/api/v1/organizers/:organizer/invoices", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_organizer_invoices(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        order: Query<Vec<String>>,
        number: Query<Vec<String>>,
        is_cancellation: Query<Option<bool>>,
        refers: Query<Option<String>>,
        locale: Query<Option<String>>,
        ordering: Query<Option<InvoiceOrdering>>,
    ) -> ListResult<Json<Page<InvoiceOut>>> {
        let org = auth.0.organizer(&organizer, None)?;
        let events = crate::domain::events::ids_of_organizer(&state.db, org.organizer.id).await?;
        let readable: Vec<i64> = events
            .into_iter()
            .filter(|&e| {
                auth.0
                    .event_permissions(org.organizer.id, e)
                    .has(Permission::ViewOrders)
            })
            .collect();
        let sent = Sent {
            order: order.0,
            number: number.0,
            is_cancellation: is_cancellation.0,
            refers: refers.0,
            locale: locale.0,
            ordering: ordering.0,
        };
        let request = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(
            listed(&state, &request, org.organizer.id, &readable, sent).await?,
        ))
    }

    /// Show an invoice
    ///
    /// By its full number. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number",
        method = "get"
    )]
    async fn get_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
    ) -> ReadResult<Json<InvoiceOut>> {
        let (_, inv) = invoice_of(
            &state,
            &auth,
            &organizer,
            &event,
            &number,
            Permission::ViewOrders,
        )
        .await?;
        Ok(Json(inv.into()))
    }

    /// Download an invoice
    ///
    /// The invoice's file as the event's invoice renderer makes it (a PDF; a Factur-X
    /// PDF/A-3 carrying the e-invoice when `invoice_einvoice_embed` is on), or with
    /// `format=xrechnung` (or `facturx`) its EN 16931 document in CII syntax; 409 naming
    /// the business terms it lacks when the settings or the buyer's address do not give
    /// them (the issuer's VAT or tax ID, say). Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number/download",
        method = "get"
    )]
    async fn download_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
        format: Query<Option<InvoiceFormat>>,
    ) -> ConflictResult<TicketDownload> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let inv = invoices::for_file(&state.db, ev.organizer.id, ev.event.id, &number)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        Ok(file_of(&state, &ev.event, inv, format.0).await?)
    }

    /// Regenerate an invoice
    ///
    /// Takes the invoice's snapshot again under its number and date, when the event allows
    /// it (`invoice_regenerate_allowed`) and the invoice is at most a day old, not cancelled,
    /// transmitted or exported. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number/regenerate",
        method = "post"
    )]
    async fn regenerate_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
    ) -> WriteResult<NoContent> {
        let (ev, inv) = invoice_of(
            &state,
            &auth,
            &organizer,
            &event,
            &number,
            Permission::ChangeOrders,
        )
        .await?;
        invoicing::regenerate(seller(&state, &ev), &ev.event, &inv.row)
            .await
            .map_err(refused)?;
        Ok(NoContent::NoContent)
    }

    /// Reissue an invoice
    ///
    /// Cancels the invoice and, when the order still qualifies, issues a new one. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number/reissue",
        method = "post"
    )]
    async fn reissue_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
    ) -> WriteResult<NoContent> {
        let (ev, inv) = invoice_of(
            &state,
            &auth,
            &organizer,
            &event,
            &number,
            Permission::ChangeOrders,
        )
        .await?;
        invoicing::reissue(seller(&state, &ev), &ev.event, &inv.row)
            .await
            .map_err(refused)?;
        Ok(NoContent::NoContent)
    }

    /// Transmit an invoice
    ///
    /// Sends a pending invoice through its transmission (403 unless pending). No
    /// transmission provider is configured, so it ends `failed` with the reason
    /// `no_provider`, as pretix's does. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number/transmit",
        method = "post"
    )]
    async fn transmit_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
    ) -> ConflictResult<NoContent> {
        transmit(&state, &auth, (&organizer, &event, &number), false).await
    }

    /// Transmit an invoice again
    ///
    /// As `transmit/`, whatever its state, unless a transmission is in progress (409).
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/invoices/:number/retransmit",
        method = "post"
    )]
    async fn retransmit_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        number: Path<String>,
    ) -> ConflictResult<NoContent> {
        transmit(&state, &auth, (&organizer, &event, &number), true).await
    }

    /// Create an order's invoice
    ///
    /// Issues an invoice of the order when the event issues invoices at all
    /// (`invoice_generate` other than `False`), the order qualifies and has none that is
    /// not cancelled. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/create_invoice",
        method = "post"
    )]
    async fn create_invoice(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> WriteResult<Created<InvoiceOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let issued = invoicing::create_invoice(seller(&state, &ev), &ev.event, &code)
            .await
            .map_err(refused)?;
        let shown = invoices::by_ids(&state.db, &[issued.id])
            .await?
            .pop()
            .ok_or_else(ApiError::internal)?;
        Ok(Created::Created(Json(shown.into())))
    }
}

/// One page of the invoices of these events.
async fn listed(
    state: &AppState,
    request: &PageRequest,
    organizer_id: i64,
    events: &[i64],
    sent: Sent,
) -> Result<Page<InvoiceOut>, ApiError> {
    for (field, n) in [("order", sent.order.len()), ("number", sent.number.len())] {
        if n > MAX_FILTER_VALUES {
            return Err(ApiError::field(
                field,
                format!("Ensure this filter has no more than {MAX_FILTER_VALUES} values."),
            ));
        }
    }
    let filter = sent.filter();
    let count = invoices::count(&state.db, organizer_id, events, &filter).await?;
    let window = request.window(count)?;
    let found = invoices::list(
        &state.db,
        organizer_id,
        events,
        &filter,
        window.offset,
        window.limit,
    )
    .await?;
    Ok(window.page(found.into_iter().map(Into::into).collect()))
}

async fn transmit(
    state: &AppState,
    auth: &Auth,
    (organizer, event, number): (&str, &str, &str),
    again: bool,
) -> ConflictResult<NoContent> {
    let (_, inv) = invoice_of(
        state,
        auth,
        organizer,
        event,
        number,
        Permission::ChangeOrders,
    )
    .await?;
    if inv.row.shredded {
        return Err(ApiError::forbidden_because(
            "The invoice file is no longer stored on the server.",
        )
        .into());
    }
    match invoices::transmit(&state.db, &inv.row, again).await? {
        Ok(()) => Ok(NoContent::NoContent),
        Err(TransmitRefused::NotPending) => {
            Err(ApiError::forbidden_because("The invoice is not in pending state.").into())
        }
        Err(TransmitRefused::InFlight) => Err(ApiError::detail(
            poem::http::StatusCode::CONFLICT,
            "The requested action is already in progress.",
        )
        .into()),
    }
}
