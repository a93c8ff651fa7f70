//! The snapshot an invoice keeps, taken from an order as pretix's `build_invoice` takes it:
//! the issuer from the settings, the buyer from the invoice address, one line per position
//! (unless free and left out) and per fee, the tax rules' notices, and a cancellation as the
//! negative copy of the invoice it cancels.

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::ActiveValue::{NotSet, Set};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, QueryOrder,
};
use serde_json::Value;

use super::numbers::{self, Kind};
use super::{Line, transmission};
use crate::db::entities::{event, invoice, order, order_fee, order_position, question};
use crate::domain::cache::EventSettings;
use crate::domain::sale::Catalogue;
use crate::domain::tax_rules::reverse_charge::{self, Buyer};
use crate::values::I18nString;

/// An order with the positions and fees its invoice lists (canceled ones are left out).
#[derive(Clone, Copy)]
pub struct OrderParts<'a> {
    /// The order.
    pub order: &'a order::Model,
    /// Its positions.
    pub positions: &'a [order_position::Model],
    /// Its fees.
    pub fees: &'a [order_fee::Model],
}

/// Invoices taken from orders but not numbered yet (see [`Issuing::draft`]).
pub struct Drafts {
    rows: Vec<invoice::ActiveModel>,
    prefixes: Vec<String>,
}

/// What issuing an invoice of an order needs: the transaction it is written in, the event,
/// its settings and catalogue (with the dates of the order's positions), and the time.
pub struct Issuing<'a, C: ConnectionTrait> {
    /// The transaction that holds the order's lock.
    pub txn: &'a C,
    /// The event.
    pub event: &'a event::Model,
    /// Its effective settings.
    pub settings: &'a EventSettings,
    /// Its catalogue.
    pub catalogue: &'a Catalogue,
    /// Now.
    pub now: DateTime<Utc>,
}

impl<C: ConnectionTrait> Issuing<'_, C> {
    fn text(&self, key: &str) -> String {
        self.settings
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    fn flag(&self, key: &str, default: bool) -> bool {
        self.settings
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    fn translated(&self, key: &str, locale: &str) -> String {
        self.settings
            .get(key)
            .map(|v| I18nString::from_stored(v).localize(locale))
            .unwrap_or_default()
    }

    /// Today in the event's time zone: the date of invoices issued now.
    pub fn today(&self) -> NaiveDate {
        self.now
            .with_timezone(&crate::domain::talk::schedule::event_tz(self.event))
            .date_naive()
    }

    /// The language an order's invoices are written in.
    fn locale(&self, o: &order::Model) -> String {
        match self.text("invoice_language").as_str() {
            "" | "__user__" => o.locale.clone(),
            fixed => fixed.to_owned(),
        }
    }

    /// The order's positions and fees that are not canceled.
    async fn current(
        &self,
        o: &order::Model,
    ) -> Result<(Vec<order_position::Model>, Vec<order_fee::Model>), DbErr> {
        let positions = order_position::Entity::find()
            .filter(order_position::Column::OrderId.eq(o.id))
            .filter(order_position::Column::Canceled.eq(false))
            .all(self.txn)
            .await?;
        let fees = order_fee::Entity::find()
            .filter(order_fee::Column::OrderId.eq(o.id))
            .filter(order_fee::Column::Canceled.eq(false))
            .order_by_asc(order_fee::Column::Id)
            .all(self.txn)
            .await?;
        Ok((positions, fees))
    }

    /// The event's questions whose answers invoices print, in their order.
    async fn printed_questions(&self) -> Result<Vec<question::Model>, DbErr> {
        question::Entity::find()
            .filter(question::Column::EventId.eq(self.event.id))
            .filter(question::Column::PrintOnInvoice.eq(true))
            .order_by_asc(question::Column::Position)
            .order_by_asc(question::Column::Id)
            .all(self.txn)
            .await
    }

    /// Issues an invoice of the order as it is now; for a canceled order, its cancellation
    /// right away, as pretix does.
    pub async fn issue(&self, o: &order::Model) -> Result<invoice::Model, DbErr> {
        let (positions, fees) = self.current(o).await?;
        let parts = OrderParts {
            order: o,
            positions: &positions,
            fees: &fees,
        };
        let id = self
            .issue_all(&[parts])
            .await?
            .pop()
            .ok_or(DbErr::RecordNotInserted)?;
        invoice::Entity::find_by_id(id)
            .one(self.txn)
            .await?
            .ok_or(DbErr::RecordNotInserted)
    }

    /// Issues an invoice of each order, from the positions and fees given; a canceled
    /// order's is cancelled right away, as pretix does. Gives their IDs in the orders' order.
    pub async fn issue_all(&self, orders: &[OrderParts<'_>]) -> Result<Vec<i64>, DbErr> {
        let drafts = self.draft(orders).await?;
        let kept = vec![true; orders.len()];
        self.store(orders, drafts, &kept).await
    }

    /// Takes the invoices of the orders without numbering them: everything that needs no
    /// lock, done before the issuing transaction takes its locks.
    pub async fn draft(&self, orders: &[OrderParts<'_>]) -> Result<Drafts, DbErr> {
        let answered = orders
            .iter()
            .flat_map(|o| o.positions)
            .any(|p| p.answers.as_array().is_some_and(|a| !a.is_empty()));
        let printed = match answered {
            true => self.printed_questions().await?,
            false => Vec::new(),
        };
        let date = self.today();
        let mut drafts = Drafts {
            rows: Vec::with_capacity(orders.len()),
            prefixes: Vec::with_capacity(orders.len()),
        };
        for parts in orders {
            let locale = self.locale(parts.order);
            let mut row = self.snapshot(parts, &printed, &locale);
            row.date = Set(date);
            drafts.rows.push(row);
            drafts.prefixes.push(numbers::prefix(
                self.settings,
                self.event,
                parts.order,
                Kind::Invoice,
                date,
            ));
        }
        Ok(drafts)
    }

    /// Numbers and stores the drafts `kept` says (as [`Issuing::draft`] took them);
    /// `orders` are the kept drafts' orders, in order. A canceled order's invoice is
    /// cancelled right away. Gives the IDs of the stored ones, in order.
    pub async fn store(
        &self,
        orders: &[OrderParts<'_>],
        drafts: Drafts,
        kept: &[bool],
    ) -> Result<Vec<i64>, DbErr> {
        let (mut rows, mut prefixes) = (Vec::new(), Vec::new());
        for ((row, prefix), keep) in drafts.rows.into_iter().zip(drafts.prefixes).zip(kept) {
            if *keep {
                rows.push(row);
                prefixes.push(prefix);
            }
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let issued =
            numbers::store(self.txn, self.settings, self.event, orders, rows, &prefixes).await?;
        for (parts, &id) in orders.iter().zip(&issued) {
            if parts.order.status == "c"
                && let Some(inv) = invoice::Entity::find_by_id(id).one(self.txn).await?
            {
                self.cancel(parts.order, &inv).await?;
            }
        }
        Ok(issued)
    }

    /// Cancels an invoice with a negative copy under a new number, dated today, with the
    /// issuer as the settings now say; `None` when a cancellation refers to it already.
    pub async fn cancel(
        &self,
        o: &order::Model,
        original: &invoice::Model,
    ) -> Result<Option<invoice::Model>, DbErr> {
        let claimed = invoice::Entity::update_many()
            .col_expr(invoice::Column::Canceled, true.into())
            .filter(invoice::Column::Id.eq(original.id))
            .filter(invoice::Column::Canceled.eq(false))
            .filter(invoice::Column::IsCancellation.eq(false))
            .exec(self.txn)
            .await?;
        if claimed.rows_affected == 0 {
            return Ok(None);
        }
        let date = self.today();
        let prefix = numbers::prefix(self.settings, self.event, o, Kind::Cancellation, date);
        let number = numbers::next(self.txn, self.settings, self.event, o, &prefix).await?;
        let mut row = original.clone().into_active_model();
        row.id = NotSet;
        row.full_invoice_no = Set(format!("{prefix}{number}"));
        row.prefix = Set(prefix);
        row.invoice_no = Set(number);
        row.is_cancellation = Set(true);
        row.refers_id = Set(Some(original.id));
        row.canceled = Set(false);
        row.date = Set(date);
        row.created = Set(self.now);
        row.payment_provider_text = Set(String::new());
        row.lines = Set(negated(&original.lines));
        row.transmission_provider = Set(None);
        row.transmission_status = Set(transmission::PENDING.into());
        row.transmission_date = Set(None);
        row.transmission_info = Set(None);
        row.sent_to_organizer = Set(None);
        row.version = Set(1);
        self.set_issuer(&mut row);
        Ok(Some(row.insert(self.txn).await?))
    }

    /// Takes the snapshot again under the same number and date (pretix's regenerate); a
    /// cancellation copies its invoice's lines again.
    pub async fn regenerate(
        &self,
        o: &order::Model,
        existing: &invoice::Model,
    ) -> Result<invoice::Model, DbErr> {
        let mut row = if existing.is_cancellation {
            let original = match existing.refers_id {
                Some(id) => invoice::Entity::find_by_id(id).one(self.txn).await?,
                None => None,
            };
            let mut row = existing.clone().into_active_model();
            if let Some(original) = original {
                row.lines = Set(negated(&original.lines));
            }
            self.set_issuer(&mut row);
            row
        } else {
            let (positions, fees) = self.current(o).await?;
            let printed = self.printed_questions().await?;
            let parts = OrderParts {
                order: o,
                positions: &positions,
                fees: &fees,
            };
            let mut row = self.snapshot(&parts, &printed, &existing.locale);
            row.id = Set(existing.id);
            row.prefix = Set(existing.prefix.clone());
            row.invoice_no = Set(existing.invoice_no.clone());
            row.full_invoice_no = Set(existing.full_invoice_no.clone());
            row.date = Set(existing.date);
            row.created = Set(existing.created);
            row.canceled = Set(existing.canceled);
            row
        };
        row.version = Set(existing.version + 1);
        row.update(self.txn).await
    }

    fn set_issuer(&self, row: &mut invoice::ActiveModel) {
        row.invoice_from = Set(self.text("invoice_address_from"));
        row.invoice_from_name = Set(self.text("invoice_address_from_name"));
        row.invoice_from_zipcode = Set(self.text("invoice_address_from_zipcode"));
        row.invoice_from_city = Set(self.text("invoice_address_from_city"));
        row.invoice_from_state = Set(self.text("invoice_address_from_state"));
        row.invoice_from_country = Set(self.text("invoice_address_from_country"));
        row.invoice_from_tax_id = Set(self.text("invoice_address_from_tax_id"));
        row.invoice_from_vat_id = Set(self.text("invoice_address_from_vat_id"));
    }

    /// Everything of a new invoice but its number and date, from the order's positions and
    /// fees and the questions printed on invoices.
    fn snapshot(
        &self,
        parts: &OrderParts<'_>,
        printed: &[question::Model],
        locale: &str,
    ) -> invoice::ActiveModel {
        let o = parts.order;
        let words = Words::of(locale);
        let address = o.invoice_address.as_ref().filter(|a| a.is_object());
        let buyer = Buyer::of_address(address);
        let mut additional = self.translated("invoice_additional_text", locale);
        let (lines, notices, reverse_charge) = self.lines(parts, printed, locale, buyer.as_ref());
        if !notices.is_empty() {
            if !additional.is_empty() {
                additional.push_str("\n\n");
            }
            additional.push_str(&notices.join("\n"));
        }
        let payment_text = if o.status == "n" && self.flag("invoice_include_expire_date", true) {
            o.expires
                .map(|e| {
                    let tz = crate::domain::talk::schedule::event_tz(self.event);
                    words.pay_before(e.with_timezone(&tz).date_naive())
                })
                .unwrap_or_default()
        } else {
            String::new()
        };
        let a = |k: &str| {
            address
                .and_then(|a| a[k].as_str())
                .unwrap_or_default()
                .to_owned()
        };
        let name = address
            .and_then(|a| crate::domain::orders::display_name(&a["name_parts"]))
            .unwrap_or_default();
        let mut row = invoice::ActiveModel {
            id: NotSet,
            organizer_id: Set(self.event.organizer_id),
            event_id: Set(self.event.id),
            order_id: Set(o.id),
            prefix: NotSet,
            invoice_no: NotSet,
            full_invoice_no: NotSet,
            is_cancellation: Set(false),
            refers_id: Set(None),
            canceled: Set(false),
            date: NotSet,
            created: Set(self.now),
            locale: Set(locale.to_owned()),
            currency: Set(self.event.currency.clone()),
            invoice_from: NotSet,
            invoice_from_name: NotSet,
            invoice_from_zipcode: NotSet,
            invoice_from_city: NotSet,
            invoice_from_state: NotSet,
            invoice_from_country: NotSet,
            invoice_from_tax_id: NotSet,
            invoice_from_vat_id: NotSet,
            invoice_to: Set(address
                .map(|_| buyer_block(&a, &name, &words))
                .unwrap_or_default()),
            invoice_to_is_business: Set(
                address.map(|a| a["is_business"].as_bool().unwrap_or(false))
            ),
            invoice_to_company: Set(a("company")),
            invoice_to_name: Set(name),
            invoice_to_street: Set(a("street")),
            invoice_to_zipcode: Set(a("zipcode")),
            invoice_to_city: Set(a("city")),
            invoice_to_state: Set(a("state")),
            invoice_to_country: Set(a("country")),
            invoice_to_vat_id: Set(a("vat_id")),
            invoice_to_beneficiary: Set(a("beneficiary")),
            internal_reference: Set(a("internal_reference")),
            custom_field: Set(a("custom_field")),
            introductory_text: Set(self.translated("invoice_introductory_text", locale)),
            additional_text: Set(additional),
            payment_provider_text: Set(payment_text),
            footer_text: Set(self.translated("invoice_footer_text", locale)),
            reverse_charge: Set(reverse_charge),
            lines: Set(serde_json::to_value(&lines).unwrap_or_default()),
            transmission_type: Set("email".into()),
            transmission_provider: Set(None),
            transmission_status: Set(transmission::PENDING.into()),
            transmission_date: Set(None),
            transmission_info: Set(None),
            sent_to_organizer: Set(None),
            shredded: Set(false),
            version: Set(1),
        };
        self.set_issuer(&mut row);
        row
    }

    /// The order's lines, the tax rules' notices, and whether reverse charge applied.
    fn lines(
        &self,
        parts: &OrderParts<'_>,
        printed: &[question::Model],
        locale: &str,
        buyer: Option<&Buyer>,
    ) -> (Vec<Line>, Vec<String>, bool) {
        let o = parts.order;
        let words = Words::of(locale);
        let mut positions: Vec<&order_position::Model> =
            parts.positions.iter().filter(|p| !p.canceled).collect();
        let fees: Vec<&order_fee::Model> = parts.fees.iter().filter(|f| !f.canceled).collect();
        let parent_of: std::collections::HashMap<i64, i32> =
            positions.iter().map(|p| (p.id, p.positionid)).collect();
        positions.sort_by_key(|p| {
            let parent = p.addon_to_id.and_then(|a| parent_of.get(&a).copied());
            (
                parent.unwrap_or(p.positionid),
                parent.is_some(),
                p.positionid,
            )
        });
        let include_free = self.flag("invoice_include_free", true);
        let attendee_names = self.flag("invoice_attendee_name", true);
        let location = self
            .flag("invoice_event_location", false)
            .then(|| {
                self.event
                    .location
                    .as_ref()
                    .map(|l| I18nString::from_stored(l).localize(locale))
            })
            .flatten()
            .filter(|l| !l.is_empty());
        let has_issuer_ids = !self.text("invoice_address_from_vat_id").is_empty()
            || !self.text("invoice_address_from_tax_id").is_empty();
        let has_addons: std::collections::HashSet<i64> =
            positions.iter().filter_map(|p| p.addon_to_id).collect();
        let (mut lines, mut notices, mut reverse_charge) = (Vec::new(), Vec::new(), false);
        let mut span: Option<(DateTime<Utc>, DateTime<Utc>)> = None;
        for (i, p) in positions.iter().enumerate() {
            if !include_free && p.price_cents == 0 && !has_addons.contains(&p.id) {
                continue;
            }
            let mut description = self
                .catalogue
                .product_name(p.item_id, p.variation_id, locale);
            if p.addon_to_id.is_some() {
                description = format!("  + {description}");
            }
            let attendee = crate::domain::orders::display_name(&p.attendee_name_parts);
            if attendee_names && let Some(name) = &attendee {
                description.push('\n');
                description.push_str(&words.attendee(name));
            }
            for q in printed {
                if let Some(answer) = answer_of(&p.answers, q.id) {
                    let asked = I18nString::from_stored(&q.question).localize(locale);
                    let sep = if asked.ends_with('?') { "" } else { ":" };
                    description.push_str(&format!("\n{asked}{sep} {answer}"));
                }
            }
            let subevent = p.subevent_id.and_then(|s| self.catalogue.subevent(s));
            if let Some(s) = subevent {
                let tz = crate::domain::talk::schedule::event_tz(self.event);
                let name = I18nString::from_stored(&s.name).localize(locale);
                let day = s.date_from.with_timezone(&tz).date_naive();
                description.push('\n');
                description.push_str(&words.date(&name, day));
            }
            let (start, end) = self.period(o, p, subevent);
            span = Some(match span {
                Some((s, e)) => (s.min(start), e.min(end)),
                None => (start, end),
            });
            let rule = p.tax_rule_id.and_then(|r| self.catalogue.tax_rule(r));
            let reversed = rule.is_some_and(|r| reverse_charge::applies(r, buyer));
            reverse_charge |= reversed && p.price_cents != 0 && p.tax_value_cents == 0;
            if let Some(text) = rule.and_then(|r| reverse_charge::invoice_text(r, buyer))
                && !notices.iter().any(|n: &String| n == text)
            {
                notices.push(text.to_owned());
            }
            lines.push(Line {
                position: i as i32,
                description,
                item: Some(p.item_id),
                variation: p.variation_id,
                subevent: p.subevent_id,
                attendee_name: attendee.filter(|_| attendee_names),
                period_start: Some(start),
                period_end: Some(end),
                gross_cents: p.price_cents,
                tax_cents: p.tax_value_cents,
                tax_rate_bps: p.tax_rate_bps,
                tax_name: rule
                    .map(|r| I18nString::from_stored(&r.name).localize(locale))
                    .unwrap_or_default(),
                tax_code: tax_code(rule.is_some(), reversed, p.tax_rate_bps, has_issuer_ids),
                fee_type: None,
                fee_internal_type: None,
                event_location: location.clone(),
            });
        }
        let offset = positions.len();
        let (start, end) = span.unwrap_or_else(|| self.event_span());
        for (i, f) in fees.iter().enumerate() {
            let rule = f.tax_rule_id.and_then(|r| self.catalogue.tax_rule(r));
            let reversed = rule.is_some_and(|r| reverse_charge::applies(r, buyer));
            reverse_charge |= reversed && f.value_cents != 0 && f.tax_value_cents == 0;
            if let Some(text) = rule.and_then(|r| reverse_charge::invoice_text(r, buyer))
                && !notices.iter().any(|n: &String| n == text)
            {
                notices.push(text.to_owned());
            }
            let title = words.fee(&f.fee_type);
            let description = match (f.fee_type.as_str(), f.description.is_empty()) {
                ("other", false) => f.description.clone(),
                (_, false) => format!("{title} - {}", f.description),
                (_, true) => title.to_owned(),
            };
            lines.push(Line {
                position: (offset + i) as i32,
                description,
                item: None,
                variation: None,
                subevent: None,
                attendee_name: None,
                period_start: Some(start),
                period_end: Some(end),
                gross_cents: f.value_cents,
                tax_cents: f.tax_value_cents,
                tax_rate_bps: f.tax_rate_bps,
                tax_name: rule
                    .map(|r| I18nString::from_stored(&r.name).localize(locale))
                    .unwrap_or_default(),
                tax_code: tax_code(rule.is_some(), reversed, f.tax_rate_bps, has_issuer_ids),
                fee_type: Some(f.fee_type.clone()),
                fee_internal_type: f.internal_type.clone(),
                event_location: location.clone().filter(|_| !self.event.has_subevents),
            });
        }
        (lines, notices, reverse_charge)
    }

    fn event_span(&self) -> (DateTime<Utc>, DateTime<Utc>) {
        let ev = self.event;
        (ev.date_from, ev.date_to.unwrap_or(ev.date_from))
    }

    /// A position's period of service, as `invoice_period` says.
    fn period(
        &self,
        o: &order::Model,
        p: &order_position::Model,
        subevent: Option<&crate::db::entities::subevent::Model>,
    ) -> (DateTime<Utc>, DateTime<Utc>) {
        let dated = || match subevent {
            Some(s) => (s.date_from, s.date_to.unwrap_or(s.date_from)),
            None => self.event_span(),
        };
        match self.text("invoice_period").as_str() {
            "order_date" => (o.datetime, o.datetime),
            "event_date" => dated(),
            "invoice_date" => (self.now, self.now),
            mode => match (p.valid_from, p.valid_until) {
                (Some(from), Some(until)) => (from, until),
                (Some(from), None) => (from, from),
                (None, Some(until)) => (o.datetime.min(until), until),
                (None, None) if subevent.is_some() || mode != "auto_no_event" => dated(),
                (None, None) => (self.now, self.now),
            },
        }
    }
}

/// The EN 16931 tax category of a line: reverse charge, standard rate, zero rate under a
/// rule; without a rule, exempt for an issuer with a tax or VAT ID, else outside VAT.
fn tax_code(has_rule: bool, reversed: bool, rate_bps: i64, issuer_has_ids: bool) -> String {
    match (has_rule, reversed, rate_bps) {
        (true, true, _) => "AE",
        (true, false, r) if r > 0 => "S",
        (true, false, _) => "Z",
        (false, _, _) if issuer_has_ids => "E",
        (false, _, _) => "O",
    }
    .to_owned()
}

/// The lines of a cancellation: those of the invoice, negated.
fn negated(lines: &Value) -> Value {
    let mut lines: Vec<Line> = serde_json::from_value(lines.clone()).unwrap_or_default();
    for l in &mut lines {
        l.gross_cents = -l.gross_cents;
        l.tax_cents = -l.tax_cents;
    }
    serde_json::to_value(lines).unwrap_or_default()
}

/// A position's answer to a question, as text (files are left out).
fn answer_of(answers: &Value, question: i64) -> Option<String> {
    answers
        .as_array()?
        .iter()
        .find(|a| a["question"].as_i64() == Some(question))
        .and_then(|a| a["answer"].as_str())
        .filter(|s| !s.is_empty() && !crate::domain::orders::file_answers::is_file(s))
        .map(str::to_owned)
}

/// The buyer's address as printed: company, name, street, postal code and city, state,
/// country, and the VAT ID.
fn buyer_block(a: &dyn Fn(&str) -> String, name: &str, words: &Words) -> String {
    let place = [a("zipcode"), a("city"), a("state")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut lines = vec![
        a("company"),
        name.to_owned(),
        a("street"),
        place,
        a("country"),
    ];
    let vat_id = a("vat_id");
    if !vat_id.is_empty() {
        lines.push(format!("{} {vat_id}", words.vat_id));
    }
    lines
        .into_iter()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The words an invoice's snapshot uses, in English or German.
pub struct Words {
    german: bool,
    /// "VAT ID:".
    pub vat_id: &'static str,
}

impl Words {
    /// The words of a language (German for `de` and its forms, else English).
    pub fn of(locale: &str) -> Self {
        let german = locale == "de" || locale.starts_with("de-");
        Self {
            german,
            vat_id: if german { "USt-IdNr.:" } else { "VAT ID:" },
        }
    }

    fn attendee(&self, name: &str) -> String {
        match self.german {
            true => format!("Teilnehmer*in: {name}"),
            false => format!("Attendee: {name}"),
        }
    }

    fn date(&self, name: &str, day: NaiveDate) -> String {
        match self.german {
            true => format!("Termin: {name} – {}", day.format("%d.%m.%Y")),
            false => format!("Date: {name} – {}", day.format("%Y-%m-%d")),
        }
    }

    fn pay_before(&self, day: NaiveDate) -> String {
        match self.german {
            true => format!("Bitte bezahlen Sie bis zum {}.", day.format("%d.%m.%Y")),
            false => format!(
                "Please complete your payment before {}.",
                day.format("%Y-%m-%d")
            ),
        }
    }

    fn fee(&self, fee_type: &str) -> &'static str {
        match (fee_type, self.german) {
            ("payment", false) => "Payment fee",
            ("payment", true) => "Zahlungsgebühr",
            ("shipping", false) => "Shipping fee",
            ("shipping", true) => "Versandkosten",
            ("service", false) => "Service fee",
            ("service", true) => "Servicegebühr",
            ("cancellation", false) => "Cancellation fee",
            ("cancellation", true) => "Stornogebühr",
            ("insurance", false) => "Insurance fee",
            ("insurance", true) => "Versicherung",
            ("late", false) => "Late fee",
            ("late", true) => "Säumnisgebühr",
            ("giftcard", false) => "Gift card",
            ("giftcard", true) => "Geschenkgutschein",
            (_, false) => "Other fees",
            (_, true) => "Sonstige Gebühren",
        }
    }
}
