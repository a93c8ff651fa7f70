//! The event a check-in device should switch to: `/api/v1/device/eventselection`.

use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::api::Tag;
use crate::domain::checkin::selection::{self, Selection};
use crate::http::error::ReadResult;
use crate::http::{ApiError, Auth};
use crate::state::AppState;

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

/// A device's event selection.
pub struct SelectionApi;

#[OpenApi(tag = "Tag::Checkin")]
impl SelectionApi {
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
            crate::values::now(),
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
