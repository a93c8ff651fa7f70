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
    generator_forms(doc);
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
    if let Some(Value::Object(schemas)) = components.get_mut("schemas") {
        schemas.insert(
            TALK_VERSION.into(),
            json!({
                "type": "string",
                "enum": ["v1", "v2"],
                "description": "A talk-side API version: `v2`, the current one, or `v1`, \
                    deprecated.",
            }),
        );
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
                if !op.contains_key("operationId") {
                    let id = operation_id(path, talk, method, op);
                    op.insert("operationId".into(), id.into());
                }
                if talk {
                    talk_side(op);
                }
                add_error_answers(method, op, &api_schemes);
            }
        }
    }
}

/// The name code generators give an operation's function, as Django REST framework's schema
/// generator names it (pretix's and pretalx's API are built on it): the path's fixed
/// segments without `/api/v1/` (talk side: `/api/`, and `talk_` in front), then the action:
/// `list` (a GET answering a list), `retrieve` (any other GET), `create` (POST), `update`
/// (PUT), `partial_update` (PATCH) or `destroy` (DELETE). For example
/// `organizers_giftcards_transact_create`, `talk_events_submissions_list`.
fn operation_id(path: &str, talk: bool, method: &str, op: &Map<String, Value>) -> String {
    let rest = path
        .strip_prefix("/api/v1/")
        .or_else(|| path.strip_prefix("/api/"))
        .unwrap_or(path);
    let mut words: Vec<String> = talk.then(|| "talk".to_owned()).into_iter().collect();
    words.extend(
        rest.split('/')
            .filter(|s| !s.is_empty() && !s.starts_with('{'))
            .map(|s| {
                s.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '_'
                        }
                    })
                    .collect()
            }),
    );
    let answers_list = || {
        op.get("responses")
            .and_then(|r| r.get("200"))
            .and_then(|r| r.get("content"))
            .and_then(Value::as_object)
            .and_then(|content| content.values().next())
            .and_then(|media| media.get("schema"))
            .is_some_and(|schema| {
                schema.get("type").and_then(Value::as_str) == Some("array")
                    || schema
                        .get("$ref")
                        .and_then(Value::as_str)
                        .is_some_and(|r| r.starts_with("#/components/schemas/Paginated"))
            })
    };
    let action = match method {
        "get" if answers_list() => "list",
        "get" => "retrieve",
        "post" => "create",
        "put" => "update",
        "patch" => "partial_update",
        "delete" => "destroy",
        other => other,
    };
    words.push(action.to_owned());
    words.join("_")
}

/// The component of the talk-side API versions, which the version headers take.
const TALK_VERSION: &str = "TalkApiVersion";

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
                "schema": {"$ref": format!("#/components/schemas/{TALK_VERSION}")},
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

/// Keywords that only annotate a schema: beside a reference they change no type.
const ANNOTATIONS: [&str; 6] = [
    "description",
    "nullable",
    "default",
    "example",
    "readOnly",
    "deprecated",
];

/// Inline schemas poem-openapi marks with one of these titles are named types whose field
/// sets the text limit: each becomes a component named after the title and that limit.
const NAMED_INLINE: [&str; 2] = ["I18nString", "I18nInput"];

/// Rewrites the document into the forms code generators (openapi-python-client,
/// openapi-typescript) read without dropping anything, with the same meaning:
/// - a reference with a description or nullability beside it is `allOf` of the reference
///   alone, the annotations beside `allOf` (poem-openapi repeats them in a second `allOf`
///   entry, which generators take for a schema of its own to merge with);
/// - inline multi-language texts become components (`I18nString`, `I18nString_200`,
///   `I18nInput_800`, ...; the suffix is the text limit when it is not
///   [`MAX_TEXT_CHARS`](crate::values::i18n::MAX_TEXT_CHARS)), so that no two inline schemas
///   of one title compete for one generated name.
fn generator_forms(doc: &mut Value) {
    let mut named = Map::new();
    if let Some(paths) = doc.get_mut("paths") {
        rewrite_schemas(paths, &mut named);
    }
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for schema in schemas.values_mut().filter_map(Value::as_object_mut) {
        schema
            .values_mut()
            .for_each(|v| rewrite_schemas(v, &mut named));
    }
    for (name, schema) in named {
        schemas.entry(name).or_insert(schema);
    }
}

fn rewrite_schemas(value: &mut Value, named: &mut Map<String, Value>) {
    match value {
        Value::Object(map) => {
            map.values_mut().for_each(|v| rewrite_schemas(v, named));
            fold_reference_annotations(map);
            if let Some((name, schema)) = named_inline(map) {
                let mut usage = Map::new();
                for key in ANNOTATIONS {
                    if let Some(v) = map.remove(key) {
                        usage.insert(key.into(), v);
                    }
                }
                let reference = json!({ "$ref": format!("#/components/schemas/{name}") });
                if usage.is_empty() {
                    *map = reference.as_object().cloned().unwrap_or_default();
                } else {
                    usage.insert("allOf".into(), json!([reference]));
                    *map = usage;
                }
                named.entry(name).or_insert(schema);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| rewrite_schemas(v, named)),
        _ => {}
    }
}

/// `allOf: [{$ref}, {description, nullable}]` becomes `allOf: [{$ref}]` with the
/// annotations beside it.
fn fold_reference_annotations(map: &mut Map<String, Value>) {
    let Some(Value::Array(all_of)) = map.get("allOf") else {
        return;
    };
    let only_annotations = |entry: &Value| {
        entry
            .as_object()
            .is_some_and(|e| e.keys().all(|k| ANNOTATIONS.contains(&k.as_str())))
    };
    if all_of.len() < 2
        || all_of[0].get("$ref").is_none()
        || !all_of[1..].iter().all(only_annotations)
    {
        return;
    }
    let Some(Value::Array(mut all_of)) = map.remove("allOf") else {
        return;
    };
    for entry in all_of.drain(1..) {
        for (key, v) in entry.as_object().cloned().unwrap_or_default() {
            map.entry(key).or_insert(v);
        }
    }
    map.insert("allOf".into(), Value::Array(all_of));
}

/// The component an inline schema of [`NAMED_INLINE`] becomes: its name and its schema (the
/// inline one without the field's annotations, with the type's own description).
fn named_inline(map: &Map<String, Value>) -> Option<(String, Value)> {
    let title = map.get("title").and_then(Value::as_str)?;
    if !NAMED_INLINE.contains(&title) {
        return None;
    }
    let mut schema = map.clone();
    for key in ANNOTATIONS {
        schema.remove(key);
    }
    let texts = schema
        .get("additionalProperties")
        .or_else(|| schema.get("anyOf").and_then(|a| a.get(0)));
    let limit = texts
        .and_then(|t| t.get("maxLength"))
        .and_then(Value::as_u64)?;
    let name = if limit == crate::values::i18n::MAX_TEXT_CHARS as u64 {
        title.to_owned()
    } else {
        format!("{title}_{limit}")
    };
    let description = match title {
        "I18nString" => crate::values::i18n::DESCRIPTION,
        _ => crate::values::i18n::INPUT_DESCRIPTION,
    };
    schema.insert("description".into(), description.into());
    schema.insert("title".into(), name.clone().into());
    Some((name, Value::Object(schema)))
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

    #[test]
    fn operations_are_named_as_django_rest_framework_names_them() {
        let mut doc = doc();
        doc["paths"]["/api/v1/organizers/{organizer}/things/"]["get"]["responses"]["200"] = json!({"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Paginated_Thing"}}}});
        doc["paths"]["/api/events/{event}/submission-types/{id}/"] =
            json!({"patch": {"responses": {"200": {"description": "ok"}}}});
        complete(&mut doc);
        let id = |path: &str, method: &str| doc["paths"][path][method]["operationId"].clone();
        let things = "/api/v1/organizers/{organizer}/things/";
        assert_eq!(id(things, "get"), "organizers_things_list");
        assert_eq!(id(things, "post"), "organizers_things_create");
        assert_eq!(id("/api/v1/oauth/token", "post"), "oauth_token_create");
        assert_eq!(
            id("/api/events/{event}/submission-types/{id}/", "patch"),
            "talk_events_submission_types_partial_update"
        );
    }

    #[test]
    fn references_keep_their_annotations_beside_one_all_of_entry() {
        let mut schema = json!({"properties": {"mode": {
            "description": "How.",
            "nullable": true,
            "allOf": [{"$ref": "#/components/schemas/Mode"}, {"description": "How.", "nullable": true}]
        }}});
        rewrite_schemas(&mut schema, &mut Map::new());
        assert_eq!(
            schema["properties"]["mode"],
            json!({"description": "How.", "nullable": true, "allOf": [{"$ref": "#/components/schemas/Mode"}]})
        );
    }

    #[test]
    fn multi_language_texts_become_components_named_after_their_limit() {
        let text = |limit: usize, description: &str| {
            json!({
                "type": "object", "title": "I18nString", "description": description,
                "additionalProperties": {"type": "string", "maxLength": limit}
            })
        };
        let mut doc = json!({
            "paths": {},
            "components": {"schemas": {"Thing": {"type": "object", "properties": {
                "name": text(200, "Name."),
                "description": text(crate::values::i18n::MAX_TEXT_CHARS, "Description."),
            }}}}
        });
        generator_forms(&mut doc);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["Thing"]["properties"]["name"],
            json!({"description": "Name.", "allOf": [{"$ref": "#/components/schemas/I18nString_200"}]})
        );
        assert_eq!(
            schemas["Thing"]["properties"]["description"]["allOf"][0]["$ref"],
            "#/components/schemas/I18nString"
        );
        assert_eq!(schemas["I18nString_200"]["title"], "I18nString_200");
        assert_eq!(
            schemas["I18nString_200"]["additionalProperties"]["maxLength"],
            200
        );
    }
}
