//! Check-in: lists of an event (`{event}/checkinlists/`), scanning tickets (the organizer's
//! `checkinrpc/redeem/` and each list's `positions/{secret}/redeem/`), finding tickets
//! (`checkinrpc/search/`, `checkinlists/{id}/positions/`), the scans of an event
//! (`{event}/checkins/`) and the device's event selection (`/api/v1/device/eventselection`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{ApiResponse, Enum, Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use super::Tag;
use crate::db::entities::{item, item_variation};
use crate::domain::checkin::lists::{self, CheckinList, ListFields, ListFilter, ListOrder};
use crate::domain::checkin::redeem::{self, Outcome, PositionView, Scan, ScanList, Status};
use crate::domain::checkin::search::{
    self, CheckinFilter, CheckinOrder, PositionFilter, PositionOrder,
};
use crate::domain::checkin::selection::{self, Selection};
use crate::domain::checkin::{self as checkin, CheckinRow, Direction, NewCheckin};
use crate::domain::devices::profiles;
use crate::domain::grants::{Caller, EventAccess};
use crate::domain::permissions::Permission;
use crate::domain::webhooks;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, I18nString, JsonBody, Money, NoContent, Page,
    PageRequest, patched,
};
use crate::state::AppState;

// ---------------------------------------------------------------------------------------
// Shapes

/// A check-in list.
#[derive(Object)]
#[oai(rename = "CheckinList")]
pub struct ListOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Every product admits (then `limit_products` is ignored).
    pub all_products: bool,
    /// Products that admit.
    pub limit_products: Vec<i64>,
    /// The date of a series the list is for.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Positions the list admits (left out with `exclude=position_count`).
    #[oai(skip_serializing_if_is_none)]
    pub position_count: Option<i64>,
    /// Positions that entered at least once (left out with `exclude=checkin_count`).
    #[oai(skip_serializing_if_is_none)]
    pub checkin_count: Option<i64>,
    /// Pending orders admit too.
    pub include_pending: bool,
    /// A ticket may enter more than once.
    pub allow_multiple_entries: bool,
    /// A ticket may enter again after an exit.
    pub allow_entry_after_exit: bool,
    /// Entry rules in JSON logic.
    pub rules: BTreeMap<String, Value>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: Option<DateTime<Utc>>,
    /// Scanning a parent ticket redeems its matching add-on.
    pub addon_match: bool,
    /// Gates the list is used at.
    pub gates: Vec<i64>,
}

fn rules_map(v: &Value) -> BTreeMap<String, Value> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn list_out(l: CheckinList, counts: Option<(i64, i64)>, exclude: &[String]) -> ListOut {
    let r = l.row;
    let shown = |f: &str| !exclude.iter().any(|e| e == f);
    ListOut {
        id: r.id,
        name: r.name,
        all_products: r.all_products,
        limit_products: l.limit_products,
        subevent: r.subevent_id,
        position_count: counts.map(|c| c.0).filter(|_| shown("position_count")),
        checkin_count: counts.map(|c| c.1).filter(|_| shown("checkin_count")),
        include_pending: r.include_pending,
        allow_multiple_entries: r.allow_multiple_entries,
        allow_entry_after_exit: r.allow_entry_after_exit,
        rules: rules_map(&r.rules),
        exit_all_at: r.exit_all_at,
        addon_match: r.addon_match,
        gates: l.gates,
    }
}

fn yes() -> bool {
    true
}

/// A new check-in list, or all fields of one (PUT).
#[derive(Object)]
pub struct ListCreate {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// Every product admits (default true).
    #[oai(default = "yes")]
    pub all_products: bool,
    /// Products of this event.
    #[oai(default, validator(max_items = 1000))]
    pub limit_products: Vec<i64>,
    /// A date of this event series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Pending orders admit too.
    #[oai(default)]
    pub include_pending: bool,
    /// A ticket may enter more than once.
    #[oai(default)]
    pub allow_multiple_entries: bool,
    /// A ticket may enter again after an exit (default true).
    #[oai(default = "yes")]
    pub allow_entry_after_exit: bool,
    /// Entry rules in JSON logic (pretix's operators and variables).
    #[oai(default)]
    pub rules: BTreeMap<String, Value>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: Option<DateTime<Utc>>,
    /// Scanning a parent ticket redeems its matching add-on.
    #[oai(default)]
    pub addon_match: bool,
    /// Gates of this organizer.
    #[oai(default, validator(max_items = 1000))]
    pub gates: Vec<i64>,
}

impl From<ListCreate> for ListFields {
    fn from(c: ListCreate) -> Self {
        Self {
            name: c.name,
            all_products: c.all_products,
            limit_products: c.limit_products,
            subevent_id: c.subevent,
            include_pending: c.include_pending,
            allow_multiple_entries: c.allow_multiple_entries,
            allow_entry_after_exit: c.allow_entry_after_exit,
            rules: Value::Object(c.rules.into_iter().collect()),
            exit_all_at: c.exit_all_at,
            addon_match: c.addon_match,
            gates: c.gates,
        }
    }
}

/// A partial change of a check-in list.
#[derive(Object)]
pub struct ListPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// Every product admits.
    pub all_products: Option<bool>,
    /// Products of this event.
    #[oai(validator(max_items = 1000))]
    pub limit_products: Option<Vec<i64>>,
    /// A date of this event series.
    #[oai(nullable)]
    pub subevent: MaybeUndefined<i64>,
    /// Pending orders admit too.
    pub include_pending: Option<bool>,
    /// More than one entry.
    pub allow_multiple_entries: Option<bool>,
    /// Entry after exit.
    pub allow_entry_after_exit: Option<bool>,
    /// Entry rules.
    pub rules: Option<BTreeMap<String, Value>>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: MaybeUndefined<DateTime<Utc>>,
    /// Add-on matching.
    pub addon_match: Option<bool>,
    /// Gates of this organizer.
    #[oai(validator(max_items = 1000))]
    pub gates: Option<Vec<i64>>,
}

impl ListPatch {
    fn apply(self, f: ListFields) -> ListFields {
        ListFields {
            name: self.name.unwrap_or(f.name),
            all_products: self.all_products.unwrap_or(f.all_products),
            limit_products: self.limit_products.unwrap_or(f.limit_products),
            subevent_id: patched(self.subevent).unwrap_or(f.subevent_id),
            include_pending: self.include_pending.unwrap_or(f.include_pending),
            allow_multiple_entries: self
                .allow_multiple_entries
                .unwrap_or(f.allow_multiple_entries),
            allow_entry_after_exit: self
                .allow_entry_after_exit
                .unwrap_or(f.allow_entry_after_exit),
            rules: self
                .rules
                .map_or(f.rules, |r| Value::Object(r.into_iter().collect())),
            exit_all_at: patched(self.exit_all_at).unwrap_or(f.exit_all_at),
            addon_match: self.addon_match.unwrap_or(f.addon_match),
            gates: self.gates.unwrap_or(f.gates),
        }
    }
}

/// Order of the list resource; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum ListOrdering {
    /// By date of the series, name, ID (default).
    #[oai(rename = "subevent__date_from")]
    SubeventDate,
    /// Reversed.
    #[oai(rename = "-subevent__date_from")]
    SubeventDateDesc,
    /// By ID.
    #[oai(rename = "id")]
    Id,
    /// By ID, descending.
    #[oai(rename = "-id")]
    IdDesc,
    /// By name.
    #[oai(rename = "name")]
    Name,
    /// By name, descending.
    #[oai(rename = "-name")]
    NameDesc,
}

impl ListOrdering {
    fn order(self) -> (ListOrder, bool) {
        use ListOrdering as O;
        match self {
            O::SubeventDate => (ListOrder::SubeventDate, false),
            O::SubeventDateDesc => (ListOrder::SubeventDate, true),
            O::Id => (ListOrder::Id, false),
            O::IdDesc => (ListOrder::Id, true),
            O::Name => (ListOrder::Name, false),
            O::NameDesc => (ListOrder::Name, true),
        }
    }
}

/// Counts of a variation on a list.
#[derive(Object)]
pub struct VariationStatus {
    /// The variation.
    pub id: i64,
    /// Its name.
    pub value: I18nString,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
}

/// Counts of a product on a list.
#[derive(Object)]
pub struct ItemStatus {
    /// The product.
    pub id: i64,
    /// Its name.
    pub name: I18nString,
    /// Whether it admits to the event.
    pub admission: bool,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
    /// Per variation.
    pub variations: Vec<VariationStatus>,
}

/// The event of a list's status.
#[derive(Object)]
pub struct StatusEvent {
    /// The event's (or the list's date's) name.
    pub name: I18nString,
}

/// How many entered and how many are inside.
#[derive(Object)]
pub struct ListStatus {
    /// The event.
    pub event: StatusEvent,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
    /// Positions whose last scan is an entry.
    pub inside_count: i64,
    /// Per product.
    pub items: Vec<ItemStatus>,
}

/// Entry or exit.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "CheckinType", rename_all = "lowercase")]
pub enum DirectionIo {
    /// Coming in.
    Entry,
    /// Going out.
    Exit,
}

impl From<DirectionIo> for Direction {
    fn from(d: DirectionIo) -> Self {
        match d {
            DirectionIo::Entry => Direction::Entry,
            DirectionIo::Exit => Direction::Exit,
        }
    }
}

impl From<Direction> for DirectionIo {
    fn from(d: Direction) -> Self {
        match d {
            Direction::Entry => DirectionIo::Entry,
            Direction::Exit => DirectionIo::Exit,
        }
    }
}

/// Why a scan was refused.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
#[oai(rename = "CheckinErrorReason", rename_all = "snake_case")]
pub enum ReasonIo {
    /// Canceled.
    Canceled,
    /// Unknown ticket.
    Invalid,
    /// Not paid.
    Unpaid,
    /// Wrong product or date.
    Product,
    /// Rules refused.
    Rules,
    /// Secret revoked.
    Revoked,
    /// Questions unanswered.
    Incomplete,
    /// Entered already.
    AlreadyRedeemed,
    /// More than one ticket matched.
    Ambiguous,
    /// Any other error.
    Error,
    /// Blocked.
    Blocked,
    /// Outside its validity.
    InvalidTime,
    /// Awaiting approval.
    Unapproved,
    /// Annulled.
    Annulled,
}

impl ReasonIo {
    fn as_str(self) -> &'static str {
        use ReasonIo as R;
        match self {
            R::Canceled => "canceled",
            R::Invalid => "invalid",
            R::Unpaid => "unpaid",
            R::Product => "product",
            R::Rules => "rules",
            R::Revoked => "revoked",
            R::Incomplete => "incomplete",
            R::AlreadyRedeemed => "already_redeemed",
            R::Ambiguous => "ambiguous",
            R::Error => "error",
            R::Blocked => "blocked",
            R::InvalidTime => "invalid_time",
            R::Unapproved => "unapproved",
            R::Annulled => "annulled",
        }
    }
}

/// A refused scan a device reports.
#[derive(Object, Clone)]
pub struct FailedCheckin {
    /// Why it was refused.
    pub error_reason: ReasonIo,
    /// More about why.
    #[oai(default, nullable, validator(max_length = 10000))]
    pub error_explanation: Option<String>,
    /// What was scanned.
    #[oai(validator(max_length = 4000))]
    pub raw_barcode: String,
    /// When (now when not sent).
    #[oai(default, nullable)]
    pub datetime: Option<DateTime<Utc>>,
    /// Entry or exit (entry when not sent).
    #[oai(rename = "type")]
    pub direction: Option<DirectionIo>,
    /// The position, when known.
    #[oai(default, nullable)]
    pub position: Option<i64>,
    /// The product read from the ticket.
    #[oai(default, nullable)]
    pub raw_item: Option<i64>,
    /// The variation read from the ticket.
    #[oai(default, nullable)]
    pub raw_variation: Option<i64>,
    /// The date read from the ticket.
    #[oai(default, nullable)]
    pub raw_subevent: Option<i64>,
}

/// A check-in of a position, as positions show it.
#[derive(Object)]
#[oai(rename = "PositionCheckin")]
pub struct PositionCheckinOut {
    /// Internal ID.
    pub id: i64,
    /// When it happened.
    pub datetime: DateTime<Utc>,
    /// The list.
    pub list: i64,
    /// Done by the system.
    pub auto_checked_in: bool,
    /// The gate.
    #[oai(nullable)]
    pub gate: Option<i64>,
    /// The device's number.
    #[oai(nullable)]
    pub device: Option<i64>,
    /// Entry or exit.
    #[oai(rename = "type")]
    pub direction: DirectionIo,
}

impl From<CheckinRow> for PositionCheckinOut {
    fn from(c: CheckinRow) -> Self {
        Self {
            id: c.id,
            datetime: c.datetime,
            list: c.list_id,
            auto_checked_in: c.auto_checked_in,
            gate: c.gate_id,
            device: c.device_number,
            direction: Direction::parse(&c.r#type).into(),
        }
    }
}

/// An order position as check-in shows it: with its check-ins on the lists asked about.
#[derive(Object)]
#[oai(rename = "CheckinPosition")]
pub struct PositionOut {
    /// Internal ID.
    pub id: i64,
    /// The order's code.
    pub order: String,
    /// Number in the order.
    pub positionid: i32,
    /// Product.
    pub item: i64,
    /// Variation.
    #[oai(nullable)]
    pub variation: Option<i64>,
    /// Price.
    pub price: Money,
    /// Attendee name.
    #[oai(nullable)]
    pub attendee_name: Option<String>,
    /// Attendee name parts.
    pub attendee_name_parts: BTreeMap<String, Value>,
    /// Attendee e-mail.
    #[oai(nullable)]
    pub attendee_email: Option<String>,
    /// Ticket secret; left out of a kiosk device's search answers.
    #[oai(skip_serializing_if_is_none)]
    pub secret: Option<String>,
    /// Parent position.
    #[oai(nullable)]
    pub addon_to: Option<i64>,
    /// Date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Valid from.
    #[oai(nullable)]
    pub valid_from: Option<DateTime<Utc>>,
    /// Valid until.
    #[oai(nullable)]
    pub valid_until: Option<DateTime<Utc>>,
    /// Who blocked it (`["admin"]`), or null.
    #[oai(nullable)]
    pub blocked: Option<Vec<String>>,
    /// Check-ins on the lists asked about.
    pub checkins: Vec<PositionCheckinOut>,
    /// Answers.
    pub answers: Vec<BTreeMap<String, Value>>,
    /// The product asks for attention.
    pub require_attention: bool,
    /// The order's status.
    #[oai(rename = "order__status")]
    pub order_status: String,
    /// The ticket's text variables (redeem with `pdf_data=true`, for callers who may view
    /// orders).
    #[oai(skip_serializing_if_is_none)]
    pub pdf_data: Option<BTreeMap<String, Value>>,
}

impl From<PositionView> for PositionOut {
    fn from(v: PositionView) -> Self {
        let p = v.row;
        Self {
            id: p.id,
            order: p.order_code,
            positionid: p.positionid,
            item: p.item_id,
            variation: p.variation_id,
            price: Money(p.price_cents),
            attendee_name: crate::domain::orders::display_name(&p.attendee_name_parts),
            attendee_name_parts: rules_map(&p.attendee_name_parts),
            attendee_email: p.attendee_email,
            secret: Some(p.secret),
            addon_to: p.addon_to_id,
            subevent: p.subevent_id,
            valid_from: p.valid_from,
            valid_until: p.valid_until,
            blocked: p.blocked.then(|| vec!["admin".to_owned()]),
            checkins: v.checkins.into_iter().map(Into::into).collect(),
            answers: p
                .answers
                .as_array()
                .map(|a| a.iter().map(rules_map).collect())
                .unwrap_or_default(),
            require_attention: p.checkin_attention,
            order_status: p.order_status,
            pdf_data: v.pdf_data.map(super::orders::wire::pdf_data_out),
        }
    }
}

/// The list a scan was made on.
#[derive(Object)]
#[oai(rename = "RedeemList")]
pub struct RedeemListOut {
    /// ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// The event's slug.
    pub event: String,
    /// Its date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Pending orders admit too.
    pub include_pending: bool,
}

/// A question to answer at the door.
#[derive(Object)]
#[oai(rename = "CheckinQuestion")]
pub struct QuestionOut {
    /// ID.
    pub id: i64,
    /// Text.
    pub question: I18nString,
    /// Type code.
    #[oai(rename = "type")]
    pub kind: String,
    /// Must be answered.
    pub required: bool,
    /// Order.
    pub position: i32,
    /// Identifier.
    pub identifier: String,
    /// Asked during check-in.
    pub ask_during_checkin: bool,
}

/// The answer to a scan: `ok` (201), `incomplete` or `error` (400), or an unknown ticket (404).
#[derive(Object, Default)]
#[oai(rename = "RedeemResult")]
pub struct RedeemOut {
    /// `ok`, `incomplete` or `error`.
    #[oai(skip_serializing_if_is_none)]
    pub status: Option<String>,
    /// Why it was refused.
    #[oai(skip_serializing_if_is_none)]
    pub reason: Option<String>,
    /// More about why.
    #[oai(skip_serializing_if_is_none)]
    pub reason_explanation: Option<String>,
    /// The order or product asks for attention.
    #[oai(skip_serializing_if_is_none)]
    pub require_attention: Option<bool>,
    /// The ticket.
    #[oai(skip_serializing_if_is_none)]
    pub position: Option<PositionOut>,
    /// The list.
    #[oai(skip_serializing_if_is_none)]
    pub list: Option<RedeemListOut>,
    /// Questions to answer (incomplete).
    #[oai(skip_serializing_if_is_none)]
    pub questions: Option<Vec<QuestionOut>>,
    /// Texts to show at the door.
    #[oai(skip_serializing_if_is_none)]
    pub checkin_texts: Option<Vec<String>>,
    /// For an unknown ticket: "Not found.".
    #[oai(skip_serializing_if_is_none)]
    pub detail: Option<String>,
}

/// A scan's result.
#[derive(ApiResponse)]
pub enum RedeemAnswer {
    /// Admitted.
    #[oai(status = 201)]
    Ok(Json<RedeemOut>),
    /// Refused, or questions to answer; also refused input (`{"lists": [...]}`).
    #[oai(status = 400)]
    Refused(Json<RedeemOut>),
    /// Unknown ticket.
    #[oai(status = 404)]
    Unknown(Json<RedeemOut>),
}

/// Whether the caller is a kiosk device, held to a kiosk's needs (see
/// [`profiles::kiosk_search`]): searches of three characters or more, no ticket secrets.
fn is_kiosk(auth: &Auth, state: &AppState) -> bool {
    auth.0
        .device_profile()
        .is_some_and(|name| profiles::kiosk_search(name, || state.plugins.device_profiles()))
}

/// The answer of a scan; a kiosk is not shown the ticket's secret (a scan of a revoked one
/// would tell the ticket's new secret).
fn redeem_answer(o: Outcome, kiosk: bool) -> RedeemAnswer {
    let unknown = o.unknown();
    let status = o.status;
    let out = RedeemOut {
        status: Some(
            match status {
                Status::Ok => "ok",
                Status::Incomplete => "incomplete",
                Status::Error => "error",
            }
            .to_owned(),
        ),
        reason: o.reason.map(str::to_owned),
        reason_explanation: o.explanation,
        require_attention: Some(o.require_attention),
        position: o.position.map(|p| {
            let mut out = PositionOut::from(p);
            if kiosk {
                out.secret = None;
            }
            out
        }),
        list: Some(RedeemListOut {
            id: o.list.row.id,
            name: o.list.row.name,
            event: o.event_slug,
            subevent: o.list.row.subevent_id,
            include_pending: o.list.row.include_pending,
        }),
        questions: (status == Status::Incomplete).then(|| {
            o.questions
                .into_iter()
                .map(|q| QuestionOut {
                    id: q.id,
                    question: I18nString::from_stored(&q.question),
                    kind: q.r#type,
                    required: q.required,
                    position: q.position,
                    identifier: q.identifier,
                    ask_during_checkin: true,
                })
                .collect()
        }),
        checkin_texts: Some(Vec::new()),
        detail: unknown.then(|| "Not found.".to_owned()),
    };
    match status {
        Status::Ok => RedeemAnswer::Ok(Json(out)),
        _ if unknown => RedeemAnswer::Unknown(Json(out)),
        _ => RedeemAnswer::Refused(Json(out)),
    }
}

fn barcode() -> String {
    "barcode".into()
}

/// A scan on one list per event.
#[derive(Object)]
pub struct RpcRedeem {
    /// Check-in lists, at most one per event.
    #[oai(validator(max_items = 100))]
    pub lists: Vec<i64>,
    /// What was scanned.
    #[oai(validator(max_length = 4000))]
    pub secret: String,
    /// The medium (`barcode`).
    #[oai(default = "barcode", validator(max_length = 190))]
    pub source_type: String,
    /// Entry (default) or exit.
    #[oai(rename = "type")]
    pub direction: Option<DirectionIo>,
    /// Admit whatever a check says.
    #[oai(default)]
    pub force: bool,
    /// Admit pending orders on lists that include them.
    #[oai(default)]
    pub ignore_unpaid: bool,
    /// The scanner can ask questions (default true).
    #[oai(default = "yes")]
    pub questions_supported: bool,
    /// A repeat of this nonce succeeds without a second check-in.
    #[oai(default, nullable, validator(max_length = 190))]
    pub nonce: Option<String>,
    /// When it happened (now when not sent).
    #[oai(default, nullable)]
    pub datetime: Option<DateTime<Utc>>,
    /// Answers by question ID (choices: option IDs separated by commas), each at most
    /// 10,000 characters.
    #[oai(default, validator(max_length = 10000, max_properties = 1000))]
    pub answers: BTreeMap<String, String>,
}

/// A scan on one list (legacy path).
#[derive(Object)]
pub struct ListRedeem {
    /// Entry (default) or exit.
    #[oai(rename = "type")]
    pub direction: Option<DirectionIo>,
    /// Admit whatever a check says.
    #[oai(default)]
    pub force: bool,
    /// Admit pending orders on lists that include them.
    #[oai(default)]
    pub ignore_unpaid: bool,
    /// The scanner can ask questions (default true).
    #[oai(default = "yes")]
    pub questions_supported: bool,
    /// The scanner knows the `canceled` reason (else canceled tickets are `unpaid`).
    #[oai(default)]
    pub canceled_supported: bool,
    /// A repeat of this nonce succeeds without a second check-in.
    #[oai(default, nullable, validator(max_length = 190))]
    pub nonce: Option<String>,
    /// When it happened (now when not sent).
    #[oai(default, nullable)]
    pub datetime: Option<DateTime<Utc>>,
    /// Answers by question ID, each at most 10,000 characters.
    #[oai(default, validator(max_length = 10000, max_properties = 1000))]
    pub answers: BTreeMap<String, String>,
    /// The medium.
    #[oai(default = "barcode", validator(max_length = 190))]
    pub source_type: String,
}

/// A check-in as the event's list shows it.
#[derive(Object)]
#[oai(rename = "Checkin")]
pub struct CheckinOut {
    /// Internal ID.
    pub id: i64,
    /// Whether it admitted.
    pub successful: bool,
    /// Why it was refused.
    #[oai(nullable)]
    pub error_reason: Option<String>,
    /// More about why.
    #[oai(nullable)]
    pub error_explanation: Option<String>,
    /// The position.
    #[oai(nullable)]
    pub position: Option<i64>,
    /// When it happened.
    pub datetime: DateTime<Utc>,
    /// When it was stored.
    pub created: DateTime<Utc>,
    /// The list.
    pub list: i64,
    /// Done by the system.
    pub auto_checked_in: bool,
    /// The gate.
    #[oai(nullable)]
    pub gate: Option<i64>,
    /// The device's number.
    #[oai(nullable)]
    pub device: Option<i64>,
    /// The device's number (pretix's second name for it).
    #[oai(nullable)]
    pub device_id: Option<i64>,
    /// Entry or exit.
    #[oai(rename = "type")]
    pub direction: DirectionIo,
}

impl From<CheckinRow> for CheckinOut {
    fn from(c: CheckinRow) -> Self {
        Self {
            id: c.id,
            successful: c.successful,
            error_reason: c.error_reason,
            error_explanation: c.error_explanation,
            position: c.position_id,
            datetime: c.datetime,
            created: c.created,
            list: c.list_id,
            auto_checked_in: c.auto_checked_in,
            gate: c.gate_id,
            device: c.device_number,
            device_id: c.device_number,
            direction: Direction::parse(&c.r#type).into(),
        }
    }
}

/// Order of a position search; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum PositionOrdering {
    /// Attendee name.
    #[oai(rename = "attendee_name")]
    AttendeeName,
    /// Reversed.
    #[oai(rename = "-attendee_name")]
    AttendeeNameDesc,
    /// Order code.
    #[oai(rename = "order__code")]
    OrderCode,
    /// Reversed.
    #[oai(rename = "-order__code")]
    OrderCodeDesc,
    /// Order date.
    #[oai(rename = "order__datetime")]
    OrderDatetime,
    /// Reversed.
    #[oai(rename = "-order__datetime")]
    OrderDatetimeDesc,
    /// Number in the order.
    #[oai(rename = "positionid")]
    Positionid,
    /// Reversed.
    #[oai(rename = "-positionid")]
    PositionidDesc,
    /// Latest entry.
    #[oai(rename = "last_checked_in")]
    LastCheckedIn,
    /// Reversed.
    #[oai(rename = "-last_checked_in")]
    LastCheckedInDesc,
    /// Order e-mail.
    #[oai(rename = "order__email")]
    OrderEmail,
    /// Reversed.
    #[oai(rename = "-order__email")]
    OrderEmailDesc,
}

impl PositionOrdering {
    fn order(self) -> (PositionOrder, bool) {
        use PositionOrder as P;
        use PositionOrdering as O;
        match self {
            O::AttendeeName => (P::AttendeeName, false),
            O::AttendeeNameDesc => (P::AttendeeName, true),
            O::OrderCode => (P::OrderCode, false),
            O::OrderCodeDesc => (P::OrderCode, true),
            O::OrderDatetime => (P::OrderDatetime, false),
            O::OrderDatetimeDesc => (P::OrderDatetime, true),
            O::Positionid => (P::Positionid, false),
            O::PositionidDesc => (P::Positionid, true),
            O::LastCheckedIn => (P::LastCheckedIn, false),
            O::LastCheckedInDesc => (P::LastCheckedIn, true),
            O::OrderEmail => (P::OrderEmail, false),
            O::OrderEmailDesc => (P::OrderEmail, true),
        }
    }
}

/// Order of the check-ins; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum CheckinOrdering {
    /// By ID (default).
    #[oai(rename = "id")]
    Id,
    /// Reversed.
    #[oai(rename = "-id")]
    IdDesc,
    /// When it happened.
    #[oai(rename = "datetime")]
    Datetime,
    /// Reversed.
    #[oai(rename = "-datetime")]
    DatetimeDesc,
    /// When it was stored.
    #[oai(rename = "created")]
    Created,
    /// Reversed.
    #[oai(rename = "-created")]
    CreatedDesc,
}

/// The event a device should scan for.
#[derive(Object)]
pub struct EventSelection {
    /// The event's slug.
    pub event: String,
    /// The date of a series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// The check-in list.
    #[oai(nullable)]
    pub checkinlist: Option<i64>,
}

/// The device's event selection.
#[derive(ApiResponse)]
pub enum SelectionAnswer {
    /// Switch to this event.
    #[oai(status = 200)]
    Switch(Json<EventSelection>),
    /// Keep the current selection.
    #[oai(status = 304)]
    Keep,
    /// Nothing to scan for.
    #[oai(status = 404)]
    Nothing,
}

// ---------------------------------------------------------------------------------------
// Helpers

fn write_error(e: lists::WriteError) -> ApiError {
    match e {
        lists::WriteError::Invalid(invalid) => match FieldErrors::check(invalid) {
            Err(e) => e,
            Ok(()) => ApiError::internal(),
        },
        lists::WriteError::Gone => ApiError::forbidden(),
        lists::WriteError::Db(e) => e.into(),
    }
}

fn require_any(ev: &EventAccess, any: &[Permission]) -> Result<(), ApiError> {
    if any.iter().any(|p| ev.permissions.has(*p)) {
        Ok(())
    } else {
        Err(ApiError::forbidden())
    }
}

async fn find_list(state: &AppState, event_id: i64, id: i64) -> Result<CheckinList, ApiError> {
    lists::find(&state.db, event_id, id)
        .await?
        .ok_or_else(ApiError::forbidden)
}

fn scan_device(caller: &Caller) -> Option<crate::domain::grants::DeviceRef> {
    caller.device()
}

const SCAN_ANY: [Permission; 2] = [Permission::CheckinOrders, Permission::ChangeOrders];
const VIEW_ANY: [Permission; 2] = [Permission::ViewOrders, Permission::CheckinOrders];

/// Lists of the organizer by ID for the RPC: each in an event the caller may scan for,
/// at most one per event.
async fn rpc_lists(
    state: &AppState,
    caller: &Caller,
    organizer: &str,
    ids: &[i64],
    needs: &[Permission],
) -> Result<Result<Vec<ScanList>, Vec<i64>>, ApiError> {
    let org = caller.organizer(organizer, None)?;
    let found = lists::of_organizer(
        &state.db,
        state.cache.current().await,
        org.organizer.id,
        ids,
    )
    .await?;
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for &id in ids {
        let usable = found
            .iter()
            .find(|(l, _)| l.row.id == id)
            .and_then(|(l, ev)| {
                let perms = caller.event_permissions(org.organizer.id, ev.id);
                needs.iter().any(|p| perms.has(*p)).then(|| ScanList {
                    list: l.clone(),
                    event: ev.clone(),
                })
            });
        match usable {
            Some(s) => out.push(s),
            None => bad.push(id),
        }
    }
    Ok(if bad.is_empty() { Ok(out) } else { Err(bad) })
}

/// A refused list selection, as a field error of `field` (pretix answers a bare list of
/// messages; scanner apps read a 400 naming `lists` as a list error).
fn list_body(field: &str, message: &str) -> ApiError {
    ApiError::field(field, message)
}

// ---------------------------------------------------------------------------------------
// Operations

/// Check-in operations.
pub struct CheckinApi;

#[OpenApi(tag = "Tag::Checkin")]
impl CheckinApi {
    /// List check-in lists
    ///
    /// By date of the series, name and ID unless `ordering` says otherwise. `subevent_match`
    /// keeps lists of that date or of none; `ends_after` lists whose date ends (or starts)
    /// then or later; `exclude=checkin_count&exclude=position_count` leaves the counts out
    /// (and skips counting). Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_checkinlists(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        subevent: Query<Option<i64>>,
        subevent_match: Query<Option<i64>>,
        ends_after: Query<Option<DateTime<Utc>>>,
        ordering: Query<Option<ListOrdering>>,
        exclude: Query<Vec<String>>,
    ) -> ListResult<Json<Page<ListOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        if exclude.0.len() > 50 {
            return Err(ApiError::field("exclude", "Too many fields.").into());
        }
        let filter = ListFilter {
            subevent: subevent.0,
            subevent_match: subevent_match.0,
            ends_after: ends_after.0,
        };
        let (order, desc) = ordering.0.unwrap_or(ListOrdering::SubeventDate).order();
        let all = lists::list(&state.db, ev.event.id, &filter, order, desc).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(all.len() as u64)?;
        let counting = ["checkin_count", "position_count"]
            .iter()
            .any(|f| !exclude.0.iter().any(|e| e == f));
        let mut results = Vec::new();
        for l in all
            .into_iter()
            .skip(window.offset as usize)
            .take(window.limit as usize)
        {
            let counts = if counting {
                Some(lists::totals(&state.db, l.row.id).await?)
            } else {
                None
            };
            results.push(list_out(l, counts, &exclude.0));
        }
        Ok(Json(window.page(results)))
    }

    /// Show a check-in list
    ///
    /// Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "get"
    )]
    async fn get_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ListOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, l.row.id).await?;
        Ok(Json(list_out(l, Some(counts), &[])))
    }

    /// Create a check-in list
    ///
    /// Products must be of this event, the date of this series, gates of this organizer and
    /// the rules pretix's JSON logic. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists",
        method = "post"
    )]
    async fn create_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<ListCreate>,
    ) -> WriteResult<Created<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let saved = lists::create(&state.db, &ev.event, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(list_out(saved, Some((0, 0)), &[]))))
    }

    /// Replace a check-in list
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "put"
    )]
    async fn put_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ListCreate>,
    ) -> WriteResult<Json<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, existing.row.id).await?;
        let saved = lists::update(&state.db, &ev.event, existing.row.id, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Json(list_out(saved, Some(counts), &[])))
    }

    /// Change a check-in list
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "patch"
    )]
    async fn patch_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ListPatch>,
    ) -> WriteResult<Json<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, existing.row.id).await?;
        let fields = body.0.apply(ListFields::of(&existing));
        let saved = lists::update(&state.db, &ev.event, existing.row.id, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(list_out(saved, Some(counts), &[])))
    }

    /// Delete a check-in list
    ///
    /// Its check-ins are deleted with it. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "delete"
    )]
    async fn delete_checkinlist(
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
        let existing = find_list(&state, ev.event.id, *id).await?;
        lists::delete(&state.db, ev.event.id, existing.row.id).await?;
        Ok(NoContent::NoContent)
    }

    /// Show how many entered
    ///
    /// Positions the list admits, those that entered at least once, those inside now, per
    /// product and variation. Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id/status",
        method = "get"
    )]
    async fn checkinlist_status(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ListStatus>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::counts(&state.db, l.row.id).await?;
        let mut items = item::Entity::find()
            .filter(item::Column::EventId.eq(ev.event.id))
            .order_by_asc(item::Column::Position)
            .order_by_asc(item::Column::Id)
            .all(&state.db)
            .await?;
        if !l.row.all_products {
            items.retain(|i| l.limit_products.contains(&i.id));
        }
        let item_ids: Vec<i64> = items.iter().map(|i| i.id).collect();
        let variations = item_variation::Entity::find()
            .filter(item_variation::Column::ItemId.is_in(item_ids))
            .order_by_asc(item_variation::Column::Position)
            .order_by_asc(item_variation::Column::Id)
            .all(&state.db)
            .await?;
        let name = match l.row.subevent_id {
            Some(s) => crate::db::entities::subevent::Entity::find_by_id(s)
                .one(&state.db)
                .await?
                .map_or_else(|| ev.event.name.clone(), |s| s.name),
            None => ev.event.name.clone(),
        };
        let sum = |f: &dyn Fn(&lists::CountRow) -> bool, g: fn(&lists::CountRow) -> i64| {
            counts.iter().filter(|c| f(c)).map(g).sum::<i64>()
        };
        let items = items
            .into_iter()
            .map(|i| ItemStatus {
                id: i.id,
                name: I18nString::from_stored(&i.name),
                admission: i.admission,
                checkin_count: sum(&|c| c.item_id == i.id, |c| c.checkin_count),
                position_count: sum(&|c| c.item_id == i.id, |c| c.position_count),
                variations: variations
                    .iter()
                    .filter(|v| v.item_id == i.id)
                    .map(|v| VariationStatus {
                        id: v.id,
                        value: I18nString::from_stored(&v.value),
                        checkin_count: sum(&|c| c.variation_id == Some(v.id), |c| c.checkin_count),
                        position_count: sum(&|c| c.variation_id == Some(v.id), |c| {
                            c.position_count
                        }),
                    })
                    .collect(),
            })
            .collect();
        Ok(Json(ListStatus {
            event: StatusEvent {
                name: I18nString::from_stored(&name),
            },
            checkin_count: sum(&|_| true, |c| c.checkin_count),
            position_count: sum(&|_| true, |c| c.position_count),
            inside_count: sum(&|_| true, |c| c.inside_count),
            items,
        }))
    }

    /// Report a refused scan
    ///
    /// Stores an unsuccessful check-in a scanner made offline, with the device's gate, and
    /// answers 201 with what was sent. Without `position`, `raw_barcode` is looked up among
    /// the event's secrets. Needs `can_checkin_orders` or `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id/failed_checkins",
        method = "post"
    )]
    async fn failed_checkins(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<FailedCheckin>,
    ) -> WriteResult<Created<FailedCheckin>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &SCAN_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let f = body.0;
        let position = match f.position {
            Some(p) => {
                let found = redeem::positions_where(
                    &state.db,
                    "p.id = $1 AND o.event_id = $2",
                    vec![p.into(), ev.event.id.into()],
                )
                .await?;
                if found.is_empty() {
                    return Err(ApiError::field(
                        "position",
                        format!("Invalid pk \"{p}\" - object does not exist."),
                    )
                    .into());
                }
                Some(p)
            }
            None => redeem::positions_where(
                &state.db,
                "p.secret = $1 AND o.event_id = $2",
                vec![f.raw_barcode.clone().into(), ev.event.id.into()],
            )
            .await?
            .first()
            .map(|p| p.id),
        };
        let device = scan_device(&auth.0);
        let new = NewCheckin {
            list_id: l.row.id,
            position_id: position,
            successful: false,
            direction: f.direction.map_or(Direction::Entry, Into::into),
            datetime: f.datetime.unwrap_or_else(Utc::now),
            nonce: None,
            forced: true,
            error_reason: Some(f.error_reason.as_str().to_owned()),
            error_explanation: f.error_explanation.clone(),
            raw_barcode: Some(f.raw_barcode.clone()),
            raw_item: f.raw_item,
            raw_variation: f.raw_variation,
            raw_subevent: f.raw_subevent,
            gate_id: device.and_then(|d| d.gate_id),
            device_id: device.map(|d| d.id),
            auto_checked_in: false,
        };
        crate::db::in_transaction(&state.db, async |txn| checkin::insert(txn, &new).await).await?;
        Ok(Created::Created(Json(f)))
    }

    /// List a check-in list's tickets
    ///
    /// Positions the list admits (every status with `ignore_status=true`), with their
    /// check-ins on it. `search` finds secrets and order codes by their start, attendee
    /// names and e-mails anywhere; without `can_view_orders` it needs 3 characters.
    /// Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id/positions",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_positions(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        search: Query<Option<String>>,
        order: Query<Option<String>>,
        item: Query<Option<i64>>,
        variation: Query<Option<i64>>,
        secret: Query<Option<String>>,
        attendee_name: Query<Option<String>>,
        #[oai(name = "order__status")] order_status: Query<Option<String>>,
        subevent: Query<Option<i64>>,
        addon_to: Query<Option<i64>>,
        has_checkin: Query<Option<bool>>,
        ignore_status: Query<Option<bool>>,
        ordering: Query<Option<PositionOrdering>>,
    ) -> ListResult<Json<Page<PositionOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let filter = PositionFilter {
            search: search.0,
            order: order.0,
            items: item.0.into_iter().collect(),
            variations: variation.0.into_iter().collect(),
            secret: secret.0,
            order_status: order_status.0.into_iter().collect(),
            subevents: subevent.0.into_iter().collect(),
            addon_to: addon_to.0.into_iter().collect(),
            has_checkin: has_checkin.0,
            ignore_status: ignore_status.0.unwrap_or(false),
            attendee_name: attendee_name.0,
            search_without_secrets: false,
        };
        let can_view = ev.permissions.has(Permission::ViewOrders);
        search_page(
            req,
            &state,
            &[l.row.id],
            filter,
            can_view,
            ordering.0,
            page.0,
            page_size.0,
        )
        .await
    }

    /// Scan a ticket on one list
    ///
    /// The legacy path scanners upload offline scans to; the secret may contain `/`, `+`
    /// and `=` (also percent-encoded). Canceled tickets are `unpaid` unless
    /// `canceled_supported`. 201 admitted, 400 refused or questions to answer, 404 unknown
    /// ticket or list. Needs `can_checkin_orders` or `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:list/positions/:secret/redeem",
        method = "post"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn redeem_on_list(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        list: Path<i64>,
        secret: Path<String>,
        /// Answer the ticket's text variables (`pdf_data`) too.
        pdf_data: Query<Option<bool>>,
        body: JsonBody<ListRedeem>,
    ) -> DeleteResult<RedeemAnswer> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &SCAN_ANY)?;
        let Some(l) = lists::find(&state.db, ev.event.id, *list).await? else {
            return Err(ApiError::not_found("No CheckinList matches the given query.").into());
        };
        if secret.0.chars().count() > 4000 {
            return Err(ApiError::bad_request("The secret is too long.").into());
        }
        let b = body.0;
        let scan = Scan {
            secret: secret.0,
            direction: b.direction.map_or(Direction::Entry, Into::into),
            force: b.force,
            ignore_unpaid: b.ignore_unpaid,
            questions_supported: b.questions_supported,
            canceled_supported: b.canceled_supported,
            nonce: b.nonce,
            datetime: b.datetime,
            answers: b.answers,
            device: scan_device(&auth.0),
            pdf_data: pdf_data.0 == Some(true) && ev.permissions.has(Permission::ViewOrders),
            webhooks: webhooks::organizer_listens(
                &state.db,
                state.cache.current().await,
                ev.event.organizer_id,
            )
            .await?,
        };
        let target = ScanList {
            list: l,
            event: ev.event,
        };
        let outcome = redeem::redeem(&state.db, &[target], scan).await?;
        Ok(redeem_answer(outcome, is_kiosk(&auth, &state)))
    }

    /// Scan a ticket
    ///
    /// On one check-in list per event (of events where the caller may check in): finds the
    /// ticket, saves the answers given, checks it in pretix's order and stores the scan,
    /// successful or not. Two scans of one ticket at the same moment admit it once.
    /// 201 admitted; 400 refused (`reason`) or questions to answer (`incomplete`); 404 an
    /// unknown ticket. Needs `can_checkin_orders` or `can_change_orders` for the lists' events.
    /// With `pdf_data=true`, callers who may view orders get the ticket's text variables in
    /// the position, for printing a badge.
    #[oai(
        path = "/api/v1/organizers/:organizer/checkinrpc/redeem",
        method = "post"
    )]
    async fn rpc_redeem(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        /// Answer the ticket's text variables (`pdf_data`) too.
        pdf_data: Query<Option<bool>>,
        body: JsonBody<RpcRedeem>,
    ) -> DeleteResult<RedeemAnswer> {
        let b = body.0;
        if b.lists.is_empty() {
            return Err(list_body("lists", "No check-in list passed.").into());
        }
        let targets = match rpc_lists(&state, &auth.0, &organizer, &b.lists, &SCAN_ANY).await? {
            Ok(t) => t,
            Err(bad) => {
                let messages: Vec<String> = bad
                    .iter()
                    .map(|id| format!("Invalid pk \"{id}\" - object does not exist."))
                    .collect();
                return Err(ApiError::with_body(
                    StatusCode::BAD_REQUEST,
                    json!({ "lists": messages }),
                )
                .into());
            }
        };
        let mut events: Vec<i64> = targets.iter().map(|t| t.event.id).collect();
        events.sort_unstable();
        events.dedup();
        if events.len() != targets.len() {
            return Err(list_body(
                "lists",
                "Selecting two check-in lists from the same event is unsupported.",
            )
            .into());
        }
        let scan = Scan {
            secret: b.secret,
            direction: b.direction.map_or(Direction::Entry, Into::into),
            force: b.force,
            ignore_unpaid: b.ignore_unpaid,
            questions_supported: b.questions_supported,
            canceled_supported: true,
            nonce: b.nonce,
            datetime: b.datetime,
            answers: b.answers,
            device: scan_device(&auth.0),
            pdf_data: pdf_data.0 == Some(true)
                && targets.iter().all(|t| {
                    auth.0
                        .event_permissions(t.event.organizer_id, t.event.id)
                        .has(Permission::ViewOrders)
                }),
            webhooks: match targets.first() {
                Some(t) => {
                    webhooks::organizer_listens(
                        &state.db,
                        state.cache.current().await,
                        t.event.organizer_id,
                    )
                    .await?
                }
                None => false,
            },
        };
        let outcome = redeem::redeem(&state.db, &targets, scan).await?;
        Ok(redeem_answer(outcome, is_kiosk(&auth, &state)))
    }

    /// Search tickets
    ///
    /// Positions on these lists (`list=1&list=2`), as `checkinlists/{id}/positions/` finds
    /// them. Lists the caller may not read: 403 naming them. Needs `can_view_orders` or
    /// `can_checkin_orders` for the lists' events.
    #[oai(
        path = "/api/v1/organizers/:organizer/checkinrpc/search",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn rpc_search(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        #[oai(validator(max_items = 100))] list: Query<Vec<i64>>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        search: Query<Option<String>>,
        item: Query<Option<i64>>,
        variation: Query<Option<i64>>,
        secret: Query<Option<String>>,
        subevent: Query<Option<i64>>,
        has_checkin: Query<Option<bool>>,
        ignore_status: Query<Option<bool>>,
        ordering: Query<Option<PositionOrdering>>,
    ) -> ListResult<Json<Page<PositionOut>>> {
        if list.0.is_empty() {
            return Err(list_body("list", "No check-in list passed.").into());
        }
        let targets = match rpc_lists(&state, &auth.0, &organizer, &list.0, &VIEW_ANY).await? {
            Ok(t) => t,
            Err(bad) => {
                let names: Vec<String> = bad.iter().map(i64::to_string).collect();
                return Err(ApiError::forbidden_because(format!(
                    "You requested lists that do not exist or that you do not have access to: {}",
                    names.join(", ")
                ))
                .into());
            }
        };
        let org = auth.0.organizer(&organizer, None)?;
        let kiosk = is_kiosk(&auth, &state);
        let can_view = !kiosk
            && targets.iter().all(|t| {
                auth.0
                    .event_permissions(org.organizer.id, t.event.id)
                    .has(Permission::ViewOrders)
            });
        let filter = PositionFilter {
            search: search.0,
            items: item.0.into_iter().collect(),
            variations: variation.0.into_iter().collect(),
            secret: secret.0,
            subevents: subevent.0.into_iter().collect(),
            has_checkin: has_checkin.0,
            ignore_status: ignore_status.0.unwrap_or(false),
            search_without_secrets: kiosk,
            ..Default::default()
        };
        let ids: Vec<i64> = targets.iter().map(|t| t.list.row.id).collect();
        let mut found = search_page(
            req,
            &state,
            &ids,
            filter,
            can_view,
            ordering.0,
            page.0,
            page_size.0,
        )
        .await?;
        if kiosk {
            for position in &mut found.0.results {
                position.secret = None;
            }
        }
        Ok(found)
    }

    /// List check-ins
    ///
    /// Every scan of the event's lists, successful or not, by ID unless `ordering` says
    /// otherwise. Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkins",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_checkins(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        created_since: Query<Option<DateTime<Utc>>>,
        created_before: Query<Option<DateTime<Utc>>>,
        datetime_since: Query<Option<DateTime<Utc>>>,
        datetime_before: Query<Option<DateTime<Utc>>>,
        successful: Query<Option<bool>>,
        error_reason: Query<Option<ReasonIo>>,
        list: Query<Option<i64>>,
        #[oai(name = "type")] direction: Query<Option<DirectionIo>>,
        gate: Query<Option<i64>>,
        device: Query<Option<i64>>,
        auto_checked_in: Query<Option<bool>>,
        ordering: Query<Option<CheckinOrdering>>,
    ) -> ListResult<Json<Page<CheckinOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let filter = CheckinFilter {
            created_since: created_since.0,
            created_before: created_before.0,
            datetime_since: datetime_since.0,
            datetime_before: datetime_before.0,
            successful: successful.0,
            error_reason: error_reason.0.map(|r| r.as_str().to_owned()),
            list: list.0,
            r#type: direction.0.map(|d| Direction::from(d).as_str().to_owned()),
            gate: gate.0,
            device: device.0,
            auto_checked_in: auto_checked_in.0,
        };
        use CheckinOrdering as O;
        let (order, desc) = match ordering.0.unwrap_or(O::Id) {
            O::Id => (CheckinOrder::Id, false),
            O::IdDesc => (CheckinOrder::Id, true),
            O::Datetime => (CheckinOrder::Datetime, false),
            O::DatetimeDesc => (CheckinOrder::Datetime, true),
            O::Created => (CheckinOrder::Created, false),
            O::CreatedDesc => (CheckinOrder::Created, true),
        };
        let pr = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        let mut win = None;
        let found = search::checkins(&state.db, ev.event.id, &filter, order, desc, |n| {
            let w = pr.window(n)?;
            let r = (w.limit, w.offset);
            win = Some(w);
            Ok(r)
        })
        .await?;
        let win = win.ok_or_else(ApiError::internal)?;
        Ok(Json(win.page(found.into_iter().map(Into::into).collect())))
    }

    /// Choose the event to scan for
    ///
    /// For the calling device: a running event wins, the current one is kept while it runs
    /// (304), today's event is preferred, and between two events the device switches
    /// half-way; a device at a gate sees only events with a list of its gate, and the list
    /// keeps the current list's name when it can. 404 when there is nothing to scan for.
    /// Devices only.
    #[oai(path = "/api/v1/device/eventselection", method = "get")]
    async fn event_selection(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(validator(max_length = 190))] current_event: Query<Option<String>>,
        current_subevent: Query<Option<i64>>,
        current_checkinlist: Query<Option<i64>>,
    ) -> ReadResult<SelectionAnswer> {
        let Some(device) = auth.0.device() else {
            return Err(ApiError::forbidden_because("Only devices can use this endpoint.").into());
        };
        let Some(org) = auth.0.organizers().first().map(|o| o.id) else {
            return Err(ApiError::forbidden().into());
        };
        let scope = auth.0.event_scope(org);
        let chosen = selection::select(
            &state.db,
            org,
            &scope,
            device.gate_id,
            (
                current_event.0.as_deref(),
                current_subevent.0,
                current_checkinlist.0,
            ),
            Utc::now(),
        )
        .await?;
        Ok(match chosen {
            Selection::Switch(event, subevent, checkinlist) => {
                SelectionAnswer::Switch(Json(EventSelection {
                    event,
                    subevent,
                    checkinlist,
                }))
            }
            Selection::Keep => SelectionAnswer::Keep,
            Selection::Nothing => SelectionAnswer::Nothing,
        })
    }
}

/// One page of a position search; a short search without `can_view_orders` finds nothing.
#[allow(clippy::too_many_arguments)]
async fn search_page(
    req: &Request,
    state: &AppState,
    list_ids: &[i64],
    mut filter: PositionFilter,
    can_view: bool,
    ordering: Option<PositionOrdering>,
    page: Option<String>,
    page_size: Option<u64>,
) -> ListResult<Json<Page<PositionOut>>> {
    if let Some(s) = &filter.search
        && s.chars().count() > 200
    {
        return Err(ApiError::field(
            "search",
            "Ensure this field has no more than 200 characters.",
        )
        .into());
    }
    let pr = PageRequest::new(req, &state.public_url, page, page_size);
    let short = filter
        .search
        .as_ref()
        .is_some_and(|s| s.chars().count() < 3);
    if !can_view && (short || filter.search.is_none()) && filter.secret.is_none() {
        // pretix: without the right to view orders, only a search of 3 characters or more
        // (or an exact secret) finds anything.
        return Ok(Json(pr.window(0)?.page(Vec::new())));
    }
    if filter.search.as_deref() == Some("") {
        filter.search = None;
    }
    let (order, desc) = ordering.map_or((PositionOrder::AttendeeName, false), |o| o.order());
    let mut win = None;
    let found = search::positions(&state.db, list_ids, &filter, order, desc, |n| {
        let w = pr.window(n)?;
        let r = (w.limit, w.offset);
        win = Some(w);
        Ok(r)
    })
    .await?;
    let win = win.ok_or_else(ApiError::internal)?;
    Ok(Json(win.page(found.into_iter().map(Into::into).collect())))
}

/// Rewrites the legacy redeem path so that a secret with `/` in it reaches the route as one
/// segment (`%2F`): `.../checkinlists/{list}/positions/<secret, greedy>/redeem[/]`.
pub fn greedy_secret_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api/v1/organizers/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    // organizer, "events", event, "checkinlists", list, "positions", secret..., "redeem" [, ""]
    let end = if parts.last() == Some(&"") {
        parts.len() - 1
    } else {
        parts.len()
    };
    if end < 9
        || parts[1] != "events"
        || parts[3] != "checkinlists"
        || parts[5] != "positions"
        || parts[end - 1] != "redeem"
    {
        return None;
    }
    let secret = parts[6..end - 1].join("%2F");
    let mut out = format!(
        "/api/v1/organizers/{}/events/{}/checkinlists/{}/positions/{secret}/redeem",
        parts[0], parts[2], parts[4]
    );
    if end < parts.len() {
        out.push('/');
    }
    Some(out)
}

/// Middleware applying [`greedy_secret_path`] before anything else reads the path.
pub async fn greedy_secret<E: poem::Endpoint>(
    ep: std::sync::Arc<E>,
    mut req: Request,
) -> poem::Result<poem::Response> {
    if req.method() == poem::http::Method::POST
        && let Some(path) = greedy_secret_path(req.uri().path())
    {
        let query = req
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        if let Ok(uri) = format!("{path}{query}").parse::<poem::http::Uri>() {
            let mut parts = req.uri().clone().into_parts();
            parts.path_and_query = uri.path_and_query().cloned();
            if let Ok(uri) = poem::http::Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    ep.call(req).await.map(poem::IntoResponse::into_response)
}

#[cfg(test)]
mod tests {
    use super::greedy_secret_path;

    #[test]
    fn a_secret_with_slashes_becomes_one_segment() {
        assert_eq!(
            greedy_secret_path(
                "/api/v1/organizers/o/events/e/checkinlists/3/positions/a/b+c=/redeem/"
            )
            .as_deref(),
            Some("/api/v1/organizers/o/events/e/checkinlists/3/positions/a%2Fb+c=/redeem/")
        );
        assert_eq!(
            greedy_secret_path("/api/v1/organizers/o/events/e/checkinlists/3/"),
            None
        );
    }
}
