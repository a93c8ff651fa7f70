//! Scanning a ticket: find the position a secret stands for on the scanner's lists, save
//! the answers given at the door, then check in pretix's order (canceled, blocked, validity,
//! product, date, approval, payment, rules, questions, entry allowed) and store the scan,
//! successful or not. The position's row is locked first, so that two gates scanning one
//! ticket at the same moment admit it once, across processes.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, FromQueryResult,
};
use serde_json::{Value, json};

use super::lists::CheckinList;
use super::{CheckinRow, Direction, NewCheckin, insert, of_positions, placeholders, rows, rules};
use crate::db;
use crate::domain::availability::{self, HoldKind};
use crate::domain::grants::DeviceRef;
use crate::domain::webhooks;

/// A scan as the scanner sends it.
#[derive(Debug, Clone)]
pub struct Scan {
    /// What was scanned.
    pub secret: String,
    /// Entry or exit.
    pub direction: Direction,
    /// Admit whatever a check says (stored as forced).
    pub force: bool,
    /// Admit pending orders on lists that include them.
    pub ignore_unpaid: bool,
    /// The scanner can ask questions (else they are not asked).
    pub questions_supported: bool,
    /// The scanner knows the `canceled` reason (else `unpaid`).
    pub canceled_supported: bool,
    /// The scanner's nonce: a repeat succeeds without a second check-in.
    pub nonce: Option<String>,
    /// When it happened; now when not sent.
    pub datetime: Option<DateTime<Utc>>,
    /// Answers by question ID.
    pub answers: BTreeMap<String, String>,
    /// The device scanning.
    pub device: Option<DeviceRef>,
    /// Answer the ticket's text variables too (`pdf_data`, for printing badges).
    pub pdf_data: bool,
    /// Whether the organizer has a webhook to tell of the check-in
    /// ([`webhooks::organizer_listens`]).
    pub webhooks: bool,
}

/// The result's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Admitted (201).
    Ok,
    /// Questions to answer first (400).
    Incomplete,
    /// Refused (400), or an unknown ticket (404, reason `invalid`).
    Error,
}

/// A position as redeem and search show it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct PositionRow {
    /// ID.
    pub id: i64,
    /// Its order.
    pub order_id: i64,
    /// The order's event.
    pub event_id: i64,
    /// The order's code.
    pub order_code: String,
    /// The order's status.
    pub order_status: String,
    /// The order's e-mail.
    pub order_email: Option<String>,
    /// Number in the order.
    pub positionid: i32,
    /// Product.
    pub item_id: i64,
    /// Variation.
    pub variation_id: Option<i64>,
    /// Date of a series.
    pub subevent_id: Option<i64>,
    /// Price.
    pub price_cents: i64,
    /// Attendee name parts.
    pub attendee_name_parts: Value,
    /// Attendee e-mail.
    pub attendee_email: Option<String>,
    /// Secret.
    pub secret: String,
    /// Parent position.
    pub addon_to_id: Option<i64>,
    /// Valid from.
    pub valid_from: Option<DateTime<Utc>>,
    /// Valid until.
    pub valid_until: Option<DateTime<Utc>>,
    /// Answers.
    pub answers: Value,
    /// The product or the order asks for attention.
    pub checkin_attention: bool,
    /// The order's text for the check-in staff.
    pub checkin_text: Option<String>,
    /// The tickets of the order admit while it is pending.
    pub valid_if_pending: bool,
    /// The order waits for approval.
    pub require_approval: bool,
    /// The secret is blocked.
    pub blocked: bool,
    /// The product has questions asked at the door.
    pub door_questions: bool,
}

/// Columns of [`PositionRow`]; needs `p`, `o`, `i`.
pub(crate) const POSITION_COLUMNS: &str = "p.id, p.order_id, o.event_id, o.code AS order_code, \
     CASE WHEN p.canceled THEN 'c' ELSE o.status END AS order_status, o.email AS order_email, p.positionid, p.item_id, p.variation_id, \
     p.subevent_id, p.price_cents, p.attendee_name_parts, p.attendee_email, p.secret, \
     p.addon_to_id, p.valid_from, p.valid_until, p.answers, \
     (i.checkin_attention OR o.checkin_attention) AS checkin_attention, o.checkin_text, \
     o.valid_if_pending, \
     o.require_approval, EXISTS (SELECT 1 FROM blocked_secrets b WHERE b.event_id = o.event_id \
     AND b.secret = p.secret AND b.blocked) AS blocked, EXISTS (SELECT 1 FROM question_items qi \
     JOIN questions q ON q.id = qi.question_id WHERE qi.item_id = p.item_id \
     AND q.ask_during_checkin) AS door_questions";

/// `FROM` of [`POSITION_COLUMNS`].
pub(crate) const POSITION_FROM: &str = "order_positions p JOIN orders o ON o.id = p.order_id \
     JOIN items i ON i.id = p.item_id";

/// A position with its check-ins on the lists asked about.
#[derive(Debug, Clone)]
pub struct PositionView {
    /// The position.
    pub row: PositionRow,
    /// Successful check-ins on the lists, oldest first.
    pub checkins: Vec<CheckinRow>,
    /// The ticket's text variables, when asked for.
    pub pdf_data: Option<BTreeMap<String, String>>,
}

impl PositionView {
    /// The position with its check-ins and, when the scan asks for them, its ticket's text
    /// variables, read in the scan's transaction.
    async fn of(
        txn: &impl ConnectionTrait,
        row: PositionRow,
        checkins: Vec<CheckinRow>,
        scan: &Scan,
        ev: &crate::db::entities::event::Model,
    ) -> Result<Self, DbErr> {
        let pdf_data = if scan.pdf_data {
            crate::domain::tickets::pdf_data_of(txn, ev, row.id).await?
        } else {
            None
        };
        Ok(Self {
            row,
            checkins,
            pdf_data,
        })
    }
}

/// A question to answer at the door.
#[derive(Debug, Clone, FromQueryResult)]
pub struct DoorQuestion {
    /// ID.
    pub id: i64,
    /// Text.
    pub question: Value,
    /// Type code.
    pub r#type: String,
    /// Required.
    pub required: bool,
    /// Position.
    pub position: i32,
    /// Identifier.
    pub identifier: String,
}

/// The result of a scan.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Status.
    pub status: Status,
    /// Why it was refused.
    pub reason: Option<&'static str>,
    /// More about why.
    pub explanation: Option<String>,
    /// The order or product asks for attention.
    pub require_attention: bool,
    /// The position, when one was found.
    pub position: Option<PositionView>,
    /// The list it was scanned on.
    pub list: CheckinList,
    /// The event's slug of that list.
    pub event_slug: String,
    /// Questions to answer (incomplete).
    pub questions: Vec<DoorQuestion>,
}

impl Outcome {
    /// Whether the ticket is unknown (404).
    pub fn unknown(&self) -> bool {
        self.reason == Some("invalid")
    }
}

/// A list with its event's slug and time zone.
#[derive(Debug, Clone)]
pub struct ScanList {
    /// The list.
    pub list: CheckinList,
    /// Its event.
    pub event: crate::db::entities::event::Model,
}

/// Refusal messages by reason.
fn message(reason: &str) -> &'static str {
    match reason {
        "canceled" => "This order position has been canceled.",
        "blocked" => "This ticket has been blocked.",
        "unapproved" => "This order is not yet approved.",
        "unpaid" => "This order is not marked as paid.",
        "already_redeemed" => "This ticket has already been redeemed.",
        "ambiguous" => "This ticket matches more than one position.",
        "revoked" => "This ticket secret has been revoked.",
        _ => "",
    }
}

/// Reads positions by a condition on `p` with values.
pub(crate) async fn positions_where(
    db: &impl ConnectionTrait,
    condition: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Vec<PositionRow>, DbErr> {
    select_positions(db, condition, values, "").await
}

/// [`positions_where`] in a write transaction, locking the positions' orders (every change
/// of a ticket or its scans takes its order's lock first): `FOR UPDATE OF o` on PostgreSQL;
/// SQLite's write transactions run one at a time.
async fn positions_locked(
    txn: &DatabaseTransaction,
    condition: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Vec<PositionRow>, DbErr> {
    let lock = match txn.get_database_backend() {
        DbBackend::Postgres => " FOR UPDATE OF o",
        _ => "",
    };
    select_positions(txn, condition, values, lock).await
}

async fn select_positions(
    db: &impl ConnectionTrait,
    condition: &str,
    values: Vec<sea_orm::Value>,
    lock: &str,
) -> Result<Vec<PositionRow>, DbErr> {
    rows(
        db,
        &format!(
            "SELECT {POSITION_COLUMNS} FROM {POSITION_FROM} WHERE {condition} \
             ORDER BY (CASE WHEN p.addon_to_id IS NULL THEN 0 ELSE 1 END), p.id{lock}"
        ),
        values,
    )
    .await
}

/// Scans a secret on one list per event; see the module.
pub async fn redeem(
    pool: &DatabaseConnection,
    lists: &[ScanList],
    scan: Scan,
) -> Result<Outcome, DbErr> {
    let Some(first) = lists.first() else {
        return Err(DbErr::Custom("no check-in list".into()));
    };
    let events: Vec<i64> = lists.iter().map(|l| l.event.id).collect();
    let addon_match = lists.iter().any(|l| l.list.row.addon_match);
    let mut values: Vec<sea_orm::Value> = vec![scan.secret.clone().into()];
    values.extend(events.iter().map(|&e| e.into()));
    let marks = placeholders(2, events.len());
    let parent = if addon_match {
        " OR p.addon_to_id IN (SELECT pp.id FROM order_positions pp WHERE pp.secret = $1)"
    } else {
        ""
    };
    let list_of = |event_id: i64| {
        lists
            .iter()
            .find(|l| l.event.id == event_id)
            .unwrap_or(first)
    };
    // The common case, one ticket with this secret, is found under its order's lock in the
    // transaction that scans it.
    let txn = db::begin_write(pool).await?;
    let mut candidates = positions_locked(
        &txn,
        &format!("o.event_id IN ({marks}) AND (p.secret = $1{parent})"),
        values.clone(),
    )
    .await?;
    if candidates.len() == 1
        && let Some(p) = candidates.pop()
    {
        let target = list_of(p.event_id).clone();
        return decide(txn, &target, p, &scan).await;
    }
    txn.rollback().await?;
    let chosen = match candidates.len() {
        0 => {
            #[derive(FromQueryResult)]
            struct Revoked {
                position_id: i64,
                event_id: i64,
            }
            let revoked: Vec<Revoked> = rows(
                pool,
                &format!(
                    "SELECT position_id, event_id FROM revoked_secrets WHERE secret = $1 \
                     AND event_id IN ({marks}) ORDER BY id LIMIT 1"
                ),
                values,
            )
            .await?;
            match revoked.first() {
                Some(r) if scan.force => {
                    let found =
                        positions_where(pool, "p.id = $1", vec![r.position_id.into()]).await?;
                    match found.into_iter().next() {
                        Some(p) => p,
                        None => return refuse_unknown(pool, first, &scan).await,
                    }
                }
                Some(r) => {
                    let target = list_of(r.event_id);
                    let found =
                        positions_where(pool, "p.id = $1", vec![r.position_id.into()]).await?;
                    return refuse(
                        pool,
                        target,
                        found.into_iter().next(),
                        &scan,
                        "revoked",
                        None,
                    )
                    .await;
                }
                None => return refuse_unknown(pool, first, &scan).await,
            }
        }
        // Several (one was scanned above).
        _ => {
            let fitting: Vec<&PositionRow> = candidates
                .iter()
                .filter(|p| {
                    let l = &list_of(p.event_id).list;
                    (l.row.addon_match || p.secret == scan.secret) && l.admits_item(p.item_id)
                })
                .collect();
            match fitting.len() {
                0 => candidates[0].clone(),
                1 => fitting[0].clone(),
                _ => {
                    let target = list_of(fitting[0].event_id);
                    return refuse(pool, target, None, &scan, "ambiguous", None).await;
                }
            }
        }
    };
    let target = list_of(chosen.event_id).clone();
    perform(pool, &target, (chosen.order_id, chosen.id), &scan).await
}

async fn refuse_unknown(
    pool: &DatabaseConnection,
    target: &ScanList,
    scan: &Scan,
) -> Result<Outcome, DbErr> {
    refuse(pool, target, None, scan, "invalid", None).await
}

fn failed(
    target: &ScanList,
    position: Option<i64>,
    scan: &Scan,
    reason: &str,
    explanation: Option<String>,
) -> NewCheckin {
    NewCheckin {
        list_id: target.list.row.id,
        position_id: position,
        successful: false,
        direction: scan.direction,
        datetime: scan.datetime.unwrap_or_else(crate::values::now),
        nonce: scan.nonce.clone(),
        forced: scan.force,
        error_reason: Some(reason.to_owned()),
        error_explanation: explanation,
        raw_barcode: Some(scan.secret.clone()),
        raw_item: None,
        raw_variation: None,
        raw_subevent: None,
        gate_id: scan.device.and_then(|d| d.gate_id),
        device_id: scan.device.map(|d| d.id),
        auto_checked_in: false,
    }
}

/// Records a refused scan before any position was locked (unknown, revoked, ambiguous).
async fn refuse(
    pool: &DatabaseConnection,
    target: &ScanList,
    position: Option<PositionRow>,
    scan: &Scan,
    reason: &'static str,
    explanation: Option<String>,
) -> Result<Outcome, DbErr> {
    let txn = db::begin_write(pool).await?;
    insert(
        &txn,
        &failed(
            target,
            position.as_ref().map(|p| p.id),
            scan,
            reason,
            explanation.clone(),
        ),
    )
    .await?;
    let view = match position {
        Some(row) => {
            let checkins = of_positions(&txn, &[row.id], &[target.list.row.id]).await?;
            Some(PositionView::of(&txn, row, checkins, scan, &target.event).await?)
        }
        None => None,
    };
    db::commit(txn).await?;
    Ok(Outcome {
        status: Status::Error,
        reason: Some(reason),
        explanation,
        require_attention: view.as_ref().is_some_and(|v| v.row.checkin_attention),
        position: view,
        list: target.list.clone(),
        event_slug: target.event.slug.clone(),
        questions: Vec::new(),
    })
}

/// Questions asked at the door for an item.
async fn door_questions(
    db: &impl ConnectionTrait,
    item_id: i64,
) -> Result<Vec<DoorQuestion>, DbErr> {
    rows(
        db,
        "SELECT q.id, q.question, q.type, q.required, q.position, q.identifier \
         FROM questions q JOIN question_items qi ON qi.question_id = q.id \
         WHERE qi.item_id = $1 AND q.ask_during_checkin ORDER BY q.position, q.id",
        vec![item_id.into()],
    )
    .await
}

/// Stores the valid answers to door questions; invalid ones are dropped, as pretix does.
async fn save_answers(
    txn: &impl ConnectionTrait,
    p: &PositionRow,
    given: &BTreeMap<String, String>,
) -> Result<Option<Value>, DbErr> {
    if given.is_empty() {
        return Ok(None);
    }
    let questions = door_questions(txn, p.item_id).await?;
    let mut answers: Vec<Value> = p.answers.as_array().cloned().unwrap_or_default();
    let mut changed = false;
    for q in &questions {
        let Some(text) = given.get(&q.id.to_string()) else {
            continue;
        };
        let text = text.trim();
        if text.is_empty() || text.chars().count() > 10_000 {
            continue;
        }
        let mut option_ids: Vec<i64> = Vec::new();
        let mut option_identifiers: Vec<String> = Vec::new();
        let mut shown = text.to_owned();
        if q.r#type == "C" || q.r#type == "M" {
            let ids: Vec<i64> = text
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect();
            if ids.is_empty() || (q.r#type == "C" && ids.len() > 1) || ids.len() > 100 {
                continue;
            }
            #[derive(FromQueryResult)]
            struct Opt {
                id: i64,
                identifier: String,
                answer: Value,
            }
            let opts: Vec<Opt> = rows(
                txn,
                &format!(
                    "SELECT id, identifier, answer FROM question_options WHERE question_id = $1 \
                     AND id IN ({}) ORDER BY position, id",
                    placeholders(2, ids.len())
                ),
                std::iter::once(q.id.into())
                    .chain(ids.iter().map(|&i| i.into()))
                    .collect(),
            )
            .await?;
            if opts.len() != ids.len() {
                continue;
            }
            shown = opts
                .iter()
                .map(|o| crate::values::I18nString::from_stored(&o.answer).localize("en"))
                .collect::<Vec<_>>()
                .join(", ");
            option_ids = opts.iter().map(|o| o.id).collect();
            option_identifiers = opts.iter().map(|o| o.identifier.clone()).collect();
        } else if q.r#type == "B" {
            shown = if matches!(text, "true" | "True" | "1") {
                "True"
            } else {
                "False"
            }
            .into();
        } else if q.r#type == "N" && text.parse::<f64>().is_err() {
            continue;
        }
        answers.retain(|a| a.get("question").and_then(Value::as_i64) != Some(q.id));
        answers.push(json!({
            "question": q.id,
            "question_identifier": q.identifier,
            "answer": shown,
            "options": option_ids,
            "option_identifiers": option_identifiers,
        }));
        changed = true;
    }
    if !changed {
        return Ok(None);
    }
    let answers = Value::Array(answers);
    db::execute(
        txn,
        "UPDATE order_positions SET answers = $1 WHERE id = $2",
        [answers.clone().into(), p.id.into()],
    )
    .await?;
    Ok(Some(answers))
}

/// Whether the position counts as exited for `release_after_exit`: its latest successful
/// scan on lists without entry after exit is an exit.
pub(crate) async fn exited(txn: &impl ConnectionTrait, position_id: i64) -> Result<bool, DbErr> {
    #[derive(FromQueryResult)]
    struct Kind {
        r#type: String,
    }
    let last: Vec<Kind> = rows(
        txn,
        "SELECT c.type FROM checkins c JOIN checkin_lists l ON l.id = c.list_id \
         WHERE c.position_id = $1 AND c.successful AND NOT l.allow_entry_after_exit \
         ORDER BY c.datetime DESC, c.id DESC LIMIT 1",
        vec![position_id.into()],
    )
    .await?;
    Ok(last.first().is_some_and(|k| k.r#type == "exit"))
}

/// The quotas a position counts on.
pub(crate) async fn quotas_of(
    txn: &impl ConnectionTrait,
    p: &PositionRow,
) -> Result<Vec<i64>, DbErr> {
    #[derive(FromQueryResult)]
    struct Id {
        id: i64,
    }
    let sub = if p.subevent_id.is_some() {
        "q.subevent_id = $2"
    } else {
        "q.subevent_id IS NULL AND $2 = 0"
    };
    let product = if p.variation_id.is_some() {
        "$4 IN (SELECT variation_id FROM quota_variations qv WHERE qv.quota_id = q.id)"
    } else {
        "$3 IN (SELECT item_id FROM quota_items qi WHERE qi.quota_id = q.id) AND $4 = 0"
    };
    let found: Vec<Id> = rows(
        txn,
        &format!(
            "SELECT q.id FROM quotas q WHERE q.event_id = $1 AND {sub} AND {product} ORDER BY q.id"
        ),
        vec![
            p.event_id.into(),
            p.subevent_id.unwrap_or(0).into(),
            p.item_id.into(),
            p.variation_id.unwrap_or(0).into(),
        ],
    )
    .await?;
    Ok(found.into_iter().map(|i| i.id).collect())
}

fn when(t: DateTime<Utc>, tz: &str) -> String {
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    t.with_timezone(&zone).format("%Y-%m-%d %H:%M").to_string()
}

/// The checks and the scan of a position chosen before its order was locked.
async fn perform(
    pool: &DatabaseConnection,
    target: &ScanList,
    (order_id, position_id): (i64, i64),
    scan: &Scan,
) -> Result<Outcome, DbErr> {
    let txn = db::begin_write(pool).await?;
    // Read again under the order's lock: the order may have changed meanwhile.
    let found = positions_locked(
        &txn,
        "p.id = $1 AND o.id = $2",
        vec![position_id.into(), order_id.into()],
    )
    .await?;
    let p = found
        .into_iter()
        .next()
        .ok_or_else(|| DbErr::RecordNotFound("position".into()))?;
    decide(txn, target, p, scan).await
}

/// The checks and the scan of `p`, read under its order's lock in `txn`.
async fn decide(
    txn: crate::db::WriteTxn,
    target: &ScanList,
    mut p: PositionRow,
    scan: &Scan,
) -> Result<Outcome, DbErr> {
    let list = &target.list;
    let ev = &target.event;
    let dt = scan.datetime.unwrap_or_else(crate::values::now);
    let entry = scan.direction == Direction::Entry;
    if let Some(answers) = save_answers(&txn, &p, &scan.answers).await? {
        p.answers = answers;
    }
    let history = of_positions(&txn, &[p.id], &[list.row.id]).await?;
    let paid = p.order_status == "p";
    let pending = p.order_status == "n";
    let mut refusal: Option<(&'static str, Option<String>)> = None;
    let mut questions = Vec::new();
    if !paid && !pending {
        refusal = Some((
            if scan.canceled_supported {
                "canceled"
            } else {
                "unpaid"
            },
            None,
        ));
    } else if p.blocked {
        refusal = Some(("blocked", None));
    } else if entry && p.valid_from.is_some_and(|f| f > dt) {
        let at = when(p.valid_from.unwrap_or(dt), &ev.timezone);
        refusal = Some((
            "invalid_time",
            Some(format!("This ticket is only valid after {at}.")),
        ));
    } else if entry && p.valid_until.is_some_and(|u| u < dt) {
        let at = when(p.valid_until.unwrap_or(dt), &ev.timezone);
        refusal = Some((
            "invalid_time",
            Some(format!("This ticket was only valid before {at}.")),
        ));
    } else if !list.admits_item(p.item_id) {
        refusal = Some((
            "product",
            Some("This order position has an invalid product for this check-in list.".into()),
        ));
    } else if list.row.subevent_id.is_some() && list.row.subevent_id != p.subevent_id {
        refusal = Some((
            "product",
            Some("This order position has an invalid date for this check-in list.".into()),
        ));
    } else if pending && p.require_approval {
        refusal = Some(("unapproved", None));
    } else if pending && !p.valid_if_pending && !(scan.ignore_unpaid && list.row.include_pending) {
        refusal = Some(("unpaid", None));
    } else {
        if entry {
            let facts = rule_facts(&txn, ev, &p, dt, &history).await?;
            if let Err(why) = rules::evaluate(&list.row.rules, &facts) {
                refusal = Some(("rules", Some(format!("Entry not permitted: {why}."))));
            }
        }
        if refusal.is_none() && scan.questions_supported && !scan.force && p.door_questions {
            let answered: Vec<i64> = p
                .answers
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.get("question")?.as_i64())
                        .collect()
                })
                .unwrap_or_default();
            questions = door_questions(&txn, p.item_id)
                .await?
                .into_iter()
                .filter(|q| !answered.contains(&q.id))
                .collect();
        }
    }
    let require_attention = p.checkin_attention;
    if refusal.is_none() && !questions.is_empty() {
        let view = PositionView::of(&txn, p, history, scan, ev).await?;
        db::commit(txn).await?; // keeps the answers given so far
        return Ok(Outcome {
            status: Status::Incomplete,
            reason: None,
            explanation: None,
            require_attention,
            position: Some(view),
            list: list.clone(),
            event_slug: ev.slug.clone(),
            questions,
        });
    }
    let repeated = match &scan.nonce {
        Some(nonce) => {
            history
                .last()
                .is_some_and(|c| c.nonce.as_deref() == Some(nonce.as_str()))
                || history.iter().any(|c| {
                    c.nonce.as_deref() == Some(nonce.as_str())
                        && c.r#type == scan.direction.as_str()
                        && c.device_id == scan.device.map(|d| d.id)
                })
        }
        None => false,
    };
    if refusal.is_none() && !repeated && entry {
        let allowed = list.row.allow_multiple_entries
            || history.is_empty()
            || history.iter().all(|c| c.r#type == "exit")
            || (list.row.allow_entry_after_exit
                && history.last().is_some_and(|c| c.r#type == "exit"));
        if !allowed {
            refusal = Some(("already_redeemed", None));
        }
    }
    if let Some((reason, explanation)) = refusal.clone()
        && !scan.force
    {
        insert(
            &txn,
            &failed(target, Some(p.id), scan, reason, explanation.clone()),
        )
        .await?;
        let view = PositionView::of(&txn, p, history, scan, ev).await?;
        db::commit(txn).await?;
        return Ok(Outcome {
            status: Status::Error,
            reason: Some(reason),
            explanation: explanation.or_else(|| Some(message(reason).to_owned())),
            require_attention,
            position: Some(view),
            list: list.clone(),
            event_slug: ev.slug.clone(),
            questions: Vec::new(),
        });
    }
    if !repeated {
        let releases = paid && !list.row.allow_entry_after_exit;
        let before = if releases {
            exited(&txn, p.id).await?
        } else {
            false
        };
        insert(
            &txn,
            &NewCheckin {
                list_id: list.row.id,
                position_id: Some(p.id),
                successful: true,
                direction: scan.direction,
                datetime: dt,
                nonce: scan.nonce.clone(),
                forced: scan.force && refusal.is_some(),
                error_reason: None,
                error_explanation: None,
                raw_barcode: Some(scan.secret.clone()),
                raw_item: None,
                raw_variation: None,
                raw_subevent: None,
                gate_id: scan.device.and_then(|d| d.gate_id),
                device_id: scan.device.map(|d| d.id),
                auto_checked_in: false,
            },
        )
        .await?;
        if scan.webhooks {
            let notice = webhooks::Notice::order(
                ev,
                &p.order_code,
                "pretix.event.checkin",
                json!({
                    "orderposition_id": p.id,
                    "orderposition_positionid": p.positionid,
                    "checkin_list": list.row.id,
                    "first_checkin": history.iter().all(|c| c.r#type != "entry"),
                    "type": scan.direction.as_str(),
                }),
            );
            webhooks::notify(&txn, &notice).await?;
        }
        if releases {
            let after = exited(&txn, p.id).await?;
            if after != before {
                let quotas = quotas_of(&txn, &p).await?;
                availability::lock_quotas(&txn, &quotas).await?;
                let delta = if after { 1 } else { -1 };
                availability::adjust(&txn, &quotas, HoldKind::Exited, None, delta).await?;
            }
        }
    }
    let view = PositionView::of(&txn, p, history, scan, ev).await?;
    db::commit(txn).await?;
    Ok(Outcome {
        status: Status::Ok,
        reason: None,
        explanation: None,
        require_attention,
        position: Some(view),
        list: list.clone(),
        event_slug: ev.slug.clone(),
        questions: Vec::new(),
    })
}

async fn rule_facts(
    txn: &impl ConnectionTrait,
    ev: &crate::db::entities::event::Model,
    p: &PositionRow,
    now: DateTime<Utc>,
    history: &[CheckinRow],
) -> Result<rules::Facts, DbErr> {
    let (mut date_from, mut date_to, mut date_admission) =
        (ev.date_from, ev.date_to, ev.date_admission);
    if let Some(s) = p.subevent_id {
        use crate::db::entities::subevent;
        use sea_orm::EntityTrait;
        if let Some(se) = subevent::Entity::find_by_id(s).one(txn).await? {
            (date_from, date_to, date_admission) = (se.date_from, se.date_to, se.date_admission);
        }
    }
    Ok(rules::Facts {
        product: p.item_id,
        variation: p.variation_id,
        now,
        tz: ev.timezone.parse().unwrap_or(chrono_tz::UTC),
        entries: history
            .iter()
            .filter(|c| c.r#type == "entry")
            .map(|c| c.datetime)
            .collect(),
        date_from,
        date_to,
        date_admission,
    })
}
