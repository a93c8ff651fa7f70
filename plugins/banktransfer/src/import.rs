//! `POST .../events/{event}/plugins/banktransfer/import/`: bank transactions in, paid
//! orders out.

use poem::web::Data;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi, Tags};
use sea_orm::{FromQueryResult, Statement};
use serde_json::Value;
use tessera::AppState;

use crate::matching::normalized;
use tessera::domain::orders::{self, LifecycleError};
use tessera::domain::permissions::Permission;
use tessera::http::auth::EventAccess;
use tessera::http::error::WriteResult;
use tessera::http::{ApiError, Auth, JsonList, Money};

#[derive(Tags)]
enum Tag {
    /// Payment by bank transfer.
    #[oai(rename = "Bank transfer")]
    BankTransfer,
}

/// A transaction from a bank statement.
#[derive(Object, Clone)]
pub struct BankTransaction {
    /// The amount credited.
    pub amount: Money,
    /// The reference (purpose) the payer wrote.
    #[oai(validator(max_length = 1000))]
    pub reference: String,
    /// The booking date, as the bank gives it.
    #[oai(validator(max_length = 50))]
    pub date: String,
}

/// A transaction that paid an order.
#[derive(Object)]
pub struct Matched {
    /// The transaction.
    #[oai(flatten)]
    pub transaction: BankTransaction,
    /// The code of the order it paid.
    pub order: String,
}

/// A transaction that paid nothing, and why.
#[derive(Object)]
pub struct Unmatched {
    /// The transaction.
    #[oai(flatten)]
    pub transaction: BankTransaction,
    /// Why it did not pay an order.
    pub reason: String,
}

/// What an import did.
#[derive(Object)]
pub struct ImportResult {
    /// Transactions that marked their orders paid.
    pub matched: Vec<Matched>,
    /// Transactions that did not.
    pub unmatched: Vec<Unmatched>,
}

/// An open bank transfer payment of the event.
struct Open {
    code: String,
    local_id: i32,
    amount_cents: i64,
    reference: String,
}

/// The bank transfer endpoints.
pub struct ImportApi;

#[OpenApi(tag = "Tag::BankTransfer")]
impl ImportApi {
    /// Import bank transactions
    ///
    /// Each transaction whose reference contains the reference of an open bank transfer
    /// payment of the event, for exactly its amount, confirms that payment and marks its
    /// order paid; the others are reported with the reason. Importing a statement twice
    /// pays nothing twice. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/plugins/banktransfer/import",
        method = "post"
    )]
    async fn import_transactions(
        &self,
        state: Data<&AppState>,
        access: Data<&EventAccess>,
        _auth: Auth,
        #[oai(name = "organizer")] _organizer: Path<String>,
        #[oai(name = "event")] _event: Path<String>,
        body: JsonList<BankTransaction>,
    ) -> WriteResult<Json<ImportResult>> {
        access.require(Permission::ChangeOrders)?;
        let open = open_payments(&state, &access).await?;
        let seller = state.seller(&access.organizer.slug);
        let mut result = ImportResult {
            matched: Vec::new(),
            unmatched: Vec::new(),
        };
        for t in body.0 {
            let reference = normalized(&t.reference);
            let found = open
                .iter()
                .find(|p| !p.reference.is_empty() && reference.contains(&p.reference));
            let outcome = match found {
                None => Err("No open payment has this reference.".to_owned()),
                Some(p) if p.amount_cents != t.amount.0 => Err(format!(
                    "The amount differs from the payment's ({}).",
                    Money(p.amount_cents)
                )),
                Some(p) => {
                    match orders::confirm_payment(seller, &access.event, &p.code, p.local_id, true)
                        .await
                    {
                        Ok(_) => Ok(p.code.clone()),
                        Err(LifecycleError::Refused(why)) => Err(why),
                        Err(LifecycleError::Invalid(body)) => Err(body.to_string()),
                        Err(LifecycleError::NotFound) => Err("The order is gone.".to_owned()),
                        Err(LifecycleError::Db(e)) => return Err(ApiError::from(e).into()),
                    }
                }
            };
            match outcome {
                Ok(order) => result.matched.push(Matched {
                    transaction: t,
                    order,
                }),
                Err(reason) => result.unmatched.push(Unmatched {
                    transaction: t,
                    reason,
                }),
            }
        }
        Ok(Json(result))
    }
}

/// A bank transfer payment waiting for money, as stored.
#[derive(FromQueryResult)]
struct OpenRow {
    code: String,
    local_id: i32,
    amount_cents: i64,
    details: Value,
}

/// The event's bank transfer payments that wait for money.
async fn open_payments(state: &AppState, access: &EventAccess) -> Result<Vec<Open>, ApiError> {
    let stmt = Statement::from_sql_and_values(
        state.db.get_database_backend(),
        "SELECT o.code, p.local_id, p.amount_cents, p.details \
         FROM order_payments p JOIN orders o ON o.id = p.order_id \
         WHERE o.event_id = $1 AND p.provider = $2 AND p.state IN ('created', 'pending')",
        [access.event.id.into(), crate::NAME.into()],
    );
    let rows = OpenRow::find_by_statement(stmt).all(&state.db).await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let reference = r.details["provider"]["reference"]
                .as_str()
                .map(normalized)?;
            Some(Open {
                code: r.code,
                local_id: r.local_id,
                amount_cents: r.amount_cents,
                reference,
            })
        })
        .collect())
}
