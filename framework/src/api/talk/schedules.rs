//! Schedules: `/api/events/{event}/schedules/`. Organisers of the call for papers and
//! reviewers read every schedule of the event, the one in progress (`wip`) too; anyone who
//! sees the event reads the current one (`latest`) once its agenda is visible. Organisers
//! release the schedule in progress as a new version (`release/`). `by-version/` gives a
//! schedule's URL by its version name. `q` searches the version, `o` orders by `id`,
//! `version` or `published` (default: the schedule in progress, then newest first). The
//! rules are [`crate::domain::talk::schedule`]'s.

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::shape::{Expandable, I18nInput, Shaped, TalkText};
use super::slots::SlotOut;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::schedule;
use crate::domain::talk::sql::{first, ids_in};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, Page};
use crate::state::AppState;

const ENDPOINT: &str = "schedules";

/// A schedule in a list.
#[derive(Object)]
#[oai(rename = "TalkScheduleListItem")]
pub struct ScheduleListItem {
    /// Internal ID.
    pub id: i64,
    /// The version name; `wip` for the schedule in progress.
    pub version: String,
    /// When it was released; null for the schedule in progress.
    #[oai(nullable)]
    pub published: Option<DateTime<Utc>>,
}

/// A schedule with its slots.
#[derive(Object)]
#[oai(rename = "TalkSchedule")]
pub struct ScheduleOut {
    /// Internal ID.
    pub id: i64,
    /// The version name; `wip` for the schedule in progress.
    pub version: String,
    /// When it was released; null for the schedule in progress.
    #[oai(nullable)]
    pub published: Option<DateTime<Utc>>,
    /// The comment of its release.
    pub comment: TalkText,
    /// IDs of its slots the caller sees (the public: the visible ones), or with
    /// `?expand=slots` the slots. Absent where a slot's `schedule` is expanded.
    pub slots: Option<Vec<Expandable<i64, SlotOut>>>,
}

/// Schedules with their slots: two queries for any number.
pub static KIND: Kind = Kind {
    name: "schedule",
    key: "id",
    endpoint: ENDPOINT,
    load: load_full,
    fields: &[("slots", &super::slots::KIND)],
};

/// Schedules as a list shows them: one query for any number.
pub static LIST_KIND: Kind = Kind {
    name: "schedule",
    key: "id",
    endpoint: ENDPOINT,
    load: load_listed,
    fields: &[],
};

/// Schedules as a slot's expanded `schedule` shows them, without their slots: one query.
pub static SLOT_SCHEDULE_KIND: Kind = Kind {
    name: "schedule",
    key: "id",
    endpoint: ENDPOINT,
    load: load_brief,
    fields: &[],
};

/// How much of a schedule an answer shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Detail {
    Listed,
    Brief,
    Full,
}

fn load_listed<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(load(ctx, keys, Detail::Listed))
}

fn load_brief<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(load(ctx, keys, Detail::Brief))
}

fn load_full<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(load(ctx, keys, Detail::Full))
}

async fn load(ctx: &Ctx<'_>, keys: &[Value], detail: Detail) -> Result<Vec<Value>, ApiError> {
    let (ids, mut values) = keys_in(keys);
    values.push(ctx.event_id().into());
    let sql = format!(
        "SELECT sc.id, sc.version, sc.published, sc.comment FROM talk_schedules sc \
         WHERE sc.id IN {ids} AND sc.event_id = ${} AND {}",
        values.len(),
        schedule::visible_schedules(ctx.ev, "sc")
    );
    let rows = ctx.rows(&sql, values).await?;
    let mut slots: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    if detail == Detail::Full && !rows.is_empty() {
        let found: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id"))
            .collect::<Result<_, _>>()?;
        let (in_ids, values) = ids_in(&found, 0);
        let sql = format!(
            "SELECT sl.schedule_id, sl.id FROM talk_slots sl \
             JOIN talk_schedules sc ON sc.id = sl.schedule_id \
             WHERE sl.schedule_id IN {in_ids} AND {} \
             ORDER BY CASE WHEN sl.start IS NULL THEN 1 ELSE 0 END, sl.start, sl.id",
            schedule::visible_slots(ctx.ev, "sl", "sc")
        );
        for r in ctx.rows(&sql, values).await? {
            slots
                .entry(r.try_get("", "schedule_id")?)
                .or_default()
                .push(json!(r.try_get::<i64>("", "id")?));
        }
    }
    rows.iter()
        .map(|r| {
            let id: i64 = r.try_get("", "id")?;
            let version: Option<String> = r.try_get("", "version")?;
            let published: Option<DateTime<Utc>> = r.try_get("", "published")?;
            let mut o = json!({
                "id": id,
                "version": version.unwrap_or_else(|| "wip".into()),
                "published": published,
            });
            if detail != Detail::Listed {
                let comment: Option<Value> = r.try_get("", "comment")?;
                o["comment"] = ctx.text(&comment.unwrap_or(Value::Null));
            }
            if detail == Detail::Full {
                o["slots"] = Value::Array(slots.remove(&id).unwrap_or_default());
            }
            Ok(o)
        })
        .collect()
}

/// The release of the schedule in progress.
#[derive(Object)]
#[oai(rename = "TalkScheduleRelease")]
pub struct ReleaseBody {
    /// The new version's name, used by no other schedule of the event (in any case); not
    /// `wip` or `latest`.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub version: String,
    /// A comment for the public changelog.
    #[oai(nullable)]
    pub comment: MaybeUndefined<I18nInput<100000>>,
}

async fn schedule_event(
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

/// The ID of the schedule `id` names: an ID, `wip` (for those who see every schedule; the
/// schedule in progress is created when the event has none) or `latest`; 404 otherwise.
async fn named(state: &AppState, ev: &TalkEvent, id: &str) -> Result<i64, ApiError> {
    match id {
        "latest" => Ok(ev.current_schedule.ok_or_else(not_found)?),
        "wip" if schedule::sees_all(ev) => {
            let found = first(
                &state.db,
                "SELECT id FROM talk_schedules WHERE event_id = $1 AND version IS NULL",
                vec![ev.event.id.into()],
            )
            .await?;
            match found {
                Some(r) => Ok(r.try_get("", "id")?),
                None => {
                    let txn = crate::db::begin_write(&state.db).await?;
                    let id = schedule::wip(&txn, ev.event.id).await?;
                    crate::db::commit(txn).await?;
                    Ok(id)
                }
            }
        }
        other => other.parse().map_err(|_| not_found().into()),
    }
}

/// Schedule operations.
pub struct SchedulesApi;

#[OpenApi(tag = "TalkTag::Schedule")]
impl SchedulesApi {
    /// List schedules
    ///
    /// Their versions and release times; the public sees the current schedule only.
    #[oai(path = "/api/events/:event/schedules", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_schedules(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the version contains.
        q: Query<Option<String>>,
        /// Order: `published` (default, newest first after the schedule in progress),
        /// `id` or `version`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<ScheduleListItem>>>> {
        let ev = schedule_event(&state, &talk, &event, Action::List).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let mut listing = Listing::new(
            "talk_schedules sc",
            "sc.id",
            "sc.event_id",
            ev.event.id,
            "CASE WHEN sc.published IS NULL THEN 0 ELSE 1 END, sc.published DESC",
        );
        listing
            .condition(&schedule::visible_schedules(&ev, "sc"))
            .search(q.as_deref(), &["sc.version"])
            .order(
                o.as_deref(),
                &[
                    ("id", "sc.id"),
                    ("version", "sc.version"),
                    (
                        "published",
                        "CASE WHEN sc.published IS NULL THEN 1 ELSE 0 END, sc.published",
                    ),
                ],
            );
        Ok(Json(
            listing
                .fetch(
                    &ctx,
                    &LIST_KIND,
                    req,
                    page.0,
                    page_size.0,
                    &Expand::default(),
                )
                .await?,
        ))
    }

    /// Show a schedule
    ///
    /// By ID, or `wip` for the schedule in progress (organisers and reviewers) and `latest`
    /// for the current one. `?expand=slots.room,slots.submission.speakers` gives most of
    /// the program in one answer.
    #[oai(path = "/api/events/:event/schedules/:id", method = "get")]
    async fn get_schedule(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The schedule's ID, `wip` or `latest`.
        id: Path<String>,
        /// Fields to expand: `slots`, `slots.room`, `slots.submission`,
        /// `slots.submission.speakers`, `slots.submission.track`,
        /// `slots.submission.submission_type`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<ScheduleOut>>> {
        let ev = schedule_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let id = named(&state, &ev, &id).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, id.into(), &expand).await?))
    }

    /// A schedule's URL by its version
    ///
    /// The URL (`text/plain`) of the schedule with this version name, or with `latest` (any
    /// value) of the current one; 404 when there is none the caller sees.
    #[oai(path = "/api/events/:event/schedules/by-version", method = "get")]
    async fn schedule_by_version(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The version name (exactly as released; `wip` for the schedule in progress).
        version: Query<Option<String>>,
        /// Any value asks for the current schedule.
        latest: Query<Option<String>>,
    ) -> TalkResult<PlainText<String>> {
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
        let id = match (latest.as_deref().filter(|l| !l.is_empty()), version.0) {
            (Some(_), _) => ev.current_schedule.ok_or_else(not_found)?,
            (None, Some(v)) if v == "wip" => named(&state, &ev, "wip").await?,
            (None, Some(v)) => first(
                &state.db,
                &format!(
                    "SELECT sc.id FROM talk_schedules sc WHERE sc.event_id = $1 \
                     AND sc.version = $2 AND {}",
                    schedule::visible_schedules(&ev, "sc")
                ),
                vec![ev.event.id.into(), v.into()],
            )
            .await?
            .ok_or_else(not_found)?
            .try_get("", "id")?,
            (None, None) => {
                return Err(ApiError::bad_request(
                    "Give the version, or latest for the current schedule.",
                )
                .into());
            }
        };
        Ok(PlainText(format!(
            "{}/api/events/{}/schedules/{id}/",
            state.public_url, ev.event.slug
        )))
    }

    /// Release the schedule in progress
    ///
    /// Freezes the schedule in progress as a new version and starts a new one with copies
    /// of its slots. In the released schedule the slots of confirmed sessions and breaks are
    /// visible once scheduled. A version name the event has used (in any case) is 400, and
    /// nothing changes. The schedule answered is the released one.
    #[oai(path = "/api/events/:event/schedules/release", method = "post")]
    async fn release_schedule(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<ReleaseBody>,
    ) -> TalkResult<Created<Shaped<ScheduleOut>>> {
        let ev = schedule_event(&state, &talk, &event, Action::Actions).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let ReleaseBody { version, comment } = body.0;
        let comment = comment.take().map(|c| c.to_stored());
        let txn = crate::db::begin_write(&state.db).await?;
        let id = schedule::release(&txn, &ev, &version, comment).await?;
        let out = ctx
            .within(&txn)
            .one(&KIND, id.into(), &Expand::default())
            .await?;
        crate::db::commit(txn).await?;
        Ok(Created::Created(Json(out)))
    }
}
