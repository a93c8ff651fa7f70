//! Scanning devices and gates of an organizer, and the device protocol's rules:
//! provisioning with a single-use initialization token, API tokens (stored as SHA-256
//! hashes, compared in constant time), rolling and revoking them, and the version devices
//! read to choose their endpoints.

pub mod profiles;

use std::collections::HashMap;

use base64::Engine;
use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set, Statement,
};
use serde_json::Value;

use crate::db::entities::{device, device_event, gate};
use crate::domain::grants::{Caller, EventScope, OrganizerRef};
use crate::domain::permissions::{Permission, PermissionSet};
use crate::domain::refusal::Refusal;
use crate::domain::tokens;
use crate::values::FieldErrors;

/// Characters of initialization tokens.
const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Characters of device serials.
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Length of initialization tokens and serials.
pub const SHORT_LEN: usize = 16;
/// Length of generated gate identifiers.
pub const GATE_IDENTIFIER_LEN: usize = 8;
/// Longest `rsa_pubkey` accepted (a 8192-bit key's PEM is about 1,500 characters).
pub const MAX_PUBKEY_LEN: usize = 4096;
/// Most bytes of the `info` object a device reports, as JSON.
pub const MAX_INFO_BYTES: usize = 16 * 1024;

/// What a device acts with on its events: view and change orders, check in, gift cards,
/// and reading events and their settings (with safe methods only; see
/// `access::resolve`). A caller gives a device only events on which it holds all of them
/// ([`may_configure`]).
pub fn acts_with() -> PermissionSet {
    PermissionSet::from_iter([
        Permission::ViewOrders,
        Permission::ChangeOrders,
        Permission::CheckinOrders,
        Permission::ManageGiftCards,
        Permission::ChangeEventSettings,
    ])
}

/// The events a device with these fields covers.
pub fn scope(all_events: bool, event_ids: &[i64]) -> EventScope {
    if all_events {
        EventScope::All
    } else {
        EventScope::Only(event_ids.to_vec())
    }
}

/// Whether `caller` may create a device reaching `reach`, or change one (then both the
/// device's reach before and after must pass): a device acts with [`acts_with`] on every
/// event it covers, and a caller never grants more than it holds.
pub fn may_configure(caller: &Caller, organizer_id: i64, reach: &EventScope) -> bool {
    caller.may_grant(organizer_id, reach, acts_with())
}

/// The pretix release whose API this service's `/api/v1/` matches, for devices that choose
/// their endpoints by it (`checkinrpc` from 4.12.0.dev1 on).
pub const PRETIX_COMPATIBILITY: &str = "2025.7.0";

/// pretix's numeric version: major·10¹⁰ + minor·10⁷ + patch·10⁴ + stage·100 + stage number,
/// with stage dev 10, a 20, b 30, rc 40, release 50, post 60 (`2025.7.0` is
/// 20250070005000, `4.12.0.dev1` is 40120001001). `None` for a text not of that form.
pub fn pretix_numeric(version: &str) -> Option<i64> {
    let mut parts = version.split('.');
    let major: i64 = parts.next()?.parse().ok()?;
    let minor: i64 = parts.next()?.parse().ok()?;
    let patch_part = parts.next().unwrap_or("0");
    let digits_end = patch_part
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(patch_part.len());
    let patch: i64 = patch_part[..digits_end].parse().ok()?;
    let suffix = match &patch_part[digits_end..] {
        "" => parts.next().unwrap_or(""),
        rest => rest,
    };
    let (stage, number) = if suffix.is_empty() {
        (50, 0)
    } else {
        let split = suffix
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(suffix.len());
        let number: i64 = match &suffix[split..] {
            "" => 0,
            n => n.parse().ok()?,
        };
        let stage = match &suffix[..split] {
            "dev" => 10,
            "a" => 20,
            "b" => 30,
            "rc" => 40,
            "post" => 60,
            _ => return None,
        };
        (stage, number)
    };
    if parts.next().is_some() || minor >= 1000 || patch >= 1000 || number >= 100 {
        return None;
    }
    Some(major * 10_000_000_000 + minor * 10_000_000 + patch * 10_000 + stage * 100 + number)
}

/// A new initialization token: 16 lower-case letters and digits.
pub fn new_initialization_token() -> String {
    tokens::random_from(LOWER_ALNUM, SHORT_LEN)
}

/// A new gate identifier: 8 characters people cannot mistake for each other.
pub fn new_gate_identifier() -> String {
    tokens::random_from(tokens::UNAMBIGUOUS, GATE_IDENTIFIER_LEN)
}

/// The QR code payload that provisions a device: `{"handshake_version": 1, "url", "token"}`.
pub fn qr_payload(public_url: &str, initialization_token: &str) -> Value {
    serde_json::json!({
        "handshake_version": 1,
        "url": public_url,
        "token": initialization_token,
    })
}

// ---------------------------------------------------------------------------------------
// Authentication

/// A device an API token stands for.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// The device's row.
    pub id: i64,
    /// Its number within the organizer.
    pub device_id: i64,
    /// The organizer.
    pub organizer: OrganizerRef,
    /// The gate it stands at.
    pub gate_id: Option<i64>,
    /// Access to every event of the organizer.
    pub all_events: bool,
    /// Otherwise these events.
    pub event_ids: Vec<i64>,
    /// Its security profile as stored.
    pub security_profile: String,
}

/// 401 "Device access has been revoked.".
pub fn revoked_error() -> Refusal {
    Refusal::unauthorized("Device access has been revoked.")
}

/// 401 "Device has not been initialized.".
pub fn not_initialized_error() -> Refusal {
    Refusal::unauthorized("Device has not been initialized.")
}

/// The device `token` authenticates: `None` for an unknown token; 401 with pretix's text
/// for a revoked device, and for the initialization token of a device not yet initialized
/// (which is not an API token: the device must initialize first).
pub async fn authenticate(
    db: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<Authenticated>, Refusal> {
    const COLUMNS: &str = "d.id, d.device_id, d.organizer_id, d.gate_id, d.all_events, \
        d.security_profile, d.revoked, d.initialized, o.slug AS organizer_slug, \
        o.name AS organizer_name";
    let by_api_token = format!(
        "SELECT {COLUMNS}, d.api_token_hash AS token_hash FROM devices d \
         JOIN organizers o ON o.id = d.organizer_id WHERE d.api_token_hash = $1"
    );
    let row = match tokens::find_row(db, &by_api_token, token).await? {
        Some(row) => row,
        None if token.len() == SHORT_LEN => {
            let by_init_token = format!(
                "SELECT {COLUMNS}, d.initialization_token_hash AS token_hash FROM devices d \
                 JOIN organizers o ON o.id = d.organizer_id \
                 WHERE d.initialization_token_hash = $1 AND d.initialized IS NULL"
            );
            match tokens::find_row(db, &by_init_token, token).await? {
                Some(row) => {
                    let revoked: bool = row.try_get("", "revoked")?;
                    return Err(if revoked {
                        revoked_error()
                    } else {
                        not_initialized_error()
                    });
                }
                None => return Ok(None),
            }
        }
        None => return Ok(None),
    };
    if row.try_get::<bool>("", "revoked")? {
        return Err(revoked_error());
    }
    if row
        .try_get::<Option<chrono::DateTime<Utc>>>("", "initialized")?
        .is_none()
    {
        return Err(not_initialized_error());
    }
    let id: i64 = row.try_get("", "id")?;
    let all_events: bool = row.try_get("", "all_events")?;
    let event_ids = if all_events {
        Vec::new()
    } else {
        event_ids(db, id).await?
    };
    Ok(Some(Authenticated {
        id,
        device_id: row.try_get("", "device_id")?,
        organizer: OrganizerRef {
            id: row.try_get("", "organizer_id")?,
            slug: row.try_get("", "organizer_slug")?,
            name: row.try_get("", "organizer_name")?,
        },
        gate_id: row.try_get("", "gate_id")?,
        all_events,
        event_ids,
        security_profile: row.try_get("", "security_profile")?,
    }))
}

/// The events a device is limited to.
async fn event_ids(db: &impl ConnectionTrait, device: i64) -> Result<Vec<i64>, sea_orm::DbErr> {
    Ok(device_event::Entity::find()
        .filter(device_event::Column::DeviceId.eq(device))
        .order_by_asc(device_event::Column::EventId)
        .all(db)
        .await?
        .into_iter()
        .map(|l| l.event_id)
        .collect())
}

// ---------------------------------------------------------------------------------------
// Gates

/// A gate's fields as written.
#[derive(Debug, Clone)]
pub struct GateInput {
    /// Name.
    pub name: String,
    /// Identifier; generated when `None`.
    pub identifier: Option<String>,
}

/// The organizer's gate with this ID; 403 when there is none.
pub async fn find_gate(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    id: i64,
) -> Result<gate::Model, Refusal> {
    gate::Entity::find_by_id(id)
        .filter(gate::Column::OrganizerId.eq(organizer_id))
        .one(db)
        .await?
        .ok_or_else(Refusal::forbidden)
}

fn identifier_taken() -> Refusal {
    Refusal::field(
        "identifier",
        "This identifier is already used for a different gate.",
    )
}

/// Inserts a gate or, with `existing`, changes it; an identifier another gate of the
/// organizer has is 400 (checked, and held by a unique index under concurrency).
pub async fn save_gate(
    db: &DatabaseConnection,
    organizer_id: i64,
    existing: Option<gate::Model>,
    input: GateInput,
) -> Result<gate::Model, Refusal> {
    let txn = crate::db::begin_write(db).await?;
    let identifier = match input.identifier {
        Some(given) => given,
        None => match &existing {
            Some(g) => g.identifier.clone(),
            None => loop {
                let candidate = new_gate_identifier();
                if !identifier_used(&txn, organizer_id, &candidate, None).await? {
                    break candidate;
                }
            },
        },
    };
    if identifier_used(
        &txn,
        organizer_id,
        &identifier,
        existing.as_ref().map(|g| g.id),
    )
    .await?
    {
        return Err(identifier_taken());
    }
    let saved = match existing {
        Some(g) => {
            let mut row: gate::ActiveModel = g.into();
            row.name = Set(input.name);
            row.identifier = Set(identifier);
            row.update(&txn).await
        }
        None => {
            gate::ActiveModel {
                organizer_id: Set(organizer_id),
                name: Set(input.name),
                identifier: Set(identifier),
                ..Default::default()
            }
            .insert(&txn)
            .await
        }
    }
    .map_err(|e| match e.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => identifier_taken(),
        _ => e.into(),
    })?;
    crate::db::commit(txn).await?;
    Ok(saved)
}

async fn identifier_used(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    identifier: &str,
    except: Option<i64>,
) -> Result<bool, sea_orm::DbErr> {
    let mut q = gate::Entity::find()
        .filter(gate::Column::OrganizerId.eq(organizer_id))
        .filter(gate::Column::Identifier.eq(identifier));
    if let Some(id) = except {
        q = q.filter(gate::Column::Id.ne(id));
    }
    Ok(q.one(db).await?.is_some())
}

/// Deletes a gate; devices standing at it stand at none (and check-in lists lose it)
/// through the foreign keys.
pub async fn delete_gate(db: &DatabaseConnection, gate: gate::Model) -> Result<(), Refusal> {
    crate::db::in_transaction(db, async |txn| {
        gate::Entity::delete_by_id(gate.id).exec(txn).await?;
        Ok::<_, Refusal>(())
    })
    .await
}

/// The gates with these IDs, by ID.
pub async fn gates_by_id(
    db: &impl ConnectionTrait,
    ids: impl IntoIterator<Item = i64>,
) -> Result<HashMap<i64, gate::Model>, sea_orm::DbErr> {
    let ids: Vec<i64> = ids.into_iter().collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(gate::Entity::find()
        .filter(gate::Column::Id.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|g| (g.id, g))
        .collect())
}

// ---------------------------------------------------------------------------------------
// Devices, as the organizer manages them

/// A device's fields as an organizer writes them (all of them: PATCH fills in the rest
/// from the stored device).
#[derive(Debug, Clone)]
pub struct DeviceInput {
    /// Name.
    pub name: String,
    /// Access to all events.
    pub all_events: bool,
    /// Otherwise these event IDs.
    pub event_ids: Vec<i64>,
    /// Security profile (a known name or alias).
    pub security_profile: String,
    /// The gate it stands at (a gate of the organizer).
    pub gate_id: Option<i64>,
    /// Revoke the device (for ever).
    pub revoked: bool,
}

impl DeviceInput {
    /// The events the device will cover.
    pub fn reach(&self) -> EventScope {
        scope(self.all_events, &self.event_ids)
    }
}

/// The organizer's device with this number; 403 when there is none.
pub async fn find_device(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    device_id: i64,
) -> Result<device::Model, Refusal> {
    device::Entity::find()
        .filter(device::Column::OrganizerId.eq(organizer_id))
        .filter(device::Column::DeviceId.eq(device_id))
        .one(db)
        .await?
        .ok_or_else(Refusal::forbidden)
}

/// The event IDs of each of the given devices (rows), in one query.
pub async fn event_ids_of(
    db: &impl ConnectionTrait,
    devices: &[i64],
) -> Result<HashMap<i64, Vec<i64>>, sea_orm::DbErr> {
    let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
    if devices.is_empty() {
        return Ok(out);
    }
    for link in device_event::Entity::find()
        .filter(device_event::Column::DeviceId.is_in(devices.iter().copied()))
        .all(db)
        .await?
    {
        out.entry(link.device_id).or_default().push(link.event_id);
    }
    Ok(out)
}

/// Checks what the input refers to: the gate must be the organizer's, a revoked device
/// stays revoked.
async fn check_input(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    existing: Option<&device::Model>,
    input: &DeviceInput,
) -> Result<(), Refusal> {
    let mut errors = FieldErrors::new();
    if let Some(g) = input.gate_id
        && gate::Entity::find_by_id(g)
            .filter(gate::Column::OrganizerId.eq(organizer_id))
            .one(db)
            .await?
            .is_none()
    {
        errors.push(
            "gate",
            format!("Invalid pk \"{g}\" - object does not exist."),
        );
    }
    if existing.is_some_and(|d| d.revoked) && !input.revoked {
        errors.push("revoked", "A revoked device cannot be restored.");
    }
    Ok(errors.into_result()?)
}

/// Locks the organizer's row on PostgreSQL (SQLite's write transaction is exclusive), so
/// that devices get their numbers one after another.
async fn lock_organizer(
    db: &impl ConnectionTrait,
    organizer_id: i64,
) -> Result<(), sea_orm::DbErr> {
    crate::db::lock_row(db, "organizers", organizer_id).await
}

async fn set_events(
    db: &impl ConnectionTrait,
    device: i64,
    events: &[i64],
) -> Result<(), sea_orm::DbErr> {
    device_event::Entity::delete_many()
        .filter(device_event::Column::DeviceId.eq(device))
        .exec(db)
        .await?;
    let mut seen = std::collections::BTreeSet::new();
    let rows: Vec<device_event::ActiveModel> = events
        .iter()
        .filter(|e| seen.insert(**e))
        .map(|e| device_event::ActiveModel {
            device_id: Set(device),
            event_id: Set(*e),
        })
        .collect();
    for chunk in rows.chunks(500) {
        device_event::Entity::insert_many(chunk.to_vec())
            .exec(db)
            .await?;
    }
    Ok(())
}

/// A device as stored, with its events and gate.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The row.
    pub device: device::Model,
    /// Its events (IDs), when not `all_events`.
    pub event_ids: Vec<i64>,
    /// Their slugs, sorted.
    pub event_slugs: Vec<String>,
    /// Its gate.
    pub gate: Option<gate::Model>,
}

impl Stored {
    /// The events the device covers.
    pub fn reach(&self) -> EventScope {
        scope(self.device.all_events, &self.event_ids)
    }
}

/// Creates a device numbered after the organizer's others, with a new initialization
/// token and serial.
pub async fn create(
    db: &DatabaseConnection,
    organizer_id: i64,
    input: DeviceInput,
) -> Result<Stored, Refusal> {
    let txn = crate::db::begin_write(db).await?;
    check_input(&txn, organizer_id, None, &input).await?;
    lock_organizer(&txn, organizer_id).await?;
    let next: i64 = txn
        .query_one_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "SELECT COALESCE(MAX(device_id), 0) + 1 AS next FROM devices WHERE organizer_id = $1",
            [organizer_id.into()],
        ))
        .await?
        .map(|r| r.try_get::<i64>("", "next"))
        .transpose()?
        .unwrap_or(1);
    let token = new_initialization_token();
    let saved = device::ActiveModel {
        organizer_id: Set(organizer_id),
        device_id: Set(next),
        unique_serial: Set(tokens::random_from(UPPER_ALNUM, SHORT_LEN)),
        name: Set(input.name),
        all_events: Set(input.all_events),
        security_profile: Set(input.security_profile),
        gate_id: Set(input.gate_id),
        initialization_token: Set(Some(token.clone())),
        initialization_token_hash: Set(tokens::hash(&token)),
        api_token_hash: Set(None),
        initialized: Set(None),
        revoked: Set(input.revoked),
        created: Set(crate::values::now()),
        hardware_brand: Set(None),
        hardware_model: Set(None),
        os_name: Set(None),
        os_version: Set(None),
        software_brand: Set(None),
        software_version: Set(None),
        info: Set(None),
        rsa_pubkey: Set(None),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    set_events(&txn, saved.id, &input.event_ids).await?;
    let shown = stored(&txn, saved).await?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

/// Changes a device as its organizer may (not what the device reports).
pub async fn update(
    db: &DatabaseConnection,
    existing: device::Model,
    input: DeviceInput,
) -> Result<Stored, Refusal> {
    let txn = crate::db::begin_write(db).await?;
    // Read again under the row's lock: a revocation meanwhile must stay.
    crate::db::lock_row(&txn, "devices", existing.id).await?;
    let existing = device::Entity::find_by_id(existing.id)
        .one(&txn)
        .await?
        .ok_or_else(Refusal::forbidden)?;
    check_input(&txn, existing.organizer_id, Some(&existing), &input).await?;
    let id = existing.id;
    let mut row: device::ActiveModel = existing.into();
    row.name = Set(input.name);
    row.all_events = Set(input.all_events);
    row.security_profile = Set(input.security_profile);
    row.gate_id = Set(input.gate_id);
    row.revoked = Set(input.revoked);
    let saved = row.update(&txn).await?;
    set_events(&txn, id, &input.event_ids).await?;
    let shown = stored(&txn, saved).await?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

/// The device's events and gate.
pub async fn stored(db: &impl ConnectionTrait, device: device::Model) -> Result<Stored, Refusal> {
    use crate::db::entities::event;
    use sea_orm::QuerySelect;
    let event_ids = event_ids(db, device.id).await?;
    let mut event_slugs: Vec<String> = if event_ids.is_empty() {
        Vec::new()
    } else {
        event::Entity::find()
            .filter(event::Column::Id.is_in(event_ids.iter().copied()))
            .select_only()
            .column(event::Column::Slug)
            .into_tuple::<String>()
            .all(db)
            .await?
    };
    event_slugs.sort();
    let gate = match device.gate_id {
        Some(g) => gate::Entity::find_by_id(g).one(db).await?,
        None => None,
    };
    Ok(Stored {
        device,
        event_ids,
        event_slugs,
        gate,
    })
}

// ---------------------------------------------------------------------------------------
// The device protocol

/// What a device reports about itself (initialize and update).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Hardware brand.
    pub hardware_brand: String,
    /// Hardware model.
    pub hardware_model: String,
    /// Software brand.
    pub software_brand: String,
    /// Software version.
    pub software_version: String,
    /// Operating system.
    pub os_name: Option<String>,
    /// Operating system version.
    pub os_version: Option<String>,
    /// Free-form object.
    pub info: Option<serde_json::Map<String, Value>>,
    /// PEM public key.
    pub rsa_pubkey: Option<String>,
}

/// The DER of `rsaEncryption`'s object identifier (1.2.840.113549.1.1.1).
const RSA_OID: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
];

/// Whether `pem` is an RSA public key in PEM: `PUBLIC KEY` (SubjectPublicKeyInfo naming
/// rsaEncryption) or `RSA PUBLIC KEY` (PKCS#1), base64 of a DER sequence.
pub fn is_rsa_public_key(pem: &str) -> bool {
    let text = pem.trim();
    let (body, spki) = if let Some(inner) = text
        .strip_prefix("-----BEGIN PUBLIC KEY-----")
        .and_then(|t| t.strip_suffix("-----END PUBLIC KEY-----"))
    {
        (inner, true)
    } else if let Some(inner) = text
        .strip_prefix("-----BEGIN RSA PUBLIC KEY-----")
        .and_then(|t| t.strip_suffix("-----END RSA PUBLIC KEY-----"))
    {
        (inner, false)
    } else {
        return false;
    };
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let Ok(der) = base64::engine::general_purpose::STANDARD.decode(compact) else {
        return false;
    };
    // A DER SEQUENCE of at least a modulus and an exponent.
    der.len() >= 16 && der[0] == 0x30 && (!spki || der.windows(RSA_OID.len()).any(|w| w == RSA_OID))
}

/// Checks a report's optional parts: `info` within its size, `rsa_pubkey` a public key.
fn check_report(report: &Report) -> Result<(), Refusal> {
    let mut errors = FieldErrors::new();
    if let Some(info) = &report.info
        && serde_json::to_vec(info).map_or(usize::MAX, |v| v.len()) > MAX_INFO_BYTES
    {
        errors.push(
            "info",
            format!("Ensure this object has no more than {MAX_INFO_BYTES} bytes as JSON."),
        );
    }
    if let Some(key) = &report.rsa_pubkey
        && (key.len() > MAX_PUBKEY_LEN || !is_rsa_public_key(key))
    {
        errors.push("rsa_pubkey", "Not a valid public key.");
    }
    Ok(errors.into_result()?)
}

/// A device as the protocol answers it, built before the write commits.
#[derive(Debug, Clone)]
pub struct ProtocolDevice {
    /// The organizer's slug.
    pub organizer: String,
    /// The device.
    pub device: device::Model,
    /// Its gate.
    pub gate: Option<gate::Model>,
    /// A new API token, shown only now (initialize and roll).
    pub api_token: Option<String>,
}

async fn organizer_slug(db: &impl ConnectionTrait, id: i64) -> Result<String, Refusal> {
    use crate::db::entities::organizer;
    Ok(organizer::Entity::find_by_id(id)
        .one(db)
        .await?
        .map(|o| o.slug)
        .unwrap_or_default())
}

async fn protocol_device(
    db: &impl ConnectionTrait,
    id: i64,
    api_token: Option<String>,
) -> Result<ProtocolDevice, Refusal> {
    let device = device::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or_else(|| Refusal::unauthorized("Invalid token."))?;
    let gate = match device.gate_id {
        Some(g) => gate::Entity::find_by_id(g).one(db).await?,
        None => None,
    };
    Ok(ProtocolDevice {
        organizer: organizer_slug(db, device.organizer_id).await?,
        device,
        gate,
        api_token,
    })
}

fn token_error(message: &str) -> Refusal {
    Refusal::field("token", message)
}

/// Why an initialization token cannot be used, for a device found by it.
fn unusable(d: &device::Model) -> Option<Refusal> {
    if d.revoked {
        Some(token_error("This initialization token has been revoked."))
    } else if d.initialized.is_some() {
        Some(token_error(
            "This initialization token has already been used.",
        ))
    } else {
        None
    }
}

/// Initializes the device of an initialization token: once only, even when two devices
/// try at the same moment (a conditional update wins for one of them).
pub async fn initialize(
    db: &DatabaseConnection,
    token: &str,
    report: Report,
) -> Result<ProtocolDevice, Refusal> {
    check_report(&report)?;
    let hash = tokens::hash(token);
    let found = device::Entity::find()
        .filter(device::Column::InitializationTokenHash.eq(hash.as_str()))
        .one(db)
        .await?
        .filter(|d| tokens::matches(&d.initialization_token_hash, token))
        .ok_or_else(|| token_error("Unknown initialization token."))?;
    if let Some(e) = unusable(&found) {
        return Err(e);
    }
    let api_token = tokens::generate();
    let txn = crate::db::begin_write(db).await?;
    let info = report.info.map(Value::Object);
    let done = txn
        .execute_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "UPDATE devices SET initialized = $1, api_token_hash = $2, \
             initialization_token = NULL, hardware_brand = $3, hardware_model = $4, \
             software_brand = $5, software_version = $6, os_name = $7, os_version = $8, \
             info = $9, rsa_pubkey = $10 \
             WHERE id = $11 AND initialized IS NULL AND NOT revoked",
            [
                crate::values::now().into(),
                tokens::hash(&api_token).into(),
                report.hardware_brand.into(),
                report.hardware_model.into(),
                report.software_brand.into(),
                report.software_version.into(),
                report.os_name.into(),
                report.os_version.into(),
                info.into(),
                report.rsa_pubkey.into(),
                found.id.into(),
            ],
        ))
        .await?;
    if done.rows_affected() == 0 {
        let now = device::Entity::find_by_id(found.id).one(&txn).await?;
        return Err(now
            .as_ref()
            .and_then(unusable)
            .unwrap_or_else(|| token_error("Unknown initialization token.")));
    }
    let answer = protocol_device(&txn, found.id, Some(api_token)).await?;
    crate::db::commit(txn).await?;
    Ok(answer)
}

/// Stores what an initialized device reports about itself; a set `rsa_pubkey` cannot
/// change.
pub async fn update_report(
    db: &DatabaseConnection,
    id: i64,
    report: Report,
) -> Result<ProtocolDevice, Refusal> {
    check_report(&report)?;
    let txn = crate::db::begin_write(db).await?;
    crate::db::lock_row(&txn, "devices", id).await?;
    let current = device::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or_else(|| Refusal::unauthorized("Invalid token."))?;
    if current.revoked {
        return Err(revoked_error());
    }
    if let (Some(old), Some(new)) = (&current.rsa_pubkey, &report.rsa_pubkey)
        && old.trim() != new.trim()
    {
        return Err(Refusal::field(
            "rsa_pubkey",
            "You cannot change the rsa_pubkey of the device once it is set.",
        ));
    }
    let mut row: device::ActiveModel = current.clone().into();
    row.hardware_brand = Set(Some(report.hardware_brand));
    row.hardware_model = Set(Some(report.hardware_model));
    row.software_brand = Set(Some(report.software_brand));
    row.software_version = Set(Some(report.software_version));
    row.os_name = Set(report.os_name);
    row.os_version = Set(report.os_version);
    if let Some(info) = report.info {
        row.info = Set(Some(Value::Object(info)));
    }
    if current.rsa_pubkey.is_none() && report.rsa_pubkey.is_some() {
        row.rsa_pubkey = Set(report.rsa_pubkey);
    }
    row.update(&txn).await?;
    let answer = protocol_device(&txn, id, None).await?;
    crate::db::commit(txn).await?;
    Ok(answer)
}

/// Gives the device a new API token; the old one stops working at once.
pub async fn roll(db: &DatabaseConnection, id: i64) -> Result<ProtocolDevice, Refusal> {
    let api_token = tokens::generate();
    let txn = crate::db::begin_write(db).await?;
    let done = txn
        .execute_raw(Statement::from_sql_and_values(
            txn.get_database_backend(),
            "UPDATE devices SET api_token_hash = $1 WHERE id = $2 AND NOT revoked",
            [tokens::hash(&api_token).into(), id.into()],
        ))
        .await?;
    if done.rows_affected() == 0 {
        return Err(revoked_error());
    }
    let answer = protocol_device(&txn, id, Some(api_token)).await?;
    crate::db::commit(txn).await?;
    Ok(answer)
}

/// Revokes the device for ever.
pub async fn revoke(db: &DatabaseConnection, id: i64) -> Result<ProtocolDevice, Refusal> {
    let txn = crate::db::begin_write(db).await?;
    txn.execute_raw(Statement::from_sql_and_values(
        txn.get_database_backend(),
        "UPDATE devices SET revoked = $1 WHERE id = $2",
        [true.into(), id.into()],
    ))
    .await?;
    let answer = protocol_device(&txn, id, None).await?;
    crate::db::commit(txn).await?;
    Ok(answer)
}

/// The device as the protocol answers it (`device/info`).
pub async fn info(db: &DatabaseConnection, id: i64) -> Result<ProtocolDevice, Refusal> {
    protocol_device(db, id, None).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_encode_as_pretix_does() {
        assert_eq!(pretix_numeric("2025.7.0"), Some(20_250_070_005_000));
        assert_eq!(pretix_numeric("4.12.0.dev1"), Some(40_120_001_001));
        assert_eq!(pretix_numeric("4.12.0rc2"), Some(40_120_004_002));
        assert_eq!(pretix_numeric("x"), None);
        assert!(
            pretix_numeric(PRETIX_COMPATIBILITY).expect("numeric") >= 40_120_001_001,
            "scanner apps must use checkinrpc"
        );
    }

    #[test]
    fn only_pem_rsa_public_keys_are_keys() {
        let key = "-----BEGIN PUBLIC KEY-----\n\
            MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n\
            4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n\
            +qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyeh\n\
            kd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ\n\
            0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdg\n\
            cKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbc\n\
            mwIDAQAB\n\
            -----END PUBLIC KEY-----\n";
        assert!(is_rsa_public_key(key));
        assert!(!is_rsa_public_key(
            "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----"
        ));
        assert!(!is_rsa_public_key("hello"));
    }
}
