//! Seating plans of an organizer (`/api/v1/organizers/{organizer}/seatingplans/`).

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::Value;

use super::Tag;
use crate::db::entities::seating_plan;
use crate::domain::permissions::Permission;
use crate::domain::seating::{self, LayoutError, PlanChanges, PlanError};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;

crate::http::body::sent_json!(
    /// A seating plan's layout (`docs/seating-layout.md`), kept as sent with any keys beyond
    /// those documented. The document gives its shape; the rules no schema states (category
    /// names declared once, seats of declared categories, each `seat_guid` once, at most
    /// 100,000 rows and seats in all) are checked when it is stored.
    SeatingLayout,
    "SeatingLayout",
    schema: <layout_shape::Layout as poem_openapi::types::Type>::schema_ref(),
    register: <layout_shape::Layout as poem_openapi::types::Type>::register,
);

/// The documented shape of a layout: types for their schema only, never built (a layout
/// stays the JSON sent).
#[allow(dead_code)]
mod layout_shape {
    use poem_openapi::Object;

    /// A seating plan's layout.
    #[derive(Object)]
    #[oai(rename = "SeatingLayout")]
    pub struct Layout {
        /// The plan's name.
        #[oai(validator(max_length = 190))]
        name: String,
        /// The seat categories, each name once.
        #[oai(validator(max_items = 1000))]
        categories: Vec<Category>,
        /// The zones.
        #[oai(validator(max_items = 1000))]
        zones: Vec<Zone>,
    }

    /// A seat category.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutCategory")]
    struct Category {
        /// Unique in the plan.
        #[oai(validator(max_length = 190))]
        name: String,
        /// Colour to draw its seats in.
        #[oai(nullable, validator(max_length = 190))]
        color: Option<String>,
    }

    /// A zone of rows.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutZone")]
    struct Zone {
        /// The zone's name, the first part of its seats' names.
        #[oai(validator(max_length = 190))]
        name: String,
        /// Where it is drawn.
        position: Option<ZonePosition>,
        /// Its rows.
        #[oai(validator(max_items = 100000))]
        rows: Vec<Row>,
    }

    /// Where a zone is drawn.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutZonePosition")]
    struct ZonePosition {
        /// Horizontal.
        x: Option<f64>,
        /// Vertical.
        y: Option<f64>,
    }

    /// A row of seats.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutRow")]
    struct Row {
        /// The row's number, in its seats' names unless it has a label.
        #[oai(validator(max_length = 190))]
        row_number: String,
        /// Shown instead of "Row {row_number}".
        #[oai(nullable, validator(max_length = 190))]
        row_label: Option<String>,
        /// Its seats.
        #[oai(validator(max_items = 100000))]
        seats: Vec<Seat>,
    }

    /// A seat.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutSeat")]
    struct Seat {
        /// Identifies the seat across the whole plan (and the events using it).
        #[oai(validator(min_length = 1, max_length = 190))]
        seat_guid: String,
        /// The seat's number, in its name unless it has a label.
        #[oai(validator(max_length = 190))]
        seat_number: String,
        /// Shown instead of "Seat {seat_number}".
        #[oai(nullable, validator(max_length = 190))]
        seat_label: Option<String>,
        /// One of the plan's categories.
        #[oai(validator(max_length = 190))]
        category: String,
        /// Where it is drawn.
        position: Option<Position>,
    }

    /// Where a seat is drawn.
    #[derive(Object)]
    #[oai(rename = "SeatingLayoutPosition")]
    struct Position {
        /// Horizontal.
        x: f64,
        /// Vertical.
        y: f64,
    }
}

/// A seating plan.
#[derive(Object)]
#[oai(rename = "SeatingPlan")]
pub struct SeatingPlanOut {
    /// Internal ID.
    pub id: i64,
    /// Human-readable name.
    pub name: String,
    /// The plan; see `docs/seating-layout.md`.
    pub layout: SeatingLayout,
}

impl From<seating_plan::Model> for SeatingPlanOut {
    fn from(p: seating_plan::Model) -> Self {
        Self {
            id: p.id,
            name: p.name,
            layout: SeatingLayout(p.layout),
        }
    }
}

/// A new seating plan, or all fields of one (PUT).
#[derive(Object)]
pub struct SeatingPlanCreate {
    /// Human-readable name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// The plan; see `docs/seating-layout.md`.
    pub layout: SeatingLayout,
}

/// A partial change of a seating plan.
#[derive(Object)]
pub struct SeatingPlanPatch {
    /// Human-readable name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// The plan; see `docs/seating-layout.md`.
    pub layout: Option<SeatingLayout>,
}

/// Seating plan operations.
pub struct SeatingApi;

/// The layout, when it is valid; checked off the async workers (see [`seating::check_layout`]).
async fn checked_layout(layout: Value) -> Result<Value, ApiError> {
    seating::check_layout(layout).await.map_err(|e| match e {
        LayoutError::Invalid(m) => ApiError::field("layout", m),
        LayoutError::Aborted => ApiError::internal(),
    })
}

fn plan_error(err: PlanError, action: &str) -> ApiError {
    match err {
        PlanError::NotFound => ApiError::forbidden(),
        PlanError::InUse => ApiError::forbidden_because(format!(
            "This plan can not be {action} while it is in use for an event."
        )),
        PlanError::Db(e) => e.into(),
    }
}

async fn change_plan(
    state: &AppState,
    organizer_id: i64,
    id: i64,
    mut changes: PlanChanges,
) -> Result<SeatingPlanOut, ApiError> {
    if let Some(layout) = changes.layout.take() {
        changes.layout = Some(checked_layout(layout).await?);
    }
    seating::update_plan(&state.db, organizer_id, id, changes)
        .await
        .map(Into::into)
        .map_err(|e| plan_error(e, "changed"))
}

#[OpenApi(tag = "Tag::Seating")]
impl SeatingApi {
    /// List seating plans
    ///
    /// The organizer's plans by name. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/seatingplans", method = "get")]
    async fn list_seating_plans(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<SeatingPlanOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let total = seating::count_plans(&state.db, org.organizer.id).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(total)?;
        let plans =
            seating::list_plans(&state.db, org.organizer.id, window.limit, window.offset).await?;
        Ok(Json(
            window.page(plans.into_iter().map(Into::into).collect()),
        ))
    }

    /// Show a seating plan
    #[oai(
        path = "/api/v1/organizers/:organizer/seatingplans/:id",
        method = "get"
    )]
    async fn get_seating_plan(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<SeatingPlanOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let plan = seating::find_plan(&state.db, org.organizer.id, *id).await?;
        Ok(Json(plan.ok_or_else(ApiError::forbidden)?.into()))
    }

    /// Create a seating plan
    ///
    /// The layout is checked against the schema in `docs/seating-layout.md`.
    #[oai(path = "/api/v1/organizers/:organizer/seatingplans", method = "post")]
    async fn create_seating_plan(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<SeatingPlanCreate>,
    ) -> WriteResult<Created<SeatingPlanOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let SeatingPlanCreate { name, layout } = body.0;
        let layout = checked_layout(layout.0).await?;
        let plan = seating::create_plan(&state.db, org.organizer.id, name, layout).await?;
        Ok(Created::Created(Json(plan.into())))
    }

    /// Change a seating plan
    ///
    /// Refused with 403 while any event uses the plan.
    #[oai(
        path = "/api/v1/organizers/:organizer/seatingplans/:id",
        method = "patch"
    )]
    async fn patch_seating_plan(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<SeatingPlanPatch>,
    ) -> WriteResult<Json<SeatingPlanOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let changes = PlanChanges {
            name: body.0.name,
            layout: body.0.layout.map(|l| l.0),
        };
        Ok(Json(
            change_plan(&state, org.organizer.id, *id, changes).await?,
        ))
    }

    /// Replace a seating plan
    ///
    /// Refused with 403 while any event uses the plan.
    #[oai(
        path = "/api/v1/organizers/:organizer/seatingplans/:id",
        method = "put"
    )]
    async fn put_seating_plan(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<SeatingPlanCreate>,
    ) -> WriteResult<Json<SeatingPlanOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let changes = PlanChanges {
            name: Some(body.0.name),
            layout: Some(body.0.layout.0),
        };
        Ok(Json(
            change_plan(&state, org.organizer.id, *id, changes).await?,
        ))
    }

    /// Delete a seating plan
    ///
    /// Refused with 403 while any event uses the plan.
    #[oai(
        path = "/api/v1/organizers/:organizer/seatingplans/:id",
        method = "delete"
    )]
    async fn delete_seating_plan(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        seating::delete_plan(&state.db, org.organizer.id, *id)
            .await
            .map_err(|e| plan_error(e, "deleted"))?;
        Ok(NoContent::NoContent)
    }
}
