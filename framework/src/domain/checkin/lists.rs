//! Check-in lists of an event: which positions they admit (products, sub-event, pending
//! orders), how often (multiple entries, entry after exit), their rules and gates.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, FromQueryResult,
    QueryFilter,
};
use serde_json::Value;

use super::{placeholders, rows, rules};
use crate::db;
use crate::db::entities::event;
use crate::domain::cache::Cache;

/// A list's own row.
#[derive(Debug, Clone, FromQueryResult)]
pub struct ListRow {
    /// ID.
    pub id: i64,
    /// Its event.
    pub event_id: i64,
    /// Name.
    pub name: String,
    /// Every product admits.
    pub all_products: bool,
    /// The date of a series it is for.
    pub subevent_id: Option<i64>,
    /// Pending orders admit too.
    pub include_pending: bool,
    /// A ticket may enter more than once.
    pub allow_multiple_entries: bool,
    /// A ticket may enter again after an exit.
    pub allow_entry_after_exit: bool,
    /// Entry rules (JSON logic).
    pub rules: Value,
    /// When everyone inside is checked out.
    pub exit_all_at: Option<DateTime<Utc>>,
    /// Scanning a parent ticket redeems its matching add-on.
    pub addon_match: bool,
}

/// A list with the products and gates it is limited to.
#[derive(Debug, Clone)]
pub struct CheckinList {
    /// The row.
    pub row: ListRow,
    /// Products, when not `all_products` (ascending).
    pub limit_products: Vec<i64>,
    /// Gates (ascending).
    pub gates: Vec<i64>,
}

impl CheckinList {
    /// Whether the list admits this product.
    pub fn admits_item(&self, item_id: i64) -> bool {
        self.row.all_products || self.limit_products.contains(&item_id)
    }
}

/// A list's fields as written.
#[derive(Debug, Clone)]
pub struct ListFields {
    /// Name.
    pub name: String,
    /// Every product admits.
    pub all_products: bool,
    /// Products of the event.
    pub limit_products: Vec<i64>,
    /// A date of the event.
    pub subevent_id: Option<i64>,
    /// Pending orders admit too.
    pub include_pending: bool,
    /// More than one entry.
    pub allow_multiple_entries: bool,
    /// Entry after an exit.
    pub allow_entry_after_exit: bool,
    /// Rules.
    pub rules: Value,
    /// Exit everyone at.
    pub exit_all_at: Option<DateTime<Utc>>,
    /// Add-on matching.
    pub addon_match: bool,
    /// Gates of the organizer.
    pub gates: Vec<i64>,
}

impl ListFields {
    /// The fields of a stored list.
    pub fn of(list: &CheckinList) -> Self {
        let r = &list.row;
        Self {
            name: r.name.clone(),
            all_products: r.all_products,
            limit_products: list.limit_products.clone(),
            subevent_id: r.subevent_id,
            include_pending: r.include_pending,
            allow_multiple_entries: r.allow_multiple_entries,
            allow_entry_after_exit: r.allow_entry_after_exit,
            rules: r.rules.clone(),
            exit_all_at: r.exit_all_at,
            addon_match: r.addon_match,
            gates: list.gates.clone(),
        }
    }
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Field errors.
    #[error("field errors")]
    Invalid(Vec<(&'static str, String)>),
    /// The list was deleted meanwhile.
    #[error("the list was deleted meanwhile")]
    Gone,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

const LIST_COLUMNS: &str = "id, event_id, name, all_products, subevent_id, include_pending, \
     allow_multiple_entries, allow_entry_after_exit, rules, exit_all_at, addon_match";

#[derive(FromQueryResult)]
struct Pair {
    list_id: i64,
    other: i64,
}

/// Completes rows with their products and gates.
pub async fn complete(
    db: &impl ConnectionTrait,
    rows_: Vec<ListRow>,
) -> Result<Vec<CheckinList>, DbErr> {
    if rows_.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<sea_orm::Value> = rows_.iter().map(|r| r.id.into()).collect();
    let marks = placeholders(1, ids.len());
    let items: Vec<Pair> = rows(
        db,
        &format!(
            "SELECT list_id, item_id AS other FROM checkinlist_items WHERE list_id IN ({marks}) \
             ORDER BY item_id"
        ),
        ids.clone(),
    )
    .await?;
    let gates: Vec<Pair> = rows(
        db,
        &format!(
            "SELECT list_id, gate_id AS other FROM checkinlist_gates WHERE list_id IN ({marks}) \
             ORDER BY gate_id"
        ),
        ids,
    )
    .await?;
    Ok(rows_
        .into_iter()
        .map(|row| CheckinList {
            limit_products: items
                .iter()
                .filter(|p| p.list_id == row.id)
                .map(|p| p.other)
                .collect(),
            gates: gates
                .iter()
                .filter(|p| p.list_id == row.id)
                .map(|p| p.other)
                .collect(),
            row,
        })
        .collect())
}

/// The event's list with this ID.
pub async fn find(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<CheckinList>, DbErr> {
    let found: Vec<ListRow> = rows(
        db,
        &format!("SELECT {LIST_COLUMNS} FROM checkin_lists WHERE id = $1 AND event_id = $2"),
        vec![id.into(), event_id.into()],
    )
    .await?;
    Ok(complete(db, found).await?.pop())
}

/// Lists by ID, whatever their event.
pub async fn by_ids(db: &impl ConnectionTrait, ids: &[i64]) -> Result<Vec<CheckinList>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let found: Vec<ListRow> = rows(
        db,
        &format!(
            "SELECT {LIST_COLUMNS} FROM checkin_lists WHERE id IN ({}) ORDER BY id",
            placeholders(1, ids.len())
        ),
        ids.iter().map(|&i| i.into()).collect(),
    )
    .await?;
    complete(db, found).await
}

/// Lookups of more lists at once than this are not kept in the cache.
const MAX_CACHED_LOOKUP: usize = 16;

/// The organizer's lists of `ids`, each with its event (lists of other organizers are left
/// out), kept in the process cache for the configuration generation: every scan reads them.
pub async fn of_organizer(
    db: &DatabaseConnection,
    cache: Option<(&Cache, u64)>,
    organizer_id: i64,
    ids: &[i64],
) -> Result<Arc<Vec<(CheckinList, event::Model)>>, DbErr> {
    let key = format!("checkin-lists:{organizer_id}:{ids:?}");
    if let Some(kept) = cache.and_then(|(c, g)| c.object(g, &key)) {
        return Ok(kept);
    }
    let found = by_ids(db, ids).await?;
    let events = event::Entity::find()
        .filter(event::Column::Id.is_in(found.iter().map(|l| l.row.event_id)))
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .all(db)
        .await?;
    let pairs: Arc<Vec<(CheckinList, event::Model)>> = Arc::new(
        found
            .into_iter()
            .filter_map(|l| {
                let ev = events.iter().find(|e| e.id == l.row.event_id)?.clone();
                Some((l, ev))
            })
            .collect(),
    );
    if let Some((c, g)) = cache.filter(|_| ids.len() <= MAX_CACHED_LOOKUP) {
        c.keep_object(g, key, Arc::clone(&pairs));
    }
    Ok(pairs)
}

/// Filters of the list resource.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Exactly this sub-event.
    pub subevent: Option<i64>,
    /// This sub-event or none.
    pub subevent_match: Option<i64>,
    /// Lists whose date ends (or starts, without an end) at or after this; lists without a
    /// date always.
    pub ends_after: Option<DateTime<Utc>>,
}

/// Order of the list resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrder {
    /// Sub-event start, name, ID (default).
    SubeventDate,
    /// ID.
    Id,
    /// Name.
    Name,
}

/// The event's lists, filtered and ordered.
pub async fn list(
    db: &impl ConnectionTrait,
    event_id: i64,
    f: &ListFilter,
    order: ListOrder,
    descending: bool,
) -> Result<Vec<CheckinList>, DbErr> {
    let mut sql = format!(
        "SELECT l.{} FROM checkin_lists l LEFT JOIN subevents s ON s.id = l.subevent_id \
         WHERE l.event_id = $1",
        LIST_COLUMNS.replace(", ", ", l.")
    );
    let mut values: Vec<sea_orm::Value> = vec![event_id.into()];
    if let Some(s) = f.subevent {
        values.push(s.into());
        sql.push_str(&format!(" AND l.subevent_id = ${}", values.len()));
    }
    if let Some(s) = f.subevent_match {
        values.push(s.into());
        sql.push_str(&format!(
            " AND (l.subevent_id = ${} OR l.subevent_id IS NULL)",
            values.len()
        ));
    }
    if let Some(t) = f.ends_after {
        values.push(t.into());
        let n = values.len();
        sql.push_str(&format!(
            " AND (l.subevent_id IS NULL OR s.date_to >= ${n} \
             OR (s.date_to IS NULL AND s.date_from >= ${n}))"
        ));
    }
    let dir = if descending { "DESC" } else { "ASC" };
    let order_by = match order {
        ListOrder::SubeventDate => {
            format!("s.date_from {dir}, l.name {dir}, l.id {dir}")
        }
        ListOrder::Id => format!("l.id {dir}"),
        ListOrder::Name => format!("l.name {dir}, l.id {dir}"),
    };
    sql.push_str(&format!(" ORDER BY {order_by}"));
    let found: Vec<ListRow> = rows(db, &sql, values).await?;
    complete(db, found).await
}

#[derive(FromQueryResult)]
struct Id {
    id: i64,
}

/// Checks the fields against the event: products and sub-event of the event, gates of its
/// organizer, valid rules.
async fn check(
    db: &impl ConnectionTrait,
    ev: &event::Model,
    f: &ListFields,
) -> Result<(), WriteError> {
    let mut errors = crate::domain::overlong_lists(&[
        ("limit_products", f.limit_products.len()),
        ("gates", f.gates.len()),
    ]);
    if !errors.is_empty() {
        return Err(WriteError::Invalid(errors));
    }
    if f.name.trim().is_empty() {
        errors.push(("name", "This field may not be blank.".into()));
    }
    if !f.limit_products.is_empty() {
        let found: Vec<Id> = rows(
            db,
            &format!(
                "SELECT id FROM items WHERE event_id = $1 AND id IN ({})",
                placeholders(2, f.limit_products.len())
            ),
            std::iter::once(ev.id.into())
                .chain(f.limit_products.iter().map(|&i| i.into()))
                .collect(),
        )
        .await?;
        let mut wanted = f.limit_products.clone();
        wanted.sort_unstable();
        wanted.dedup();
        if found.iter().filter(|r| wanted.contains(&r.id)).count() != wanted.len() {
            errors.push((
                "limit_products",
                "One or more items do not belong to this event.".into(),
            ));
        }
    }
    if let Some(s) = f.subevent_id {
        let found: Vec<Id> = rows(
            db,
            "SELECT id FROM subevents WHERE id = $1 AND event_id = $2",
            vec![s.into(), ev.id.into()],
        )
        .await?;
        if found.is_empty() || !ev.has_subevents {
            errors.push((
                "subevent",
                "The subevent does not belong to this event.".into(),
            ));
        }
    }
    if !f.gates.is_empty() {
        let found: Vec<Id> = rows(
            db,
            &format!(
                "SELECT id FROM gates WHERE organizer_id = $1 AND id IN ({})",
                placeholders(2, f.gates.len())
            ),
            std::iter::once(ev.organizer_id.into())
                .chain(f.gates.iter().map(|&i| i.into()))
                .collect(),
        )
        .await?;
        let mut wanted = f.gates.clone();
        wanted.sort_unstable();
        wanted.dedup();
        if found.len() != wanted.len() {
            errors.push((
                "gates",
                "One or more gates do not belong to this organizer.".into(),
            ));
        }
    }
    if let Err(message) = rules::validate(&f.rules) {
        errors.push(("rules", message));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(WriteError::Invalid(errors))
    }
}

async fn write_links(
    txn: &impl ConnectionTrait,
    list_id: i64,
    f: &ListFields,
) -> Result<(), DbErr> {
    db::execute(
        txn,
        "DELETE FROM checkinlist_items WHERE list_id = $1",
        [list_id.into()],
    )
    .await?;
    db::execute(
        txn,
        "DELETE FROM checkinlist_gates WHERE list_id = $1",
        [list_id.into()],
    )
    .await?;
    let mut items = f.limit_products.clone();
    items.sort_unstable();
    items.dedup();
    for i in items {
        db::execute(
            txn,
            "INSERT INTO checkinlist_items (list_id, item_id) VALUES ($1, $2)",
            [list_id.into(), i.into()],
        )
        .await?;
    }
    let mut gates = f.gates.clone();
    gates.sort_unstable();
    gates.dedup();
    for g in gates {
        db::execute(
            txn,
            "INSERT INTO checkinlist_gates (list_id, gate_id) VALUES ($1, $2)",
            [list_id.into(), g.into()],
        )
        .await?;
    }
    Ok(())
}

fn answer(id: i64, ev: &event::Model, f: ListFields) -> CheckinList {
    let mut limit_products = f.limit_products;
    limit_products.sort_unstable();
    limit_products.dedup();
    let mut gates = f.gates;
    gates.sort_unstable();
    gates.dedup();
    CheckinList {
        row: ListRow {
            id,
            event_id: ev.id,
            name: f.name,
            all_products: f.all_products,
            subevent_id: f.subevent_id,
            include_pending: f.include_pending,
            allow_multiple_entries: f.allow_multiple_entries,
            allow_entry_after_exit: f.allow_entry_after_exit,
            rules: f.rules,
            exit_all_at: f.exit_all_at,
            addon_match: f.addon_match,
        },
        limit_products,
        gates,
    }
}

/// Creates a list.
pub async fn create(
    pool: &DatabaseConnection,
    ev: &event::Model,
    f: ListFields,
) -> Result<CheckinList, WriteError> {
    let txn = db::begin_write(pool).await?;
    check(&txn, ev, &f).await?;
    let id = db::insert_returning_id(
        &txn,
        "INSERT INTO checkin_lists (event_id, name, all_products, subevent_id, include_pending, \
         allow_multiple_entries, allow_entry_after_exit, rules, exit_all_at, addon_match) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        [
            ev.id.into(),
            f.name.clone().into(),
            f.all_products.into(),
            f.subevent_id.into(),
            f.include_pending.into(),
            f.allow_multiple_entries.into(),
            f.allow_entry_after_exit.into(),
            f.rules.clone().into(),
            f.exit_all_at.into(),
            f.addon_match.into(),
        ],
    )
    .await?;
    write_links(&txn, id, &f).await?;
    db::commit(txn).await?;
    Ok(answer(id, ev, f))
}

/// Replaces a list's fields.
pub async fn update(
    pool: &DatabaseConnection,
    ev: &event::Model,
    id: i64,
    f: ListFields,
) -> Result<CheckinList, WriteError> {
    let txn = db::begin_write(pool).await?;
    check(&txn, ev, &f).await?;
    let updated = db::execute(
        &txn,
        "UPDATE checkin_lists SET name = $1, all_products = $2, subevent_id = $3, \
         include_pending = $4, allow_multiple_entries = $5, allow_entry_after_exit = $6, \
         rules = $7, exit_all_at = $8, addon_match = $9 WHERE id = $10 AND event_id = $11",
        [
            f.name.clone().into(),
            f.all_products.into(),
            f.subevent_id.into(),
            f.include_pending.into(),
            f.allow_multiple_entries.into(),
            f.allow_entry_after_exit.into(),
            f.rules.clone().into(),
            f.exit_all_at.into(),
            f.addon_match.into(),
            id.into(),
            ev.id.into(),
        ],
    )
    .await?;
    if updated == 0 {
        return Err(WriteError::Gone);
    }
    write_links(&txn, id, &f).await?;
    db::commit(txn).await?;
    Ok(answer(id, ev, f))
}

/// Deletes a list with its check-ins.
pub async fn delete(pool: &DatabaseConnection, event_id: i64, id: i64) -> Result<(), DbErr> {
    let txn = db::begin_write(pool).await?;
    db::execute(&txn, "DELETE FROM checkins WHERE list_id = $1", [id.into()]).await?;
    db::execute(
        &txn,
        "DELETE FROM checkinlist_items WHERE list_id = $1",
        [id.into()],
    )
    .await?;
    db::execute(
        &txn,
        "DELETE FROM checkinlist_gates WHERE list_id = $1",
        [id.into()],
    )
    .await?;
    db::execute(
        &txn,
        "DELETE FROM checkin_lists WHERE id = $1 AND event_id = $2",
        [id.into(), event_id.into()],
    )
    .await?;
    db::commit(txn).await
}

/// SQL condition: position `p` of order `o` matches list `$L` (`l`): order paid (or pending
/// when the list includes pending orders), product and sub-event filters pass.
pub(crate) const MATCHES: &str = "NOT p.canceled AND (o.status = 'p' OR (o.status = 'n' AND l.include_pending)) \
     AND (l.all_products OR p.item_id IN (SELECT item_id FROM checkinlist_items ci \
          WHERE ci.list_id = l.id)) \
     AND (l.subevent_id IS NULL OR p.subevent_id = l.subevent_id)";

/// Counts of one item or variation on a list.
#[derive(Debug, Clone, FromQueryResult)]
pub struct CountRow {
    /// The item.
    pub item_id: i64,
    /// The variation, if any.
    pub variation_id: Option<i64>,
    /// Matching positions.
    pub position_count: i64,
    /// Those with an entry on the list.
    pub checkin_count: i64,
    /// Those inside now.
    pub inside_count: i64,
}

/// Counts per item and variation of the positions a list admits: all, those that entered
/// at least once, those inside (last scan an entry).
pub async fn counts(db: &impl ConnectionTrait, list_id: i64) -> Result<Vec<CountRow>, DbErr> {
    let sql = format!(
        "SELECT p.item_id, p.variation_id, COUNT(*) AS position_count, \
         SUM(CASE WHEN EXISTS (SELECT 1 FROM checkins c WHERE c.position_id = p.id \
              AND c.list_id = l.id AND c.successful AND c.type = 'entry') THEN 1 ELSE 0 END) \
              AS checkin_count, \
         SUM(CASE WHEN (SELECT c.type FROM checkins c WHERE c.position_id = p.id \
              AND c.list_id = l.id AND c.successful ORDER BY c.datetime DESC, c.id DESC \
              LIMIT 1) = 'entry' THEN 1 ELSE 0 END) AS inside_count \
         FROM checkin_lists l JOIN orders o ON o.event_id = l.event_id \
         JOIN order_positions p ON p.order_id = o.id \
         WHERE l.id = $1 AND {MATCHES} GROUP BY p.item_id, p.variation_id"
    );
    rows(db, &sql, vec![list_id.into()]).await
}

/// Per-list totals for the list resource: matching positions and those that entered.
pub async fn totals(db: &impl ConnectionTrait, list_id: i64) -> Result<(i64, i64), DbErr> {
    let all = counts(db, list_id).await?;
    Ok((
        all.iter().map(|c| c.position_count).sum(),
        all.iter().map(|c| c.checkin_count).sum(),
    ))
}

/// Creates a list of every product named `name` on the event unless it has one (the demo's
/// "Entrance").
pub async fn ensure_named(
    pool: &DatabaseConnection,
    ev: &event::Model,
    name: &str,
) -> Result<(), DbErr> {
    let existing: Vec<Id> = rows(
        pool,
        "SELECT id FROM checkin_lists WHERE event_id = $1 AND name = $2",
        vec![ev.id.into(), name.into()],
    )
    .await?;
    if !existing.is_empty() {
        return Ok(());
    }
    let fields = ListFields {
        name: name.to_owned(),
        all_products: true,
        limit_products: Vec::new(),
        subevent_id: None,
        include_pending: false,
        allow_multiple_entries: false,
        allow_entry_after_exit: true,
        rules: Value::Object(Default::default()),
        exit_all_at: None,
        addon_match: false,
        gates: Vec::new(),
    };
    match create(pool, ev, fields).await {
        Ok(_) => Ok(()),
        Err(WriteError::Db(e)) => Err(e),
        Err(WriteError::Invalid(e)) => Err(DbErr::Custom(format!("{e:?}"))),
        Err(WriteError::Gone) => Err(DbErr::RecordNotFound("check-in list".into())),
    }
}
