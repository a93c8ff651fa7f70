//! The organizer's scanning across lists and events: `checkinrpc/redeem/`,
//! `checkinrpc/search/` and `checkinrpc/annul/`.

use poem::Request;
use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use serde_json::json;

use super::redeem::{RedeemAnswer, RpcRedeem, is_kiosk, redeem_answer};
use super::search::{PositionOrdering, PositionOut, list_body, rpc_lists, search_page};
use super::{SCAN_ANY, VIEW_ANY, scan_device};
use crate::api::Tag;
use crate::domain::checkin::Direction;
use crate::domain::checkin::annul::{self, AnnulError, Annulment};
use crate::domain::checkin::redeem::{self, Scan};
use crate::domain::checkin::search::PositionFilter;
use crate::domain::permissions::Permission;
use crate::domain::webhooks;
use crate::http::error::{DeleteResult, ListResult, WriteResult};
use crate::http::{ApiError, Auth, JsonBody, Page};
use crate::state::AppState;
use crate::values::Timestamp;

/// A check-in to annul.
#[derive(Object)]
pub struct AnnulBody {
    /// The check-in lists it may be on (1 to 100).
    #[oai(validator(min_items = 1, max_items = 100))]
    pub lists: Vec<i64>,
    /// The nonce the scanner sent with the check-in.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub nonce: String,
    /// When the scanner annulled it (now when not sent).
    #[oai(nullable)]
    pub datetime: Option<Timestamp>,
    /// Why, in the scanner's words.
    #[oai(nullable, validator(max_length = 10000))]
    pub error_explanation: Option<String>,
}

/// An annulment done.
#[derive(Object)]
pub struct AnnulDone {
    /// `ok`.
    pub status: String,
}

/// Scanning and searching across several lists.
pub struct RpcApi;

#[OpenApi(tag = "Tag::Checkin")]
impl RpcApi {
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
            datetime: b.datetime.map(Into::into),
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

    /// Annul a check-in
    ///
    /// As pretix: the check-in with this nonce on one of the lists (a device's own only) no
    /// longer counts, if the annulment comes within 15 minutes of it (by the `datetime` sent,
    /// so that an offline scanner can annul later); a later one is refused (400) and noted.
    /// 404 when no check-in has the nonce. Needs `can_checkin_orders` or `can_change_orders`
    /// for the lists' events.
    #[oai(
        path = "/api/v1/organizers/:organizer/checkinrpc/annul",
        method = "post"
    )]
    async fn rpc_annul(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<AnnulBody>,
    ) -> WriteResult<Json<AnnulDone>> {
        let b = body.0;
        if let Err(bad) = rpc_lists(&state, &auth.0, &organizer, &b.lists, &SCAN_ANY).await? {
            let messages: Vec<String> = (bad.iter())
                .map(|id| format!("Invalid pk \"{id}\" - object does not exist."))
                .collect();
            let body = json!({ "lists": messages });
            return Err(ApiError::with_body(StatusCode::BAD_REQUEST, body).into());
        }
        let a = Annulment {
            lists: b.lists,
            nonce: b.nonce,
            datetime: b.datetime.map(Into::into),
            error_explanation: b.error_explanation,
            device: scan_device(&auth.0).map(|d| d.id),
        };
        match annul::annul(&state.db, a).await {
            Ok(()) => Ok(Json(AnnulDone {
                status: "ok".into(),
            })),
            Err(AnnulError::NotFound) => {
                Err(ApiError::not_found("No check-in found based on nonce").into())
            }
            Err(AnnulError::Refused(why, non_field)) => {
                let body = match non_field {
                    true => json!({ "non_field_errors": [why] }),
                    false => json!([why]),
                };
                Err(ApiError::with_body(StatusCode::BAD_REQUEST, body).into())
            }
            Err(AnnulError::Db(e)) => Err(ApiError::from(e).into()),
        }
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
}
