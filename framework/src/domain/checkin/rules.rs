//! Entry rules of a check-in list in JSON logic, with pretix's operators and variables:
//! comparisons, `inList`, `isBefore`/`isAfter` (optional tolerance in minutes), `and`/`or`
//! at the top, and below them `buildTime`, `objectList`, `lookup` and `var`.

use chrono::{DateTime, Datelike, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};

const TOP: &[&str] = &[
    "<", "<=", ">", ">=", "==", "!=", "inList", "isBefore", "isAfter", "or", "and",
];
const NESTED: &[&str] = &["buildTime", "objectList", "lookup", "var"];
const VARIABLES: &[&str] = &[
    "product",
    "variation",
    "now",
    "now_isoweekday",
    "entries_number",
    "entries_today",
    "entries_days",
    "minutes_since_last_entry",
    "minutes_since_first_entry",
];
/// Deepest nesting accepted.
const MAX_DEPTH: usize = 32;

/// Checks rules as pretix does; the message names what is not allowed.
pub fn validate(rules: &Value) -> Result<(), String> {
    match rules {
        Value::Object(m) if m.is_empty() => Ok(()),
        Value::Object(_) => walk(rules, 0, false),
        _ => Err("Rules must be an object.".into()),
    }
}

fn walk(v: &Value, depth: usize, below_comparison: bool) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("The rules are nested too deeply.".into());
    }
    match v {
        Value::Object(m) if m.len() > 1 => {
            Err("Each logic object must hold exactly one operator.".into())
        }
        Value::Object(m) => {
            for (op, args) in m {
                let allowed =
                    TOP.contains(&op.as_str()) || (depth > 0 && NESTED.contains(&op.as_str()));
                if !allowed {
                    return Err(format!("Logic operator \"{op}\" is currently not allowed."));
                }
                if (op == "or" || op == "and") && below_comparison {
                    return Err(
                        "You cannot use OR/AND logic on a level below a comparison operator."
                            .into(),
                    );
                }
                if op == "var" {
                    let name = match args {
                        Value::Array(a) => a.first().and_then(Value::as_str),
                        other => other.as_str(),
                    }
                    .unwrap_or("");
                    if !VARIABLES.contains(&name) {
                        return Err(format!(
                            "Logic variable \"{name}\" is currently not allowed."
                        ));
                    }
                    continue;
                }
                let below = below_comparison || !(op == "or" || op == "and");
                match args {
                    Value::Array(a) => {
                        for x in a {
                            walk(x, depth + 1, below)?;
                        }
                    }
                    other => walk(other, depth + 1, below)?,
                }
            }
            Ok(())
        }
        Value::Array(a) => {
            for x in a {
                walk(x, depth + 1, below_comparison)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What rules are evaluated against.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The position's product.
    pub product: i64,
    /// Its variation.
    pub variation: Option<i64>,
    /// The scan's time.
    pub now: DateTime<Utc>,
    /// The event's time zone.
    pub tz: Tz,
    /// Earlier successful entries on the list, oldest first.
    pub entries: Vec<DateTime<Utc>>,
    /// Start, end and admission of the event or sub-event.
    pub date_from: DateTime<Utc>,
    /// See `date_from`.
    pub date_to: Option<DateTime<Utc>>,
    /// See `date_from`.
    pub date_admission: Option<DateTime<Utc>>,
}

/// The value of a (sub-)expression.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Time(DateTime<Utc>),
    List(Vec<V>),
}

impl V {
    fn truthy(&self) -> bool {
        match self {
            V::Null => false,
            V::Bool(b) => *b,
            V::Num(n) => *n != 0.0,
            V::Str(s) => !s.is_empty(),
            V::Time(_) => true,
            V::List(l) => !l.is_empty(),
        }
    }

    fn num(&self) -> Option<f64> {
        match self {
            V::Num(n) => Some(*n),
            V::Str(s) => s.parse().ok(),
            V::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    fn key(&self) -> String {
        match self {
            V::Num(n) if n.fract() == 0.0 => format!("{}", *n as i64),
            V::Num(n) => n.to_string(),
            V::Str(s) => s.clone(),
            V::Bool(b) => b.to_string(),
            V::Time(t) => t.to_rfc3339(),
            V::Null => String::new(),
            V::List(_) => String::new(),
        }
    }
}

/// Evaluates rules; `Err` carries the explanation of a refusal ("Ticket type not allowed").
pub fn evaluate(rules: &Value, f: &Facts) -> Result<(), String> {
    if rules.as_object().is_none_or(|m| m.is_empty()) {
        return Ok(());
    }
    if eval(rules, f).truthy() {
        Ok(())
    } else {
        Err(explain(rules, f))
    }
}

fn args(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    }
}

fn eval(v: &Value, f: &Facts) -> V {
    match v {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(*b),
        Value::Number(n) => V::Num(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => V::Str(s.clone()),
        Value::Array(a) => V::List(a.iter().map(|x| eval(x, f)).collect()),
        Value::Object(m) => {
            let Some((op, a)) = m.iter().next() else {
                return V::Null;
            };
            let a = args(a);
            let at = |i: usize| a.get(i).map_or(V::Null, |x| eval(x, f));
            match op.as_str() {
                "var" => variable(a.first().and_then(|x| x.as_str()).unwrap_or(""), f),
                "and" => V::Bool(a.iter().all(|x| eval(x, f).truthy())),
                "or" => V::Bool(a.iter().any(|x| eval(x, f).truthy())),
                "==" => V::Bool(equal(&at(0), &at(1))),
                "!=" => V::Bool(!equal(&at(0), &at(1))),
                "<" | "<=" | ">" | ">=" => {
                    let (x, y) = (at(0), at(1));
                    let ord = match (&x, &y) {
                        (V::Time(p), V::Time(q)) => p.partial_cmp(q),
                        _ => x.num().zip(y.num()).and_then(|(p, q)| p.partial_cmp(&q)),
                    };
                    V::Bool(ord.is_some_and(|o| match op.as_str() {
                        "<" => o.is_lt(),
                        "<=" => o.is_le(),
                        ">" => o.is_gt(),
                        _ => o.is_ge(),
                    }))
                }
                "inList" => {
                    let needle = at(0).key();
                    V::Bool(match at(1) {
                        V::List(l) => l.iter().any(|x| x.key() == needle),
                        _ => false,
                    })
                }
                "isBefore" | "isAfter" => {
                    let (V::Time(x), V::Time(y)) = (at(0), at(1)) else {
                        return V::Bool(false);
                    };
                    // At most a year of tolerance; out-of-range arithmetic compares false.
                    let minutes = at(2).num().unwrap_or(0.0).clamp(-525_600.0, 525_600.0);
                    let tol = chrono::Duration::seconds((minutes * 60.0) as i64);
                    V::Bool(if op == "isBefore" {
                        y.checked_add_signed(tol).is_some_and(|y| x < y)
                    } else {
                        y.checked_sub_signed(tol).is_some_and(|y| x > y)
                    })
                }
                "buildTime" => build_time(&at(0), &at(1), f),
                "objectList" => V::List(a.iter().map(|x| eval(x, f)).collect()),
                "lookup" => at(1),
                _ => V::Null,
            }
        }
    }
}

fn equal(x: &V, y: &V) -> bool {
    match (x.num(), y.num()) {
        (Some(p), Some(q)) if !matches!(x, V::Str(_)) || !matches!(y, V::Str(_)) => p == q,
        _ => x == y,
    }
}

fn variable(name: &str, f: &Facts) -> V {
    let today = f.now.with_timezone(&f.tz).date_naive();
    let minutes = |t: Option<&DateTime<Utc>>| {
        t.map_or(V::Num(-1.0), |t| {
            V::Num(((f.now - *t).num_seconds() / 60) as f64)
        })
    };
    match name {
        "product" => V::Num(f.product as f64),
        "variation" => f.variation.map_or(V::Null, |v| V::Num(v as f64)),
        "now" => V::Time(f.now),
        "now_isoweekday" => V::Num(f64::from(
            f.now.with_timezone(&f.tz).weekday().number_from_monday(),
        )),
        "entries_number" => V::Num(f.entries.len() as f64),
        "entries_today" => V::Num(
            f.entries
                .iter()
                .filter(|e| e.with_timezone(&f.tz).date_naive() == today)
                .count() as f64,
        ),
        "entries_days" => {
            let mut days: Vec<_> = f
                .entries
                .iter()
                .map(|e| e.with_timezone(&f.tz).date_naive())
                .collect();
            days.sort_unstable();
            days.dedup();
            V::Num(days.len() as f64)
        }
        "minutes_since_last_entry" => minutes(f.entries.last()),
        "minutes_since_first_entry" => minutes(f.entries.first()),
        _ => V::Null,
    }
}

fn build_time(kind: &V, value: &V, f: &Facts) -> V {
    match kind.key().as_str() {
        "custom" => DateTime::parse_from_rfc3339(&value.key())
            .map_or(V::Null, |t| V::Time(t.with_timezone(&Utc))),
        "customtime" => {
            let Ok(t) = NaiveTime::parse_from_str(&value.key(), "%H:%M:%S")
                .or_else(|_| NaiveTime::parse_from_str(&value.key(), "%H:%M"))
            else {
                return V::Null;
            };
            let day = f.now.with_timezone(&f.tz).date_naive();
            f.tz.from_local_datetime(&day.and_time(t))
                .earliest()
                .map_or(V::Null, |t| V::Time(t.with_timezone(&Utc)))
        }
        "date_from" => V::Time(f.date_from),
        "date_to" => f.date_to.map_or(V::Null, V::Time),
        "date_admission" => V::Time(f.date_admission.unwrap_or(f.date_from)),
        _ => V::Null,
    }
}

/// Why rules refused: the first failing comparison, described as pretix does.
fn explain(rules: &Value, f: &Facts) -> String {
    let mut reasons = Vec::new();
    collect(rules, f, &mut reasons);
    reasons.dedup();
    if reasons.is_empty() {
        "Rules not satisfied".into()
    } else {
        reasons.join(", ")
    }
}

fn collect(v: &Value, f: &Facts, out: &mut Vec<String>) {
    let Some((op, a)) = v.as_object().and_then(|m| m.iter().next()) else {
        return;
    };
    if eval(v, f).truthy() {
        return;
    }
    let a = args(a);
    match op.as_str() {
        "and" | "or" => {
            for x in a {
                collect(x, f, out);
            }
        }
        "inList" => {
            let var = a
                .first()
                .and_then(|x| x.get("var"))
                .and_then(|x| args(x).first().and_then(|s| s.as_str()).map(str::to_owned));
            out.push(match var.as_deref() {
                Some("variation") => "Ticket type variation not allowed".into(),
                _ => "Ticket type not allowed".into(),
            });
        }
        "isBefore" | "isAfter" => {
            let at = a.get(1).map_or(V::Null, |x| eval(x, f));
            let when = match at {
                V::Time(t) => t.with_timezone(&f.tz).format("%H:%M").to_string(),
                _ => "?".into(),
            };
            out.push(if op == "isBefore" {
                format!("Only allowed before {when}")
            } else {
                format!("Only allowed after {when}")
            });
        }
        _ => {
            let var = a
                .iter()
                .find_map(|x| x.get("var"))
                .and_then(|x| args(x).first().and_then(|s| s.as_str()).map(str::to_owned));
            out.push(match var.as_deref() {
                Some("entries_number") => "Maximum number of entries exceeded".into(),
                Some("entries_today") => "Maximum number of entries today exceeded".into(),
                Some("entries_days") => "Maximum number of days with an entry exceeded".into(),
                Some("now_isoweekday") => "Not allowed on this weekday".into(),
                Some("minutes_since_last_entry") | Some("minutes_since_first_entry") => {
                    "Not allowed this soon after an entry".into()
                }
                Some(other) => format!("Condition on {other} not met"),
                None => "Rules not satisfied".into(),
            });
        }
    }
}

/// A rule admitting only these products (for tests and the demo).
pub fn only_products(ids: &[i64]) -> Value {
    json!({"inList": [{"var": "product"}, {"objectList": ids.iter().map(|i| json!({"lookup": ["product", i.to_string(), ""]})).collect::<Vec<_>>()}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(entries: usize) -> Facts {
        let now = Utc
            .with_ymd_and_hms(2026, 5, 4, 12, 0, 0)
            .single()
            .expect("time");
        Facts {
            product: 3,
            variation: None,
            now,
            tz: chrono_tz::UTC,
            entries: vec![now - chrono::Duration::hours(1); entries],
            date_from: now,
            date_to: None,
            date_admission: None,
        }
    }

    #[test]
    fn an_object_with_two_operators_is_refused() {
        let two = json!({"and": [true, true], "or": [false, false]});
        assert!(validate(&two).is_err());
        assert!(validate(&json!({"and": [{"==": [1, 1], "!=": [1, 2]}]})).is_err());
    }

    #[test]
    fn a_product_rule_admits_only_listed_products() {
        let rule = only_products(&[3, 4]);
        assert!(validate(&rule).is_ok());
        assert!(evaluate(&rule, &facts(0)).is_ok());
        let other = only_products(&[5]);
        assert_eq!(
            evaluate(&other, &facts(0)),
            Err("Ticket type not allowed".into())
        );
    }

    #[test]
    fn an_entry_count_rule_refuses_the_third_entry() {
        let rule = json!({"<": [{"var": "entries_number"}, 2]});
        assert!(evaluate(&rule, &facts(1)).is_ok());
        assert!(evaluate(&rule, &facts(2)).is_err());
    }

    #[test]
    fn unknown_operators_and_nested_or_are_refused() {
        assert_eq!(
            validate(&json!({"foo": [1, 2]})),
            Err("Logic operator \"foo\" is currently not allowed.".into())
        );
        assert_eq!(
            validate(&json!({"==": [{"or": [1, 2]}, 1]})),
            Err("You cannot use OR/AND logic on a level below a comparison operator.".into())
        );
        assert_eq!(
            validate(&json!({"==": [{"var": "secret"}, 1]})),
            Err("Logic variable \"secret\" is currently not allowed.".into())
        );
    }
}
