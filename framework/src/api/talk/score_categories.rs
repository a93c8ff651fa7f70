//! Score categories of reviews: `/api/events/{event}/score-categories/`, each with the values
//! a review may give in it (`scores`) and, optionally, the tracks it applies to. pretalx
//! configures them in its web interface; here organisers of the event's settings do, and
//! organisers of the call for papers and reviewers read them (a reviewer needs the values'
//! IDs to score). Token scopes: those of `reviews`. The rules (weights, values, the
//! recomputed scores of reviews) are [`crate::domain::talk::reviews`]'s.

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
use super::shape::{Expandable, I18nInput, Shaped, TalkText};
use super::tracks::TrackOut;
use crate::domain::talk::access::TalkEvent;
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::reviews::{
    self, CATEGORY_OBJECT, CategoryFields, ScoreValue, decimal, weight_decimal,
};
use crate::domain::talk::sql::ids_in;
use crate::http::error::TalkResult;
use crate::http::talk::Talk;
use crate::http::{ApiError, Created, JsonBody, NoContent, Page, patched};
use crate::state::AppState;
use crate::values::Decimal2;

/// The token scope these operations use.
const ENDPOINT: &str = "reviews";

/// A value a score category offers.
#[derive(Object)]
#[oai(rename = "TalkScoreValue")]
pub struct ScoreValueOut {
    /// Internal ID: what a review's `scores` name.
    pub id: i64,
    /// The value, with two places.
    pub value: String,
    /// Its label.
    #[oai(nullable)]
    pub label: Option<String>,
}

/// A score category of reviews.
#[derive(Object)]
#[oai(rename = "TalkScoreCategory")]
pub struct CategoryOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: TalkText,
    /// Weight of its values in a review's score, with one place.
    pub weight: String,
    /// Reviews must give a value in it.
    pub required: bool,
    /// Reviews use it.
    pub active: bool,
    /// The tracks it applies to (empty for all), or with `?expand=limit_tracks` the tracks.
    pub limit_tracks: Vec<Expandable<i64, TrackOut>>,
    /// Its values are shown apart and do not count towards the score (weight 0).
    pub is_independent: bool,
    /// The values a review may give in it, lowest first.
    pub scores: Vec<ScoreValueOut>,
}

/// Score categories as objects: three queries for any number.
pub static KIND: Kind = Kind {
    name: CATEGORY_OBJECT,
    key: "id",
    endpoint: ENDPOINT,
    load,
    fields: &[("limit_tracks", &super::tracks::KIND)],
};

/// `(owner, value)` rows grouped by owner, in the query's order.
async fn grouped(
    ctx: &Ctx<'_>,
    sql: &str,
    values: Vec<sea_orm::Value>,
    value: impl Fn(&sea_orm::QueryResult) -> Result<Value, ApiError>,
) -> Result<HashMap<i64, Vec<Value>>, ApiError> {
    let mut map: HashMap<i64, Vec<Value>> = HashMap::new();
    for r in ctx.rows(sql, values).await? {
        map.entry(r.try_get("", "owner")?)
            .or_default()
            .push(value(&r)?);
    }
    Ok(map)
}

fn load<'a>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT id, name, weight, required, active, is_independent \
             FROM talk_score_categories WHERE id IN {ids} AND event_id = ${}",
            values.len()
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
        let mut tracks = grouped(
            ctx,
            &format!(
                "SELECT category_id AS owner, track_id FROM talk_score_category_tracks \
                 WHERE category_id IN {in_ids} ORDER BY track_id"
            ),
            values.clone(),
            |r| Ok(json!(r.try_get::<i64>("", "track_id")?)),
        )
        .await?;
        let mut scores = grouped(
            ctx,
            &format!(
                "SELECT category_id AS owner, id, value, label FROM talk_scores \
                 WHERE category_id IN {in_ids} ORDER BY value, id"
            ),
            values,
            |r| {
                Ok(json!({
                    "id": r.try_get::<i64>("", "id")?,
                    "value": decimal(r.try_get("", "value")?),
                    "label": r.try_get::<Option<String>>("", "label")?,
                }))
            },
        )
        .await?;
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get("", "id")?;
                let name: Option<Value> = r.try_get("", "name")?;
                Ok(json!({
                    "id": id,
                    "name": ctx.text(&name.unwrap_or(Value::Null)),
                    "weight": weight_decimal(r.try_get("", "weight")?),
                    "required": r.try_get::<bool>("", "required")?,
                    "active": r.try_get::<bool>("", "active")?,
                    "limit_tracks": tracks.remove(&id).unwrap_or_default(),
                    "is_independent": r.try_get::<bool>("", "is_independent")?,
                    "scores": scores.remove(&id).unwrap_or_default(),
                }))
            })
            .collect()
    })
}

/// A value a score category offers, as sent.
#[derive(Object)]
#[oai(rename = "TalkScoreValueWrite")]
pub struct ScoreValueIn {
    /// The ID of an existing value to change; left out for a new value.
    pub id: Option<i64>,
    /// The value, at most two places (at most 99999.99 either way).
    pub value: Decimal2,
    /// Its label.
    #[oai(nullable, validator(max_length = 200))]
    pub label: MaybeUndefined<String>,
}

/// The fields of a score category a body may leave out: a new category takes the
/// defaults, PUT and PATCH keep the values.
#[derive(Object)]
#[oai(rename = "TalkScoreCategoryOptional")]
pub struct CategoryOptional {
    /// Weight, 0 to 999.9 with at most one place; 1.0 unless given.
    pub weight: Option<Decimal2>,
    /// Reviews must give a value in it; false unless given.
    pub required: Option<bool>,
    /// Reviews use it; true unless given.
    pub active: Option<bool>,
    /// Its values do not count towards the score (its weight becomes 0); false unless given.
    pub is_independent: Option<bool>,
    /// The IDs of the tracks it applies to (empty for all); replaces them.
    #[oai(validator(max_items = 100))]
    pub limit_tracks: Option<Vec<i64>>,
    /// The values reviews may give, replacing them: those with an `id` are changed, those
    /// without are added, and values left out are removed (from reviews too).
    #[oai(validator(max_items = 100))]
    pub scores: Option<Vec<ScoreValueIn>>,
}

/// A new score category, or a category's fields (PUT: omitted optional ones keep their
/// values).
#[derive(Object)]
#[oai(rename = "TalkScoreCategoryWrite")]
pub struct CategoryWrite {
    /// Name.
    pub name: I18nInput<200>,
    /// The others.
    #[oai(flatten)]
    pub optional: CategoryOptional,
}

/// A partial change of a score category.
#[derive(Object)]
#[oai(rename = "TalkScoreCategoryPatch")]
pub struct CategoryPatch {
    /// Name.
    pub name: Option<I18nInput<200>>,
    /// The others.
    #[oai(flatten)]
    pub optional: CategoryOptional,
}

impl CategoryOptional {
    /// Sets the fields the body sends; gives the values it sends.
    fn apply(self, f: &mut CategoryFields) -> Option<Vec<ScoreValue>> {
        if let Some(w) = self.weight {
            f.weight = w.0;
        }
        f.required = self.required.unwrap_or(f.required);
        f.active = self.active.unwrap_or(f.active);
        f.is_independent = self.is_independent.unwrap_or(f.is_independent);
        if let Some(tracks) = self.limit_tracks {
            f.limit_tracks = tracks;
        }
        self.scores.map(|values| {
            values
                .into_iter()
                .map(|v| ScoreValue {
                    id: v.id,
                    value: v.value.0,
                    label: patched(v.label).flatten(),
                })
                .collect()
        })
    }
}

async fn category_event(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(
            &state.db,
            slug,
            ENDPOINT,
            action,
            reviews::may_read_settings,
            reviews::may_configure,
        )
        .await?)
}

/// Writes a category (new when `id` is `None`) as `edit` changes its stored fields, in one
/// transaction; gives it as the API shows it.
async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    edit: impl FnOnce(&mut CategoryFields) -> Option<Vec<ScoreValue>>,
) -> Result<Shaped<CategoryOut>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let mut f = match id {
        Some(id) => reviews::locked_category(&txn, ev, id).await?,
        None => CategoryFields::new(),
    };
    let values = edit(&mut f);
    let id = reviews::save_category(&txn, ev, id, f, values).await?;
    let out = ctx
        .within(&txn)
        .one(&KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// Score category operations.
pub struct ScoreCategoriesApi;

#[OpenApi(tag = "TalkTag::Reviews")]
impl ScoreCategoriesApi {
    /// List score categories
    ///
    /// For organisers and reviewers. Token scopes: those of `reviews`.
    #[oai(path = "/api/events/:event/score-categories", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_score_categories(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Only active (`true`) or inactive (`false`) categories.
        active: Query<Option<bool>>,
        /// Text the name contains.
        q: Query<Option<String>>,
        /// Fields to expand: `limit_tracks`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<Shaped<CategoryOut>>>> {
        let ev = category_event(&state, &talk, &event, Action::List).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        let mut listing = Listing::new(
            "talk_score_categories c",
            "c.id",
            "c.event_id",
            ev.event.id,
            "c.id",
        );
        if let Some(active) = active.0 {
            listing.filter("c.active = {}", active);
        }
        listing.search(q.as_deref(), &["c.name"]);
        Ok(Json(
            listing
                .fetch(&ctx, &KIND, req, page.0, page_size.0, &expand)
                .await?,
        ))
    }

    /// Show a score category
    #[oai(path = "/api/events/:event/score-categories/:id", method = "get")]
    async fn get_score_category(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The category's ID.
        id: Path<i64>,
        /// Fields to expand: `limit_tracks`.
        expand: Query<Option<String>>,
        /// Flattens multi-language strings to this language where it is one of the event's.
        lang: Query<Option<String>>,
    ) -> TalkResult<Json<Shaped<CategoryOut>>> {
        let ev = category_event(&state, &talk, &event, Action::Retrieve).await?;
        let expand = Expand::parse(expand.as_deref(), &KIND)?;
        let ctx = Ctx::new(&state, &ev, lang.as_deref()).await?;
        Ok(Json(ctx.one(&KIND, (*id).into(), &expand).await?))
    }

    /// Create a score category
    ///
    /// For organisers of the event's settings. Token scopes: those of `reviews`.
    #[oai(path = "/api/events/:event/score-categories", method = "post")]
    async fn create_score_category(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        body: JsonBody<CategoryWrite>,
    ) -> TalkResult<Created<Shaped<CategoryOut>>> {
        let ev = category_event(&state, &talk, &event, Action::Create).await?;
        let CategoryWrite { name, optional } = body.0;
        let out = save(&state, &ev, None, |f| {
            f.name = name.to_stored();
            optional.apply(f)
        })
        .await?;
        Ok(Created::Created(Json(out)))
    }

    /// Change a score category
    ///
    /// Changes the fields the body sends; the scores of the event's reviews are
    /// recomputed.
    #[oai(path = "/api/events/:event/score-categories/:id", method = "patch")]
    async fn patch_score_category(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The category's ID.
        id: Path<i64>,
        body: JsonBody<CategoryPatch>,
    ) -> TalkResult<Json<Shaped<CategoryOut>>> {
        let ev = category_event(&state, &talk, &event, Action::Update).await?;
        let CategoryPatch { name, optional } = body.0;
        Ok(Json(
            save(&state, &ev, Some(*id), |f| {
                if let Some(name) = name {
                    f.name = name.to_stored();
                }
                optional.apply(f)
            })
            .await?,
        ))
    }

    /// Replace a score category
    ///
    /// The body must send the name; fields it leaves out keep their values. The scores of
    /// the event's reviews are recomputed.
    #[oai(path = "/api/events/:event/score-categories/:id", method = "put")]
    async fn put_score_category(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The category's ID.
        id: Path<i64>,
        body: JsonBody<CategoryWrite>,
    ) -> TalkResult<Json<Shaped<CategoryOut>>> {
        let ev = category_event(&state, &talk, &event, Action::Update).await?;
        let CategoryWrite { name, optional } = body.0;
        Ok(Json(
            save(&state, &ev, Some(*id), |f| {
                f.name = name.to_stored();
                optional.apply(f)
            })
            .await?,
        ))
    }

    /// Delete a score category
    ///
    /// With its values: reviews lose the values they gave in it, and their scores are
    /// recomputed. 400 when the categories left would all be independent.
    #[oai(path = "/api/events/:event/score-categories/:id", method = "delete")]
    async fn delete_score_category(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The category's ID.
        id: Path<i64>,
    ) -> TalkResult<NoContent> {
        let ev = category_event(&state, &talk, &event, Action::Destroy).await?;
        let txn = crate::db::begin_write(&state.db).await?;
        reviews::delete_category(&txn, &ev, *id).await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// A score category's activity log
    ///
    /// Newest first.
    #[oai(path = "/api/events/:event/score-categories/:id/log", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn score_category_log(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The category's ID.
        id: Path<i64>,
        /// Page number, or `last`.
        page: Query<Option<String>>,
        /// Objects per page, at most 50.
        page_size: Query<Option<u64>>,
    ) -> TalkResult<Json<Page<LogEntry>>> {
        let ev = category_event(&state, &talk, &event, Action::Retrieve).await?;
        reviews::category(&state.db, &ev, *id).await?;
        Ok(Json(
            log_page(&state, req, &ev, CATEGORY_OBJECT, *id, page.0, page_size.0).await?,
        ))
    }
}
