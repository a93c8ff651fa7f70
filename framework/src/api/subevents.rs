//! Dates of an event series: `/api/v1/organizers/{organizer}/events/{event}/subevents/`, and
//! all dates of an organizer's series at `/api/v1/organizers/{organizer}/subevents/`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::event;
use crate::domain::permissions::Permission;
use crate::domain::subevents::{self, Scope, SubEvent, SubEventFields, SubEventFilter};
use crate::http::auth::EventScope;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, I18nString, JsonBody, Money, NoContent, NullableMap,
    Page, PageRequest, patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// The price of an item on this date, instead of its default price.
#[derive(Object)]
pub struct ItemPriceOverride {
    /// Item ID; an item of this event.
    pub item: i64,
    /// Price on this date.
    pub price: Money,
}

fn overrides_out(prices: Vec<(i64, i64)>) -> Vec<ItemPriceOverride> {
    prices
        .into_iter()
        .map(|(item, cents)| ItemPriceOverride {
            item,
            price: Money(cents),
        })
        .collect()
}

fn overrides_in(prices: Vec<ItemPriceOverride>) -> Vec<(i64, i64)> {
    prices.into_iter().map(|p| (p.item, p.price.0)).collect()
}

/// A date of an event series.
#[derive(Object)]
#[oai(rename = "SubEvent")]
pub struct SubEventOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: I18nString,
    /// Slug of the event series.
    pub event: String,
    /// Whether its shop is publicly available.
    pub active: bool,
    /// Start.
    pub date_from: Timestamp,
    /// End.
    #[oai(nullable)]
    pub date_to: Option<Timestamp>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: Option<Timestamp>,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: Option<Timestamp>,
    /// When the shop closes.
    #[oai(nullable)]
    pub presale_end: Option<Timestamp>,
    /// Location.
    #[oai(nullable)]
    pub location: Option<I18nString>,
    /// Items priced differently on this date.
    pub item_price_overrides: Vec<ItemPriceOverride>,
    /// Values of the organizer's meta data properties.
    pub meta_data: BTreeMap<String, String>,
    /// The date's seating plan, when it is sold by seat; its seats are at
    /// `subevents/{id}/seats/`.
    pub seating_plan: Option<i64>,
    /// Category of the date's plan to the item it is sold as (or `null`).
    pub seat_category_mapping: NullableMap<i64>,
}

impl From<SubEvent> for SubEventOut {
    fn from(s: SubEvent) -> Self {
        let r = s.row;
        Self {
            id: r.id,
            name: I18nString::from_stored(&r.name),
            event: s.event,
            active: r.active,
            date_from: r.date_from.into(),
            date_to: r.date_to.map(Into::into),
            date_admission: r.date_admission.map(Into::into),
            presale_start: r.presale_start.map(Into::into),
            presale_end: r.presale_end.map(Into::into),
            location: r.location.as_ref().map(I18nString::from_stored),
            item_price_overrides: overrides_out(s.item_prices),
            meta_data: subevents::meta_map(&r.meta_data),
            seating_plan: r.seating_plan_id,
            seat_category_mapping: NullableMap::from_stored(&r.seat_category_mapping),
        }
    }
}

/// A new date, or all fields of a date (PUT); omitted fields are reset.
#[derive(Object)]
pub struct SubEventCreate {
    /// Name.
    #[oai(validator(max_length = 200))]
    pub name: I18nString,
    /// Whether its shop is publicly available.
    #[oai(default)]
    pub active: bool,
    /// Start.
    pub date_from: Timestamp,
    /// End; not before the start.
    #[oai(nullable)]
    pub date_to: Option<Timestamp>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: Option<Timestamp>,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: Option<Timestamp>,
    /// When the shop closes; not before it opens.
    #[oai(nullable)]
    pub presale_end: Option<Timestamp>,
    /// Location.
    #[oai(nullable, validator(max_length = 200))]
    pub location: Option<I18nString>,
    /// Items of this event priced differently on this date.
    #[oai(default, validator(max_items = 1000))]
    pub item_price_overrides: Vec<ItemPriceOverride>,
    /// Values of the organizer's meta data properties, among their allowed values. Each at most
    /// 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: BTreeMap<String, String>,
    /// A seating plan of the organizer; the date gets a seat for each seat of the plan.
    pub seating_plan: Option<i64>,
    /// Category of the plan to the item it is sold as (or `null`), for this date.
    #[oai(default, validator(max_properties = 1000))]
    pub seat_category_mapping: NullableMap<i64>,
}

impl From<SubEventCreate> for SubEventFields {
    fn from(s: SubEventCreate) -> Self {
        Self {
            name: s.name.to_stored(),
            active: s.active,
            date_from: s.date_from.into(),
            date_to: s.date_to.map(Into::into),
            date_admission: s.date_admission.map(Into::into),
            presale_start: s.presale_start.map(Into::into),
            presale_end: s.presale_end.map(Into::into),
            location: s.location.map(|l| l.to_stored()),
            meta_data: s.meta_data,
            item_prices: overrides_in(s.item_price_overrides),
            seating_plan: s.seating_plan,
            seat_category_mapping: s.seat_category_mapping.to_stored(),
        }
    }
}

/// A partial change of a date. `item_price_overrides` and `meta_data`, when sent, replace
/// the whole list or object.
#[derive(Object)]
pub struct SubEventPatch {
    /// Name.
    #[oai(validator(max_length = 200))]
    pub name: Option<I18nString>,
    /// Whether its shop is publicly available.
    pub active: Option<bool>,
    /// Start.
    pub date_from: Option<Timestamp>,
    /// End.
    #[oai(nullable)]
    pub date_to: MaybeUndefined<DateTime<Utc>>,
    /// Admission.
    #[oai(nullable)]
    pub date_admission: MaybeUndefined<DateTime<Utc>>,
    /// When the shop opens.
    #[oai(nullable)]
    pub presale_start: MaybeUndefined<DateTime<Utc>>,
    /// When the shop closes.
    #[oai(nullable)]
    pub presale_end: MaybeUndefined<DateTime<Utc>>,
    /// Location.
    #[oai(nullable, validator(max_length = 200))]
    pub location: MaybeUndefined<I18nString>,
    /// Items of this event priced differently on this date.
    #[oai(validator(max_items = 1000))]
    pub item_price_overrides: Option<Vec<ItemPriceOverride>>,
    /// Values of the organizer's meta data properties. Each at most 10,000 characters (pretix sets
    /// no limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: Option<BTreeMap<String, String>>,
    /// A seating plan of the organizer, or `null` for none. A sold seat must stay in the plan.
    #[oai(nullable)]
    pub seating_plan: MaybeUndefined<i64>,
    /// Category of the plan to the item it is sold as (or `null`); replaces the whole mapping.
    #[oai(validator(max_properties = 1000))]
    pub seat_category_mapping: Option<NullableMap<i64>>,
}

impl SubEventPatch {
    fn apply(self, mut f: SubEventFields) -> SubEventFields {
        if let Some(name) = self.name {
            f.name = name.to_stored();
        }
        f.active = self.active.unwrap_or(f.active);
        f.date_from = self.date_from.map_or(f.date_from, Into::into);
        f.date_to = patched(self.date_to).unwrap_or(f.date_to);
        f.date_admission = patched(self.date_admission).unwrap_or(f.date_admission);
        f.presale_start = patched(self.presale_start).unwrap_or(f.presale_start);
        f.presale_end = patched(self.presale_end).unwrap_or(f.presale_end);
        if let Some(location) = patched(self.location) {
            f.location = location.map(|l| l.to_stored());
        }
        if let Some(prices) = self.item_price_overrides {
            f.item_prices = overrides_in(prices);
        }
        f.meta_data = self.meta_data.unwrap_or(f.meta_data);
        f.seating_plan = patched(self.seating_plan).unwrap_or(f.seating_plan);
        if let Some(mapping) = self.seat_category_mapping {
            f.seat_category_mapping = mapping.to_stored();
        }
        f
    }
}

/// Sub-event operations.
pub struct SubEventsApi;

async fn find_subevent(state: &AppState, event_id: i64, id: i64) -> Result<SubEvent, ApiError> {
    subevents::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn check(state: &AppState, ev: &event::Model, f: &SubEventFields) -> Result<(), ApiError> {
    Ok(FieldErrors::check(
        subevents::invalid_fields(&state.db, ev, f).await?,
    )?)
}

fn filter(
    active: Option<bool>,
    is_future: Option<bool>,
    is_past: Option<bool>,
    ends_after: Option<DateTime<Utc>>,
) -> SubEventFilter {
    SubEventFilter {
        active,
        is_future,
        is_past,
        ends_after,
    }
}

#[OpenApi(tag = "Tag::SubEvents")]
impl SubEventsApi {
    /// List the dates of an event series
    ///
    /// By start, then ID. `active`, `is_future` (not over yet), `is_past` (over) and
    /// `ends_after` filter. Needs any access to the event; empty for an event that is not a
    /// series.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_subevents(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        active: Query<Option<bool>>,
        is_future: Query<Option<bool>>,
        is_past: Query<Option<bool>>,
        ends_after: Query<Option<DateTime<Utc>>>,
    ) -> ListResult<Json<Page<SubEventOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let scope = Scope::Event(ev.event.id);
        let filter = filter(active.0, is_future.0, is_past.0, ends_after.0);
        let total = subevents::count(&state.db, &scope, &filter).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(total)?;
        let rows = subevents::list(&state.db, &scope, &filter, window.limit, window.offset).await?;
        Ok(Json(
            window.page(rows.into_iter().map(Into::into).collect()),
        ))
    }

    /// List the dates of all event series of an organizer
    ///
    /// Only of the events the caller has access to; filters as for one event.
    #[oai(path = "/api/v1/organizers/:organizer/subevents", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_organizer_subevents(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        active: Query<Option<bool>>,
        is_future: Query<Option<bool>>,
        is_past: Query<Option<bool>>,
        ends_after: Query<Option<DateTime<Utc>>>,
    ) -> ListResult<Json<Page<SubEventOut>>> {
        let org = auth.0.organizer(&organizer, None)?;
        let scope = Scope::Organizer {
            organizer_id: org.organizer.id,
            events: match auth.0.event_scope(org.organizer.id) {
                EventScope::All => None,
                EventScope::Only(ids) => Some(ids),
            },
        };
        let filter = filter(active.0, is_future.0, is_past.0, ends_after.0);
        let total = subevents::count(&state.db, &scope, &filter).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(total)?;
        let rows = subevents::list(&state.db, &scope, &filter, window.limit, window.offset).await?;
        Ok(Json(
            window.page(rows.into_iter().map(Into::into).collect()),
        ))
    }

    /// Show a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:id",
        method = "get"
    )]
    async fn get_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<SubEventOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_subevent(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a date of an event series
    ///
    /// Only in events with `has_subevents` (400 otherwise). Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents",
        method = "post"
    )]
    async fn create_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<SubEventCreate>,
    ) -> WriteResult<Created<SubEventOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        if !ev.event.has_subevents {
            return Err(ApiError::bad_request("This event does not have sub-events.").into());
        }
        let fields = SubEventFields::from(body.0);
        check(&state, &ev.event, &fields).await?;
        let saved = subevents::create(&state.db, &ev.event, fields).await?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:id",
        method = "put"
    )]
    async fn put_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<SubEventCreate>,
    ) -> WriteResult<Json<SubEventOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_subevent(&state, ev.event.id, *id).await?;
        let fields = SubEventFields::from(body.0);
        check(&state, &ev.event, &fields).await?;
        Ok(Json(
            subevents::update(&state.db, ev.event.organizer_id, existing, fields)
                .await?
                .into(),
        ))
    }

    /// Change a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:id",
        method = "patch"
    )]
    async fn patch_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<SubEventPatch>,
    ) -> WriteResult<Json<SubEventOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_subevent(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(existing.fields());
        check(&state, &ev.event, &fields).await?;
        Ok(Json(
            subevents::update(&state.db, ev.event.organizer_id, existing, fields)
                .await?
                .into(),
        ))
    }

    /// Delete a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:id",
        method = "delete"
    )]
    async fn delete_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_subevent(&state, ev.event.id, *id).await?;
        subevents::delete(&state.db, existing.row.id).await?;
        Ok(NoContent::NoContent)
    }
}
