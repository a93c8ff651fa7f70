//! Field errors in the spec's shape `{"field": ["message"]}`, collected before a request is
//! refused with all of them at once. The rules refuse with them (`domain::refusal`); the
//! HTTP edge answers them with 400 (`http::error`).

use serde_json::{Map, Value};

impl std::fmt::Display for FieldErrors {
    /// The errors as the spec's JSON body.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", Value::Object(self.0.clone()))
    }
}

/// Field errors collected before answering 400 with all of them at once.
#[derive(Debug, Default, Clone)]
pub struct FieldErrors(Map<String, Value>);

impl FieldErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message for a field.
    pub fn add(mut self, field: &str, message: impl Into<String>) -> Self {
        self.push(field, message);
        self
    }

    /// Adds a message for a field, in place.
    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        let entry = self
            .0
            .entry(field.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            list.push(Value::String(message.into()));
        }
    }

    /// Adds the errors of a list field entry by entry, as `{"field": [{...}, {}, ...]}` (an
    /// empty object for each entry without errors).
    pub fn push_entries(&mut self, field: &str, entries: Vec<FieldErrors>) {
        let list = entries.into_iter().map(|e| Value::Object(e.0)).collect();
        self.0.insert(field.to_owned(), Value::Array(list));
    }

    /// Ok when `invalid` (field, message pairs, as the domain reports them) is empty, else
    /// the errors naming each field.
    pub fn check(invalid: Vec<(&str, String)>) -> Result<(), FieldErrors> {
        invalid
            .into_iter()
            .fold(Self::new(), |errors, (field, message)| {
                errors.add(field, message)
            })
            .into_result()
    }

    /// True when no message was added.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Ok when there are none, else the errors.
    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }

    /// The errors as the spec's body: `{"field": ["message", ...]}`.
    pub fn into_body(self) -> Map<String, Value> {
        self.0
    }
}
