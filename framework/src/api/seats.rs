//! The seats of an event (`/api/v1/organizers/{o}/events/{e}/seats/`) and of each date of a
//! series (`.../events/{e}/subevents/{id}/seats/`), made from their seating plans.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi};

use super::Tag;
use crate::db::entities::{event, seat};
use crate::domain::permissions::Permission;
use crate::domain::seating::sell::Seating;
use crate::domain::seating::{self, SeatFilter, SeatPick, SeatScope, SeatState};
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, JsonBody, Page, PageRequest};
use crate::state::AppState;

/// Where a seat stands.
#[derive(Enum, Clone, Copy)]
#[oai(rename_all = "lowercase")]
pub enum SeatStateOut {
    /// For sale.
    Available,
    /// Not for sale, and not sold.
    Blocked,
    /// Sold by an order, whether blocked or not.
    Sold,
}

/// A seat of an event, or of a date of a series.
#[derive(Object)]
#[oai(rename = "Seat")]
pub struct SeatOut {
    /// Internal ID.
    pub id: i64,
    /// The date of the series the seat belongs to; `null` for an event's own seats.
    pub subevent: Option<i64>,
    /// The seat's identifier in the plan.
    pub seat_guid: String,
    /// Human-readable label, e.g. "Ground floor, Row 3, Seat 12".
    pub name: String,
    /// Zone of the plan.
    pub zone_name: String,
    /// Row number or name.
    pub row_name: String,
    /// Seat number within the row.
    pub seat_number: String,
    /// Category of the plan.
    pub category: String,
    /// The item its category is sold as here (by the seat category mapping), if any.
    pub product: Option<i64>,
    /// `available`, `blocked` or `sold` (sold wins over blocked).
    pub state: SeatStateOut,
    /// Not for sale.
    pub blocked: bool,
    /// Sold by an order.
    pub sold: bool,
}

fn seat_out(s: seat::Model, seating: &Seating) -> SeatOut {
    let state = match seating::state(&s) {
        SeatState::Available => SeatStateOut::Available,
        SeatState::Blocked => SeatStateOut::Blocked,
        SeatState::Sold => SeatStateOut::Sold,
    };
    SeatOut {
        id: s.id,
        subevent: s.subevent_id,
        product: seating.item_of(&s.category),
        seat_guid: s.seat_guid,
        name: s.name,
        zone_name: s.zone_name,
        row_name: s.row_name,
        seat_number: s.seat_number,
        category: s.category,
        state,
        blocked: s.blocked,
        sold: s.sold,
    }
}

/// A change of a seat.
#[derive(Object)]
pub struct SeatPatch {
    /// Block the seat from sale, or release it.
    pub blocked: Option<bool>,
}

/// Seats to block or release together: either `ids` or `seat_guids`, at most 10,000.
#[derive(Object)]
pub struct SeatBulk {
    /// Seat IDs.
    #[oai(validator(max_items = 10000))]
    pub ids: Option<Vec<i64>>,
    /// Seat identifiers in the plan.
    #[oai(validator(max_items = 10000, max_length = 190))]
    pub seat_guids: Option<Vec<String>>,
}

impl SeatBulk {
    fn pick(self) -> Result<SeatPick, ApiError> {
        let either =
            || ApiError::field("non_field_errors", "Please pass either seat_guids or ids.");
        match (
            self.ids.filter(|i| !i.is_empty()),
            self.seat_guids.filter(|g| !g.is_empty()),
        ) {
            (Some(ids), None) => Ok(SeatPick::Ids(ids)),
            (None, Some(guids)) => Ok(SeatPick::Guids(guids)),
            _ => Err(either()),
        }
    }
}

/// The answer of a bulk block or release: an empty object, as pretix.
#[derive(Object)]
pub struct SeatBulkDone {}

/// Seat operations.
pub struct SeatsApi;

/// The event, checked for the caller, and where the path's seats are.
struct Seats {
    event: event::Model,
    scope: SeatScope,
    date: Option<crate::db::entities::subevent::Model>,
}

impl Seats {
    async fn of(
        state: &AppState,
        auth: &Auth,
        (organizer, event): (&str, &str),
        date: Option<i64>,
        needs: Option<Permission>,
    ) -> Result<Self, ApiError> {
        let access = auth.0.event(&state.db, organizer, event, needs).await?;
        let (scope, date) = seating::scope_of(&state.db, &access.event, date).await?;
        Ok(Self {
            event: access.event,
            scope,
            date,
        })
    }

    fn seating(&self) -> Seating<'_> {
        Seating::of(&self.event, self.date.as_ref())
    }

    async fn list(
        &self,
        state: &AppState,
        req: &Request,
        (page, page_size): (Option<String>, Option<u64>),
        blocked: Option<bool>,
    ) -> Result<Page<SeatOut>, ApiError> {
        let filter = SeatFilter { blocked };
        let total = seating::count_seats(&state.db, self.scope, filter).await?;
        let window = PageRequest::new(req, &state.public_url, page, page_size).window(total)?;
        let rows =
            seating::list_seats(&state.db, self.scope, filter, window.limit, window.offset).await?;
        let seating = self.seating();
        Ok(window.page(rows.into_iter().map(|s| seat_out(s, &seating)).collect()))
    }

    async fn show(&self, state: &AppState, id: i64) -> Result<SeatOut, ApiError> {
        let found = seating::find_seat(&state.db, self.scope, id).await?;
        Ok(seat_out(
            found.ok_or_else(ApiError::forbidden)?,
            &self.seating(),
        ))
    }

    async fn patch(&self, state: &AppState, id: i64, body: SeatPatch) -> Result<SeatOut, ApiError> {
        let found = match body.blocked {
            Some(blocked) => seating::set_blocked(&state.db, self.scope, id, blocked).await?,
            None => seating::find_seat(&state.db, self.scope, id).await?,
        };
        Ok(seat_out(
            found.ok_or_else(ApiError::forbidden)?,
            &self.seating(),
        ))
    }

    async fn bulk(
        &self,
        state: &AppState,
        body: SeatBulk,
        blocked: bool,
    ) -> Result<SeatBulkDone, ApiError> {
        let pick = body.pick()?;
        let txn = crate::db::begin_write(&state.db).await?;
        seating::set_blocked_many(&txn, self.scope, &pick, blocked).await?;
        crate::db::commit(txn).await?;
        Ok(SeatBulkDone {})
    }
}

const SETTINGS: Option<Permission> = Some(Permission::ChangeEventSettings);

#[OpenApi(tag = "Tag::Seating")]
impl SeatsApi {
    /// List an event's seats
    ///
    /// In plan order; `blocked=true|false` filters. Any access to the event suffices. An
    /// event series has seats per date: 404, use the date's seats.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/seats",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_seats(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        blocked: Query<Option<bool>>,
    ) -> ListResult<Json<Page<SeatOut>>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), None, None).await?;
        Ok(Json(
            seats
                .list(&state, req, (page.0, page_size.0), blocked.0)
                .await?,
        ))
    }

    /// List the seats of a date of an event series
    ///
    /// As an event's seats, for the date's own seating plan.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:subevent/seats",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_subevent_seats(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        subevent: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        blocked: Query<Option<bool>>,
    ) -> ListResult<Json<Page<SeatOut>>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), Some(*subevent), None).await?;
        Ok(Json(
            seats
                .list(&state, req, (page.0, page_size.0), blocked.0)
                .await?,
        ))
    }

    /// Show a seat of an event
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/seats/:id",
        method = "get"
    )]
    async fn get_seat(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<SeatOut>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), None, None).await?;
        Ok(Json(seats.show(&state, *id).await?))
    }

    /// Show a seat of a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:subevent/seats/:id",
        method = "get"
    )]
    async fn get_subevent_seat(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        subevent: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<SeatOut>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), Some(*subevent), None).await?;
        Ok(Json(seats.show(&state, *id).await?))
    }

    /// Block or release a seat
    ///
    /// A sold seat can be blocked too; it stays sold. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/seats/:id",
        method = "patch"
    )]
    async fn patch_seat(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<SeatPatch>,
    ) -> WriteResult<Json<SeatOut>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), None, SETTINGS).await?;
        Ok(Json(seats.patch(&state, *id, body.0).await?))
    }

    /// Block or release a seat of a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:subevent/seats/:id",
        method = "patch"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn patch_subevent_seat(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        subevent: Path<i64>,
        id: Path<i64>,
        body: JsonBody<SeatPatch>,
    ) -> WriteResult<Json<SeatOut>> {
        let seats = Seats::of(
            &state,
            &auth,
            (&organizer, &event),
            Some(*subevent),
            SETTINGS,
        )
        .await?;
        Ok(Json(seats.patch(&state, *id, body.0).await?))
    }

    /// Block many seats of an event
    ///
    /// All or none: an unknown seat is a 400 naming it. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/seats/bulk_block",
        method = "post"
    )]
    async fn bulk_block(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<SeatBulk>,
    ) -> WriteResult<Json<SeatBulkDone>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), None, SETTINGS).await?;
        Ok(Json(seats.bulk(&state, body.0, true).await?))
    }

    /// Release many seats of an event
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/seats/bulk_unblock",
        method = "post"
    )]
    async fn bulk_unblock(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<SeatBulk>,
    ) -> WriteResult<Json<SeatBulkDone>> {
        let seats = Seats::of(&state, &auth, (&organizer, &event), None, SETTINGS).await?;
        Ok(Json(seats.bulk(&state, body.0, false).await?))
    }

    /// Block many seats of a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:subevent/seats/bulk_block",
        method = "post"
    )]
    async fn bulk_block_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        subevent: Path<i64>,
        body: JsonBody<SeatBulk>,
    ) -> WriteResult<Json<SeatBulkDone>> {
        let seats = Seats::of(
            &state,
            &auth,
            (&organizer, &event),
            Some(*subevent),
            SETTINGS,
        )
        .await?;
        Ok(Json(seats.bulk(&state, body.0, true).await?))
    }

    /// Release many seats of a date of an event series
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/subevents/:subevent/seats/bulk_unblock",
        method = "post"
    )]
    async fn bulk_unblock_subevent(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        subevent: Path<i64>,
        body: JsonBody<SeatBulk>,
    ) -> WriteResult<Json<SeatBulkDone>> {
        let seats = Seats::of(
            &state,
            &auth,
            (&organizer, &event),
            Some(*subevent),
            SETTINGS,
        )
        .await?;
        Ok(Json(seats.bulk(&state, body.0, false).await?))
    }
}
