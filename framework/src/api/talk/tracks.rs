//! Tracks of the call for papers: `/api/events/{event}/tracks/`. Read like session types
//! (organisers of the call for papers and reviewers; anyone who sees the event once its
//! agenda is public); organisers who may change the event's settings change them. `q`
//! searches the name, `o` orders by `id` (default) or `name`. A track used by a submission
//! cannot be deleted.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, event_locales, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Shaped, TalkText};
use super::submission_types::may_read_cfp_settings;
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, I18nString, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "tracks";
const OBJECT: &str = "track";

/// A track.
#[derive(Object)]
#[oai(rename = "TalkTrack")]
pub struct TrackOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: TalkText,
    /// Description.
    pub description: TalkText,
    /// Colour, `#rgb` or `#rrggbb`.
    pub color: String,
    /// Where it is shown among the tracks (lowest first).
    pub position: i32,
    /// Offered only to submitters with a matching access code.
    pub requires_access_code: bool,
    /// Its sessions require attendee signup unless they say otherwise.
    pub attendee_signup_required: bool,
}

/// Tracks as objects: one query for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    load,
    fields: &[],
};

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT id, name, description, color, position, requires_access_code, \
             attendee_signup_required FROM talk_tracks WHERE id IN {ids} AND event_id = ${}",
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                let description: Option<Value> = r.try_get("", "description")?;
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "name": ctx.text(&r.try_get::<Value>("", "name")?),
                    "description": ctx.text(&description.unwrap_or(Value::Null)),
                    "color": r.try_get::<String>("", "color")?,
                    "position": r.try_get::<i32>("", "position")?,
                    "requires_access_code": r.try_get::<bool>("", "requires_access_code")?,
                    "attendee_signup_required": r.try_get::<bool>("", "attendee_signup_required")?,
                }))
            })
            .collect()
    })
}

/// A new track, or all fields of one (PUT).
#[derive(Object)]
#[oai(rename = "TalkTrackWrite")]
pub struct TrackWrite {
    /// Name, unique in the event.
    #[oai(validator(max_length = 200))]
    pub name: I18nString,
    /// Description.
    #[oai(validator(max_length = 100000))]
    pub description: Option<I18nString>,
    /// Colour, `#rgb` or `#rrggbb`.
    #[oai(validator(max_length = 7))]
    pub color: String,
    /// Where it is shown among the tracks (lowest first); 0 unless given.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub position: Option<i32>,
    /// Offered only to submitters with a matching access code.
    #[oai(default)]
    pub requires_access_code: bool,
    /// Its sessions require attendee signup unless they say otherwise.
    #[oai(default)]
    pub attendee_signup_required: bool,
}

/// A partial change of a track.
#[derive(Object)]
#[oai(rename = "TalkTrackPatch")]
pub struct TrackPatch {
    /// Name, unique in the event.
    #[oai(validator(max_length = 200))]
    pub name: Option<I18nString>,
    /// Description.
    #[oai(validator(max_length = 100000))]
    pub description: Option<I18nString>,
    /// Colour, `#rgb` or `#rrggbb`.
    #[oai(validator(max_length = 7))]
    pub color: Option<String>,
    /// Where it is shown among the tracks (lowest first); null for 0.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub position: MaybeUndefined<i32>,
    /// Offered only to submitters with a matching access code.
    pub requires_access_code: Option<bool>,
    /// Its sessions require attendee signup unless they say otherwise.
    pub attendee_signup_required: Option<bool>,
}

async fn track_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    talk.event_for(
        &state.db,
        slug,
        ENDPOINT,
        action,
        may_read_cfp_settings,
        |ev| ev.role.permissions.has(Permission::ChangeEventSettings),
    )
    .await
}

/// The stored fields of a track.
struct Fields {
    name: Value,
    description: Value,
    color: String,
    position: i32,
    requires_access_code: bool,
    attendee_signup_required: bool,
}

impl Fields {
    fn from_write(body: TrackWrite) -> Self {
        Self {
            name: body.name.to_stored(),
            description: body.description.map_or(Value::Null, |d| d.to_stored()),
            color: body.color,
            position: body.position.unwrap_or(0),
            requires_access_code: body.requires_access_code,
            attendee_signup_required: body.attendee_signup_required,
        }
    }
}

async fn stored(state: &AppState, ev: &TalkEvent, id: i64) -> Result<Fields, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let row = ctx
        .rows(
            "SELECT name, description, color, position, requires_access_code, \
             attendee_signup_required FROM talk_tracks WHERE id = $1 AND event_id = $2",
            vec![id.into(), ev.event.id.into()],
        )
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(Fields {
        name: row.try_get("", "name")?,
        description: row
            .try_get::<Option<Value>>("", "description")?
            .unwrap_or(Value::Null),
        color: row.try_get("", "color")?,
        position: row.try_get("", "position")?,
        requires_access_code: row.try_get("", "requires_access_code")?,
        attendee_signup_required: row.try_get("", "attendee_signup_required")?,
    })
}

/// Whether `text` is a colour as `#rgb` or `#rrggbb`.
fn is_color(text: &str) -> bool {
    text.strip_prefix('#')
        .is_some_and(|hex| matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The name as shown in the event's main language, for telling names apart.
fn shown(name: &Value, locale: &str) -> String {
    I18nString::from_stored(name).localize(locale)
}

/// Writes a track (new when `id` is `None`) and its log entry in one transaction, and gives
/// it as the API shows it; a name another track of the event shows already is 400.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    f: Fields,
) -> Result<Shaped<TrackOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let locale = event_locales(state, &ev.event)
        .await?
        .into_iter()
        .next()
        .unwrap_or_else(|| "en".into());
    let name = shown(&f.name, &locale);
    if name.trim().is_empty() {
        return Err(ApiError::field("name", "This field may not be blank."));
    }
    if !is_color(&f.color) {
        return Err(ApiError::field(
            "color",
            "Enter a colour as #rgb or #rrggbb.",
        ));
    }
    let txn = crate::db::begin_write(&state.db).await?;
    let others = ctx
        .within(&txn)
        .rows(
            "SELECT name FROM talk_tracks WHERE event_id = $1 AND id <> $2",
            vec![ev.event.id.into(), id.unwrap_or(0).into()],
        )
        .await?;
    for other in &others {
        if shown(&other.try_get::<Value>("", "name")?, &locale) == name {
            return Err(ApiError::field(
                "name",
                "You already have a track by this name!",
            ));
        }
    }
    let data = json!({
        "name": f.name,
        "description": f.description,
        "color": f.color,
        "position": f.position,
        "requires_access_code": f.requires_access_code,
        "attendee_signup_required": f.attendee_signup_required,
    });
    let values = vec![
        ev.event.id.into(),
        f.name.into(),
        f.description.into(),
        f.color.into(),
        f.position.into(),
        f.requires_access_code.into(),
        f.attendee_signup_required.into(),
    ];
    let (id, action) = match id {
        Some(id) => {
            let mut values = values;
            values.push(id.into());
            crate::db::execute(
                &txn,
                "UPDATE talk_tracks SET name = $2, description = $3, color = $4, position = $5, \
                 requires_access_code = $6, attendee_signup_required = $7 \
                 WHERE event_id = $1 AND id = $8",
                values,
            )
            .await?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO talk_tracks (event_id, name, description, color, position, \
                 requires_access_code, attendee_signup_required) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                values,
            )
            .await?,
            "create",
        ),
    };
    talk_log::write(&txn, Change::new(ev, OBJECT, id, action, data)).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Track operations.
pub struct TracksApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl TracksApi {
    /// List tracks
    #[oai(path = "/api/events/:event/tracks", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_tracks(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the name contains.
        q: Query<Option<String>>,
        /// Order: `id` (default) or `name`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<TrackOut>>>> {
        let ev = track_event(&state, &talk, &event, Action::List).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new("talk_tracks t", "t.id", "t.event_id", ev.event.id, "t.id");
        listing.search(q.as_deref(), &["t.name"]).order(
            o.as_deref(),
            &[("id", "t.id"), ("name", "CAST(t.name AS TEXT)")],
        );
        let page = listing
            .fetch(&ctx, &KIND, req, page.0, page_size.0, &Expand::default())
            .await?;
        Ok(Json(page))
    }

    /// Show a track
    #[oai(path = "/api/events/:event/tracks/:id", method = "get")]
    async fn get_track(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The track's ID.
        id: Path<i64>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<TrackOut>>> {
        let ev = track_event(&state, &talk, &event, Action::Retrieve).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(
            ctx.one(&KIND, (*id).into(), &Expand::default()).await?,
        ))
    }

    /// Create a track
    #[oai(path = "/api/events/:event/tracks", method = "post")]
    async fn create_track(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<TrackWrite>,
    ) -> TalkResult<Created<Shaped<TrackOut>>> {
        let ev = track_event(&state, &talk, &event, Action::Create).await?;
        let fields = Fields::from_write(body.0);
        Ok(Created::Created(Json(
            save(&state, &ev, None, fields).await?,
        )))
    }

    /// Change a track
    ///
    /// PUT replaces every field; PATCH changes the fields it sends.
    #[oai(path = "/api/events/:event/tracks/:id", method = "patch")]
    async fn patch_track(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The track's ID.
        id: Path<i64>,
        body: JsonBody<TrackPatch>,
    ) -> TalkResult<Json<Shaped<TrackOut>>> {
        let ev = track_event(&state, &talk, &event, Action::Update).await?;
        let mut f = stored(&state, &ev, *id).await?;
        let body = body.0;
        if let Some(name) = body.name {
            f.name = name.to_stored();
        }
        if let Some(d) = body.description {
            f.description = d.to_stored();
        }
        f.color = body.color.unwrap_or(f.color);
        if let Some(position) = patched(body.position) {
            f.position = position.unwrap_or(0);
        }
        f.requires_access_code = body.requires_access_code.unwrap_or(f.requires_access_code);
        f.attendee_signup_required = body
            .attendee_signup_required
            .unwrap_or(f.attendee_signup_required);
        Ok(Json(save(&state, &ev, Some(*id), f).await?))
    }

    /// Replace a track
    #[oai(path = "/api/events/:event/tracks/:id", method = "put")]
    async fn put_track(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The track's ID.
        id: Path<i64>,
        body: JsonBody<TrackWrite>,
    ) -> TalkResult<Json<Shaped<TrackOut>>> {
        let ev = track_event(&state, &talk, &event, Action::Update).await?;
        stored(&state, &ev, *id).await?;
        let fields = Fields::from_write(body.0);
        Ok(Json(save(&state, &ev, Some(*id), fields).await?))
    }

    /// Delete a track
    ///
    /// A track used by a submission cannot be deleted (400); questions limited to it lose
    /// the limit.
    #[oai(path = "/api/events/:event/tracks/:id", method = "delete")]
    async fn delete_track(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The track's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = track_event(&state, &talk, &event, Action::Destroy).await?;
        let f = stored(&state, &ev, *id).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let used = ctx
            .within(&txn)
            .rows(
                "SELECT id FROM talk_submissions WHERE track_id = $1 LIMIT 1",
                vec![(*id).into()],
            )
            .await?;
        if !used.is_empty() {
            return Err(ApiError::bad_request(
                "This track is in use in a proposal and cannot be deleted.",
            )
            .into());
        }
        crate::db::execute(
            &txn,
            "DELETE FROM talk_tracks WHERE id = $1",
            [(*id).into()],
        )
        .await?;
        talk_log::write(
            &txn,
            Change::new(&ev, OBJECT, *id, "delete", json!({"name": f.name})),
        )
        .await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A track's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/tracks/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn track_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The track's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = track_event(&state, &talk, &event, Action::Retrieve).await?;
        stored(&state, &ev, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
