//! Gift cards of an organizer and their ledger: `/api/v1/organizers/{organizer}/giftcards/`.

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};

use super::Tag;
use crate::domain::giftcards::{
    self, Card, CardChanges, CardFilter, CreateError, Entry, EntryOrder, NewCard, TransactError,
    Visibility,
};
use crate::domain::permissions::Permission;
use crate::http::error::{ConflictResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, Currency, JsonBody, Money, Page, PageRequest, patched};
use crate::state::AppState;
use crate::values::Timestamp;

/// A gift card.
#[derive(Object)]
#[oai(rename = "GiftCard")]
pub struct GiftCardOut {
    /// Internal ID.
    pub id: i64,
    /// The gift card code; cannot be modified after creation.
    pub secret: String,
    /// When the card was issued.
    pub issuance: Timestamp,
    /// Current value.
    pub value: Money,
    /// Currency; cannot be modified after creation.
    pub currency: String,
    /// Whether this is a test card; cannot be modified.
    pub testmode: bool,
    /// Expiry date.
    #[oai(nullable)]
    pub expires: Option<Timestamp>,
    /// Special terms for this card.
    #[oai(nullable)]
    pub conditions: Option<String>,
    /// Slug of the issuing organizer.
    pub issuer: String,
}

impl From<Card> for GiftCardOut {
    fn from(c: Card) -> Self {
        Self {
            id: c.id,
            secret: c.secret,
            issuance: c.issuance.into(),
            value: Money(c.value_cents),
            currency: c.currency,
            testmode: c.testmode,
            expires: c.expires.map(Into::into),
            conditions: c.conditions,
            issuer: c.issuer,
        }
    }
}

/// A new gift card.
#[derive(Object)]
pub struct GiftCardCreate {
    /// The code; generated when not sent. Letters, digits, `.`, `-` and `_`.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub secret: Option<String>,
    /// Initial value, not negative.
    pub value: Money,
    /// ISO 4217 currency code.
    pub currency: Currency,
    /// Whether this is a test card.
    #[oai(default)]
    pub testmode: bool,
    /// Expiry date.
    #[oai(nullable)]
    pub expires: Option<Timestamp>,
    /// Special terms. At most 10,000 characters (pretix sets no limit).
    #[oai(nullable, validator(max_length = 10000))]
    pub conditions: Option<String>,
}

/// A partial change of a gift card (PATCH). Changing `value` books the difference.
#[derive(Object)]
pub struct GiftCardPatch {
    /// New value, not negative.
    pub value: Option<Money>,
    /// New expiry date.
    #[oai(nullable)]
    pub expires: MaybeUndefined<DateTime<Utc>>,
    /// New terms. At most 10,000 characters (pretix sets no limit).
    #[oai(nullable, validator(max_length = 10000))]
    pub conditions: MaybeUndefined<String>,
}

/// A full replacement of a gift card's modifiable fields (PUT); omitted fields are reset.
#[derive(Object)]
pub struct GiftCardPut {
    /// Value, not negative.
    pub value: Money,
    /// Expiry date.
    #[oai(nullable)]
    pub expires: Option<Timestamp>,
    /// Terms. At most 10,000 characters (pretix sets no limit).
    #[oai(nullable, validator(max_length = 10000))]
    pub conditions: Option<String>,
}

/// A booking on a gift card.
#[derive(Object)]
pub struct TransactRequest {
    /// Signed amount: positive adds credit, negative spends it.
    pub value: Money,
    /// Free text stored with the transaction. At most 10,000 characters (pretix sets no limit).
    #[oai(nullable, validator(max_length = 10000))]
    pub text: Option<String>,
}

/// One entry of a gift card's ledger.
#[derive(Object)]
#[oai(rename = "GiftCardTransaction")]
pub struct TransactionOut {
    /// Internal ID.
    pub id: i64,
    /// When it was booked.
    pub datetime: Timestamp,
    /// Signed amount.
    pub value: Money,
    /// Event slug, if used in a shop.
    #[oai(nullable)]
    pub event: Option<String>,
    /// Order code, if used in a shop.
    #[oai(nullable)]
    pub order: Option<String>,
    /// Custom text.
    #[oai(nullable)]
    pub text: Option<String>,
    /// Slug of the organizer that booked it.
    pub acceptor: String,
}

impl From<Entry> for TransactionOut {
    fn from(e: Entry) -> Self {
        Self {
            id: e.id,
            datetime: e.datetime.into(),
            value: Money(e.value_cents),
            event: e.event,
            order: e.order_code,
            text: e.text,
            acceptor: e.acceptor,
        }
    }
}

/// Order of the transaction list.
#[derive(Enum, Clone, Copy)]
pub enum TransactionOrdering {
    /// Oldest first.
    #[oai(rename = "datetime")]
    Datetime,
    /// Newest first (default).
    #[oai(rename = "-datetime")]
    DatetimeDesc,
    /// By ID.
    #[oai(rename = "id")]
    Id,
    /// By ID, descending.
    #[oai(rename = "-id")]
    IdDesc,
}

/// Gift card operations.
pub struct GiftCardsApi;

fn secret_is_valid(secret: &str) -> bool {
    let mut chars = secret.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn not_negative(value: Money) -> Result<(), ApiError> {
    if value.0 < 0 {
        return Err(ApiError::field(
            "value",
            "Ensure this value is greater than or equal to 0.00.",
        ));
    }
    Ok(())
}

fn visibility(organizer_id: i64, include_accepted: Option<bool>) -> Visibility {
    Visibility {
        organizer_id,
        include_accepted: include_accepted.unwrap_or(false),
    }
}

fn own_cards_only(include_accepted: Option<bool>) -> Result<(), ApiError> {
    if include_accepted.is_some() {
        return Err(ApiError::forbidden_because(
            "Accepted gift cards cannot be updated, use transact instead.",
        ));
    }
    Ok(())
}

#[OpenApi(tag = "Tag::GiftCards")]
impl GiftCardsApi {
    /// List gift cards
    ///
    /// The organizer's gift cards, newest first; with `include_accepted=true` also those of
    /// the issuers it accepts. Needs `can_manage_gift_cards`.
    #[oai(path = "/api/v1/organizers/:organizer/giftcards", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list_giftcards(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        secret: Query<Option<String>>,
        testmode: Query<Option<bool>>,
        include_accepted: Query<Option<bool>>,
    ) -> ListResult<Json<Page<GiftCardOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        let vis = visibility(org.organizer.id, include_accepted.0);
        let filter = CardFilter {
            secret: secret.0,
            testmode: testmode.0,
        };
        let total = giftcards::count(&state.db, vis, &filter).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(total)?;
        let cards = giftcards::list(&state.db, vis, &filter, window.limit, window.offset).await?;
        Ok(Json(
            window.page(cards.into_iter().map(Into::into).collect()),
        ))
    }

    /// Show a gift card
    #[oai(path = "/api/v1/organizers/:organizer/giftcards/:id", method = "get")]
    async fn get_giftcard(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        include_accepted: Query<Option<bool>>,
    ) -> ReadResult<Json<GiftCardOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        let card = giftcards::find(
            &state.db,
            visibility(org.organizer.id, include_accepted.0),
            *id,
        )
        .await?;
        Ok(Json(card.ok_or_else(ApiError::forbidden)?.into()))
    }

    /// Create a gift card
    ///
    /// The initial value is booked as the card's first transaction. A secret already used
    /// by this organizer, or by an issuer it accepts, is refused.
    #[oai(path = "/api/v1/organizers/:organizer/giftcards", method = "post")]
    async fn create_giftcard(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<GiftCardCreate>,
    ) -> WriteResult<Created<GiftCardOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        let new = body.0;
        if new.secret.as_deref().is_some_and(|s| !secret_is_valid(s)) {
            return Err(ApiError::field("secret", "Use only letters, digits, \".\", \"-\" and \"_\", starting with a letter or digit.").into());
        }
        not_negative(new.value)?;
        let new = NewCard {
            secret: new.secret,
            value_cents: new.value.0,
            currency: new.currency.0,
            testmode: new.testmode,
            expires: new.expires.map(Into::into),
            conditions: new.conditions,
        };
        match giftcards::create(&state.db, org.organizer.id, new).await {
            Ok(card) => Ok(Created::Created(Json(card.into()))),
            Err(CreateError::SecretTaken) => Err(ApiError::field(
                "secret",
                "A gift card with the same secret already exists in your or an affiliated organizer account.",
            )
            .into()),
            Err(CreateError::Db(e)) => Err(e.into()),
        }
    }

    /// Change a gift card
    ///
    /// Only `value`, `expires` and `conditions` can change; a changed value books the
    /// difference as a transaction. Prefer `transact` for changing the value.
    #[oai(path = "/api/v1/organizers/:organizer/giftcards/:id", method = "patch")]
    async fn patch_giftcard(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        include_accepted: Query<Option<bool>>,
        body: JsonBody<GiftCardPatch>,
    ) -> WriteResult<Json<GiftCardOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        own_cards_only(include_accepted.0)?;
        let patch = body.0;
        if let Some(v) = patch.value {
            not_negative(v)?;
        }
        let changes = CardChanges {
            value_cents: patch.value.map(|v| v.0),
            expires: patched(patch.expires),
            conditions: patched(patch.conditions),
        };
        let card = giftcards::update(&state.db, org.organizer.id, *id, changes).await?;
        Ok(Json(card.ok_or_else(ApiError::forbidden)?.into()))
    }

    /// Replace a gift card's modifiable fields
    #[oai(path = "/api/v1/organizers/:organizer/giftcards/:id", method = "put")]
    async fn put_giftcard(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        include_accepted: Query<Option<bool>>,
        body: JsonBody<GiftCardPut>,
    ) -> WriteResult<Json<GiftCardOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        own_cards_only(include_accepted.0)?;
        let put = body.0;
        not_negative(put.value)?;
        let changes = CardChanges {
            value_cents: Some(put.value.0),
            expires: Some(put.expires.map(Into::into)),
            conditions: Some(put.conditions),
        };
        let card = giftcards::update(&state.db, org.organizer.id, *id, changes).await?;
        Ok(Json(card.ok_or_else(ApiError::forbidden)?.into()))
    }

    /// Book a transaction on a gift card
    ///
    /// Atomically adds the signed `value` to the card. A debit that would take the card
    /// below zero is answered with 409 and changes nothing.
    #[oai(
        path = "/api/v1/organizers/:organizer/giftcards/:id/transact",
        method = "post"
    )]
    async fn transact_giftcard(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        include_accepted: Query<Option<bool>>,
        body: JsonBody<TransactRequest>,
    ) -> ConflictResult<Json<GiftCardOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        let vis = visibility(org.organizer.id, include_accepted.0);
        let TransactRequest { value, text } = body.0;
        match giftcards::transact(&state.db, &state.bookings, vis, *id, value.0, text).await {
            Ok(card) => Ok(Json(card.into())),
            Err(TransactError::NotFound) => Err(ApiError::forbidden().into()),
            Err(TransactError::InsufficientCredit) => Err(ApiError::conflict(
                "value",
                "The gift card does not have sufficient credit for this operation.",
            )
            .into()),
            Err(TransactError::Db(e)) => Err(e.into()),
        }
    }

    /// List a gift card's transactions
    ///
    /// Newest first by default; `ordering` may be `datetime`, `-datetime`, `id` or `-id`.
    #[oai(
        path = "/api/v1/organizers/:organizer/giftcards/:id/transactions",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_giftcard_transactions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        ordering: Query<Option<TransactionOrdering>>,
        include_accepted: Query<Option<bool>>,
    ) -> ListResult<Json<Page<TransactionOut>>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ManageGiftCards))?;
        let vis = visibility(org.organizer.id, include_accepted.0);
        let card = giftcards::find(&state.db, vis, *id)
            .await?
            .ok_or_else(ApiError::forbidden)?;
        let order = match ordering.0 {
            Some(TransactionOrdering::Datetime) => EntryOrder::OldestFirst,
            Some(TransactionOrdering::DatetimeDesc) | None => EntryOrder::NewestFirst,
            Some(TransactionOrdering::Id) => EntryOrder::Id,
            Some(TransactionOrdering::IdDesc) => EntryOrder::IdDescending,
        };
        let total = giftcards::count_entries(&state.db, card.id).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(total)?;
        let entries =
            giftcards::entries(&state.db, card.id, order, window.limit, window.offset).await?;
        Ok(Json(
            window.page(entries.into_iter().map(Into::into).collect()),
        ))
    }
}
