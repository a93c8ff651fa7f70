//! Scheduled talks as iCalendar (RFC 5545): one `VEVENT` per talk, times in UTC, text
//! escaped and lines folded as the RFC asks, so that any calendar reads them.

use chrono::{DateTime, Utc};

/// A scheduled talk, as a calendar shows it.
#[derive(Debug, Clone)]
pub struct Talk<'a> {
    /// The submission's code.
    pub code: &'a str,
    /// Which of the submission's slots this is (0 for the first), when it has several in the
    /// schedule: it keeps the identifiers of the entries apart.
    pub index: Option<usize>,
    /// Title.
    pub title: &'a str,
    /// The speakers' names, in order.
    pub speakers: &'a [String],
    /// Abstract.
    pub abstract_: Option<&'a str>,
    /// The room's name.
    pub room: &'a str,
    /// Start.
    pub start: DateTime<Utc>,
    /// End.
    pub end: DateTime<Utc>,
}

/// A calendar of `talks` of the event `event_slug`, served from the host `netloc`; `prodid`
/// names the export (calendars tell exports apart by it). Lines end in CRLF.
pub fn calendar(
    event_slug: &str,
    netloc: &str,
    prodid: &str,
    talks: &[Talk<'_>],
    stamp: DateTime<Utc>,
) -> String {
    let mut out = String::new();
    line(&mut out, "BEGIN:VCALENDAR");
    line(&mut out, "VERSION:2.0");
    line(
        &mut out,
        &format!("PRODID:-//tessera//{}//{}", text(netloc), text(prodid)),
    );
    for talk in talks {
        let suffix = talk.index.map(|i| format!("-{i}")).unwrap_or_default();
        let summary = if talk.speakers.is_empty() {
            talk.title.to_owned()
        } else {
            format!("{} - {}", talk.title, talk.speakers.join(", "))
        };
        line(&mut out, "BEGIN:VEVENT");
        line(
            &mut out,
            &format!(
                "UID:tessera-{}-{}{suffix}@{}",
                text(event_slug),
                text(talk.code),
                text(netloc)
            ),
        );
        line(&mut out, &format!("DTSTAMP:{}", instant(stamp)));
        line(&mut out, &format!("DTSTART:{}", instant(talk.start)));
        line(&mut out, &format!("DTEND:{}", instant(talk.end)));
        line(&mut out, &format!("SUMMARY:{}", text(&summary)));
        line(&mut out, &format!("LOCATION:{}", text(talk.room)));
        if let Some(description) = talk.abstract_.filter(|d| !d.is_empty()) {
            line(&mut out, &format!("DESCRIPTION:{}", text(description)));
        }
        line(&mut out, "END:VEVENT");
    }
    line(&mut out, "END:VCALENDAR");
    out
}

/// The host (and port) of a base URL: `https://example.org:8443/x` gives
/// `example.org:8443`.
pub fn netloc(base_url: &str) -> &str {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// A UTC time in the RFC's form (`20260501T093000Z`).
fn instant(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// A TEXT value: backslashes, semicolons and commas escaped, line breaks as `\n`, other
/// control characters left out (the RFC allows none in TEXT but the tab).
fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push_str("\\n");
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Appends a content line folded at 75 octets (continuations start with a space), never
/// inside a character, and ended by CRLF.
fn line(out: &mut String, content: &str) {
    let mut width = 0;
    for c in content.chars() {
        let len = c.len_utf8();
        if width + len > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += len;
    }
    out.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn text_is_escaped_and_long_lines_are_folded_between_characters() {
        assert_eq!(text("a;b,c\\d\r\ne\u{7}"), "a\\;b\\,c\\\\d\\ne");
        let mut out = String::new();
        line(&mut out, &format!("SUMMARY:{}", "ä".repeat(60)));
        let lines: Vec<&str> = out.split("\r\n").collect();
        assert!(lines.iter().all(|l| l.len() <= 75), "{lines:?}");
        assert!(lines[1].starts_with(' '));
        assert_eq!(
            out.replace("\r\n ", ""),
            format!("SUMMARY:{}\r\n", "ä".repeat(60))
        );
    }

    #[test]
    fn a_calendar_has_one_event_per_talk_in_utc() {
        let start = Utc
            .with_ymd_and_hms(2026, 5, 1, 9, 30, 0)
            .single()
            .expect("valid");
        let speakers = vec!["Ada".to_owned(), "Grace".to_owned()];
        let talk = Talk {
            code: "ABC",
            index: None,
            title: "Rust, fast",
            speakers: &speakers,
            abstract_: Some("Why"),
            room: "Hall 1",
            start,
            end: start + chrono::Duration::minutes(30),
        };
        let ics = calendar("conf", "example.org", "conf//ABC", &[talk], start);
        assert!(ics.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"));
        assert!(ics.contains("\r\nUID:tessera-conf-ABC@example.org\r\n"));
        assert!(ics.contains("\r\nDTSTART:20260501T093000Z\r\nDTEND:20260501T100000Z\r\n"));
        assert!(ics.contains("\r\nSUMMARY:Rust\\, fast - Ada\\, Grace\r\n"));
        assert!(ics.ends_with("END:VEVENT\r\nEND:VCALENDAR\r\n"));
        assert_eq!(netloc("https://example.org:8443/x"), "example.org:8443");
    }
}
