//! Payment by a link to a hosted payment page: the worked example of a dynamic plugin.
//!
//! It declares a setting (`paylink_base_url`, checked by the plugin), a payment provider
//! (`paylink`) and an endpoint (`POST links/` under an event) that makes a link on request.

use serde_json::{Map, Value, json};
use tessera_plugin_sdk::{
    DynamicPlugin, EndpointSpec, HttpRequest, HttpResponse, Manifest, PaymentCreated,
    PaymentRequest, ProviderSpec, Scope, SettingKind, SettingLevel, SettingSpec, export_plugin,
};

const BASE_URL: &str = "paylink_base_url";
const NOT_CONFIGURED: &str = "The payment page is not configured.";

/// The plugin; it keeps no state of its own.
struct Paylink;

impl DynamicPlugin for Paylink {
    fn manifest(&self) -> Manifest {
        Manifest {
            settings: vec![SettingSpec {
                key: BASE_URL.into(),
                kind: SettingKind::Url,
                default: json!(""),
                label: "Payment page".into(),
                help_text: "Address of the hosted payment page; the order code, amount and \
                            currency are added to it."
                    .into(),
                // Where customers pay: per event, as pretix keeps payment provider settings.
                level: SettingLevel::Event,
                validate: true,
                min: None,
                max: None,
                max_length: None,
            }],
            payment_providers: vec![ProviderSpec {
                identifier: "paylink".into(),
                name: "Payment link".into(),
            }],
            endpoints: vec![EndpointSpec {
                method: "POST".into(),
                path: "links/".into(),
                scope: Scope::Event,
                permission: Some("can_view_orders".into()),
                operation: links_operation(),
            }],
            ..Manifest::new(
                "paylink",
                "1.0.0",
                "Payment by a link to a hosted payment page",
            )
        }
    }

    fn validate_setting(&self, key: &str, value: &Value) -> Result<(), String> {
        match (key, value.as_str()) {
            (BASE_URL, Some(url)) if url.is_empty() || url.starts_with("https://") => Ok(()),
            (BASE_URL, _) => Err("Use an https:// address.".into()),
            _ => Ok(()),
        }
    }

    fn create_payment(&self, request: &PaymentRequest) -> Result<PaymentCreated, String> {
        let base = base_url(&request.settings).ok_or(NOT_CONFIGURED)?;
        let url = link(
            base,
            &[
                ("order", &request.order_code),
                ("amount", &request.amount),
                ("currency", &request.currency),
            ],
        );
        Ok(PaymentCreated {
            payment_url: Some(url.clone()),
            details: json!({ "link": url }),
            instructions: format!("Pay at {url}."),
        })
    }

    fn handle(&self, request: &HttpRequest) -> HttpResponse {
        match (request.method.as_str(), request.path.as_str()) {
            ("POST", "links/") => make_link(request).unwrap_or_else(|refusal| refusal),
            _ => HttpResponse::not_found(),
        }
    }
}

export_plugin!(Paylink);

/// `POST links/`: a link for `amount` and `reference`.
fn make_link(request: &HttpRequest) -> Result<HttpResponse, HttpResponse> {
    let amount = string_field(&request.body, "amount")?;
    let reference = string_field(&request.body, "reference")?;
    let base = base_url(&request.settings)
        .ok_or_else(|| HttpResponse::json(400, json!({ "detail": NOT_CONFIGURED })))?;
    let url = link(base, &[("reference", reference), ("amount", amount)]);
    Ok(HttpResponse::ok(json!({ "url": url })))
}

fn links_operation() -> Value {
    json!({
        "summary": "Make a payment link",
        "description": "A link to the event's payment page for an amount and a reference.",
        "requestBody": {
            "required": true,
            "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["amount", "reference"],
                "properties": {
                    "amount": {"type": "string", "example": "10.00"},
                    "reference": {"type": "string", "example": "ABC12"}
                }
            }}}
        },
        "responses": {
            "200": {
                "description": "The link.",
                "content": {"application/json": {"schema": {
                    "type": "object",
                    "properties": {"url": {"type": "string"}}
                }}}
            },
            "400": {"description": "A field is missing or the payment page is not configured."}
        }
    })
}

fn base_url(settings: &Map<String, Value>) -> Option<&str> {
    settings
        .get(BASE_URL)
        .and_then(Value::as_str)
        .filter(|url| !url.is_empty())
}

fn string_field<'a>(body: &'a Value, name: &str) -> Result<&'a str, HttpResponse> {
    match body.get(name) {
        Some(Value::String(value)) => Ok(value),
        None | Some(Value::Null) => Err(HttpResponse::bad_request(name, "This field is required.")),
        Some(_) => Err(HttpResponse::bad_request(name, "Not a valid string.")),
    }
}

/// `base` with these query parameters, percent-encoded.
fn link(base: &str, params: &[(&str, &str)]) -> String {
    let query: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{name}={}", encode(value)))
        .collect();
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}{}", query.join("&"))
}

fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
