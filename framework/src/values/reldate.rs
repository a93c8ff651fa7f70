//! Dates that settings give either fixed or relative to one of an event's (or an order's)
//! own dates, written as pretix writes them: an ISO 8601 instant, or
//! `RELDATE/{days}/{HH:MM:SS|-}/{base}/[after]` and `RELDATE/minutes/{n}/{base}/[after]`,
//! where `base` is `event__date_from`, `event__date_to`, `event__date_admission`,
//! `event__presale_start`, `event__presale_end`, `order__datetime` or `order__expires` (an
//! old value names the event's attribute alone). A deadline such as "until two days before
//! the event starts, at 18:00" then moves with the event, and differs per date of a series.

use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;

/// Most characters of a written relative date: far more than the longest form needs.
pub const MAX_CHARS: usize = 80;

/// Most days before or after its base a relative date may lie: about a hundred years.
const MAX_DAYS: i64 = 36_500;

/// A date given fixed or relative to a base date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelativeDate {
    /// This instant.
    Fixed(DateTime<Utc>),
    /// Days (then a time of day, in the event's zone) or minutes before or after a base.
    Relative {
        /// Whole days from the base's day.
        days: i64,
        /// Minutes from the base instead of days (then `time` is unused).
        minutes: Option<i64>,
        /// The time of day on the resulting day; the base's own time when `None`.
        time: Option<NaiveTime>,
        /// After the base rather than before it.
        after: bool,
        /// What the date is relative to.
        base: Base,
    },
}

/// The dates a relative date can be relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The event's (or date's) start.
    DateFrom,
    /// Its end (its start when it has none).
    DateTo,
    /// Its admission (its start when it has none).
    DateAdmission,
    /// Its presale start (its start when it has none).
    PresaleStart,
    /// Its presale end (its start when it has none).
    PresaleEnd,
    /// When the order was placed.
    OrderDatetime,
    /// When the order's payment term ends.
    OrderExpires,
}

impl Base {
    fn parse(key: &str) -> Option<Self> {
        let key = key.strip_suffix("__").unwrap_or(key);
        let attribute = match key.strip_prefix("event__") {
            Some(rest) if rest.starts_with("order__") => return None,
            Some(rest) => rest,
            None => key,
        };
        Some(match attribute {
            "date_from" => Base::DateFrom,
            "date_to" => Base::DateTo,
            "date_admission" => Base::DateAdmission,
            "presale_start" => Base::PresaleStart,
            "presale_end" => Base::PresaleEnd,
            "order__datetime" => Base::OrderDatetime,
            "order__expires" => Base::OrderExpires,
            _ => return None,
        })
    }
}

/// The dates a relative date is resolved against: an event's, or one date's of a series
/// (whose missing dates fall back as pretix's do), and an order's where there is one.
#[derive(Debug, Clone, Copy)]
pub struct Bases {
    /// The event's zone, for times of day.
    pub zone: Tz,
    /// Start.
    pub date_from: DateTime<Utc>,
    /// End.
    pub date_to: Option<DateTime<Utc>>,
    /// Admission.
    pub date_admission: Option<DateTime<Utc>>,
    /// Presale start.
    pub presale_start: Option<DateTime<Utc>>,
    /// Presale end.
    pub presale_end: Option<DateTime<Utc>>,
    /// The order's placement and payment term, where a date concerns an order.
    pub order: Option<(DateTime<Utc>, Option<DateTime<Utc>>)>,
}

impl RelativeDate {
    /// Reads a written date; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        if text.len() > MAX_CHARS {
            return None;
        }
        let Some(rest) = text.strip_prefix("RELDATE/") else {
            return DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|d| RelativeDate::Fixed(d.with_timezone(&Utc)));
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let after = match parts.get(3).copied() {
            None | Some("") => false,
            Some("after") => true,
            Some(_) => return None,
        };
        if parts.len() > 4 || parts.len() < 3 {
            return None;
        }
        let base = Base::parse(parts[2])?;
        let bounded = |n: &str, most: i64| n.parse::<i64>().ok().filter(|n| (0..=most).contains(n));
        let (days, minutes, time) = if parts[0] == "minutes" {
            (0, Some(bounded(parts[1], MAX_DAYS * 24 * 60)?), None)
        } else {
            let days = if parts[0].is_empty() {
                0
            } else {
                bounded(parts[0], MAX_DAYS)?
            };
            let time = match parts[1] {
                "-" => None,
                t => Some(NaiveTime::parse_from_str(t, "%H:%M:%S").ok()?),
            };
            (days, None, time)
        };
        let relative = RelativeDate::Relative {
            days,
            minutes,
            time,
            after,
            base,
        };
        // Order placement lies in the past of every deadline relative to it.
        let before_placement = !after && base == Base::OrderDatetime;
        (!before_placement).then_some(relative)
    }

    /// The instant this date stands for; `None` when it is relative to an order's date and
    /// there is no order.
    pub fn resolve(&self, on: &Bases) -> Option<DateTime<Utc>> {
        let (days, minutes, time, after, base) = match self {
            RelativeDate::Fixed(at) => return Some(*at),
            RelativeDate::Relative {
                days,
                minutes,
                time,
                after,
                base,
            } => (days, minutes, time, after, base),
        };
        let start = on.date_from;
        let base = match base {
            Base::DateFrom => start,
            Base::DateTo => on.date_to.unwrap_or(start),
            Base::DateAdmission => on.date_admission.unwrap_or(start),
            Base::PresaleStart => on.presale_start.unwrap_or(start),
            Base::PresaleEnd => on.presale_end.unwrap_or(start),
            Base::OrderDatetime => on.order?.0,
            Base::OrderExpires => on.order?.1?,
        };
        let sign = if *after { 1 } else { -1 };
        if let Some(minutes) = minutes {
            return Some(base + Duration::minutes(sign * minutes));
        }
        // Days count on the event's calendar, so that a change of daylight saving time in
        // between keeps the time of day.
        let local = base.with_timezone(&on.zone).naive_local() + Duration::days(sign * days);
        let local = match time {
            Some(time) => local.date().and_time(*time),
            None => local,
        };
        // A time the clocks skip (spring forward) counts as an hour later.
        [local, local + Duration::hours(1)]
            .iter()
            .find_map(|l| on.zone.from_local_datetime(l).earliest())
            .map(|d| d.with_timezone(&Utc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases() -> Bases {
        Bases {
            zone: chrono_tz::Europe::Berlin,
            date_from: "2027-03-10T09:00:00Z".parse().expect("date"),
            date_to: None,
            date_admission: None,
            presale_start: None,
            presale_end: Some("2027-03-01T12:00:00Z".parse().expect("date")),
            order: None,
        }
    }

    fn at(text: &str) -> Option<String> {
        RelativeDate::parse(text)
            .expect("a valid date")
            .resolve(&bases())
            .map(|d| d.to_rfc3339())
    }

    #[test]
    fn days_before_the_start_land_on_the_time_of_day_in_the_events_zone() {
        assert_eq!(
            at("RELDATE/2/18:00:00/event__date_from/").as_deref(),
            Some("2027-03-08T17:00:00+00:00")
        );
        assert_eq!(
            at("RELDATE/2/-/date_from/").as_deref(),
            Some("2027-03-08T09:00:00+00:00")
        );
    }

    #[test]
    fn minutes_after_a_base_and_a_missing_base_falling_back_to_the_start() {
        assert_eq!(
            at("RELDATE/minutes/90/event__presale_end/after").as_deref(),
            Some("2027-03-01T13:30:00+00:00")
        );
        assert_eq!(
            at("RELDATE/1/-/event__date_to/after").as_deref(),
            Some("2027-03-11T09:00:00+00:00")
        );
        assert_eq!(at("RELDATE/1/-/order__expires/after"), None);
    }

    #[test]
    fn days_keep_the_time_of_day_across_a_change_of_daylight_saving_time() {
        // Berlin moves its clocks forward on 2027-03-28; the event starts on 2027-04-01.
        let on = Bases {
            date_from: "2027-04-01T08:00:00Z".parse().expect("date"),
            ..bases()
        };
        let date = RelativeDate::parse("RELDATE/7/-/event__date_from/").expect("date");
        assert_eq!(
            date.resolve(&on).map(|d| d.to_rfc3339()).as_deref(),
            Some("2027-03-25T09:00:00+00:00")
        );
        let skipped = RelativeDate::parse("RELDATE/4/02:30:00/event__date_from/").expect("date");
        assert_eq!(
            skipped.resolve(&on).map(|d| d.to_rfc3339()).as_deref(),
            Some("2027-03-28T01:30:00+00:00")
        );
    }

    #[test]
    fn fixed_instants_and_malformed_dates() {
        assert_eq!(
            at("2027-01-01T10:00:00+01:00").as_deref(),
            Some("2027-01-01T09:00:00+00:00")
        );
        for bad in [
            "RELDATE/x/-/date_from/",
            "RELDATE/1/25:00:00/date_from/",
            "RELDATE/1/-/nothing/",
            "RELDATE/1/-/date_from/later",
            "RELDATE/99999999/-/date_from/",
            "RELDATE/1/-/order__datetime/",
            "RELDATE/1/-/event__order__datetime/after",
            "tomorrow",
        ] {
            assert_eq!(RelativeDate::parse(bad), None, "{bad}");
        }
    }
}
