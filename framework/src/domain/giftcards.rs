//! The gift card ledger. A card's `value_cents` always equals the sum of its transactions;
//! every change of value writes both in one atomic step, and no step takes a card below zero,
//! however many requests race for it, in however many processes.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait,
    FromQueryResult, Set, Statement, Value,
};

use crate::db::entities::{giftcard, giftcard_transaction};
use crate::db::{begin_write, is_unique_violation, unit_of_work};
use crate::domain::webhooks;
use serde_json::json;

/// Which cards an organizer sees: its own, and with `include_accepted` also those of the
/// issuers it accepts.
#[derive(Debug, Clone, Copy)]
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
    let now = Utc::now();
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
            book(&txn, id, organizer_id, diff, None, Utc::now()).await?;
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
    let lock = if db.get_database_backend() == DbBackend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let sql = format!("SELECT * FROM giftcards WHERE id = $1 AND issuer_id = $2{lock}");
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [id.into(), organizer_id.into()],
    );
    giftcard::Model::find_by_statement(stmt).one(db).await
}

/// Why a transaction was refused.
#[derive(Debug)]
pub enum TransactError {
    /// No such card is visible to the organizer.
    NotFound,
    /// The card would go below zero.
    InsufficientCredit,
    /// The database failed.
    Db(DbErr),
}

impl From<DbErr> for TransactError {
    fn from(e: DbErr) -> Self {
        TransactError::Db(e)
    }
}

/// Books a signed amount on a card, atomically: the value and the ledger change together,
/// and a debit that would take the card below zero changes nothing.
pub async fn transact(
    db: &DatabaseConnection,
    vis: Visibility,
    id: i64,
    value_cents: i64,
    text: Option<String>,
) -> Result<Card, TransactError> {
    let now = Utc::now();
    // One statement needs no transaction, unless a keyed request holds its work with the
    // answer.
    if db.get_database_backend() == DbBackend::Postgres && !unit_of_work::in_unit_of_work() {
        let booked = transact_postgres(db, vis, id, value_cents, text, now).await?;
        return settle(db, vis, id, booked).await;
    }
    crate::db::in_transaction(db, async |txn| {
        transact_in(txn, vis, id, value_cents, text, now).await
    })
    .await
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
) -> Result<Card, TransactError> {
    let booked = match txn.get_database_backend() {
        DbBackend::Postgres => transact_postgres(txn, vis, id, value_cents, text, now).await?,
        _ => transact_sqlite(txn, vis, id, value_cents, text, now).await?,
    };
    settle(txn, vis, id, booked).await
}

/// The booked card, or why nothing was booked.
async fn settle(
    db: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
    booked: Option<Card>,
) -> Result<Card, TransactError> {
    match booked {
        Some(card) => Ok(card),
        None => Err(match find(db, vis, id).await? {
            Some(_) => TransactError::InsufficientCredit,
            None => TransactError::NotFound,
        }),
    }
}

const GUARDED_UPDATE: &str = "UPDATE giftcards AS g SET value_cents = g.value_cents + $3 \
                              WHERE g.id = $4 AND g.value_cents + $3 >= 0 AND ";

/// PostgreSQL: one statement updates the card, appends to the ledger and returns the card.
/// The row lock taken by the UPDATE serialises concurrent bookings, and the guard is
/// re-checked on the latest row version, so the balance never goes below zero.
async fn transact_postgres(
    db: &impl ConnectionTrait,
    vis: Visibility,
    id: i64,
    value_cents: i64,
    text: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<Card>, DbErr> {
    let sql = format!(
        "WITH card AS ({GUARDED_UPDATE}{} RETURNING g.*), \
         booked AS (INSERT INTO giftcard_transactions (card_id, acceptor_id, datetime, value_cents, text) \
                    SELECT id, $1, $5, $3, $6 FROM card RETURNING id, card_id), \
         told AS (INSERT INTO webhook_calls (webhook_id, action_type, organizer, payload, \
                  created, state, attempts, next_attempt) \
                  SELECT w.id, a.action_type, o.slug, \
                  jsonb_build_object('giftcard', b.card_id, 'transaction', b.id), $5, \
                  'pending', 0, $5 FROM booked b JOIN card c ON c.id = b.card_id \
                  JOIN organizers o ON o.id = c.issuer_id \
                  JOIN webhooks w ON w.organizer_id = c.issuer_id AND w.enabled \
                  JOIN webhook_action_types a ON a.webhook_id = w.id \
                  AND a.action_type = '{TRANSACTION}') \
         SELECT {CARD_COLUMNS} FROM card g JOIN organizers o ON o.id = g.issuer_id",
        Visibility::condition(1, 2)
    );
    let [org, inc] = vis.values();
    let values = [
        org,
        inc,
        value_cents.into(),
        id.into(),
        now.into(),
        text.into(),
    ];
    Card::find_by_statement(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        values,
    ))
    .one(db)
    .await
}

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
