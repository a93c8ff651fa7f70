//! Tax rules of an event: `/api/v1/organizers/{organizer}/events/{event}/taxrules/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::tax_rule;
use crate::domain::permissions::Permission;
use crate::domain::tax_rules::{self, DeleteError, TaxRuleFields};
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, Decimal2, FieldErrors, I18nString, JsonBody, NoContent, Page,
    PageRequest, patched,
};
use crate::state::AppState;

/// A tax rule.
#[derive(Object)]
#[oai(rename = "TaxRule")]
pub struct TaxRuleOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: I18nString,
    /// Tax rate in percent, e.g. `"19.00"`.
    pub rate: Decimal2,
    /// Whether prices include the tax.
    pub price_includes_tax: bool,
    /// Whether EU reverse charge applies.
    pub eu_reverse_charge: bool,
    /// Two-letter country code of the merchant; needed for reverse charge.
    #[oai(nullable)]
    pub home_country: Option<String>,
}

impl From<tax_rule::Model> for TaxRuleOut {
    fn from(t: tax_rule::Model) -> Self {
        Self {
            id: t.id,
            name: I18nString::from_stored(&t.name),
            rate: Decimal2(t.rate_bps),
            price_includes_tax: t.price_includes_tax,
            eu_reverse_charge: t.eu_reverse_charge,
            home_country: t.home_country,
        }
    }
}

/// A new tax rule, or all fields of a tax rule (PUT); omitted fields are reset.
#[derive(Object)]
pub struct TaxRuleCreate {
    /// Name.
    #[oai(validator(max_length = 190))]
    pub name: I18nString,
    /// Tax rate in percent, 0 to 100, at most two decimals.
    pub rate: Decimal2,
    /// Whether prices include the tax.
    #[oai(default = "default_true")]
    pub price_includes_tax: bool,
    /// Whether EU reverse charge applies.
    #[oai(default)]
    pub eu_reverse_charge: bool,
    /// Two-letter country code of the merchant.
    #[oai(nullable, validator(max_length = 2))]
    pub home_country: Option<String>,
}

fn default_true() -> bool {
    true
}

impl From<TaxRuleCreate> for TaxRuleFields {
    fn from(t: TaxRuleCreate) -> Self {
        Self {
            name: t.name.to_stored(),
            rate_bps: t.rate.0,
            price_includes_tax: t.price_includes_tax,
            eu_reverse_charge: t.eu_reverse_charge,
            home_country: t.home_country,
        }
    }
}

/// A partial change of a tax rule.
#[derive(Object)]
pub struct TaxRulePatch {
    /// Name.
    #[oai(validator(max_length = 190))]
    pub name: Option<I18nString>,
    /// Tax rate in percent, 0 to 100, at most two decimals.
    pub rate: Option<Decimal2>,
    /// Whether prices include the tax.
    pub price_includes_tax: Option<bool>,
    /// Whether EU reverse charge applies.
    pub eu_reverse_charge: Option<bool>,
    /// Two-letter country code of the merchant.
    #[oai(nullable, validator(max_length = 2))]
    pub home_country: MaybeUndefined<String>,
}

impl TaxRulePatch {
    fn apply(self, mut fields: TaxRuleFields) -> TaxRuleFields {
        if let Some(name) = self.name {
            fields.name = name.to_stored();
        }
        fields.rate_bps = self.rate.map_or(fields.rate_bps, |r| r.0);
        fields.price_includes_tax = self.price_includes_tax.unwrap_or(fields.price_includes_tax);
        fields.eu_reverse_charge = self.eu_reverse_charge.unwrap_or(fields.eu_reverse_charge);
        if let Some(v) = patched(self.home_country) {
            fields.home_country = v;
        }
        fields
    }
}

/// Tax rule operations.
pub struct TaxRulesApi;

async fn find_rule(state: &AppState, event_id: i64, id: i64) -> Result<tax_rule::Model, ApiError> {
    tax_rules::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

#[OpenApi(tag = "Tag::TaxRules")]
impl TaxRulesApi {
    /// List tax rules
    ///
    /// Needs any access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_tax_rules(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<TaxRuleOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let query = tax_rules::query(ev.event.id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(Into::into)))
    }

    /// Show a tax rule
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules/:id",
        method = "get"
    )]
    async fn get_tax_rule(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<TaxRuleOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        Ok(Json(find_rule(&state, ev.event.id, *id).await?.into()))
    }

    /// Create a tax rule
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules",
        method = "post"
    )]
    async fn create_tax_rule(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<TaxRuleCreate>,
    ) -> WriteResult<Created<TaxRuleOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let fields = TaxRuleFields::from(body.0);
        FieldErrors::check(tax_rules::invalid_fields(&fields))?;
        let saved = tax_rules::create(&state.db, ev.event.id, fields).await?;
        Ok(Created::Created(Json(saved.into())))
    }

    /// Replace a tax rule
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules/:id",
        method = "put"
    )]
    async fn put_tax_rule(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<TaxRuleCreate>,
    ) -> WriteResult<Json<TaxRuleOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_rule(&state, ev.event.id, *id).await?;
        let fields = TaxRuleFields::from(body.0);
        FieldErrors::check(tax_rules::invalid_fields(&fields))?;
        Ok(Json(
            tax_rules::update(&state.db, &existing, fields)
                .await?
                .into(),
        ))
    }

    /// Change a tax rule
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules/:id",
        method = "patch"
    )]
    async fn patch_tax_rule(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<TaxRulePatch>,
    ) -> WriteResult<Json<TaxRuleOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_rule(&state, ev.event.id, *id).await?;
        let fields = body.0.apply(TaxRuleFields::from(&existing));
        FieldErrors::check(tax_rules::invalid_fields(&fields))?;
        Ok(Json(
            tax_rules::update(&state.db, &existing, fields)
                .await?
                .into(),
        ))
    }

    /// Delete a tax rule
    ///
    /// A tax rule that an item applies cannot be deleted: 403.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/taxrules/:id",
        method = "delete"
    )]
    async fn delete_tax_rule(
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
        let existing = find_rule(&state, ev.event.id, *id).await?;
        match tax_rules::delete(&state.db, &existing).await {
            Ok(()) => Ok(NoContent::NoContent),
            Err(DeleteError::InUse) => Err(ApiError::forbidden_because(
                "This tax rule can not be deleted as it is currently in use.",
            )
            .into()),
            Err(DeleteError::Db(e)) => Err(e.into()),
        }
    }
}
