//! Finding tickets on check-in lists (the scanner's search and the list's positions) and
//! reading the scans of an event.

use chrono::{DateTime, Utc};
use sea_orm::ConnectionTrait;

use crate::domain::refusal::Refusal;

use super::redeem::{POSITION_COLUMNS, POSITION_FROM, PositionRow, PositionView};
use super::{CHECKIN_COLUMNS, CheckinRow, of_positions, placeholders, rows};

/// Filters of a position search.
#[derive(Debug, Clone, Default)]
pub struct PositionFilter {
    /// Secret prefix, attendee name or e-mail, order code prefix, order e-mail.
    pub search: Option<String>,
    /// Order code.
    pub order: Option<String>,
    /// Products.
    pub items: Vec<i64>,
    /// Variations.
    pub variations: Vec<i64>,
    /// Exact secret.
    pub secret: Option<String>,
    /// Order statuses.
    pub order_status: Vec<String>,
    /// Sub-events.
    pub subevents: Vec<i64>,
    /// Parent positions.
    pub addon_to: Vec<i64>,
    /// With (true) or without (false) an entry on the lists.
    pub has_checkin: Option<bool>,
    /// Every status, not only those the list admits.
    pub ignore_status: bool,
    /// Attendee name, ignoring case.
    pub attendee_name: Option<String>,
    /// Whether `search` leaves secrets out (a kiosk must not learn them a letter at a time).
    pub search_without_secrets: bool,
}

/// Order of a position search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionOrder {
    /// Attendee name, then number in the order (default).
    AttendeeName,
    /// Order code.
    OrderCode,
    /// Order date.
    OrderDatetime,
    /// Number in the order.
    Positionid,
    /// Latest entry.
    LastCheckedIn,
    /// Order e-mail.
    OrderEmail,
}

/// One page of positions on these lists (one per event), with their check-ins on them.
pub async fn positions(
    db: &impl ConnectionTrait,
    list_ids: &[i64],
    f: &PositionFilter,
    order: PositionOrder,
    descending: bool,
    window: impl FnOnce(u64) -> Result<(u64, u64), Refusal>,
) -> Result<Vec<PositionView>, Refusal> {
    let mut values: Vec<sea_orm::Value> = list_ids.iter().map(|&i| i.into()).collect();
    let lists = placeholders(1, list_ids.len());
    let status = if f.ignore_status {
        "TRUE"
    } else {
        "(o.status = 'p' OR (o.status = 'n' AND l.include_pending))"
    };
    let mut sql = format!(
        " FROM {POSITION_FROM} JOIN checkin_lists l ON l.event_id = o.event_id \
         WHERE l.id IN ({lists}) AND NOT p.canceled AND {status} \
         AND (l.all_products OR p.item_id IN (SELECT item_id FROM checkinlist_items ci \
              WHERE ci.list_id = l.id)) \
         AND (l.subevent_id IS NULL OR p.subevent_id = l.subevent_id)"
    );
    let push =
        |sql: &mut String, cond: &str, v: sea_orm::Value, values: &mut Vec<sea_orm::Value>| {
            values.push(v);
            sql.push_str(&format!(
                " AND {}",
                cond.replace("$?", &format!("${}", values.len()))
            ));
        };
    if let Some(s) = f.search.as_ref().filter(|s| !s.is_empty()) {
        let lower = s.to_lowercase();
        let like = format!("%{}%", escape(&lower));
        let prefix = format!("{}%", escape(&lower));
        values.push(prefix.into());
        let pre = values.len();
        values.push(like.into());
        let any = values.len();
        let secrets = if f.search_without_secrets {
            String::new()
        } else {
            format!("LOWER(p.secret) LIKE ${pre} ESCAPE '\\' OR ")
        };
        sql.push_str(&format!(
            " AND ({secrets}LOWER(o.code) LIKE ${pre} ESCAPE '\\' \
             OR LOWER(CAST(p.attendee_name_parts AS TEXT)) LIKE ${any} ESCAPE '\\' \
             OR LOWER(COALESCE(p.attendee_email, '')) LIKE ${any} ESCAPE '\\' \
             OR LOWER(COALESCE(o.email, '')) LIKE ${any} ESCAPE '\\' \
             OR LOWER(CAST(COALESCE(o.invoice_address, '{{}}') AS TEXT)) LIKE ${any} ESCAPE '\\')"
        ));
    }
    if let Some(code) = &f.order {
        push(&mut sql, "o.code = $?", code.clone().into(), &mut values);
    }
    if let Some(secret) = &f.secret {
        push(
            &mut sql,
            "p.secret = $?",
            secret.clone().into(),
            &mut values,
        );
    }
    if let Some(name) = &f.attendee_name {
        let like = format!("%{}%", escape(&name.to_lowercase()));
        push(
            &mut sql,
            "LOWER(CAST(p.attendee_name_parts AS TEXT)) LIKE $? ESCAPE '\\'",
            like.into(),
            &mut values,
        );
    }
    for (col, ids) in [
        ("p.item_id", &f.items),
        ("p.variation_id", &f.variations),
        ("p.subevent_id", &f.subevents),
        ("p.addon_to_id", &f.addon_to),
    ] {
        if !ids.is_empty() {
            let marks = placeholders(values.len() + 1, ids.len());
            values.extend(ids.iter().map(|&i| i.into()));
            sql.push_str(&format!(" AND {col} IN ({marks})"));
        }
    }
    if !f.order_status.is_empty() {
        let marks = placeholders(values.len() + 1, f.order_status.len());
        values.extend(f.order_status.iter().map(|s| s.clone().into()));
        sql.push_str(&format!(" AND o.status IN ({marks})"));
    }
    if let Some(has) = f.has_checkin {
        let not = if has { "" } else { "NOT " };
        sql.push_str(&format!(
            " AND {not}EXISTS (SELECT 1 FROM checkins c WHERE c.position_id = p.id \
             AND c.list_id = l.id AND c.successful AND c.type = 'entry')"
        ));
    }
    #[derive(sea_orm::FromQueryResult)]
    struct Count {
        n: i64,
    }
    let total: Vec<Count> = rows(db, &format!("SELECT COUNT(*) AS n{sql}"), values.clone()).await?;
    let (limit, offset) = window(total.first().map_or(0, |c| c.n.max(0) as u64))?;
    let dir = if descending { "DESC" } else { "ASC" };
    let order_by = match order {
        PositionOrder::AttendeeName => {
            format!("CAST(p.attendee_name_parts AS TEXT) {dir}, p.positionid {dir}, p.id {dir}")
        }
        PositionOrder::OrderCode => format!("o.code {dir}, p.positionid {dir}"),
        PositionOrder::OrderDatetime => format!("o.datetime {dir}, p.id {dir}"),
        PositionOrder::Positionid => format!("p.positionid {dir}, p.id {dir}"),
        PositionOrder::LastCheckedIn => format!(
            "(SELECT MAX(c.datetime) FROM checkins c WHERE c.position_id = p.id \
             AND c.list_id = l.id AND c.successful) {dir}, p.id {dir}"
        ),
        PositionOrder::OrderEmail => format!("o.email {dir}, p.id {dir}"),
    };
    let found: Vec<PositionRow> = rows(
        db,
        &format!(
            "SELECT {POSITION_COLUMNS}{sql} ORDER BY {order_by} LIMIT {limit} OFFSET {offset}"
        ),
        values,
    )
    .await?;
    let ids: Vec<i64> = found.iter().map(|p| p.id).collect();
    let checkins = of_positions(db, &ids, list_ids).await?;
    let views = found
        .into_iter()
        .map(|row| PositionView {
            checkins: checkins
                .iter()
                .filter(|c| c.position_id == Some(row.id))
                .cloned()
                .collect(),
            row,
            pdf_data: None,
        })
        .collect();
    Ok(views)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// Filters of the event's check-ins.
#[derive(Debug, Clone, Default)]
pub struct CheckinFilter {
    /// Stored at or after.
    pub created_since: Option<DateTime<Utc>>,
    /// Stored before.
    pub created_before: Option<DateTime<Utc>>,
    /// Happened at or after.
    pub datetime_since: Option<DateTime<Utc>>,
    /// Happened before.
    pub datetime_before: Option<DateTime<Utc>>,
    /// Successful or not.
    pub successful: Option<bool>,
    /// Refusal reason.
    pub error_reason: Option<String>,
    /// List.
    pub list: Option<i64>,
    /// `entry` or `exit`.
    pub r#type: Option<String>,
    /// Gate.
    pub gate: Option<i64>,
    /// Device number.
    pub device: Option<i64>,
    /// Done by the system.
    pub auto_checked_in: Option<bool>,
}

/// Order of the check-ins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckinOrder {
    /// ID (default).
    Id,
    /// When it happened.
    Datetime,
    /// When it was stored.
    Created,
}

/// One page of the event's check-ins and how many there are.
#[allow(clippy::too_many_arguments)]
pub async fn checkins(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &CheckinFilter,
    order: CheckinOrder,
    descending: bool,
    window: impl FnOnce(u64) -> Result<(u64, u64), Refusal>,
) -> Result<Vec<CheckinRow>, Refusal> {
    let mut values: Vec<sea_orm::Value> = vec![event_id.into()];
    let mut sql = " FROM checkins c JOIN checkin_lists l ON l.id = c.list_id \
         LEFT JOIN devices d ON d.id = c.device_id WHERE l.event_id = $1"
        .to_owned();
    let mut add = |cond: &str, v: sea_orm::Value| {
        values.push(v);
        sql.push_str(&format!(" AND {cond}${}", values.len()));
    };
    if let Some(t) = f.created_since {
        add("c.created >= ", t.into());
    }
    if let Some(t) = f.created_before {
        add("c.created < ", t.into());
    }
    if let Some(t) = f.datetime_since {
        add("c.datetime >= ", t.into());
    }
    if let Some(t) = f.datetime_before {
        add("c.datetime < ", t.into());
    }
    if let Some(b) = f.successful {
        add("c.successful = ", b.into());
    }
    if let Some(r) = &f.error_reason {
        add("c.error_reason = ", r.clone().into());
    }
    if let Some(l) = f.list {
        add("c.list_id = ", l.into());
    }
    if let Some(t) = &f.r#type {
        add("c.type = ", t.clone().into());
    }
    if let Some(g) = f.gate {
        add("c.gate_id = ", g.into());
    }
    if let Some(d) = f.device {
        add("d.device_id = ", d.into());
    }
    if let Some(a) = f.auto_checked_in {
        add("c.auto_checked_in = ", a.into());
    }
    #[derive(sea_orm::FromQueryResult)]
    struct Count {
        n: i64,
    }
    let total: Vec<Count> = rows(db, &format!("SELECT COUNT(*) AS n{sql}"), values.clone()).await?;
    let (limit, offset) = window(total.first().map_or(0, |c| c.n.max(0) as u64))?;
    let dir = if descending { "DESC" } else { "ASC" };
    let by = match order {
        CheckinOrder::Id => format!("c.id {dir}"),
        CheckinOrder::Datetime => format!("c.datetime {dir}, c.id {dir}"),
        CheckinOrder::Created => format!("c.created {dir}, c.id {dir}"),
    };
    let found: Vec<CheckinRow> = rows(
        db,
        &format!("SELECT {CHECKIN_COLUMNS}{sql} ORDER BY {by} LIMIT {limit} OFFSET {offset}"),
        values,
    )
    .await?;
    Ok(found)
}
