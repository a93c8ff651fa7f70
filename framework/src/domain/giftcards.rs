//! The gift card ledger. A card's `value_cents` always equals the sum of its transactions;
//! every change of value writes both in one atomic step, and no step takes a card below zero,
//! however many requests race for it, in however many processes.

use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait,
    FromQueryResult, Set, Statement, Value,
};

use crate::db::entities::{giftcard, giftcard_transaction};
use crate::db::{begin_write, is_unique_violation, unit_of_work};
use crate::domain::batch::Batches;
use crate::domain::webhooks;
use serde_json::json;

/// Which cards an organizer sees: its own, and with `include_accepted` also those of the
/// issuers it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Visibility {
    /// The organizer looking.
    pub organizer_id: i64,
    /// Whether accepted issuers' cards are included.
    pub include_accepted: bool,
}

impl Visibility {
    /// SQL condition on `giftcards` aliased `g`, with `$org` and `$inc` as the placeholders.
    fn condition(org: usize, inc: usize) -> String {
        format!(
            "(g.issuer_id = ${org} OR (${inc} AND g.issuer_id IN \
             (SELECT issuer_id FROM giftcard_acceptances WHERE acceptor_id = ${org})))"
        )
    }

    fn values(self) -> [Value; 2] {
        [self.organizer_id.into(), self.include_accepted.into()]
    }
}

/// A card with its issuer's slug, as the API shows it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct Card {
    /// Internal ID.
    pub id: i64,
    /// The code.
    pub secret: String,
    /// When issued.
    pub issuance: DateTime<Utc>,
    /// Value in cents.
    pub value_cents: i64,
    /// Currency.
    pub currency: String,
    /// Test card.
    pub testmode: bool,
    /// Expiry.
    pub expires: Option<DateTime<Utc>>,
    /// Terms.
    pub conditions: Option<String>,
    /// Issuer slug.
    pub issuer: String,
}

const CARD_COLUMNS: &str = "g.id, g.secret, g.issuance, g.value_cents, g.currency, g.testmode, \
                            g.expires, g.conditions, o.slug AS issuer";

/// Filters of the card list.
#[derive(Debug, Clone, Default)]
pub struct CardFilter {
    /// Secret, compared case-insensitively.
    pub secret: Option<String>,
    /// Test mode.
    pub testmode: Option<bool>,
}

fn list_where(vis: Visibility, filter: &CardFilter) -> (String, Vec<Value>) {
    let mut sql = format!("WHERE {}", Visibility::condition(1, 2));
    let mut values: Vec<Value> = vis.values().into();
    if let Some(secret) = &filter.secret {
        values.push(secret.to_lowercase().into());
        sql += &format!(" AND LOWER(g.secret) = ${}", values.len());
    }
    if let Some(testmode) = filter.testmode {
        values.push(testmode.into());
        sql += &format!(" AND g.testmode = ${}", values.len());
    }
    (sql, values)
}

/// Counts the cards matching a filter.
pub async fn count(
    db: &impl ConnectionTrait,
    vis: Visibility,
    filter: &CardFilter,
) -> Result<u64, DbErr> {
    let (cond, values) = list_where(vis, filter);
    let sql = format!("SELECT COUNT(*) AS n FROM giftcards g {cond}");
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            values,
        ))
        .await?;
    Ok(row
        .map(|r| r.try_get::<i64>("", "n"))
        .transpose()?
        .unwrap_or(0)
        .max(0) as u64)
}

/// One page of cards matching a filter, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    vis: Visibility,
    filter: &CardFilter,
    limit: u64,
    offset: u64,
) -> Result<Vec<Card>, DbErr> {
    let (cond, values) = list_where(vis, filter);
    let sql = format!(
        "SELECT {CARD_COLUMNS} FROM giftcards g JOIN organizers o ON o.id = g.issuer_id {cond} \
         ORDER BY g.issuance DESC, g.id DESC LIMIT {limit} OFFSET {offset}"
    );
    Card::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        values,
    ))
    .all(db)
    .await
}

/// One card, when visible.
pub async fn find(
    db: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
) -> Result<Option<Card>, DbErr> {
    let sql = format!(
        "SELECT {CARD_COLUMNS} FROM giftcards g JOIN organizers o ON o.id = g.issuer_id \
         WHERE g.id = $3 AND {}",
        Visibility::condition(1, 2)
    );
    let [org, inc] = vis.values();
    Card::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [org, inc, id.into()],
    ))
    .one(db)
    .await
}

/// A new card.
#[derive(Debug, Clone)]
pub struct NewCard {
    /// The code; generated when `None`.
    pub secret: Option<String>,
    /// Initial value in cents, booked as the first transaction.
    pub value_cents: i64,
    /// Currency.
    pub currency: String,
    /// Test card.
    pub testmode: bool,
    /// Expiry.
    pub expires: Option<DateTime<Utc>>,
    /// Terms.
    pub conditions: Option<String>,
}

/// Why a card could not be created.
#[derive(Debug)]
pub enum CreateError {
    /// The secret is already used by the organizer or an issuer it accepts.
    SecretTaken,
    /// The database failed.
    Db(DbErr),
}

impl From<DbErr> for CreateError {
    fn from(e: DbErr) -> Self {
        if is_unique_violation(&e) {
            CreateError::SecretTaken
        } else {
            CreateError::Db(e)
        }
    }
}

fn generate_secret() -> String {
    super::tokens::random_from(super::tokens::UNAMBIGUOUS, 16)
}

async fn secret_in_use(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    secret: &str,
) -> Result<bool, DbErr> {
    let sql = format!(
        "SELECT g.id FROM giftcards g WHERE g.secret = $3 AND {}",
        Visibility::condition(1, 2)
    );
    let values = [organizer_id.into(), true.into(), secret.into()];
    Ok(db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            values,
        ))
        .await?
        .is_some())
}

/// Issues a card; its initial value is booked as the first transaction.
pub async fn create(
    db: &DatabaseConnection,
    organizer_id: i64,
    new: NewCard,
) -> Result<Card, CreateError> {
    let txn = begin_write(db).await?;
    let secret = match new.secret {
        Some(s) => {
            if secret_in_use(&txn, organizer_id, &s).await? {
                return Err(CreateError::SecretTaken);
            }
            s
        }
        None => loop {
            let s = generate_secret();
            if !secret_in_use(&txn, organizer_id, &s).await? {
                break s;
            }
        },
    };
    let now = crate::values::now();
    let card = giftcard::ActiveModel {
        issuer_id: Set(organizer_id),
        secret: Set(secret),
        value_cents: Set(new.value_cents),
        currency: Set(new.currency),
        testmode: Set(new.testmode),
        expires: Set(new.expires),
        conditions: Set(new.conditions),
        issuance: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    book(&txn, card.id, organizer_id, new.value_cents, None, now).await?;
    notify(&txn, organizer_id, card.id, "pretix.giftcards.created").await?;
    let vis = Visibility {
        organizer_id,
        include_accepted: false,
    };
    let shown = find(&txn, vis, card.id)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("new card".into()))?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

async fn book(
    db: &impl ConnectionTrait,
    card_id: i64,
    acceptor_id: i64,
    value_cents: i64,
    text: Option<String>,
    at: DateTime<Utc>,
) -> Result<i64, DbErr> {
    let row = giftcard_transaction::ActiveModel {
        card_id: Set(card_id),
        acceptor_id: Set(acceptor_id),
        datetime: Set(at),
        value_cents: Set(value_cents),
        text: Set(text),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// Changes to a card's modifiable fields; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct CardChanges {
    /// New value; the difference is booked as a transaction.
    pub value_cents: Option<i64>,
    /// New expiry (`Some(None)` removes it).
    pub expires: Option<Option<DateTime<Utc>>>,
    /// New terms (`Some(None)` removes them).
    pub conditions: Option<Option<String>>,
}

/// Changes one of the organizer's own cards; `None` when it has no such card.
pub async fn update(
    db: &DatabaseConnection,
    organizer_id: i64,
    id: i64,
    changes: CardChanges,
) -> Result<Option<Card>, DbErr> {
    let txn = begin_write(db).await?;
    let Some(card) = lock_own(&txn, organizer_id, id).await? else {
        return Ok(None);
    };
    let mut active: giftcard::ActiveModel = card.clone().into();
    if let Some(value) = changes.value_cents {
        let diff = value - card.value_cents;
        if diff != 0 {
            book(&txn, id, organizer_id, diff, None, crate::values::now()).await?;
            active.value_cents = Set(value);
        }
    }
    if let Some(expires) = changes.expires {
        active.expires = Set(expires);
    }
    if let Some(conditions) = changes.conditions {
        active.conditions = Set(conditions);
    }
    active.update(&txn).await?;
    let shown = find(
        &txn,
        Visibility {
            organizer_id,
            include_accepted: false,
        },
        id,
    )
    .await?;
    notify(&txn, organizer_id, id, "pretix.giftcards.modified").await?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

/// Tells the organizer's webhooks of a change of one of its cards.
async fn notify(
    txn: &impl ConnectionTrait,
    organizer_id: i64,
    card_id: i64,
    action: &'static str,
) -> Result<(), DbErr> {
    let notice = webhooks::Notice::of_organizer(organizer_id, action, json!({"giftcard": card_id}));
    webhooks::notify(txn, &notice).await
}

/// Reads one of the organizer's own cards and locks it until the transaction ends.
async fn lock_own(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<Option<giftcard::Model>, DbErr> {
    let lock = crate::db::lock_clause(db);
    let sql = format!("SELECT * FROM giftcards WHERE id = $1 AND issuer_id = $2{lock}");
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [id.into(), organizer_id.into()],
    );
    giftcard::Model::find_by_statement(stmt).one(db).await
}

/// Why a transaction was refused.
#[derive(Debug, thiserror::Error)]
pub enum TransactError {
    /// No such card is visible to the organizer.
    #[error("no such card is visible to the organizer")]
    NotFound,
    /// The card would go below zero.
    #[error("the card would go below zero")]
    InsufficientCredit,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A booking waiting in its card's queue.
#[derive(Debug)]
pub struct Booking {
    value_cents: i64,
    text: Option<String>,
}

/// What a booking is answered: the card as it stood right after it, or why it was refused.
pub type Booked = Result<Card, TransactError>;

/// This process's bookings, queued per card and visibility, so that concurrent bookings on
/// one card are applied together (see [`crate::domain::batch`]).
pub type Bookings = Batches<(i64, Visibility), Booking, Booked>;

/// Most bookings applied in one transaction.
const MAX_BATCH: usize = 128;

/// An empty queue of bookings on the cards of `db`, for the process.
pub fn bookings(db: DatabaseConnection) -> Bookings {
    // One batch of a card at a time: a batch is one statement, all of it under the card's
    // lock, so overlapping batches would only queue on that lock.
    Batches::new(
        MAX_BATCH,
        1,
        Box::new(move |(id, vis), batch, _| Box::pin(apply_batch(db.clone(), vis, id, batch))),
    )
}

/// Books a signed amount on a card, atomically: the value and the ledger change together,
/// and a debit that would take the card below zero changes nothing.
///
/// Concurrent bookings on the card are applied together, in the order they queued, in one
/// transaction that locks the card (group commit): each is checked against the balance the
/// ones before it left, and answered on its own. A keyed request (`X-Idempotency-Key`)
/// books in a transaction of its own, which keeps its answer with it.
pub async fn transact(
    db: &DatabaseConnection,
    bookings: &Arc<Bookings>,
    vis: Visibility,
    id: i64,
    value_cents: i64,
    text: Option<String>,
) -> Booked {
    if unit_of_work::in_unit_of_work() {
        return crate::db::in_transaction(db, async |txn| {
            transact_in(txn, vis, id, value_cents, text, crate::values::now()).await
        })
        .await;
    }
    let booking = Booking { value_cents, text };
    bookings
        .submit((id, vis), booking)
        .await
        .unwrap_or_else(|| Err(DbErr::Custom("the batch of bookings failed".into()).into()))
}

/// Applies a batch of bookings on a card in one transaction, giving one answer per booking.
/// Its ledger entries are dated when it is applied.
async fn apply_batch(
    db: DatabaseConnection,
    vis: Visibility,
    id: i64,
    batch: Vec<Booking>,
) -> Vec<Booked> {
    let n = batch.len();
    let now = crate::values::now();
    let applied = match db.get_database_backend() {
        DbBackend::Postgres => apply_postgres(&db, vis, id, &batch, now).await,
        _ => {
            crate::db::in_transaction(&db, async |txn| {
                let mut answers = Vec::with_capacity(n);
                for b in batch {
                    answers.push(
                        match transact_in(txn, vis, id, b.value_cents, b.text, now).await {
                            Err(TransactError::Db(e)) => return Err(e),
                            answer => answer,
                        },
                    );
                }
                Ok(answers)
            })
            .await
        }
    };
    applied.unwrap_or_else(|e| {
        tracing::error!(error = %e, card = id, "a batch of gift card bookings failed");
        (0..n)
            .map(|_| Err(DbErr::Custom(e.to_string()).into()))
            .collect()
    })
}

/// [`transact`] inside a transaction the caller holds (a refund to a card books it with the
/// order's change).
pub async fn transact_in(
    txn: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
    value_cents: i64,
    text: Option<String>,
    now: DateTime<Utc>,
) -> Booked {
    if txn.get_database_backend() == DbBackend::Postgres {
        let booking = Booking { value_cents, text };
        let mut answers = apply_postgres(txn, vis, id, &[booking], now).await?;
        return answers.pop().unwrap_or(Err(TransactError::NotFound));
    }
    let booked = transact_sqlite(txn, vis, id, value_cents, text, now).await?;
    match booked {
        Some(card) => Ok(card),
        None => Err(match find(txn, vis, id).await? {
            Some(_) => TransactError::InsufficientCredit,
            None => TransactError::NotFound,
        }),
    }
}

/// PostgreSQL: one statement applies the bookings in order. It locks the card, walks the
/// bookings from its balance (each applied when it keeps the card at or above zero),
/// updates the card once, appends the applied ones to the ledger in that order, tells the
/// issuer's webhooks, and gives each booking's outcome with the balance after it. Without
/// a transaction around it, the statement commits on its own.
async fn apply_postgres(
    db: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
    batch: &[Booking],
    at: DateTime<Utc>,
) -> Result<Vec<Booked>, DbErr> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "WITH RECURSIVE \
             input AS (SELECT n, CAST(e->>'v' AS BIGINT) AS v, e->>'t' AS t \
                       FROM jsonb_array_elements(CAST($3 AS JSONB)) WITH ORDINALITY AS x(e, n)), \
             card AS (SELECT g.* FROM giftcards g WHERE g.id = $4 AND {} FOR UPDATE), \
             run (n, balance, ok) AS ( \
               SELECT CAST(0 AS BIGINT), value_cents, TRUE FROM card \
               UNION ALL \
               SELECT i.n, CASE WHEN r.balance + i.v >= 0 THEN r.balance + i.v ELSE r.balance END, \
                      r.balance + i.v >= 0 \
               FROM run r JOIN input i ON i.n = r.n + 1), \
             changed AS (UPDATE giftcards AS g \
                         SET value_cents = (SELECT balance FROM run ORDER BY n DESC LIMIT 1) \
                         WHERE g.id IN (SELECT id FROM card) \
                         AND EXISTS (SELECT 1 FROM run WHERE n > 0 AND ok)), \
             booked AS (INSERT INTO giftcard_transactions \
                        (card_id, acceptor_id, datetime, value_cents, text) \
                        SELECT $4, $1, $5, i.v, i.t FROM run r JOIN input i ON i.n = r.n \
                        WHERE r.n > 0 AND r.ok ORDER BY r.n RETURNING id, card_id), \
             told AS (INSERT INTO webhook_calls (webhook_id, action_type, organizer, payload, \
                      created, state, attempts, next_attempt) \
                      SELECT w.id, a.action_type, o.slug, \
                      jsonb_build_object('giftcard', b.card_id, 'transaction', b.id), $5, \
                      'pending', 0, $5 FROM booked b JOIN card c ON c.id = b.card_id \
                      JOIN organizers o ON o.id = c.issuer_id \
                      JOIN webhooks w ON w.organizer_id = c.issuer_id AND w.enabled \
                      JOIN webhook_action_types a ON a.webhook_id = w.id \
                      AND a.action_type = '{TRANSACTION}' ORDER BY b.id) \
             SELECT r.ok, r.balance, {CARD_COLUMNS} FROM run r CROSS JOIN card g \
             JOIN organizers o ON o.id = g.issuer_id WHERE r.n > 0 ORDER BY r.n",
            Visibility::condition(1, 2)
        )
    });
    let input: Vec<serde_json::Value> = batch
        .iter()
        .map(|b| json!({"v": b.value_cents, "t": b.text}))
        .collect();
    let [org, inc] = vis.values();
    let values = [
        org,
        inc,
        serde_json::Value::Array(input).into(),
        id.into(),
        at.into(),
    ];
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            SQL.as_str(),
            values,
        ))
        .await?;
    if rows.is_empty() {
        return Ok(batch.iter().map(|_| Err(TransactError::NotFound)).collect());
    }
    rows.iter()
        .map(|row| {
            let ok: bool = row.try_get("", "ok")?;
            let mut card = Card::from_query_result(row, "")?;
            card.value_cents = row.try_get("", "balance")?;
            Ok(if ok {
                Ok(card)
            } else {
                Err(TransactError::InsufficientCredit)
            })
        })
        .collect()
}

const GUARDED_UPDATE: &str = "UPDATE giftcards AS g SET value_cents = g.value_cents + $3 \
                              WHERE g.id = $4 AND g.value_cents + $3 >= 0 AND ";

/// SQLite: the same in two statements, in an IMMEDIATE transaction, which holds the
/// database's write lock.
async fn transact_sqlite(
    txn: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
    value_cents: i64,
    text: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<Card>, DbErr> {
    let sql = format!("{GUARDED_UPDATE}{}", Visibility::condition(1, 2));
    let [org, inc] = vis.values();
    let values = [org, inc, value_cents.into(), id.into()];
    let updated = txn
        .execute_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            sql,
            values,
        ))
        .await?;
    if updated.rows_affected() != 1 {
        return Ok(None);
    }
    let booked = book(txn, id, vis.organizer_id, value_cents, text, now).await?;
    let card = find(txn, vis, id).await?;
    if let Some(row) = giftcard::Entity::find_by_id(id).one(txn).await? {
        let extra = json!({"giftcard": id, "transaction": booked});
        let notice = webhooks::Notice::of_organizer(row.issuer_id, TRANSACTION, extra);
        webhooks::notify(txn, &notice).await?;
    }
    Ok(card)
}

/// The action type of a transaction on a card, told to the issuer's webhooks.
const TRANSACTION: &str = "pretix.giftcards.transaction.manual";

/// A ledger entry as the API shows it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct Entry {
    /// Internal ID.
    pub id: i64,
    /// When booked.
    pub datetime: DateTime<Utc>,
    /// Signed amount in cents.
    pub value_cents: i64,
    /// Event slug.
    pub event: Option<String>,
    /// Order code.
    pub order_code: Option<String>,
    /// Free text.
    pub text: Option<String>,
    /// Slug of the organizer that booked it.
    pub acceptor: String,
}

/// Order of the ledger list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryOrder {
    /// Newest first.
    #[default]
    NewestFirst,
    /// Oldest first.
    OldestFirst,
    /// By ID, ascending.
    Id,
    /// By ID, descending.
    IdDescending,
}

/// Number of ledger entries of a card.
pub async fn count_entries(db: &impl ConnectionTrait, card_id: i64) -> Result<u64, DbErr> {
    let sql = "SELECT COUNT(*) AS n FROM giftcard_transactions WHERE card_id = $1";
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [card_id.into()],
        ))
        .await?;
    Ok(row
        .map(|r| r.try_get::<i64>("", "n"))
        .transpose()?
        .unwrap_or(0)
        .max(0) as u64)
}

/// One page of a card's ledger.
pub async fn entries(
    db: &impl ConnectionTrait,
    card_id: i64,
    order: EntryOrder,
    limit: u64,
    offset: u64,
) -> Result<Vec<Entry>, DbErr> {
    let order_by = match order {
        EntryOrder::NewestFirst => "t.datetime DESC, t.id DESC",
        EntryOrder::OldestFirst => "t.datetime ASC, t.id ASC",
        EntryOrder::Id => "t.id ASC",
        EntryOrder::IdDescending => "t.id DESC",
    };
    let sql = format!(
        "SELECT t.id, t.datetime, t.value_cents, e.slug AS event, t.order_code, t.text, o.slug AS acceptor \
         FROM giftcard_transactions t JOIN organizers o ON o.id = t.acceptor_id \
         LEFT JOIN events e ON e.id = t.event_id \
         WHERE t.card_id = $1 ORDER BY {order_by} LIMIT {limit} OFFSET {offset}"
    );
    Entry::find_by_statement(Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [card_id.into()],
    ))
    .all(db)
    .await
}
