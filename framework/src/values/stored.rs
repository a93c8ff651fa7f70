//! Values as the database keeps them in JSON columns, read back leniently: what is not of
//! the expected shape is left out.

use std::collections::BTreeMap;

use serde_json::Value;

/// A JSON list of strings as stored.
pub fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A stored list of IDs; what is not a list, or not an integer in it, is left out.
pub fn id_list(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// A JSON object of strings as stored.
pub fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}
