//! Payment providers: the ways an order can be paid. The core has `manual` and, for orders
//! that cost nothing, `free`; plugins add more.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

/// What a provider knows of the order and payment it acts on.
#[derive(Debug, Clone)]
pub struct PaymentContext {
    /// The organizer's slug.
    pub organizer: String,
    /// The event's slug.
    pub event: String,
    /// The order code.
    pub order_code: String,
    /// The amount to pay, in cents.
    pub amount_cents: i64,
    /// The event's currency.
    pub currency: String,
    /// Where the order was placed, e.g. `web`.
    pub sales_channel: String,
    /// The customer's e-mail, if known.
    pub email: Option<String>,
    /// The end of the payment term.
    pub expires: Option<DateTime<Utc>>,
    /// The event's effective settings (core and plugin keys).
    pub settings: BTreeMap<&'static str, Value>,
    /// The page of the service where this payment can be made, unless the provider has its
    /// own.
    pub default_payment_url: String,
}

/// A payment as a provider created it.
#[derive(Debug, Clone, Default)]
pub struct CreatedPayment {
    /// Where the customer pays; `None` keeps the service's own payment page.
    pub payment_url: Option<String>,
    /// Provider-specific details, shown in the API's payment `details`.
    pub details: Value,
    /// Instructions for the customer, shown on the payment page and in e-mails.
    pub instructions: String,
}

/// A way to pay.
#[async_trait::async_trait]
pub trait PaymentProvider: Send + Sync + 'static {
    /// The identifier orders and payments name it by, e.g. `banktransfer`.
    fn identifier(&self) -> &str;

    /// A name for people.
    fn name(&self) -> &str;

    /// Whether an order can be paid this way (amount, sales channel, dates...).
    fn is_available(&self, _ctx: &PaymentContext) -> bool {
        true
    }

    /// Creates a payment of an order; an `Err` is a message for the client.
    async fn create_payment(&self, ctx: &PaymentContext) -> Result<CreatedPayment, String>;

    /// A payment of this provider is being confirmed (through the API, or by the
    /// provider's own endpoint); an `Err` refuses the confirmation.
    async fn confirm_payment(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
    ) -> Result<(), String> {
        Ok(())
    }

    /// An open payment of this provider is being canceled with its order; an `Err` refuses
    /// the cancellation.
    async fn cancel_payment(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
    ) -> Result<(), String> {
        Ok(())
    }

    /// Pays `amount_cents` of a confirmed payment back; the answer is kept in the payment's
    /// details. Providers that cannot refund by themselves keep this default.
    async fn refund(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _amount_cents: i64,
    ) -> Result<Value, String> {
        Err("This payment method cannot refund payments.".into())
    }
}

/// A stored payment as a provider sees it.
#[derive(Debug, Clone)]
pub struct PaymentRecord {
    /// The payment's number within its order.
    pub local_id: i32,
    /// Its amount, in cents.
    pub amount_cents: i64,
    /// What the provider gave when creating it (`CreatedPayment::details`).
    pub details: Value,
}

/// The core's provider for payments handled outside the service and confirmed through the
/// API.
#[derive(Debug, Default)]
pub struct ManualPayment;

#[async_trait::async_trait]
impl PaymentProvider for ManualPayment {
    fn identifier(&self) -> &str {
        "manual"
    }

    fn name(&self) -> &str {
        "Manual payment"
    }

    async fn create_payment(&self, ctx: &PaymentContext) -> Result<CreatedPayment, String> {
        Ok(CreatedPayment {
            payment_url: None,
            details: json!({}),
            instructions: format!(
                "Please pay {} {} as agreed with the organizer, quoting order {}.",
                crate::values::money::Money(ctx.amount_cents),
                ctx.currency,
                ctx.order_code
            ),
        })
    }

    /// Money paid outside the service goes back outside it: the refund is recorded.
    async fn refund(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _amount_cents: i64,
    ) -> Result<Value, String> {
        Ok(json!({}))
    }
}

/// The core's provider for orders that cost nothing, pretix's `free`: such an order is paid
/// as it is placed (or approved) with one confirmed payment of this provider. Naming it for
/// an order with a total is refused ([`FREE_REFUSED`]).
#[derive(Debug, Default)]
pub struct FreeOrder;

impl FreeOrder {
    /// The identifier payments name it by.
    pub const IDENTIFIER: &'static str = "free";
}

/// Why an order with a total cannot be paid with [`FreeOrder`], in pretix's words.
pub const FREE_REFUSED: &str = "You cannot use the \"free\" payment provider for non-free orders.";

#[async_trait::async_trait]
impl PaymentProvider for FreeOrder {
    fn identifier(&self) -> &str {
        Self::IDENTIFIER
    }

    fn name(&self) -> &str {
        "Free of charge"
    }

    fn is_available(&self, ctx: &PaymentContext) -> bool {
        ctx.amount_cents == 0
    }

    async fn create_payment(&self, _ctx: &PaymentContext) -> Result<CreatedPayment, String> {
        Ok(CreatedPayment::default())
    }
}
