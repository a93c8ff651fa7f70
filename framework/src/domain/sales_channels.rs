//! Sales channels: where an organizer sells. Every organizer has the built-in `web` (the
//! online shop) and `resellers`; channels of its own (type `api`, identifiers `api.*`) name
//! integrations that place orders through the API. Items and events list the channels they
//! are sold on, orders name the one they came through. A channel that orders came through,
//! or a built-in one, cannot be deleted; deleting another takes it off items and events.

use sea_orm::sea_query::{Query, SelectStatement};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde_json::{Value, json};

use super::refusal::Refusal;
use crate::db::entities::{event, item, order, sales_channel};
use crate::values::FieldErrors;
use crate::values::I18nString;
use crate::values::stored::string_list;

/// The built-in channels every organizer has: identifier (which is also the type) and label.
pub const BUILT_IN: [(&str, &str); 2] = [("web", "Online shop"), ("resellers", "Resellers")];

/// The type of the channels an organizer adds.
pub const API_TYPE: &str = "api";

/// Gives a new organizer the built-in channels.
pub async fn create_built_in(db: &impl ConnectionTrait, organizer_id: i64) -> Result<(), DbErr> {
    for (identifier, label) in BUILT_IN {
        sales_channel::ActiveModel {
            organizer_id: Set(organizer_id),
            identifier: Set(identifier.to_owned()),
            kind: Set(identifier.to_owned()),
            label: Set(json!({ "en": label })),
            position: Set(0),
            ..Default::default()
        }
        .insert(db)
        .await?;
    }
    Ok(())
}

/// Filters of the channel list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Channels of this type.
    pub kind: Option<String>,
    /// The channel with this identifier.
    pub identifier: Option<String>,
}

/// The organizer's channels, by position, type and identifier.
pub async fn list(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    filter: &Filter,
) -> Result<Vec<sales_channel::Model>, DbErr> {
    let mut q =
        sales_channel::Entity::find().filter(sales_channel::Column::OrganizerId.eq(organizer_id));
    if let Some(kind) = &filter.kind {
        q = q.filter(sales_channel::Column::Kind.eq(kind.as_str()));
    }
    if let Some(identifier) = &filter.identifier {
        q = q.filter(sales_channel::Column::Identifier.eq(identifier.as_str()));
    }
    q.order_by_asc(sales_channel::Column::Position)
        .order_by_asc(sales_channel::Column::Kind)
        .order_by_asc(sales_channel::Column::Identifier)
        .order_by_asc(sales_channel::Column::Id)
        .all(db)
        .await
}

/// The identifiers of the organizer's channels.
pub async fn identifiers(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<Vec<String>, DbErr> {
    sales_channel::Entity::find()
        .select_only()
        .column(sales_channel::Column::Identifier)
        .filter(sales_channel::Column::OrganizerId.eq(organizer_id))
        .into_tuple()
        .all(db)
        .await
}

/// The messages for channels in `names` the organizer does not have (pretix's text).
pub async fn unknown(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    names: &[String],
) -> Result<Vec<String>, DbErr> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let known = identifiers(db, organizer_id).await?;
    Ok(names
        .iter()
        .filter(|n| !known.contains(n))
        .map(|n| format!("Unknown sales channel: '{n}'."))
        .collect())
}

/// The organizer's channel with this identifier.
pub async fn find(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    identifier: &str,
) -> Result<Option<sales_channel::Model>, DbErr> {
    sales_channel::Entity::find()
        .filter(sales_channel::Column::OrganizerId.eq(organizer_id))
        .filter(sales_channel::Column::Identifier.eq(identifier))
        .one(db)
        .await
}

/// A channel as a write gives it.
#[derive(Debug, Clone)]
pub struct Fields {
    /// Identifier; fixed once created.
    pub identifier: String,
    /// Type; fixed once created, and `api` for new ones.
    pub kind: String,
    /// Name.
    pub label: I18nString,
    /// Place in lists.
    pub position: i32,
}

fn valid_identifier(identifier: &str) -> bool {
    !identifier.is_empty()
        && identifier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// Creates (`existing` none) or changes a channel of the organizer.
pub async fn save(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    existing: Option<sales_channel::Model>,
    f: Fields,
) -> Result<sales_channel::Model, Refusal> {
    let mut errors = FieldErrors::new();
    if !valid_identifier(&f.identifier) {
        errors.push(
            "identifier",
            "The identifier may only contain letters, numbers, dots, dashes, and underscores.",
        );
    }
    match &existing {
        None => {
            if !f.identifier.starts_with("api.") {
                errors.push("identifier", "Your identifier needs to start with 'api.'.");
            }
            if f.kind != API_TYPE {
                errors.push(
                    "type",
                    "You can currently only create channels of type 'api' through the API.",
                );
            }
        }
        Some(old) => {
            if old.identifier != f.identifier {
                errors.push(
                    "identifier",
                    "You cannot change the identifier of a sales channel.",
                );
            }
            if old.kind != f.kind {
                errors.push("type", "You cannot change the type of a sales channel.");
            }
        }
    }
    errors.into_result()?;
    let mut row = match existing {
        Some(m) => m.into(),
        None => sales_channel::ActiveModel {
            organizer_id: Set(organizer_id),
            identifier: Set(f.identifier),
            kind: Set(f.kind),
            ..Default::default()
        },
    };
    row.label = Set(f.label.to_stored());
    row.position = Set(f.position);
    let saved = if row.id.is_not_set() {
        row.insert(db).await
    } else {
        row.update(db).await
    };
    saved.map_err(|e| {
        if crate::db::is_unique_violation(&e) {
            Refusal::field(
                "identifier",
                "A sales channel with this identifier already exists.",
            )
        } else {
            Refusal::Db(e)
        }
    })
}

/// pretix's refusal to delete a built-in channel or one that orders came through.
pub const IN_USE: &str = "Can only be deleted if unused.";

/// Deletes a channel of the organizer's own that no order came through, and takes it off
/// the organizer's items and events.
pub async fn delete(
    db: &impl ConnectionTrait,
    channel: sales_channel::Model,
) -> Result<(), Refusal> {
    let used = order::Entity::find()
        .select_only()
        .column(order::Column::Id)
        .filter(order::Column::EventId.in_subquery(events_of(channel.organizer_id)))
        .filter(order::Column::SalesChannel.eq(channel.identifier.as_str()))
        .into_tuple::<i64>()
        .one(db)
        .await?;
    if channel.kind != API_TYPE || used.is_some() {
        return Err(Refusal::forbidden_because(IN_USE));
    }
    let events = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(channel.organizer_id))
        .all(db)
        .await?;
    for e in events {
        if let Some(list) = without(&e.sales_channels, &channel.identifier) {
            let mut row: event::ActiveModel = e.into();
            row.sales_channels = Set(list);
            row.update(db).await?;
        }
    }
    let items = item::Entity::find()
        .filter(item::Column::EventId.in_subquery(events_of(channel.organizer_id)))
        .all(db)
        .await?;
    for it in items {
        if let Some(list) = without(&it.sales_channels, &channel.identifier) {
            let mut row: item::ActiveModel = it.into();
            row.sales_channels = Set(list);
            row.update(db).await?;
        }
    }
    sales_channel::Entity::delete_by_id(channel.id)
        .exec(db)
        .await?;
    Ok(())
}

/// The IDs of the organizer's events, as a subquery.
fn events_of(organizer_id: i64) -> SelectStatement {
    Query::select()
        .column(event::Column::Id)
        .from(event::Entity)
        .and_where(event::Column::OrganizerId.eq(organizer_id))
        .to_owned()
}

/// The stored list without `identifier`, or none when it was not in it.
fn without(stored: &Value, identifier: &str) -> Option<Value> {
    let list = string_list(stored);
    list.iter().any(|c| c == identifier).then(|| {
        json!(
            list.into_iter()
                .filter(|c| c != identifier)
                .collect::<Vec<_>>()
        )
    })
}
