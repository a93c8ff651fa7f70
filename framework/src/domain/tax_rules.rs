//! Tax rules of an event. The rate is kept exactly, in hundredths of a percent.

pub mod reverse_charge;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Select, Set,
};

use sea_orm::sea_query::{Expr, ExprTrait, Query};

use crate::db::entities::{item, tax_rule};

/// The highest rate: 100.00 %.
pub const MAX_RATE_BPS: i64 = 10_000;

/// Every writable field of a tax rule.
#[derive(Debug, Clone, PartialEq)]
pub struct TaxRuleFields {
    /// Multi-language name (stored JSON object).
    pub name: serde_json::Value,
    /// Rate in hundredths of a percent.
    pub rate_bps: i64,
    /// Whether prices include the tax.
    pub price_includes_tax: bool,
    /// Whether EU reverse charge applies.
    pub eu_reverse_charge: bool,
    /// ISO 3166 country code of the merchant.
    pub home_country: Option<String>,
}

impl From<&tax_rule::Model> for TaxRuleFields {
    fn from(t: &tax_rule::Model) -> Self {
        Self {
            name: t.name.clone(),
            rate_bps: t.rate_bps,
            price_includes_tax: t.price_includes_tax,
            eu_reverse_charge: t.eu_reverse_charge,
            home_country: t.home_country.clone(),
        }
    }
}

/// The fields that break a rule, each with its message.
pub fn invalid_fields(fields: &TaxRuleFields) -> Vec<(&'static str, String)> {
    let mut invalid = Vec::new();
    if !(0..=MAX_RATE_BPS).contains(&fields.rate_bps) {
        invalid.push((
            "rate",
            "The tax rate must be between 0.00 and 100.00.".to_owned(),
        ));
    }
    let country = fields.home_country.as_deref().filter(|c| !c.is_empty());
    if country.is_some_and(|c| c.len() != 2 || !c.bytes().all(|b| b.is_ascii_uppercase())) {
        invalid.push((
            "home_country",
            "Use a two-letter ISO 3166 country code.".to_owned(),
        ));
    }
    if fields.eu_reverse_charge && country.is_none() {
        invalid.push((
            "home_country",
            "You need to set your home country to use the reverse charge feature.".to_owned(),
        ));
    }
    invalid
}

/// An event's tax rules, by ID.
pub fn query(event_id: i64) -> Select<tax_rule::Entity> {
    tax_rule::Entity::find()
        .filter(tax_rule::Column::EventId.eq(event_id))
        .order_by_asc(tax_rule::Column::Id)
}

/// A tax rule of the event.
pub async fn find(
    db: &DatabaseConnection,
    event_id: i64,
    id: i64,
) -> Result<Option<tax_rule::Model>, DbErr> {
    tax_rule::Entity::find_by_id(id)
        .filter(tax_rule::Column::EventId.eq(event_id))
        .one(db)
        .await
}

fn row(fields: TaxRuleFields) -> tax_rule::ActiveModel {
    tax_rule::ActiveModel {
        name: Set(fields.name),
        rate_bps: Set(fields.rate_bps),
        price_includes_tax: Set(fields.price_includes_tax),
        eu_reverse_charge: Set(fields.eu_reverse_charge),
        home_country: Set(fields.home_country.filter(|c| !c.is_empty())),
        ..Default::default()
    }
}

/// Creates a tax rule; the caller has checked [`invalid_fields`].
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    fields: TaxRuleFields,
) -> Result<tax_rule::Model, DbErr> {
    let mut new = row(fields);
    new.event_id = Set(event_id);
    crate::db::in_transaction(db, async |txn| new.insert(txn).await).await
}

/// Replaces every writable field of a tax rule; the caller has checked [`invalid_fields`].
pub async fn update(
    db: &DatabaseConnection,
    existing: &tax_rule::Model,
    fields: TaxRuleFields,
) -> Result<tax_rule::Model, DbErr> {
    let mut changed = row(fields);
    changed.id = Set(existing.id);
    changed.event_id = Set(existing.event_id);
    changed.update(db).await
}

/// Why a tax rule was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// Items still apply it.
    #[error("items still apply it")]
    InUse,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Deletes a tax rule that no item applies. The check and the delete are one statement,
/// so an item assigned meanwhile cannot be left pointing at a deleted rule.
pub async fn delete(
    db: &DatabaseConnection,
    existing: &tax_rule::Model,
) -> Result<(), DeleteError> {
    let users = Query::select()
        .column(item::Column::TaxRuleId)
        .from(item::Entity)
        .and_where(item::Column::TaxRuleId.eq(existing.id))
        .to_owned();
    let done = tax_rule::Entity::delete_many()
        .filter(tax_rule::Column::Id.eq(existing.id))
        .filter(Expr::exists(users).not())
        .exec(db)
        .await?;
    if done.rows_affected == 0 {
        return Err(DeleteError::InUse);
    }
    Ok(())
}
