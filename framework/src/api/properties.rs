//! Organizer meta data properties: `/api/v1/organizers/{organizer}/properties/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set};
use serde_json::json;

use super::Tag;
use crate::db::begin_write;
use crate::db::entities::{event, meta_property};
use crate::domain::permissions::Permission;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;
use crate::values::stored::string_list;

/// A meta data property events of the organizer carry values for.
#[derive(Object)]
#[oai(rename = "MetaProperty")]
pub struct PropertyOut {
    /// Internal ID.
    pub id: i64,
    /// Name, used as key in events' `meta_data`.
    pub name: String,
    /// Value of events that set none.
    pub default: String,
    /// Whether every new event must have a value.
    pub required: bool,
    /// Allowed values; empty allows any.
    pub allowed_values: Vec<String>,
}

fn property_out(p: meta_property::Model) -> PropertyOut {
    PropertyOut {
        id: p.id,
        allowed_values: string_list(&p.allowed_values),
        name: p.name,
        default: p.default_value,
        required: p.required,
    }
}

/// A new property, or all fields of one (PUT).
#[derive(Object)]
pub struct PropertyCreate {
    /// Name: letters, digits and `_`.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: String,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub default: String,
    /// Required on new events.
    #[oai(default)]
    pub required: bool,
    /// Allowed values. Each at most 10,000 characters, as values.
    #[oai(default, validator(max_length = 10000, max_items = 1000))]
    pub allowed_values: Vec<String>,
}

/// A change of a property.
#[derive(Object)]
pub struct PropertyPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: Option<String>,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub default: Option<String>,
    /// Required on new events.
    pub required: Option<bool>,
    /// Allowed values. Each at most 10,000 characters, as values.
    #[oai(validator(max_length = 10000, max_items = 1000))]
    pub allowed_values: Option<Vec<String>>,
}

/// Meta property operations.
pub struct PropertiesApi;

async fn find(
    state: &AppState,
    organizer_id: i64,
    id: i64,
) -> Result<meta_property::Model, ApiError> {
    meta_property::Entity::find_by_id(id)
        .filter(meta_property::Column::OrganizerId.eq(organizer_id))
        .one(&state.db)
        .await?
        .ok_or_else(ApiError::forbidden)
}

fn check(name: &str, default: &str, allowed: &[String]) -> Result<(), ApiError> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ApiError::field(
            "name",
            "Use only letters, digits and \"_\".",
        ));
    }
    if !allowed.is_empty() && !default.is_empty() && !allowed.iter().any(|a| a == default) {
        return Err(ApiError::field(
            "default",
            "The default must be one of the allowed values.",
        ));
    }
    Ok(())
}

async fn save(
    state: &AppState,
    row: meta_property::ActiveModel,
) -> Result<meta_property::Model, ApiError> {
    let saved = crate::db::in_transaction(&state.db, async |txn| {
        if row.id.is_not_set() {
            row.insert(txn).await
        } else {
            row.update(txn).await
        }
    })
    .await;
    saved.map_err(|e| {
        if crate::db::is_unique_violation(&e) {
            ApiError::field("name", "A property with this name already exists.")
        } else {
            e.into()
        }
    })
}

#[OpenApi(tag = "Tag::Events")]
impl PropertiesApi {
    /// List meta data properties
    #[oai(path = "/api/v1/organizers/:organizer/properties", method = "get")]
    async fn list_properties(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<PropertyOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let query = meta_property::Entity::find()
            .filter(meta_property::Column::OrganizerId.eq(org.organizer.id))
            .order_by_asc(meta_property::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(property_out)))
    }

    /// Show a meta data property
    #[oai(path = "/api/v1/organizers/:organizer/properties/:id", method = "get")]
    async fn get_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<PropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        Ok(Json(property_out(
            find(&state, org.organizer.id, *id).await?,
        )))
    }

    /// Create a meta data property
    #[oai(path = "/api/v1/organizers/:organizer/properties", method = "post")]
    async fn create_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<PropertyCreate>,
    ) -> WriteResult<Created<PropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let p = body.0;
        check(&p.name, &p.default, &p.allowed_values)?;
        let row = meta_property::ActiveModel {
            organizer_id: Set(org.organizer.id),
            name: Set(p.name),
            default_value: Set(p.default),
            required: Set(p.required),
            allowed_values: Set(json!(p.allowed_values)),
            ..Default::default()
        };
        Ok(Created::Created(Json(property_out(
            save(&state, row).await?,
        ))))
    }

    /// Change a meta data property
    #[oai(
        path = "/api/v1/organizers/:organizer/properties/:id",
        method = "patch"
    )]
    async fn patch_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<PropertyPatch>,
    ) -> WriteResult<Json<PropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let existing = find(&state, org.organizer.id, *id).await?;
        let p = body.0;
        let name = p.name.unwrap_or(existing.name.clone());
        let default = p.default.unwrap_or(existing.default_value.clone());
        let allowed = p
            .allowed_values
            .unwrap_or_else(|| string_list(&existing.allowed_values));
        check(&name, &default, &allowed)?;
        let required = p.required.unwrap_or(existing.required);
        let mut row: meta_property::ActiveModel = existing.into();
        row.name = Set(name);
        row.default_value = Set(default);
        row.allowed_values = Set(json!(allowed));
        row.required = Set(required);
        Ok(Json(property_out(save(&state, row).await?)))
    }

    /// Delete a meta data property
    ///
    /// Events lose their values for it.
    #[oai(
        path = "/api/v1/organizers/:organizer/properties/:id",
        method = "delete"
    )]
    async fn delete_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let property = find(&state, org.organizer.id, *id).await?;
        let txn = begin_write(&state.db).await?;
        let events = event::Entity::find()
            .filter(event::Column::OrganizerId.eq(org.organizer.id))
            .all(&txn)
            .await?;
        for e in events
            .into_iter()
            .filter(|e| e.meta_data.get(&property.name).is_some())
        {
            let mut meta = e.meta_data.clone();
            if let Some(m) = meta.as_object_mut() {
                m.remove(&property.name);
            }
            let mut row: event::ActiveModel = e.into();
            row.meta_data = Set(meta);
            row.update(&txn).await?;
        }
        meta_property::Entity::delete_by_id(property.id)
            .exec(&txn)
            .await?;
        crate::db::commit(txn).await?;
        Ok(NoContent::NoContent)
    }
}
