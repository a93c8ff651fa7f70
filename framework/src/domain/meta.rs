//! Meta data: organizer-level properties that events carry values for.

use std::collections::BTreeMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};

use crate::db::entities::meta_property;

/// A property as the rules need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Name.
    pub name: String,
    /// Default value ("" for none).
    pub default: String,
    /// Allowed values; empty allows any.
    pub allowed_values: Vec<String>,
    /// Whether a value is required.
    pub required: bool,
}

impl From<meta_property::Model> for Property {
    fn from(m: meta_property::Model) -> Self {
        Self {
            name: m.name,
            default: m.default_value,
            allowed_values: crate::values::stored::string_list(&m.allowed_values),
            required: m.required,
        }
    }
}

/// The organizer's properties, by name.
pub async fn properties(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<Vec<Property>, DbErr> {
    Ok(meta_property::Entity::find()
        .filter(meta_property::Column::OrganizerId.eq(organizer_id))
        .order_by_asc(meta_property::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(Property::from)
        .collect())
}

/// Messages for values that name unknown properties or values not allowed; with
/// `creating`, also for required properties without a value or default.
pub fn check_values(
    properties: &[Property],
    values: &BTreeMap<String, String>,
    creating: bool,
) -> Vec<String> {
    let mut messages = Vec::new();
    // By name, so that checking takes time in proportion to the values and properties, not
    // to their product.
    let by_name: std::collections::HashMap<&str, &Property> =
        properties.iter().map(|p| (p.name.as_str(), p)).collect();
    for (key, value) in values {
        match by_name.get(key.as_str()) {
            None => messages.push(format!("Meta data property '{key}' does not exist.")),
            Some(p)
                if !p.allowed_values.is_empty()
                    && !value.is_empty()
                    && !p.allowed_values.contains(value) =>
            {
                messages.push(format!(
                    "Meta data property '{key}' does not allow value '{value}'."
                ))
            }
            Some(_) => {}
        }
    }
    if creating {
        for p in properties
            .iter()
            .filter(|p| p.required && p.default.is_empty())
        {
            if values.get(&p.name).is_none_or(String::is_empty) {
                messages.push(format!("Meta data property '{}' is required.", p.name));
            }
        }
    }
    messages
}

/// Own values, completed with the properties' non-empty defaults.
pub fn effective(
    properties: &[Property],
    values: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = properties
        .iter()
        .filter(|p| !p.default.is_empty())
        .map(|p| (p.name.clone(), p.default.clone()))
        .collect();
    for (k, v) in values {
        if !v.is_empty() {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}
