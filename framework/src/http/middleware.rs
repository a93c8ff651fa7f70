//! What every request goes through: request logs, the `lang` scope, rate limits, the
//! shaping of every error into the spec's JSON forms, and `X-Idempotency-Key` on writes.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Instant;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter as Governor};
use poem::error::{MethodNotAllowedError, NotFoundError, ResponseError};
use poem::http::{StatusCode, header};
use poem::{Endpoint, IntoResponse, Request, Response};
use poem_openapi::error::{ParseParamError, ParsePathError};

use super::error::ApiError;
use super::i18n;
use super::idempotency::Keyed;
use super::routes::RouteTable;
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

/// Per-credential request limits, counted in this process.
pub struct RateLimiter(DefaultKeyedRateLimiter<String>);

impl RateLimiter {
    /// A limiter allowing `per_minute` requests per credential, or none when 0.
    pub fn new(per_minute: u32) -> Option<Self> {
        NonZeroU32::new(per_minute).map(|n| Self(Governor::keyed(Quota::per_minute(n))))
    }

    /// Ok, or the number of seconds to wait.
    fn check(&self, key: &str) -> Result<(), u64> {
        self.0.check_key(&key.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}

/// Wraps the API endpoint with the shared behaviour.
pub async fn shared_behaviour<E: Endpoint>(
    ep: Arc<E>,
    routes: Arc<RouteTable>,
    limiter: Option<Arc<RateLimiter>>,
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

    let throttled = match (&limiter, req.headers().get(header::AUTHORIZATION)) {
        (Some(limiter), Some(credential)) => {
            limiter.check(credential.to_str().unwrap_or_default()).err()
        }
        _ => None,
    };
    let mut request_queries = 0;
    let resp = match throttled {
        Some(wait) => ApiError::too_many_requests(wait).as_response(),
        None => {
            let keyed = Keyed::of(&req);
            let answer = async {
                match ep.call(req).await {
                    Ok(resp) => resp.into_response(),
                    Err(err) => shape_error(err, &routes, method.as_str(), &path),
                }
            };
            let once = async {
                match (keyed, &state) {
                    (Some(keyed), Some(state)) => keyed.run(&state.db, answer).await,
                    _ => answer.await,
                }
            };
            let (resp, queries) = count_queries(i18n::with_lang(lang, once)).await;
            request_queries = queries;
            resp
        }
    };
    if changes_configuration(&method, &path)
        && let Some(state) = state
    {
        state.cache.changed().await;
    }
    let status = resp.status().as_u16();
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    tracing::info!(target: "tessera::request", method = %method, path = %path, status, latency_ms, queries = request_queries, "request");
    Ok(resp)
}

/// Resources whose changes never touch what [`crate::cache`] keeps; writing them leaves the
/// cache alone, so that their hot write paths do not empty it.
const UNCACHED_RESOURCES: [&str; 3] = ["giftcards", "orders", "cartpositions"];

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
/// that is not a read, except writes to resources the cache never holds.
fn changes_configuration(method: &poem::http::Method, path: &str) -> bool {
    let reads = [
        poem::http::Method::GET,
        poem::http::Method::HEAD,
        poem::http::Method::OPTIONS,
    ];
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
        // A path segment that cannot be an ID points at no object the caller may see.
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
    use super::changes_configuration;
    use poem::http::Method;

    #[test]
    fn only_writes_to_uncached_resources_leave_the_cache_alone() {
        let post = |p: &str| changes_configuration(&Method::POST, p);
        assert!(!post("/api/v1/organizers/acme/giftcards/1/transact/"));
        assert!(!post("/api/v1/organizers/acme/events/conf/orders/"));
        assert!(post("/api/v1/organizers/acme/events/conf/items/"));
        // Slugs that look like resources are slugs.
        assert!(post("/api/v1/organizers/orders/events/giftcards/items/"));
        assert!(post("/api/v1/organizers/giftcards/events/"));
        assert!(post("/api/v1/organizers/acme/events/orders/"));
        assert!(!changes_configuration(
            &Method::GET,
            "/api/v1/organizers/acme/events/conf/items/"
        ));
    }
}
