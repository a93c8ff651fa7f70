//! A position with its order as its ticket needs it, read in one query: a ticket download is
//! the hot path at a sale's opening, when every paid order fetches its tickets, and each
//! round trip to the database costs more than the ticket's drawing.

use sea_orm::{ConnectionTrait, DbErr, EntityTrait, FromQueryResult, Iden, Iterable, Statement};

use super::read_model::{Order, PositionCheckin};
use crate::db::entities::{order, order_position};

/// `alias.column AS prefixcolumn, ...` for every column of `E`.
fn columns<E: EntityTrait>(alias: &str, prefix: &str) -> String {
    E::Column::iter()
        .map(|c| format!("{alias}.\"{0}\" AS \"{prefix}{0}\"", c.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A live position of the event with its order as its ticket needs it: the order's live
/// positions (its add-ons, the position it is an add-on to), their seats and first entry
/// scans (the check-ins a ticket shows), but not its fees, payments or refunds, which stay
/// empty. One query; one more for seats, one more for positions scanned already.
pub async fn for_ticket(
    db: &impl ConnectionTrait,
    event_id: i64,
    position_id: i64,
) -> Result<Option<(Order, order_position::Model)>, DbErr> {
    let sql = format!(
        "SELECT {}, {}, \
           (SELECT c.id FROM checkins c WHERE c.position_id = p.id AND c.successful = $3 \
            AND c.type = 'entry' ORDER BY c.datetime, c.id LIMIT 1) AS first_entry \
         FROM order_positions p JOIN orders o ON o.id = p.order_id \
         WHERE p.canceled = $4 AND o.event_id = $2 \
           AND p.order_id = (SELECT q.order_id FROM order_positions q WHERE q.id = $1) \
         ORDER BY p.positionid",
        columns::<order_position::Entity>("p", "p_"),
        columns::<order::Entity>("o", "o_"),
    );
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [
                position_id.into(),
                event_id.into(),
                true.into(),
                false.into(),
            ],
        ))
        .await?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let row = order::Model::from_query_result(first, "o_")?;
    let mut positions = Vec::with_capacity(rows.len());
    let mut first_entries = Vec::new();
    for r in &rows {
        positions.push(order_position::Model::from_query_result(r, "p_")?);
        if let Some(id) = r.try_get::<Option<i64>>("", "first_entry")? {
            first_entries.push(id);
        }
    }
    let Some(p) = positions.iter().find(|p| p.id == position_id).cloned() else {
        return Ok(None);
    };
    let seat_ids = positions.iter().filter_map(|p| p.seat_id).collect();
    let o = Order {
        checkins: first_scans(db, &first_entries).await?,
        seats: super::seats_of(db, seat_ids).await?,
        positions,
        fees: Vec::new(),
        payments: Vec::new(),
        refunds: Vec::new(),
        row,
    };
    Ok(Some((o, p)))
}

/// The check-ins with these IDs, oldest first.
async fn first_scans(
    db: &impl ConnectionTrait,
    ids: &[i64],
) -> Result<Vec<PositionCheckin>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    PositionCheckin::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        format!(
            "SELECT id, position_id, list_id, datetime, type AS kind, gate_id, auto_checked_in \
             FROM checkins WHERE id IN ({}) ORDER BY datetime, id",
            marks.join(", ")
        ),
        ids.iter().map(|id| (*id).into()),
    ))
    .all(db)
    .await
}
