//! An instant as pretix's API prints one: ISO 8601 in UTC with `Z`, with six decimals when it
//! has a fraction of a second (`2026-11-27T17:39:51.123456Z`) and none when it has not
//! (`2026-11-27T17:39:51Z`). Reading accepts any RFC 3339 instant, kept to the microsecond
//! (as the database keeps it, so that an answer and a later read agree).

use std::borrow::Cow;

use chrono::{DateTime, SecondsFormat, SubsecRound, Timelike, Utc};
use poem_openapi::registry::MetaSchemaRef;
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

/// An instant in the API's answers (and bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

/// `t` as pretix prints an instant (see the module's documentation).
pub fn iso(t: DateTime<Utc>) -> String {
    let places = if t.nanosecond() / 1_000 == 0 {
        SecondsFormat::Secs
    } else {
        SecondsFormat::Micros
    };
    t.to_rfc3339_opts(places, true)
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(t: Timestamp) -> Self {
        t.0
    }
}

impl std::ops::Deref for Timestamp {
    type Target = DateTime<Utc>;

    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl Type for Timestamp {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        <DateTime<Utc> as Type>::name()
    }

    fn schema_ref() -> MetaSchemaRef {
        <DateTime<Utc> as Type>::schema_ref()
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(self.as_raw_value().into_iter())
    }
}

impl ParseFromJSON for Timestamp {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        DateTime::<Utc>::parse_from_json(value)
            .map(|t| Self(t.trunc_subsecs(6)))
            .map_err(ParseError::propagate)
    }
}

impl ToJSON for Timestamp {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(iso(self.0)))
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&iso(self.0))
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::iso;

    #[test]
    fn instants_are_printed_as_pretix_prints_them() {
        let whole = chrono::Utc
            .with_ymd_and_hms(2026, 11, 27, 17, 39, 51)
            .unwrap();
        assert_eq!(iso(whole), "2026-11-27T17:39:51Z");
        let fraction = whole + chrono::Duration::microseconds(120_000);
        assert_eq!(iso(fraction), "2026-11-27T17:39:51.120000Z");
        let finer = whole + chrono::Duration::nanoseconds(999);
        assert_eq!(iso(finer), "2026-11-27T17:39:51Z");
    }

    #[test]
    fn a_time_read_is_kept_to_the_microsecond() {
        use poem_openapi::types::ParseFromJSON;
        let sent = serde_json::json!("2026-11-27T18:39:51.1234567+01:00");
        let read = super::Timestamp::parse_from_json(Some(sent)).expect("an instant");
        assert_eq!(iso(read.0), "2026-11-27T17:39:51.123456Z");
    }
}
