//! Multi-language strings: `{lang: text}` objects, flattened to one string per request
//! when the query carries `lang=xx`.

use std::borrow::Cow;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::{Map, Value};

tokio::task_local! {
    static LANG: Option<String>;
}

/// Runs `f` with the response language of this request (the `lang` query parameter).
pub async fn with_lang<F: Future>(lang: Option<String>, f: F) -> F::Output {
    LANG.scope(lang, f).await
}

fn current_lang() -> Option<String> {
    LANG.try_with(Clone::clone).ok().flatten()
}

/// Most languages a multi-language string in a request body may have.
pub const MAX_LANGUAGES: usize = 100;

/// A multi-language string, in the order its languages were given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct I18nString(pub Vec<(String, String)>);

impl I18nString {
    /// A string in one language.
    pub fn single(lang: &str, text: &str) -> Self {
        Self(vec![(lang.to_owned(), text.to_owned())])
    }

    /// The text in `lang`, else in English, else the first non-empty one.
    pub fn localize(&self, lang: &str) -> String {
        let non_empty = |l: &str| {
            self.0
                .iter()
                .find(|(k, v)| k == l && !v.is_empty())
                .map(|(_, v)| v.clone())
        };
        let base = lang.split(['-', '_']).next().unwrap_or(lang);
        non_empty(lang)
            .or_else(|| non_empty(base))
            .or_else(|| non_empty("en"))
            .or_else(|| {
                self.0
                    .iter()
                    .find(|(_, v)| !v.is_empty())
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_default()
    }

    /// The stored JSON form (always the object).
    pub fn to_stored(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }

    /// Reads the stored JSON form; anything else becomes empty.
    pub fn from_stored(value: &Value) -> Self {
        match value {
            Value::Object(map) => Self(
                map.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect(),
            ),
            Value::String(s) => Self::single("en", s),
            _ => Self::default(),
        }
    }
}

/// Most characters of one language's text when a field declares no limit of its own: that of
/// the long texts (descriptions, question texts), which pretix keeps in `TextField`s without
/// one. Fields declare theirs with `#[oai(validator(max_length = N))]`, which applies to each
/// language's text.
pub const MAX_TEXT_CHARS: usize = 100_000;

/// What a multi-language text is, for the document.
pub const DESCRIPTION: &str = "Language code to text, e.g. `{\"en\": \"Ticket\", \"de\": \
     \"Karte\"}`. With `?lang=xx` in the query it is returned as a plain string in that \
     language.";

/// What a multi-language text that may also be given as a plain string is, for the document.
pub const INPUT_DESCRIPTION: &str = "A multi-language string: language code to text, e.g. \
     `{\"en\": \"Talk\", \"de\": \"Vortrag\"}`, or a plain string, kept as \
     `{\"en\": \"...\"}` and shown for every language.";

impl Type for I18nString {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    // Each language's text, so that a field's `max_length` validator limits every one of them.
    type RawElementValueType = String;

    fn name() -> Cow<'static, str> {
        "I18nString".into()
    }

    /// Inline rather than a reference to one shared schema: a field's `max_length` then lands
    /// on the texts (`additionalProperties`), where the document shows it and request bodies
    /// are checked against it, instead of on the object.
    fn schema_ref() -> MetaSchemaRef {
        let mut text = MetaSchema::new("string");
        text.max_length = Some(MAX_TEXT_CHARS);
        let mut schema = MetaSchema::new("object");
        schema.title = Some("I18nString".into());
        schema.description = Some(DESCRIPTION);
        schema.additional_properties = Some(Box::new(MetaSchemaRef::Inline(Box::new(text))));
        // Far more than there are languages to translate into; request bodies are checked
        // against it.
        schema.max_properties = Some(MAX_LANGUAGES);
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn register(_registry: &mut Registry) {}

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(self.0.iter().map(|(_, text)| text))
    }
}

impl ParseFromJSON for I18nString {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::Object(map) => {
                let mut out = Vec::with_capacity(map.len());
                for (k, v) in map {
                    match v {
                        Value::String(s) => out.push((k, s)),
                        _ => {
                            return Err(ParseError::custom("Every language must map to a string."));
                        }
                    }
                }
                Ok(Self(out))
            }
            Value::String(s) => Ok(Self::single("en", &s)),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl ToJSON for I18nString {
    fn to_json(&self) -> Option<Value> {
        Some(match current_lang() {
            Some(lang) => Value::String(self.localize(&lang)),
            None => Value::Object(
                self.0
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect::<Map<_, _>>(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::I18nString;

    #[test]
    fn localize_falls_back_to_english_then_to_any_non_empty_text() {
        let s = I18nString(vec![
            ("de".into(), "Karte".into()),
            ("en".into(), "Ticket".into()),
            ("fr".into(), String::new()),
        ]);
        assert_eq!(s.localize("de"), "Karte");
        assert_eq!(s.localize("de-AT"), "Karte");
        assert_eq!(s.localize("fr"), "Ticket");
        assert_eq!(s.localize("nl"), "Ticket");
        let only_de = I18nString::single("de", "Karte");
        assert_eq!(only_de.localize("en"), "Karte");
    }
}
