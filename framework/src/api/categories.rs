//! Item categories of an event: `/api/v1/organizers/{organizer}/events/{event}/categories/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use super::items::Conditional;
use crate::db::entities::category;
use crate::domain::categories::{self, CategoryFields, CategoryFilter};
use crate::domain::permissions::Permission;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, I18nString, JsonBody, NoContent, Page, PageRequest, patched,
};
use crate::state::AppState;

/// A category of items.
#[derive(Object)]
#[oai(rename = "Category")]
pub struct CategoryOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: I18nString,
    /// Name shown in the back end only.
    #[oai(nullable)]
    pub internal_name: Option<String>,
    /// Description; may contain Markdown.
    #[oai(nullable)]
    pub description: Option<I18nString>,
    /// Sort position.
    pub position: i32,
    /// Whether the category holds add-ons only.
    pub is_addon: bool,
}

impl From<category::Model> for CategoryOut {
    fn from(c: category::Model) -> Self {
        Self {
            id: c.id,
            name: I18nString::from_stored(&c.name),
            internal_name: c.internal_name,
            description: c.description.as_ref().map(I18nString::from_stored),
            position: c.position,
            is_addon: c.is_addon,
        }
    }
}

/// A new category, or all fields of a category (PUT); omitted fields are reset.
#[derive(Object)]
pub struct CategoryCreate {
    /// Name.
    #[oai(validator(max_length = 255))]
    pub name: I18nString,
    /// Name shown in the back end only.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_name: Option<String>,
    /// Description; may contain Markdown. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: Option<I18nString>,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
    /// Whether the category holds add-ons only.
    #[oai(default)]
    pub is_addon: bool,
}

impl From<CategoryCreate> for CategoryFields {
    fn from(c: CategoryCreate) -> Self {
        Self {
            name: c.name.to_stored(),
            internal_name: c.internal_name,
            description: c.description.map(|d| d.to_stored()),
            position: c.position,
            is_addon: c.is_addon,
        }
    }
}

/// A partial change of a category.
#[derive(Object)]
pub struct CategoryPatch {
    /// Name.
    #[oai(validator(max_length = 255))]
    pub name: Option<I18nString>,
    /// Name shown in the back end only.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_name: MaybeUndefined<String>,
    /// Description; may contain Markdown. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: MaybeUndefined<I18nString>,
    /// Sort position.
    pub position: Option<i32>,
    /// Whether the category holds add-ons only.
    pub is_addon: Option<bool>,
}

impl CategoryPatch {
    fn apply(self, mut fields: CategoryFields) -> CategoryFields {
        if let Some(name) = self.name {
            fields.name = name.to_stored();
        }
        if let Some(v) = patched(self.internal_name) {
            fields.internal_name = v;
        }
        if let Some(v) = patched(self.description) {
            fields.description = v.map(|d| d.to_stored());
        }
        fields.position = self.position.unwrap_or(fields.position);
        fields.is_addon = self.is_addon.unwrap_or(fields.is_addon);
        fields
    }
}

/// Category operations.
pub struct CategoriesApi;

async fn find_category(
    state: &AppState,
    event_id: i64,
    id: i64,
) -> Result<category::Model, ApiError> {
    categories::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

#[OpenApi(tag = "Tag::Categories")]
impl CategoriesApi {
    /// List categories
    ///
    /// By position, then ID; `is_addon` filters. Needs any access to the event.
    /// With `If-Modified-Since` no later than the catalogue's last change (`Last-Modified`),
    /// 304 without a body.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_categories(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        is_addon: Query<Option<bool>>,
    ) -> ListResult<Conditional<Json<Page<CategoryOut>>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(
            Conditional::answer::<ApiError>(req, &state, ev.event.id, async || {
                let filter = CategoryFilter {
                    is_addon: is_addon.0,
                };
                let query = categories::query(ev.event.id, &filter);
                let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
                    .fetch(&state.db, query)
                    .await?;
                Ok(Json(page.map(Into::into)))
            })
            .await?,
        )
    }

    /// Show a category
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories/:id",
        method = "get"
    )]
    async fn get_category(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<CategoryOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_category(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a category
    ///
    /// Needs `can_change_items`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories",
        method = "post"
    )]
    async fn create_category(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<CategoryCreate>,
    ) -> WriteResult<Created<CategoryOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let saved = categories::create(&state.db, ev.event.id, body.0.into()).await?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a category
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories/:id",
        method = "put"
    )]
    async fn put_category(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<CategoryCreate>,
    ) -> WriteResult<Json<CategoryOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_category(&state, ev.event.id, *id).await?;
        let saved = categories::update(&state.db, &existing, body.0.into()).await?;
        Ok(Json(saved.into()))
    }

    /// Change a category
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories/:id",
        method = "patch"
    )]
    async fn patch_category(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<CategoryPatch>,
    ) -> WriteResult<Json<CategoryOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_category(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(CategoryFields::from(&existing));
        let saved = categories::update(&state.db, &existing, fields).await?;
        Ok(Json(saved.into()))
    }

    /// Delete a category
    ///
    /// Its items stay, without a category.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/categories/:id",
        method = "delete"
    )]
    async fn delete_category(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_category(&state, ev.event.id, *id).await?;
        categories::delete(&state.db, &existing).await?;
        Ok(NoContent::NoContent)
    }
}
