//! Reviews: `/api/events/{event}/reviews/`, as pretalx v2. Reviewers write one review per
//! submission they may review, with a text and scores (the IDs of the values of the score
//! categories, `score-categories/`), and change or delete their own while the review phase
//! allows; organisers of the call for papers read every review but those of their own
//! submissions. Listing needs an organiser, or a reviewer while the phase shows other
//! reviews always; a review's author (`user`) is shown when the caller may see reviewers'
//! names. The rules are [`crate::domain::talk::reviews`]'s.

use std::collections::HashMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::{Value, json};

use super::TalkTag;
use super::answers::AnswerOut;
use super::context::{Conn, Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::log::{LogEntry, log_page};
use super::score_categories::CategoryOut;
use super::shape::{Expandable, Shaped};
use super::submissions::{State, SubmissionOut};
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::reviews::{
    self, NewReview, OBJECT, ReviewChanges, Summary, decimal, names_visible, reviewable,
};
use crate::domain::talk::sql::ids_in;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page, patched};
use crate::state::AppState;

/// The token scope reviews are read and written with.
pub const ENDPOINT: &str = "reviews";

/// A reviewer, as a review's expanded `user`.
#[derive(Object)]
#[oai(rename = "TalkReviewer")]
pub struct ReviewerOut {
    /// The user's code.
    pub code: String,
    /// The user's name.
    pub name: String,
    /// The user's email address.
    pub email: String,
}

/// A value given in a review.
#[derive(Object)]
#[oai(rename = "TalkReviewScore")]
pub struct ScoreOut {
    /// The value's ID.
    pub id: i64,
    /// The category's ID, or with `?expand=scores.category` the category.
    pub category: Expandable<i64, CategoryOut>,
    /// The value, with two places.
    pub value: String,
    /// Its label.
    #[oai(nullable)]
    pub label: Option<String>,
}

/// A review.
#[derive(Object)]
#[oai(rename = "TalkReview")]
pub struct ReviewOut {
    /// Internal ID.
    pub id: i64,
    /// The submission's code, or with `?expand=submission` the submission.
    pub submission: Expandable<String, SubmissionOut>,
    /// The text.
    #[oai(nullable)]
    pub text: Option<String>,
    /// The score: the values given, each times its category's weight, summed (two places);
    /// null without values.
    #[oai(nullable)]
    pub score: Option<String>,
    /// The values given, one per score category.
    pub scores: Vec<ScoreOut>,
    /// The answers to the questions to reviewers.
    pub answers: Vec<AnswerOut>,
    /// The author's code, or with `?expand=user` the author; left out when the caller may
    /// not see reviewers' names.
    pub user: Option<Expandable<String, ReviewerOut>>,
}

/// Reviews as objects: three queries for any number, and the values and answers they give.
pub static KIND: Kind = Kind {
    name: OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load,
    fields: &[
        ("submission", &super::submissions::KIND),
        ("user", &USER_KIND),
        ("scores", &SCORE_KIND),
        ("answers", &super::answers::IN_REVIEW_KIND),
    ],
};

/// The values given in reviews as objects: one query for any number.
pub static SCORE_KIND: Kind = Kind {
    name: "score",
    key: "id",
    endpoint: ENDPOINT,
    load: load_scores,
    fields: &[("category", &super::score_categories::KIND)],
};

/// Reviewers as objects, by code: one query for any number.
pub static USER_KIND: Kind = Kind {
    name: "user",
    key: "code",
    endpoint: ENDPOINT,
    load: load_users,
    fields: &[],
};

/// Every review shows its values and answers as objects, as pretalx's: the expansions
/// every request adds to those it asks for.
const ALWAYS_EXPANDED: &str = "scores,answers";

/// `?expand=` as asked, with [`ALWAYS_EXPANDED`].
fn expansion(asked: Option<&str>) -> Result<Expand, ApiError> {
    let asked = asked.unwrap_or_default();
    Expand::parse(Some(&format!("{ALWAYS_EXPANDED},{asked}")), &KIND)
}

/// `(owner, v)` rows of a query, grouped by owner in order.
async fn grouped(
    ctx: &Ctx<'_>,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<HashMap<i64, Vec<Value>>, ApiError> {
    let mut map: HashMap<i64, Vec<Value>> = HashMap::new();
    for r in ctx.rows(sql, values).await? {
        map.entry(r.try_get("", "owner")?)
            .or_default()
            .push(json!(r.try_get::<i64>("", "v")?));
    }
    Ok(map)
}

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT r.id, s.code AS submission, r.text, r.score, u.code AS user_code \
             FROM talk_reviews r JOIN talk_submissions s ON s.id = r.submission_id \
             JOIN users u ON u.id = r.user_id \
             WHERE r.id IN {ids} AND r.event_id = ${} AND {}",
            values.len(),
            reviewable(ctx.ev, "s")
        );
        let rows = ctx.rows(&sql, values).await?;
        let found: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get::<i64>("", "id"))
            .collect::<Result<_, _>>()?;
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let (in_ids, values) = ids_in(&found, 0);
        let mut scores = grouped(
            ctx,
            &format!(
                "SELECT rs.review_id AS owner, rs.score_id AS v FROM talk_review_scores rs \
                 JOIN talk_scores sc ON sc.id = rs.score_id \
                 WHERE rs.review_id IN {in_ids} ORDER BY sc.category_id, sc.id"
            ),
            values.clone(),
        )
        .await?;
        let mut answers = grouped(
            ctx,
            &format!(
                "SELECT review_id AS owner, id AS v FROM talk_answers \
                 WHERE review_id IN {in_ids} ORDER BY id"
            ),
            values,
        )
        .await?;
        let show_user = names_visible(ctx.ev);
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let score: Option<i64> = r.try_get("", "score")?;
                let mut o = json!({
                    "id": id,
                    "submission": r.try_get::<String>("", "submission")?,
                    "text": r.try_get::<Option<String>>("", "text")?,
                    "score": score.map(decimal),
                    "scores": scores.remove(&id).unwrap_or_default(),
                    "answers": answers.remove(&id).unwrap_or_default(),
                });
                if show_user {
                    o["user"] = json!(r.try_get::<String>("", "user_code")?);
                }
                Ok(o)
            })
            .collect()
    })
}

fn load_scores<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT sc.id, sc.category_id, sc.value, sc.label FROM talk_scores sc \
             JOIN talk_score_categories c ON c.id = sc.category_id \
             WHERE sc.id IN {ids} AND c.event_id = ${}",
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "category": r.try_get::<i64>("", "category_id")?,
                    "value": decimal(r.try_get("", "value")?),
                    "label": r.try_get::<Option<String>>("", "label")?,
                }))
            })
            .collect()
    })
}

/// Reviewers who wrote reviews of the event, shown only where their names may be.
fn load_users<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        if !names_visible(ctx.ev) {
            return Ok(Vec::new());
        }
        let (codes, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT u.code, u.fullname, u.email FROM users u WHERE u.code IN {codes} \
             AND EXISTS (SELECT 1 FROM talk_reviews r WHERE r.user_id = u.id AND r.event_id = ${})",
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|r| {
                Ok(json!({
                    "code": r.try_get::<String>("", "code")?,
                    "name": r.try_get::<String>("", "fullname")?,
                    "email": r.try_get::<String>("", "email")?,
                }))
            })
            .collect()
    })
}

/// The review summaries (IDs, mean and median score) of these submissions, read where the
/// context reads: one query.
pub async fn summaries(
    ctx: &Ctx<'_>,
    submissions: &[i64],
) -> Result<HashMap<i64, Summary>, ApiError> {
    Ok(match ctx.db {
        Conn::Pool(db) => reviews::summaries(db, submissions).await?,
        Conn::Txn(txn) => reviews::summaries(txn, submissions).await?,
    })
}

/// A new review.
#[derive(Object)]
#[oai(rename = "TalkReviewCreate")]
pub struct ReviewCreate {
    /// The code of the submission reviewed: one the caller may review, submitted, and not
    /// reviewed by them yet.
    #[oai(validator(min_length = 1, max_length = 16))]
    pub submission: String,
    /// The text.
    #[oai(nullable, validator(max_length = 100000))]
    pub text: MaybeUndefined<String>,
    /// The IDs of the values given (`score-categories/`), one per category; every required
    /// category that applies to the submission needs one.
    #[oai(validator(max_items = 100))]
    pub scores: Option<Vec<i64>>,
}

/// A change of a review (PUT and PATCH alike: fields left out keep their values).
#[derive(Object)]
#[oai(rename = "TalkReviewChange")]
pub struct ReviewChange {
    /// The text.
    #[oai(nullable, validator(max_length = 100000))]
    pub text: MaybeUndefined<String>,
    /// The IDs of the values given, replacing them.
    #[oai(validator(max_items = 100))]
    pub scores: Option<Vec<i64>>,
}

impl From<ReviewChange> for ReviewChanges {
    fn from(body: ReviewChange) -> Self {
        Self {
            text: patched(body.text),
            scores: body.scores,
        }
    }
}

async fn review_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
    may: fn(&TalkEvent) -> bool,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(&state.db, slug, ENDPOINT, action, may, may)
        .await?)
}

/// Changes the caller's review by a PUT or PATCH body; gives it as the API shows it.
async fn change(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
    body: ReviewChange,
) -> Result<Shaped<ReviewOut>, ApiError> {
    let ev = review_event(state, talk, slug, Action::Update, reviews::may_read).await?;
    let ctx = Ctx::new(state, &ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let found = reviews::stored(&txn, &ev, id, true).await?;
    reviews::update(&txn, &ev, &found, body.into()).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &expansion(None)?)
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Review operations.
pub struct ReviewsApi;

#[OpenApi(tag = "TalkTag::Reviews")]
impl ReviewsApi {
    /// List reviews
    ///
    /// For organisers of the call for papers (every review but those of their own
    /// submissions), and for reviewers while the review phase shows other reviews always
    /// (the reviews of the submissions they may review); 403 otherwise.
    #[oai(path = "/api/events/:event/reviews", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_reviews(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Only reviews of the submission with this code.
        #[oai(validator(max_length = 16))]
        submission: Query<Option<String>>,
        /// Only reviews by the reviewer with this code; while reviewers' names are hidden
        /// from the caller, only their own code (else 400).
        #[oai(validator(max_length = 16))]
        user: Query<Option<String>>,
        /// Only reviews of submissions of the speaker with this code.
        #[oai(validator(max_length = 16))]
        speaker: Query<Option<String>>,
        /// Only reviews of submissions in these states (repeat for several).
        #[oai(name = "submission__state")]
        submission_state: Query<Option<Vec<State>>>,
        /// Only reviews of submissions with these pending states (repeat for several).
        #[oai(name = "submission__pending_state")]
        submission_pending_state: Query<Option<Vec<State>>>,
        /// Only reviews of submissions of this track (ID).
        #[oai(name = "submission__track")]
        submission_track: Query<Option<i64>>,
        /// Only reviews of submissions of this session type (ID).
        #[oai(name = "submission__submission_type")]
        submission_submission_type: Query<Option<i64>>,
        /// Only reviews of submissions in this language.
        #[oai(name = "submission__content_locale", validator(max_length = 32))]
        submission_content_locale: Query<Option<String>>,
        /// Text the submission's title (or, where reviewers' names are shown, the
        /// reviewer's name) contains.
        q: Query<Option<String>>,
        /// Order: `id` (default) or `created`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Fields to expand: `user`, `scores.category`, `submission`, `submission.speakers`,
        /// `submission.track`, `submission.submission_type`, `submission.tags`,
        /// `answers.question`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<ReviewOut>>>> {
        let ev = review_event(&state, &talk, &event, Action::List, reviews::may_list).await?;
        let expand = expansion(expand.as_deref())?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_reviews r JOIN talk_submissions s ON s.id = r.submission_id \
             JOIN users u ON u.id = r.user_id",
            "r.id",
            "r.event_id",
            ev.event.id,
            "r.id",
        );
        listing.condition(&reviewable(&ev, "s"));
        if let Some(code) = user.0 {
            if !names_visible(&ev) && !reviews::is_own_code(&state.db, &ev, &code).await? {
                return Err(ApiError::field(
                    "user",
                    "Select a valid choice. That choice is not one of the available choices.",
                )
                .into());
            }
            listing.filter("u.code = {}", code);
        }
        if let Some(code) = submission.0 {
            listing.filter("UPPER(s.code) = UPPER({})", code);
        }
        if let Some(code) = speaker.0 {
            listing.filter(
                "EXISTS (SELECT 1 FROM talk_submission_speakers fss \
                 JOIN talk_speakers fsp ON fsp.id = fss.speaker_id \
                 WHERE fss.submission_id = s.id AND UPPER(fsp.code) = UPPER({}))",
                code,
            );
        }
        let names = |states: Option<Vec<State>>| -> Vec<String> {
            states
                .into_iter()
                .flatten()
                .map(|s| s.name().to_owned())
                .collect()
        };
        listing
            .one_of("s.state", &names(submission_state.0))
            .one_of("s.pending_state", &names(submission_pending_state.0));
        if let Some(track) = submission_track.0 {
            listing.filter("s.track_id = {}", track);
        }
        if let Some(kind) = submission_submission_type.0 {
            listing.filter("s.submission_type_id = {}", kind);
        }
        if let Some(locale) = submission_content_locale.0 {
            listing.filter("s.content_locale = {}", locale);
        }
        let searched: &[&str] = if names_visible(&ev) {
            &["s.title", "u.fullname"]
        } else {
            &["s.title"]
        };
        listing
            .search(q.as_deref(), searched)
            .order(o.as_deref(), &[("id", "r.id"), ("created", "r.created")]);
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a review
    ///
    /// To its author, to organisers of the call for papers, and to reviewers as the
    /// review phase's `can_see_other_reviews` says (403 otherwise).
    #[oai(path = "/api/events/:event/reviews/:id", method = "get")]
    async fn get_review(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The review's ID.
        id: Path<i64>,
        /// Fields to expand: `user`, `scores.category`, `submission` (and inside it
        /// `speakers`, `track`, `submission_type`, `tags`), `answers.question`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<ReviewOut>>> {
        let ev = review_event(&state, &talk, &event, Action::Retrieve, reviews::may_read).await?;
        let expand = expansion(expand.as_deref())?;
        let found = reviews::stored(&state.db, &ev, *id, false).await?;
        if !reviews::may_see(&state.db, &ev, &found).await? {
            return Err(ev.caller.deny().into());
        }
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, (*id).into(), &expand).await?))
    }

    /// Create a review
    ///
    /// For reviewers while the review phase allows reviewing (403 otherwise): of a
    /// submitted submission they may review and have not reviewed yet (400 otherwise: a
    /// second review, even sent at the same time, is 400), never their own.
    #[oai(path = "/api/events/:event/reviews", method = "post")]
    async fn create_review(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<ReviewCreate>,
    ) -> TalkResult<Created<Shaped<ReviewOut>>> {
        let ev = review_event(&state, &talk, &event, Action::Create, reviews::may_write).await?;
        let body = body.0;
        let new = NewReview {
            submission: body.submission,
            text: patched(body.text).flatten(),
            scores: body.scores.unwrap_or_default(),
        };
        let ctx = Ctx::new(&state, &ev, None).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let id = reviews::create(&txn, &ev, new).await?;
        let out = ctx
            .within(&txn)
            .one(&KIND, id.into(), &expansion(None)?)
            .await?;
        crate::db::commit(txn).await?;
        Ok(Created::Created(Json(out)))
    }

    /// Change a review
    ///
    /// Its author's, while its submission is submitted and the review phase allows
    /// reviewing (403 otherwise). Changes the fields the body sends.
    #[oai(path = "/api/events/:event/reviews/:id", method = "patch")]
    async fn patch_review(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The review's ID.
        id: Path<i64>,
        body: JsonBody<ReviewChange>,
    ) -> TalkResult<Json<Shaped<ReviewOut>>> {
        Ok(Json(change(&state, &talk, &event, *id, body.0).await?))
    }

    /// Replace a review
    ///
    /// As PATCH: fields left out keep their values (the submission never changes).
    #[oai(path = "/api/events/:event/reviews/:id", method = "put")]
    async fn put_review(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The review's ID.
        id: Path<i64>,
        body: JsonBody<ReviewChange>,
    ) -> TalkResult<Json<Shaped<ReviewOut>>> {
        Ok(Json(change(&state, &talk, &event, *id, body.0).await?))
    }

    /// Delete a review
    ///
    /// Its author's, while its submission is submitted and the review phase allows
    /// reviewing (403 otherwise); with its answers.
    #[oai(path = "/api/events/:event/reviews/:id", method = "delete")]
    async fn delete_review(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The review's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = review_event(&state, &talk, &event, Action::Destroy, reviews::may_read).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        let found = reviews::stored(&txn, &ev, *id, true).await?;
        reviews::delete(&txn, &ev, &found).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A review's activity log
    ///
    /// Newest first; for whoever may see the review.
    #[oai(path = "/api/events/:event/reviews/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn review_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The review's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = review_event(&state, &talk, &event, Action::Retrieve, reviews::may_read).await?;
        let found = reviews::stored(&state.db, &ev, *id, false).await?;
        if !reviews::may_see(&state.db, &ev, &found).await? {
            return Err(ev.caller.deny().into());
        }
        Ok(Json(
            log_page(&state, req, &ev, OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
