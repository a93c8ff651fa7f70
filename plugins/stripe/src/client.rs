//! The few calls of Stripe's REST API the provider makes: form-encoded requests with the
//! secret key as bearer token, JSON answers. Written on reqwest rather than a Stripe crate:
//! five calls do not need the thousands of generated types such crates compile.

use std::time::Duration;

use serde_json::Value;
use tessera::domain::extensions::payments::PaymentContext;

/// How long a call to Stripe may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The API version the calls are written for (pretix's), whatever the account's default.
const API_VERSION: &str = "2023-10-16";

/// Stripe's API at `base`.
#[derive(Debug)]
pub struct Stripe {
    base: String,
    http: reqwest::Client,
}

/// What the provider reads of a PaymentIntent.
#[derive(Debug, Clone)]
pub struct Intent {
    /// `pi_...`.
    pub id: String,
    /// Stripe's status: `succeeded`, `processing`, `requires_action`, ...
    pub status: String,
    /// The amount, in Stripe's minor units.
    pub amount: i64,
    /// The metadata the intent was made with.
    pub metadata: Value,
    /// The secret Stripe.js needs to ask the buyer's bank.
    pub client_secret: String,
    /// The payment method's ID.
    pub payment_method: Option<String>,
    /// The card (`brand`, `last4`), when Stripe gave it.
    pub card: Option<Value>,
    /// Why the last attempt failed, for the buyer.
    pub error: Option<String>,
}

impl Intent {
    /// Reads a PaymentIntent object; `None` when it is not one.
    pub fn of(v: &Value) -> Option<Self> {
        if v["object"].as_str() != Some("payment_intent") {
            return None;
        }
        let method = &v["payment_method"];
        // The card is on the payment method when it was expanded, or on the latest charge
        // (Stripe's `payment_method_details`).
        let card = method["card"]
            .as_object()
            .or_else(|| v["latest_charge"]["payment_method_details"]["card"].as_object())
            .map(|c| serde_json::json!({"brand": c.get("brand"), "last4": c.get("last4")}));
        Some(Self {
            id: v["id"].as_str()?.to_owned(),
            status: v["status"].as_str()?.to_owned(),
            amount: v["amount"].as_i64().unwrap_or_default(),
            metadata: v["metadata"].clone(),
            client_secret: v["client_secret"].as_str().unwrap_or_default().to_owned(),
            payment_method: method
                .as_str()
                .or_else(|| method["id"].as_str())
                .map(str::to_owned),
            card,
            error: v["last_payment_error"]["message"]
                .as_str()
                .map(str::to_owned),
        })
    }
}

/// Why a call did not give what was asked.
#[derive(Debug)]
pub enum StripeError {
    /// The card was declined (HTTP 402); the intent, when Stripe named it.
    Declined {
        /// Stripe's message for the buyer.
        message: String,
        /// The intent as it stands.
        intent: Option<Box<Intent>>,
    },
    /// Stripe refused the request (a 4xx other than 402).
    Refused(String),
    /// Stripe could not be reached, or failed.
    Unreachable,
}

impl StripeError {
    /// The message for the buyer on the payment page.
    pub fn for_buyer(&self) -> String {
        match self {
            StripeError::Declined { message, .. } => message.clone(),
            // Stripe's own words may be about the organizer's account: they go to the log.
            StripeError::Refused(_) => {
                "The card could not be charged; please try again, or contact the organizer.".into()
            }
            StripeError::Unreachable => {
                "The card service could not be reached; please try again in a moment.".into()
            }
        }
    }

    /// The message for the organizer (an API client).
    pub fn for_organizer(&self) -> String {
        match self {
            StripeError::Declined { message, .. } | StripeError::Refused(message) => {
                format!("Stripe refused: {message}")
            }
            StripeError::Unreachable => "Stripe could not be reached; try again later.".into(),
        }
    }
}

impl Stripe {
    /// The API at `base` (no trailing slash needed).
    pub fn new(base: String) -> Self {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .unwrap_or_default();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            http,
        }
    }

    /// Where the API is.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Creates an intent of a payment, not confirmed: nothing is charged until
    /// [`Stripe::attempt`]. The metadata name the payment, so that Stripe's notices find it.
    /// Stripe's idempotency key names the payment and the failed intent this one follows
    /// (`after`): asked again (its answer was lost on the way), Stripe gives the same intent,
    /// so that a payment is never charged through two intents.
    pub async fn create(
        &self,
        key: &str,
        ctx: &PaymentContext,
        local_id: i32,
        amount: i64,
        after: Option<&str>,
    ) -> Result<Intent, StripeError> {
        let mut form = vec![
            ("amount", amount.to_string()),
            ("currency", ctx.currency.to_lowercase()),
            // Cards only: without it, newer API versions offer the dashboard's methods and
            // then want a return URL for redirecting ones.
            ("payment_method_types[]", "card".to_owned()),
            ("metadata[organizer]", ctx.organizer.clone()),
            ("metadata[event]", ctx.event.clone()),
            ("metadata[order]", ctx.order_code.clone()),
            ("metadata[payment]", local_id.to_string()),
        ];
        if let Some(postfix) = descriptor_suffix(ctx) {
            form.push(("statement_descriptor_suffix", postfix));
        }
        let idempotency = format!(
            "tessera-{}-{}-{}-{local_id}-{}",
            ctx.organizer,
            ctx.event,
            ctx.order_code,
            after.unwrap_or("first")
        );
        let v = self
            .post(key, "/v1/payment_intents", &form, Some(&idempotency))
            .await?;
        Intent::of(&v).ok_or(StripeError::Unreachable)
    }

    /// Charges the buyer's payment method through an intent that waits for one; an intent
    /// that went on meanwhile (paid, asking the bank) is given as it stands. Stripe's update
    /// and confirmation, two calls (a confirmation that names the method is one, which
    /// localstripe does not take).
    pub async fn attempt(
        &self,
        key: &str,
        intent: &Intent,
        method: &str,
    ) -> Result<Intent, StripeError> {
        if !matches!(
            intent.status.as_str(),
            "requires_payment_method" | "requires_confirmation"
        ) {
            return Ok(intent.clone());
        }
        let path = format!("/v1/payment_intents/{}", intent.id);
        let confirmed = async {
            self.post(key, &path, &[("payment_method", method.to_owned())], None)
                .await?;
            let v = self
                .post(key, &format!("{path}/confirm"), &[], None)
                .await?;
            Intent::of(&v).ok_or(StripeError::Unreachable)
        }
        .await;
        match confirmed {
            // The card is read from the payment method, which the confirmation does not
            // expand.
            Ok(i) if i.card.is_some() => Ok(i),
            Ok(_) => self.intent(key, &intent.id).await,
            // Refused: the intent may have gone on since it was read (an earlier attempt
            // whose answer was lost); as it stands, it says.
            Err(StripeError::Refused(why)) => match self.intent(key, &intent.id).await {
                Ok(now)
                    if !now.status.starts_with("requires_") || now.status == "requires_action" =>
                {
                    Ok(now)
                }
                _ => Err(StripeError::Refused(why)),
            },
            Err(e) => Err(e),
        }
    }

    /// The intent as it stands, with its payment method.
    pub async fn intent(&self, key: &str, id: &str) -> Result<Intent, StripeError> {
        let path = format!("/v1/payment_intents/{id}");
        let v = self
            .get(key, &path, &[("expand[]", "payment_method")])
            .await?;
        Intent::of(&v).ok_or(StripeError::Unreachable)
    }

    /// Cancels an intent that was not paid.
    pub async fn cancel(&self, key: &str, id: &str) -> Result<Value, StripeError> {
        self.post(key, &format!("/v1/payment_intents/{id}/cancel"), &[], None)
            .await
    }

    /// Gives back `amount` (minor units) of an intent's payment; `reference` names the
    /// refund (Stripe's idempotency key: asked again, Stripe gives the same refund).
    pub async fn refund(
        &self,
        key: &str,
        intent: &str,
        amount: i64,
        reference: &str,
    ) -> Result<Value, StripeError> {
        let form = [
            ("payment_intent", intent.to_owned()),
            ("amount", amount.to_string()),
        ];
        let idempotency = format!("tessera-refund-{reference}");
        self.post(key, "/v1/refunds", &form, Some(&idempotency))
            .await
    }

    /// The refunds of an intent's payment, as they stand (Stripe lists the latest 100).
    pub async fn refunds(&self, key: &str, intent: &str) -> Result<Vec<Value>, StripeError> {
        let query = [("payment_intent", intent), ("limit", "100")];
        let v = self.get(key, "/v1/refunds", &query).await?;
        Ok(v["data"].as_array().cloned().unwrap_or_default())
    }

    async fn get(
        &self,
        key: &str,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Value, StripeError> {
        let req = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(key)
            .header("Stripe-Version", API_VERSION)
            .query(query);
        answer(req).await
    }

    async fn post(
        &self,
        key: &str,
        path: &str,
        form: &[(&str, String)],
        idempotency: Option<&str>,
    ) -> Result<Value, StripeError> {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(key)
            .header("Stripe-Version", API_VERSION)
            .form(form);
        if let Some(k) = idempotency {
            req = req.header("Idempotency-Key", k);
        }
        answer(req).await
    }
}

/// Sends a request and reads Stripe's answer: the object, or its error.
async fn answer(req: reqwest::RequestBuilder) -> Result<Value, StripeError> {
    let resp = req.send().await.map_err(|e| {
        // The error names the URL, which carries no secret; the key is in a header.
        tracing::warn!(error = %e.without_url(), "Stripe could not be reached");
        StripeError::Unreachable
    })?;
    let status = resp.status();
    let v: Value = resp.json().await.map_err(|_| StripeError::Unreachable)?;
    if status.is_success() {
        return Ok(v);
    }
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or("no reason given")
        .to_owned();
    match status.as_u16() {
        402 => Err(StripeError::Declined {
            message,
            intent: Intent::of(&v["error"]["payment_intent"]).map(Box::new),
        }),
        400..=499 => {
            tracing::warn!(
                status = status.as_u16(),
                message,
                "Stripe refused a request"
            );
            Err(StripeError::Refused(message))
        }
        _ => {
            tracing::warn!(status = status.as_u16(), "Stripe failed");
            Err(StripeError::Unreachable)
        }
    }
}

/// pretix's statement descriptor suffix: the order code and the event's postfix, Stripe's
/// characters only, at most 22; none without a postfix.
fn descriptor_suffix(ctx: &PaymentContext) -> Option<String> {
    let postfix = crate::settings::text(ctx, crate::settings::POSTFIX)?;
    let text: String = format!("{} {postfix}", ctx.order_code)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || " -_.".contains(*c))
        .take(22)
        .collect();
    Some(text)
}

/// Whether a value from the browser looks like a Stripe ID (`pm_...`, `card_...`).
pub fn is_id(value: &str) -> bool {
    value.len() <= 255
        && value.contains('_')
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Currencies Stripe counts in whole units.
const ZERO_DECIMAL: [&str; 16] = [
    "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
    "XAF", "XOF", "XPF",
];

/// An amount in cents as Stripe counts it: cents, or whole units for zero-decimal
/// currencies (`None` when it is not whole).
pub fn minor_units(cents: i64, currency: &str) -> Option<i64> {
    if ZERO_DECIMAL.contains(&currency.to_ascii_uppercase().as_str()) {
        (cents % 100 == 0).then_some(cents / 100)
    } else {
        Some(cents)
    }
}

/// Stripe's amount in cents again ([`minor_units`] backwards).
pub fn cents(amount: i64, currency: &str) -> Option<i64> {
    if ZERO_DECIMAL.contains(&currency.to_ascii_uppercase().as_str()) {
        amount.checked_mul(100)
    } else {
        Some(amount)
    }
}

#[cfg(test)]
mod tests {
    use super::{cents, is_id, minor_units};

    #[test]
    fn amounts_are_cents_except_in_currencies_without_them() {
        assert_eq!(minor_units(1234, "EUR"), Some(1234));
        assert_eq!(minor_units(150_000, "JPY"), Some(1500));
        assert_eq!(minor_units(150_050, "jpy"), None);
        assert_eq!(cents(1500, "JPY"), Some(150_000));
        assert_eq!(cents(1234, "EUR"), Some(1234));
    }

    #[test]
    fn only_stripe_ids_are_taken_from_the_browser() {
        assert!(is_id("pm_1NXyz"));
        assert!(is_id("card_abc123"));
        assert!(!is_id("pm_1<script>"));
        assert!(!is_id("nothing"));
    }
}
