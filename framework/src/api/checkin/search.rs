//! What finding tickets answers, for a list's `positions/` and the organizer's
//! `checkinrpc/search/`.

use std::collections::BTreeMap;

use poem::Request;
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object};
use serde_json::Value;

use super::{DirectionIo, rules_map};
use crate::domain::checkin::lists::{self};
use crate::domain::checkin::redeem::{PositionView, ScanList};
use crate::domain::checkin::search::{self, PositionFilter, PositionOrder};
use crate::domain::checkin::{CheckinRow, Direction};
use crate::domain::grants::Caller;
use crate::domain::orders::file_answers;
use crate::domain::permissions::Permission;
use crate::http::error::ListResult;
use crate::http::{ApiError, Money, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

/// A check-in of a position, as positions show it.
#[derive(Object)]
#[oai(rename = "PositionCheckin")]
pub struct PositionCheckinOut {
    /// Internal ID.
    pub id: i64,
    /// When it happened.
    pub datetime: Timestamp,
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
    /// Entry or exit.
    #[oai(rename = "type")]
    pub direction: DirectionIo,
}

impl From<CheckinRow> for PositionCheckinOut {
    fn from(c: CheckinRow) -> Self {
        Self {
            id: c.id,
            datetime: c.datetime.into(),
            list: c.list_id,
            auto_checked_in: c.auto_checked_in,
            gate: c.gate_id,
            device: c.device_number,
            direction: Direction::parse(&c.r#type).into(),
        }
    }
}

/// An order position as check-in shows it: with its check-ins on the lists asked about.
#[derive(Object)]
#[oai(rename = "CheckinPosition")]
pub struct PositionOut {
    /// Internal ID.
    pub id: i64,
    /// The order's code.
    pub order: String,
    /// Number in the order.
    pub positionid: i32,
    /// Product.
    pub item: i64,
    /// Variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Price.
    pub price: Money,
    /// Attendee name.
    #[oai(nullable)]
    pub attendee_name: Option<String>,
    /// Attendee name parts.
    pub attendee_name_parts: BTreeMap<String, Value>,
    /// Attendee e-mail.
    #[oai(nullable)]
    pub attendee_email: Option<String>,
    /// Ticket secret; left out of a kiosk device's search answers.
    #[oai(skip_serializing_if_is_none)]
    pub secret: Option<String>,
    /// Parent position.
    #[oai(nullable)]
    pub addon_to: Option<i64>,
    /// Date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Valid from.
    #[oai(nullable)]
    pub valid_from: Option<Timestamp>,
    /// Valid until.
    #[oai(nullable)]
    pub valid_until: Option<Timestamp>,
    /// Who blocked it (`["admin"]`), or null.
    #[oai(nullable)]
    pub blocked: Option<Vec<String>>,
    /// Check-ins on the lists asked about.
    pub checkins: Vec<PositionCheckinOut>,
    /// Answers.
    pub answers: Vec<BTreeMap<String, Value>>,
    /// The product asks for attention.
    pub require_attention: bool,
    /// The order's status.
    #[oai(rename = "order__status")]
    pub order_status: String,
    /// The ticket's text variables (redeem with `pdf_data=true`, for callers who may view
    /// orders).
    #[oai(skip_serializing_if_is_none)]
    pub pdf_data: Option<BTreeMap<String, Value>>,
}

impl From<PositionView> for PositionOut {
    fn from(v: PositionView) -> Self {
        let p = v.row;
        Self {
            id: p.id,
            order: p.order_code,
            positionid: p.positionid,
            item: p.item_id,
            variation: p.variation_id,
            price: Money(p.price_cents),
            attendee_name: crate::domain::orders::display_name(&p.attendee_name_parts),
            attendee_name_parts: rules_map(&p.attendee_name_parts),
            attendee_email: p.attendee_email,
            secret: Some(p.secret),
            addon_to: p.addon_to_id,
            subevent: p.subevent_id,
            valid_from: p.valid_from.map(Into::into),
            valid_until: p.valid_until.map(Into::into),
            blocked: p.blocked.then(|| vec!["admin".to_owned()]),
            checkins: v.checkins.into_iter().map(Into::into).collect(),
            answers: p
                .answers
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|answer| rules_map(&file_answers::without_key(answer)))
                        .collect()
                })
                .unwrap_or_default(),
            require_attention: p.checkin_attention,
            order_status: p.order_status,
            pdf_data: v.pdf_data.map(crate::api::orders::wire::pdf_data_out),
        }
    }
}

/// Order of a position search; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum PositionOrdering {
    /// Attendee name.
    #[oai(rename = "attendee_name")]
    AttendeeName,
    /// Reversed.
    #[oai(rename = "-attendee_name")]
    AttendeeNameDesc,
    /// Order code.
    #[oai(rename = "order__code")]
    OrderCode,
    /// Reversed.
    #[oai(rename = "-order__code")]
    OrderCodeDesc,
    /// Order date.
    #[oai(rename = "order__datetime")]
    OrderDatetime,
    /// Reversed.
    #[oai(rename = "-order__datetime")]
    OrderDatetimeDesc,
    /// Number in the order.
    #[oai(rename = "positionid")]
    Positionid,
    /// Reversed.
    #[oai(rename = "-positionid")]
    PositionidDesc,
    /// Latest entry.
    #[oai(rename = "last_checked_in")]
    LastCheckedIn,
    /// Reversed.
    #[oai(rename = "-last_checked_in")]
    LastCheckedInDesc,
    /// Order e-mail.
    #[oai(rename = "order__email")]
    OrderEmail,
    /// Reversed.
    #[oai(rename = "-order__email")]
    OrderEmailDesc,
}

impl PositionOrdering {
    fn order(self) -> (PositionOrder, bool) {
        use PositionOrder as P;
        use PositionOrdering as O;
        match self {
            O::AttendeeName => (P::AttendeeName, false),
            O::AttendeeNameDesc => (P::AttendeeName, true),
            O::OrderCode => (P::OrderCode, false),
            O::OrderCodeDesc => (P::OrderCode, true),
            O::OrderDatetime => (P::OrderDatetime, false),
            O::OrderDatetimeDesc => (P::OrderDatetime, true),
            O::Positionid => (P::Positionid, false),
            O::PositionidDesc => (P::Positionid, true),
            O::LastCheckedIn => (P::LastCheckedIn, false),
            O::LastCheckedInDesc => (P::LastCheckedIn, true),
            O::OrderEmail => (P::OrderEmail, false),
            O::OrderEmailDesc => (P::OrderEmail, true),
        }
    }
}

/// Lists of the organizer by ID for the RPC: each in an event the caller may scan for,
/// at most one per event.
pub(super) async fn rpc_lists(
    state: &AppState,
    caller: &Caller,
    organizer: &str,
    ids: &[i64],
    needs: &[Permission],
) -> Result<Result<Vec<ScanList>, Vec<i64>>, ApiError> {
    let org = caller.organizer(organizer, None)?;
    let found = lists::of_organizer(
        &state.db,
        state.cache.current().await,
        org.organizer.id,
        ids,
    )
    .await?;
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for &id in ids {
        let usable = found
            .iter()
            .find(|(l, _)| l.row.id == id)
            .and_then(|(l, ev)| {
                let perms = caller.event_permissions(org.organizer.id, ev.id);
                needs.iter().any(|p| perms.has(*p)).then(|| ScanList {
                    list: l.clone(),
                    event: ev.clone(),
                })
            });
        match usable {
            Some(s) => out.push(s),
            None => bad.push(id),
        }
    }
    Ok(if bad.is_empty() { Ok(out) } else { Err(bad) })
}

/// One page of a position search; a short search without `can_view_orders` finds nothing.
#[allow(clippy::too_many_arguments)]
pub(super) async fn search_page(
    req: &Request,
    state: &AppState,
    list_ids: &[i64],
    mut filter: PositionFilter,
    can_view: bool,
    ordering: Option<PositionOrdering>,
    page: Option<String>,
    page_size: Option<u64>,
) -> ListResult<Json<Page<PositionOut>>> {
    if let Some(s) = &filter.search
        && s.chars().count() > 200
    {
        return Err(ApiError::field(
            "search",
            "Ensure this field has no more than 200 characters.",
        )
        .into());
    }
    let pr = PageRequest::new(req, &state.public_url, page, page_size);
    let short = filter
        .search
        .as_ref()
        .is_some_and(|s| s.chars().count() < 3);
    if !can_view && (short || filter.search.is_none()) && filter.secret.is_none() {
        // pretix: without the right to view orders, only a search of 3 characters or more
        // (or an exact secret) finds anything.
        return Ok(Json(pr.window(0)?.page(Vec::new())));
    }
    if filter.search.as_deref() == Some("") {
        filter.search = None;
    }
    let (order, desc) = ordering.map_or((PositionOrder::AttendeeName, false), |o| o.order());
    let mut win = None;
    let found = search::positions(&state.db, list_ids, &filter, order, desc, |n| {
        let w = pr.window(n)?;
        let r = (w.limit, w.offset);
        win = Some(w);
        Ok(r)
    })
    .await?;
    let win = win.ok_or_else(ApiError::internal)?;
    Ok(Json(win.page(found.into_iter().map(Into::into).collect())))
}

/// A refused list selection, as a field error of `field` (pretix answers a bare list of
/// messages; scanner apps read a 400 naming `lists` as a list error).
pub(super) fn list_body(field: &str, message: &str) -> ApiError {
    ApiError::field(field, message)
}
