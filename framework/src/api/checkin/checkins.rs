//! The scans of an event: `{event}/checkins/`.

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi};

use super::{DirectionIo, ReasonIo, VIEW_ANY, require_any};
use crate::api::Tag;
use crate::domain::checkin::search::{self, CheckinFilter, CheckinOrder};
use crate::domain::checkin::{CheckinRow, Direction};
use crate::http::error::ListResult;
use crate::http::{ApiError, Auth, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

/// A check-in as the event's list shows it.
#[derive(Object)]
#[oai(rename = "Checkin")]
pub struct CheckinOut {
    /// Internal ID.
    pub id: i64,
    /// Whether it admitted.
    pub successful: bool,
    /// Why it was refused.
    #[oai(nullable)]
    pub error_reason: Option<String>,
    /// More about why.
    #[oai(nullable)]
    pub error_explanation: Option<String>,
    /// The position.
    #[oai(nullable)]
    pub position: Option<i64>,
    /// When it happened.
    pub datetime: Timestamp,
    /// When it was stored.
    pub created: Timestamp,
    /// The list.
    pub list: i64,
    /// Done by the system.
    pub auto_checked_in: bool,
    /// The gate.
    #[oai(nullable)]
    pub gate: Option<i64>,
    /// The device's number.
    #[oai(nullable)]
    pub device: Option<i64>,
    /// The device's number (pretix's second name for it).
    #[oai(nullable)]
    pub device_id: Option<i64>,
    /// Entry or exit.
    #[oai(rename = "type")]
    pub direction: DirectionIo,
}

impl From<CheckinRow> for CheckinOut {
    fn from(c: CheckinRow) -> Self {
        Self {
            id: c.id,
            successful: c.successful,
            error_reason: c.error_reason,
            error_explanation: c.error_explanation,
            position: c.position_id,
            datetime: c.datetime.into(),
            created: c.created.into(),
            list: c.list_id,
            auto_checked_in: c.auto_checked_in,
            gate: c.gate_id,
            device: c.device_number,
            device_id: c.device_number,
            direction: Direction::parse(&c.r#type).into(),
        }
    }
}

/// Order of the check-ins; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum CheckinOrdering {
    /// By ID (default).
    #[oai(rename = "id")]
    Id,
    /// Reversed.
    #[oai(rename = "-id")]
    IdDesc,
    /// When it happened.
    #[oai(rename = "datetime")]
    Datetime,
    /// Reversed.
    #[oai(rename = "-datetime")]
    DatetimeDesc,
    /// When it was stored.
    #[oai(rename = "created")]
    Created,
    /// Reversed.
    #[oai(rename = "-created")]
    CreatedDesc,
}

/// The scans of an event.
pub struct CheckinsApi;

#[OpenApi(tag = "Tag::Checkin")]
impl CheckinsApi {
    /// List check-ins
    ///
    /// Every scan of the event's lists, successful or not, by ID unless `ordering` says
    /// otherwise. Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkins",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_checkins(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        created_since: Query<Option<DateTime<Utc>>>,
        created_before: Query<Option<DateTime<Utc>>>,
        datetime_since: Query<Option<DateTime<Utc>>>,
        datetime_before: Query<Option<DateTime<Utc>>>,
        successful: Query<Option<bool>>,
        error_reason: Query<Option<ReasonIo>>,
        list: Query<Option<i64>>,
        #[oai(name = "type")] direction: Query<Option<DirectionIo>>,
        gate: Query<Option<i64>>,
        device: Query<Option<i64>>,
        auto_checked_in: Query<Option<bool>>,
        ordering: Query<Option<CheckinOrdering>>,
    ) -> ListResult<Json<Page<CheckinOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let filter = CheckinFilter {
            created_since: created_since.0,
            created_before: created_before.0,
            datetime_since: datetime_since.0,
            datetime_before: datetime_before.0,
            successful: successful.0,
            error_reason: error_reason.0.map(|r| r.as_str().to_owned()),
            list: list.0,
            r#type: direction.0.map(|d| Direction::from(d).as_str().to_owned()),
            gate: gate.0,
            device: device.0,
            auto_checked_in: auto_checked_in.0,
        };
        use CheckinOrdering as O;
        let (order, desc) = match ordering.0.unwrap_or(O::Id) {
            O::Id => (CheckinOrder::Id, false),
            O::IdDesc => (CheckinOrder::Id, true),
            O::Datetime => (CheckinOrder::Datetime, false),
            O::DatetimeDesc => (CheckinOrder::Datetime, true),
            O::Created => (CheckinOrder::Created, false),
            O::CreatedDesc => (CheckinOrder::Created, true),
        };
        let pr = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        let mut win = None;
        let found = search::checkins(&state.db, ev.event.id, &filter, order, desc, |n| {
            let w = pr.window(n)?;
            let r = (w.limit, w.offset);
            win = Some(w);
            Ok(r)
        })
        .await?;
        let win = win.ok_or_else(ApiError::internal)?;
        Ok(Json(win.page(found.into_iter().map(Into::into).collect())))
    }
}
