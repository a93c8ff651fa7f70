//! Event configuration shared by several operations: copying an event's categories and tax
//! rules into another event (event cloning).

use std::collections::HashMap;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use crate::db::entities::{category, tax_rule};

/// Old ID to new ID of everything a clone copied, so that the caller can remap references
/// (e.g. items' `category_id` and `tax_rule_id`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloneMap {
    /// Category of the source event to its copy.
    pub categories: HashMap<i64, i64>,
    /// Tax rule of the source event to its copy.
    pub tax_rules: HashMap<i64, i64>,
}

/// Copies every category and tax rule of `from_event` into `to_event`. Pass a transaction
/// to make the copy part of a larger one.
pub async fn clone_categories_and_tax_rules(
    db: &impl ConnectionTrait,
    from_event: i64,
    to_event: i64,
) -> Result<CloneMap, DbErr> {
    let mut map = CloneMap::default();
    let categories = category::Entity::find()
        .filter(category::Column::EventId.eq(from_event))
        .order_by_asc(category::Column::Id)
        .all(db)
        .await?;
    for c in categories {
        let copy = category::ActiveModel {
            event_id: Set(to_event),
            name: Set(c.name),
            internal_name: Set(c.internal_name),
            description: Set(c.description),
            position: Set(c.position),
            is_addon: Set(c.is_addon),
            ..Default::default()
        }
        .insert(db)
        .await?;
        map.categories.insert(c.id, copy.id);
    }
    let rules = tax_rule::Entity::find()
        .filter(tax_rule::Column::EventId.eq(from_event))
        .order_by_asc(tax_rule::Column::Id)
        .all(db)
        .await?;
    for t in rules {
        let copy = tax_rule::ActiveModel {
            event_id: Set(to_event),
            name: Set(t.name),
            rate_bps: Set(t.rate_bps),
            price_includes_tax: Set(t.price_includes_tax),
            eu_reverse_charge: Set(t.eu_reverse_charge),
            home_country: Set(t.home_country),
            ..Default::default()
        }
        .insert(db)
        .await?;
        map.tax_rules.insert(t.id, copy.id);
    }
    Ok(map)
}
