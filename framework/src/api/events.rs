//! Events of an organizer: `/api/v1/organizers/{organizer}/events/`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::{MaybeUndefined, ToJSON};
use poem_openapi::{Enum, Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
use serde_json::{Value, json};

use super::Tag;
use crate::db::begin_write;
use crate::db::entities::event;
use crate::domain::events::{self, EventFilter};
use crate::domain::extensions::Hook;
use crate::domain::meta;
use crate::domain::permissions::Permission;
use crate::domain::seating::{self, SeatScope};
use crate::domain::signing;
use crate::domain::webhooks::{self, Notice};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, Currency, I18nString, JsonBody, NoContent, NullableMap, Page,
    PageRequest, Refusal, patched,
};
use crate::state::AppState;
use crate::values::Timestamp;
use crate::values::stored::string_list;

/// An event.
#[derive(Object)]
#[oai(rename = "Event")]
pub struct EventOut {
    /// Full name.
    pub name: I18nString,
    /// Short form used in URLs; fixed after creation.
    pub slug: String,
    /// Whether the shop is publicly available.
    pub live: bool,
    /// Whether the shop is in test mode.
    pub testmode: bool,
    /// Currency of the event.
    pub currency: String,
    /// Start.
    pub date_from: Timestamp,
    /// End.
    #[oai(nullable)]
    pub date_to: Option<Timestamp>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: Option<Timestamp>,
    /// Whether it shows in the organizer's public list.
    pub is_public: bool,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: Option<Timestamp>,
    /// When the shop closes.
    #[oai(nullable)]
    pub presale_end: Option<Timestamp>,
    /// Location.
    #[oai(nullable)]
    pub location: Option<I18nString>,
    /// Latitude.
    #[oai(nullable)]
    pub geo_lat: Option<f64>,
    /// Longitude.
    #[oai(nullable)]
    pub geo_lon: Option<f64>,
    /// Whether the event is a series of dates; fixed after creation.
    pub has_subevents: bool,
    /// Values of the organizer's meta data properties (defaults included).
    pub meta_data: BTreeMap<String, String>,
    /// Names of the enabled plugins.
    pub plugins: Vec<String>,
    /// Seating plan ID, when reserved seating is used.
    #[oai(nullable)]
    pub seating_plan: Option<i64>,
    /// Seating plan category to item ID.
    pub seat_category_mapping: NullableMap<i64>,
    /// Time zone name.
    pub timezone: String,
    /// Item meta data properties and their defaults.
    pub item_meta_properties: BTreeMap<String, String>,
    /// Public keys for ticket signatures, by scheme; only in the detail view.
    #[oai(skip_serializing_if_is_none)]
    pub valid_keys: Option<BTreeMap<String, Vec<String>>>,
    /// Channels the event is sold on.
    pub sales_channels: Vec<String>,
    /// Whether the talk side serves the event: its call for papers and program under
    /// `/api/events/{slug}/`. Slugs of such events are unique across the installation.
    pub talk_enabled: bool,
}

fn event_out(
    e: &event::Model,
    properties: &[meta::Property],
    item_meta_properties: BTreeMap<String, String>,
    detail: bool,
) -> EventOut {
    EventOut {
        name: I18nString::from_stored(&e.name),
        slug: e.slug.clone(),
        live: e.live,
        testmode: e.testmode,
        currency: e.currency.clone(),
        date_from: e.date_from.into(),
        date_to: e.date_to.map(Into::into),
        date_admission: e.date_admission.map(Into::into),
        is_public: e.is_public,
        presale_start: e.presale_start.map(Into::into),
        presale_end: e.presale_end.map(Into::into),
        location: e.location.as_ref().map(I18nString::from_stored),
        geo_lat: e.geo_lat,
        geo_lon: e.geo_lon,
        has_subevents: e.has_subevents,
        meta_data: events::effective_meta(e, properties),
        plugins: string_list(&e.plugins),
        seating_plan: e.seating_plan_id,
        seat_category_mapping: NullableMap::from_stored(&e.seat_category_mapping),
        timezone: e.timezone.clone(),
        item_meta_properties,
        valid_keys: detail.then(|| {
            // Made with the event, or at its first signed ticket.
            let keys = [e.public_key.clone()].into_iter().filter(|k| !k.is_empty());
            BTreeMap::from([(signing::SCHEME.to_owned(), keys.collect())])
        }),
        sales_channels: string_list(&e.sales_channels),
        talk_enabled: e.talk_enabled,
    }
}

/// A new event (POST), or the event to make from a clone. Fields left out get their
/// defaults, or on a clone the source event's values.
#[derive(Object)]
pub struct EventCreate {
    /// Full name.
    #[oai(validator(max_length = 200))]
    pub name: I18nString,
    /// Short form used in URLs.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub slug: String,
    /// ISO 4217 currency code.
    pub currency: Currency,
    /// Start.
    pub date_from: Timestamp,
    /// Must be false: events cannot be created live.
    #[oai(default)]
    pub live: bool,
    /// Test mode (default false).
    pub testmode: Option<bool>,
    /// End.
    #[oai(nullable)]
    pub date_to: Option<Timestamp>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: Option<Timestamp>,
    /// Shows in the public list (default true).
    pub is_public: Option<bool>,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: Option<Timestamp>,
    /// When the shop closes.
    #[oai(nullable)]
    pub presale_end: Option<Timestamp>,
    /// Location.
    #[oai(nullable, validator(max_length = 200))]
    pub location: Option<I18nString>,
    /// Latitude.
    #[oai(nullable)]
    pub geo_lat: Option<f64>,
    /// Longitude.
    #[oai(nullable)]
    pub geo_lon: Option<f64>,
    /// Event series (default false); fixed after creation.
    pub has_subevents: Option<bool>,
    /// Meta data values. Each at most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: Option<BTreeMap<String, String>>,
    /// Plugins to enable.
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub plugins: Option<Vec<String>>,
    /// Seating plan ID.
    #[oai(nullable)]
    pub seating_plan: Option<i64>,
    /// Seating plan category to item ID.
    #[oai(validator(max_properties = 1000))]
    pub seat_category_mapping: Option<NullableMap<i64>>,
    /// Time zone name (default UTC).
    #[oai(validator(max_length = 190))]
    pub timezone: Option<String>,
    /// Item meta data properties and defaults. Each default at most 10,000 characters (pretix sets
    /// no limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub item_meta_properties: Option<BTreeMap<String, String>>,
    /// Sales channels (default `["web"]`).
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub sales_channels: Option<Vec<String>>,
    /// Switches the talk side on: the event's call for papers and program are served under
    /// `/api/events/{slug}/` (default false; a clone does not copy it). Needs a slug no
    /// other organizer's event on the talk side has (400 on `slug` otherwise).
    pub talk_enabled: Option<bool>,
}

/// A change of an event; absent fields stay as they are.
#[derive(Object)]
pub struct EventPatch {
    /// Full name.
    #[oai(validator(max_length = 200))]
    pub name: Option<I18nString>,
    /// Cannot change; sending another value is 400.
    #[oai(validator(max_length = 50))]
    pub slug: Option<String>,
    /// Going live needs a quota and, for priced products, an enabled payment provider.
    pub live: Option<bool>,
    /// Test mode.
    pub testmode: Option<bool>,
    /// Currency.
    pub currency: Option<Currency>,
    /// Start.
    pub date_from: Option<Timestamp>,
    /// End.
    #[oai(nullable)]
    pub date_to: MaybeUndefined<DateTime<Utc>>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: MaybeUndefined<DateTime<Utc>>,
    /// Shows in the public list.
    pub is_public: Option<bool>,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: MaybeUndefined<DateTime<Utc>>,
    /// When the shop closes.
    #[oai(nullable)]
    pub presale_end: MaybeUndefined<DateTime<Utc>>,
    /// Location.
    #[oai(nullable, validator(max_length = 200))]
    pub location: MaybeUndefined<I18nString>,
    /// Latitude.
    #[oai(nullable)]
    pub geo_lat: MaybeUndefined<f64>,
    /// Longitude.
    #[oai(nullable)]
    pub geo_lon: MaybeUndefined<f64>,
    /// Cannot change; sending another value is 400.
    pub has_subevents: Option<bool>,
    /// Meta data values (replaces all values). Each at most 10,000 characters (pretix sets no
    /// limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: Option<BTreeMap<String, String>>,
    /// Plugins to enable (replaces the list).
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub plugins: Option<Vec<String>>,
    /// Seating plan ID.
    #[oai(nullable)]
    pub seating_plan: MaybeUndefined<i64>,
    /// Seating plan category to item ID.
    #[oai(validator(max_properties = 1000))]
    pub seat_category_mapping: Option<NullableMap<i64>>,
    /// Time zone name.
    #[oai(validator(max_length = 190))]
    pub timezone: Option<String>,
    /// Item meta data properties and defaults. Each default at most 10,000 characters (pretix sets
    /// no limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub item_meta_properties: Option<BTreeMap<String, String>>,
    /// Sales channels.
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub sales_channels: Option<Vec<String>>,
    /// Switches the talk side on or off: the event's call for papers and program are served
    /// under `/api/events/{slug}/`. Switching it on needs a slug no other organizer's event on
    /// the talk side has (400 on `slug` otherwise).
    pub talk_enabled: Option<bool>,
}

/// Order of the event list.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
pub enum EventOrdering {
    /// By start.
    #[oai(rename = "date_from")]
    DateFrom,
    /// By start, latest first.
    #[oai(rename = "-date_from")]
    DateFromDesc,
    /// By slug (default).
    #[oai(rename = "slug")]
    Slug,
    /// By slug, descending.
    #[oai(rename = "-slug")]
    SlugDesc,
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn mapping_json(m: &NullableMap<i64>) -> Value {
    m.to_json().unwrap_or(Value::Null)
}

/// The row a create or clone would store, before validation. `source` gives the values of
/// fields left out on a clone.
fn new_row(organizer_id: i64, body: EventCreate, source: Option<&event::Model>) -> event::Model {
    let pick = |sent: Option<bool>, copied: Option<bool>, default: bool| {
        sent.or(copied).unwrap_or(default)
    };
    event::Model {
        id: 0,
        organizer_id,
        slug: body.slug,
        name: body.name.to_stored(),
        currency: body.currency.0,
        date_from: body.date_from.into(),
        live: body.live,
        testmode: pick(body.testmode, source.map(|s| s.testmode), false),
        date_to: body.date_to.map(Into::into),
        date_admission: body.date_admission.map(Into::into),
        is_public: pick(body.is_public, source.map(|s| s.is_public), true),
        presale_start: body.presale_start.map(Into::into),
        presale_end: body.presale_end.map(Into::into),
        location: body.location.map(|l| l.to_stored()),
        geo_lat: body.geo_lat,
        geo_lon: body.geo_lon,
        has_subevents: pick(body.has_subevents, source.map(|s| s.has_subevents), false),
        plugins: body
            .plugins
            .map(|p| to_json(&p))
            .or_else(|| source.map(|s| s.plugins.clone()))
            .unwrap_or(json!([])),
        // Never copied: a clone joins the talk side only when asked to.
        talk_enabled: body.talk_enabled.unwrap_or(false),
        seating_plan_id: body
            .seating_plan
            .or_else(|| source.and_then(|s| s.seating_plan_id)),
        seat_category_mapping: body
            .seat_category_mapping
            .map(|m| mapping_json(&m))
            .or_else(|| source.map(|s| s.seat_category_mapping.clone()))
            .unwrap_or(json!({})),
        timezone: body
            .timezone
            .or_else(|| source.map(|s| s.timezone.clone()))
            .unwrap_or_else(|| "UTC".into()),
        meta_data: body
            .meta_data
            .map(|m| to_json(&m))
            .or_else(|| source.map(|s| s.meta_data.clone()))
            .unwrap_or(json!({})),
        sales_channels: body
            .sales_channels
            .map(|c| to_json(&c))
            .or_else(|| source.map(|s| s.sales_channels.clone()))
            .unwrap_or(json!(["web"])),
        public_key: String::new(),
        private_key: String::new(),
    }
}

fn apply_patch(e: &mut event::Model, p: EventPatch) {
    fn set<T>(field: &mut T, v: Option<T>) {
        if let Some(v) = v {
            *field = v;
        }
    }
    set(&mut e.name, p.name.map(|n| n.to_stored()));
    set(&mut e.slug, p.slug);
    set(&mut e.live, p.live);
    set(&mut e.testmode, p.testmode);
    set(&mut e.currency, p.currency.map(|c| c.0));
    set(&mut e.date_from, p.date_from.map(Into::into));
    set(&mut e.date_to, patched(p.date_to));
    set(&mut e.date_admission, patched(p.date_admission));
    set(&mut e.is_public, p.is_public);
    set(&mut e.presale_start, patched(p.presale_start));
    set(&mut e.presale_end, patched(p.presale_end));
    set(
        &mut e.location,
        patched(p.location).map(|l| l.map(|l| l.to_stored())),
    );
    set(&mut e.geo_lat, patched(p.geo_lat));
    set(&mut e.geo_lon, patched(p.geo_lon));
    set(&mut e.has_subevents, p.has_subevents);
    set(&mut e.meta_data, p.meta_data.map(|m| to_json(&m)));
    set(&mut e.plugins, p.plugins.map(|l| to_json(&l)));
    set(&mut e.seating_plan_id, patched(p.seating_plan));
    set(
        &mut e.seat_category_mapping,
        p.seat_category_mapping.map(|m| mapping_json(&m)),
    );
    set(&mut e.timezone, p.timezone);
    set(&mut e.sales_channels, p.sales_channels.map(|c| to_json(&c)));
    set(&mut e.talk_enabled, p.talk_enabled);
}

/// The answer to a failed write of an event: a unique index of the slug (per organizer, or
/// among talk-side events) that a concurrent write took first is 400 on `slug`.
fn slug_clash(e: sea_orm::DbErr, message: &str) -> ApiError {
    if crate::db::is_unique_violation(&e) {
        ApiError::field("slug", message)
    } else {
        e.into()
    }
}

/// Stores a new event (created, or cloned from `source` with its configuration) after
/// checking it, in one transaction. The seating plan and mapping are assigned last, so that
/// a clone's mapping points to the copied items.
async fn create_event(
    state: &AppState,
    candidate: event::Model,
    source: Option<&event::Model>,
    item_defaults: Option<BTreeMap<String, String>>,
) -> Result<event::Model, ApiError> {
    events::validate(&state.db, &*state.plugins, &candidate, None)
        .await?
        .into_result()?;
    let (plan, mapping) = (
        candidate.seating_plan_id,
        candidate.seat_category_mapping.clone(),
    );
    let mut row: event::ActiveModel = candidate.into();
    row.id = sea_orm::ActiveValue::NotSet;
    row.seating_plan_id = Set(None);
    row.seat_category_mapping = Set(json!({}));
    let txn = begin_write(&state.db).await?;
    let created = events::insert(&txn, row)
        .await
        .map_err(|e| slug_clash(e, "This slug has already been used for a different event."))?;
    let item_ids = match source {
        // Boxed: copying a whole catalogue is a large future, kept off the caller's stack.
        Some(source) => Box::pin(events::copy_configuration(&txn, source, &created)).await?,
        None => Default::default(),
    };
    if let Some(defaults) = item_defaults {
        meta::set_item_defaults(&txn, created.id, &defaults)
            .await
            .map_err(ApiError::from)?;
    }
    let mapping = events::remap_mapping(&mapping, &item_ids);
    if plan.is_some() || !mapping.is_empty() {
        seating::assign(
            &txn,
            created.organizer_id,
            SeatScope::event(created.id),
            plan,
            &mapping,
        )
        .await
        .map_err(Refusal::from)?;
    }
    let created = event::Entity::find_by_id(created.id)
        .one(&txn)
        .await?
        .ok_or_else(ApiError::internal)?;
    let hook = Hook {
        txn: &txn,
        event: &created,
    };
    state.plugins.event_created(hook, source).await?;
    crate::db::commit(txn).await?;
    Ok(created)
}

/// The event's item properties with their defaults.
async fn item_meta(state: &AppState, event_id: i64) -> Result<BTreeMap<String, String>, ApiError> {
    let mut found = meta::item_defaults(&state.db, &[event_id]).await?;
    Ok(found.remove(&event_id).unwrap_or_default())
}

/// A created event as answered.
async fn shown(
    state: &AppState,
    rows: &[crate::db::entities::meta_property::Model],
    created: event::Model,
) -> WriteResult<Created<EventOut>> {
    let properties: Vec<meta::Property> = rows.iter().cloned().map(Into::into).collect();
    let item_meta = item_meta(state, created.id).await?;
    Ok(Created::Created(Json(event_out(
        &created,
        &properties,
        item_meta,
        true,
    ))))
}

/// The meta data to store of what was sent, as the caller may set it.
fn sent_meta(
    rows: &[crate::db::entities::meta_property::Model],
    org: &crate::domain::grants::OrganizerAccess,
    sent: Option<BTreeMap<String, String>>,
    current: &Value,
) -> Option<BTreeMap<String, String>> {
    let may_set_protected = org.permissions.has(Permission::ChangeOrganizerSettings);
    meta::sent_values(rows, may_set_protected, sent, current)
}

/// Event operations.
pub struct EventsApi;

#[OpenApi(tag = "Tag::Events")]
impl EventsApi {
    /// List events
    ///
    /// The organizer's events the caller may change, by slug unless `ordering` says
    /// otherwise. `attr[<property>]=<value>` filters by meta data (an empty value matches
    /// events without one; defaults count).
    #[oai(path = "/api/v1/organizers/:organizer/events", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_events(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        is_public: Query<Option<bool>>,
        live: Query<Option<bool>>,
        has_subevents: Query<Option<bool>>,
        is_future: Query<Option<bool>>,
        is_past: Query<Option<bool>>,
        ends_after: Query<Option<DateTime<Utc>>>,
        ordering: Query<Option<EventOrdering>>,
        sales_channel: Query<Option<String>>,
    ) -> ListResult<Json<Page<EventOut>>> {
        let org = auth.0.organizer(&organizer, None)?;
        let filter = EventFilter {
            is_public: is_public.0,
            live: live.0,
            has_subevents: has_subevents.0,
            is_future: is_future.0,
            is_past: is_past.0,
            ends_after: ends_after.0,
            attrs: attr_filters(req),
            sales_channel: sales_channel.0,
        };
        let properties = meta::properties(&state.db, org.organizer.id).await?;
        let now = crate::values::now();
        let mut found: Vec<event::Model> = event::Entity::find()
            .filter(event::Column::OrganizerId.eq(org.organizer.id))
            .all(&state.db)
            .await?
            .into_iter()
            .filter(|e| {
                auth.0
                    .event_permissions(org.organizer.id, e.id)
                    .has(Permission::ChangeEventSettings)
            })
            .filter(|e| filter.accepts(e, &events::effective_meta(e, &properties), now))
            .collect();
        match ordering.0.unwrap_or(EventOrdering::Slug) {
            EventOrdering::DateFrom => found.sort_by_key(|e| (e.date_from, e.id)),
            EventOrdering::DateFromDesc => {
                found.sort_by_key(|e| std::cmp::Reverse((e.date_from, e.id)))
            }
            EventOrdering::Slug => found.sort_by(|a, b| a.slug.cmp(&b.slug)),
            EventOrdering::SlugDesc => found.sort_by(|a, b| b.slug.cmp(&a.slug)),
        }
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(found.len() as u64)?;
        let shown: Vec<&event::Model> = found
            .iter()
            .skip(window.offset as usize)
            .take(window.limit as usize)
            .collect();
        let ids: Vec<i64> = shown.iter().map(|e| e.id).collect();
        let mut item_meta = meta::item_defaults(&state.db, &ids).await?;
        Ok(Json(
            window.page(
                shown
                    .into_iter()
                    .map(|e| {
                        let defaults = item_meta.remove(&e.id).unwrap_or_default();
                        event_out(e, &properties, defaults, false)
                    })
                    .collect(),
            ),
        ))
    }

    /// Show an event
    ///
    /// Includes `valid_keys`, the public keys of the ticket signature schemes.
    #[oai(path = "/api/v1/organizers/:organizer/events/:event", method = "get")]
    async fn get_event(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
    ) -> ReadResult<Json<EventOut>> {
        let access = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let properties = meta::properties(&state.db, access.organizer.id).await?;
        let mut shown = access.event.clone();
        if shown.public_key.is_empty() {
            // Made at the first signed ticket, perhaps after this process kept the event.
            shown.public_key = crate::domain::secrets::public_key(&state.db, shown.id).await?;
        }
        let item_meta = item_meta(&state, shown.id).await?;
        Ok(Json(event_out(&shown, &properties, item_meta, true)))
    }

    /// Create an event
    ///
    /// Events cannot be created live. With `talk_enabled`, the slug must be one no other
    /// organizer's event on the talk side has (400 on `slug`). Needs `can_create_events`.
    #[oai(path = "/api/v1/organizers/:organizer/events", method = "post")]
    async fn create_event(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<EventCreate>,
    ) -> WriteResult<Created<EventOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::CreateEvents))?;
        let rows = meta::event_property_rows(&state.db, org.organizer.id).await?;
        let mut body = body.0;
        body.meta_data = sent_meta(&rows, &org, body.meta_data, &json!({}));
        let item_defaults = body.item_meta_properties.take();
        let candidate = new_row(org.organizer.id, body, None);
        let created = create_event(&state, candidate, None, item_defaults).await?;
        shown(&state, &rows, created).await
    }

    /// Clone an event
    ///
    /// Creates an event from the sent fields and copies `is_public`, `testmode`,
    /// `has_subevents`, settings, plugin settings and the configuration (items, categories,
    /// tax rules, ...) of the source event; sent values of `plugins`, `has_subevents` and
    /// `is_public` win over the copies. `talk_enabled` is not copied (false unless sent).
    /// Needs `can_create_events`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/clone",
        method = "post"
    )]
    async fn clone_event(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<EventCreate>,
    ) -> WriteResult<Created<EventOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::CreateEvents))?;
        let source = auth
            .0
            .event(&state.db, &organizer, &event, None)
            .await?
            .event;
        let rows = meta::event_property_rows(&state.db, org.organizer.id).await?;
        let mut body = body.0;
        body.meta_data = sent_meta(&rows, &org, body.meta_data, &source.meta_data);
        let item_defaults = body.item_meta_properties.take();
        let candidate = new_row(org.organizer.id, body, Some(&source));
        let created = create_event(&state, candidate, Some(&source), item_defaults).await?;
        shown(&state, &rows, created).await
    }

    /// Change an event
    ///
    /// `slug` and `has_subevents` cannot change. Going live (`live: true`) needs a quota
    /// and, when a product has a price, an enabled payment provider. Switching the talk side
    /// on (`talk_enabled: true`) needs a slug no other organizer's event on the talk side
    /// has (400 on `slug`).
    #[oai(path = "/api/v1/organizers/:organizer/events/:event", method = "patch")]
    async fn patch_event(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<EventPatch>,
    ) -> WriteResult<Json<EventOut>> {
        let access = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = access.event;
        let org = auth.0.organizer(&organizer, None)?;
        let rows = meta::event_property_rows(&state.db, org.organizer.id).await?;
        let mut body = body.0;
        body.meta_data = sent_meta(&rows, &org, body.meta_data, &existing.meta_data);
        let item_defaults = body.item_meta_properties.take();
        let mut candidate = existing.clone();
        apply_patch(&mut candidate, body);
        events::validate(&state.db, &*state.plugins, &candidate, Some(&existing))
            .await?
            .into_result()?;
        if candidate.live
            && !existing.live
            && let Some(reason) =
                events::live_blocker(&state.db, &*state.plugins, &state.settings, &candidate)
                    .await?
        {
            return Err(ApiError::field("live", reason).into());
        }
        let seating_changed = candidate.seating_plan_id != existing.seating_plan_id
            || candidate.seat_category_mapping != existing.seat_category_mapping;
        let txn = begin_write(&state.db).await?;
        let mut saved =
            sea_orm::ActiveModelTrait::update(changed(existing.into(), &candidate), &txn)
                .await
                .map_err(|e| slug_clash(e, events::TALK_SLUG_TAKEN))?;
        let notice = Notice::about(saved.id, "pretix.event.changed", json!({}));
        webhooks::notify(&txn, &notice).await?;
        if let Some(defaults) = item_defaults {
            meta::set_item_defaults(&txn, saved.id, &defaults)
                .await
                .map_err(ApiError::from)?;
        }
        if seating_changed {
            let mapping = candidate
                .seat_category_mapping
                .as_object()
                .cloned()
                .unwrap_or_default();
            seating::assign(
                &txn,
                saved.organizer_id,
                SeatScope::event(saved.id),
                candidate.seating_plan_id,
                &mapping,
            )
            .await
            .map_err(Refusal::from)?;
            saved = event::Entity::find_by_id(saved.id)
                .one(&txn)
                .await?
                .ok_or_else(ApiError::internal)?;
        }
        crate::db::commit(txn).await?;
        let properties: Vec<meta::Property> = rows.into_iter().map(Into::into).collect();
        let item_meta = item_meta(&state, saved.id).await?;
        Ok(Json(event_out(&saved, &properties, item_meta, true)))
    }

    /// Delete an event
    ///
    /// Events that have orders cannot be deleted.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event",
        method = "delete"
    )]
    async fn delete_event(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
    ) -> DeleteResult<NoContent> {
        let access = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let txn = begin_write(&state.db).await?;
        if events::has_orders(&txn, access.event.id).await? {
            return Err(ApiError::forbidden_because(
                "This event can not be deleted as it already contains orders.",
            )
            .into());
        }
        events::delete(&txn, access.event.id).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }
}

/// The row of `existing` with every field of `candidate` set, but the seating plan and
/// mapping, which only [`seating::assign`] writes.
fn changed(mut row: event::ActiveModel, c: &event::Model) -> event::ActiveModel {
    row.name = Set(c.name.clone());
    row.live = Set(c.live);
    row.testmode = Set(c.testmode);
    row.currency = Set(c.currency.clone());
    row.date_from = Set(c.date_from);
    row.date_to = Set(c.date_to);
    row.date_admission = Set(c.date_admission);
    row.is_public = Set(c.is_public);
    row.presale_start = Set(c.presale_start);
    row.presale_end = Set(c.presale_end);
    row.location = Set(c.location.clone());
    row.geo_lat = Set(c.geo_lat);
    row.geo_lon = Set(c.geo_lon);
    row.meta_data = Set(c.meta_data.clone());
    row.plugins = Set(c.plugins.clone());
    row.timezone = Set(c.timezone.clone());
    row.sales_channels = Set(c.sales_channels.clone());
    row.talk_enabled = Set(c.talk_enabled);
    row
}

/// `attr[<key>]=<value>` pairs of the query string.
fn attr_filters(req: &Request) -> Vec<(String, String)> {
    let query = req.uri().query().unwrap_or_default();
    form_urlencoded::parse(query.as_bytes())
        .filter_map(|(k, v)| {
            Some((
                k.strip_prefix("attr[")?.strip_suffix(']')?.to_owned(),
                v.into_owned(),
            ))
        })
        .collect()
}
