//! `X-Idempotency-Key` on writes (POST, PUT, PATCH, DELETE) under `/api/v1/`: a client that
//! is not sure its request arrived sends it again with the same key, and gets the first
//! answer again instead of the work being done twice.
//!
//! Keys belong to authenticated callers (the resolved credential, not the header's text: a
//! revoked token is refused before any stored answer is repeated), so two callers may use
//! the same key independently. Only requests to an operation of the API are keyed; a key is
//! stored with its method and a hash of its path, so that what a caller can make the server
//! store is bounded, and a caller holds at most [`MAX_LIVE_KEYS`] keys at a time.
//!
//! The first request with a key claims it (a row in `idempotency_keys`, in progress), runs,
//! and stores its answer; a later one with that key gets the stored answer, or 409 with
//! `Retry-After` while the first is still running. Answers that are not final are not
//! stored: after a 5xx (or a 401, 429) the key is released, so that the client can try again
//! with it. Keys are kept 24 hours; older ones count as unused. Requests without the header,
//! or without valid credentials, cost nothing here.
//!
//! The answer is stored in the transaction of the request's work ([`unit_of_work`]): a
//! process that dies before that commit leaves neither work nor answer, and its claim is
//! taken over once abandoned, so the retry does the work once; a process that dies after it
//! leaves both, and the retry gets the answer. A request whose answer is not final has its
//! work rolled back with it.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Duration, SubsecRound, Utc};
use poem::error::ResponseError;
use poem::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use poem::{Body, Request, Response};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set,
    Statement,
};
use serde_json::{Value, json};

use super::auth::Caller;
use super::error::ApiError;
use crate::db::entities::idempotency_key;
use crate::db::unit_of_work;
use crate::domain::tokens;

/// The request header carrying the key.
pub const HEADER: &str = "x-idempotency-key";

/// Longest key accepted, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// Keys a caller may hold within [`expiry`]: far more than any client retrying its writes
/// needs, few enough that no caller can fill the disk with them.
pub const MAX_LIVE_KEYS: i64 = 10_000;

/// How long a key is remembered.
pub fn expiry() -> Duration {
    Duration::hours(24)
}

/// How long a request may hold its key before the key counts as abandoned (its process
/// died mid-request): no request legitimately runs this long.
fn abandoned_after() -> Duration {
    Duration::minutes(5)
}

/// Response headers stored with an answer and repeated with it.
const KEPT_HEADERS: [HeaderName; 3] = [
    header::CONTENT_TYPE,
    header::LOCATION,
    header::CONTENT_DISPOSITION,
];

const IN_PROGRESS: &str = "in_progress";
const DONE: &str = "done";

/// A write request that carries a key, with who sent it.
#[derive(Debug, Clone)]
pub struct Keyed {
    credential: String,
    key: String,
    method: String,
    path: String,
}

/// A request's hold on its key: the row, and the `created` instant its claim wrote, which
/// tells this claim from a later one that took the row over. Storing the answer and
/// releasing the key are done only under it, so that a request whose claim was taken over
/// commits nothing.
#[derive(Debug, Clone, Copy)]
struct Ticket {
    id: i64,
    created: DateTime<Utc>,
}

/// The instant a claim writes: now, to the microsecond the databases keep, so that the
/// ticket compares equal to what was stored.
fn claim_instant() -> DateTime<Utc> {
    crate::values::now().trunc_subsecs(6)
}

/// Releases a claim whose request was dropped before it finished (the client went away, the
/// server shut down): its held work was rolled back, so the retry may run at once instead
/// of waiting for the claim to count as abandoned.
struct ReleaseOnDrop {
    db: DatabaseConnection,
    ticket: Option<Ticket>,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            let db = self.db.clone();
            tokio::spawn(async move { release(&db, ticket).await });
        }
    }
}

/// What the database says about a key for this request.
enum Claim {
    /// The key is this request's now: run it.
    Mine(Ticket),
    /// Answered before: repeat the answer.
    Done(Box<idempotency_key::Model>),
    /// Another request with the key is running.
    InProgress,
    /// The key was used for another method or path.
    Mismatch,
    /// The caller holds as many keys as it may.
    Full,
}

impl Keyed {
    /// The key of a request of `caller`, when it is a write under `/api/v1/` with the
    /// header; `None` otherwise.
    pub fn of(req: &Request, caller: &Caller) -> Option<Self> {
        let method = req.method();
        let writes = [Method::POST, Method::PUT, Method::PATCH, Method::DELETE];
        if !writes.contains(method) || !req.uri().path().starts_with("/api/v1/") {
            return None;
        }
        let key = req.headers().get(HEADER)?;
        Some(Self {
            credential: caller.identity(),
            key: String::from_utf8_lossy(key.as_bytes()).into_owned(),
            method: method.as_str().to_owned(),
            path: tokens::hash(req.uri().path().trim_end_matches('/')),
        })
    }

    /// Answers the request: runs `answer` when the key is new (or expired) and stores its
    /// result, or repeats the stored answer.
    ///
    /// A key used before for another method or path is answered with 400 (not 409, which
    /// tells the client to wait and retry): the same request must not be retried with it,
    /// and a different one needs a new key.
    pub async fn run(
        self,
        db: &DatabaseConnection,
        answer: impl Future<Output = Response>,
    ) -> Response {
        if self.key.is_empty() || self.key.len() > MAX_KEY_LEN {
            let message = format!("X-Idempotency-Key must be 1 to {MAX_KEY_LEN} characters.");
            return ApiError::bad_request(message).as_response();
        }
        match self.claim(db).await {
            Ok(Claim::Mine(ticket)) => {
                let mut guard = ReleaseOnDrop {
                    db: db.clone(),
                    ticket: Some(ticket),
                };
                let (resp, work) = unit_of_work::hold(answer).await;
                let resp = finish(db, ticket, resp, work).await;
                guard.ticket = None;
                resp
            }
            Ok(Claim::Done(row)) => replay(*row),
            Ok(Claim::InProgress) => in_progress(),
            Ok(Claim::Mismatch) => mismatch(),
            Ok(Claim::Full) => full(),
            Err(error) => {
                tracing::error!(%error, "idempotency key not claimed");
                ApiError::internal().as_response()
            }
        }
    }

    /// Inserts the key as in progress, or finds what holds it; takes over an expired or
    /// abandoned row.
    async fn claim(&self, db: &DatabaseConnection) -> Result<Claim, DbErr> {
        for _ in 0..3 {
            if let Some(ticket) = self.insert(db).await? {
                clean_up_now_and_then(db);
                return Ok(Claim::Mine(ticket));
            }
            let Some(row) = self.existing(db).await? else {
                if self.live_keys(db).await? >= MAX_LIVE_KEYS {
                    return Ok(Claim::Full);
                }
                continue;
            };
            if is_stale(&row, crate::values::now()) {
                if let Some(ticket) = self.take_over(db, row.id).await? {
                    return Ok(Claim::Mine(ticket));
                }
                continue;
            }
            return Ok(self.judge(row));
        }
        Ok(Claim::InProgress)
    }

    fn judge(&self, row: idempotency_key::Model) -> Claim {
        if row.method != self.method || row.path != self.path {
            Claim::Mismatch
        } else if row.state == DONE {
            Claim::Done(Box::new(row))
        } else {
            Claim::InProgress
        }
    }

    /// The new row's ticket, or `None` when the key is taken or the caller holds
    /// [`MAX_LIVE_KEYS`] keys.
    async fn insert(&self, db: &DatabaseConnection) -> Result<Option<Ticket>, DbErr> {
        let sql = "INSERT INTO idempotency_keys \
                   (credential, idempotency_key, method, path, state, created) \
                   SELECT $1, $2, $3, $4, $5, $6 \
                   WHERE (SELECT count(*) FROM idempotency_keys \
                          WHERE credential = $1 AND created >= $7) < $8 \
                   ON CONFLICT (credential, idempotency_key) DO NOTHING RETURNING id";
        let now = claim_instant();
        let values = [
            self.credential.clone().into(),
            self.key.clone().into(),
            self.method.clone().into(),
            self.path.clone().into(),
            IN_PROGRESS.into(),
            now.into(),
            (now - expiry()).into(),
            MAX_LIVE_KEYS.into(),
        ];
        let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, values);
        match db.query_one_raw(stmt).await? {
            Some(row) => Ok(Some(Ticket {
                id: row.try_get("", "id")?,
                created: now,
            })),
            None => Ok(None),
        }
    }

    /// How many unexpired keys the caller holds.
    async fn live_keys(&self, db: &DatabaseConnection) -> Result<i64, DbErr> {
        let sql = "SELECT count(*) AS n FROM idempotency_keys \
                   WHERE credential = $1 AND created >= $2";
        let values = [
            self.credential.clone().into(),
            (crate::values::now() - expiry()).into(),
        ];
        let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, values);
        match db.query_one_raw(stmt).await? {
            Some(row) => row.try_get("", "n"),
            None => Ok(0),
        }
    }

    async fn existing(
        &self,
        db: &DatabaseConnection,
    ) -> Result<Option<idempotency_key::Model>, DbErr> {
        idempotency_key::Entity::find()
            .filter(idempotency_key::Column::Credential.eq(&self.credential))
            .filter(idempotency_key::Column::IdempotencyKey.eq(&self.key))
            .one(db)
            .await
    }

    /// Makes a stale row this request's; `None` when another request was quicker.
    async fn take_over(&self, db: &DatabaseConnection, id: i64) -> Result<Option<Ticket>, DbErr> {
        let now = claim_instant();
        let sql = "UPDATE idempotency_keys SET method = $1, path = $2, state = $3, \
                   status = NULL, body = NULL, created = $4 \
                   WHERE id = $5 AND (created < $6 OR (state = $3 AND created < $7))";
        let values = [
            self.method.clone().into(),
            self.path.clone().into(),
            IN_PROGRESS.into(),
            now.into(),
            id.into(),
            (now - expiry()).into(),
            (now - abandoned_after()).into(),
        ];
        let stmt = Statement::from_sql_and_values(db.get_database_backend(), sql, values);
        let taken = db.execute_raw(stmt).await?.rows_affected() == 1;
        Ok(taken.then_some(Ticket { id, created: now }))
    }
}

/// Whether a row no longer holds its key: expired, or in progress for too long.
fn is_stale(row: &idempotency_key::Model, now: DateTime<Utc>) -> bool {
    row.created < now - expiry()
        || (row.state == IN_PROGRESS && row.created < now - abandoned_after())
}

/// Whether an answer is final, and so repeated for the key.
fn is_final(status: StatusCode) -> bool {
    !(status.is_server_error()
        || status == StatusCode::UNAUTHORIZED
        || status == StatusCode::TOO_MANY_REQUESTS)
}

/// Stores a final answer under the key, in the transaction of the work when there is one,
/// and commits them together; releases the key (and rolls the work back) otherwise. Gives
/// the answer. A claim taken over meanwhile stores nothing and commits no work.
async fn finish(
    db: &DatabaseConnection,
    ticket: Ticket,
    resp: Response,
    work: Option<crate::db::WriteTxn>,
) -> Response {
    if !is_final(resp.status()) {
        return abandon(db, ticket, work, resp).await;
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = body.into_vec().await else {
        return abandon(db, ticket, work, ApiError::internal().as_response()).await;
    };
    let headers: Vec<Value> = KEPT_HEADERS
        .iter()
        .filter_map(|name| {
            let value = parts.headers.get(name)?.to_str().ok()?;
            Some(json!([name.as_str(), value]))
        })
        .collect();
    let done = idempotency_key::ActiveModel {
        state: Set(DONE.into()),
        status: Set(Some(i32::from(parts.status.as_u16()))),
        headers: Set(Value::Array(headers)),
        body: Set(Some(bytes.clone())),
        ..Default::default()
    };
    let store = idempotency_key::Entity::update_many()
        .set(done)
        .filter(claimed_by(ticket));
    let Some(txn) = work else {
        match store.exec(db).await {
            Ok(r) if r.rows_affected == 1 => {}
            Ok(_) => tracing::warn!("idempotency key taken over before its answer was stored"),
            Err(error) => tracing::error!(%error, "answer of an idempotency key not stored"),
        }
        return Response::from_parts(parts, Body::from(bytes));
    };
    fault_point(FaultPoint::BeforeAnswer);
    let stored = match store.exec(&txn).await {
        Ok(r) if r.rows_affected == 1 => txn.commit().await,
        Ok(_) => {
            tracing::warn!("idempotency key taken over; the work is rolled back");
            return abandon(db, ticket, Some(txn), in_progress()).await;
        }
        Err(error) => Err(error),
    };
    if let Err(error) = stored {
        // Whether a failed commit took effect is unknown: the release spares a stored answer.
        tracing::error!(%error, "work and answer of an idempotent request not committed");
        release(db, ticket).await;
        return ApiError::internal().as_response();
    }
    fault_point(FaultPoint::AfterAnswer);
    Response::from_parts(parts, Body::from(bytes))
}

/// The key's row while it is still claimed by `ticket`.
fn claimed_by(ticket: Ticket) -> sea_orm::Condition {
    sea_orm::Condition::all()
        .add(idempotency_key::Column::Id.eq(ticket.id))
        .add(idempotency_key::Column::State.eq(IN_PROGRESS))
        .add(idempotency_key::Column::Created.eq(ticket.created))
}

/// Rolls back the work of a request whose answer is not kept, releases its key, and gives
/// the answer.
async fn abandon(
    db: &DatabaseConnection,
    ticket: Ticket,
    work: Option<crate::db::WriteTxn>,
    resp: Response,
) -> Response {
    if let Some(txn) = work
        && let Err(error) = txn.rollback().await
    {
        tracing::error!(%error, "work of an idempotent request not rolled back");
    }
    release(db, ticket).await;
    resp
}

/// Where a test may make the process die, to show that a retry neither loses nor repeats
/// the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FaultPoint {
    /// The work is done, its transaction not yet committed with the answer.
    BeforeAnswer,
    /// Work and answer are committed, the answer not yet sent.
    AfterAnswer,
}

/// Aborts the process at `point` when the environment variable `TESSERA_FAULT_POINT` names
/// it (`idempotency-before-answer`, `idempotency-after-answer`); for crash tests only, and
/// without effect when it is unset.
fn fault_point(point: FaultPoint) {
    static CHOSEN: std::sync::OnceLock<Option<FaultPoint>> = std::sync::OnceLock::new();
    let chosen = CHOSEN.get_or_init(
        || match std::env::var("TESSERA_FAULT_POINT").ok()?.as_str() {
            "idempotency-before-answer" => Some(FaultPoint::BeforeAnswer),
            "idempotency-after-answer" => Some(FaultPoint::AfterAnswer),
            _ => None,
        },
    );
    if *chosen == Some(point) {
        std::process::abort();
    }
}

/// Frees the key for a retry, unless its answer is stored or another request claimed it.
async fn release(db: &DatabaseConnection, ticket: Ticket) {
    let deleted = idempotency_key::Entity::delete_many()
        .filter(claimed_by(ticket))
        .exec(db)
        .await;
    if let Err(error) = deleted {
        tracing::error!(%error, "idempotency key not released");
    }
}

/// The stored answer, as it was given.
fn replay(row: idempotency_key::Model) -> Response {
    let status = row
        .status
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    let mut resp = Response::builder()
        .status(status)
        .body(row.body.unwrap_or_default());
    for pair in row.headers.as_array().into_iter().flatten() {
        let (Some(name), Some(value)) = (pair[0].as_str(), pair[1].as_str()) else {
            continue;
        };
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            resp.headers_mut().insert(name, value);
        }
    }
    resp
}

fn in_progress() -> Response {
    ApiError::detail(
        StatusCode::CONFLICT,
        "A request with this X-Idempotency-Key is still being processed; try again shortly.",
    )
    .header(header::RETRY_AFTER, "1")
    .as_response()
}

fn mismatch() -> Response {
    ApiError::bad_request(
        "This X-Idempotency-Key was used for another request; \
         use a new key for a different request.",
    )
    .as_response()
}

fn full() -> Response {
    ApiError::detail(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "This credential holds {MAX_LIVE_KEYS} idempotency keys of the last 24 hours; \
             reuse keys only for retries, or send writes without one."
        ),
    )
    .header(header::RETRY_AFTER, "3600")
    .as_response()
}

/// Unix time of the last clean-up started by this process.
static LAST_CLEAN_UP: AtomicI64 = AtomicI64::new(0);

/// Deletes expired keys, at most once an hour per process, in the background.
fn clean_up_now_and_then(db: &DatabaseConnection) {
    let now = crate::values::now();
    let last = LAST_CLEAN_UP.load(Ordering::Relaxed);
    if now.timestamp() - last < 3600
        || LAST_CLEAN_UP
            .compare_exchange(last, now.timestamp(), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let db = db.clone();
    tokio::spawn(async move {
        let deleted = idempotency_key::Entity::delete_many()
            .filter(idempotency_key::Column::Created.lt(now - expiry()))
            .exec(&db)
            .await;
        if let Err(error) = deleted {
            tracing::warn!(%error, "expired idempotency keys not deleted");
        }
    });
}
