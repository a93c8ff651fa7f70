//! An invoice or cancellation, as issued: everything it shows is kept with it.

use sea_orm::entity::prelude::*;

/// A row of `invoices`.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "invoices")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer, whose numbers it uses.
    pub organizer_id: i64,
    /// The event.
    pub event_id: i64,
    /// The order.
    pub order_id: i64,
    /// The number's prefix.
    pub prefix: String,
    /// The number after the prefix.
    pub invoice_no: String,
    /// Prefix and number.
    pub full_invoice_no: String,
    /// A cancellation of the invoice it refers to.
    pub is_cancellation: bool,
    /// The invoice a cancellation cancels.
    pub refers_id: Option<i64>,
    /// Whether a cancellation refers to it.
    pub canceled: bool,
    /// The invoice date, in the event's time zone.
    pub date: Date,
    /// When it was issued.
    pub created: DateTimeUtc,
    /// The language it is written in.
    pub locale: String,
    /// The currency of its amounts.
    pub currency: String,
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
    /// The issuer's country (ISO 3166), or empty.
    pub invoice_from_country: String,
    /// The issuer's tax ID.
    pub invoice_from_tax_id: String,
    /// The issuer's VAT ID.
    pub invoice_from_vat_id: String,
    /// The buyer's address as printed.
    pub invoice_to: String,
    /// Whether the buyer is a business (unknown without an address).
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
    /// The buyer's country (ISO 3166), or empty.
    pub invoice_to_country: String,
    /// The buyer's VAT ID.
    pub invoice_to_vat_id: String,
    /// The beneficiary, when not the buyer.
    pub invoice_to_beneficiary: String,
    /// The buyer's reference.
    pub internal_reference: String,
    /// The buyer's custom field.
    pub custom_field: String,
    /// The text above the lines.
    pub introductory_text: String,
    /// The text below the lines, with the tax rules' notices.
    pub additional_text: String,
    /// What the payment method says.
    pub payment_provider_text: String,
    /// The footer.
    pub footer_text: String,
    /// Whether a line is under reverse charge.
    pub reverse_charge: bool,
    /// The lines, as [`crate::domain::invoices::Line`]s.
    pub lines: Json,
    /// How it reaches the buyer: `email`, `peppol`, ...
    pub transmission_type: String,
    /// The provider that transmitted it.
    pub transmission_provider: Option<String>,
    /// `pending`, `inflight`, `completed`, `failed`, `unknown` or `testmode_ignored`.
    pub transmission_status: String,
    /// When its transmission last changed.
    pub transmission_date: Option<DateTimeUtc>,
    /// What the transmission reported.
    pub transmission_info: Option<Json>,
    /// Whether an export sent it to the organizer.
    pub sent_to_organizer: Option<bool>,
    /// Whether its file was shredded.
    pub shredded: bool,
    /// Grows each time it is regenerated, so that its file is made anew.
    pub version: i64,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
