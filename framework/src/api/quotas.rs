//! Quotas of an event and their availability:
//! `/api/v1/organizers/{organizer}/events/{event}/quotas/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use super::items::by_id;
use crate::db::entities::event;
use crate::domain::availability::{self, Availability};
use crate::domain::permissions::Permission;
use crate::domain::quotas::{self, Quota, QuotaFields};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, JsonBody, NoContent, Page, PageRequest, patched,
};
use crate::state::AppState;

/// How much of a quota is left, and what holds the rest.
#[derive(Object)]
#[oai(rename = "QuotaAvailability")]
pub struct AvailabilityOut {
    /// Whether anything of it can be sold now.
    pub available: bool,
    /// Units left; null for an unlimited quota.
    #[oai(nullable)]
    pub available_number: Option<i64>,
    /// The quota's size; null for an unlimited quota.
    #[oai(nullable)]
    pub total_size: Option<i64>,
    /// Positions of pending orders.
    pub pending_orders: i64,
    /// Positions of paid orders.
    pub paid_orders: i64,
    /// Paid positions whose ticket was last scanned at an exit.
    pub exited_orders: i64,
    /// Live cart positions.
    pub cart_positions: i64,
    /// Unused redemptions of vouchers that block quota.
    pub blocking_vouchers: i64,
    /// Waiting list entries without a voucher.
    pub waiting_list: i64,
}

impl From<Availability> for AvailabilityOut {
    fn from(a: Availability) -> Self {
        Self {
            available: a.available(),
            available_number: a.available_number,
            total_size: a.total_size,
            pending_orders: a.holds.pending,
            paid_orders: a.holds.paid,
            exited_orders: a.holds.exited,
            cart_positions: a.holds.carts,
            blocking_vouchers: a.holds.vouchers,
            waiting_list: a.holds.waiting_list,
        }
    }
}

/// A quota: how many of its items may be sold.
#[derive(Object)]
#[oai(rename = "Quota")]
pub struct QuotaOut {
    /// Internal ID.
    pub id: i64,
    /// Internal name.
    pub name: String,
    /// Size; null is unlimited.
    #[oai(nullable)]
    pub size: Option<i64>,
    /// Item IDs it acts on.
    pub items: Vec<i64>,
    /// Variation IDs it acts on.
    pub variations: Vec<i64>,
    /// The date of an event series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Closes itself once sold out, until opened again.
    pub close_when_sold_out: bool,
    /// Whether it is closed.
    pub closed: bool,
    /// Tickets scanned at an exit give their capacity back.
    pub release_after_exit: bool,
    /// Left out when the event's availability is computed.
    pub ignore_for_event_availability: bool,
    /// With `with_availability=true`: whether anything can be sold now.
    #[oai(skip_serializing_if_is_none)]
    pub available: Option<bool>,
    /// With `with_availability=true`: units left (null when unlimited).
    #[oai(nullable)]
    pub available_number: MaybeUndefined<i64>,
    /// With `with_availability=true`: the whole availability object.
    #[oai(skip_serializing_if_is_none)]
    pub availability: Option<AvailabilityOut>,
}

impl QuotaOut {
    fn new(q: Quota, availability: Option<Availability>) -> Self {
        let r = q.row;
        Self {
            id: r.id,
            name: r.name,
            size: r.size,
            items: q.items,
            variations: q.variations,
            subevent: r.subevent_id,
            close_when_sold_out: r.close_when_sold_out,
            closed: r.closed,
            release_after_exit: r.release_after_exit,
            ignore_for_event_availability: r.ignore_for_event_availability,
            available: availability.map(|a| a.available()),
            available_number: match availability.map(|a| a.available_number) {
                None => MaybeUndefined::Undefined,
                Some(None) => MaybeUndefined::Null,
                Some(Some(n)) => MaybeUndefined::Value(n),
            },
            availability: availability.map(Into::into),
        }
    }
}

impl From<Quota> for QuotaOut {
    fn from(q: Quota) -> Self {
        Self::new(q, None)
    }
}

/// A new quota, or all fields of a quota (PUT).
#[derive(Object)]
pub struct QuotaCreate {
    /// Internal name.
    #[oai(validator(max_length = 200))]
    pub name: String,
    /// Size; null is unlimited.
    #[oai(nullable)]
    pub size: Option<i64>,
    /// Items of this event.
    #[oai(default, validator(max_items = 1000))]
    pub items: Vec<i64>,
    /// Variations of the listed items; an item with variations needs at least one.
    #[oai(default, validator(max_items = 1000))]
    pub variations: Vec<i64>,
    /// A date of this event series; required in a series, forbidden otherwise.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Close once sold out.
    #[oai(default)]
    pub close_when_sold_out: bool,
    /// Closed.
    #[oai(default)]
    pub closed: bool,
    /// Exits give capacity back.
    #[oai(default)]
    pub release_after_exit: bool,
    /// Left out of the event's availability.
    #[oai(default)]
    pub ignore_for_event_availability: bool,
}

impl From<QuotaCreate> for QuotaFields {
    fn from(q: QuotaCreate) -> Self {
        Self {
            name: q.name,
            size: q.size,
            items: q.items,
            variations: q.variations,
            subevent_id: q.subevent,
            close_when_sold_out: q.close_when_sold_out,
            closed: q.closed,
            release_after_exit: q.release_after_exit,
            ignore_for_event_availability: q.ignore_for_event_availability,
        }
    }
}

/// A partial change of a quota; `items` and `variations`, when sent, replace the lists.
#[derive(Object)]
pub struct QuotaPatch {
    /// Internal name.
    #[oai(validator(max_length = 200))]
    pub name: Option<String>,
    /// Size; null is unlimited.
    #[oai(nullable)]
    pub size: MaybeUndefined<i64>,
    /// Items.
    #[oai(validator(max_items = 1000))]
    pub items: Option<Vec<i64>>,
    /// Variations.
    #[oai(validator(max_items = 1000))]
    pub variations: Option<Vec<i64>>,
    /// Date of the series.
    #[oai(nullable)]
    pub subevent: MaybeUndefined<i64>,
    /// Close once sold out.
    pub close_when_sold_out: Option<bool>,
    /// Closed; `false` opens a closed quota again.
    pub closed: Option<bool>,
    /// Exits give capacity back.
    pub release_after_exit: Option<bool>,
    /// Left out of the event's availability.
    pub ignore_for_event_availability: Option<bool>,
}

impl QuotaPatch {
    fn apply(self, f: QuotaFields) -> QuotaFields {
        QuotaFields {
            name: self.name.unwrap_or(f.name),
            size: patched(self.size).unwrap_or(f.size),
            items: self.items.unwrap_or(f.items),
            variations: self.variations.unwrap_or(f.variations),
            subevent_id: patched(self.subevent).unwrap_or(f.subevent_id),
            close_when_sold_out: self.close_when_sold_out.unwrap_or(f.close_when_sold_out),
            closed: self.closed.unwrap_or(f.closed),
            release_after_exit: self.release_after_exit.unwrap_or(f.release_after_exit),
            ignore_for_event_availability: self
                .ignore_for_event_availability
                .unwrap_or(f.ignore_for_event_availability),
        }
    }
}

/// Quota operations.
pub struct QuotasApi;

async fn find_quota(state: &AppState, event_id: i64, id: i64) -> Result<Quota, ApiError> {
    quotas::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

async fn check(state: &AppState, ev: &event::Model, f: &QuotaFields) -> Result<(), ApiError> {
    Ok(FieldErrors::check(
        quotas::invalid_fields(&state.db, ev, f).await?,
    )?)
}

#[OpenApi(tag = "Tag::Quotas")]
impl QuotasApi {
    /// List quotas
    ///
    /// By ID (`ordering` is `id` or `position`; quotas have no position of their own);
    /// `subevent` filters. With `with_availability=true` every quota carries its
    /// availability, read in one query for the whole page. Needs any access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_quotas(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        subevent: Query<Option<i64>>,
        ordering: Query<Option<String>>,
        with_availability: Query<Option<bool>>,
    ) -> ListResult<Json<Page<QuotaOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        by_id(ordering.0.as_deref())?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, quotas::query(ev.event.id, subevent.0))
            .await?;
        let (rows, page) = page.take_results();
        let mut avail = if with_availability.0.unwrap_or(false) {
            availability::of_quotas(&state.db, &rows).await?
        } else {
            Default::default()
        };
        let full = quotas::complete(&state.db, rows).await?;
        Ok(Json(page(
            full.into_iter()
                .map(|q| {
                    let a = avail.remove(&q.row.id);
                    QuotaOut::new(q, a)
                })
                .collect(),
        )))
    }

    /// Show a quota
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas/:id",
        method = "get"
    )]
    async fn get_quota(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<QuotaOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_quota(&state, ev.event.id, *id).await?.into()))
    }

    /// Show a quota's availability
    ///
    /// From the size, pretix's order: paid and pending order positions, then unused
    /// blocking vouchers, then live cart positions, then waiting list entries without a
    /// voucher. A closed quota is not available.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas/:id/availability",
        method = "get"
    )]
    async fn quota_availability(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<AvailabilityOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let a = availability::of_quota(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(a.into()))
    }

    /// Create a quota
    ///
    /// Needs `can_change_items`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas",
        method = "post"
    )]
    async fn create_quota(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<QuotaCreate>,
    ) -> WriteResult<Created<QuotaOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let fields = QuotaFields::from(body.0);
        check(&state, &ev.event, &fields).await?;
        let saved = quotas::create(&state.db, ev.event.id, fields).await?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a quota
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas/:id",
        method = "put"
    )]
    async fn put_quota(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<QuotaCreate>,
    ) -> WriteResult<Json<QuotaOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_quota(&state, ev.event.id, *id).await?;
        let fields = QuotaFields::from(body.0);
        check(&state, &ev.event, &fields).await?;
        Ok(Json(
            quotas::update(&state.db, &existing, fields).await?.into(),
        ))
    }

    /// Change a quota
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas/:id",
        method = "patch"
    )]
    async fn patch_quota(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<QuotaPatch>,
    ) -> WriteResult<Json<QuotaOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_quota(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(existing.fields());
        check(&state, &ev.event, &fields).await?;
        Ok(Json(
            quotas::update(&state.db, &existing, fields).await?.into(),
        ))
    }

    /// Delete a quota
    ///
    /// Its items may become unavailable for sale.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/quotas/:id",
        method = "delete"
    )]
    async fn delete_quota(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_quota(&state, ev.event.id, *id).await?;
        quotas::delete(&state.db, existing.row.id).await?;
        Ok(NoContent::NoContent)
    }
}
