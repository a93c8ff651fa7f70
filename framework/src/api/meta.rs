//! Meta data properties, at pretix 2026's paths: the organizer's event properties
//! (`/api/v1/organizers/{organizer}/event_meta_properties/`) and an event's item properties
//! (`.../events/{event}/item_meta_properties/`).

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::{item_meta_property, meta_property};
use crate::db::{begin_write, commit};
use crate::domain::meta::{self, Choice, EventPropertyFields, ItemPropertyFields};
use crate::domain::permissions::Permission;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, I18nString, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;

/// A value an event property allows.
#[derive(Object, Clone)]
#[oai(rename = "MetaPropertyChoice")]
pub struct ChoiceIo {
    /// The value stored on events.
    #[oai(validator(max_length = 1000))]
    pub key: String,
    /// Its label, in each language.
    #[oai(skip_serializing_if_is_none)]
    pub label: Option<I18nString>,
}

impl From<ChoiceIo> for Choice {
    fn from(c: ChoiceIo) -> Self {
        Self {
            key: c.key,
            label: c.label,
        }
    }
}

/// A meta data property that the organizer's events carry values for.
#[derive(Object)]
#[oai(rename = "EventMetaProperty")]
pub struct EventPropertyOut {
    /// Internal ID.
    pub id: i64,
    /// Name, the key in events' `meta_data`.
    pub name: String,
    /// Value of events that set none.
    pub default: String,
    /// Whether an event needs a value.
    pub required: bool,
    /// Whether only callers with `can_change_organizer_settings` set values; others' values
    /// for it are ignored.
    pub protected: bool,
    /// Whether the public event list offers it as a filter.
    pub filter_public: bool,
    /// Name shown to the public.
    #[oai(nullable)]
    pub public_label: Option<I18nString>,
    /// Whether lists may be filtered by it.
    pub filter_allowed: bool,
    /// The values allowed; `null` allows any.
    #[oai(nullable)]
    pub choices: Option<Vec<ChoiceIo>>,
}

fn event_property_out(p: meta_property::Model) -> EventPropertyOut {
    let f = EventPropertyFields::from(&p);
    EventPropertyOut {
        id: p.id,
        name: f.name,
        default: f.default,
        required: f.required,
        protected: f.protected,
        filter_public: f.filter_public,
        public_label: f.public_label,
        filter_allowed: f.filter_allowed,
        choices: f.choices.map(|list| {
            list.into_iter()
                .map(|c| ChoiceIo {
                    key: c.key,
                    label: c.label,
                })
                .collect()
        }),
    }
}

/// A new event property, or every field of one (PUT).
#[derive(Object)]
pub struct EventPropertyCreate {
    /// Name: letters, digits and `_`.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: String,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub default: String,
    /// Whether an event needs a value.
    #[oai(default)]
    pub required: bool,
    /// Whether only callers with `can_change_organizer_settings` set values.
    #[oai(default)]
    pub protected: bool,
    /// Whether the public event list offers it as a filter.
    #[oai(default)]
    pub filter_public: bool,
    /// Name shown to the public.
    #[oai(nullable)]
    pub public_label: Option<I18nString>,
    /// Whether lists may be filtered by it (default true).
    pub filter_allowed: Option<bool>,
    /// The values allowed, each key once; `null` or empty allows any.
    #[oai(nullable, validator(max_items = 1000))]
    pub choices: Option<Vec<ChoiceIo>>,
}

impl From<EventPropertyCreate> for EventPropertyFields {
    fn from(p: EventPropertyCreate) -> Self {
        Self {
            name: p.name,
            default: p.default,
            required: p.required,
            protected: p.protected,
            filter_public: p.filter_public,
            public_label: p.public_label,
            filter_allowed: p.filter_allowed.unwrap_or(true),
            choices: p.choices.map(|c| c.into_iter().map(Choice::from).collect()),
        }
    }
}

/// A change of an event property.
#[derive(Object)]
pub struct EventPropertyPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: Option<String>,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub default: Option<String>,
    /// Whether an event needs a value.
    pub required: Option<bool>,
    /// Whether only callers with `can_change_organizer_settings` set values.
    pub protected: Option<bool>,
    /// Whether the public event list offers it as a filter.
    pub filter_public: Option<bool>,
    /// Name shown to the public.
    #[oai(nullable)]
    pub public_label: MaybeUndefined<I18nString>,
    /// Whether lists may be filtered by it.
    pub filter_allowed: Option<bool>,
    /// The values allowed, each key once; `null` or empty allows any.
    #[oai(nullable, validator(max_items = 1000))]
    pub choices: MaybeUndefined<Vec<ChoiceIo>>,
}

impl EventPropertyPatch {
    fn apply(self, f: &mut EventPropertyFields) {
        fn set<T>(field: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *field = v;
            }
        }
        set(&mut f.name, self.name);
        set(&mut f.default, self.default);
        set(&mut f.required, self.required);
        set(&mut f.protected, self.protected);
        set(&mut f.filter_public, self.filter_public);
        set(&mut f.public_label, crate::http::patched(self.public_label));
        set(&mut f.filter_allowed, self.filter_allowed);
        set(
            &mut f.choices,
            crate::http::patched(self.choices)
                .map(|c| c.map(|list| list.into_iter().map(Choice::from).collect())),
        );
    }
}

/// An item meta data property of an event.
#[derive(Object)]
#[oai(rename = "ItemMetaProperty")]
pub struct ItemPropertyOut {
    /// Internal ID.
    pub id: i64,
    /// Name, the key in items' `meta_data`.
    pub name: String,
    /// Value of items that set none.
    pub default: String,
    /// Whether every item needs a value (unless there is a default).
    pub required: bool,
    /// The values allowed; `null` allows any.
    #[oai(nullable)]
    pub allowed_values: Option<Vec<String>>,
}

fn item_property_out(p: item_meta_property::Model) -> ItemPropertyOut {
    let f = ItemPropertyFields::from(&p);
    ItemPropertyOut {
        id: p.id,
        name: f.name,
        default: f.default,
        required: f.required,
        allowed_values: f.allowed_values,
    }
}

/// A new item property, or every field of one (PUT).
#[derive(Object)]
pub struct ItemPropertyCreate {
    /// Name: letters, digits and `_`.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: String,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub default: String,
    /// Whether every item needs a value.
    #[oai(default)]
    pub required: bool,
    /// The values allowed (each at most 10,000 characters); `null` or empty allows any.
    #[oai(nullable, validator(max_items = 1000, max_length = 10000))]
    pub allowed_values: Option<Vec<String>>,
}

impl From<ItemPropertyCreate> for ItemPropertyFields {
    fn from(p: ItemPropertyCreate) -> Self {
        Self {
            name: p.name,
            default: p.default,
            required: p.required,
            allowed_values: p.allowed_values.filter(|v| !v.is_empty()),
        }
    }
}

/// A change of an item property.
#[derive(Object)]
pub struct ItemPropertyPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 50))]
    pub name: Option<String>,
    /// Default value. At most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub default: Option<String>,
    /// Whether every item needs a value.
    pub required: Option<bool>,
    /// The values allowed (each at most 10,000 characters); `null` or empty allows any.
    #[oai(nullable, validator(max_items = 1000, max_length = 10000))]
    pub allowed_values: MaybeUndefined<Vec<String>>,
}

impl ItemPropertyPatch {
    fn apply(self, f: &mut ItemPropertyFields) {
        if let Some(name) = self.name {
            f.name = name;
        }
        if let Some(default) = self.default {
            f.default = default;
        }
        if let Some(required) = self.required {
            f.required = required;
        }
        if let Some(allowed) = crate::http::patched(self.allowed_values) {
            f.allowed_values = allowed.filter(|v| !v.is_empty());
        }
    }
}

/// Meta data property operations.
pub struct MetaPropertiesApi;

#[OpenApi(tag = "Tag::Events")]
impl MetaPropertiesApi {
    /// List event meta data properties
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties",
        method = "get"
    )]
    async fn list_event_meta_properties(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<EventPropertyOut>>> {
        let org = auth.0.organizer(&organizer, None)?;
        let rows = meta::event_property_rows(&state.db, org.organizer.id).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(
            page.page_of(&rows, |p| event_property_out(p.clone()))?,
        ))
    }

    /// Show an event meta data property
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties/:id",
        method = "get"
    )]
    async fn get_event_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<EventPropertyOut>> {
        let org = auth.0.organizer(&organizer, None)?;
        let found = meta::find_event_property(&state.db, org.organizer.id, *id).await?;
        Ok(Json(event_property_out(
            found.ok_or_else(ApiError::forbidden)?,
        )))
    }

    /// Create an event meta data property
    ///
    /// Needs `can_change_organizer_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties",
        method = "post"
    )]
    async fn create_event_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<EventPropertyCreate>,
    ) -> WriteResult<Created<EventPropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let saved = meta::save_event_property(&state.db, org.organizer.id, None, body.0.into())
            .await
            .map_err(ApiError::from)?;
        Ok(Created::Created(Json(event_property_out(saved))))
    }

    /// Replace an event meta data property
    ///
    /// Needs `can_change_organizer_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties/:id",
        method = "put"
    )]
    async fn put_event_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<EventPropertyCreate>,
    ) -> WriteResult<Json<EventPropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let existing = meta::find_event_property(&state.db, org.organizer.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        let saved =
            meta::save_event_property(&state.db, org.organizer.id, Some(existing), body.0.into())
                .await
                .map_err(ApiError::from)?;
        Ok(Json(event_property_out(saved)))
    }

    /// Change an event meta data property
    ///
    /// Needs `can_change_organizer_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties/:id",
        method = "patch"
    )]
    async fn patch_event_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<EventPropertyPatch>,
    ) -> WriteResult<Json<EventPropertyOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let existing = meta::find_event_property(&state.db, org.organizer.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        let mut fields = EventPropertyFields::from(&existing);
        body.0.apply(&mut fields);
        let saved = meta::save_event_property(&state.db, org.organizer.id, Some(existing), fields)
            .await
            .map_err(ApiError::from)?;
        Ok(Json(event_property_out(saved)))
    }

    /// Delete an event meta data property
    ///
    /// Events lose their values for it. Needs `can_change_organizer_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/event_meta_properties/:id",
        method = "delete"
    )]
    async fn delete_event_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let txn = begin_write(&state.db).await?;
        let existing = meta::find_event_property(&txn, org.organizer.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        meta::delete_event_property(&txn, existing).await?;
        commit(txn).await?;
        Ok(NoContent::NoContent)
    }

    /// List item meta data properties
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_item_meta_properties(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<ItemPropertyOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let rows = meta::item_property_rows(&state.db, ev.event.id).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(page.page_of(&rows, |p| item_property_out(p.clone()))?))
    }

    /// Show an item meta data property
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties/:id",
        method = "get"
    )]
    async fn get_item_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ItemPropertyOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let found = meta::find_item_property(&state.db, ev.event.id, *id).await?;
        Ok(Json(item_property_out(
            found.ok_or_else(ApiError::forbidden)?,
        )))
    }

    /// Create an item meta data property
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties",
        method = "post"
    )]
    async fn create_item_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<ItemPropertyCreate>,
    ) -> WriteResult<Created<ItemPropertyOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let saved = meta::save_item_property(&state.db, ev.event.id, None, body.0.into())
            .await
            .map_err(ApiError::from)?;
        Ok(Created::Created(Json(item_property_out(saved))))
    }

    /// Replace an item meta data property
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties/:id",
        method = "put"
    )]
    async fn put_item_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ItemPropertyCreate>,
    ) -> WriteResult<Json<ItemPropertyOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = meta::find_item_property(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        let saved = meta::save_item_property(&state.db, ev.event.id, Some(existing), body.0.into())
            .await
            .map_err(ApiError::from)?;
        Ok(Json(item_property_out(saved)))
    }

    /// Change an item meta data property
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties/:id",
        method = "patch"
    )]
    async fn patch_item_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ItemPropertyPatch>,
    ) -> WriteResult<Json<ItemPropertyOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = meta::find_item_property(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        let mut fields = ItemPropertyFields::from(&existing);
        body.0.apply(&mut fields);
        let saved = meta::save_item_property(&state.db, ev.event.id, Some(existing), fields)
            .await
            .map_err(ApiError::from)?;
        Ok(Json(item_property_out(saved)))
    }

    /// Delete an item meta data property
    ///
    /// Items lose their values for it. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/item_meta_properties/:id",
        method = "delete"
    )]
    async fn delete_item_meta_property(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let txn = begin_write(&state.db).await?;
        let existing = meta::find_item_property(&txn, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        meta::delete_item_property(&txn, existing).await?;
        commit(txn).await?;
        Ok(NoContent::NoContent)
    }
}
