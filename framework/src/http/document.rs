//! The last step of building the OpenAPI document: what every operation can answer because
//! of the shared request path (`http::middleware`, `http::body`, `http::limits`) rather than
//! its own code, and the bounds of integer formats, written into every operation and schema
//! alike so that the document says exactly what the server does.
//!
//! Which error statuses apply follows from the operation's shape in the document:
//!
//! | Status | Operations |
//! |---|---|
//! | 400 | with a request body, query or header parameters, or writes with API credentials (`X-Idempotency-Key`) |
//! | 401 | with API credentials (a token in the `Authorization` header) |
//! | 403 | with API credentials, or path parameters (one that cannot be an ID names nothing) |
//! | 404 | paginated lists (a page beyond the last), or path parameters (an encoded NUL names nothing) |
//! | 408, 413 | with a request body |
//! | 409 | writes with API credentials (the same `X-Idempotency-Key` still under way) |
//! | 415 | with a request body in another media type than a form |
//! | 414, 429, 431, 500 | every operation |
//!
//! Error answers an operation documents in a shape of its own (OAuth's errors, HTML pages)
//! stay as they are; the spec's shapes are one shared response each under
//! `components/responses`.

use serde_json::{Map, Value, json};

use super::body::{MAX_KEY_CHARS, Refused, integer_bounds};
use super::error::{describe, error_schema};

/// Statuses answered by the shared request path, each documented once under
/// `components/responses` with this name.
const SHARED: [(u16, &str); 12] = [
    (400, "BadRequest"),
    (401, "Unauthorized"),
    (403, "Forbidden"),
    (404, "NotFound"),
    (408, "RequestTimeout"),
    (409, "Conflict"),
    (413, "PayloadTooLarge"),
    (414, "UriTooLong"),
    (415, "UnsupportedMediaType"),
    (429, "TooManyRequests"),
    (431, "HeadersTooLarge"),
    (500, "ServerError"),
];

/// Writes the shared error answers into every operation and the integer bounds into every
/// schema of `doc`.
pub fn complete(doc: &mut Value) {
    exact_schemas(doc);
    let api_schemes = api_credential_schemes(doc);
    let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut) else {
        return;
    };
    let responses = components
        .entry("responses")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(responses) = responses {
        for (status, name) in SHARED {
            responses.insert(name.to_owned(), shared_response(status));
        }
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let talk = crate::http::auth::is_talk_path(path.trim_end_matches('/'));
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if let Some(op) = op.as_object_mut() {
                if talk {
                    talk_side(op);
                }
                add_error_answers(method, op, &api_schemes);
            }
        }
    }
}

/// A talk-side operation also answers anonymous requests (with public data, or 401), and
/// takes the version headers.
fn talk_side(op: &mut Map<String, Value>) {
    if let Some(Value::Array(alternatives)) = op.get_mut("security") {
        alternatives.insert(0, json!({}));
    }
    let params = op
        .entry("parameters")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(params) = params {
        for name in ["service-Version", "Pretalx-Version"] {
            params.push(json!({
                "name": name,
                "in": "header",
                "required": false,
                "description": "The talk-side API version for this request only (`v2`, the \
                    current one, or `v1`, deprecated), instead of the token's. \
                    `Pretalx-Version` is a synonym. An unknown version is 400.",
                "schema": {"type": "string", "enum": ["v1", "v2"]},
            }));
        }
    }
}

/// The shared response of a status: its description, the spec's body shape and the headers
/// that come with it.
fn shared_response(status: u16) -> Value {
    let schema = match error_schema(status) {
        poem_openapi::registry::MetaSchemaRef::Reference(name) => {
            json!({ "$ref": format!("#/components/schemas/{name}") })
        }
        poem_openapi::registry::MetaSchemaRef::Inline(_) => json!({ "type": "object" }),
    };
    let mut response = json!({
        "description": describe(status),
        "content": { "application/json": { "schema": schema } },
    });
    let header = |description: &str, schema: Value| json!({ "description": description, "required": true, "schema": schema });
    let headers = match status {
        401 => Some((
            "WWW-Authenticate",
            header(
                "The scheme to authenticate with",
                json!({ "type": "string" }),
            ),
        )),
        429 => Some((
            "Retry-After",
            header(
                "Seconds to wait before trying again",
                json!({ "type": "integer", "minimum": 0 }),
            ),
        )),
        _ => None,
    };
    if let Some((name, header)) = headers {
        response["headers"] = json!({ name: header });
    }
    response
}

/// The security schemes whose credentials the shared request path resolves (a token in the
/// `Authorization` header: API tokens and OAuth access tokens), refused with the spec's 401.
fn api_credential_schemes(doc: &Value) -> Vec<String> {
    let Some(schemes) = doc
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    schemes
        .iter()
        .filter(|(_, s)| {
            let field = |name: &str| s.get(name).and_then(Value::as_str);
            (field("type") == Some("apiKey") && field("in") == Some("header"))
                || (field("type") == Some("http") && field("scheme") == Some("bearer"))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether a documented response is one of the shared ones: a JSON body in the spec's shapes.
fn is_shared_shape(response: &Value) -> bool {
    let shared = SHARED.map(|(status, _)| match error_schema(status) {
        poem_openapi::registry::MetaSchemaRef::Reference(name) => {
            format!("#/components/schemas/{name}")
        }
        poem_openapi::registry::MetaSchemaRef::Inline(_) => String::new(),
    });
    response.get("$ref").is_some()
        || response
            .pointer("/content/application~1json/schema/$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| shared.iter().any(|s| s == r))
}

/// The error statuses the shared request path can answer for an operation (see the module's
/// table).
fn shared_statuses(method: &str, op: &Map<String, Value>, api_schemes: &[String]) -> Vec<u16> {
    let params = op
        .get("parameters")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let param_in = |place: &str| {
        params
            .iter()
            .any(|p| p.get("in").and_then(Value::as_str) == Some(place))
    };
    let paginated = params.iter().any(|p| {
        p.get("in").and_then(Value::as_str) == Some("query")
            && p.get("name").and_then(Value::as_str) == Some("page")
    });
    let body_types: Vec<&str> = op
        .get("requestBody")
        .and_then(|b| b.get("content"))
        .and_then(Value::as_object)
        .map(|c| c.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let has_body = !body_types.is_empty();
    let api_credentials =
        op.get("security")
            .and_then(Value::as_array)
            .is_some_and(|alternatives| {
                alternatives
                    .iter()
                    .filter_map(Value::as_object)
                    .any(|a| a.keys().any(|k| api_schemes.contains(k)))
            });
    let write = matches!(method, "post" | "put" | "patch" | "delete");
    let mut statuses = vec![414, 429, 431, 500];
    let mut add = |status, applies: bool| {
        if applies {
            statuses.push(status);
        }
    };
    add(
        400,
        has_body || param_in("query") || param_in("header") || (write && api_credentials),
    );
    add(401, api_credentials);
    add(403, api_credentials || param_in("path"));
    add(404, paginated || param_in("path"));
    add(408, has_body);
    add(409, write && api_credentials);
    add(413, has_body);
    add(
        415,
        body_types
            .iter()
            .any(|t| *t != "application/x-www-form-urlencoded"),
    );
    statuses.sort_unstable();
    statuses
}

/// Adds the shared error answers an operation lacks, and points those it documents in the
/// spec's shapes at the shared responses; the answers stay ordered by status.
fn add_error_answers(method: &str, op: &mut Map<String, Value>, api_schemes: &[String]) {
    let statuses = shared_statuses(method, op, api_schemes);
    let Some(Value::Object(responses)) = op.get_mut("responses") else {
        return;
    };
    for (status, name) in SHARED {
        let key = status.to_string();
        let applies = statuses.contains(&status);
        let shared = match responses.get(&key) {
            Some(documented) => is_shared_shape(documented),
            None => applies,
        };
        if shared {
            responses.insert(
                key,
                json!({ "$ref": format!("#/components/responses/{name}") }),
            );
        }
    }
    responses.sort_keys();
}

/// Writes the range of each integer format (`int32`, `uint64`, ...) into every integer schema
/// of the document as `minimum` and `maximum`, unless it has tighter ones: the server refuses
/// what does not fit the type it reads. A date without time (`naive-date`, as poem-openapi
/// names it) gets the standard format name, `date`; a [`Refused`] field allows nothing
/// (`not: {}`); the keys of a map have at most [`MAX_KEY_CHARS`] characters
/// (`propertyNames`, which JSON Schema has and OpenAPI 3.0 leaves out, read by the tools
/// that generate data from the document).
fn exact_schemas(value: &mut Value) {
    match value {
        Value::Object(map) => {
            match map.get("format").and_then(Value::as_str) {
                Some("naive-date") => {
                    map.insert("format".into(), "date".into());
                }
                Some(Refused::FORMAT) => {
                    map.retain(|k, _| k == "description");
                    map.insert("not".into(), json!({}));
                    return;
                }
                _ => {}
            }
            if map
                .get("additionalProperties")
                .is_some_and(Value::is_object)
            {
                map.entry("propertyNames")
                    .or_insert_with(|| json!({ "maxLength": MAX_KEY_CHARS }));
            }
            let bounds = (map.get("type").and_then(Value::as_str) == Some("integer"))
                .then(|| map.get("format").and_then(Value::as_str))
                .flatten()
                .and_then(integer_bounds);
            if let Some((min, max)) = bounds {
                let number = |n: i128| {
                    i64::try_from(n)
                        .map(Value::from)
                        .unwrap_or_else(|_| u64::try_from(n).map_or(Value::Null, Value::from))
                };
                map.entry("minimum").or_insert_with(|| number(min));
                map.entry("maximum").or_insert_with(|| number(max));
            }
            map.values_mut().for_each(exact_schemas);
        }
        Value::Array(list) => list.iter_mut().for_each(exact_schemas),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "components": {
                "schemas": {"N": {"type": "integer", "format": "uint64"}},
                "securitySchemes": {
                    "TokenAuth": {"type": "apiKey", "in": "header", "name": "Authorization"},
                    "OAuthClient": {"type": "http", "scheme": "basic"}
                }
            },
            "paths": {
                "/api/v1/organizers/{organizer}/things/": {
                    "get": {
                        "parameters": [
                            {"name": "organizer", "in": "path", "schema": {"type": "string"}},
                            {"name": "page", "in": "query", "schema": {"type": "string"}}
                        ],
                        "security": [{"TokenAuth": []}],
                        "responses": {"200": {"description": "ok"}}
                    },
                    "post": {
                        "requestBody": {"content": {"application/json": {"schema": {}}}},
                        "security": [{"TokenAuth": []}],
                        "responses": {
                            "201": {"description": "created"},
                            "409": {"description": "conflict", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Conflict"}}}}
                        }
                    }
                },
                "/api/v1/oauth/token": {
                    "post": {
                        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {}}}},
                        "security": [{"OAuthClient": []}],
                        "responses": {"401": {"description": "own", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OAuthError"}}}}}
                    }
                }
            }
        })
    }

    fn statuses(doc: &Value, path: &str, method: &str) -> Vec<String> {
        doc["paths"][path][method]["responses"]
            .as_object()
            .expect("responses")
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn operations_document_what_the_shared_request_path_answers() {
        let mut doc = doc();
        complete(&mut doc);
        let list = "/api/v1/organizers/{organizer}/things/";
        assert_eq!(
            statuses(&doc, list, "get"),
            [
                "200", "400", "401", "403", "404", "414", "429", "431", "500"
            ]
        );
        assert_eq!(
            statuses(&doc, list, "post"),
            [
                "201", "400", "401", "403", "408", "409", "413", "414", "415", "429", "431", "500"
            ]
        );
        assert_eq!(
            doc["paths"][list]["post"]["responses"]["409"],
            json!({"$ref": "#/components/responses/Conflict"})
        );
        // A form body is refused with its own 400, not 415; OAuth's 401 keeps its shape.
        let token = &doc["paths"]["/api/v1/oauth/token"]["post"]["responses"];
        assert!(token.get("415").is_none());
        assert_eq!(token["401"]["description"], "own");
        assert!(
            doc["components"]["responses"]["TooManyRequests"]["headers"]["Retry-After"].is_object()
        );
    }

    #[test]
    fn integer_schemas_carry_the_range_of_their_format() {
        let mut doc = doc();
        complete(&mut doc);
        let n = &doc["components"]["schemas"]["N"];
        assert_eq!(n["minimum"], json!(0));
        assert_eq!(n["maximum"], json!(u64::MAX));
        let mut tight = json!({"type": "integer", "format": "int32", "minimum": 1});
        exact_schemas(&mut tight);
        assert_eq!(tight["minimum"], json!(1));
        assert_eq!(tight["maximum"], json!(i32::MAX));
    }
}
