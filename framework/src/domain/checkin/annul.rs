//! A check-in taken back (`checkinrpc/annul/`), as pretix: the scanner that made it names
//! it by its nonce within 15 minutes (by the time it sends, so that a scanner offline at the
//! time can still take it back); later ones are refused and only noted.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, FromQueryResult};
use serde_json::json;

use super::exit_all::move_exit_hold;
use super::redeem::{exited, positions_where};
use crate::db;
use crate::domain::webhooks;

/// How long after a check-in it may be annulled.
pub const WINDOW: TimeDelta = TimeDelta::minutes(15);

/// Why a check-in was not annulled.
#[derive(Debug, thiserror::Error)]
pub enum AnnulError {
    /// No check-in of these lists has the nonce (404).
    #[error("No check-in found based on nonce")]
    NotFound,
    /// A refusal for the client (400): its message, and whether pretix words it as a
    /// `non_field_errors` object rather than a list.
    #[error("{0}")]
    Refused(&'static str, bool),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What names the check-in and who asks.
#[derive(Debug, Clone)]
pub struct Annulment {
    /// The check-in lists it may be on.
    pub lists: Vec<i64>,
    /// The nonce the scanner sent with the check-in.
    pub nonce: String,
    /// When the scanner annulled it (now when not sent).
    pub datetime: Option<DateTime<Utc>>,
    /// Why, in the scanner's words.
    pub error_explanation: Option<String>,
    /// The asking device (`devices.id`): a device annuls only its own check-ins.
    pub device: Option<i64>,
}

#[derive(FromQueryResult)]
struct Found {
    id: i64,
    list_id: i64,
    position_id: Option<i64>,
    successful: bool,
    datetime: DateTime<Utc>,
    device_id: Option<i64>,
    r#type: String,
}

/// Annuls the check-in: it no longer counts (`successful` false, reason `annulled`), and a
/// ticket that left the quota by it counts on the quota again.
pub async fn annul(pool: &DatabaseConnection, a: Annulment) -> Result<(), AnnulError> {
    let txn = db::begin_write(pool).await?;
    let mut values: Vec<sea_orm::Value> = vec![a.nonce.clone().into()];
    let marks: Vec<String> = (a.lists.iter())
        .map(|id| {
            values.push((*id).into());
            format!("${}", values.len())
        })
        .collect();
    let mine = match a.device {
        Some(d) => {
            values.push(d.into());
            format!(" AND device_id = ${}", values.len())
        }
        None => String::new(),
    };
    let lock = db::lock_clause(&txn);
    let found: Vec<Found> = super::rows(
        &txn,
        &format!(
            "SELECT id, list_id, position_id, successful, datetime, device_id, type FROM checkins \
             WHERE nonce = $1 AND list_id IN ({}){mine}{lock}",
            marks.join(", ")
        ),
        values,
    )
    .await?;
    let ci = match found.as_slice() {
        [] => return Err(AnnulError::NotFound),
        [one] => one,
        _ => {
            let why = "Multiple check-ins found based on nonce";
            return Err(AnnulError::Refused(why, false));
        }
    };
    let Some(position) = ci.position_id.filter(|_| ci.successful) else {
        let why = "Cannot annul an unsuccessful checkin";
        return Err(AnnulError::Refused(why, false));
    };
    db::lock_row(&txn, "order_positions", position).await?;
    let at = a.datetime.unwrap_or_else(crate::values::now);
    let told = json!({
        "checkin": ci.id, "position": position, "datetime": at, "type": ci.r#type,
        "list": ci.list_id, "error_explanation": a.error_explanation,
    });
    if at - ci.datetime > WINDOW {
        tracing::info!(
            checkin = ci.id,
            position,
            "check-in annulment ignored: too late"
        );
        notify(
            &txn,
            position,
            "pretix.event.checkin.annulment.ignored",
            told,
        )
        .await?;
        db::commit(txn).await?;
        let why = "Annulment is not allowed more than 15 minutes after check-in";
        return Err(AnnulError::Refused(why, true));
    }
    if ci.device_id.is_some() && ci.device_id != a.device {
        let why = "Annulment is only allowed from the same device";
        return Err(AnnulError::Refused(why, true));
    }
    let before = exited(&txn, position).await?;
    db::execute(
        &txn,
        "UPDATE checkins SET successful = $1, error_reason = 'annulled', error_explanation = $2 \
         WHERE id = $3",
        [
            false.into(),
            a.error_explanation.clone().into(),
            ci.id.into(),
        ],
    )
    .await?;
    if exited(&txn, position).await? != before {
        move_exit_hold(&txn, position, if before { -1 } else { 1 }).await?;
    }
    notify(&txn, position, "pretix.event.checkin.annulled", told).await?;
    db::commit(txn).await?;
    Ok(())
}

/// Tells the webhooks listening to the action, naming the position's order.
async fn notify(
    txn: &impl ConnectionTrait,
    position: i64,
    action: &'static str,
    extra: serde_json::Value,
) -> Result<(), DbErr> {
    let Some(p) = positions_where(txn, "p.id = $1", vec![position.into()])
        .await?
        .into_iter()
        .next()
    else {
        return Ok(());
    };
    let mut fields = serde_json::Map::new();
    fields.insert("code".into(), p.order_code.clone().into());
    if let serde_json::Value::Object(more) = extra {
        fields.extend(more);
    }
    let notice = webhooks::Notice {
        organizer_id: None,
        event_id: Some(p.event_id),
        action,
        extra: serde_json::Value::Object(fields),
    };
    webhooks::notify(txn, &notice).await
}
