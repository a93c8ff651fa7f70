//! The table of path templates and their methods, read from the generated OpenAPI document,
//! so that 405 answers carry the right `Allow` header.
//! It also writes the spec's trailing-slash form of each path into the document.

use serde_json::Value;

/// Path prefixes the spec writes without a trailing slash.
const NO_TRAILING_SLASH: [&str; 6] = [
    "/api/v1/oauth/",
    "/api/v1/device/",
    "/api/v1/version",
    "/api/v1/me",
    "/api/v1/upload",
    "/api/v1/openapi",
];

/// Adds the trailing slash the spec writes to every path of the document that takes one.
pub fn add_trailing_slashes(spec: &mut Value) {
    let Some(Value::Object(paths)) = spec.get_mut("paths") else {
        return;
    };
    let old = std::mem::take(paths);
    for (path, item) in old {
        let keep = path.ends_with('/') || NO_TRAILING_SLASH.iter().any(|p| path.starts_with(p));
        paths.insert(if keep { path } else { format!("{path}/") }, item);
    }
}

/// One path template and the methods it answers.
#[derive(Debug, Clone)]
pub struct Route {
    /// The path as the document writes it, e.g. `/api/v1/organizers/{organizer}/`.
    pub template: String,
    segments: Vec<String>,
    /// Upper-case method names.
    pub methods: Vec<String>,
}

impl Route {
    fn matches(&self, segments: &[&str]) -> bool {
        self.segments.len() == segments.len()
            && self
                .segments
                .iter()
                .zip(segments)
                .all(|(t, s)| t.starts_with('{') || t == s)
    }
}

/// Every route of the API.
#[derive(Debug, Clone, Default)]
pub struct RouteTable(Vec<Route>);

fn split(path: &str) -> Vec<&str> {
    path.trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

impl RouteTable {
    /// Reads the table from an OpenAPI document.
    pub fn from_spec(spec: &Value) -> Self {
        let Some(Value::Object(paths)) = spec.get("paths") else {
            return Self::default();
        };
        Self(
            paths
                .iter()
                .map(|(path, item)| Route {
                    template: path.clone(),
                    segments: split(path).into_iter().map(str::to_owned).collect(),
                    methods: item
                        .as_object()
                        .map(|ops| ops.keys().map(|m| m.to_ascii_uppercase()).collect())
                        .unwrap_or_default(),
                })
                .collect(),
        )
    }

    /// The indexes of the request path's non-empty segments that its route names with a
    /// secret-bearing parameter ([`crate::logging::SECRET_PARAMETERS`]), for the log.
    pub fn secret_segments(&self, path: &str) -> Vec<usize> {
        self.find(path).map_or_else(Vec::new, |route| {
            route
                .segments
                .iter()
                .enumerate()
                .filter(|(_, s)| crate::logging::SECRET_PARAMETERS.contains(&s.as_str()))
                .map(|(i, _)| i)
                .collect()
        })
    }

    /// The route of a request path, preferring literal segments over parameters.
    pub fn find(&self, path: &str) -> Option<&Route> {
        let segments = split(path);
        self.0
            .iter()
            .filter(|r| r.matches(&segments))
            .max_by_key(|r| r.segments.iter().filter(|s| !s.starts_with('{')).count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literal_segments_win_over_parameters() {
        let spec = json!({"paths": {
            "/api/v1/organizers/{organizer}/giftcards/{id}": {"get": {}, "patch": {}},
            "/api/v1/organizers/{organizer}/giftcards/{id}/transact": {"post": {}},
        }});
        let table = RouteTable::from_spec(&spec);
        let r = table
            .find("/api/v1/organizers/o/giftcards/1/")
            .expect("route");
        assert_eq!(r.methods, vec!["GET", "PATCH"]);
        assert_eq!(
            table
                .find("/api/v1/organizers/o/giftcards/1/transact")
                .expect("route")
                .methods,
            vec!["POST"]
        );
        assert!(table.find("/api/v1/nothing").is_none());
    }

    #[test]
    fn paths_get_the_trailing_slash_the_spec_writes() {
        let mut spec = json!({"paths": {"/api/v1/organizers": {}, "/api/v1/oauth/token": {}}});
        add_trailing_slashes(&mut spec);
        let paths = spec["paths"].as_object().expect("paths");
        assert!(paths.contains_key("/api/v1/organizers/"));
        assert!(paths.contains_key("/api/v1/oauth/token"));
    }
}
