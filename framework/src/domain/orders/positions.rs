//! An event's order positions on their own, as pretix's `orderpositions/`: found by their
//! order, product, date, add-on parent, secret, voucher or check-in; changed and canceled
//! through the order change's rules; and what scanners printed of them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ConnectionTrait, DbErr, EntityTrait, FromQueryResult,
    Set, Statement,
};
use serde_json::Value;

use super::change::{NewPosition, OrderChange, PositionPatch, change};
use super::lifecycle::{LifecycleError, Seller};
use super::{Order, complete};
use crate::db::entities::{event, order, order_position, print_log};

/// Filters of the position list, as pretix's.
#[derive(Debug, Clone, Default)]
pub struct PositionFilter {
    /// The order's code (case-insensitive).
    pub order: Option<String>,
    /// The order's status as shown (`n`, `p`, `e`, `c`), any of them.
    pub order_status: Vec<String>,
    /// Any of these items.
    pub item: Vec<i64>,
    /// Any of these variations.
    pub variation: Vec<i64>,
    /// Any of these dates of the series.
    pub subevent: Vec<i64>,
    /// Add-ons of any of these positions.
    pub addon_to: Vec<i64>,
    /// This ticket secret.
    pub secret: Option<String>,
    /// Redeemed this voucher (by ID).
    pub voucher: Option<i64>,
    /// Redeemed the voucher of this code.
    pub voucher_code: Option<String>,
    /// Checked in at least once, or never.
    pub has_checkin: Option<bool>,
    /// The secret or the order code begins with it, or the attendee's name or e-mail or the
    /// order's e-mail contains it (case-insensitive).
    pub search: Option<String>,
    /// Include positions canceled alone.
    pub include_canceled: bool,
    /// `order__code`, `order__datetime` or `positionid`, each optionally with `-`.
    pub ordering: Option<String>,
}

/// The orderings the list accepts.
pub const ORDERINGS: [&str; 6] = [
    "order__code",
    "-order__code",
    "order__datetime",
    "-order__datetime",
    "positionid",
    "-positionid",
];

/// Positions with the orders they belong to.
pub struct Listed {
    /// The orders, complete.
    pub orders: HashMap<i64, Order>,
    /// The positions, in the asked order.
    pub positions: Vec<order_position::Model>,
}

/// The `FROM … WHERE …` of the positions matching a filter, with its values.
struct Matching {
    sql: String,
    values: Vec<sea_orm::Value>,
}

impl Matching {
    fn new(event_id: i64, f: &PositionFilter, now: DateTime<Utc>) -> Self {
        let mut m = Self {
            sql: "FROM order_positions p JOIN orders o ON o.id = p.order_id WHERE o.event_id = $1"
                .into(),
            values: vec![event_id.into()],
        };
        if !f.include_canceled {
            m.sql.push_str(" AND NOT p.canceled");
        }
        if let Some(code) = &f.order {
            m.and("o.code = $?", [code.to_uppercase().into()]);
        }
        if !f.order_status.is_empty() {
            m.values.push(now.into());
            let live = m.values.len();
            let shown: Vec<String> = (f.order_status.iter())
                .filter_map(|s| status_condition(s, live))
                .collect();
            let any = match shown.is_empty() {
                true => "FALSE".to_owned(),
                false => shown.join(" OR "),
            };
            m.sql.push_str(&format!(" AND ({any})"));
        }
        m.any("p.item_id", &f.item);
        m.any("p.variation_id", &f.variation);
        m.any("p.subevent_id", &f.subevent);
        m.any("p.addon_to_id", &f.addon_to);
        if let Some(secret) = &f.secret {
            m.and("p.secret = $?", [secret.clone().into()]);
        }
        if let Some(v) = f.voucher {
            m.and("p.voucher_id = $?", [v.into()]);
        }
        if let Some(code) = &f.voucher_code {
            m.and(
                "p.voucher_id IN (SELECT id FROM vouchers WHERE event_id = o.event_id AND code = $?)",
                [code.clone().into()],
            );
        }
        if let Some(has) = f.has_checkin {
            let not = if has { "" } else { "NOT " };
            m.sql.push_str(&format!(
                " AND {not}EXISTS (SELECT 1 FROM checkins c WHERE c.position_id = p.id AND c.successful)"
            ));
        }
        if let Some(s) = f.search.as_deref().filter(|s| !s.is_empty()) {
            let lower = s.to_lowercase();
            let prefix = format!("{}%", escape(&lower));
            let inside = format!("%{}%", escape(&lower));
            m.values.extend([prefix.into(), inside.into()]);
            let (pre, any) = (m.values.len() - 1, m.values.len());
            m.sql.push_str(&format!(
                " AND (LOWER(p.secret) LIKE ${pre} ESCAPE '\\' OR LOWER(o.code) LIKE ${pre} ESCAPE '\\' \
                 OR LOWER(COALESCE(p.attendee_email, '')) LIKE ${any} ESCAPE '\\' \
                 OR LOWER(COALESCE(o.email, '')) LIKE ${any} ESCAPE '\\' \
                 OR LOWER(CAST(p.attendee_name_parts AS TEXT)) LIKE ${any} ESCAPE '\\')"
            ));
        }
        m
    }

    /// Adds a condition whose `$?` marks take the values in turn.
    fn and<const N: usize>(&mut self, condition: &str, values: [sea_orm::Value; N]) {
        let mut cond = condition.to_owned();
        for v in values {
            self.values.push(v);
            cond = cond.replacen("$?", &format!("${}", self.values.len()), 1);
        }
        self.sql.push_str(&format!(" AND ({cond})"));
    }

    /// Adds `column IN (ids)` when there are IDs.
    fn any(&mut self, column: &str, ids: &[i64]) {
        if ids.is_empty() {
            return;
        }
        let marks: Vec<String> = ids
            .iter()
            .map(|id| {
                self.values.push((*id).into());
                format!("${}", self.values.len())
            })
            .collect();
        self.sql
            .push_str(&format!(" AND {column} IN ({})", marks.join(", ")));
    }
}

/// The condition of an order status as shown, given the mark of "the term has not passed".
fn status_condition(status: &str, live: usize) -> Option<String> {
    let lapsing = "o.expires_automatically AND NOT o.require_approval";
    Some(match status {
        "p" => "o.status = 'p'".into(),
        "c" => "o.status = 'c'".into(),
        "n" => format!(
            "(o.status = 'n' AND (NOT ({lapsing}) OR (o.expires IS NULL OR o.expires > ${live})))"
        ),
        "e" => format!(
            "(o.status = 'n' AND {lapsing} AND NOT (o.expires IS NULL OR o.expires > ${live}))"
        ),
        _ => return None,
    })
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

#[derive(FromQueryResult)]
struct Count {
    n: i64,
}

/// How many positions of the event match.
pub async fn count(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &PositionFilter,
    now: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let m = Matching::new(event_id, f, now);
    let sql = format!("SELECT COUNT(*) AS n {}", m.sql);
    let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, m.values);
    Ok(Count::find_by_statement(stmt)
        .one(db)
        .await?
        .map_or(0, |c| c.n.max(0) as u64))
}

/// One page of the event's matching positions, with their orders.
pub async fn page(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &PositionFilter,
    now: DateTime<Utc>,
    offset: u64,
    limit: u64,
) -> Result<Listed, DbErr> {
    let m = Matching::new(event_id, f, now);
    let ordering = f.ordering.as_deref().unwrap_or("order__datetime");
    let (desc, field) = match ordering.strip_prefix('-') {
        Some(rest) => (" DESC", rest),
        None => ("", ordering),
    };
    let by = match field {
        "order__code" => format!("o.code{desc}, p.positionid"),
        "positionid" => format!("p.positionid{desc}, o.datetime"),
        _ => format!("o.datetime{desc}, p.positionid"),
    };
    let sql = format!(
        "SELECT p.* {} ORDER BY {by}, p.id LIMIT {limit} OFFSET {offset}",
        m.sql
    );
    let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, m.values);
    let positions = order_position::Model::find_by_statement(stmt)
        .all(db)
        .await?;
    let orders = orders_of(db, &positions).await?;
    Ok(Listed { orders, positions })
}

async fn orders_of(
    db: &impl ConnectionTrait,
    positions: &[order_position::Model],
) -> Result<HashMap<i64, Order>, DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter};
    let mut ids: Vec<i64> = positions.iter().map(|p| p.order_id).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = order::Entity::find()
        .filter(order::Column::Id.is_in(ids))
        .all(db)
        .await?;
    Ok(complete(db, rows)
        .await?
        .into_iter()
        .map(|o| (o.row.id, o))
        .collect())
}

/// A position of the event with its order; positions canceled alone only with
/// `include_canceled`.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
    include_canceled: bool,
) -> Result<Option<(Order, order_position::Model)>, DbErr> {
    let f = PositionFilter {
        include_canceled,
        ..Default::default()
    };
    let mut m = Matching::new(event_id, &f, crate::values::now());
    m.and("p.id = $?", [id.into()]);
    let sql = format!("SELECT p.* {}", m.sql);
    let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, m.values);
    let Some(p) = order_position::Model::find_by_statement(stmt)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let mut orders = orders_of(db, std::slice::from_ref(&p)).await?;
    Ok(orders.remove(&p.order_id).map(|o| (o, p)))
}

/// The code of the order a live position of the event belongs to.
async fn order_code(
    seller: Seller<'_>,
    ev: &event::Model,
    id: i64,
) -> Result<String, LifecycleError> {
    find(seller.db, ev.id, id, false)
        .await?
        .map(|(o, _)| o.row.code)
        .ok_or(LifecycleError::NotFound)
}

/// Changes one position through the order change's rules (its attendee data and answers
/// too); gives its order as it is then. Field errors are the position's own (not within
/// `patch_positions`). No mail is sent.
pub async fn patch(
    seller: Seller<'_>,
    ev: &event::Model,
    patch: PositionPatch,
) -> Result<Order, LifecycleError> {
    let code = order_code(seller, ev, patch.position).await?;
    let c = OrderChange {
        patch_positions: vec![patch],
        check_quotas: true,
        ..Default::default()
    };
    change(seller, ev, &code, c).await.map_err(|e| match e {
        LifecycleError::Invalid(mut body) if body.get("patch_positions").is_some() => {
            LifecycleError::Invalid(body["patch_positions"][0].take())
        }
        e => e,
    })
}

/// Adds a position (with the attendee's data and answers) to the order with this code
/// through the order change's rules, as pretix's `POST orderpositions/`; gives the order as
/// it is then and the new position's ID. Field errors are the position's own. No mail is
/// sent.
pub async fn add(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    new: NewPosition,
) -> Result<(Order, i64), LifecycleError> {
    let c = OrderChange {
        create_positions: vec![new],
        check_quotas: true,
        ..Default::default()
    };
    let order = change(seller, ev, code, c).await.map_err(|e| match e {
        LifecycleError::Invalid(mut body) if body.get("create_positions").is_some() => {
            LifecycleError::Invalid(body["create_positions"][0].take())
        }
        e => e,
    })?;
    let id = (order.positions.iter())
        .max_by_key(|p| p.positionid)
        .map(|p| p.id)
        .ok_or(LifecycleError::NotFound)?;
    Ok((order, id))
}

/// Cancels one position (with its add-ons) through the order change's rules; refused for
/// the last one. No mail is sent.
pub async fn cancel(
    seller: Seller<'_>,
    ev: &event::Model,
    id: i64,
) -> Result<Order, LifecycleError> {
    let code = order_code(seller, ev, id).await?;
    let c = OrderChange {
        cancel_positions: vec![id],
        check_quotas: true,
        ..Default::default()
    };
    change(seller, ev, &code, c).await
}

/// A print reported by a scanner.
#[derive(Debug, Clone)]
pub struct Print {
    /// Whether it succeeded.
    pub successful: bool,
    /// When it was printed.
    pub datetime: DateTime<Utc>,
    /// What printed it.
    pub source: String,
    /// `badge`, `ticket`, `certificate` or `other`.
    pub kind: String,
    /// What the printer says of it.
    pub info: Value,
}

/// Records a print of a live position of the event (`device_id`: the reporting device's);
/// `None` when there is no such position.
pub async fn record_print(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    position_id: i64,
    print: Print,
    device_id: Option<i64>,
) -> Result<Option<print_log::Model>, DbErr> {
    if find(db, ev.id, position_id, false).await?.is_none() {
        return Ok(None);
    }
    let row = print_log::ActiveModel {
        id: NotSet,
        position_id: Set(position_id),
        successful: Set(print.successful),
        datetime: Set(print.datetime),
        created: Set(crate::values::now()),
        source: Set(print.source),
        kind: Set(print.kind),
        device_id: Set(device_id),
        info: Set(print.info),
    };
    Ok(Some(row.insert(db).await?))
}
