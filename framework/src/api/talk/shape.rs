//! Talk-side answers are built as JSON, since `?expand=` and `?lang=` change their shape;
//! [`Shaped`] documents such a value with the schema of the type `T` that describes it, and
//! [`Expandable`] documents a field that holds a reference or, expanded, the object.

use std::borrow::Cow;
use std::marker::PhantomData;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

/// A JSON value shaped as `T` describes (with references expanded or languages flattened
/// as the request asked).
#[derive(Debug, Clone)]
pub struct Shaped<T>(pub Value, PhantomData<T>);

impl<T> Shaped<T> {
    /// Wraps a built value.
    pub fn new(value: Value) -> Self {
        Self(value, PhantomData)
    }
}

impl<T: Type> Type for Shaped<T> {
    const IS_REQUIRED: bool = true;
    type RawValueType = Value;
    type RawElementValueType = Value;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Value> {
        Some(&self.0)
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        Box::new(std::iter::once(&self.0))
    }
}

impl<T: Type> ToJSON for Shaped<T> {
    fn to_json(&self) -> Option<Value> {
        Some(self.0.clone())
    }
}

impl<T: Type + Send + Sync> ParseFromJSON for Shaped<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        Ok(Self::new(value.unwrap_or_default()))
    }
}

/// A field holding a reference `R` (an ID or a code), or with `?expand=` the object `T`.
pub struct Expandable<R, T>(PhantomData<(R, T)>);

impl<R: Type, T: Type> Type for Expandable<R, T> {
    const IS_REQUIRED: bool = true;
    type RawValueType = Value;
    type RawElementValueType = Value;

    fn name() -> Cow<'static, str> {
        format!("{}_or_{}", R::name(), T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut schema = MetaSchema::ANY;
        schema.any_of = vec![R::schema_ref(), T::schema_ref()];
        schema.description = Some("A reference, or the object it names with `?expand=`.");
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Value> {
        None
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        Box::new(std::iter::empty())
    }
}

impl<R: Type, T: Type> ToJSON for Expandable<R, T> {
    fn to_json(&self) -> Option<Value> {
        None
    }
}

impl<R: Type, T: Type> ParseFromJSON for Expandable<R, T> {
    fn parse_from_json(_: Option<Value>) -> ParseResult<Self> {
        Ok(Self(PhantomData))
    }
}

/// A multi-language string: an object of language codes, or with `?lang=` a plain string.
pub struct TalkText;

impl Type for TalkText {
    const IS_REQUIRED: bool = true;
    type RawValueType = Value;
    type RawElementValueType = Value;

    fn name() -> Cow<'static, str> {
        "TalkText".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut object = MetaSchema::new("object");
        object.additional_properties = Some(Box::new(String::schema_ref()));
        let mut schema = MetaSchema::ANY;
        schema.any_of = vec![
            String::schema_ref(),
            MetaSchemaRef::Inline(Box::new(object)),
        ];
        schema.description = Some(
            "A multi-language string: `{\"en\": \"...\"}`, or a plain string with `?lang=` \
             naming one of the event's languages.",
        );
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn register(_: &mut Registry) {}

    fn as_raw_value(&self) -> Option<&Value> {
        None
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        Box::new(std::iter::empty())
    }
}

impl ToJSON for TalkText {
    fn to_json(&self) -> Option<Value> {
        None
    }
}

impl ParseFromJSON for TalkText {
    fn parse_from_json(_: Option<Value>) -> ParseResult<Self> {
        Ok(Self)
    }
}
