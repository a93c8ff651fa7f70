//! The frab JSON of a program (`schedule.json`), in the shape pretalx exports and the
//! published schedule JSON schema (c3voc) describes: the conference with its rooms, tracks
//! and days, each day's sessions by room name.

use chrono::SecondsFormat;
use serde_json::{Map, Value, json};

use super::{Program, Reference, Talk};

/// The schema the document names.
const SCHEMA: &str = "https://c3voc.de/schedule/schema.json";

/// The program as frab JSON.
pub fn render(p: &Program) -> Vec<u8> {
    let (first, last) = p.dates();
    let days: Vec<Value> = p
        .days
        .iter()
        .map(|day| {
            let mut rooms = Map::new();
            for (room, talks) in &day.rooms {
                let talks = talks.iter().filter_map(|i| p.talks.get(*i)).map(talk);
                rooms.insert(room.name.clone(), Value::Array(talks.collect()));
            }
            json!({
                "index": day.index,
                "date": day.date.format("%Y-%m-%d").to_string(),
                "day_start": day.start.to_rfc3339_opts(SecondsFormat::Secs, false),
                "day_end": day.end.to_rfc3339_opts(SecondsFormat::Secs, false),
                "rooms": rooms,
            })
        })
        .collect();
    let rooms: Vec<Value> = p
        .rooms
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "slug": r.slug,
                "guid": r.guid,
                "description": r.description,
                "capacity": r.capacity,
            })
        })
        .collect();
    let tracks: Vec<Value> = p
        .tracks
        .iter()
        .map(|t| {
            let mut o = json!({"name": t.name, "slug": t.slug});
            if let Some(color) = &t.color {
                o["color"] = json!(color);
            }
            o
        })
        .collect();
    let document = json!({
        "$schema": SCHEMA,
        "generator": {
            "name": "tessera",
            "version": env!("CARGO_PKG_VERSION"),
            "url": p.base_url,
        },
        "schedule": {
            "url": format!("{}/{}/schedule/export/schedule.json", p.base_url, p.event.slug),
            "version": p.version,
            "base_url": p.base_url,
            "conference": {
                "acronym": p.event.slug,
                "title": p.title(),
                "start": first.format("%Y-%m-%d").to_string(),
                "end": last.format("%Y-%m-%d").to_string(),
                "daysCount": p.days.len(),
                "timeslot_duration": "00:05",
                "time_zone_name": p.tz.name(),
                "rooms": rooms,
                "tracks": tracks,
                "days": days,
            },
        },
    });
    serde_json::to_vec(&document).unwrap_or_default()
}

/// A link or file as frab lists them.
fn reference(r: &Reference) -> Value {
    json!({"title": r.title, "url": r.url, "type": "related"})
}

/// One session.
fn talk(t: &Talk) -> Value {
    let persons: Vec<Value> = t
        .persons
        .iter()
        .map(|s| {
            json!({
                "code": s.code,
                "name": s.name,
                "avatar": s.avatar,
                "biography": s.biography,
                "public_name": s.name,
                "guid": s.guid,
                "url": s.url,
            })
        })
        .collect();
    json!({
        "guid": t.guid,
        "code": t.code,
        "id": t.submission_id,
        "logo": t.logo,
        "date": t.start.to_rfc3339_opts(SecondsFormat::Secs, false),
        "start": t.start.format("%H:%M").to_string(),
        "end": t.end.to_rfc3339_opts(SecondsFormat::Secs, false),
        "duration": t.duration(),
        "room": t.room,
        "slug": t.slug,
        "url": t.url,
        "title": t.title,
        "subtitle": "",
        "track": t.track,
        "type": t.kind,
        "language": t.language,
        "abstract": t.abstract_,
        "description": t.description,
        "recording_license": "",
        "do_not_record": t.do_not_record,
        "persons": persons,
        "links": t.links.iter().map(reference).collect::<Vec<_>>(),
        "origin_url": t.url,
        "attachments": t.attachments.iter().map(reference).collect::<Vec<_>>(),
    })
}
