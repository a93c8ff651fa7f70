//! Add-ons in a new order, as pretix's order creation takes them. Positions are numbered for
//! all or for none; numbers run from 1 without a gap, and an add-on follows its base position
//! (or that position's other add-ons). An add-on whose category its base item includes in
//! its price costs nothing unless a price is sent. Vouchers and seats are for base positions
//! only.

use std::collections::HashSet;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, DbErr, EntityTrait, QueryFilter};

use super::place::{PositionErrors, PositionInput};
use crate::db::entities::{item_addon, order_position};
use crate::domain::sale::{Catalogue, Product};

/// Each position's base position (its index), for add-ons; checks the numbering.
pub(super) fn parents(
    positions: &[PositionInput],
    errors: &mut PositionErrors,
) -> Vec<Option<usize>> {
    let numbered = positions.iter().filter(|p| p.positionid.is_some()).count();
    if numbered == 0 {
        if positions.iter().any(|p| p.addon_to.is_some()) {
            for i in 0..positions.len() {
                errors.add(
                    i,
                    "positionid",
                    "If you set addon_to on any position, you need to specify position IDs manually.",
                );
            }
        }
        return vec![None; positions.len()];
    }
    if numbered < positions.len() {
        for (i, p) in positions.iter().enumerate() {
            if p.positionid.is_none() {
                errors.add(
                    i,
                    "positionid",
                    "If you set position IDs manually, you need to do so for all positions.",
                );
            }
        }
        return vec![None; positions.len()];
    }
    let mut base: Option<usize> = None;
    let mut parents = Vec::with_capacity(positions.len());
    for (i, p) in positions.iter().enumerate() {
        if p.positionid != Some(i as i32 + 1) {
            errors.add(i, "positionid", "Position IDs need to be consecutive.");
        }
        let Some(to) = p.addon_to else {
            base = Some(i);
            parents.push(None);
            continue;
        };
        if base.map(|b| b as i32 + 1) != Some(to) {
            errors.add(
                i,
                "addon_to",
                "If you set addon_to, you need to make sure that the referenced position ID \
                 exists and is transmitted directly before its add-ons.",
            );
        }
        if p.voucher.is_some() {
            let message = "Vouchers are currently not supported for add-on products.";
            errors.add(i, "voucher", message);
        }
        if p.seat.is_some() {
            errors.add(
                i,
                "seat",
                "Seats are currently not supported for add-on products.",
            );
        }
        parents.push(base);
    }
    parents
}

/// Whether each position is an add-on its base item includes in its price (pretix's
/// `is_included_for_free`): the base item has an add-on rule for the add-on item's category
/// with `price_included`. Positions whose product is unknown count as not included.
pub(super) async fn included(
    db: &impl ConnectionTrait,
    catalogue: &Catalogue,
    products: &[Option<Product>],
    parents: &[Option<usize>],
) -> Result<Vec<bool>, DbErr> {
    let item_of = |i: usize| products[i].map(|p| p.item_id);
    let bases: HashSet<i64> = parents
        .iter()
        .flatten()
        .filter_map(|&b| item_of(b))
        .collect();
    if bases.is_empty() {
        return Ok(vec![false; parents.len()]);
    }
    let free: HashSet<(i64, i64)> = item_addon::Entity::find()
        .filter(item_addon::Column::ItemId.is_in(bases))
        .filter(item_addon::Column::PriceIncluded.eq(true))
        .all(db)
        .await?
        .into_iter()
        .map(|a| (a.item_id, a.addon_category_id))
        .collect();
    Ok(parents
        .iter()
        .enumerate()
        .map(|(i, parent)| {
            let base = parent.and_then(item_of);
            let category = item_of(i)
                .and_then(|id| catalogue.item(id))
                .and_then(|it| it.category_id);
            matches!((base, category), (Some(b), Some(c)) if free.contains(&(b, c)))
        })
        .collect())
}

/// Links the written add-ons of an order to their base positions; `positions` are the
/// order's rows as written, numbered as the input's positions.
pub(super) async fn link(
    txn: &DatabaseTransaction,
    parents: &[Option<usize>],
    positions: &mut [order_position::Model],
) -> Result<(), DbErr> {
    for (child, parent) in parents.iter().enumerate() {
        let Some(parent) = parent else { continue };
        let id_of = |n: usize| positions.iter().position(|p| p.positionid == n as i32 + 1);
        let (Some(c), Some(b)) = (id_of(child), id_of(*parent)) else {
            continue;
        };
        let base_id = positions[b].id;
        order_position::Entity::update_many()
            .col_expr(order_position::Column::AddonToId, Expr::value(base_id))
            .filter(order_position::Column::Id.eq(positions[c].id))
            .exec(txn)
            .await?;
        positions[c].addon_to_id = Some(base_id);
    }
    Ok(())
}
