//! Orders of an event (external checkout), their payments, lifecycle and refunds:
//! `/api/v1/organizers/{organizer}/events/{event}/orders/`. This module is the orders
//! themselves (list, read, create) and what every order resource shares.

pub mod change;
pub mod file_answers;
pub mod lifecycle;
pub mod payments;
pub mod positions;
pub mod refunds;
pub mod wire;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::ToJSON;
use poem_openapi::{Object, OpenApi};
use serde_json::{Map, Value};

use crate::api::Tag;
use crate::api::secrets::FeedAnswer;
use crate::api::talk::shape::Shaped;
use crate::domain::orders::ticket::TicketNames;
use crate::domain::orders::{
    self, AnswerInput, FeeInput, LifecycleError, NewOrder, Order, OrderFilter, PlaceContext,
    PlaceError, PositionInput, Seller,
};
use crate::domain::permissions::Permission;
use crate::domain::questions::is_email;
use crate::domain::settings;
use crate::domain::tickets::variables::TicketDetails;
use crate::http::auth::EventAccess;
use crate::http::error::{ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, Money, Page, PageRequest};
use crate::state::AppState;

use wire::{Answer, InvoiceAddress, OrderOut, OrderPatch, OrderView};

/// A position of a new order.
#[derive(Object)]
pub struct PositionCreate {
    /// The item.
    pub item: i64,
    /// The variation; required for items with variations.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// The price, taxes included; computed from the product (and voucher) when not sent.
    pub price: Option<Money>,
    /// Attendee name parts. Each at most 255 characters.
    #[oai(default, validator(max_length = 255, max_properties = 100))]
    pub attendee_name_parts: BTreeMap<String, String>,
    /// Attendee name, stored as the `full_name` part.
    #[oai(nullable, validator(max_length = 255))]
    pub attendee_name: Option<String>,
    /// Attendee e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub attendee_email: Option<String>,
    /// Answers to the event's questions, at most 1,000.
    #[oai(default, validator(max_items = 1000))]
    pub answers: Vec<Answer>,
    /// The date of a series; required in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat's identifier in the seating plan.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: Option<String>,
    /// A voucher code.
    #[oai(nullable, validator(max_length = 255))]
    pub voucher: Option<String>,
    /// The position's number in the order: given for all positions or for none (then they
    /// are numbered in the order sent); consecutive from 1.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "500")))]
    pub positionid: Option<i32>,
    /// The `positionid` of the position this one is an add-on to: the last position sent
    /// before it that is no add-on itself.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "500")))]
    pub addon_to: Option<i32>,
    /// A discount of the event the client applied, with the `price` it sent. When any
    /// position names one, the discounts sent stand; otherwise the event's discounts price
    /// the positions sent without a price.
    #[oai(nullable)]
    pub discount: Option<i64>,
}

/// A fee of a new order.
#[derive(Object)]
pub struct FeeCreate {
    /// `payment`, `shipping`, `service`, `cancellation`, `insurance`, `late`, `other` or
    /// `giftcard`.
    #[oai(validator(max_length = 100))]
    pub fee_type: String,
    /// Amount, taxes included.
    pub value: Money,
    /// Description.
    #[oai(default, validator(max_length = 190))]
    pub description: String,
    /// Internal type.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_type: Option<String>,
    /// A tax rule of the event.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
}

impl From<FeeCreate> for FeeInput {
    fn from(f: FeeCreate) -> Self {
        Self {
            fee_type: f.fee_type,
            value: f.value.0,
            description: f.description,
            internal_type: f.internal_type,
            tax_rule: f.tax_rule,
        }
    }
}

/// A new order.
#[derive(Object)]
pub struct OrderCreate {
    /// `n` pending (default) or `p` paid.
    #[oai(default = "default_status", validator(max_length = 3))]
    pub status: String,
    /// Customer e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub email: Option<String>,
    /// Customer phone.
    #[oai(nullable, validator(max_length = 128))]
    pub phone: Option<String>,
    /// Customer language: one of the event's `locales`; its default `locale` when not sent.
    #[oai(validator(max_length = 32))]
    pub locale: Option<String>,
    /// Sales channel, one of the event's.
    #[oai(default = "default_channel", validator(max_length = 190))]
    pub sales_channel: String,
    /// Payment provider identifier: `manual` or one of a plugin the event enables.
    #[oai(nullable, validator(max_length = 255))]
    pub payment_provider: Option<String>,
    /// Invoice address.
    #[oai(nullable)]
    pub invoice_address: Option<InvoiceAddress>,
    /// Positions; at least one, at most 500 (as pretix's `PRETIX_MAX_ORDER_SIZE`).
    #[oai(validator(max_items = 500))]
    pub positions: Vec<PositionCreate>,
    /// Fees (not computed by the service), at most 100.
    #[oai(default, validator(max_items = 100))]
    pub fees: Vec<FeeCreate>,
    /// Internal comment. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
    /// Send the order confirmation e-mail.
    #[oai(default)]
    pub send_mail: bool,
    /// The order waits for the organizer's approval (`approve/` or `deny/`); it cannot be
    /// created paid.
    #[oai(default)]
    pub require_approval: bool,
    /// Cart IDs whose reserved quota and seats are credited to the order; the carts are
    /// deleted if and only if the order is created. At most 500, as positions.
    #[oai(default, validator(max_length = 255, max_items = 500))]
    pub consume_carts: Vec<String>,
    /// Validate and price only; nothing is kept.
    #[oai(default)]
    pub simulate: bool,
    /// Place it in test mode.
    #[oai(default)]
    pub testmode: bool,
    /// Free data of the client, at most 100 keys and 10,000 characters written as JSON
    /// (pretix sets no limit).
    #[oai(default, validator(max_properties = 100))]
    pub api_meta: BTreeMap<String, Value>,
}

/// Refuses an `api_meta` longer than [`MAX_API_META_CHARS`] written as JSON.
fn check_api_meta(meta: &BTreeMap<String, Value>) -> Result<(), String> {
    let chars = serde_json::to_string(meta).map_or(0, |s| s.chars().count());
    if chars > MAX_API_META_CHARS {
        return Err(format!(
            "Ensure this field has no more than {MAX_API_META_CHARS} characters."
        ));
    }
    Ok(())
}

/// Most characters of an order's `api_meta` written as JSON. Its values are free JSON, whose
/// length no schema can bound, so it is counted whole.
pub const MAX_API_META_CHARS: usize = 10_000;

fn default_status() -> String {
    "n".into()
}

fn default_channel() -> String {
    "web".into()
}

impl OrderCreate {
    /// The order to place; file answers take uploads of `uploader`.
    fn into_new(self, uploader: String) -> NewOrder {
        NewOrder {
            uploader: Some(uploader),
            paid: self.status == "p",
            require_approval: self.require_approval,
            email: self.email,
            phone: self.phone,
            locale: self.locale,
            sales_channel: self.sales_channel,
            payment_provider: self.payment_provider,
            invoice_address: self.invoice_address.map(wire::stored_address),
            positions: self.positions.into_iter().map(position_input).collect(),
            fees: self.fees.into_iter().map(FeeInput::from).collect(),
            comment: self.comment,
            consume_carts: self.consume_carts,
            whole_carts: false,
            simulate: self.simulate,
            send_mail: self.send_mail,
            testmode: self.testmode,
            api_meta: Value::Object(self.api_meta.into_iter().collect()),
        }
    }
}

fn position_input(p: PositionCreate) -> PositionInput {
    let mut parts: Map<String, Value> = p
        .attendee_name_parts
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    if let Some(name) = p.attendee_name.filter(|n| !n.is_empty())
        && parts.is_empty()
    {
        parts.insert("full_name".into(), Value::String(name));
    }
    PositionInput {
        item: p.item,
        variation: p.variation,
        price: p.price.map(|m| m.0),
        attendee_name_parts: parts,
        attendee_email: p.attendee_email,
        answers: p
            .answers
            .into_iter()
            .map(|a| AnswerInput {
                question: a.question,
                answer: a.answer,
                options: a.options,
            })
            .collect(),
        subevent: p.subevent,
        seat: p.seat,
        voucher: p.voucher,
        positionid: p.positionid,
        addon_to: p.addon_to,
        discount: p.discount,
    }
}

/// Order operations.
pub struct OrdersApi;

/// Checks what the order's fields ask of the event before anything is read for it.
fn check_order(
    body: &OrderCreate,
    ev: &EventAccess,
    values: &BTreeMap<&'static str, Value>,
) -> Result<(), ApiError> {
    let mut errors = crate::http::FieldErrors::new();
    if let Err(e) = check_api_meta(&body.api_meta) {
        errors.push("api_meta", e);
    }
    if !matches!(body.status.as_str(), "n" | "p") {
        errors.push(
            "status",
            format!("\"{}\" is not a valid choice.", body.status),
        );
    } else if body.status == "p" && body.require_approval {
        errors.push(
            "require_approval",
            "An order that needs approval cannot be created paid.",
        );
    }
    if body
        .email
        .as_deref()
        .is_some_and(|e| !e.is_empty() && !is_email(e))
    {
        errors.push("email", "Enter a valid email address.");
    }
    let locales = crate::values::stored::string_list(values.get("locales").unwrap_or(&Value::Null));
    if let Some(l) = &body.locale
        && !locales.contains(l)
    {
        errors.push("locale", format!("\"{l}\" is not a valid choice."));
    }
    if !crate::values::stored::string_list(&ev.event.sales_channels).contains(&body.sales_channel) {
        errors.push(
            "sales_channel",
            format!("Unknown sales channel: '{}'.", body.sales_channel),
        );
    }
    if body.positions.is_empty() {
        errors.push("positions", "An order cannot be empty.");
    }
    Ok(errors.into_result()?)
}

/// An order of the event the caller may view (`can_view_orders`), with the checked access;
/// 403 when either is missing.
pub(crate) async fn viewed(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
    code: &str,
) -> Result<(EventAccess, Order), ApiError> {
    let ev = auth
        .0
        .event(&state.db, organizer, event, Some(Permission::ViewOrders))
        .await?;
    let o = orders::find(&state.db, ev.event.id, code)
        .await?
        .ok_or_else(ApiError::forbidden)?;
    Ok((ev, o))
}

/// The event of an order change, for a caller with `can_change_orders`.
pub(crate) async fn change_orders(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
) -> Result<EventAccess, ApiError> {
    auth.0
        .event(&state.db, organizer, event, Some(Permission::ChangeOrders))
        .await
        .map_err(ApiError::from)
}

pub(crate) fn lifecycle_error(e: LifecycleError) -> ApiError {
    match e {
        LifecycleError::NotFound => ApiError::forbidden(),
        LifecycleError::Refused(m) => ApiError::bad_request(m),
        LifecycleError::Invalid(body) => {
            ApiError::with_body(poem::http::StatusCode::BAD_REQUEST, body)
        }
        LifecycleError::Db(e) => e.into(),
    }
}

pub(crate) fn seller<'a>(state: &'a AppState, ev: &'a EventAccess) -> Seller<'a> {
    state.seller(&ev.organizer.slug)
}

pub(super) async fn shown(
    state: &AppState,
    ev: &EventAccess,
    o: Order,
) -> Result<OrderOut, ApiError> {
    let view = OrderView::load(state, ev, std::slice::from_ref(&o)).await?;
    Ok(view.show(o))
}

#[OpenApi(tag = "Tag::Orders")]
impl OrdersApi {
    /// List orders
    ///
    /// Filters `status` (`n`, `p`, `e`, `c`), `email`, `code`, `testmode`, `modified_since`
    /// (changed at or after), `created_since` (placed at or after), `subevent_after` /
    /// `subevent_before` (with a ticket for a date ending after / beginning before);
    /// `ordering` by `datetime` (default), `code`, `status` or `last_modified`, `-` for
    /// descending. `exclude` (repeatable, dotted for position fields: `positions.checkins`)
    /// leaves fields out; `pdf_data=true` adds each ticket's text variables. The
    /// `X-Page-Generated` header is the server's time when the request began: scanners pass
    /// it as the next sync's `modified_since`. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_orders(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        status: Query<Option<String>>,
        email: Query<Option<String>>,
        code: Query<Option<String>>,
        modified_since: Query<Option<DateTime<Utc>>>,
        created_since: Query<Option<DateTime<Utc>>>,
        subevent_after: Query<Option<DateTime<Utc>>>,
        subevent_before: Query<Option<DateTime<Utc>>>,
        testmode: Query<Option<bool>>,
        #[oai(validator(max_items = 50))] exclude: Query<Vec<String>>,
        pdf_data: Query<Option<bool>>,
        ordering: Query<Option<String>>,
    ) -> ListResult<FeedAnswer<Shaped<Page<OrderOut>>>> {
        let began = crate::values::now();
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        if let Some(o) = ordering.0.as_deref()
            && !orders::ORDERINGS.contains(&o)
        {
            return Err(
                ApiError::field("ordering", format!("Ordering by '{o}' is not possible.")).into(),
            );
        }
        if exclude.0.iter().any(|e| e.chars().count() > 100) {
            return Err(ApiError::field(
                "exclude",
                "Ensure each value has no more than 100 characters.",
            )
            .into());
        }
        let filter = OrderFilter {
            status: status.0,
            email: email.0,
            code: code.0,
            modified_since: modified_since.0,
            created_since: created_since.0,
            subevent_after: subevent_after.0,
            subevent_before: subevent_before.0,
            testmode: testmode.0,
            ordering: ordering.0,
        };
        let q = orders::query(ev.event.id, &filter, crate::values::now());
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(orders::count(&state.db, q.clone()).await?)?;
        let rows = orders::page(&state.db, q, window.offset, window.limit).await?;
        let mut view = OrderView::load(&state, &ev, &rows).await?;
        if pdf_data.0 == Some(true) {
            let cache = state.cache.current().await;
            let positions = rows.iter().flat_map(|o| &o.positions);
            let names = TicketNames::of_event(&state.db, cache, &ev.event, positions).await?;
            let details = TicketDetails::load(&state.db, cache, &ev.event).await?;
            view = view.with_pdf_data(&ev.event, names, details);
        }
        let page = window.page(rows.into_iter().map(|o| view.show(o)).collect::<Vec<_>>());
        let mut body = page.to_json().unwrap_or_default();
        if let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) {
            for order in results {
                exclude_fields(order, &exclude.0);
            }
        }
        Ok(FeedAnswer::new(Shaped::new(body), began))
    }

    /// Show an order
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code",
        method = "get"
    )]
    async fn get_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
    ) -> ReadResult<Json<OrderOut>> {
        let (ev, o) = viewed(&state, &auth, &organizer, &event, &code).await?;
        Ok(Json(shown(&state, &ev, o).await?))
    }

    /// Change an order's details
    ///
    /// E-mail, phone, language (one of the event's), comment, follow-up day, the check-in
    /// staff's note (`checkin_attention`, `checkin_text`), invoice address,
    /// `valid_if_pending`, `api_meta`, and `expires` of a pending order (as `extend/`).
    /// Other fields are read-only and ignored, as pretix does; a refusal changes nothing.
    /// Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code",
        method = "patch"
    )]
    async fn patch_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        body: JsonBody<OrderPatch>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        if let Some(meta) = &body.0.api_meta {
            check_api_meta(meta).map_err(|e| ApiError::field("api_meta", e))?;
        }
        let o = orders::change_details(seller(&state, &ev), &ev.event, &code, body.0.into())
            .await
            .map_err(lifecycle_error)?;
        Ok(Json(shown(&state, &ev, o).await?))
    }

    /// Create an order
    ///
    /// External checkout: the whole order is created, or nothing. Quotas, seats and
    /// vouchers are checked (each position that does not fit gets its own error in the
    /// `positions` list); time frames, minimum and maximum counts, bundles and fees are not.
    /// With `payment_provider` the order has a payment in state `created` with a
    /// `payment_url`. An order that costs nothing and waits for no approval is paid at once
    /// with a confirmed payment of provider `free`; naming `free` for an order with a total
    /// is 400. `simulate: true` validates and prices without saving. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders",
        method = "post"
    )]
    async fn create_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<OrderCreate>,
    ) -> WriteResult<Created<OrderOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let cache = state.cache.current().await;
        let values = settings::of_event(&state.db, &state.settings, cache, &ev.event).await?;
        check_order(&body.0, &ev, &values)?;
        let provider =
            match body.0.payment_provider.as_deref() {
                None => None,
                Some(id) => Some(state.plugins.payment_provider(&ev.event, id).ok_or_else(
                    || {
                        ApiError::field(
                            "payment_provider",
                            "The given payment provider is not known.",
                        )
                    },
                )?),
            };
        let ctx = PlaceContext {
            public_url: state.public_url.clone(),
            organizer: ev.organizer.slug.clone(),
            event: ev.event.clone(),
            settings: values,
            provider,
            plugins: state.plugins.clone(),
        };
        let together = Some(&state.placements);
        let placed = match orders::place(
            &state.db,
            cache,
            together,
            ctx,
            body.0.into_new(auth.0.identity()),
        )
        .await
        {
            Ok(o) => o,
            Err(PlaceError::Invalid(body)) => {
                return Err(ApiError::with_body(poem::http::StatusCode::BAD_REQUEST, body).into());
            }
            Err(PlaceError::Db(e)) => return Err(e.into()),
        };
        state.mailer.wake();
        Ok(Created::Created(Json(shown(&state, &ev, placed).await?)))
    }
}

/// Removes the fields `exclude` names from an order: `fees`, or dotted for the fields of
/// each position, `positions.checkins`. Unknown names are ignored, as pretix does.
fn exclude_fields(order: &mut Value, exclude: &[String]) {
    for path in exclude {
        match path.split_once('.') {
            None => {
                if let Some(o) = order.as_object_mut() {
                    o.remove(path);
                }
            }
            Some((list, field)) => {
                if let Some(items) = order.get_mut(list).and_then(Value::as_array_mut) {
                    for item in items {
                        exclude_fields(item, &[field.to_owned()]);
                    }
                }
            }
        }
    }
}
