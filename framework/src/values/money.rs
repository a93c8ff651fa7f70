//! Money on the wire: a string with exactly two decimals (`"12.50"`), stored as integer cents;
//! and currency codes.

use std::borrow::Cow;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

/// An amount of money in cents. Serialised as a decimal string with two places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Money(pub i64);

impl Money {
    /// The schema format name, recognised by the body validator.
    pub const FORMAT: &'static str = "money";

    /// Parses `"12"`, `"12.5"`, `"-0.01"`; more than two decimals or more than 13 digits
    /// (pretix's limit) are refused with a message fit for a field error.
    pub fn parse(text: &str) -> Result<Self, String> {
        let invalid = || "A valid number is required.".to_string();
        let t = text.trim();
        let (negative, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && frac.is_empty()
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(invalid());
        }
        let frac = frac.trim_end_matches('0');
        if frac.len() > 2 {
            return Err("Ensure that there are no more than 2 decimal places.".into());
        }
        let whole = whole.trim_start_matches('0');
        if whole.len() > 11 {
            return Err("Ensure that there are no more than 13 digits in total.".into());
        }
        let whole: i64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| invalid())?
        };
        let frac: i64 = format!("{frac:0<2}").parse().map_err(|_| invalid())?;
        let cents = whole * 100 + frac;
        Ok(Money(if negative { -cents } else { cents }))
    }

    /// The amount as `"-12.50"`.
    pub fn to_decimal_string(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        format!("{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_decimal_string())
    }
}

impl Type for Money {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "string_money".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut schema = MetaSchema::new_with_format("string", Self::FORMAT);
        schema.example = Some(Value::String("23.00".into()));
        schema.pattern = Some(r"^-?\d{1,11}(\.\d{1,2})?$".into());
        MetaSchemaRef::Inline(Box::new(schema))
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

impl ParseFromJSON for Money {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::String(s) => Money::parse(&s).map_err(ParseError::custom),
            Value::Number(n) => Money::parse(&n.to_string()).map_err(ParseError::custom),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl ToJSON for Money {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(self.to_decimal_string()))
    }
}

/// A decimal number with at most two places, kept exactly in hundredths (`"19.00"` is 1900),
/// e.g. a tax rate in percent. Serialised as a string with two places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Decimal2(pub i64);

impl Decimal2 {
    /// The schema format name, recognised by the body validator.
    pub const FORMAT: &'static str = "decimal";
}

impl Type for Decimal2 {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "string_decimal".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut schema = MetaSchema::new_with_format("string", Self::FORMAT);
        schema.example = Some(Value::String("19.00".into()));
        schema.pattern = Some(r"^-?\d{1,11}(\.\d{1,2})?$".into());
        MetaSchemaRef::Inline(Box::new(schema))
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

impl ParseFromJSON for Decimal2 {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        Money::parse_from_json(value)
            .map(|m| Decimal2(m.0))
            .map_err(ParseError::propagate)
    }
}

impl ToJSON for Decimal2 {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(Money(self.0).to_decimal_string()))
    }
}

/// An ISO 4217 currency code, checked by the body validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Currency(pub String);

impl Currency {
    /// The schema format name, recognised by the body validator.
    pub const FORMAT: &'static str = "iso4217";
}

impl Type for Currency {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "Currency".into()
    }

    /// One shared component, so that code generators make one enumeration of it.
    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Reference(Self::name().into_owned())
    }

    fn register(registry: &mut Registry) {
        registry.create_schema::<Self, _>(Self::name().into_owned(), |_| {
            let mut schema = MetaSchema::new_with_format("string", Self::FORMAT);
            schema.description = Some("ISO 4217 currency code.");
            schema.example = Some(Value::String("EUR".into()));
            schema.enum_items = crate::values::currency::codes()
                .map(|c| Value::String(c.into()))
                .collect();
            schema
        });
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

impl ParseFromJSON for Currency {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::String(s) if crate::values::currency::is_valid(&s) => Ok(Currency(s)),
            Value::String(s) => Err(ParseError::custom(format!(
                "\"{s}\" is not a valid ISO 4217 currency code."
            ))),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl ToJSON for Currency {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::Money;

    #[test]
    fn amounts_parse_to_cents_and_print_with_two_decimals() {
        for (input, cents, printed) in [
            ("12", 1200, "12.00"),
            ("12.5", 1250, "12.50"),
            ("-0.01", -1, "-0.01"),
            ("0.10", 10, "0.10"),
            ("100.000", 10000, "100.00"),
            (".5", 50, "0.50"),
        ] {
            let m = Money::parse(input).expect(input);
            assert_eq!(m.0, cents, "{input}");
            assert_eq!(m.to_decimal_string(), printed);
        }
    }

    #[test]
    fn malformed_or_too_precise_amounts_are_refused() {
        for input in [
            "",
            "-",
            "abc",
            "1.2.3",
            "1e5",
            "0.001",
            "123456789012.00",
            "1,00",
        ] {
            assert!(Money::parse(input).is_err(), "{input}");
        }
    }
}
