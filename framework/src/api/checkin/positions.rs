//! The tickets a list admits: `checkinlists/{id}/positions/`, and scanning one by its
//! secret (`checkinlists/{list}/positions/{secret}/redeem/`).

use poem::Request;
use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;

use super::redeem::{ListRedeem, RedeemAnswer, is_kiosk, redeem_answer};
use super::search::{PositionOrdering, PositionOut, search_page};
use super::{SCAN_ANY, VIEW_ANY, find_list, require_any, scan_device};
use crate::api::Tag;
use crate::domain::checkin::Direction;
use crate::domain::checkin::lists::{self};
use crate::domain::checkin::redeem::{self, Scan, ScanList};
use crate::domain::checkin::search::PositionFilter;
use crate::domain::permissions::Permission;
use crate::domain::webhooks;
use crate::http::error::{DeleteResult, ListResult};
use crate::http::{ApiError, Auth, JsonBody, Page};
use crate::state::AppState;

/// A list's tickets: find them and scan one.
pub struct PositionsApi;

#[OpenApi(tag = "Tag::Checkin")]
impl PositionsApi {
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
            datetime: b.datetime.map(Into::into),
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
}
