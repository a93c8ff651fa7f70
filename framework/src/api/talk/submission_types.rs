//! Session types of the call for papers: `/api/events/{event}/submission-types/`.
//! Organisers of the call for papers and reviewers read them (anyone who sees the event once
//! its agenda is public); organisers who may change the event's settings change them. `q`
//! searches the name, `o` orders by `id` (default), `name` or `default_duration`. A type
//! used by a submission cannot be deleted. The skeleton of the operations is
//! [`super::simple`]'s.

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
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
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, agenda_visible};
use crate::domain::talk::catalog::{self, shown_name};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

/// A session type.
#[derive(Object)]
#[oai(rename = "TalkSubmissionType")]
pub struct SubmissionTypeOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: TalkText,
    /// Default length of its sessions, in minutes.
    pub default_duration: i32,
    /// A deadline of its own, instead of the call for papers' one.
    #[oai(nullable)]
    pub deadline: Option<DateTime<Utc>>,
    /// Offered only to submitters with a matching access code.
    pub requires_access_code: bool,
    /// Its sessions require attendee signup unless they say otherwise.
    pub attendee_signup_required: bool,
}

/// Session types as objects: one query for any number.
pub static KIND: Kind = Kind {
    name: SubmissionTypes::OBJECT,
    key: "id",
    endpoint: SubmissionTypes::ENDPOINT,
    load: simple::load::<SubmissionTypes>,
    fields: &[],
};

/// The fields of a session type a body may leave out: a new type takes the defaults, PUT
/// and PATCH keep the values.
#[derive(Object)]
#[oai(rename = "TalkSubmissionTypeOptional")]
pub struct SubmissionTypeOptional {
    /// Default length of its sessions, in minutes; 30 unless given.
    #[oai(validator(minimum(value = "0")))]
    pub default_duration: Option<i32>,
    /// A deadline of its own; none unless given, null for the call for papers' one.
    #[oai(nullable)]
    pub deadline: MaybeUndefined<DateTime<Utc>>,
    /// Offered only to submitters with a matching access code; false unless given.
    pub requires_access_code: Option<bool>,
    /// Its sessions require attendee signup unless they say otherwise; false unless given.
    pub attendee_signup_required: Option<bool>,
}

/// A new session type, or a type's fields (PUT: omitted optional ones keep their values).
#[derive(Object)]
#[oai(rename = "TalkSubmissionTypeWrite")]
pub struct SubmissionTypeWrite {
    /// Name, unique in the event.
    pub name: I18nInput<100>,
    /// The others.
    #[oai(flatten)]
    pub optional: SubmissionTypeOptional,
}

/// A partial change of a session type.
#[derive(Object)]
#[oai(rename = "TalkSubmissionTypePatch")]
pub struct SubmissionTypePatch {
    /// Name, unique in the event.
    pub name: Option<I18nInput<100>>,
    /// The others.
    #[oai(flatten)]
    pub optional: SubmissionTypeOptional,
}

/// The stored fields of a session type.
#[derive(Serialize)]
pub struct SubmissionTypeFields {
    name: Value,
    default_duration: i32,
    deadline: Option<DateTime<Utc>>,
    requires_access_code: bool,
    attendee_signup_required: bool,
}

impl SubmissionTypeOptional {
    fn apply(self, f: &mut SubmissionTypeFields) {
        f.default_duration = self.default_duration.unwrap_or(f.default_duration);
        if let Some(deadline) = patched(self.deadline) {
            f.deadline = deadline;
        }
        f.requires_access_code = self.requires_access_code.unwrap_or(f.requires_access_code);
        f.attendee_signup_required = self
            .attendee_signup_required
            .unwrap_or(f.attendee_signup_required);
    }
}

/// Who may read session types and tracks: organisers of the call for papers, reviewers
/// and those who may change the event's settings; anyone who sees the event once its
/// agenda is public.
pub(super) fn may_read_cfp_settings(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
        || ev.role.is_reviewer()
        || ev.role.permissions.has(Permission::ChangeEventSettings)
        || agenda_visible(ev)
}

/// Session types as a [`Resource`].
pub struct SubmissionTypes;

impl Resource for SubmissionTypes {
    const ENDPOINT: &'static str = "submission-types";
    const OBJECT: &'static str = "submission_type";
    const TABLE: &'static str = "talk_submission_types";
    const COLUMNS: &'static [&'static str] = &[
        "name",
        "default_duration",
        "deadline",
        "requires_access_code",
        "attendee_signup_required",
    ];
    const SEARCH: &'static [&'static str] = &["t.name"];
    const ORDER: &'static [(&'static str, &'static str)] = &[
        ("id", "t.id"),
        ("name", "CAST(t.name AS TEXT)"),
        ("default_duration", "t.default_duration"),
    ];
    const KIND: &'static Kind = &KIND;

    type Out = SubmissionTypeOut;
    type Fields = SubmissionTypeFields;
    type Write = SubmissionTypeWrite;
    type Patch = SubmissionTypePatch;

    fn may_read(ev: &TalkEvent) -> bool {
        may_read_cfp_settings(ev)
    }

    /// Those who may change the event's settings.
    fn may_write(ev: &TalkEvent) -> bool {
        ev.role.permissions.has(Permission::ChangeEventSettings)
    }

    fn defaults() -> SubmissionTypeFields {
        SubmissionTypeFields {
            name: Value::Null,
            default_duration: 30,
            deadline: None,
            requires_access_code: false,
            attendee_signup_required: false,
        }
    }

    fn write(body: SubmissionTypeWrite, f: &mut SubmissionTypeFields) {
        f.name = body.name.to_stored();
        body.optional.apply(f);
    }

    fn patch(body: SubmissionTypePatch, f: &mut SubmissionTypeFields) {
        if let Some(name) = body.name {
            f.name = name.to_stored();
        }
        body.optional.apply(f);
    }

    fn from_row(row: &QueryResult) -> Result<SubmissionTypeFields, DbErr> {
        Ok(SubmissionTypeFields {
            name: row.try_get("", "name")?,
            default_duration: row.try_get("", "default_duration")?,
            deadline: row.try_get("", "deadline")?,
            requires_access_code: row.try_get("", "requires_access_code")?,
            attendee_signup_required: row.try_get("", "attendee_signup_required")?,
        })
    }

    fn values(f: SubmissionTypeFields) -> Vec<sea_orm::Value> {
        vec![
            f.name.into(),
            f.default_duration.into(),
            f.deadline.into(),
            f.requires_access_code.into(),
            f.attendee_signup_required.into(),
        ]
    }

    fn shown(ctx: &Ctx<'_>, id: i64, f: SubmissionTypeFields) -> Value {
        json!({
            "id": id,
            "name": ctx.text(&f.name),
            "default_duration": f.default_duration,
            "deadline": f.deadline,
            "requires_access_code": f.requires_access_code,
            "attendee_signup_required": f.attendee_signup_required,
        })
    }

    /// A name, one no other type of the event shows in the event's main language.
    async fn check(
        w: &Writing<'_>,
        id: Option<i64>,
        f: &SubmissionTypeFields,
    ) -> Result<(), ApiError> {
        let locale = w.main_locale().await?;
        if shown_name(&f.name, &locale).trim().is_empty() {
            return Err(ApiError::field("name", "This field may not be blank."));
        }
        if catalog::name_taken(w.txn, Self::TABLE, w.ev.event.id, id, &f.name, &locale).await? {
            return Err(ApiError::field(
                "name",
                "You already have a session type by this name!",
            ));
        }
        Ok(())
    }

    /// Not while a submission uses it.
    async fn check_deletion(
        w: &Writing<'_>,
        id: i64,
        _: &SubmissionTypeFields,
    ) -> Result<(), ApiError> {
        Ok(catalog::check_submission_type_deletion(w.txn, id).await?)
    }
}

/// Session type operations.
pub struct SubmissionTypesApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl SubmissionTypesApi {
    /// List session types
    #[oai(path = "/api/events/:event/submission-types", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_submission_types(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the name contains.
        q: Query<Option<String>>,
        /// Order: `id` (default), `name` or `default_duration`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<SubmissionTypeOut>>>> {
        let query = ListQuery {
            q: q.0,
            o: o.0,
            lang: lang.0,
            page: page.0,
            page_size: page_size.0,
        };
        Ok(Json(
            simple::list::<SubmissionTypes>(&state, &talk, req, &event, query).await?,
        ))
    }

    /// Show a session type
    #[oai(path = "/api/events/:event/submission-types/:id", method = "get")]
    async fn get_submission_type(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The session type's ID.
        id: Path<i64>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SubmissionTypeOut>>> {
        Ok(Json(
            simple::get::<SubmissionTypes>(&state, &talk, &event, *id, lang.as_deref()).await?,
        ))
    }

    /// Create a session type
    #[oai(path = "/api/events/:event/submission-types", method = "post")]
    async fn create_submission_type(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<SubmissionTypeWrite>,
    ) -> TalkResult<Created<Shaped<SubmissionTypeOut>>> {
        Ok(Created::Created(Json(
            simple::create::<SubmissionTypes>(&state, &talk, &event, body.0).await?,
        )))
    }

    /// Change a session type
    ///
    /// Changes the fields the body sends.
    #[oai(path = "/api/events/:event/submission-types/:id", method = "patch")]
    async fn patch_submission_type(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The session type's ID.
        id: Path<i64>,
        body: JsonBody<SubmissionTypePatch>,
    ) -> TalkResult<Json<Shaped<SubmissionTypeOut>>> {
        Ok(Json(
            simple::change::<SubmissionTypes>(&state, &talk, &event, *id, body.0).await?,
        ))
    }

    /// Replace a session type
    ///
    /// The body must send the name; fields it leaves out keep their values.
    #[oai(path = "/api/events/:event/submission-types/:id", method = "put")]
    async fn put_submission_type(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The session type's ID.
        id: Path<i64>,
        body: JsonBody<SubmissionTypeWrite>,
    ) -> TalkResult<Json<Shaped<SubmissionTypeOut>>> {
        Ok(Json(
            simple::replace::<SubmissionTypes>(&state, &talk, &event, *id, body.0).await?,
        ))
    }

    /// Delete a session type
    ///
    /// A type used by a submission cannot be deleted (400).
    #[oai(path = "/api/events/:event/submission-types/:id", method = "delete")]
    async fn delete_submission_type(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The session type's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        simple::delete::<SubmissionTypes>(&state, &talk, &event, *id).await?;
        Ok(NoContent::NoContent)
    }

    /// A session type's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/submission-types/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn submission_type_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The session type's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        Ok(Json(
            simple::log::<SubmissionTypes>(&state, &talk, req, &event, *id, page.0, page_size.0)
                .await?,
        ))
    }
}
