//! Raw SQL helpers the talk side's rules share: rows of a statement with `$n` placeholders,
//! `IN (...)` lists of IDs, and new codes unused in a table.

use sea_orm::{ConnectionTrait, QueryResult, Statement};

use crate::domain::refusal::Refusal;

/// Attempts at a random code before giving up (codes are drawn from 28^6 values).
const CODE_ATTEMPTS: usize = 20;

/// Length of generated submission and speaker codes.
pub const CODE_LEN: usize = 6;

/// Runs a query with `$n` placeholders and gives its rows.
pub async fn rows(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Vec<QueryResult>, Refusal> {
    Ok(db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            values,
        ))
        .await?)
}

/// The first row of a query, if any.
pub async fn first(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Option<QueryResult>, Refusal> {
    Ok(rows(db, sql, values).await?.into_iter().next())
}

/// `($1, $2, ...)` for a list of IDs, with the values; placeholders start after `offset`
/// values already bound.
pub fn ids_in(ids: &[i64], offset: usize) -> (String, Vec<sea_orm::Value>) {
    let placeholders: Vec<String> = (1..=ids.len())
        .map(|i| format!("${}", i + offset))
        .collect();
    let values = ids.iter().map(|i| (*i).into()).collect();
    (format!("({})", placeholders.join(", ")), values)
}

/// A new random code (of [`crate::domain::tokens::UNAMBIGUOUS`] characters) for which
/// `taken` (a query with the code as `$1`, then `values`) finds no row.
pub async fn unused_code(
    db: &impl ConnectionTrait,
    taken: &str,
    values: &[sea_orm::Value],
) -> Result<String, Refusal> {
    for _ in 0..CODE_ATTEMPTS {
        let code = crate::domain::tokens::random_from(crate::domain::tokens::UNAMBIGUOUS, CODE_LEN);
        let mut bound = vec![code.clone().into()];
        bound.extend_from_slice(values);
        if first(db, taken, bound).await?.is_none() {
            return Ok(code);
        }
    }
    Err(Refusal::internal())
}
