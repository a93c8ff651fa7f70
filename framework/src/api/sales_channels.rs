//! Sales channels of an organizer: `/api/v1/organizers/{organizer}/saleschannels/`, found by
//! identifier. Reading and writing need `can_change_organizer_settings`, as in pretix.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::sales_channel;
use crate::db::{begin_write, commit};
use crate::domain::grants::OrganizerAccess;
use crate::domain::permissions::Permission;
use crate::domain::sales_channels::{self, API_TYPE, Fields, Filter};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, I18nString, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;

/// A sales channel.
#[derive(Object)]
#[oai(rename = "SalesChannel")]
pub struct ChannelOut {
    /// Identifier; items, events and orders name the channel by it.
    pub identifier: String,
    /// Kind: `web` (the online shop), `resellers`, or `api`.
    #[oai(rename = "type")]
    pub kind: String,
    /// Name.
    pub label: I18nString,
    /// Place in lists.
    pub position: i32,
}

fn channel_out(c: &sales_channel::Model) -> ChannelOut {
    ChannelOut {
        identifier: c.identifier.clone(),
        kind: c.kind.clone(),
        label: I18nString::from_stored(&c.label),
        position: c.position,
    }
}

/// A new channel, or every field of one (PUT).
#[derive(Object)]
pub struct ChannelCreate {
    /// Identifier: `api.` and letters, digits, `.`, `-` and `_`; fixed once created.
    #[oai(validator(min_length = 1, max_length = 200))]
    pub identifier: String,
    /// Kind; only `api` channels are created here, and it never changes.
    #[oai(rename = "type", default = "api_type", validator(max_length = 200))]
    pub kind: String,
    /// Name.
    pub label: I18nString,
    /// Place in lists.
    #[oai(
        default,
        validator(minimum(value = "0"), maximum(value = "2147483647"))
    )]
    pub position: i32,
}

fn api_type() -> String {
    API_TYPE.to_owned()
}

impl From<ChannelCreate> for Fields {
    fn from(c: ChannelCreate) -> Self {
        Self {
            identifier: c.identifier,
            kind: c.kind,
            label: c.label,
            position: c.position,
        }
    }
}

/// A change of a channel.
#[derive(Object)]
pub struct ChannelPatch {
    /// Identifier; cannot change.
    #[oai(validator(min_length = 1, max_length = 200))]
    pub identifier: Option<String>,
    /// Kind; cannot change.
    #[oai(rename = "type", validator(max_length = 200))]
    pub kind: Option<String>,
    /// Name.
    pub label: Option<I18nString>,
    /// Place in lists.
    #[oai(validator(minimum(value = "0"), maximum(value = "2147483647")))]
    pub position: Option<i32>,
}

fn settings_holder(auth: &Auth, organizer: &str) -> Result<OrganizerAccess, ApiError> {
    Ok(auth
        .0
        .organizer(organizer, Some(Permission::ChangeOrganizerSettings))?)
}

async fn existing(
    state: &AppState,
    org: &OrganizerAccess,
    identifier: &str,
) -> Result<sales_channel::Model, ApiError> {
    sales_channels::find(&state.db, org.organizer.id, identifier)
        .await?
        .ok_or_else(ApiError::forbidden)
}

/// Sales channel operations.
pub struct SalesChannelsApi;

#[OpenApi(tag = "Tag::Organizers")]
impl SalesChannelsApi {
    /// List sales channels
    #[oai(path = "/api/v1/organizers/:organizer/saleschannels", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_sales_channels(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        #[oai(name = "type", validator(max_length = 200))] kind: Query<Option<String>>,
        #[oai(validator(max_length = 200))] identifier: Query<Option<String>>,
    ) -> ListResult<Json<Page<ChannelOut>>> {
        let org = settings_holder(&auth, &organizer)?;
        let filter = Filter {
            kind: kind.0,
            identifier: identifier.0,
        };
        let channels = sales_channels::list(&state.db, org.organizer.id, &filter).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(page.page_of(&channels, channel_out)?))
    }

    /// Show a sales channel
    #[oai(
        path = "/api/v1/organizers/:organizer/saleschannels/:identifier",
        method = "get"
    )]
    async fn get_sales_channel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        identifier: Path<String>,
    ) -> ReadResult<Json<ChannelOut>> {
        let org = settings_holder(&auth, &organizer)?;
        Ok(Json(channel_out(
            &existing(&state, &org, &identifier).await?,
        )))
    }

    /// Create a sales channel
    ///
    /// Only channels of type `api` with an identifier starting with `api.`.
    #[oai(path = "/api/v1/organizers/:organizer/saleschannels", method = "post")]
    async fn create_sales_channel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<ChannelCreate>,
    ) -> WriteResult<Created<ChannelOut>> {
        let org = settings_holder(&auth, &organizer)?;
        let saved = sales_channels::save(&state.db, org.organizer.id, None, body.0.into())
            .await
            .map_err(ApiError::from)?;
        Ok(Created::Created(Json(channel_out(&saved))))
    }

    /// Replace a sales channel
    ///
    /// Its identifier and type cannot change.
    #[oai(
        path = "/api/v1/organizers/:organizer/saleschannels/:identifier",
        method = "put"
    )]
    async fn put_sales_channel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        identifier: Path<String>,
        body: JsonBody<ChannelCreate>,
    ) -> WriteResult<Json<ChannelOut>> {
        let org = settings_holder(&auth, &organizer)?;
        let old = existing(&state, &org, &identifier).await?;
        let saved = sales_channels::save(&state.db, org.organizer.id, Some(old), body.0.into())
            .await
            .map_err(ApiError::from)?;
        Ok(Json(channel_out(&saved)))
    }

    /// Change a sales channel
    ///
    /// Its label and position; the identifier and type cannot change.
    #[oai(
        path = "/api/v1/organizers/:organizer/saleschannels/:identifier",
        method = "patch"
    )]
    async fn patch_sales_channel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        identifier: Path<String>,
        body: JsonBody<ChannelPatch>,
    ) -> WriteResult<Json<ChannelOut>> {
        let org = settings_holder(&auth, &organizer)?;
        let old = existing(&state, &org, &identifier).await?;
        let p = body.0;
        let fields = Fields {
            identifier: p.identifier.unwrap_or_else(|| old.identifier.clone()),
            kind: p.kind.unwrap_or_else(|| old.kind.clone()),
            label: p
                .label
                .unwrap_or_else(|| I18nString::from_stored(&old.label)),
            position: p.position.unwrap_or(old.position),
        };
        let saved = sales_channels::save(&state.db, org.organizer.id, Some(old), fields)
            .await
            .map_err(ApiError::from)?;
        Ok(Json(channel_out(&saved)))
    }

    /// Delete a sales channel
    ///
    /// Only a channel of the organizer's own (`api`) that no order came through; items and
    /// events lose it.
    #[oai(
        path = "/api/v1/organizers/:organizer/saleschannels/:identifier",
        method = "delete"
    )]
    async fn delete_sales_channel(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        identifier: Path<String>,
    ) -> DeleteResult<NoContent> {
        let org = settings_holder(&auth, &organizer)?;
        let txn = begin_write(&state.db).await?;
        let found = sales_channels::find(&txn, org.organizer.id, &identifier)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        sales_channels::delete(&txn, found)
            .await
            .map_err(ApiError::from)?;
        commit(txn).await?;
        Ok(NoContent::NoContent)
    }
}
