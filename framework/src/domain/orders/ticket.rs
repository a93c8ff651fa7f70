//! What the order page's tickets say (event, product, attendee, dates, seat), and the names
//! of what positions refer to, loaded once for a page of orders. The full set of a ticket's
//! variables (pretix's `pdf_data`) is `domain::tickets::variables`'.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entities::{event, item, item_variation, order, order_position, seat, subevent};
use crate::domain::cache::Cache;
use crate::domain::sale::{Catalogue, Items, Variations};
use crate::values::i18n::I18nString;

/// Names of what positions refer to, loaded once for a page of orders.
#[derive(Debug, Default)]
pub struct TicketNames {
    items: Items,
    variations: Variations,
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
        for ids in [&mut items, &mut variations] {
            ids.sort_unstable();
            ids.dedup();
        }
        let mut names = Self::default();
        if !items.is_empty() {
            names.items = Arc::new(
                item::Entity::find()
                    .filter(item::Column::Id.is_in(items))
                    .all(db)
                    .await?
                    .into_iter()
                    .map(|i| (i.id, i))
                    .collect(),
            );
        }
        if !variations.is_empty() {
            names.variations = Arc::new(
                item_variation::Entity::find()
                    .filter(item_variation::Column::Id.is_in(variations))
                    .all(db)
                    .await?
                    .into_iter()
                    .map(|v| (v.id, v))
                    .collect(),
            );
        }
        names.subevents = dates(db, subevents).await?;
        Ok(names)
    }

    /// Loads the names of positions of one event: its products and variations from its
    /// catalogue (kept by the process cache, as selling keeps it), the dates of the
    /// positions (if any) from the database.
    pub async fn of_event<'a>(
        db: &impl ConnectionTrait,
        cache: Option<(&Cache, u64)>,
        ev: &event::Model,
        positions: impl IntoIterator<Item = &'a order_position::Model>,
    ) -> Result<Self, DbErr> {
        let catalogue = Catalogue::load_kept(db, cache, ev, &[]).await?;
        let (items, variations) = catalogue.items_and_variations();
        let ids = positions
            .into_iter()
            .filter_map(|p| p.subevent_id)
            .collect();
        Ok(Self {
            items,
            variations,
            subevents: dates(db, ids).await?,
        })
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

/// The dates with these IDs, by ID (no query for none).
async fn dates(
    db: &impl ConnectionTrait,
    mut ids: Vec<i64>,
) -> Result<HashMap<i64, subevent::Model>, DbErr> {
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(subevent::Entity::find()
        .filter(subevent::Column::Id.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect())
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
