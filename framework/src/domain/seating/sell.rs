//! Selling seats: which seat a product may take, and who holds it.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement};
use serde_json::Value;

use crate::db::entities::{event, seat, subevent};

/// A seat as a sale names it: the date it is for (`None` for an event that is not a
/// series) and its identifier in the plan.
pub type SeatKey = (Option<i64>, String);

/// Reads the event's seats with these keys and locks them until the transaction ends (in
/// ID order, on PostgreSQL), by key.
pub async fn lock_by_guids(
    txn: &impl ConnectionTrait,
    event_id: i64,
    keys: &[SeatKey],
) -> Result<HashMap<SeatKey, seat::Model>, DbErr> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let mut by_date: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for (date, guid) in keys {
        by_date.entry(date.unwrap_or(0)).or_default().push(guid);
    }
    // Each date's identifiers, matched through the unique index's own expression.
    let mut values = vec![event_id.into()];
    let mut places = Vec::new();
    for (date, guids) in by_date {
        values.push(date.into());
        let at = values.len();
        let list: Vec<String> = guids
            .into_iter()
            .map(|g| {
                values.push(g.to_owned().into());
                format!("${}", values.len())
            })
            .collect();
        places.push(format!(
            "(COALESCE(subevent_id, 0) = ${at} AND seat_guid IN ({}))",
            list.join(", ")
        ));
    }
    let lock = crate::db::lock_clause(txn);
    let sql = format!(
        "SELECT * FROM seats WHERE event_id = $1 AND ({}) ORDER BY id{lock}",
        places.join(" OR ")
    );
    let backend = txn.get_database_backend();
    Ok(
        seat::Model::find_by_statement(Statement::from_sql_and_values(backend, sql, values))
            .all(txn)
            .await?
            .into_iter()
            .map(|s| ((s.subevent_id, s.seat_guid.clone()), s))
            .collect(),
    )
}

/// How one place sells by seat: the plan and category mapping of the event, or, in a
/// series, of the date.
#[derive(Debug, Clone, Copy)]
pub struct Seating<'a> {
    plan: Option<i64>,
    mapping: &'a Value,
}

/// The mapping of a place that sells nothing by seat.
static NO_MAPPING: Value = Value::Null;

impl<'a> Seating<'a> {
    /// A place that sells nothing by seat.
    pub const NONE: Seating<'static> = Seating {
        plan: None,
        mapping: &NO_MAPPING,
    };

    /// The seating of the event's `date` (of the event itself without one).
    pub fn of(ev: &'a event::Model, date: Option<&'a subevent::Model>) -> Self {
        match date {
            Some(d) => Self {
                plan: d.seating_plan_id,
                mapping: &d.seat_category_mapping,
            },
            None => Self {
                plan: ev.seating_plan_id,
                mapping: &ev.seat_category_mapping,
            },
        }
    }

    /// Whether this item is sold by seat here (the plan maps a category to it).
    pub fn sold_by_seat(&self, item_id: i64) -> bool {
        self.plan.is_some() && self.category(item_id).is_some()
    }

    /// The category of the plan mapped to the item.
    fn category(&self, item_id: i64) -> Option<&'a str> {
        let mapping = self.mapping.as_object()?;
        mapping
            .iter()
            .find(|(_, item)| item_id_of(item) == Some(item_id))
            .map(|(category, _)| category.as_str())
    }

    /// The item a category of the plan is sold as here, if any.
    pub fn item_of(&self, category: &str) -> Option<i64> {
        item_id_of(self.plan.and(self.mapping.get(category))?)
    }

    /// Why an item cannot take this seat (of this place, possibly unknown), as a message;
    /// `None` when it can. Blocked seats are the caller's business (a voucher may open them).
    pub fn refusal(&self, item_id: i64, seat: Option<&seat::Model>) -> Option<&'static str> {
        let Some(s) = seat else {
            return Some("The selected seat does not exist.");
        };
        if self.category(item_id) != Some(s.category.as_str()) {
            return Some("The selected seat is not valid for this product.");
        }
        if s.sold {
            return Some("The selected seat is already taken.");
        }
        None
    }
}

/// An item ID of a seat category mapping, which stores them as numbers or strings.
fn item_id_of(value: &Value) -> Option<i64> {
    value
        .as_i64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
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
