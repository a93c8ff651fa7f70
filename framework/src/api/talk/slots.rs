//! Slots of schedules: `/api/events/{event}/slots/`. Organisers of the call for papers and
//! reviewers read every slot of every schedule, with whether it is visible and its type;
//! anyone who sees the event reads the visible slots of released schedules once its agenda
//! is visible. Without a filter a list holds the current schedule's slots. Organisers
//! change slots of the schedule in progress (room, start; end and description of breaks):
//! the rules are [`crate::domain::talk::schedule`]'s. `{id}/ical/` gives a session's slot
//! as an iCalendar file.

use chrono::{DateTime, Duration, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{ApiResponse, Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in, like_pattern};
use super::expand::{Expand, Kind, Loaded};
use super::exports::PublicList;
use super::lang::event_locales;
use super::rooms::RoomOut;
use super::schedules::ScheduleOut;
use super::shape::{Expandable, I18nInput, Shaped, TalkText};
use super::submissions::SubmissionOut;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::catalog::shown_name;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::schedule::{self, SlotChange, event_tz, ical};
use crate::domain::talk::sql::{first, rows};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, JsonBody, JsonBytes, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "slots";

/// The answer to a filter value that names nothing of the event.
const INVALID_CHOICE: &str =
    "Select a valid choice. That choice is not one of the available choices.";

/// A slot of a schedule: a session's (with `submission`) or a break. `is_visible` and
/// `slot_type` are shown to organisers and reviewers only.
#[derive(Object)]
#[oai(rename = "TalkSlot")]
pub struct SlotOut {
    /// Internal ID.
    pub id: i64,
    /// The room's ID, or with `?expand=room` the room; null when it has none.
    #[oai(nullable)]
    pub room: Option<Expandable<i64, RoomOut>>,
    /// Start, in the event's time zone; null when unscheduled.
    #[oai(nullable)]
    pub start: Option<DateTime<Utc>>,
    /// End, in the event's time zone (a session's: its start plus its duration).
    #[oai(nullable)]
    pub end: Option<DateTime<Utc>>,
    /// The submission's code, or with `?expand=submission` the submission; null for a
    /// break.
    #[oai(nullable)]
    pub submission: Option<Expandable<String, SubmissionOut>>,
    /// The schedule's ID, or with `?expand=schedule` the schedule (without its slots).
    pub schedule: Expandable<i64, ScheduleOut>,
    /// A break's description.
    pub description: TalkText,
    /// Minutes: from start to end when scheduled, else the session's duration.
    #[oai(nullable)]
    pub duration: Option<i64>,
    /// Whether the public sees it (organisers and reviewers only).
    pub is_visible: Option<bool>,
    /// `break` or `blocker` for a slot without a session (organisers and reviewers only).
    #[oai(nullable)]
    pub slot_type: Option<String>,
}

/// Slots as objects: one query for any number.
pub static KIND: Kind = Kind {
    name: "slot",
    key: "id",
    endpoint: ENDPOINT,
    load,
    fields: &[
        ("room", &super::rooms::KIND),
        ("schedule", &super::schedules::SLOT_SCHEDULE_KIND),
        ("submission", &super::submissions::KIND),
    ],
};

/// A time as the event's time zone shows it (RFC 3339, with its offset).
pub(super) fn local(ctx: &Ctx<'_>, t: Option<DateTime<Utc>>) -> Value {
    let tz = event_tz(&ctx.ev.event);
    t.map_or(Value::Null, |t| json!(t.with_timezone(&tz).to_rfc3339()))
}

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT sl.id, sl.room_id, sl.start, sl.\"end\", sl.schedule_id, sl.description, \
             sl.is_visible, sl.slot_type, s.code, \
             COALESCE(s.duration, st.default_duration) AS session_minutes \
             FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
             LEFT JOIN talk_submissions s ON s.id = sl.submission_id \
             LEFT JOIN talk_submission_types st ON st.id = s.submission_type_id \
             WHERE sl.id IN {ids} AND sc.event_id = ${} AND {}",
            values.len(),
            schedule::visible_slots(ctx.ev, "sl", "sc")
        );
        let all = schedule::sees_all(ctx.ev);
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                let start: Option<DateTime<Utc>> = r.try_get("", "start")?;
                let end: Option<DateTime<Utc>> = r.try_get("", "end")?;
                let session: Option<i32> = r.try_get("", "session_minutes")?;
                let duration = match (start, end) {
                    (Some(s), Some(e)) => Some((e - s).num_minutes()),
                    _ => session.map(i64::from),
                };
                let end = end.or_else(|| start?.checked_add_signed(Duration::minutes(duration?)));
                let description: Option<Value> = r.try_get("", "description")?;
                let mut o = json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "room": r.try_get::<Option<i64>>("", "room_id")?,
                    "start": local(ctx, start),
                    "end": local(ctx, end),
                    "submission": r.try_get::<Option<String>>("", "code")?,
                    "schedule": r.try_get::<i64>("", "schedule_id")?,
                    "description": ctx.text(&description.unwrap_or(Value::Null)),
                    "duration": duration,
                });
                if all {
                    o["is_visible"] = json!(r.try_get::<bool>("", "is_visible")?);
                    o["slot_type"] = json!(r.try_get::<Option<String>>("", "slot_type")?);
                }
                Ok(o)
            })
            .collect()
    })
}

/// A change of a slot of the schedule in progress; fields left out keep their values.
#[derive(Object)]
#[oai(rename = "TalkSlotWrite")]
pub struct SlotWrite {
    /// The room's ID; null for none. A hidden room takes no sessions.
    #[oai(nullable)]
    pub room: MaybeUndefined<i64>,
    /// Start, within the event's days; null unschedules the slot.
    #[oai(nullable)]
    pub start: MaybeUndefined<DateTime<Utc>>,
    /// End, not before the start (breaks only: a session's slot lasts its duration).
    #[oai(nullable)]
    pub end: MaybeUndefined<DateTime<Utc>>,
    /// Description (breaks only).
    #[oai(nullable)]
    pub description: MaybeUndefined<I18nInput<1000>>,
}

/// A session's slot as an iCalendar file.
#[derive(ApiResponse)]
pub enum Calendar {
    /// The calendar, as an attachment named after the event and the session.
    #[oai(status = 200, content_type = "text/calendar; charset=utf-8")]
    Calendar(
        PlainText<String>,
        /// `attachment; filename="<event>-<code>.ics"`.
        #[oai(header = "Content-Disposition")]
        String,
    ),
}

async fn slot_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(
            &state.db,
            slug,
            ENDPOINT,
            action,
            schedule::may_read,
            schedule::may_write,
        )
        .await?)
}

/// The ID of the event's object a filter names (by `sql`, with the event as `$1` and the
/// value as `$2`), or 400 on the filter.
async fn chosen(
    ctx: &Ctx<'_>,
    field: &str,
    sql: &str,
    value: sea_orm::Value,
) -> Result<i64, ApiError> {
    let found = ctx.rows(sql, vec![ctx.event_id().into(), value]).await?;
    match found.first() {
        Some(r) => Ok(r.try_get::<i64>("", "id")?),
        None => Err(ApiError::field(field, INVALID_CHOICE)),
    }
}

/// The filters of a list of slots.
struct Filters {
    submission: Option<String>,
    schedule: Option<i64>,
    schedule_version: Option<String>,
    speaker: Option<String>,
    room: Option<i64>,
    is_visible: Option<bool>,
}

impl Filters {
    /// Adds the filters given to `listing` (400 for a value naming nothing of the event);
    /// without any, the current schedule's slots.
    async fn apply(self, ctx: &Ctx<'_>, listing: &mut Listing) -> Result<(), ApiError> {
        let given = self.submission.is_some()
            || self.schedule.is_some()
            || self.schedule_version.is_some()
            || self.speaker.is_some()
            || self.room.is_some()
            || self.is_visible.is_some();
        if !given {
            match ctx.ev.current_schedule {
                Some(id) => listing.filter("sl.schedule_id = {}", id),
                None => listing.condition("1 = 0"),
            };
            return Ok(());
        }
        let nonempty = |v: Option<String>| v.filter(|v| !v.is_empty());
        if let Some(code) = nonempty(self.submission) {
            let sql = "SELECT id FROM talk_submissions WHERE event_id = $1 AND code = UPPER($2)";
            let id = chosen(ctx, "submission", sql, code.into()).await?;
            listing.filter("sl.submission_id = {}", id);
        }
        if let Some(id) = self.schedule {
            let sql = "SELECT id FROM talk_schedules WHERE event_id = $1 AND id = $2";
            let id = chosen(ctx, "schedule", sql, id.into()).await?;
            listing.filter("sl.schedule_id = {}", id);
        }
        if let Some(version) = nonempty(self.schedule_version) {
            let sql = "SELECT id FROM talk_schedules WHERE event_id = $1 \
                       AND LOWER(version) = LOWER($2)";
            let id = chosen(ctx, "schedule_version", sql, version.into()).await?;
            listing.filter("sl.schedule_id = {}", id);
        }
        if let Some(code) = nonempty(self.speaker) {
            let sql = "SELECT id FROM talk_speakers WHERE event_id = $1 AND code = UPPER($2)";
            let id = chosen(ctx, "speaker", sql, code.into()).await?;
            listing.filter(
                "EXISTS (SELECT 1 FROM talk_submission_speakers fs \
                 WHERE fs.submission_id = sl.submission_id AND fs.speaker_id = {})",
                id,
            );
        }
        if let Some(id) = self.room {
            let sql = "SELECT id FROM talk_rooms WHERE event_id = $1 AND id = $2";
            let id = chosen(ctx, "room", sql, id.into()).await?;
            listing.filter("sl.room_id = {}", id);
        }
        if let Some(visible) = self.is_visible {
            listing.filter("sl.is_visible = {}", visible);
        }
        Ok(())
    }
}

/// Slot operations.
pub struct SlotsApi;

#[OpenApi(tag = "TalkTag::Schedule")]
impl SlotsApi {
    /// List slots
    ///
    /// Without any of the filters `submission`, `schedule`, `schedule_version`, `speaker`,
    /// `room` and `is_visible`, the slots of the current schedule (none before the first
    /// release).
    #[oai(path = "/api/events/:event/slots", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_slots(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Slots of the submission with this code.
        submission: Query<Option<String>>,
        /// Slots of the schedule with this ID.
        schedule: Query<Option<i64>>,
        /// Slots of the schedule with this version (in any case).
        schedule_version: Query<Option<String>>,
        /// Slots of the submissions of the speaker with this code.
        speaker: Query<Option<String>>,
        /// Slots in the room with this ID.
        room: Query<Option<i64>>,
        /// Only visible slots (`true`) or only the others (`false`).
        is_visible: Query<Option<bool>>,
        /// Text the submission's title or one of its speakers' names contains.
        q: Query<Option<String>>,
        /// Order: `start` (default, then the room's position), `end`, `room__name` or
        /// `submission__title`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `room`, `schedule`, `submission`, `submission.speakers`,
        /// `submission.track`, `submission.submission_type`, `submission.answers`,
        /// `submission.answers.question`, `submission.resources`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<JsonBytes<Page<Shaped<SlotOut>>>> {
        // The public's plain pages of the current schedule are kept once made.
        let public = PublicList::find(&state, req, &talk, &event, ENDPOINT).await?;
        if let Some(kept) = public.as_ref().and_then(PublicList::hit) {
            return Ok(JsonBytes::from_bytes(kept));
        }
        let ev = slot_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let starts = "CASE WHEN sl.start IS NULL THEN 1 ELSE 0 END, sl.start";
        let mut listing = Listing::new(
            "talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
             LEFT JOIN talk_submissions s ON s.id = sl.submission_id \
             LEFT JOIN talk_rooms r ON r.id = sl.room_id",
            "sl.id",
            "sc.event_id",
            ev.event.id,
            &format!("{starts}, COALESCE(r.position, 2147483647)"),
        );
        listing.condition(&schedule::visible_slots(&ev, "sl", "sc"));
        let filters = Filters {
            submission: submission.0,
            schedule: schedule.0,
            schedule_version: schedule_version.0,
            speaker: speaker.0,
            room: room.0,
            is_visible: is_visible.0,
        };
        filters.apply(&ctx, &mut listing).await?;
        if let Some(q) = q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
            listing.filter(
                "(LOWER(s.title) LIKE {} ESCAPE '\\' OR EXISTS (SELECT 1 \
                 FROM talk_submission_speakers qs JOIN talk_speakers qp ON qp.id = qs.speaker_id \
                 WHERE qs.submission_id = s.id AND LOWER(qp.name) LIKE {} ESCAPE '\\'))",
                like_pattern(q),
            );
        }
        listing.order(
            o.as_deref(),
            &[
                ("start", starts),
                (
                    "end",
                    "CASE WHEN sl.\"end\" IS NULL THEN 1 ELSE 0 END, sl.\"end\"",
                ),
                ("room__name", "CAST(r.name AS TEXT)"),
                ("submission__title", "s.title"),
            ],
        );
        let answer = JsonBytes::new(
            &listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        );
        if let Some(public) = public {
            public.keep(&state, answer.0.clone());
        }
        Ok(answer)
    }

    /// Show a slot
    #[oai(path = "/api/events/:event/slots/:id", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn get_slot(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The slot's ID.
        id: Path<i64>,
        /// Fields to expand, as in the list.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SlotOut>>> {
        let ev = slot_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, (*id).into(), &expand).await?))
    }

    /// Change a slot
    ///
    /// Only slots of the schedule in progress change (a slot of a released schedule is
    /// 400); a session's slot takes a room and a start (it lasts the session's duration), a
    /// break also an end and a description. Changes the fields the body sends.
    #[oai(path = "/api/events/:event/slots/:id", method = "patch")]
    async fn patch_slot(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The slot's ID.
        id: Path<i64>,
        body: JsonBody<SlotWrite>,
    ) -> TalkResult<Json<Shaped<SlotOut>>> {
        Ok(Json(change(&state, &talk, &event, *id, body.0).await?))
    }

    /// Replace a slot
    ///
    /// As PATCH: fields the body leaves out keep their values.
    #[oai(path = "/api/events/:event/slots/:id", method = "put")]
    async fn put_slot(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The slot's ID.
        id: Path<i64>,
        body: JsonBody<SlotWrite>,
    ) -> TalkResult<Json<Shaped<SlotOut>>> {
        Ok(Json(change(&state, &talk, &event, *id, body.0).await?))
    }

    /// A session's slot as iCalendar
    ///
    /// A scheduled slot of a session, as a `text/calendar` file; 404 for a break or an
    /// unscheduled slot.
    #[oai(path = "/api/events/:event/slots/:id/ical", method = "get")]
    async fn slot_ical(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The slot's ID.
        id: Path<i64>,
    ) -> TalkResult<Calendar> {
        let ev = talk
            .event_for(
                &state.db,
                &event,
                ENDPOINT,
                Action::Actions,
                schedule::may_read,
                schedule::may_read,
            )
            .await?;
        let ics = slot_calendar(&state, &ev, *id).await?;
        let code = ics.1;
        Ok(Calendar::Calendar(
            PlainText(ics.0),
            format!("attachment; filename=\"{}-{code}.ics\"", ev.event.slug),
        ))
    }
}

/// Changes a slot of the schedule in progress as the body says; gives it as organisers see
/// it, read in the change's transaction.
async fn change(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
    body: SlotWrite,
) -> Result<Shaped<SlotOut>, ApiError> {
    let ev = slot_event(state, talk, slug, Action::Update).await?;
    let ctx = Ctx::new(state, &ev, None).await?;
    let change = SlotChange {
        room: patched(body.room),
        start: patched(body.start),
        end: patched(body.end),
        description: patched(body.description).map(|d| d.map(|d| d.to_stored())),
    };
    let txn = crate::db::begin_write(&state.db).await?;
    schedule::change_slot(&txn, &ev, id, change).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// The calendar of a session's scheduled slot the caller sees, and the session's code; 404
/// otherwise.
async fn slot_calendar(
    state: &AppState,
    ev: &TalkEvent,
    id: i64,
) -> Result<(String, String), ApiError> {
    let slot = first(
        &state.db,
        &format!(
            "SELECT sl.start, sl.\"end\", sl.schedule_id, sl.submission_id, s.code, s.title, \
             s.abstract, r.name AS room_name \
             FROM talk_slots sl JOIN talk_schedules sc ON sc.id = sl.schedule_id \
             JOIN talk_submissions s ON s.id = sl.submission_id \
             JOIN talk_rooms r ON r.id = sl.room_id \
             WHERE sl.id = $1 AND sc.event_id = $2 AND sl.start IS NOT NULL \
             AND sl.\"end\" IS NOT NULL AND {}",
            schedule::visible_slots(ev, "sl", "sc")
        ),
        vec![id.into(), ev.event.id.into()],
    )
    .await?
    .ok_or_else(not_found)?;
    let submission: i64 = slot.try_get("", "submission_id")?;
    let schedule_id: i64 = slot.try_get("", "schedule_id")?;
    let siblings = rows(
        &state.db,
        "SELECT id FROM talk_slots WHERE schedule_id = $1 AND submission_id = $2 \
         ORDER BY CASE WHEN start IS NULL THEN 1 ELSE 0 END, start, id",
        vec![schedule_id.into(), submission.into()],
    )
    .await?;
    let index = if siblings.len() > 1 {
        siblings
            .iter()
            .position(|r| r.try_get::<i64>("", "id").is_ok_and(|s| s == id))
    } else {
        None
    };
    let speakers = rows(
        &state.db,
        "SELECT COALESCE(NULLIF(sp.name, ''), u.fullname, '') AS name \
         FROM talk_submission_speakers ss JOIN talk_speakers sp ON sp.id = ss.speaker_id \
         LEFT JOIN users u ON u.id = sp.user_id WHERE ss.submission_id = $1 \
         ORDER BY ss.position, sp.code",
        vec![submission.into()],
    )
    .await?
    .iter()
    .map(|r| r.try_get::<String>("", "name"))
    .collect::<Result<Vec<_>, _>>()?;
    let locale = event_locales(state, &ev.event)
        .await?
        .into_iter()
        .next()
        .unwrap_or_else(|| "en".into());
    let code: String = slot.try_get("", "code")?;
    let title: String = slot.try_get("", "title")?;
    let abstract_: Option<String> = slot.try_get("", "abstract")?;
    let room = shown_name(&slot.try_get::<Value>("", "room_name")?, &locale);
    let talk = ical::Talk {
        code: &code,
        index,
        title: &title,
        speakers: &speakers,
        abstract_: abstract_.as_deref(),
        room: &room,
        start: slot.try_get("", "start")?,
        end: slot.try_get("", "end")?,
    };
    let calendar = ical::calendar(
        &ev.event.slug,
        ical::netloc(&state.public_url),
        &code,
        &[talk],
        crate::values::now(),
    );
    Ok((calendar, code))
}

/// The IDs of the slots of each of these submissions (by ID) in the current schedule that
/// the public sees, as pretalx shows them in a submission's `slots`: one query for any
/// number.
pub async fn of_submissions(
    ctx: &Ctx<'_>,
    submissions: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<Value>>, ApiError> {
    let mut out: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    let Some(current) = ctx.ev.current_schedule else {
        return Ok(out);
    };
    if submissions.is_empty() {
        return Ok(out);
    }
    let (in_ids, mut values) = crate::domain::talk::sql::ids_in(submissions, 0);
    values.push(current.into());
    let sql = format!(
        "SELECT submission_id, id FROM talk_slots WHERE submission_id IN {in_ids} \
         AND schedule_id = ${} AND is_visible \
         ORDER BY CASE WHEN start IS NULL THEN 1 ELSE 0 END, start, id",
        values.len()
    );
    for r in ctx.rows(&sql, values).await? {
        out.entry(r.try_get("", "submission_id")?)
            .or_default()
            .push(json!(r.try_get::<i64>("", "id")?));
    }
    Ok(out)
}
