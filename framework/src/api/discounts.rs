//! Automatic discounts of an event: `/api/v1/organizers/{organizer}/events/{event}/discounts/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::discount;
use crate::domain::discounts::manage::{self, DeleteError, DiscountFields, WriteError};
use crate::domain::permissions::Permission;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, Decimal2, FieldErrors, JsonBody, Money, NoContent, Page, PageRequest,
    patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// An automatic discount.
#[derive(Object)]
#[oai(rename = "Discount")]
pub struct DiscountOut {
    /// Internal ID.
    pub id: i64,
    /// Whether it applies at all.
    pub active: bool,
    /// Name shown in the back end.
    pub internal_name: String,
    /// Order in which discounts are tried.
    pub position: i32,
    /// Whether it applies on every sales channel.
    pub all_sales_channels: bool,
    /// The sales channels' identifiers it applies on otherwise.
    pub limit_sales_channels: Vec<String>,
    /// Start of its availability.
    #[oai(nullable)]
    pub available_from: Option<Timestamp>,
    /// End of its availability.
    #[oai(nullable)]
    pub available_until: Option<Timestamp>,
    /// `mixed`, `same` or `distinct`: how the dates of a series combine.
    pub subevent_mode: String,
    /// Only dates starting from this.
    #[oai(nullable)]
    pub subevent_date_from: Option<Timestamp>,
    /// Only dates starting until this.
    #[oai(nullable)]
    pub subevent_date_until: Option<Timestamp>,
    /// Whether every product counts towards the condition.
    pub condition_all_products: bool,
    /// The items that count otherwise.
    pub condition_limit_products: Vec<i64>,
    /// Whether add-ons count.
    pub condition_apply_to_addons: bool,
    /// Matching products needed.
    pub condition_min_count: i32,
    /// Gross value of matching products needed.
    pub condition_min_value: Money,
    /// The discount in percent.
    pub benefit_discount_matching_percent: Decimal2,
    /// Only this many of the cheapest matches of each group are discounted.
    #[oai(nullable)]
    pub benefit_only_apply_to_cheapest_n_matches: Option<i32>,
    /// Whether the products discounted are those counted.
    pub benefit_same_products: bool,
    /// The items discounted otherwise.
    pub benefit_limit_products: Vec<i64>,
    /// Whether add-ons are discounted.
    pub benefit_apply_to_addons: bool,
    /// Whether products a voucher made cheaper are left undiscounted.
    pub benefit_ignore_voucher_discounted: bool,
    /// Whether products a voucher made cheaper are left out of the condition.
    pub condition_ignore_voucher_discounted: bool,
}

impl From<discount::Model> for DiscountOut {
    fn from(d: discount::Model) -> Self {
        let f = DiscountFields::from(&d);
        Self {
            id: d.id,
            active: f.active,
            internal_name: f.internal_name,
            position: f.position,
            all_sales_channels: f.all_sales_channels,
            limit_sales_channels: f.limit_sales_channels,
            available_from: f.available_from.map(Timestamp),
            available_until: f.available_until.map(Timestamp),
            subevent_mode: f.subevent_mode,
            subevent_date_from: f.subevent_date_from.map(Timestamp),
            subevent_date_until: f.subevent_date_until.map(Timestamp),
            condition_all_products: f.condition_all_products,
            condition_limit_products: f.condition_limit_products,
            condition_apply_to_addons: f.condition_apply_to_addons,
            condition_min_count: f.condition_min_count,
            condition_min_value: Money(f.condition_min_value_cents),
            benefit_discount_matching_percent: Decimal2(f.benefit_percent_bps.into()),
            benefit_only_apply_to_cheapest_n_matches: f.benefit_only_apply_to_cheapest_n_matches,
            benefit_same_products: f.benefit_same_products,
            benefit_limit_products: f.benefit_limit_products,
            benefit_apply_to_addons: f.benefit_apply_to_addons,
            benefit_ignore_voucher_discounted: f.benefit_ignore_voucher_discounted,
            condition_ignore_voucher_discounted: f.condition_ignore_voucher_discounted,
        }
    }
}

/// A change of a discount: for `POST` and `PUT` omitted fields take pretix's defaults, for
/// `PATCH` they stay as they are. A discount needs `internal_name` and either
/// `condition_min_count` or `condition_min_value`.
#[derive(Object)]
pub struct DiscountWrite {
    /// Whether it applies at all (default true).
    pub active: Option<bool>,
    /// Name shown in the back end.
    #[oai(validator(min_length = 1, max_length = 255))]
    pub internal_name: Option<String>,
    /// Order in which discounts are tried (default 0).
    #[oai(validator(minimum(value = "0")))]
    pub position: Option<i32>,
    /// Whether it applies on every sales channel (default true).
    pub all_sales_channels: Option<bool>,
    /// The sales channels' identifiers it applies on otherwise.
    #[oai(validator(max_length = 190, max_items = 1000))]
    pub limit_sales_channels: Option<Vec<String>>,
    /// Start of its availability.
    #[oai(nullable)]
    pub available_from: MaybeUndefined<Timestamp>,
    /// End of its availability.
    #[oai(nullable)]
    pub available_until: MaybeUndefined<Timestamp>,
    /// `mixed` (default), `same` or `distinct`.
    #[oai(validator(max_length = 50))]
    pub subevent_mode: Option<String>,
    /// Only dates starting from this.
    #[oai(nullable)]
    pub subevent_date_from: MaybeUndefined<Timestamp>,
    /// Only dates starting until this.
    #[oai(nullable)]
    pub subevent_date_until: MaybeUndefined<Timestamp>,
    /// Whether every product counts (default true).
    pub condition_all_products: Option<bool>,
    /// The items that count otherwise.
    #[oai(validator(max_items = 1000))]
    pub condition_limit_products: Option<Vec<i64>>,
    /// Whether add-ons count (default true).
    pub condition_apply_to_addons: Option<bool>,
    /// Matching products needed (default 0).
    #[oai(validator(minimum(value = "0")))]
    pub condition_min_count: Option<i32>,
    /// Gross value of matching products needed (default 0.00).
    pub condition_min_value: Option<Money>,
    /// The discount in percent, 0 to 100 (default 0.00).
    pub benefit_discount_matching_percent: Option<Decimal2>,
    /// Only this many of the cheapest matches of each group are discounted; null for all.
    #[oai(nullable, validator(minimum(value = "1")))]
    pub benefit_only_apply_to_cheapest_n_matches: MaybeUndefined<i32>,
    /// Whether the products discounted are those counted (default true).
    pub benefit_same_products: Option<bool>,
    /// The items discounted otherwise.
    #[oai(validator(max_items = 1000))]
    pub benefit_limit_products: Option<Vec<i64>>,
    /// Whether add-ons are discounted (default true).
    pub benefit_apply_to_addons: Option<bool>,
    /// Whether products a voucher made cheaper are left undiscounted (default false).
    pub benefit_ignore_voucher_discounted: Option<bool>,
    /// Whether products a voucher made cheaper are left out of the condition (default false).
    pub condition_ignore_voucher_discounted: Option<bool>,
}

impl DiscountWrite {
    /// The fields after this change of `f`.
    fn apply(self, mut f: DiscountFields) -> DiscountFields {
        fn set<T>(field: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *field = v;
            }
        }
        let time = |v: MaybeUndefined<Timestamp>| patched(v).map(|t| t.map(|t| t.0));
        set(&mut f.active, self.active);
        set(&mut f.internal_name, self.internal_name);
        set(&mut f.position, self.position);
        set(&mut f.all_sales_channels, self.all_sales_channels);
        set(&mut f.limit_sales_channels, self.limit_sales_channels);
        set(&mut f.available_from, time(self.available_from));
        set(&mut f.available_until, time(self.available_until));
        set(&mut f.subevent_mode, self.subevent_mode);
        set(&mut f.subevent_date_from, time(self.subevent_date_from));
        set(&mut f.subevent_date_until, time(self.subevent_date_until));
        set(&mut f.condition_all_products, self.condition_all_products);
        set(
            &mut f.condition_limit_products,
            self.condition_limit_products,
        );
        set(
            &mut f.condition_apply_to_addons,
            self.condition_apply_to_addons,
        );
        set(&mut f.condition_min_count, self.condition_min_count);
        set(
            &mut f.condition_min_value_cents,
            self.condition_min_value.map(|m| m.0),
        );
        set(
            &mut f.benefit_percent_bps,
            self.benefit_discount_matching_percent
                .map(|p| i32::try_from(p.0).unwrap_or(i32::MAX)),
        );
        set(
            &mut f.benefit_only_apply_to_cheapest_n_matches,
            patched(self.benefit_only_apply_to_cheapest_n_matches),
        );
        set(&mut f.benefit_same_products, self.benefit_same_products);
        set(&mut f.benefit_limit_products, self.benefit_limit_products);
        set(&mut f.benefit_apply_to_addons, self.benefit_apply_to_addons);
        set(
            &mut f.benefit_ignore_voucher_discounted,
            self.benefit_ignore_voucher_discounted,
        );
        set(
            &mut f.condition_ignore_voucher_discounted,
            self.condition_ignore_voucher_discounted,
        );
        f
    }

    /// The fields of a new discount (or one replaced whole): a name is needed.
    fn whole(self) -> Result<DiscountFields, ApiError> {
        if self.internal_name.is_none() {
            let mut errors = FieldErrors::new();
            errors.push("internal_name", "This field is required.");
            return Err(errors.into());
        }
        Ok(self.apply(DiscountFields::default()))
    }
}

fn write_error(e: WriteError) -> ApiError {
    match e {
        WriteError::Invalid(invalid) => match FieldErrors::check(invalid) {
            Err(e) => e.into(),
            Ok(()) => ApiError::internal(),
        },
        WriteError::Db(e) => e.into(),
    }
}

async fn find_discount(
    state: &AppState,
    event_id: i64,
    id: i64,
) -> Result<discount::Model, ApiError> {
    manage::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

/// Discount operations.
pub struct DiscountsApi;

#[OpenApi(tag = "Tag::Discounts")]
impl DiscountsApi {
    /// List discounts
    ///
    /// By position, then ID; `active` filters. Needs any access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_discounts(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        active: Query<Option<bool>>,
    ) -> ListResult<Json<Page<DiscountOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let query = manage::query(ev.event.id, active.0);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show a discount
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts/:id",
        method = "get"
    )]
    async fn get_discount(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<DiscountOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_discount(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a discount
    ///
    /// Needs `can_change_items`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts",
        method = "post"
    )]
    async fn create_discount(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<DiscountWrite>,
    ) -> WriteResult<Created<DiscountOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let fields = body.0.whole()?;
        let saved = manage::create(&state.db, &ev.event, fields)
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a discount
    ///
    /// Omitted fields take their defaults.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts/:id",
        method = "put"
    )]
    async fn put_discount(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<DiscountWrite>,
    ) -> WriteResult<Json<DiscountOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_discount(&state, ev.event.id, *id).await?;
        let fields = body.0.whole()?;
        let saved = manage::update(&state.db, &ev.event, &existing, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Change a discount
    ///
    /// The rules hold for the discount as changed.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts/:id",
        method = "patch"
    )]
    async fn patch_discount(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<DiscountWrite>,
    ) -> WriteResult<Json<DiscountOut>> {
        let ev = auth
            .0
            .event(&state.db, &organizer, &event, Some(Permission::ChangeItems))
            .await?;
        let existing = find_discount(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(DiscountFields::from(&existing));
        let saved = manage::update(&state.db, &ev.event, &existing, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(saved.into()))
    }

    /// Delete a discount
    ///
    /// 403 once it priced a position of an order.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/discounts/:id",
        method = "delete"
    )]
    async fn delete_discount(
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
        let existing = find_discount(&state, ev.event.id, *id).await?;
        match manage::delete(&state.db, &existing).await {
            Ok(()) => Ok(NoContent::NoContent),
            Err(e @ DeleteError::Used) => Err(ApiError::forbidden_because(e.to_string()).into()),
            Err(DeleteError::Db(e)) => Err(e.into()),
        }
    }
}
