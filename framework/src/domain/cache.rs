//! What a process keeps of the configuration between requests: resolved callers, events,
//! an event's products and effective settings (what every order reads), and finished
//! answers of read-mostly lists (an event's items). Everything held is tagged
//! with the generation it was read in; any change of configuration moves the generation on,
//! and entries of older generations are never used again.
//!
//! Only a committed write to a configuration table moves it: the database counts such writes
//! itself (triggers on the tables listed in `tessera_migrations::CONFIG_TABLES` move a version
//! and, on PostgreSQL, `NOTIFY` every process when the transaction commits, naming the
//! table's schema). A process learns of a change it made when the request that made it has
//! answered (the middleware calls [`Cache::refresh`]), and of the others' changes on
//! PostgreSQL through `LISTEN` (while the listening connection is down nothing is cached,
//! and a change named for another schema is not counted) and on SQLite by the write-ahead log
//! changing (a `stat` call on every read of the generation, and the version read when it
//! changed). A refused request writes nothing, so it moves nothing.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

use serde_json::Value;

use crate::db::entities::event;

/// The PostgreSQL channel changes are announced on.
pub const CHANNEL: &str = "tessera_changes";

/// Callers or events kept before their map is emptied (a bound, not an eviction policy).
const MAX_ENTRIES: usize = 10_000;

/// Events whose products are kept before they are all forgotten: a catalogue is far larger
/// than an event.
const MAX_EVENTS: usize = 1_000;

/// Finished answers kept before they are all forgotten. Answers are far larger than callers
/// and events, and emptying their map leaves the other maps alone.
pub const MAX_ANSWERS: usize = 1_000;

/// Finished files (whole exports, far larger than list answers) kept before they are all
/// forgotten.
pub const MAX_FILES: usize = 64;

/// A value the cache keeps for its owner, of the owner's type: a caller, an event's products,
/// a finished file (see [`Cache::file`]) or any other value (see [`Cache::object`]). The cache
/// knows none of these types, so it stays below the rules that own them.
pub type Kept = Arc<dyn std::any::Any + Send + Sync>;

/// A map whose entries belong to a generation, emptied when it holds `max` entries.
struct Generational<K, V> {
    map: RwLock<HashMap<K, (u64, V)>>,
    max: usize,
}

impl<K: Eq + Hash, V: Clone> Generational<K, V> {
    fn new(max: usize) -> Self {
        Self {
            map: RwLock::new(HashMap::new()),
            max,
        }
    }

    fn get(&self, generation: u64, key: &K) -> Option<V> {
        let map = self.map.read().ok()?;
        map.get(key)
            .filter(|(g, _)| *g == generation)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `value` under `key`. A full map first forgets what older generations kept;
    /// when this generation's entries alone fill it, the value is not kept: what was kept
    /// first stays, so a flood of new keys cannot push out everyone else's.
    fn put(&self, generation: u64, key: K, value: V) {
        if let Ok(mut map) = self.map.write() {
            if map.len() >= self.max && !map.contains_key(&key) {
                map.retain(|_, (g, _)| *g == generation);
                if map.len() >= self.max {
                    return;
                }
            }
            map.insert(key, (generation, value));
        }
    }
}

impl<K: Eq + Hash> Generational<K, Kept> {
    /// The entry of `key` kept in `generation`, when it is of its owner's type `T`.
    fn get_as<T: std::any::Any + Send + Sync>(&self, generation: u64, key: &K) -> Option<Arc<T>> {
        self.get(generation, key)
            .and_then(|kept| kept.downcast::<T>().ok())
    }
}

/// The key a list answer for `scope` (say `items:<event ID>`) at `path_and_query` is kept
/// under, or `None` when it must not be kept, so that made-up parameters cannot fill the
/// cache: a query parameter that is not one of `known`, or one sent twice, a `page` or
/// `page_size` that is not written as the server writes numbers (`07`), a `page_size`
/// above `max_page_size` (answered as the largest page, so it would be a second key for
/// one answer), or a `lang` that is not one of `languages` (the event's) is answered
/// without the cache. Empty parameters
/// are left out; the others keep the order they were sent in, since the answer's page
/// links repeat them in that order.
pub fn answer_key(
    scope: &str,
    path_and_query: &str,
    known: &[&str],
    languages: &[String],
    max_page_size: u64,
) -> Option<String> {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    let mut seen: Vec<&str> = Vec::with_capacity(params.len());
    for p in &params {
        let (name, value) = p.split_once('=').unwrap_or((p, ""));
        let canonical = match name {
            "page" => value == "last" || is_plain_number(value),
            "page_size" => {
                is_plain_number(value) && value.parse::<u64>().is_ok_and(|n| n <= max_page_size)
            }
            "lang" => languages.iter().any(|l| l == value),
            _ => true,
        };
        if !known.contains(&name) || seen.contains(&name) || !canonical {
            return None;
        }
        seen.push(name);
    }
    Some(format!("{scope}:{path}?{}", params.join("&")))
}

/// Whether `text` is a positive number as the server writes it (no sign, no leading zero).
fn is_plain_number(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 19
        && !text.starts_with('0')
        && text.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the query of `path_and_query` has a `lang` parameter.
pub fn asks_for_language(path_and_query: &str) -> bool {
    path_and_query
        .split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|p| p.starts_with("lang=")))
}

/// When the SQLite write-ahead log was last seen changed, and its length then.
type WalState = (SystemTime, u64);

/// The per-process cache of configuration.
pub struct Cache {
    generation: AtomicU64,
    /// The database's configuration version when last read; -1 before the first read.
    version: AtomicI64,
    live: AtomicBool,
    wal: Option<(PathBuf, Mutex<Option<WalState>>)>,
    db: DatabaseConnection,
    callers: Generational<String, Kept>,
    events: Generational<(i64, String), event::Model>,
    products: Generational<i64, Kept>,
    settings: Generational<i64, Arc<EventSettings>>,
    answers: Generational<String, Arc<[u8]>>,
    files: Generational<String, Kept>,
    objects: Generational<String, Kept>,
}

/// An event's effective settings, by key.
pub type EventSettings = BTreeMap<&'static str, Value>;

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
            version: AtomicI64::new(-1),
            live: AtomicBool::new(backend == DbBackend::Sqlite && wal.is_some()),
            wal,
            db: db.clone(),
            callers: Generational::new(MAX_ENTRIES),
            events: Generational::new(MAX_ENTRIES),
            products: Generational::new(MAX_EVENTS),
            settings: Generational::new(MAX_ENTRIES),
            answers: Generational::new(MAX_ANSWERS),
            files: Generational::new(MAX_FILES),
            objects: Generational::new(MAX_ENTRIES),
        })
    }

    /// The current generation, or `None` while nothing may be cached.
    pub async fn generation(&self) -> Option<u64> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        // A request holding its transaction reads no more from the pool (see
        // `db::unit_of_work`); it goes on with the generation it began with.
        if !crate::db::unit_of_work::is_holding() && self.wal_changed() {
            self.refresh().await;
        }
        Some(self.generation.load(Ordering::Acquire))
    }

    /// The cache with its current generation, as the readers that keep what they read take
    /// it; `None` while nothing may be cached.
    pub async fn current(&self) -> Option<(&Self, u64)> {
        self.generation().await.map(|g| (self, g))
    }

    /// Whether the SQLite write-ahead log changed since the last look: another process (or
    /// this one) committed something, which may have been configuration.
    fn wal_changed(&self) -> bool {
        let Some((path, seen)) = &self.wal else {
            return false;
        };
        let now = std::fs::metadata(path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        let Ok(mut seen) = seen.lock() else {
            return true;
        };
        let changed = *seen != now;
        *seen = now;
        changed
    }

    /// Reads the database's configuration version and moves the generation on when it
    /// changed since the last read (or cannot be read): called once a write of this process
    /// has committed, so that its own next request sees the change.
    pub async fn refresh(&self) {
        let changed = match config_version(&self.db).await {
            Ok(version) => self.version.swap(version, Ordering::AcqRel) != version,
            Err(error) => {
                tracing::warn!(%error, "configuration version unreadable; cache emptied");
                true
            }
        };
        if changed {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// A caller resolved in this generation, by token hash, of its owner's type `T`.
    pub fn caller<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        token_hash: &str,
    ) -> Option<Arc<T>> {
        self.callers.get_as(generation, &token_hash.to_owned())
    }

    /// Keeps a caller resolved in `generation`.
    pub fn keep_caller<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        token_hash: String,
        caller: Arc<T>,
    ) {
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

    /// An event's products, loaded in this generation, of their owner's type `T`.
    pub fn products<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        event_id: i64,
    ) -> Option<Arc<T>> {
        self.products.get_as(generation, &event_id)
    }

    /// Keeps an event's products loaded in `generation`.
    pub fn keep_products<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        event_id: i64,
        products: Arc<T>,
    ) {
        self.products.put(generation, event_id, products);
    }

    /// An event's effective settings, resolved in this generation.
    pub fn settings(&self, generation: u64, event_id: i64) -> Option<Arc<EventSettings>> {
        self.settings.get(generation, &event_id)
    }

    /// Keeps an event's effective settings resolved in `generation`.
    pub fn keep_settings(&self, generation: u64, event_id: i64, settings: Arc<EventSettings>) {
        self.settings.put(generation, event_id, settings);
    }

    /// A finished JSON answer made in this generation.
    pub fn answer(&self, generation: u64, key: &str) -> Option<Arc<[u8]>> {
        self.answers.get(generation, &key.to_owned())
    }

    /// How many finished answers the process holds, of any generation.
    pub fn answers_held(&self) -> usize {
        self.answers.map.read().map_or(0, |map| map.len())
    }

    /// Keeps a finished JSON answer made in `generation`.
    pub fn keep_answer(&self, generation: u64, key: String, body: Arc<[u8]>) {
        self.answers.put(generation, key, body);
    }

    /// A finished file made in this generation, as its owner kept it (the owner downcasts
    /// it to its own type).
    pub fn file(&self, generation: u64, key: &str) -> Option<Kept> {
        self.files.get(generation, &key.to_owned())
    }

    /// Keeps a finished file made in `generation`.
    pub fn keep_file(&self, generation: u64, key: String, file: Kept) {
        self.files.put(generation, key, file);
    }

    /// A value its owner kept in this generation under `key`, of the owner's type `T`.
    pub fn object<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        key: &str,
    ) -> Option<Arc<T>> {
        self.objects.get_as(generation, &key.to_owned())
    }

    /// Keeps a small value read in `generation` under `key` (a key names its owner first,
    /// say `webhooks:<organizer ID>`).
    pub fn keep_object<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        key: String,
        value: Arc<T>,
    ) {
        self.objects.put(generation, key, value);
    }

    /// On PostgreSQL, listens for changes announced by other processes for as long as the
    /// process runs, reconnecting when the connection drops; caching is off while it is down.
    pub fn listen(self: &Arc<Self>, url: &str) {
        if self.db.get_database_backend() != DbBackend::Postgres {
            return;
        }
        let cache = Arc::clone(self);
        let url = url.to_owned();
        tokio::spawn(async move {
            use sea_orm::sqlx::postgres::PgListener;
            loop {
                match PgListener::connect(&url).await {
                    Ok(mut listener) => {
                        let schema = current_schema(&cache.db).await;
                        if let (Some(schema), Ok(())) = (schema, listener.listen(CHANNEL).await) {
                            // Whatever happened while nobody listened is unknown.
                            cache.generation.fetch_add(1, Ordering::AcqRel);
                            cache.live.store(true, Ordering::Release);
                            while let Ok(Some(change)) = listener.try_recv().await {
                                // Another schema in the same database is another house.
                                if change.payload() == schema || change.payload().is_empty() {
                                    cache.generation.fetch_add(1, Ordering::AcqRel);
                                }
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

/// The schema this process's tables live in (where the configuration version it reads is,
/// whatever else `search_path` names): a change announced with another schema's name
/// (migration m0026) is another house's.
async fn current_schema(db: &DatabaseConnection) -> Option<String> {
    let sql = Statement::from_string(
        DbBackend::Postgres,
        "SELECT n.nspname AS s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.oid = 'config_version'::regclass",
    );
    match db.query_one_raw(sql).await {
        Ok(row) => row.and_then(|r| r.try_get::<String>("", "s").ok()),
        Err(e) => {
            tracing::warn!(error = %e, "cannot tell the schema changes are announced for");
            None
        }
    }
}

/// The configuration version the database's triggers keep (see the module documentation).
async fn config_version(db: &DatabaseConnection) -> Result<i64, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => "SELECT last_value AS version FROM config_version",
        _ => "SELECT version FROM config_version WHERE id = 1",
    };
    let row = db
        .query_one_raw(Statement::from_string(backend, sql))
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound("config_version".into()))?;
    row.try_get("", "version")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 4] = ["page", "page_size", "active", "lang"];

    fn languages() -> Vec<String> {
        vec!["de".into(), "en".into()]
    }

    #[test]
    fn known_parameters_make_a_key_in_the_order_sent() {
        let key = |uri| answer_key("items:1", uri, &KNOWN, &languages(), 50);
        assert_eq!(key("/items/").as_deref(), Some("items:1:/items/?"));
        assert_eq!(
            key("/items/?active=true&&page=2").as_deref(),
            Some("items:1:/items/?active=true&page=2")
        );
        assert_ne!(key("/items/?lang=de"), key("/items/?lang=en"));
    }

    #[test]
    fn only_the_events_languages_and_numbers_written_plainly_make_keys() {
        let key = |uri| answer_key("items:1", uri, &KNOWN, &languages(), 50);
        assert!(key("/items/?lang=de&page=2&page_size=10").is_some());
        assert!(key("/items/?page=last").is_some());
        for made_up in [
            "/items/?lang=xx",
            "/items/?lang=",
            "/items/?page=02",
            "/items/?page_size=010",
            "/items/?page=-1",
            "/items/?page_size=1e1",
            "/items/?page_size=51",
        ] {
            assert_eq!(key(made_up), None, "{made_up}");
        }
    }

    #[test]
    fn unknown_or_repeated_parameters_are_not_kept() {
        let key = |uri| answer_key("items:1", uri, &KNOWN, &languages(), 50);
        assert_eq!(key("/items/?nonce=1"), None);
        assert_eq!(key("/items/?active=true&x"), None);
        assert_eq!(key("/items/?page=1&page=2"), None);
        assert_eq!(key("/items/?act%69ve=true"), None);
    }

    #[test]
    fn a_full_map_forgets_older_generations_and_otherwise_keeps_what_it_has() {
        let answers: Generational<String, u8> = Generational::new(3);
        let callers: Generational<String, u8> = Generational::new(3);
        callers.put(1, "caller".into(), 1);
        for k in ["a", "b", "c"] {
            answers.put(1, k.into(), 0);
        }
        answers.put(1, "c".into(), 2);
        assert_eq!(
            answers.get(1, &"a".into()),
            Some(0),
            "replacing is not growing"
        );
        answers.put(1, "d".into(), 3);
        assert_eq!(answers.get(1, &"d".into()), None, "full of this generation");
        assert_eq!(answers.get(1, &"a".into()), Some(0), "what was kept stays");
        answers.put(2, "d".into(), 3);
        assert_eq!(
            answers.get(2, &"d".into()),
            Some(3),
            "a new generation makes room"
        );
        assert_eq!(answers.get(1, &"a".into()), None);
        assert_eq!(callers.get(1, &"caller".into()), Some(1));
    }
}
