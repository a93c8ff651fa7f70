//! Vouchers of an event: `/api/v1/organizers/{organizer}/events/{event}/vouchers/`.

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use serde_json::{Map, Value};

use super::Tag;
use crate::domain::items::Invalid;
use crate::domain::permissions::Permission;
use crate::domain::vouchers::PriceMode;
use crate::domain::vouchers::manage::{
    self, BatchError, DeleteError, Voucher, VoucherFields, VoucherFilter, VoucherOrder, WriteError,
};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, JsonBody, JsonList, Money, NoContent, Page, PageRequest,
    patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// How a voucher changes the price.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "VoucherPriceMode", rename_all = "lowercase")]
pub enum PriceModeIo {
    /// Keeps the price.
    None,
    /// Sets the price to `value`.
    Set,
    /// Subtracts `value` from the price.
    Subtract,
    /// Takes `value` percent off.
    Percent,
}

impl From<PriceModeIo> for PriceMode {
    fn from(m: PriceModeIo) -> Self {
        match m {
            PriceModeIo::None => PriceMode::None,
            PriceModeIo::Set => PriceMode::Set,
            PriceModeIo::Subtract => PriceMode::Subtract,
            PriceModeIo::Percent => PriceMode::Percent,
        }
    }
}

impl From<PriceMode> for PriceModeIo {
    fn from(m: PriceMode) -> Self {
        match m {
            PriceMode::None => PriceModeIo::None,
            PriceMode::Set => PriceModeIo::Set,
            PriceMode::Subtract => PriceModeIo::Subtract,
            PriceMode::Percent => PriceModeIo::Percent,
        }
    }
}

/// A voucher.
#[derive(Object)]
#[oai(rename = "Voucher")]
pub struct VoucherOut {
    /// Internal ID.
    pub id: i64,
    /// The code to redeem it with, unique in the event.
    pub code: String,
    /// How often it can be redeemed.
    pub max_usages: i32,
    /// How often it was redeemed.
    pub redeemed: i32,
    /// End of validity.
    #[oai(nullable)]
    pub valid_until: Option<Timestamp>,
    /// Holds quota for its unused redemptions until it expires.
    pub block_quota: bool,
    /// Redeemable even when the quota is used up.
    pub allow_ignore_quota: bool,
    /// How it changes the price.
    pub price_mode: PriceModeIo,
    /// Price, amount off, or percentage off, for the price mode.
    pub value: Money,
    /// Item it is limited to.
    #[oai(nullable)]
    pub item: Option<i64>,
    /// Variation it is limited to.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Quota it is limited to.
    #[oai(nullable)]
    pub quota: Option<i64>,
    /// Identifier of the seat it is limited to.
    #[oai(nullable)]
    pub seat: Option<String>,
    /// Date of a series it is limited to.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Tag for grouping.
    pub tag: String,
    /// Internal comment.
    pub comment: String,
    /// Shows items hidden without a voucher.
    pub show_hidden_items: bool,
    /// Offers every add-on free of charge with the product it is redeemed for.
    pub all_addons_included: bool,
    /// Includes what comes bundled with the product it is redeemed for free of charge.
    pub all_bundles_included: bool,
}

impl From<Voucher> for VoucherOut {
    fn from(v: Voucher) -> Self {
        let r = v.row;
        Self {
            id: r.id,
            code: r.code,
            max_usages: r.max_usages,
            redeemed: r.redeemed,
            valid_until: r.valid_until.map(Into::into),
            block_quota: r.block_quota,
            allow_ignore_quota: r.allow_ignore_quota,
            price_mode: PriceMode::parse(&r.price_mode)
                .unwrap_or(PriceMode::None)
                .into(),
            value: Money(r.value_cents),
            item: r.item_id,
            variation: r.variation_id,
            quota: r.quota_id,
            seat: v.seat,
            subevent: r.subevent_id,
            tag: r.tag,
            comment: r.comment,
            show_hidden_items: r.show_hidden_items,
            all_addons_included: r.all_addons_included,
            all_bundles_included: r.all_bundles_included,
        }
    }
}

/// A new voucher, or all fields of a voucher (PUT; a missing `code` keeps the code).
#[derive(Object, Clone)]
pub struct VoucherCreate {
    /// The code; 16 unambiguous characters are generated when it is not sent.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub code: Option<String>,
    /// How often it can be redeemed, at least 1.
    #[oai(default = "one")]
    pub max_usages: i32,
    /// End of validity.
    #[oai(nullable)]
    pub valid_until: Option<Timestamp>,
    /// Hold quota for its unused redemptions; needs a quota, or an item (and variation).
    #[oai(default)]
    pub block_quota: bool,
    /// Redeemable even when the quota is used up; a blocking voucher then blocks without
    /// checking what is left.
    #[oai(default)]
    pub allow_ignore_quota: bool,
    /// How it changes the price (default `none`).
    pub price_mode: Option<PriceModeIo>,
    /// Price, amount off, or percentage off (at most 100), not negative.
    #[oai(default)]
    pub value: Money,
    /// An item of this event.
    #[oai(nullable)]
    pub item: Option<i64>,
    /// A variation of that item.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// A quota of this event; not together with an item.
    #[oai(nullable)]
    pub quota: Option<i64>,
    /// Identifier of a free seat of this event; the voucher is then used once.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: Option<String>,
    /// A date of this event series; required for blocking in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Tag for grouping.
    #[oai(default, validator(max_length = 255))]
    pub tag: String,
    /// Internal comment. At most 10,000 characters (pretix sets no limit).
    #[oai(default, validator(max_length = 10000))]
    pub comment: String,
    /// Show items hidden without a voucher (default true).
    #[oai(default = "yes")]
    pub show_hidden_items: bool,
    /// Offers every add-on free of charge with the product it is redeemed for (default false).
    #[oai(default)]
    pub all_addons_included: bool,
    /// Includes what comes bundled with the product it is redeemed for free of charge (default false).
    #[oai(default)]
    pub all_bundles_included: bool,
}

fn one() -> i32 {
    1
}

fn yes() -> bool {
    true
}

impl From<VoucherCreate> for VoucherFields {
    fn from(v: VoucherCreate) -> Self {
        Self {
            code: v.code,
            max_usages: v.max_usages,
            valid_until: v.valid_until.map(Into::into),
            block_quota: v.block_quota,
            allow_ignore_quota: v.allow_ignore_quota,
            price_mode: v.price_mode.map_or(PriceMode::None, Into::into),
            value_cents: v.value.0,
            item_id: v.item,
            variation_id: v.variation,
            quota_id: v.quota,
            seat: v.seat,
            subevent_id: v.subevent,
            tag: v.tag,
            comment: v.comment,
            show_hidden_items: v.show_hidden_items,
            all_addons_included: v.all_addons_included,
            all_bundles_included: v.all_bundles_included,
        }
    }
}

/// A partial change of a voucher.
#[derive(Object)]
pub struct VoucherPatch {
    /// The code.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub code: Option<String>,
    /// How often it can be redeemed; not below `redeemed`.
    pub max_usages: Option<i32>,
    /// End of validity.
    #[oai(nullable)]
    pub valid_until: MaybeUndefined<DateTime<Utc>>,
    /// Hold quota.
    pub block_quota: Option<bool>,
    /// Redeemable even when the quota is used up.
    pub allow_ignore_quota: Option<bool>,
    /// How it changes the price.
    pub price_mode: Option<PriceModeIo>,
    /// Price, amount off, or percentage off.
    pub value: Option<Money>,
    /// Item.
    #[oai(nullable)]
    pub item: MaybeUndefined<i64>,
    /// Variation.
    #[oai(nullable)]
    pub variation: MaybeUndefined<i64>,
    /// Quota.
    #[oai(nullable)]
    pub quota: MaybeUndefined<i64>,
    /// Seat identifier.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: MaybeUndefined<String>,
    /// Date of the series.
    #[oai(nullable)]
    pub subevent: MaybeUndefined<i64>,
    /// Tag.
    #[oai(validator(max_length = 255))]
    pub tag: Option<String>,
    /// Comment. At most 10,000 characters (pretix sets no limit).
    #[oai(validator(max_length = 10000))]
    pub comment: Option<String>,
    /// Show items hidden without a voucher.
    pub show_hidden_items: Option<bool>,
    /// Offers every add-on free of charge with the product it is redeemed for.
    pub all_addons_included: Option<bool>,
    /// Includes what comes bundled with the product it is redeemed for free of charge.
    pub all_bundles_included: Option<bool>,
}

impl VoucherPatch {
    fn apply(self, f: VoucherFields) -> VoucherFields {
        VoucherFields {
            code: self.code.or(f.code),
            max_usages: self.max_usages.unwrap_or(f.max_usages),
            valid_until: patched(self.valid_until).unwrap_or(f.valid_until),
            block_quota: self.block_quota.unwrap_or(f.block_quota),
            allow_ignore_quota: self.allow_ignore_quota.unwrap_or(f.allow_ignore_quota),
            price_mode: self.price_mode.map_or(f.price_mode, Into::into),
            value_cents: self.value.map_or(f.value_cents, |v| v.0),
            item_id: patched(self.item).unwrap_or(f.item_id),
            variation_id: patched(self.variation).unwrap_or(f.variation_id),
            quota_id: patched(self.quota).unwrap_or(f.quota_id),
            seat: patched(self.seat).unwrap_or(f.seat),
            subevent_id: patched(self.subevent).unwrap_or(f.subevent_id),
            tag: self.tag.unwrap_or(f.tag),
            comment: self.comment.unwrap_or(f.comment),
            show_hidden_items: self.show_hidden_items.unwrap_or(f.show_hidden_items),
            all_addons_included: self.all_addons_included.unwrap_or(f.all_addons_included),
            all_bundles_included: self.all_bundles_included.unwrap_or(f.all_bundles_included),
        }
    }
}

/// Order of the voucher list; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum VoucherOrdering {
    /// By ID (default).
    #[oai(rename = "id")]
    Id,
    /// By ID, descending.
    #[oai(rename = "-id")]
    IdDesc,
    /// By code.
    #[oai(rename = "code")]
    Code,
    /// By code, descending.
    #[oai(rename = "-code")]
    CodeDesc,
    /// By usages allowed.
    #[oai(rename = "max_usages")]
    MaxUsages,
    /// By usages allowed, descending.
    #[oai(rename = "-max_usages")]
    MaxUsagesDesc,
    /// By end of validity.
    #[oai(rename = "valid_until")]
    ValidUntil,
    /// By end of validity, descending.
    #[oai(rename = "-valid_until")]
    ValidUntilDesc,
    /// By value.
    #[oai(rename = "value")]
    Value,
    /// By value, descending.
    #[oai(rename = "-value")]
    ValueDesc,
    /// By redemptions.
    #[oai(rename = "redeemed")]
    Redeemed,
    /// By redemptions, descending.
    #[oai(rename = "-redeemed")]
    RedeemedDesc,
}

impl VoucherOrdering {
    fn order(self) -> (VoucherOrder, bool) {
        use VoucherOrdering as O;
        match self {
            O::Id => (VoucherOrder::Id, false),
            O::IdDesc => (VoucherOrder::Id, true),
            O::Code => (VoucherOrder::Code, false),
            O::CodeDesc => (VoucherOrder::Code, true),
            O::MaxUsages => (VoucherOrder::MaxUsages, false),
            O::MaxUsagesDesc => (VoucherOrder::MaxUsages, true),
            O::ValidUntil => (VoucherOrder::ValidUntil, false),
            O::ValidUntilDesc => (VoucherOrder::ValidUntil, true),
            O::Value => (VoucherOrder::Value, false),
            O::ValueDesc => (VoucherOrder::Value, true),
            O::Redeemed => (VoucherOrder::Redeemed, false),
            O::RedeemedDesc => (VoucherOrder::Redeemed, true),
        }
    }
}

fn write_error(e: WriteError) -> ApiError {
    match e {
        WriteError::Invalid(invalid) => match FieldErrors::check(invalid) {
            Err(e) => e.into(),
            Ok(()) => ApiError::internal(),
        },
        WriteError::Gone => ApiError::forbidden(),
        WriteError::Db(e) => e.into(),
    }
}

async fn find_voucher(state: &AppState, event_id: i64, id: i64) -> Result<Voucher, ApiError> {
    manage::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

fn money(field: &str, text: Option<String>) -> Result<Option<i64>, ApiError> {
    text.map(|t| {
        Money::parse(&t)
            .map(|m| m.0)
            .map_err(|e| ApiError::field(field, e))
    })
    .transpose()
}

/// Voucher operations.
pub struct VouchersApi;

#[OpenApi(tag = "Tag::Vouchers")]
impl VouchersApi {
    /// List vouchers
    ///
    /// By ID unless `ordering` says otherwise. `code` matches ignoring case; `active=true`
    /// keeps vouchers that can be redeemed now (uses left, not expired), `false` the others.
    /// Needs `can_view_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_vouchers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        code: Query<Option<String>>,
        max_usages: Query<Option<i32>>,
        redeemed: Query<Option<i32>>,
        block_quota: Query<Option<bool>>,
        allow_ignore_quota: Query<Option<bool>>,
        price_mode: Query<Option<PriceModeIo>>,
        value: Query<Option<String>>,
        item: Query<Option<i64>>,
        variation: Query<Option<i64>>,
        quota: Query<Option<i64>>,
        tag: Query<Option<String>>,
        subevent: Query<Option<i64>>,
        active: Query<Option<bool>>,
        ordering: Query<Option<VoucherOrdering>>,
    ) -> ListResult<Json<Page<VoucherOut>>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ViewVouchers),
            )
            .await?;
        let filter = VoucherFilter {
            code: code.0,
            max_usages: max_usages.0,
            redeemed: redeemed.0,
            block_quota: block_quota.0,
            allow_ignore_quota: allow_ignore_quota.0,
            price_mode: price_mode.0.map(Into::into),
            value_cents: money("value", value.0)?,
            item_id: item.0,
            variation_id: variation.0,
            quota_id: quota.0,
            tag: tag.0,
            subevent_id: subevent.0,
            active: active.0,
        };
        let (order, descending) = ordering.0.unwrap_or(VoucherOrdering::Id).order();
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(
                &state.db,
                manage::query(ev.event.id, &filter, order, descending),
            )
            .await?;
        let (rows, page) = page.take_results();
        let full = manage::complete(&state.db, rows).await?;
        Ok(Json(page(full.into_iter().map(Into::into).collect())))
    }

    /// Show a voucher
    ///
    /// Needs `can_view_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers/:id",
        method = "get"
    )]
    async fn get_voucher(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<VoucherOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ViewVouchers),
            )
            .await?;
        Ok(Json(find_voucher(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a voucher
    ///
    /// A blocking voucher holds `max_usages` units of its quota (or its product's quotas)
    /// until `valid_until`; when less is left (the waiting list not counted) it is refused
    /// with a `block_quota` error, unless `allow_ignore_quota`. Needs `can_change_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers",
        method = "post"
    )]
    async fn create_voucher(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<VoucherCreate>,
    ) -> WriteResult<Created<VoucherOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeVouchers),
            )
            .await?;
        let saved = manage::create(&state.db, &ev.event, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Create several vouchers
    ///
    /// The body is a list of vouchers, created all or none: the answer to invalid input lists
    /// the errors of each voucher in the order sent (`{}` for those without). Codes and seats
    /// must differ from each other; blocking vouchers need quota for all of them together.
    /// Needs `can_change_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers/batch_create",
        method = "post"
    )]
    async fn batch_create_vouchers(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonList<VoucherCreate>,
    ) -> WriteResult<Created<Vec<VoucherOut>>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeVouchers),
            )
            .await?;
        let all = body.0.into_iter().map(Into::into).collect();
        match manage::create_many(&state.db, &ev.event, all).await {
            Ok(saved) => Ok(Created::Created(Json(
                saved.into_iter().map(Into::into).collect(),
            ))),
            Err(BatchError::Invalid(each)) => Err(batch_errors(each).into()),
            Err(BatchError::Db(e)) => Err(e.into()),
        }
    }

    /// Replace a voucher
    ///
    /// What it blocked is given back and what it blocks now is held, in one step. Needs
    /// `can_change_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers/:id",
        method = "put"
    )]
    async fn put_voucher(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<VoucherCreate>,
    ) -> WriteResult<Json<VoucherOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeVouchers),
            )
            .await?;
        let existing = find_voucher(&state, ev.event.id, *id).await?;
        let saved = manage::update(&state.db, &ev.event, existing.row.id, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Change a voucher
    ///
    /// `max_usages` cannot go below `redeemed`. Needs `can_change_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers/:id",
        method = "patch"
    )]
    async fn patch_voucher(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<VoucherPatch>,
    ) -> WriteResult<Json<VoucherOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeVouchers),
            )
            .await?;
        let existing = find_voucher(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(existing.fields());
        let saved = manage::update(&state.db, &ev.event, existing.row.id, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Delete a voucher
    ///
    /// Only a voucher never redeemed (else 403); the quota it blocked is given back.
    /// Needs `can_change_vouchers`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/vouchers/:id",
        method = "delete"
    )]
    async fn delete_voucher(
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
                Some(Permission::ChangeVouchers),
            )
            .await?;
        let existing = find_voucher(&state, ev.event.id, *id).await?;
        match manage::delete(&state.db, &ev.event, existing.row.id).await {
            Ok(()) => Ok(NoContent::NoContent),
            Err(DeleteError::Redeemed) => Err(ApiError::forbidden_because(
                "This voucher can not be deleted as it has already been redeemed.",
            )
            .into()),
            Err(DeleteError::Gone) => Err(ApiError::forbidden().into()),
            Err(DeleteError::Db(e)) => Err(e.into()),
        }
    }
}

/// 400 with one object of field errors per voucher of a batch.
fn batch_errors(each: Vec<Invalid>) -> ApiError {
    let list = each
        .into_iter()
        .map(|invalid| {
            let mut fields = Map::new();
            for (field, message) in invalid {
                let entry = fields
                    .entry(field.to_owned())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(messages) = entry {
                    messages.push(Value::String(message));
                }
            }
            Value::Object(fields)
        })
        .collect();
    ApiError::with_body(poem::http::StatusCode::BAD_REQUEST, Value::Array(list))
}
