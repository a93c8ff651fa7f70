//! Session types of the call for papers: `/api/events/{event}/submission-types/`.
//! Organisers of the call for papers and reviewers read them (anyone who sees the event once
//! its agenda is public); organisers who may change the event's settings change them. `q`
//! searches the name, `o` orders by `id` (default), `name` or `default_duration`. A type
//! used by a submission cannot be deleted.

use chrono::{DateTime, Utc};
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
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, agenda_visible, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::tokens::Action;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, I18nString, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "submission-types";
const OBJECT: &str = "submission_type";

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
            "SELECT id, name, default_duration, deadline, requires_access_code, \
             attendee_signup_required FROM talk_submission_types \
             WHERE id IN {ids} AND event_id = ${}",
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                let deadline: Option<DateTime<Utc>> = r.try_get("", "deadline")?;
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "name": ctx.text(&r.try_get::<Value>("", "name")?),
                    "default_duration": r.try_get::<i32>("", "default_duration")?,
                    "deadline": deadline,
                    "requires_access_code": r.try_get::<bool>("", "requires_access_code")?,
                    "attendee_signup_required": r.try_get::<bool>("", "attendee_signup_required")?,
                }))
            })
            .collect()
    })
}

/// A new session type, or all fields of one (PUT).
#[derive(Object)]
#[oai(rename = "TalkSubmissionTypeWrite")]
pub struct SubmissionTypeWrite {
    /// Name, unique in the event.
    #[oai(validator(max_length = 100))]
    pub name: I18nString,
    /// Default length of its sessions, in minutes (30 unless given).
    #[oai(validator(minimum(value = "0")))]
    pub default_duration: Option<i32>,
    /// A deadline of its own, instead of the call for papers' one.
    #[oai(nullable)]
    pub deadline: Option<DateTime<Utc>>,
    /// Offered only to submitters with a matching access code.
    #[oai(default)]
    pub requires_access_code: bool,
    /// Its sessions require attendee signup unless they say otherwise.
    #[oai(default)]
    pub attendee_signup_required: bool,
}

/// A partial change of a session type.
#[derive(Object)]
#[oai(rename = "TalkSubmissionTypePatch")]
pub struct SubmissionTypePatch {
    /// Name, unique in the event.
    #[oai(validator(max_length = 100))]
    pub name: Option<I18nString>,
    /// Default length of its sessions, in minutes.
    #[oai(validator(minimum(value = "0")))]
    pub default_duration: Option<i32>,
    /// A deadline of its own; null for the call for papers' one.
    #[oai(nullable)]
    pub deadline: MaybeUndefined<DateTime<Utc>>,
    /// Offered only to submitters with a matching access code.
    pub requires_access_code: Option<bool>,
    /// Its sessions require attendee signup unless they say otherwise.
    pub attendee_signup_required: Option<bool>,
}

/// Who may read session types: organisers of the call for papers, reviewers and those who
/// may change the event's settings; anyone who sees the event once its agenda is public.
pub(super) fn may_read_cfp_settings(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
        || ev.role.is_reviewer()
        || ev.role.permissions.has(Permission::ChangeEventSettings)
        || agenda_visible(ev)
}

async fn type_event(
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

/// The stored fields of a session type.
struct Fields {
    name: Value,
    default_duration: i32,
    deadline: Option<DateTime<Utc>>,
    requires_access_code: bool,
    attendee_signup_required: bool,
}

impl Fields {
    fn from_write(body: SubmissionTypeWrite) -> Self {
        Self {
            name: body.name.to_stored(),
            default_duration: body.default_duration.unwrap_or(30),
            deadline: body.deadline,
            requires_access_code: body.requires_access_code,
            attendee_signup_required: body.attendee_signup_required,
        }
    }
}

async fn stored(state: &AppState, ev: &TalkEvent, id: i64) -> Result<Fields, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let row = ctx
        .rows(
            "SELECT name, default_duration, deadline, requires_access_code, \
             attendee_signup_required FROM talk_submission_types \
             WHERE id = $1 AND event_id = $2",
            vec![id.into(), ev.event.id.into()],
        )
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(Fields {
        name: row.try_get("", "name")?,
        default_duration: row.try_get("", "default_duration")?,
        deadline: row.try_get("", "deadline")?,
        requires_access_code: row.try_get("", "requires_access_code")?,
        attendee_signup_required: row.try_get("", "attendee_signup_required")?,
    })
}

/// The name as shown in the event's main language, for telling names apart.
fn shown(name: &Value, locale: &str) -> String {
    I18nString::from_stored(name).localize(locale)
}

/// Writes a session type (new when `id` is `None`) and its log entry in one transaction,
/// and gives it as the API shows it; a name another type of the event shows already is 400.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    f: Fields,
) -> Result<Shaped<SubmissionTypeOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let locale = event_locales(state, &ev.event)
        .await?
        .into_iter()
        .next()
        .unwrap_or_else(|| "en".into());
    if shown(&f.name, &locale).trim().is_empty() {
        return Err(ApiError::field("name", "This field may not be blank."));
    }
    let txn = crate::db::begin_write(&state.db).await?;
    let others = ctx
        .within(&txn)
        .rows(
            "SELECT name FROM talk_submission_types WHERE event_id = $1 AND id <> $2",
            vec![ev.event.id.into(), id.unwrap_or(0).into()],
        )
        .await?;
    let name = shown(&f.name, &locale);
    for other in &others {
        if shown(&other.try_get::<Value>("", "name")?, &locale) == name {
            return Err(ApiError::field(
                "name",
                "You already have a session type by this name!",
            ));
        }
    }
    let data = json!({
        "name": f.name,
        "default_duration": f.default_duration,
        "deadline": f.deadline,
        "requires_access_code": f.requires_access_code,
        "attendee_signup_required": f.attendee_signup_required,
    });
    let values = vec![
        ev.event.id.into(),
        f.name.into(),
        f.default_duration.into(),
        f.deadline.into(),
        f.requires_access_code.into(),
        f.attendee_signup_required.into(),
    ];
    let (id, action) = match id {
        Some(id) => {
            let mut values = values;
            values.push(id.into());
            crate::db::execute(
                &txn,
                "UPDATE talk_submission_types SET name = $2, default_duration = $3, \
                 deadline = $4, requires_access_code = $5, attendee_signup_required = $6 \
                 WHERE event_id = $1 AND id = $7",
                values,
            )
            .await?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO talk_submission_types (event_id, name, default_duration, deadline, \
                 requires_access_code, attendee_signup_required) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
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
        let ev = type_event(&state, &talk, &event, Action::List).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_submission_types st",
            "st.id",
            "st.event_id",
            ev.event.id,
            "st.id",
        );
        listing.search(q.as_deref(), &["st.name"]).order(
            o.as_deref(),
            &[
                ("id", "st.id"),
                ("name", "CAST(st.name AS TEXT)"),
                ("default_duration", "st.default_duration"),
            ],
        );
        let page = listing
            .fetch(&ctx, &KIND, req, page.0, page_size.0, &Expand::default())
            .await?;
        Ok(Json(page))
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
        let ev = type_event(&state, &talk, &event, Action::Retrieve).await?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(
            ctx.one(&KIND, (*id).into(), &Expand::default()).await?,
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
        let ev = type_event(&state, &talk, &event, Action::Create).await?;
        let fields = Fields::from_write(body.0);
        Ok(Created::Created(Json(
            save(&state, &ev, None, fields).await?,
        )))
    }

    /// Change a session type
    ///
    /// PUT replaces every field; PATCH changes the fields it sends.
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
        let ev = type_event(&state, &talk, &event, Action::Update).await?;
        let mut f = stored(&state, &ev, *id).await?;
        let body = body.0;
        if let Some(name) = body.name {
            f.name = name.to_stored();
        }
        f.default_duration = body.default_duration.unwrap_or(f.default_duration);
        if let Some(deadline) = patched(body.deadline) {
            f.deadline = deadline;
        }
        f.requires_access_code = body.requires_access_code.unwrap_or(f.requires_access_code);
        f.attendee_signup_required = body
            .attendee_signup_required
            .unwrap_or(f.attendee_signup_required);
        Ok(Json(save(&state, &ev, Some(*id), f).await?))
    }

    /// Replace a session type
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
        let ev = type_event(&state, &talk, &event, Action::Update).await?;
        stored(&state, &ev, *id).await?;
        let fields = Fields::from_write(body.0);
        Ok(Json(save(&state, &ev, Some(*id), fields).await?))
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
        let ev = type_event(&state, &talk, &event, Action::Destroy).await?;
        let f = stored(&state, &ev, *id).await?;
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let used = ctx
            .within(&txn)
            .rows(
                "SELECT id FROM talk_submissions WHERE submission_type_id = $1 LIMIT 1",
                vec![(*id).into()],
            )
            .await?;
        if !used.is_empty() {
            return Err(ApiError::bad_request(
                "This session type is in use in a proposal and cannot be deleted.",
            )
            .into());
        }
        crate::db::execute(
            &txn,
            "DELETE FROM talk_submission_types WHERE id = $1",
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
        let ev = type_event(&state, &talk, &event, Action::Retrieve).await?;
        stored(&state, &ev, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
