//! `banktransfer`: customers pay by bank transfer to the account in the plugin's settings,
//! quoting a reference that each payment gets; the organizer imports the bank's
//! transactions, and those that match an open payment mark their orders paid: per event
//! (`plugins/banktransfer/import/`), or as pretix's `bankimportjobs` at the organizer's
//! root ([`jobs`]), where pretix-banktool uploads statements.
//!
//! The worked example of a compiled-in plugin: settings with their own validation
//! ([`iban`]), a payment provider, and an endpoint written with poem-openapi like the
//! core's, using the core's authentication, permissions, body validation and lifecycle.

mod entities;
pub mod iban;
mod import;
mod jobs;
mod matching;

use std::sync::Arc;

use serde_json::{Value, json};
use tessera::Plugin;
use tessera::domain::settings::{Level, SettingDef, SettingType};
use tessera::http::Money;
use tessera::plugin::payment::{CreatedPayment, PaymentContext, PaymentProvider};
use tessera::plugin::{PluginApi, PluginLevel};

/// The plugin's name, and its provider's identifier.
pub const NAME: &str = "banktransfer";

/// The bank transfer plugin.
#[derive(Debug, Default)]
pub struct BankTransfer;

impl Plugin for BankTransfer {
    fn name(&self) -> &str {
        NAME
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn description(&self) -> &str {
        "Payment by bank transfer, with an import of bank transactions"
    }

    fn pretix_name(&self) -> Option<&str> {
        Some("pretix.plugins.banktransfer")
    }

    /// Per event for the payment provider; the organizer's bank imports
    /// (`bankimportjobs/`) always, as pretix's.
    fn level(&self) -> PluginLevel {
        PluginLevel::Both
    }

    /// The account and reference of the payments. Per event only, as pretix keeps payment
    /// provider settings: a value on the organizer would send the customers of every event
    /// to one account.
    fn settings(&self) -> Vec<SettingDef> {
        let settings = vec![
            SettingDef::new(
                "banktransfer_iban",
                // The longest IBAN has 34 characters; printed in groups of four, 42.
                SettingType::Text { max_length: 50 },
                json!(""),
                "IBAN",
                "The account customers transfer to.",
            )
            .validate(|v| text(v).map_or(Ok(()), iban::check)),
            SettingDef::new(
                "banktransfer_bic",
                // 8 or 11 characters; a little room for spaces, which the check refuses.
                SettingType::Text { max_length: 20 },
                json!(""),
                "BIC",
                "The bank's BIC (SWIFT code).",
            )
            .validate(|v| text(v).map_or(Ok(()), iban::check_bic)),
            SettingDef::new(
                "banktransfer_account_holder",
                // As pretix's bank transfer plugin: a name, like its 255-character fields.
                SettingType::Text { max_length: 255 },
                json!(""),
                "Account holder",
                "The name the account is held in.",
            ),
            SettingDef::new(
                "banktransfer_reference_prefix",
                SettingType::Text { max_length: 20 },
                json!(""),
                "Reference prefix",
                "Put before each payment's reference, e.g. the organizer's short name.",
            )
            .validate(|v| {
                let ok = |c: char| c.is_ascii_alphanumeric() || c == '-';
                match text(v) {
                    Some(p) if p.len() > 20 || !p.chars().all(ok) => {
                        Err("Use at most 20 letters, digits or \"-\".".into())
                    }
                    _ => Ok(()),
                }
            }),
        ];
        settings
            .into_iter()
            .map(|s| s.level(Level::Event))
            .collect()
    }

    fn payment_providers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        vec![Arc::new(BankTransferProvider)]
    }

    fn api(&self) -> Option<PluginApi> {
        Some(PluginApi::new((import::ImportApi, jobs::JobsApi)))
    }
}

/// A non-empty string value.
fn text(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

/// The bank transfer payment provider.
#[derive(Debug)]
struct BankTransferProvider;

/// The reference a payment of an order is quoted by: the prefix, the event and the order.
pub fn reference(prefix: &str, event: &str, order: &str) -> String {
    format!("{prefix}{event}-{order}").to_uppercase()
}

/// What the buyer is asked to do, naming only the account details that are set.
fn instructions(amount: &str, holder: &str, iban: &str, bic: &str, reference: &str) -> String {
    let mut account = Vec::new();
    if !holder.is_empty() {
        account.push(holder.to_owned());
    }
    account.push(format!("IBAN {iban}"));
    if !bic.is_empty() {
        account.push(format!("BIC {bic}"));
    }
    format!(
        "Please transfer {amount} to {}, quoting the reference {reference}.",
        account.join(", ")
    )
}

#[async_trait::async_trait]
impl PaymentProvider for BankTransferProvider {
    fn identifier(&self) -> &str {
        NAME
    }

    fn name(&self) -> &str {
        "Bank transfer"
    }

    /// Offered once the account is configured.
    fn is_available(&self, ctx: &PaymentContext) -> bool {
        ctx.settings
            .get("banktransfer_iban")
            .and_then(text)
            .is_some()
    }

    async fn create_payment(&self, ctx: &PaymentContext) -> Result<CreatedPayment, String> {
        let setting = |key: &str| {
            ctx.settings
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let reference = reference(
            &setting("banktransfer_reference_prefix"),
            &ctx.event,
            &ctx.order_code,
        );
        let (iban, bic, holder) = (
            iban::printable(&setting("banktransfer_iban")),
            setting("banktransfer_bic"),
            setting("banktransfer_account_holder"),
        );
        let amount = Money(ctx.amount_cents);
        Ok(CreatedPayment {
            payment_url: None,
            instructions: instructions(
                &format!("{amount} {}", ctx.currency),
                &holder,
                &iban,
                &bic,
                &reference,
            ),
            details: json!({
                "reference": reference,
                "iban": iban,
                "bic": bic,
                "account_holder": holder,
                "amount": amount.to_decimal_string(),
            }),
        })
    }
}
