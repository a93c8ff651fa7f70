//! Reviews of submissions, as pretalx has them: a reviewer writes at most one review per
//! submission (a unique index turns a concurrent second one into 400), with a text and
//! scores, one value per score category. Its score is the sum of the values given in the
//! categories that apply to the submission (active, and of its track when limited to
//! tracks), each times its category's weight ([`total`]); organisers see each submission's
//! mean and median ([`Summary`]).
//!
//! Who may do what follows pretalx's rules, with the event's active review phase
//! ([`super::review_phases`]):
//! - the reviews a caller sees are those of the submissions they may review
//!   ([`reviewable`]): for reviewers, those of their teams' tracks while a phase is active;
//!   for organisers of the call for papers, all; never those of their own submissions;
//! - listing needs an organiser, or a reviewer in a phase that shows other reviews always
//!   ([`may_list`]); one review is shown to its author, to organisers, and to reviewers as
//!   the phase's `can_see_other_reviews` says ([`may_see`]);
//! - reviewers write reviews while the phase allows reviewing ([`may_write`]), of submitted
//!   submissions, and change and delete only their own ([`may_change`]);
//! - reviewers' names are shown to organisers, and to reviewers while the phase allows it
//!   ([`names_visible`]).
//!
//! Score categories and their values are configured by organisers of the event's settings
//! ([`may_configure`]); a change recomputes the scores of the event's reviews
//! ([`recompute`]). Every change writes an entry to the object's activity log.

use std::collections::HashMap;

use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend};
use serde_json::{Value, json};

use super::access::{TalkEvent, not_found};
use super::log::{self as talk_log, Change};
use super::review_phases::{OtherReviews, Phase};
use super::sql::{first, ids_in, rows};
use super::submission_state::State;
use crate::domain::files;
use crate::domain::permissions::Permission;
use crate::domain::refusal::Refusal;
use crate::values::FieldErrors;

/// The object type of reviews in the activity log.
pub const OBJECT: &str = "review";

/// The object type of score categories in the activity log.
pub const CATEGORY_OBJECT: &str = "score_category";

/// Most values one score category may offer.
pub const MAX_SCORE_VALUES: usize = 100;

/// Largest magnitude of a score value, in hundredths (99999.99, as pretalx's seven digits).
pub const MAX_VALUE: i64 = 9_999_999;

/// Largest weight of a score category, in hundredths (999.9, as pretalx's four digits).
pub const MAX_WEIGHT: i64 = 99_990;

/// Most scores one review may give.
pub const MAX_SCORES: usize = 100;

fn phase(ev: &TalkEvent) -> Option<&Phase> {
    ev.review_phase.as_ref()
}

/// Who may read reviews at all: organisers of the call for papers and reviewers (which
/// reviews, and whether as a list, [`may_list`] and [`may_see`] say).
pub fn may_read(ev: &TalkEvent) -> bool {
    ev.role.is_orga() || ev.role.is_reviewer()
}

/// Who may list reviews: organisers of the call for papers, and reviewers while the active
/// phase shows them every other review (pretalx's `list_all_review`).
pub fn may_list(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
        || (ev.role.is_reviewer()
            && phase(ev).is_some_and(|p| p.can_see_other_reviews == OtherReviews::Always))
}

/// Who may write reviews: reviewers, while the active phase allows reviewing.
pub fn may_write(ev: &TalkEvent) -> bool {
    ev.role.is_reviewer() && phase(ev).is_some_and(|p| p.can_review)
}

/// Whether the caller sees who wrote reviews: organisers of the call for papers, and
/// reviewers while the active phase shows reviewers' names.
pub fn names_visible(ev: &TalkEvent) -> bool {
    ev.role.is_orga()
        || (ev.role.is_reviewer() && phase(ev).is_some_and(|p| p.can_see_reviewer_names))
}

/// Who may read the score categories and review phases: organisers and reviewers.
pub fn may_read_settings(ev: &TalkEvent) -> bool {
    may_read(ev) || may_configure(ev)
}

/// Who may change score categories and review phases: organisers of the event's settings,
/// as pretalx's review settings.
pub fn may_configure(ev: &TalkEvent) -> bool {
    ev.role.permissions.has(Permission::ChangeEventSettings)
}

/// The SQL condition of the submissions (alias `s`) whose reviews the caller sees and which
/// they may review, pretalx's review context: a reviewer's are those of their teams'
/// tracks while a phase is active; an organiser's who does not review, all; nobody's
/// include their own submissions.
pub fn reviewable(ev: &TalkEvent, s: &str) -> String {
    let Some(user) = ev.user_id() else {
        return "1 = 0".into();
    };
    let not_own = format!(
        "NOT EXISTS (SELECT 1 FROM talk_submission_speakers own_ss \
         JOIN talk_speakers own_sp ON own_sp.id = own_ss.speaker_id \
         WHERE own_ss.submission_id = {s}.id AND own_sp.user_id = {user})"
    );
    let role = &ev.role;
    if role.is_reviewer() {
        if phase(ev).is_none() {
            return "1 = 0".into();
        }
        if role.review_tracks.is_empty() {
            return not_own;
        }
        let ids: Vec<String> = role.review_tracks.iter().map(i64::to_string).collect();
        return format!("({s}.track_id IN ({}) AND {not_own})", ids.join(", "));
    }
    if role.is_orga() {
        return not_own;
    }
    "1 = 0".into()
}

/// A stored review, as far as the rules need it.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Internal ID.
    pub id: i64,
    /// Its submission's ID.
    pub submission: i64,
    /// Its submission's code.
    pub submission_code: String,
    /// Its submission's state.
    pub state: State,
    /// Its submission's track.
    pub track: Option<i64>,
    /// Its author.
    pub user: i64,
    /// Its text.
    pub text: Option<String>,
}

/// The event's review `id` among those the caller sees ([`reviewable`]); 404 otherwise.
/// With `lock` (in a write's transaction) the review's row is locked (PostgreSQL).
pub async fn stored(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    id: i64,
    lock: bool,
) -> Result<Stored, Refusal> {
    let lock = if lock && db.get_database_backend() == DbBackend::Postgres {
        " FOR UPDATE OF r"
    } else {
        ""
    };
    let sql = format!(
        "SELECT r.id, r.submission_id, s.code, s.state, s.track_id, r.user_id, r.text \
         FROM talk_reviews r JOIN talk_submissions s ON s.id = r.submission_id \
         WHERE r.id = $1 AND r.event_id = $2 AND {}{lock}",
        reviewable(ev, "s")
    );
    let r = first(db, &sql, vec![id.into(), ev.event.id.into()])
        .await?
        .ok_or_else(not_found)?;
    let state: String = r.try_get("", "state")?;
    Ok(Stored {
        id: r.try_get("", "id")?,
        submission: r.try_get("", "submission_id")?,
        submission_code: r.try_get("", "code")?,
        state: State::from_name(&state).unwrap_or(State::Submitted),
        track: r.try_get("", "track_id")?,
        user: r.try_get("", "user_id")?,
        text: r.try_get("", "text")?,
    })
}

/// Whether `code` is the caller's own user code.
pub async fn is_own_code(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    code: &str,
) -> Result<bool, Refusal> {
    let Some(user) = ev.user_id() else {
        return Ok(false);
    };
    Ok(first(
        db,
        "SELECT id FROM users WHERE id = $1 AND code = $2",
        vec![user.into(), code.into()],
    )
    .await?
    .is_some())
}

/// Whether the caller may see this review: its author, organisers of the call for papers,
/// and reviewers as the active phase's `can_see_other_reviews` says (after reviewing: when
/// they have reviewed the submission themselves).
pub async fn may_see(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    review: &Stored,
) -> Result<bool, Refusal> {
    if ev.user_id() == Some(review.user) || ev.role.is_orga() {
        return Ok(true);
    }
    if !ev.role.is_reviewer() {
        return Ok(false);
    }
    Ok(match phase(ev).map(|p| p.can_see_other_reviews) {
        Some(OtherReviews::Always) => true,
        Some(OtherReviews::AfterReview) => first(
            db,
            "SELECT id FROM talk_reviews WHERE submission_id = $1 AND user_id = $2",
            vec![
                review.submission.into(),
                ev.user_id().unwrap_or_default().into(),
            ],
        )
        .await?
        .is_some(),
        _ => false,
    })
}

/// Whether a submission in `state` may be reviewed now: it is submitted and the active
/// phase allows reviewing.
fn can_be_reviewed(ev: &TalkEvent, state: State) -> bool {
    state == State::Submitted && phase(ev).is_some_and(|p| p.can_review)
}

/// Whether the caller may change or delete this review: its author, reviewing the event,
/// while the submission may be reviewed.
pub fn may_change(ev: &TalkEvent, review: &Stored) -> bool {
    ev.user_id() == Some(review.user) && ev.role.is_reviewer() && can_be_reviewed(ev, review.state)
}

/// The score of a review: the sum of its values times their categories' weights (all in
/// hundredths), rounded half to even to hundredths; `None` when it gives no value.
pub fn total(given: impl IntoIterator<Item = (i64, i64)>) -> Option<i64> {
    let mut any = false;
    let mut sum: i128 = 0;
    for (value, weight) in given {
        any = true;
        sum += i128::from(value) * i128::from(weight);
    }
    any.then(|| i64::try_from(div_half_even(sum, 100)).unwrap_or(i64::MAX))
}

/// `n / d` (with `d > 0`) rounded half to even.
fn div_half_even(n: i128, d: i128) -> i128 {
    let q = n.div_euclid(d);
    let r = n.rem_euclid(d);
    match (2 * r).cmp(&d) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

/// Hundredths as a decimal string with two places, e.g. `"3.00"`.
pub fn decimal(hundredths: i64) -> String {
    crate::values::Money(hundredths).to_decimal_string()
}

/// A weight in hundredths (a multiple of ten) as a decimal with one place, e.g. `"1.0"`.
pub fn weight_decimal(hundredths: i64) -> String {
    let tenths = hundredths / 10;
    let sign = if tenths < 0 { "-" } else { "" };
    let abs = tenths.unsigned_abs();
    format!("{sign}{}.{}", abs / 10, abs % 10)
}

/// What organisers see of a submission's reviews.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The reviews' IDs, oldest first.
    pub reviews: Vec<i64>,
    /// The mean of the reviews' scores, to one place (half to even); `None` without scores.
    pub mean: Option<f64>,
    /// The median of the reviews' scores; `None` without scores.
    pub median: Option<f64>,
}

impl Summary {
    /// The summary of these reviews (ID and score in hundredths), oldest first.
    pub fn of(reviews: &[(i64, Option<i64>)]) -> Self {
        let mut scores: Vec<i64> = reviews.iter().filter_map(|(_, s)| *s).collect();
        scores.sort_unstable();
        let n = scores.len() as i128;
        let mean = (n > 0).then(|| {
            let sum: i128 = scores.iter().map(|s| i128::from(*s)).sum();
            div_half_even(sum, 10 * n) as f64 / 10.0
        });
        let median = match scores.len() {
            0 => None,
            len if len % 2 == 1 => Some(scores[len / 2] as f64 / 100.0),
            len => Some((scores[len / 2 - 1] + scores[len / 2]) as f64 / 200.0),
        };
        Self {
            reviews: reviews.iter().map(|(id, _)| *id).collect(),
            mean,
            median,
        }
    }
}

/// The review summaries of these submissions, by submission ID: one query.
pub async fn summaries(
    db: &impl ConnectionTrait,
    submissions: &[i64],
) -> Result<HashMap<i64, Summary>, Refusal> {
    if submissions.is_empty() {
        return Ok(HashMap::new());
    }
    let (ids, values) = ids_in(submissions, 0);
    let sql = format!(
        "SELECT submission_id, id, score FROM talk_reviews WHERE submission_id IN {ids} \
         ORDER BY id"
    );
    let mut by_submission: HashMap<i64, Vec<(i64, Option<i64>)>> = HashMap::new();
    for r in rows(db, &sql, values).await? {
        by_submission
            .entry(r.try_get("", "submission_id")?)
            .or_default()
            .push((r.try_get("", "id")?, r.try_get("", "score")?));
    }
    Ok(by_submission
        .into_iter()
        .map(|(s, reviews)| (s, Summary::of(&reviews)))
        .collect())
}

/// A score category as the rules of reviews need it.
#[derive(Debug, Clone)]
struct Category {
    id: i64,
    weight: i64,
    required: bool,
    active: bool,
    tracks: Vec<i64>,
    /// Its values: ID and value.
    values: Vec<(i64, i64)>,
}

impl Category {
    /// Whether reviews of a submission of `track` use it: it is active, and limited to no
    /// track or to this one.
    fn applies_to(&self, track: Option<i64>) -> bool {
        self.active && (self.tracks.is_empty() || track.is_some_and(|t| self.tracks.contains(&t)))
    }
}

/// The event's score categories, with their tracks and (when `with_values`) their values:
/// one or two queries.
async fn categories(
    db: &impl ConnectionTrait,
    event_id: i64,
    with_values: bool,
) -> Result<Vec<Category>, Refusal> {
    let mut found: Vec<Category> = Vec::new();
    for r in rows(
        db,
        "SELECT c.id, c.weight, c.required, c.active, ct.track_id \
         FROM talk_score_categories c \
         LEFT JOIN talk_score_category_tracks ct ON ct.category_id = c.id \
         WHERE c.event_id = $1 ORDER BY c.id",
        vec![event_id.into()],
    )
    .await?
    {
        let id: i64 = r.try_get("", "id")?;
        if found.last().is_none_or(|c| c.id != id) {
            found.push(Category {
                id,
                weight: r.try_get("", "weight")?,
                required: r.try_get("", "required")?,
                active: r.try_get("", "active")?,
                tracks: Vec::new(),
                values: Vec::new(),
            });
        }
        if let (Some(c), Some(track)) =
            (found.last_mut(), r.try_get::<Option<i64>>("", "track_id")?)
        {
            c.tracks.push(track);
        }
    }
    if with_values && !found.is_empty() {
        for r in rows(
            db,
            "SELECT sc.id, sc.category_id, sc.value FROM talk_scores sc \
             JOIN talk_score_categories c ON c.id = sc.category_id WHERE c.event_id = $1",
            vec![event_id.into()],
        )
        .await?
        {
            let category: i64 = r.try_get("", "category_id")?;
            if let Some(c) = found.iter_mut().find(|c| c.id == category) {
                c.values
                    .push((r.try_get("", "id")?, r.try_get("", "value")?));
            }
        }
    }
    Ok(found)
}

/// Checks the values a review of a submission of `track` gives: each a value of a category
/// that applies to the submission, at most one per category, one in every required
/// category that applies. 400 on `scores` otherwise.
fn check_scores(categories: &[Category], track: Option<i64>, given: &[i64]) -> Result<(), Refusal> {
    let mut used: Vec<i64> = Vec::new();
    for id in given {
        let Some(c) = categories
            .iter()
            .find(|c| c.values.iter().any(|(v, _)| v == id))
        else {
            return Err(Refusal::field(
                "scores",
                format!("Invalid pk \"{id}\" - object does not exist."),
            ));
        };
        if !c.applies_to(track) {
            return Err(Refusal::field(
                "scores",
                format!("Score category {} does not apply to this submission.", c.id),
            ));
        }
        if used.contains(&c.id) {
            return Err(Refusal::field(
                "scores",
                "You can only assign one score per category!",
            ));
        }
        used.push(c.id);
    }
    if let Some(c) = categories
        .iter()
        .find(|c| c.required && c.applies_to(track) && !used.contains(&c.id))
    {
        return Err(Refusal::field(
            "scores",
            format!("Score category {} requires a score.", c.id),
        ));
    }
    Ok(())
}

/// Values given in a review with their categories' weights, in hundredths.
type Weighted = Vec<(i64, i64)>;

/// Which reviews [`recompute`] recomputes.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Every review of the event.
    Event,
    /// The reviews of one submission.
    Submission(i64),
    /// One review.
    Review(i64),
}

/// Recomputes the score of the event's reviews in `scope` from the values they give and the
/// categories that apply now ([`total`]), and writes those that changed: two queries, and
/// one per changed review.
pub async fn recompute(
    db: &impl ConnectionTrait,
    event_id: i64,
    scope: Scope,
) -> Result<(), Refusal> {
    let (condition, mut values): (&str, Vec<sea_orm::Value>) = match scope {
        Scope::Event => ("", vec![]),
        Scope::Submission(id) => (" AND r.submission_id = $2", vec![id.into()]),
        Scope::Review(id) => (" AND r.id = $2", vec![id.into()]),
    };
    values.insert(0, event_id.into());
    let sql = format!(
        "SELECT r.id, r.score, s.track_id, sc.category_id, sc.value FROM talk_reviews r \
         JOIN talk_submissions s ON s.id = r.submission_id \
         LEFT JOIN talk_review_scores rs ON rs.review_id = r.id \
         LEFT JOIN talk_scores sc ON sc.id = rs.score_id \
         WHERE r.event_id = $1{condition} ORDER BY r.id"
    );
    let found = rows(db, &sql, values).await?;
    if found.is_empty() {
        return Ok(());
    }
    let categories = categories(db, event_id, false).await?;
    // (review, stored score, [(value, weight)]) in ID order.
    let mut reviews: Vec<(i64, Option<i64>, Weighted)> = Vec::new();
    for r in found {
        let id: i64 = r.try_get("", "id")?;
        if reviews.last().is_none_or(|(last, ..)| *last != id) {
            reviews.push((id, r.try_get("", "score")?, Vec::new()));
        }
        let track: Option<i64> = r.try_get("", "track_id")?;
        let category: Option<i64> = r.try_get("", "category_id")?;
        let value: Option<i64> = r.try_get("", "value")?;
        if let (Some(category), Some(value), Some((.., given))) =
            (category, value, reviews.last_mut())
            && let Some(c) = categories
                .iter()
                .find(|c| c.id == category && c.applies_to(track))
        {
            given.push((value, c.weight));
        }
    }
    for (id, stored, given) in reviews {
        let score = total(given);
        if score != stored {
            crate::db::execute(
                db,
                "UPDATE talk_reviews SET score = $1 WHERE id = $2",
                [score.into(), id.into()],
            )
            .await?;
        }
    }
    Ok(())
}

/// A new review, as sent.
#[derive(Debug, Clone, Default)]
pub struct NewReview {
    /// The submission's code, in any case.
    pub submission: String,
    /// The text.
    pub text: Option<String>,
    /// The IDs of the values it gives.
    pub scores: Vec<i64>,
}

/// The 400 of a second review of a submission by the same reviewer.
fn already_reviewed() -> Refusal {
    Refusal::field("submission", "You have already reviewed this submission.")
}

/// Writes the caller's review of a submission they may review ([`reviewable`]; 400 on
/// `submission` otherwise), a submitted one, which they have not reviewed yet (400; a
/// concurrent second review finds the unique index and is 400 too), with its values
/// ([`check_scores`]) and score, and its log entry; 403 unless the caller may write
/// ([`may_write`]). Gives the review's ID.
pub async fn create(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    new: NewReview,
) -> Result<i64, Refusal> {
    if !may_write(ev) {
        return Err(ev.caller.deny());
    }
    let user = ev.caller.user_id()?;
    let sql = format!(
        "SELECT s.id, s.code, s.state, s.track_id FROM talk_submissions s \
         WHERE s.event_id = $1 AND UPPER(s.code) = $2 AND {}",
        reviewable(ev, "s")
    );
    let Some(s) = first(
        txn,
        &sql,
        vec![ev.event.id.into(), new.submission.to_uppercase().into()],
    )
    .await?
    else {
        return Err(Refusal::field(
            "submission",
            format!("Object with code={} does not exist.", new.submission),
        ));
    };
    let submission: i64 = s.try_get("", "id")?;
    let code: String = s.try_get("", "code")?;
    let state: String = s.try_get("", "state")?;
    if State::from_name(&state) != Some(State::Submitted) {
        return Err(Refusal::field(
            "submission",
            "Only submitted submissions can be reviewed.",
        ));
    }
    let mine = "SELECT id FROM talk_reviews WHERE submission_id = $1 AND user_id = $2";
    if first(txn, mine, vec![submission.into(), user.into()])
        .await?
        .is_some()
    {
        return Err(already_reviewed());
    }
    let track: Option<i64> = s.try_get("", "track_id")?;
    check_scores(
        &categories(txn, ev.event.id, true).await?,
        track,
        &new.scores,
    )?;
    let now = crate::values::now();
    let inserted = first(
        txn,
        "INSERT INTO talk_reviews (event_id, submission_id, user_id, text, created, updated) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, submission_id) DO NOTHING \
         RETURNING id",
        vec![
            ev.event.id.into(),
            submission.into(),
            user.into(),
            new.text.clone().into(),
            now.into(),
            now.into(),
        ],
    )
    .await?
    .ok_or_else(already_reviewed)?;
    let id: i64 = inserted.try_get("", "id")?;
    let score = set_scores(txn, ev, id, &new.scores).await?;
    let data = json!({
        "submission": code,
        "text": new.text,
        "scores": new.scores,
        "score": score.map(decimal),
    });
    talk_log::write(txn, Change::new(ev, OBJECT, id, "create", data)).await?;
    Ok(id)
}

/// Replaces the values a review gives and recomputes its score; gives the score.
async fn set_scores(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    review: i64,
    scores: &[i64],
) -> Result<Option<i64>, Refusal> {
    crate::db::execute(
        txn,
        "DELETE FROM talk_review_scores WHERE review_id = $1",
        [review.into()],
    )
    .await?;
    for score in scores {
        crate::db::execute(
            txn,
            "INSERT INTO talk_review_scores (review_id, score_id) VALUES ($1, $2)",
            [review.into(), (*score).into()],
        )
        .await?;
    }
    recompute(txn, ev.event.id, Scope::Review(review)).await?;
    let row = first(
        txn,
        "SELECT score FROM talk_reviews WHERE id = $1",
        vec![review.into()],
    )
    .await?;
    Ok(row.map(|r| r.try_get("", "score")).transpose()?.flatten())
}

/// What a change of a review sends: `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct ReviewChanges {
    /// The text; `Some(None)` clears it.
    pub text: Option<Option<String>>,
    /// The IDs of the values it gives, replacing them.
    pub scores: Option<Vec<i64>>,
}

/// Changes the caller's own review ([`may_change`], else 403) with its log entry.
pub async fn update(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    review: &Stored,
    changes: ReviewChanges,
) -> Result<(), Refusal> {
    if !may_change(ev, review) {
        return Err(ev.caller.deny());
    }
    let mut data = serde_json::Map::new();
    if let Some(text) = changes.text {
        crate::db::execute(
            txn,
            "UPDATE talk_reviews SET text = $1 WHERE id = $2",
            [text.clone().into(), review.id.into()],
        )
        .await?;
        data.insert("text".into(), json!(text));
    }
    if let Some(scores) = changes.scores {
        check_scores(
            &categories(txn, ev.event.id, true).await?,
            review.track,
            &scores,
        )?;
        let score = set_scores(txn, ev, review.id, &scores).await?;
        data.insert("scores".into(), json!(scores));
        data.insert("score".into(), json!(score.map(decimal)));
    }
    crate::db::execute(
        txn,
        "UPDATE talk_reviews SET updated = $1 WHERE id = $2",
        [crate::values::now().into(), review.id.into()],
    )
    .await?;
    talk_log::write(
        txn,
        Change::new(ev, OBJECT, review.id, "update", Value::Object(data)),
    )
    .await?;
    Ok(())
}

/// Deletes the caller's own review ([`may_change`], else 403) with its answers (and their
/// files) and its log entry.
pub async fn delete(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    review: &Stored,
) -> Result<(), Refusal> {
    if !may_change(ev, review) {
        return Err(ev.caller.deny());
    }
    let mut references = Vec::new();
    for r in rows(
        txn,
        "SELECT answer_file FROM talk_answers WHERE review_id = $1",
        vec![review.id.into()],
    )
    .await?
    {
        references.extend(r.try_get::<Option<String>>("", "answer_file")?);
    }
    crate::db::execute(
        txn,
        "DELETE FROM talk_answers WHERE review_id = $1",
        [review.id.into()],
    )
    .await?;
    crate::db::execute(
        txn,
        "DELETE FROM talk_reviews WHERE id = $1",
        [review.id.into()],
    )
    .await?;
    files::forget(txn, &references).await?;
    let data = json!({"submission": review.submission_code, "text": review.text});
    talk_log::write(txn, Change::new(ev, OBJECT, review.id, "delete", data)).await?;
    Ok(())
}

/// The stored fields of a score category.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CategoryFields {
    /// Name: the stored multi-language object.
    pub name: Value,
    /// Weight in hundredths (a multiple of ten).
    pub weight: i64,
    /// Reviews must give a value in it.
    pub required: bool,
    /// Reviews use it.
    pub active: bool,
    /// Its values are shown apart and do not count towards the score (weight 0).
    pub is_independent: bool,
    /// The tracks it applies to; empty for all.
    pub limit_tracks: Vec<i64>,
}

impl CategoryFields {
    /// A new category's fields before its body is applied: weight 1.0, active.
    pub fn new() -> Self {
        Self {
            weight: 100,
            active: true,
            ..Self::default()
        }
    }
}

/// A value a score category offers, as sent: an existing one (by ID) to change, or a new one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoreValue {
    /// The existing value's ID.
    pub id: Option<i64>,
    /// The value, in hundredths.
    pub value: i64,
    /// Its label.
    pub label: Option<String>,
}

/// The fields of score category `id` of the event; 404 when it has none.
pub async fn category(
    db: &impl ConnectionTrait,
    ev: &TalkEvent,
    id: i64,
) -> Result<CategoryFields, Refusal> {
    let r = first(
        db,
        "SELECT name, weight, required, active, is_independent FROM talk_score_categories \
         WHERE id = $1 AND event_id = $2",
        vec![id.into(), ev.event.id.into()],
    )
    .await?
    .ok_or_else(not_found)?;
    let tracks = rows(
        db,
        "SELECT track_id FROM talk_score_category_tracks WHERE category_id = $1 ORDER BY track_id",
        vec![id.into()],
    )
    .await?;
    Ok(CategoryFields {
        name: r
            .try_get::<Option<Value>>("", "name")?
            .unwrap_or(Value::Null),
        weight: r.try_get("", "weight")?,
        required: r.try_get("", "required")?,
        active: r.try_get("", "active")?,
        is_independent: r.try_get("", "is_independent")?,
        limit_tracks: tracks
            .iter()
            .map(|t| t.try_get("", "track_id"))
            .collect::<Result<_, _>>()?,
    })
}

/// The fields of score category `id` of the event for a change, the event's row locked
/// first (PostgreSQL) so that changes of its review settings run one after the other; 404
/// when it has none.
pub async fn locked_category(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: i64,
) -> Result<CategoryFields, Refusal> {
    lock_event(txn, ev).await?;
    category(txn, ev, id).await
}

/// Locks the event's row (PostgreSQL), so that writes of its review settings run one after
/// the other.
async fn lock_event(txn: &DatabaseTransaction, ev: &TalkEvent) -> Result<(), Refusal> {
    if txn.get_database_backend() == DbBackend::Postgres {
        crate::db::execute(
            txn,
            "SELECT id FROM events WHERE id = $1 FOR NO KEY UPDATE",
            [ev.event.id.into()],
        )
        .await?;
    }
    Ok(())
}

/// 400 (on `field`, or as a detail) when another category of the event exists but none of
/// them counts towards the score (pretalx keeps one that is not independent).
async fn check_one_counts(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: i64,
    field: Option<&str>,
) -> Result<(), Refusal> {
    let others = rows(
        txn,
        "SELECT is_independent FROM talk_score_categories WHERE event_id = $1 AND id <> $2",
        vec![ev.event.id.into(), id.into()],
    )
    .await?;
    let mut counting = false;
    for r in &others {
        counting |= !r.try_get::<bool>("", "is_independent")?;
    }
    if !others.is_empty() && !counting {
        let message = "You need to keep at least one non-independent score category!";
        return Err(match field {
            Some(field) => Refusal::field(field, message),
            None => Refusal::bad_request(message),
        });
    }
    Ok(())
}

/// Checks a category's fields and values: the weight (0 to 999.9, one place; 0 for an
/// independent category), the tracks (the event's), the values (unique, within range, the
/// category's own when they name an ID). 400 with field errors.
async fn check_category(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: Option<i64>,
    f: &mut CategoryFields,
    values: Option<&[ScoreValue]>,
) -> Result<(), Refusal> {
    let mut errors = FieldErrors::default();
    if f.is_independent {
        f.weight = 0;
    }
    if !(0..=MAX_WEIGHT).contains(&f.weight) {
        errors.push("weight", "Ensure this value is between 0 and 999.9.");
    } else if f.weight % 10 != 0 {
        errors.push(
            "weight",
            "Ensure that there are no more than 1 decimal place.",
        );
    }
    if f.name.as_object().is_none_or(|o| {
        o.values()
            .all(|t| t.as_str().is_none_or(|t| t.trim().is_empty()))
    }) {
        errors.push("name", "This field may not be blank.");
    }
    f.limit_tracks.sort_unstable();
    f.limit_tracks.dedup();
    if !f.limit_tracks.is_empty() {
        let (ids, mut bound) = ids_in(&f.limit_tracks, 1);
        bound.insert(0, ev.event.id.into());
        let sql = format!("SELECT id FROM talk_tracks WHERE event_id = $1 AND id IN {ids}");
        let known: Vec<i64> = rows(txn, &sql, bound)
            .await?
            .iter()
            .map(|r| r.try_get("", "id"))
            .collect::<Result<_, _>>()?;
        if let Some(unknown) = f.limit_tracks.iter().find(|t| !known.contains(t)) {
            errors.push(
                "limit_tracks",
                format!("Invalid pk \"{unknown}\" - object does not exist."),
            );
        }
    }
    if let Some(values) = values {
        let mut seen = Vec::new();
        for v in values {
            if v.value.abs() > MAX_VALUE {
                errors.push(
                    "scores",
                    "Ensure that there are no more than 7 digits in total.",
                );
            }
            if seen.contains(&v.value) {
                errors.push(
                    "scores",
                    format!("The value {} is given twice.", decimal(v.value)),
                );
            }
            seen.push(v.value);
        }
        let named: Vec<i64> = values.iter().filter_map(|v| v.id).collect();
        if !named.is_empty() {
            let own = match id {
                Some(id) => rows(
                    txn,
                    "SELECT id FROM talk_scores WHERE category_id = $1",
                    vec![id.into()],
                )
                .await?
                .iter()
                .map(|r| r.try_get("", "id"))
                .collect::<Result<Vec<i64>, _>>()?,
                None => Vec::new(),
            };
            if let Some(other) = named.iter().find(|n| !own.contains(n)) {
                errors.push(
                    "scores",
                    format!("Invalid pk \"{other}\" - object does not exist."),
                );
            }
        }
    }
    errors.into_result()?;
    if let Some(id) = id
        && f.is_independent
    {
        check_one_counts(txn, ev, id, Some("is_independent")).await?;
    }
    Ok(())
}

/// Writes a score category (new when `id` is `None`) with its tracks and, when sent, its
/// values (replacing them: values left out are removed, from reviews too), after its checks,
/// with its log entry; recomputes the scores of the event's reviews. Gives its ID.
pub async fn save_category(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: Option<i64>,
    mut f: CategoryFields,
    values: Option<Vec<ScoreValue>>,
) -> Result<i64, Refusal> {
    lock_event(txn, ev).await?;
    check_category(txn, ev, id, &mut f, values.as_deref()).await?;
    let row = vec![
        f.name.clone().into(),
        f.weight.into(),
        f.required.into(),
        f.active.into(),
        f.is_independent.into(),
    ];
    let (id, action) = match id {
        Some(id) => {
            let mut bound = row;
            bound.extend([id.into(), ev.event.id.into()]);
            crate::db::execute(
                txn,
                "UPDATE talk_score_categories SET name = $1, weight = $2, required = $3, \
                 active = $4, is_independent = $5 WHERE id = $6 AND event_id = $7",
                bound,
            )
            .await?;
            (id, "update")
        }
        None => {
            let mut bound = vec![ev.event.id.into()];
            bound.extend(row);
            let id = crate::db::insert_returning_id(
                txn,
                "INSERT INTO talk_score_categories (event_id, name, weight, required, active, \
                 is_independent) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                bound,
            )
            .await?;
            (id, "create")
        }
    };
    crate::db::execute(
        txn,
        "DELETE FROM talk_score_category_tracks WHERE category_id = $1",
        [id.into()],
    )
    .await?;
    for track in &f.limit_tracks {
        crate::db::execute(
            txn,
            "INSERT INTO talk_score_category_tracks (category_id, track_id) VALUES ($1, $2)",
            [id.into(), (*track).into()],
        )
        .await?;
    }
    if let Some(values) = &values {
        let kept: Vec<i64> = values.iter().filter_map(|v| v.id).collect();
        let (keep, mut bound) = ids_in(&kept, 1);
        bound.insert(0, id.into());
        let except = if kept.is_empty() {
            String::new()
        } else {
            format!(" AND id NOT IN {keep}")
        };
        crate::db::execute(
            txn,
            &format!("DELETE FROM talk_scores WHERE category_id = $1{except}"),
            bound,
        )
        .await?;
        for v in values {
            match v.id {
                Some(score) => {
                    crate::db::execute(
                        txn,
                        "UPDATE talk_scores SET value = $1, label = $2 WHERE id = $3",
                        [v.value.into(), v.label.clone().into(), score.into()],
                    )
                    .await?
                }
                None => {
                    crate::db::execute(
                        txn,
                        "INSERT INTO talk_scores (category_id, value, label) VALUES ($1, $2, $3)",
                        [id.into(), v.value.into(), v.label.clone().into()],
                    )
                    .await?
                }
            };
        }
    }
    recompute(txn, ev.event.id, Scope::Event).await?;
    let mut data = serde_json::to_value(&f).unwrap_or_default();
    if let (Some(o), Some(values)) = (data.as_object_mut(), &values) {
        o.insert("scores".into(), json!(values));
    }
    talk_log::write(txn, Change::new(ev, CATEGORY_OBJECT, id, action, data)).await?;
    Ok(id)
}

/// Deletes a score category with its values (reviews lose the values they gave in it and
/// their scores are recomputed), unless the categories left would all be independent (400);
/// logs the deletion.
pub async fn delete_category(
    txn: &DatabaseTransaction,
    ev: &TalkEvent,
    id: i64,
) -> Result<(), Refusal> {
    lock_event(txn, ev).await?;
    let f = category(txn, ev, id).await?;
    check_one_counts(txn, ev, id, None).await?;
    crate::db::execute(
        txn,
        "DELETE FROM talk_score_categories WHERE id = $1",
        [id.into()],
    )
    .await?;
    recompute(txn, ev.event.id, Scope::Event).await?;
    let data = serde_json::to_value(&f).unwrap_or_default();
    talk_log::write(txn, Change::new(ev, CATEGORY_OBJECT, id, "delete", data)).await?;
    Ok(())
}

/// Before a review phase is written active: deactivates the event's other phases, so that
/// one is active at a time (the event's row is locked by the write on PostgreSQL; a
/// partial unique index holds it whatever races).
pub async fn make_only_active(
    txn: &DatabaseTransaction,
    event_id: i64,
    phase: Option<i64>,
) -> Result<(), Refusal> {
    crate::db::execute(
        txn,
        "UPDATE talk_review_phases SET is_active = $1 WHERE event_id = $2 AND is_active \
         AND id <> $3",
        [false.into(), event_id.into(), phase.unwrap_or(0).into()],
    )
    .await?;
    Ok(())
}

/// Checks a review phase's times: its end after its start (400 on `end`).
pub fn check_phase_times(
    start: Option<chrono::DateTime<Utc>>,
    end: Option<chrono::DateTime<Utc>>,
) -> Result<(), Refusal> {
    match (start, end) {
        (Some(s), Some(e)) if s > e => Err(Refusal::field(
            "end",
            "The end of a phase has to be after its start.",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Summary, decimal, total, weight_decimal};

    #[test]
    fn a_score_is_the_weighted_sum_rounded_half_to_even() {
        assert_eq!(total([]), None);
        // 2.00 × 1.0 + 1.00 × 0.5
        assert_eq!(total([(200, 100), (100, 50)]), Some(250));
        // 0.05 × 0.5 = 0.025 → 0.02; 0.15 × 0.5 = 0.075 → 0.08
        assert_eq!(total([(5, 50)]), Some(2));
        assert_eq!(total([(15, 50)]), Some(8));
        assert_eq!(total([(-100, 200)]), Some(-200));
        assert_eq!(
            total([(300, 0)]),
            Some(0),
            "an independent value gives a score of 0"
        );
    }

    #[test]
    fn mean_and_median_follow_pretalx() {
        assert_eq!(Summary::of(&[(1, None)]).mean, None);
        let s = Summary::of(&[(1, Some(100)), (2, Some(200)), (3, None), (4, Some(450))]);
        assert_eq!(s.reviews, vec![1, 2, 3, 4]);
        assert_eq!(s.median, Some(2.0));
        assert_eq!(s.mean, Some(2.5));
        let even = Summary::of(&[(1, Some(100)), (2, Some(125))]);
        assert_eq!(even.median, Some(1.125));
        // 1.125 → 1.1 (half to even at one place)
        assert_eq!(even.mean, Some(1.1));
    }

    #[test]
    fn decimals_show_two_places_and_weights_one() {
        assert_eq!(decimal(300), "3.00");
        assert_eq!(decimal(-5), "-0.05");
        assert_eq!(weight_decimal(100), "1.0");
        assert_eq!(weight_decimal(2550), "25.5");
    }
}
