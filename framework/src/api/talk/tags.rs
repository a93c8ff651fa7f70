//! Tags of submissions: `/api/events/{event}/tags/`. Organisers of the call for papers and
//! reviewers read them; organisers change them. `q` searches the tag, `o` orders by `id`
//! (default) or `tag`. The skeleton of the operations is [`super::simple`]'s.

use poem_openapi::Object;
use sea_orm::{DbErr, QueryResult};
use serde::Serialize;
use serde_json::{Value, json};

use super::context::Ctx;
use super::expand::Kind;
use super::shape::{I18nInput, TalkText};
use super::simple::{self, Resource, Writing};
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::catalog::is_color;
use crate::http::{ApiError, FieldErrors};

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

simple::forwarding_api! {
    /// Tag operations.
    TagsApi for Tags => TagOut, TagWrite, TagPatch;
    tag: "crate::api::talk::TalkTag::CallForPapers";
    lang: lang;
    paths:
        "/api/events/:event/tags",
        "/api/events/:event/tags/:id",
        "/api/events/:event/tags/:id/log";
    /// List tags
    list list_tags(
        q: "Text the tag contains.",
        o: "Order: `id` (default) or `tag`; `-` before it for descending.",
    );
    /// Show a tag
    get get_tag(id: "The tag's ID.");
    /// Create a tag
    create create_tag;
    /// Change a tag
    ///
    /// Changes the fields the body sends.
    patch patch_tag;
    /// Replace a tag
    ///
    /// The body must send the tag; fields it leaves out keep their values.
    put put_tag;
    /// Delete a tag
    ///
    /// Submissions tagged with it lose the tag.
    delete delete_tag;
    /// A tag's activity log
    ///
    /// Newest first.
    log tag_log;
}
