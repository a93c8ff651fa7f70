//! The text variables of a ticket, as pretix's layouts name them: the ticket, the product,
//! the attendee, the buyer, the event, times, the seat, answers to questions and meta data.
//! A variable a position has no value for is empty; an unknown name is empty too.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use serde_json::Value;

use crate::db::entities::{category, event, order, order_position, organizer, question, seat};
use crate::domain::cache::Cache;
use crate::domain::orders::display_name;
use crate::domain::orders::ticket::TicketNames;
use crate::pdf::{self, Source};
use crate::values::Money;
use crate::values::i18n::I18nString;

/// What tickets name beyond their positions' items, variations and dates: the organizer,
/// the items' categories and the event's questions. Loaded once for a set of tickets.
#[derive(Debug, Default)]
pub struct TicketDetails {
    organizer: String,
    categories: HashMap<i64, category::Model>,
    questions: HashMap<i64, question::Model>,
}

impl TicketDetails {
    /// The event's organizer, categories and questions: from the process cache, else read
    /// (three queries) and kept there for this configuration.
    pub async fn load(
        db: &impl ConnectionTrait,
        cache: Option<(&Cache, u64)>,
        ev: &event::Model,
    ) -> Result<Arc<Self>, DbErr> {
        let key = format!("ticket_details:{}", ev.id);
        if let Some(kept) = cache.and_then(|(c, g)| c.object::<Self>(g, &key)) {
            return Ok(kept);
        }
        let details = Arc::new(Self::read(db, ev).await?);
        if let Some((c, g)) = cache {
            c.keep_object(g, key, details.clone());
        }
        Ok(details)
    }

    async fn read(db: &impl ConnectionTrait, ev: &event::Model) -> Result<Self, DbErr> {
        let organizer = organizer::Entity::find_by_id(ev.organizer_id)
            .one(db)
            .await?
            .map(|o| o.name)
            .unwrap_or_default();
        let categories = category::Entity::find()
            .filter(category::Column::EventId.eq(ev.id))
            .all(db)
            .await?
            .into_iter()
            .map(|c| (c.id, c))
            .collect();
        let questions = question::Entity::find()
            .filter(question::Column::EventId.eq(ev.id))
            .all(db)
            .await?
            .into_iter()
            .map(|q| (q.id, q))
            .collect();
        Ok(TicketDetails {
            organizer,
            categories,
            questions,
        })
    }
}

/// One ticket and what it refers to.
#[derive(Debug, Clone, Copy)]
pub struct Ticket<'a> {
    /// The event.
    pub event: &'a event::Model,
    /// The order.
    pub order: &'a order::Model,
    /// The position the ticket is for.
    pub position: &'a order_position::Model,
    /// Every position of the order (its add-ons, the position it is an add-on to).
    pub positions: &'a [order_position::Model],
    /// The seat it holds, or its parent's.
    pub seat: Option<&'a seat::Model>,
    /// The first successful check-in of the ticket.
    pub first_scan: Option<DateTime<Utc>>,
    /// The items, variations and dates of the order.
    pub names: &'a TicketNames,
    /// The organizer, categories and questions.
    pub details: &'a TicketDetails,
}

/// Formats of dates and times by language (pretix's short formats).
struct Formats {
    date: &'static str,
    datetime: &'static str,
    time: &'static str,
    weekdays: [&'static str; 7],
}

fn formats(lang: &str) -> Formats {
    let english = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    match lang.split(['-', '_']).next().unwrap_or_default() {
        "de" => Formats {
            date: "%d.%m.%Y",
            datetime: "%d.%m.%Y %H:%M",
            time: "%H:%M",
            weekdays: [
                "Montag",
                "Dienstag",
                "Mittwoch",
                "Donnerstag",
                "Freitag",
                "Samstag",
                "Sonntag",
            ],
        },
        _ => Formats {
            date: "%Y-%m-%d",
            datetime: "%Y-%m-%d %H:%M",
            time: "%H:%M",
            weekdays: english,
        },
    }
}

impl Ticket<'_> {
    /// The position this one is an add-on to.
    fn parent(&self) -> Option<&order_position::Model> {
        let id = self.position.addon_to_id?;
        self.positions.iter().find(|p| p.id == id)
    }

    /// Every variable of the ticket, in `lang`, with times printed as of `now`.
    pub fn variables(&self, lang: &str, now: DateTime<Utc>) -> BTreeMap<String, String> {
        let p = self.position;
        let o = self.order;
        let ev = self.event;
        let tz: Tz = ev.timezone.parse().unwrap_or(chrono_tz::UTC);
        let f = formats(lang);
        let local =
            |at: DateTime<Utc>, format: &str| at.with_timezone(&tz).format(format).to_string();
        let name = |v: &Value| I18nString::from_stored(v).localize(lang);
        let date = p.subevent_id.and_then(|id| self.names.subevent(id));
        let item = self.names.item(p.item_id);
        let variation = p.variation_id.and_then(|id| self.names.variation(id));
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        let mut set = |key: &str, value: String| {
            vars.insert(key.to_owned(), value);
        };

        // The ticket.
        let secret = if p.secret.chars().count() > 32 {
            format!("{}…", p.secret.chars().take(30).collect::<String>())
        } else {
            p.secret.clone()
        };
        set("secret", secret);
        set("order", o.code.clone());
        set("positionid", p.positionid.to_string());
        set("order_positionid", format!("{}-{}", o.code, p.positionid));

        // The product.
        let item_name = item.map(|i| name(&i.name)).unwrap_or_default();
        let variation_name = variation.map(|v| name(&v.value));
        let item_description = item
            .and_then(|i| i.description.as_ref())
            .map(name)
            .unwrap_or_default();
        set(
            "itemvar",
            match &variation_name {
                Some(v) => format!("{item_name} - {v}"),
                None => item_name.clone(),
            },
        );
        set(
            "itemvar_description",
            variation
                .and_then(|v| v.description.as_ref())
                .map(name)
                .unwrap_or_else(|| item_description.clone()),
        );
        set("item", item_name);
        set("variation", variation_name.unwrap_or_default());
        set("item_description", item_description);
        set(
            "item_category",
            item.and_then(|i| i.category_id)
                .and_then(|c| self.details.categories.get(&c))
                .map(|c| name(&c.name))
                .unwrap_or_default(),
        );
        let money = |cents: i64| format!("{} {}", ev.currency, Money(cents));
        let addons: Vec<&order_position::Model> = self
            .positions
            .iter()
            .filter(|a| a.addon_to_id == Some(p.id) && !a.canceled)
            .collect();
        set("price", money(p.price_cents));
        let with_addons = p.price_cents + addons.iter().map(|a| a.price_cents).sum::<i64>();
        set("price_with_addons", money(with_addons));
        set("price_with_bundled", money(with_addons));
        set("addons", self.addon_lines(&addons, lang));

        // The attendee, falling back to the position an add-on belongs to.
        let parent = self.parent();
        let parts = match display_name(&p.attendee_name_parts) {
            Some(_) => &p.attendee_name_parts,
            None => parent.map_or(&p.attendee_name_parts, |a| &a.attendee_name_parts),
        };
        set("attendee_name", display_name(parts).unwrap_or_default());
        name_parts(&mut set, "attendee_name", parts);
        set(
            "attendee_email",
            p.attendee_email
                .clone()
                .or_else(|| parent.and_then(|a| a.attendee_email.clone()))
                .unwrap_or_default(),
        );
        for key in [
            "company", "street", "zipcode", "city", "state", "country", "address",
        ] {
            set(&format!("attendee_{key}"), String::new());
        }

        // The buyer.
        set("email", o.email.clone().unwrap_or_default());
        set("telephone", o.phone.clone().unwrap_or_default());
        let address = o.invoice_address.clone().unwrap_or(Value::Null);
        let text = |key: &str| address[key].as_str().unwrap_or_default().to_owned();
        set(
            "invoice_name",
            display_name(&address["name_parts"]).unwrap_or_default(),
        );
        name_parts(&mut set, "invoice_name", &address["name_parts"]);
        for key in ["company", "street", "zipcode", "city", "state", "country"] {
            set(&format!("invoice_{key}"), text(key));
        }

        // The event, or the date of a series.
        let (begin, end, admission, location, event_name) = match date {
            Some(d) => (
                d.date_from,
                d.date_to,
                d.date_admission,
                d.location.as_ref().or(ev.location.as_ref()),
                name(&d.name),
            ),
            None => (
                ev.date_from,
                ev.date_to,
                ev.date_admission,
                ev.location.as_ref(),
                name(&ev.name),
            ),
        };
        set("event_name", event_name);
        set("event_series_name", name(&ev.name));
        set("event_date", local(begin, f.date));
        set(
            "event_date_range",
            match end {
                Some(end) if local(end, f.date) != local(begin, f.date) => {
                    format!("{} – {}", local(begin, f.date), local(end, f.date))
                }
                _ => local(begin, f.date),
            },
        );
        for (key, at) in [("event_begin", Some(begin)), ("event_end", end)] {
            set(key, at.map(|a| local(a, f.datetime)).unwrap_or_default());
            set(
                &format!("{key}_date"),
                at.map(|a| local(a, f.date)).unwrap_or_default(),
            );
            set(
                &format!("{key}_time"),
                at.map(|a| local(a, f.time)).unwrap_or_default(),
            );
            set(
                &format!("{key}_weekday"),
                at.map(|a| {
                    let day = a.with_timezone(&tz).format("%u").to_string();
                    let n: usize = day.parse().unwrap_or(1);
                    f.weekdays[n.clamp(1, 7) - 1].to_owned()
                })
                .unwrap_or_default(),
            );
        }
        set(
            "event_admission",
            admission.map(|a| local(a, f.datetime)).unwrap_or_default(),
        );
        set(
            "event_admission_time",
            admission.map(|a| local(a, f.time)).unwrap_or_default(),
        );
        set("event_location", location.map(name).unwrap_or_default());
        set("organizer", self.details.organizer.clone());

        // Times.
        let times = [
            ("now", Some(now)),
            ("purchase", Some(o.datetime)),
            ("valid_from", p.valid_from),
            ("valid_until", p.valid_until),
        ];
        for (key, at) in times {
            set(
                &format!("{key}_date"),
                at.map(|a| local(a, f.date)).unwrap_or_default(),
            );
            set(
                &format!("{key}_datetime"),
                at.map(|a| local(a, f.datetime)).unwrap_or_default(),
            );
            set(
                &format!("{key}_time"),
                at.map(|a| local(a, f.time)).unwrap_or_default(),
            );
        }
        set(
            "first_scan",
            self.first_scan
                .map(|a| local(a, f.datetime))
                .unwrap_or_default(),
        );

        // The seat.
        let seat = self.seat;
        set("seat", seat.map(|s| s.name.clone()).unwrap_or_default());
        set(
            "seat_zone",
            seat.map(|s| s.zone_name.clone()).unwrap_or_default(),
        );
        set(
            "seat_row",
            seat.map(|s| s.row_name.clone()).unwrap_or_default(),
        );
        set(
            "seat_number",
            seat.map(|s| s.seat_number.clone()).unwrap_or_default(),
        );

        // Answers, by the question's identifier and by its ID.
        for owner in parent.into_iter().chain([p]) {
            for answer in owner.answers.as_array().into_iter().flatten() {
                let Some(id) = answer["question"].as_i64() else {
                    continue;
                };
                let text = answer["answer"].as_str().unwrap_or_default().to_owned();
                if let Some(q) = self.details.questions.get(&id) {
                    set(&format!("question_{}", q.identifier), text.clone());
                }
                set(&format!("question_{id}"), text);
            }
        }
        vars
    }

    /// Lines of add-ons: `2x Name - Variation`.
    fn addon_lines(&self, addons: &[&order_position::Model], lang: &str) -> String {
        let mut counted: Vec<(String, usize)> = Vec::new();
        for a in addons {
            let item = self
                .names
                .item(a.item_id)
                .map(|i| I18nString::from_stored(&i.name).localize(lang))
                .unwrap_or_default();
            let label = match a.variation_id.and_then(|v| self.names.variation(v)) {
                Some(v) => format!(
                    "{item} - {}",
                    I18nString::from_stored(&v.value).localize(lang)
                ),
                None => item,
            };
            match counted.iter_mut().find(|(l, _)| *l == label) {
                Some((_, n)) => *n += 1,
                None => counted.push((label, 1)),
            }
        }
        counted
            .into_iter()
            .map(|(label, n)| {
                if n > 1 {
                    format!("{n}x {label}")
                } else {
                    label
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `<prefix>_<part>` for each part of a name, and `<prefix>_<a>_<b>...` for the parts
/// together in their order.
fn name_parts(set: &mut impl FnMut(&str, String), prefix: &str, parts: &Value) {
    let Some(map) = parts.as_object() else {
        return;
    };
    let named: Vec<(&String, &str)> = map
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .filter_map(|(k, v)| v.as_str().map(|s| (k, s)))
        .collect();
    for (key, value) in &named {
        set(&format!("{prefix}_{key}"), (*value).to_owned());
    }
    if named.len() > 1 && named.len() <= 6 {
        let keys: Vec<&str> = named.iter().map(|(k, _)| k.as_str()).collect();
        let values: Vec<&str> = named
            .iter()
            .map(|(_, v)| *v)
            .filter(|v| !v.is_empty())
            .collect();
        set(&format!("{prefix}_{}", keys.join("_")), values.join(" "));
    }
}

/// A ticket's values as a layout's areas show them, in a language.
#[derive(Debug)]
pub struct Sheet {
    /// The variables, in the order's language.
    pub variables: BTreeMap<String, String>,
    /// The variables in the other languages areas ask for.
    pub in_languages: HashMap<String, BTreeMap<String, String>>,
    /// The full secret, which QR codes encode.
    pub secret: String,
    /// The order's language.
    pub language: String,
    /// The event's (or date's) meta data.
    pub meta: BTreeMap<String, String>,
    /// The variation's, else the item's, meta data.
    pub item_meta: BTreeMap<String, String>,
    /// The pictures of the layout's image areas, by what they show.
    pub images: HashMap<String, Arc<pdf::Image>>,
}

impl Sheet {
    /// The sheet of a ticket, with the variables in the languages `locales` of a layout's
    /// areas beside the order's.
    pub fn of(ticket: &Ticket<'_>, locales: &[String], now: DateTime<Utc>) -> Sheet {
        let language = ticket.order.locale.clone();
        let strings = |v: &Value| -> BTreeMap<String, String> {
            v.as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                        .collect()
                })
                .unwrap_or_default()
        };
        let date = ticket
            .position
            .subevent_id
            .and_then(|id| ticket.names.subevent(id));
        let mut meta = strings(&ticket.event.meta_data);
        if let Some(d) = date {
            meta.extend(strings(&d.meta_data));
        }
        let item = ticket.names.item(ticket.position.item_id);
        let item_meta = item.map(|i| strings(&i.meta_data)).unwrap_or_default();
        Sheet {
            variables: ticket.variables(&language, now),
            in_languages: locales
                .iter()
                .filter(|l| **l != language)
                .map(|l| (l.clone(), ticket.variables(l, now)))
                .collect(),
            secret: ticket.position.secret.clone(),
            language,
            meta,
            item_meta,
            images: HashMap::new(),
        }
    }

    fn variable(&self, key: &str, lang: &str) -> Option<&str> {
        if key == "secret" {
            return Some(&self.secret);
        }
        if let Some(name) = key.strip_prefix("meta:") {
            return self.meta.get(name).map(String::as_str);
        }
        if let Some(name) = key.strip_prefix("itemmeta:") {
            return self.item_meta.get(name).map(String::as_str);
        }
        self.in_languages
            .get(lang)
            .unwrap_or(&self.variables)
            .get(key)
            .map(String::as_str)
    }
}

impl pdf::Values for Sheet {
    fn text(&self, source: &Source) -> String {
        let lang = source.locale.as_deref().unwrap_or(&self.language);
        match source.content.as_str() {
            "" => "(error)".into(),
            "other" => self.fill_in(&source.text, lang),
            "other_i18n" => {
                let text = source
                    .text_i18n
                    .get(lang)
                    .or_else(|| source.text_i18n.get("en"))
                    .or_else(|| source.text_i18n.values().next())
                    .cloned()
                    .unwrap_or_default();
                self.fill_in(&text, lang)
            }
            "secret" => self.variables.get("secret").cloned().unwrap_or_default(),
            key => self.variable(key, lang).unwrap_or_default().to_owned(),
        }
    }

    fn secret(&self) -> String {
        self.secret.clone()
    }

    fn image(&self, content: &str) -> Option<&Arc<pdf::Image>> {
        self.images.get(content)
    }
}

impl Sheet {
    /// Replaces each `{name}` of a text (`[-a-zA-Z0-9:_]+`) with the variable's value;
    /// unknown names stay as written.
    fn fill_in(&self, text: &str, lang: &str) -> String {
        crate::values::texts::fill_with(text, |name| self.variable(name, lang))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_in_and_unknown_ones_kept() {
        let sheet = Sheet {
            variables: BTreeMap::from([("order".to_owned(), "ABC12".to_owned())]),
            in_languages: HashMap::new(),
            secret: "s3cr3t".into(),
            language: "en".into(),
            meta: BTreeMap::from([("Room".to_owned(), "B 101".to_owned())]),
            item_meta: BTreeMap::new(),
            images: HashMap::new(),
        };
        assert_eq!(
            sheet.fill_in("Order {order}, {secret} in {meta:Room}; {nope} {", "en"),
            "Order ABC12, s3cr3t in B 101; {nope} {"
        );
    }
}
