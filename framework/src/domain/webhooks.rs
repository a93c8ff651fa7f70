//! Webhooks, as pretix's: an organizer's webhook is told of changes of the action types it
//! listens to, for all its events or some. A notification is written as a call in the
//! transaction of the change it tells of ([`notify`]), so that it exists exactly when the
//! change does; after the commit, a worker in every `tessera serve` process delivers due
//! calls ([`deliver_every_second`]) concurrently, up to 32 at once, at most two per webhook,
//! fair across organizers (a slow receiver holds up only its own webhook's calls), each
//! claimed by one process at a time (a lease from the call's own start, longer than its
//! time limit), reading at most the part of an answer that is kept, retried on failure, and
//! kept 30 days.
//!
//! Beyond pretix, every call is signed: `X-Webhook-Signature: t=<unix time>,v1=<hex>`, the
//! HMAC-SHA256 of `<unix time>.<body>` with the webhook's secret, so that receivers can check
//! where a call comes from and refuse replays. The secret is kept as it is (a signature
//! needs it), shown once when set, and can be rotated.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use chrono::SubsecRound;
use hmac::{Hmac, Mac};
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, FromQueryResult, Statement,
};
use serde_json::{Map, Value};
use sha2::Sha256;

use crate::db::entities::{webhook, webhook_call};
use crate::domain::extensions::{Extensions, OrderEvent};
use crate::domain::grants::{Caller, EventScope};
use crate::domain::permissions::PermissionSet;
use crate::domain::refusal::Refusal;
use crate::domain::special_addresses;

/// pretix's action types a webhook can listen to, with what each tells of.
pub const ACTION_TYPES: &[(&str, &str)] = &[
    ("pretix.event.order.placed", "Order placed"),
    (
        "pretix.event.order.placed.require_approval",
        "Order placed that needs approval",
    ),
    ("pretix.event.order.paid", "Order marked as paid"),
    ("pretix.event.order.canceled", "Order canceled"),
    ("pretix.event.order.reactivated", "Order reactivated"),
    ("pretix.event.order.expired", "Order expired"),
    ("pretix.event.order.modified", "Order details changed"),
    ("pretix.event.order.changed.*", "Order changed"),
    ("pretix.event.order.unpaid", "Order marked as not paid"),
    ("pretix.event.order.approved", "Order approved"),
    ("pretix.event.order.denied", "Order denied"),
    ("pretix.event.order.payment.confirmed", "Payment confirmed"),
    ("pretix.event.order.refund.created", "Refund created"),
    (
        "pretix.event.order.refund.created.externally",
        "External refund of payment",
    ),
    ("pretix.event.order.refund.done", "Refund completed"),
    ("pretix.event.order.refund.canceled", "Refund canceled"),
    ("pretix.event.checkin", "Ticket checked in"),
    ("pretix.event.checkin.annulled", "Check-in annulled"),
    (
        "pretix.event.checkin.annulment.ignored",
        "Check-in annulment refused as too late",
    ),
    ("pretix.event.added", "Event created"),
    ("pretix.event.changed", "Event details changed"),
    ("pretix.event.deleted", "Event deleted"),
    ("pretix.event.item.added", "Product created"),
    ("pretix.event.item.changed", "Product changed"),
    ("pretix.event.item.deleted", "Product deleted"),
    ("pretix.event.voucher.added", "Voucher created"),
    ("pretix.event.voucher.changed", "Voucher changed"),
    ("pretix.event.voucher.deleted", "Voucher deleted"),
    (
        "pretix.event.orders.waitinglist.added",
        "Waiting list entry added",
    ),
    (
        "pretix.event.orders.waitinglist.changed",
        "Waiting list entry changed",
    ),
    (
        "pretix.event.orders.waitinglist.deleted",
        "Waiting list entry deleted",
    ),
    (
        "pretix.event.orders.waitinglist.voucher_assigned",
        "Waiting list entry received a voucher",
    ),
    ("pretix.giftcards.created", "Gift card added"),
    ("pretix.giftcards.modified", "Gift card modified"),
    (
        "pretix.giftcards.transaction.manual",
        "Gift card transaction",
    ),
];

/// How long a delivery may take; the receiver must answer within it.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a receiver may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a process holds a call it delivers, from the call's start: longer than
/// [`CALL_TIMEOUT`].
const LEASE: chrono::Duration = chrono::Duration::seconds(90);
/// Attempts of a call before it fails for good: the first and eleven retries.
pub const MAX_ATTEMPTS: i32 = 12;
/// How long calls are kept.
const KEEP: chrono::Duration = chrono::Duration::days(30);
/// How much of a receiver's answer is kept.
const KEPT_RESPONSE: usize = 1000;

/// The wait before the retry after `attempts` failed attempts: 5 s, then three times as
/// long each time, up to about three days before the last (5 s × 3¹⁰, 3.4 days).
pub fn retry_delay(attempts: i32) -> chrono::Duration {
    let exponent = u32::try_from(attempts.clamp(1, MAX_ATTEMPTS) - 1).unwrap_or(0);
    chrono::Duration::seconds(5 * 3i64.pow(exponent))
}

/// A change the organizer's webhooks may be told of.
#[derive(Debug, Clone)]
pub struct Notice {
    /// The organizer; `None`: the event's.
    pub organizer_id: Option<i64>,
    /// The event, for changes of an event's data.
    pub event_id: Option<i64>,
    /// The action type.
    pub action: &'static str,
    /// What the payload says beside `notification_id`, `organizer`, `event` and `action`
    /// (an object): `code` for orders, the IDs pretix adds for other types.
    pub extra: Value,
}

impl Notice {
    /// A change of an order: pretix's payload names the order by `code`.
    pub fn order(
        ev: &crate::db::entities::event::Model,
        code: &str,
        action: &'static str,
        extra: Value,
    ) -> Self {
        let mut fields = Map::new();
        fields.insert("code".into(), code.into());
        if let Value::Object(more) = extra {
            fields.extend(more);
        }
        Self {
            organizer_id: Some(ev.organizer_id),
            event_id: Some(ev.id),
            action,
            extra: Value::Object(fields),
        }
    }

    /// A change of an event's data (the event itself, a product, a voucher, a waiting list
    /// entry), with the IDs pretix adds in `extra`.
    pub fn about(event_id: i64, action: &'static str, extra: Value) -> Self {
        Self {
            organizer_id: None,
            event_id: Some(event_id),
            action,
            extra,
        }
    }

    /// A change of the organizer's data (a gift card).
    pub fn of_organizer(organizer_id: i64, action: &'static str, extra: Value) -> Self {
        Self {
            organizer_id: Some(organizer_id),
            event_id: None,
            action,
            extra,
        }
    }
}

/// The action types an order event stands for: placed (or placed needing approval), paid
/// (with its payment confirmed), canceled. A change tells its webhooks of each of its
/// steps itself (`pretix.event.order.changed.*`).
pub fn order_actions(what: OrderEvent, require_approval: bool) -> &'static [&'static str] {
    match what {
        OrderEvent::Placed if require_approval => &["pretix.event.order.placed.require_approval"],
        OrderEvent::Placed => &["pretix.event.order.placed"],
        OrderEvent::Paid => &[
            "pretix.event.order.payment.confirmed",
            "pretix.event.order.paid",
        ],
        OrderEvent::Canceled => &["pretix.event.order.canceled"],
        OrderEvent::Changed => &[],
    }
}

/// Whether the organizer has an enabled webhook, kept in the process cache for the
/// configuration generation: a change of an organizer without one need not be told
/// ([`notify`] would write nothing).
pub async fn organizer_listens(
    db: &DatabaseConnection,
    cache: Option<(&crate::domain::cache::Cache, u64)>,
    organizer_id: i64,
) -> Result<bool, DbErr> {
    let key = format!("webhooks:{organizer_id}");
    if let Some(kept) = cache.and_then(|(c, g)| c.object::<bool>(g, &key)) {
        return Ok(*kept);
    }
    let listens = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT 1 AS one FROM webhooks WHERE organizer_id = $1 AND enabled LIMIT 1",
            [organizer_id.into()],
        ))
        .await?
        .is_some();
    if let Some((c, g)) = cache {
        c.keep_object(g, key, std::sync::Arc::new(listens));
    }
    Ok(listens)
}

/// Writes a call of the notice for each enabled webhook of the organizer that listens to
/// its action type (or to all of its family, as `pretix.event.order.changed.*`) and event,
/// in the caller's transaction.
pub async fn notify(db: &impl ConnectionTrait, n: &Notice) -> Result<(), DbErr> {
    let now = crate::values::now();
    let family = match n.action.rsplit_once('.') {
        Some((stem, _)) => format!("{stem}.*"),
        None => n.action.to_owned(),
    };
    crate::db::execute(
        db,
        "INSERT INTO webhook_calls (webhook_id, action_type, organizer, event, payload, created, \
         state, attempts, next_attempt) \
         SELECT w.id, $1, (SELECT slug FROM organizers WHERE id = w.organizer_id), \
         (SELECT slug FROM events WHERE id = $2), $3, $4, 'pending', 0, $4 \
         FROM webhooks w JOIN webhook_action_types a ON a.webhook_id = w.id \
         WHERE w.organizer_id = COALESCE($5, (SELECT organizer_id FROM events WHERE id = $2)) \
         AND w.enabled AND a.action_type IN ($1, $6) \
         AND (w.all_events OR $2 IS NULL OR EXISTS (SELECT 1 FROM webhook_events e \
         WHERE e.webhook_id = w.id AND e.event_id = $2))",
        [
            n.action.into(),
            n.event_id.into(),
            n.extra.clone().into(),
            now.into(),
            n.organizer_id.into(),
            family.into(),
        ],
    )
    .await?;
    Ok(())
}

/// The body of a call: pretix's payload.
pub fn payload(call: &webhook_call::Model) -> Value {
    let mut body = Map::new();
    body.insert("notification_id".into(), call.id.into());
    body.insert("organizer".into(), call.organizer.clone().into());
    if let Some(event) = &call.event {
        body.insert("event".into(), event.clone().into());
    }
    if let Some(extra) = call.payload.as_object() {
        body.extend(extra.clone());
    }
    body.insert("action".into(), call.action_type.clone().into());
    Value::Object(body)
}

/// The `X-Webhook-Signature` of a body sent at `at` (unix seconds).
pub fn signature(secret: &str, at: i64, body: &[u8]) -> String {
    // An HMAC takes a key of any length.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(at.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={at},v1={hex}")
}

/// A new secret for signing calls.
pub fn new_secret() -> String {
    crate::domain::tokens::generate()
}

/// Why a target URL cannot be called, or the addresses its host has: http or https only,
/// and (unless `allow_private`) no address on a loopback or private network.
pub async fn check_target(url: &str, allow_private: bool) -> Result<Vec<IpAddr>, String> {
    let parsed = reqwest::Url::parse(url).map_err(|_| "Enter a valid URL.".to_owned())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("Only http and https URLs can be called.".into());
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| "Enter a valid URL.".to_owned())?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| "The host name cannot be resolved.".to_owned())?
            .map(|a| a.ip())
            .collect(),
    };
    if addresses.is_empty() {
        return Err("The host name cannot be resolved.".into());
    }
    if !allow_private && addresses.iter().copied().any(special_addresses::is_special) {
        return Err("The target is on a loopback or private network.".into());
    }
    Ok(addresses)
}

/// Calls one process delivers at once.
const IN_FLIGHT: usize = 32;
/// Calls of one webhook in flight at once (per process; processes claiming at the same
/// moment may briefly exceed it).
const PER_WEBHOOK: i64 = 2;

/// Claims up to `room` due calls for this process, each with a lease from now (a call is
/// delivered as soon as it is claimed, so the lease runs from its own start): at most
/// [`PER_WEBHOOK`] in flight per webhook, and fair across organizers (each organizer's
/// first due call before anyone's second). A call another process claimed meanwhile is
/// left to it: the update checks the claim again.
async fn claim(db: &DatabaseConnection, room: usize) -> Result<Vec<webhook_call::Model>, DbErr> {
    if room == 0 {
        return Ok(Vec::new());
    }
    // As stored: PostgreSQL keeps microseconds, and the lease is compared when recording.
    let now = crate::values::now().trunc_subsecs(6);
    let lease = now + LEASE;
    let txn = crate::db::begin_write(db).await?;
    let claimed = webhook_call::Entity::find()
        .from_raw_sql(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "UPDATE webhook_calls SET claimed_until = $1 WHERE id IN (\
               SELECT id FROM (\
                 SELECT c.id, c.next_attempt, COALESCE(f.n, 0) AS flying, \
                   ROW_NUMBER() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt, c.id) \
                     AS in_hook, \
                   ROW_NUMBER() OVER (PARTITION BY c.organizer ORDER BY c.next_attempt, c.id) \
                     AS in_organizer \
                 FROM webhook_calls c LEFT JOIN (\
                   SELECT webhook_id, COUNT(*) AS n FROM webhook_calls \
                   WHERE state = 'pending' AND claimed_until >= $2 GROUP BY webhook_id\
                 ) f ON f.webhook_id = c.webhook_id \
                 WHERE c.state = 'pending' AND c.next_attempt <= $2 \
                   AND (c.claimed_until IS NULL OR c.claimed_until < $2)\
               ) due WHERE in_hook + flying <= $3 \
               ORDER BY in_organizer, next_attempt, id LIMIT $4\
             ) AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < $2) \
             RETURNING *",
            [
                lease.into(),
                now.into(),
                PER_WEBHOOK.into(),
                i64::try_from(room).unwrap_or(i64::MAX).into(),
            ],
        ))
        .all(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(claimed)
}

/// Delivers every call that is due, claimed as [`claim`] allows and delivered concurrently,
/// round after round until none is left; gives how many were attempted.
pub async fn deliver_due(db: &DatabaseConnection, allow_private: bool) -> Result<usize, DbErr> {
    let mut count = 0;
    loop {
        let claimed = claim(db, IN_FLIGHT).await?;
        if claimed.is_empty() {
            return Ok(count);
        }
        count += claimed.len();
        let mut attempts = tokio::task::JoinSet::new();
        for call in claimed {
            let db = db.clone();
            attempts.spawn(async move { deliver(&db, call, allow_private).await });
        }
        while let Some(done) = attempts.join_next().await {
            done.map_err(|e| DbErr::Custom(format!("webhook delivery task: {e}")))??;
        }
    }
}

/// What an attempt came to.
struct Attempt {
    code: Option<u16>,
    body: String,
    took: Duration,
}

/// Makes one attempt of a claimed call and records it, unless its lease was taken over
/// meanwhile.
async fn deliver(
    db: &DatabaseConnection,
    call: webhook_call::Model,
    allow_private: bool,
) -> Result<(), DbErr> {
    let lease = call.claimed_until;
    let hook = webhook::Entity::find_by_id(call.webhook_id).one(db).await?;
    let attempt = match &hook {
        Some(h) if h.enabled => send(h, &call, allow_private).await,
        _ => Attempt {
            code: None,
            body: "The webhook is disabled.".into(),
            took: Duration::ZERO,
        },
    };
    let now = crate::values::now();
    let attempts = call.attempts + 1;
    let enabled = hook.as_ref().is_some_and(|h| h.enabled);
    let (state, next) = match attempt.code {
        Some(200..=299) => ("success", call.next_attempt),
        Some(410) => ("failed", call.next_attempt),
        _ if !enabled || attempts >= MAX_ATTEMPTS => ("failed", call.next_attempt),
        _ => ("pending", now + retry_delay(attempts)),
    };
    if state != "success" {
        log_failure(&call, hook.as_ref(), &attempt, state);
    }
    let txn = crate::db::begin_write(db).await?;
    crate::db::execute(
        &txn,
        "UPDATE webhook_calls SET state = $1, attempts = $2, next_attempt = $3, \
         claimed_until = NULL, last_attempt = $4, return_code = $5, duration_ms = $6, \
         response_body = $7 WHERE id = $8 AND claimed_until = $9",
        [
            state.into(),
            attempts.into(),
            next.into(),
            now.into(),
            attempt.code.map(i32::from).into(),
            i64::try_from(attempt.took.as_millis())
                .unwrap_or(i64::MAX)
                .into(),
            attempt.body.into(),
            call.id.into(),
            lease.into(),
        ],
    )
    .await?;
    if attempt.code == Some(410) {
        // The receiver says it is gone for good: no more calls to it.
        crate::db::execute(
            &txn,
            "UPDATE webhooks SET enabled = $1 WHERE id = $2",
            [false.into(), call.webhook_id.into()],
        )
        .await?;
    }
    crate::db::commit(txn).await
}

/// `scheme://host:port` of a target URL: what may be logged of it (its path, query and
/// user may carry a token, as chat services' webhook URLs do).
fn target_origin(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(
        |_| "(not a URL)".to_owned(),
        |u| u.origin().ascii_serialization(),
    )
}

/// Logs an attempt that did not deliver: the webhook, its target's origin, the receiver's
/// status or why there was none, and what happens next.
fn log_failure(
    call: &webhook_call::Model,
    hook: Option<&webhook::Model>,
    attempt: &Attempt,
    state: &str,
) {
    let target = hook.map_or_else(String::new, |h| target_origin(&h.target_url));
    let retry = if state == "pending" {
        "will retry"
    } else {
        "gave up"
    };
    match attempt.code {
        Some(code) => tracing::warn!(
            webhook = call.webhook_id,
            call = call.id,
            %target,
            status = code,
            "webhook delivery refused by the receiver; {retry}"
        ),
        None => tracing::warn!(
            webhook = call.webhook_id,
            call = call.id,
            %target,
            error = %attempt.body,
            "webhook delivery failed; {retry}"
        ),
    }
}

/// `e` and every error below it, as "what: why: why".
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Sends a call: signed, without following redirects, within [`CALL_TIMEOUT`], to an
/// address of the target checked just before (so that a name cannot turn private between
/// the check and the call).
async fn send(hook: &webhook::Model, call: &webhook_call::Model, allow_private: bool) -> Attempt {
    let started = Instant::now();
    let failed = |why: String| Attempt {
        code: None,
        body: why,
        took: started.elapsed(),
    };
    let addresses = match check_target(&hook.target_url, allow_private).await {
        Ok(a) => a,
        Err(why) => return failed(why),
    };
    let body = payload(call).to_string().into_bytes();
    let at = crate::values::now().timestamp();
    let mut client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(CALL_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("Tessera/", env!("CARGO_PKG_VERSION")));
    if let Some(host) = reqwest::Url::parse(&hook.target_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        && host.parse::<IpAddr>().is_err()
    {
        // The port of the URL is used; the one given here is not.
        let pinned: Vec<std::net::SocketAddr> = addresses
            .iter()
            .map(|ip| std::net::SocketAddr::new(*ip, 0))
            .collect();
        client = client.resolve_to_addrs(&host, &pinned);
    }
    let client = match client.build() {
        Ok(c) => c,
        Err(e) => return failed(with_causes(&e)),
    };
    let sent = client
        .post(&hook.target_url)
        .header("Content-Type", "application/json")
        .header("X-Webhook-Signature", signature(&hook.secret, at, &body))
        .body(body)
        .send()
        .await;
    match sent {
        Ok(mut r) => {
            let code = r.status().as_u16();
            // Only what is kept is read: a receiver's endless answer costs nothing more.
            let mut start = Vec::new();
            while start.len() < KEPT_RESPONSE * 4 {
                match r.chunk().await {
                    Ok(Some(chunk)) => start.extend_from_slice(&chunk),
                    _ => break,
                }
            }
            start.truncate(KEPT_RESPONSE * 4);
            Attempt {
                code: Some(code),
                body: String::from_utf8_lossy(&start)
                    .chars()
                    .take(KEPT_RESPONSE)
                    .collect(),
                took: started.elapsed(),
            }
        }
        Err(e) if e.is_timeout() => failed("The receiver did not answer in time.".into()),
        // Without the URL: its query may carry a token, and this text is logged.
        Err(e) => failed(format!(
            "The call failed: {}",
            with_causes(&e.without_url())
        )),
    }
}

/// Deletes calls older than 30 days.
pub async fn forget_old_calls(db: &DatabaseConnection) -> Result<u64, DbErr> {
    crate::db::execute(
        db,
        "DELETE FROM webhook_calls WHERE created < $1",
        [(crate::values::now() - KEEP).into()],
    )
    .await
}

/// Delivers due calls for as long as the process runs: claims calls every second and
/// whenever a delivery ends, up to [`IN_FLIGHT`] running at once; old calls are forgotten
/// every hour.
pub async fn deliver_every_second(db: DatabaseConnection, allow_private: bool) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut running = tokio::task::JoinSet::new();
    let mut last_cleanup = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            Some(done) = running.join_next(), if !running.is_empty() => {
                match done {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => tracing::warn!(%error, "webhook delivery"),
                    Err(error) => tracing::error!(%error, "webhook delivery task"),
                }
            }
        }
        match claim(&db, IN_FLIGHT.saturating_sub(running.len())).await {
            Ok(calls) => {
                for call in calls {
                    let db = db.clone();
                    running.spawn(async move { deliver(&db, call, allow_private).await });
                }
            }
            Err(error) => tracing::warn!(%error, "claiming webhook calls"),
        }
        if last_cleanup.elapsed() > Duration::from_secs(3600) {
            last_cleanup = Instant::now();
            if let Err(error) = forget_old_calls(&db).await {
                tracing::warn!(%error, "forgetting old webhook calls");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_from_five_seconds_to_about_three_days() {
        assert_eq!(retry_delay(1).num_seconds(), 5);
        assert_eq!(retry_delay(2).num_seconds(), 15);
        let last = retry_delay(MAX_ATTEMPTS - 1);
        assert!(last.num_hours() > 24 && last.num_days() <= 4, "{last}");
    }

    #[test]
    fn the_signature_is_an_hmac_of_time_and_body() {
        let s = signature("secret", 1_700_000_000, b"{}");
        assert!(s.starts_with("t=1700000000,v1="));
        assert_eq!(s.len(), "t=1700000000,v1=".len() + 64);
        assert_ne!(s, signature("other", 1_700_000_000, b"{}"));
        assert_ne!(s, signature("secret", 1_700_000_001, b"{}"));
    }
}

/// A webhook with the events and action types it listens to.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// The row.
    pub row: webhook::Model,
    /// Slugs of the events it is limited to (when not `all_events`).
    pub limit_events: Vec<String>,
    /// The action types it listens to.
    pub action_types: Vec<String>,
}

/// A webhook's fields as written.
#[derive(Debug, Clone)]
pub struct WebhookInput {
    /// Where calls go.
    pub target_url: String,
    /// Whether calls are made.
    pub enabled: bool,
    /// Every event, or `limit_events`.
    pub all_events: bool,
    /// Event slugs.
    pub limit_events: Vec<String>,
    /// Action types.
    pub action_types: Vec<String>,
    /// Internal comment.
    pub comment: String,
}

/// The action types webhooks can listen to: pretix's and the plugins'.
pub fn known_action_types(plugins: &dyn Extensions) -> Vec<String> {
    ACTION_TYPES
        .iter()
        .map(|(a, _)| (*a).to_owned())
        .chain(plugins.webhook_action_types())
        .collect()
}

/// The events a webhook with these fields hears of.
fn scope(all_events: bool, event_ids: Vec<i64>) -> EventScope {
    if all_events {
        EventScope::All
    } else {
        EventScope::Only(event_ids)
    }
}

/// The events a stored webhook hears of.
pub async fn reach(db: &impl ConnectionTrait, hook: &webhook::Model) -> Result<EventScope, DbErr> {
    let ids = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT event_id FROM webhook_events WHERE webhook_id = $1",
            [hook.id.into()],
        ))
        .await?
        .iter()
        .map(|row| row.try_get::<i64>("", "event_id"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(scope(hook.all_events, ids))
}

/// Whether `caller` may see and change a stored webhook: it must cover every event the
/// webhook hears of (all events: with a grant for all events), as for creating one.
pub async fn within_reach(
    db: &impl ConnectionTrait,
    caller: &Caller,
    hook: &webhook::Model,
) -> Result<(), Refusal> {
    if caller.may_grant(
        hook.organizer_id,
        &reach(db, hook).await?,
        PermissionSet::NONE,
    ) {
        Ok(())
    } else {
        Err(out_of_reach())
    }
}

fn out_of_reach() -> Refusal {
    Refusal::forbidden_because(
        "A webhook may hear only of events you have access to (all events only with access \
         to all events).",
    )
}

/// Checks and stores a webhook (new when `existing` is `None`); 400 with the fields at
/// fault, 403 when its events (before or after) are not all the caller's. A new webhook
/// gets a secret.
pub async fn save(
    db: &DatabaseConnection,
    plugins: &dyn Extensions,
    allow_private: bool,
    organizer_id: i64,
    caller: &Caller,
    existing: Option<webhook::Model>,
    input: WebhookInput,
) -> Result<Webhook, Refusal> {
    use crate::values::FieldErrors;
    let mut errors = FieldErrors::new();
    if input.target_url.len() > 255 {
        errors.push(
            "target_url",
            "Ensure this field has no more than 255 characters.",
        );
    } else if let Err(why) = check_target(&input.target_url, allow_private).await {
        errors.push("target_url", why);
    }
    let known = known_action_types(plugins);
    if let Some(unknown) = input.action_types.iter().find(|a| !known.contains(a)) {
        errors.push(
            "action_types",
            format!("\"{unknown}\" is not a valid choice."),
        );
    }
    let events: Vec<crate::db::entities::event::Model> = {
        use crate::db::entities::event;
        use sea_orm::{ColumnTrait, QueryFilter};
        event::Entity::find()
            .filter(event::Column::OrganizerId.eq(organizer_id))
            .filter(event::Column::Slug.is_in(input.limit_events.clone()))
            .all(db)
            .await?
    };
    if let Some(missing) = input
        .limit_events
        .iter()
        .find(|s| !events.iter().any(|e| &e.slug == *s))
    {
        errors.push(
            "limit_events",
            format!("Object with slug={missing} does not exist."),
        );
    }
    errors.into_result()?;
    let after = scope(input.all_events, events.iter().map(|e| e.id).collect());
    let before = match &existing {
        Some(w) => Some(reach(db, w).await?),
        None => None,
    };
    if !caller.may_grant(organizer_id, &after, PermissionSet::NONE)
        || before.is_some_and(|b| !caller.may_grant(organizer_id, &b, PermissionSet::NONE))
    {
        return Err(out_of_reach());
    }
    let txn = crate::db::begin_write(db).await?;
    let id = match &existing {
        Some(w) => {
            crate::db::execute(
                &txn,
                "UPDATE webhooks SET target_url = $1, enabled = $2, all_events = $3, \
                 comment = $4 WHERE id = $5",
                [
                    input.target_url.clone().into(),
                    input.enabled.into(),
                    input.all_events.into(),
                    input.comment.clone().into(),
                    w.id.into(),
                ],
            )
            .await?;
            for table in ["webhook_events", "webhook_action_types"] {
                crate::db::execute(
                    &txn,
                    &format!("DELETE FROM {table} WHERE webhook_id = $1"),
                    [w.id.into()],
                )
                .await?;
            }
            w.id
        }
        None => {
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO webhooks (organizer_id, target_url, enabled, all_events, comment, \
                 secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                [
                    organizer_id.into(),
                    input.target_url.clone().into(),
                    input.enabled.into(),
                    input.all_events.into(),
                    input.comment.clone().into(),
                    new_secret().into(),
                ],
            )
            .await?
        }
    };
    let mut action_types = input.action_types.clone();
    action_types.sort();
    action_types.dedup();
    for a in &action_types {
        crate::db::execute(
            &txn,
            "INSERT INTO webhook_action_types (webhook_id, action_type) VALUES ($1, $2)",
            [id.into(), a.clone().into()],
        )
        .await?;
    }
    for e in &events {
        crate::db::execute(
            &txn,
            "INSERT INTO webhook_events (webhook_id, event_id) VALUES ($1, $2)",
            [id.into(), e.id.into()],
        )
        .await?;
    }
    let row = webhook::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or(DbErr::RecordNotFound("webhook".into()))?;
    crate::db::commit(txn).await?;
    let mut limit_events: Vec<String> = events.into_iter().map(|e| e.slug).collect();
    limit_events.sort();
    Ok(Webhook {
        row,
        limit_events,
        action_types,
    })
}

/// Webhooks with their events and action types.
pub async fn with_lists(
    db: &impl ConnectionTrait,
    rows: Vec<webhook::Model>,
) -> Result<Vec<Webhook>, DbErr> {
    #[derive(sea_orm::FromQueryResult)]
    struct Pair {
        webhook_id: i64,
        value: String,
    }
    let ids: Vec<String> = rows.iter().map(|w| w.id.to_string()).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // IDs from the database, not from input.
    let list = ids.join(", ");
    let read = |sql: String| {
        Pair::find_by_statement(Statement::from_string(db.get_database_backend(), sql))
    };
    let events = read(format!(
        "SELECT we.webhook_id, e.slug AS value FROM webhook_events we \
         JOIN events e ON e.id = we.event_id WHERE we.webhook_id IN ({list}) ORDER BY e.slug"
    ))
    .all(db)
    .await?;
    let actions = read(format!(
        "SELECT webhook_id, action_type AS value FROM webhook_action_types \
         WHERE webhook_id IN ({list}) ORDER BY action_type"
    ))
    .all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Webhook {
            limit_events: events
                .iter()
                .filter(|p| p.webhook_id == row.id)
                .map(|p| p.value.clone())
                .collect(),
            action_types: actions
                .iter()
                .filter(|p| p.webhook_id == row.id)
                .map(|p| p.value.clone())
                .collect(),
            row,
        })
        .collect())
}
