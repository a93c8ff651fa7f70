//! What a ticket says: the text variables of a position (pretix's `pdf_data`: event,
//! product, attendee, dates, order code, secret), read by scanners that print badges and
//! shown on the ticket page.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entities::{event, item, item_variation, order, order_position, seat, subevent};
use crate::values::i18n::I18nString;

/// Names of what positions refer to, loaded once for a page of orders.
#[derive(Debug, Default)]
pub struct TicketNames {
    items: HashMap<i64, item::Model>,
    variations: HashMap<i64, item_variation::Model>,
    subevents: HashMap<i64, subevent::Model>,
}

impl TicketNames {
    /// Loads the items, variations and dates of these positions (three queries at most).
    pub async fn load<'a>(
        db: &impl ConnectionTrait,
        positions: impl IntoIterator<Item = &'a order_position::Model>,
    ) -> Result<Self, DbErr> {
        let (mut items, mut variations, mut subevents) = (Vec::new(), Vec::new(), Vec::new());
        for p in positions {
            items.push(p.item_id);
            variations.extend(p.variation_id);
            subevents.extend(p.subevent_id);
        }
        for ids in [&mut items, &mut variations, &mut subevents] {
            ids.sort_unstable();
            ids.dedup();
        }
        let mut names = Self::default();
        if !items.is_empty() {
            names.items = item::Entity::find()
                .filter(item::Column::Id.is_in(items))
                .all(db)
                .await?
                .into_iter()
                .map(|i| (i.id, i))
                .collect();
        }
        if !variations.is_empty() {
            names.variations = item_variation::Entity::find()
                .filter(item_variation::Column::Id.is_in(variations))
                .all(db)
                .await?
                .into_iter()
                .map(|v| (v.id, v))
                .collect();
        }
        if !subevents.is_empty() {
            names.subevents = subevent::Entity::find()
                .filter(subevent::Column::Id.is_in(subevents))
                .all(db)
                .await?
                .into_iter()
                .map(|s| (s.id, s))
                .collect();
        }
        Ok(names)
    }

    /// An item of the positions.
    pub fn item(&self, id: i64) -> Option<&item::Model> {
        self.items.get(&id)
    }

    /// A variation of the positions.
    pub fn variation(&self, id: i64) -> Option<&item_variation::Model> {
        self.variations.get(&id)
    }

    /// A date of the positions.
    pub fn subevent(&self, id: i64) -> Option<&subevent::Model> {
        self.subevents.get(&id)
    }

    /// Whether the position's item admits someone (pretix's `admission`); unknown items do.
    pub fn admits(&self, p: &order_position::Model) -> bool {
        self.items.get(&p.item_id).is_none_or(|i| i.admission)
    }
}

/// What one ticket says, in the order's language.
#[derive(Debug, Clone)]
pub struct TicketText {
    /// The event's (or date's) name.
    pub event: String,
    /// The product name.
    pub item: String,
    /// The variation's name, if any.
    pub variation: Option<String>,
    /// The attendee's name, if given.
    pub attendee: Option<String>,
    /// Begin of the event or date, in its time zone (`YYYY-MM-DD HH:MM`).
    pub begin: String,
    /// Admission, if set.
    pub admission: Option<String>,
    /// The location, if set.
    pub location: Option<String>,
    /// The seat's name, if any.
    pub seat: Option<String>,
}

fn local(at: DateTime<Utc>, timezone: &str) -> String {
    let tz: chrono_tz::Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
    at.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string()
}

/// What a position's ticket says.
pub fn text(
    ev: &event::Model,
    o: &order::Model,
    p: &order_position::Model,
    names: &TicketNames,
    seat: Option<&seat::Model>,
) -> TicketText {
    let lang = o.locale.as_str();
    let name = |v: &serde_json::Value| I18nString::from_stored(v).localize(lang);
    let date = p.subevent_id.and_then(|id| names.subevents.get(&id));
    let (begin, admission, location, event_name) = match date {
        Some(d) => (
            d.date_from,
            d.date_admission,
            d.location.as_ref().or(ev.location.as_ref()),
            name(&d.name),
        ),
        None => (
            ev.date_from,
            ev.date_admission,
            ev.location.as_ref(),
            name(&ev.name),
        ),
    };
    TicketText {
        event: event_name,
        item: names
            .items
            .get(&p.item_id)
            .map(|i| name(&i.name))
            .unwrap_or_default(),
        variation: p
            .variation_id
            .and_then(|id| names.variations.get(&id))
            .map(|v| name(&v.value)),
        attendee: super::display_name(&p.attendee_name_parts),
        begin: local(begin, &ev.timezone),
        admission: admission.map(|a| local(a, &ev.timezone)),
        location: location.map(name).filter(|l| !l.is_empty()),
        seat: seat.map(|s| s.name.clone()),
    }
}

/// The text variables of one position's ticket, loaded by its ID (none when it is gone).
pub async fn pdf_data_of(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    position_id: i64,
) -> Result<Option<BTreeMap<String, String>>, DbErr> {
    let Some(p) = order_position::Entity::find_by_id(position_id)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let Some(o) = order::Entity::find_by_id(p.order_id).one(db).await? else {
        return Ok(None);
    };
    let names = TicketNames::load(db, [&p]).await?;
    let seat = match p.seat_id {
        Some(id) => seat::Entity::find_by_id(id).one(db).await?,
        None => None,
    };
    Ok(Some(pdf_data(ev, &o, &p, &names, seat.as_ref())))
}

/// The ticket's text variables as pretix's `pdf_data` names them.
pub fn pdf_data(
    ev: &event::Model,
    o: &order::Model,
    p: &order_position::Model,
    names: &TicketNames,
    seat: Option<&seat::Model>,
) -> BTreeMap<String, String> {
    let t = text(ev, o, p, names, seat);
    let itemvar = match &t.variation {
        Some(v) => format!("{} – {v}", t.item),
        None => t.item.clone(),
    };
    let mut vars = BTreeMap::from([
        ("secret", p.secret.clone()),
        ("order", o.code.clone()),
        ("positionid", p.positionid.to_string()),
        ("order_positionid", format!("{}-{}", o.code, p.positionid)),
        ("item", t.item.clone()),
        ("variation", t.variation.clone().unwrap_or_default()),
        ("itemvar", itemvar),
        ("attendee_name", t.attendee.clone().unwrap_or_default()),
        (
            "attendee_email",
            p.attendee_email.clone().unwrap_or_default(),
        ),
        ("event_name", t.event.clone()),
        ("event_begin", t.begin.clone()),
        (
            "event_date",
            t.begin.get(..10).unwrap_or_default().to_owned(),
        ),
        ("event_admission", t.admission.clone().unwrap_or_default()),
        ("event_location", t.location.clone().unwrap_or_default()),
        ("seat", t.seat.clone().unwrap_or_default()),
        ("price", crate::values::Money(p.price_cents).to_string()),
    ]);
    if let Some(date) = p.subevent_id {
        vars.insert("subevent", date.to_string());
    }
    vars.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
