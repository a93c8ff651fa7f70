//! Tracks of the call for papers: `/api/events/{event}/tracks/`. Read like session types
//! (organisers of the call for papers and reviewers; anyone who sees the event once its
//! agenda is public); organisers who may change the event's settings change them. `q`
//! searches the name, `o` orders by `id` (default) or `name`. A track used by a submission,
//! or that a reviewer team is limited to, cannot be deleted. The skeleton of the
//! operations is [`super::simple`]'s.

use poem_openapi::Object;
use poem_openapi::types::MaybeUndefined;
use sea_orm::{DbErr, QueryResult};
use serde::Serialize;
use serde_json::{Value, json};

use super::context::Ctx;
use super::expand::Kind;
use super::shape::{I18nInput, TalkText};
use super::simple::{self, Resource, Writing};
use super::submission_types::may_read_cfp_settings;
use crate::domain::permissions::Permission;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::catalog::{self, is_color, shown_name};
use crate::http::{ApiError, patched};

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
    name: Tracks::OBJECT,
    key: "id",
    endpoint: Tracks::ENDPOINT,
    load: simple::load::<Tracks>,
    fields: &[],
};

/// The fields of a track a body may leave out: a new track takes the defaults, PUT and
/// PATCH keep the values.
#[derive(Object)]
#[oai(rename = "TalkTrackOptional")]
pub struct TrackOptional {
    /// Description; empty unless given.
    pub description: Option<I18nInput<100000>>,
    /// Where it is shown among the tracks (lowest first); 0 unless given, null for 0.
    #[oai(nullable, validator(minimum(value = "0")))]
    pub position: MaybeUndefined<i32>,
    /// Offered only to submitters with a matching access code; false unless given.
    pub requires_access_code: Option<bool>,
    /// Its sessions require attendee signup unless they say otherwise; false unless given.
    pub attendee_signup_required: Option<bool>,
}

/// A new track, or a track's fields (PUT: omitted optional ones keep their values).
#[derive(Object)]
#[oai(rename = "TalkTrackWrite")]
pub struct TrackWrite {
    /// Name, unique in the event.
    pub name: I18nInput<200>,
    /// Colour, `#rgb` or `#rrggbb`.
    #[oai(validator(max_length = 7))]
    pub color: String,
    /// The others.
    #[oai(flatten)]
    pub optional: TrackOptional,
}

/// A partial change of a track.
#[derive(Object)]
#[oai(rename = "TalkTrackPatch")]
pub struct TrackPatch {
    /// Name, unique in the event.
    pub name: Option<I18nInput<200>>,
    /// Colour, `#rgb` or `#rrggbb`.
    #[oai(validator(max_length = 7))]
    pub color: Option<String>,
    /// The others.
    #[oai(flatten)]
    pub optional: TrackOptional,
}

/// The stored fields of a track.
#[derive(Serialize)]
pub struct TrackFields {
    name: Value,
    description: Value,
    color: String,
    position: i32,
    requires_access_code: bool,
    attendee_signup_required: bool,
}

impl TrackOptional {
    fn apply(self, f: &mut TrackFields) {
        if let Some(d) = self.description {
            f.description = d.to_stored();
        }
        if let Some(position) = patched(self.position) {
            f.position = position.unwrap_or(0);
        }
        f.requires_access_code = self.requires_access_code.unwrap_or(f.requires_access_code);
        f.attendee_signup_required = self
            .attendee_signup_required
            .unwrap_or(f.attendee_signup_required);
    }
}

/// Tracks as a [`Resource`].
pub struct Tracks;

impl Resource for Tracks {
    const ENDPOINT: &'static str = "tracks";
    const OBJECT: &'static str = "track";
    const TABLE: &'static str = "talk_tracks";
    const COLUMNS: &'static [&'static str] = &[
        "name",
        "description",
        "color",
        "position",
        "requires_access_code",
        "attendee_signup_required",
    ];
    const SEARCH: &'static [&'static str] = &["t.name"];
    const ORDER: &'static [(&'static str, &'static str)] =
        &[("id", "t.id"), ("name", "CAST(t.name AS TEXT)")];
    const KIND: &'static Kind = &KIND;

    type Out = TrackOut;
    type Fields = TrackFields;
    type Write = TrackWrite;
    type Patch = TrackPatch;

    fn may_read(ev: &TalkEvent) -> bool {
        may_read_cfp_settings(ev)
    }

    /// Those who may change the event's settings.
    fn may_write(ev: &TalkEvent) -> bool {
        ev.role.permissions.has(Permission::ChangeEventSettings)
    }

    fn defaults() -> TrackFields {
        TrackFields {
            name: Value::Null,
            description: Value::Null,
            color: String::new(),
            position: 0,
            requires_access_code: false,
            attendee_signup_required: false,
        }
    }

    fn write(body: TrackWrite, f: &mut TrackFields) {
        f.name = body.name.to_stored();
        f.color = body.color;
        body.optional.apply(f);
    }

    fn patch(body: TrackPatch, f: &mut TrackFields) {
        if let Some(name) = body.name {
            f.name = name.to_stored();
        }
        if let Some(color) = body.color {
            f.color = color;
        }
        body.optional.apply(f);
    }

    fn from_row(row: &QueryResult) -> Result<TrackFields, DbErr> {
        Ok(TrackFields {
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

    fn values(f: TrackFields) -> Vec<sea_orm::Value> {
        vec![
            f.name.into(),
            f.description.into(),
            f.color.into(),
            f.position.into(),
            f.requires_access_code.into(),
            f.attendee_signup_required.into(),
        ]
    }

    fn shown(ctx: &Ctx<'_>, id: i64, f: TrackFields) -> Value {
        json!({
            "id": id,
            "name": ctx.text(&f.name),
            "description": ctx.text(&f.description),
            "color": f.color,
            "position": f.position,
            "requires_access_code": f.requires_access_code,
            "attendee_signup_required": f.attendee_signup_required,
        })
    }

    /// A name, one no other track of the event shows in the event's main language, and a
    /// valid colour.
    async fn check(w: &Writing<'_>, id: Option<i64>, f: &TrackFields) -> Result<(), ApiError> {
        let locale = w.main_locale().await?;
        if shown_name(&f.name, &locale).trim().is_empty() {
            return Err(ApiError::field("name", "This field may not be blank."));
        }
        if !is_color(&f.color) {
            return Err(ApiError::field(
                "color",
                "Enter a colour as #rgb or #rrggbb.",
            ));
        }
        if catalog::name_taken(w.txn, Self::TABLE, w.ev.event.id, id, &f.name, &locale).await? {
            return Err(ApiError::field(
                "name",
                "You already have a track by this name!",
            ));
        }
        Ok(())
    }

    /// Not while a submission uses it or a team is limited to it.
    async fn check_deletion(w: &Writing<'_>, id: i64, _: &TrackFields) -> Result<(), ApiError> {
        Ok(catalog::check_track_deletion(w.txn, id).await?)
    }
}

simple::forwarding_api! {
    /// Track operations.
    TracksApi for Tracks => TrackOut, TrackWrite, TrackPatch;
    tag: "crate::api::talk::TalkTag::CallForPapers";
    lang: lang;
    paths:
        "/api/events/:event/tracks",
        "/api/events/:event/tracks/:id",
        "/api/events/:event/tracks/:id/log";
    /// List tracks
    list list_tracks(
        q: "Text the name contains.",
        o: "Order: `id` (default) or `name`; `-` before it for descending.",
    );
    /// Show a track
    get get_track(id: "The track's ID.");
    /// Create a track
    create create_track;
    /// Change a track
    ///
    /// Changes the fields the body sends.
    patch patch_track;
    /// Replace a track
    ///
    /// The body must send the name and the colour; fields it leaves out keep their values.
    put put_track;
    /// Delete a track
    ///
    /// A track used by a submission, or that a reviewer team is limited to, cannot be
    /// deleted (400: change the teams' track limits first); questions limited to it lose
    /// the limit.
    delete delete_track;
    /// A track's activity log
    ///
    /// Newest first.
    log track_log;
}
