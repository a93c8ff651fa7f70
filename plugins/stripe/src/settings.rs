//! pretix 2026.8's settings of its Stripe plugin (per event), and the webhook secret
//! pretix does without (it asks Stripe again instead of checking signatures).

use serde_json::{Value, json};
use tessera::domain::extensions::payments::PaymentContext;
use tessera::domain::settings::{Level, SettingDef, SettingType};

/// Whether Stripe is offered at all: pretix's switch of every provider.
pub const ENABLED: &str = "payment_stripe__enabled";
/// The publishable key (`pk_...`), which the payment page shows.
pub const PUBLISHABLE_KEY: &str = "payment_stripe_publishable_key";
/// The secret key (`sk_...` or a restricted `rk_...`).
pub const SECRET_KEY: &str = "payment_stripe_secret_key";
/// `live` or `test`: which keys are expected.
pub const ENDPOINT: &str = "payment_stripe_endpoint";
/// Whether cards are offered (pretix's methods each have a switch).
pub const METHOD_CARD: &str = "payment_stripe_method_card";
/// pretix's statement descriptor text after the order code.
pub const POSTFIX: &str = "payment_stripe_postfix";
/// The secret Stripe signs notices with (`whsec_...`).
pub const WEBHOOK_SECRET: &str = "payment_stripe_webhook_secret";

/// Most characters of a key: Stripe's are about a hundred.
const KEY_CHARS: usize = 255;

/// The settings the plugin declares.
pub fn all() -> Vec<SettingDef> {
    let key = SettingType::Text {
        max_length: KEY_CHARS,
    };
    let amount = SettingType::Decimal;
    [
        SettingDef::new(
            ENABLED,
            SettingType::Bool,
            json!(false),
            "Enable payment method",
            "Offers card payments through Stripe.",
        ),
        SettingDef::new(
            PUBLISHABLE_KEY,
            key,
            json!(""),
            "Publishable key",
            "Stripe's publishable key, pk_live_... or pk_test_....",
        )
        .validate(|v| prefixed(v, &["pk_"])),
        SettingDef::new(
            SECRET_KEY,
            key,
            json!(""),
            "Secret key",
            "Stripe's secret key, sk_... or a restricted rk_...; never shown again.",
        )
        .validate(|v| prefixed(v, &["sk_", "rk_"]))
        .secret(),
        SettingDef::new(
            ENDPOINT,
            SettingType::Choice(&["live", "test"]),
            json!("live"),
            "Endpoint",
            "live takes live keys only, test takes test keys only.",
        ),
        SettingDef::new(
            METHOD_CARD,
            SettingType::Bool,
            json!(true),
            "Credit card payments",
            "Offers payment by credit card.",
        ),
        SettingDef::new(
            POSTFIX,
            SettingType::Text { max_length: 22 },
            json!(""),
            "Statement descriptor postfix",
            "Text after the order code on the buyer's card statement (letters, digits, \
             spaces, - _ .).",
        )
        .validate(descriptor),
        SettingDef::new(
            "payment_stripe__fee_abs",
            amount,
            json!("0.00"),
            "Additional fee",
            "A fixed fee for paying this way, in the event's currency.",
        ),
        SettingDef::new(
            "payment_stripe__fee_percent",
            amount,
            json!("0.00"),
            "Additional fee in percent",
            "A fee in percent of the amount paid this way.",
        ),
        SettingDef::new(
            "payment_stripe__fee_reverse_calc",
            SettingType::Bool,
            json!(true),
            "Calculate the fee from the total value including the fee",
            "As pretix: the fee is computed so that, after Stripe's cut, the order's total \
             arrives.",
        ),
        SettingDef::new(
            WEBHOOK_SECRET,
            key,
            json!(""),
            "Webhook signing secret",
            "The signing secret of the webhook endpoint at Stripe (whsec_...), which points to \
             /_stripe/webhook/ of this service; never shown again.",
        )
        .validate(|v| prefixed(v, &["whsec_"]))
        .secret(),
    ]
    .into_iter()
    .map(|d| d.level(Level::Event))
    .collect()
}

/// The keys of an event whose Stripe keys are set and fit its endpoint.
pub struct Keys<'a> {
    /// The publishable key.
    pub publishable: &'a str,
    /// The secret key.
    pub secret: &'a str,
    /// Whether they are test keys.
    pub test: bool,
}

impl<'a> Keys<'a> {
    /// The event's keys; `None` unless both are set and both fit the endpoint.
    pub fn of(ctx: &'a PaymentContext) -> Option<Self> {
        let publishable = text(ctx, PUBLISHABLE_KEY)?;
        let secret = text(ctx, SECRET_KEY)?;
        let test = text(ctx, ENDPOINT) == Some("test");
        let mode = if test { "_test_" } else { "_live_" };
        (publishable.contains(mode) && secret.contains(mode)).then_some(Self {
            publishable,
            secret,
            test,
        })
    }
}

/// A text setting, unless empty.
pub fn text<'a>(ctx: &'a PaymentContext, key: &str) -> Option<&'a str> {
    ctx.settings
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A switch.
pub fn flag(ctx: &PaymentContext, key: &str) -> bool {
    ctx.settings.get(key).and_then(Value::as_bool) == Some(true)
}

fn prefixed(value: &Value, prefixes: &[&str]) -> Result<(), String> {
    match value.as_str() {
        Some(s) if s.is_empty() || prefixes.iter().any(|p| s.starts_with(p)) => {
            if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                Ok(())
            } else {
                Err("A key has only letters, digits and underscores.".into())
            }
        }
        _ => Err(format!("The key starts with {}.", prefixes.join(" or "))),
    }
}

fn descriptor(value: &Value) -> Result<(), String> {
    match value.as_str() {
        Some(s)
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || " -_.".contains(c)) =>
        {
            Ok(())
        }
        _ => Err("Use letters, digits, spaces and - _ . only.".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::prefixed;
    use serde_json::json;

    #[test]
    fn keys_are_checked_for_their_prefix_and_characters() {
        assert!(prefixed(&json!("sk_test_abc"), &["sk_", "rk_"]).is_ok());
        assert!(prefixed(&json!(""), &["sk_"]).is_ok());
        assert!(prefixed(&json!("pk_test_abc"), &["sk_", "rk_"]).is_err());
        assert!(prefixed(&json!("sk_test abc"), &["sk_"]).is_err());
    }
}
