//! Meta data: properties that events carry values for (the organizer's, with pretix 2026's
//! choices, protection and filters) and properties that the items of one event carry values
//! for. Values live on the event or item (a name-to-value map); a property's default stands in
//! where none is set, and deleting a property deletes its values.

use std::collections::{BTreeMap, HashMap, HashSet};

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};
use serde_json::{Value, json};

use super::refusal::Refusal;
use crate::db::entities::{event, item, item_meta_property, meta_property};
use crate::values::FieldErrors;
use crate::values::I18nString;
use crate::values::stored::{string_list, string_map};

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

/// A value an event property allows, with the label shown for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value stored.
    pub key: String,
    /// Its label, in each language.
    pub label: Option<I18nString>,
}

/// The stored choices of an event property; none allows any value.
pub fn choices(m: &meta_property::Model) -> Option<Vec<Choice>> {
    let list = m.choices.as_ref()?.as_array()?;
    Some(
        list.iter()
            .filter_map(|c| {
                Some(Choice {
                    key: c.get("key")?.as_str()?.to_owned(),
                    label: c.get("label").map(I18nString::from_stored),
                })
            })
            .collect(),
    )
}

impl From<meta_property::Model> for Property {
    fn from(m: meta_property::Model) -> Self {
        Self {
            allowed_values: choices(&m)
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.key)
                .collect(),
            name: m.name,
            default: m.default_value,
            required: m.required,
        }
    }
}

impl From<item_meta_property::Model> for Property {
    fn from(m: item_meta_property::Model) -> Self {
        Self {
            allowed_values: m
                .allowed_values
                .as_ref()
                .map(string_list)
                .unwrap_or_default(),
            name: m.name,
            default: m.default_value,
            required: m.required,
        }
    }
}

/// pretix's message for a property name with other characters than letters, digits and `_`.
pub const NAME_RULE: &str = "The property name may only contain letters, numbers and underscores.";

/// Whether `name` may name a property: 1 to 50 letters, digits and underscores.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 50
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A clash with the unique name of a property (per organizer, or per event) as a field error.
fn name_taken(e: DbErr) -> Refusal {
    if crate::db::is_unique_violation(&e) {
        Refusal::field("name", "A property with this name already exists.")
    } else {
        Refusal::Db(e)
    }
}

/// The organizer's event properties, by position and name.
pub async fn event_property_rows(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<Vec<meta_property::Model>, DbErr> {
    meta_property::Entity::find()
        .filter(meta_property::Column::OrganizerId.eq(organizer_id))
        .order_by_asc(meta_property::Column::Position)
        .order_by_asc(meta_property::Column::Name)
        .order_by_asc(meta_property::Column::Id)
        .all(db)
        .await
}

/// The organizer's event properties as the rules need them.
pub async fn properties(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<Vec<Property>, DbErr> {
    Ok(event_property_rows(db, organizer_id)
        .await?
        .into_iter()
        .map(Property::from)
        .collect())
}

/// An event property of the organizer.
pub async fn find_event_property(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<Option<meta_property::Model>, DbErr> {
    meta_property::Entity::find_by_id(id)
        .filter(meta_property::Column::OrganizerId.eq(organizer_id))
        .one(db)
        .await
}

/// Every field of an event property.
#[derive(Debug, Clone)]
pub struct EventPropertyFields {
    /// Name.
    pub name: String,
    /// Default value ("" for none).
    pub default: String,
    /// Required for events to go live.
    pub required: bool,
    /// Only holders of the organizer's settings permission set values.
    pub protected: bool,
    /// Offered as a filter in the public event list.
    pub filter_public: bool,
    /// Name shown to the public.
    pub public_label: Option<I18nString>,
    /// Lists may be filtered by it.
    pub filter_allowed: bool,
    /// Allowed values; none (or an empty list) allows any.
    pub choices: Option<Vec<Choice>>,
}

impl From<&meta_property::Model> for EventPropertyFields {
    fn from(m: &meta_property::Model) -> Self {
        Self {
            name: m.name.clone(),
            default: m.default_value.clone(),
            required: m.required,
            protected: m.protected,
            filter_public: m.filter_public,
            public_label: m.public_label.as_ref().map(I18nString::from_stored),
            filter_allowed: m.filter_allowed,
            choices: choices(m),
        }
    }
}

impl EventPropertyFields {
    /// pretix's rules: a valid name, unique choice keys, a default among them.
    fn check(&self) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::new();
        if !valid_name(&self.name) {
            errors.push("name", NAME_RULE);
        }
        let keys: Vec<&str> = self
            .choices
            .iter()
            .flatten()
            .map(|c| c.key.as_str())
            .collect();
        if keys.iter().collect::<HashSet<_>>().len() < keys.len() {
            errors.push(
                "choices",
                "The key for each meta property value option must be unique.",
            );
        }
        if !keys.is_empty() && !self.default.is_empty() && !keys.contains(&self.default.as_str()) {
            errors.push(
                "non_field_errors",
                "You cannot set a default value that is not a valid value.",
            );
        }
        errors.into_result()
    }
}

/// Creates (`existing` none) or changes an event property of the organizer.
pub async fn save_event_property(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    existing: Option<meta_property::Model>,
    f: EventPropertyFields,
) -> Result<meta_property::Model, Refusal> {
    f.check()?;
    let choices = f.choices.filter(|c| !c.is_empty()).map(|list| {
        Value::Array(
            list.into_iter()
                .map(|c| match c.label {
                    Some(label) => json!({"key": c.key, "label": label.to_stored()}),
                    None => json!({"key": c.key}),
                })
                .collect(),
        )
    });
    let mut row = match existing {
        Some(m) => m.into(),
        None => meta_property::ActiveModel {
            organizer_id: Set(organizer_id),
            position: Set(0),
            ..Default::default()
        },
    };
    row.name = Set(f.name);
    row.default_value = Set(f.default);
    row.required = Set(f.required);
    row.protected = Set(f.protected);
    row.filter_public = Set(f.filter_public);
    row.public_label = Set(f.public_label.map(|l| l.to_stored()));
    row.filter_allowed = Set(f.filter_allowed);
    row.choices = Set(choices);
    let saved = if row.id.is_not_set() {
        row.insert(db).await
    } else {
        row.update(db).await
    };
    saved.map_err(name_taken)
}

/// Deletes an event property with the values events have for it.
pub async fn delete_event_property(
    db: &impl ConnectionTrait,
    property: meta_property::Model,
) -> Result<(), DbErr> {
    let events = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(property.organizer_id))
        .all(db)
        .await?;
    for e in events {
        if let Some(meta) = without_key(&e.meta_data, &property.name) {
            let mut row: event::ActiveModel = e.into();
            row.meta_data = Set(meta);
            row.update(db).await?;
        }
    }
    meta_property::Entity::delete_by_id(property.id)
        .exec(db)
        .await?;
    Ok(())
}

/// `values` without `key`, or none when it has no such key.
fn without_key(values: &Value, key: &str) -> Option<Value> {
    let mut map = values.as_object()?.clone();
    map.remove(key)?;
    Some(Value::Object(map))
}

/// The meta data to store of what a caller sent (`None`: nothing sent). A caller who may
/// not change the organizer's settings (`may_set_protected` false) sets no protected
/// property: those keep the values they had (`current`, the event's stored map or the clone
/// source's; `{}` for a new event), as pretix ignores them silently.
pub fn sent_values(
    properties: &[meta_property::Model],
    may_set_protected: bool,
    sent: Option<BTreeMap<String, String>>,
    current: &Value,
) -> Option<BTreeMap<String, String>> {
    let sent = sent?;
    if may_set_protected {
        return Some(sent);
    }
    let protected: HashSet<&str> = properties
        .iter()
        .filter(|p| p.protected)
        .map(|p| p.name.as_str())
        .collect();
    let mut kept: BTreeMap<String, String> = sent
        .into_iter()
        .filter(|(k, _)| !protected.contains(k.as_str()))
        .collect();
    for (k, v) in string_map(current) {
        if protected.contains(k.as_str()) {
            kept.insert(k, v);
        }
    }
    Some(kept)
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
    let by_name: HashMap<&str, &Property> =
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

/// The event's item properties, by name.
pub async fn item_property_rows(
    db: &impl ConnectionTrait,
    event_id: i64,
) -> Result<Vec<item_meta_property::Model>, DbErr> {
    item_meta_property::Entity::find()
        .filter(item_meta_property::Column::EventId.eq(event_id))
        .order_by_asc(item_meta_property::Column::Name)
        .order_by_asc(item_meta_property::Column::Id)
        .all(db)
        .await
}

/// The event's item properties as the rules need them.
pub async fn item_properties(
    db: &impl ConnectionTrait,
    event_id: i64,
) -> Result<Vec<Property>, DbErr> {
    Ok(item_property_rows(db, event_id)
        .await?
        .into_iter()
        .map(Property::from)
        .collect())
}

/// The item properties of each of the events (a page of them), as a name-to-default map
/// (an event's `item_meta_properties`): one query.
pub async fn item_defaults(
    db: &impl ConnectionTrait,
    event_ids: &[i64],
) -> Result<HashMap<i64, BTreeMap<String, String>>, DbErr> {
    let rows = item_meta_property::Entity::find()
        .filter(item_meta_property::Column::EventId.is_in(event_ids.iter().copied()))
        .all(db)
        .await?;
    let mut out: HashMap<i64, BTreeMap<String, String>> = HashMap::new();
    for p in rows {
        out.entry(p.event_id)
            .or_default()
            .insert(p.name, p.default_value);
    }
    Ok(out)
}

/// An item property of the event.
pub async fn find_item_property(
    db: &impl ConnectionTrait,
    event_id: i64,
    id: i64,
) -> Result<Option<item_meta_property::Model>, DbErr> {
    item_meta_property::Entity::find_by_id(id)
        .filter(item_meta_property::Column::EventId.eq(event_id))
        .one(db)
        .await
}

/// Every field of an item property.
#[derive(Debug, Clone)]
pub struct ItemPropertyFields {
    /// Name.
    pub name: String,
    /// Default value ("" for none).
    pub default: String,
    /// Required on items without a default.
    pub required: bool,
    /// Allowed values; none allows any.
    pub allowed_values: Option<Vec<String>>,
}

impl From<&item_meta_property::Model> for ItemPropertyFields {
    fn from(m: &item_meta_property::Model) -> Self {
        Self {
            name: m.name.clone(),
            default: m.default_value.clone(),
            required: m.required,
            allowed_values: m.allowed_values.as_ref().map(string_list),
        }
    }
}

/// Creates (`existing` none) or changes an item property of the event.
pub async fn save_item_property(
    db: &impl ConnectionTrait,
    event_id: i64,
    existing: Option<item_meta_property::Model>,
    f: ItemPropertyFields,
) -> Result<item_meta_property::Model, Refusal> {
    if !valid_name(&f.name) {
        return Err(Refusal::field("name", NAME_RULE));
    }
    let mut row = match existing {
        Some(m) => m.into(),
        None => item_meta_property::ActiveModel {
            event_id: Set(event_id),
            ..Default::default()
        },
    };
    row.name = Set(f.name);
    row.default_value = Set(f.default);
    row.required = Set(f.required);
    row.allowed_values = Set(f.allowed_values.map(|v| json!(v)));
    let saved = if row.id.is_not_set() {
        row.insert(db).await
    } else {
        row.update(db).await
    };
    saved.map_err(name_taken)
}

/// Deletes an item property with the values the event's items have for it.
pub async fn delete_item_property(
    db: &impl ConnectionTrait,
    property: item_meta_property::Model,
) -> Result<(), DbErr> {
    let items = item::Entity::find()
        .filter(item::Column::EventId.eq(property.event_id))
        .all(db)
        .await?;
    for it in items {
        if let Some(meta) = without_key(&it.meta_data, &property.name) {
            let mut row: item::ActiveModel = it.into();
            row.meta_data = Set(meta);
            row.update(db).await?;
        }
    }
    item_meta_property::Entity::delete_by_id(property.id)
        .exec(db)
        .await?;
    Ok(())
}

/// Sets the defaults of the event's item properties (an event's `item_meta_properties`),
/// creating the properties it does not have yet, as pretix; others are kept.
pub async fn set_item_defaults(
    db: &impl ConnectionTrait,
    event_id: i64,
    defaults: &BTreeMap<String, String>,
) -> Result<(), Refusal> {
    if let Some(bad) = defaults.keys().find(|k| !valid_name(k)) {
        return Err(Refusal::field(
            "item_meta_properties",
            format!("{NAME_RULE} ('{bad}')"),
        ));
    }
    let mut current: HashMap<String, item_meta_property::Model> = item_property_rows(db, event_id)
        .await?
        .into_iter()
        .map(|p| (p.name.clone(), p))
        .collect();
    for (name, default) in defaults {
        let existing = current.remove(name);
        if existing
            .as_ref()
            .is_some_and(|p| &p.default_value == default)
        {
            continue;
        }
        let mut f = existing
            .as_ref()
            .map(ItemPropertyFields::from)
            .unwrap_or_else(|| ItemPropertyFields {
                name: name.clone(),
                default: String::new(),
                required: false,
                allowed_values: None,
            });
        f.default = default.clone();
        save_item_property(db, event_id, existing, f).await?;
    }
    Ok(())
}

/// Copies the item properties of one event onto another (a clone).
pub async fn copy_item_properties(
    db: &impl ConnectionTrait,
    from: i64,
    to: i64,
) -> Result<(), DbErr> {
    for p in item_property_rows(db, from).await? {
        item_meta_property::ActiveModel {
            event_id: Set(to),
            name: Set(p.name),
            default_value: Set(p.default_value),
            required: Set(p.required),
            allowed_values: Set(p.allowed_values),
            ..Default::default()
        }
        .insert(db)
        .await?;
    }
    Ok(())
}
