//! Submissions of the call for papers: `/api/events/{event}/submissions/`, found by their
//! code in any case. Organisers of the call for papers see and change every submission of
//! the event and move it through its states; reviewers see the submissions of the tracks
//! they review, with the fields of the review (pending state, notes, ...) but without the
//! organisers' ones (review code, anonymised data, reviewers, invitations, reviews). The
//! public sees submissions once the agenda is public.
//!
//! The rules are [`crate::domain::talk::submissions`]'s: states follow pretalx's
//! ([`cfp::transition`]), an impossible move is 400 and changes nothing, and every change
//! writes an entry to the submission's activity log (`{code}/log/`).
//!
//! `/api/events/{event}/talks/{code}/...`, pretalx's former address, redirects here
//! ([`talks_redirect`]).
//!
//! `wire` holds what the API reads and answers, and how `?expand=` loads it.

mod wire;

pub(crate) use wire::grouped;
pub use wire::{KIND, RESOURCE_KIND, State, SubmissionOut};

use poem::http::{StatusCode, header};
use poem::web::Data;
use poem::{Request, Response};
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;

use self::wire::{AddSpeaker, RemoveSpeaker, ResourceWrite, SubmissionPatch, SubmissionWrite};
use crate::api::talk::TalkTag;
use crate::api::talk::context::{Ctx, Listing, like_pattern};
use crate::api::talk::expand::Expand;
use crate::api::talk::log::{LogEntry, log_page};
use crate::api::talk::shape::Shaped;
use crate::api::talk::speakers::languages;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::schedule::visible_submissions;
use crate::domain::talk::speakers::{checked_email, checked_locale};
use crate::domain::talk::submissions::{
    self as cfp, Act, Changes, NewResource, OBJECT, may_read, may_write,
};
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page};
use crate::state::AppState;

const ENDPOINT: &str = "submissions";

async fn submission_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may_read, may_write)
        .await?)
}

/// The answer of a write: the submission with this code as organisers see it, read in the
/// write's transaction, which then commits.
async fn written(
    ctx: &Ctx<'_>,
    txn: crate::db::WriteTxn,
    code: String,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let out = ctx
        .within(&txn)
        .one(&KIND, code.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Writes the submission with this code (a new one when `code` is `None`) in one
/// transaction, and gives it as organisers see it; 404 for an unknown code.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    code: Option<&str>,
    changes: Changes,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let languages = languages(state, ev).await?;
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let existing = match code {
        Some(code) => Some(cfp::stored(&txn, ev, code).await?),
        None => None,
    };
    let code = cfp::write(&txn, ev, existing.as_ref(), changes, &languages).await?;
    written(&ctx, txn, code).await
}

/// Does `action` on the submission with this code in one transaction, and gives it as
/// organisers see it; 404 for an unknown code.
async fn act(
    state: &AppState,
    ev: &TalkEvent,
    code: &str,
    action: Act,
) -> Result<Shaped<SubmissionOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let found = cfp::stored(&txn, ev, code).await?;
    cfp::act(&txn, ev, &found, action).await?;
    written(&ctx, txn, found.code).await
}

/// `/api/events/{event}/talks/...`: pretalx's former address of submissions, redirected
/// permanently (301) to `/api/events/{event}/submissions/...`, keeping the query string.
/// `talks/` itself is no resource (404).
#[poem::handler]
pub fn talks_redirect(req: &Request) -> Response {
    let path = req.uri().path().replacen("/talks/", "/submissions/", 1);
    let path = if path.ends_with('/') {
        path
    } else {
        format!("{path}/")
    };
    let location = match req.uri().query() {
        Some(q) if !q.is_empty() => format!("{path}?{q}"),
        _ => path,
    };
    Response::builder()
        .status(StatusCode::MOVED_PERMANENTLY)
        .header(header::LOCATION, location)
        .finish()
}

/// Submission operations.
pub struct SubmissionsApi;

#[OpenApi(tag = "TalkTag::CallForPapers")]
impl SubmissionsApi {
    /// List submissions
    ///
    /// Organisers see every submission of the event; reviewers those of the tracks they
    /// review.
    #[oai(path = "/api/events/:event/submissions", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_submissions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Only submissions in these states (repeat the parameter for several).
        #[oai(name = "state")]
        states: Query<Option<Vec<State>>>,
        /// Only submissions with these pending states (repeat the parameter for several).
        pending_state: Query<Option<Vec<State>>>,
        /// Only submissions in this language.
        content_locale: Query<Option<String>>,
        /// Only submissions of this session type (ID).
        submission_type: Query<Option<i64>>,
        /// Only submissions of this track (ID).
        track: Query<Option<i64>>,
        /// Only featured (`true`) or other (`false`) submissions.
        is_featured: Query<Option<bool>>,
        /// Text the title or a speaker's name contains.
        q: Query<Option<String>>,
        /// Order: `code` (default), `title`, `state`, `created` or `is_featured`; `-` before
        /// it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `speakers`, `speakers.answers`, `track`, `submission_type`,
        /// `tags`, `answers`, `answers.question`, `resources`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<SubmissionOut>>>> {
        let ev = submission_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_submissions s",
            "s.code",
            "s.event_id",
            ev.event.id,
            "s.code",
        );
        listing.condition(&visible_submissions(&ev, "s"));
        let names = |states: &Option<Vec<State>>| -> Vec<String> {
            states
                .iter()
                .flatten()
                .map(|s| s.name().to_owned())
                .collect()
        };
        listing
            .one_of("s.state", &names(&states))
            .one_of("s.pending_state", &names(&pending_state));
        if let Some(locale) = content_locale.0 {
            listing.filter("s.content_locale = {}", locale);
        }
        if let Some(id) = submission_type.0 {
            listing.filter("s.submission_type_id = {}", id);
        }
        if let Some(id) = track.0 {
            listing.filter("s.track_id = {}", id);
        }
        if let Some(featured) = is_featured.0 {
            listing.filter("s.is_featured = {}", featured);
        }
        if let Some(q) = q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
            listing.filter(
                "(LOWER(s.title) LIKE {} ESCAPE '\\' OR EXISTS (SELECT 1 FROM \
                 talk_submission_speakers qss JOIN talk_speakers qsp ON qsp.id = qss.speaker_id \
                 LEFT JOIN users qu ON qu.id = qsp.user_id WHERE qss.submission_id = s.id AND \
                 (LOWER(qsp.name) LIKE {} ESCAPE '\\' OR LOWER(COALESCE(qu.fullname, '')) LIKE {} \
                 ESCAPE '\\')))",
                like_pattern(q),
            );
        }
        listing.order(
            o.as_deref(),
            &[
                ("code", "s.code"),
                ("title", "s.title"),
                ("state", "s.state"),
                ("created", "s.created"),
                ("is_featured", "s.is_featured"),
            ],
        );
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a submission
    #[oai(path = "/api/events/:event/submissions/:code", method = "get")]
    async fn get_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// Fields to expand: `speakers`, `speakers.answers`, `track`, `submission_type`,
        /// `tags`, `answers`, `answers.question`, `resources`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let found = cfp::stored(&state.db, &ev, &code).await?;
        Ok(Json(ctx.one(&KIND, found.code.into(), &expand).await?))
    }

    /// Create a submission
    ///
    /// It starts submitted and without speakers (add them with `add-speaker`); no email is
    /// sent.
    #[oai(path = "/api/events/:event/submissions", method = "post")]
    async fn create_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<SubmissionWrite>,
    ) -> TalkResult<Created<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Create).await?;
        Ok(Created::Created(Json(
            save(&state, &ev, None, body.0.into()).await?,
        )))
    }

    /// Change a submission
    ///
    /// Changes the fields it sends; the state changes through the actions only.
    #[oai(path = "/api/events/:event/submissions/:code", method = "patch")]
    async fn patch_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<SubmissionPatch>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Update).await?;
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
    }

    /// Replace a submission
    ///
    /// Title and session type are required; fields left out keep their values, as in
    /// pretalx.
    #[oai(path = "/api/events/:event/submissions/:code", method = "put")]
    async fn put_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<SubmissionWrite>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Update).await?;
        Ok(Json(save(&state, &ev, Some(&code), body.0.into()).await?))
    }

    /// Delete a submission
    ///
    /// With its speakers' roles, tags, resources and answers (their files too). A submission
    /// in a released schedule cannot be deleted (400): cancel or withdraw it instead.
    #[oai(path = "/api/events/:event/submissions/:code", method = "delete")]
    async fn delete_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<NoContent> {
        let ev = submission_event(&state, &talk, &event, Action::Destroy).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let found = cfp::stored(&txn, &ev, &code).await?;
        cfp::delete(&txn, &ev, &found).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// Accept a submission
    ///
    /// From submitted, rejected, confirmed or canceled; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/accept", method = "post")]
    async fn accept_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let to = Act::MoveTo(cfp::State::Accepted);
        Ok(Json(act(&state, &ev, &code, to).await?))
    }

    /// Reject a submission
    ///
    /// From submitted or accepted; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/reject", method = "post")]
    async fn reject_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let to = Act::MoveTo(cfp::State::Rejected);
        Ok(Json(act(&state, &ev, &code, to).await?))
    }

    /// Confirm a submission
    ///
    /// From accepted or canceled; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/confirm", method = "post")]
    async fn confirm_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let to = Act::MoveTo(cfp::State::Confirmed);
        Ok(Json(act(&state, &ev, &code, to).await?))
    }

    /// Cancel a submission
    ///
    /// From accepted or confirmed; 400 otherwise.
    #[oai(path = "/api/events/:event/submissions/:code/cancel", method = "post")]
    async fn cancel_submission(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let to = Act::MoveTo(cfp::State::Canceled);
        Ok(Json(act(&state, &ev, &code, to).await?))
    }

    /// Make a submission submitted again
    ///
    /// From rejected, accepted or withdrawn; 400 otherwise.
    #[oai(
        path = "/api/events/:event/submissions/:code/make-submitted",
        method = "post"
    )]
    async fn make_submitted(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let to = Act::MoveTo(cfp::State::Submitted);
        Ok(Json(act(&state, &ev, &code, to).await?))
    }

    /// Add a speaker to a submission
    ///
    /// The event's speaker with this email address, or a new speaker without an account;
    /// no email is sent.
    #[oai(
        path = "/api/events/:event/submissions/:code/add-speaker",
        method = "post"
    )]
    async fn add_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<AddSpeaker>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let body = body.0;
        let email = checked_email("email", &body.email)?;
        let languages = languages(&state, &ev).await?;
        let locale = checked_locale("locale", body.locale.as_deref(), &languages)?;
        let add = Act::AddSpeaker {
            email,
            name: body.name.unwrap_or_default(),
            locale,
        };
        Ok(Json(act(&state, &ev, &code, add).await?))
    }

    /// Remove a speaker from a submission
    #[oai(
        path = "/api/events/:event/submissions/:code/remove-speaker",
        method = "post"
    )]
    async fn remove_speaker(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<RemoveSpeaker>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let remove = Act::RemoveSpeaker(body.0.user);
        Ok(Json(act(&state, &ev, &code, remove).await?))
    }

    /// Add a resource to a submission
    ///
    /// A link or an uploaded file; gives the submission.
    #[oai(
        path = "/api/events/:event/submissions/:code/resources",
        method = "post"
    )]
    async fn add_resource(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        body: JsonBody<ResourceWrite>,
    ) -> TalkResult<Json<Shaped<SubmissionOut>>> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        let body = body.0;
        let resource =
            NewResource::checked(body.resource, body.link, body.description, body.is_public)?;
        Ok(Json(
            act(&state, &ev, &code, Act::AddResource(resource)).await?,
        ))
    }

    /// Remove a resource from a submission
    ///
    /// With its file.
    #[oai(
        path = "/api/events/:event/submissions/:code/resources/:id",
        method = "delete"
    )]
    async fn remove_resource(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// The resource's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = submission_event(&state, &talk, &event, Action::Actions).await?;
        act(&state, &ev, &code, Act::RemoveResource(*id)).await?;
        Ok(NoContent::NoContent)
    }

    /// A submission's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/submissions/:code/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn submission_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The submission's code (in any case).
        code: Path<String>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = submission_event(&state, &talk, &event, Action::Retrieve).await?;
        let found = cfp::stored(&state.db, &ev, &code).await?;
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, found.id, page.0, page_size.0).await?,
        ))
    }
}
