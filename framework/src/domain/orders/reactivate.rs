//! A canceled order brought back, as pretix's `reactivate`.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, IntoActiveModel, QueryFilter, Set, sea_query::Expr,
};
use serde_json::json;

use super::Order;
use super::lifecycle::{LifecycleError, Seller, lock_vouchers, open, refused};
use super::place::hold_of;
use crate::db::entities::{event, seat};
use crate::domain::extensions::OrderEvent;
use crate::domain::invoices::when::Step;
use crate::domain::seating::sell;
use crate::domain::vouchers;

/// Brings a canceled order back: it holds its quota again, its vouchers are redeemed again
/// and its seats sold again, each only while there is room (else 400 and nothing changes).
/// It is paid when what was paid and not refunded covers its total (and it waits for no
/// approval), else pending under a new payment term. Its tickets get new secrets, since the
/// cancellation put the old ones on the revocation list that offline scanners keep.
pub async fn reactivate(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    if l.order.status != "c" {
        return refused("The order is not allowed to be reactivated.");
    }
    let now = crate::values::now();
    let voucher_ids: Vec<i64> = l.positions.iter().filter_map(|p| p.voucher_id).collect();
    let used = lock_vouchers(&l.txn, &voucher_ids).await?;
    for v in &used {
        let n = voucher_ids.iter().filter(|&&id| id == v.id).count() as i32;
        if v.redeemed + n > v.max_usages {
            return refused("The voucher has been used in the meantime.");
        }
        vouchers::redeem(&l.txn, v, &l.catalogue, n).await?;
    }
    let seats: Vec<i64> = l.positions.iter().filter_map(|p| p.seat_id).collect();
    if !seats.is_empty() {
        let held = sell::held_by_carts(&l.txn, &seats, now).await?;
        let sold = seat::Entity::update_many()
            .col_expr(seat::Column::Sold, Expr::value(true))
            .filter(seat::Column::Id.is_in(seats.clone()))
            .filter(seat::Column::Sold.eq(false))
            .exec(&l.txn)
            .await?;
        if !held.is_empty() || sold.rows_affected != seats.len() as u64 {
            return refused("A seat of this order has been taken in the meantime.");
        }
    }
    let paid = l.covered().await? >= l.order.total_cents && !l.order.require_approval;
    let mut row = l.order.clone().into_active_model();
    row.status = Set(if paid { "p" } else { "n" }.into());
    row.cancellation_date = Set(None);
    row.expires = Set(Some(l.new_term(now).await?));
    row.last_modified = Set(Some(now));
    l.order = row.update(&l.txn).await?;
    let (kind, until) = hold_of(&l.order);
    l.hold_again(kind, until, false).await?;
    l.new_secrets(true).await?;
    l.notify("pretix.event.order.reactivated", json!({}))
        .await?;
    l.invoices(None, Step::Reactivated).await?;
    l.finish(paid.then_some(OrderEvent::Paid)).await
}
