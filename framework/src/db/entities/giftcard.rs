//! A gift card. `value_cents` is kept equal to the sum of its transactions.

use sea_orm::entity::prelude::*;

/// A row of `giftcards`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "giftcards")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer that issued the card.
    pub issuer_id: i64,
    /// The code printed on the card.
    pub secret: String,
    /// Current value in cents.
    pub value_cents: i64,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Whether this is a test card.
    pub testmode: bool,
    /// Expiry date.
    pub expires: Option<DateTimeUtc>,
    /// Special terms.
    pub conditions: Option<String>,
    /// When the card was issued.
    pub issuance: DateTimeUtc,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
