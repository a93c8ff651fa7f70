//! Events: the rules of their fields, going live, deleting, listing filters and cloning.

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QuerySelect, Set,
};
use serde_json::Value;

use super::meta::{self, Property};
use super::seating;
use super::settings::{self, Scope, SettingsRegistry};
use crate::db::entities::{event, item, order, quota};
use crate::domain::extensions::Extensions;
use crate::domain::webhooks;
use crate::values::FieldErrors;
use crate::values::stored::{string_list, string_map};
use serde_json::json;

/// Checks a complete event as it would be stored; `existing` is the stored event when this
/// is a change. Every broken rule is reported on its field.
pub async fn validate(
    db: &impl ConnectionTrait,
    plugins: &dyn Extensions,
    candidate: &event::Model,
    existing: Option<&event::Model>,
) -> Result<FieldErrors, DbErr> {
    let mut errors = FieldErrors::new();
    let e = candidate;
    // Whether the slug passed the checks of its own, so the talk side's rule can apply.
    let mut slug_ok = true;
    match existing {
        Some(old) => {
            if old.slug != e.slug {
                slug_ok = false;
                errors.push("slug", "The event slug cannot be changed.");
            }
            if old.has_subevents != e.has_subevents {
                errors.push("has_subevents", "The event series flag cannot be changed.");
            }
        }
        None => {
            if !super::slug::is_valid(&e.slug) {
                slug_ok = false;
                errors.push(
                    "slug",
                    "Use letters, digits, \"-\" and \".\", starting with a letter or digit.",
                );
            } else if !super::slug::is_free_for_event(&e.slug) {
                slug_ok = false;
                errors.push("slug", super::slug::reserved_message(&e.slug));
            } else if slug_taken(db, e.organizer_id, &e.slug).await? {
                slug_ok = false;
                errors.push(
                    "slug",
                    "This slug has already been used for a different event.",
                );
            }
            if e.live {
                errors.push("live", "Events cannot be created as 'live'. Quotas and payment must be added to the event before sales can go live.");
            }
        }
    }
    if e.talk_enabled && slug_ok && talk_slug_taken(db, e.id, &e.slug).await? {
        errors.push("slug", TALK_SLUG_TAKEN);
    }
    if e.date_to.is_some_and(|to| to < e.date_from) {
        errors.push("date_to", "The event cannot end before it starts.");
    }
    if let (Some(start), Some(end)) = (e.presale_start, e.presale_end)
        && end < start
    {
        errors.push(
            "presale_end",
            "The end of the presale period has to be later than its start.",
        );
    }
    if chrono_tz::Tz::from_str(&e.timezone).is_err() {
        errors.push(
            "timezone",
            format!("\"{}\" is not a valid time zone name.", e.timezone),
        );
    }
    if e.geo_lat.is_some_and(|v| !(-90.0..=90.0).contains(&v)) {
        errors.push("geo_lat", "Ensure this value is between -90 and 90.");
    }
    if e.geo_lon.is_some_and(|v| !(-180.0..=180.0).contains(&v)) {
        errors.push("geo_lon", "Ensure this value is between -180 and 180.");
    }
    let before = existing
        .map(|old| string_list(&old.plugins))
        .unwrap_or_default();
    for message in plugins.refusals(e, &before) {
        errors.push("plugins", message);
    }
    let channels = string_list(&e.sales_channels);
    for message in super::sales_channels::unknown(db, e.organizer_id, &channels).await? {
        errors.push("sales_channels", message);
    }
    let properties = meta::properties(db, e.organizer_id).await?;
    for message in meta::check_values(&properties, &string_map(&e.meta_data), existing.is_none()) {
        errors.push("meta_data", message);
    }
    Ok(errors)
}

/// The refusal of a talk-side event whose slug another talk-side event has.
pub const TALK_SLUG_TAKEN: &str = "Another organizer's event on the talk side already uses this \
     slug; events on the talk side need a slug unique across the installation.";

/// Whether an event other than `event_id` with the talk side switched on has `slug`: the
/// talk side addresses events by slug alone (`/api/events/{slug}/`), so their slugs are
/// unique across the installation (the unique index `events_talk_slug` holds the same rule
/// against concurrent changes).
pub async fn talk_slug_taken(
    db: &impl ConnectionTrait,
    event_id: i64,
    slug: &str,
) -> Result<bool, DbErr> {
    Ok(event::Entity::find()
        .filter(event::Column::TalkEnabled.eq(true))
        .filter(event::Column::Slug.eq(slug))
        .filter(event::Column::Id.ne(event_id))
        .count(db)
        .await?
        > 0)
}

async fn slug_taken(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    slug: &str,
) -> Result<bool, DbErr> {
    Ok(event::Entity::find()
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .filter(event::Column::Slug.eq(slug))
        .count(db)
        .await?
        > 0)
}

/// The event of that slug of the organizer of that slug.
pub async fn by_slugs(
    db: &impl ConnectionTrait,
    organizer: &str,
    event: &str,
) -> Result<Option<event::Model>, DbErr> {
    let Some(o) = crate::db::entities::organizer::Entity::find()
        .filter(crate::db::entities::organizer::Column::Slug.eq(organizer))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    event::Entity::find()
        .filter(event::Column::OrganizerId.eq(o.id))
        .filter(event::Column::Slug.eq(event))
        .one(db)
        .await
}

/// The payment providers enabled for an event: those of the plugins it enables, and the
/// built-in `manual` provider when the `payment_manual__enabled` setting says so.
pub async fn enabled_payment_providers(
    db: &impl ConnectionTrait,
    plugins: &dyn Extensions,
    registry: &SettingsRegistry,
    e: &event::Model,
) -> Result<Vec<String>, DbErr> {
    let values = settings::resolve(
        db,
        registry,
        Scope::Event {
            organizer_id: e.organizer_id,
            event_id: e.id,
        },
    )
    .await?;
    let manual = values.get("payment_manual__enabled") == Some(&Value::Bool(true));
    Ok(plugins
        .payment_providers(e)
        .iter()
        .map(|p| p.identifier().to_owned())
        .filter(|id| manual || id != "manual")
        .collect())
}

/// Why an event cannot go live, when it cannot.
pub async fn live_blocker(
    db: &impl ConnectionTrait,
    plugins: &dyn Extensions,
    registry: &SettingsRegistry,
    e: &event::Model,
) -> Result<Option<&'static str>, DbErr> {
    let quotas = quota::Entity::find()
        .filter(quota::Column::EventId.eq(e.id))
        .count(db)
        .await?;
    if quotas == 0 {
        return Ok(Some(
            "You need to configure at least one quota to sell anything.",
        ));
    }
    let priced = item::Entity::find()
        .filter(item::Column::EventId.eq(e.id))
        .filter(item::Column::DefaultPriceCents.gt(0))
        .count(db)
        .await?;
    if priced > 0
        && enabled_payment_providers(db, plugins, registry, e)
            .await?
            .is_empty()
    {
        return Ok(Some(
            "You need to enable at least one payment provider to sell products with a price.",
        ));
    }
    Ok(None)
}

/// The IDs of an organizer's events.
pub async fn ids_of_organizer(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<Vec<i64>, DbErr> {
    event::Entity::find()
        .select_only()
        .column(event::Column::Id)
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .into_tuple()
        .all(db)
        .await
}

/// Whether an event has orders (then it cannot be deleted).
pub async fn has_orders(db: &impl ConnectionTrait, event_id: i64) -> Result<bool, DbErr> {
    Ok(order::Entity::find()
        .filter(order::Column::EventId.eq(event_id))
        .count(db)
        .await?
        > 0)
}

/// Deletes an event with everything it owns.
pub async fn delete(db: &impl ConnectionTrait, event_id: i64) -> Result<(), DbErr> {
    let notice = webhooks::Notice::about(event_id, "pretix.event.deleted", json!({}));
    webhooks::notify(db, &notice).await?;
    settings::delete_event_settings(db, event_id).await?;
    event::Entity::delete_by_id(event_id).exec(db).await?;
    Ok(())
}

/// Filters of the event list.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    /// `is_public`.
    pub is_public: Option<bool>,
    /// `live`.
    pub live: Option<bool>,
    /// `has_subevents`.
    pub has_subevents: Option<bool>,
    /// `is_future`: current or future events (series never with `true`, always with `false`).
    pub is_future: Option<bool>,
    /// `is_past`: events that are over (series never with `true`, always with `false`).
    pub is_past: Option<bool>,
    /// `ends_after`: events during or after this time (series never).
    pub ends_after: Option<DateTime<Utc>>,
    /// `attr[key]=value`: effective meta data values; an empty value means "not set".
    pub attrs: Vec<(String, String)>,
    /// `sales_channel`.
    pub sales_channel: Option<String>,
}

fn not_over(e: &event::Model, now: DateTime<Utc>) -> bool {
    match e.date_to {
        Some(to) => to >= now,
        None => e.date_from >= now,
    }
}

impl EventFilter {
    /// Whether an event passes, given its effective meta data.
    pub fn accepts(
        &self,
        e: &event::Model,
        meta: &BTreeMap<String, String>,
        now: DateTime<Utc>,
    ) -> bool {
        let series = e.has_subevents;
        self.is_public.is_none_or(|v| e.is_public == v)
            && self.live.is_none_or(|v| e.live == v)
            && self.has_subevents.is_none_or(|v| series == v)
            && self
                .is_future
                .is_none_or(|v| if series { !v } else { not_over(e, now) == v })
            && self
                .is_past
                .is_none_or(|v| if series { !v } else { not_over(e, now) != v })
            && self
                .ends_after
                .is_none_or(|t| !series && e.date_to.unwrap_or(e.date_from) >= t)
            && self
                .sales_channel
                .as_ref()
                .is_none_or(|c| string_list(&e.sales_channels).contains(c))
            && self
                .attrs
                .iter()
                .all(|(k, v)| meta.get(k).map_or("", String::as_str) == v)
    }
}

/// The effective meta data of an event: its own values, else the properties' defaults.
pub fn effective_meta(e: &event::Model, properties: &[Property]) -> BTreeMap<String, String> {
    meta::effective(properties, &string_map(&e.meta_data))
}

/// Creates an event row with a new signing key pair.
pub async fn insert(
    db: &impl ConnectionTrait,
    mut row: event::ActiveModel,
) -> Result<event::Model, DbErr> {
    let (public, private) = super::signing::generate();
    row.public_key = Set(public);
    row.private_key = Set(private);
    let created = row.insert(db).await?;
    let notice = webhooks::Notice::about(created.id, "pretix.event.added", json!({}));
    webhooks::notify(db, &notice).await?;
    Ok(created)
}

/// Copies what an event is configured with onto a new one: settings, categories, tax rules,
/// items with their variations, add-ons and bundles, quotas, questions, seats, ticket and
/// badge layouts, and discounts, every reference remapped to the copies; returns the old to
/// new item IDs.
pub async fn copy_configuration(
    db: &impl ConnectionTrait,
    from: &event::Model,
    to: &event::Model,
) -> Result<HashMap<i64, i64>, DbErr> {
    settings::copy_event_settings(db, from.id, to.id).await?;
    let config = super::event_config::clone_categories_and_tax_rules(db, from.id, to.id).await?;
    let items = super::items::clone_items(db, from.id, to.id, &config).await?;
    super::quotas::clone_quotas(db, from.id, to.id, &items).await?;
    super::questions::clone_questions(db, from.id, to.id, &items.items).await?;
    seating::clone_seats(db, from.id, to.id).await?;
    super::meta::copy_item_properties(db, from.id, to.id).await?;
    super::layouts::clone_layouts(db, from.id, to.id, &items.items).await?;
    super::discounts::manage::clone_discounts(db, from.id, to.id, &items.items).await?;
    Ok(items.items)
}

/// The seat category mapping with item IDs of a cloned event's source replaced by those of
/// the copy.
pub fn remap_mapping(
    mapping: &Value,
    item_ids: &HashMap<i64, i64>,
) -> serde_json::Map<String, Value> {
    mapping
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let id = v.as_i64().map(|i| item_ids.get(&i).copied().unwrap_or(i));
                    (k.clone(), id.map_or(Value::Null, Value::from))
                })
                .collect()
        })
        .unwrap_or_default()
}
