//! The built-in invoice renderer, `modern1`: an A4 letter laid out as pretix's default
//! invoice renderer lays it out, since organizers and their accountants know that page. The
//! issuer stands at the top right, the buyer in the window of a DIN envelope under a line
//! naming the sender, the order code, number and date in a row; then the heading, the
//! introduction, the lines in a table that flows over as many pages as it needs (its header
//! repeated), the totals, the texts of the payment method and of the tax rules (reverse
//! charge), the taxes per rate, and the footer and page number on every page. Labels are
//! English, or German for invoices written in German.
//!
//! The pages are laid out first, as lists of texts and rules, and drawn after, so that each
//! can say how many pages there are. All text is set as text in the built-in faces (it can
//! be searched and copied). With an EN 16931 document to embed, the file is a PDF/A-3B
//! hybrid invoice carrying it as `factur-x.xml` ([`crate::pdf::facturx`]).

use std::borrow::Cow;
use std::fmt::Write as _;

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use sha2::{Digest, Sha256};

use crate::domain::extensions::invoices::{InvoiceFile, InvoiceRenderer, InvoiceRequest};
use crate::domain::invoices::{Invoice, Line};
use crate::pdf::MM;
use crate::pdf::facturx::{self, Hybrid, pdf_date};
use crate::pdf::fonts::{FaceId, glyph_for, width};
use crate::pdf::text::lines;
use crate::pdf::writer::{Extras, Writer};

/// The PDF invoice renderer.
pub struct PdfInvoices;

impl InvoiceRenderer for PdfInvoices {
    fn identifier(&self) -> &str {
        "modern1"
    }

    fn name(&self) -> &str {
        "Default invoice renderer"
    }

    fn render(&self, request: InvoiceRequest<'_>) -> Result<InvoiceFile, String> {
        Ok(InvoiceFile {
            content_type: "application/pdf".into(),
            extension: ".pdf".into(),
            data: render(request.invoice, request.event_name, request.embedded_xml),
        })
    }
}

/// The event's name as the invoice shows it: the one asked for, else the event's slug.
fn event_name<'a>(invoice: &'a Invoice, name: &'a str) -> &'a str {
    if name.trim().is_empty() {
        &invoice.event_slug
    } else {
        name
    }
}

/// The invoice's PDF; a PDF/A-3B hybrid invoice when there is an XML document to embed.
pub fn render(invoice: &Invoice, event_name: &str, embedded_xml: Option<&[u8]>) -> Vec<u8> {
    let words = Words::of(&invoice.row.locale);
    let pages = layout(invoice, event_name, words);
    let doc = draw(&pages);
    let title = title(invoice, words);
    let row = &invoice.row;
    let lang = row.locale.split(['-', '_']).next().unwrap_or_default();
    let id = file_id(invoice);
    match embedded_xml {
        Some(xml) => facturx::finish(
            doc,
            None,
            1,
            &Hybrid {
                title: &title,
                lang,
                xml,
                made: row.created,
                id,
            },
        ),
        None => doc.finish_with(
            None,
            1,
            &title,
            &Extras {
                id: Some(id),
                date: Some(pdf_date(row.created)),
                lang: (!lang.is_empty()).then_some(lang),
                ..Extras::default()
            },
        ),
    }
}

/// The document's title, e.g. "Invoice RE-2026-00042".
fn title(invoice: &Invoice, words: &Words) -> String {
    format!(
        "{} {}",
        words.heading(invoice.row.is_cancellation),
        invoice.row.full_invoice_no
    )
}

/// The file identifier: the invoice's (its organizer and number), and this version's.
fn file_id(invoice: &Invoice) -> [[u8; 16]; 2] {
    let row = &invoice.row;
    let mut hash = Sha256::new();
    hash.update(b"tessera invoice\0");
    hash.update(row.organizer_id.to_be_bytes());
    hash.update(row.full_invoice_no.as_bytes());
    let first = hash.clone().finalize();
    hash.update(row.version.to_be_bytes());
    hash.update(row.created.timestamp_micros().to_be_bytes());
    let this = hash.finalize();
    let mut id = [[0; 16]; 2];
    id[0].copy_from_slice(&first[..16]);
    id[1].copy_from_slice(&this[..16]);
    id
}

// The page, in points.
const PAGE_W: f32 = 210.0 * MM;
const PAGE_H: f32 = 297.0 * MM;
const LEFT: f32 = 25.0 * MM;
const RIGHT: f32 = PAGE_W - 20.0 * MM;
const WIDTH: f32 = RIGHT - LEFT;
/// Where the text begins on the pages after the first.
const TOP: f32 = PAGE_H - 16.9 * MM;
/// Where the text begins on the first page, below the addresses and numbers.
const FIRST_TOP: f32 = PAGE_H - 112.0 * MM;
/// Where the issuer's block is.
const FROM_LEFT: f32 = 125.0 * MM;
/// The top edge of the envelope's window (whose left edge is [`LEFT`]), and its width.
const WINDOW_TOP: f32 = PAGE_H - 57.7 * MM;
const WINDOW_W: f32 = 80.0 * MM;
/// The baseline of the labels of the row of numbers.
const NUMBERS_Y: f32 = PAGE_H - 100.0 * MM;
/// The baselines of the page number and of the footer's last line.
const PAGE_NUMBER_Y: f32 = 10.0 * MM;
const FOOTER_Y: f32 = 15.0 * MM;
const FOOTER_LEADING: f32 = 3.5 * MM;
/// The most lines the footer, the issuer and the buyer take: the rest is left out.
const MAX_FOOTER_LINES: usize = 10;
const MAX_FROM_LINES: usize = 16;
const MAX_TO_LINES: usize = 8;
/// The gap between the columns of a table.
const PAD: f32 = 6.0;

/// A face at a size, with the distance from one baseline to the next.
#[derive(Debug, Clone, Copy)]
struct Style {
    face: FaceId,
    size: f32,
    leading: f32,
}

const NORMAL: Style = Style {
    face: FaceId::Regular,
    size: 10.0,
    leading: 12.0,
};
const BOLD: Style = Style {
    face: FaceId::Bold,
    ..NORMAL
};
const FINE: Style = Style {
    face: FaceId::Regular,
    size: 8.0,
    leading: 10.0,
};
const FINE_BOLD: Style = Style {
    face: FaceId::Bold,
    ..FINE
};
const HEADING: Style = Style {
    face: FaceId::Bold,
    size: 15.0,
    leading: 18.0,
};

/// What a page shows.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// A line of text with its baseline starting at `(x, y)`.
    Text {
        face: FaceId,
        size: f32,
        x: f32,
        y: f32,
        text: String,
    },
    /// A thin horizontal rule.
    Rule { x0: f32, x1: f32, y: f32 },
}

/// Whether the faces can set a character (else a file would show an empty box for it,
/// which PDF/A does not allow).
fn settable(c: char) -> bool {
    c == '\n'
        || (!c.is_control()
            && glyph_for(FaceId::Regular, c).1 != 0
            && glyph_for(FaceId::Bold, c).1 != 0)
}

/// Text as the faces can set it: tabs as spaces, other control characters left out, and
/// characters no face has as `?`.
fn clean(text: &str) -> Cow<'_, str> {
    if text.chars().all(settable) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .filter_map(|c| match c {
                '\t' => Some(' '),
                c if c.is_control() && c != '\n' => None,
                c if settable(c) => Some(c),
                _ => Some('?'),
            })
            .collect(),
    )
}

/// The size at which `text` fits `max_width`: `style`'s, or smaller (never below 5 pt).
fn fitting(style: Style, text: &str, max_width: f32) -> f32 {
    let w = width(style.face, text, style.size);
    if w <= max_width || w <= 0.0 {
        style.size
    } else {
        (style.size * max_width / w).max(5.0)
    }
}

/// The pages being laid out, and where the text has got to.
struct Flow {
    pages: Vec<Vec<Op>>,
    /// The top of the free space on the current page.
    y: f32,
    /// The lowest the text may go, above the footer.
    bottom: f32,
    /// The header of the table being laid out, set again on each page it flows onto.
    header: Option<Vec<Cell>>,
}

/// A cell of a table's row of one line: its text left-aligned at `x`, or right-aligned to
/// end at `x`.
#[derive(Debug, Clone)]
struct Cell {
    text: String,
    style: Style,
    x: f32,
    right: bool,
}

impl Flow {
    fn op(&mut self, op: Op) {
        if let Some(page) = self.pages.last_mut() {
            page.push(op);
        }
    }

    /// Sets a line of text at `size` with its baseline at `y`, starting at `x`.
    fn text_at(&mut self, face: FaceId, size: f32, x: f32, y: f32, text: &str) {
        if text.is_empty() {
            return;
        }
        self.op(Op::Text {
            face,
            size,
            x,
            y,
            text: text.to_owned(),
        });
    }

    /// Sets a line of text with its baseline at `y`, ending at `x`.
    fn right_at(&mut self, face: FaceId, size: f32, x: f32, y: f32, text: &str) {
        self.text_at(face, size, x - width(face, text, size), y, text);
    }

    /// Makes room for `height` points: a new page when the text would go below the
    /// bottom (unless the page is still empty, so that nothing breaks forever), with the
    /// header of the table being laid out.
    fn room(&mut self, height: f32) {
        let empty = self.pages.len() > 1 && self.y >= TOP;
        if self.y - height < self.bottom && !empty {
            self.pages.push(Vec::new());
            self.y = TOP;
            self.header_row();
        }
    }

    /// Leaves a gap.
    fn space(&mut self, height: f32) {
        self.y -= height;
    }

    /// Sets a paragraph broken into lines of `max_width`, from `x`.
    fn paragraph(&mut self, text: &str, style: Style, x: f32, max_width: f32) {
        let text = clean(text);
        for line in lines(text.trim_end(), style.face, style.size, max_width, true) {
            self.room(style.leading);
            let baseline = self.y - style.size;
            self.text_at(style.face, style.size, x, baseline, &line.text);
            self.y -= style.leading;
        }
    }

    /// Sets a table's row of one line (a header, a total).
    fn row(&mut self, cells: &[Cell]) {
        let leading = cells.iter().map(|c| c.style.leading).fold(0.0, f32::max);
        self.room(leading);
        let baseline = self.y - cells.first().map_or(NORMAL.size, |c| c.style.size);
        for cell in cells {
            if cell.right {
                self.right_at(
                    cell.style.face,
                    cell.style.size,
                    cell.x,
                    baseline,
                    &cell.text,
                );
            } else {
                self.text_at(
                    cell.style.face,
                    cell.style.size,
                    cell.x,
                    baseline,
                    &cell.text,
                );
            }
        }
        self.y -= leading;
    }

    /// A rule across the page below the text so far.
    fn rule(&mut self) {
        self.op(Op::Rule {
            x0: LEFT,
            x1: RIGHT,
            y: self.y - 1.0,
        });
        self.y -= 4.0;
    }

    /// Sets the header of the table being laid out, with a rule below it.
    fn header_row(&mut self) {
        if let Some(header) = self.header.take() {
            self.row(&header);
            self.rule();
            self.header = Some(header);
        }
    }
}

/// The labels of an invoice, in English or German.
#[derive(Debug)]
struct Words {
    german: bool,
    invoice: &'static str,
    cancellation: &'static str,
    invoice_number: &'static str,
    cancellation_number: &'static str,
    original_invoice: &'static str,
    order_code: &'static str,
    invoice_date: &'static str,
    cancellation_date: &'static str,
    cancels: &'static str,
    customer_reference: &'static str,
    beneficiary: &'static str,
    description: &'static str,
    qty: &'static str,
    tax_rate: &'static str,
    net: &'static str,
    gross: &'static str,
    amount: &'static str,
    net_total: &'static str,
    total: &'static str,
    included_taxes: &'static str,
    net_value: &'static str,
    gross_value: &'static str,
    tax: &'static str,
    single_price: &'static str,
    net_word: &'static str,
    gross_word: &'static str,
    service_date: &'static str,
    service_period: &'static str,
    page: &'static str,
    of: &'static str,
    vat_id: &'static str,
    tax_id: &'static str,
    months: [&'static str; 12],
}

static ENGLISH: Words = Words {
    german: false,
    invoice: "Invoice",
    cancellation: "Cancellation",
    invoice_number: "Invoice number",
    cancellation_number: "Cancellation number",
    original_invoice: "Original invoice",
    order_code: "Order code",
    invoice_date: "Invoice date",
    cancellation_date: "Cancellation date",
    cancels: "Cancellation of invoice",
    customer_reference: "Customer reference",
    beneficiary: "Beneficiary",
    description: "Description",
    qty: "Qty",
    tax_rate: "Tax rate",
    net: "Net",
    gross: "Gross",
    amount: "Amount",
    net_total: "Net total",
    total: "Invoice total",
    included_taxes: "Included taxes",
    net_value: "Net value",
    gross_value: "Gross value",
    tax: "Tax",
    single_price: "Single price",
    net_word: "net",
    gross_word: "gross",
    service_date: "Service date",
    service_period: "Service period",
    page: "Page",
    of: "of",
    vat_id: "VAT ID",
    tax_id: "Tax ID",
    months: [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
};

static GERMAN: Words = Words {
    german: true,
    invoice: "Rechnung",
    cancellation: "Stornorechnung",
    invoice_number: "Rechnungsnummer",
    cancellation_number: "Stornonummer",
    original_invoice: "Ursprüngliche Rechnung",
    order_code: "Bestellnummer",
    invoice_date: "Rechnungsdatum",
    cancellation_date: "Stornodatum",
    cancels: "Storno zur Rechnung",
    customer_reference: "Ihre Referenz",
    beneficiary: "Leistungsempfänger",
    description: "Beschreibung",
    qty: "Anz.",
    tax_rate: "Steuersatz",
    net: "Netto",
    gross: "Brutto",
    amount: "Betrag",
    net_total: "Summe netto",
    total: "Rechnungsbetrag",
    included_taxes: "Enthaltene Steuern",
    net_value: "Nettowert",
    gross_value: "Bruttowert",
    tax: "Steuer",
    single_price: "Einzelpreis",
    net_word: "netto",
    gross_word: "brutto",
    service_date: "Leistungsdatum",
    service_period: "Leistungszeitraum",
    page: "Seite",
    of: "von",
    vat_id: "USt-IdNr.",
    tax_id: "Steuernummer",
    months: [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
};

impl Words {
    /// The labels of a language: German for `de` and its forms, else English.
    fn of(locale: &str) -> &'static Words {
        if locale.starts_with("de") {
            &GERMAN
        } else {
            &ENGLISH
        }
    }

    fn heading(&self, cancellation: bool) -> &'static str {
        if cancellation {
            self.cancellation
        } else {
            self.invoice
        }
    }

    /// An amount in cents with its currency, e.g. `1,234.56 EUR` (`1.234,56 EUR`).
    fn money(&self, cents: i64, currency: &str) -> String {
        let (group, decimal) = if self.german { ('.', ',') } else { (',', '.') };
        let abs = cents.unsigned_abs();
        let units = (abs / 100).to_string();
        let mut out = String::with_capacity(units.len() * 4 / 3 + 5 + currency.len());
        if cents < 0 {
            out.push('-');
        }
        for (i, digit) in units.chars().enumerate() {
            if i > 0 && (units.len() - i).is_multiple_of(3) {
                out.push(group);
            }
            out.push(digit);
        }
        let _ = write!(out, "{decimal}{:02}", abs % 100);
        if !currency.is_empty() {
            out.push(' ');
            out.push_str(currency);
        }
        out
    }

    /// A tax rate in hundredths of a percent, e.g. `19.00 %`.
    fn rate(&self, bps: i64) -> String {
        let decimal = if self.german { ',' } else { '.' };
        let sign = if bps < 0 { "-" } else { "" };
        let abs = bps.unsigned_abs();
        format!("{sign}{}{decimal}{:02} %", abs / 100, abs % 100)
    }

    /// A date written out, e.g. `March 1, 2026` (`1. März 2026`).
    fn long_date(&self, date: NaiveDate) -> String {
        let month = self.months[date.month0() as usize];
        if self.german {
            format!("{}. {month} {}", date.day(), date.year())
        } else {
            format!("{month} {}, {}", date.day(), date.year())
        }
    }

    /// A date in short, e.g. `2026-03-01` (`01.03.2026`).
    fn short_date(&self, date: NaiveDate) -> String {
        if self.german {
            format!("{:02}.{:02}.{}", date.day(), date.month(), date.year())
        } else {
            format!("{}-{:02}-{:02}", date.year(), date.month(), date.day())
        }
    }

    /// A period of service, e.g. `2026-03-01 – 2026-03-03`, or one day.
    fn period(&self, (start, end): (NaiveDate, NaiveDate)) -> String {
        if start == end {
            self.short_date(start)
        } else {
            format!("{} – {}", self.short_date(start), self.short_date(end))
        }
    }
}

/// The days a line's service is given on, if it says.
fn period(line: &Line) -> Option<(NaiveDate, NaiveDate)> {
    let day = |t: &DateTime<Utc>| t.date_naive();
    match (&line.period_start, &line.period_end) {
        (Some(s), Some(e)) => Some((day(s), day(e))),
        (Some(t), None) | (None, Some(t)) => Some((day(t), day(t))),
        (None, None) => None,
    }
}

/// Lines in a row that are the same (the same ticket bought several times), counted once.
fn grouped(all: &[Line]) -> Vec<(&Line, i64)> {
    let mut out: Vec<(&Line, i64)> = Vec::new();
    for line in all {
        if let Some((last, count)) = out.last_mut()
            && same_line(last, line)
        {
            *count += 1;
            continue;
        }
        out.push((line, 1));
    }
    out
}

fn same_line(a: &Line, b: &Line) -> bool {
    a.description == b.description
        && a.gross_cents == b.gross_cents
        && a.tax_cents == b.tax_cents
        && a.tax_rate_bps == b.tax_rate_bps
        && a.tax_name == b.tax_name
        && a.subevent == b.subevent
        && a.period_start == b.period_start
        && a.period_end == b.period_end
        && a.event_location == b.event_location
}

/// Where the table's columns are: each amount column by its right edge.
struct Columns {
    /// The width of a description's first paragraph.
    description: f32,
    /// The width of a description's further lines, under the description, quantity and rate.
    fine: f32,
    qty: f32,
    /// Rate and net, with taxes.
    rate: Option<f32>,
    net: Option<f32>,
    gross: f32,
}

impl Columns {
    fn new(has_taxes: bool) -> Self {
        if has_taxes {
            Columns {
                description: 0.47 * WIDTH - PAD,
                fine: 0.70 * WIDTH - PAD,
                qty: LEFT + 0.55 * WIDTH,
                rate: Some(LEFT + 0.70 * WIDTH),
                net: Some(LEFT + 0.85 * WIDTH),
                gross: RIGHT,
            }
        } else {
            Columns {
                description: 0.65 * WIDTH - PAD,
                fine: 0.85 * WIDTH - PAD,
                qty: LEFT + 0.85 * WIDTH,
                rate: None,
                net: None,
                gross: RIGHT,
            }
        }
    }

    /// The width an amount column leaves its text.
    fn amount_width(&self) -> f32 {
        0.15 * WIDTH - PAD
    }

    fn header(&self, words: &Words) -> Vec<Cell> {
        let cell = |text: &str, x: f32, right: bool| Cell {
            text: text.to_owned(),
            style: BOLD,
            x,
            right,
        };
        let mut cells = vec![
            cell(words.description, LEFT, false),
            cell(words.qty, self.qty, true),
        ];
        match (self.rate, self.net) {
            (Some(rate), Some(net)) => {
                cells.push(cell(words.tax_rate, rate, true));
                cells.push(cell(words.net, net, true));
                cells.push(cell(words.gross, self.gross, true));
            }
            _ => cells.push(cell(words.amount, self.gross, true)),
        }
        cells
    }
}

/// Lays the invoice out on pages.
fn layout(invoice: &Invoice, event: &str, words: &Words) -> Vec<Vec<Op>> {
    let row = &invoice.row;
    let footer = footer_lines(&row.footer_text);
    let bottom = if footer.is_empty() {
        16.9 * MM
    } else {
        FOOTER_Y + (footer.len() - 1) as f32 * FOOTER_LEADING + FINE.size + 5.0 * MM
    };
    let mut flow = Flow {
        pages: vec![Vec::new()],
        y: FIRST_TOP,
        bottom,
        header: None,
    };
    letterhead(&mut flow, invoice, event, words);
    numbers(&mut flow, invoice, words);

    flow.paragraph(words.heading(row.is_cancellation), HEADING, LEFT, WIDTH);
    flow.space(5.0 * MM);
    intro(&mut flow, invoice, words);

    let has_taxes = invoice.lines.iter().any(|l| l.tax_cents != 0) || row.reverse_charge;
    let columns = Columns::new(has_taxes);
    let mut periods: Vec<Option<(NaiveDate, NaiveDate)>> =
        invoice.lines.iter().map(period).collect();
    periods.sort_unstable();
    periods.dedup();
    let one_period = match periods.as_slice() {
        [Some(p)] => Some(*p),
        _ => None,
    };

    flow.header = Some(columns.header(words));
    // The header is not left alone at the bottom of a page.
    flow.room(BOLD.leading + 4.0 + NORMAL.leading);
    flow.header_row();
    for (line, count) in grouped(&invoice.lines) {
        table_row(
            &mut flow,
            invoice,
            words,
            &columns,
            line,
            count,
            periods.len() > 1,
        );
    }
    flow.header = None;
    totals(&mut flow, invoice, words, &columns, has_taxes);

    flow.space(10.0 * MM);
    if let Some(p) = one_period
        && p != (row.date, row.date)
    {
        let label = if p.0 == p.1 {
            words.service_date
        } else {
            words.service_period
        };
        flow.paragraph(
            &format!("{label}: {}", words.period(p)),
            NORMAL,
            LEFT,
            WIDTH,
        );
        flow.space(3.0 * MM);
    }
    if !row.payment_provider_text.trim().is_empty() {
        flow.paragraph(&row.payment_provider_text, NORMAL, LEFT, WIDTH);
        flow.space(3.0 * MM);
    }
    if !row.additional_text.trim().is_empty() {
        flow.paragraph(&row.additional_text, NORMAL, LEFT, WIDTH);
        flow.space(5.0 * MM);
    }
    if has_taxes {
        tax_table(&mut flow, invoice, words);
    }
    let mut pages = flow.pages;
    decorate(&mut pages, &footer, words);
    pages
}

/// Adds the footer and the page number to each page.
fn decorate(pages: &mut [Vec<Op>], footer: &[String], words: &Words) {
    let count = pages.len();
    for (index, ops) in pages.iter_mut().enumerate() {
        for (i, line) in footer.iter().rev().enumerate() {
            ops.push(Op::Text {
                face: FINE.face,
                size: FINE.size,
                x: (PAGE_W - width(FINE.face, line, FINE.size)) / 2.0,
                y: FOOTER_Y + i as f32 * FOOTER_LEADING,
                text: line.clone(),
            });
        }
        let number = format!("{} {} {} {count}", words.page, index + 1, words.of);
        ops.push(Op::Text {
            face: FINE.face,
            size: FINE.size,
            x: RIGHT - width(FINE.face, &number, FINE.size),
            y: PAGE_NUMBER_Y,
            text: number,
        });
    }
}

/// The event, the issuer and the buyer, at the top of the first page.
fn letterhead(flow: &mut Flow, invoice: &Invoice, event: &str, words: &Words) {
    let row = &invoice.row;
    // The event, at the top left.
    let event = clean(event_name(invoice, event));
    for (i, line) in lines(&event, FaceId::Regular, NORMAL.size, WINDOW_W, true)
        .iter()
        .take(2)
        .enumerate()
    {
        let y = TOP - NORMAL.size - i as f32 * NORMAL.leading;
        flow.text_at(FaceId::Regular, NORMAL.size, LEFT, y, &line.text);
    }

    // The issuer, at the top right.
    let place = [
        row.invoice_from_zipcode.trim(),
        row.invoice_from_city.trim(),
        row.invoice_from_state.trim(),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .copied()
    .collect::<Vec<_>>()
    .join(" ");
    let mut from: Vec<(Style, String)> = Vec::new();
    if !row.invoice_from_name.trim().is_empty() {
        from.push((BOLD, row.invoice_from_name.trim().to_owned()));
    }
    for l in row.invoice_from.lines() {
        from.push((NORMAL, l.trim().to_owned()));
    }
    from.push((NORMAL, place.clone()));
    from.push((NORMAL, row.invoice_from_country.trim().to_owned()));
    if !row.invoice_from_vat_id.trim().is_empty() {
        let id = format!("{}: {}", words.vat_id, row.invoice_from_vat_id.trim());
        from.push((NORMAL, id));
    }
    if !row.invoice_from_tax_id.trim().is_empty() {
        let id = format!("{}: {}", words.tax_id, row.invoice_from_tax_id.trim());
        from.push((NORMAL, id));
    }
    let mut y = TOP - NORMAL.size;
    let mut set = 0;
    'from: for (style, text) in from.iter().filter(|(_, t)| !t.is_empty()) {
        let text = clean(text);
        for line in lines(&text, style.face, style.size, RIGHT - FROM_LEFT, true) {
            if set >= MAX_FROM_LINES {
                break 'from;
            }
            flow.right_at(style.face, style.size, RIGHT, y, &line.text);
            y -= style.leading;
            set += 1;
        }
    }

    // The sender's line above the window, and the buyer in it.
    let sender: Vec<&str> = std::iter::once(row.invoice_from_name.trim())
        .chain(row.invoice_from.lines().map(str::trim))
        .chain(std::iter::once(place.as_str()))
        .filter(|s| !s.is_empty())
        .collect();
    let sender = clean(&sender.join(" · ")).into_owned();
    let size = fitting(FINE, &sender, WINDOW_W).max(6.0);
    if let Some(line) = lines(&sender, FaceId::Regular, size, WINDOW_W, true).first() {
        flow.text_at(
            FaceId::Regular,
            size,
            LEFT,
            WINDOW_TOP + 3.0 * MM,
            &line.text,
        );
    }
    let to = clean(row.invoice_to.trim());
    for (i, line) in lines(&to, FaceId::Regular, NORMAL.size, WINDOW_W, true)
        .iter()
        .take(MAX_TO_LINES)
        .enumerate()
    {
        let y = WINDOW_TOP - NORMAL.size - i as f32 * NORMAL.leading;
        flow.text_at(FaceId::Regular, NORMAL.size, LEFT, y, &line.text);
    }
}

/// The row of the order code, the number (and the number cancelled) and the date, set
/// smaller until long numbers fit.
fn numbers(flow: &mut Flow, invoice: &Invoice, words: &Words) {
    let row = &invoice.row;
    let order = clean(&format!(
        "{}-{}",
        invoice.event_slug.to_uppercase(),
        invoice.order_code
    ))
    .into_owned();
    let number = clean(&row.full_invoice_no).into_owned();
    let refers = clean(invoice.refers.as_deref().unwrap_or_default()).into_owned();
    let date = words.long_date(row.date);
    let date_label = if row.is_cancellation {
        words.cancellation_date
    } else {
        words.invoice_date
    };
    let value_y = NUMBERS_Y - 14.0;
    for size in (5..=10).rev() {
        let size = size as f32;
        let date_x = RIGHT - width(FaceId::Regular, &date, size);
        let cells: Vec<(&str, &str, f32, f32)> = if row.is_cancellation {
            vec![
                (words.order_code, order.as_str(), LEFT, 45.0 * MM),
                (
                    words.cancellation_number,
                    number.as_str(),
                    LEFT + 50.0 * MM,
                    45.0 * MM,
                ),
                (
                    words.original_invoice,
                    refers.as_str(),
                    LEFT + 100.0 * MM,
                    date_x - LEFT - 105.0 * MM,
                ),
            ]
        } else {
            vec![
                (words.order_code, order.as_str(), LEFT, 45.0 * MM),
                (
                    words.invoice_number,
                    number.as_str(),
                    LEFT + 70.0 * MM,
                    date_x - LEFT - 75.0 * MM,
                ),
            ]
        };
        let fits = cells
            .iter()
            .all(|(_, value, _, max)| width(FaceId::Regular, value, size) <= *max);
        if fits || size <= 5.0 {
            for (label, value, x, _) in cells {
                flow.text_at(FaceId::Regular, FINE.size, x, NUMBERS_Y, label);
                flow.text_at(FaceId::Regular, size, x, value_y, value);
            }
            flow.text_at(FaceId::Regular, FINE.size, date_x, NUMBERS_Y, date_label);
            flow.text_at(FaceId::Regular, size, date_x, value_y, &date);
            return;
        }
    }
}

/// What stands between the heading and the table.
fn intro(flow: &mut Flow, invoice: &Invoice, words: &Words) {
    let row = &invoice.row;
    let mut any = false;
    if row.is_cancellation
        && let Some(refers) = &invoice.refers
    {
        flow.paragraph(&format!("{} {refers}", words.cancels), NORMAL, LEFT, WIDTH);
        any = true;
    }
    if !row.custom_field.trim().is_empty() {
        flow.paragraph(&row.custom_field, NORMAL, LEFT, WIDTH);
        any = true;
    }
    if !row.internal_reference.trim().is_empty() {
        let text = format!(
            "{}: {}",
            words.customer_reference,
            row.internal_reference.trim()
        );
        flow.paragraph(&text, NORMAL, LEFT, WIDTH);
        any = true;
    }
    if !row.invoice_to_beneficiary.trim().is_empty() {
        let text = format!(
            "{}:\n{}",
            words.beneficiary,
            row.invoice_to_beneficiary.trim()
        );
        flow.paragraph(&text, NORMAL, LEFT, WIDTH);
        any = true;
    }
    if !row.introductory_text.trim().is_empty() {
        if any {
            flow.space(5.0 * MM);
        }
        flow.paragraph(&row.introductory_text, NORMAL, LEFT, WIDTH);
        any = true;
    }
    if any {
        flow.space(5.0 * MM);
    }
}

/// A line of the table (or lines that are the same, with their number): its description's
/// first paragraph beside the amounts, its further lines in small print below.
fn table_row(
    flow: &mut Flow,
    invoice: &Invoice,
    words: &Words,
    columns: &Columns,
    line: &Line,
    count: i64,
    show_period: bool,
) {
    let currency = invoice.row.currency.as_str();
    let description = clean(line.description.trim());
    let (first, rest) = description
        .split_once('\n')
        .unwrap_or((description.as_ref(), ""));
    let mut fine: Vec<String> = Vec::new();
    if !rest.trim().is_empty() {
        fine.push(rest.trim().to_owned());
    }
    if let Some(location) = &line.event_location
        && !location.trim().is_empty()
        && !description.contains(location.trim())
    {
        fine.push(clean(location.trim()).into_owned());
    }
    if show_period && let Some(p) = period(line) {
        fine.push(words.period(p));
    }
    if count > 1 {
        fine.push(match columns.net {
            Some(_) => format!(
                "{}: {} {} / {} {}",
                words.single_price,
                words.money(line.net_cents(), currency),
                words.net_word,
                words.money(line.gross_cents, currency),
                words.gross_word
            ),
            None => format!(
                "{}: {}",
                words.single_price,
                words.money(line.gross_cents, currency)
            ),
        });
    }

    let mut amounts: Vec<(String, f32)> = vec![(count.to_string(), columns.qty)];
    if let (Some(rate), Some(net)) = (columns.rate, columns.net) {
        amounts.push((words.rate(line.tax_rate_bps), rate));
        amounts.push((words.money(line.net_cents() * count, currency), net));
    }
    amounts.push((
        words.money(line.gross_cents * count, currency),
        columns.gross,
    ));

    let first_lines = lines(first, NORMAL.face, NORMAL.size, columns.description, true);
    for (i, l) in first_lines.iter().enumerate() {
        flow.room(NORMAL.leading);
        let baseline = flow.y - NORMAL.size;
        flow.text_at(NORMAL.face, NORMAL.size, LEFT, baseline, &l.text);
        if i == 0 {
            for (text, x) in &amounts {
                let size = fitting(NORMAL, text, columns.amount_width());
                flow.right_at(NORMAL.face, size, *x, baseline, text);
            }
        }
        flow.y -= NORMAL.leading;
    }
    for text in &fine {
        flow.paragraph(text, FINE, LEFT, columns.fine);
    }
    flow.space(4.0);
}

/// The net total, the tax of each rate and the total, below the table.
fn totals(flow: &mut Flow, invoice: &Invoice, words: &Words, columns: &Columns, has_taxes: bool) {
    let currency = invoice.row.currency.as_str();
    let gross = invoice.gross_cents();
    let mut rows: Vec<(Style, String, String)> = Vec::new();
    if has_taxes {
        rows.push((
            NORMAL,
            words.net_total.to_owned(),
            words.money(gross - invoice.tax_cents(), currency),
        ));
        for group in invoice.tax_summary() {
            if group.rate_bps == 0 && group.tax_cents == 0 {
                continue;
            }
            let label = format!("{} {}", words.rate(group.rate_bps), clean(&group.name));
            rows.push((NORMAL, label, words.money(group.tax_cents, currency)));
        }
    }
    rows.push((BOLD, words.total.to_owned(), words.money(gross, currency)));
    flow.room(NORMAL.leading * rows.len() as f32 + 4.0);
    flow.rule();
    for (style, label, value) in rows {
        flow.room(style.leading);
        let baseline = flow.y - style.size;
        flow.text_at(style.face, style.size, LEFT, baseline, &label);
        let size = fitting(style, &value, 0.3 * WIDTH);
        flow.right_at(style.face, size, columns.gross, baseline, &value);
        flow.y -= style.leading;
    }
}

/// The taxes per rate: net, tax and gross of each, in small print.
fn tax_table(flow: &mut Flow, invoice: &Invoice, words: &Words) {
    let currency = invoice.row.currency.as_str();
    let groups: Vec<_> = invoice
        .tax_summary()
        .into_iter()
        .filter(|g| !(g.rate_bps == 0 && g.net_cents + g.tax_cents == 0))
        .collect();
    if !groups.iter().any(|g| g.rate_bps != 0) {
        return;
    }
    let (net_x, tax_x, gross_x) = (
        LEFT + 0.45 * WIDTH,
        LEFT + 0.60 * WIDTH,
        LEFT + 0.75 * WIDTH,
    );
    let fine_width = 0.15 * WIDTH - PAD;
    // Kept together on one page, if it fits one.
    flow.room(FINE_BOLD.leading * (groups.len() + 2) as f32);
    flow.paragraph(words.included_taxes, FINE_BOLD, LEFT, WIDTH);
    let cell = |text: String, x: f32, right: bool| Cell {
        text,
        style: FINE,
        x,
        right,
    };
    flow.row(&[
        cell(words.tax_rate.to_owned(), LEFT, false),
        cell(words.net_value.to_owned(), net_x, true),
        cell(words.tax.to_owned(), tax_x, true),
        cell(words.gross_value.to_owned(), gross_x, true),
    ]);
    for g in groups {
        flow.room(FINE.leading);
        let baseline = flow.y - FINE.size;
        let label = format!("{} {}", words.rate(g.rate_bps), clean(&g.name));
        let label_lines = lines(
            &label,
            FINE.face,
            FINE.size,
            net_x - LEFT - 0.15 * WIDTH,
            true,
        );
        if let Some(first) = label_lines.first() {
            flow.text_at(FINE.face, FINE.size, LEFT, baseline, &first.text);
        }
        for (cents, x) in [
            (g.net_cents, net_x),
            (g.tax_cents, tax_x),
            (g.net_cents + g.tax_cents, gross_x),
        ] {
            let text = words.money(cents, currency);
            let size = fitting(FINE, &text, fine_width);
            flow.right_at(FINE.face, size, x, baseline, &text);
        }
        flow.y -= FINE.leading;
    }
}

/// The footer's lines, each broken to the page's width, at most [`MAX_FOOTER_LINES`].
fn footer_lines(footer: &str) -> Vec<String> {
    let footer = clean(footer.trim());
    let mut out = Vec::new();
    for paragraph in footer.lines() {
        for line in lines(paragraph.trim(), FINE.face, FINE.size, WIDTH, true) {
            if out.len() >= MAX_FOOTER_LINES {
                return out;
            }
            out.push(line.text);
        }
    }
    out
}

/// Draws the laid out pages.
fn draw(pages: &[Vec<Op>]) -> Writer {
    let mut doc = Writer::new();
    for ops in pages {
        doc.start_page(PAGE_W, PAGE_H);
        doc.content().set_stroke_gray(0.6).set_line_width(0.5);
        for op in ops {
            match op {
                Op::Text {
                    face,
                    size,
                    x,
                    y,
                    text,
                } => doc.text(*face, *size, *x, *y, text),
                Op::Rule { x0, x1, y } => {
                    doc.content().move_to(*x0, *y).line_to(*x1, *y).stroke();
                }
            }
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;
    use crate::db::entities::invoice;

    const EVENT: &str = "DemoCon 2026";

    fn line(description: &str, gross_cents: i64, tax_cents: i64, rate_bps: i64) -> Line {
        Line {
            position: 0,
            description: description.to_owned(),
            item: Some(1),
            variation: None,
            subevent: None,
            attendee_name: None,
            period_start: None,
            period_end: None,
            gross_cents,
            tax_cents,
            tax_rate_bps: rate_bps,
            tax_name: "VAT".into(),
            tax_code: if rate_bps == 0 { "Z" } else { "S" }.into(),
            fee_type: None,
            fee_internal_type: None,
            event_location: None,
        }
    }

    fn invoice_of(lines: Vec<Line>, locale: &str, cancellation: bool) -> Invoice {
        let created = Utc
            .with_ymd_and_hms(2026, 3, 1, 9, 30, 0)
            .single()
            .expect("a date");
        let row = invoice::Model {
            id: 7,
            organizer_id: 1,
            event_id: 2,
            order_id: 3,
            prefix: "DEMO-".into(),
            invoice_no: "00042".into(),
            full_invoice_no: if cancellation {
                "DEMO-00043"
            } else {
                "DEMO-00042"
            }
            .into(),
            is_cancellation: cancellation,
            refers_id: cancellation.then_some(6),
            canceled: false,
            date: created.date_naive(),
            created,
            locale: locale.into(),
            currency: "EUR".into(),
            invoice_from: "Hauptstraße 1\nHinterhaus".into(),
            invoice_from_name: "Demo Conferences GmbH".into(),
            invoice_from_zipcode: "10115".into(),
            invoice_from_city: "Berlin".into(),
            invoice_from_state: String::new(),
            invoice_from_country: "DE".into(),
            invoice_from_tax_id: "27/123/45678".into(),
            invoice_from_vat_id: "DE123456789".into(),
            invoice_to: "Acme Corp\nJane Müller\nMain Street 5\n12345 Springfield\nUnited States"
                .into(),
            invoice_to_is_business: Some(true),
            invoice_to_company: "Acme Corp".into(),
            invoice_to_name: "Jane Müller".into(),
            invoice_to_street: "Main Street 5".into(),
            invoice_to_zipcode: "12345".into(),
            invoice_to_city: "Springfield".into(),
            invoice_to_state: String::new(),
            invoice_to_country: "US".into(),
            invoice_to_vat_id: String::new(),
            invoice_to_beneficiary: String::new(),
            internal_reference: "PO-7781".into(),
            custom_field: String::new(),
            introductory_text: "Thank you for your order.".into(),
            additional_text: "Reverse charge: tax liability of the recipient.".into(),
            payment_provider_text:
                "Please transfer the amount to IBAN DE02 1203 0000 0000 2020 51.".into(),
            footer_text:
                "Demo Conferences GmbH · Registergericht Berlin HRB 12345\nCEO: Max Mustermann"
                    .into(),
            reverse_charge: false,
            lines: json!([]),
            transmission_type: "email".into(),
            transmission_provider: None,
            transmission_status: "unknown".into(),
            transmission_date: None,
            transmission_info: None,
            sent_to_organizer: None,
            shredded: false,
            version: 1,
        };
        Invoice {
            row,
            lines,
            order_code: "ABC12".into(),
            order_email: Some("jane@example.com".into()),
            event_slug: "democon".into(),
            refers: cancellation.then(|| "DEMO-00042".to_owned()),
        }
    }

    /// The texts of the laid out pages, in order.
    fn texts(pages: &[Vec<Op>]) -> Vec<Vec<String>> {
        pages
            .iter()
            .map(|ops| {
                ops.iter()
                    .filter_map(|op| match op {
                        Op::Text { text, .. } => Some(text.clone()),
                        Op::Rule { .. } => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn write_out(name: &str, pdf: &[u8]) {
        if let Ok(dir) = std::env::var("TESSERA_PDF_OUT") {
            std::fs::write(format!("{dir}/{name}"), pdf).expect("written");
        }
    }

    fn standard_lines() -> Vec<Line> {
        vec![
            line(
                "Conference ticket\nAttendee: Jane Müller",
                11900,
                1900,
                1900,
            ),
            line(
                "Conference ticket\nAttendee: Jane Müller",
                11900,
                1900,
                1900,
            ),
            line("Workshop: Rust for PDF generation", 5000, 327, 700),
            line("Service fee", 250, 40, 1900),
        ]
    }

    #[test]
    fn an_invoice_lists_its_lines_and_totals() {
        let inv = invoice_of(standard_lines(), "en", false);
        let pages = layout(&inv, EVENT, Words::of("en"));
        assert_eq!(pages.len(), 1);
        let all = texts(&pages).concat().join("\n");
        for part in [
            "DemoCon 2026",
            "Demo Conferences GmbH",
            "10115 Berlin",
            "VAT ID: DE123456789",
            "Tax ID: 27/123/45678",
            "Jane Müller",
            "Invoice",
            "DEMO-00042",
            "DEMOCON-ABC12",
            "March 1, 2026",
            "Customer reference: PO-7781",
            "Thank you for your order.",
            "Conference ticket",
            "Attendee: Jane Müller",
            "Single price: 100.00 EUR net / 119.00 EUR gross",
            "238.00 EUR",
            "200.00 EUR",
            "19.00 %",
            "7.00 %",
            "Net total",
            "19.00 % VAT",
            "Invoice total",
            "Included taxes",
            "Please transfer the amount",
            "Reverse charge",
        ] {
            assert!(all.contains(part), "{part} missing from\n{all}");
        }
        // 238.00 + 50.00 + 2.50 with 38.00 + 3.27 + 0.40 tax.
        let total = 23800 + 5000 + 250;
        assert_eq!(inv.gross_cents(), total);
        assert!(all.contains("290.50 EUR"), "{all}");
        assert!(all.contains("248.83 EUR"), "{all}");
        assert!(all.contains("Page 1 of 1"));

        let pdf = render(&inv, EVENT, None);
        assert!(pdf.starts_with(b"%PDF-"));
        let raw = String::from_utf8_lossy(&pdf);
        assert!(raw.contains("/ID ["), "a file identifier");
        assert!(!raw.contains("pdfaid"), "no archival metadata without XML");
        write_out("invoice-en.pdf", &pdf);
        let file = PdfInvoices
            .render(InvoiceRequest {
                invoice: &inv,
                event_name: EVENT,
                embedded_xml: None,
            })
            .expect("rendered");
        assert_eq!(file.content_type, "application/pdf");
        assert_eq!(file.extension, ".pdf");
        assert_eq!(file.data, pdf, "the same invoice makes the same file");
    }

    #[test]
    fn a_german_cancellation_names_the_invoice_it_cancels_with_negative_amounts() {
        let lines = vec![line("Konferenzticket", -11900, -1900, 1900)];
        let inv = invoice_of(lines, "de-informal", true);
        let pages = layout(&inv, EVENT, Words::of(&inv.row.locale));
        let all = texts(&pages).concat().join("\n");
        for part in [
            "Stornorechnung",
            "Storno zur Rechnung DEMO-00042",
            "Stornonummer",
            "DEMO-00043",
            "Ursprüngliche Rechnung",
            "1. März 2026",
            "-119,00 EUR",
            "-100,00 EUR",
            "19,00 %",
            "Rechnungsbetrag",
            "USt-IdNr.: DE123456789",
            "Seite 1 von 1",
        ] {
            assert!(all.contains(part), "{part} missing from\n{all}");
        }
        let pdf = render(&inv, EVENT, None);
        assert!(pdf.starts_with(b"%PDF-"));
        write_out("cancellation-de.pdf", &pdf);
    }

    #[test]
    fn many_lines_flow_onto_further_pages_with_the_table_header_repeated() {
        let long = "A very long description of a ticket that goes on and on ".repeat(8);
        let lines: Vec<Line> = (0..150)
            .map(|i| {
                let text = if i % 10 == 0 {
                    format!("Ticket {i}: {long}\nAttendee: Person {i}\n{long}")
                } else {
                    format!("Ticket {i}\nAttendee: Person {i}")
                };
                line(&text, 1000 + i, 160, 1900)
            })
            .collect();
        let inv = invoice_of(lines, "en", false);
        let pages = layout(&inv, EVENT, Words::of("en"));
        let n = pages.len();
        assert!(n >= 5, "{n} pages");
        let texts = texts(&pages);
        for (i, page) in texts.iter().enumerate() {
            if page.iter().any(|t| t.starts_with("Ticket ")) {
                assert!(
                    page.iter().any(|t| t == "Description"),
                    "header on page {i}"
                );
            }
        }
        assert!(
            texts[n - 1]
                .iter()
                .any(|t| *t == format!("Page {n} of {n}"))
        );
        let all = texts.concat();
        assert!(all.iter().any(|t| t == "Ticket 149"));
        assert!(all.iter().any(|t| t == "Invoice total"));
        // Nothing but the footer and the page number is set as low as the footer.
        let footer = footer_lines(&inv.row.footer_text);
        for ops in &pages {
            for op in ops {
                if let Op::Text { y, text, .. } = op
                    && !footer.contains(text)
                    && !text.starts_with("Page ")
                {
                    assert!(*y > FOOTER_Y + 2.0 * FOOTER_LEADING, "{op:?}");
                }
            }
        }
        let pdf = render(&inv, EVENT, None);
        let raw = String::from_utf8_lossy(&pdf);
        assert_eq!(
            raw.matches("/Type /Page\n").count() + raw.matches("/Type /Page ").count(),
            n
        );
        write_out("invoice-long.pdf", &pdf);
    }

    #[test]
    fn a_hybrid_invoice_is_a_pdfa_3_file_carrying_the_xml() {
        let inv = invoice_of(standard_lines(), "de", false);
        let xml = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rsm:CrossIndustryInvoice xmlns:rsm=\"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\"/>\n";
        let file = PdfInvoices
            .render(InvoiceRequest {
                invoice: &inv,
                event_name: EVENT,
                embedded_xml: Some(xml),
            })
            .expect("rendered");
        let pdf = file.data;
        assert!(pdf.starts_with(b"%PDF-1.7\n%"));
        let raw = String::from_utf8_lossy(&pdf);
        for part in [
            "/AF [",
            "/AFRelationship /Alternative",
            "/Subtype /text#2Fxml",
            "(factur-x.xml)",
            "/EmbeddedFiles",
            "<pdfaid:part>3</pdfaid:part>",
            "<pdfaid:conformance>B</pdfaid:conformance>",
            "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
            "/S /GTS_PDFA1",
            "/ID [",
            "/Lang (de)",
        ] {
            assert!(raw.contains(part), "{part}");
        }
        assert!(raw.contains(&format!("/Size {}", xml.len())));
        write_out("invoice-facturx.pdf", &pdf);
    }

    #[test]
    fn amounts_rates_and_dates_are_written_as_the_language_writes_them() {
        let (en, de) = (Words::of("en"), Words::of("de"));
        assert_eq!(en.money(1234, "EUR"), "12.34 EUR");
        assert_eq!(en.money(-5, "EUR"), "-0.05 EUR");
        assert_eq!(en.money(123_456_789, "USD"), "1,234,567.89 USD");
        assert_eq!(de.money(-123_456, "EUR"), "-1.234,56 EUR");
        assert_eq!(en.money(i64::MIN, ""), "-92,233,720,368,547,758.08");
        assert_eq!(en.rate(1900), "19.00 %");
        assert_eq!(de.rate(750), "7,50 %");
        let date = NaiveDate::from_ymd_opt(2026, 12, 24).expect("a date");
        assert_eq!(en.long_date(date), "December 24, 2026");
        assert_eq!(de.long_date(date), "24. Dezember 2026");
        assert_eq!(de.period((date, date)), "24.12.2026");
    }

    #[test]
    fn a_tax_free_invoice_shows_amounts_and_the_periods_of_its_lines() {
        let day = |d: u32| Utc.with_ymd_and_hms(2026, 5, d, 18, 0, 0).single();
        let mut first = line("Concert", 4000, 0, 0);
        (first.period_start, first.period_end) = (day(2), day(2));
        first.event_location = Some("Town Hall, Springfield".into());
        let mut second = line("Festival pass", 9000, 0, 0);
        (second.period_start, second.period_end) = (day(3), day(5));
        let inv = invoice_of(vec![first.clone(), second], "en", false);
        let all = texts(&layout(&inv, EVENT, Words::of("en"))).concat();
        for part in [
            "Amount",
            "2026-05-02",
            "2026-05-03 – 2026-05-05",
            "Town Hall, Springfield",
            "130.00 EUR",
        ] {
            assert!(all.iter().any(|t| t == part), "{part} missing from {all:?}");
        }
        assert!(!all.iter().any(|t| t == "Tax rate" || t == "Included taxes"));

        // One period for all lines is named once, below the table.
        let inv = invoice_of(vec![first.clone(), first], "en", false);
        let all = texts(&layout(&inv, EVENT, Words::of("en"))).concat();
        assert!(
            all.iter().any(|t| t == "Service date: 2026-05-02"),
            "{all:?}"
        );
        assert_eq!(all.iter().filter(|t| *t == "2026-05-02").count(), 0);
    }

    #[test]
    fn characters_no_face_has_and_control_characters_are_not_set() {
        assert_eq!(clean("Jiří 山田"), "Jiří 山田");
        assert!(matches!(clean("plain"), Cow::Borrowed(_)));
        assert_eq!(clean("a\tb\u{7}c\r\nd"), "a bc\nd");
        assert_eq!(clean("x\u{10FFFD}y"), "x?y");
    }

    #[test]
    fn an_overlong_footer_and_address_stay_in_their_places() {
        let mut inv = invoice_of(standard_lines(), "en", false);
        inv.row.footer_text = "word ".repeat(5000);
        inv.row.invoice_to = "line\n".repeat(100);
        inv.row.invoice_from = "street\n".repeat(100);
        assert_eq!(footer_lines(&inv.row.footer_text).len(), MAX_FOOTER_LINES);
        let pages = layout(&inv, EVENT, Words::of("en"));
        let first = texts(&pages)[0].clone();
        assert_eq!(first.iter().filter(|t| *t == "line").count(), MAX_TO_LINES);
        assert!(first.iter().filter(|t| *t == "street").count() < MAX_FROM_LINES);
        let pdf = render(&inv, EVENT, None);
        assert!(pdf.starts_with(b"%PDF-"));
    }

    /// Times rendering (run in release mode with `--ignored --nocapture`): buyers of a
    /// few names (the fonts' subsets made once), and buyers whose names each bring letters
    /// no invoice before had (a subset made for each).
    #[test]
    #[ignore = "a measurement, not a check"]
    fn rendering_an_invoice_takes_well_under_half_a_millisecond() {
        let names = [
            "Jane Müller",
            "Jiří Dvořák",
            "Łukasz Żółć",
            "Zoë Brontë",
            "山田太郎",
        ];
        let latin: Vec<char> = ('\u{c0}'..='\u{17f}').collect();
        let made = |unusual: bool| -> Vec<Invoice> {
            (0..1000)
                .map(|i| {
                    let locale = if i % 2 == 0 { "en" } else { "de" };
                    let mut inv = invoice_of(standard_lines(), locale, false);
                    inv.row.full_invoice_no = format!("DEMO-{i:05}");
                    let name = if unusual {
                        let (a, b) = (latin[i % latin.len()], latin[i / latin.len()]);
                        format!("Jo{a}{b} Doe")
                    } else {
                        names[i % names.len()].to_owned()
                    };
                    inv.row.invoice_to = format!("{name}\nMain Street {i}\n12345 Springfield");
                    inv
                })
                .collect()
        };
        let xml = b"<rsm:CrossIndustryInvoice xmlns:rsm=\"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\"/>";
        for unusual in [false, true] {
            let invoices = made(unusual);
            for embed in [false, true] {
                let xml = embed.then_some(&xml[..]);
                let _warm = render(&invoices[0], EVENT, xml);
                let start = std::time::Instant::now();
                let mut bytes = 0;
                for inv in &invoices {
                    bytes += render(inv, EVENT, xml).len();
                }
                let each = start.elapsed() / invoices.len() as u32;
                println!(
                    "new letters in each: {unusual}, embedded XML: {embed}: {each:?} an invoice, \
                     {} bytes each",
                    bytes / invoices.len()
                );
            }
        }
    }
}
