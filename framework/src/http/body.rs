//! JSON request bodies checked against their OpenAPI schema, so that every invalid body is
//! answered with field errors (`{"field": ["message"]}`) naming each offending field, the
//! way clients of the spec expect, instead of poem-openapi's plain-text parse errors.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use poem::http::StatusCode;
use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseFromJSON, Type};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use serde_json::{Map, Value, json};

use super::error::ApiError;
use super::money::{Currency, Decimal2, Money};
use crate::values::currency;

/// A JSON request body of type `T`, validated field by field against `T`'s schema.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<'a, T: Type + ParseFromJSON + 'static> ApiExtractor<'a> for JsonBody<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType {
                content_type: "application/json",
                schema: T::schema_ref(),
            }],
            required: may_not_be_empty::<T>(),
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        require_json(request)?;
        let bytes = body.take()?.into_bytes().await?;
        Ok(Self(by_size(bytes, |b| parse::<T>(b)).await?))
    }
}

/// Declares a request value kept as the JSON sent (`pub struct $ty(pub Value)`), whose
/// schema in the document is `$schema`, with `$register` registering what it refers to:
/// for values the operation checks itself beyond what a schema states.
macro_rules! sent_json {
    ($(#[$doc:meta])* $ty:ident, $name:literal, schema: $schema:expr, register: $register:expr $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $ty(pub serde_json::Value);

        impl poem_openapi::types::Type for $ty {
            const IS_REQUIRED: bool = true;
            type RawValueType = Self;
            type RawElementValueType = Self;

            fn name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }

            fn schema_ref() -> poem_openapi::registry::MetaSchemaRef {
                $schema
            }

            fn register(registry: &mut poem_openapi::registry::Registry) {
                let register: fn(&mut poem_openapi::registry::Registry) = $register;
                register(registry);
            }

            fn as_raw_value(&self) -> Option<&Self::RawValueType> {
                Some(self)
            }

            fn raw_element_iter<'a>(
                &'a self,
            ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
                Box::new(std::iter::once(self))
            }
        }

        impl poem_openapi::types::ParseFromJSON for $ty {
            fn parse_from_json(
                value: Option<serde_json::Value>,
            ) -> poem_openapi::types::ParseResult<Self> {
                Ok(Self(value.unwrap_or_default()))
            }
        }

        impl poem_openapi::types::ToJSON for $ty {
            fn to_json(&self) -> Option<serde_json::Value> {
                Some(self.0.clone())
            }
        }
    };
}
pub(crate) use sent_json;

sent_json!(
    /// A field of a request body that its operation refuses whenever it is sent, with a
    /// message of its own (e.g. lists that have their own endpoints). The body check lets any
    /// value through to the operation; the document says that no value is valid (`not: {}`).
    Refused,
    "refused",
    schema: {
        let mut schema = MetaSchema::ANY;
        schema.format = Some(Refused::FORMAT);
        MetaSchemaRef::Inline(Box::new(schema))
    },
    register: |_| {},
);

impl Refused {
    /// The schema format that marks such a field until `http::document` writes it as `not: {}`.
    pub const FORMAT: &'static str = "refused";
}

/// Bodies up to this size are parsed and checked where they arrive; larger ones on tokio's
/// blocking pool. Parsing takes CPU time in proportion to the body (tens of milliseconds for
/// megabytes), which on an async worker would stall every other request it serves.
const INLINE_PARSE_BYTES: usize = 64 * 1024;

/// `parse(bytes)`, off the async workers when the body is large (see [`INLINE_PARSE_BYTES`]).
async fn by_size<B, T>(
    bytes: B,
    parse: impl FnOnce(&[u8]) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError>
where
    B: AsRef<[u8]> + Send + 'static,
    T: Send + 'static,
{
    if bytes.as_ref().len() <= INLINE_PARSE_BYTES {
        return parse(bytes.as_ref());
    }
    tokio::task::spawn_blocking(move || parse(bytes.as_ref()))
        .await
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "parsing a request body failed");
            Err(ApiError::internal())
        })
}

/// 415 unless the request's content type, when it has one, is JSON.
fn require_json(request: &Request) -> Result<(), ApiError> {
    if let Some(ct) = request.content_type() {
        let json = ct.parse::<mime::Mime>().is_ok_and(|m| {
            m.type_() == "application"
                && (m.subtype() == "json" || m.suffix().is_some_and(|s| s == "json"))
        });
        if !json {
            return Err(ApiError::detail(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("Unsupported media type \"{ct}\" in request."),
            ));
        }
    }
    Ok(())
}

/// Most entries a [`JsonList`] body may have.
pub const MAX_LIST_ENTRIES: usize = 1_000;

/// A JSON request body that is a list of `T` (at most [`MAX_LIST_ENTRIES`]), each
/// validated as a [`JsonBody`] would be. Invalid entries are answered with a list holding
/// the field errors of each entry in order, `{}` for the valid ones.
#[derive(Debug)]
pub struct JsonList<T>(pub Vec<T>);

impl<'a, T: Type + ParseFromJSON + 'static> ApiExtractor<'a> for JsonList<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType {
                content_type: "application/json",
                schema: Vec::<T>::schema_ref(),
            }],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        require_json(request)?;
        let bytes = body.take()?.into_bytes().await?;
        Ok(Self(by_size(bytes, |b| parse_list::<T>(b)).await?))
    }
}

/// Parses and validates a JSON list body as `T`s, as [`JsonList`] describes.
fn parse_list<T: Type + ParseFromJSON + 'static>(bytes: &[u8]) -> Result<Vec<T>, ApiError> {
    let refuse = |message: String| {
        ApiError::with_body(
            StatusCode::BAD_REQUEST,
            json!({ "non_field_errors": [message] }),
        )
    };
    let list = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(list)) => list,
        Ok(other) => {
            return Err(refuse(format!(
                "Expected a list of items but got type \"{}\".",
                type_name(&other)
            )));
        }
        Err(e) => return Err(ApiError::bad_request(format!("JSON parse error - {e}"))),
    };
    if list.len() > MAX_LIST_ENTRIES {
        return Err(refuse(format!(
            "Ensure this field has no more than {MAX_LIST_ENTRIES} elements."
        )));
    }
    let mut parsed = Vec::with_capacity(list.len());
    let mut errors = Vec::with_capacity(list.len());
    for entry in list {
        match parse::<T>(entry.to_string().as_bytes()) {
            Ok(t) => {
                parsed.push(t);
                errors.push(json!({}));
            }
            Err(e) => errors.push(e.body().clone()),
        }
    }
    if parsed.len() < errors.len() {
        return Err(ApiError::with_body(
            StatusCode::BAD_REQUEST,
            Value::Array(errors),
        ));
    }
    Ok(parsed)
}

/// Parses and validates a JSON body as `T`.
pub fn parse<T: Type + ParseFromJSON + 'static>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        serde_json::from_slice(bytes).map_err(|e| {
            let message = format!("JSON parse error - {e}");
            let looks_like_json = bytes
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| matches!(b, b'{' | b'['));
            if looks_like_json {
                // Broken JSON is invalid input like any other; a body that is not JSON at all is not.
                ApiError::with_body(
                    StatusCode::BAD_REQUEST,
                    json!({ "non_field_errors": [message] }),
                )
            } else {
                ApiError::bad_request(message)
            }
        })?
    };
    let schema = schema_of::<T>();
    if !value.is_object() {
        return Err(ApiError::with_body(
            StatusCode::BAD_REQUEST,
            json!({ "non_field_errors": ["Invalid data. Expected a dictionary."] }),
        ));
    }
    if let Some(errors) = check(&schema.0, &schema.1, &value) {
        // A rule on the body as a whole (a map's key) gives messages, not field errors.
        let errors = if errors.is_object() {
            errors
        } else {
            json!({ "non_field_errors": errors })
        };
        return Err(ApiError::with_body(StatusCode::BAD_REQUEST, errors));
    }
    T::parse_from_json(Some(value)).map_err(|e| {
        ApiError::with_body(
            StatusCode::BAD_REQUEST,
            json!({ "non_field_errors": [e.into_message()] }),
        )
    })
}

type Schema = Arc<(Registry, MetaSchemaRef)>;

fn schema_of<T: Type + 'static>() -> Schema {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, Schema>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(s) = cache.read().ok().and_then(|c| c.get(&id).cloned()) {
        return s;
    }
    let mut registry = Registry::new();
    T::register(&mut registry);
    let schema = Arc::new((registry, T::schema_ref()));
    if let Ok(mut c) = cache.write() {
        c.insert(id, schema.clone());
    }
    schema
}

/// Whether a body of `T` must be sent: [`parse`] reads an empty body as `{}`, so an
/// object none of whose fields is required (options such as `send_email`) may be left out.
fn may_not_be_empty<T: Type + 'static>() -> bool {
    let schema = schema_of::<T>();
    resolve(&schema.0, &schema.1).is_none_or(|s| s.ty != "object" || !s.required.is_empty())
}

fn resolve<'a>(registry: &'a Registry, schema: &'a MetaSchemaRef) -> Option<&'a MetaSchema> {
    match schema {
        MetaSchemaRef::Inline(s) => Some(s),
        MetaSchemaRef::Reference(name) => registry.schemas.get(name),
    }
}

fn err(message: impl Into<String>) -> Option<Value> {
    Some(json!([message.into()]))
}

/// Returns the errors of `value` against `schema`, shaped like the value: a list of messages
/// for a scalar, an object of field errors for an object, a list of per-item errors for a list.
fn check(registry: &Registry, schema: &MetaSchemaRef, value: &Value) -> Option<Value> {
    let s = resolve(registry, schema)?;
    if value.is_null() {
        return if s.nullable {
            None
        } else {
            err("This field may not be null.")
        };
    }
    for sub in &s.all_of {
        if let Some(e) = check(registry, sub, value) {
            return Some(e);
        }
    }
    let alternatives = if s.one_of.is_empty() {
        &s.any_of
    } else {
        &s.one_of
    };
    if !alternatives.is_empty() {
        let mut errors = Vec::with_capacity(alternatives.len());
        for a in alternatives {
            match check(registry, a, value) {
                Some(e) => errors.push((a, e)),
                None => break,
            }
        }
        if errors.len() == alternatives.len() {
            // The one alternative of the value's own JSON type says best what is wrong with
            // it (a string too long for a string-or-object field).
            let mut of_type = errors
                .into_iter()
                .filter(|(a, _)| resolve(registry, a).is_some_and(|s| is_of_type(s.ty, value)));
            return match (of_type.next(), of_type.next()) {
                (Some((_, e)), None) => Some(e),
                _ => err("Invalid value."),
            };
        }
    }
    // A currency's own check below words its refusal better than a list of choices would.
    if !s.enum_items.is_empty()
        && !s.enum_items.contains(value)
        && s.format != Some(Currency::FORMAT)
    {
        return err(format!("\"{}\" is not a valid choice.", plain(value)));
    }
    match s.ty {
        "object" => check_object(registry, s, value),
        "array" => check_array(registry, s, value),
        "string" => check_string(s, value),
        "integer" => check_integer(s, value),
        "number" => (!value.is_number()).then(|| json!(["A valid number is required."])),
        "boolean" => (!value.is_boolean()).then(|| json!(["Must be a valid boolean."])),
        // Free-form JSON (a provider's `info`): stored as it is, where PostgreSQL takes no
        // null character in any string or key.
        _ => has_nul(value).then(|| json!(["Null characters are not allowed."])),
    }
}

/// Whether a string or key anywhere in `value` holds a null character.
fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(list) => list.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// Whether a schema of type `ty` is about values like `value` (strings, objects, ...).
fn is_of_type(ty: &str, value: &Value) -> bool {
    matches!(
        (ty, value),
        ("string", Value::String(_))
            | ("object", Value::Object(_))
            | ("array", Value::Array(_))
            | ("boolean", Value::Bool(_))
            | ("integer" | "number", Value::Number(_))
    )
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Most characters of a key of a map (an object with `additionalProperties`): pretix's length
/// for identifiers, above any language code, name part, meta data property name (50) or
/// seating category name (190) it stores as keys. OpenAPI 3.0 cannot declare it
/// (`propertyNames` came with 3.1), so it is checked here for every map alike.
pub const MAX_KEY_CHARS: usize = 190;

fn check_object(registry: &Registry, s: &MetaSchema, value: &Value) -> Option<Value> {
    let Value::Object(map) = value else {
        return err("Invalid data. Expected a dictionary.");
    };
    if let Some(e) = check_count(map.len(), s.min_properties, s.max_properties) {
        return Some(e);
    }
    let mut errors = Map::new();
    for name in &s.required {
        if !map.contains_key(*name) {
            errors.insert((*name).to_owned(), json!(["This field is required."]));
        }
    }
    for (key, v) in map {
        let prop = s
            .properties
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, p)| p);
        let schema = match (prop, &s.additional_properties) {
            (Some(p), _) => p,
            (None, Some(_)) if key.chars().nth(MAX_KEY_CHARS).is_some() => {
                // Keys of maps are stored like their values (languages, name parts, meta data
                // names). The error stays on the map: echoing a key of up to a megabyte back
                // would make the answer as large as the request.
                return err(format!(
                    "Ensure no key of this field has more than {MAX_KEY_CHARS} characters."
                ));
            }
            (None, Some(_)) if key.contains('\0') => {
                return err("Null characters are not allowed.");
            }
            (None, Some(extra)) => extra.as_ref(),
            // Fields the resource does not have, or read-only ones, are ignored as pretix does.
            (None, None) => continue,
        };
        if let Some(e) = check(registry, schema, v) {
            errors.insert(key.clone(), e);
        }
    }
    (!errors.is_empty()).then_some(Value::Object(errors))
}

fn check_array(registry: &Registry, s: &MetaSchema, value: &Value) -> Option<Value> {
    let Value::Array(list) = value else {
        return err(format!(
            "Expected a list of items but got type \"{}\".",
            type_name(value)
        ));
    };
    // Before the entries: an over-long list is refused without looking at each of them.
    if let Some(e) = check_count(list.len(), s.min_items, s.max_items) {
        return Some(e);
    }
    let items = s.items.as_deref()?;
    let errors: Vec<Option<Value>> = list.iter().map(|v| check(registry, items, v)).collect();
    if errors.iter().all(Option::is_none) {
        return None;
    }
    let scalar_items = resolve(registry, items).is_some_and(|i| i.ty != "object");
    if scalar_items {
        // A list of scalars reports the first bad item's messages, as DRF's ListField does.
        return errors.into_iter().flatten().next();
    }
    Some(Value::Array(
        errors
            .into_iter()
            .map(|e| e.unwrap_or_else(|| json!({})))
            .collect(),
    ))
}

/// The `minItems`/`maxItems` (or `minProperties`/`maxProperties`) rule of a list (or map)
/// with `count` entries, worded as DRF does for lists.
fn check_count(count: usize, min: Option<usize>, max: Option<usize>) -> Option<Value> {
    if let Some(max) = max
        && count > max
    {
        return err(format!(
            "Ensure this field has no more than {max} elements."
        ));
    }
    if let Some(min) = min
        && count < min
    {
        return err(format!("Ensure this field has at least {min} elements."));
    }
    None
}

fn check_string(s: &MetaSchema, value: &Value) -> Option<Value> {
    let Value::String(text) = value else {
        if matches!(s.format, Some(Money::FORMAT | Decimal2::FORMAT)) && value.is_number() {
            return Money::parse(&value.to_string()).err().map(|m| json!([m]));
        }
        return err("Not a valid string.");
    };
    if text.contains('\0') {
        return err("Null characters are not allowed.");
    }
    let length = text.chars().count();
    if let Some(max) = s.max_length
        && length > max
    {
        return err(format!(
            "Ensure this field has no more than {max} characters."
        ));
    }
    if let Some(min) = s.min_length
        && length < min
    {
        return if min == 1 {
            err("This field may not be blank.")
        } else {
            err(format!("Ensure this field has at least {min} characters."))
        };
    }
    match s.format {
        Some("date-time") => text.parse::<chrono::DateTime<chrono::FixedOffset>>().is_err().then(|| {
            json!(["Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."])
        }),
        Some("date" | "naive-date") => text.parse::<chrono::NaiveDate>().is_err().then(|| {
            json!(["Date has wrong format. Use one of these formats instead: YYYY-MM-DD."])
        }),
        Some(Money::FORMAT | Decimal2::FORMAT) => Money::parse(text).err().map(|m| json!([m])),
        Some(f) if f == Currency::FORMAT => (!currency::is_valid(text))
            .then(|| json!([format!("\"{text}\" is not a valid ISO 4217 currency code.")])),
        _ => None,
    }
}

/// The range of an integer format (`int8` to `int64`, `uint8` to `uint64`): what a value of
/// that Rust type holds. The document states it on every integer schema (`http::document`).
pub fn integer_bounds(format: &str) -> Option<(i128, i128)> {
    let range = |min: i128, max: i128| Some((min, max));
    match format {
        "int8" => range(i8::MIN.into(), i8::MAX.into()),
        "int16" => range(i16::MIN.into(), i16::MAX.into()),
        "int32" => range(i32::MIN.into(), i32::MAX.into()),
        "int64" => range(i64::MIN.into(), i64::MAX.into()),
        "uint8" => range(0, u8::MAX.into()),
        "uint16" => range(0, u16::MAX.into()),
        "uint32" => range(0, u32::MAX.into()),
        "uint64" => range(0, u64::MAX.into()),
        _ => None,
    }
}

fn check_integer(s: &MetaSchema, value: &Value) -> Option<Value> {
    let Some(n) = value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
    else {
        return err("A valid integer is required.");
    };
    if let Some((min, max)) = s.format.and_then(integer_bounds)
        && !(min..=max).contains(&n)
    {
        return err("A valid integer is required.");
    }
    if let Some(min) = s.minimum
        && (n as f64) < min
    {
        return err(format!(
            "Ensure this value is greater than or equal to {min}."
        ));
    }
    if let Some(max) = s.maximum
        && (n as f64) > max
    {
        return err(format!("Ensure this value is less than or equal to {max}."));
    }
    None
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}
