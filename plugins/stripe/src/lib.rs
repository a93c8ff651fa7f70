//! `stripe`: card payments through Stripe, as pretix's `pretix.plugins.stripe` takes them.
//!
//! The worked example of a payment provider that talks to an outside service. It brings
//! pretix's settings (`payment_stripe_*`, per event), a provider `stripe` whose form the
//! service's payment page shows (Stripe Elements), and reads Stripe's signed notices, which
//! the service takes at `/_stripe/webhook/`. The rules do the rest: one request at a time
//! works on a payment, a notice is acted on once, and a payment is confirmed once however
//! the page's answer and the notice race (`tessera::domain::orders::paying`).
//!
//! Where Stripe lives is the installation's ([`StripeConfig`]): a stand-in such as
//! `localstripe` can take its place.

mod client;
mod notices;
mod settings;

use std::sync::Arc;

use serde_json::{Value, json};
use tessera::Plugin;
use tessera::domain::extensions::payments::{
    CreatedPayment, Kept, Notice, PaymentAddress, PaymentContext, PaymentForm, PaymentProvider,
    PaymentRecord, PaymentStep,
};
use tessera::domain::settings::SettingDef;

use client::{Intent, Stripe as Api, StripeError};

/// Where Stripe's API and its browser script are: Stripe's own unless the installation
/// names a stand-in (`stripe_api_base`, `stripe_js_url`).
#[derive(Debug, Clone)]
pub struct StripeConfig {
    /// Base of the REST API, e.g. `https://api.stripe.com`.
    pub api_base: String,
    /// Stripe.js, e.g. `https://js.stripe.com/v3/`.
    pub js_url: String,
}

/// The plugin: its settings and its provider.
#[derive(Debug, Clone)]
pub struct Stripe {
    provider: Arc<CardPayments>,
}

impl Stripe {
    /// The plugin, reaching Stripe where `config` says.
    pub fn new(config: StripeConfig) -> Self {
        Self {
            provider: Arc::new(CardPayments {
                api: Api::new(config.api_base),
                js_url: config.js_url,
            }),
        }
    }
}

impl Plugin for Stripe {
    fn name(&self) -> &str {
        "stripe"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn description(&self) -> &str {
        "Card payments through Stripe"
    }

    fn pretix_name(&self) -> Option<&str> {
        Some("pretix.plugins.stripe")
    }

    fn settings(&self) -> Vec<SettingDef> {
        settings::all()
    }

    fn payment_providers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        vec![self.provider.clone()]
    }
}

/// The provider `stripe`: a card form on the payment page, a PaymentIntent per payment.
#[derive(Debug)]
struct CardPayments {
    api: Api,
    js_url: String,
}

impl CardPayments {
    /// The intent a card is tried through (for `amount` in Stripe's minor units): the
    /// payment's own while it has not failed, else a new one (after the first, named by the one it follows). An intent is made once for its
    /// name, however often it is asked for (Stripe's idempotency key).
    async fn intent_for(
        &self,
        key: &str,
        ctx: &PaymentContext,
        payment: &PaymentRecord,
        amount: i64,
    ) -> Result<Intent, StripeError> {
        let after = match payment.state["intent"].as_str() {
            Some(id) => {
                let known = self.api.intent(key, id).await?;
                let failed = known.status == "requires_payment_method" && known.error.is_some();
                if !failed {
                    return Ok(known);
                }
                Some(known.id)
            }
            None => None,
        };
        self.api
            .create(key, ctx, payment.local_id, amount, after.as_deref())
            .await
    }
}

/// The form of the payment page.
const FORM: &str = include_str!("form.html");

#[async_trait::async_trait]
impl PaymentProvider for CardPayments {
    fn identifier(&self) -> &str {
        "stripe"
    }

    fn name(&self) -> &str {
        "Credit card"
    }

    /// Offered where pretix offers it: switched on, the card method on, keys set.
    fn is_available(&self, ctx: &PaymentContext) -> bool {
        settings::Keys::of(ctx).is_some()
            && settings::flag(ctx, settings::ENABLED)
            && settings::flag(ctx, settings::METHOD_CARD)
    }

    async fn create_payment(&self, _ctx: &PaymentContext) -> Result<CreatedPayment, String> {
        Ok(CreatedPayment {
            payment_url: None,
            details: json!({}),
            instructions: "Pay by credit card on the payment page.".into(),
        })
    }

    fn payment_form(&self, ctx: &PaymentContext, payment: &PaymentRecord) -> Option<PaymentForm> {
        let keys = settings::Keys::of(ctx)?;
        // A payment waiting for the buyer's bank (3-D Secure) gives the page its secret.
        let action = payment.state["client_secret"]
            .as_str()
            .filter(|_| payment.state["status"].as_str() == Some("requires_action"));
        let mut origins = vec![self.js_url.clone(), self.api.base().to_owned()];
        if self.js_url.starts_with("https://js.stripe.com/") {
            origins.push("https://hooks.stripe.com".into());
        }
        Some(PaymentForm {
            template: FORM,
            values: json!({
                "publishable_key": keys.publishable,
                "js_url": self.js_url,
                "client_secret": action,
                "test": keys.test,
            }),
            scripts: vec![self.js_url.clone()],
            origins,
        })
    }

    async fn pay(
        &self,
        ctx: &PaymentContext,
        payment: &PaymentRecord,
        form: &[(String, String)],
    ) -> Result<PaymentStep, String> {
        let keys = settings::Keys::of(ctx).ok_or(NOT_SET_UP)?;
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let method = field("payment_method").filter(|v| !v.is_empty());
        let known = payment.state["intent"].as_str();
        let Some(method) = method else {
            // The page looks again after the buyer's bank answered.
            let id = known.ok_or("Please enter your card.")?;
            return match self.api.intent(keys.secret, id).await {
                Ok(intent) => Ok(step_of(&intent, &payment.details)),
                Err(e) => Err(e.for_buyer()),
            };
        };
        if !client::is_id(method) {
            return Err("The card could not be read; please enter it again.".into());
        }
        let amount = client::minor_units(payment.amount_cents, &ctx.currency)
            .ok_or("This amount cannot be paid by card.")?;
        let intent = self
            .intent_for(keys.secret, ctx, payment, amount)
            .await
            .map_err(|e| e.for_buyer())?;
        Ok(match self.api.attempt(keys.secret, &intent, method).await {
            Ok(now) => step_of(&now, &payment.details),
            Err(StripeError::Declined {
                message,
                intent: now,
            }) => PaymentStep::Declined(
                kept_of(now.as_deref().unwrap_or(&intent), &payment.details),
                message,
            ),
            // The intent is kept all the same: the next try goes on with it, and finds it
            // paid if the charge went through unanswered.
            Err(e) => PaymentStep::Declined(kept_of(&intent, &payment.details), e.for_buyer()),
        })
    }

    async fn cancel_payment(
        &self,
        ctx: &PaymentContext,
        payment: &PaymentRecord,
    ) -> Result<(), String> {
        let (Some(keys), Some(id)) = (settings::Keys::of(ctx), payment.state["intent"].as_str())
        else {
            return Ok(());
        };
        match self.api.cancel(keys.secret, id).await {
            Ok(_) => Ok(()),
            Err(_) => match self.api.intent(keys.secret, id).await {
                Ok(i) if i.status == "succeeded" || i.status == "processing" => Err(
                    "This payment was made at Stripe; refund it instead of canceling it.".into(),
                ),
                Ok(_) => Ok(()),
                Err(e) => Err(e.for_organizer()),
            },
        }
    }

    async fn refund(
        &self,
        ctx: &PaymentContext,
        payment: &PaymentRecord,
        amount_cents: i64,
        reference: &str,
    ) -> Result<Value, String> {
        let keys = settings::Keys::of(ctx).ok_or(NOT_SET_UP)?;
        let id = payment.state["intent"]
            .as_str()
            .ok_or("This payment was not made through Stripe.")?;
        let amount = client::minor_units(amount_cents, &ctx.currency)
            .ok_or("This amount cannot be refunded by card.")?;
        let refund = self
            .api
            .refund(keys.secret, id, amount, reference)
            .await
            .map_err(|e| e.for_organizer())?;
        match refund["status"].as_str() {
            Some("failed" | "canceled") => Err(format!(
                "Stripe did not make the refund: {}.",
                refund["failure_reason"]
                    .as_str()
                    .unwrap_or("no reason given")
            )),
            _ => Ok(json!({
                "id": refund["id"],
                "status": refund["status"],
                "amount": refund["amount"],
            })),
        }
    }

    fn can_refund(&self) -> bool {
        true
    }

    fn takes_notices(&self) -> bool {
        true
    }

    fn notice_payment(&self, body: &[u8]) -> Option<PaymentAddress> {
        notices::address(body)
    }

    async fn read_notice(
        &self,
        ctx: &PaymentContext,
        payment: &PaymentRecord,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<Notice, String> {
        let secret = settings::text(ctx, settings::WEBHOOK_SECRET)
            .ok_or("Stripe's notices are not set up for this event.")?;
        let signature = headers
            .iter()
            .find(|(k, _)| k == "stripe-signature")
            .map(|(_, v)| v.as_str())
            .ok_or("The notice is not signed.")?;
        notices::verify(secret, signature, body, chrono::Utc::now().timestamp())?;
        let keys = settings::Keys::of(ctx).ok_or(NOT_SET_UP)?;
        notices::read(&self.api, keys.secret, body, ctx, payment).await
    }
}

const NOT_SET_UP: &str = "Card payments are not set up for this event.";

/// What a PaymentIntent's status means for the payment.
fn step_of(intent: &Intent, before: &Value) -> PaymentStep {
    let kept = kept_of(intent, before);
    match intent.status.as_str() {
        "succeeded" => PaymentStep::Paid(kept),
        "processing" => PaymentStep::Pending(kept, "Your payment is being processed.".into()),
        "requires_action" => PaymentStep::Action(kept),
        "canceled" => PaymentStep::Declined(kept, "The payment was canceled.".into()),
        _ => {
            let message = intent
                .error
                .clone()
                .unwrap_or_else(|| "Your card was declined.".into());
            PaymentStep::Declined(kept, message)
        }
    }
}

/// The payment's details (pretix's `id` and `payment_method`, with the card's brand and last
/// four digits) and the provider's own state (the intent, its status, its client secret
/// while the buyer's bank must be asked).
fn kept_of(intent: &Intent, before: &Value) -> Kept {
    let card = |key: &str| {
        intent
            .card
            .as_ref()
            .and_then(|c| c[key].as_str().map(Value::from))
            .unwrap_or_else(|| before[key].clone())
    };
    Kept {
        details: json!({
            "id": intent.id,
            "payment_method": intent.payment_method,
            "brand": card("brand"),
            "last4": card("last4"),
        }),
        state: json!({
            "intent": intent.id,
            "status": intent.status,
            "client_secret": (intent.status == "requires_action").then_some(&intent.client_secret),
        }),
    }
}
