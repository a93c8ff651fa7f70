//! The public exports of a released schedule, as pretalx serves them and conference apps
//! read them: the frab JSON (`schedule.json`), the frab/Pentabarf XML (`schedule.xml`) and
//! iCalendar (`schedule.ics`).
//!
//! A released schedule never changes, so an export is made once from it ([`Program`], read
//! in a constant number of queries) and kept in the process cache under the schedule's ID,
//! the format and the language, for as long as the configuration generation lasts (the
//! event's name, dates and languages are configuration). What a request must read is only
//! which schedule is current: [`public_event`] reads the event with it in one query, so a
//! release is served by every process from its next request on. Edits of sessions or
//! speakers after a release show in the exports of the next release (or the next
//! generation).
//!
//! Like pretalx, the exports show the visible slots of sessions that have a start and a
//! room, grouped by the event's days (a day runs from 04:00 to 03:59 in the event's time
//! zone), and per day by room in the rooms' order. Text loses the control characters that
//! XML and terminals refuse.

pub mod frab_json;
pub mod frab_xml;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, FromQueryResult};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::access::TalkEvent;
use super::catalog::shown_name;
use super::rooms::{derived_uuid, uuid as room_uuid};
use super::schedule::{event_tz, ical};
use super::sql::{first, rows};
use super::version::ApiVersion;
use crate::db::entities::event;
use crate::domain::cache::Cache;
use crate::domain::refusal::Refusal;
use crate::domain::settings::{self, SettingsRegistry};

/// The hour a day of the program starts at, in the event's time zone: sessions before it
/// belong to the day before (except on the first day).
const DAY_START_HOUR: u32 = 4;

/// Most days of an event the exports list (an event's dates are bounded by nothing else).
const MAX_DAYS: i64 = 366;

/// A format a released schedule is exported in, named as pretalx names its exporters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The frab JSON, `schedule.json`.
    Json,
    /// The frab/Pentabarf XML, `schedule.xml`.
    Xml,
    /// iCalendar, one event per session, `schedule.ics`.
    Ical,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 3] = [Format::Json, Format::Xml, Format::Ical];

    /// The format of an exporter's name (`schedule.json`, `schedule.xml`, `schedule.ics`).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The exporter's name, which is also the file's name in URLs.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "schedule.json",
            Format::Xml => "schedule.xml",
            Format::Ical => "schedule.ics",
        }
    }

    /// The answer's `Content-Type`, as pretalx sends it.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Xml => "text/xml",
            Format::Ical => "text/calendar",
        }
    }

    /// The file's extension.
    fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Xml => "xml",
            Format::Ical => "ics",
        }
    }

    /// Whether the file is answered as an attachment (pretalx shows JSON and XML inline).
    pub fn is_attachment(self) -> bool {
        self == Format::Ical
    }
}

/// A finished export: its bytes (plain and gzip-compressed, each made once) and what its
/// answer says about them.
#[derive(Debug)]
pub struct Export {
    /// The format.
    pub format: Format,
    /// The file.
    pub body: Bytes,
    /// The file compressed with gzip, for clients that accept it.
    pub gzip: Bytes,
    /// The file's entity tag, quoted (a digest of the file).
    pub etag: String,
    /// The compressed file's entity tag, quoted: the file's with `-gzip`.
    pub gzip_etag: String,
    /// The file's name for a download: `<event>-schedule-<version's release time>.<ext>`.
    pub filename: String,
}

/// `bytes` compressed with gzip.
fn gzipped(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to memory cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

impl Export {
    fn new(format: Format, body: Vec<u8>, slug: &str, published: DateTime<Utc>) -> Self {
        let digest = Sha256::digest(&body);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Self {
            format,
            gzip: Bytes::from(gzipped(&body)),
            body: Bytes::from(body),
            etag: format!("\"{hex}\""),
            gzip_etag: format!("\"{hex}-gzip\""),
            filename: format!(
                "{}-schedule-{}.{}",
                slug.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
                published.format("%Y-%m-%d-%H-%M"),
                format.extension()
            ),
        }
    }

    /// The entity tag of the file as sent: compressed with gzip or not.
    pub fn etag(&self, gzip: bool) -> &str {
        if gzip { &self.gzip_etag } else { &self.etag }
    }

    /// Whether an `If-None-Match` header's value names the entity tag of the file as it
    /// would be sent (compressed with gzip or not), or is `*`: the client's copy is current.
    pub fn matches(&self, if_none_match: &str, gzip: bool) -> bool {
        let bare = self.etag(gzip).trim_matches('"');
        if_none_match.split(',').map(str::trim).any(|tag| {
            let tag = tag.strip_prefix("W/").unwrap_or(tag);
            tag == "*" || tag.trim_matches('"') == bare
        })
    }
}

/// What exports are read from and kept in.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    /// The database.
    pub db: &'a sea_orm::DatabaseConnection,
    /// The settings' definitions (for the event's languages).
    pub settings: &'a SettingsRegistry,
    /// The process cache.
    pub cache: &'a Cache,
    /// The public base URL, for the links in the exports.
    pub public_url: &'a str,
}

/// The talk-side event with this slug as an anonymous caller of API version `version` sees
/// it, with its current schedule, in one query; `None` when no talk-side event has the slug.
/// Whether it shows its schedule is [`super::access::agenda_visible`]'s to say.
pub async fn public_event(
    db: &impl ConnectionTrait,
    slug: &str,
    version: ApiVersion,
) -> Result<Option<TalkEvent>, Refusal> {
    let sql = format!(
        "SELECT e.*, ({}) AS current_schedule FROM events e \
         WHERE e.slug = $1 AND e.talk_enabled = $2",
        super::access::current_schedule_sql("e.id")
    );
    let Some(row) = first(db, &sql, vec![slug.into(), true.into()]).await? else {
        return Ok(None);
    };
    Ok(Some(TalkEvent::anonymous(
        event::Model::from_query_result(&row, "")?,
        row.try_get("", "current_schedule")?,
        version,
    )))
}

/// The export of the event's released schedule `schedule_id` in `format`, in the language
/// `lang` when it is one of the event's (else in the event's default language): kept in the
/// cache once made. `None` when the schedule is not a released schedule of the event.
pub async fn export(
    src: Source<'_>,
    ev: &event::Model,
    schedule_id: i64,
    format: Format,
    lang: Option<&str>,
) -> Result<Option<Arc<Export>>, Refusal> {
    let generation = src.cache.generation().await;
    let values =
        settings::of_event(src.db, src.settings, generation.map(|g| (src.cache, g)), ev).await?;
    let text = |key: &str| values.get(key).and_then(Value::as_str).map(str::to_owned);
    let offered = values.get("locales").and_then(Value::as_array);
    let lang = match lang {
        Some(l) if offered.is_some_and(|o| o.iter().any(|x| x.as_str() == Some(l))) => l.to_owned(),
        _ => text("locale").unwrap_or_else(|| "en".into()),
    };
    let key = format!(
        "talk-export:{}:{schedule_id}:{}:{lang}",
        ev.id,
        format.name()
    );
    if let Some(kept) = generation
        .and_then(|g| src.cache.file(g, &key))
        .and_then(|f| f.downcast::<Export>().ok())
    {
        return Ok(Some(kept));
    }
    let Some(program) = Program::load(src.db, ev, schedule_id, &lang, src.public_url).await? else {
        return Ok(None);
    };
    let made = Arc::new(program.render(format));
    if let Some(g) = generation {
        src.cache.keep_file(g, key, made.clone());
    }
    Ok(Some(made))
}

/// A released schedule as the exports show it, in one language.
#[derive(Debug, Clone)]
pub struct Program {
    /// The event.
    pub event: event::Model,
    /// The schedule's version name.
    pub version: String,
    /// When it was released.
    pub published: DateTime<Utc>,
    /// The language of its texts.
    pub lang: String,
    /// The event's time zone.
    pub tz: Tz,
    /// The public base URL.
    pub base_url: String,
    /// The event's days, with the sessions of each in its rooms.
    pub days: Vec<Day>,
    /// Every scheduled session, by start.
    pub talks: Vec<Talk>,
    /// The rooms the program lists: those not hidden, and those with sessions.
    pub rooms: Vec<Room>,
    /// The event's tracks.
    pub tracks: Vec<Track>,
}

/// A day of the event.
#[derive(Debug, Clone)]
pub struct Day {
    /// 1 for the first day.
    pub index: usize,
    /// The date.
    pub date: NaiveDate,
    /// When it starts (04:00).
    pub start: DateTime<Tz>,
    /// When it ends (03:59 the next day).
    pub end: DateTime<Tz>,
    /// The rooms with sessions that day, in the rooms' order, each with the indexes of its
    /// sessions in [`Program::talks`], by start.
    pub rooms: Vec<(Room, Vec<usize>)>,
}

/// A room.
#[derive(Debug, Clone)]
pub struct Room {
    /// Internal ID.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// `<name>-<id>`, in lower-case letters, digits and hyphens.
    pub slug: String,
    /// Its UUID.
    pub guid: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// Its capacity, if known.
    pub capacity: Option<i32>,
    position: Option<i32>,
}

/// A track.
#[derive(Debug, Clone)]
pub struct Track {
    /// Its name.
    pub name: String,
    /// `<name>-<id>`, in lower-case letters, digits and hyphens, starting with a letter.
    pub slug: String,
    /// Its colour as `#rrggbb` in lower case, when it has one of that form.
    pub color: Option<String>,
}

/// A scheduled session (one slot of a submission).
#[derive(Debug, Clone)]
pub struct Talk {
    /// The submission's ID.
    pub submission_id: i64,
    /// The slot's ID.
    pub slot_id: i64,
    /// The submission's code.
    pub code: String,
    /// Which of the submission's slots in the schedule this is, when it has several.
    pub index: Option<usize>,
    /// A UUID unique to the session (and slot).
    pub guid: String,
    /// Start, in the event's time zone.
    pub start: DateTime<Tz>,
    /// End, in the event's time zone.
    pub end: DateTime<Tz>,
    /// The room's ID.
    pub room_id: i64,
    /// The room's name.
    pub room: String,
    /// `<event>-<submission ID>[-<slot>]-<title>`, as frab makes it.
    pub slug: String,
    /// Title.
    pub title: String,
    /// The session type's name.
    pub kind: String,
    /// The track's name.
    pub track: Option<String>,
    /// The language it is held in.
    pub language: String,
    /// Abstract.
    pub abstract_: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// The speakers asked not to be recorded.
    pub do_not_record: bool,
    /// The session's image.
    pub logo: Option<String>,
    /// Its public URL (the session in the talk-side API).
    pub url: String,
    /// The speakers, in order.
    pub persons: Vec<Person>,
    /// Public links.
    pub links: Vec<Reference>,
    /// Public files.
    pub attachments: Vec<Reference>,
}

impl Talk {
    /// The minutes from start to end.
    pub fn minutes(&self) -> i64 {
        (self.end - self.start).num_minutes()
    }

    /// The duration as frab writes it: `hh:mm`, with `d:` before it for a day or more.
    pub fn duration(&self) -> String {
        let m = self.minutes().max(0);
        let (days, hours, minutes) = (m / 1440, m / 60 % 24, m % 60);
        if days > 0 {
            format!("{days}:{hours:02}:{minutes:02}")
        } else {
            format!("{hours:02}:{minutes:02}")
        }
    }
}

/// A speaker.
#[derive(Debug, Clone)]
pub struct Person {
    /// Internal ID.
    pub id: i64,
    /// The speaker's code.
    pub code: String,
    /// Their name.
    pub name: String,
    /// Their biography.
    pub biography: Option<String>,
    /// Their picture's URL.
    pub avatar: Option<String>,
    /// A UUID unique to the speaker.
    pub guid: String,
    /// Their public URL (the speaker in the talk-side API).
    pub url: String,
}

/// A link or a file of a session.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Its description.
    pub title: String,
    /// Its URL.
    pub url: String,
}

/// Leaves out the characters that XML refuses and terminals obey: C0 controls but tab and
/// line feed, DEL, C1 controls, and the non-characters U+FFFE and U+FFFF.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(*c as u32, 0..=8 | 11..=31 | 127..=159 | 0xFFFE | 0xFFFF))
        .collect()
}

/// `text` as lower-case ASCII words joined by hyphens (accents dropped, other characters
/// left out).
fn slugify(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = match c {
            'à'..='å' => 'a',
            'ç' => 'c',
            'è'..='ë' => 'e',
            'ì'..='ï' => 'i',
            'ñ' => 'n',
            'ò'..='ö' | 'ø' => 'o',
            'ù'..='ü' => 'u',
            'ý' | 'ÿ' => 'y',
            'ß' => 's',
            c => c,
        };
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// A slug of a named object: `<name>-<id>` when the name's slug starts with a letter, else
/// `<kind>[-<name>]-<id>`.
fn labelled_slug(kind: &str, id: i64, name: &str) -> String {
    let slug = slugify(name);
    match slug.chars().next() {
        Some(c) if c.is_ascii_lowercase() => format!("{slug}-{id}"),
        Some(_) => format!("{kind}-{slug}-{id}"),
        None => format!("{kind}-{id}"),
    }
}

/// A time in the event's zone at a local date and time (the earlier of two, the moment
/// after a gap).
fn local(tz: &Tz, day: NaiveDate, time: NaiveTime) -> DateTime<Tz> {
    let naive = day.and_time(time);
    tz.from_local_datetime(&naive)
        .earliest()
        .unwrap_or_else(|| tz.from_utc_datetime(&naive))
}

/// A text column, cleaned; `None` when null or empty.
fn opt_text(r: &sea_orm::QueryResult, column: &str) -> Result<Option<String>, Refusal> {
    Ok(r.try_get::<Option<String>>("", column)?
        .map(|t| clean(&t))
        .filter(|t| !t.is_empty()))
}

impl Program {
    /// The released schedule `schedule_id` of the event in the language `lang`: six
    /// queries, whatever its size. `None` when it is not a released schedule of the event.
    pub async fn load(
        db: &impl ConnectionTrait,
        ev: &event::Model,
        schedule_id: i64,
        lang: &str,
        public_url: &str,
    ) -> Result<Option<Self>, Refusal> {
        let Some(sc) = first(
            db,
            "SELECT version, published FROM talk_schedules \
             WHERE id = $1 AND event_id = $2 AND version IS NOT NULL",
            vec![schedule_id.into(), ev.id.into()],
        )
        .await?
        else {
            return Ok(None);
        };
        let tz = event_tz(ev);
        let name = |v: Value| clean(&shown_name(&v, lang));
        let api = format!("{public_url}/api/events/{}", ev.slug);
        let rooms = load_rooms(db, ev.id, schedule_id, public_url, &name).await?;
        let tracks = rows(
            db,
            "SELECT id, name, color FROM talk_tracks WHERE event_id = $1 ORDER BY position, id",
            vec![ev.id.into()],
        )
        .await?
        .iter()
        .map(|r| {
            let id: i64 = r.try_get("", "id")?;
            let track = name(r.try_get("", "name")?);
            let color: String = r.try_get("", "color")?;
            let hex = color.strip_prefix('#').unwrap_or_default();
            Ok(Track {
                slug: labelled_slug("track", id, &track),
                name: track,
                color: (hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                    .then(|| color.to_ascii_lowercase()),
            })
        })
        .collect::<Result<Vec<_>, Refusal>>()?;
        let persons = load_persons(db, schedule_id, public_url, &api).await?;
        let (links, attachments) = load_resources(db, schedule_id, public_url).await?;
        let room_names: HashMap<i64, &Room> = rooms.iter().map(|r| (r.id, r)).collect();
        let event_slug = ev.slug.replace('-', "_").to_lowercase();
        // Every slot of a session in the schedule, in the order that numbers a session's
        // slots (as the slots' own calendar files do); shown are the visible ones with a
        // start and a room.
        let slot_rows = rows(
            db,
            "SELECT sl.id, sl.start, sl.\"end\", sl.room_id, sl.is_visible, s.id AS submission_id, \
             s.code, s.title, s.abstract, s.description, s.content_locale, s.do_not_record, \
             s.image, COALESCE(s.duration, st.default_duration) AS minutes, \
             st.name AS type_name, t.name AS track_name \
             FROM talk_slots sl JOIN talk_submissions s ON s.id = sl.submission_id \
             JOIN talk_submission_types st ON st.id = s.submission_type_id \
             LEFT JOIN talk_tracks t ON t.id = s.track_id \
             WHERE sl.schedule_id = $1 \
             ORDER BY CASE WHEN sl.start IS NULL THEN 1 ELSE 0 END, sl.start, sl.id",
            vec![schedule_id.into()],
        )
        .await?;
        let mut count: HashMap<i64, usize> = HashMap::new();
        for r in &slot_rows {
            *count.entry(r.try_get("", "submission_id")?).or_default() += 1;
        }
        let mut seen: HashMap<i64, usize> = HashMap::new();
        let mut talks = Vec::new();
        for r in &slot_rows {
            let submission_id: i64 = r.try_get("", "submission_id")?;
            let nth = seen.entry(submission_id).or_default();
            let index = (count.get(&submission_id).copied().unwrap_or(1) > 1).then_some(*nth);
            *nth += 1;
            let start: Option<DateTime<Utc>> = r.try_get("", "start")?;
            let room_id: Option<i64> = r.try_get("", "room_id")?;
            let (Some(start), Some(room)) = (start, room_id.and_then(|id| room_names.get(&id)))
            else {
                continue;
            };
            if !r.try_get::<bool>("", "is_visible")? {
                continue;
            }
            let end: Option<DateTime<Utc>> = r.try_get("", "end")?;
            let minutes = i64::from(r.try_get::<i32>("", "minutes")?);
            let end = end
                .or_else(|| start.checked_add_signed(Duration::minutes(minutes)))
                .unwrap_or(start);
            let code: String = r.try_get("", "code")?;
            let title = clean(&r.try_get::<String>("", "title")?);
            let suffix = index.map(|i| format!("-{i}")).unwrap_or_default();
            let title_slug = match slugify(&title) {
                s if s.is_empty() => code.to_lowercase(),
                s => s,
            };
            let image: Option<String> = r.try_get("", "image")?;
            let track: Option<Value> = r.try_get("", "track_name")?;
            talks.push(Talk {
                submission_id,
                slot_id: r.try_get("", "id")?,
                guid: derived_uuid(public_url, &format!("talk:{code}{suffix}")),
                index,
                start: start.with_timezone(&tz),
                end: end.with_timezone(&tz),
                room_id: room.id,
                room: room.name.clone(),
                slug: format!("{event_slug}-{submission_id}{suffix}-{title_slug}"),
                title,
                kind: name(r.try_get("", "type_name")?),
                track: track.map(name).filter(|t| !t.is_empty()),
                language: clean(&r.try_get::<String>("", "content_locale")?),
                abstract_: opt_text(r, "abstract")?,
                description: opt_text(r, "description")?,
                do_not_record: r.try_get("", "do_not_record")?,
                logo: image.map(|key| crate::domain::files::url(public_url, &key)),
                url: format!("{api}/submissions/{code}/"),
                persons: persons.get(&submission_id).cloned().unwrap_or_default(),
                links: links.get(&submission_id).cloned().unwrap_or_default(),
                attachments: attachments.get(&submission_id).cloned().unwrap_or_default(),
                code,
            });
        }
        talks.sort_by_key(|t| (t.start, t.slot_id));
        let days = days(ev, &tz, &talks, &rooms);
        Ok(Some(Self {
            event: ev.clone(),
            version: clean(&sc.try_get::<String>("", "version")?),
            published: sc.try_get("", "published")?,
            lang: lang.to_owned(),
            tz,
            base_url: public_url.to_owned(),
            days,
            talks,
            rooms,
            tracks,
        }))
    }

    /// The event's name in the program's language.
    pub fn title(&self) -> String {
        clean(&shown_name(&self.event.name, &self.lang))
    }

    /// The event's first and last day.
    pub fn dates(&self) -> (NaiveDate, NaiveDate) {
        event_dates(&self.event, &self.tz)
    }

    /// The host (and port) of the public base URL.
    pub fn netloc(&self) -> &str {
        ical::netloc(&self.base_url)
    }

    /// The program in `format`.
    pub fn render(&self, format: Format) -> Export {
        let body = match format {
            Format::Json => frab_json::render(self),
            Format::Xml => frab_xml::render(self),
            Format::Ical => self.calendar().into_bytes(),
        };
        Export::new(format, body, &self.event.slug, self.published)
    }

    /// Every session as an iCalendar event, stamped with the release.
    fn calendar(&self) -> String {
        let names: Vec<Vec<String>> = self
            .talks
            .iter()
            .map(|t| t.persons.iter().map(|p| p.name.clone()).collect())
            .collect();
        let talks: Vec<ical::Talk<'_>> = self
            .talks
            .iter()
            .zip(&names)
            .map(|(t, speakers)| ical::Talk {
                code: &t.code,
                index: t.index,
                title: &t.title,
                speakers,
                abstract_: t.abstract_.as_deref(),
                room: &t.room,
                start: t.start.to_utc(),
                end: t.end.to_utc(),
            })
            .collect();
        ical::calendar(
            &self.event.slug,
            self.netloc(),
            &self.event.slug,
            &talks,
            self.published,
        )
    }
}

/// The event's first and last day in its time zone.
fn event_dates(ev: &event::Model, tz: &Tz) -> (NaiveDate, NaiveDate) {
    let first = ev.date_from.with_timezone(tz).date_naive();
    let last = ev
        .date_to
        .unwrap_or(ev.date_from)
        .with_timezone(tz)
        .date_naive()
        .max(first);
    let bounded = first
        .checked_add_signed(Duration::days(MAX_DAYS - 1))
        .unwrap_or(last);
    (first, last.min(bounded))
}

/// The event's days, each with its sessions by room.
fn days(ev: &event::Model, tz: &Tz, talks: &[Talk], rooms: &[Room]) -> Vec<Day> {
    let (first, last) = event_dates(ev, tz);
    let start = NaiveTime::from_hms_opt(DAY_START_HOUR, 0, 0).unwrap_or(NaiveTime::MIN);
    let end = NaiveTime::from_hms_opt(DAY_START_HOUR - 1, 59, 0).unwrap_or(NaiveTime::MIN);
    let mut days: Vec<Day> = first
        .iter_days()
        .take_while(|d| *d <= last)
        .enumerate()
        .map(|(i, date)| Day {
            index: i + 1,
            date,
            start: local(tz, date, start),
            end: local(tz, date.succ_opt().unwrap_or(date), end),
            rooms: Vec::new(),
        })
        .collect();
    for (i, talk) in talks.iter().enumerate() {
        let mut date = talk.start.date_naive();
        if talk.start.hour() < DAY_START_HOUR && date != first {
            date = date.pred_opt().unwrap_or(date);
        }
        let offset = date.num_days_from_ce() - first.num_days_from_ce();
        let Some(day) = usize::try_from(offset).ok().and_then(|o| days.get_mut(o)) else {
            continue;
        };
        match day.rooms.iter_mut().find(|(r, _)| r.name == talk.room) {
            Some((_, list)) => list.push(i),
            None => {
                if let Some(room) = rooms.iter().find(|r| r.id == talk.room_id) {
                    day.rooms.push((room.clone(), vec![i]));
                }
            }
        }
    }
    for day in &mut days {
        day.rooms
            .sort_by_key(|(r, _)| (r.position.map_or(i64::from(i32::MAX), i64::from), r.id));
    }
    days
}

/// The rooms a program lists: those not hidden and those with slots in the schedule, in
/// their order.
async fn load_rooms(
    db: &impl ConnectionTrait,
    event_id: i64,
    schedule_id: i64,
    public_url: &str,
    name: &impl Fn(Value) -> String,
) -> Result<Vec<Room>, Refusal> {
    rows(
        db,
        "SELECT id, name, description, guid, capacity, position FROM talk_rooms r \
         WHERE event_id = $1 AND (hidden = $2 OR EXISTS (SELECT 1 FROM talk_slots sl \
         WHERE sl.room_id = r.id AND sl.schedule_id = $3)) \
         ORDER BY CASE WHEN position IS NULL THEN 1 ELSE 0 END, position, id",
        vec![event_id.into(), false.into(), schedule_id.into()],
    )
    .await?
    .iter()
    .map(|r| {
        let id: i64 = r.try_get("", "id")?;
        let room = name(r.try_get("", "name")?);
        let guid: Option<String> = r.try_get("", "guid")?;
        let description: Option<Value> = r.try_get("", "description")?;
        Ok(Room {
            id,
            slug: labelled_slug("room", id, &room),
            name: room,
            guid: room_uuid(public_url, id, guid.as_deref()),
            description: description.map(name).filter(|d| !d.is_empty()),
            capacity: r.try_get("", "capacity")?,
            position: r.try_get("", "position")?,
        })
    })
    .collect()
}

/// The speakers of the sessions with visible slots in the schedule, by submission, in their
/// order.
async fn load_persons(
    db: &impl ConnectionTrait,
    schedule_id: i64,
    public_url: &str,
    api: &str,
) -> Result<HashMap<i64, Vec<Person>>, Refusal> {
    let mut out: HashMap<i64, Vec<Person>> = HashMap::new();
    for r in rows(
        db,
        "SELECT ss.submission_id, sp.id, sp.code, sp.biography, sp.avatar, \
         COALESCE(NULLIF(sp.name, ''), u.fullname, '') AS name, u.code AS user_code \
         FROM talk_submission_speakers ss JOIN talk_speakers sp ON sp.id = ss.speaker_id \
         LEFT JOIN users u ON u.id = sp.user_id \
         WHERE ss.submission_id IN (SELECT submission_id FROM talk_slots \
         WHERE schedule_id = $1 AND is_visible AND submission_id IS NOT NULL) \
         ORDER BY ss.submission_id, ss.position, sp.code",
        vec![schedule_id.into()],
    )
    .await?
    {
        let code: String = r.try_get("", "code")?;
        let user: Option<String> = r.try_get("", "user_code")?;
        let identity = match user.filter(|c| !c.is_empty()) {
            Some(user) => format!("user:{user}"),
            None => format!("speaker:{code}"),
        };
        let avatar: Option<String> = r.try_get("", "avatar")?;
        out.entry(r.try_get("", "submission_id")?)
            .or_default()
            .push(Person {
                id: r.try_get("", "id")?,
                name: clean(&r.try_get::<String>("", "name")?),
                biography: opt_text(&r, "biography")?,
                avatar: avatar.map(|key| crate::domain::files::url(public_url, &key)),
                guid: derived_uuid(public_url, &identity),
                url: format!("{api}/speakers/{code}/"),
                code,
            });
    }
    Ok(out)
}

/// Links and files of a session by submission.
type References = HashMap<i64, Vec<Reference>>;

/// The public links and files of the sessions with visible slots in the schedule.
async fn load_resources(
    db: &impl ConnectionTrait,
    schedule_id: i64,
    public_url: &str,
) -> Result<(References, References), Refusal> {
    let (mut links, mut files) = (References::new(), References::new());
    for r in rows(
        db,
        "SELECT submission_id, resource, link, description FROM talk_resources \
         WHERE is_public AND submission_id IN (SELECT submission_id FROM talk_slots \
         WHERE schedule_id = $1 AND is_visible AND submission_id IS NOT NULL) \
         ORDER BY submission_id, id",
        vec![schedule_id.into()],
    )
    .await?
    {
        let submission: i64 = r.try_get("", "submission_id")?;
        let title = clean(&r.try_get::<String>("", "description")?);
        let link: Option<String> = r.try_get("", "link")?;
        let file: Option<String> = r.try_get("", "resource")?;
        if let Some(url) = link.filter(|l| !l.is_empty()) {
            links.entry(submission).or_default().push(Reference {
                title,
                url: clean(&url),
            });
        } else if let Some(key) = file.filter(|f| !f.is_empty()) {
            files.entry(submission).or_default().push(Reference {
                title,
                url: crate::domain::files::url(public_url, &key),
            });
        }
    }
    Ok((links, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lower_case_words_and_start_with_a_letter() {
        assert_eq!(slugify("Écoute: Rust & Café!"), "ecoute-rust-cafe");
        assert_eq!(slugify("  --  "), "");
        assert_eq!(labelled_slug("track", 3, "Systems"), "systems-3");
        assert_eq!(
            labelled_slug("track", 3, "2030 plans"),
            "track-2030-plans-3"
        );
        assert_eq!(labelled_slug("room", 4, "!!"), "room-4");
    }

    #[test]
    fn control_characters_are_left_out_but_tabs_and_line_feeds_stay() {
        assert_eq!(
            clean("a\u{0}b\u{1b}[31mc\td\ne\r\u{9b}\u{fffe}"),
            "ab[31mc\td\ne"
        );
    }

    #[test]
    fn an_entity_tag_matches_quoted_weak_listed_or_any() {
        let export = Export::new(Format::Json, b"{}".to_vec(), "conf", crate::values::now());
        let bare = export.etag.trim_matches('"').to_owned();
        assert!(export.matches(&export.etag, false));
        assert!(export.matches(&bare, false));
        assert!(export.matches(&format!("\"x\", W/{}", export.etag), false));
        assert!(export.matches("*", false));
        assert!(!export.matches("\"other\"", false));
        assert!(!export.matches(&export.etag, true));
        assert!(export.matches(&export.gzip_etag, true));
        assert_eq!(&export.gzip[..2], b"\x1f\x8b");
        assert!(export.filename.starts_with("conf-schedule-"));
        assert!(export.filename.ends_with(".json"));
    }
}
