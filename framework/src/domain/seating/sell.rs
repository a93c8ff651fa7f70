//! Selling seats: which seat a product may take, and who holds it.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement};

use crate::db::entities::{event, seat};

/// Reads the event's seats with these identifiers and locks them until the transaction
/// ends (in ID order, on PostgreSQL), by identifier.
pub async fn lock_by_guids(
    txn: &impl ConnectionTrait,
    event_id: i64,
    guids: &[String],
) -> Result<HashMap<String, seat::Model>, DbErr> {
    if guids.is_empty() {
        return Ok(HashMap::new());
    }
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    let placeholders: Vec<String> = (0..guids.len()).map(|i| format!("${}", i + 2)).collect();
    let mut values = vec![event_id.into()];
    values.extend(guids.iter().map(|g| g.clone().into()));
    let sql = format!(
        "SELECT * FROM seats WHERE event_id = $1 AND seat_guid IN ({}) ORDER BY id{lock}",
        placeholders.join(", ")
    );
    Ok(
        seat::Model::find_by_statement(Statement::from_sql_and_values(backend, sql, values))
            .all(txn)
            .await?
            .into_iter()
            .map(|s| (s.seat_guid.clone(), s))
            .collect(),
    )
}

/// Whether the event sells this item by seat (its seating plan maps a category to it).
pub fn sold_by_seat(ev: &event::Model, item_id: i64) -> bool {
    ev.seating_plan_id.is_some() && seat_category(ev, item_id).is_some()
}

/// The category of the event's plan mapped to the item (the mapping stores item IDs as
/// numbers or strings).
fn seat_category(ev: &event::Model, item_id: i64) -> Option<String> {
    let mapping = ev.seat_category_mapping.as_object()?;
    mapping
        .iter()
        .find(|(_, item)| {
            item.as_i64()
                .or_else(|| item.as_str().and_then(|s| s.parse().ok()))
                == Some(item_id)
        })
        .map(|(category, _)| category.clone())
}

/// Why an item cannot take this seat (of the event, possibly unknown), as a message; `None`
/// when it can. Blocked seats are the caller's business (a voucher may open them).
pub fn refusal(
    ev: &event::Model,
    item_id: i64,
    seat: Option<&seat::Model>,
) -> Option<&'static str> {
    let Some(s) = seat else {
        return Some("The selected seat does not exist.");
    };
    if seat_category(ev, item_id).as_deref() != Some(s.category.as_str()) {
        return Some("The selected seat is not valid for this product.");
    }
    if s.sold {
        return Some("The selected seat is already taken.");
    }
    None
}

#[derive(FromQueryResult)]
struct CartSeat {
    seat_id: i64,
    cart_id: String,
}

/// The carts that hold these seats now, by seat.
pub async fn held_by_carts(
    db: &impl ConnectionTrait,
    seat_ids: &[i64],
    now: DateTime<Utc>,
) -> Result<HashMap<i64, Vec<String>>, DbErr> {
    let mut out: HashMap<i64, Vec<String>> = HashMap::new();
    if seat_ids.is_empty() {
        return Ok(out);
    }
    let ids: Vec<String> = seat_ids.iter().map(i64::to_string).collect();
    let rows = CartSeat::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        format!(
            "SELECT seat_id, cart_id FROM cart_positions WHERE seat_id IN ({}) AND expires > $1",
            ids.join(",")
        ),
        [now.into()],
    ))
    .all(db)
    .await?;
    for r in rows {
        out.entry(r.seat_id).or_default().push(r.cart_id);
    }
    Ok(out)
}
