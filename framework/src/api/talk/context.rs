//! What every talk-side answer is built with: the event as the caller sees it, the
//! language to flatten multi-language strings to, and the listing rules (`?q=`, `?o=`,
//! filters, pages) as one SQL statement per page.

use sea_orm::{ConnectionTrait, DatabaseConnection, DatabaseTransaction, Statement};
use serde_json::Value;

use crate::domain::talk::access::{Role, TalkEvent};
use crate::http::ApiError;
use crate::http::PageRequest;
use crate::state::AppState;

/// Where a context reads: the pool, or a write's own transaction (an answer built after a
/// write must be read in it, before it commits: see `db::unit_of_work`).
#[derive(Debug, Clone, Copy)]
pub enum Conn<'a> {
    /// The pool.
    Pool(&'a DatabaseConnection),
    /// A transaction under way.
    Txn(&'a DatabaseTransaction),
}

/// What a talk-side answer is built with.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// Where it reads.
    pub db: Conn<'a>,
    /// The event, as the caller sees it.
    pub ev: &'a TalkEvent,
    /// The language multi-language strings are flattened to, when `?lang=` names one of
    /// the event's languages.
    pub lang: Option<String>,
    /// The public base URL, for links to files.
    pub public_url: &'a str,
    /// How many expanded objects one answer may build (`?expand=`).
    pub expand_limit: usize,
}

impl<'a> Ctx<'a> {
    /// The context of a request for `?lang=`.
    pub async fn new(
        state: &'a AppState,
        ev: &'a TalkEvent,
        lang: Option<&str>,
    ) -> Result<Self, ApiError> {
        let lang = match lang {
            Some(l)
                if super::lang::event_locales(state, &ev.event)
                    .await?
                    .iter()
                    .any(|x| x == l) =>
            {
                Some(l.to_owned())
            }
            _ => None,
        };
        Ok(Self {
            db: Conn::Pool(&state.db),
            ev,
            lang,
            public_url: &state.public_url,
            expand_limit: state.config.expand_max_objects,
        })
    }

    /// The same context reading in a transaction under way.
    pub fn within(&self, txn: &'a DatabaseTransaction) -> Ctx<'a> {
        Ctx {
            db: Conn::Txn(txn),
            ev: self.ev,
            lang: self.lang.clone(),
            public_url: self.public_url,
            expand_limit: self.expand_limit,
        }
    }

    /// The event's ID.
    pub fn event_id(&self) -> i64 {
        self.ev.event.id
    }

    /// What the caller may do on the event.
    pub fn role(&self) -> &Role {
        &self.ev.role
    }

    /// A stored multi-language string as the request asks for it: the object of languages
    /// (never null), or with `?lang=` the string in that language (falling back to any).
    pub fn text(&self, stored: &Value) -> Value {
        super::lang::flatten(stored, self.lang.as_deref())
    }

    /// The absolute URL of a stored file, or null.
    pub fn file_url(&self, key: Option<&str>) -> Value {
        key.map_or(Value::Null, |k| {
            Value::String(crate::domain::files::url(self.public_url, k))
        })
    }

    /// Runs a query and gives its rows.
    pub async fn rows(
        &self,
        sql: &str,
        values: Vec<sea_orm::Value>,
    ) -> Result<Vec<sea_orm::QueryResult>, ApiError> {
        Ok(match self.db {
            Conn::Pool(db) => {
                db.query_all_raw(Statement::from_sql_and_values(
                    db.get_database_backend(),
                    sql,
                    values,
                ))
                .await?
            }
            Conn::Txn(txn) => {
                txn.query_all_raw(Statement::from_sql_and_values(
                    txn.get_database_backend(),
                    sql,
                    values,
                ))
                .await?
            }
        })
    }
}

/// A list query being built: the rows of one table alias, with conditions, a search and an
/// order. Placeholders are numbered as values are added.
#[derive(Debug, Clone)]
pub struct Listing {
    from: String,
    key: String,
    conditions: Vec<String>,
    values: Vec<sea_orm::Value>,
    order: String,
}

/// Characters of `?q=` read at most.
const MAX_SEARCH_LEN: usize = 200;

impl Listing {
    /// Rows of `from` (e.g. `talk_tracks t`), identified by `key` (e.g. `t.id`), of the
    /// event in `event_column` (e.g. `t.event_id`), ordered by `default_order` unless `?o=`
    /// says otherwise.
    pub fn new(
        from: &str,
        key: &str,
        event_column: &str,
        event_id: i64,
        default_order: &str,
    ) -> Self {
        let mut l = Self {
            from: from.to_owned(),
            key: key.to_owned(),
            conditions: Vec::new(),
            values: Vec::new(),
            order: default_order.to_owned(),
        };
        l.filter(&format!("{event_column} = {{}}"), event_id);
        l
    }

    /// Adds a condition; `{}` in it stands for the value's placeholder.
    pub fn filter(&mut self, condition: &str, value: impl Into<sea_orm::Value>) -> &mut Self {
        self.values.push(value.into());
        let placeholder = format!("${}", self.values.len());
        self.conditions.push(condition.replace("{}", &placeholder));
        self
    }

    /// Adds a condition without a value.
    pub fn condition(&mut self, condition: &str) -> &mut Self {
        self.conditions.push(condition.to_owned());
        self
    }

    /// Keeps rows whose column `column` is one of `values` (several values of a filter).
    pub fn one_of(&mut self, column: &str, values: &[String]) -> &mut Self {
        if values.is_empty() {
            return self;
        }
        let mut placeholders = Vec::new();
        for v in values {
            self.values.push(v.clone().into());
            placeholders.push(format!("${}", self.values.len()));
        }
        self.conditions
            .push(format!("{column} IN ({})", placeholders.join(", ")));
        self
    }

    /// `?q=`: keeps rows where any of the SQL expressions contains the text,
    /// case-insensitively.
    pub fn search(&mut self, q: Option<&str>, expressions: &[&str]) -> &mut Self {
        let Some(q) = q.map(str::trim).filter(|q| !q.is_empty()) else {
            return self;
        };
        self.values.push(like_pattern(q).into());
        let p = format!("${}", self.values.len());
        let any: Vec<String> = expressions
            .iter()
            .map(|e| format!("LOWER(CAST({e} AS TEXT)) LIKE {p} ESCAPE '\\'"))
            .collect();
        self.conditions.push(format!("({})", any.join(" OR ")));
        self
    }

    /// `?o=name` or `?o=-name` among `allowed` (name, SQL expression); anything else keeps
    /// the default order. The key breaks ties.
    pub fn order(&mut self, o: Option<&str>, allowed: &[(&str, &str)]) -> &mut Self {
        if let Some(o) = o {
            let (desc, name) = o.strip_prefix('-').map_or((false, o), |n| (true, n));
            if let Some((_, expr)) = allowed.iter().find(|(n, _)| *n == name) {
                self.order = format!("{expr}{}", if desc { " DESC" } else { "" });
            }
        }
        self
    }

    /// Counts the rows, resolves the page and gives its keys: two queries.
    pub async fn page(
        &self,
        db: &impl ConnectionTrait,
        request: &PageRequest,
    ) -> Result<(crate::http::pagination::Window, Vec<Value>), ApiError> {
        let wheres = self.conditions.join(" AND ");
        let backend = db.get_database_backend();
        let count_sql = format!("SELECT COUNT(*) AS n FROM {} WHERE {wheres}", self.from);
        let count: i64 = db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                &count_sql,
                self.values.clone(),
            ))
            .await?
            .map(|r| r.try_get("", "n"))
            .transpose()?
            .unwrap_or(0);
        let window = request.window(count.max(0) as u64)?;
        let n = self.values.len();
        let sql = format!(
            "SELECT {} AS k FROM {} WHERE {wheres} ORDER BY {}, {} LIMIT ${} OFFSET ${}",
            self.key,
            self.from,
            self.order,
            self.key,
            n + 1,
            n + 2
        );
        let mut values = self.values.clone();
        values.push((window.limit as i64).into());
        values.push((window.offset as i64).into());
        let rows = db
            .query_all_raw(Statement::from_sql_and_values(backend, &sql, values))
            .await?;
        let keys = rows
            .iter()
            .map(|r| {
                r.try_get::<i64>("", "k")
                    .map(Value::from)
                    .or_else(|_| r.try_get::<String>("", "k").map(Value::from))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((window, keys))
    }
}

/// A `LIKE` pattern finding `q` anywhere, case-insensitively (compare with `LOWER(...)`
/// and `ESCAPE '\\'`); at most [`MAX_SEARCH_LEN`] characters of `q` are read (the request
/// path refuses NUL characters: see [`crate::http::limits::nul_in_uri`]).
pub fn like_pattern(q: &str) -> String {
    let q: String = q.chars().take(MAX_SEARCH_LEN).collect();
    let escaped = q
        .to_lowercase()
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// `IN ($1, $2, ...)` for a list of keys, with the values.
pub fn keys_in(keys: &[Value]) -> (String, Vec<sea_orm::Value>) {
    let values: Vec<sea_orm::Value> = keys
        .iter()
        .map(|k| match k {
            Value::Number(n) => n.as_i64().unwrap_or_default().into(),
            other => other.as_str().unwrap_or_default().to_owned().into(),
        })
        .collect();
    let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("${i}")).collect();
    (format!("({})", placeholders.join(", ")), values)
}
