//! What a request may cost before any work is done for it: bounded headers and URIs, and
//! request rates per credential and per client address, kept in memory that stays bounded.
//!
//! The rates are counted in each process: they shield a process from floods, they are not
//! quotas (several processes behind a balancer each allow the configured rate).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter as Governor};
use poem::error::ReadBodyError;
use poem::http::{StatusCode, header};
use poem::{Body, Request};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Sleep;

use super::error::ApiError;

/// Longest path and query accepted, in bytes.
pub const MAX_URI: usize = 8 * 1024;

/// Largest single header value accepted, in bytes.
pub const MAX_HEADER_VALUE: usize = 8 * 1024;

/// Largest `Authorization` header accepted, in bytes: every credential Tessera issues is
/// far shorter.
pub const MAX_AUTHORIZATION: usize = 1024;

/// Largest sum of header names and values accepted, in bytes.
pub const MAX_HEADERS: usize = 32 * 1024;

/// The error for a request whose path or query carries an encoded NUL character (`%00`),
/// if it does: nothing stored can contain one, and databases refuse it in text. In the path
/// it names nothing (404); in the query it is a bad parameter (400).
pub fn nul_in_uri(req: &Request) -> Option<ApiError> {
    let uri = req.uri();
    if uri.path().contains("%00") {
        return Some(ApiError::not_found("Not found."));
    }
    uri.query()
        .is_some_and(|q| q.contains("%00"))
        .then(|| ApiError::bad_request("A query parameter contains a NUL character."))
}

/// The error for a request whose URI or headers are larger than accepted, if it is.
pub fn oversized(req: &Request) -> Option<ApiError> {
    let uri = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if uri > MAX_URI {
        return Some(ApiError::detail(
            StatusCode::URI_TOO_LONG,
            format!("The request URI is longer than {MAX_URI} bytes."),
        ));
    }
    let too_large = |what: &str, limit: usize| {
        Some(ApiError::detail(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("{what} is larger than {limit} bytes."),
        ))
    };
    if req
        .headers()
        .get(header::AUTHORIZATION)
        .is_some_and(|v| v.len() > MAX_AUTHORIZATION)
    {
        return too_large("The Authorization header", MAX_AUTHORIZATION);
    }
    let mut total = 0;
    for (name, value) in req.headers() {
        if value.len() > MAX_HEADER_VALUE {
            return too_large(&format!("The {name} header"), MAX_HEADER_VALUE);
        }
        total += name.as_str().len() + value.len();
    }
    (total > MAX_HEADERS).then(|| too_large("The request's headers", MAX_HEADERS))?
}

/// The body limit of a path that takes files, which its operation reads within that own,
/// larger limit: the ticketing side's `/api/v1/upload` takes `ticketing` bytes, the talk
/// side's `/api/upload/` `talk` bytes; `None` for every other path.
pub fn upload_limit(path: &str, ticketing: usize, talk: usize) -> Option<usize> {
    match path.trim_end_matches('/') {
        "/api/v1/upload" => Some(ticketing),
        "/api/upload" => Some(talk),
        _ => None,
    }
}

/// How fast a request body must arrive.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// The time a whole body may take, and an upload between two of its pieces.
    pub timeout: Duration,
    /// Bytes a second an upload must average once `timeout` has passed since it began.
    pub min_upload_bytes_per_sec: u64,
}

/// Reads the request body into memory within `limit` bytes and the pace's timeout, so that
/// no extractor reads more: 413 for a body that is (or says it is) larger, before reading it
/// when it says so; 408 for one that does not arrive in time (a client that trickles it in
/// holds a connection and memory for no good reason). Upload bodies (`upload_limit` is their
/// limit, see [`upload_limit`]) are left to their operations, after a check of their
/// declared length against that limit; reading one fails when no part of it arrives for the
/// timeout, or when, the timeout after it began, it has arrived slower than the pace's
/// minimum rate.
pub async fn bound_body(
    req: &mut Request,
    limit: usize,
    upload_limit: Option<usize>,
    pace: Pace,
) -> Result<(), ApiError> {
    let timeout = pace.timeout;
    let upload = upload_limit.is_some();
    let limit = upload_limit.unwrap_or(limit);
    let too_large = || {
        ApiError::detail(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("The request body is larger than {limit} bytes."),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    if declared == Some(0) {
        return Ok(());
    }
    if upload {
        let body = req.take_body().into_async_read();
        req.set_body(Body::from_async_read(Stalling::new(body, pace)));
        return Ok(());
    }
    let body = req.take_body();
    let read = tokio::time::timeout(timeout, body.into_bytes_limit(limit)).await;
    match read {
        Ok(Ok(bytes)) => {
            req.set_body(Body::from(bytes));
            Ok(())
        }
        Ok(Err(ReadBodyError::PayloadTooLarge)) => Err(too_large()),
        Ok(Err(error)) => Err(ApiError::bad_request(format!(
            "The request body could not be read: {error}"
        ))),
        Err(_) => Err(ApiError::detail(
            StatusCode::REQUEST_TIMEOUT,
            "The request body did not arrive in time.",
        )),
    }
}

/// A body that fails to read when none of it arrives for its timeout, or when it falls
/// behind its minimum rate once the timeout has passed since it began.
struct Stalling<R> {
    inner: R,
    pace: Pace,
    began: tokio::time::Instant,
    received: u64,
    deadline: Pin<Box<Sleep>>,
    /// Whether the deadline is the rate's (else: the pause's).
    rate_bound: bool,
}

impl<R> Stalling<R> {
    fn new(inner: R, pace: Pace) -> Self {
        let began = tokio::time::Instant::now();
        Self {
            inner,
            pace,
            began,
            received: 0,
            deadline: Box::pin(tokio::time::sleep(pace.timeout)),
            rate_bound: false,
        }
    }

    /// Moves the deadline after `n` more bytes arrived: the earlier of a pause of the
    /// timeout from now and the time the bytes so far allow at the minimum rate.
    fn arrived(&mut self, n: usize) {
        self.received += n as u64;
        let pause = tokio::time::Instant::now() + self.pace.timeout;
        let earned = Duration::from_secs_f64(
            self.received as f64 / self.pace.min_upload_bytes_per_sec as f64,
        );
        let rate = self.began + self.pace.timeout + earned.min(Duration::from_secs(86_400));
        self.rate_bound = rate < pause;
        self.deadline.as_mut().reset(pause.min(rate));
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Stalling<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(read) => {
                let n = buf.filled().len() - before;
                if n > 0 {
                    this.arrived(n);
                }
                Poll::Ready(read)
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    if this.rate_bound {
                        format!(
                            "it arrived slower than {} bytes a second",
                            this.pace.min_upload_bytes_per_sec
                        )
                    } else {
                        format!("nothing arrived for {} s", this.pace.timeout.as_secs())
                    },
                ))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// Keys a limiter remembers before it forgets all of them: far more than the clients and
/// credentials that are active within one minute.
const MAX_KEYS: usize = 100_000;

/// Checks between two sweeps of keys that are idle again.
const SWEEP_EVERY: u64 = 1024;

/// Requests per minute per key (a credential, or a client address), with memory bounded by
/// forgetting keys that are idle again.
pub struct RateLimiter {
    quota: Quota,
    keys: RwLock<DefaultKeyedRateLimiter<String>>,
    checks: AtomicU64,
}

impl RateLimiter {
    /// A limiter allowing `per_minute` requests per key, or none when 0.
    pub fn new(per_minute: u32) -> Option<Self> {
        let quota = Quota::per_minute(NonZeroU32::new(per_minute)?);
        Some(Self {
            quota,
            keys: RwLock::new(Governor::keyed(quota)),
            checks: AtomicU64::new(0),
        })
    }

    /// Ok, or the number of seconds to wait.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            self.sweep();
        }
        let Ok(keys) = self.keys.read() else {
            return Ok(());
        };
        keys.check_key(&key.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }

    /// The number of keys remembered.
    pub fn len(&self) -> usize {
        self.keys.read().map_or(0, |k| k.len())
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the keys whose allowance is whole again, and all of them when even the busy
    /// ones are too many (a flood from ever new addresses).
    fn sweep(&self) {
        let Ok(mut keys) = self.keys.write() else {
            return;
        };
        keys.retain_recent();
        if keys.len() >= MAX_KEYS {
            *keys = Governor::keyed(self.quota);
        }
        keys.shrink_to_fit();
    }
}

/// The address a request comes from: the peer's, or, when the peer is a trusted proxy, the
/// nearest address in `X-Forwarded-For` that is not one. `None` when unknown (in-process
/// calls).
pub fn client_address(req: &Request, trusted_proxies: &[IpAddr]) -> Option<IpAddr> {
    let peer = req.remote_addr().as_socket_addr().map(|a| a.ip())?;
    if !trusted_proxies.contains(&peer) {
        return Some(peer);
    }
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for hop in forwarded.iter().rev() {
        match hop.trim().parse::<IpAddr>() {
            Ok(ip) if trusted_proxies.contains(&ip) => continue,
            Ok(ip) => return Some(ip),
            // What a proxy we trust did not write cannot be trusted further left.
            Err(_) => break,
        }
    }
    Some(peer)
}

/// The key an address is limited under: IPv6 clients by their /64 network, since one
/// client is usually given a whole /64.
pub fn address_key(address: Option<IpAddr>) -> String {
    match address {
        Some(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Some(IpAddr::V6(v6)) => v6
            .to_ipv4_mapped()
            .map_or_else(String::new, |v4| v4.to_string()),
        Some(ip) => ip.to_string(),
        None => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_whose_allowance_is_whole_again_are_forgotten() {
        // Ten thousand a second: an allowance is whole again a fraction of a millisecond
        // after its key's single request.
        let limiter = RateLimiter::new(600_000).expect("limiter");
        for i in 0..2000 {
            assert!(limiter.check(&format!("key{i}")).is_ok());
        }
        assert!(!limiter.is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        limiter.sweep();
        assert!(limiter.is_empty());
    }

    #[test]
    fn a_key_that_used_its_allowance_is_not_forgotten_by_a_sweep() {
        let limiter = RateLimiter::new(1).expect("limiter");
        assert!(limiter.check("busy").is_ok());
        assert!(limiter.check("busy").is_err());
        limiter.sweep();
        assert_eq!(limiter.check("busy").err(), Some(60));
    }

    #[test]
    fn ipv6_clients_share_their_network_and_mapped_ipv4_is_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().expect("ip");
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().expect("ip");
        assert_eq!(address_key(Some(a)), address_key(Some(b)));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().expect("ip");
        assert_eq!(address_key(Some(mapped)), "192.0.2.7");
        assert_eq!(address_key(None), "unknown");
    }
}
