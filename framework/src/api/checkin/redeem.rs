//! What scanning a ticket takes and answers, for a list's `redeem/` and the organizer's
//! `checkinrpc/redeem/`.

use std::collections::BTreeMap;

use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object};

use super::search::PositionOut;
use super::{DirectionIo, yes};
use crate::domain::checkin::redeem::{Outcome, Status};
use crate::domain::devices::profiles;
use crate::http::{Auth, I18nString};
use crate::state::AppState;
use crate::values::Timestamp;

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
pub(super) fn is_kiosk(auth: &Auth, state: &AppState) -> bool {
    auth.0
        .device_profile()
        .is_some_and(|name| profiles::kiosk_search(name, || state.plugins.device_profiles()))
}

/// The answer of a scan; a kiosk is not shown the ticket's secret (a scan of a revoked one
/// would tell the ticket's new secret).
pub(super) fn redeem_answer(o: Outcome, kiosk: bool) -> RedeemAnswer {
    let unknown = o.unknown();
    let status = o.status;
    let texts = o.position.as_ref().and_then(|p| p.row.checkin_text.clone());
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
        checkin_texts: Some(texts.into_iter().filter(|t| !t.is_empty()).collect()),
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
    pub datetime: Option<Timestamp>,
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
    pub datetime: Option<Timestamp>,
    /// Answers by question ID, each at most 10,000 characters.
    #[oai(default, validator(max_length = 10000, max_properties = 1000))]
    pub answers: BTreeMap<String, String>,
    /// The medium.
    #[oai(default = "barcode", validator(max_length = 190))]
    pub source_type: String,
}
