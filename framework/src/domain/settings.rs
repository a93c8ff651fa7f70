//! Settings with inheritance: a registry of typed keys, and their values stored per
//! organizer and per event. An event's value wins over its organizer's, which wins over the
//! key's default. Plugins declare their own keys into the same registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set, sea_query::OnConflict,
};
use serde_json::{Value, json};

use crate::db::entities::{event, setting};
use crate::domain::cache::{Cache, EventSettings};
use crate::values::reldate::RelativeDate;

/// The kind of value a setting holds, and how it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingType {
    /// `true` or `false`.
    Bool,
    /// A whole number within bounds. Every integer setting has both: numbers feed date
    /// arithmetic and counts, where an unbounded value overflows.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// Any text of at most `max_length` characters. Every text setting has a limit: values
    /// are stored and sent back with every settings answer, and pretix's settings forms bound
    /// their fields too.
    Text {
        /// Most characters (not bytes) of the value.
        max_length: usize,
    },
    /// Text in several languages: an object of language code to text (each at most
    /// `max_length` characters), or one text for every language.
    I18nText {
        /// Most characters of each language's text.
        max_length: usize,
    },
    /// An e-mail address (at most [`MAX_EMAIL_CHARS`] characters) or the empty string.
    Email,
    /// An `http(s)://` URL (at most [`MAX_URL_CHARS`] characters) or the empty string.
    Url,
    /// A language code such as `en` or `de-formal` (at most [`MAX_LOCALE_CHARS`] characters).
    Locale,
    /// A list of at most [`MAX_LOCALES`] language codes.
    LocaleList,
    /// One of the given values.
    Choice(&'static [&'static str]),
    /// A colour as pages write it in their stylesheet: `#` and six hexadecimal digits.
    Colour,
    /// An amount or a percentage, as pretix's decimal settings take it: a text such as
    /// `"2.50"` of at most ten whole digits and two decimal places.
    Decimal,
    /// A date fixed or relative to the event's dates ([`RelativeDate`]), or `null` for none.
    RelativeDate,
}

/// The number a [`SettingType::Decimal`] setting holds (zero for anything unreadable, which
/// a write refuses).
pub fn decimal(value: &Value) -> rust_decimal::Decimal {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_default()
}

/// Whether `s` is a decimal such as `"2.50"`: at most ten whole digits and two decimals.
fn is_decimal(s: &str) -> bool {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    !whole.is_empty()
        && whole.len() <= 10
        && frac.len() <= 2
        && whole
            .chars()
            .chain(frac.chars())
            .all(|c| c.is_ascii_digit())
}

/// Whether `s` is `#` and six hexadecimal digits: a colour that is safe in a stylesheet.
pub fn is_colour(s: &str) -> bool {
    s.len() == COLOUR_CHARS && s.starts_with('#') && s[1..].chars().all(|c| c.is_ascii_hexdigit())
}

/// Characters of a colour: `#` and six hexadecimal digits.
pub const COLOUR_CHARS: usize = 7;

/// The pages' colour unless an organizer or event chooses its own (`primary_color`).
pub const BRAND_COLOUR: &str = "#24292f";

/// Most characters of an e-mail address: Django's `EmailField`, which pretix uses.
pub const MAX_EMAIL_CHARS: usize = 254;

/// Most characters of a URL: the longest that every browser follows.
pub const MAX_URL_CHARS: usize = 2_000;

/// Most characters of a language code: pretix's `Order.locale`.
pub const MAX_LOCALE_CHARS: usize = 32;

/// Most entries of a list of language codes: far more than there are languages to offer.
pub const MAX_LOCALES: usize = 100;

impl SettingType {
    /// The smallest and largest value of an integer setting.
    pub fn bounds(self) -> Option<(i64, i64)> {
        match self {
            SettingType::Int { min, max } => Some((min, max)),
            _ => None,
        }
    }

    /// Most characters of a string setting's value (of each entry, for a list).
    pub fn max_length(self) -> Option<usize> {
        match self {
            SettingType::Text { max_length } | SettingType::I18nText { max_length } => {
                Some(max_length)
            }
            SettingType::Email => Some(MAX_EMAIL_CHARS),
            SettingType::Url => Some(MAX_URL_CHARS),
            SettingType::Locale | SettingType::LocaleList => Some(MAX_LOCALE_CHARS),
            SettingType::Colour => Some(COLOUR_CHARS),
            SettingType::Decimal => Some(13),
            SettingType::RelativeDate => Some(crate::values::reldate::MAX_CHARS),
            SettingType::Bool | SettingType::Int { .. } | SettingType::Choice(_) => None,
        }
    }
}

/// Which level a setting can be set on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Organizer and event (the event inherits from its organizer).
    Both,
    /// Organizer only.
    Organizer,
    /// Event only: what pretix keeps per event, such as payment provider settings.
    Event,
}

/// How far the writer of an organizer's settings reaches over its events: the caller's event
/// scope, reduced to what the settings need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every event of the organizer, present and future.
    AllEvents,
    /// Only some of its events (or none).
    SomeEvents,
}

/// Why a change of settings was refused; nothing was written then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The writer may not change these keys here: events it does not reach inherit them.
    Forbidden(Vec<String>),
    /// Per key: unknown, not settable on this level, or an invalid value.
    Invalid(BTreeMap<String, String>),
}

/// A plugin's own check of a setting's value, run after the type's; the error is fit for a
/// field error.
#[derive(Clone)]
pub struct Validator(Arc<Check>);

/// The function behind a [`Validator`].
type Check = dyn Fn(&Value) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

/// A declared setting.
#[derive(Debug, Clone)]
pub struct SettingDef {
    /// Key in the settings object.
    pub key: &'static str,
    /// Value type and check.
    pub ty: SettingType,
    /// Value when set on no level.
    pub default: Value,
    /// Short human name.
    pub label: &'static str,
    /// Longer explanation.
    pub help_text: &'static str,
    /// Where it can be set.
    pub level: Level,
    /// Whether a device may read it (check-in apps need some settings).
    pub device_readable: bool,
    /// A check beyond the type's.
    pub validator: Option<Validator>,
    /// A credential (an API key, a signing secret): answers show [`SECRET_SHOWN`] in its
    /// place once it is set, and writing that text back keeps the value.
    pub secret: bool,
}

/// What answers show in place of a secret setting's value once it is set.
pub const SECRET_SHOWN: &str = "********";

impl SettingDef {
    /// A setting on both levels, not readable by devices.
    pub fn new(
        key: &'static str,
        ty: SettingType,
        default: Value,
        label: &'static str,
        help_text: &'static str,
    ) -> Self {
        Self {
            key,
            ty,
            default,
            label,
            help_text,
            level: Level::Both,
            device_readable: false,
            validator: None,
            secret: false,
        }
    }

    /// A credential, never shown: see [`SettingDef::secret`].
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// The value as answers show it: a secret's as [`SECRET_SHOWN`] once set.
    pub fn shown(&self, value: Value) -> Value {
        match value {
            Value::String(s) if self.secret && !s.is_empty() => SECRET_SHOWN.into(),
            value => value,
        }
    }

    /// Checks values with `check` too, after the type's check.
    pub fn validate(
        mut self,
        check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.validator = Some(Validator(Arc::new(check)));
        self
    }

    /// Only on this level.
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }

    /// Readable by devices.
    pub fn device_readable(mut self) -> Self {
        self.device_readable = true;
        self
    }

    /// Whether events inherit this setting from their organizer.
    pub fn is_inherited(&self) -> bool {
        self.level == Level::Both
    }

    /// Whether a writer reaching `reach` may set or unset this setting on `scope`. A value
    /// on the organizer that events inherit takes effect in every event, including those the
    /// writer cannot see (a bank account, a reply-to address), so it needs all of them; on
    /// an event, access to that event (checked by the caller) is enough.
    pub fn writable_by(&self, scope: Scope, reach: Reach) -> bool {
        match scope {
            Scope::Organizer(_) => reach == Reach::AllEvents || !self.is_inherited(),
            Scope::Event { .. } => true,
        }
    }

    /// The value that takes effect, from the stored one if any. An integer stored before
    /// its bounds existed counts as the nearest bound, and a stored non-integer as the
    /// default, so that readers never compute with a value a write would refuse.
    pub fn effective(&self, stored: Option<&Value>) -> Value {
        let Some(value) = stored else {
            return self.default.clone();
        };
        match self.ty {
            SettingType::Int { min, max } => {
                // A JSON number above i64::MAX reads as u64 only; it is above any bound.
                match value.as_i64().or_else(|| value.as_u64().map(|_| i64::MAX)) {
                    Some(n) => json!(n.clamp(min, max)),
                    None => self.default.clone(),
                }
            }
            _ => value.clone(),
        }
    }

    /// Checks a value; the error is fit for a field error.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        self.check_type(value)?;
        match &self.validator {
            Some(Validator(check)) => check(value),
            None => Ok(()),
        }
    }

    fn check_type(&self, value: &Value) -> Result<(), String> {
        self.check_length(value)?;
        match (self.ty, value) {
            (SettingType::Bool, Value::Bool(_)) => Ok(()),
            (SettingType::Bool, _) => Err("Must be a valid boolean.".into()),
            (SettingType::Int { min, max }, v) => match whole_number(v) {
                Some(n) if n < min as f64 => Err(format!(
                    "Ensure this value is greater than or equal to {min}."
                )),
                Some(n) if n > max as f64 => {
                    Err(format!("Ensure this value is less than or equal to {max}."))
                }
                Some(_) if v.is_i64() => Ok(()),
                _ => Err("A valid integer is required.".into()),
            },
            (SettingType::Text { .. } | SettingType::I18nText { .. }, Value::String(_)) => Ok(()),
            (SettingType::I18nText { .. }, Value::Object(texts))
                if texts.len() <= MAX_LOCALES
                    && texts.iter().all(|(k, v)| is_locale(k) && v.is_string()) =>
            {
                Ok(())
            }
            (SettingType::I18nText { .. }, _) => {
                Err("Enter a text, or an object of language codes to texts.".into())
            }
            (SettingType::Email, Value::String(s)) if s.is_empty() || is_email(s) => Ok(()),
            (SettingType::Email, _) => Err("Enter a valid email address.".into()),
            (SettingType::Url, Value::String(s))
                if s.is_empty() || s.starts_with("https://") || s.starts_with("http://") =>
            {
                Ok(())
            }
            (SettingType::Url, _) => Err("Enter a valid URL.".into()),
            (SettingType::Locale, Value::String(s)) if is_locale(s) => Ok(()),
            (SettingType::Locale, _) => Err("Enter a valid language code.".into()),
            (SettingType::LocaleList, Value::Array(list))
                if !list.is_empty() && list.iter().all(|v| v.as_str().is_some_and(is_locale)) =>
            {
                Ok(())
            }
            (SettingType::LocaleList, _) => Err("Enter a non-empty list of language codes.".into()),
            (SettingType::Choice(choices), Value::String(s)) if choices.contains(&s.as_str()) => {
                Ok(())
            }
            (SettingType::Choice(_), v) => Err(format!("{v} is not a valid choice.")),
            (SettingType::Colour, Value::String(s)) if is_colour(s) => Ok(()),
            (SettingType::Colour, _) => {
                Err("Enter a colour as # and six hexadecimal digits, e.g. #24292f.".into())
            }
            (SettingType::Decimal, Value::String(s)) if is_decimal(s) => Ok(()),
            (SettingType::Decimal, _) => {
                Err("A decimal number such as \"1.50\" (at most two decimal places).".into())
            }
            (SettingType::RelativeDate, Value::Null) => Ok(()),
            (SettingType::RelativeDate, Value::String(s)) if RelativeDate::parse(s).is_some() => {
                Ok(())
            }
            (SettingType::RelativeDate, _) => Err(
                "Enter a date and time, or a relative date such as \"RELDATE/2/-/event__date_from/\".".into(),
            ),
            (SettingType::Text { .. }, _) => Err("Not a valid string.".into()),
        }
    }

    /// The length rules of string values, worded as DRF words them, before the type's check
    /// looks at the value's content.
    fn check_length(&self, value: &Value) -> Result<(), String> {
        let Some(max) = self.ty.max_length() else {
            return Ok(());
        };
        let too_long = |s: &str| s.chars().nth(max).is_some();
        match value {
            Value::String(s) if too_long(s) => Err(format!(
                "Ensure this field has no more than {max} characters."
            )),
            Value::Array(list) if list.len() > MAX_LOCALES => Err(format!(
                "Ensure this field has no more than {MAX_LOCALES} elements."
            )),
            Value::Array(list) if list.iter().any(|v| v.as_str().is_some_and(too_long)) => Err(
                format!("Ensure this field has no more than {max} characters."),
            ),
            Value::Object(texts) if texts.values().any(|v| v.as_str().is_some_and(too_long)) => {
                Err(format!(
                    "Ensure this field has no more than {max} characters."
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A JSON number without a fraction, as a float so that numbers beyond i64 (`1e20`) compare
/// with the bounds too.
fn whole_number(v: &Value) -> Option<f64> {
    v.as_f64().filter(|n| n.is_finite() && n.fract() == 0.0)
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.contains(char::is_whitespace)
}

fn is_locale(s: &str) -> bool {
    let mut parts = s.split('-');
    parts
        .next()
        .is_some_and(|p| (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Every declared setting.
#[derive(Debug, Clone)]
pub struct SettingsRegistry {
    defs: Vec<SettingDef>,
}

impl Default for SettingsRegistry {
    fn default() -> Self {
        Self {
            defs: core_settings(),
        }
    }
}

impl SettingsRegistry {
    /// Declares a setting (a plugin's); a key declared twice keeps the later declaration.
    pub fn declare(&mut self, def: SettingDef) {
        self.defs.retain(|d| d.key != def.key);
        self.defs.push(def);
    }

    /// The declaration of a key.
    pub fn get(&self, key: &str) -> Option<&SettingDef> {
        self.defs.iter().find(|d| d.key == key)
    }

    /// The declarations settable on this level, sorted by key.
    pub fn on(&self, scope: Scope) -> Vec<&SettingDef> {
        let mut defs: Vec<&SettingDef> = self
            .defs
            .iter()
            .filter(|d| match scope {
                Scope::Organizer(_) => d.level != Level::Event,
                Scope::Event { .. } => d.level != Level::Organizer,
            })
            .collect();
        defs.sort_by_key(|d| d.key);
        defs
    }
}

fn core_settings() -> Vec<SettingDef> {
    use SettingType::*;
    vec![
        SettingDef::new(
            "locales",
            LocaleList,
            json!(["en"]),
            "Available languages",
            "Languages the shop and e-mails are offered in.",
        )
        .device_readable(),
        SettingDef::new(
            "locale",
            Locale,
            json!("en"),
            "Default language",
            "Language used when the customer's is not available.",
        )
        .device_readable(),
        // pretix keeps it on organizers and events alike; as the reply-to address of every
        // event that inherits it, it needs all events to be written on the organizer.
        SettingDef::new(
            "contact_mail",
            Email,
            json!(""),
            "Contact address",
            "Shown to customers and used as reply-to address of e-mails.",
        ),
        SettingDef::new(
            "imprint_url",
            Url,
            json!(""),
            "Imprint URL",
            "Link to the legal imprint, shown in the shop footer.",
        ),
        SettingDef::new(
            "privacy_url",
            Url,
            json!(""),
            "Privacy policy URL",
            "Link to the privacy policy, shown at checkout.",
        ),
        SettingDef::new(
            "max_items_per_order",
            // pretix: at least 1, no maximum; 10,000 is beyond any single order.
            Int {
                min: 1,
                max: 10_000,
            },
            json!(10),
            "Maximum number of items per order",
            "Add-on products are not counted.",
        ),
        SettingDef::new(
            "reservation_time",
            // pretix: 0 to a week. A cart must expire in the future, so 0 would refuse
            // every cart here.
            Int {
                min: 1,
                max: 7 * 24 * 60,
            },
            json!(30),
            "Reservation period",
            "Minutes a cart reserves its products.",
        ),
        SettingDef::new(
            "ticket_download",
            Bool,
            json!(false),
            "Allow customers to download tickets",
            "Offers the tickets on the order page (the API and mails do not ask).",
        ),
        SettingDef::new(
            "ticket_download_addons",
            Bool,
            json!(false),
            "Tickets for add-on products",
            "Add-on products get tickets of their own.",
        ),
        SettingDef::new(
            "ticket_download_nonadm",
            Bool,
            json!(true),
            "Tickets for non-admission products",
            "Products that admit nobody get tickets too.",
        ),
        SettingDef::new(
            "ticket_download_pending",
            Bool,
            json!(false),
            "Tickets for pending orders",
            "Orders not yet paid may download their tickets.",
        ),
        SettingDef::new(
            "mail_attach_tickets",
            Bool,
            json!(true),
            "Attach tickets to e-mails",
            "The e-mails of paid and free orders carry the tickets as files, unless too large.",
        ),
        SettingDef::new(
            "payment_term_days",
            // pretix allows a million days; nearly three years is more than any term needs.
            Int { min: 0, max: 1000 },
            json!(14),
            "Payment term in days",
            "Days a pending order waits for payment before it expires.",
        ),
        SettingDef::new(
            "payment_term_expire_automatically",
            Bool,
            json!(true),
            "Expire unpaid orders automatically",
            "Pending orders whose term has passed stop holding quota.",
        ),
        SettingDef::new(
            "payment_manual__enabled",
            Bool,
            json!(false),
            "Enable manual payment",
            "Payments handled outside Tessera and confirmed through the API or by hand.",
        )
        // A payment provider's setting: pretix keeps those per event.
        .level(Level::Event),
        SettingDef::new(
            "waiting_list_enabled",
            Bool,
            json!(false),
            "Enable waiting list",
            "Customers can join a waiting list for sold-out products.",
        )
        .device_readable(),
        SettingDef::new(
            "waiting_list_hours",
            // pretix: at least 1, no maximum; a voucher valid for a year is the most useful.
            Int {
                min: 1,
                max: 365 * 24,
            },
            json!(48),
            "Waiting list response time",
            "Hours a voucher sent from the waiting list stays valid.",
        ),
        SettingDef::new(
            "waiting_list_auto",
            Bool,
            json!(true),
            "Send waiting list vouchers automatically",
            "Vouchers go out as soon as products become available.",
        ),
        SettingDef::new(
            "attendee_names_asked",
            Bool,
            json!(true),
            "Ask for attendee names",
            "Ask a name for every admission ticket.",
        )
        .device_readable(),
        SettingDef::new(
            "attendee_names_required",
            Bool,
            json!(false),
            "Require attendee names",
            "Attendee names must be given.",
        )
        .device_readable(),
        SettingDef::new(
            "attendee_emails_asked",
            Bool,
            json!(false),
            "Ask for attendee e-mail addresses",
            "Ask an e-mail address for every admission ticket.",
        ),
        SettingDef::new(
            "invoice_address_asked",
            Bool,
            json!(true),
            "Ask for invoice address",
            "Customers can enter an invoice address.",
        ),
        SettingDef::new(
            "invoice_address_required",
            Bool,
            json!(false),
            "Require invoice address",
            "An invoice address must be given.",
        ),
        SettingDef::new(
            "invoice_address_vatid",
            Bool,
            json!(false),
            "Ask for VAT ID",
            "Business customers can enter a VAT ID (which the EU reverse charge needs).",
        ),
    ]
    .into_iter()
    .chain(invoice_settings())
    .chain(vec![
        SettingDef::new(
            "show_quota_left",
            Bool,
            json!(false),
            "Show number of tickets left",
            "Publicly show how many tickets of each product are left.",
        ),
        SettingDef::new(
            "show_times",
            Bool,
            json!(true),
            "Show event times",
            "Show the times of the event, not only the dates.",
        ),
        SettingDef::new(
            "primary_color",
            Colour,
            json!(BRAND_COLOUR),
            "Primary colour",
            "The colour of the pages' header and buttons, as #rrggbb.",
        ),
        SettingDef::new(
            "frontpage_text",
            I18nText { max_length: 10_000 },
            json!(""),
            "Frontpage text",
            "Shown on the event's shop page above the products.",
        )
        .level(Level::Event),
        SettingDef::new(
            "display_net_prices",
            Bool,
            json!(false),
            "Show net prices",
            "Show prices in the shop without taxes, with the tax shown beside them.",
        ),
        SettingDef::new(
            "voucher_explanation_text",
            I18nText { max_length: 10_000 },
            json!(""),
            "Voucher explanation",
            "Shown in the shop beside the field where a voucher code is entered.",
        )
        .level(Level::Event),
        SettingDef::new(
            "presale_has_ended_text",
            I18nText { max_length: 10_000 },
            json!(""),
            "End of presale text",
            "Shown in the shop once the sale has ended, in place of the standard message.",
        )
        .level(Level::Event),
        SettingDef::new(
            "cancel_allow_user",
            Bool,
            json!(true),
            "Customers can cancel unpaid orders",
            "Customers may cancel their orders while they are unpaid.",
        ),
    ])
    .chain(self_service_settings())
    .chain(vec![
        SettingDef::new(
            "checkout_email_helptext",
            // pretix keeps it in an unbounded text field; a help text needs far less.
            Text { max_length: 10_000 },
            json!(""),
            "E-mail help text",
            "Shown below the e-mail field at checkout.",
        ),
        SettingDef::new(
            "ticket_secret_generator",
            Choice(&["random", "pretix_sig1"]),
            json!("random"),
            "Ticket code generator",
            "How ticket secrets are made.",
        )
        .device_readable(),
        SettingDef::new(
            "event_list_type",
            Choice(&["list", "week", "calendar"]),
            json!("list"),
            "Default overview style",
            "How the organizer's public page lists events.",
        )
        .level(Level::Organizer),
        SettingDef::new(
            "giftcard_length",
            // As pretix.
            Int { min: 6, max: 64 },
            json!(16),
            "Gift card code length",
            "Number of characters of new gift card codes.",
        )
        .level(Level::Organizer),
    ])
    .collect()
}

/// pretix's invoice settings, with the defaults pretix gives new events.
fn invoice_settings() -> Vec<SettingDef> {
    use SettingType::*;
    let text =
        |key, label, help| SettingDef::new(key, Text { max_length: 190 }, json!(""), label, help);
    let long_text = |key, label, help| {
        SettingDef::new(key, I18nText { max_length: 10_000 }, json!(""), label, help)
    };
    vec![
        SettingDef::new(
            "invoice_generate",
            Choice(&["False", "admin", "user", "True", "paid", "user_paid"]),
            json!("False"),
            "Generate invoices",
            "Never, manually only, on the customer's request, for every order, or when paid.",
        ),
        SettingDef::new(
            "invoice_generate_only_business",
            Bool,
            json!(false),
            "Only for business customers",
            "Invoices are made only for orders with a business invoice address.",
        ),
        SettingDef::new(
            "invoice_numbers_consecutive",
            Bool,
            json!(true),
            "Consecutive invoice numbers",
            "Numbers count up per organizer and prefix; otherwise they are the order code and a count.",
        ),
        SettingDef::new(
            "invoice_numbers_counter_length",
            Int { min: 1, max: 15 },
            json!(5),
            "Minimum length of invoice numbers",
            "Consecutive numbers are padded with zeros to this length.",
        ),
        text(
            "invoice_numbers_prefix",
            "Invoice number prefix",
            "Empty for the event's short form and a dash. Date codes such as %Y are filled in.",
        )
        .validate(prefix_check),
        text(
            "invoice_numbers_prefix_cancellations",
            "Cancellation number prefix",
            "Empty for the invoices' prefix.",
        )
        .validate(prefix_check),
        SettingDef::new(
            "invoice_include_free",
            Bool,
            json!(true),
            "Show free products on invoices",
            "Lines of products that cost nothing are printed too.",
        ),
        SettingDef::new(
            "invoice_attendee_name",
            Bool,
            json!(true),
            "Show attendee names on invoices",
            "Each line names its attendee.",
        ),
        SettingDef::new(
            "invoice_event_location",
            Bool,
            json!(false),
            "Show event location on invoices",
            "The event's location is printed.",
        ),
        SettingDef::new(
            "invoice_include_expire_date",
            Bool,
            json!(true),
            "Show expiration date of order",
            "Invoices of unpaid orders say when payment is due.",
        ),
        SettingDef::new(
            "invoice_period",
            Choice(&[
                "auto",
                "auto_no_event",
                "event_date",
                "order_date",
                "invoice_date",
            ]),
            json!("auto"),
            "Date of service",
            "What each line gives as its period of service.",
        ),
        SettingDef::new(
            "invoice_regenerate_allowed",
            Bool,
            json!(false),
            "Allow to update existing invoices",
            "An invoice of today or yesterday may be made again under its number.",
        ),
        SettingDef::new(
            "invoice_reissue_after_modify",
            Bool,
            json!(false),
            "Reissue after address changes",
            "A customer's change of their invoice address cancels and reissues the invoice.",
        ),
        SettingDef::new(
            "invoice_language",
            Text {
                max_length: MAX_LOCALE_CHARS,
            },
            json!("__user__"),
            "Invoice language",
            "A language code, or __user__ for the customer's.",
        )
        .validate(|v| match v.as_str() {
            Some("__user__") => Ok(()),
            Some(s) if is_locale(s) => Ok(()),
            _ => Err("Enter a valid language code or __user__.".into()),
        }),
        SettingDef::new(
            "invoice_email_attachment",
            Bool,
            json!(true),
            "Attach invoices to e-mails",
            "Order e-mails carry the order's invoice as a PDF file.",
        ),
        SettingDef::new(
            "invoice_renderer",
            Text { max_length: 190 },
            json!("modern1"),
            "Invoice style",
            "The renderer of invoice files; an unknown one falls back to the built-in.",
        ),
        SettingDef::new(
            "invoice_einvoice_embed",
            Bool,
            json!(false),
            "Embed e-invoices in PDF invoices",
            "Invoice PDFs are Factur-X/ZUGFeRD files (PDF/A-3) carrying the EN 16931 invoice.",
        ),
        SettingDef::new(
            "invoice_address_from",
            Text { max_length: 1000 },
            json!(""),
            "Your address",
            "Street and further lines of the issuer's address.",
        ),
        text(
            "invoice_address_from_name",
            "Company name",
            "The issuer's name.",
        ),
        text(
            "invoice_address_from_zipcode",
            "ZIP code",
            "The issuer's postal code.",
        ),
        text("invoice_address_from_city", "City", "The issuer's city."),
        text("invoice_address_from_state", "State", "The issuer's state."),
        text(
            "invoice_address_from_country",
            "Country",
            "The issuer's country (ISO 3166 code).",
        )
        .validate(|v| match v.as_str() {
            Some(s)
                if s.is_empty() || (s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())) =>
            {
                Ok(())
            }
            _ => Err("Use a two-letter ISO 3166 country code.".into()),
        }),
        text(
            "invoice_address_from_tax_id",
            "Domestic tax ID",
            "The issuer's tax number.",
        ),
        text(
            "invoice_address_from_phone",
            "Phone",
            "The issuer's phone number, which XRechnung e-invoices name as the seller's contact.",
        ),
        text(
            "invoice_address_from_vat_id",
            "EU VAT ID",
            "The issuer's VAT ID.",
        ),
        long_text(
            "invoice_introductory_text",
            "Introductory text",
            "Printed above the lines of every invoice.",
        ),
        long_text(
            "invoice_additional_text",
            "Additional text",
            "Printed below the lines of every invoice.",
        ),
        long_text(
            "invoice_footer_text",
            "Footer",
            "Printed at the bottom of every page.",
        ),
    ]
}

/// A number prefix's rule: date codes that chrono can fill in.
fn prefix_check(v: &Value) -> Result<(), String> {
    let prefix = v.as_str().unwrap_or_default();
    if chrono::format::StrftimeItems::new(prefix).any(|i| matches!(i, chrono::format::Item::Error))
    {
        return Err("The prefix has a date code that is not known.".into());
    }
    Ok(())
}

/// Whose settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// An organizer's.
    Organizer(i64),
    /// An event's, inheriting from its organizer.
    Event {
        /// The organizer.
        organizer_id: i64,
        /// The event.
        event_id: i64,
    },
}

impl Scope {
    fn own(self) -> (&'static str, i64) {
        match self {
            Scope::Organizer(id) => ("organizer", id),
            Scope::Event { event_id, .. } => ("event", event_id),
        }
    }
}

async fn stored(
    db: &impl ConnectionTrait,
    scope: &str,
    owner: i64,
) -> Result<BTreeMap<String, Value>, DbErr> {
    Ok(setting::Entity::find()
        .filter(setting::Column::Scope.eq(scope))
        .filter(setting::Column::OwnerId.eq(owner))
        .all(db)
        .await?
        .into_iter()
        .map(|r| (r.key, r.value))
        .collect())
}

/// The effective settings of an event, from the process cache when it holds them for
/// `generation` (read before anything else of the request), kept there otherwise.
pub async fn of_event(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
) -> Result<Arc<EventSettings>, DbErr> {
    if let Some(kept) = cache.and_then(|(c, g)| c.settings(g, ev.id)) {
        return Ok(kept);
    }
    let scope = Scope::Event {
        organizer_id: ev.organizer_id,
        event_id: ev.id,
    };
    let values = Arc::new(resolve(db, registry, scope).await?);
    if let Some((c, g)) = cache {
        c.keep_settings(g, ev.id, values.clone());
    }
    Ok(values)
}

/// The event's languages (its `locales` setting), from the cache when it holds them.
pub async fn languages_of(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    cache: Option<(&Cache, u64)>,
    ev: &event::Model,
) -> Result<Vec<String>, DbErr> {
    Ok(locales(&*of_event(db, registry, cache, ev).await?))
}

/// The colour of an event's pages (`primary_color`, as stored only when valid).
pub fn brand(values: &EventSettings) -> &str {
    values
        .get("primary_color")
        .and_then(Value::as_str)
        .filter(|c| is_colour(c))
        .unwrap_or(BRAND_COLOUR)
}

/// The languages (`locales`) among an event's effective settings.
pub fn locales(values: &EventSettings) -> Vec<String> {
    values
        .get("locales")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The effective value of every setting of a scope.
pub async fn resolve(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    scope: Scope,
) -> Result<BTreeMap<&'static str, Value>, DbErr> {
    let organizer_id = match scope {
        Scope::Organizer(id)
        | Scope::Event {
            organizer_id: id, ..
        } => id,
    };
    let org_values = stored(db, "organizer", organizer_id).await?;
    let event_values = match scope {
        Scope::Event { event_id, .. } => stored(db, "event", event_id).await?,
        Scope::Organizer(_) => BTreeMap::new(),
    };
    Ok(registry
        .on(scope)
        .into_iter()
        .map(|d| {
            let stored = event_values.get(d.key).or_else(|| org_values.get(d.key));
            (d.key, d.effective(stored))
        })
        .collect())
}

/// Sets (or with `null` unsets) keys on the scope's own level for the system itself (the
/// admin CLI, demo data), which reaches every event: see [`update_as`].
pub async fn update(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    scope: Scope,
    changes: &serde_json::Map<String, Value>,
) -> Result<Result<(), BTreeMap<String, String>>, DbErr> {
    Ok(
        match update_as(db, registry, scope, Reach::AllEvents, changes).await? {
            Ok(()) => Ok(()),
            Err(Refused::Invalid(errors)) => Err(errors),
            Err(Refused::Forbidden(keys)) => Err(keys
                .into_iter()
                .map(|k| (k, FORBIDDEN.to_owned()))
                .collect()),
        },
    )
}

const FORBIDDEN: &str = "Only a team with access to all events can change this setting here.";

/// The keys of `changes` that a writer reaching `reach` may not set or unset on `scope`
/// (unknown keys are left to validation).
fn forbidden_keys(
    registry: &SettingsRegistry,
    scope: Scope,
    reach: Reach,
    changes: &serde_json::Map<String, Value>,
) -> Vec<String> {
    changes
        .keys()
        .filter(|k| {
            registry
                .get(k)
                .is_some_and(|d| !d.writable_by(scope, reach))
        })
        .cloned()
        .collect()
}

/// Sets (or with `null` unsets) keys on the scope's own level for a writer reaching `reach`,
/// all or none: a key the writer may not change refuses the whole request, every other
/// error is returned per key, and nothing is written then.
pub async fn update_as(
    db: &impl ConnectionTrait,
    registry: &SettingsRegistry,
    scope: Scope,
    reach: Reach,
    changes: &serde_json::Map<String, Value>,
) -> Result<Result<(), Refused>, DbErr> {
    let forbidden = forbidden_keys(registry, scope, reach, changes);
    if !forbidden.is_empty() {
        return Ok(Err(Refused::Forbidden(forbidden)));
    }
    let settable = registry.on(scope);
    let mut errors = BTreeMap::new();
    for (key, value) in changes {
        match settable.iter().find(|d| d.key == key) {
            None => {
                errors.insert(
                    key.clone(),
                    "This setting does not exist or cannot be set here.".to_owned(),
                );
            }
            Some(_) if value.is_null() => {}
            Some(def) if def.secret && value == SECRET_SHOWN => {}
            Some(def) => {
                if let Err(e) = def.check(value) {
                    errors.insert(key.clone(), e);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Ok(Err(Refused::Invalid(errors)));
    }
    let (scope_name, owner) = scope.own();
    for (key, value) in changes {
        if value == SECRET_SHOWN && settable.iter().any(|d| d.key == key && d.secret) {
            continue;
        }
        if value.is_null() {
            setting::Entity::delete_many()
                .filter(setting::Column::Scope.eq(scope_name))
                .filter(setting::Column::OwnerId.eq(owner))
                .filter(setting::Column::Key.eq(key.as_str()))
                .exec(db)
                .await?;
            continue;
        }
        setting::Entity::insert(setting::ActiveModel {
            scope: Set(scope_name.to_owned()),
            owner_id: Set(owner),
            key: Set(key.clone()),
            value: Set(value.clone()),
        })
        .on_conflict(
            OnConflict::columns([
                setting::Column::Scope,
                setting::Column::OwnerId,
                setting::Column::Key,
            ])
            .update_column(setting::Column::Value)
            .to_owned(),
        )
        .exec(db)
        .await?;
    }
    Ok(Ok(()))
}

/// Copies the settings stored on one event to another (for cloning).
pub async fn copy_event_settings(
    db: &impl ConnectionTrait,
    from_event: i64,
    to_event: i64,
) -> Result<(), DbErr> {
    let rows = stored(db, "event", from_event).await?;
    if rows.is_empty() {
        return Ok(());
    }
    setting::Entity::insert_many(rows.into_iter().map(|(key, value)| setting::ActiveModel {
        scope: Set("event".to_owned()),
        owner_id: Set(to_event),
        key: Set(key),
        value: Set(value),
    }))
    .exec(db)
    .await?;
    Ok(())
}

/// Removes every setting of an event (when it is deleted).
pub async fn delete_event_settings(db: &impl ConnectionTrait, event_id: i64) -> Result<(), DbErr> {
    setting::Entity::delete_many()
        .filter(setting::Column::Scope.eq("event"))
        .filter(setting::Column::OwnerId.eq(event_id))
        .exec(db)
        .await?;
    Ok(())
}

/// What buyers may do to their own orders (pretix's names and defaults): cancel them,
/// unpaid or paid, until a deadline and keeping a fee; change their answers until a
/// deadline.
fn self_service_settings() -> Vec<SettingDef> {
    use SettingType::{Bool, Choice, Decimal, RelativeDate};
    let keep = |key, label, help| SettingDef::new(key, Decimal, json!("0.00"), label, help);
    let until = |key, label, help| SettingDef::new(key, RelativeDate, Value::Null, label, help);
    vec![
        until(
            "cancel_allow_user_until",
            "Do not allow cancellations after",
            "The last moment customers may cancel an unpaid or free order.",
        ),
        keep(
            "cancel_allow_user_unpaid_keep",
            "Charge a fixed cancellation fee",
            "Kept when a customer cancels an unpaid order, in the event's currency.",
        ),
        SettingDef::new(
            "cancel_allow_user_unpaid_keep_fees",
            Bool,
            json!(false),
            "Charge payment, shipping and service fees",
            "The order's fees are kept when a customer cancels an unpaid order.",
        ),
        keep(
            "cancel_allow_user_unpaid_keep_percentage",
            "Charge a percentual cancellation fee",
            "Percent of the rest of the total kept when a customer cancels an unpaid order.",
        ),
        SettingDef::new(
            "cancel_allow_user_paid",
            Bool,
            json!(false),
            "Customers can cancel their paid orders",
            "Customers may cancel paid orders; the rest of what they paid is refunded.",
        ),
        until(
            "cancel_allow_user_paid_until",
            "Do not allow cancellations of paid orders after",
            "The last moment customers may cancel a paid order.",
        ),
        keep(
            "cancel_allow_user_paid_keep",
            "Keep a fixed cancellation fee",
            "Kept when a customer cancels a paid order, in the event's currency.",
        ),
        SettingDef::new(
            "cancel_allow_user_paid_keep_fees",
            Bool,
            json!(false),
            "Keep payment, shipping and service fees",
            "The order's fees are kept when a customer cancels a paid order.",
        ),
        keep(
            "cancel_allow_user_paid_keep_percentage",
            "Keep a percentual cancellation fee",
            "Percent of the rest of the total kept when a customer cancels a paid order.",
        ),
        SettingDef::new(
            "cancel_allow_user_paid_refund_as_giftcard",
            Choice(&["off", "option", "force", "manually"]),
            json!("off"),
            "Refund as gift card",
            "off: refund the way it was paid; option: the customer chooses; force: always \
             to a new gift card; manually: the organizer refunds by hand.",
        ),
        SettingDef::new(
            "allow_modifications",
            Choice(&["no", "order", "attendee"]),
            json!("order"),
            "Allow customers to modify their information",
            "Whether customers may change attendee names, answers and the invoice address \
             after ordering.",
        ),
        SettingDef::new(
            "allow_modifications_after_checkin",
            Bool,
            json!(false),
            "Allow modifications after check-in",
            "Customers may still change their information once a ticket was checked in.",
        ),
        until(
            "last_order_modification_date",
            "Last date of modifications",
            "The last moment customers may change their information.",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_by_type() {
        let reg = SettingsRegistry::default();
        let check = |k: &str, v: Value| reg.get(k).expect(k).check(&v);
        assert!(check("waiting_list_enabled", json!(true)).is_ok());
        assert!(check("waiting_list_enabled", json!("yes")).is_err());
        assert!(check("payment_term_days", json!(3)).is_ok());
        assert!(check("payment_term_days", json!(-1)).is_err());
        assert!(check("contact_mail", json!("a@b.org")).is_ok());
        assert!(check("contact_mail", json!("nope")).is_err());
        assert!(check("locales", json!(["en", "de-formal"])).is_ok());
        assert!(check("locales", json!([])).is_err());
        assert!(check("imprint_url", json!("ftp://x")).is_err());
        assert!(check("cancel_allow_user_paid_keep", json!("1.50")).is_ok());
        assert!(check("cancel_allow_user_paid_keep", json!("2")).is_ok());
        assert!(check("cancel_allow_user_paid_keep", json!("1.505")).is_err());
        assert!(check("cancel_allow_user_paid_keep", json!("-1")).is_err());
        assert!(check("cancel_allow_user_paid_keep", json!(1.5)).is_err());
        assert!(check("cancel_allow_user_until", Value::Null).is_ok());
        let relative = json!("RELDATE/2/18:00:00/event__date_from/");
        assert!(check("last_order_modification_date", relative).is_ok());
        assert!(check("cancel_allow_user_until", json!("2027-01-01T10:00:00Z")).is_ok());
        assert!(check("cancel_allow_user_until", json!("next week")).is_err());
    }

    #[test]
    fn numbers_are_checked_against_both_bounds() {
        let reg = SettingsRegistry::default();
        let check = |k: &str, v: Value| reg.get(k).expect(k).check(&v);
        assert_eq!(check("payment_term_days", json!(1000)), Ok(()));
        assert_eq!(
            check("payment_term_days", json!(1001)),
            Err("Ensure this value is less than or equal to 1000.".into())
        );
        assert_eq!(
            check("payment_term_days", json!(u64::MAX)),
            Err("Ensure this value is less than or equal to 1000.".into())
        );
        assert_eq!(
            check("payment_term_days", json!(-1e30)),
            Err("Ensure this value is greater than or equal to 0.".into())
        );
        assert_eq!(
            check("payment_term_days", json!(3.5)),
            Err("A valid integer is required.".into())
        );
        assert_eq!(
            check("payment_term_days", json!(3.0)),
            Err("A valid integer is required.".into())
        );
    }

    #[test]
    fn string_values_are_checked_against_their_length_in_characters() {
        let reg = SettingsRegistry::default();
        let check = |k: &str, v: Value| reg.get(k).expect(k).check(&v);
        assert_eq!(
            check("checkout_email_helptext", json!("ä".repeat(10_000))),
            Ok(())
        );
        assert_eq!(
            check("checkout_email_helptext", json!("a".repeat(10_001))),
            Err("Ensure this field has no more than 10000 characters.".into())
        );
        let long_mail = format!("{}@example.org", "a".repeat(250));
        assert_eq!(
            check("contact_mail", json!(long_mail)),
            Err("Ensure this field has no more than 254 characters.".into())
        );
        let url = format!("https://example.org/{}", "a".repeat(2_000));
        assert!(check("imprint_url", json!(url)).is_err());
        assert!(check("locales", json!(vec!["en"; 101])).is_err());
        assert!(check("locales", json!([format!("en-{}", "a".repeat(40))])).is_err());
    }

    #[test]
    fn every_string_setting_has_a_length_that_holds_its_default() {
        for def in SettingsRegistry::default().defs {
            // Choices are bounded by their values.
            if def.default.is_string() && !matches!(def.ty, SettingType::Choice(_)) {
                assert!(def.ty.max_length().is_some(), "{}", def.key);
            }
            assert_eq!(def.check(&def.default), Ok(()), "{}", def.key);
        }
    }

    #[test]
    fn every_number_setting_has_bounds_that_hold_its_default() {
        for def in SettingsRegistry::default().defs {
            if let SettingType::Int { min, max } = def.ty {
                assert!(min <= max, "{}", def.key);
                assert_eq!(def.check(&def.default), Ok(()), "{}", def.key);
            }
        }
    }

    #[test]
    fn stored_numbers_beyond_the_bounds_take_effect_as_the_nearest_bound() {
        let reg = SettingsRegistry::default();
        let term = reg.get("payment_term_days").expect("declared");
        assert_eq!(
            term.effective(Some(&json!(1_000_000_000_000_i64))),
            json!(1000)
        );
        assert_eq!(term.effective(Some(&json!(u64::MAX))), json!(1000));
        assert_eq!(term.effective(Some(&json!(-5))), json!(0));
        assert_eq!(term.effective(Some(&json!(7))), json!(7));
        assert_eq!(term.effective(Some(&json!("soon"))), json!(14));
        assert_eq!(term.effective(None), json!(14));
        let mail = reg.get("contact_mail").expect("declared");
        assert_eq!(mail.effective(Some(&json!("a@b.org"))), json!("a@b.org"));
    }

    #[test]
    fn inherited_settings_are_written_on_the_organizer_only_by_writers_of_all_events() {
        let reg = SettingsRegistry::default();
        let org = Scope::Organizer(1);
        let ev = Scope::Event {
            organizer_id: 1,
            event_id: 2,
        };
        let mail = reg.get("contact_mail").expect("declared");
        assert!(mail.writable_by(org, Reach::AllEvents));
        assert!(!mail.writable_by(org, Reach::SomeEvents));
        assert!(mail.writable_by(ev, Reach::SomeEvents));
        let gift = reg.get("giftcard_length").expect("declared");
        assert!(gift.writable_by(org, Reach::SomeEvents), "not inherited");

        let changes = |v: Value| v.as_object().cloned().unwrap_or_default();
        let mixed = changes(json!({"contact_mail": null, "giftcard_length": 8, "nope": 1}));
        assert_eq!(
            forbidden_keys(&reg, org, Reach::SomeEvents, &mixed),
            vec!["contact_mail".to_owned()]
        );
        assert!(forbidden_keys(&reg, org, Reach::AllEvents, &mixed).is_empty());
        assert!(forbidden_keys(&reg, ev, Reach::SomeEvents, &mixed).is_empty());
    }

    #[test]
    fn payment_provider_settings_are_kept_per_event() {
        let reg = SettingsRegistry::default();
        let on_org: Vec<&str> = reg.on(Scope::Organizer(1)).iter().map(|d| d.key).collect();
        assert!(!on_org.contains(&"payment_manual__enabled"));
        assert!(on_org.contains(&"contact_mail"));
    }
}
