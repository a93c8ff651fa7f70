//! The program of a talk-side event, as pretalx keeps it. Each event has one schedule in
//! progress (version NULL, created when first needed) and any number of released ones; the
//! current schedule is the latest released. Accepted and confirmed submissions have slots in
//! the work in progress (as many as their slot count; visible once confirmed); other
//! submissions have none there. Releasing freezes the work in progress under a version name
//! used by no other schedule of the event and starts a new one with copies of its slots.
//! Only slots in progress change: released schedules never do.
//!
//! Writers of slots in progress hold the schedule's row (shared), a release holds it alone,
//! so that no change lands in a schedule being released (PostgreSQL; SQLite writes one at a
//! time anyway).

pub mod ical;

use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DbBackend};
use serde_json::{Value, json};

use super::access::{TalkEvent, agenda_visible, not_found};
use super::log::{self as talk_log, Change};
use super::sql::{first, rows};
use crate::db::entities::event;
use crate::domain::refusal::Refusal;
use crate::values::FieldErrors;

/// The states of submissions that have slots in the work in progress (also as a pending
/// state).
const SCHEDULED_STATES: [&str; 2] = ["accepted", "confirmed"];

/// Most slots one submission has in a schedule (its slot count is bounded by this too).
const MAX_SLOTS: i32 = 100;

/// Names that address schedules by their role (`schedules/wip/`, `schedules/latest/`), so
/// no version may have them.
pub const RESERVED_VERSIONS: [&str; 2] = ["wip", "latest"];

/// The refusal of a version name the event has used before.
pub const VERSION_TAKEN: &str =
    "This schedule version was used already, please choose a different one.";

/// The refusal of a slot in a hidden room.
pub const ROOM_HIDDEN: &str =
    "This room is hidden, so no sessions can be scheduled in it. Make it visible first.";

/// The refusal of a change to a released schedule.
pub const RELEASED: &str = "Only slots of the work-in-progress schedule can be changed: a released \
     schedule never changes.";

/// The `id` of a query's first row, if any.
async fn first_id(
    db: &impl ConnectionTrait,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Option<i64>, Refusal> {
    Ok(first(db, sql, values)
        .await?
        .map(|r| r.try_get::<i64>("", "id"))
        .transpose()?)
}

/// The SQL condition of the submissions (alias `s`) the caller may see: organisers all of
/// the event's; reviewers those of the tracks they review (all when they review all); the
/// public those with a visible slot in the current schedule, once the agenda is visible.
pub fn visible_submissions(ev: &TalkEvent, s: &str) -> String {
    let role = &ev.role;
    if role.is_only_reviewer() {
        if role.review_tracks.is_empty() {
            return "1 = 1".into();
        }
        let ids: Vec<String> = role.review_tracks.iter().map(i64::to_string).collect();
        return format!("{s}.track_id IN ({})", ids.join(", "));
    }
    if role.is_orga() {
        return "1 = 1".into();
    }
    public_submissions(ev, s)
}

/// The event's schedule in progress, created when it has none.
pub async fn wip(db: &impl ConnectionTrait, event_id: i64) -> Result<i64, Refusal> {
    let find = "SELECT id FROM talk_schedules WHERE event_id = $1 AND version IS NULL";
    if let Some(id) = first_id(db, find, vec![event_id.into()]).await? {
        return Ok(id);
    }
    crate::db::execute(
        db,
        "INSERT INTO talk_schedules (event_id) VALUES ($1) ON CONFLICT DO NOTHING",
        [event_id.into()],
    )
    .await?;
    first_id(db, find, vec![event_id.into()])
        .await?
        .ok_or_else(Refusal::internal)
}

/// The schedule in progress, held until the transaction ends: alone for a release, shared
/// for changes of its slots. A schedule released while waiting is passed over for the new
/// one.
async fn held_wip(db: &impl ConnectionTrait, event_id: i64, alone: bool) -> Result<i64, Refusal> {
    let lock = match (db.get_database_backend(), alone) {
        (DbBackend::Postgres, true) => " FOR UPDATE",
        (DbBackend::Postgres, false) => " FOR SHARE",
        _ => "",
    };
    let sql = format!("SELECT id FROM talk_schedules WHERE id = $1 AND version IS NULL{lock}");
    for _ in 0..5 {
        let id = wip(db, event_id).await?;
        if first_id(db, &sql, vec![id.into()]).await?.is_some() {
            return Ok(id);
        }
    }
    Err(Refusal::internal())
}

/// Whether a released schedule holds the submission. Released schedules never change, so
/// such a submission cannot be deleted. Holds the schedule in progress (shared) until the
/// transaction ends, so that no release copies the submission meanwhile.
pub async fn is_released(
    db: &impl ConnectionTrait,
    event_id: i64,
    submission_id: i64,
) -> Result<bool, Refusal> {
    held_wip(db, event_id, false).await?;
    let found = first(
        db,
        "SELECT sl.id FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
         WHERE sl.submission_id = $1 AND sc.version IS NOT NULL LIMIT 1",
        vec![submission_id.into()],
    )
    .await?;
    Ok(found.is_some())
}

/// Brings the submission's slots in the schedule in progress in line with it: none unless
/// it is (or is pending to be) accepted or confirmed, else as many as its slot count
/// (unscheduled ones go first), visible when it is confirmed, each as long as the
/// submission. Call it in the transaction that changes the submission's state, pending
/// state, slot count or duration.
pub async fn sync_submission(
    db: &impl ConnectionTrait,
    event_id: i64,
    submission_id: i64,
) -> Result<(), Refusal> {
    let Some(row) = rows(
        db,
        "SELECT s.state, s.pending_state, s.slot_count, \
         COALESCE(s.duration, st.default_duration) AS duration \
         FROM talk_submissions s JOIN talk_submission_types st ON st.id = s.submission_type_id \
         WHERE s.id = $1 AND s.event_id = $2",
        vec![submission_id.into(), event_id.into()],
    )
    .await?
    .pop() else {
        return Ok(());
    };
    let state: String = row.try_get("", "state")?;
    let pending: Option<String> = row.try_get("", "pending_state")?;
    let wanted = row.try_get::<i32>("", "slot_count")?.clamp(1, MAX_SLOTS) as usize;
    let minutes = i64::from(row.try_get::<i32>("", "duration")?);
    let wip = held_wip(db, event_id, false).await?;
    let scheduled = SCHEDULED_STATES.contains(&state.as_str())
        || pending.is_some_and(|p| SCHEDULED_STATES.contains(&p.as_str()));
    let ids = vec![wip.into(), submission_id.into()];
    if !scheduled {
        crate::db::execute(
            db,
            "DELETE FROM talk_slots WHERE schedule_id = $1 AND submission_id = $2",
            ids,
        )
        .await?;
        return Ok(());
    }
    let mut slots = Vec::new();
    for r in rows(
        db,
        "SELECT id, start, \"end\" FROM talk_slots WHERE schedule_id = $1 AND submission_id = $2 \
         ORDER BY CASE WHEN start IS NULL THEN 0 ELSE 1 END, id DESC",
        ids.clone(),
    )
    .await?
    {
        let start: Option<DateTime<Utc>> = r.try_get("", "start")?;
        let end: Option<DateTime<Utc>> = r.try_get("", "end")?;
        slots.push((r.try_get::<i64>("", "id")?, start, end));
    }
    let surplus = slots.len().saturating_sub(wanted);
    for (id, ..) in slots.drain(..surplus) {
        crate::db::execute(db, "DELETE FROM talk_slots WHERE id = $1", [id.into()]).await?;
    }
    let confirmed = state == "confirmed";
    for _ in slots.len()..wanted {
        crate::db::execute(
            db,
            "INSERT INTO talk_slots (schedule_id, submission_id, is_visible) VALUES ($1, $2, $3)",
            [wip.into(), submission_id.into(), confirmed.into()],
        )
        .await?;
    }
    crate::db::execute(
        db,
        "UPDATE talk_slots SET is_visible = $3 WHERE schedule_id = $1 AND submission_id = $2",
        [wip.into(), submission_id.into(), confirmed.into()],
    )
    .await?;
    for (id, start, end) in slots {
        let Some(start) = start else { continue };
        let due = start.checked_add_signed(Duration::minutes(minutes));
        if end != due {
            crate::db::execute(
                db,
                "UPDATE talk_slots SET \"end\" = $1 WHERE id = $2",
                [due.into(), id.into()],
            )
            .await?;
        }
    }
    Ok(())
}

/// Freezes the schedule in progress as version `version` with `comment` (a multi-language
/// string, or none) and starts a new one with copies of its slots; writes the log entry.
/// In the released schedule, slots of confirmed submissions and breaks are visible once
/// scheduled, others not, and blockers are left out. Gives the released schedule's ID; a
/// blank or reserved version, or one the event has used (in any case), is 400.
pub async fn release(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    version: &str,
    comment: Option<Value>,
) -> Result<i64, Refusal> {
    let version = version.trim();
    if version.is_empty() {
        return Err(Refusal::field("version", "This field may not be blank."));
    }
    if RESERVED_VERSIONS
        .iter()
        .any(|r| r.eq_ignore_ascii_case(version))
    {
        return Err(Refusal::field(
            "version",
            format!("\"{version}\" names a schedule by its role and cannot be a version."),
        ));
    }
    let event_id = ev.event.id;
    let released = held_wip(db, event_id, true).await?;
    let taken = rows(
        db,
        "SELECT 1 AS one FROM talk_schedules WHERE event_id = $1 AND LOWER(version) = LOWER($2)",
        vec![event_id.into(), version.into()],
    )
    .await?;
    if !taken.is_empty() {
        return Err(Refusal::field("version", VERSION_TAKEN));
    }
    let frozen = crate::db::execute(
        db,
        "UPDATE talk_schedules SET version = $1, published = $2, comment = $3 WHERE id = $4",
        [
            version.into(),
            crate::values::now().into(),
            comment.clone().into(),
            released.into(),
        ],
    )
    .await;
    match frozen {
        Err(e) if crate::db::is_unique_violation(&e) => {
            return Err(Refusal::field("version", VERSION_TAKEN));
        }
        other => other?,
    };
    let next = crate::db::insert_returning_id(
        db,
        "INSERT INTO talk_schedules (event_id) VALUES ($1) RETURNING id",
        [event_id.into()],
    )
    .await?;
    crate::db::execute(
        db,
        "UPDATE talk_slots SET is_visible = $1 WHERE schedule_id = $2",
        [false.into(), released.into()],
    )
    .await?;
    crate::db::execute(
        db,
        "UPDATE talk_slots SET is_visible = $1 WHERE schedule_id = $2 AND start IS NOT NULL \
         AND (slot_type = 'break' OR submission_id IN \
         (SELECT id FROM talk_submissions WHERE state = 'confirmed'))",
        [true.into(), released.into()],
    )
    .await?;
    crate::db::execute(
        db,
        "INSERT INTO talk_slots (schedule_id, submission_id, room_id, start, \"end\", \
         is_visible, slot_type, description) \
         SELECT $1, submission_id, room_id, start, \"end\", is_visible, slot_type, description \
         FROM talk_slots WHERE schedule_id = $2 ORDER BY id",
        [next.into(), released.into()],
    )
    .await?;
    crate::db::execute(
        db,
        "DELETE FROM talk_slots WHERE schedule_id = $1 AND slot_type = 'blocker'",
        [released.into()],
    )
    .await?;
    let data = json!({"version": version, "comment": comment});
    talk_log::write(db, Change::new(ev, "schedule", released, "release", data)).await?;
    Ok(released)
}

/// A change of a slot; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SlotChange {
    /// The room, or none.
    pub room: Option<Option<i64>>,
    /// The start, or none (unscheduled).
    pub start: Option<Option<DateTime<Utc>>>,
    /// The end (breaks only).
    pub end: Option<Option<DateTime<Utc>>>,
    /// The description, a multi-language string or none (breaks only).
    pub description: Option<Option<Value>>,
}

/// Changes a slot of the schedule in progress and writes the log entry. A slot of a
/// released schedule is 400, as are an end or a description for a session's slot (its
/// submission's duration and abstract say those), a room that is not the event's or is
/// hidden, times outside the event's days and an end before the start. A session's slot
/// ends its duration after its start; a slot without start has no end.
pub async fn change_slot(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    slot_id: i64,
    change: SlotChange,
) -> Result<(), Refusal> {
    let event_id = ev.event.id;
    let row = rows(
        db,
        "SELECT sl.schedule_id, sc.version, sl.submission_id, sl.room_id, sl.start, sl.\"end\", \
         COALESCE(s.duration, st.default_duration) AS duration \
         FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
         LEFT JOIN talk_submissions s ON s.id = sl.submission_id \
         LEFT JOIN talk_submission_types st ON st.id = s.submission_type_id \
         WHERE sl.id = $1 AND sc.event_id = $2",
        vec![slot_id.into(), event_id.into()],
    )
    .await?
    .pop()
    .ok_or_else(not_found)?;
    let version: Option<String> = row.try_get("", "version")?;
    let schedule: i64 = row.try_get("", "schedule_id")?;
    if version.is_some() || held_wip(db, event_id, false).await? != schedule {
        return Err(Refusal::bad_request(RELEASED));
    }
    let session = row.try_get::<Option<i64>>("", "submission_id")?.is_some();
    let minutes: Option<i32> = row.try_get("", "duration")?;
    let mut room: Option<i64> = row.try_get("", "room_id")?;
    let mut start: Option<DateTime<Utc>> = row.try_get("", "start")?;
    let mut end: Option<DateTime<Utc>> = row.try_get("", "end")?;
    let mut errors = FieldErrors::new();
    let mut data = serde_json::Map::new();
    if session && change.end.is_some() {
        errors.push(
            "end",
            "End can only be edited if there is no submission associated with the slot. \
             Otherwise, update the submission duration.",
        );
    }
    if session && change.description.is_some() {
        errors.push(
            "description",
            "Description can only be edited if there is no submission associated with the \
             slot. Otherwise, update the submission abstract.",
        );
    }
    if let Some(new_room) = change.room {
        if let Some(id) = new_room {
            let share = if db.get_database_backend() == DbBackend::Postgres {
                " FOR SHARE"
            } else {
                ""
            };
            match rows(
                db,
                &format!("SELECT hidden FROM talk_rooms WHERE id = $1 AND event_id = $2{share}"),
                vec![id.into(), event_id.into()],
            )
            .await?
            .pop()
            {
                None => errors.push(
                    "room",
                    format!("Invalid pk \"{id}\" - object does not exist."),
                ),
                Some(r) if r.try_get::<bool>("", "hidden")? => errors.push("room", ROOM_HIDDEN),
                Some(_) => {}
            }
        }
        room = new_room;
        data.insert("room".into(), json!(new_room));
    }
    if let Some(new_start) = change.start {
        start = new_start;
        data.insert("start".into(), json!(new_start));
        if session || new_start.is_none() {
            end = None;
        }
    }
    if let Some(new_end) = change.end {
        end = new_end;
        data.insert("end".into(), json!(new_end));
    }
    if session && let (Some(s), Some(m)) = (start, minutes) {
        end = s.checked_add_signed(Duration::minutes(i64::from(m)));
    }
    let (first, after) = event_days(&ev.event);
    for (field, value) in [("start", start), ("end", end)] {
        match value {
            Some(t) if t < first => {
                errors.push(field, "Scheduled times cannot be before the event starts.");
            }
            Some(t) if t > after => {
                errors.push(field, "Scheduled times cannot be after the event ends.");
            }
            _ => {}
        }
    }
    if let (Some(s), Some(e)) = (start, end)
        && e < s
    {
        errors.push("end", "The end time has to be after the start time.");
    }
    errors.into_result()?;
    crate::db::execute(
        db,
        "UPDATE talk_slots SET room_id = $1, start = $2, \"end\" = $3 WHERE id = $4",
        [room.into(), start.into(), end.into(), slot_id.into()],
    )
    .await?;
    if let Some(description) = change.description {
        data.insert("description".into(), json!(description));
        crate::db::execute(
            db,
            "UPDATE talk_slots SET description = $1 WHERE id = $2",
            [description.into(), slot_id.into()],
        )
        .await?;
    }
    talk_log::write(
        db,
        Change::new(ev, "slot", slot_id, "update", Value::Object(data)),
    )
    .await?;
    Ok(())
}

/// The event's time zone (UTC when its name is unknown).
pub fn event_tz(ev: &event::Model) -> Tz {
    ev.timezone.parse().unwrap_or(Tz::UTC)
}

/// The event's days in its time zone: from the start of its first day to the end of its
/// last (the day it starts when it has no end).
pub fn event_days(ev: &event::Model) -> (DateTime<Utc>, DateTime<Utc>) {
    let tz = event_tz(ev);
    let first = ev.date_from.with_timezone(&tz).date_naive();
    let last = ev
        .date_to
        .unwrap_or(ev.date_from)
        .with_timezone(&tz)
        .date_naive();
    let midnight = |day: chrono::NaiveDate| {
        tz.from_local_datetime(&day.and_time(NaiveTime::MIN))
            .earliest()
            .map_or_else(|| day.and_time(NaiveTime::MIN).and_utc(), |t| t.to_utc())
    };
    let after = last.succ_opt().unwrap_or(last);
    (midnight(first), midnight(after))
}

/// The SQL condition of the submissions (alias `s`) the public sees of a schedule: those
/// with a visible slot in the current schedule, once the agenda is visible; none before.
pub fn public_submissions(ev: &TalkEvent, s: &str) -> String {
    match ev.current_schedule.filter(|_| agenda_visible(ev)) {
        Some(id) => format!(
            "EXISTS (SELECT 1 FROM talk_slots ps WHERE ps.submission_id = {s}.id \
             AND ps.schedule_id = {id} AND ps.is_visible)"
        ),
        None => "1 = 0".into(),
    }
}

/// Whether the caller sees every schedule and slot of the event, with the organiser fields
/// of slots: organisers of the call for papers and reviewers (a reviewer who may not see
/// speaker names is kept out of the talk-side API altogether).
pub fn sees_all(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer()
}

/// Who may read schedules and slots: those who see all of them, and anyone who sees the
/// event once its agenda is visible.
pub fn may_read(ev: &TalkEvent) -> bool {
    sees_all(ev) || agenda_visible(ev)
}

/// Who may release schedules and change slots: organisers of the call for papers.
pub fn may_write(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
}

/// The SQL condition of the slots (alias `sl`, their schedule `sc`) the caller sees: all
/// of the event's, or only the visible slots of released schedules.
pub fn visible_slots(ev: &TalkEvent, sl: &str, sc: &str) -> String {
    if sees_all(ev) {
        "1 = 1".into()
    } else {
        format!("{sl}.is_visible AND {sc}.version IS NOT NULL")
    }
}

/// The SQL condition of the schedules (alias `sc`) the caller sees: all of the event's, or
/// only the current one.
pub fn visible_schedules(ev: &TalkEvent, sc: &str) -> String {
    match (sees_all(ev), ev.current_schedule) {
        (true, _) => "1 = 1".into(),
        (false, Some(id)) => format!("{sc}.id = {id}"),
        (false, None) => "1 = 0".into(),
    }
}
