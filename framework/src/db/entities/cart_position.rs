//! A reserved product in a cart.

use sea_orm::entity::prelude::*;

/// A row of `cart_positions`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "cart_positions")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The event.
    pub event_id: i64,
    /// The cart it belongs to.
    pub cart_id: String,
    /// The item.
    pub item_id: i64,
    /// The variation.
    pub variation_id: Option<i64>,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// Price in cents.
    pub price_cents: i64,
    /// Attendee name parts.
    pub attendee_name_parts: Json,
    /// Attendee e-mail.
    pub attendee_email: Option<String>,
    /// Seat.
    pub seat_id: Option<i64>,
    /// When it was created.
    pub datetime: DateTimeUtc,
    /// End of the reservation.
    pub expires: DateTimeUtc,
    /// The voucher the position redeems, if any.
    pub voucher_id: Option<i64>,
    /// The position of the cart it is an add-on to, if any.
    pub addon_to_id: Option<i64>,
    /// Whether it came bundled with the position it is an add-on to.
    pub is_bundled: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
