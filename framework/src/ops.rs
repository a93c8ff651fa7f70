//! What an operator runs the service with: probes for load balancers and orchestrators, and
//! Prometheus metrics.
//!
//! - `/healthz`: 200 `{"status": "ok"}` while the process answers; it touches nothing else.
//! - `/readyz`: 200 `{"status": "ok"}` when the database answers a query within
//!   [`READY_TIMEOUT`] and every migration of this build is applied; otherwise 503 with
//!   `{"detail": ...}` saying which.
//! - `/metrics`: the Prometheus text format. On the main address only with `metrics_token`
//!   set, and then only for `Authorization: Bearer <token>`; on the `metrics_bind` address
//!   always (with the token too when one is set). Without either setting it is not served.
//!
//! These are answered before the API's shared behaviour (`http::middleware`): no
//! authentication, no rate limit (a load balancer probing from one address must never be
//! throttled into taking the node out), no request log line, and they are not part of the
//! OpenAPI document.
//!
//! Request counts and latencies, and lock waits, are kept per process (one registry for every
//! server of the process); the pool's use and the outbox's depth are read from the serving
//! server's database when scraped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use poem::endpoint::BoxEndpoint;
use poem::http::{Method, StatusCode, header};
use poem::{Endpoint, EndpointExt, IntoResponse, Request, Response};
use prometheus::proto::MetricFamily;
use prometheus::{Encoder, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder};
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseConnectionType, DbErr, Statement, Value,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tessera_migrations::{Migrator, MigratorTrait};

use crate::domain::mail::MailState;
use crate::http::routes::RouteTable;
use crate::http::serve::ConnectionLimits;
use crate::metrics::METRICS;
use crate::state::AppState;

/// How long `/readyz` waits for the database before it answers 503.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);

/// The route label of a request whose path is no route of the service.
pub const UNMATCHED: &str = "unmatched";

/// Routes served outside the API's document (pages, the document and its UI, these
/// endpoints), so that their requests are counted under a template too.
const OTHER_ROUTES: [&str; 18] = [
    "/healthz",
    "/readyz",
    "/metrics",
    "/api/v1/openapi.json",
    "/docs",
    "/media/{key}/{filename}",
    "/{organizer}/{event}/order/{code}/{secret}",
    "/{organizer}/{event}/order/{code}/{secret}/pay/{local_id}",
    "/{organizer}/{event}/order/{code}/{secret}/download/{output}",
    "/{organizer}/{event}/order/{code}/{secret}/download/{output}/{position}",
    "/login",
    "/logout",
    "/account",
    "/account/authorized/{id}/revoke",
    "/account/applications",
    "/account/applications/{id}/secret",
    "/account/applications/{id}/delete",
    "/api/v1/oauth/authorize",
];

/// The `method` label: the standard methods by name, anything else as `other`, so that
/// invented methods cannot multiply the series.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 7] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
    ];
    KNOWN
        .iter()
        .find(|m| *m == method)
        .map_or("other", Method::as_str)
}

/// Which listener a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Surface {
    /// The service's address (`bind`).
    Main,
    /// The `metrics_bind` address.
    Operations,
}

/// The operator endpoints of one server, and the route templates its requests are counted by.
pub struct Operations {
    db: DatabaseConnection,
    routes: RouteTable,
    /// SHA-256 of `metrics_token`, when one is set.
    token: Option<[u8; 32]>,
}

impl Operations {
    /// The operator endpoints of a server whose API has the OpenAPI document `spec`.
    pub fn new(state: &AppState, spec: &serde_json::Value) -> Self {
        let mut paths = spec
            .get("paths")
            .and_then(serde_json::Value::as_object)
            .cloned()
            .unwrap_or_default();
        for path in OTHER_ROUTES {
            paths
                .entry(path)
                .or_insert_with(|| json!({"get": {}, "head": {}}));
        }
        let token = state
            .config
            .metrics_token
            .as_deref()
            .filter(|t| !t.is_empty())
            .map(|t| Sha256::digest(t.as_bytes()).into());
        Self {
            db: state.db.clone(),
            routes: RouteTable::from_spec(&json!({ "paths": paths })),
            token,
        }
    }

    /// The route template of a request path, or [`UNMATCHED`].
    pub fn route(&self, path: &str) -> &str {
        self.routes
            .find(path)
            .map_or(UNMATCHED, |r| r.template.as_str())
    }

    /// The answer of an operator endpoint, or `None` when the request is for something else.
    async fn answer(&self, req: &Request, surface: Surface) -> Option<Response> {
        let path = req.uri().path();
        let path = path.strip_suffix('/').unwrap_or(path);
        let metrics_here = surface == Surface::Operations || self.token.is_some();
        match path {
            "/healthz" | "/readyz" => {}
            "/metrics" if metrics_here => {}
            _ => return None,
        }
        if ![Method::GET, Method::HEAD].contains(req.method()) {
            return Some(
                detail(
                    StatusCode::METHOD_NOT_ALLOWED,
                    &format!("Method \"{}\" not allowed.", req.method()),
                )
                .with_header(header::ALLOW, "GET, HEAD")
                .into_response(),
            );
        }
        Some(match path {
            "/healthz" => ok(),
            "/readyz" => match readiness(&self.db).await {
                Ok(()) => ok(),
                Err(why) => detail(StatusCode::SERVICE_UNAVAILABLE, &why),
            },
            _ => match self.authorized(req) {
                Ok(()) => self.metrics().await,
                Err(why) => detail(StatusCode::UNAUTHORIZED, why)
                    .with_header(header::WWW_AUTHENTICATE, "Bearer realm=\"metrics\"")
                    .into_response(),
            },
        })
    }

    /// Whether the request carries the metrics token, when one is set; compared in constant
    /// time (as digests, so that not even the length is told).
    fn authorized(&self, req: &Request) -> Result<(), &'static str> {
        let Some(expected) = &self.token else {
            return Ok(());
        };
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or("Authentication credentials were not provided.")?;
        let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        if bool::from(digest.ct_eq(expected)) {
            Ok(())
        } else {
            Err("Invalid token.")
        }
    }

    /// Every metric in the text format: the process's, and this server's pool and outbox.
    async fn metrics(&self) -> Response {
        let mut families = METRICS.registry.gather();
        families.extend(self.scraped().await);
        let encoder = TextEncoder::new();
        let mut text = Vec::new();
        if let Err(error) = encoder.encode(&families, &mut text) {
            tracing::error!(%error, "metrics could not be encoded");
            return detail(
                StatusCode::INTERNAL_SERVER_ERROR,
                "A server error occurred.",
            );
        }
        Response::builder()
            .content_type(encoder.format_type())
            .body(text)
    }

    /// The gauges read when scraped: the pool's use and the outbox's depth (one query; left
    /// out, with a warning in the log, when the database does not answer).
    async fn scraped(&self) -> Vec<MetricFamily> {
        let registry = Registry::new();
        if let Some(pool) = pool_use(&self.db) {
            let connections = IntGaugeVec::new(
                Opts::new(
                    "db_pool_connections",
                    "Connections of the database pool, in use or idle.",
                ),
                &["state"],
            )
            .expect("valid metric");
            connections.with_label_values(&["in_use"]).set(pool.in_use);
            connections.with_label_values(&["idle"]).set(pool.idle);
            let max = IntGauge::new(
                "db_pool_max_connections",
                "Connections the database pool may open.",
            )
            .expect("valid metric");
            max.set(pool.max);
            let _ = registry.register(Box::new(connections));
            let _ = registry.register(Box::new(max));
        }
        match outbox_depths(&self.db).await {
            Ok(depths) => {
                let mails = IntGaugeVec::new(
                    Opts::new(
                        "outbox_mails",
                        "Mails of the outbox waiting to be sent (queued) or given up (failed).",
                    ),
                    &["state"],
                )
                .expect("valid metric");
                for (state, n) in depths {
                    mails.with_label_values(&[state.as_str()]).set(n);
                }
                let _ = registry.register(Box::new(mails));
            }
            Err(error) => tracing::warn!(%error, "metrics: the outbox could not be read"),
        }
        registry.gather()
    }
}

/// `200 {"status": "ok"}`.
fn ok() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// `{"detail": ...}` with a status.
fn detail(status: StatusCode, text: &str) -> Response {
    json_response(status, &json!({ "detail": text }))
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .content_type("application/json")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body.to_string())
}

/// Ok when the database answers within [`READY_TIMEOUT`] and every migration of this build
/// is applied; otherwise what is wrong. Migrations applied that this build does not know
/// (a newer node migrated the database during a rolling upgrade) do not make it unready.
pub async fn readiness(db: &DatabaseConnection) -> Result<(), String> {
    match tokio::time::timeout(READY_TIMEOUT, missing_migrations(db)).await {
        Err(_) => Err(format!(
            "The database did not answer within {} seconds.",
            READY_TIMEOUT.as_secs()
        )),
        Ok(Err(error)) => {
            tracing::warn!(%error, "readiness: the database does not answer");
            Err("The database does not answer.".into())
        }
        Ok(Ok(missing)) if missing.is_empty() => Ok(()),
        Ok(Ok(missing)) => Err(format!(
            "Migrations not applied: {}. Run `tessera migrate`.",
            missing.join(", ")
        )),
    }
}

/// The migrations of this build that the database has not recorded as applied (two queries:
/// a trivial one, then the migrations table).
async fn missing_migrations(db: &DatabaseConnection) -> Result<Vec<String>, DbErr> {
    let backend = db.get_database_backend();
    db.query_one_raw(Statement::from_string(backend, "SELECT 1"))
        .await?;
    let table = Migrator::migration_table_name().to_string();
    let applied: Vec<String> = db
        .query_all_raw(Statement::from_string(
            backend,
            format!("SELECT version FROM {table}"),
        ))
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|row| row.try_get::<String>("", "version").ok())
        .collect();
    Ok(Migrator::migrations()
        .iter()
        .map(|m| m.name().to_owned())
        .filter(|name| !applied.contains(name))
        .collect())
}

/// Connections of a pool.
struct PoolUse {
    in_use: i64,
    idle: i64,
    max: i64,
}

/// What the SQLx pool under the connection tells of its connections.
fn pool_use(db: &DatabaseConnection) -> Option<PoolUse> {
    fn of<DB: sea_orm::sqlx::Database>(pool: &sea_orm::sqlx::Pool<DB>) -> PoolUse {
        let size = i64::from(pool.size());
        let idle = i64::try_from(pool.num_idle()).unwrap_or(i64::MAX);
        PoolUse {
            in_use: (size - idle).max(0),
            idle,
            max: i64::from(pool.options().get_max_connections()),
        }
    }
    match &db.inner {
        DatabaseConnectionType::SqlxPostgresPoolConnection(_) => {
            Some(of(db.get_postgres_connection_pool()))
        }
        DatabaseConnectionType::SqlxSqlitePoolConnection(_) => {
            Some(of(db.get_sqlite_connection_pool()))
        }
        _ => None,
    }
}

/// Queued and failed mails of the outbox, in one query.
async fn outbox_depths(db: &DatabaseConnection) -> Result<Vec<(MailState, i64)>, DbErr> {
    let watched = [MailState::Queued, MailState::Failed];
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT state, COUNT(*) AS n FROM outbox_mails WHERE state IN ($1, $2) GROUP BY state",
            watched.map(|s| Value::from(s.as_str())),
        ))
        .await?;
    let mut depths: Vec<(MailState, i64)> = watched.iter().map(|&s| (s, 0)).collect();
    for row in rows {
        let state = row.try_get::<String>("", "state")?;
        let n = row.try_get::<i64>("", "n")?;
        if let Some(depth) = depths.iter_mut().find(|(s, _)| s.as_str() == state) {
            depth.1 = n;
        }
    }
    Ok(depths)
}

/// Counts a request under its route template, method and status, and its latency.
fn record(route: &str, method: &str, status: StatusCode, elapsed: Duration) {
    METRICS
        .requests
        .with_label_values(&[route, method, status.as_str()])
        .inc();
    METRICS
        .duration
        .with_label_values(&[route, method])
        .observe(elapsed.as_secs_f64());
}

/// Wraps the whole HTTP surface of the main address: answers the operator endpoints, and
/// counts every request under its route template (never its raw path).
pub async fn front<E: Endpoint>(
    ep: Arc<E>,
    ops: Arc<Operations>,
    req: Request,
) -> poem::Result<Response> {
    let started = Instant::now();
    let method = method_label(req.method());
    let route = ops.route(req.uri().path());
    let outcome = match ops.answer(&req, Surface::Main).await {
        Some(resp) => Ok(resp),
        None => ep.call(req).await.map(IntoResponse::into_response),
    };
    let status = match &outcome {
        Ok(resp) => resp.status(),
        Err(err) => err.status(),
    };
    record(route, method, status, started.elapsed());
    outcome
}

/// The endpoint of the `metrics_bind` address: `/metrics`, `/healthz` and `/readyz`, and 404
/// for everything else.
pub fn endpoint(state: &AppState) -> BoxEndpoint<'static> {
    let ops = Arc::new(Operations::new(state, &serde_json::Value::Null));
    poem::endpoint::make(move |req: Request| {
        let ops = ops.clone();
        async move {
            let started = Instant::now();
            let method = method_label(req.method());
            let resp = match ops.answer(&req, Surface::Operations).await {
                Some(resp) => resp,
                None => detail(StatusCode::NOT_FOUND, "Not found."),
            };
            record(
                ops.route(req.uri().path()),
                method,
                resp.status(),
                started.elapsed(),
            );
            resp
        }
    })
    .boxed()
}

/// Binds the `metrics_bind` address, when one is configured, and serves [`endpoint`] there
/// in a task of its own (abort it to stop), with the main address's header read timeout.
/// Fails when the address cannot be bound.
pub async fn listen(state: &AppState) -> std::io::Result<Option<tokio::task::JoinHandle<()>>> {
    let Some(bind) = state.config.metrics_bind.clone() else {
        return Ok(None);
    };
    let listener = tokio::net::TcpListener::bind(&bind)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("metrics_bind {bind}: {e}")))?;
    tracing::info!(%bind, "serving metrics and probes");
    let endpoint = endpoint(state);
    let limits = ConnectionLimits {
        max_connections: state.config.max_connections,
        max_per_address: state.config.max_connections_per_address,
        uncapped: state.config.trusted_proxies.clone(),
        header_read: state.config.header_read_timeout(),
        shutdown_grace: None,
    };
    Ok(Some(tokio::spawn(async move {
        let forever = std::future::pending();
        if let Err(error) = crate::http::serve::serve(listener, endpoint, limits, forever).await {
            tracing::error!(%error, "the metrics address stopped serving");
        }
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invented_methods_share_one_label() {
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        let odd = Method::from_bytes(b"BREW").expect("method");
        assert_eq!(method_label(&odd), "other");
    }
}
