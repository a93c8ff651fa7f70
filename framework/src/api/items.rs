//! Items of an event: `/api/v1/organizers/{organizer}/events/{event}/items/`. Their
//! variations, add-ons and bundles have their own nested endpoints ([`super::item_parts`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use super::item_parts::{
    AddonCreate, AddonOut, BundleCreate, BundleOut, VariationCreate, VariationOut, delete_error,
    find_item, write_error,
};
use crate::db::entities::event;
use crate::domain::cache;
use crate::domain::catalogue_changes;
use crate::domain::files;
use crate::domain::items::{self, Item, ItemFields, ItemFilter, NewItem, PictureChange};
use crate::domain::permissions::Permission;
use crate::domain::settings;
use crate::http::body::Refused;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::middleware::original_uri;
use crate::http::pagination;
use crate::http::{
    ApiError, Auth, Created, Decimal2, FieldErrors, I18nString, JsonBody, JsonBytes, Money,
    NoContent, Page, PageRequest, patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// A list answer of a conditional GET: the list with `Last-Modified` (when the catalogue's
/// change time is known), or 304 when the `If-Modified-Since` copy is still current.
pub enum Conditional<T> {
    /// The list, and when the catalogue last changed.
    Fresh(T, Option<DateTime<Utc>>),
    /// Nothing changed since the client's copy.
    NotModified(DateTime<Utc>),
}

/// An HTTP date (`Last-Modified`).
fn http_date(at: DateTime<Utc>) -> String {
    at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

impl<T> Conditional<T> {
    /// Answers 304 if the request's `If-Modified-Since` copy is current, else `make`s the
    /// list. The event's catalogue change time is read first, so a change committed while
    /// the list is made moves it past what this answer says.
    pub async fn answer<E>(
        req: &Request,
        state: &AppState,
        event_id: i64,
        make: impl AsyncFnOnce() -> Result<T, E>,
    ) -> Result<Self, E>
    where
        E: From<ApiError>,
    {
        let cache = state.cache.current().await;
        let modified = catalogue_changes::modified(&state.db, cache, event_id)
            .await
            .map_err(|e| E::from(ApiError::from(e)))?;
        let since = req
            .header(poem::http::header::IF_MODIFIED_SINCE)
            .and_then(|v| DateTime::parse_from_rfc2822(v).ok())
            .map(|d| d.with_timezone(&Utc));
        match (modified, since) {
            (Some(m), Some(s)) if catalogue_changes::unchanged_since(Some(m), s) => {
                Ok(Self::NotModified(m))
            }
            _ => Ok(Self::Fresh(
                make().await?,
                modified.and_then(catalogue_changes::last_modified),
            )),
        }
    }
}

impl<T: poem::IntoResponse> poem::IntoResponse for Conditional<T> {
    fn into_response(self) -> poem::Response {
        match self {
            Self::Fresh(body, modified) => {
                let mut resp = body.into_response();
                if let Some(value) =
                    modified.and_then(|m| poem::http::HeaderValue::from_str(&http_date(m)).ok())
                {
                    resp.headers_mut()
                        .insert(poem::http::header::LAST_MODIFIED, value);
                }
                resp
            }
            Self::NotModified(modified) => {
                let mut resp = poem::Response::builder()
                    .status(poem::http::StatusCode::NOT_MODIFIED)
                    .finish();
                if let Some(value) = catalogue_changes::last_modified(modified)
                    .and_then(|m| poem::http::HeaderValue::from_str(&http_date(m)).ok())
                {
                    resp.headers_mut()
                        .insert(poem::http::header::LAST_MODIFIED, value);
                }
                resp
            }
        }
    }
}

impl<T: poem_openapi::ApiResponse> poem_openapi::ApiResponse for Conditional<T> {
    fn meta() -> poem_openapi::registry::MetaResponses {
        use poem_openapi::registry::{MetaHeader, MetaResponse};
        use poem_openapi::types::Type;
        let last_modified = || MetaHeader {
            name: "Last-Modified".into(),
            description: Some("When the event's catalogue last changed.".into()),
            required: false,
            deprecated: false,
            schema: String::schema_ref(),
        };
        let mut meta = T::meta();
        for r in &mut meta.responses {
            r.headers.push(last_modified());
        }
        meta.responses.push(MetaResponse {
            description: "Not modified since `If-Modified-Since`.",
            status: Some(304),
            status_range: None,
            content: Vec::new(),
            headers: vec![last_modified()],
        });
        meta
    }

    fn register(registry: &mut poem_openapi::registry::Registry) {
        T::register(registry);
    }
}

/// An item (product) of an event.
#[derive(Object)]
#[oai(rename = "Item")]
pub struct ItemOut {
    /// Internal ID.
    pub id: i64,
    /// Visible name.
    pub name: I18nString,
    /// Name shown in the back end only.
    #[oai(nullable)]
    pub internal_name: Option<String>,
    /// Price unless overridden by variations or other options.
    pub default_price: Money,
    /// Category ID.
    #[oai(nullable)]
    pub category: Option<i64>,
    /// If false, hidden from public lists and not sold.
    pub active: bool,
    /// Description; may contain Markdown.
    #[oai(nullable)]
    pub description: Option<I18nString>,
    /// Whether the buyer may pay more than the price.
    pub free_price: bool,
    /// VAT rate in percent; read-only, follows `tax_rule`.
    pub tax_rate: Decimal2,
    /// ID of the applied tax rule.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
    /// Whether it grants admission.
    pub admission: bool,
    /// Sort position.
    pub position: i32,
    /// URL of the product picture.
    #[oai(nullable)]
    pub picture: Option<String>,
    /// Sales channels it is sold on.
    pub sales_channels: Vec<String>,
    /// First time it can be bought.
    #[oai(nullable)]
    pub available_from: Option<Timestamp>,
    /// Last time it can be bought.
    #[oai(nullable)]
    pub available_until: Option<Timestamp>,
    /// Quota ID; the item is hidden publicly while that quota is available.
    #[oai(nullable)]
    pub hidden_if_available: Option<i64>,
    /// Only buyable with a voucher assigned to it.
    pub require_voucher: bool,
    /// Shown only when redeeming a voucher.
    pub hide_without_voucher: bool,
    /// Whether customers may cancel orders containing it.
    pub allow_cancel: bool,
    /// Least count per order.
    #[oai(nullable)]
    pub min_per_order: Option<i32>,
    /// Most count per order.
    #[oai(nullable)]
    pub max_per_order: Option<i32>,
    /// The check-in app warns when it is scanned.
    pub checkin_attention: bool,
    /// Comparison price, not used in calculations.
    #[oai(nullable)]
    pub original_price: Option<Money>,
    /// Orders need the organizer's approval before payment.
    pub require_approval: bool,
    /// Only available as part of bundles.
    pub require_bundling: bool,
    /// false: never generate tickets; true: always; null: the regular rules.
    #[oai(nullable)]
    pub generate_tickets: Option<bool>,
    /// Whether a waiting list is shown when it is sold out.
    pub allow_waitinglist: bool,
    /// Buying it yields a gift card.
    pub issue_giftcard: bool,
    /// Show what is left publicly; null takes the event's setting.
    #[oai(nullable)]
    pub show_quota_left: Option<bool>,
    /// Whether it has variations; fixed for its lifetime.
    pub has_variations: bool,
    /// Its variations.
    pub variations: Vec<VariationOut>,
    /// Its add-on configurations.
    pub addons: Vec<AddonOut>,
    /// Its bundle configurations.
    pub bundles: Vec<BundleOut>,
    /// Values of the event's item meta properties, defaults included.
    pub meta_data: BTreeMap<String, String>,
}

/// The item as shown to API clients.
pub fn item_out(it: Item, public_url: &str) -> ItemOut {
    let r = it.row;
    let price = r.default_price_cents;
    ItemOut {
        id: r.id,
        name: I18nString::from_stored(&r.name),
        internal_name: r.internal_name,
        default_price: Money(price),
        category: r.category_id,
        active: r.active,
        description: r.description.as_ref().map(I18nString::from_stored),
        free_price: r.free_price,
        tax_rate: Decimal2(it.tax_rate_bps),
        tax_rule: r.tax_rule_id,
        admission: r.admission,
        position: r.position,
        picture: r.picture.as_deref().map(|p| files::url(public_url, p)),
        sales_channels: crate::values::stored::string_list(&r.sales_channels),
        available_from: r.available_from.map(Into::into),
        available_until: r.available_until.map(Into::into),
        hidden_if_available: r.hidden_if_available,
        require_voucher: r.require_voucher,
        hide_without_voucher: r.hide_without_voucher,
        allow_cancel: r.allow_cancel,
        min_per_order: r.min_per_order,
        max_per_order: r.max_per_order,
        checkin_attention: r.checkin_attention,
        original_price: r.original_price_cents.map(Money),
        require_approval: r.require_approval,
        require_bundling: r.require_bundling,
        generate_tickets: r.generate_tickets,
        allow_waitinglist: r.allow_waitinglist,
        issue_giftcard: r.issue_giftcard,
        show_quota_left: r.show_quota_left,
        has_variations: r.has_variations,
        variations: it
            .variations
            .into_iter()
            .map(|v| VariationOut::new(v, price))
            .collect(),
        addons: it.addons.into_iter().map(Into::into).collect(),
        bundles: it.bundles.into_iter().map(Into::into).collect(),
        meta_data: it.meta_data,
    }
}

/// A new item, or all fields of an item (PUT); omitted fields take their defaults.
/// `variations`, `addons` and `bundles` are accepted on creation only.
#[derive(Object)]
pub struct ItemCreate {
    /// Visible name.
    #[oai(validator(max_length = 255))]
    pub name: I18nString,
    /// Name shown in the back end only.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_name: Option<String>,
    /// Price.
    pub default_price: Money,
    /// Category ID; a category of this event.
    #[oai(nullable)]
    pub category: Option<i64>,
    /// If false, hidden and not sold.
    #[oai(default = "yes")]
    pub active: bool,
    /// Description; may contain Markdown. At most 100,000 characters per language (pretix sets no
    /// limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: Option<I18nString>,
    /// Whether the buyer may pay more.
    #[oai(default)]
    pub free_price: bool,
    /// Tax rule ID; a tax rule of this event.
    #[oai(nullable)]
    pub tax_rule: Option<i64>,
    /// Whether it grants admission.
    #[oai(default)]
    pub admission: bool,
    /// Sort position.
    #[oai(default)]
    pub position: i32,
    /// A file ID from `POST /api/v1/upload`, or the current picture URL to keep it.
    #[oai(nullable, validator(max_length = 255))]
    pub picture: Option<String>,
    /// Sales channels; `["web"]` when omitted.
    #[oai(default = "web_only", validator(max_length = 190, max_items = 1000))]
    pub sales_channels: Vec<String>,
    /// First time it can be bought.
    #[oai(nullable)]
    pub available_from: Option<Timestamp>,
    /// Last time it can be bought; not before `available_from`.
    #[oai(nullable)]
    pub available_until: Option<Timestamp>,
    /// A quota of this event; the item is hidden while that quota is available.
    #[oai(nullable)]
    pub hidden_if_available: Option<i64>,
    /// Only buyable with a voucher.
    #[oai(default)]
    pub require_voucher: bool,
    /// Shown only when redeeming a voucher.
    #[oai(default)]
    pub hide_without_voucher: bool,
    /// Whether customers may cancel orders containing it.
    #[oai(default = "yes")]
    pub allow_cancel: bool,
    /// Least count per order; not above `max_per_order`.
    #[oai(nullable)]
    pub min_per_order: Option<i32>,
    /// Most count per order.
    #[oai(nullable)]
    pub max_per_order: Option<i32>,
    /// The check-in app warns when it is scanned.
    #[oai(default)]
    pub checkin_attention: bool,
    /// Comparison price.
    #[oai(nullable)]
    pub original_price: Option<Money>,
    /// Orders need approval.
    #[oai(default)]
    pub require_approval: bool,
    /// Only available within bundles.
    #[oai(default)]
    pub require_bundling: bool,
    /// false: never generate tickets; true: always; null: the regular rules.
    #[oai(nullable)]
    pub generate_tickets: Option<bool>,
    /// Whether a waiting list is shown when sold out.
    #[oai(default = "yes")]
    pub allow_waitinglist: bool,
    /// Buying it yields a gift card.
    #[oai(default)]
    pub issue_giftcard: bool,
    /// Show what is left publicly; null takes the event's setting.
    #[oai(nullable)]
    pub show_quota_left: Option<bool>,
    /// Variations (creation only); the item has variations if and only if one is sent.
    #[oai(validator(max_items = 1000))]
    pub variations: Option<Vec<VariationCreate>>,
    /// Add-on configurations (creation only).
    #[oai(validator(max_items = 1000))]
    pub addons: Option<Vec<AddonCreate>>,
    /// Bundle configurations (creation only).
    #[oai(validator(max_items = 1000))]
    pub bundles: Option<Vec<BundleCreate>>,
    /// Values of the event's item meta properties. Each at most 10,000 characters (pretix sets no
    /// limit).
    #[oai(default, validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

fn web_only() -> Vec<String> {
    vec!["web".into()]
}

/// A partial change of an item. Nested lists are changed through their own endpoints.
#[derive(Object)]
pub struct ItemPatch {
    /// Visible name.
    #[oai(validator(max_length = 255))]
    pub name: Option<I18nString>,
    /// Name shown in the back end only.
    #[oai(nullable, validator(max_length = 255))]
    pub internal_name: MaybeUndefined<String>,
    /// Price.
    pub default_price: Option<Money>,
    /// Category ID.
    #[oai(nullable)]
    pub category: MaybeUndefined<i64>,
    /// If false, hidden and not sold.
    pub active: Option<bool>,
    /// Description. At most 100,000 characters per language (pretix sets no limit).
    #[oai(nullable, validator(max_length = 100000))]
    pub description: MaybeUndefined<I18nString>,
    /// Whether the buyer may pay more.
    pub free_price: Option<bool>,
    /// Tax rule ID.
    #[oai(nullable)]
    pub tax_rule: MaybeUndefined<i64>,
    /// Whether it grants admission.
    pub admission: Option<bool>,
    /// Sort position.
    pub position: Option<i32>,
    /// A file ID from `POST /api/v1/upload`, the current URL, or null to remove it.
    #[oai(nullable, validator(max_length = 255))]
    pub picture: MaybeUndefined<String>,
    /// Sales channels.
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub sales_channels: Option<Vec<String>>,
    /// First time it can be bought.
    #[oai(nullable)]
    pub available_from: MaybeUndefined<DateTime<Utc>>,
    /// Last time it can be bought.
    #[oai(nullable)]
    pub available_until: MaybeUndefined<DateTime<Utc>>,
    /// Quota ID hiding the item while available.
    #[oai(nullable)]
    pub hidden_if_available: MaybeUndefined<i64>,
    /// Only buyable with a voucher.
    pub require_voucher: Option<bool>,
    /// Shown only when redeeming a voucher.
    pub hide_without_voucher: Option<bool>,
    /// Whether customers may cancel.
    pub allow_cancel: Option<bool>,
    /// Least count per order.
    #[oai(nullable)]
    pub min_per_order: MaybeUndefined<i32>,
    /// Most count per order.
    #[oai(nullable)]
    pub max_per_order: MaybeUndefined<i32>,
    /// The check-in app warns.
    pub checkin_attention: Option<bool>,
    /// Comparison price.
    #[oai(nullable)]
    pub original_price: MaybeUndefined<Money>,
    /// Orders need approval.
    pub require_approval: Option<bool>,
    /// Only within bundles.
    pub require_bundling: Option<bool>,
    /// Ticket generation override.
    #[oai(nullable)]
    pub generate_tickets: MaybeUndefined<bool>,
    /// Waiting list when sold out.
    pub allow_waitinglist: Option<bool>,
    /// Yields a gift card.
    pub issue_giftcard: Option<bool>,
    /// Show what is left.
    #[oai(nullable)]
    pub show_quota_left: MaybeUndefined<bool>,
    /// Not accepted here; use the nested endpoint.
    pub variations: Option<Refused>,
    /// Not accepted here; use the nested endpoint.
    pub addons: Option<Refused>,
    /// Not accepted here; use the nested endpoint.
    pub bundles: Option<Refused>,
    /// Values of the event's item meta properties; replaces the whole object. Each at most 10,000
    /// characters (pretix sets no limit).
    #[oai(validator(max_length = 10000, max_properties = 1000))]
    pub meta_data: Option<BTreeMap<String, String>>,
}

/// What an item body's `picture` (absent, null or a value) does to the current picture: its
/// current URL keeps it, any other value is a file ID the caller uploaded (claimed when the
/// item is written).
fn picture_change(
    state: &AppState,
    auth: &Auth,
    current: Option<&str>,
    value: Option<Option<String>>,
) -> PictureChange {
    match value {
        None => PictureChange::Keep,
        Some(None) => PictureChange::Remove,
        Some(Some(v)) if current.is_some_and(|c| files::url(&state.public_url, c) == v) => {
            PictureChange::Keep
        }
        Some(Some(file_id)) => PictureChange::Claim {
            owner: auth.0.identity(),
            file_id,
        },
    }
}

impl ItemCreate {
    fn fields(&self) -> ItemFields {
        let mut f = ItemFields::new(self.name.to_stored(), self.default_price.0);
        f.internal_name = self.internal_name.clone();
        f.category_id = self.category;
        f.active = self.active;
        f.description = self.description.as_ref().map(I18nString::to_stored);
        f.free_price = self.free_price;
        f.tax_rule_id = self.tax_rule;
        f.admission = self.admission;
        f.position = self.position;
        f.sales_channels = self.sales_channels.clone();
        f.available_from = self.available_from.map(Into::into);
        f.available_until = self.available_until.map(Into::into);
        f.hidden_if_available = self.hidden_if_available;
        f.require_voucher = self.require_voucher;
        f.hide_without_voucher = self.hide_without_voucher;
        f.allow_cancel = self.allow_cancel;
        f.min_per_order = self.min_per_order;
        f.max_per_order = self.max_per_order;
        f.checkin_attention = self.checkin_attention;
        f.original_price_cents = self.original_price.map(|m| m.0);
        f.require_approval = self.require_approval;
        f.require_bundling = self.require_bundling;
        f.generate_tickets = self.generate_tickets;
        f.allow_waitinglist = self.allow_waitinglist;
        f.issue_giftcard = self.issue_giftcard;
        f.show_quota_left = self.show_quota_left;
        f.meta_data = self.meta_data.clone();
        f
    }

    fn nested_sent(&self) -> bool {
        self.variations.is_some() || self.addons.is_some() || self.bundles.is_some()
    }
}

impl ItemPatch {
    fn apply(self, mut f: ItemFields) -> ItemFields {
        fn set<T>(slot: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *slot = v;
            }
        }
        set(&mut f.name, self.name.map(|n| n.to_stored()));
        set(&mut f.internal_name, patched(self.internal_name));
        set(&mut f.default_price_cents, self.default_price.map(|m| m.0));
        set(&mut f.category_id, patched(self.category));
        set(&mut f.active, self.active);
        set(
            &mut f.description,
            patched(self.description).map(|d| d.map(|d| d.to_stored())),
        );
        set(&mut f.free_price, self.free_price);
        set(&mut f.tax_rule_id, patched(self.tax_rule));
        set(&mut f.admission, self.admission);
        set(&mut f.position, self.position);
        set(&mut f.sales_channels, self.sales_channels);
        set(&mut f.available_from, patched(self.available_from));
        set(&mut f.available_until, patched(self.available_until));
        set(
            &mut f.hidden_if_available,
            patched(self.hidden_if_available),
        );
        set(&mut f.require_voucher, self.require_voucher);
        set(&mut f.hide_without_voucher, self.hide_without_voucher);
        set(&mut f.allow_cancel, self.allow_cancel);
        set(&mut f.min_per_order, patched(self.min_per_order));
        set(&mut f.max_per_order, patched(self.max_per_order));
        set(&mut f.checkin_attention, self.checkin_attention);
        set(
            &mut f.original_price_cents,
            patched(self.original_price).map(|p| p.map(|m| m.0)),
        );
        set(&mut f.require_approval, self.require_approval);
        set(&mut f.require_bundling, self.require_bundling);
        set(&mut f.generate_tickets, patched(self.generate_tickets));
        set(&mut f.allow_waitinglist, self.allow_waitinglist);
        set(&mut f.issue_giftcard, self.issue_giftcard);
        set(&mut f.show_quota_left, patched(self.show_quota_left));
        set(&mut f.meta_data, self.meta_data);
        f
    }

    fn nested_sent(&self) -> bool {
        self.variations.is_some() || self.addons.is_some() || self.bundles.is_some()
    }
}

/// 400 for nested lists sent to PATCH or PUT.
fn nested_not_accepted() -> ApiError {
    ApiError::fields(FieldErrors::new().add(
        "non_field_errors",
        "Variations, add-ons and bundles cannot be changed here; use the nested endpoints \
             items/{item}/variations/, items/{item}/addons/ and items/{item}/bundles/.",
    ))
}

/// Parses the `tax_rate` filter.
fn tax_rate_filter(value: Option<String>) -> Result<Option<i64>, ApiError> {
    value
        .map(|v| Money::parse(&v).map(|m| m.0))
        .transpose()
        .map_err(|m| ApiError::field("tax_rate", m))
}

/// Whether `ordering` asks for IDs (true) or positions (false).
pub fn by_id(ordering: Option<&str>) -> Result<bool, ApiError> {
    match ordering {
        None | Some("position") => Ok(false),
        Some("id") => Ok(true),
        Some(other) => Err(ApiError::field(
            "ordering",
            format!("Ordering by '{other}' is not possible; use 'id' or 'position'."),
        )),
    }
}

/// Query parameters of the item list (`lang` is read by the middleware); a list asked for
/// with any other is not kept in the process cache.
const LIST_PARAMS: [&str; 9] = [
    "page",
    "page_size",
    "active",
    "category",
    "admission",
    "tax_rate",
    "free_price",
    "ordering",
    "lang",
];

/// Item operations.
pub struct ItemsApi;

async fn check(state: &AppState, ev: &event::Model, f: &ItemFields) -> Result<(), ApiError> {
    Ok(FieldErrors::check(
        items::invalid_fields(&state.db, ev, f).await?,
    )?)
}

#[OpenApi(tag = "Tag::Items")]
impl ItemsApi {
    /// List items
    ///
    /// By position (or `ordering=id`), then ID; `active`, `category`, `admission`,
    /// `tax_rate` and `free_price` filter. Needs any access to the event.
    /// With `If-Modified-Since` no later than the catalogue's last change (`Last-Modified`),
    /// 304 without a body.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_items(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        active: Query<Option<bool>>,
        category: Query<Option<i64>>,
        admission: Query<Option<bool>>,
        tax_rate: Query<Option<String>>,
        free_price: Query<Option<bool>>,
        ordering: Query<Option<String>>,
    ) -> ListResult<Conditional<JsonBytes<Page<ItemOut>>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(
            Conditional::answer::<ApiError>(req, &state, ev.event.id, async || {
                // The list is the same for every caller who may see the event: kept per URL, as
                // long as it has nothing but the list's own parameters.
                let scope = format!("items:{}", ev.event.id);
                let uri = original_uri(req);
                let languages = if cache::asks_for_language(&uri) {
                    let generation = state.cache.generation().await;
                    let kept = generation.map(|g| (state.cache.as_ref(), g));
                    settings::languages_of(&state.db, &state.settings, kept, &ev.event).await?
                } else {
                    Vec::new()
                };
                let key = cache::answer_key(
                    &scope,
                    &uri,
                    &LIST_PARAMS,
                    &languages,
                    pagination::PAGE_SIZE,
                );
                let generation = match key {
                    Some(_) => state.cache.generation().await,
                    None => None,
                };
                if let (Some(g), Some(key)) = (generation, &key)
                    && let Some(kept) = state.cache.answer(g, key)
                {
                    return Ok(JsonBytes::from_bytes(kept));
                }
                let filter = ItemFilter {
                    active: active.0,
                    category: category.0,
                    admission: admission.0,
                    tax_rate_bps: tax_rate_filter(tax_rate.0)?,
                    free_price: free_price.0,
                    by_id: by_id(ordering.0.as_deref())?,
                };
                let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
                    .fetch(&state.db, items::query(ev.event.id, &filter))
                    .await?;
                let (rows, page) = page.take_results();
                let full = items::complete(&state.db, rows).await?;
                let answer = JsonBytes::new(&page(
                    full.into_iter()
                        .map(|it| item_out(it, &state.public_url))
                        .collect(),
                ));
                if let (Some(g), Some(key)) = (generation, key) {
                    state.cache.keep_answer(g, key, answer.0.clone());
                }
                Ok(answer)
            })
            .await?,
        )
    }

    /// Show an item
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:id",
        method = "get"
    )]
    async fn get_item(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ItemOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let it = items::find(&state.db, ev.event.id, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        Ok(Json(item_out(it, &state.public_url)))
    }

    /// Create an item
    ///
    /// With optional nested `variations`, `addons` and `bundles`; the item has variations
    /// if and only if at least one is sent, for its whole life. Needs `can_change_items`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items",
        method = "post"
    )]
    async fn create_item(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<ItemCreate>,
    ) -> WriteResult<Created<ItemOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let body = body.0;
        let picture = picture_change(&state, &auth, None, body.picture.clone().map(Some));
        let fields = body.fields();
        let new = NewItem {
            variations: body
                .variations
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            addons: body
                .addons
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            bundles: body
                .bundles
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            fields,
        };
        FieldErrors::check(items::invalid_new(&state.db, &ev.event, &new).await?)?;
        let saved = items::create(&state.db, ev.event.id, new, picture)
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(item_out(saved, &state.public_url))))
    }

    /// Replace an item
    ///
    /// Every field except `has_variations`, `variations`, `addons` and `bundles` (400 when
    /// sent; use the nested endpoints).
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:id",
        method = "put"
    )]
    async fn put_item(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ItemCreate>,
    ) -> WriteResult<Json<ItemOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_item(&state, ev.event.id, *id).await?;
        if body.0.nested_sent() {
            return Err(nested_not_accepted().into());
        }
        let fields = body.0.fields();
        check(&state, &ev.event, &fields).await?;
        let current = existing.picture.as_deref();
        let picture = picture_change(&state, &auth, current, Some(body.0.picture));
        let saved = items::update(&state.db, &existing, fields, picture)
            .await
            .map_err(write_error)?;
        Ok(Json(item_out(saved, &state.public_url)))
    }

    /// Change an item
    ///
    /// Nested `variations`, `addons` and `bundles` are 400; use the nested endpoints.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:id",
        method = "patch"
    )]
    async fn patch_item(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ItemPatch>,
    ) -> WriteResult<Json<ItemOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_item(&state, ev.event.id, *id).await?;
        let mut body = body.0;
        if body.nested_sent() {
            return Err(nested_not_accepted().into());
        }
        let current = existing.picture.as_deref();
        let sent = patched(std::mem::take(&mut body.picture));
        let picture = picture_change(&state, &auth, current, sent);
        let fields = body.apply(ItemFields::from(&existing));
        check(&state, &ev.event, &fields).await?;
        let saved = items::update(&state.db, &existing, fields, picture)
            .await
            .map_err(write_error)?;
        Ok(Json(item_out(saved, &state.public_url)))
    }

    /// Delete an item
    ///
    /// 403 when it has been ordered.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/items/:id",
        method = "delete"
    )]
    async fn delete_item(
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
        let existing = find_item(&state, ev.event.id, *id).await?;
        match items::delete(&state.db, &existing).await {
            Ok(()) => Ok(NoContent::NoContent),
            Err(e) => Err(delete_error(e).into()),
        }
    }
}
