//! The device protocol, without trailing slashes as pretix writes it:
//! `POST /api/v1/device/initialize` (no authentication: the initialization token is in the
//! body), `device/update`, `device/roll`, `device/revoke`, `GET device/info` (with
//! `Authorization: Device <token>`), and `GET /api/v1/version`.
//! `device/eventselection` lives with check-in.

use std::collections::BTreeMap;

use poem::Request;
use poem::http::{StatusCode, header};
use poem::web::Data;
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions, Object, OpenApi};
use serde_json::Value;

use super::Tag;
use crate::domain::devices::{self, ProtocolDevice, Report, profiles};
use crate::domain::grants::{Caller, CallerKind};
use crate::http::auth::authenticate;
use crate::http::error::{ReadResult, WriteResult};
use crate::http::{ApiError, Auth, JsonBody};
use crate::state::AppState;

/// Name of the device security scheme in the OpenAPI document.
pub const DEVICE_SCHEME: &str = "DeviceAuth";

/// The device calling an operation of the device protocol: `Authorization: Device <token>`.
/// Failures are 401 with pretix's texts and `WWW-Authenticate: Device`.
pub struct DeviceAuth {
    /// The device's row.
    pub id: i64,
}

/// A 401 of the device protocol: the message, challenging for a device token.
fn device_unauthorized(error: &ApiError) -> ApiError {
    let message = error
        .body()
        .get("detail")
        .and_then(Value::as_str)
        .unwrap_or("Invalid token.")
        .to_owned();
    ApiError::detail(StatusCode::UNAUTHORIZED, message).header(header::WWW_AUTHENTICATE, "Device")
}

impl<'a> ApiExtractor<'a> for DeviceAuth {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            DEVICE_SCHEME,
            MetaSecurityScheme {
                ty: "apiKey",
                description: Some(
                    "A device API token from `device/initialize`: \
                     `Authorization: Device <token>`.",
                ),
                name: Some("Authorization"),
                key_in: Some("header"),
                scheme: None,
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![DEVICE_SCHEME]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut poem::RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let caller: Caller = authenticate(req).await.map_err(|e| {
            if e.status() == StatusCode::UNAUTHORIZED {
                device_unauthorized(&e)
            } else {
                e
            }
        })?;
        match caller.kind {
            CallerKind::Device { id, .. } => Ok(DeviceAuth { id }),
            _ => Err(device_unauthorized(&ApiError::unauthorized(
                "Authentication credentials were not provided.",
            ))
            .into()),
        }
    }
}

/// A device's gate as the protocol shows it.
#[derive(Object)]
#[oai(rename = "DeviceGate")]
pub struct GateRef {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Identifier.
    pub identifier: String,
}

/// The device as the protocol answers it (the spec's device initialization result, with
/// `security_profile`).
#[derive(Object)]
#[oai(rename = "DeviceInitialization")]
pub struct DeviceBody {
    /// The organizer's slug.
    pub organizer: String,
    /// Number of the device within the organizer.
    pub device_id: i64,
    /// Serial number.
    pub unique_serial: String,
    /// The API token for `Authorization: Device <token>`; only in the answers of
    /// `initialize` and `roll`, which issue a new one.
    #[oai(skip_serializing_if_is_none)]
    pub api_token: Option<String>,
    /// Name.
    pub name: String,
    /// Security profile, by pretix's name where it has one (`full`, `pretixscan`,
    /// `pretixscan_online_kiosk`, ...), which scanner apps act on.
    pub security_profile: String,
    /// The gate the device stands at, or `null`.
    pub gate: Option<GateRef>,
}

fn body_of(state: &AppState, d: ProtocolDevice) -> DeviceBody {
    let extra = state.plugins.device_profiles();
    DeviceBody {
        organizer: d.organizer,
        device_id: d.device.device_id,
        unique_serial: d.device.unique_serial,
        api_token: d.api_token,
        name: d.device.name,
        security_profile: profiles::reported(&d.device.security_profile, &extra).to_owned(),
        gate: d.gate.map(|g| GateRef {
            id: g.id,
            name: g.name,
            identifier: g.identifier,
        }),
    }
}

/// The first use of an initialization token, with what the device reports about itself.
#[derive(Object)]
pub struct InitializeBody {
    /// The initialization token (from the QR code).
    #[oai(validator(min_length = 1, max_length = 190))]
    pub token: String,
    /// Hardware brand.
    #[oai(validator(max_length = 190))]
    pub hardware_brand: String,
    /// Hardware model.
    #[oai(validator(max_length = 190))]
    pub hardware_model: String,
    /// Operating system.
    #[oai(validator(max_length = 190))]
    pub os_name: Option<String>,
    /// Operating system version.
    #[oai(validator(max_length = 190))]
    pub os_version: Option<String>,
    /// Software brand.
    #[oai(validator(max_length = 190))]
    pub software_brand: String,
    /// Software version.
    #[oai(validator(max_length = 190))]
    pub software_version: String,
    /// Anything else the device reports, as an object (16 KiB of JSON at most).
    #[oai(validator(max_properties = 100))]
    pub info: Option<BTreeMap<String, Value>>,
    /// The device's RSA public key in PEM; fixed once set.
    #[oai(validator(max_length = 4096))]
    pub rsa_pubkey: Option<String>,
}

/// What an initialized device reports about itself.
#[derive(Object)]
pub struct UpdateBody {
    /// Hardware brand.
    #[oai(validator(max_length = 190))]
    pub hardware_brand: String,
    /// Hardware model.
    #[oai(validator(max_length = 190))]
    pub hardware_model: String,
    /// Operating system.
    #[oai(validator(max_length = 190))]
    pub os_name: Option<String>,
    /// Operating system version.
    #[oai(validator(max_length = 190))]
    pub os_version: Option<String>,
    /// Software brand.
    #[oai(validator(max_length = 190))]
    pub software_brand: String,
    /// Software version.
    #[oai(validator(max_length = 190))]
    pub software_version: String,
    /// Anything else the device reports, as an object (16 KiB of JSON at most).
    #[oai(validator(max_properties = 100))]
    pub info: Option<BTreeMap<String, Value>>,
    /// The device's RSA public key in PEM; once set it cannot change.
    #[oai(validator(max_length = 4096))]
    pub rsa_pubkey: Option<String>,
}

impl From<UpdateBody> for Report {
    fn from(b: UpdateBody) -> Self {
        Report {
            hardware_brand: b.hardware_brand,
            hardware_model: b.hardware_model,
            software_brand: b.software_brand,
            software_version: b.software_version,
            os_name: b.os_name,
            os_version: b.os_version,
            info: b.info.map(|m| m.into_iter().collect()),
            rsa_pubkey: b.rsa_pubkey,
        }
    }
}

/// The service's version, in pretix's terms for scanner apps.
#[derive(Object)]
pub struct VersionOut {
    /// The pretix release whose API this service matches.
    pub pretix: String,
    /// The same in pretix's numeric form (major·10¹⁰ + minor·10⁷ + patch·10⁴ + stage·100 +
    /// stage number); scanner apps use `checkinrpc` from 40120001001 on.
    pub pretix_numeric: i64,
    /// This service's own version.
    pub tessera: String,
}

fn version() -> VersionOut {
    VersionOut {
        pretix: devices::PRETIX_COMPATIBILITY.to_owned(),
        pretix_numeric: devices::pretix_numeric(devices::PRETIX_COMPATIBILITY).unwrap_or(0),
        tessera: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The server part of `device/info`.
#[derive(Object)]
pub struct ServerInfo {
    /// The server's version.
    pub version: VersionOut,
}

/// `device/info`: the device and the server.
#[derive(Object)]
pub struct DeviceInfo {
    /// The device.
    pub device: DeviceBody,
    /// The server.
    pub server: ServerInfo,
}

/// The device protocol.
pub struct DeviceProtocolApi;

#[OpenApi(tag = "Tag::DeviceProtocol")]
impl DeviceProtocolApi {
    /// Initialize a device
    ///
    /// Uses the single-use initialization token of a device created by its organizer and
    /// answers the device's API token. An unknown, used or revoked token is 400 on `token`;
    /// of two devices initializing with one token at the same moment, one succeeds.
    #[oai(path = "/api/v1/device/initialize", method = "post")]
    async fn initialize(
        &self,
        state: Data<&AppState>,
        body: JsonBody<InitializeBody>,
    ) -> WriteResult<Json<DeviceBody>> {
        let b = body.0;
        let report = Report {
            hardware_brand: b.hardware_brand,
            hardware_model: b.hardware_model,
            software_brand: b.software_brand,
            software_version: b.software_version,
            os_name: b.os_name,
            os_version: b.os_version,
            info: b.info.map(|m| m.into_iter().collect()),
            rsa_pubkey: b.rsa_pubkey,
        };
        let device = devices::initialize(&state.db, &b.token, report).await?;
        Ok(Json(body_of(&state, device)))
    }

    /// Update a device's information
    ///
    /// Stores what the device reports about itself; an `rsa_pubkey` once set cannot change
    /// (400).
    #[oai(path = "/api/v1/device/update", method = "post")]
    async fn update(
        &self,
        state: Data<&AppState>,
        device: DeviceAuth,
        body: JsonBody<UpdateBody>,
    ) -> WriteResult<Json<DeviceBody>> {
        let updated = devices::update_report(&state.db, device.id, body.0.into()).await?;
        Ok(Json(body_of(&state, updated)))
    }

    /// Roll a device's API token
    ///
    /// Answers a new API token; the old one stops working at once.
    #[oai(path = "/api/v1/device/roll", method = "post")]
    async fn roll(
        &self,
        state: Data<&AppState>,
        device: DeviceAuth,
    ) -> WriteResult<Json<DeviceBody>> {
        let rolled = devices::roll(&state.db, device.id).await?;
        Ok(Json(body_of(&state, rolled)))
    }

    /// Revoke a device's access
    ///
    /// For ever: every later request of the device is 401 "Device access has been
    /// revoked.".
    #[oai(path = "/api/v1/device/revoke", method = "post")]
    async fn revoke(
        &self,
        state: Data<&AppState>,
        device: DeviceAuth,
    ) -> WriteResult<Json<DeviceBody>> {
        let revoked = devices::revoke(&state.db, device.id).await?;
        Ok(Json(body_of(&state, revoked)))
    }

    /// Show the device and the server
    #[oai(path = "/api/v1/device/info", method = "get")]
    async fn info(
        &self,
        state: Data<&AppState>,
        device: DeviceAuth,
    ) -> ReadResult<Json<DeviceInfo>> {
        let found = devices::info(&state.db, device.id).await?;
        Ok(Json(DeviceInfo {
            device: body_of(&state, found),
            server: ServerInfo { version: version() },
        }))
    }

    /// Show the server's version
    ///
    /// pretix's version this service matches, also numeric (scanner apps choose their
    /// endpoints by it), and the service's own. Any authenticated caller.
    #[oai(path = "/api/v1/version", method = "get")]
    async fn version(&self, _auth: Auth) -> ReadResult<Json<VersionOut>> {
        Ok(Json(version()))
    }
}
