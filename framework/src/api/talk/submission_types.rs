//! Session types of the call for papers: `/api/events/{event}/submission-types/`.
//! Organisers of the call for papers and reviewers read them (anyone who sees the event once
//! its agenda is public); organisers who may change the event's settings change them. `q`
//! searches the name, `o` orders by `id` (default), `name` or `default_duration`. A type
//! used by a submission cannot be deleted. The skeleton of the operations is
//! [`super::simple`]'s.

use chrono::{DateTime, Utc};
use poem_openapi::Object;
use poem_openapi::types::MaybeUndefined;
use sea_orm::{DbErr, QueryResult};
use serde::Serialize;
use serde_json::{Value, json};

use super::context::Ctx;
use super::expand::Kind;
use super::shape::{I18nInput, TalkText};
use super::simple::{self, Resource, Writing};
use crate::domain::permissions::Permission;
use crate::domain::talk::access::{TalkEvent, agenda_visible};
use crate::domain::talk::catalog::{self, shown_name};
use crate::http::{ApiError, patched};

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

simple::forwarding_api! {
    /// Session type operations.
    SubmissionTypesApi for SubmissionTypes =>
        SubmissionTypeOut, SubmissionTypeWrite, SubmissionTypePatch;
    tag: "crate::api::talk::TalkTag::CallForPapers";
    lang: lang;
    paths:
        "/api/events/:event/submission-types",
        "/api/events/:event/submission-types/:id",
        "/api/events/:event/submission-types/:id/log";
    /// List session types
    list list_submission_types(
        q: "Text the name contains.",
        o: "Order: `id` (default), `name` or `default_duration`; `-` before it for descending.",
    );
    /// Show a session type
    get get_submission_type(id: "The session type's ID.");
    /// Create a session type
    create create_submission_type;
    /// Change a session type
    ///
    /// Changes the fields the body sends.
    patch patch_submission_type;
    /// Replace a session type
    ///
    /// The body must send the name; fields it leaves out keep their values.
    put put_submission_type;
    /// Delete a session type
    ///
    /// A type used by a submission cannot be deleted (400).
    delete delete_submission_type;
    /// A session type's activity log
    ///
    /// Newest first.
    log submission_type_log;
}
