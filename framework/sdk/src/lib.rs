//! Write a Tessera plugin as a dynamic library (`crate-type = ["cdylib"]`) that a host loads at
//! start without being rebuilt.
//!
//! Only bytes cross the boundary: the library exports four `extern "C"` functions of a small
//! versioned ABI ([`ABI_VERSION`]) that exchange JSON. No Rust type, no panic and no async
//! runtime crosses it: the host and the plugin may be built by different compilers. Implement
//! [`DynamicPlugin`] and export it with [`export_plugin!`]:
//!
//! ```
//! use tessera_plugin_sdk::{DynamicPlugin, HttpRequest, HttpResponse, Manifest, export_plugin};
//!
//! struct Hello;
//!
//! impl DynamicPlugin for Hello {
//!     fn manifest(&self) -> Manifest {
//!         Manifest::new("hello", "1.0.0", "Says hello")
//!     }
//!
//!     fn handle(&self, request: &HttpRequest) -> HttpResponse {
//!         HttpResponse::ok(serde_json::json!({"hello": request.event}))
//!     }
//! }
//!
//! export_plugin!(Hello);
//! ```
//!
//! The plugin's methods run on the host's threads, synchronously and possibly several at once.
//! A plugin that needs async code builds and keeps its own runtime (a tokio runtime in a
//! `OnceLock`, say): it cannot use the host's.
//!
//! # The protocol
//!
//! The host checks `tessera_plugin_abi_version` first and refuses a library that answers
//! anything but [`ABI_VERSION`]. It then reads the [`Manifest`] once and afterwards calls
//! `tessera_plugin_call` with a method name and a JSON input; the answer is an [`Envelope`]:
//!
//! | method | input | `ok` |
//! |---|---|---|
//! | [`method::VALIDATE_SETTING`] | [`SettingCheck`] | `null` |
//! | [`method::PAYMENT_CREATE`] | [`PaymentRequest`] | [`PaymentCreated`] |
//! | [`method::PAYMENT_CONFIRM`], [`method::PAYMENT_CANCEL`] | [`PaymentAction`] | `null` |
//! | [`method::PAYMENT_REFUND`] | [`PaymentAction`] | details of the refund |
//! | [`method::HTTP`] | [`HttpRequest`] | [`HttpResponse`] |
//!
//! Buffers are freed by the side that allocated them: the plugin allocates the answers, the
//! host copies them and hands them back to `tessera_plugin_free`.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Version of the ABI this SDK speaks; a host refuses libraries of another version.
pub const ABI_VERSION: u32 = 1;

/// Symbol of the [`AbiVersionFn`] a plugin exports.
pub const SYMBOL_ABI_VERSION: &str = "tessera_plugin_abi_version";
/// Symbol of the [`ManifestFn`] a plugin exports.
pub const SYMBOL_MANIFEST: &str = "tessera_plugin_manifest";
/// Symbol of the [`CallFn`] a plugin exports.
pub const SYMBOL_CALL: &str = "tessera_plugin_call";
/// Symbol of the [`FreeFn`] a plugin exports.
pub const SYMBOL_FREE: &str = "tessera_plugin_free";

/// Answers the ABI version the library speaks.
pub type AbiVersionFn = unsafe extern "C" fn() -> u32;
/// Answers the [`Manifest`] as JSON, or an empty buffer when the plugin failed to make it.
pub type ManifestFn = unsafe extern "C" fn() -> Buffer;
/// Calls a method (UTF-8) with a JSON input and answers an [`Envelope`] as JSON.
pub type CallFn = unsafe extern "C" fn(
    method: *const u8,
    method_len: usize,
    input: *const u8,
    input_len: usize,
) -> Buffer;
/// Frees a buffer the same library returned.
pub type FreeFn = unsafe extern "C" fn(Buffer);

/// Names of the methods of `tessera_plugin_call`.
pub mod method {
    /// Checks a value of a setting declared with `validate: true`.
    pub const VALIDATE_SETTING: &str = "validate_setting";
    /// Starts a payment.
    pub const PAYMENT_CREATE: &str = "payment.create";
    /// A payment was confirmed.
    pub const PAYMENT_CONFIRM: &str = "payment.confirm";
    /// A payment was canceled.
    pub const PAYMENT_CANCEL: &str = "payment.cancel";
    /// Refunds (part of) a payment.
    pub const PAYMENT_REFUND: &str = "payment.refund";
    /// Answers a request to one of the plugin's endpoints.
    pub const HTTP: &str = "http";
}

/// Bytes owned by the library that allocated them, handed over the C ABI.
#[repr(C)]
#[derive(Debug)]
pub struct Buffer {
    /// Start of the bytes.
    pub ptr: *mut u8,
    /// Number of bytes.
    pub len: usize,
    /// Capacity of the allocation.
    pub cap: usize,
}

impl Buffer {
    /// Hands over the bytes of `bytes`; the allocation lives until [`Buffer::free`].
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        Buffer {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
            cap: bytes.capacity(),
        }
    }

    /// The bytes, for the host to copy before it frees the buffer.
    ///
    /// # Safety
    ///
    /// `ptr` and `len` must describe live bytes (as a buffer made by [`Buffer::from_vec`] and
    /// not yet freed does), or `ptr` must be null.
    #[allow(unsafe_code)]
    pub unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: the caller promises `ptr` points to `len` live bytes, or is null.
        unsafe { slice(self.ptr, self.len) }
    }

    /// Frees the buffer: what a plugin's `tessera_plugin_free` does.
    ///
    /// # Safety
    ///
    /// The buffer must have been made by [`Buffer::from_vec`] in this same library and not be
    /// freed yet.
    #[allow(unsafe_code)]
    pub unsafe fn free(self) {
        // SAFETY: the caller promises the parts come from a `Vec<u8>` of this allocator.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

/// The answer of `tessera_plugin_call`: `{"ok": <value>}` or `{"error": "<message>"}`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Envelope {
    /// The method succeeded with this value.
    Ok(Value),
    /// The method failed with this message.
    Error(String),
}

/// What a plugin is and brings, read once when the host loads it.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Manifest {
    /// Name as it appears in an event's `plugins` list: `[a-z0-9_-]+`.
    pub name: String,
    /// Version of the plugin.
    pub version: String,
    /// One-line description.
    pub description: String,
    /// Whether events or organizers switch the plugin on.
    #[serde(default)]
    pub level: Level,
    /// Settings the plugin declares; they inherit from organizer to event like core ones.
    #[serde(default)]
    pub settings: Vec<SettingSpec>,
    /// Payment providers the plugin brings.
    #[serde(default)]
    pub payment_providers: Vec<ProviderSpec>,
    /// HTTP endpoints the plugin answers (method [`method::HTTP`]).
    #[serde(default)]
    pub endpoints: Vec<EndpointSpec>,
}

impl Manifest {
    /// A manifest of an event-level plugin that brings nothing yet.
    pub fn new(name: &str, version: &str, description: &str) -> Self {
        Manifest {
            name: name.into(),
            version: version.into(),
            description: description.into(),
            level: Level::Event,
            settings: Vec::new(),
            payment_providers: Vec::new(),
            endpoints: Vec::new(),
        }
    }
}

/// Where a plugin is switched on.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Per event, in the event's `plugins` list.
    #[default]
    Event,
    /// Per organizer.
    Organizer,
    /// Both.
    Both,
}

/// A setting a plugin declares.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SettingSpec {
    /// Key in the settings API, e.g. `paylink_base_url`.
    pub key: String,
    /// Type of the value.
    #[serde(rename = "type")]
    pub kind: SettingKind,
    /// Value when nobody set one.
    #[serde(default)]
    pub default: Value,
    /// Short label.
    pub label: String,
    /// Longer help text.
    #[serde(default)]
    pub help_text: String,
    /// Where the setting can be set. Payment provider settings belong on
    /// [`SettingLevel::Event`], as pretix keeps them; on both levels, only a team with access to
    /// all events can set the organizer's value.
    #[serde(default)]
    pub level: SettingLevel,
    /// Whether the host asks the plugin ([`method::VALIDATE_SETTING`]) before storing a value.
    #[serde(default)]
    pub validate: bool,
    /// Smallest value of an [`SettingKind::Int`] setting; without it, that of a 32-bit
    /// integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    /// Largest value of an [`SettingKind::Int`] setting; without it, that of a 32-bit
    /// integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// Most characters of a [`SettingKind::Text`] setting's value; without it
    /// [`DEFAULT_TEXT_CHARS`]. E-mail addresses and URLs have their own limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<usize>,
}

/// Most characters of a text setting that declares no `max_length`.
pub const DEFAULT_TEXT_CHARS: usize = 10_000;

impl SettingSpec {
    /// The smallest and largest value of an integer setting: those declared, else those of
    /// a 32-bit integer.
    pub fn bounds(&self) -> (i64, i64) {
        (
            self.min.unwrap_or(i32::MIN.into()),
            self.max.unwrap_or(i32::MAX.into()),
        )
    }

    /// Most characters of a text setting: the declared number, else [`DEFAULT_TEXT_CHARS`].
    pub fn text_length(&self) -> usize {
        self.max_length.unwrap_or(DEFAULT_TEXT_CHARS)
    }
}

/// Type of a setting's value.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SettingKind {
    /// `true` or `false`.
    Bool,
    /// An integer.
    Int,
    /// Any string.
    Text,
    /// An e-mail address.
    Email,
    /// A URL.
    Url,
}

/// Where a setting can be set.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SettingLevel {
    /// On organizers and events; events inherit the organizer's value.
    #[default]
    Both,
    /// On organizers only.
    Organizer,
    /// On events only.
    Event,
}

/// A payment provider a plugin brings.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ProviderSpec {
    /// Identifier in orders' payments, e.g. `paylink`.
    pub identifier: String,
    /// Name shown to buyers.
    pub name: String,
}

/// An HTTP endpoint a plugin answers under its prefix.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct EndpointSpec {
    /// HTTP verb in capitals: `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// Path relative to the plugin's prefix, e.g. `links/`.
    pub path: String,
    /// Whether the endpoint lives under an event or an organizer.
    #[serde(default)]
    pub scope: Scope,
    /// A core permission the caller must hold, e.g. `can_view_orders`.
    #[serde(default)]
    pub permission: Option<String>,
    /// OpenAPI 3 operation object: `summary`, `description`, `requestBody`, `responses`.
    #[serde(default = "empty_object")]
    pub operation: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Where an endpoint lives.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Under an event.
    #[default]
    Event,
    /// Under an organizer.
    Organizer,
}

/// Input of [`method::VALIDATE_SETTING`].
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SettingCheck {
    /// Key of the setting.
    pub key: String,
    /// Value about to be stored.
    pub value: Value,
}

/// Input of [`method::PAYMENT_CREATE`]: a payment to start.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct PaymentRequest {
    /// Identifier of the provider.
    pub provider: String,
    /// Slug of the organizer.
    pub organizer: String,
    /// Slug of the event.
    pub event: String,
    /// Code of the order.
    pub order_code: String,
    /// Amount with two decimal places, e.g. `23.00`.
    pub amount: String,
    /// Currency code, e.g. `EUR`.
    pub currency: String,
    /// Sales channel of the order.
    pub sales_channel: String,
    /// E-mail address of the buyer.
    pub email: Option<String>,
    /// When the order expires (RFC 3339).
    pub expires: Option<String>,
    /// The event's settings, the plugin's included.
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// The order's payment page at the host.
    pub default_payment_url: String,
}

/// Output of [`method::PAYMENT_CREATE`].
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct PaymentCreated {
    /// Where the buyer pays, when not at the host.
    pub payment_url: Option<String>,
    /// Details stored with the payment.
    pub details: Value,
    /// What the buyer is told to do.
    pub instructions: String,
}

/// Input of [`method::PAYMENT_CONFIRM`], [`method::PAYMENT_CANCEL`] and
/// [`method::PAYMENT_REFUND`].
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct PaymentAction {
    /// Identifier of the provider.
    pub provider: String,
    /// The payment as it was requested.
    pub request: PaymentRequest,
    /// Number of the payment within its order.
    pub local_id: i32,
    /// Details stored with the payment.
    pub details: Value,
    /// Amount concerned, with two decimal places.
    pub amount: String,
    /// For a refund: its name, the same when it is asked again (an idempotency key for the
    /// provider's service).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// Input of [`method::HTTP`]: a request to one of the plugin's endpoints.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct HttpRequest {
    /// HTTP verb in capitals.
    pub method: String,
    /// The path after the plugin's prefix, without a leading slash, e.g. `links/`.
    pub path: String,
    /// Query parameters.
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// JSON body; `null` when there is none.
    #[serde(default)]
    pub body: Value,
    /// Slug of the organizer.
    pub organizer: String,
    /// Slug of the event, for endpoints under an event.
    pub event: Option<String>,
    /// Settings of the event or organizer, the plugin's included.
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// Core permissions the caller holds there.
    #[serde(default)]
    pub permissions: Vec<String>,
}

/// Output of [`method::HTTP`].
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct HttpResponse {
    /// HTTP status.
    pub status: u16,
    /// JSON body.
    pub body: Value,
}

impl HttpResponse {
    /// 200 with this body.
    pub fn ok(body: Value) -> Self {
        Self::json(200, body)
    }

    /// This status with this body.
    pub fn json(status: u16, body: Value) -> Self {
        HttpResponse { status, body }
    }

    /// 404 `{"detail": "Not found."}`.
    pub fn not_found() -> Self {
        Self::json(404, json!({"detail": "Not found."}))
    }

    /// 400 `{field: [message]}`.
    pub fn bad_request(field: &str, message: &str) -> Self {
        Self::json(400, json!({ field: [message] }))
    }
}

/// A plugin in a dynamic library; export it with [`export_plugin!`].
///
/// Methods run synchronously on the host's threads, possibly several at once. Errors are
/// messages for people.
pub trait DynamicPlugin: Send + Sync + 'static {
    /// What the plugin is and brings; read once at load.
    fn manifest(&self) -> Manifest;

    /// Checks a value of a setting declared with `validate: true`.
    fn validate_setting(&self, _key: &str, _value: &Value) -> Result<(), String> {
        Ok(())
    }

    /// Starts a payment with one of the plugin's providers.
    fn create_payment(&self, _request: &PaymentRequest) -> Result<PaymentCreated, String> {
        Err("not a payment provider".into())
    }

    /// A payment of one of the plugin's providers was confirmed.
    fn confirm_payment(&self, _action: &PaymentAction) -> Result<(), String> {
        Ok(())
    }

    /// A payment of one of the plugin's providers was canceled.
    fn cancel_payment(&self, _action: &PaymentAction) -> Result<(), String> {
        Ok(())
    }

    /// Refunds `action.amount` of a payment; answers details of the refund.
    fn refund_payment(&self, _action: &PaymentAction) -> Result<Value, String> {
        Err("refunds are not supported".into())
    }

    /// Answers a request to one of the plugin's endpoints.
    fn handle(&self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::not_found()
    }
}

/// Exports a [`DynamicPlugin`]: generates the four `extern "C"` functions of the ABI. The
/// expression makes the plugin on first use.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:expr) => {
        const _: () = {
            fn plugin() -> &'static dyn $crate::DynamicPlugin {
                static PLUGIN: ::std::sync::OnceLock<::std::boxed::Box<dyn $crate::DynamicPlugin>> =
                    ::std::sync::OnceLock::new();
                PLUGIN
                    .get_or_init(|| ::std::boxed::Box::new($plugin))
                    .as_ref()
            }

            /// The ABI version of the library.
            // SAFETY: the ABI's own name, which no other symbol of a plugin bears.
            #[allow(unsafe_code)]
            #[unsafe(no_mangle)]
            pub extern "C" fn tessera_plugin_abi_version() -> u32 {
                $crate::ABI_VERSION
            }

            /// The manifest as JSON.
            // SAFETY: the ABI's own name, which no other symbol of a plugin bears.
            #[allow(unsafe_code)]
            #[unsafe(no_mangle)]
            pub extern "C" fn tessera_plugin_manifest() -> $crate::Buffer {
                $crate::__manifest(plugin)
            }

            /// Calls a method.
            ///
            /// # Safety
            ///
            /// Both pointers point to that many readable bytes (or are null).
            #[allow(unsafe_code)]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn tessera_plugin_call(
                method: *const u8,
                method_len: usize,
                input: *const u8,
                input_len: usize,
            ) -> $crate::Buffer {
                // SAFETY: the host passes valid pointers and lengths, as the ABI demands.
                unsafe { $crate::__call(plugin, method, method_len, input, input_len) }
            }

            /// Frees a buffer this library returned.
            ///
            /// # Safety
            ///
            /// The buffer comes from this library and is freed once.
            #[allow(unsafe_code)]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn tessera_plugin_free(buffer: $crate::Buffer) {
                // SAFETY: the host hands back, once, buffers this library returned.
                unsafe { $crate::Buffer::free(buffer) }
            }
        };
    };
}

/// Body of `tessera_plugin_manifest`: the manifest as JSON, or an empty buffer when making it
/// panicked.
#[doc(hidden)]
pub fn __manifest(plugin: fn() -> &'static dyn DynamicPlugin) -> Buffer {
    let bytes = catch_unwind(|| serde_json::to_vec(&plugin().manifest()));
    Buffer::from_vec(bytes.ok().and_then(Result::ok).unwrap_or_default())
}

/// Body of `tessera_plugin_call`: runs the method, panics caught, and answers an [`Envelope`].
///
/// # Safety
///
/// `method` and `input` point to `method_len` and `input_len` readable bytes (or are null).
#[doc(hidden)]
#[allow(unsafe_code)]
pub unsafe fn __call(
    plugin: fn() -> &'static dyn DynamicPlugin,
    method: *const u8,
    method_len: usize,
    input: *const u8,
    input_len: usize,
) -> Buffer {
    // SAFETY: the caller promises both point to that many bytes; they are only read, and
    // only during this call.
    let (method, input) = unsafe { (slice(method, method_len), slice(input, input_len)) };
    let envelope = match catch_unwind(AssertUnwindSafe(|| dispatch(plugin(), method, input))) {
        Ok(Ok(value)) => Envelope::Ok(value),
        Ok(Err(message)) => Envelope::Error(message),
        Err(panic) => Envelope::Error(format!("the plugin panicked: {}", panic_message(&*panic))),
    };
    Buffer::from_vec(serde_json::to_vec(&envelope).unwrap_or_default())
}

/// `len` bytes from `ptr`; none when `ptr` is null.
///
/// # Safety
///
/// `ptr` is null or points to `len` bytes that stay readable and unchanged for `'a`.
#[allow(unsafe_code)]
unsafe fn slice<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller promises `ptr` points to `len` readable bytes.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn dispatch(plugin: &dyn DynamicPlugin, method: &[u8], input: &[u8]) -> Result<Value, String> {
    match std::str::from_utf8(method).unwrap_or_default() {
        method::VALIDATE_SETTING => {
            let check: SettingCheck = parse(input)?;
            plugin.validate_setting(&check.key, &check.value)?;
            Ok(Value::Null)
        }
        method::PAYMENT_CREATE => answer(plugin.create_payment(&parse(input)?)?),
        method::PAYMENT_CONFIRM => plugin.confirm_payment(&parse(input)?).map(|()| Value::Null),
        method::PAYMENT_CANCEL => plugin.cancel_payment(&parse(input)?).map(|()| Value::Null),
        method::PAYMENT_REFUND => plugin.refund_payment(&parse(input)?),
        method::HTTP => answer(plugin.handle(&parse(input)?)),
        _ => Err("unknown method".into()),
    }
}

fn parse<T: DeserializeOwned>(input: &[u8]) -> Result<T, String> {
    serde_json::from_slice(input).map_err(|e| format!("invalid input: {e}"))
}

fn answer<T: Serialize>(output: T) -> Result<Value, String> {
    serde_json::to_value(output).map_err(|e| e.to_string())
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(message), _) => message,
        (_, Some(message)) => message,
        _ => "no message",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Panicky;

    impl DynamicPlugin for Panicky {
        fn manifest(&self) -> Manifest {
            panic!("no manifest today")
        }

        fn handle(&self, request: &HttpRequest) -> HttpResponse {
            panic!("cannot handle {}", request.path)
        }
    }

    fn panicky() -> &'static dyn DynamicPlugin {
        &Panicky
    }

    #[allow(unsafe_code)]
    fn call(method: &str, input: &Value) -> Envelope {
        let input = input.to_string();
        // SAFETY: both slices live through the call; the buffer is read, then freed once.
        unsafe {
            let buffer = __call(
                panicky,
                method.as_ptr(),
                method.len(),
                input.as_ptr(),
                input.len(),
            );
            let envelope = serde_json::from_slice(buffer.bytes()).expect("an envelope");
            buffer.free();
            envelope
        }
    }

    #[test]
    fn a_panic_in_a_call_becomes_an_error() {
        let request = json!({"method": "GET", "path": "x/", "organizer": "o", "event": null});

        assert_eq!(
            call(method::HTTP, &request),
            Envelope::Error("the plugin panicked: cannot handle x/".into())
        );
    }

    #[test]
    fn default_methods_and_unknown_ones_answer_in_envelopes() {
        let check = json!({"key": "k", "value": 1});

        assert_eq!(
            call(method::VALIDATE_SETTING, &check),
            Envelope::Ok(Value::Null)
        );
        assert_eq!(
            call("nope", &check),
            Envelope::Error("unknown method".into())
        );
        assert!(matches!(
            call(method::HTTP, &check),
            Envelope::Error(message) if message.starts_with("invalid input")
        ));
    }

    #[test]
    #[allow(unsafe_code)]
    fn a_panic_in_the_manifest_gives_an_empty_buffer() {
        let buffer = __manifest(panicky);

        assert_eq!(buffer.len, 0);
        // SAFETY: the buffer was just made by this library and is freed once.
        unsafe { buffer.free() };
    }
}
