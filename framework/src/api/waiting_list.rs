//! The waiting list of an event:
//! `/api/v1/organizers/{organizer}/events/{event}/waitinglistentries/`.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use serde_json::Value;

use super::Tag;
use crate::db::entities::waiting_list_entry;
use crate::domain::permissions::Permission;
use crate::domain::waiting_list::{
    self, EntryError, EntryFields, EntryFilter, EntryOrder, SendError,
};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, JsonBody, NoContent, Page, PageRequest, patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// Somebody waiting for a product.
#[derive(Object)]
#[oai(rename = "WaitingListEntry")]
pub struct EntryOut {
    /// Internal ID.
    pub id: i64,
    /// When the entry was made.
    pub created: Timestamp,
    /// Name of the waiting person.
    #[oai(nullable)]
    pub name: Option<String>,
    /// The name in parts.
    #[oai(nullable)]
    pub name_parts: Option<BTreeMap<String, String>>,
    /// E-mail address.
    pub email: String,
    /// Phone number.
    #[oai(nullable)]
    pub phone: Option<String>,
    /// The voucher sent; once set, the person no longer waits.
    #[oai(nullable)]
    pub voucher: Option<i64>,
    /// The item waited for.
    pub item: i64,
    /// Its variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Language of the person.
    pub locale: String,
    /// The date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Higher is served first.
    pub priority: i32,
}

impl From<waiting_list_entry::Model> for EntryOut {
    fn from(e: waiting_list_entry::Model) -> Self {
        let parts = e.name_parts.as_ref().and_then(Value::as_object).map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        });
        Self {
            id: e.id,
            created: e.created.into(),
            name: waiting_list::display_name(e.name_parts.as_ref()),
            name_parts: parts,
            email: e.email,
            phone: e.phone,
            voucher: e.voucher_id,
            item: e.item_id,
            variation: e.variation_id,
            locale: e.locale,
            subevent: e.subevent_id,
            priority: e.priority,
        }
    }
}

/// A new entry, or all fields of one (PUT).
#[derive(Object)]
pub struct EntryCreate {
    /// E-mail address.
    #[oai(validator(max_length = 254))]
    pub email: String,
    /// An item of this event that allows a waiting list.
    pub item: i64,
    /// A variation of the item; required for items with variations.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Language of the person (default `en`); the e-mail with the voucher uses it.
    #[oai(default = "english", validator(min_length = 1, max_length = 190))]
    pub locale: String,
    /// A date of this event series; required in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Name; not together with `name_parts`.
    #[oai(nullable, validator(max_length = 255))]
    pub name: Option<String>,
    /// The name in parts. Each at most 255 characters.
    #[oai(nullable, validator(max_length = 255, max_properties = 100))]
    pub name_parts: Option<BTreeMap<String, String>>,
    /// Phone number.
    #[oai(nullable, validator(max_length = 128))]
    pub phone: Option<String>,
    /// Higher is served first.
    #[oai(default)]
    pub priority: i32,
}

fn english() -> String {
    "en".into()
}

/// A partial change of an entry.
#[derive(Object)]
pub struct EntryPatch {
    /// E-mail address.
    #[oai(validator(max_length = 254))]
    pub email: Option<String>,
    /// Item.
    pub item: Option<i64>,
    /// Variation.
    #[oai(nullable)]
    pub variation: MaybeUndefined<i64>,
    /// Language.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub locale: Option<String>,
    /// Date of the series.
    #[oai(nullable)]
    pub subevent: MaybeUndefined<i64>,
    /// Name; not together with `name_parts`.
    #[oai(nullable, validator(max_length = 255))]
    pub name: MaybeUndefined<String>,
    /// The name in parts. Each at most 255 characters.
    #[oai(nullable, validator(max_length = 255, max_properties = 100))]
    pub name_parts: MaybeUndefined<BTreeMap<String, String>>,
    /// Phone number.
    #[oai(nullable, validator(max_length = 128))]
    pub phone: MaybeUndefined<String>,
    /// Priority.
    pub priority: Option<i32>,
}

fn optional<T>(v: Option<T>) -> MaybeUndefined<T> {
    v.map_or(MaybeUndefined::Undefined, MaybeUndefined::Value)
}

/// The stored name parts from `name` or `name_parts` as sent (a plain name becomes
/// `{"_legacy": name}`); `current` when neither was sent.
fn name_parts(
    name: MaybeUndefined<String>,
    parts: MaybeUndefined<BTreeMap<String, String>>,
    current: Option<Value>,
) -> Result<Option<Value>, ApiError> {
    use MaybeUndefined::{Null, Undefined, Value as Sent};
    match (name, parts) {
        (Sent(_), Sent(_)) => Err(ApiError::field(
            "name",
            "Do not specify name if you specified name_parts.",
        )),
        (Sent(n), _) if n.trim().is_empty() => Ok(None),
        (Sent(n), _) => Ok(Some(serde_json::json!({ "_legacy": n }))),
        (_, Sent(p)) => Ok(Some(serde_json::to_value(p).unwrap_or(Value::Null))),
        (Null, _) | (_, Null) => Ok(None),
        (Undefined, Undefined) => Ok(current),
    }
}

impl EntryCreate {
    fn fields(self) -> Result<EntryFields, ApiError> {
        Ok(EntryFields {
            name_parts: name_parts(optional(self.name), optional(self.name_parts), None)?,
            email: self.email,
            phone: self.phone,
            item_id: self.item,
            variation_id: self.variation,
            locale: self.locale,
            subevent_id: self.subevent,
            priority: self.priority,
        })
    }
}

impl EntryPatch {
    fn apply(self, f: EntryFields) -> Result<EntryFields, ApiError> {
        Ok(EntryFields {
            name_parts: name_parts(self.name, self.name_parts, f.name_parts)?,
            email: self.email.unwrap_or(f.email),
            phone: patched(self.phone).unwrap_or(f.phone),
            item_id: self.item.unwrap_or(f.item_id),
            variation_id: patched(self.variation).unwrap_or(f.variation_id),
            locale: self.locale.unwrap_or(f.locale),
            subevent_id: patched(self.subevent).unwrap_or(f.subevent_id),
            priority: self.priority.unwrap_or(f.priority),
        })
    }
}

/// Order of the entry list; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum EntryOrdering {
    /// By ID.
    #[oai(rename = "id")]
    Id,
    /// By ID, descending.
    #[oai(rename = "-id")]
    IdDesc,
    /// By creation (default).
    #[oai(rename = "created")]
    Created,
    /// By creation, newest first.
    #[oai(rename = "-created")]
    CreatedDesc,
    /// By e-mail address.
    #[oai(rename = "email")]
    Email,
    /// By e-mail address, descending.
    #[oai(rename = "-email")]
    EmailDesc,
    /// By item.
    #[oai(rename = "item")]
    Item,
    /// By item, descending.
    #[oai(rename = "-item")]
    ItemDesc,
}

impl EntryOrdering {
    fn order(self) -> (EntryOrder, bool) {
        use EntryOrdering as O;
        match self {
            O::Id => (EntryOrder::Id, false),
            O::IdDesc => (EntryOrder::Id, true),
            O::Created => (EntryOrder::Created, false),
            O::CreatedDesc => (EntryOrder::Created, true),
            O::Email => (EntryOrder::Email, false),
            O::EmailDesc => (EntryOrder::Email, true),
            O::Item => (EntryOrder::Item, false),
            O::ItemDesc => (EntryOrder::Item, true),
        }
    }
}

fn entry_error(e: EntryError) -> ApiError {
    match e {
        EntryError::Invalid(invalid) => FieldErrors::check(invalid)
            .err()
            .map_or_else(ApiError::internal, ApiError::from),
        EntryError::NotNow(reason) => ApiError::forbidden_because(reason),
        EntryError::HasVoucher => ApiError::forbidden_because(
            "This entry can not be changed or deleted as it has already been assigned a voucher.",
        ),
        EntryError::Gone => ApiError::forbidden(),
        EntryError::Db(e) => e.into(),
    }
}

async fn find_entry(
    state: &AppState,
    event_id: i64,
    id: i64,
) -> Result<waiting_list_entry::Model, ApiError> {
    waiting_list::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

/// Waiting list operations.
pub struct WaitingListApi;

#[OpenApi(tag = "Tag::WaitingList")]
impl WaitingListApi {
    /// List waiting list entries
    ///
    /// Oldest first unless `ordering` says otherwise; `email` matches ignoring case,
    /// `has_voucher` tells those served from those still waiting. Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_waiting_list_entries(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        email: Query<Option<String>>,
        locale: Query<Option<String>>,
        has_voucher: Query<Option<bool>>,
        item: Query<Option<i64>>,
        variation: Query<Option<i64>>,
        subevent: Query<Option<i64>>,
        ordering: Query<Option<EntryOrdering>>,
    ) -> ListResult<Json<Page<EntryOut>>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        let filter = EntryFilter {
            email: email.0,
            locale: locale.0,
            has_voucher: has_voucher.0,
            item_id: item.0,
            variation_id: variation.0,
            subevent_id: subevent.0,
        };
        let (order, descending) = ordering.0.unwrap_or(EntryOrdering::Created).order();
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(
                &state.db,
                waiting_list::query(ev.event.id, &filter, order, descending),
            )
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show a waiting list entry
    ///
    /// Needs `can_view_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries/:id",
        method = "get"
    )]
    async fn get_waiting_list_entry(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<EntryOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ViewOrders))
            .await?;
        Ok(Json(find_entry(&state, ev.event.id, *id).await?.into()))
    }

    /// Add somebody to the waiting list
    ///
    /// Only while the event's waiting list is enabled (`waiting_list_enabled`), the item
    /// allows it and the product is not available; otherwise 403. The entry holds one unit
    /// of the product's quotas until a voucher is sent. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries",
        method = "post"
    )]
    async fn create_waiting_list_entry(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<EntryCreate>,
    ) -> WriteResult<Created<EntryOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let fields = body.0.fields()?;
        let saved = waiting_list::create(&state.db, &state.settings, &ev.event, fields)
            .await
            .map_err(entry_error)?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a waiting list entry
    ///
    /// 403 once a voucher was sent. A new product is accepted on the terms of a new entry.
    /// Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries/:id",
        method = "put"
    )]
    async fn put_waiting_list_entry(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<EntryCreate>,
    ) -> WriteResult<Json<EntryOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let existing = find_entry(&state, ev.event.id, *id).await?;
        let fields = body.0.fields()?;
        let saved =
            waiting_list::update(&state.db, &state.settings, &ev.event, existing.id, fields)
                .await
                .map_err(entry_error)?;
        Ok(Json(saved.into()))
    }

    /// Change a waiting list entry
    ///
    /// 403 once a voucher was sent. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries/:id",
        method = "patch"
    )]
    async fn patch_waiting_list_entry(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<EntryPatch>,
    ) -> WriteResult<Json<EntryOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let existing = find_entry(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(EntryFields::of(&existing))?;
        let saved =
            waiting_list::update(&state.db, &state.settings, &ev.event, existing.id, fields)
                .await
                .map_err(entry_error)?;
        Ok(Json(saved.into()))
    }

    /// Delete a waiting list entry
    ///
    /// 403 once a voucher was sent; otherwise the unit it held is given back. Needs
    /// `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries/:id",
        method = "delete"
    )]
    async fn delete_waiting_list_entry(
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
                Some(Permission::ChangeOrders),
            )
            .await?;
        let existing = find_entry(&state, ev.event.id, *id).await?;
        waiting_list::delete(&state.db, &ev.event, existing.id)
            .await
            .map_err(entry_error)?;
        Ok(NoContent::NoContent)
    }

    /// Send a voucher to a waiting person
    ///
    /// Creates a voucher for the entry's product (one use, blocking one unit, valid for the
    /// event's `waiting_list_hours`, tag `waiting-list`), assigns it to the entry and
    /// e-mails it in the person's language. 400 when a voucher was sent already or the
    /// product is not available (the waiting list not counted). Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/waitinglistentries/:id/send_voucher",
        method = "post"
    )]
    async fn send_waiting_list_voucher(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> WriteResult<NoContent> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeOrders),
            )
            .await?;
        let existing = find_entry(&state, ev.event.id, *id).await?;
        let shop = crate::domain::orders::Storefront {
            public_url: &state.public_url,
            organizer: &ev.organizer.slug,
        };
        match waiting_list::send_voucher(&state.db, &state.settings, shop, &ev.event, existing.id)
            .await
        {
            Ok(_) => {
                state.mailer.wake();
                Ok(NoContent::NoContent)
            }
            Err(SendError::Refused(reason)) => Err(ApiError::bad_request(reason).into()),
            Err(SendError::Gone) => Err(ApiError::forbidden().into()),
            Err(SendError::Db(e)) => Err(e.into()),
        }
    }
}
