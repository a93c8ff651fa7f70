//! `/api/v1/organizers/{organizer}/bankimportjobs/`: pretix's bank import, which
//! pretix-banktool uploads statements to. A job holds a statement's transactions; each
//! that names an order of the job's event (or of any event of the organizer in the job's
//! currency) for exactly what the order costs pays it, through a bank transfer payment.
//! A transaction seen before (its checksum) is left out, so a statement imported twice
//! pays nothing twice; the order's lock keeps two imports at once from paying it twice.
//! Jobs run as they are uploaded: the answer shows each transaction's outcome.

use std::collections::{HashMap, HashSet};

use chrono::{SubsecRound, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi, Tags};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Statement};
use serde_json::json;
use tessera::AppState;
use tessera::db::entities::{event, order};
use tessera::domain::grants::Caller;
use tessera::domain::orders::{self, ALREADY_PAID, LifecycleError};
use tessera::domain::permissions::Permission;
use tessera::http::auth::OrganizerAccess;
use tessera::http::error::{ListResult, ReadResult, WriteResult};
use tessera::http::{ApiError, Auth, Created, JsonBody, Money, Page, PageRequest};

use crate::entities::{job, transaction};
use crate::matching::{self, Named};

#[derive(Tags)]
enum Tag {
    /// Payment by bank transfer.
    #[oai(rename = "Bank transfer")]
    BankTransfer,
}

/// A transaction of a statement to import.
#[derive(Object)]
#[oai(rename = "BankImportTransactionCreate")]
pub struct TransactionIn {
    /// The amount; negative for a debit.
    pub amount: Money,
    /// The reference (purpose) the payer wrote, and what else the bank tells of it.
    #[oai(validator(max_length = 4000))]
    pub reference: String,
    /// Who paid.
    #[oai(default, validator(max_length = 1000))]
    pub payer: String,
    /// The booking date, as the bank gives it (free text).
    #[oai(validator(max_length = 50))]
    pub date: String,
    /// The payer's IBAN.
    #[oai(default, validator(max_length = 50))]
    pub iban: String,
    /// The payer's BIC.
    #[oai(default, validator(max_length = 20))]
    pub bic: String,
    /// The bank's ID of the transaction.
    #[oai(default, validator(max_length = 255))]
    pub external_id: String,
}

/// A statement to import.
#[derive(Object)]
#[oai(rename = "BankImportJobCreate")]
pub struct JobCreate {
    /// The event whose orders it pays (slug); none: every event of the organizer.
    #[oai(default, nullable, validator(max_length = 50))]
    pub event: Option<String>,
    /// The statement's currency; by default the event's, or that of all the organizer's
    /// events.
    #[oai(default, nullable, validator(max_length = 3))]
    pub currency: Option<String>,
    /// The transactions.
    #[oai(validator(max_items = 10000))]
    pub transactions: Vec<TransactionIn>,
}

/// A transaction as imported, and what it did.
#[derive(Object)]
#[oai(rename = "BankImportTransaction")]
pub struct TransactionOut {
    /// `imported` (not yet looked at), `nomatch`, `invalid` (wrong amount), `error`,
    /// `valid` (paid its order), `discarded` or `already` (the order was paid).
    pub state: String,
    /// Why it ended as it did.
    pub message: String,
    /// What makes it the same transaction in another statement.
    pub checksum: String,
    /// Who paid.
    pub payer: String,
    /// The reference.
    pub reference: String,
    /// The amount.
    pub amount: Money,
    /// The booking date, as given.
    pub date: String,
    /// The code of the order it matched.
    #[oai(nullable)]
    pub order: Option<String>,
    /// The organizer's comment.
    pub comment: String,
    /// The payer's IBAN.
    pub iban: String,
    /// The payer's BIC.
    pub bic: String,
    /// The bank's ID of the transaction.
    pub external_id: String,
    /// The currency.
    pub currency: String,
}

/// An import job.
#[derive(Object)]
#[oai(rename = "BankImportJob")]
pub struct JobOut {
    /// ID.
    pub id: i64,
    /// The event (slug); none: every event of the organizer.
    #[oai(nullable)]
    pub event: Option<String>,
    /// When it was uploaded.
    pub created: chrono::DateTime<Utc>,
    /// `pending`, `running`, `completed` or `error`.
    pub state: String,
    /// The statement's currency.
    pub currency: String,
    /// Its new transactions (those seen before are left out).
    pub transactions: Vec<TransactionOut>,
}

/// The bank import endpoints.
pub struct JobsApi;

#[OpenApi(tag = "Tag::BankTransfer")]
impl JobsApi {
    /// List bank import jobs
    ///
    /// Newest first: jobs of the events whose orders the caller may see, and organizer-wide
    /// jobs for callers who may see the orders of all events.
    #[oai(path = "/api/v1/organizers/:organizer/bankimportjobs", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_jobs(
        &self,
        req: &Request,
        state: Data<&AppState>,
        access: Data<&OrganizerAccess>,
        caller: Data<&Caller>,
        _auth: Auth,
        #[oai(name = "organizer")] _organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<JobOut>>> {
        let org = access.organizer.id;
        let mut query = job::Entity::find()
            .filter(job::Column::OrganizerId.eq(org))
            .order_by_desc(job::Column::Id);
        if !caller.holds_for_all_events(org, Permission::ViewOrders) {
            let events = visible_events(&state, org, &caller, Permission::ViewOrders).await?;
            query = query.filter(job::Column::EventId.is_in(events));
        }
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        let (jobs, page) = page.take_results();
        Ok(Json(page(shown(&state, jobs).await?)))
    }

    /// Show a bank import job
    #[oai(
        path = "/api/v1/organizers/:organizer/bankimportjobs/:id",
        method = "get"
    )]
    async fn get_job(
        &self,
        state: Data<&AppState>,
        access: Data<&OrganizerAccess>,
        caller: Data<&Caller>,
        _auth: Auth,
        #[oai(name = "organizer")] _organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<JobOut>> {
        let org = access.organizer.id;
        let found = job::Entity::find_by_id(id.0)
            .filter(job::Column::OrganizerId.eq(org))
            .one(&state.db)
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("No such import job."))?;
        if !may(&caller, org, found.event_id, Permission::ViewOrders) {
            return Err(ApiError::not_found("No such import job.").into());
        }
        let mut out = shown(&state, vec![found]).await?;
        Ok(Json(out.remove(0)))
    }

    /// Import a bank statement
    ///
    /// Runs the import at once and answers the job with each new transaction's outcome
    /// (201). Needs `can_change_orders` for the event, or for all events when no event is
    /// given.
    #[oai(path = "/api/v1/organizers/:organizer/bankimportjobs", method = "post")]
    async fn create_job(
        &self,
        state: Data<&AppState>,
        access: Data<&OrganizerAccess>,
        caller: Data<&Caller>,
        _auth: Auth,
        #[oai(name = "organizer")] _organizer: Path<String>,
        body: JsonBody<JobCreate>,
    ) -> WriteResult<Created<JobOut>> {
        let org = access.organizer.id;
        let body = body.0;
        let ev = match &body.event {
            Some(slug) => Some(find_event(&state, org, slug).await?),
            None => None,
        };
        if !may(
            &caller,
            org,
            ev.as_ref().map(|e| e.id),
            Permission::ChangeOrders,
        ) {
            return Err(ApiError::forbidden().into());
        }
        let currency = currency(&state, org, ev.as_ref(), body.currency.as_deref()).await?;
        let statement =
            Upload::read(&state, org, ev.as_ref(), &currency, body.transactions).await?;
        let done = statement.settle(&state, &access.organizer.slug).await?;
        let job = record(&state, org, ev.as_ref(), &currency, done).await?;
        Ok(Created::Created(Json(job)))
    }
}

/// Whether the caller holds `p` for the event of a job, or for all events when it has none.
fn may(caller: &Caller, organizer_id: i64, event_id: Option<i64>, p: Permission) -> bool {
    match event_id {
        Some(e) => caller.event_permissions(organizer_id, e).has(p),
        None => caller.holds_for_all_events(organizer_id, p),
    }
}

/// The organizer's events for which the caller holds `p`.
async fn visible_events(
    state: &AppState,
    organizer_id: i64,
    caller: &Caller,
    p: Permission,
) -> Result<Vec<i64>, ApiError> {
    let all = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .all(&state.db)
        .await?;
    Ok(all
        .into_iter()
        .filter(|e| caller.event_permissions(organizer_id, e.id).has(p))
        .map(|e| e.id)
        .collect())
}

async fn find_event(
    state: &AppState,
    organizer_id: i64,
    slug: &str,
) -> Result<event::Model, ApiError> {
    event::Entity::find()
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .filter(event::Column::Slug.eq(slug))
        .one(&state.db)
        .await?
        .ok_or_else(|| ApiError::field("event", format!("Object with slug={slug} does not exist.")))
}

/// The job's currency: the one sent (which must be the event's, for an event's job), else
/// the event's, else the one currency of all the organizer's events.
async fn currency(
    state: &AppState,
    organizer_id: i64,
    ev: Option<&event::Model>,
    sent: Option<&str>,
) -> Result<String, ApiError> {
    match (ev, sent) {
        (Some(e), Some(c)) if !c.eq_ignore_ascii_case(&e.currency) => Err(ApiError::field(
            "currency",
            format!("The event's currency is {}.", e.currency),
        )),
        (Some(e), _) => Ok(e.currency.clone()),
        (None, Some(c)) => {
            let c = c.to_ascii_uppercase();
            if c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()) {
                Ok(c)
            } else {
                Err(ApiError::field(
                    "currency",
                    "Enter a currency code of three letters.",
                ))
            }
        }
        (None, None) => {
            let mut all: Vec<String> = event::Entity::find()
                .filter(event::Column::OrganizerId.eq(organizer_id))
                .all(&state.db)
                .await?
                .into_iter()
                .map(|e| e.currency)
                .collect();
            all.sort();
            all.dedup();
            match all.as_slice() {
                [one] => Ok(one.clone()),
                _ => Err(ApiError::field(
                    "currency",
                    "Currency is ambiguous, please set explicitly.",
                )),
            }
        }
    }
}

/// An order a transaction may pay.
#[derive(Clone)]
struct Candidate {
    id: i64,
    event_id: i64,
    code: String,
    status: String,
    total_cents: i64,
}

/// A transaction of a statement not seen before, the order it names and what it did.
struct Incoming {
    t: TransactionIn,
    checksum: String,
    order: Option<Candidate>,
    state: &'static str,
    message: String,
}

/// A statement, read before anything is written: its transactions not seen before, each
/// with the order it names, and the events those orders may be of.
struct Upload {
    events: Vec<event::Model>,
    incoming: Vec<Incoming>,
}

/// How many order codes one query looks for.
const CODES_PER_QUERY: usize = 500;

impl Upload {
    async fn read(
        state: &AppState,
        organizer_id: i64,
        ev: Option<&event::Model>,
        currency: &str,
        transactions: Vec<TransactionIn>,
    ) -> Result<Self, ApiError> {
        let events: Vec<event::Model> = match ev {
            Some(e) => vec![e.clone()],
            None => {
                event::Entity::find()
                    .filter(event::Column::OrganizerId.eq(organizer_id))
                    .filter(event::Column::Currency.eq(currency))
                    .all(&state.db)
                    .await?
            }
        };
        let mut seen = HashSet::new();
        let summed: Vec<(TransactionIn, String)> = transactions
            .into_iter()
            .map(|t| {
                let sum =
                    matching::checksum(&t.payer, &t.reference, t.amount.0, &t.date, &t.external_id);
                (t, sum)
            })
            .filter(|(_, sum)| seen.insert(sum.clone()))
            .collect();
        let mut known: HashSet<String> = HashSet::new();
        for chunk in summed.chunks(CODES_PER_QUERY) {
            let sums: Vec<String> = chunk.iter().map(|(_, s)| s.clone()).collect();
            known.extend(
                transaction::Entity::find()
                    .filter(transaction::Column::OrganizerId.eq(organizer_id))
                    .filter(transaction::Column::Checksum.is_in(sums))
                    .all(&state.db)
                    .await?
                    .into_iter()
                    .map(|t| t.checksum),
            );
        }
        let slugs: Vec<String> = events.iter().map(|e| e.slug.clone()).collect();
        let fresh: Vec<(TransactionIn, String, Vec<Named>)> = summed
            .into_iter()
            .filter(|(_, sum)| !known.contains(sum))
            .map(|(t, sum)| {
                let named = matching::codes_in(&t.reference, &slugs);
                (t, sum, named)
            })
            .collect();
        let mut codes: Vec<String> = fresh
            .iter()
            .flat_map(|(_, _, named)| named.iter().map(|n| n.code.clone()))
            .collect();
        codes.sort();
        codes.dedup();
        let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
        let mut orders: Vec<order::Model> = Vec::new();
        for chunk in codes.chunks(CODES_PER_QUERY) {
            orders.extend(
                order::Entity::find()
                    .filter(order::Column::EventId.is_in(ids.clone()))
                    .filter(order::Column::Code.is_in(chunk.to_vec()))
                    .all(&state.db)
                    .await?,
            );
        }
        let incoming = fresh
            .into_iter()
            .map(|(t, checksum, named)| Incoming {
                order: named_order(&events, &orders, &named),
                t,
                checksum,
                state: "nomatch",
                message: String::new(),
            })
            .collect();
        Ok(Self { events, incoming })
    }

    /// Pays what each transaction matches, where pretix would: each ends with its state
    /// and message.
    async fn settle(
        mut self,
        state: &AppState,
        organizer: &str,
    ) -> Result<Vec<Incoming>, ApiError> {
        for i in &mut self.incoming {
            let Some(c) = &i.order else { continue };
            let (s, message) = if c.status == "p" {
                ("already", ALREADY_PAID.to_owned())
            } else if c.status == "c" {
                ("error", "The order has already been canceled.".to_owned())
            } else if c.total_cents != i.t.amount.0 {
                ("invalid", "The transaction amount is incorrect.".to_owned())
            } else {
                let ev = self
                    .events
                    .iter()
                    .find(|e| e.id == c.event_id)
                    .ok_or_else(ApiError::internal)?;
                let info = json!({
                    "reference": i.t.reference,
                    "date": i.t.date,
                    "payer": i.t.payer,
                    "iban": i.t.iban,
                    "bic": i.t.bic,
                    "checksum": i.checksum,
                });
                let paid = orders::receive_payment(
                    state.seller(organizer),
                    ev,
                    &c.code,
                    crate::NAME,
                    i.t.amount.0,
                    info,
                )
                .await;
                match paid {
                    Ok(_) => ("valid", String::new()),
                    Err(LifecycleError::Refused(why)) if why == ALREADY_PAID => ("already", why),
                    Err(LifecycleError::Refused(why)) => ("error", why),
                    Err(LifecycleError::Invalid(body)) => ("error", body.to_string()),
                    Err(LifecycleError::NotFound) => ("nomatch", String::new()),
                    Err(LifecycleError::Db(e)) => return Err(e.into()),
                }
            };
            i.state = s;
            i.message = message;
        }
        Ok(self.incoming)
    }
}

/// The first named order that exists: slug and code first, then bare codes (which must
/// name one order only).
fn named_order(
    events: &[event::Model],
    orders: &[order::Model],
    named: &[Named],
) -> Option<Candidate> {
    named.iter().find_map(|n| {
        let hits: Vec<&order::Model> = orders
            .iter()
            .filter(|o| o.code == n.code)
            .filter(|o| match &n.event {
                Some(slug) => events.iter().any(|e| e.id == o.event_id && &e.slug == slug),
                None => true,
            })
            .collect();
        match hits.as_slice() {
            [o] => Some(Candidate {
                id: o.id,
                event_id: o.event_id,
                code: o.code.clone(),
                status: o.status.clone(),
                total_cents: o.total_cents,
            }),
            _ => None,
        }
    })
}

/// Stores the job, completed, with its transactions, in one transaction; a transaction
/// another import stored meanwhile is left out of this one.
async fn record(
    state: &AppState,
    organizer_id: i64,
    ev: Option<&event::Model>,
    currency: &str,
    done: Vec<Incoming>,
) -> Result<JobOut, ApiError> {
    let txn = tessera::db::begin_write(&state.db).await?;
    // As stored: PostgreSQL keeps microseconds.
    let created = Utc::now().trunc_subsecs(6);
    let id = tessera::db::insert_returning_id(
        &txn,
        "INSERT INTO bank_import_jobs (organizer_id, event_id, created, state, currency) \
         VALUES ($1, $2, $3, 'completed', $4) RETURNING id",
        [
            organizer_id.into(),
            ev.map(|e| e.id).into(),
            created.into(),
            currency.into(),
        ],
    )
    .await?;
    let mut transactions = Vec::new();
    for i in done {
        let order_id = i.order.as_ref().map(|c| c.id);
        let stmt = Statement::from_sql_and_values(
            txn.get_database_backend(),
            "INSERT INTO bank_transactions (job_id, organizer_id, state, message, checksum, \
             payer, reference, amount_cents, date, order_id, comment, iban, bic, external_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '', $11, $12, $13) \
             ON CONFLICT (organizer_id, checksum) DO NOTHING RETURNING id",
            [
                id.into(),
                organizer_id.into(),
                i.state.into(),
                i.message.clone().into(),
                i.checksum.clone().into(),
                i.t.payer.clone().into(),
                i.t.reference.clone().into(),
                i.t.amount.0.into(),
                i.t.date.clone().into(),
                order_id.into(),
                i.t.iban.clone().into(),
                i.t.bic.clone().into(),
                i.t.external_id.clone().into(),
            ],
        );
        if txn.query_one_raw(stmt).await?.is_some() {
            transactions.push(TransactionOut {
                state: i.state.to_owned(),
                message: i.message,
                checksum: i.checksum,
                payer: i.t.payer,
                reference: i.t.reference,
                amount: i.t.amount,
                date: i.t.date,
                order: i.order.map(|c| c.code),
                comment: String::new(),
                iban: i.t.iban,
                bic: i.t.bic,
                external_id: i.t.external_id,
                currency: currency.to_owned(),
            });
        }
    }
    tessera::db::commit(txn).await?;
    Ok(JobOut {
        id,
        event: ev.map(|e| e.slug.clone()),
        created,
        state: "completed".into(),
        currency: currency.to_owned(),
        transactions,
    })
}

/// Jobs as the API shows them, with their transactions.
async fn shown(state: &AppState, jobs: Vec<job::Model>) -> Result<Vec<JobOut>, ApiError> {
    let ids: Vec<i64> = jobs.iter().map(|j| j.id).collect();
    let event_ids: Vec<i64> = jobs.iter().filter_map(|j| j.event_id).collect();
    let slugs: HashMap<i64, String> = event::Entity::find()
        .filter(event::Column::Id.is_in(event_ids))
        .all(&state.db)
        .await?
        .into_iter()
        .map(|e| (e.id, e.slug))
        .collect();
    let all = transaction::Entity::find()
        .filter(transaction::Column::JobId.is_in(ids))
        .order_by_asc(transaction::Column::Id)
        .all(&state.db)
        .await?;
    let order_ids: Vec<i64> = all.iter().filter_map(|t| t.order_id).collect();
    let codes: HashMap<i64, String> = order::Entity::find()
        .filter(order::Column::Id.is_in(order_ids))
        .all(&state.db)
        .await?
        .into_iter()
        .map(|o| (o.id, o.code))
        .collect();
    let mut by_job: HashMap<i64, Vec<TransactionOut>> = HashMap::new();
    let currency_of: HashMap<i64, String> =
        jobs.iter().map(|j| (j.id, j.currency.clone())).collect();
    for t in all {
        by_job.entry(t.job_id).or_default().push(TransactionOut {
            order: t.order_id.and_then(|id| codes.get(&id).cloned()),
            currency: currency_of.get(&t.job_id).cloned().unwrap_or_default(),
            state: t.state,
            message: t.message,
            checksum: t.checksum,
            payer: t.payer,
            reference: t.reference,
            amount: Money(t.amount_cents),
            date: t.date,
            comment: t.comment,
            iban: t.iban,
            bic: t.bic,
            external_id: t.external_id,
        });
    }
    Ok(jobs
        .into_iter()
        .map(|j| JobOut {
            id: j.id,
            event: j.event_id.and_then(|e| slugs.get(&e).cloned()),
            created: j.created,
            transactions: by_job.remove(&j.id).unwrap_or_default(),
            state: j.state,
            currency: j.currency,
        })
        .collect())
}
