//! What a user API token of the talk side may use: pretalx's endpoint names, the actions on
//! them, and a token's scopes as a map of the two.

use std::collections::BTreeMap;

/// Every endpoint a token can be scoped to, with pretalx's names.
pub const ENDPOINTS: [&str; 18] = [
    "teams",
    "events",
    "submissions",
    "speakers",
    "reviews",
    "feedback",
    "rooms",
    "questions",
    "question-options",
    "answers",
    "tags",
    "tracks",
    "schedules",
    "slots",
    "submission-types",
    "mail-templates",
    "access-codes",
    "speaker-information",
];

/// What a token may do on an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read a list.
    List,
    /// Read one object (and its activity log).
    Retrieve,
    /// Create.
    Create,
    /// Update, wholly or partly.
    Update,
    /// Delete.
    Destroy,
    /// Any other action (`accept`, `add-speaker`, ...).
    Actions,
}

impl Action {
    /// Every action, reads first.
    pub const ALL: [Action; 6] = [
        Action::List,
        Action::Retrieve,
        Action::Create,
        Action::Update,
        Action::Destroy,
        Action::Actions,
    ];

    /// The action's name in a token's scopes.
    pub fn name(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Retrieve => "retrieve",
            Action::Create => "create",
            Action::Update => "update",
            Action::Destroy => "destroy",
            Action::Actions => "actions",
        }
    }

    /// The action of that name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the action only reads.
    pub fn is_read(self) -> bool {
        matches!(self, Action::List | Action::Retrieve)
    }
}

/// The endpoints a token may use, and how: `{endpoint: [action, ...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints(pub BTreeMap<String, Vec<Action>>);

impl Endpoints {
    /// Every endpoint, reading only ("all read").
    pub fn all_read() -> Self {
        Self::every(&[Action::List, Action::Retrieve])
    }

    /// Every endpoint, every action ("all read-write").
    pub fn all_write() -> Self {
        Self::every(&Action::ALL)
    }

    fn every(actions: &[Action]) -> Self {
        Self(
            ENDPOINTS
                .iter()
                .map(|e| ((*e).to_owned(), actions.to_vec()))
                .collect(),
        )
    }

    /// Whether the token may use `action` on `endpoint`.
    pub fn allows(&self, endpoint: &str, action: Action) -> bool {
        self.0.get(endpoint).is_some_and(|a| a.contains(&action))
    }

    /// Whether the token may write anything (uploads need this).
    pub fn any_write(&self) -> bool {
        self.0.values().flatten().any(|a| !a.is_read())
    }

    /// Whether no endpoint is allowed at all.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }

    /// The stored form, `{endpoint: [action names]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.0
                .iter()
                .map(|(e, actions)| {
                    let names = actions.iter().map(|a| a.name().into()).collect();
                    (e.clone(), serde_json::Value::Array(names))
                })
                .collect(),
        )
    }

    /// Reads the stored form; unknown endpoints and actions are dropped.
    pub fn from_json(value: &serde_json::Value) -> Self {
        let mut map = BTreeMap::new();
        if let Some(obj) = value.as_object() {
            for (endpoint, actions) in obj {
                if !ENDPOINTS.contains(&endpoint.as_str()) {
                    continue;
                }
                let actions = actions
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().and_then(Action::from_name))
                    .collect();
                map.insert(endpoint.clone(), actions);
            }
        }
        Self(map)
    }
}

impl Endpoints {
    /// The same scopes with known endpoints only, each action once in [`Action::ALL`]'s
    /// order, and endpoints without actions left out.
    pub fn normalized(&self) -> Self {
        Self(
            self.0
                .iter()
                .filter(|(e, _)| ENDPOINTS.contains(&e.as_str()))
                .map(|(e, actions)| {
                    let kept: Vec<Action> = Action::ALL
                        .into_iter()
                        .filter(|a| actions.contains(a))
                        .collect();
                    (e.clone(), kept)
                })
                .filter(|(_, actions)| !actions.is_empty())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_tokens_allow_reading_only() {
        let read = Endpoints::all_read();
        assert!(read.allows("submissions", Action::List));
        assert!(!read.allows("submissions", Action::Create));
        assert!(!read.any_write());
        assert!(Endpoints::all_write().any_write());
        assert!(Endpoints::default().is_empty());
    }

    #[test]
    fn stored_scopes_read_back_without_unknown_names() {
        let stored = serde_json::json!({"submissions": ["list", "fly"], "nothing": ["list"]});
        let e = Endpoints::from_json(&stored);
        assert!(e.allows("submissions", Action::List));
        assert_eq!(e.0.len(), 1);
        assert_eq!(Endpoints::from_json(&e.to_json()), e);
    }
}
