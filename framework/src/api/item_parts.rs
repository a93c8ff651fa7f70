//! The nested parts of an item: variations, add-ons and bundles, under
//! `/api/v1/organizers/{organizer}/events/{event}/items/{item}/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::{item, item_addon, item_bundle, item_variation};
use crate::domain::items::{
    self, AddonFields, BundleFields, DeleteError, VariationFields, WriteError,
};
use crate::domain::permissions::Permission;
use crate::http::auth::EventAccess;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, I18nString, JsonBody, Money, NoContent, Page,
    PageRequest, patched,
};
use crate::state::AppState;

/// A variation of an item.
#[derive(Object)]
#[oai(rename = "ItemVariation")]
pub struct VariationOut {
    /// Internal ID.
    pub id: i64,
    /// Name of the variation.
    pub value: I18nString,
    /// Price set directly.
    #[oai(nullable)]
    pub default_price: Option<Money>,
    /// Read-only: `default_price` if set, else the item's.
    pub price: Money,
    /// Comparison price.
    #[oai(nullable)]
    pub original_price: Option<Money>,
    /// If false, not sold or shown.
    pub active: bool,
    /// Description; may contain Markdown.
    #[oai(nullable)]
    pub description: Option<I18nString>,
    /// Sort position.
    pub position: i32,
}

impl VariationOut {
    /// The variation as shown, given its item's price in cents.
    pub fn new(v: item_variation::Model, item_price_cents: i64) -> Self {
        Self {
            id: v.id,
            value: I18nString::from_stored(&v.value),
            default_price: v.default_price_cents.map(Money),
            price: Money(v.default_price_cents.unwrap_or(item_price_cents)),
            original_price: v.original_price_cents.map(Money),
            active: v.active,
            description: v.description.as_ref().map(I18nString::from_stored),
            position: v.position,
        }
    }
}

/// A new variation, or all fields of a variation (PUT).
#[derive(Object)]
pub struct VariationCreate {
    /// Name of the variation.
    #[oai(validator(max_length = 255))]
    pub value: I18nString,
    /// Price; the item's when null.
    #[oai(nullable)]
    pub default_price: Option<Money>,
    /// Comparison price.
    #[oai(nullable)]
    pub original_price: Option<Money>,
    /// If false, not sold or shown.
    #[oai(default = "yes")]
    pub active: bool,
    /// Description. At most 100,000 characters per language (pretix sets no limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: Option<I18nString>,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
}

fn yes() -> bool {
    true
}

impl From<VariationCreate> for VariationFields {
    fn from(v: VariationCreate) -> Self {
        Self {
            value: v.value.to_stored(),
            default_price_cents: v.default_price.map(|m| m.0),
            original_price_cents: v.original_price.map(|m| m.0),
            active: v.active,
            description: v.description.map(|d| d.to_stored()),
            position: v.position,
        }
    }
}

/// A partial change of a variation.
#[derive(Object)]
pub struct VariationPatch {
    /// Name.
    #[oai(validator(max_length = 255))]
    pub value: Option<I18nString>,
    /// Price; null takes the item's.
    #[oai(nullable)]
    pub default_price: MaybeUndefined<Money>,
    /// Comparison price.
    #[oai(nullable)]
    pub original_price: MaybeUndefined<Money>,
    /// Sold and shown.
    pub active: Option<bool>,
    /// Description. At most 100,000 characters per language (pretix sets no limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: MaybeUndefined<I18nString>,
    /// Sort position.
    pub position: Option<i32>,
}

impl VariationPatch {
    fn apply(self, mut f: VariationFields) -> VariationFields {
        if let Some(v) = self.value {
            f.value = v.to_stored();
        }
        if let Some(p) = patched(self.default_price) {
            f.default_price_cents = p.map(|m| m.0);
        }
        if let Some(p) = patched(self.original_price) {
            f.original_price_cents = p.map(|m| m.0);
        }
        f.active = self.active.unwrap_or(f.active);
        if let Some(d) = patched(self.description) {
            f.description = d.map(|d| d.to_stored());
        }
        f.position = self.position.unwrap_or(f.position);
        f
    }
}

/// An add-on configuration: products of an add-on category offered with the item.
#[derive(Object)]
#[oai(rename = "ItemAddon")]
pub struct AddonOut {
    /// Internal ID.
    pub id: i64,
    /// The add-on category.
    pub addon_category: i64,
    /// Least number of add-ons chosen.
    pub min_count: i32,
    /// Most number of add-ons chosen.
    pub max_count: i32,
    /// Sort position.
    pub position: i32,
    /// Whether the same add-on may be chosen repeatedly.
    pub multi_allowed: bool,
    /// Whether the add-ons are free.
    pub price_included: bool,
}

impl From<item_addon::Model> for AddonOut {
    fn from(a: item_addon::Model) -> Self {
        Self {
            id: a.id,
            addon_category: a.addon_category_id,
            min_count: a.min_count,
            max_count: a.max_count,
            position: a.position,
            multi_allowed: a.multi_allowed,
            price_included: a.price_included,
        }
    }
}

/// A new add-on configuration, or all its fields (PUT).
#[derive(Object)]
pub struct AddonCreate {
    /// An add-on category of this event.
    pub addon_category: i64,
    /// Least number chosen; not negative, not above `max_count`.
    #[oai(default)]
    pub min_count: i32,
    /// Most number chosen.
    #[oai(default = "one")]
    pub max_count: i32,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
    /// Whether the same add-on may be chosen repeatedly.
    #[oai(default)]
    pub multi_allowed: bool,
    /// Whether the add-ons are free.
    #[oai(default)]
    pub price_included: bool,
}

fn one() -> i32 {
    1
}

impl From<AddonCreate> for AddonFields {
    fn from(a: AddonCreate) -> Self {
        Self {
            addon_category_id: a.addon_category,
            min_count: a.min_count,
            max_count: a.max_count,
            position: a.position,
            multi_allowed: a.multi_allowed,
            price_included: a.price_included,
        }
    }
}

/// A partial change of an add-on configuration.
#[derive(Object)]
pub struct AddonPatch {
    /// The add-on category.
    pub addon_category: Option<i64>,
    /// Least number chosen.
    pub min_count: Option<i32>,
    /// Most number chosen.
    pub max_count: Option<i32>,
    /// Sort position.
    pub position: Option<i32>,
    /// Same add-on repeatedly.
    pub multi_allowed: Option<bool>,
    /// Add-ons are free.
    pub price_included: Option<bool>,
}

impl AddonPatch {
    fn apply(self, f: AddonFields) -> AddonFields {
        AddonFields {
            addon_category_id: self.addon_category.unwrap_or(f.addon_category_id),
            min_count: self.min_count.unwrap_or(f.min_count),
            max_count: self.max_count.unwrap_or(f.max_count),
            position: self.position.unwrap_or(f.position),
            multi_allowed: self.multi_allowed.unwrap_or(f.multi_allowed),
            price_included: self.price_included.unwrap_or(f.price_included),
        }
    }
}

/// A bundle configuration: an item included with the base item.
#[derive(Object)]
#[oai(rename = "ItemBundle")]
pub struct BundleOut {
    /// Internal ID.
    pub id: i64,
    /// The included item.
    pub bundled_item: i64,
    /// The included variation.
    #[oai(nullable)]
    pub bundled_variation: Option<i64>,
    /// Number included.
    pub count: i32,
    /// Share of the base item's price (for split taxation); not added to the price.
    pub designated_price: Money,
}

impl From<item_bundle::Model> for BundleOut {
    fn from(b: item_bundle::Model) -> Self {
        Self {
            id: b.id,
            bundled_item: b.bundled_item_id,
            bundled_variation: b.bundled_variation_id,
            count: b.count,
            designated_price: Money(b.designated_price_cents),
        }
    }
}

/// A new bundle configuration, or all its fields (PUT).
#[derive(Object)]
pub struct BundleCreate {
    /// An item of this event without bundles of its own; not the base item.
    pub bundled_item: i64,
    /// A variation of the bundled item (required when it has variations).
    #[oai(nullable)]
    pub bundled_variation: Option<i64>,
    /// Number included; at least 1.
    #[oai(default = "one")]
    pub count: i32,
    /// Share of the base item's price.
    #[oai(default)]
    pub designated_price: Money,
}

impl From<BundleCreate> for BundleFields {
    fn from(b: BundleCreate) -> Self {
        Self {
            bundled_item_id: b.bundled_item,
            bundled_variation_id: b.bundled_variation,
            count: b.count,
            designated_price_cents: b.designated_price.0,
        }
    }
}

/// A partial change of a bundle configuration.
#[derive(Object)]
pub struct BundlePatch {
    /// The included item.
    pub bundled_item: Option<i64>,
    /// The included variation.
    #[oai(nullable)]
    pub bundled_variation: MaybeUndefined<i64>,
    /// Number included.
    pub count: Option<i32>,
    /// Share of the base item's price.
    pub designated_price: Option<Money>,
}

impl BundlePatch {
    fn apply(self, f: BundleFields) -> BundleFields {
        BundleFields {
            bundled_item_id: self.bundled_item.unwrap_or(f.bundled_item_id),
            bundled_variation_id: patched(self.bundled_variation).unwrap_or(f.bundled_variation_id),
            count: self.count.unwrap_or(f.count),
            designated_price_cents: self
                .designated_price
                .map_or(f.designated_price_cents, |m| m.0),
        }
    }
}

/// Operations on variations, add-ons and bundles of items.
pub struct ItemPartsApi;

/// The event and its item, checked for the caller (and `needs`).
async fn event_item(
    state: &AppState,
    auth: &Auth,
    organizer: &str,
    event: &str,
    item: i64,
    needs: Option<Permission>,
) -> Result<(EventAccess, item::Model), ApiError> {
    let ev = auth.0.event(&state.db, organizer, event, needs).await?;
    let it = find_item(state, ev.event.id, item).await?;
    Ok((ev, it))
}

const WRITE: Option<Permission> = Some(Permission::ChangeItems);

fn found<T>(row: Option<T>) -> Result<T, ApiError> {
    row.ok_or_else(ApiError::forbidden)
}

#[OpenApi(tag = "Tag::Items")]
impl ItemPartsApi {
    /// List the variations of an item
    ///
    /// By position, then ID; `active` filters.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_variations(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        active: Query<Option<bool>>,
    ) -> ListResult<Json<Page<VariationOut>>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, items::variations_query(it.id, active.0))
            .await?;
        Ok(Json(
            page.map(|v| VariationOut::new(v, it.default_price_cents)),
        ))
    }

    /// Show a variation
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations/:id",
        method = "get"
    )]
    async fn get_variation(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<VariationOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        let v = found(items::find_variation(&state.db, it.id, *id).await?)?;
        Ok(Json(VariationOut::new(v, it.default_price_cents)))
    }

    /// Create a variation
    ///
    /// Only for items created with variations (403 otherwise).
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations",
        method = "post"
    )]
    async fn create_variation(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        body: JsonBody<VariationCreate>,
    ) -> WriteResult<Created<VariationOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        if !it.has_variations {
            return Err(ApiError::forbidden_because(
                "This item was created without variations; it cannot get any.",
            )
            .into());
        }
        let fields = VariationFields::from(body.0);
        FieldErrors::check(items::invalid_variation(&fields))?;
        let v = crate::db::in_transaction(&state.db, async |txn| {
            items::insert_variation(txn, it.id, fields).await
        })
        .await?;
        Ok(Created::Created(Json(VariationOut::new(
            v,
            it.default_price_cents,
        ))))
    }

    /// Replace a variation
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations/:id",
        method = "put"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn put_variation(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<VariationCreate>,
    ) -> WriteResult<Json<VariationOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_variation(&state.db, it.id, *id).await?)?;
        let fields = VariationFields::from(body.0);
        FieldErrors::check(items::invalid_variation(&fields))?;
        let v = items::update_variation(&state.db, &existing, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(VariationOut::new(v, it.default_price_cents)))
    }

    /// Change a variation
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations/:id",
        method = "patch"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn patch_variation(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<VariationPatch>,
    ) -> WriteResult<Json<VariationOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_variation(&state.db, it.id, *id).await?)?;
        let fields = body.0.apply(VariationFields::from(&existing));
        FieldErrors::check(items::invalid_variation(&fields))?;
        let v = items::update_variation(&state.db, &existing, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(VariationOut::new(v, it.default_price_cents)))
    }

    /// Delete a variation
    ///
    /// 403 for the item's last variation and for variations that have been ordered.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/variations/:id",
        method = "delete"
    )]
    async fn delete_variation(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_variation(&state.db, it.id, *id).await?)?;
        items::delete_variation(&state.db, &existing)
            .await
            .map_err(delete_error)?;
        Ok(NoContent::NoContent)
    }

    /// List the add-ons of an item
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_addons(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<AddonOut>>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, items::addons_query(it.id))
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show an add-on
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons/:id",
        method = "get"
    )]
    async fn get_addon(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<AddonOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        Ok(Json(
            found(items::find_addon(&state.db, it.id, *id).await?)?.into(),
        ))
    }

    /// Create an add-on
    ///
    /// The category must be an add-on category of this event, once per item.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons",
        method = "post"
    )]
    async fn create_addon(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        body: JsonBody<AddonCreate>,
    ) -> WriteResult<Created<AddonOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let fields = AddonFields::from(body.0);
        let others = items::addon_categories(&state.db, it.id, None).await?;
        FieldErrors::check(items::invalid_addon(&state.db, ev.event.id, &fields, &others).await?)?;
        let a = items::create_addon(&state.db, it.id, fields)
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(a.into())))
    }

    /// Replace an add-on
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons/:id",
        method = "put"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn put_addon(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<AddonCreate>,
    ) -> WriteResult<Json<AddonOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_addon(&state.db, it.id, *id).await?)?;
        let fields = AddonFields::from(body.0);
        save_addon(&state, ev.event.id, &existing, fields).await
    }

    /// Change an add-on
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons/:id",
        method = "patch"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn patch_addon(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<AddonPatch>,
    ) -> WriteResult<Json<AddonOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_addon(&state.db, it.id, *id).await?)?;
        let fields = body.0.apply(AddonFields::from(&existing));
        save_addon(&state, ev.event.id, &existing, fields).await
    }

    /// Delete an add-on
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/addons/:id",
        method = "delete"
    )]
    async fn delete_addon(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        use sea_orm::EntityTrait;
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_addon(&state.db, it.id, *id).await?)?;
        item_addon::Entity::delete_by_id(existing.id)
            .exec(&state.db)
            .await?;
        Ok(NoContent::NoContent)
    }

    /// List the bundles of an item
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_bundles(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<BundleOut>>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, items::bundles_query(it.id))
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show a bundle
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles/:id",
        method = "get"
    )]
    async fn get_bundle(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> ReadResult<Json<BundleOut>> {
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, None).await?;
        Ok(Json(
            found(items::find_bundle(&state.db, it.id, *id).await?)?.into(),
        ))
    }

    /// Create a bundle
    ///
    /// The bundled item must be another item of this event without bundles of its own;
    /// the variation, if any, one of the bundled item.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles",
        method = "post"
    )]
    async fn create_bundle(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        body: JsonBody<BundleCreate>,
    ) -> WriteResult<Created<BundleOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let fields = BundleFields::from(body.0);
        FieldErrors::check(
            items::invalid_bundle(&state.db, ev.event.id, Some(it.id), &fields).await?,
        )?;
        let b = crate::db::in_transaction(&state.db, async |txn| {
            items::insert_bundle(txn, it.id, fields).await
        })
        .await?;
        Ok(Created::Created(Json(b.into())))
    }

    /// Replace a bundle
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles/:id",
        method = "put"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn put_bundle(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<BundleCreate>,
    ) -> WriteResult<Json<BundleOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_bundle(&state.db, it.id, *id).await?)?;
        save_bundle(&state, ev.event.id, &existing, body.0.into()).await
    }

    /// Change a bundle
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles/:id",
        method = "patch"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn patch_bundle(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
        body: JsonBody<BundlePatch>,
    ) -> WriteResult<Json<BundleOut>> {
        let (ev, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_bundle(&state.db, it.id, *id).await?)?;
        let fields = body.0.apply(BundleFields::from(&existing));
        save_bundle(&state, ev.event.id, &existing, fields).await
    }

    /// Delete a bundle
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:item/bundles/:id",
        method = "delete"
    )]
    async fn delete_bundle(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        item: Path<i64>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        use sea_orm::EntityTrait;
        let (_, it) = event_item(&state, &auth, &organizer, &event, *item, WRITE).await?;
        let existing = found(items::find_bundle(&state.db, it.id, *id).await?)?;
        item_bundle::Entity::delete_by_id(existing.id)
            .exec(&state.db)
            .await?;
        Ok(NoContent::NoContent)
    }
}

async fn save_addon(
    state: &AppState,
    event_id: i64,
    existing: &item_addon::Model,
    fields: AddonFields,
) -> WriteResult<Json<AddonOut>> {
    let others = items::addon_categories(&state.db, existing.item_id, Some(existing.id)).await?;
    FieldErrors::check(items::invalid_addon(&state.db, event_id, &fields, &others).await?)?;
    Ok(Json(
        items::update_addon(&state.db, existing, fields)
            .await
            .map_err(write_error)?
            .into(),
    ))
}

async fn save_bundle(
    state: &AppState,
    event_id: i64,
    existing: &item_bundle::Model,
    fields: BundleFields,
) -> WriteResult<Json<BundleOut>> {
    let invalid =
        items::invalid_bundle(&state.db, event_id, Some(existing.item_id), &fields).await?;
    FieldErrors::check(invalid)?;
    Ok(Json(
        items::update_bundle(&state.db, existing, fields)
            .await
            .map_err(write_error)?
            .into(),
    ))
}

/// The item of the event, or 403.
pub async fn find_item(state: &AppState, event_id: i64, id: i64) -> Result<item::Model, ApiError> {
    items::find_row(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

/// The answer to a refused or failed write of an item or a part of it: broken rules are 400
/// on their fields, something deleted meanwhile is 403 like anything missing.
pub fn write_error(e: WriteError) -> ApiError {
    match e {
        WriteError::Invalid(invalid) => FieldErrors::check(invalid)
            .err()
            .map_or_else(ApiError::internal, ApiError::from),
        WriteError::Gone => ApiError::forbidden(),
        WriteError::Db(e) => e.into(),
    }
}

/// The answer to a refused or failed delete of an item or variation.
pub fn delete_error(e: DeleteError) -> ApiError {
    match e {
        DeleteError::Ordered => ApiError::forbidden_because(
            "This item has been ordered and cannot be deleted; deactivate it instead.",
        ),
        DeleteError::LastVariation => ApiError::forbidden_because(
            "An item with variations keeps at least one; this is its last variation.",
        ),
        DeleteError::Db(e) => e.into(),
    }
}
