//! Times a speaker or a room is available: sent as a list of spans, stored merged (sorted,
//! overlapping and adjacent spans joined), shown with whether each spans whole days.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::domain::refusal::Refusal;

/// A time span: start and end.
pub type Span = (DateTime<Utc>, DateTime<Utc>);

/// Most availabilities sent at once for one speaker or room.
pub const MAX_AVAILABILITIES: usize = 200;

/// The spans sorted, with overlapping and adjacent ones merged; 400 (on `availabilities`)
/// for too many spans or one that does not end after it starts.
pub fn merged(mut times: Vec<Span>) -> Result<Vec<Span>, Refusal> {
    if times.len() > MAX_AVAILABILITIES {
        return Err(Refusal::field("availabilities", "Too many availabilities."));
    }
    if times.iter().any(|(start, end)| end <= start) {
        return Err(Refusal::field(
            "availabilities",
            "An availability must end after it starts.",
        ));
    }
    times.sort();
    let mut out: Vec<Span> = Vec::new();
    for (start, end) in times {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    Ok(out)
}

/// Whether a span runs from midnight to midnight in the time zone `tz`.
pub fn whole_days(tz: Tz, start: DateTime<Utc>, end: DateTime<Utc>) -> bool {
    let midnight = |t: DateTime<Utc>| t.with_timezone(&tz).time() == chrono::NaiveTime::MIN;
    midnight(start) && midnight(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 1, hour, 0, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn overlapping_and_adjacent_spans_merge_and_empty_ones_are_refused() {
        let merged =
            merged(vec![(at(12), at(14)), (at(9), at(10)), (at(10), at(11))]).expect("valid spans");
        assert_eq!(merged, vec![(at(9), at(11)), (at(12), at(14))]);
        assert!(super::merged(vec![(at(9), at(9))]).is_err());
    }
}
