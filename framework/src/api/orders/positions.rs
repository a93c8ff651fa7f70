//! An event's order positions on their own (`orderpositions/`), as pretix serves them:
//! listed with pretix's filters, read, changed and canceled through the order change's
//! rules, and the prints scanners report.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use serde_json::{Map, Value};

use crate::api::Tag;
use crate::db::entities::print_log;
use crate::domain::grants::CallerKind;
use crate::domain::orders::positions::{self, ORDERINGS, PositionFilter, Print};
use crate::domain::orders::{AnswerInput, Order, PositionInfo, ticket::TicketNames};
use crate::domain::permissions::Permission;
use crate::domain::tickets::variables::TicketDetails;
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest, patched};
use crate::state::AppState;
use crate::values::Timestamp;

use super::change::{AddPosition, PositionChange};
use super::wire::{Answer, OrderView, PositionOut};
use super::{change_orders, lifecycle_error, seller};

/// A position's attendee data and answers.
#[derive(Object)]
pub struct AttendeeBody {
    /// Attendee name, stored as the `full_name` part; not together with
    /// `attendee_name_parts`.
    #[oai(validator(max_length = 255))]
    pub attendee_name: Option<String>,
    /// Attendee name parts. Each at most 255 characters.
    #[oai(validator(max_length = 255, max_properties = 100))]
    pub attendee_name_parts: Option<BTreeMap<String, String>>,
    /// Attendee e-mail.
    #[oai(validator(max_length = 254))]
    pub attendee_email: MaybeUndefined<String>,
    /// Every answer of the position (at most 1,000): those left out, or empty, are removed.
    #[oai(validator(max_items = 1000))]
    pub answers: Option<Vec<Answer>>,
}

/// A position's attendee data, answers and what the order change may change of it.
#[derive(Object)]
pub struct PositionPatchBody {
    /// The attendee's data and answers.
    #[oai(flatten)]
    pub attendee: AttendeeBody,
    /// What the order change may change.
    #[oai(flatten)]
    pub change: PositionChange,
}

/// A position added to an order.
#[derive(Object)]
pub struct PositionCreateBody {
    /// The order's code.
    #[oai(validator(max_length = 16))]
    pub order: String,
    /// The product, price, date, seat and validity.
    #[oai(flatten)]
    pub position: AddPosition,
    /// The attendee's data and answers.
    #[oai(flatten)]
    pub attendee: AttendeeBody,
}

/// A print of a position's badge or ticket.
#[derive(Object)]
pub struct PrintIn {
    /// Whether it succeeded (default true).
    #[oai(default = "yes")]
    pub successful: bool,
    /// When it was printed (default now).
    pub datetime: Option<Timestamp>,
    /// What printed it, e.g. `pretixscan`.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub source: String,
    /// What was printed.
    #[oai(rename = "type")]
    pub kind: PrintKind,
    /// What the printer says of it (an object, at most 100 keys).
    #[oai(default, validator(max_properties = 100))]
    pub info: BTreeMap<String, Value>,
}

fn yes() -> bool {
    true
}

/// What was printed, as pretix names it.
#[derive(Enum, Clone, Copy)]
#[oai(rename_all = "lowercase")]
pub enum PrintKind {
    /// A badge.
    Badge,
    /// A ticket.
    Ticket,
    /// A certificate.
    Certificate,
    /// Anything else.
    Other,
}

impl PrintKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Badge => "badge",
            Self::Ticket => "ticket",
            Self::Certificate => "certificate",
            Self::Other => "other",
        }
    }
}

/// A print as stored.
#[derive(Object)]
#[oai(rename = "PrintLog")]
pub struct PrintOut {
    /// Internal ID.
    pub id: i64,
    /// Whether it succeeded.
    pub successful: bool,
    /// When it was printed.
    pub datetime: Timestamp,
    /// What printed it.
    pub source: String,
    /// `badge`, `ticket`, `certificate` or `other`.
    #[oai(rename = "type")]
    pub kind: String,
    /// The reporting device's `device_id`.
    #[oai(nullable)]
    pub device_id: Option<i64>,
    /// What the printer says of it.
    pub info: BTreeMap<String, Value>,
}

impl From<print_log::Model> for PrintOut {
    fn from(p: print_log::Model) -> Self {
        Self {
            id: p.id,
            successful: p.successful,
            datetime: p.datetime.into(),
            source: p.source,
            kind: p.kind,
            device_id: p.device_id,
            info: super::wire::object(&p.info),
        }
    }
}

/// Splits a comma-separated list of IDs; 400 on the field for anything else.
fn ids(field: &str, one: Option<i64>, many: Option<String>) -> Result<Vec<i64>, ApiError> {
    let mut out: Vec<i64> = one.into_iter().collect();
    for part in many
        .iter()
        .flat_map(|m| m.split(','))
        .filter(|p| !p.is_empty())
    {
        let id = part.trim().parse().map_err(|_| {
            ApiError::field(field, format!("Enter a whole number, not \"{part}\"."))
        })?;
        out.push(id);
    }
    if out.len() > 500 {
        return Err(ApiError::field(field, "Name at most 500 values."));
    }
    Ok(out)
}

/// The attendee data and answers sent; file answers take uploads of `uploader`.
fn info(b: &AttendeeBody, uploader: String) -> Result<PositionInfo, ApiError> {
    if b.attendee_name.is_some() && b.attendee_name_parts.is_some() {
        return Err(ApiError::field(
            "attendee_name",
            "Do not specify attendee_name if you specified attendee_name_parts.",
        ));
    }
    let parts = match (&b.attendee_name, &b.attendee_name_parts) {
        (Some(name), _) => Some(Map::from_iter([("full_name".into(), name.clone().into())])),
        (_, Some(parts)) => Some(
            parts
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect(),
        ),
        _ => None,
    };
    Ok(PositionInfo {
        attendee_name_parts: parts,
        attendee_email: patched(b.attendee_email.clone()),
        answers: b.answers.as_ref().map(|answers| {
            answers
                .iter()
                .map(|a| AnswerInput {
                    question: a.question,
                    answer: a.answer.clone(),
                    options: a.options.clone(),
                })
                .collect()
        }),
        uploader: Some(uploader),
    })
}

/// The position `id` as its order shows it.
async fn position_of(
    state: &AppState,
    ev: &crate::http::auth::EventAccess,
    o: Order,
    id: i64,
) -> Result<PositionOut, ApiError> {
    let p = o.positions.iter().find(|p| p.id == id).cloned();
    let p = p.ok_or_else(|| ApiError::not_found("Not found."))?;
    let view = OrderView::load(state, ev, std::slice::from_ref(&o)).await?;
    Ok(view.position(&o, &p))
}

/// Order positions.
pub struct PositionsApi;

#[OpenApi(tag = "Tag::Orders")]
impl PositionsApi {
    /// List order positions
    ///
    /// As pretix: filters `order` (code), `order__status` / `order__status__in` (`n`, `p`,
    /// `e`, `c`), `item` / `item__in`, `variation` / `variation__in`, `subevent` /
    /// `subevent__in`, `addon_to` / `addon_to__in`, `secret`, `voucher`, `voucher__code`,
    /// `has_checkin`, `search` (secret or order code at the start; attendee or order e-mail,
    /// attendee name anywhere); positions canceled alone only with
    /// `include_canceled_positions=true`. `ordering`: `order__code`, `order__datetime`
    /// (default) or `positionid`, each also with `-`. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_positions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        #[oai(validator(max_length = 16))] order: Query<Option<String>>,
        #[oai(name = "order__status", validator(max_length = 1))] order_status: Query<
            Option<String>,
        >,
        #[oai(name = "order__status__in", validator(max_length = 16))] order_status_in: Query<
            Option<String>,
        >,
        item: Query<Option<i64>>,
        #[oai(name = "item__in", validator(max_length = 1000))] item_in: Query<Option<String>>,
        variation: Query<Option<i64>>,
        #[oai(name = "variation__in", validator(max_length = 1000))] variation_in: Query<
            Option<String>,
        >,
        subevent: Query<Option<i64>>,
        #[oai(name = "subevent__in", validator(max_length = 1000))] subevent_in: Query<
            Option<String>,
        >,
        addon_to: Query<Option<i64>>,
        #[oai(name = "addon_to__in", validator(max_length = 1000))] addon_to_in: Query<
            Option<String>,
        >,
        #[oai(validator(max_length = 255))] secret: Query<Option<String>>,
        voucher: Query<Option<i64>>,
        #[oai(name = "voucher__code", validator(max_length = 255))] voucher_code: Query<
            Option<String>,
        >,
        has_checkin: Query<Option<bool>>,
        #[oai(validator(max_length = 255))] search: Query<Option<String>>,
        include_canceled_positions: Query<Option<bool>>,
        ordering: Query<Option<String>>,
        pdf_data: Query<Option<bool>>,
    ) -> ListResult<Json<Page<PositionOut>>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        if let Some(o) = ordering.0.as_deref()
            && !ORDERINGS.contains(&o)
        {
            let message = format!("Ordering by '{o}' is not possible.");
            return Err(ApiError::field("ordering", message).into());
        }
        let statuses = order_status
            .0
            .into_iter()
            .chain((order_status_in.0.iter()).flat_map(|s| s.split(',').map(str::to_owned)));
        let filter = PositionFilter {
            order: order.0,
            order_status: statuses.filter(|s| !s.is_empty()).collect(),
            item: ids("item__in", item.0, item_in.0)?,
            variation: ids("variation__in", variation.0, variation_in.0)?,
            subevent: ids("subevent__in", subevent.0, subevent_in.0)?,
            addon_to: ids("addon_to__in", addon_to.0, addon_to_in.0)?,
            secret: secret.0,
            voucher: voucher.0,
            voucher_code: voucher_code.0,
            has_checkin: has_checkin.0,
            search: search.0,
            include_canceled: include_canceled_positions.0 == Some(true),
            ordering: ordering.0,
        };
        let (now, id) = (crate::values::now(), ev.event.id);
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(positions::count(&state.db, id, &filter, now).await?)?;
        let listed =
            positions::page(&state.db, id, &filter, now, window.offset, window.limit).await?;
        let orders: Vec<Order> = listed.orders.values().cloned().collect();
        let mut view = OrderView::load(&state, &ev, &orders).await?;
        if pdf_data.0 == Some(true) {
            let cache = state.cache.current().await;
            let names =
                TicketNames::of_event(&state.db, cache, &ev.event, &listed.positions).await?;
            let details = TicketDetails::load(&state.db, cache, &ev.event).await?;
            view = view.with_pdf_data(&ev.event, names, details);
        }
        let shown = (listed.positions.iter())
            .filter_map(|p| Some(view.position(listed.orders.get(&p.order_id)?, p)))
            .collect();
        Ok(Json(window.page(shown)))
    }

    /// Show an order position
    ///
    /// A position canceled alone only with `include_canceled_positions=true`. Needs
    /// `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id",
        method = "get"
    )]
    async fn get_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        include_canceled_positions: Query<Option<bool>>,
    ) -> ReadResult<Json<PositionOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let all = include_canceled_positions.0 == Some(true);
        let (o, p) = positions::find(&state.db, ev.event.id, id.0, all)
            .await?
            .ok_or_else(|| ApiError::not_found("Not found."))?;
        let view = OrderView::load(&state, &ev, std::slice::from_ref(&o)).await?;
        Ok(Json(view.position(&o, &p)))
    }

    /// Change an order position
    ///
    /// The attendee's name (`attendee_name` or `attendee_name_parts`) and e-mail, its
    /// answers (the list replaces every answer: questions left out or answered with nothing
    /// lose theirs), and what the order change may change (item, variation, date, seat,
    /// price, tax rule, validity, secret), under the change's rules, in one transaction. No
    /// mail is sent. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id",
        method = "patch"
    )]
    async fn patch_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<PositionPatchBody>,
    ) -> WriteResult<Json<PositionOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let info = info(&body.0.attendee, auth.0.identity())?;
        let mut patch = super::change::patch(super::change::PatchPosition {
            position: id.0,
            body: body.0.change,
        });
        patch.info = info;
        let o = positions::patch(seller(&state, &ev), &ev.event, patch)
            .await
            .map_err(position_error)?;
        Ok(Json(position_of(&state, &ev, o, id.0).await?))
    }

    /// Add a position to an order
    ///
    /// As pretix: the product (`item`, `variation`, `subevent`, `seat`, `price`, validity,
    /// `addon_to` by `positionid`) under the order change's rules, with the attendee's data
    /// and answers, in one transaction. An unknown order is 400 on `order`. No mail is
    /// sent. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions",
        method = "post"
    )]
    async fn create_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<PositionCreateBody>,
    ) -> WriteResult<Created<PositionOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let body = body.0;
        let mut new = super::change::add(body.position);
        new.info = info(&body.attendee, auth.0.identity())?;
        let (o, id) = positions::add(seller(&state, &ev), &ev.event, &body.order, new)
            .await
            .map_err(|e| match e {
                crate::domain::orders::LifecycleError::NotFound => ApiError::field(
                    "order",
                    format!("Object with code={} does not exist.", body.order),
                ),
                e => lifecycle_error(e),
            })?;
        Ok(Created::Created(Json(
            position_of(&state, &ev, o, id).await?,
        )))
    }

    /// Cancel an order position
    ///
    /// Cancels the position and its add-ons through the order change's rules; the last
    /// position of an order cannot be canceled (cancel the order). No mail is sent. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id",
        method = "delete"
    )]
    async fn delete_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> WriteResult<NoContent> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        positions::cancel(seller(&state, &ev), &ev.event, id.0)
            .await
            .map_err(position_error)?;
        Ok(NoContent::NoContent)
    }

    /// Report a print
    ///
    /// What a scanner printed of the position (a badge, a ticket, ...), as pretixSCAN
    /// reports it. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orderpositions/:id/printlog",
        method = "post"
    )]
    async fn print_log(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<PrintIn>,
    ) -> WriteResult<Created<PrintOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let device = match auth.0.kind {
            CallerKind::Device { device_id, .. } => Some(device_id),
            _ => None,
        };
        let b = body.0;
        let print = Print {
            successful: b.successful,
            datetime: b.datetime.map_or_else(crate::values::now, Into::into),
            source: b.source,
            kind: b.kind.as_str().to_owned(),
            info: Value::Object(b.info.into_iter().collect()),
        };
        let row = positions::record_print(&state.db, &ev.event, id.0, print, device)
            .await?
            .ok_or_else(|| ApiError::not_found("Not found."))?;
        Ok(Created::Created(Json(row.into())))
    }
}

/// A refusal of a position's change; an unknown position is 404 (not the order's 403).
fn position_error(e: crate::domain::orders::LifecycleError) -> ApiError {
    match e {
        crate::domain::orders::LifecycleError::NotFound => ApiError::not_found("Not found."),
        e => lifecycle_error(e),
    }
}
