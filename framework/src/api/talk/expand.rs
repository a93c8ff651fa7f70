//! `?expand=a,b.c`: references (IDs or codes) replaced by the objects they name, several
//! fields and nested paths deep. Every kind of object knows how to load a set of its
//! objects at once ([`Kind::load`]), so an expanded field costs a constant number of
//! queries, whatever the number of rows.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::context::Ctx;
use crate::values::ApiError;

/// What [`Kind::load`] gives: the objects of the keys, in any order.
pub type Loaded<'a> = Pin<Box<dyn Future<Output = Result<Vec<Value>, ApiError>> + Send + 'a>>;

/// A kind of talk-side object, as far as expansion needs it.
pub struct Kind {
    /// Name, for messages.
    pub name: &'static str,
    /// The field that identifies an object (`id` or `code`).
    pub key: &'static str,
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

impl Expand {
    /// Parses `a,b.c` against the fields of `kind`; a child implies its parent, repeats are
    /// tolerated, an unknown field is 400.
    pub fn parse(text: Option<&str>, kind: &Kind) -> Result<Self, ApiError> {
        let mut tree = Expand::default();
        let text = text.unwrap_or_default();
        if text.len() > MAX_EXPAND_LEN {
            return Err(ApiError::field("expand", "Too many fields to expand."));
        }
        for path in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut node = &mut tree;
            let mut at = kind;
            for part in path.split('.') {
                at = at.field(part).ok_or_else(|| {
                    ApiError::field("expand", format!("Unknown field to expand: {path}"))
                })?;
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

/// Loads the objects of `keys` as `kind` and expands them as `expand` asks, in the order of
/// `keys` (keys the caller may not see are left out).
pub async fn load(
    ctx: &Ctx<'_>,
    kind: &'static Kind,
    keys: &[Value],
    expand: &Expand,
) -> Result<Vec<Value>, ApiError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut objects = (kind.load)(ctx, keys).await?;
    Box::pin(expand_in(ctx, kind, &mut objects, expand)).await?;
    let mut by_key: HashMap<String, Value> = objects
        .into_iter()
        .filter_map(|o| Some((key_of(o.get(kind.key)?)?, o)))
        .collect();
    Ok(keys
        .iter()
        .filter_map(|k| by_key.remove(&key_of(k)?))
        .collect())
}

/// Replaces, in each object, the references of every field of `expand` by their objects.
pub async fn expand_in(
    ctx: &Ctx<'_>,
    kind: &'static Kind,
    objects: &mut [Value],
    expand: &Expand,
) -> Result<(), ApiError> {
    for (field, inner) in &expand.0 {
        let Some(target) = kind.field(field) else {
            continue;
        };
        let mut keys: Vec<Value> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for o in objects.iter() {
            let refs = match o.get(field) {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(v) if !v.is_null() => vec![v],
                _ => Vec::new(),
            };
            for r in refs {
                if let Some(k) = key_of(r)
                    && seen.insert(k)
                {
                    keys.push(r.clone());
                }
            }
        }
        let loaded = Box::pin(load(ctx, target, &keys, inner)).await?;
        let by_key: HashMap<String, Value> = loaded
            .into_iter()
            .filter_map(|o| Some((key_of(o.get(target.key)?)?, o)))
            .collect();
        for o in objects.iter_mut() {
            let Some(slot) = o.get_mut(field) else {
                continue;
            };
            match slot {
                Value::Array(items) => {
                    *items = items
                        .iter()
                        .filter_map(|r| by_key.get(&key_of(r)?).cloned())
                        .collect();
                }
                v if !v.is_null() => {
                    *v = key_of(v)
                        .and_then(|k| by_key.get(&k).cloned())
                        .unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }
    Ok(())
}
