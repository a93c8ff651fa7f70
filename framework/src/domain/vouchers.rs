//! Vouchers: what they apply to, the price they give, the quota they block, and their
//! redemption.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement};

use super::availability::{self, HoldKind};
use super::sale::{Catalogue, Product};
use crate::db::entities::voucher;

pub mod manage;

/// How a voucher changes the price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceMode {
    /// Keeps the price.
    None,
    /// Sets the price to `value`.
    Set,
    /// Subtracts `value` from the price.
    Subtract,
    /// Takes `value` percent off.
    Percent,
}

impl PriceMode {
    /// Every mode.
    pub const ALL: [PriceMode; 4] = [Self::None, Self::Set, Self::Subtract, Self::Percent];

    /// The API name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Set => "set",
            Self::Subtract => "subtract",
            Self::Percent => "percent",
        }
    }

    /// The mode of an API name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// The price a voucher gives for a product whose price is `base_cents`. For `percent`,
/// `value_cents` holds the percentage in hundredths (10 % is 1000).
pub fn price(v: &voucher::Model, base_cents: i64) -> i64 {
    match PriceMode::parse(&v.price_mode).unwrap_or(PriceMode::None) {
        PriceMode::None => base_cents,
        PriceMode::Set => v.value_cents,
        PriceMode::Subtract => (base_cents - v.value_cents).max(0),
        PriceMode::Percent => {
            let off = (base_cents * v.value_cents.clamp(0, 10_000) + 5_000).div_euclid(10_000);
            base_cents - off
        }
    }
}

/// Why a voucher cannot be redeemed for a position, as a message for the customer; `None`
/// when it can. `uses` counts the redemptions this order asks of it so far, this one
/// included.
pub fn refusal(
    v: &voucher::Model,
    catalogue: &Catalogue,
    product: &Product,
    seat_id: Option<i64>,
    uses: i32,
    now: DateTime<Utc>,
) -> Option<&'static str> {
    if v.valid_until.is_some_and(|until| until <= now) {
        return Some("The voucher has expired.");
    }
    if v.redeemed + uses > v.max_usages {
        return Some("The voucher has already been used the maximum number of times.");
    }
    let mismatch = v.item_id.is_some_and(|i| i != product.item_id)
        || v.variation_id.is_some() && v.variation_id != product.variation_id
        || v.subevent_id.is_some() && v.subevent_id != product.subevent_id
        || v.quota_id
            .is_some_and(|q| !catalogue.quotas_of(product).contains(&q));
    if mismatch {
        return Some("This voucher is not valid for this product.");
    }
    if v.seat_id.is_some() && v.seat_id != seat_id {
        return Some("This voucher is not valid for this seat.");
    }
    None
}

/// The quotas a blocking voucher holds: its quota, or those of its item (and variation) on
/// its date. Empty for vouchers that do not block.
pub fn blocked_quotas(v: &voucher::Model, catalogue: &Catalogue) -> Vec<i64> {
    if !v.block_quota {
        return Vec::new();
    }
    if let Some(q) = v.quota_id {
        return vec![q];
    }
    match v.item_id {
        Some(item_id) => catalogue.quotas_of(&Product {
            item_id,
            variation_id: v.variation_id,
            subevent_id: v.subevent_id,
        }),
        None => Vec::new(),
    }
}

/// Reads the event's vouchers with these codes (ignoring case) and locks them until the transaction ends
/// (in ID order, on PostgreSQL).
pub async fn lock_by_codes(
    txn: &impl ConnectionTrait,
    event_id: i64,
    codes: &[String],
) -> Result<Vec<voucher::Model>, DbErr> {
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    let placeholders: Vec<String> = (0..codes.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT * FROM vouchers WHERE event_id = $1 AND UPPER(code) IN ({}) ORDER BY id{lock}",
        placeholders.join(", ")
    );
    let mut values = vec![event_id.into()];
    values.extend(codes.iter().map(|c| c.to_uppercase().into()));
    voucher::Model::find_by_statement(Statement::from_sql_and_values(backend, sql, values))
        .all(txn)
        .await
}

/// Changes how often a voucher was redeemed by `delta`, moving its blocked quota along:
/// each redemption uses one unit it held, each one taken back holds it again. The voucher's
/// quotas must be locked.
pub async fn redeem(
    txn: &impl ConnectionTrait,
    v: &voucher::Model,
    catalogue: &Catalogue,
    delta: i32,
) -> Result<(), DbErr> {
    if delta == 0 {
        return Ok(());
    }
    txn.execute_raw(Statement::from_sql_and_values(
        txn.get_database_backend(),
        "UPDATE vouchers SET redeemed = redeemed + $1 WHERE id = $2",
        [delta.into(), v.id.into()],
    ))
    .await?;
    availability::adjust(
        txn,
        &blocked_quotas(v, catalogue),
        HoldKind::Voucher,
        v.valid_until,
        -i64::from(delta),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voucher(mode: &str, value: i64) -> voucher::Model {
        voucher::Model {
            id: 1,
            event_id: 1,
            code: "X".into(),
            max_usages: 1,
            redeemed: 0,
            valid_until: None,
            block_quota: false,
            allow_ignore_quota: false,
            price_mode: mode.into(),
            value_cents: value,
            item_id: None,
            variation_id: None,
            quota_id: None,
            seat_id: None,
            subevent_id: None,
            tag: String::new(),
            comment: String::new(),
            show_hidden_items: true,
            all_addons_included: false,
            all_bundles_included: false,
            created: crate::values::now(),
        }
    }

    #[test]
    fn each_price_mode_changes_the_price_its_way() {
        assert_eq!(price(&voucher("none", 500), 2300), 2300);
        assert_eq!(price(&voucher("set", 500), 2300), 500);
        assert_eq!(price(&voucher("subtract", 500), 2300), 1800);
        assert_eq!(price(&voucher("subtract", 5000), 2300), 0);
        assert_eq!(price(&voucher("percent", 1000), 2300), 2070);
        assert_eq!(price(&voucher("percent", 10_000), 2300), 0);
    }
}
