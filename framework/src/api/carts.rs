//! Cart positions reserved through the API:
//! `/api/v1/organizers/{organizer}/events/{event}/cartpositions/`.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::Value;

use super::Tag;
use crate::db::entities::cart_position;
use crate::domain::carts::{self, NewCartPosition};
use crate::domain::orders::display_name;
use crate::domain::permissions::Permission;
use crate::domain::settings::{self, Scope};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, Money, NoContent, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

/// A product reserved in a cart.
#[derive(Object)]
#[oai(rename = "CartPosition")]
pub struct CartPositionOut {
    /// Internal ID.
    pub id: i64,
    /// The cart it belongs to.
    pub cart_id: String,
    /// When it was created.
    pub datetime: Timestamp,
    /// End of the reservation.
    pub expires: Timestamp,
    /// The item.
    pub item: i64,
    /// The variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Price.
    pub price: Money,
    /// Attendee name, from its parts.
    #[oai(nullable)]
    pub attendee_name: Option<String>,
    /// Attendee name parts.
    pub attendee_name_parts: BTreeMap<String, String>,
    /// Attendee e-mail.
    #[oai(nullable)]
    pub attendee_email: Option<String>,
    /// Always null: carts created through the API take no vouchers.
    #[oai(nullable)]
    pub voucher: Option<i64>,
    /// The date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat's ID.
    #[oai(nullable)]
    pub seat: Option<i64>,
}

impl From<cart_position::Model> for CartPositionOut {
    fn from(c: cart_position::Model) -> Self {
        Self {
            attendee_name: display_name(&c.attendee_name_parts),
            attendee_name_parts: c
                .attendee_name_parts
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            id: c.id,
            cart_id: c.cart_id,
            datetime: c.datetime.into(),
            expires: c.expires.into(),
            item: c.item_id,
            variation: c.variation_id,
            price: Money(c.price_cents),
            attendee_email: c.attendee_email,
            voucher: None,
            subevent: c.subevent_id,
            seat: c.seat_id,
        }
    }
}

/// A new cart position.
#[derive(Object)]
pub struct CartPositionCreate {
    /// The cart; positions with the same ID form one cart.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub cart_id: String,
    /// The item.
    pub item: i64,
    /// The variation; required for items with variations.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// The price (not computed by the service).
    pub price: Money,
    /// Attendee name parts, each at most 255 characters.
    #[oai(default, validator(max_length = 255, max_properties = 100))]
    pub attendee_name_parts: BTreeMap<String, String>,
    /// Attendee e-mail.
    #[oai(nullable, validator(max_length = 254))]
    pub attendee_email: Option<String>,
    /// The date of a series; required in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat's identifier in the seating plan.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: Option<String>,
    /// End of the reservation; the event's `reservation_time` from now when not sent.
    #[oai(nullable)]
    pub expires: Option<Timestamp>,
}

/// Cart position operations.
pub struct CartsApi;

#[OpenApi(tag = "Tag::CartPositions")]
impl CartsApi {
    /// List cart positions
    ///
    /// Live and expired ones (expired positions hold nothing); `cart_id` filters. Needs
    /// `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/cartpositions",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_cart_positions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        cart_id: Query<Option<String>>,
    ) -> ListResult<Json<Page<CartPositionOut>>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, carts::query(ev.event.id, cart_id.0.as_deref()))
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show a cart position
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/cartpositions/:id",
        method = "get"
    )]
    async fn get_cart_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<CartPositionOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let c = carts::find(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(c.into()))
    }

    /// Create a cart position
    ///
    /// Reserves the product (and seat) exactly as an order would, until `expires`; 400 when
    /// nothing is left. No vouchers and no automatic price. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/cartpositions",
        method = "post"
    )]
    async fn create_cart_position(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<CartPositionCreate>,
    ) -> WriteResult<Created<CartPositionOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let values = settings::resolve(
            &state.db,
            &state.settings,
            Scope::Event {
                organizer_id: ev.event.organizer_id,
                event_id: ev.event.id,
            },
        )
        .await?;
        let minutes = values
            .get("reservation_time")
            .and_then(Value::as_i64)
            .unwrap_or(30);
        let b = body.0;
        let new = NewCartPosition {
            cart_id: b.cart_id,
            item: b.item,
            variation: b.variation,
            price: b.price.0,
            attendee_name_parts: b
                .attendee_name_parts
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
            attendee_email: b.attendee_email,
            subevent: b.subevent,
            seat: b.seat,
            expires: b.expires.map(Into::into),
        };
        let saved = carts::create(&state.db, &ev.event, new, minutes)
            .await?
            .map_err(|(field, message)| ApiError::field(field, message))?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Delete a cart position
    ///
    /// Gives back its quota and seat at once. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/cartpositions/:id",
        method = "delete"
    )]
    async fn delete_cart_position(
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
                Some(Permission::ChangeOrders),
            )
            .await?;
        if !carts::delete(&state.db, &ev.event, *id).await? {
            return Err(ApiError::forbidden().into());
        }
        Ok(NoContent::NoContent)
    }
}
