//! Scanning devices and gates of an organizer: `/api/v1/organizers/{organizer}/devices/`
//! (list, show by `device_id`, create, PUT, PATCH; no DELETE, as pretix) and
//! `/api/v1/organizers/{organizer}/gates/`. Both need `can_change_organizer_settings`.

use std::collections::HashMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::Tag;
use crate::db::entities::{device, event, gate};
use crate::domain::devices::{self, DeviceInput, GateInput, Stored, profiles};
use crate::domain::grants::EventScope;
use crate::domain::permissions::Permission;
use crate::domain::teams;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;
use crate::values::Timestamp;

/// What a scanning app reads from the QR code that provisions it.
#[derive(Object)]
pub struct QrPayload {
    /// Version of the handshake; apps refuse versions they do not know.
    pub handshake_version: i64,
    /// The service's public URL.
    pub url: String,
    /// The initialization token.
    pub token: String,
}

/// A scanning device.
#[derive(Object)]
#[oai(rename = "Device")]
pub struct DeviceOut {
    /// Number of the device within the organizer.
    pub device_id: i64,
    /// Serial number, 16 characters, unique.
    pub unique_serial: String,
    /// The single-use initialization token; `null` once the device is initialized, and for
    /// callers who may not configure the device (see creating one).
    pub initialization_token: Option<String>,
    /// Access to all events of the organizer.
    pub all_events: bool,
    /// Slugs of the events the device has access to, when not `all_events`.
    pub limit_events: Vec<String>,
    /// Whether the device's access has been revoked (for ever).
    pub revoked: bool,
    /// Name.
    pub name: String,
    /// When it was created.
    pub created: Timestamp,
    /// When it was initialized; `null` until then.
    pub initialized: Option<Timestamp>,
    /// Reported by the device.
    pub hardware_brand: Option<String>,
    /// Reported by the device.
    pub hardware_model: Option<String>,
    /// Reported by the device.
    pub os_name: Option<String>,
    /// Reported by the device.
    pub os_version: Option<String>,
    /// Reported by the device.
    pub software_brand: Option<String>,
    /// Reported by the device.
    pub software_version: Option<String>,
    /// Security profile: `full`, `service_checkin`, `service_checkin_online_kiosk`, one of
    /// pretix's names (`pretixscan`, `pretixscan_online_noorders`,
    /// `pretixscan_online_kiosk`) or a plugin's.
    pub security_profile: String,
    /// ID of the gate the device stands at, or `null`.
    pub gate: Option<i64>,
    /// Only in the answer that created the device: the QR code's content, which provisions
    /// a scanning app (`{"handshake_version": 1, "url", "token"}`).
    #[oai(skip_serializing_if_is_none)]
    pub qr_payload: Option<QrPayload>,
}

/// A new device, or all fields of a device (PUT).
#[derive(Object)]
pub struct DeviceCreate {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// Access to all events.
    #[oai(default)]
    pub all_events: bool,
    /// Slugs of the events the device has access to.
    #[oai(default, validator(max_length = 50, max_items = 1000))]
    pub limit_events: Vec<String>,
    /// Security profile; `full` when not given.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub security_profile: Option<String>,
    /// ID of a gate of the organizer, or `null`.
    #[oai(
        nullable,
        validator(minimum(value = "1"), maximum(value = "9223372036854775807"))
    )]
    pub gate: Option<i64>,
}

/// A partial change of a device.
#[derive(Object)]
pub struct DevicePatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// Access to all events.
    pub all_events: Option<bool>,
    /// Slugs of the events the device has access to.
    #[oai(validator(max_length = 50, max_items = 1000))]
    pub limit_events: Option<Vec<String>>,
    /// Security profile.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub security_profile: Option<String>,
    /// ID of a gate of the organizer, or `null` for none.
    #[oai(
        nullable,
        validator(minimum(value = "1"), maximum(value = "9223372036854775807"))
    )]
    pub gate: MaybeUndefined<i64>,
    /// `true` revokes the device for ever (a lost scanner); a revoked device cannot be
    /// restored.
    pub revoked: Option<bool>,
}

/// A gate: where devices stand; check-in lists may be limited to gates.
#[derive(Object)]
#[oai(rename = "Gate")]
pub struct GateOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Identifier, unique within the organizer.
    pub identifier: String,
}

/// A new gate, or all fields of a gate (PUT).
#[derive(Object)]
pub struct GateCreate {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// Identifier, unique within the organizer; generated (8 characters) when not given.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub identifier: Option<String>,
}

/// A partial change of a gate.
#[derive(Object)]
pub struct GatePatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// Identifier, unique within the organizer.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub identifier: Option<String>,
}

fn gate_out(g: gate::Model) -> GateOut {
    GateOut {
        id: g.id,
        name: g.name,
        identifier: g.identifier,
    }
}

fn device_out(d: device::Model, limit_events: Vec<String>, qr: Option<QrPayload>) -> DeviceOut {
    DeviceOut {
        device_id: d.device_id,
        unique_serial: d.unique_serial,
        initialization_token: d.initialization_token,
        all_events: d.all_events,
        limit_events,
        revoked: d.revoked,
        name: d.name,
        created: d.created.into(),
        initialized: d.initialized.map(Into::into),
        hardware_brand: d.hardware_brand,
        hardware_model: d.hardware_model,
        os_name: d.os_name,
        os_version: d.os_version,
        software_brand: d.software_brand,
        software_version: d.software_version,
        security_profile: d.security_profile,
        gate: d.gate_id,
        qr_payload: qr,
    }
}

/// The slugs of these events, by ID.
async fn slugs(
    db: &impl ConnectionTrait,
    ids: impl IntoIterator<Item = i64>,
) -> Result<HashMap<i64, String>, ApiError> {
    let ids: Vec<i64> = ids.into_iter().collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(event::Entity::find()
        .filter(event::Column::Id.is_in(ids))
        .select_only()
        .column(event::Column::Id)
        .column(event::Column::Slug)
        .into_tuple::<(i64, String)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

fn sorted_slugs(ids: &[i64], known: &HashMap<i64, String>) -> Vec<String> {
    let mut out: Vec<String> = ids.iter().filter_map(|i| known.get(i).cloned()).collect();
    out.sort();
    out
}

/// Shows a stored device; with the QR code's content for the answer that created it.
fn show(state: &AppState, s: Stored, qr: bool) -> DeviceOut {
    let payload = if qr {
        s.device
            .initialization_token
            .as_ref()
            .map(|token| QrPayload {
                handshake_version: 1,
                url: state.public_url.to_string(),
                token: token.clone(),
            })
    } else {
        None
    };
    device_out(s.device, s.event_slugs, payload)
}

/// The event IDs of these slugs of the organizer; 400 on `limit_events` naming others.
async fn event_ids(
    state: &AppState,
    organizer_id: i64,
    slugs: &[String],
) -> Result<Vec<i64>, ApiError> {
    teams::resolve_event_slugs(&state.db, organizer_id, slugs)
        .await?
        .map_err(|missing| {
            ApiError::field(
                "limit_events",
                format!("Object with slug={} does not exist.", missing.join(", ")),
            )
        })
}

/// A known security profile name; 400 on `security_profile` otherwise.
fn profile(state: &AppState, name: Option<String>) -> Result<String, ApiError> {
    let name = name.unwrap_or_else(|| profiles::DEFAULT.to_owned());
    if profiles::known_names(state.plugins.device_profiles()).contains(&name) {
        Ok(name)
    } else {
        Err(ApiError::field(
            "security_profile",
            format!("\"{name}\" is not a valid choice."),
        ))
    }
}

/// The input of a POST or PUT body, checked.
async fn input_of(
    state: &AppState,
    organizer_id: i64,
    body: DeviceCreate,
    revoked: bool,
) -> Result<DeviceInput, ApiError> {
    let security_profile = profile(state, body.security_profile)?;
    Ok(DeviceInput {
        name: body.name,
        all_events: body.all_events,
        event_ids: event_ids(state, organizer_id, &body.limit_events).await?,
        security_profile,
        gate_id: body.gate,
        revoked,
    })
}

/// 403 unless the caller may give a device each of these reaches (see
/// [`devices::may_configure`]).
fn within_reach(auth: &Auth, organizer_id: i64, reaches: &[&EventScope]) -> Result<(), ApiError> {
    if reaches
        .iter()
        .all(|reach| devices::may_configure(&auth.0, organizer_id, reach))
    {
        Ok(())
    } else {
        Err(ApiError::forbidden_because(
            "A device views, changes and checks in orders, manages gift cards and reads event \
             settings on its events: you may create or change only devices whose events you \
             hold all of these on (all events: for all events).",
        ))
    }
}

/// Leaves out the initialization token of a device the caller may not configure: whoever
/// holds it initializes the device and acts with it.
fn hide_token_beyond_reach(
    auth: &Auth,
    organizer_id: i64,
    reach: &EventScope,
    out: &mut DeviceOut,
) {
    if !devices::may_configure(&auth.0, organizer_id, reach) {
        out.initialization_token = None;
    }
}

/// Devices and gates.
pub struct DevicesApi;

const NEEDS: Option<Permission> = Some(Permission::ChangeOrganizerSettings);

#[OpenApi(tag = "Tag::Devices")]
impl DevicesApi {
    /// List devices
    ///
    /// Ordered by `device_id`. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/devices", method = "get")]
    async fn list_devices(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<DeviceOut>>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let query = device::Entity::find()
            .filter(device::Column::OrganizerId.eq(org.organizer.id))
            .order_by_asc(device::Column::DeviceId);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        let ids: Vec<i64> = page.results.iter().map(|d| d.id).collect();
        let links = devices::event_ids_of(&state.db, &ids).await?;
        let known = slugs(&state.db, links.values().flatten().copied()).await?;
        let org_id = org.organizer.id;
        Ok(Json(page.map(|d| {
            let ids = links.get(&d.id).cloned().unwrap_or_default();
            let reach = devices::scope(d.all_events, &ids);
            let mut out = device_out(d, sorted_slugs(&ids, &known), None);
            hide_token_beyond_reach(&auth, org_id, &reach, &mut out);
            out
        })))
    }

    /// Show a device
    ///
    /// By its `device_id`. Needs `can_change_organizer_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/devices/:device_id",
        method = "get"
    )]
    async fn get_device(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        device_id: Path<i64>,
    ) -> ReadResult<Json<DeviceOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let d = devices::find_device(&state.db, org.organizer.id, *device_id).await?;
        let stored = devices::stored(&state.db, d).await?;
        let reach = stored.reach();
        let mut out = show(&state, stored, false);
        hide_token_beyond_reach(&auth, org.organizer.id, &reach, &mut out);
        Ok(Json(out))
    }

    /// Create a device
    ///
    /// Gives the device its `device_id`, serial and single-use initialization token; the
    /// answer also holds `qr_payload`, the QR code's content for the scanning app. Needs
    /// `can_change_organizer_settings`, and on every event the device covers (all events:
    /// for all events) what a device acts with: `can_view_orders`, `can_change_orders`,
    /// `can_checkin_orders`, `can_manage_gift_cards`, `can_change_event_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/devices", method = "post")]
    async fn create_device(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<DeviceCreate>,
    ) -> WriteResult<Created<DeviceOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let input = input_of(&state, org.organizer.id, body.0, false).await?;
        within_reach(&auth, org.organizer.id, &[&input.reach()])?;
        let stored = devices::create(&state.db, org.organizer.id, input).await?;
        Ok(Created::Created(Json(show(&state, stored, true))))
    }

    /// Replace a device
    ///
    /// What the device reports and `revoked` stay as they are. Needs what creating the
    /// device needs, for its events before and after.
    #[oai(
        path = "/api/v1/organizers/:organizer/devices/:device_id",
        method = "put"
    )]
    async fn put_device(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        device_id: Path<i64>,
        body: JsonBody<DeviceCreate>,
    ) -> WriteResult<Json<DeviceOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = devices::find_device(&state.db, org.organizer.id, *device_id).await?;
        let revoked = existing.revoked;
        let input = input_of(&state, org.organizer.id, body.0, revoked).await?;
        let before = devices::stored(&state.db, existing.clone()).await?.reach();
        within_reach(&auth, org.organizer.id, &[&before, &input.reach()])?;
        let stored = devices::update(&state.db, existing, input).await?;
        Ok(Json(show(&state, stored, false)))
    }

    /// Change a device
    ///
    /// `revoked: true` revokes it for ever. Needs what creating the device needs, for its
    /// events before and after.
    #[oai(
        path = "/api/v1/organizers/:organizer/devices/:device_id",
        method = "patch"
    )]
    async fn patch_device(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        device_id: Path<i64>,
        body: JsonBody<DevicePatch>,
    ) -> WriteResult<Json<DeviceOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = devices::find_device(&state.db, org.organizer.id, *device_id).await?;
        let patch = body.0;
        let before = devices::stored(&state.db, existing.clone()).await?;
        let security_profile = match patch.security_profile {
            Some(name) => profile(&state, Some(name))?,
            None => existing.security_profile.clone(),
        };
        let event_ids = match &patch.limit_events {
            Some(slugs) => event_ids(&state, org.organizer.id, slugs).await?,
            None => before.event_ids.clone(),
        };
        let input = DeviceInput {
            name: patch.name.unwrap_or_else(|| existing.name.clone()),
            all_events: patch.all_events.unwrap_or(existing.all_events),
            event_ids,
            security_profile,
            gate_id: match patch.gate {
                MaybeUndefined::Undefined => existing.gate_id,
                MaybeUndefined::Null => None,
                MaybeUndefined::Value(g) => Some(g),
            },
            revoked: patch.revoked.unwrap_or(existing.revoked),
        };
        within_reach(&auth, org.organizer.id, &[&before.reach(), &input.reach()])?;
        let stored = devices::update(&state.db, existing, input).await?;
        Ok(Json(show(&state, stored, false)))
    }

    /// List gates
    ///
    /// Ordered by ID. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates", method = "get")]
    async fn list_gates(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<GateOut>>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let query = gate::Entity::find()
            .filter(gate::Column::OrganizerId.eq(org.organizer.id))
            .order_by_asc(gate::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        Ok(Json(page.map(gate_out)))
    }

    /// Show a gate
    ///
    /// Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates/:id", method = "get")]
    async fn get_gate(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<GateOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        Ok(Json(gate_out(
            devices::find_gate(&state.db, org.organizer.id, *id).await?,
        )))
    }

    /// Create a gate
    ///
    /// Without `identifier`, one of 8 characters is generated. An identifier another gate
    /// of the organizer has is 400. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates", method = "post")]
    async fn create_gate(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<GateCreate>,
    ) -> WriteResult<Created<GateOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let input = GateInput {
            name: body.0.name,
            identifier: body.0.identifier,
        };
        let saved = devices::save_gate(&state.db, org.organizer.id, None, input).await?;
        Ok(Created::Created(Json(gate_out(saved))))
    }

    /// Replace a gate
    ///
    /// Without `identifier`, the gate keeps its own. Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates/:id", method = "put")]
    async fn put_gate(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<GateCreate>,
    ) -> WriteResult<Json<GateOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = devices::find_gate(&state.db, org.organizer.id, *id).await?;
        let input = GateInput {
            name: body.0.name,
            identifier: body.0.identifier,
        };
        let saved = devices::save_gate(&state.db, org.organizer.id, Some(existing), input).await?;
        Ok(Json(gate_out(saved)))
    }

    /// Change a gate
    ///
    /// Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates/:id", method = "patch")]
    async fn patch_gate(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
        body: JsonBody<GatePatch>,
    ) -> WriteResult<Json<GateOut>> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = devices::find_gate(&state.db, org.organizer.id, *id).await?;
        let input = GateInput {
            name: body.0.name.unwrap_or_else(|| existing.name.clone()),
            identifier: body.0.identifier,
        };
        let saved = devices::save_gate(&state.db, org.organizer.id, Some(existing), input).await?;
        Ok(Json(gate_out(saved)))
    }

    /// Delete a gate
    ///
    /// Devices standing at it then stand at none, and check-in lists no longer name it.
    /// Needs `can_change_organizer_settings`.
    #[oai(path = "/api/v1/organizers/:organizer/gates/:id", method = "delete")]
    async fn delete_gate(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let org = auth.0.organizer(&organizer, NEEDS)?;
        let existing = devices::find_gate(&state.db, org.organizer.id, *id).await?;
        devices::delete_gate(&state.db, existing).await?;
        Ok(NoContent::NoContent)
    }
}
