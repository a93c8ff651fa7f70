//! `?expand=a,b.c`: references (IDs or codes) replaced by the objects they name, several
//! fields and nested paths deep. Every kind of object knows how to load a set of its
//! objects at once ([`Kind::load`]), so an expanded field costs a constant number of
//! queries, whatever the number of rows.
//!
//! Expansion is bounded three ways, since each level multiplies the answer: a path is at
//! most [`MAX_DEPTH`] fields long (as deep as pretalx documents), never leads back to a kind
//! of object already on it (`speakers.submissions` from a submission), and one answer
//! builds at most the caller's budget of expanded objects (each copy of an object placed
//! into another counts, with everything expanded inside it); beyond it the request is 400
//! before the answer grows. A token limited to some endpoints expands only the kinds of
//! those endpoints.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use poem::Request;

use super::context::{Conn, Ctx, Listing};
use super::shape::Shaped;
use crate::http::ApiError;
use crate::http::{Page, PageRequest};

/// What [`Kind::load`] gives: the objects of the keys, in any order.
pub type Loaded<'a> = Pin<Box<dyn Future<Output = Result<Vec<Value>, ApiError>> + Send + 'a>>;

/// A kind of talk-side object, as far as expansion needs it.
pub struct Kind {
    /// Name, for messages.
    pub name: &'static str,
    /// The field that identifies an object (`id` or `code`).
    pub key: &'static str,
    /// The endpoint a token must be allowed to read for these objects to be expanded.
    pub endpoint: &'static str,
    /// Loads the objects with these keys, unexpanded, as the caller may see them; keys the
    /// caller may not see are left out.
    pub load: for<'a> fn(&'a Ctx<'a>, &'a [Value]) -> Loaded<'a>,
    /// The fields that can be expanded, and the kind of object each names.
    pub fields: &'static [(&'static str, &'static Kind)],
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("name", &self.name).finish()
    }
}

impl Kind {
    fn field(&self, name: &str) -> Option<&'static Kind> {
        self.fields
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, k)| *k)
    }
}

/// The parsed `?expand=`: each field with the fields to expand inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expand(BTreeMap<String, Expand>);

/// At most this many characters of `?expand=` are read.
const MAX_EXPAND_LEN: usize = 1000;

/// The longest path of fields expanded inside each other (`slots.submission.speakers`).
pub const MAX_DEPTH: usize = 3;

impl Expand {
    /// Parses `a,b.c` against the fields of `kind`; a child implies its parent, repeats are
    /// tolerated; an unknown field, a path longer than [`MAX_DEPTH`] or one that leads back
    /// to a kind already on it is 400.
    pub fn parse(text: Option<&str>, kind: &Kind) -> Result<Self, ApiError> {
        let mut tree = Expand::default();
        let text = text.unwrap_or_default();
        if text.len() > MAX_EXPAND_LEN {
            return Err(ApiError::field("expand", "Too many fields to expand."));
        }
        let refuse = |message: String| ApiError::field("expand", message);
        for path in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut node = &mut tree;
            let mut at = kind;
            let mut on_path = vec![kind.name];
            for part in path.split('.') {
                if on_path.len() > MAX_DEPTH {
                    return Err(refuse(format!(
                        "Fields can be expanded at most {MAX_DEPTH} levels deep: {path}"
                    )));
                }
                at = at
                    .field(part)
                    .ok_or_else(|| refuse(format!("Unknown field to expand: {path}")))?;
                if on_path.contains(&at.name) {
                    return Err(refuse(format!(
                        "{path} leads back to a {} already expanded on that path.",
                        at.name
                    )));
                }
                on_path.push(at.name);
                node = node.0.entry(part.to_owned()).or_default();
            }
        }
        Ok(tree)
    }

    /// Whether nothing is to be expanded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `field` is to be expanded.
    pub fn has(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }
}

/// The string a key compares by.
fn key_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// How many more expanded objects an answer may build.
struct Budget(usize);

impl Budget {
    /// Takes `n` objects from the budget; 400 when it has fewer.
    fn take(&mut self, n: usize) -> Result<(), ApiError> {
        self.0 = self.0.checked_sub(n).ok_or_else(|| {
            ApiError::field(
                "expand",
                "This expansion would answer too many objects: expand fewer fields or ask \
                 for a smaller page.",
            )
        })?;
        Ok(())
    }
}

/// Loads the objects of `keys` as `kind` and expands them as `expand` asks, in the order of
/// `keys` (keys the caller may not see are left out).
pub async fn load(
    ctx: &Ctx<'_>,
    kind: &'static Kind,
    keys: &[Value],
    expand: &Expand,
) -> Result<Vec<Value>, ApiError> {
    let mut budget = Budget(ctx.expand_limit);
    let loaded = load_within(ctx, kind, keys, expand, &mut budget).await?;
    Ok(loaded.into_iter().map(|(object, _)| object).collect())
}

/// [`load`] within a budget: each object with its weight, the number of objects it is
/// built of (itself and every expanded object inside it).
async fn load_within(
    ctx: &Ctx<'_>,
    kind: &'static Kind,
    keys: &[Value],
    expand: &Expand,
    budget: &mut Budget,
) -> Result<Vec<(Value, usize)>, ApiError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut objects = (kind.load)(ctx, keys).await?;
    let weights = Box::pin(expand_in(ctx, kind, &mut objects, expand, budget)).await?;
    let mut by_key: HashMap<String, (Value, usize)> = objects
        .into_iter()
        .zip(weights)
        .filter_map(|(o, w)| Some((key_of(o.get(kind.key)?)?, (o, w))))
        .collect();
    Ok(keys
        .iter()
        .filter_map(|k| by_key.remove(&key_of(k)?))
        .collect())
}

/// Replaces, in each object, the references of every field of `expand` by their objects;
/// each object is loaded once and copied where it is named, each copy paid for from the
/// budget with its weight. Gives each object's weight.
async fn expand_in(
    ctx: &Ctx<'_>,
    kind: &'static Kind,
    objects: &mut [Value],
    expand: &Expand,
    budget: &mut Budget,
) -> Result<Vec<usize>, ApiError> {
    let mut weights = vec![1; objects.len()];
    for (field, inner) in &expand.0 {
        let Some(target) = kind.field(field) else {
            continue;
        };
        if !ctx.ev.caller.may_read(target.endpoint) {
            return Err(ApiError::forbidden_because(format!(
                "This token may not read {}, which the expansion of {field} needs.",
                target.endpoint
            )));
        }
        let mut keys: Vec<Value> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut placed = 0;
        for o in objects.iter() {
            let refs = match o.get(field) {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(v) if !v.is_null() => vec![v],
                _ => Vec::new(),
            };
            placed += refs.len();
            for r in refs {
                if let Some(k) = key_of(r)
                    && seen.insert(k)
                {
                    keys.push(r.clone());
                }
            }
        }
        // Every copy costs at least its object: refuse before loading what cannot fit.
        budget.take(placed)?;
        let loaded = Box::pin(load_within(ctx, target, &keys, inner, budget)).await?;
        let by_key: HashMap<String, (Value, usize)> = loaded
            .into_iter()
            .filter_map(|(o, w)| Some((key_of(o.get(target.key)?)?, (o, w))))
            .collect();
        let mut copy = |r: &Value, weight: &mut usize| -> Result<Option<Value>, ApiError> {
            let Some((object, w)) = key_of(r).and_then(|k| by_key.get(&k)) else {
                return Ok(None);
            };
            budget.take(w - 1)?;
            *weight += w;
            Ok(Some(object.clone()))
        };
        for (o, weight) in objects.iter_mut().zip(weights.iter_mut()) {
            let Some(slot) = o.get_mut(field) else {
                continue;
            };
            match slot {
                Value::Array(items) => {
                    let mut expanded = Vec::with_capacity(items.len());
                    for r in items.iter() {
                        expanded.extend(copy(r, weight)?);
                    }
                    *items = expanded;
                }
                v if !v.is_null() => *v = copy(v, weight)?.unwrap_or(Value::Null),
                _ => {}
            }
        }
    }
    Ok(weights)
}

impl Ctx<'_> {
    /// Loads objects of `kind` by key, expanded as asked.
    pub async fn load(
        &self,
        kind: &'static Kind,
        keys: &[Value],
        expand: &Expand,
    ) -> Result<Vec<Value>, ApiError> {
        load(self, kind, keys, expand).await
    }

    /// One object of `kind` by key, expanded as asked; 404 when the caller may not see it.
    pub async fn one<T>(
        &self,
        kind: &'static Kind,
        key: Value,
        expand: &Expand,
    ) -> Result<Shaped<T>, ApiError> {
        self.load(kind, &[key], expand)
            .await?
            .pop()
            .map(Shaped::new)
            .ok_or_else(|| crate::domain::talk::access::not_found().into())
    }
}

impl Listing {
    /// The page of objects of `kind` this listing selects, expanded as asked.
    pub async fn fetch<T>(
        &self,
        ctx: &Ctx<'_>,
        kind: &'static Kind,
        req: &Request,
        page: Option<String>,
        page_size: Option<u64>,
        expand: &Expand,
    ) -> Result<Page<Shaped<T>>, ApiError> {
        let request = PageRequest::new(req, ctx.public_url, page, page_size);
        let (window, keys) = match ctx.db {
            Conn::Pool(db) => self.page(db, &request).await?,
            Conn::Txn(txn) => self.page(txn, &request).await?,
        };
        let objects = ctx.load(kind, &keys, expand).await?;
        Ok(window.page(objects.into_iter().map(Shaped::new).collect()))
    }
}
