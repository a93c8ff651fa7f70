//! The process's metrics registry: request counters and latencies (recorded by `ops`) and
//! lock waits (recorded by `db` and `domain::availability`). It imports nothing of the
//! service, so the lowest layers can record into it; `ops` serves it.

use std::sync::LazyLock;
use std::time::Instant;

use prometheus::{Histogram, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

/// The process's counters and histograms.
pub(crate) struct Metrics {
    pub(crate) registry: Registry,
    pub(crate) requests: IntCounterVec,
    pub(crate) duration: HistogramVec,
    write_transaction: Histogram,
    quotas: Histogram,
}

pub(crate) static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

impl Metrics {
    fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by route template, method and status.",
            ),
            &["route", "method", "status"],
        )
        .expect("valid metric");
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from a request's arrival to its answer's head, by route template and method.",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0, 30.0,
            ]),
            &["route", "method"],
        )
        .expect("valid metric");
        let lock_wait = HistogramVec::new(
            HistogramOpts::new(
                "db_lock_wait_seconds",
                "Time spent waiting to start a write transaction (`write_transaction`: the pool \
                 and, on SQLite, the write lock) or to lock quota rows (`quotas`).",
            )
            .buckets(vec![
                0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0,
            ]),
            &["lock"],
        )
        .expect("valid metric");
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(duration.clone()),
            Box::new(lock_wait.clone()),
        ] {
            registry
                .register(collector)
                .expect("metric registered once");
        }
        Self {
            registry,
            write_transaction: lock_wait.with_label_values(&[Lock::WriteTransaction.label()]),
            quotas: lock_wait.with_label_values(&[Lock::Quotas.label()]),
            requests,
            duration,
        }
    }
}

/// A lock whose waits are measured in `db_lock_wait_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    /// Starting a write transaction ([`crate::db::begin_write`]).
    WriteTransaction,
    /// Locking quota rows ([`crate::domain::availability::lock_quotas`]).
    Quotas,
}

impl Lock {
    /// The value of the `lock` label.
    pub fn label(self) -> &'static str {
        match self {
            Lock::WriteTransaction => "write_transaction",
            Lock::Quotas => "quotas",
        }
    }
}

/// A wait for a lock, measured from [`LockWait::start`] until it is dropped: keep it in a
/// variable (`let _wait = ...`) for as long as the wait lasts.
#[must_use = "the wait is measured until the value is dropped"]
#[derive(Debug)]
pub struct LockWait {
    lock: Lock,
    started: Instant,
}

impl LockWait {
    /// Starts measuring a wait for `lock`.
    pub fn start(lock: Lock) -> Self {
        Self {
            lock,
            started: Instant::now(),
        }
    }
}

impl Drop for LockWait {
    fn drop(&mut self) {
        let histogram = match self.lock {
            Lock::WriteTransaction => &METRICS.write_transaction,
            Lock::Quotas => &METRICS.quotas,
        };
        histogram.observe(self.started.elapsed().as_secs_f64());
    }
}
