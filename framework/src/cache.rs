//! What a process keeps of the configuration between requests: resolved callers, events,
//! and finished answers of read-mostly lists (an event's items). Everything held is tagged
//! with the generation it was read in; any change of configuration moves the generation on,
//! and entries of older generations are never used again.
//!
//! A change is noticed at once in the process that made it (every mutating request, see the
//! middleware), and in the others: on PostgreSQL through `LISTEN`/`NOTIFY` (while the
//! listening connection is down nothing is cached), on SQLite by the write-ahead log changing
//! (checked on every read of the generation, a `stat` call).

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

use crate::db::entities::event;
use crate::http::auth::Caller;

/// The PostgreSQL channel changes are announced on.
pub const CHANNEL: &str = "tessera_changes";

/// Entries per map before it is emptied (a bound, not an eviction policy).
const MAX_ENTRIES: usize = 10_000;

/// A map whose entries belong to a generation.
struct Generational<K, V>(RwLock<HashMap<K, (u64, V)>>);

impl<K: Eq + Hash, V: Clone> Generational<K, V> {
    fn new() -> Self {
        Self(RwLock::new(HashMap::new()))
    }

    fn get(&self, generation: u64, key: &K) -> Option<V> {
        let map = self.0.read().ok()?;
        map.get(key)
            .filter(|(g, _)| *g == generation)
            .map(|(_, v)| v.clone())
    }

    fn put(&self, generation: u64, key: K, value: V) {
        if let Ok(mut map) = self.0.write() {
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(key, (generation, value));
        }
    }
}

/// When the SQLite write-ahead log was last seen changed, and its length then.
type WalState = (SystemTime, u64);

/// The per-process cache of configuration.
pub struct Cache {
    generation: AtomicU64,
    live: AtomicBool,
    wal: Option<(PathBuf, Mutex<Option<WalState>>)>,
    notify: Option<DatabaseConnection>,
    callers: Generational<String, Caller>,
    events: Generational<(i64, String), event::Model>,
    answers: Generational<String, Arc<[u8]>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("generation", &self.generation)
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl Cache {
    /// A cache for a process using `db`, opened from `url`. On PostgreSQL it stays off until
    /// [`Cache::listen`] has connected.
    pub fn new(db: &DatabaseConnection, url: &str) -> Arc<Self> {
        let backend = db.get_database_backend();
        let wal = crate::db::sqlite_path(url)
            .map(|path| (PathBuf::from(format!("{path}-wal")), Mutex::new(None)));
        Arc::new(Self {
            generation: AtomicU64::new(1),
            live: AtomicBool::new(backend == DbBackend::Sqlite && wal.is_some()),
            wal,
            notify: (backend == DbBackend::Postgres).then(|| db.clone()),
            callers: Generational::new(),
            events: Generational::new(),
            answers: Generational::new(),
        })
    }

    /// The current generation, or `None` while nothing may be cached.
    pub fn generation(&self) -> Option<u64> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        if let Some((path, seen)) = &self.wal {
            let now = std::fs::metadata(path)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
            let mut seen = seen.lock().ok()?;
            if *seen != now {
                *seen = now;
                self.generation.fetch_add(1, Ordering::AcqRel);
            }
        }
        Some(self.generation.load(Ordering::Acquire))
    }

    /// Forgets everything held: the configuration changed in this process. On PostgreSQL the
    /// other processes are told before this returns.
    pub async fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        if let Some(db) = &self.notify
            && let Err(e) = announce(db).await
        {
            tracing::warn!(error = %e, "could not announce a change to other processes");
        }
    }

    /// A caller resolved in this generation, by token hash.
    pub fn caller(&self, generation: u64, token_hash: &str) -> Option<Caller> {
        self.callers.get(generation, &token_hash.to_owned())
    }

    /// Keeps a caller resolved in `generation`.
    pub fn keep_caller(&self, generation: u64, token_hash: String, caller: Caller) {
        self.callers.put(generation, token_hash, caller);
    }

    /// An event read in this generation, by organizer and slug.
    pub fn event(&self, generation: u64, organizer_id: i64, slug: &str) -> Option<event::Model> {
        self.events
            .get(generation, &(organizer_id, slug.to_owned()))
    }

    /// Keeps an event read in `generation`.
    pub fn keep_event(&self, generation: u64, ev: event::Model) {
        self.events
            .put(generation, (ev.organizer_id, ev.slug.clone()), ev);
    }

    /// A finished JSON answer made in this generation.
    pub fn answer(&self, generation: u64, key: &str) -> Option<Arc<[u8]>> {
        self.answers.get(generation, &key.to_owned())
    }

    /// Keeps a finished JSON answer made in `generation`.
    pub fn keep_answer(&self, generation: u64, key: String, body: Arc<[u8]>) {
        self.answers.put(generation, key, body);
    }

    /// On PostgreSQL, listens for changes announced by other processes for as long as the
    /// process runs, reconnecting when the connection drops; caching is off while it is down.
    pub fn listen(self: &Arc<Self>, url: &str) {
        if self.notify.is_none() {
            return;
        }
        let cache = Arc::clone(self);
        let url = url.to_owned();
        tokio::spawn(async move {
            use sea_orm::sqlx::postgres::PgListener;
            loop {
                match PgListener::connect(&url).await {
                    Ok(mut listener) => {
                        if listener.listen(CHANNEL).await.is_ok() {
                            // Whatever happened while nobody listened is unknown.
                            cache.generation.fetch_add(1, Ordering::AcqRel);
                            cache.live.store(true, Ordering::Release);
                            while listener.try_recv().await.ok().flatten().is_some() {
                                cache.generation.fetch_add(1, Ordering::AcqRel);
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot listen for changes"),
                }
                cache.live.store(false, Ordering::Release);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

/// Tells other processes sharing a PostgreSQL database that the configuration changed
/// (for tools that write to the database outside a server, and for servers).
pub async fn announce(db: &DatabaseConnection) -> Result<(), sea_orm::DbErr> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    db.execute_raw(Statement::from_string(
        DbBackend::Postgres,
        format!("NOTIFY {CHANNEL}"),
    ))
    .await
    .map(|_| ())
}
