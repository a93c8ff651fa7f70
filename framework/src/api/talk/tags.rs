//! Tags of submissions: `/api/events/{event}/tags/`. Organisers of the call for papers and
//! reviewers read them; organisers change them. `q` searches the tag, `o` orders by `id`
//! (default) or `tag`. The skeleton of the operations is [`super::simple`]'s.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{DbErr, QueryResult};
use serde::Serialize;
use serde_json::{Value, json};

use super::TalkTag;
use super::context::Ctx;
use super::expand::Kind;
use super::log::LogEntry;
use super::shape::{I18nInput, Shaped, TalkText};
use super::simple::{self, ListQuery, Resource, Writing};
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::catalog::is_color;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, FieldErrors, JsonBody, NoContent, Page};
use crate::state::AppState;

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
    /// Colour, `#rgb` or `#rrggbb`.
    pub color: String,
    /// Whether the public may see it.
    pub is_public: bool,
}

/// Tags as objects: one query for any number.
pub static KIND: Kind = Kind {
    name: Tags::OBJECT,
    key: "id",
    endpoint: Tags::ENDPOINT,
    load: simple::load::<Tags>,
    fields: &[],
};

/// The fields of a tag a body may leave out: a new tag takes the defaults, PUT and PATCH
/// keep the values.
#[derive(Object)]
#[oai(rename = "TalkTagOptional")]
pub struct TagOptional {
    /// Description; empty unless given.
    pub description: Option<I18nInput<10000>>,
    /// Colour, `#rgb` or `#rrggbb`; `#000000` unless given.
    #[oai(validator(max_length = 7))]
    pub color: Option<String>,
    /// Whether the public may see it; false unless given.
    pub is_public: Option<bool>,
}

/// A new tag, or a tag's fields (PUT: omitted ones keep their values).
#[derive(Object)]
pub struct TagWrite {
    /// The tag, unique in the event.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub tag: String,
    /// The others.
    #[oai(flatten)]
    pub optional: TagOptional,
}

/// A partial change of a tag.
#[derive(Object)]
pub struct TagPatch {
    /// The tag, unique in the event.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub tag: Option<String>,
    /// The others.
    #[oai(flatten)]
    pub optional: TagOptional,
}

/// The stored fields of a tag.
#[derive(Serialize)]
pub struct TagFields {
    tag: String,
    description: Value,
    color: String,
    is_public: bool,
}

impl TagOptional {
    fn apply(self, f: &mut TagFields) {
        if let Some(d) = self.description {
            f.description = d.to_stored();
        }
        f.color = self.color.unwrap_or(std::mem::take(&mut f.color));
        f.is_public = self.is_public.unwrap_or(f.is_public);
    }
}

/// Tags as a [`Resource`].
pub struct Tags;

impl Resource for Tags {
    const ENDPOINT: &'static str = "tags";
    const OBJECT: &'static str = "tag";
    const TABLE: &'static str = "talk_tags";
    const COLUMNS: &'static [&'static str] = &["tag", "description", "color", "is_public"];
    const SEARCH: &'static [&'static str] = &["t.tag"];
    const ORDER: &'static [(&'static str, &'static str)] = &[("id", "t.id"), ("tag", "t.tag")];
    const KIND: &'static Kind = &KIND;

    type Out = TagOut;
    type Fields = TagFields;
    type Write = TagWrite;
    type Patch = TagPatch;

    /// Organisers of the call for papers and reviewers.
    fn may_read(ev: &TalkEvent) -> bool {
        ev.role.is_orga() || ev.role.is_reviewer()
    }

    /// Organisers of the call for papers.
    fn may_write(ev: &TalkEvent) -> bool {
        ev.role.is_orga()
    }

    fn defaults() -> TagFields {
        TagFields {
            tag: String::new(),
            description: Value::Null,
            color: "#000000".into(),
            is_public: false,
        }
    }

    fn write(body: TagWrite, f: &mut TagFields) {
        f.tag = body.tag;
        body.optional.apply(f);
    }

    fn patch(body: TagPatch, f: &mut TagFields) {
        if let Some(tag) = body.tag {
            f.tag = tag;
        }
        body.optional.apply(f);
    }

    fn from_row(row: &QueryResult) -> Result<TagFields, DbErr> {
        Ok(TagFields {
            tag: row.try_get("", "tag")?,
            description: row
                .try_get::<Option<Value>>("", "description")?
                .unwrap_or(Value::Null),
            color: row.try_get("", "color")?,
            is_public: row.try_get("", "is_public")?,
        })
    }

    fn values(f: TagFields) -> Vec<sea_orm::Value> {
        vec![
            f.tag.into(),
            f.description.into(),
            f.color.into(),
            f.is_public.into(),
        ]
    }

    fn shown(ctx: &Ctx<'_>, id: i64, f: TagFields) -> Value {
        json!({
            "id": id,
            "tag": f.tag,
            "description": ctx.text(&f.description),
            "color": f.color,
            "is_public": f.is_public,
        })
    }

    /// A valid colour, and a tag no other tag of the event has.
    async fn check(w: &Writing<'_>, id: Option<i64>, f: &TagFields) -> Result<(), ApiError> {
        if !is_color(&f.color) {
            return Err(ApiError::field(
                "color",
                "Enter a colour as #rgb or #rrggbb.",
            ));
        }
        let taken = w
            .ctx
            .rows(
                "SELECT id FROM talk_tags WHERE event_id = $1 AND tag = $2 AND id <> $3",
                vec![
                    w.ev.event.id.into(),
                    f.tag.clone().into(),
                    id.unwrap_or(0).into(),
                ],
            )
            .await?;
        if taken.is_empty() {
            Ok(())
        } else {
            Err(Self::duplicate())
        }
    }

    fn duplicate() -> ApiError {
        ApiError::fields(FieldErrors::default().add("tag", "A tag with this name already exists."))
    }
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
        let query = ListQuery {
            q: q.0,
            o: o.0,
            lang: lang.0,
            page: page.0,
            page_size: page_size.0,
        };
        Ok(Json(
            simple::list::<Tags>(&state, &talk, req, &event, query).await?,
        ))
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
        Ok(Json(
            simple::get::<Tags>(&state, &talk, &event, *id, lang.as_deref()).await?,
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
        Ok(Created::Created(Json(
            simple::create::<Tags>(&state, &talk, &event, body.0).await?,
        )))
    }

    /// Change a tag
    ///
    /// Changes the fields the body sends.
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
        Ok(Json(
            simple::change::<Tags>(&state, &talk, &event, *id, body.0).await?,
        ))
    }

    /// Replace a tag
    ///
    /// The body must send the tag; fields it leaves out keep their values.
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
        Ok(Json(
            simple::replace::<Tags>(&state, &talk, &event, *id, body.0).await?,
        ))
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
        simple::delete::<Tags>(&state, &talk, &event, *id).await?;
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
        Ok(Json(
            simple::log::<Tags>(&state, &talk, req, &event, *id, page.0, page_size.0).await?,
        ))
    }
}
