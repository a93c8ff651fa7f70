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

    /// Whether [`PaymentProvider::refund`] can give money back; a refund is not even asked
    /// of a provider that cannot.
    fn can_refund(&self) -> bool {
        false
    }

    /// Whether a refund through this provider gives the money back by itself (a service
    /// pays it out), so that a buyer's cancellation may ask for it unattended. A provider
    /// whose refunds only record money given back by hand says no.
    fn refunds_by_itself(&self) -> bool {
        self.can_refund()
    }

    /// Pays `amount_cents` of a confirmed payment back; the answer is kept in the refund's
    /// details. `reference` names this refund and is the same when it is asked again (a
    /// provider whose service takes idempotency keys passes it on, so that an answer lost on
    /// the way does not refund twice). Called outside any transaction. Providers that cannot
    /// refund by themselves keep this default.
    async fn refund(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _amount_cents: i64,
        _reference: &str,
    ) -> Result<Value, String> {
        Err("This payment method cannot refund payments.".into())
    }

    /// What the service's payment page shows to pay an open payment of this provider (a
    /// card form, say); `None` shows the instructions only.
    fn payment_form(&self, _ctx: &PaymentContext, _payment: &PaymentRecord) -> Option<PaymentForm> {
        None
    }

    /// The buyer sent the payment page's form (its fields, the service's own left out).
    /// Called for an open payment, one call per payment at a time; an `Err` is a message
    /// for the buyer and changes nothing.
    async fn pay(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _form: &[(String, String)],
    ) -> Result<PaymentStep, String> {
        Err("This payment method is not paid on this page.".into())
    }

    /// Whether the provider takes notices at `/_{identifier}/webhook/`.
    fn takes_notices(&self) -> bool {
        false
    }

    /// Which payment a notice (a request to `/_{identifier}/webhook/`) says it is about,
    /// read from its body before anything is trusted; `None` refuses it.
    fn notice_payment(&self, _body: &[u8]) -> Option<PaymentAddress> {
        None
    }

    /// Checks a notice about this payment (its signature, with the event's settings) and
    /// says what it changes, asking its service where the notice alone is not to be
    /// trusted; an `Err` refuses it and changes nothing. `headers` are named in lower case.
    /// Called outside any transaction.
    async fn read_notice(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _headers: &[(String, String)],
        _body: &[u8],
    ) -> Result<Notice, String> {
        Err("This payment method takes no notices.".into())
    }
}

/// A part of the payment page a provider brings: a template the service renders with
/// autoescaping, and the outside addresses the page may then reach.
#[derive(Debug, Clone, Default)]
pub struct PaymentForm {
    /// A minijinja template (HTML). Besides `values`, it sees `action` (where its form
    /// posts), `csrf_token` (to send as the field `csrfmiddlewaretoken`), `nonce` (for its inline
    /// `<script nonce>`), `amount` and `currency`.
    pub template: &'static str,
    /// The template's own values, as `values`.
    pub values: Value,
    /// Scripts the page loads (full URLs); their origins may run scripts.
    pub scripts: Vec<String>,
    /// Addresses whose origins the page's scripts may call (`connect-src`) and frame
    /// (`frame-src`).
    pub origins: Vec<String>,
}

/// Where a payment's provider is after the buyer paid on the payment page or a notice came.
#[derive(Debug, Clone)]
pub enum PaymentStep {
    /// Paid: the payment is confirmed and the order paid.
    Paid(Kept),
    /// The provider is still working on it (a transfer clearing, say); the payment stays
    /// open and the page says `message`.
    Pending(Kept, String),
    /// The buyer must act in the browser (3-D Secure, say): the payment page shows the
    /// form again, which sees the kept state.
    Action(Kept),
    /// Declined; the payment stays open for another try, and the page says `message`.
    Declined(Kept, String),
}

/// What a provider keeps of a payment: `details` appear in the API's payment `details`;
/// `state` only the provider sees again ([`PaymentRecord::state`]).
#[derive(Debug, Clone, Default)]
pub struct Kept {
    /// Shown to API clients: nothing secret.
    pub details: Value,
    /// The provider's own: client secrets, whole answers of its service.
    pub state: Value,
}

/// A payment as a notice names it, before it is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentAddress {
    /// The organizer's slug.
    pub organizer: String,
    /// The event's slug.
    pub event: String,
    /// The order's code.
    pub order_code: String,
    /// The payment's number within the order.
    pub local_id: i32,
}

/// A checked notice from a provider.
#[derive(Debug, Clone)]
pub struct Notice {
    /// The provider's ID of the notice: a notice is acted on once.
    pub id: String,
    /// What it changes.
    pub change: NoticeChange,
}

/// What a notice changes.
#[derive(Debug, Clone)]
pub enum NoticeChange {
    /// The payment was paid (or is pending, declined: as on the payment page).
    Step(PaymentStep),
    /// Money of the payment was given back at the provider: these refunds, each recorded
    /// once by its `reference`.
    Refunded(Vec<ProviderRefund>),
    /// Money for the payment's order arrived through another attempt than the one the
    /// payment knows (made again after an answer was lost on the way): it pays the payment
    /// while that is open and of this amount (in cents), else it is recorded as a payment of
    /// its own, which the organizer sees and may refund.
    Arrived(Kept, i64),
    /// Nothing to do (an event the service does not follow).
    Nothing,
}

/// A refund the provider made.
#[derive(Debug, Clone)]
pub struct ProviderRefund {
    /// The provider's ID of the refund.
    pub reference: String,
    /// How much, in cents.
    pub amount_cents: i64,
    /// Kept as the refund's details.
    pub details: Value,
}

/// A stored payment as a provider sees it.
#[derive(Debug, Clone)]
pub struct PaymentRecord {
    /// The payment's number within its order.
    pub local_id: i32,
    /// Its amount, in cents.
    pub amount_cents: i64,
    /// What the provider gave when creating it (`CreatedPayment::details`), or kept since.
    pub details: Value,
    /// What the provider kept for itself ([`Kept::state`]).
    pub state: Value,
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
    fn can_refund(&self) -> bool {
        true
    }

    /// The organizer gives the money back, by hand.
    fn refunds_by_itself(&self) -> bool {
        false
    }

    async fn refund(
        &self,
        _ctx: &PaymentContext,
        _payment: &PaymentRecord,
        _amount_cents: i64,
        _reference: &str,
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
