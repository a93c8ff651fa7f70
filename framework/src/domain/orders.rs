//! Orders: placing them without ever selling more than there is, and what happens to them
//! after (payment, cancellation, extension). Reading them is here too.
//!
//! # Locks
//!
//! Every transaction that changes what holds a quota takes its locks in one order: the
//! order row, vouchers, seats, cart positions, then quotas (by ID). Quota rows are locked
//! before their holds change ([`availability::lock_quotas`]), so two such transactions never
//! wait on each other in a circle, and a check of what is left is never overtaken.

mod addons;
mod change;
mod details;
pub mod file_answers;
pub mod invoicing;
mod lifecycle;
mod mails;
mod one_ticket;
pub mod paying;
mod place;
pub mod positions;
mod reactivate;
pub mod read_model;
pub mod refunds;
pub mod self_service;
pub mod ticket;
mod together;
mod transition;

pub use change::{
    FeePatch, KeepTaxes, NewPosition, OrderChange, PositionInfo, PositionPatch, change,
};
pub use details::{Details, change_details};
pub use lifecycle::{
    ALREADY_PAID, LifecycleError, Seller, approve, cancel, confirm_payment, deny, extend,
    mark_expired, mark_paid, mark_pending, receive_payment, regenerate_secrets, resend_link,
};
pub use mails::Storefront;
pub use one_ticket::for_ticket;
pub use place::{
    AnswerInput, CART_TAKEN, FeeInput, MAX_POSITIONS, NewOrder, PlaceContext, PlaceError,
    PositionInput, payment_page, payment_term_end,
};
pub use read_model::{Order, PositionCheckin};
pub use together::{Placed, Placements, place, placements};
pub use transition::Transition;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Select, Statement,
};
use serde_json::Value;

use super::availability::{self, Demand, HoldKind};
use super::sale::{Catalogue, Product};
use crate::db::entities::{order, order_fee, order_payment, order_position, seat, subevent};

/// Successful check-ins of these positions, oldest first.
pub async fn checkins_of(
    db: &impl ConnectionTrait,
    position_ids: &[i64],
) -> Result<Vec<PositionCheckin>, DbErr> {
    if position_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut values: Vec<sea_orm::Value> = vec![true.into()];
    let marks: Vec<String> = position_ids
        .iter()
        .map(|id| {
            values.push((*id).into());
            format!("${}", values.len())
        })
        .collect();
    PositionCheckin::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        format!(
            "SELECT id, position_id, list_id, datetime, type AS kind, gate_id, auto_checked_in \
             FROM checkins WHERE successful = $1 AND position_id IN ({}) \
             ORDER BY datetime, id",
            marks.join(", ")
        ),
        values,
    ))
    .all(db)
    .await
}

/// An order's status as the API shows it: `n` pending, `p` paid, `e` expired (pending past
/// its payment term, when it expires automatically), `c` canceled.
pub fn status(o: &order::Model, now: DateTime<Utc>) -> &'static str {
    match o.status.as_str() {
        "p" => "p",
        "c" => "c",
        _ if expired(o, now) => "e",
        _ => "n",
    }
}

/// Whether a pending order's term has passed, so that it no longer holds quota.
pub fn expired(o: &order::Model, now: DateTime<Utc>) -> bool {
    o.status == "n" && pending_until(o).is_some_and(|e| e <= now)
}

/// Until when a pending order holds its quota: its term, or forever when it does not expire
/// automatically or waits for approval.
pub fn pending_until(o: &order::Model) -> Option<DateTime<Utc>> {
    o.expires
        .filter(|_| o.expires_automatically && !o.require_approval)
}

/// The product of a position.
pub fn product_of(p: &order_position::Model) -> Product {
    Product {
        item_id: p.item_id,
        variation_id: p.variation_id,
        subevent_id: p.subevent_id,
    }
}

/// Units each quota gives to these products.
pub fn demand<'a>(
    catalogue: &Catalogue,
    products: impl IntoIterator<Item = &'a Product>,
) -> Demand {
    let mut d = Demand::new();
    for p in products {
        for q in catalogue.quotas_of(p) {
            *d.entry(q).or_default() += 1;
        }
    }
    d
}

/// Changes what an order's positions hold of their quotas by `sign` (1 or -1) units each,
/// as `kind` until `until`. The quotas must be locked.
pub async fn hold_positions(
    txn: &impl ConnectionTrait,
    catalogue: &Catalogue,
    positions: &[order_position::Model],
    kind: HoldKind,
    until: Option<DateTime<Utc>>,
    sign: i64,
) -> Result<(), DbErr> {
    let products: Vec<Product> = positions.iter().map(product_of).collect();
    for (quota_id, n) in demand(catalogue, &products) {
        availability::adjust(txn, &[quota_id], kind, until, sign * n).await?;
    }
    Ok(())
}

/// Filters of the order list.
#[derive(Debug, Clone, Default)]
pub struct OrderFilter {
    /// Status as shown (`n`, `p`, `e`, `c`).
    pub status: Option<String>,
    /// Customer e-mail, case-insensitive.
    pub email: Option<String>,
    /// Order code.
    pub code: Option<String>,
    /// Changed at or after this instant.
    pub modified_since: Option<DateTime<Utc>>,
    /// Placed at or after this instant.
    pub created_since: Option<DateTime<Utc>>,
    /// With a position for a date of the series that ends (or, without an end, begins)
    /// after this instant.
    pub subevent_after: Option<DateTime<Utc>>,
    /// With a position for a date of the series that begins before this instant.
    pub subevent_before: Option<DateTime<Utc>>,
    /// Placed in test mode, or not.
    pub testmode: Option<bool>,
    /// `datetime`, `code`, `status`, `last_modified`, each optionally with `-`.
    pub ordering: Option<String>,
}

/// The orders of an event matching a filter, in the asked order.
pub fn query(event_id: i64, f: &OrderFilter, now: DateTime<Utc>) -> Select<order::Entity> {
    use order::Column as C;
    let mut q = order::Entity::find().filter(C::EventId.eq(event_id));
    let term_passed = || {
        sea_orm::Condition::all()
            .add(C::Status.eq("n"))
            .add(C::ExpiresAutomatically.eq(true))
            .add(C::Expires.lte(now))
    };
    q = match f.status.as_deref() {
        Some("e") => q.filter(term_passed()),
        Some("n") => q.filter(C::Status.eq("n")).filter(term_passed().not()),
        Some(s) => q.filter(C::Status.eq(s)),
        None => q,
    };
    if let Some(email) = &f.email {
        use sea_orm::sea_query::{Expr, ExprTrait, Func};
        q = q.filter(Expr::expr(Func::lower(Expr::col(C::Email))).eq(email.to_lowercase()));
    }
    if let Some(code) = &f.code {
        q = q.filter(C::Code.eq(code.to_uppercase()));
    }
    if let Some(since) = f.modified_since {
        q = q.filter(C::LastModified.gte(since));
    }
    if let Some(since) = f.created_since {
        q = q.filter(C::Datetime.gte(since));
    }
    if let Some(testmode) = f.testmode {
        q = q.filter(C::Testmode.eq(testmode));
    }
    // Built from expressions, not custom SQL: a custom `$1` is numbered against the whole
    // statement on SQLite, where it would take another filter's value.
    let dated = |condition: sea_orm::Condition| {
        use sea_orm::sea_query::{Expr, ExprTrait, Query};
        use subevent::{Column as S, Entity as Subevents};
        let with_date = Query::select()
            .column((order_position::Entity, order_position::Column::OrderId))
            .from(order_position::Entity)
            .inner_join(
                Subevents,
                Expr::col((Subevents, S::Id))
                    .equals((order_position::Entity, order_position::Column::SubeventId)),
            )
            .cond_where(condition)
            .to_owned();
        C::Id.in_subquery(with_date)
    };
    {
        use sea_orm::sea_query::{Expr, ExprTrait};
        use subevent::{Column as S, Entity as Subevents};
        let col = |c: S| Expr::col((Subevents, c));
        if let Some(after) = f.subevent_after {
            let open_end = sea_orm::Condition::all()
                .add(col(S::DateTo).is_null())
                .add(col(S::DateFrom).gt(after));
            let ends_after = sea_orm::Condition::any()
                .add(col(S::DateTo).gt(after))
                .add(open_end);
            q = q.filter(dated(ends_after));
        }
        if let Some(before) = f.subevent_before {
            q = q.filter(dated(
                sea_orm::Condition::all().add(col(S::DateFrom).lt(before)),
            ));
        }
    }
    let ordering = f.ordering.as_deref().unwrap_or("datetime");
    let (desc, field) = match ordering.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, ordering),
    };
    let col = match field {
        "code" => C::Code,
        "status" => C::Status,
        "last_modified" => C::LastModified,
        _ => C::Datetime,
    };
    q = if desc {
        q.order_by_desc(col)
    } else {
        q.order_by_asc(col)
    };
    q.order_by_asc(C::Id)
}

/// The orderings the list accepts.
pub const ORDERINGS: [&str; 8] = [
    "datetime",
    "-datetime",
    "code",
    "-code",
    "status",
    "-status",
    "last_modified",
    "-last_modified",
];

/// How many orders match.
pub async fn count(db: &impl ConnectionTrait, q: Select<order::Entity>) -> Result<u64, DbErr> {
    q.count(db).await
}

/// One page of orders, complete: five queries, whatever their number.
pub async fn page(
    db: &impl ConnectionTrait,
    q: Select<order::Entity>,
    offset: u64,
    limit: u64,
) -> Result<Vec<Order>, DbErr> {
    let rows = q.offset(offset).limit(limit).all(db).await?;
    complete(db, rows).await
}

/// The order of the event with this code.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    code: &str,
) -> Result<Option<Order>, DbErr> {
    let row = order::Entity::find()
        .filter(order::Column::EventId.eq(event_id))
        .filter(order::Column::Code.eq(code.to_uppercase()))
        .one(db)
        .await?;
    Ok(match row {
        Some(r) => complete(db, vec![r]).await?.pop(),
        None => None,
    })
}

/// Reads an order of the event and locks it until the transaction ends.
pub async fn lock(
    txn: &impl ConnectionTrait,
    event_id: i64,
    code: &str,
) -> Result<Option<order::Model>, DbErr> {
    let backend = txn.get_database_backend();
    let lock = crate::db::lock_clause(txn);
    order::Model::find_by_statement(Statement::from_sql_and_values(
        backend,
        format!("SELECT * FROM orders WHERE event_id = $1 AND code = $2{lock}"),
        [event_id.into(), code.to_uppercase().into()],
    ))
    .one(txn)
    .await
}

/// Finds the order behind a secret link; `None` unless organizer, event, code and secret
/// all match.
///
/// One query compares all four in the database, so that an unknown code and a known code
/// with a wrong secret take the same path and give the same answer: nothing about the order
/// is read before its secret matched. The `(event_id, code)` index finds the row; comparing
/// its secret there leaks nothing usable, as secrets are long random strings.
pub async fn by_link(
    db: &impl ConnectionTrait,
    [org, ev, code, secret]: [&str; 4],
) -> Result<Option<(crate::db::entities::event::Model, Order)>, DbErr> {
    if secret.is_empty() {
        return Ok(None);
    }
    let backend = db.get_database_backend();
    let row = order::Model::find_by_statement(Statement::from_sql_and_values(
        backend,
        "SELECT orders.* FROM orders \
         JOIN events ON events.id = orders.event_id \
         JOIN organizers ON organizers.id = events.organizer_id \
         WHERE organizers.slug = $1 AND events.slug = $2 \
         AND orders.code = $3 AND orders.secret = $4",
        [
            org.into(),
            ev.into(),
            code.to_uppercase().into(),
            secret.into(),
        ],
    ))
    .one(db)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let Some(e) = crate::db::entities::event::Entity::find_by_id(row.event_id)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(complete(db, vec![row]).await?.pop().map(|order| (e, order)))
}

/// Adds positions, fees and payments to order rows.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows: Vec<order::Model>,
) -> Result<Vec<Order>, DbErr> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut positions = group(
        order_position::Entity::find()
            .filter(order_position::Column::OrderId.is_in(ids.clone()))
            .filter(order_position::Column::Canceled.eq(false))
            .order_by_asc(order_position::Column::Positionid)
            .all(db)
            .await?,
        |p| p.order_id,
    );
    let mut fees = group(
        order_fee::Entity::find()
            .filter(order_fee::Column::OrderId.is_in(ids.clone()))
            .filter(order_fee::Column::Canceled.eq(false))
            .order_by_asc(order_fee::Column::Id)
            .all(db)
            .await?,
        |f| f.order_id,
    );
    let mut payments = group(
        order_payment::Entity::find()
            .filter(order_payment::Column::OrderId.is_in(ids))
            .order_by_asc(order_payment::Column::LocalId)
            .all(db)
            .await?,
        |p| p.order_id,
    );
    let seat_ids = positions.values().flatten().filter_map(|p| p.seat_id);
    let seats: HashMap<i64, seat::Model> = seats_of(db, seat_ids.collect())
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let position_ids: Vec<i64> = positions.values().flatten().map(|p| p.id).collect();
    let mut checkins = HashMap::<i64, Vec<PositionCheckin>>::new();
    for c in checkins_of(db, &position_ids).await? {
        checkins.entry(c.position_id).or_default().push(c);
    }
    let order_ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut given_back = group(refunds::of_orders(db, &order_ids).await?, |r| {
        r.row.order_id
    });
    Ok(rows
        .into_iter()
        .map(|row| {
            let positions = positions.remove(&row.id).unwrap_or_default();
            Order {
                checkins: positions
                    .iter()
                    .flat_map(|p| checkins.remove(&p.id).unwrap_or_default())
                    .collect(),
                seats: positions
                    .iter()
                    .filter_map(|p| seats.get(&p.seat_id?).cloned())
                    .collect(),
                positions,
                fees: fees.remove(&row.id).unwrap_or_default(),
                payments: payments.remove(&row.id).unwrap_or_default(),
                refunds: given_back.remove(&row.id).unwrap_or_default(),
                row,
            }
        })
        .collect())
}

/// The seats with these IDs (no query for none).
async fn seats_of(db: &impl ConnectionTrait, ids: Vec<i64>) -> Result<Vec<seat::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    seat::Entity::find()
        .filter(seat::Column::Id.is_in(ids))
        .all(db)
        .await
}

fn group<T>(rows: Vec<T>, key: impl Fn(&T) -> i64) -> HashMap<i64, Vec<T>> {
    let mut out: HashMap<i64, Vec<T>> = HashMap::new();
    for r in rows {
        out.entry(key(&r)).or_default().push(r);
    }
    out
}

/// The order's confirmation page: a plain page showing the order, its status and tickets.
pub fn confirmation_page(public_url: &str, org: &str, ev: &str, o: &order::Model) -> String {
    format!("{public_url}/{org}/{ev}/order/{}/{}/", o.code, o.secret)
}

/// The name shown for name parts: `full_name` when given, else the other parts joined in
/// the order people write them (title, given, middle, family names).
pub fn display_name(parts: &Value) -> Option<String> {
    let map = parts.as_object()?;
    if let Some(full) = map.get("full_name").and_then(Value::as_str) {
        return Some(full.to_owned()).filter(|s| !s.is_empty());
    }
    // The parts in the order people write them, whatever order they are stored in (as
    // pretix's schemes join them), then any others.
    const WRITTEN: [&str; 4] = ["title", "given_name", "middle_name", "family_name"];
    let rank = |k: &str| {
        WRITTEN
            .iter()
            .position(|w| *w == k)
            .unwrap_or(WRITTEN.len())
    };
    let mut parts: Vec<(&String, &Value)> =
        map.iter().filter(|(k, _)| !k.starts_with('_')).collect();
    parts.sort_by_key(|(k, _)| rank(k));
    let joined: Vec<&str> = parts
        .into_iter()
        .filter_map(|(_, v)| v.as_str())
        .filter(|s| !s.is_empty())
        .collect();
    (!joined.is_empty()).then(|| joined.join(" "))
}
