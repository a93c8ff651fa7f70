//! Serving an endpoint over HTTP/1.1 on a TCP listener, with connections bounded in time:
//! poem's own server sets no limit on how long a client may take to send a request's head,
//! so a client that opens connections and dribbles headers (or sends nothing) would hold
//! them, and their memory, for as long as it likes.
//!
//! Each connection is served by hyper's HTTP/1.1 connection with a header read timeout: the
//! request line and headers must arrive within it, counted from the connection's opening or
//! from the end of the previous answer, so a kept-alive connection that stays idle that long
//! is closed as well. Slow bodies are bounded by the shared behaviour
//! ([`super::limits::bound_body`]). Requests reach the endpoint as they would through poem's
//! server: with the client's address ([`poem::web::RemoteAddr`]), the local address and
//! HTTP upgrades. Cleartext HTTP/2 is not served (a proxy in front speaks HTTP/1.1 to
//! Tessera).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use poem::endpoint::BoxEndpoint;
use poem::http::uri::Scheme;
use poem::web::{LocalAddr, RemoteAddr};
use poem::{Addr, Endpoint};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// How many connections are served at once, and how long they may take.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// Connections served at once; further ones wait in the listener's backlog until one
    /// closes.
    pub max_connections: usize,
    /// Connections served at once from one client address (IPv6: one /64); a connection
    /// beyond it is closed at once, so that one client cannot take every slot.
    pub max_per_address: usize,
    /// Addresses the per-address cap does not apply to (reverse proxies, whose connections
    /// carry many clients).
    pub uncapped: Vec<IpAddr>,
    /// The longest a client may take to send a request's line and headers, and the longest
    /// a kept-alive connection stays open without a request.
    pub header_read: Duration,
    /// After the shutdown signal, how long requests under way may take to finish before
    /// their connections are dropped; `None`: as long as they take.
    pub shutdown_grace: Option<Duration>,
}

/// How long to pause accepting after the listener failed (out of file descriptors, say), so
/// that the loop does not spin while the condition lasts.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Serves `endpoint` on `listener`, at most [`ConnectionLimits::max_connections`] connections
/// at once, until `shutdown` completes; then stops accepting, lets the requests under way
/// finish (within [`ConnectionLimits::shutdown_grace`]) and closes idle connections. Errors of single connections (a client that was too slow, or went away) end
/// those connections only.
pub async fn serve(
    listener: TcpListener,
    endpoint: BoxEndpoint<'static>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let local = LocalAddr(Addr::SocketAddr(listener.local_addr()?));
    let header_read = limits.header_read;
    let endpoint = Arc::new(endpoint);
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_address = PerAddress::new(limits.max_per_address, &limits.uncapped);
    tokio::pin!(shutdown);
    loop {
        let accept = async {
            let slot = Arc::clone(&slots).acquire_owned().await;
            (slot, listener.accept().await)
        };
        tokio::select! {
            () = &mut shutdown => break,
            (slot, accepted) = accept => match accepted {
                Ok((stream, remote)) => {
                    let Some(held) = per_address.enter(remote.ip()) else {
                        tracing::debug!(remote = %remote, "too many connections from one address");
                        continue;
                    };
                    let remote = RemoteAddr(Addr::SocketAddr(remote));
                    let served = connection(
                        stream,
                        local.clone(),
                        remote,
                        endpoint.clone(),
                        header_read,
                        stopping.clone(),
                    );
                    connections.spawn(async move {
                        served.await;
                        drop((held, slot));
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                }
            },
            Some(ended) = connections.join_next(), if !connections.is_empty() => {
                if let Err(error) = ended
                    && error.is_panic()
                {
                    tracing::error!(%error, "a connection's task panicked");
                }
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let drain = async { while connections.join_next().await.is_some() {} };
    match limits.shutdown_grace {
        Some(grace) => {
            if tokio::time::timeout(grace, drain).await.is_err() {
                tracing::warn!(
                    connections = connections.len(),
                    "requests still under way after the shutdown grace; dropping them"
                );
                connections.shutdown().await;
            }
        }
        None => drain.await,
    }
    Ok(())
}

/// Connections open per client address, capped.
#[derive(Clone)]
struct PerAddress {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    cap: usize,
    uncapped: Arc<[IpAddr]>,
}

/// A connection counted under its address until dropped.
struct Held {
    counts: PerAddress,
    key: Option<IpAddr>,
}

impl PerAddress {
    fn new(cap: usize, uncapped: &[IpAddr]) -> Self {
        Self {
            open: Arc::default(),
            cap: cap.max(1),
            uncapped: uncapped.iter().map(|ip| key(*ip)).collect(),
        }
    }

    /// Counts a connection from `ip`; `None` when its address has the most it may.
    fn enter(&self, ip: IpAddr) -> Option<Held> {
        let key = key(ip);
        if self.uncapped.contains(&key) {
            return Some(Held {
                counts: self.clone(),
                key: None,
            });
        }
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(key).or_default();
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(Held {
            counts: self.clone(),
            key: Some(key),
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(key) = self.key else { return };
        let mut open = self
            .counts
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&key);
            }
        }
    }
}

/// The address connections are counted under: IPv4 as it is (also when mapped into IPv6),
/// IPv6 by its /64, which one client usually holds whole.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// Serves one connection until the client closes it, breaks a bound, or the server stops
/// (then after the request under way, if any).
async fn connection(
    stream: TcpStream,
    local: LocalAddr,
    remote: RemoteAddr,
    endpoint: Arc<BoxEndpoint<'static>>,
    header_read: Duration,
    mut stopping: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn({
        let remote = remote.clone();
        move |req: hyper::Request<Incoming>| {
            let endpoint = endpoint.clone();
            let req = poem::Request::from((req, local.clone(), remote.clone(), Scheme::HTTP));
            async move {
                let resp: hyper::Response<_> = endpoint.get_response(req).await.into();
                Ok::<_, Infallible>(resp)
            }
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read)
        .keep_alive(true);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let stop = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    let served = tokio::select! {
        served = conn.as_mut() => served,
        () = stop => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(error) = served {
        tracing::debug!(remote = %remote.0, %error, "connection ended");
    }
}
