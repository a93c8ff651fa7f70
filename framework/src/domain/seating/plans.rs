//! Seating plans of an organizer. A plan used by any event cannot change or go.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::Value;

use crate::db::begin_write;
use crate::db::entities::{event, seating_plan, subevent};

/// Why a plan could not be changed or deleted.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No such plan for this organizer.
    #[error("no such plan for this organizer")]
    NotFound,
    /// An event uses the plan.
    #[error("an event uses the plan")]
    InUse,
    /// Storage failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Fields of a plan to change; `None` keeps the current value.
#[derive(Debug, Default, Clone)]
pub struct PlanChanges {
    /// New name.
    pub name: Option<String>,
    /// New layout, already checked with [`super::validate_layout`].
    pub layout: Option<Value>,
}

/// How many plans the organizer has.
pub async fn count_plans(db: &impl ConnectionTrait, organizer_id: i64) -> Result<u64, DbErr> {
    seating_plan::Entity::find()
        .filter(seating_plan::Column::OrganizerId.eq(organizer_id))
        .count(db)
        .await
}

/// One page of the organizer's plans, by name, then ID.
pub async fn list_plans(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    limit: u64,
    offset: u64,
) -> Result<Vec<seating_plan::Model>, DbErr> {
    seating_plan::Entity::find()
        .filter(seating_plan::Column::OrganizerId.eq(organizer_id))
        .order_by_asc(seating_plan::Column::Name)
        .order_by_asc(seating_plan::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await
}

/// The organizer's plan with this ID.
pub async fn find_plan(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<Option<seating_plan::Model>, DbErr> {
    seating_plan::Entity::find_by_id(id)
        .filter(seating_plan::Column::OrganizerId.eq(organizer_id))
        .one(db)
        .await
}

/// Stores a new plan; the layout must have been checked with [`super::validate_layout`].
pub async fn create_plan(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    name: String,
    layout: Value,
) -> Result<seating_plan::Model, DbErr> {
    seating_plan::ActiveModel {
        organizer_id: Set(organizer_id),
        name: Set(name),
        layout: Set(layout),
        ..Default::default()
    }
    .insert(db)
    .await
}

/// Whether any event or date of a series uses the plan.
pub async fn plan_in_use(db: &impl ConnectionTrait, plan_id: i64) -> Result<bool, DbErr> {
    let by_event = event::Entity::find()
        .filter(event::Column::SeatingPlanId.eq(plan_id))
        .select_only()
        .column(event::Column::Id)
        .limit(1)
        .into_tuple::<i64>()
        .one(db)
        .await?;
    if by_event.is_some() {
        return Ok(true);
    }
    let by_date = subevent::Entity::find()
        .filter(subevent::Column::SeatingPlanId.eq(plan_id))
        .select_only()
        .column(subevent::Column::Id)
        .limit(1)
        .into_tuple::<i64>()
        .one(db)
        .await?;
    Ok(by_date.is_some())
}

/// Locks the organizer's plan for a change and checks that no event uses it. The lock makes
/// an event that takes the plan at the same time (see [`super::assign`]) wait for the change.
async fn lock_unused(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<seating_plan::Model, PlanError> {
    let plan = seating_plan::Entity::find_by_id(id)
        .filter(seating_plan::Column::OrganizerId.eq(organizer_id))
        .lock_exclusive()
        .one(db)
        .await?
        .ok_or(PlanError::NotFound)?;
    if plan_in_use(db, plan.id).await? {
        return Err(PlanError::InUse);
    }
    Ok(plan)
}

/// Changes a plan that no event uses.
pub async fn update_plan(
    db: &DatabaseConnection,
    organizer_id: i64,
    id: i64,
    changes: PlanChanges,
) -> Result<seating_plan::Model, PlanError> {
    let txn = begin_write(db).await?;
    let plan = lock_unused(&txn, organizer_id, id).await?;
    let mut row: seating_plan::ActiveModel = plan.into();
    if let Some(name) = changes.name {
        row.name = Set(name);
    }
    if let Some(layout) = changes.layout {
        row.layout = Set(layout);
    }
    let saved = row.update(&txn).await?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

/// Deletes a plan that no event uses.
pub async fn delete_plan(
    db: &DatabaseConnection,
    organizer_id: i64,
    id: i64,
) -> Result<(), PlanError> {
    let txn = begin_write(db).await?;
    let plan = lock_unused(&txn, organizer_id, id).await?;
    seating_plan::Entity::delete_by_id(plan.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await?;
    Ok(())
}
