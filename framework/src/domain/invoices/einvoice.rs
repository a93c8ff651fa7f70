//! The EN 16931 document of an invoice, in UN/CEFACT CII syntax (D16B).
//!
//! EN 16931 is the European norm for electronic invoices: public buyers in the EU must
//! accept it, German businesses must be able to receive it, and the German public sector
//! asks for its national form, XRechnung. CII is the syntax both XRechnung and Factur-X
//! (ZUGFeRD) accept, so one writer serves the `?format=xrechnung` and `?format=facturx`
//! downloads and the XML embedded in hybrid PDF invoices; only the declared specification
//! (BT-24) and what XRechnung demands on top (a buyer reference and a seller contact)
//! differ between the two profiles.
//!
//! The document is made from the invoice's snapshot alone, plus the few details of
//! [`Seller`] the snapshot does not hold, so that an invoice always gives the same document.
//! A cancellation (its lines are the negated lines of the invoice it cancels) becomes a
//! credit note (type code 381) with positive amounts that refers to that invoice.
//!
//! Amounts are the snapshot's integer cents: a line's net amount is its gross less its tax,
//! a tax breakdown's basis is the sum of its lines' net amounts and its tax the sum of its
//! lines' taxes, so every sum the norm checks exactly (BR-CO-10 to BR-CO-16, BR-S-08) holds
//! to the cent. The tax of a breakdown may differ from its basis times its rate by the
//! rounding of each line, which EN 16931 allows as long as the difference stays below one
//! currency unit (BR-S-09, BR-CO-17); the document keeps the lines' taxes, as the PDF shows
//! them, and [`missing`] names the rare invoice whose rounding adds up to more.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::{Invoice, Line, TaxGroup};

/// Which specification the document declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// XRechnung 3.0 (the German CIUS), for `?format=xrechnung`.
    XRechnung,
    /// Factur-X / ZUGFeRD, profile EN 16931, for embedding in the PDF.
    FacturX,
}

impl Profile {
    /// The specification identifier the document declares (BT-24).
    pub fn guideline_id(self) -> &'static str {
        match self {
            Profile::XRechnung => {
                "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
            }
            Profile::FacturX => "urn:cen.eu:en16931:2017",
        }
    }
}

/// What the document needs beyond the invoice's snapshot. Empty texts are left out.
#[derive(Debug, Clone, Default)]
pub struct Seller {
    /// The organizer's contact address (`contact_mail`): the seller's contact email
    /// (BT-43) and electronic address (BT-34). XRechnung requires it.
    pub email: String,
    /// The seller's contact telephone number (BT-42). XRechnung requires it.
    pub phone: String,
    /// The account the buyer pays into, when the order is paid by bank transfer: with it
    /// an invoice names SEPA credit transfer (code 58) and this IBAN (BT-84) as its
    /// payment means; without it the means are "not defined" (code 1).
    pub iban: String,
    /// The BIC of [`Seller::iban`]'s bank (BT-86).
    pub bic: String,
    /// The buyer's email address (the order's), as the buyer's electronic address (BT-49).
    pub buyer_email: String,
    /// The event's time zone, in which the lines' periods are dated.
    pub time_zone: Tz,
}

/// The invoice as a CII document, UTF-8.
///
/// The document is valid when the snapshot holds what EN 16931 requires (see [`missing`]);
/// otherwise the missing elements are left out or empty and a validator names them.
pub fn cii(invoice: &Invoice, profile: Profile, seller: &Seller) -> Vec<u8> {
    Writer::new(invoice, profile, seller)
        .document()
        .into_bytes()
}

/// The business terms the document needs that the invoice and the seller's details lack,
/// as "BT-nn name"; empty when the document can be valid for the profile. Callers that
/// offer the document for download can answer with these instead of an invalid document.
pub fn missing(invoice: &Invoice, profile: Profile, seller: &Seller) -> Vec<&'static str> {
    let row = &invoice.row;
    let blank = |s: &str| s.trim().is_empty();
    let mut gaps = Vec::new();
    let mut need = |absent: bool, term: &'static str| {
        if absent {
            gaps.push(term);
        }
    };
    need(blank(&row.invoice_from_name), "BT-27 seller name");
    need(
        blank(&row.invoice_from_country),
        "BT-40 seller country code",
    );
    need(
        blank(&row.invoice_from_vat_id) && blank(&row.invoice_from_tax_id),
        "BT-31 seller VAT identifier or BT-32 seller tax registration identifier",
    );
    need(
        blank(&row.invoice_to_country) && blank(&row.invoice_from_country),
        "BT-55 buyer country code",
    );
    if profile == Profile::XRechnung {
        need(blank(&row.invoice_from_city), "BT-37 seller city");
        need(blank(&row.invoice_from_zipcode), "BT-38 seller post code");
        need(
            blank(&seller.phone),
            "BT-42 seller contact telephone number",
        );
        need(blank(&seller.email), "BT-43 seller contact email address");
        need(blank(&row.invoice_to_city), "BT-52 buyer city");
        need(blank(&row.invoice_to_zipcode), "BT-53 buyer post code");
    }
    need(
        invoice.lines.iter().any(|l| l.tax_code == "AE") && blank(&row.invoice_to_vat_id),
        "BT-48 buyer VAT identifier, for reverse charge",
    );
    need(
        invoice.tax_summary().iter().any(|g| {
            let expected = (g.net_cents.abs() * g.rate_bps + 5000) / 10000;
            (g.tax_cents.abs() - expected).abs() >= 100
        }),
        "BT-117 VAT category tax amount: the lines' taxes differ from basis × rate by a currency unit or more",
    );
    let outside = invoice.lines.iter().any(|l| l.tax_code == "O");
    need(
        outside && invoice.lines.iter().any(|l| l.tax_code != "O"),
        "BT-151 one VAT category: lines not subject to VAT (O) cannot share an invoice with others",
    );
    gaps
}

/// The invoice date's and periods' format: `YYYYMMDD`.
const DATE_102: &str = "%Y%m%d";

/// Writes the document, indented by two spaces a level.
struct Writer<'a> {
    invoice: &'a Invoice,
    profile: Profile,
    seller: &'a Seller,
    /// 1, or -1 for a cancellation, whose negative amounts a credit note shows positive.
    sign: i64,
    german: bool,
    out: String,
    depth: usize,
}

impl<'a> Writer<'a> {
    fn new(invoice: &'a Invoice, profile: Profile, seller: &'a Seller) -> Self {
        let locale = invoice.row.locale.as_str();
        Self {
            invoice,
            profile,
            seller,
            sign: if invoice.row.is_cancellation { -1 } else { 1 },
            german: locale == "de" || locale.starts_with("de-"),
            out: String::with_capacity(8192),
            depth: 0,
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    fn open(&mut self, tag: &str) {
        self.open_with(tag, &[]);
    }

    fn open_with(&mut self, tag: &str, attributes: &[(&str, &str)]) {
        self.indent();
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attributes {
            self.out.push_str(&format!(" {name}=\"{}\"", escape(value)));
        }
        self.out.push_str(">\n");
        self.depth += 1;
    }

    fn close(&mut self, tag: &str) {
        self.depth -= 1;
        self.indent();
        self.out.push_str(&format!("</{tag}>\n"));
    }

    fn leaf(&mut self, tag: &str, text: &str) {
        self.leaf_with(tag, &[], text);
    }

    fn leaf_with(&mut self, tag: &str, attributes: &[(&str, &str)], text: &str) {
        self.indent();
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attributes {
            self.out.push_str(&format!(" {name}=\"{}\"", escape(value)));
        }
        self.out.push('>');
        self.out.push_str(&escape(text));
        self.out.push_str(&format!("</{tag}>\n"));
    }

    /// A leaf with the text, unless the text is blank.
    fn optional(&mut self, tag: &str, text: &str) {
        if !text.trim().is_empty() {
            self.leaf(tag, text.trim());
        }
    }

    fn date(&mut self, tag: &str, day: NaiveDate) {
        self.open(tag);
        self.leaf_with(
            "udt:DateTimeString",
            &[("format", "102")],
            &day.format(DATE_102).to_string(),
        );
        self.close(tag);
    }

    fn period(&mut self, (start, end): (NaiveDate, NaiveDate)) {
        self.open("ram:BillingSpecifiedPeriod");
        self.date("ram:StartDateTime", start);
        self.date("ram:EndDateTime", end);
        self.close("ram:BillingSpecifiedPeriod");
    }

    /// An amount as the document shows it: positive for a credit note's negated lines.
    fn amount(&self, cents: i64) -> String {
        money(self.sign * cents)
    }

    fn document(mut self) -> String {
        self.out
            .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        self.open_with(
            "rsm:CrossIndustryInvoice",
            &[
                (
                    "xmlns:rsm",
                    "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
                ),
                (
                    "xmlns:ram",
                    "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
                ),
                (
                    "xmlns:udt",
                    "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
                ),
            ],
        );
        self.context();
        self.header();
        self.open("rsm:SupplyChainTradeTransaction");
        let periods = self.periods();
        let same_period = periods.windows(2).all(|w| w[0] == w[1]);
        let invoice = self.invoice;
        for (line, period) in invoice.lines.iter().zip(&periods) {
            self.line(line, period.filter(|_| !same_period));
        }
        self.agreement();
        let span = periods
            .iter()
            .flatten()
            .copied()
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        self.delivery(span);
        self.settlement(span);
        self.close("rsm:SupplyChainTradeTransaction");
        self.close("rsm:CrossIndustryInvoice");
        self.out
    }

    /// BG-2: the business process (XRechnung) and the specification.
    fn context(&mut self) {
        self.open("rsm:ExchangedDocumentContext");
        if self.profile == Profile::XRechnung {
            self.open("ram:BusinessProcessSpecifiedDocumentContextParameter");
            self.leaf("ram:ID", "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0");
            self.close("ram:BusinessProcessSpecifiedDocumentContextParameter");
        }
        self.open("ram:GuidelineSpecifiedDocumentContextParameter");
        self.leaf("ram:ID", self.profile.guideline_id());
        self.close("ram:GuidelineSpecifiedDocumentContextParameter");
        self.close("rsm:ExchangedDocumentContext");
    }

    /// The number (BT-1), type (BT-3), date (BT-2) and the invoice's texts as notes (BT-22).
    fn header(&mut self) {
        let invoice = self.invoice;
        let row = &invoice.row;
        self.open("rsm:ExchangedDocument");
        self.leaf("ram:ID", &row.full_invoice_no);
        self.leaf(
            "ram:TypeCode",
            if row.is_cancellation { "381" } else { "380" },
        );
        self.date("ram:IssueDateTime", row.date);
        for text in [
            &row.introductory_text,
            &row.additional_text,
            &row.footer_text,
        ] {
            if !text.trim().is_empty() {
                self.open("ram:IncludedNote");
                self.leaf("ram:Content", text.trim());
                self.close("ram:IncludedNote");
            }
        }
        self.close("rsm:ExchangedDocument");
    }

    /// Each line's period of service, as days in the event's time zone.
    fn periods(&self) -> Vec<Option<(NaiveDate, NaiveDate)>> {
        let day = |t: DateTime<Utc>| t.with_timezone(&self.seller.time_zone).date_naive();
        self.invoice
            .lines
            .iter()
            .map(|l| match (l.period_start, l.period_end) {
                (Some(s), Some(e)) => Some((day(s), day(e).max(day(s)))),
                (Some(s), None) => Some((day(s), day(s))),
                (None, Some(e)) => Some((day(e), day(e))),
                (None, None) => None,
            })
            .collect()
    }

    /// BG-25: one line, with its period (BG-26) when the lines' periods differ.
    fn line(&mut self, line: &Line, period: Option<(NaiveDate, NaiveDate)>) {
        let net = self.sign * line.net_cents();
        self.open("ram:IncludedSupplyChainTradeLineItem");
        self.open("ram:AssociatedDocumentLineDocument");
        self.leaf("ram:LineID", &(line.position + 1).to_string());
        self.close("ram:AssociatedDocumentLineDocument");
        self.open("ram:SpecifiedTradeProduct");
        let description = clean_lines(&line.description);
        let name = description
            .first()
            .cloned()
            .unwrap_or_else(|| self.fallback_name(line));
        self.leaf("ram:Name", &name);
        if description.len() > 1 {
            self.leaf("ram:Description", &description.join("\n"));
        }
        self.close("ram:SpecifiedTradeProduct");
        // The price is never negative (BR-27): a negative line is one negative unit.
        self.open("ram:SpecifiedLineTradeAgreement");
        self.open("ram:NetPriceProductTradePrice");
        self.leaf("ram:ChargeAmount", &money(net.abs()));
        self.close("ram:NetPriceProductTradePrice");
        self.close("ram:SpecifiedLineTradeAgreement");
        self.open("ram:SpecifiedLineTradeDelivery");
        self.leaf_with(
            "ram:BilledQuantity",
            &[("unitCode", "C62")],
            if net < 0 { "-1" } else { "1" },
        );
        self.close("ram:SpecifiedLineTradeDelivery");
        self.open("ram:SpecifiedLineTradeSettlement");
        self.open("ram:ApplicableTradeTax");
        self.leaf("ram:TypeCode", "VAT");
        self.leaf("ram:CategoryCode", &line.tax_code);
        // A line not subject to VAT has no rate (BR-O-05).
        if line.tax_code != "O" {
            self.leaf("ram:RateApplicablePercent", &rate(line.tax_rate_bps));
        }
        self.close("ram:ApplicableTradeTax");
        if let Some(period) = period {
            self.period(period);
        }
        self.open("ram:SpecifiedTradeSettlementLineMonetarySummation");
        self.leaf("ram:LineTotalAmount", &money(net));
        self.close("ram:SpecifiedTradeSettlementLineMonetarySummation");
        self.close("ram:SpecifiedLineTradeSettlement");
        self.close("ram:IncludedSupplyChainTradeLineItem");
    }

    /// The item name of a line without a description.
    fn fallback_name(&self, line: &Line) -> String {
        match (&line.fee_type, self.german) {
            (Some(_), true) => "Gebühr".into(),
            (Some(_), false) => "Fee".into(),
            (None, true) => format!("Position {}", line.position + 1),
            (None, false) => format!("Item {}", line.position + 1),
        }
    }

    /// BG-4, BG-7 and the references: BT-10 buyer reference, BT-14 sales order reference.
    fn agreement(&mut self) {
        let invoice = self.invoice;
        let row = &invoice.row;
        self.open("ram:ApplicableHeaderTradeAgreement");
        let reference = match (row.internal_reference.trim(), self.profile) {
            ("", Profile::XRechnung) => invoice.order_code.as_str(),
            (reference, _) => reference,
        };
        self.optional("ram:BuyerReference", reference);
        self.seller_party();
        self.buyer_party();
        if !invoice.order_code.is_empty() {
            self.open("ram:SellerOrderReferencedDocument");
            self.leaf("ram:IssuerAssignedID", &invoice.order_code);
            self.close("ram:SellerOrderReferencedDocument");
        }
        self.close("ram:ApplicableHeaderTradeAgreement");
    }

    fn seller_party(&mut self) {
        let invoice = self.invoice;
        let row = &invoice.row;
        let seller = self.seller;
        self.open("ram:SellerTradeParty");
        // A buyer identifies the seller by its VAT ID or, lacking one, an identifier
        // (BR-CO-26): the tax number then serves as that too.
        if row.invoice_from_vat_id.trim().is_empty() {
            self.optional("ram:ID", &row.invoice_from_tax_id);
        }
        self.leaf("ram:Name", row.invoice_from_name.trim());
        let contact = !seller.email.trim().is_empty() || !seller.phone.trim().is_empty();
        if contact {
            self.open("ram:DefinedTradeContact");
            self.optional("ram:PersonName", &row.invoice_from_name);
            if !seller.phone.trim().is_empty() {
                self.open("ram:TelephoneUniversalCommunication");
                self.leaf("ram:CompleteNumber", seller.phone.trim());
                self.close("ram:TelephoneUniversalCommunication");
            }
            if !seller.email.trim().is_empty() {
                self.open("ram:EmailURIUniversalCommunication");
                self.leaf("ram:URIID", seller.email.trim());
                self.close("ram:EmailURIUniversalCommunication");
            }
            self.close("ram:DefinedTradeContact");
        }
        self.address(
            &row.invoice_from_zipcode,
            &row.invoice_from,
            &row.invoice_from_city,
            &row.invoice_from_country,
            &row.invoice_from_state,
        );
        self.electronic_address(&seller.email);
        for (scheme, id) in [
            ("VA", &row.invoice_from_vat_id),
            ("FC", &row.invoice_from_tax_id),
        ] {
            if !id.trim().is_empty() {
                self.open("ram:SpecifiedTaxRegistration");
                self.leaf_with("ram:ID", &[("schemeID", scheme)], id.trim());
                self.close("ram:SpecifiedTaxRegistration");
            }
        }
        self.close("ram:SellerTradeParty");
    }

    fn buyer_party(&mut self) {
        let (invoice, seller) = (self.invoice, self.seller);
        let row = &invoice.row;
        self.open("ram:BuyerTradeParty");
        // The buyer's name is required (BR-7): an order without an invoice address names
        // its buyer by email address, or else by the order.
        let name = [
            row.invoice_to_company.trim(),
            row.invoice_to_name.trim(),
            seller.buyer_email.trim(),
            invoice.order_code.trim(),
        ]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or_default();
        self.leaf("ram:Name", name);
        if !row.invoice_to_company.trim().is_empty() && !row.invoice_to_name.trim().is_empty() {
            self.open("ram:DefinedTradeContact");
            self.leaf("ram:PersonName", row.invoice_to_name.trim());
            self.close("ram:DefinedTradeContact");
        }
        // The buyer's country is required (BR-11): without one, the buyer is taken to be
        // in the seller's country.
        let country = match row.invoice_to_country.trim() {
            "" => row.invoice_from_country.as_str(),
            country => country,
        };
        self.address(
            &row.invoice_to_zipcode,
            &row.invoice_to_street,
            &row.invoice_to_city,
            country,
            &row.invoice_to_state,
        );
        self.electronic_address(&seller.buyer_email);
        if !row.invoice_to_vat_id.trim().is_empty() {
            self.open("ram:SpecifiedTaxRegistration");
            self.leaf_with(
                "ram:ID",
                &[("schemeID", "VA")],
                row.invoice_to_vat_id.trim(),
            );
            self.close("ram:SpecifiedTaxRegistration");
        }
        self.close("ram:BuyerTradeParty");
    }

    /// A postal address: up to three address lines (further lines joined into the third).
    fn address(&mut self, zipcode: &str, lines: &str, city: &str, country: &str, state: &str) {
        self.open("ram:PostalTradeAddress");
        self.optional("ram:PostcodeCode", zipcode);
        let mut lines = clean_lines(lines);
        if lines.len() > 3 {
            let rest = lines.split_off(2).join(", ");
            lines.push(rest);
        }
        for (tag, line) in ["ram:LineOne", "ram:LineTwo", "ram:LineThree"]
            .into_iter()
            .zip(&lines)
        {
            self.leaf(tag, line);
        }
        self.optional("ram:CityName", city);
        self.leaf("ram:CountryID", &country.trim().to_uppercase());
        self.optional("ram:CountrySubDivisionName", state);
        self.close("ram:PostalTradeAddress");
    }

    /// An electronic address (BT-34, BT-49) given as an email address (scheme EM).
    fn electronic_address(&mut self, email: &str) {
        if !email.trim().is_empty() {
            self.open("ram:URIUniversalCommunication");
            self.leaf_with("ram:URIID", &[("schemeID", "EM")], email.trim());
            self.close("ram:URIUniversalCommunication");
        }
    }

    /// BG-13: the date of delivery (BT-72), the last day of the service, as the day the
    /// service is complete.
    fn delivery(&mut self, span: Option<(NaiveDate, NaiveDate)>) {
        self.open("ram:ApplicableHeaderTradeDelivery");
        if let Some((_, end)) = span {
            self.open("ram:ActualDeliverySupplyChainEvent");
            self.date("ram:OccurrenceDateTime", end);
            self.close("ram:ActualDeliverySupplyChainEvent");
        }
        self.close("ram:ApplicableHeaderTradeDelivery");
    }

    /// BG-16 payment instructions, BG-23 the tax breakdown, BG-14 the invoicing period,
    /// BT-20 payment terms, BG-22 the totals and BG-3 the invoice a credit note corrects.
    fn settlement(&mut self, span: Option<(NaiveDate, NaiveDate)>) {
        let invoice = self.invoice;
        let row = &invoice.row;
        self.open("ram:ApplicableHeaderTradeSettlement");
        if !row.is_cancellation {
            self.optional("ram:PaymentReference", &invoice.order_code);
        }
        self.leaf("ram:InvoiceCurrencyCode", &row.currency);
        self.payment_means();
        for group in invoice.tax_summary() {
            self.breakdown(&group);
        }
        if let Some(span) = span {
            self.period(span);
        }
        self.open("ram:SpecifiedTradePaymentTerms");
        let terms = match row.payment_provider_text.trim() {
            "" if self.german => "Zahlbar ohne Abzug.",
            "" => "Payable without deduction.",
            text => text,
        };
        self.leaf("ram:Description", terms);
        self.close("ram:SpecifiedTradePaymentTerms");
        let (net, tax) = (
            invoice.lines.iter().map(Line::net_cents).sum::<i64>(),
            invoice.tax_cents(),
        );
        self.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation");
        self.leaf("ram:LineTotalAmount", &self.amount(net));
        self.leaf("ram:TaxBasisTotalAmount", &self.amount(net));
        self.leaf_with(
            "ram:TaxTotalAmount",
            &[("currencyID", row.currency.as_str())],
            &self.amount(tax),
        );
        self.leaf("ram:GrandTotalAmount", &self.amount(net + tax));
        self.leaf("ram:DuePayableAmount", &self.amount(net + tax));
        self.close("ram:SpecifiedTradeSettlementHeaderMonetarySummation");
        if let Some(refers) = invoice.refers.as_deref().filter(|r| !r.is_empty()) {
            self.open("ram:InvoiceReferencedDocument");
            self.leaf("ram:IssuerAssignedID", refers);
            self.close("ram:InvoiceReferencedDocument");
        }
        self.close("ram:ApplicableHeaderTradeSettlement");
    }

    /// BG-16: SEPA credit transfer to the seller's account when there is one and this is an
    /// invoice, else "instrument not defined", with the payment method's text (BT-82).
    fn payment_means(&mut self) {
        let seller = self.seller;
        let transfer = !seller.iban.trim().is_empty() && !self.invoice.row.is_cancellation;
        self.open("ram:SpecifiedTradeSettlementPaymentMeans");
        self.leaf("ram:TypeCode", if transfer { "58" } else { "1" });
        if transfer {
            self.open("ram:PayeePartyCreditorFinancialAccount");
            self.leaf(
                "ram:IBANID",
                &seller.iban.split_whitespace().collect::<String>(),
            );
            self.close("ram:PayeePartyCreditorFinancialAccount");
            if !seller.bic.trim().is_empty() {
                self.open("ram:PayeeSpecifiedCreditorFinancialInstitution");
                self.leaf("ram:BICID", seller.bic.trim());
                self.close("ram:PayeeSpecifiedCreditorFinancialInstitution");
            }
        }
        self.close("ram:SpecifiedTradeSettlementPaymentMeans");
    }

    /// BG-23: one tax category and rate, with the reason of an exemption (BT-120, BT-121).
    fn breakdown(&mut self, group: &TaxGroup) {
        let (reason, code) = match (group.code.as_str(), self.german) {
            ("AE", true) => (
                Some("Steuerschuldnerschaft des Leistungsempfängers"),
                Some("VATEX-EU-AE"),
            ),
            ("AE", false) => (Some("Reverse charge"), Some("VATEX-EU-AE")),
            ("E", true) => (Some("Von der Umsatzsteuer befreit"), None),
            ("E", false) => (Some("Exempt from VAT"), None),
            ("O", true) => (Some("Nicht steuerbar"), Some("VATEX-EU-O")),
            ("O", false) => (Some("Not subject to VAT"), Some("VATEX-EU-O")),
            _ => (None, None),
        };
        // An exemption under a tax rule is explained by the rule's name.
        let reason = match (reason, group.name.trim()) {
            (Some(_), name) if group.code == "E" && !name.is_empty() => Some(name),
            (reason, _) => reason,
        };
        self.open("ram:ApplicableTradeTax");
        self.leaf("ram:CalculatedAmount", &self.amount(group.tax_cents));
        self.leaf("ram:TypeCode", "VAT");
        if let Some(reason) = reason {
            self.leaf("ram:ExemptionReason", reason);
        }
        self.leaf("ram:BasisAmount", &self.amount(group.net_cents));
        self.leaf("ram:CategoryCode", &group.code);
        if let Some(code) = code {
            self.leaf("ram:ExemptionReasonCode", code);
        }
        self.leaf("ram:RateApplicablePercent", &rate(group.rate_bps));
        self.close("ram:ApplicableTradeTax");
    }
}

/// Cents with two decimals: `-1234` is `-12.34`.
fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// A rate in hundredths of a percent as a percentage: `1900` is `19.00`.
fn rate(bps: i64) -> String {
    money(bps)
}

/// The non-blank lines of a text, trimmed.
fn clean_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Text for XML content and attribute values: markup characters escaped, line breaks as
/// `\n`, and characters XML 1.0 does not allow (control characters other
/// than tab and line breaks, U+FFFE and U+FFFF) left out.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() && (c as u32) < 0x20 => {}
            '\u{fffe}' | '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;
    use crate::db::entities::invoice;

    fn at(time: &str) -> DateTime<Utc> {
        time.parse().expect("a time")
    }

    /// A line of a 19 % ticket, gross and tax in cents, with the conference's period.
    fn line(position: i32, description: &str, gross: i64, tax: i64, bps: i64, code: &str) -> Line {
        Line {
            position,
            description: description.into(),
            item: Some(10 + i64::from(position)),
            variation: None,
            subevent: None,
            attendee_name: None,
            period_start: Some(at("2026-06-01T07:00:00Z")),
            period_end: Some(at("2026-06-02T16:00:00Z")),
            gross_cents: gross,
            tax_cents: tax,
            tax_rate_bps: bps,
            tax_name: if bps > 0 { "VAT".into() } else { String::new() },
            tax_code: code.into(),
            fee_type: None,
            fee_internal_type: None,
            event_location: None,
        }
    }

    fn fee(position: i32, gross: i64, tax: i64) -> Line {
        Line {
            item: None,
            fee_type: Some("service".into()),
            ..line(position, "Service fee", gross, tax, 1900, "S")
        }
    }

    /// An invoice of a German organizer to a German company, dated 2026-05-04.
    fn invoice(lines: Vec<Line>) -> Invoice {
        let row = invoice::Model {
            id: 7,
            organizer_id: 1,
            event_id: 2,
            order_id: 3,
            prefix: "CONF-".into(),
            invoice_no: "00012".into(),
            full_invoice_no: "CONF-00012".into(),
            is_cancellation: false,
            refers_id: None,
            canceled: false,
            date: NaiveDate::from_ymd_opt(2026, 5, 4).expect("a date"),
            created: at("2026-05-04T09:30:00Z"),
            locale: "en".into(),
            currency: "EUR".into(),
            invoice_from: "Conference Ltd.\nMain Street 1\nBuilding B\nThird floor".into(),
            invoice_from_name: "Conference Ltd.".into(),
            invoice_from_zipcode: "10115".into(),
            invoice_from_city: "Berlin".into(),
            invoice_from_state: String::new(),
            invoice_from_country: "DE".into(),
            invoice_from_tax_id: "27/123/45678".into(),
            invoice_from_vat_id: "DE123456789".into(),
            invoice_to: "Buyer GmbH\nErika Mustermann\nSide Street 5\n80331 Munich\nDE".into(),
            invoice_to_is_business: Some(true),
            invoice_to_company: "Buyer GmbH".into(),
            invoice_to_name: "Erika Mustermann".into(),
            invoice_to_street: "Side Street 5".into(),
            invoice_to_zipcode: "80331".into(),
            invoice_to_city: "Munich".into(),
            invoice_to_state: String::new(),
            invoice_to_country: "DE".into(),
            invoice_to_vat_id: String::new(),
            invoice_to_beneficiary: String::new(),
            internal_reference: String::new(),
            custom_field: String::new(),
            introductory_text: "Thank you for your order.".into(),
            additional_text: String::new(),
            payment_provider_text: String::new(),
            footer_text: "Conference Ltd., Berlin, HRB 12345".into(),
            reverse_charge: false,
            lines: serde_json::to_value(&lines).expect("lines as JSON"),
            transmission_type: "email".into(),
            transmission_provider: None,
            transmission_status: "pending".into(),
            transmission_date: None,
            transmission_info: None,
            sent_to_organizer: None,
            shredded: false,
            version: 1,
        };
        Invoice {
            row,
            lines,
            order_code: "AB1CD".into(),
            order_email: Some("erika@buyer.example".into()),
            event_slug: "conf2026".into(),
            refers: None,
        }
    }

    /// Two tickets at 19 % (rounded per ticket), a reduced 7 % workshop and a fee.
    fn standard() -> Invoice {
        invoice(vec![
            line(0, "Conference ticket\nAttendee: Ada", 999, 160, 1900, "S"),
            line(1, "Conference ticket\nAttendee: Grace", 999, 160, 1900, "S"),
            line(2, "  + Workshop book", 1070, 70, 700, "S"),
            fee(3, 238, 38),
        ])
    }

    fn reverse_charge() -> Invoice {
        let mut inv = invoice(vec![
            line(0, "Conference ticket", 8400, 0, 0, "AE"),
            fee(1, 200, 0),
        ]);
        inv.lines[1].tax_code = "AE".into();
        inv.lines[1].tax_rate_bps = 0;
        inv.row.reverse_charge = true;
        inv.row.invoice_to_company = "Käufer & Söhne GmbH".into();
        inv.row.invoice_to_street = "Ringstraße 3".into();
        inv.row.invoice_to_zipcode = "1010".into();
        inv.row.invoice_to_city = "Wien".into();
        inv.row.invoice_to_country = "AT".into();
        inv.row.invoice_to_vat_id = "ATU12345678".into();
        inv.row.additional_text = "Reverse Charge: VAT liability passes to the recipient.".into();
        inv
    }

    /// The cancellation of the standard invoice: its lines negated, under its own number.
    fn cancellation() -> Invoice {
        let mut inv = standard();
        for l in &mut inv.lines {
            l.gross_cents = -l.gross_cents;
            l.tax_cents = -l.tax_cents;
        }
        inv.row.is_cancellation = true;
        inv.row.refers_id = Some(7);
        inv.row.id = 8;
        inv.row.prefix = "CONF-C-".into();
        inv.row.full_invoice_no = "CONF-C-00013".into();
        inv.row.date = NaiveDate::from_ymd_opt(2026, 5, 20).expect("a date");
        inv.refers = Some("CONF-00012".into());
        inv
    }

    /// A small organizer exempt from VAT: its lines have no tax rule.
    fn exempt() -> Invoice {
        let mut inv = invoice(vec![
            line(0, "Community meetup", 2500, 0, 0, "E"),
            line(1, "Community meetup, reduced", 1500, 0, 0, "E"),
        ]);
        inv.row.invoice_from_vat_id = String::new();
        inv.row.locale = "de".into();
        inv
    }

    /// An organizer with a tax number but no VAT ID, selling something outside the scope of
    /// VAT to a person without an address.
    fn outside() -> Invoice {
        let mut inv = invoice(vec![line(0, "Club evening", 1200, 0, 0, "O")]);
        for l in &mut inv.lines {
            l.period_start = None;
            l.period_end = None;
        }
        inv.row.invoice_from_vat_id = String::new();
        inv.row.invoice_to = String::new();
        inv.row.invoice_to_is_business = None;
        for field in [
            &mut inv.row.invoice_to_company,
            &mut inv.row.invoice_to_name,
            &mut inv.row.invoice_to_street,
            &mut inv.row.invoice_to_zipcode,
            &mut inv.row.invoice_to_city,
            &mut inv.row.invoice_to_country,
        ] {
            field.clear();
        }
        inv
    }

    fn seller() -> Seller {
        Seller {
            email: "billing@conference.example".into(),
            phone: "+49 30 1234567".into(),
            iban: "DE02 1203 0000 0000 2020 51".into(),
            bic: "BYLADEM1001".into(),
            buyer_email: "erika@buyer.example".into(),
            time_zone: chrono_tz::Europe::Berlin,
        }
    }

    /// The document, checked to be well-formed XML, and written to `TESSERA_EINVOICE_OUT`
    /// as `<name>-<profile>.xml` when that is set (to run the validator on).
    fn document(name: &str, inv: &Invoice, profile: Profile) -> String {
        let xml = String::from_utf8(cii(inv, profile, &seller())).expect("UTF-8");
        let mut reader = quick_xml::Reader::from_str(&xml);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!(
                    "not well-formed at {}: {e}\n{xml}",
                    reader.buffer_position()
                ),
            }
        }
        if let Some(dir) = std::env::var_os("TESSERA_EINVOICE_OUT") {
            let profile = match profile {
                Profile::XRechnung => "xrechnung",
                Profile::FacturX => "facturx",
            };
            let path = std::path::Path::new(&dir).join(format!("{name}-{profile}.xml"));
            std::fs::create_dir_all(&dir).expect("the output directory");
            std::fs::write(path, &xml).expect("written");
        }
        xml
    }

    /// The `ram:ApplicableTradeTax` blocks of the header, in order.
    fn breakdowns(xml: &str) -> Vec<&str> {
        let header = &xml[xml
            .find("<ram:ApplicableHeaderTradeSettlement>")
            .expect("header")..];
        header
            .split("<ram:ApplicableTradeTax>")
            .skip(1)
            .map(|b| &b[..b.find("</ram:ApplicableTradeTax>").expect("closed")])
            .collect()
    }

    fn has(xml: &str, tag: &str, text: &str) -> bool {
        xml.contains(&format!("<{tag}>{text}</{tag}>"))
    }

    #[test]
    fn an_invoice_has_net_lines_and_a_tax_breakdown_per_rate_that_add_up_to_the_cent() {
        let inv = standard();
        for profile in [Profile::FacturX, Profile::XRechnung] {
            let xml = document("standard", &inv, profile);
            assert!(has(&xml, "ram:ID", profile.guideline_id()), "{xml}");
            assert!(has(&xml, "ram:TypeCode", "380"));
            assert!(
                xml.contains("<udt:DateTimeString format=\"102\">20260504</udt:DateTimeString>")
            );
            // 9.99 with 1.60 tax: 8.39 net, one unit.
            assert!(has(&xml, "ram:ChargeAmount", "8.39"));
            assert!(has(&xml, "ram:LineTotalAmount", "8.39"));
            assert!(xml.contains("<ram:BilledQuantity unitCode=\"C62\">1</ram:BilledQuantity>"));
            assert!(has(&xml, "ram:Name", "Conference ticket"));
            assert!(has(
                &xml,
                "ram:Description",
                "Conference ticket\nAttendee: Ada"
            ));
            assert!(has(&xml, "ram:RateApplicablePercent", "7.00"));
            // The 19 % lines: 8.39 + 8.39 + 2.00 net and 1.60 + 1.60 + 0.38 tax, although
            // 18.78 × 19 % is 3.57: the breakdown keeps the lines' tax.
            let groups = breakdowns(&xml);
            assert_eq!(groups.len(), 2, "{xml}");
            assert!(has(groups[0], "ram:BasisAmount", "18.78"));
            assert!(has(groups[0], "ram:CalculatedAmount", "3.58"));
            assert!(has(groups[0], "ram:CategoryCode", "S"));
            assert!(has(groups[0], "ram:RateApplicablePercent", "19.00"));
            assert!(has(groups[1], "ram:BasisAmount", "10.00"));
            assert!(has(groups[1], "ram:CalculatedAmount", "0.70"));
            assert!(!groups[0].contains("ExemptionReason"));
            assert!(has(&xml, "ram:TaxBasisTotalAmount", "28.78"));
            assert!(
                xml.contains("<ram:TaxTotalAmount currencyID=\"EUR\">4.28</ram:TaxTotalAmount>")
            );
            assert!(has(&xml, "ram:GrandTotalAmount", "33.06"));
            assert!(has(&xml, "ram:DuePayableAmount", "33.06"));
            // The lines share one period: the invoice's, as dates in Berlin.
            assert_eq!(xml.matches("<ram:BillingSpecifiedPeriod>").count(), 1);
            assert!(xml.contains("format=\"102\">20260601<"));
            assert!(xml.contains("format=\"102\">20260602<"));
            // The seller's address lines beyond the third are joined into it.
            assert!(has(&xml, "ram:LineOne", "Conference Ltd."));
            assert!(has(&xml, "ram:LineThree", "Building B, Third floor"));
            assert!(xml.contains("<ram:ID schemeID=\"VA\">DE123456789</ram:ID>"));
            assert!(xml.contains("<ram:ID schemeID=\"FC\">27/123/45678</ram:ID>"));
            assert!(has(&xml, "ram:TypeCode", "58"));
            assert!(has(&xml, "ram:IBANID", "DE02120300000000202051"));
            assert!(has(&xml, "ram:PaymentReference", "AB1CD"));
            assert!(has(&xml, "ram:Content", "Thank you for your order."));
        }
        assert_eq!(
            missing(&inv, Profile::XRechnung, &seller()),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn lines_with_periods_of_their_own_carry_them() {
        let mut inv = standard();
        inv.lines[3].period_start = Some(at("2026-05-04T10:00:00Z"));
        inv.lines[3].period_end = Some(at("2026-05-04T10:00:00Z"));
        let xml = document("periods", &inv, Profile::FacturX);
        assert_eq!(xml.matches("<ram:BillingSpecifiedPeriod>").count(), 5);
        // The invoice's period spans them all, and the service is complete on its last day.
        let header = &xml[xml
            .find("<ram:ApplicableHeaderTradeDelivery>")
            .expect("delivery")..];
        assert!(header.contains("format=\"102\">20260504<"));
        assert!(header.contains("format=\"102\">20260602<"));
    }

    #[test]
    fn a_reverse_charge_invoice_has_category_ae_and_its_reason() {
        let inv = reverse_charge();
        for profile in [Profile::FacturX, Profile::XRechnung] {
            let xml = document("reverse-charge", &inv, profile);
            assert_eq!(
                xml.matches("<ram:CategoryCode>AE</ram:CategoryCode>")
                    .count(),
                3
            );
            let groups = breakdowns(&xml);
            assert_eq!(groups.len(), 1);
            assert!(has(groups[0], "ram:ExemptionReason", "Reverse charge"));
            assert!(has(groups[0], "ram:ExemptionReasonCode", "VATEX-EU-AE"));
            assert!(has(groups[0], "ram:BasisAmount", "86.00"));
            assert!(has(groups[0], "ram:CalculatedAmount", "0.00"));
            assert!(has(groups[0], "ram:RateApplicablePercent", "0.00"));
            assert!(has(&xml, "ram:Name", "Käufer &amp; Söhne GmbH"));
            assert!(xml.contains("<ram:ID schemeID=\"VA\">ATU12345678</ram:ID>"));
            assert!(has(&xml, "ram:CountryID", "AT"));
            assert!(has(&xml, "ram:GrandTotalAmount", "86.00"));
        }
        assert_eq!(
            missing(&inv, Profile::XRechnung, &seller()),
            Vec::<&str>::new()
        );
        let mut unidentified = inv;
        unidentified.row.invoice_to_vat_id.clear();
        assert_eq!(
            missing(&unidentified, Profile::FacturX, &seller()),
            ["BT-48 buyer VAT identifier, for reverse charge"]
        );
    }

    #[test]
    fn a_cancellation_is_a_credit_note_with_positive_amounts_that_refers_to_the_invoice() {
        let inv = cancellation();
        for profile in [Profile::FacturX, Profile::XRechnung] {
            let xml = document("cancellation", &inv, profile);
            assert!(has(&xml, "ram:TypeCode", "381"));
            assert!(has(&xml, "ram:ID", "CONF-C-00013"));
            assert!(!xml.contains(">-"), "no negative amount: {xml}");
            assert!(has(&xml, "ram:LineTotalAmount", "8.39"));
            assert!(has(&xml, "ram:GrandTotalAmount", "33.06"));
            let reference = "<ram:InvoiceReferencedDocument>\n        <ram:IssuerAssignedID>CONF-00012</ram:IssuerAssignedID>";
            assert!(xml.contains(reference), "{xml}");
            // Nothing is paid into the seller's account on a credit note.
            assert!(!xml.contains("IBANID"));
            assert!(has(&xml, "ram:TypeCode", "1"));
            assert!(!xml.contains("PaymentReference"));
        }
    }

    #[test]
    fn a_negative_line_of_an_invoice_is_a_negative_quantity_at_a_positive_price() {
        let mut inv = standard();
        inv.lines.push(Line {
            description: "Discount".into(),
            ..fee(4, -238, -38)
        });
        let xml = document("discount", &inv, Profile::FacturX);
        assert!(xml.contains("<ram:BilledQuantity unitCode=\"C62\">-1</ram:BilledQuantity>"));
        assert!(has(&xml, "ram:ChargeAmount", "2.00"));
        assert!(has(&xml, "ram:LineTotalAmount", "-2.00"));
        assert!(has(&xml, "ram:GrandTotalAmount", "30.68"));
    }

    #[test]
    fn exempt_and_outside_lines_explain_why_they_carry_no_tax() {
        let xml = document("exempt", &exempt(), Profile::XRechnung);
        let groups = breakdowns(&xml);
        assert!(has(groups[0], "ram:CategoryCode", "E"));
        assert!(has(
            groups[0],
            "ram:ExemptionReason",
            "Von der Umsatzsteuer befreit"
        ));
        assert!(has(&xml, "ram:Description", "Zahlbar ohne Abzug."));
        // Without a VAT ID, the tax number identifies the seller (BR-CO-26).
        assert!(xml.contains("<ram:SellerTradeParty>\n        <ram:ID>27/123/45678</ram:ID>"));
        document("exempt", &exempt(), Profile::FacturX);

        let mut inv = outside();
        let xml = document("outside", &inv, Profile::FacturX);
        let groups = breakdowns(&xml);
        assert!(has(groups[0], "ram:ExemptionReasonCode", "VATEX-EU-O"));
        // A line not subject to VAT has no rate; the breakdown has one for XRechnung's sake.
        assert_eq!(xml.matches("RateApplicablePercent").count(), 2);
        // Without an address the buyer is named by email and taken to be in the seller's
        // country; without periods there is no delivery date.
        assert!(has(&xml, "ram:Name", "erika@buyer.example"));
        assert_eq!(xml.matches("<ram:CountryID>DE</ram:CountryID>").count(), 2);
        assert!(xml.contains(
            "<ram:ApplicableHeaderTradeDelivery>\n    </ram:ApplicableHeaderTradeDelivery>"
        ));
        assert_eq!(
            missing(&inv, Profile::XRechnung, &seller()),
            ["BT-52 buyer city", "BT-53 buyer post code"]
        );
        assert_eq!(
            missing(&inv, Profile::FacturX, &seller()),
            Vec::<&str>::new()
        );
        // Without any identifier a buyer cannot identify the seller (BR-CO-26).
        inv.row.invoice_from_tax_id.clear();
        assert_eq!(
            missing(&inv, Profile::FacturX, &seller()),
            ["BT-31 seller VAT identifier or BT-32 seller tax registration identifier"]
        );
    }

    #[test]
    fn xrechnung_names_a_buyer_reference_and_the_seller_contact() {
        let mut inv = standard();
        let xml = document("standard", &inv, Profile::XRechnung);
        assert!(has(&xml, "ram:BuyerReference", "AB1CD"));
        assert!(has(&xml, "ram:PersonName", "Conference Ltd."));
        assert!(has(&xml, "ram:CompleteNumber", "+49 30 1234567"));
        assert!(has(&xml, "ram:URIID", "billing@conference.example"));
        assert!(xml.contains("<ram:URIID schemeID=\"EM\">erika@buyer.example</ram:URIID>"));
        assert!(has(
            &xml,
            "ram:ID",
            "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
        ));
        // Factur-X names a buyer reference only when the buyer gave one.
        let xml = document("standard", &inv, Profile::FacturX);
        assert!(!xml.contains("BuyerReference"));
        inv.row.internal_reference = "PO 4711".into();
        let xml = String::from_utf8(cii(&inv, Profile::XRechnung, &seller())).expect("UTF-8");
        assert!(has(&xml, "ram:BuyerReference", "PO 4711"));
        let mut bare = seller();
        bare.phone.clear();
        inv.row.invoice_from_city.clear();
        assert_eq!(
            missing(&inv, Profile::XRechnung, &bare),
            ["BT-37 seller city", "BT-42 seller contact telephone number"]
        );
    }

    #[test]
    fn text_is_escaped_and_characters_xml_does_not_allow_are_left_out() {
        let mut inv = standard();
        inv.lines[0].description =
            "Ticket <VIP> & \"more\"\u{7}\r\nAttendee: O'Hara\u{fffe}".into();
        inv.row.introductory_text = "Line one\r\nline two\u{1b}[31m".into();
        let xml = document("escaped", &inv, Profile::FacturX);
        assert!(has(
            &xml,
            "ram:Name",
            "Ticket &lt;VIP&gt; &amp; &quot;more&quot;"
        ));
        assert!(has(
            &xml,
            "ram:Description",
            "Ticket &lt;VIP&gt; &amp; &quot;more&quot;\nAttendee: O&apos;Hara"
        ));
        assert!(has(&xml, "ram:Content", "Line one\nline two[31m"));
        assert!(!xml.contains('\r'));
    }

    #[test]
    fn a_breakdown_whose_rounding_adds_up_to_a_currency_unit_is_named() {
        // 0.05 with 0.01 tax at 19 %: each line rounds 0.0064 up.
        let lines = |n: i32| {
            (0..n)
                .map(|i| line(i, "Sticker", 5, 1, 1900, "S"))
                .collect()
        };
        let fine = invoice(lines(150));
        assert_eq!(
            missing(&fine, Profile::FacturX, &seller()),
            Vec::<&str>::new()
        );
        let off = invoice(lines(500));
        assert_eq!(
            missing(&off, Profile::FacturX, &seller()),
            [
                "BT-117 VAT category tax amount: the lines' taxes differ from basis × rate by a currency unit or more"
            ]
        );
    }

    #[test]
    fn amounts_and_rates_have_two_decimals() {
        assert_eq!(money(0), "0.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(-5), "-0.05");
        assert_eq!(money(123456), "1234.56");
        assert_eq!(rate(1900), "19.00");
        assert_eq!(rate(550), "5.50");
    }
}
