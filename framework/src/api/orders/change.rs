//! An order changed as pretix's `orders/{code}/change/`: positions patched, canceled, split
//! off or added, fees canceled, added or patched, taxes computed again, in one request.

use chrono::{DateTime, Utc};
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};

use crate::api::Tag;
use crate::domain::orders::{
    self, FeeInput, FeePatch, KeepTaxes, NewPosition, OrderChange, PositionPatch,
};
use crate::http::error::WriteResult;
use crate::http::{Auth, JsonBody, Money, patched};
use crate::state::AppState;
use crate::values::Timestamp;

use super::wire::OrderOut;
use super::{FeeCreate, change_orders, lifecycle_error, seller, shown};

/// What changes of a position; each field sent replaces the stored one.
#[derive(Object)]
pub struct PositionChange {
    /// Another item of the event.
    pub item: Option<i64>,
    /// Another variation of the item.
    pub variation: MaybeUndefined<i64>,
    /// Another date of the series.
    pub subevent: MaybeUndefined<i64>,
    /// Another seat by its identifier in the plan; `null` gives the seat up.
    #[oai(validator(max_length = 190))]
    pub seat: MaybeUndefined<String>,
    /// Another price, taxes included.
    pub price: Option<Money>,
    /// Another tax rule of the event.
    pub tax_rule: MaybeUndefined<i64>,
    /// Admits from this instant on.
    pub valid_from: MaybeUndefined<DateTime<Utc>>,
    /// Admits until this instant.
    pub valid_until: MaybeUndefined<DateTime<Utc>>,
    /// Another ticket secret, unique in the event.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub secret: Option<String>,
}

/// A position patched.
#[derive(Object)]
pub struct PatchPosition {
    /// The position's ID.
    pub position: i64,
    /// What changes.
    pub body: PositionChange,
}

/// A position named.
#[derive(Object)]
pub struct SelectPosition {
    /// The position's ID.
    pub position: i64,
}

/// A position added to the order.
#[derive(Object)]
pub struct AddPosition {
    /// The item.
    pub item: i64,
    /// The variation; required for items with variations.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// The price, taxes included; the product's when not sent or `null`.
    #[oai(nullable)]
    pub price: Option<Money>,
    /// The `positionid` of the position it is an add-on to.
    #[oai(nullable)]
    pub addon_to: Option<i32>,
    /// The date of a series; required in a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The seat's identifier in the plan.
    #[oai(nullable, validator(max_length = 190))]
    pub seat: Option<String>,
    /// Admits from this instant on.
    #[oai(nullable)]
    pub valid_from: Option<Timestamp>,
    /// Admits until this instant.
    #[oai(nullable)]
    pub valid_until: Option<Timestamp>,
}

/// A fee's new value.
#[derive(Object)]
pub struct FeeValue {
    /// The value, taxes included.
    pub value: Money,
}

/// A fee patched.
#[derive(Object)]
pub struct PatchFee {
    /// The fee's ID.
    pub fee: i64,
    /// What changes.
    pub body: FeeValue,
}

/// A fee named.
#[derive(Object)]
pub struct SelectFee {
    /// The fee's ID.
    pub fee: i64,
}

/// What stays when taxes are computed again.
#[derive(Enum, Clone, Copy)]
#[oai(rename_all = "snake_case")]
pub enum Recalculate {
    /// The net price stays.
    KeepNet,
    /// The gross price stays.
    KeepGross,
}

/// A change of an order. Lists hold at most 500 positions or 100 fees.
#[derive(Object)]
pub struct OrderChangeBody {
    /// Tell the customer by e-mail.
    #[oai(default)]
    pub send_email: bool,
    /// Cancel the order's invoice and issue a new one that shows the change.
    #[oai(default = "yes")]
    pub reissue_invoice: bool,
    /// Compute the taxes again with the rules' current rates.
    pub recalculate_taxes: MaybeUndefined<Recalculate>,
    /// Positions patched.
    #[oai(default, validator(max_items = 500))]
    pub patch_positions: Vec<PatchPosition>,
    /// Positions canceled, with their add-ons.
    #[oai(default, validator(max_items = 500))]
    pub cancel_positions: Vec<SelectPosition>,
    /// Positions added.
    #[oai(default, validator(max_items = 500))]
    pub create_positions: Vec<AddPosition>,
    /// Positions moved into a new order, with their add-ons.
    #[oai(default, validator(max_items = 500))]
    pub split_positions: Vec<SelectPosition>,
    /// Fees added.
    #[oai(default, validator(max_items = 100))]
    pub create_fees: Vec<FeeCreate>,
    /// Fees whose value changes.
    #[oai(default, validator(max_items = 100))]
    pub patch_fees: Vec<PatchFee>,
    /// Fees canceled.
    #[oai(default, validator(max_items = 100))]
    pub cancel_fees: Vec<SelectFee>,
}

fn yes() -> bool {
    true
}

impl OrderChangeBody {
    fn into_change(self, check_quotas: bool) -> OrderChange {
        OrderChange {
            patch_positions: self.patch_positions.into_iter().map(patch).collect(),
            cancel_positions: self.cancel_positions.iter().map(|p| p.position).collect(),
            create_positions: self.create_positions.into_iter().map(add).collect(),
            split_positions: self.split_positions.iter().map(|p| p.position).collect(),
            patch_fees: (self.patch_fees.iter())
                .map(|f| FeePatch {
                    fee: f.fee,
                    value: f.body.value.0,
                })
                .collect(),
            cancel_fees: self.cancel_fees.iter().map(|f| f.fee).collect(),
            create_fees: self.create_fees.into_iter().map(FeeInput::from).collect(),
            recalculate_taxes: self.recalculate_taxes.take().map(|r| match r {
                Recalculate::KeepNet => KeepTaxes::Net,
                Recalculate::KeepGross => KeepTaxes::Gross,
            }),
            send_email: self.send_email,
            reissue_invoice: self.reissue_invoice,
            check_quotas,
        }
    }
}

/// The domain's patch of a position as sent.
pub(super) fn patch(p: PatchPosition) -> PositionPatch {
    let b = p.body;
    PositionPatch {
        position: p.position,
        item: b.item,
        variation: patched(b.variation),
        subevent: patched(b.subevent),
        seat: patched(b.seat),
        price: b.price.map(|m| m.0),
        tax_rule: patched(b.tax_rule),
        valid_from: patched(b.valid_from),
        valid_until: patched(b.valid_until),
        secret: b.secret,
        info: Default::default(),
    }
}

/// The domain's new position as sent (without attendee data).
pub(super) fn add(p: AddPosition) -> NewPosition {
    NewPosition {
        item: p.item,
        variation: p.variation,
        price: p.price.map(|m| m.0),
        addon_to: p.addon_to,
        subevent: p.subevent,
        seat: p.seat,
        valid_from: p.valid_from.map(Into::into),
        valid_until: p.valid_until.map(Into::into),
        info: Default::default(),
    }
}

/// Order changes.
pub struct ChangeApi;

#[OpenApi(tag = "Tag::Orders")]
impl ChangeApi {
    /// Change an order
    ///
    /// As pretix: positions canceled (with their add-ons), patched (item, variation, date,
    /// seat, price, tax rule, validity, secret), split off into a new order, or added (also
    /// as add-ons to a position, by its `positionid`); fees canceled, added or patched;
    /// taxes computed again. One transaction: all of it or nothing. What the change takes
    /// of quotas (unless `check_quotas=false`) and seats is checked as at creation; a change
    /// that would leave the order empty is refused. The total and the status follow (a paid
    /// order that now costs more is pending again, a pending one now covered is paid),
    /// changed tickets get new secrets (the old ones revoked where scanners check offline),
    /// and webhooks hear `pretix.event.order.changed.*`. Refusals are 400 with a list of
    /// one message, or field errors per list element. Needs `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/orders/:code/change",
        method = "post"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn change_order(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        code: Path<String>,
        /// `false` to change without checking the quotas (default `true`).
        check_quotas: Query<Option<String>>,
        body: JsonBody<OrderChangeBody>,
    ) -> WriteResult<Json<OrderOut>> {
        let ev = change_orders(&state, &auth, &organizer, &event).await?;
        let check = check_quotas
            .0
            .is_none_or(|v| v.eq_ignore_ascii_case("true"));
        let mails = body.0.send_email;
        let o = orders::change(
            seller(&state, &ev),
            &ev.event,
            &code,
            body.0.into_change(check),
        )
        .await
        .map_err(lifecycle_error)?;
        if mails {
            state.mailer.wake();
        }
        Ok(Json(shown(&state, &ev, o).await?))
    }
}
