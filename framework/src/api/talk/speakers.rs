//! Speakers of the call for papers: `/api/events/{event}/speakers/`, found by their code.
//! Organisers of the call for papers see every speaker of the event, with their contact
//! details, availabilities and internal notes, and create speakers without an account
//! (managed speakers) or change them; reviewers see the speakers of the submissions they
//! review, without those details. The public sees speakers once the agenda is public.
//! `q` searches names (organisers: email addresses too), `o` orders by `code` (default) or
//! `name`.
//!
//! Versions: in v1 a speaker's email address may be changed; v2 ignores it on update, as
//! pretalx does since API v2.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};
use std::collections::HashMap;

use super::TalkTag;
use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::shape::{Expandable, Shaped};
use super::submissions::{SubmissionOut, grouped};
use crate::domain::settings;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::availability::whole_days;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::questions;
use crate::domain::talk::schedule;
use crate::domain::talk::speakers::{self, Changes, Languages, OBJECT, visible};
use crate::domain::talk::sql::ids_in;
use crate::domain::talk::submissions::{may_read, may_write};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, Page, patched};
use crate::state::AppState;

const ENDPOINT: &str = "speakers";

/// A time a speaker is available.
#[derive(Object)]
#[oai(rename = "TalkAvailability")]
pub struct AvailabilityOut {
    /// Start.
    pub start: DateTime<Utc>,
    /// End.
    pub end: DateTime<Utc>,
    /// Whether it spans whole days (midnight to midnight in the event's time zone).
    #[oai(rename = "allDay")]
    pub all_day: bool,
}

/// A speaker. The fields from `email` on are shown to organisers of the call for papers only.
#[derive(Object)]
#[oai(rename = "TalkSpeaker")]
pub struct SpeakerOut {
    /// The speaker's code.
    pub code: String,
    /// Name.
    pub name: String,
    /// Biography.
    #[oai(nullable)]
    pub biography: Option<String>,
    /// Codes of the speaker's submissions the caller may see, or with `?expand=submissions`
    /// the submissions.
    pub submissions: Vec<Expandable<String, SubmissionOut>>,
    /// URL of the speaker's picture.
    #[oai(nullable)]
    pub avatar_url: Option<String>,
    /// IDs of the speaker's answers the caller may see, or with `?expand=answers` the answers.
    pub answers: Vec<Expandable<i64, super::answers::AnswerOut>>,
    /// Contact address (organisers only).
    #[oai(nullable)]
    pub email: Option<String>,
    /// Time zone (organisers only).
    pub timezone: Option<String>,
    /// Language (organisers only).
    pub locale: Option<String>,
    /// Whether the speaker has no user account (organisers only).
    pub is_managed: Option<bool>,
    /// Whether the speaker has arrived at the event (organisers only).
    pub has_arrived: Option<bool>,
    /// When the speaker is available (organisers only).
    pub availabilities: Option<Vec<AvailabilityOut>>,
    /// Notes of the organisers (organisers only).
    #[oai(nullable)]
    pub internal_notes: Option<String>,
}

/// Speakers as objects: four queries for any number.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "code",
    endpoint: ENDPOINT,
    load,
    fields: &[
        ("submissions", &super::submissions::KIND),
        ("answers", &super::answers::KIND),
    ],
};

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (codes, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT sp.id, sp.code, sp.name, u.fullname AS user_name, sp.biography, sp.avatar, \
             sp.email, u.email AS user_email, sp.user_id, sp.locale, sp.timezone, \
             sp.has_arrived, sp.internal_notes \
             FROM talk_speakers sp LEFT JOIN users u ON u.id = sp.user_id \
             WHERE sp.code IN {codes} AND sp.event_id = ${} AND {}",
            values.len(),
            visible(ctx.ev, "sp")
        );
        let rows = ctx.rows(&sql, values).await?;
        let ids: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id"))
            .collect::<Result<_, _>>()?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (in_ids, values) = ids_in(&ids, 0);
        let mut submissions = grouped(
            ctx,
            &format!(
                "SELECT ss.speaker_id AS owner, s.code AS v FROM talk_submission_speakers ss \
                 JOIN talk_submissions s ON s.id = ss.submission_id \
                 WHERE ss.speaker_id IN {in_ids} AND {} ORDER BY s.code",
                schedule::visible_submissions(ctx.ev, "s")
            ),
            values.clone(),
        )
        .await?;
        let mut answers = grouped(
            ctx,
            &format!(
                "SELECT a.speaker_id AS owner, a.id AS v FROM talk_answers a \
                 JOIN talk_questions q ON q.id = a.question_id \
                 WHERE a.speaker_id IN {in_ids} AND q.target = 'speaker' AND {} \
                 ORDER BY q.position, q.id, a.id",
                questions::visible(ctx.role())
            ),
            values.clone(),
        )
        .await?;
        let orga = ctx.role().is_orga();
        let tz: Tz = ctx.ev.event.timezone.parse().unwrap_or(Tz::UTC);
        let mut availabilities: HashMap<i64, Vec<Value>> = HashMap::new();
        if orga {
            let sql = format!(
                "SELECT speaker_id AS owner, start, \"end\" FROM talk_availabilities \
                 WHERE speaker_id IN {in_ids} ORDER BY start, id"
            );
            for r in ctx.rows(&sql, values).await? {
                let start: DateTime<Utc> = r.try_get("", "start")?;
                let end: DateTime<Utc> = r.try_get("", "end")?;
                availabilities
                    .entry(r.try_get("", "owner")?)
                    .or_default()
                    .push(
                        json!({"start": start, "end": end, "allDay": whole_days(tz, start, end)}),
                    );
            }
        }
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let name: String = r.try_get("", "name")?;
                let user_name: Option<String> = r.try_get("", "user_name")?;
                let name = Some(name)
                    .filter(|n| !n.is_empty())
                    .or(user_name.filter(|n| !n.is_empty()))
                    .unwrap_or_else(|| "Unnamed speaker".into());
                let avatar: Option<String> = r.try_get("", "avatar")?;
                let mut o = json!({
                    "code": r.try_get::<String>("", "code")?,
                    "name": name,
                    "biography": r.try_get::<Option<String>>("", "biography")?,
                    "submissions": submissions.remove(&id).unwrap_or_default(),
                    "avatar_url": ctx.file_url(avatar.as_deref()),
                    "answers": answers.remove(&id).unwrap_or_default(),
                });
                if orga {
                    let email: Option<String> = r.try_get("", "email")?;
                    let user_email: Option<String> = r.try_get("", "user_email")?;
                    let extra = json!({
                        "email": email.or(user_email),
                        "timezone": r.try_get::<String>("", "timezone")?,
                        "locale": r.try_get::<String>("", "locale")?,
                        "is_managed": r.try_get::<Option<i64>>("", "user_id")?.is_none(),
                        "has_arrived": r.try_get::<bool>("", "has_arrived")?,
                        "availabilities": availabilities.remove(&id).unwrap_or_default(),
                        "internal_notes": r.try_get::<Option<String>>("", "internal_notes")?,
                    });
                    if let (Some(o), Value::Object(extra)) = (o.as_object_mut(), extra) {
                        o.extend(extra);
                    }
                }
                Ok(o)
            })
            .collect()
    })
}

/// The event's default language and its languages, from its settings.
pub(super) async fn languages(state: &AppState, ev: &TalkEvent) -> Result<Languages, ApiError> {
    let generation = state.cache.generation().await;
    let values = settings::of_event(
        &state.db,
        &state.settings,
        generation.map(|g| (state.cache.as_ref(), g)),
        &ev.event,
    )
    .await?;
    let all = settings::locales(&values);
    let default = values
        .get("locale")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| all.first().cloned())
        .unwrap_or_else(|| "en".into());
    Ok(Languages { default, all })
}

/// A time a speaker is available, as sent.
#[derive(Object)]
#[oai(rename = "TalkAvailabilityWrite")]
pub struct AvailabilityIn {
    /// Start.
    pub start: DateTime<Utc>,
    /// End, after the start.
    pub end: DateTime<Utc>,
}

/// A new speaker, or all fields of one (PUT); fields left out keep their values (on
/// creation: none, the event's language, not arrived).
#[derive(Object)]
#[oai(rename = "TalkSpeakerWrite")]
pub struct SpeakerWrite {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub name: String,
    /// Contact address. Not checked against other speakers': the speaker is a managed one,
    /// without a user account. Changing it needs API version v1; v2 ignores it on update.
    #[oai(nullable, validator(max_length = 254))]
    pub email: MaybeUndefined<String>,
    /// Biography.
    #[oai(nullable, validator(max_length = 100000))]
    pub biography: MaybeUndefined<String>,
    /// Language, one of the event's; null for the event's default.
    #[oai(nullable, validator(max_length = 32))]
    pub locale: MaybeUndefined<String>,
    /// Picture: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub avatar: MaybeUndefined<String>,
    /// Whether the speaker has arrived at the event.
    pub has_arrived: Option<bool>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// When the speaker is available; replaces the stored times (overlapping ones are
    /// merged).
    #[oai(validator(max_items = 200))]
    pub availabilities: Option<Vec<AvailabilityIn>>,
}

/// A partial change of a speaker.
#[derive(Object)]
#[oai(rename = "TalkSpeakerPatch")]
pub struct SpeakerPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub name: Option<String>,
    /// Contact address. Changing it needs API version v1; v2 ignores it.
    #[oai(nullable, validator(max_length = 254))]
    pub email: MaybeUndefined<String>,
    /// Biography.
    #[oai(nullable, validator(max_length = 100000))]
    pub biography: MaybeUndefined<String>,
    /// Language, one of the event's; null for the event's default.
    #[oai(nullable, validator(max_length = 32))]
    pub locale: MaybeUndefined<String>,
    /// Picture: the ID of an image uploaded with `POST /api/upload/` (`file:...`); null
    /// removes it.
    #[oai(nullable, validator(max_length = 200))]
    pub avatar: MaybeUndefined<String>,
    /// Whether the speaker has arrived at the event.
    pub has_arrived: Option<bool>,
    /// Notes of the organisers.
    #[oai(nullable, validator(max_length = 100000))]
    pub internal_notes: MaybeUndefined<String>,
    /// When the speaker is available; replaces the stored times (overlapping ones are
    /// merged).
    #[oai(validator(max_items = 200))]
    pub availabilities: Option<Vec<AvailabilityIn>>,
}

/// Availabilities as sent, as spans.
fn spans(sent: Option<Vec<AvailabilityIn>>) -> Option<Vec<(DateTime<Utc>, DateTime<Utc>)>> {
    sent.map(|a| a.into_iter().map(|a| (a.start, a.end)).collect())
}

impl From<SpeakerWrite> for Changes {
    fn from(b: SpeakerWrite) -> Self {
        Self {
            name: Some(b.name),
            email: patched(b.email),
            biography: patched(b.biography),
            locale: patched(b.locale),
            avatar: patched(b.avatar),
            has_arrived: b.has_arrived,
            internal_notes: patched(b.internal_notes),
            availabilities: spans(b.availabilities),
        }
    }
}

impl From<SpeakerPatch> for Changes {
    fn from(b: SpeakerPatch) -> Self {
        Self {
            name: b.name,
            email: patched(b.email),
            biography: patched(b.biography),
            locale: patched(b.locale),
            avatar: patched(b.avatar),
            has_arrived: b.has_arrived,
            internal_notes: patched(b.internal_notes),
            availabilities: spans(b.availabilities),
        }
    }
}

async fn speaker_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may_read, may_write)
        .await?)
}

/// Writes the speaker with this code (a new one when `code` is `None`) in one transaction,
/// and gives it as organisers see it; 404 for an unknown code.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    code: Option<&str>,
    changes: Changes,
) -> Result<Shaped<SpeakerOut>, ApiError> {
    let languages = languages(state, ev).await?;
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let existing = match code {
        Some(code) => Some(speakers::stored(&txn, ev, code).await?),
        None => None,
    };
    let code = speakers::write(&txn, ev, existing.as_ref(), changes, &languages).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, code.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Speaker operations.
pub struct SpeakersApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl SpeakersApi {
    /// List speakers
    ///
    /// Organisers see every speaker of the event; reviewers those of the submissions they
    /// review.
    #[oai(path = "/api/events/:event/speakers", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_speakers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Text the name contains (for organisers: or the email address).
        q: Query<Option<String>>,
        /// Order: `code` (default) or `name`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `submissions`, `answers`, `answers.question`, ...
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<SpeakerOut>>>> {
        let ev = speaker_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_speakers sp LEFT JOIN users u ON u.id = sp.user_id",
            "sp.code",
            "sp.event_id",
            ev.event.id,
            "sp.code",
        );
        listing.condition(&visible(&ev, "sp"));
        let searched: &[&str] = if ev.role.is_orga() {
            &["sp.name", "u.fullname", "sp.email", "u.email"]
        } else {
            &["sp.name", "u.fullname"]
        };
        listing
            .search(q.as_deref(), searched)
            .order(o.as_deref(), &[("code", "sp.code"), ("name", "sp.name")]);
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a speaker
    #[oai(path = "/api/events/:event/speakers/:code", method = "get")]
    async fn get_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        /// Fields to expand: `submissions`, `answers`, `answers.question`, ...
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let found = speakers::stored(&state.db, &ev, &code).await?;
        Ok(Json(ctx.one(&KIND, found.code.into(), &expand).await?))
    }

    /// Create a speaker
    ///
    /// A managed speaker, without a user account; email addresses are not deduplicated.
    #[oai(path = "/api/events/:event/speakers", method = "post")]
    async fn create_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<SpeakerWrite>,
    ) -> TalkResult<Created<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Create).await?;
        Ok(Created::Created(Json(
            save(&state, &ev, None, body.0.into()).await?,
        )))
    }

    /// Change a speaker
    ///
    /// Changes the fields it sends. The email address changes in API version v1 only.
    #[oai(path = "/api/events/:event/speakers/:code", method = "patch")]
    async fn patch_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        body: JsonBody<SpeakerPatch>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Update).await?;
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
    }

    /// Replace a speaker
    ///
    /// The name is required; fields left out keep their values, as in pretalx. The email
    /// address changes in API version v1 only.
    #[oai(path = "/api/events/:event/speakers/:code", method = "put")]
    async fn put_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        body: JsonBody<SpeakerWrite>,
    ) -> TalkResult<Json<Shaped<SpeakerOut>>> {
        let ev = speaker_event(&state, &talk, &event, Action::Update).await?;
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
    }

    /// A speaker's activity log
    ///
    /// Newest first; organisers of the call for papers only, since entries hold contact
    /// details.
    #[oai(path = "/api/events/:event/speakers/:code/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn speaker_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The speaker's code (in any case).
        code: Path<String>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = talk.event(&state.db, &event).await?;
        ev.require(ENDPOINT, Action::Retrieve, ev.role.is_orga())?;
        let found = speakers::stored(&state.db, &ev, &code).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, found.id, page.0, page_size.0).await?,
        ))
    }
}
