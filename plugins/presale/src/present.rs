//! How the shop writes amounts, dates and texts for people.

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;
use serde_json::Value;
use tessera::values::I18nString;
use tessera::values::texts::translate;

/// An amount in cents as a decimal string with two places (`"23.00"`), as pretix's widget
/// reads amounts.
pub fn decimal(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// An amount for people: the currency's code, then the amount (`EUR 23.00`).
pub fn money(cents: i64, currency: &str) -> String {
    format!("{currency} {}", decimal(cents))
}

/// A stored multilingual text in `lang`.
pub fn text(value: &Value, lang: &str) -> String {
    I18nString::from_stored(value).localize(lang)
}

/// A stored optional multilingual text in `lang` (empty without one).
pub fn optional_text(value: Option<&Value>, lang: &str) -> String {
    value.map(|v| text(v, lang)).unwrap_or_default()
}

/// An organizer's text (a description, the front page text) as pretix shows it: Markdown
/// rendered to HTML, where HTML written in the text is shown as text, links lead only to
/// web, mail or local addresses, and pictures are left out (their descriptions stay).
pub fn rich_text(text: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Parser, Tag, TagEnd};
    let safe = |url: &str| {
        let lower = url.to_ascii_lowercase();
        ["https://", "http://", "mailto:", "/", "#"]
            .iter()
            .any(|p| lower.starts_with(p))
            && !url.starts_with("//")
    };
    let events = Parser::new(text).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Some(Event::Start(Tag::Link {
            link_type,
            dest_url: if safe(&dest_url) {
                dest_url
            } else {
                CowStr::from("#")
            },
            title,
            id,
        })),
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        other => Some(other),
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A day in the reader's language: `1 December 2026` (English), `1. Dezember 2026`.
fn day(at: DateTime<Tz>, lang: &str) -> String {
    let month = translate(lang, MONTHS[at.month0() as usize]);
    match lang {
        "de" => format!("{}. {month} {}", at.day(), at.year()),
        _ => format!("{} {month} {}", at.day(), at.year()),
    }
}

/// When something takes place, in its time zone: one day with its times (`1 December
/// 2026, 19:00–22:00`), or the first and last day (`1 December 2026 – 3 December 2026`).
/// Times are left out unless `show_times`.
pub fn date_range(
    from: DateTime<Utc>,
    to: Option<DateTime<Utc>>,
    timezone: &str,
    show_times: bool,
    lang: &str,
) -> String {
    let tz: Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
    let from = from.with_timezone(&tz);
    let to = to.map(|t| t.with_timezone(&tz));
    match to {
        Some(to) if to.date_naive() != from.date_naive() => {
            format!("{} – {}", day(from, lang), day(to, lang))
        }
        Some(to) if show_times => format!(
            "{}, {}–{}",
            day(from, lang),
            from.format("%H:%M"),
            to.format("%H:%M")
        ),
        _ if show_times => format!("{}, {}", day(from, lang), from.format("%H:%M")),
        _ => day(from, lang),
    }
}

/// A moment for people in a time zone: its day and time.
pub fn moment(at: DateTime<Utc>, timezone: &str, lang: &str) -> String {
    let tz: Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
    let at = at.with_timezone(&tz);
    format!("{}, {}", day(at, lang), at.format("%H:%M"))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    #[test]
    fn rich_text_is_markdown_without_html_scripts_or_pictures() {
        assert_eq!(
            rich_text("Two days of **talks**."),
            "<p>Two days of <strong>talks</strong>.</p>\n"
        );
        let html = rich_text(
            "<script>alert(1)</script>\n\nSee [x](javascript:alert(1)) ![a](http://x/p.png)",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains(r##"<a href="#">x</a>"##), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(rich_text("[site](https://example.org)").contains(r#"href="https://example.org""#));
    }

    #[test]
    fn amounts_have_two_decimals() {
        assert_eq!(decimal(2300), "23.00");
        assert_eq!(decimal(-5), "-0.05");
        assert_eq!(money(1999, "EUR"), "EUR 19.99");
    }

    #[test]
    fn dates_are_written_in_the_events_time_zone_and_the_readers_language() {
        let from = Utc.with_ymd_and_hms(2026, 12, 1, 18, 0, 0).unwrap();
        let to = Utc.with_ymd_and_hms(2026, 12, 1, 21, 0, 0).unwrap();
        assert_eq!(
            date_range(from, Some(to), "Europe/Berlin", true, "en"),
            "1 December 2026, 19:00–22:00"
        );
        assert_eq!(
            date_range(from, None, "Europe/Berlin", false, "de"),
            "1. Dezember 2026"
        );
        let later = Utc.with_ymd_and_hms(2026, 12, 3, 18, 0, 0).unwrap();
        assert_eq!(
            date_range(from, Some(later), "UTC", true, "en"),
            "1 December 2026 – 3 December 2026"
        );
    }
}
