//! The frab/Pentabarf XML of a program (`schedule.xml`), as pretalx exports it and the
//! published frab schedule schema (c3voc's `schedule.xml.xsd`) describes: the conference
//! with its tracks, then the days with their rooms and each room's sessions. Written by an
//! XML writer that escapes every text and attribute value.

use std::io::Write;

use chrono::SecondsFormat;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use super::{Program, Talk};

type Out = Writer<Vec<u8>>;
type Written = quick_xml::Result<()>;

/// The program as frab XML.
pub fn render(p: &Program) -> Vec<u8> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing to memory cannot fail.
    let _ = document(&mut w, p);
    let mut out = w.into_inner();
    let _ = out.write_all(b"\n");
    out
}

/// An element with text (escaped).
fn text(w: &mut Out, name: &str, value: &str) -> Written {
    w.create_element(name)
        .write_text_content(BytesText::new(value))?;
    Ok(())
}

fn document(w: &mut Out, p: &Program) -> Written {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))?;
    let version = env!("CARGO_PKG_VERSION");
    w.create_element("schedule").write_inner_content(|w| {
        w.create_element("generator")
            .with_attributes([
                ("name", "tessera"),
                ("system", p.netloc()),
                ("version", version),
            ])
            .write_empty()?;
        text(w, "version", &p.version)?;
        conference(w, p)?;
        for day in &p.days {
            let index = day.index.to_string();
            let date = day.date.format("%Y-%m-%d").to_string();
            let start = day.start.to_rfc3339_opts(SecondsFormat::Secs, false);
            let end = day.end.to_rfc3339_opts(SecondsFormat::Secs, false);
            w.create_element("day")
                .with_attributes([
                    ("index", index.as_str()),
                    ("date", &date),
                    ("start", &start),
                    ("end", &end),
                ])
                .write_inner_content(|w| {
                    for (room, talks) in &day.rooms {
                        w.create_element("room")
                            .with_attributes([("name", room.name.as_str()), ("guid", &room.guid)])
                            .write_inner_content(|w| {
                                for t in talks.iter().filter_map(|i| p.talks.get(*i)) {
                                    session(w, t)?;
                                }
                                Ok::<(), quick_xml::Error>(())
                            })?;
                    }
                    Ok::<(), quick_xml::Error>(())
                })?;
        }
        Ok::<(), quick_xml::Error>(())
    })?;
    Ok(())
}

fn conference(w: &mut Out, p: &Program) -> Written {
    let (first, last) = p.dates();
    w.create_element("conference").write_inner_content(|w| {
        text(w, "title", &p.title())?;
        text(w, "acronym", &p.event.slug)?;
        text(w, "start", &first.format("%Y-%m-%d").to_string())?;
        text(w, "end", &last.format("%Y-%m-%d").to_string())?;
        text(w, "days", &p.days.len().to_string())?;
        text(w, "timeslot_duration", "00:05")?;
        text(w, "base_url", &p.base_url)?;
        text(w, "time_zone_name", p.tz.name())?;
        for track in &p.tracks {
            let mut element = w
                .create_element("track")
                .with_attributes([("name", track.name.as_str()), ("slug", &track.slug)]);
            if let Some(color) = &track.color {
                element = element.with_attribute(("color", color.as_str()));
            }
            element.write_empty()?;
        }
        Ok::<(), quick_xml::Error>(())
    })?;
    Ok(())
}

/// One session. A submission with several slots gives its code and ID to the first only,
/// its other slots go by the slot's ID (the schema wants both unique).
fn session(w: &mut Out, t: &Talk) -> Written {
    let id = match t.index {
        Some(i) if i > 0 => t.slot_id,
        _ => t.submission_id,
    }
    .to_string();
    let mut element = w
        .create_element("event")
        .with_attributes([("guid", t.guid.as_str()), ("id", &id)]);
    if t.index.is_none_or(|i| i == 0) {
        element = element.with_attribute(("code", t.code.as_str()));
    }
    element.write_inner_content(|w| {
        text(w, "room", &t.room)?;
        text(w, "title", &t.title)?;
        text(w, "subtitle", "")?;
        text(w, "type", &t.kind)?;
        text(
            w,
            "date",
            &t.start.to_rfc3339_opts(SecondsFormat::Secs, false),
        )?;
        text(w, "start", &t.start.format("%H:%M").to_string())?;
        text(w, "duration", &t.duration())?;
        text(w, "abstract", t.abstract_.as_deref().unwrap_or_default())?;
        text(w, "slug", &t.slug)?;
        text(w, "track", t.track.as_deref().unwrap_or_default())?;
        if let Some(logo) = &t.logo {
            text(w, "logo", logo)?;
        }
        w.create_element("persons").write_inner_content(|w| {
            for person in &t.persons {
                let id = person.id.to_string();
                w.create_element("person")
                    .with_attributes([("id", id.as_str()), ("guid", &person.guid)])
                    .write_text_content(BytesText::new(&person.name))?;
            }
            Ok::<(), quick_xml::Error>(())
        })?;
        text(w, "language", &t.language)?;
        if let Some(description) = &t.description {
            text(w, "description", description)?;
        }
        w.create_element("recording").write_inner_content(|w| {
            text(w, "license", "")?;
            text(w, "optout", if t.do_not_record { "true" } else { "false" })
        })?;
        w.create_element("links").write_inner_content(|w| {
            for link in &t.links {
                w.create_element("link")
                    .with_attributes([("href", link.url.as_str()), ("type", "related")])
                    .write_text_content(BytesText::new(&link.title))?;
            }
            Ok::<(), quick_xml::Error>(())
        })?;
        w.create_element("attachments").write_inner_content(|w| {
            for file in &t.attachments {
                w.create_element("attachment")
                    .with_attributes([("href", file.url.as_str()), ("type", "related")])
                    .write_text_content(BytesText::new(&file.title))?;
            }
            Ok::<(), quick_xml::Error>(())
        })?;
        text(w, "url", &t.url)?;
        text(w, "origin_url", &t.url)
    })?;
    Ok(())
}
