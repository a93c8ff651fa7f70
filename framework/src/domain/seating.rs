//! Seating plans, and the seats an event gets from one.
//!
//! # Layout schema
//!
//! A plan's `layout` is a JSON object like pretix's seating plans. Keys not listed here are
//! allowed and kept as they are (front ends store drawing data in them).
//!
//! ```json
//! {
//!   "name": "Main hall",
//!   "categories": [{"name": "Stalls", "color": "#e74c3c"}],
//!   "zones": [{
//!     "name": "Ground floor",
//!     "position": {"x": 0, "y": 0},
//!     "rows": [{
//!       "row_number": "3",
//!       "row_label": null,
//!       "seats": [{
//!         "seat_guid": "gf-3-12",
//!         "seat_number": "12",
//!         "seat_label": null,
//!         "category": "Stalls",
//!         "position": {"x": 120.5, "y": 40}
//!       }]
//!     }]
//!   }]
//! }
//! ```
//!
//! | Key | Type | Rule |
//! |---|---|---|
//! | `name` | string | required |
//! | `categories` | list of objects | required; each has a unique string `name` and an optional string `color` |
//! | `zones` | list of objects | required; each has a string `name`, an optional object `position` and a list `rows` |
//! | `rows[]` | object | string `row_number`, optional string `row_label`, list `seats` |
//! | `seats[]` | object | string `seat_guid` (not empty, unique in the whole plan), string `seat_number`, string `category` (declared in `categories`), optional string `seat_label`, optional `position` |
//! | `position` | object | numbers `x` and `y` |
//!
//! A plan has at most [`MAX_CATEGORIES`] categories, [`MAX_ZONES`] zones, [`MAX_ROWS`] rows
//! and [`MAX_SEATS`] seats.
//!
//! A seat's human-readable name joins the zone name, the row (`row_label`, or "Row
//! {row_number}") and the seat (`seat_label`, or "Seat {seat_number}") with commas, as pretix
//! does: "Ground floor, Row 3, Seat 12".

mod assign;
mod plans;
mod seats;
pub mod sell;

pub use assign::{AssignError, assign, clone_seats};
pub use plans::{
    PlanChanges, PlanError, count_plans, create_plan, delete_plan, find_plan, list_plans,
    plan_in_use, update_plan,
};
pub use seats::{
    SeatFilter, SeatPick, SeatState, count_seats, find_seat, list_seats, of as seats_of, scope_of,
    set_blocked, set_blocked_many, state,
};

use std::collections::HashSet;

use serde_json::{Map, Value};

/// Where seats are: an event that is not a series, or one date of a series. Each has seats
/// of its own, made from its own plan, so a seat of a plan is sold once per date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeatScope {
    /// The event.
    pub event_id: i64,
    /// The date; `None` for the event's own seats.
    pub subevent_id: Option<i64>,
}

impl SeatScope {
    /// The event's own seats.
    pub fn event(event_id: i64) -> Self {
        Self {
            event_id,
            subevent_id: None,
        }
    }
}

/// Most categories a layout may declare. Plans have a handful; the cap bounds the work of
/// checking a layout and of `seat_category_mapping`, whose keys are categories.
pub const MAX_CATEGORIES: usize = 1_000;
/// Most zones a layout may have.
pub const MAX_ZONES: usize = 1_000;
/// Most rows a layout may have, over all zones.
pub const MAX_ROWS: usize = 100_000;
/// Most seats a layout may have, over all zones and rows. pretix's largest seating plans have
/// tens of thousands of seats; every seat becomes a row of each event using the plan.
pub const MAX_SEATS: usize = 100_000;
/// Most characters of a string in a layout (names, labels, numbers, seat identifiers,
/// colours): pretix's length of the seat's fields and of `seat_category_mapping`'s categories.
pub const MAX_TEXT_CHARS: usize = 190;

/// A seat as a layout describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutSeat {
    /// Identifier, unique in the plan.
    pub guid: String,
    /// Human-readable name, e.g. "Ground floor, Row 3, Seat 12".
    pub name: String,
    /// Name of the zone.
    pub zone_name: String,
    /// Row number or name.
    pub row_name: String,
    /// Seat number.
    pub seat_number: String,
    /// Category name.
    pub category: String,
}

/// A checked layout: its category names and every seat, in layout order.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Declared category names, in layout order, each once.
    pub categories: Vec<String>,
    /// Every seat of every zone and row.
    pub seats: Vec<LayoutSeat>,
}

impl Layout {
    /// The declared category names, for lookups.
    pub fn category_set(&self) -> HashSet<&str> {
        self.categories.iter().map(String::as_str).collect()
    }
}

/// Why [`check_layout`] or [`read_layout`] refused a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The layout breaks the schema; the message names where.
    Invalid(String),
    /// The check could not run to its end (it panicked); a fault, not bad input.
    Aborted,
}

/// Checks a layout against the schema above; the error names where the layout is wrong.
/// This takes CPU time in proportion to the layout's size: in request handlers use
/// [`check_layout`], which runs it off the async workers.
pub fn validate_layout(layout: &Value) -> Result<(), String> {
    parse_layout(layout).map(|_| ())
}

/// [`validate_layout`] on tokio's blocking pool, giving the layout back when it is valid.
///
/// A plan of [`MAX_SEATS`] seats takes tens of milliseconds to check; on an async worker that
/// would stall every other request the worker serves, whoever sent them.
pub async fn check_layout(layout: Value) -> Result<Value, LayoutError> {
    off_worker(move || validate_layout(&layout).map(|()| layout)).await
}

/// [`parse_layout`] on tokio's blocking pool, for the reasons given at [`check_layout`].
pub async fn read_layout(layout: Value) -> Result<Layout, LayoutError> {
    off_worker(move || parse_layout(&layout)).await
}

async fn off_worker<T: Send + 'static>(
    check: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, LayoutError> {
    match tokio::task::spawn_blocking(check).await {
        Ok(result) => result.map_err(LayoutError::Invalid),
        Err(e) => {
            tracing::error!(error = %e, "checking a seating layout failed");
            Err(LayoutError::Aborted)
        }
    }
}

/// Checks a layout and reads its categories and seats, in time linear in the layout's size.
/// Refuses layouts over the caps ([`MAX_CATEGORIES`], [`MAX_ZONES`], [`MAX_ROWS`],
/// [`MAX_SEATS`]) before reading their entries.
pub fn parse_layout(layout: &Value) -> Result<Layout, String> {
    let root = object(layout, "The layout")?;
    string(root, "name", "The layout")?;
    let declared = list(root, "categories", "The layout")?;
    capped(declared.len(), MAX_CATEGORIES, "categories", "categories")?;
    let mut categories = Vec::with_capacity(declared.len());
    let mut category_set = HashSet::with_capacity(declared.len());
    for (i, c) in declared.iter().enumerate() {
        let at = format!("categories[{i}]");
        let c = object(c, &at)?;
        let name = string(c, "name", &at)?;
        optional_string(c, "color", &at)?;
        if !category_set.insert(name) {
            return Err(format!("{at}: the category \"{name}\" is declared twice."));
        }
        categories.push(name.to_owned());
    }
    let zones = list(root, "zones", "The layout")?;
    capped(zones.len(), MAX_ZONES, "zones", "zones")?;
    let mut rows_seen = 0;
    let mut seats = Vec::new();
    let mut guids = HashSet::new();
    for (z, zone) in zones.iter().enumerate() {
        let at = format!("zones[{z}]");
        let zone = object(zone, &at)?;
        let zone_name = string(zone, "name", &at)?;
        optional_position(zone, &at, false)?;
        let rows = list(zone, "rows", &at)?;
        rows_seen += rows.len();
        capped(rows_seen, MAX_ROWS, &format!("{at}.rows"), "rows")?;
        for (r, row) in rows.iter().enumerate() {
            let at = format!("zones[{z}].rows[{r}]");
            let row = object(row, &at)?;
            let row_number = string(row, "row_number", &at)?;
            let row_label = optional_string(row, "row_label", &at)?;
            let row_seats = list(row, "seats", &at)?;
            capped(
                seats.len() + row_seats.len(),
                MAX_SEATS,
                &format!("{at}.seats"),
                "seats",
            )?;
            for (s, seat) in row_seats.iter().enumerate() {
                let at = format!("zones[{z}].rows[{r}].seats[{s}]");
                let seat = object(seat, &at)?;
                let guid = string(seat, "seat_guid", &at)?;
                let seat_number = string(seat, "seat_number", &at)?;
                let seat_label = optional_string(seat, "seat_label", &at)?;
                let category = string(seat, "category", &at)?;
                optional_position(seat, &at, true)?;
                if guid.is_empty() {
                    return Err(format!("{at}: \"seat_guid\" must not be empty."));
                }
                if !category_set.contains(category) {
                    return Err(format!(
                        "{at}: the category \"{category}\" is not declared in \"categories\"."
                    ));
                }
                if !guids.insert(guid) {
                    return Err(format!(
                        "{at}: the seat_guid \"{guid}\" is used more than once."
                    ));
                }
                seats.push(LayoutSeat {
                    guid: guid.to_owned(),
                    name: seat_name(zone_name, row_label, row_number, seat_label, seat_number),
                    zone_name: zone_name.to_owned(),
                    row_name: row_number.to_owned(),
                    seat_number: seat_number.to_owned(),
                    category: category.to_owned(),
                });
            }
        }
    }
    Ok(Layout { categories, seats })
}

/// Refuses a layout once it has more than `max` of `what` (counted up to `at`).
fn capped(count: usize, max: usize, at: &str, what: &str) -> Result<(), String> {
    if count > max {
        return Err(format!(
            "{at}: a layout may have no more than {max} {what}."
        ));
    }
    Ok(())
}

fn seat_name(
    zone: &str,
    row_label: Option<&str>,
    row_number: &str,
    seat_label: Option<&str>,
    seat_number: &str,
) -> String {
    let mut parts = Vec::new();
    if !zone.is_empty() {
        parts.push(zone.to_owned());
    }
    match row_label.filter(|l| !l.is_empty()) {
        Some(label) => parts.push(label.to_owned()),
        None if !row_number.is_empty() => parts.push(format!("Row {row_number}")),
        None => {}
    }
    match seat_label.filter(|l| !l.is_empty()) {
        Some(label) => parts.push(label.to_owned()),
        None if !seat_number.is_empty() => parts.push(format!("Seat {seat_number}")),
        None => {}
    }
    parts.join(", ")
}

fn object<'a>(value: &'a Value, at: &str) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{at} must be a JSON object."))
}

fn string<'a>(map: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str, String> {
    match map.get(key) {
        None => Err(format!("{at}: \"{key}\" is required.")),
        Some(v) => v
            .as_str()
            .ok_or_else(|| format!("{at}: \"{key}\" must be a string."))
            .and_then(|s| bounded(s, key, at)),
    }
}

/// `text` unless it is longer than [`MAX_TEXT_CHARS`]: seats store these strings, and the
/// errors that follow quote them.
fn bounded<'a>(text: &'a str, key: &str, at: &str) -> Result<&'a str, String> {
    if text.chars().nth(MAX_TEXT_CHARS).is_some() {
        return Err(format!(
            "{at}: \"{key}\" may have no more than {MAX_TEXT_CHARS} characters."
        ));
    }
    Ok(text)
}

fn optional_string<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<Option<&'a str>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => bounded(s, key, at).map(Some),
        Some(_) => Err(format!("{at}: \"{key}\" must be a string.")),
    }
}

fn list<'a>(map: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Vec<Value>, String> {
    match map.get(key) {
        None => Err(format!("{at}: \"{key}\" is required.")),
        Some(v) => v
            .as_array()
            .ok_or_else(|| format!("{at}: \"{key}\" must be a list.")),
    }
}

/// A `position` must be an object; on seats it needs numeric `x` and `y`, on zones they are
/// numbers when present.
fn optional_position(map: &Map<String, Value>, at: &str, need_xy: bool) -> Result<(), String> {
    let Some(position) = map.get("position") else {
        return Ok(());
    };
    let at = format!("{at}.position");
    let position = object(position, &at)?;
    for key in ["x", "y"] {
        match position.get(key) {
            Some(v) if v.is_number() => {}
            None if !need_xy => {}
            _ => return Err(format!("{at}: \"{key}\" must be a number.")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MAX_CATEGORIES, MAX_TEXT_CHARS, parse_layout, validate_layout};

    #[test]
    fn strings_of_a_layout_are_bounded_in_characters() {
        let layout = |guid: &str| {
            json!({"name": "Hall", "categories": [{"name": "A"}], "zones": [
                {"name": "", "rows": [{"row_number": "1", "seats": [
                    {"seat_guid": guid, "seat_number": "1", "category": "A"}]}]}]})
        };
        let at_limit = "ä".repeat(MAX_TEXT_CHARS);
        assert!(validate_layout(&layout(&at_limit)).is_ok());
        let err = validate_layout(&layout(&format!("{at_limit}a"))).expect_err("too long");
        assert_eq!(
            err,
            "zones[0].rows[0].seats[0]: \"seat_guid\" may have no more than 190 characters."
        );
    }

    #[test]
    fn seat_names_join_zone_row_and_seat() {
        let layout = json!({"name": "Hall", "categories": [{"name": "A"}], "zones": [
            {"name": "", "rows": [{"row_number": "3", "seats": [
                {"seat_guid": "a", "seat_number": "12", "category": "A"}]}]},
            {"name": "Balcony", "rows": [{"row_number": "1", "row_label": "Front", "seats": [
                {"seat_guid": "b", "seat_number": "1", "seat_label": "Aisle", "category": "A"}]}]}
        ]});
        let parsed = parse_layout(&layout).expect("valid");
        assert_eq!(parsed.seats[0].name, "Row 3, Seat 12");
        assert_eq!(parsed.seats[1].name, "Balcony, Front, Aisle");
    }

    #[test]
    fn a_seat_without_position_numbers_is_invalid() {
        let layout = json!({"name": "Hall", "categories": [{"name": "A"}], "zones": [
            {"name": "", "rows": [{"row_number": "3", "seats": [
                {"seat_guid": "a", "seat_number": "12", "category": "A", "position": {"x": 1}}]}]}
        ]});
        let err = validate_layout(&layout).expect_err("invalid");
        assert!(err.contains("seats[0].position"), "{err}");
    }

    #[test]
    fn categories_are_capped_and_looked_up_by_set() {
        let layout = |n: usize| {
            let categories: Vec<_> = (0..n).map(|c| json!({"name": format!("c{c}")})).collect();
            let last = format!("c{}", n - 1);
            let seats: Vec<_> = (0..n)
                .map(|s| json!({"seat_guid": format!("s{s}"), "seat_number": "", "category": last}))
                .collect();
            json!({"name": "Hall", "categories": categories,
                "zones": [{"name": "", "rows": [{"row_number": "1", "seats": seats}]}]})
        };
        let parsed = parse_layout(&layout(MAX_CATEGORIES)).expect("at the cap");
        assert_eq!(parsed.categories.len(), MAX_CATEGORIES);
        assert_eq!(parsed.seats.len(), MAX_CATEGORIES);
        let err = validate_layout(&layout(MAX_CATEGORIES + 1)).expect_err("over the cap");
        assert_eq!(
            err,
            "categories: a layout may have no more than 1000 categories."
        );
    }
}
