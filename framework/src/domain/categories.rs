//! Item categories of an event. A deleted category leaves its items without a category.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Select, Set,
};

use crate::db::begin_write;
use crate::db::entities::{category, item};

/// Every writable field of a category.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryFields {
    /// Multi-language name (stored JSON object).
    pub name: serde_json::Value,
    /// Back-end name.
    pub internal_name: Option<String>,
    /// Multi-language description (stored JSON object).
    pub description: Option<serde_json::Value>,
    /// Sort position.
    pub position: i32,
    /// Whether the category holds add-ons only.
    pub is_addon: bool,
}

impl From<&category::Model> for CategoryFields {
    fn from(c: &category::Model) -> Self {
        Self {
            name: c.name.clone(),
            internal_name: c.internal_name.clone(),
            description: c.description.clone(),
            position: c.position,
            is_addon: c.is_addon,
        }
    }
}

/// Filters of the category list.
#[derive(Debug, Clone, Default)]
pub struct CategoryFilter {
    /// Only add-on categories (true) or only the others (false).
    pub is_addon: Option<bool>,
}

/// An event's categories matching a filter, by position, then ID.
pub fn query(event_id: i64, filter: &CategoryFilter) -> Select<category::Entity> {
    let mut q = category::Entity::find().filter(category::Column::EventId.eq(event_id));
    if let Some(is_addon) = filter.is_addon {
        q = q.filter(category::Column::IsAddon.eq(is_addon));
    }
    q.order_by_asc(category::Column::Position)
        .order_by_asc(category::Column::Id)
}

/// A category of the event.
pub async fn find(
    db: &DatabaseConnection,
    event_id: i64,
    id: i64,
) -> Result<Option<category::Model>, DbErr> {
    category::Entity::find_by_id(id)
        .filter(category::Column::EventId.eq(event_id))
        .one(db)
        .await
}

fn row(fields: CategoryFields) -> category::ActiveModel {
    category::ActiveModel {
        name: Set(fields.name),
        internal_name: Set(fields.internal_name),
        description: Set(fields.description),
        position: Set(fields.position),
        is_addon: Set(fields.is_addon),
        ..Default::default()
    }
}

/// Creates a category.
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    fields: CategoryFields,
) -> Result<category::Model, DbErr> {
    let mut new = row(fields);
    new.event_id = Set(event_id);
    crate::db::in_transaction(db, async |txn| new.insert(txn).await).await
}

/// Replaces every writable field of a category.
pub async fn update(
    db: &DatabaseConnection,
    existing: &category::Model,
    fields: CategoryFields,
) -> Result<category::Model, DbErr> {
    let mut changed = row(fields);
    changed.id = Set(existing.id);
    changed.event_id = Set(existing.event_id);
    changed.update(db).await
}

/// Deletes a category; its items stay, without a category, in the same transaction.
pub async fn delete(db: &DatabaseConnection, existing: &category::Model) -> Result<(), DbErr> {
    let txn = begin_write(db).await?;
    item::Entity::update_many()
        .col_expr(item::Column::CategoryId, Expr::value(None::<i64>))
        .filter(item::Column::EventId.eq(existing.event_id))
        .filter(item::Column::CategoryId.eq(existing.id))
        .exec(&txn)
        .await?;
    category::Entity::delete_by_id(existing.id)
        .exec(&txn)
        .await?;
    crate::db::commit(txn).await
}
