//! Talk-side answers are built as JSON, since `?expand=` and `?lang=` change their shape;
//! [`Shaped`] documents such a value with the schema of the type `T` that describes it, and
//! [`Expandable`] documents a field that holds a reference or, expanded, the object.
//! [`I18nInput`] is the multi-language string of request bodies.

use std::borrow::Cow;
use std::marker::PhantomData;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

use crate::values::i18n::{I18nString, MAX_LANGUAGES};

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

/// A multi-language string sent in a request body, each text at most `MAX` characters: an
/// object of language codes (`{"en": "Talk", "de": "Vortrag"}`), or a plain string, which
/// pretalx stores without a language and shows as `{"en": "..."}`, the text for every
/// language; it is stored as that object. Declare the bound with the type
/// (`I18nInput<200>`), not with a `max_length` validator: the bound lands on the string and on
/// each language's text, where the document states it and request bodies are checked
/// against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct I18nInput<const MAX: usize>(pub I18nString);

impl<const MAX: usize> I18nInput<MAX> {
    /// The stored JSON form: the object of languages.
    pub fn to_stored(&self) -> Value {
        self.0.to_stored()
    }
}

impl<const MAX: usize> Type for I18nInput<MAX> {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = String;

    fn name() -> Cow<'static, str> {
        format!("I18nInput_{MAX}").into()
    }

    /// Inline: `anyOf` a bounded string and an object of bounded strings.
    fn schema_ref() -> MetaSchemaRef {
        let text = || {
            let mut text = MetaSchema::new("string");
            text.max_length = Some(MAX);
            text
        };
        let mut object = MetaSchema::new("object");
        object.additional_properties = Some(Box::new(MetaSchemaRef::Inline(Box::new(text()))));
        object.max_properties = Some(MAX_LANGUAGES);
        let mut schema = MetaSchema::ANY;
        schema.title = Some("I18nInput".into());
        schema.any_of = vec![
            MetaSchemaRef::Inline(Box::new(text())),
            MetaSchemaRef::Inline(Box::new(object)),
        ];
        schema.description = Some(crate::values::i18n::INPUT_DESCRIPTION);
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn register(_: &mut Registry) {}

    fn as_raw_value(&self) -> Option<&Self> {
        Some(self)
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a String> + 'a> {
        Box::new(self.0.0.iter().map(|(_, text)| text))
    }
}

impl<const MAX: usize> ParseFromJSON for I18nInput<MAX> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        I18nString::parse_from_json(value)
            .map(Self)
            .map_err(ParseError::propagate)
    }
}

impl<const MAX: usize> ToJSON for I18nInput<MAX> {
    fn to_json(&self) -> Option<Value> {
        Some(self.to_stored())
    }
}
