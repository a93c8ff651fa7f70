//! An object whose values may be `null`, e.g. `{"Stalls": 12, "Balcony": null}`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use poem_openapi::validation::{MaxProperties, Validator};
use serde_json::Value;

/// A map from names to optional values, documented with nullable values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NullableMap<T>(pub BTreeMap<String, Option<T>>);

impl NullableMap<i64> {
    /// A stored JSON object of IDs or nulls (a seat category mapping); other values read as
    /// null.
    pub fn from_stored(stored: &Value) -> Self {
        Self(
            stored
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_i64())).collect())
                .unwrap_or_default(),
        )
    }

    /// The JSON object to store.
    pub fn to_stored(&self) -> serde_json::Map<String, Value> {
        (self.0.iter())
            .map(|(k, v)| (k.clone(), v.map_or(Value::Null, Value::from)))
            .collect()
    }
}

impl<T: Type> Type for NullableMap<T> {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        format!("NullableMap_{}", T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut value = match T::schema_ref() {
            MetaSchemaRef::Inline(s) => *s,
            reference => {
                let mut s = MetaSchema::ANY;
                s.all_of = vec![reference];
                s
            }
        };
        value.nullable = true;
        let mut schema = MetaSchema::new("object");
        schema.additional_properties = Some(Box::new(MetaSchemaRef::Inline(Box::new(value))));
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
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

impl<T: ParseFromJSON> ParseFromJSON for NullableMap<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        let Value::Object(map) = value.unwrap_or_default() else {
            return Err(ParseError::custom("Expected an object."));
        };
        let mut out = BTreeMap::new();
        for (k, v) in map {
            let parsed = if v.is_null() {
                None
            } else {
                Some(T::parse_from_json(Some(v)).map_err(ParseError::propagate)?)
            };
            out.insert(k, parsed);
        }
        Ok(Self(out))
    }
}

impl<T: ToJSON> ToJSON for NullableMap<T> {
    fn to_json(&self) -> Option<Value> {
        Some(Value::Object(
            self.0
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_ref().and_then(ToJSON::to_json).unwrap_or(Value::Null),
                    )
                })
                .collect(),
        ))
    }
}

/// Lets fields declare `#[oai(validator(max_properties = n))]`, shown in the schema and
/// enforced by the body check before parsing.
impl<T> Validator<NullableMap<T>> for MaxProperties {
    fn check(&self, value: &NullableMap<T>) -> bool {
        Validator::<BTreeMap<String, Option<T>>>::check(self, &value.0)
    }
}
