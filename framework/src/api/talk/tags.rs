//! Tags of submissions: `/api/events/{event}/tags/`. Organisers of the call for papers and
//! reviewers read them; organisers change them. `q` searches the tag, `o` orders by `id`
//! (default) or `tag`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Shaped, TalkText};
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, FieldErrors, I18nString, JsonBody, NoContent, Page};
use crate::state::AppState;

const ENDPOINT: &str = "tags";
const OBJECT: &str = "tag";

/// A tag.
#[derive(Object)]
#[oai(rename = "TalkTag")]
pub struct TagOut {
    /// Internal ID.
    pub id: i64,
    /// The tag.
    pub tag: String,
    /// Description.
    pub description: TalkText,
    /// Colour, `#rrggbb`.
    pub color: String,
    /// Whether the public may see it.
    pub is_public: bool,
}

/// Tags as objects: one query for any number.
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
            "SELECT id, tag, description, color, is_public FROM talk_tags \
             WHERE id IN {ids} AND event_id = ${}",
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                let description: Option<Value> = r.try_get("", "description")?;
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "tag": r.try_get::<String>("", "tag")?,
                    "description": ctx.text(&description.unwrap_or(Value::Null)),
                    "color": r.try_get::<String>("", "color")?,
                    "is_public": r.try_get::<bool>("", "is_public")?,
                }))
            })
            .collect()
    })
}

/// A new tag, or all fields of one (PUT).
#[derive(Object)]
pub struct TagWrite {
    /// The tag, unique in the event.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub tag: String,
    /// Description.
    #[oai(validator(max_length = 10000))]
    pub description: Option<I18nString>,
    /// Colour, `#rrggbb`.
    #[oai(validator(max_length = 7, pattern = "^#[0-9a-fA-F]{6}$"))]
    pub color: Option<String>,
    /// Whether the public may see it.
    #[oai(default)]
    pub is_public: bool,
}

/// A partial change of a tag.
#[derive(Object)]
pub struct TagPatch {
    /// The tag, unique in the event.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub tag: Option<String>,
    /// Description.
    #[oai(validator(max_length = 10000))]
    pub description: Option<I18nString>,
    /// Colour, `#rrggbb`.
    #[oai(validator(max_length = 7, pattern = "^#[0-9a-fA-F]{6}$"))]
    pub color: Option<String>,
    /// Whether the public may see it.
    pub is_public: Option<bool>,
}

/// Who may read tags: organisers of the call for papers and reviewers.
fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer()
}

async fn tag_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    talk.event_for(&state.db, slug, ENDPOINT, action, may_read, |ev| {
        ev.role.is_orga()
    })
    .await
}

/// The stored fields of a tag.
struct Fields {
    tag: String,
    description: Value,
    color: String,
    is_public: bool,
}

async fn stored(state: &AppState, ev: &TalkEvent, id: i64) -> Result<Fields, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let row = ctx
        .rows(
            "SELECT tag, description, color, is_public FROM talk_tags \
             WHERE id = $1 AND event_id = $2",
            vec![id.into(), ev.event.id.into()],
        )
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(Fields {
        tag: row.try_get("", "tag")?,
        description: row
            .try_get::<Option<Value>>("", "description")?
            .unwrap_or(Value::Null),
        color: row.try_get("", "color")?,
        is_public: row.try_get("", "is_public")?,
    })
}

/// Writes a tag (new when `id` is `None`) and its log entry in one transaction, and gives
/// it as the API shows it; a tag already used in the event is 400.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    f: Fields,
) -> Result<Shaped<TagOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let taken = ctx
        .within(&txn)
        .rows(
            "SELECT id FROM talk_tags WHERE event_id = $1 AND tag = $2 AND id <> $3",
            vec![
                ev.event.id.into(),
                f.tag.clone().into(),
                id.unwrap_or(0).into(),
            ],
        )
        .await?;
    if !taken.is_empty() {
        return Err(ApiError::fields(
            FieldErrors::default().add("tag", "A tag with this name already exists."),
        ));
    }
    let data = json!({
        "tag": f.tag, "description": f.description, "color": f.color, "is_public": f.is_public,
    });
    let values = [
        ev.event.id.into(),
        f.tag.into(),
        f.description.into(),
        f.color.into(),
        f.is_public.into(),
    ];
    let (id, action) = match id {
        Some(id) => {
            let mut values = values.to_vec();
            values.push(id.into());
            crate::db::execute(
                &txn,
                "UPDATE talk_tags SET tag = $2, description = $3, color = $4, is_public = $5 \
                 WHERE event_id = $1 AND id = $6",
                values,
            )
            .await?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO talk_tags (event_id, tag, description, color, is_public) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
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

/// Tag operations.
pub struct TagsApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl TagsApi {
    /// List tags
    #[oai(path = "/api/events/:event/tags", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_tags(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the tag contains.
        q: Query<Option<String>>,
        /// Order: `id` (default) or `tag`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<TagOut>>>> {
        let ev = tag_event(&state, &talk, &event, Action::List).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new("talk_tags t", "t.id", "t.event_id", ev.event.id, "t.id");
        listing
            .search(q.as_deref(), &["t.tag"])
            .order(o.as_deref(), &[("id", "t.id"), ("tag", "t.tag")]);
        let page = listing
            .fetch(&ctx, &KIND, req, page.0, page_size.0, &Expand::default())
            .await?;
        Ok(Json(page))
    }

    /// Show a tag
    #[oai(path = "/api/events/:event/tags/:id", method = "get")]
    async fn get_tag(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The tag's ID.
        id: Path<i64>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<TagOut>>> {
        let ev = tag_event(&state, &talk, &event, Action::Retrieve).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(
            ctx.one(&KIND, (*id).into(), &Expand::default()).await?,
        ))
    }

    /// Create a tag
    #[oai(path = "/api/events/:event/tags", method = "post")]
    async fn create_tag(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<TagWrite>,
    ) -> TalkResult<Created<Shaped<TagOut>>> {
        let ev = tag_event(&state, &talk, &event, Action::Create).await?;
        let body = body.0;
        let fields = Fields {
            tag: body.tag,
            description: body.description.map_or(Value::Null, |d| d.to_stored()),
            color: body.color.unwrap_or_else(|| "#000000".into()),
            is_public: body.is_public,
        };
        Ok(Created::Created(Json(
            save(&state, &ev, None, fields).await?,
        )))
    }

    /// Change a tag
    ///
    /// PUT replaces every field; PATCH changes the fields it sends.
    #[oai(path = "/api/events/:event/tags/:id", method = "patch")]
    async fn patch_tag(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The tag's ID.
        id: Path<i64>,
        body: JsonBody<TagPatch>,
    ) -> TalkResult<Json<Shaped<TagOut>>> {
        let ev = tag_event(&state, &talk, &event, Action::Update).await?;
        let mut f = stored(&state, &ev, *id).await?;
        let body = body.0;
        f.tag = body.tag.unwrap_or(f.tag);
        if let Some(d) = body.description {
            f.description = d.to_stored();
        }
        f.color = body.color.unwrap_or(f.color);
        f.is_public = body.is_public.unwrap_or(f.is_public);
        Ok(Json(save(&state, &ev, Some(*id), f).await?))
    }

    /// Replace a tag
    #[oai(path = "/api/events/:event/tags/:id", method = "put")]
    async fn put_tag(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The tag's ID.
        id: Path<i64>,
        body: JsonBody<TagWrite>,
    ) -> TalkResult<Json<Shaped<TagOut>>> {
        let ev = tag_event(&state, &talk, &event, Action::Update).await?;
        stored(&state, &ev, *id).await?;
        let body = body.0;
        let f = Fields {
            tag: body.tag,
            description: body.description.map_or(Value::Null, |d| d.to_stored()),
            color: body.color.unwrap_or_else(|| "#000000".into()),
            is_public: body.is_public,
        };
        Ok(Json(save(&state, &ev, Some(*id), f).await?))
    }

    /// Delete a tag
    ///
    /// Submissions tagged with it lose the tag.
    #[oai(path = "/api/events/:event/tags/:id", method = "delete")]
    async fn delete_tag(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The tag's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = tag_event(&state, &talk, &event, Action::Destroy).await?;
        let f = stored(&state, &ev, *id).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        crate::db::execute(&txn, "DELETE FROM talk_tags WHERE id = $1", [(*id).into()]).await?;
        let data = json!({"tag": f.tag});
        talk_log::write(&txn, Change::new(&ev, OBJECT, *id, "delete", data)).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A tag's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/tags/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn tag_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The tag's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = tag_event(&state, &talk, &event, Action::Retrieve).await?;
        stored(&state, &ev, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
