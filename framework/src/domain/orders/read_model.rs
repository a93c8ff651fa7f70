//! What an order is as the rules hand it on: the row with everything shown with it. Kept
//! apart from the rules that make orders, so that the ports extensions implement can name
//! it.

use chrono::{DateTime, Utc};
use sea_orm::FromQueryResult;

use crate::db::entities::{order, order_fee, order_payment, order_position, order_refund, seat};

/// An order with everything shown with it.
#[derive(Debug, Clone)]
pub struct Order {
    /// The row.
    pub row: order::Model,
    /// Its positions, by position number.
    pub positions: Vec<order_position::Model>,
    /// Its fees.
    pub fees: Vec<order_fee::Model>,
    /// Its payments, by number.
    pub payments: Vec<order_payment::Model>,
    /// The seats its positions hold.
    pub seats: Vec<seat::Model>,
    /// Successful check-ins of its positions, oldest first.
    pub checkins: Vec<PositionCheckin>,
    /// Its refunds, by number.
    pub refunds: Vec<Refund>,
}

/// A successful check-in of a position, as orders show it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct PositionCheckin {
    /// Internal ID.
    pub id: i64,
    /// The position.
    pub position_id: i64,
    /// The check-in list.
    pub list_id: i64,
    /// When it happened (as the scanner says).
    pub datetime: DateTime<Utc>,
    /// `entry` or `exit`.
    pub kind: String,
    /// The gate it happened at.
    pub gate_id: Option<i64>,
    /// Whether it was made automatically.
    pub auto_checked_in: bool,
}

/// A refund with the number of the payment it gives back.
#[derive(Debug, Clone)]
pub struct Refund {
    /// The row.
    pub row: order_refund::Model,
    /// The payment's number within the order.
    pub payment: Option<i32>,
}
