//! Rooms of a talk-side event, where sessions are scheduled, as pretalx keeps them: a
//! multi-language name, description and information for speakers, a capacity, a position,
//! a GUID for external tools, the times the room is available, and whether it is hidden.
//! A hidden room takes no sessions and the public does not see it; a room with sessions in
//! the schedule in progress or the current one cannot be hidden, and one used in any
//! schedule cannot be deleted (released schedules never change).
//!
//! Organisers of the call for papers and of the event's settings see every room; the
//! public sees the rooms that are not hidden once the agenda is visible. Changing rooms,
//! and seeing their organiser fields (speaker information, availabilities), takes the
//! event's settings.

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use sea_orm::ConnectionTrait;

use super::access::{TalkEvent, agenda_visible, not_found};
use super::availability::Span;
use super::log::{self as talk_log, Change};
use super::sql::{first, rows};
use crate::db::lock_clause;
use crate::domain::permissions::Permission;
use crate::domain::refusal::Refusal;
use crate::values::FieldErrors;

/// The object type of the activity log.
pub const OBJECT: &str = "room";

/// The refusal to hide a room in use.
pub const IN_USE: &str = "This room has sessions in the current or the planned schedule, so it \
     can neither be deleted nor hidden.";

/// The refusal to delete a room a schedule has used.
pub const USED: &str = "You cannot delete a room that has been used in the schedule.";

/// Who may read rooms: organisers of the call for papers or of the event's settings, and
/// anyone who sees the event once its agenda is visible.
pub fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || may_write(ev) || agenda_visible(ev)
}

/// Who may create, change and delete rooms, and see their organiser fields: organisers of
/// the event's settings.
pub fn may_write(ev: &TalkEvent) -> bool {
    ev.role.permissions.has(Permission::ChangeEventSettings)
}

/// The SQL condition of the rooms (alias `r`) the caller sees: organisers every room, the
/// public those not hidden.
pub fn visible(ev: &TalkEvent, r: &str) -> String {
    if ev.role.is_orga() || may_write(ev) {
        "1 = 1".into()
    } else {
        format!("NOT {r}.hidden")
    }
}

/// The stored fields of a room; serialized, the log's data.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Fields {
    /// Name, a multi-language string.
    pub name: Value,
    /// Description, a multi-language string or null.
    pub description: Value,
    /// Information for speakers, a multi-language string or null.
    pub speaker_info: Value,
    /// The GUID organisers set, in its canonical form.
    pub guid: Option<String>,
    /// How many people fit.
    pub capacity: Option<i32>,
    /// Where it comes in lists.
    pub position: Option<i32>,
    /// Whether it is hidden.
    pub hidden: bool,
}

/// The stored fields of the event's room `id`, its row locked until the transaction ends
/// (PostgreSQL); 404 when the event has none.
pub async fn locked(db: &impl ConnectionTrait, ev: &TalkEvent, id: i64) -> Result<Fields, Refusal> {
    let sql = format!(
        "SELECT name, description, speaker_info, guid, capacity, position, hidden \
         FROM talk_rooms WHERE id = $1 AND event_id = $2{}",
        lock_clause(db)
    );
    let row = first(db, &sql, vec![id.into(), ev.event.id.into()])
        .await?
        .ok_or_else(not_found)?;
    let json = |column: &str| -> Result<Value, Refusal> {
        Ok(row
            .try_get::<Option<Value>>("", column)?
            .unwrap_or(Value::Null))
    };
    Ok(Fields {
        name: json("name")?,
        description: json("description")?,
        speaker_info: json("speaker_info")?,
        guid: row.try_get("", "guid")?,
        capacity: row.try_get("", "capacity")?,
        position: row.try_get("", "position")?,
        hidden: row.try_get("", "hidden")?,
    })
}

/// A GUID in its canonical form (lower-case, hyphenated), from that form or 32 hex digits
/// (in any case, in braces or not); `None` for anything else.
pub fn canonical_guid(text: &str) -> Option<String> {
    let text = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text);
    let hex: String = match text.len() {
        36 => {
            let dashes = [8, 13, 18, 23];
            if !text
                .char_indices()
                .all(|(i, c)| dashes.contains(&i) == (c == '-'))
            {
                return None;
            }
            text.chars().filter(|c| *c != '-').collect()
        }
        32 => text.to_owned(),
        _ => return None,
    };
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let hex = hex.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The room's UUID for external tools: its GUID when organisers set one, else one derived
/// from the instance's public URL and the room's ID (stable, unique per instance; an
/// RFC 9562 version 8 UUID).
pub fn uuid(public_url: &str, id: i64, guid: Option<&str>) -> String {
    match guid {
        Some(guid) => guid.to_owned(),
        None => derived_uuid(public_url, &format!("room:{id}")),
    }
}

/// A UUID for an object of this instance (at `public_url`) that `name` identifies (say
/// `room:3`): stable, unique per instance and name; an RFC 9562 version 8 UUID.
pub fn derived_uuid(public_url: &str, name: &str) -> String {
    let digest = Sha256::digest(format!("{public_url}/{name}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Whether the room has slots in the event's schedule in progress or its current one.
pub async fn in_use(db: &impl ConnectionTrait, ev: &TalkEvent, id: i64) -> Result<bool, Refusal> {
    let found = first(
        db,
        "SELECT 1 AS one FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
         WHERE sl.room_id = $1 AND sc.event_id = $2 AND (sc.version IS NULL OR sc.id = $3) \
         LIMIT 1",
        vec![
            id.into(),
            ev.event.id.into(),
            ev.current_schedule.unwrap_or(0).into(),
        ],
    )
    .await?;
    Ok(found.is_some())
}

/// Writes a room (new when `id` is `None`) with its availabilities (replaced when given)
/// and log entry, in the transaction `db`; gives its ID. A name empty in every language, a
/// GUID another room of the event has, or hiding a room in use is 400.
pub async fn write(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    id: Option<i64>,
    f: Fields,
    availabilities: Option<Vec<Span>>,
) -> Result<i64, Refusal> {
    let mut errors = FieldErrors::new();
    let named = f.name.as_object().is_some_and(|m| {
        m.values()
            .any(|v| v.as_str().is_some_and(|s| !s.trim().is_empty()))
    });
    if !named {
        errors.push("name", "This field is required.");
    }
    if let Some(guid) = &f.guid {
        let taken = first(
            db,
            "SELECT 1 AS one FROM talk_rooms WHERE event_id = $1 AND guid = $2 AND id <> $3",
            vec![
                ev.event.id.into(),
                guid.clone().into(),
                id.unwrap_or(0).into(),
            ],
        )
        .await?;
        if taken.is_some() {
            errors.push("guid", "A room of this event has this GUID already.");
        }
    }
    if let Some(id) = id
        && f.hidden
        && in_use(db, ev, id).await?
    {
        errors.push("hidden", IN_USE);
    }
    errors.into_result()?;
    let data = json!(f);
    let json_or_null = |v: Value| -> sea_orm::Value { Some(v).filter(|v| !v.is_null()).into() };
    let values: Vec<sea_orm::Value> = vec![
        ev.event.id.into(),
        f.name.into(),
        json_or_null(f.description),
        json_or_null(f.speaker_info),
        f.guid.into(),
        f.capacity.into(),
        f.position.into(),
        f.hidden.into(),
    ];
    let duplicate = |e: sea_orm::DbErr| {
        if crate::db::is_unique_violation(&e) {
            Refusal::field("guid", "A room of this event has this GUID already.")
        } else {
            e.into()
        }
    };
    let (id, action) = match id {
        Some(id) => {
            let mut values = values;
            values.push(id.into());
            crate::db::execute(
                db,
                "UPDATE talk_rooms SET name = $2, description = $3, speaker_info = $4, \
                 guid = $5, capacity = $6, position = $7, hidden = $8 \
                 WHERE event_id = $1 AND id = $9",
                values,
            )
            .await
            .map_err(duplicate)?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                db,
                "INSERT INTO talk_rooms (event_id, name, description, speaker_info, guid, \
                 capacity, position, hidden) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                 RETURNING id",
                values,
            )
            .await
            .map_err(duplicate)?,
            "create",
        ),
    };
    let mut data = data;
    if let Some(times) = availabilities {
        crate::db::execute(
            db,
            "DELETE FROM talk_room_availabilities WHERE room_id = $1",
            [id.into()],
        )
        .await?;
        for (start, end) in &times {
            crate::db::execute(
                db,
                "INSERT INTO talk_room_availabilities (room_id, start, \"end\") \
                 VALUES ($1, $2, $3)",
                [id.into(), (*start).into(), (*end).into()],
            )
            .await?;
        }
        data["availabilities"] = json!(
            times
                .iter()
                .map(|(s, e)| json!({"start": s, "end": e}))
                .collect::<Vec<_>>()
        );
    }
    talk_log::write(db, Change::new(ev, OBJECT, id, action, data)).await?;
    Ok(id)
}

/// Deletes the event's room `id` with its availabilities and writes the log entry; 404 when
/// the event has none, 400 when a schedule (released or in progress) has used it.
pub async fn delete(db: &impl ConnectionTrait, ev: &TalkEvent, id: i64) -> Result<(), Refusal> {
    let f = locked(db, ev, id).await?;
    let used = rows(
        db,
        "SELECT 1 AS one FROM talk_slots WHERE room_id = $1 LIMIT 1",
        vec![id.into()],
    )
    .await?;
    if !used.is_empty() {
        return Err(Refusal::bad_request(USED));
    }
    crate::db::execute(db, "DELETE FROM talk_rooms WHERE id = $1", [id.into()]).await?;
    let data = json!({"name": f.name});
    talk_log::write(db, Change::new(ev, OBJECT, id, "delete", data)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_take_their_canonical_form_and_derived_uuids_are_version_8() {
        let g = "{0D5C3A4E-9F7B-4C1A-8E2D-3B4A5C6D7E8F}";
        assert_eq!(
            canonical_guid(g).as_deref(),
            Some("0d5c3a4e-9f7b-4c1a-8e2d-3b4a5c6d7e8f")
        );
        assert_eq!(
            canonical_guid("0d5c3a4e9f7b4c1a8e2d3b4a5c6d7e8f").as_deref(),
            Some("0d5c3a4e-9f7b-4c1a-8e2d-3b4a5c6d7e8f")
        );
        assert!(canonical_guid("0d5c3a4e-9f7b-4c1a-8e2d-3b4a5c6d7e8").is_none());
        assert!(canonical_guid("0d5c3a4e-9f7b-4c1a-8e2d_3b4a5c6d7e8f").is_none());
        let u = uuid("https://example.org", 7, None);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "8");
        assert_eq!(u, uuid("https://example.org", 7, None));
        assert_ne!(u, uuid("https://example.org", 8, None));
    }
}
