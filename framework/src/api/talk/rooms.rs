//! Rooms: `/api/events/{event}/rooms/`, 100 per page as in pretalx. Organisers of the call
//! for papers or of the event's settings read every room; anyone who sees the event reads
//! the rooms that are not hidden once its agenda is visible. Organisers of the event's
//! settings change rooms and see their organiser fields (speaker information,
//! availabilities). `q` searches the name, `hidden` filters, `o` orders by `position`
//! (default), `id`, `name` or `capacity`. The rules are [`crate::domain::talk::rooms`]'s.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{I18nInput, Shaped, TalkText};
use super::speakers::{AvailabilityIn, AvailabilityOut};
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::availability::{Span, merged, whole_days};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::rooms::{self, Fields};
use crate::domain::talk::schedule::event_tz;
use crate::domain::talk::sql::ids_in;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page, PageRequest, patched};
use crate::state::AppState;

const ENDPOINT: &str = "rooms";

/// Rooms per page unless `page_size` asks for fewer, as pretalx's.
const PAGE_SIZE: u64 = 100;

/// A room. `speaker_info` and `availabilities` are shown to organisers of the event's
/// settings only.
#[derive(Object)]
#[oai(rename = "TalkRoom")]
pub struct RoomOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: TalkText,
    /// Description for attendees, e.g. directions.
    pub description: TalkText,
    /// The GUID when one is set, else a stable UUID derived from the room.
    pub uuid: String,
    /// The GUID organisers set for external tools.
    #[oai(nullable)]
    pub guid: Option<String>,
    /// How many people fit.
    #[oai(nullable)]
    pub capacity: Option<i32>,
    /// Where it comes among the rooms (lowest first).
    #[oai(nullable)]
    pub position: Option<i32>,
    /// Whether it is hidden: it takes no sessions, and the public does not see it.
    pub hidden: bool,
    /// Information for the speakers scheduled in it (organisers only).
    pub speaker_info: Option<TalkText>,
    /// When it is available (organisers only).
    pub availabilities: Option<Vec<AvailabilityOut>>,
}

/// Rooms as objects: one query for any number (two for organisers).
pub static KIND: Kind = Kind {
    name: "room",
    key: "id",
    endpoint: ENDPOINT,
    load,
    fields: &[],
};

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT r.id, r.name, r.description, r.speaker_info, r.guid, r.capacity, \
             r.position, r.hidden FROM talk_rooms r \
             WHERE r.id IN {ids} AND r.event_id = ${} AND {}",
            values.len(),
            rooms::visible(ctx.ev, "r")
        );
        let rows = ctx.rows(&sql, values).await?;
        let organising = rooms::may_write(ctx.ev);
        let mut availabilities: std::collections::HashMap<i64, Vec<Value>> =
            std::collections::HashMap::new();
        if organising && !rows.is_empty() {
            let found: Vec<i64> = rows
                .iter()
                .map(|r| r.try_get::<i64>("", "id"))
                .collect::<Result<_, _>>()?;
            let (in_ids, values) = ids_in(&found, 0);
            let tz = event_tz(&ctx.ev.event);
            for r in ctx
                .rows(
                    &format!(
                        "SELECT room_id, start, \"end\" FROM talk_room_availabilities \
                         WHERE room_id IN {in_ids} ORDER BY start, id"
                    ),
                    values,
                )
                .await?
            {
                let (start, end) = (r.try_get("", "start")?, r.try_get("", "end")?);
                availabilities
                    .entry(r.try_get("", "room_id")?)
                    .or_default()
                    .push(
                        json!({"start": start, "end": end, "allDay": whole_days(tz, start, end)}),
                    );
            }
        }
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let guid: Option<String> = r.try_get("", "guid")?;
                let text = |column: &str| -> Result<Value, ApiError> {
                    let stored: Option<Value> = r.try_get("", column)?;
                    Ok(ctx.text(&stored.unwrap_or(Value::Null)))
                };
                let mut o = json!({
                    "id": id,
                    "name": text("name")?,
                    "description": text("description")?,
                    "uuid": rooms::uuid(ctx.public_url, id, guid.as_deref()),
                    "guid": guid,
                    "capacity": r.try_get::<Option<i32>>("", "capacity")?,
                    "position": r.try_get::<Option<i32>>("", "position")?,
                    "hidden": r.try_get::<bool>("", "hidden")?,
                });
                if organising {
                    o["speaker_info"] = text("speaker_info")?;
                    o["availabilities"] =
                        Value::Array(availabilities.remove(&id).unwrap_or_default());
                }
                Ok(o)
            })
            .collect()
    })
}

/// The fields of a room a body may leave out: a new room takes the defaults (none, not
/// hidden), PUT and PATCH keep the values.
#[derive(Object)]
#[oai(rename = "TalkRoomOptional")]
pub struct RoomOptional {
    /// Description for attendees, e.g. directions.
    #[oai(nullable)]
    pub description: MaybeUndefined<I18nInput<1000>>,
    /// Information for the speakers scheduled in it.
    #[oai(nullable)]
    pub speaker_info: MaybeUndefined<I18nInput<1000>>,
    /// A UUID for external tools, unique in the event.
    #[oai(nullable, validator(max_length = 38))]
    pub guid: MaybeUndefined<String>,
    /// How many people fit.
    #[oai(nullable, validator(minimum(value = "1"), maximum(value = "1000000")))]
    pub capacity: MaybeUndefined<i32>,
    /// Where it comes among the rooms (lowest first).
    #[oai(nullable, validator(minimum(value = "0"), maximum(value = "1000000")))]
    pub position: MaybeUndefined<i32>,
    /// Whether it is hidden; a room with sessions in the schedule in progress or the
    /// current one cannot be hidden.
    pub hidden: Option<bool>,
    /// When it is available; replaces the stored times (overlapping ones are merged).
    #[oai(validator(max_items = 200))]
    pub availabilities: Option<Vec<AvailabilityIn>>,
}

/// A new room, or a room's fields (PUT: omitted optional ones keep their values).
#[derive(Object)]
#[oai(rename = "TalkRoomWrite")]
pub struct RoomWrite {
    /// Name.
    pub name: I18nInput<100>,
    /// The others.
    #[oai(flatten)]
    pub optional: RoomOptional,
}

/// A partial change of a room.
#[derive(Object)]
#[oai(rename = "TalkRoomPatch")]
pub struct RoomPatch {
    /// Name.
    pub name: Option<I18nInput<100>>,
    /// The others.
    #[oai(flatten)]
    pub optional: RoomOptional,
}

impl RoomOptional {
    /// Sets the fields the body sends; gives the availabilities it sends, merged.
    fn apply(self, f: &mut Fields) -> Result<Option<Vec<Span>>, ApiError> {
        let stored = |text: Option<I18nInput<1000>>| text.map_or(Value::Null, |t| t.to_stored());
        if let Some(d) = patched(self.description) {
            f.description = stored(d);
        }
        if let Some(i) = patched(self.speaker_info) {
            f.speaker_info = stored(i);
        }
        if let Some(guid) = patched(self.guid) {
            f.guid = match guid.as_deref().map(str::trim).filter(|g| !g.is_empty()) {
                None => None,
                Some(g) => Some(
                    rooms::canonical_guid(g)
                        .ok_or_else(|| ApiError::field("guid", "Must be a valid UUID."))?,
                ),
            };
        }
        if let Some(capacity) = patched(self.capacity) {
            f.capacity = capacity;
        }
        if let Some(position) = patched(self.position) {
            f.position = position;
        }
        f.hidden = self.hidden.unwrap_or(f.hidden);
        self.availabilities
            .map(|times| merged(times.into_iter().map(|a| (a.start, a.end)).collect()))
            .transpose()
            .map_err(ApiError::from)
    }
}

fn may_read(ev: &TalkEvent) -> bool {
    rooms::may_read(ev)
}

fn may_write(ev: &TalkEvent) -> bool {
    rooms::may_write(ev)
}

async fn room_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may_read, may_write)
        .await?)
}

/// Writes a room (new when `id` is `None`) as `edit` changes its stored fields, with its
/// log entry, in one transaction; gives it as the API shows it.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    edit: impl FnOnce(&mut Fields) -> Result<Option<Vec<Span>>, ApiError>,
) -> Result<Shaped<RoomOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let mut f = match id {
        Some(id) => rooms::locked(&txn, ev, id).await?,
        None => Fields::default(),
    };
    let availabilities = edit(&mut f)?;
    let id = rooms::write(&txn, ev, id, f, availabilities).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Room operations.
pub struct RoomsApi;

#[OpenApi(tag = "TalkTag::Schedule")]
impl RoomsApi {
    /// List rooms
    ///
    /// 100 rooms per page. The public sees the rooms that are not hidden, once the event's
    /// agenda is visible.
    #[oai(path = "/api/events/:event/rooms", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_rooms(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the name contains.
        q: Query<Option<String>>,
        /// Only hidden rooms (`true`) or only the others (`false`).
        hidden: Query<Option<bool>>,
        /// Order: `position` (default), `id`, `name` or `capacity`; `-` before it for
        /// descending.
        o: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 100.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<RoomOut>>>> {
        let ev = room_event(&state, &talk, &event, Action::List).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let position = "COALESCE(r.position, 2147483647)";
        let mut listing = Listing::new("talk_rooms r", "r.id", "r.event_id", ev.event.id, position);
        listing.condition(&rooms::visible(&ev, "r"));
        if let Some(hidden) = hidden.0 {
            listing.filter("r.hidden = {}", hidden);
        }
        listing.search(q.as_deref(), &["r.name"]).order(
            o.as_deref(),
            &[
                ("id", "r.id"),
                ("name", "CAST(r.name AS TEXT)"),
                ("position", position),
                ("capacity", "COALESCE(r.capacity, 2147483647)"),
            ],
        );
        let request = PageRequest::sized(req, &state.public_url, page.0, page_size.0, PAGE_SIZE);
        let (window, keys) = listing.page(&state.db, &request).await?;
        let rooms = ctx.load(&KIND, &keys, &Expand::default()).await?;
        Ok(Json(
            window.page(rooms.into_iter().map(Shaped::new).collect()),
        ))
    }

    /// Show a room
    #[oai(path = "/api/events/:event/rooms/:id", method = "get")]
    async fn get_room(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The room's ID.
        id: Path<i64>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<RoomOut>>> {
        let ev = room_event(&state, &talk, &event, Action::Retrieve).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(
            ctx.one(&KIND, (*id).into(), &Expand::default()).await?,
        ))
    }

    /// Create a room
    #[oai(path = "/api/events/:event/rooms", method = "post")]
    async fn create_room(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<RoomWrite>,
    ) -> TalkResult<Created<Shaped<RoomOut>>> {
        let ev = room_event(&state, &talk, &event, Action::Create).await?;
        let RoomWrite { name, optional } = body.0;
        let room = save(&state, &ev, None, |f| {
            f.name = name.to_stored();
            optional.apply(f)
        })
        .await?;
        Ok(Created::Created(Json(room)))
    }

    /// Change a room
    ///
    /// Changes the fields the body sends.
    #[oai(path = "/api/events/:event/rooms/:id", method = "patch")]
    async fn patch_room(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The room's ID.
        id: Path<i64>,
        body: JsonBody<RoomPatch>,
    ) -> TalkResult<Json<Shaped<RoomOut>>> {
        let ev = room_event(&state, &talk, &event, Action::Update).await?;
        let RoomPatch { name, optional } = body.0;
        Ok(Json(
            save(&state, &ev, Some(*id), |f| {
                if let Some(name) = name {
                    f.name = name.to_stored();
                }
                optional.apply(f)
            })
            .await?,
        ))
    }

    /// Replace a room
    ///
    /// The body must send the name; fields it leaves out keep their values.
    #[oai(path = "/api/events/:event/rooms/:id", method = "put")]
    async fn put_room(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The room's ID.
        id: Path<i64>,
        body: JsonBody<RoomWrite>,
    ) -> TalkResult<Json<Shaped<RoomOut>>> {
        let ev = room_event(&state, &talk, &event, Action::Update).await?;
        let RoomWrite { name, optional } = body.0;
        Ok(Json(
            save(&state, &ev, Some(*id), |f| {
                f.name = name.to_stored();
                optional.apply(f)
            })
            .await?,
        ))
    }

    /// Delete a room
    ///
    /// A room any schedule has used (released or in progress) cannot be deleted (400).
    #[oai(path = "/api/events/:event/rooms/:id", method = "delete")]
    async fn delete_room(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The room's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = room_event(&state, &talk, &event, Action::Destroy).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        rooms::delete(&txn, &ev, *id).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A room's activity log
    ///
    /// Newest first; for the event's team only.
    #[oai(path = "/api/events/:event/rooms/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn room_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The room's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = room_event(&state, &talk, &event, Action::Retrieve).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        ctx.one::<RoomOut>(&KIND, (*id).into(), &Expand::default())
            .await?;
        Ok(Json(
            log_page(&state, req, &ev, rooms::OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
