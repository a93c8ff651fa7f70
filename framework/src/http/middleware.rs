//! What every request goes through: bounded URI and headers, authentication (once, before
//! anything else that depends on who calls), a device's security profile, rate limits per
//! credential and per client address, `X-Idempotency-Key` on writes of authenticated callers
//! to known operations, request logs, the `lang` scope, and the shaping of every error into
//! the spec's JSON forms.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use poem::error::{MethodNotAllowedError, NotFoundError, ResponseError};
use poem::http::{Method, StatusCode, header};
use poem::{Endpoint, IntoResponse, Request, Response};
use poem_openapi::error::{ParseParamError, ParsePathError};

use super::auth::{Caller, Resolved, authenticate};
use super::error::ApiError;
use super::i18n;
use super::idempotency::Keyed;
use super::limits::{self, RateLimiter};
use super::routes::RouteTable;
use crate::config::Config;
use crate::db::count_queries;
use crate::state::AppState;

/// The request URI as the client sent it, before the trailing slash was normalised away;
/// links in answers are built from it.
#[derive(Debug, Clone)]
pub struct OriginalUri(pub poem::http::Uri);

/// The path and query of a request as the client sent it.
pub fn original_uri(req: &Request) -> String {
    let uri = req
        .extensions()
        .get::<OriginalUri>()
        .map_or(req.uri(), |o| &o.0);
    uri.path_and_query()
        .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned())
}

/// What the shared behaviour needs besides the request: the route table and the limits.
pub struct Gate {
    routes: RouteTable,
    per_credential: Option<RateLimiter>,
    per_address: Option<RateLimiter>,
    trusted_proxies: Vec<IpAddr>,
    max_body_bytes: usize,
    talk_upload_max_bytes: usize,
    body_pace: limits::Pace,
}

impl Gate {
    /// The gate for an API with these routes under this configuration.
    pub fn new(routes: RouteTable, config: &Config) -> Self {
        let per_credential = config.rate_limit_per_minute.unwrap_or(0);
        let per_address = config
            .anonymous_rate_limit_per_minute
            .unwrap_or(per_credential);
        Self {
            routes,
            per_credential: RateLimiter::new(per_credential),
            per_address: RateLimiter::new(per_address),
            trusted_proxies: config.trusted_proxies.clone(),
            max_body_bytes: config.max_body_bytes,
            talk_upload_max_bytes: config.talk_upload_max_bytes,
            body_pace: limits::Pace {
                timeout: config.body_read_timeout(),
                min_upload_bytes_per_sec: config.min_upload_bytes_per_sec.max(1),
            },
        }
    }

    /// Ok, or the seconds to wait: authenticated callers are counted by credential, all
    /// others (no credentials, or credentials that failed) by client address.
    fn throttle(&self, req: &Request, caller: Option<&Caller>) -> Result<(), u64> {
        match caller {
            Some(caller) => self
                .per_credential
                .as_ref()
                .map_or(Ok(()), |l| l.check(&caller.identity())),
            None => self.per_address.as_ref().map_or(Ok(()), |l| {
                let address = limits::client_address(req, &self.trusted_proxies);
                l.check(&limits::address_key(address))
            }),
        }
    }

    /// 403 when the caller is a device whose security profile does not allow the request's
    /// operation (its method and route template). Paths of no route are left to answer 404.
    fn denied_by_profile(&self, req: &Request, caller: Option<&Caller>) -> Option<ApiError> {
        let profile = caller?.device_profile()?;
        let route = self.routes.find(req.uri().path())?;
        // HEAD reads what GET reads.
        let method = match req.method().as_str() {
            "HEAD" => "GET",
            other => other,
        };
        // Fails closed: without the service's state no profile can be read.
        let permitted = req.data::<AppState>().is_some_and(|state| {
            crate::domain::devices::profiles::permits(
                profile,
                || state.plugins.device_profiles(),
                method,
                &route.template,
            )
        });
        (!permitted)
            .then(|| ApiError::forbidden_because("Request denied by device security profile."))
    }

    /// Whether the request names an operation of the API with its method.
    fn is_operation(&self, method: &Method, path: &str) -> bool {
        self.routes
            .find(path)
            .is_some_and(|r| r.methods.iter().any(|m| m == method.as_str()))
    }
}

/// The caller of a request with credentials, resolved once and kept in the request for
/// every extractor; `None` without credentials. Errors other than invalid credentials (the
/// database is down) are answers of their own.
async fn resolve_caller(req: &mut Request) -> Result<Option<Caller>, ApiError> {
    if !req.headers().contains_key(header::AUTHORIZATION) {
        return Ok(None);
    }
    let outcome = authenticate(req).await;
    if let Err(e) = &outcome
        && e.status() != StatusCode::UNAUTHORIZED
    {
        return Err(e.clone());
    }
    req.extensions_mut().insert(Resolved(outcome.clone()));
    Ok(outcome.ok())
}

/// Wraps the API endpoint with the shared behaviour.
pub async fn shared_behaviour<E: Endpoint>(
    ep: Arc<E>,
    gate: Arc<Gate>,
    mut req: Request,
) -> poem::Result<Response> {
    let original = OriginalUri(req.uri().clone());
    req.extensions_mut().insert(original);
    let started = Instant::now();
    let state = req.data::<AppState>().cloned();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let lang = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("lang=")))
        .filter(|l| !l.is_empty())
        .map(str::to_owned);

    let answer = async {
        if let Some(error) = limits::oversized(&req).or_else(|| limits::nul_in_uri(&req)) {
            return error.as_response();
        }
        let caller = match resolve_caller(&mut req).await {
            Ok(caller) => caller,
            Err(error) => return error.as_response(),
        };
        if let Some(error) = gate.denied_by_profile(&req, caller.as_ref()) {
            return error.as_response();
        }
        if let Err(wait) = gate.throttle(&req, caller.as_ref()) {
            return ApiError::too_many_requests(wait).as_response();
        }
        let upload_limit = limits::upload_limit(
            &path,
            crate::domain::files::MAX_SIZE,
            gate.talk_upload_max_bytes,
        );
        let (limit, pace) = (gate.max_body_bytes, gate.body_pace);
        if let Err(error) = limits::bound_body(&mut req, limit, upload_limit, pace).await {
            return error.as_response();
        }
        let keyed = caller
            .as_ref()
            .filter(|_| gate.is_operation(&method, &path))
            .and_then(|c| Keyed::of(&req, c));
        let run = async {
            match ep.call(req).await {
                Ok(resp) => resp.into_response(),
                Err(err) => shape_error(err, &gate.routes, method.as_str(), &path),
            }
        };
        match (keyed, &state) {
            (Some(keyed), Some(state)) => {
                let resp = keyed.run(&state.db, run).await;
                // Mail the work queued is visible only now that it committed with its answer.
                state.mailer.wake();
                resp
            }
            _ => run.await,
        }
    };
    let (resp, queries) = count_queries(i18n::with_lang(lang, answer)).await;
    // A page's form answers a done write with a redirect (303), an API call with 2xx.
    if (resp.status().is_success() || resp.status().is_redirection())
        && may_change_configuration(&method, &path)
        && resp.extensions().get::<LeavesConfiguration>().is_none()
        && let Some(state) = state
    {
        state.cache.refresh().await;
    }
    let status = resp.status().as_u16();
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let secrets = gate.routes.secret_segments(&path);
    let path = crate::logging::redact_path(&path, &secrets);
    tracing::info!(target: "tessera::request", method = %method, path = %path, status, latency_ms, queries, "request");
    Ok(resp)
}

/// Marks the answer of a request that changed nothing [`crate::domain::cache`] keeps (an
/// extension's page: a cart, a checkout), whose process need not read the configuration
/// version afterwards; a change another process makes is announced to it all the same.
#[derive(Clone, Copy, Debug)]
pub struct LeavesConfiguration;

/// Resources whose writes never touch what [`crate::domain::cache`] keeps: their hot write paths
/// need not read the configuration version afterwards.
const UNCACHED_RESOURCES: [&str; 4] = ["giftcards", "orders", "cartpositions", "checkinrpc"];

/// The resource a `/api/v1/organizers/...` path names: the segment after the organizer, or
/// after the event for event-scoped paths. Slugs are never taken for resources.
fn resource(path: &str) -> Option<&str> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["api", "v1", "organizers", _, "events", _, resource, ..] => Some(resource),
        ["api", "v1", "organizers", _, resource, ..] => Some(resource),
        _ => None,
    }
}

/// Whether a request may have changed configuration the process cache keeps: any request
/// that is not a read, except writes to resources the cache never holds. Only what the
/// database counted as a change moves the cache on (see [`crate::domain::cache::Cache::refresh`]).
fn may_change_configuration(method: &Method, path: &str) -> bool {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    !reads.contains(method) && !resource(path).is_some_and(|r| UNCACHED_RESOURCES.contains(&r))
}

/// Turns any error of poem or poem-openapi into the spec's JSON shapes.
fn shape_error(err: poem::Error, routes: &RouteTable, method: &str, path: &str) -> Response {
    if let Some(api) = err.downcast_ref::<ApiError>() {
        return api.as_response();
    }
    let route = routes.find(path);
    if err.is::<MethodNotAllowedError>() {
        let allow = route.map(|r| r.methods.join(", ")).unwrap_or_default();
        return ApiError::method_not_allowed(method, &allow).as_response();
    }
    if err.is::<ParsePathError>() {
        // A path segment that cannot be an ID points at no object the caller may see: 403
        // on the ticketing side as pretix answers, 404 on the talk side as pretalx does.
        if super::auth::is_talk_path(path) {
            return ApiError::not_found("Not found.").as_response();
        }
        return ApiError::forbidden().as_response();
    }
    if err.is::<NotFoundError>() {
        return ApiError::not_found("Not found.").as_response();
    }
    if let Some(param) = err.downcast_ref::<ParseParamError>() {
        return ApiError::field(param.name, param_message(&param.reason)).as_response();
    }
    let status = err.status();
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        let path = crate::logging::redact_path(path, &routes.secret_segments(path));
        tracing::error!(error = %err, %method, %path, "unhandled error");
        return ApiError::internal().as_response();
    }
    ApiError::detail(status, err.to_string()).as_response()
}

/// A readable message for a query value of the wrong type.
fn param_message(reason: &str) -> String {
    if reason.contains("boolean") {
        "Must be a valid boolean: `true` or `false`.".into()
    } else if reason.contains("integer") {
        "A valid integer is required.".into()
    } else if reason.contains("enum") || reason.contains("variant") {
        "Select a valid choice.".into()
    } else {
        reason.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::may_change_configuration;
    use poem::http::Method;

    #[test]
    fn only_writes_to_uncached_resources_leave_the_cache_alone() {
        let post = |p: &str| may_change_configuration(&Method::POST, p);
        assert!(!post("/api/v1/organizers/acme/giftcards/1/transact/"));
        assert!(!post("/api/v1/organizers/acme/events/conf/orders/"));
        assert!(post("/api/v1/organizers/acme/events/conf/items/"));
        // Scans write check-ins only; the lists they read are configuration.
        assert!(!post("/api/v1/organizers/acme/checkinrpc/redeem/"));
        assert!(post("/api/v1/organizers/acme/events/conf/checkinlists/"));
        // Slugs that look like resources are slugs.
        assert!(post("/api/v1/organizers/orders/events/giftcards/items/"));
        assert!(post("/api/v1/organizers/giftcards/events/"));
        assert!(post("/api/v1/organizers/acme/events/orders/"));
        assert!(!may_change_configuration(
            &Method::GET,
            "/api/v1/organizers/acme/events/conf/items/"
        ));
    }
}
