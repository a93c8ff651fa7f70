//! Stripe's notices (webhook events): which payment one is about, its signature, and what it
//! says. Signatures as Stripe documents them: the header `Stripe-Signature: t=...,v1=...`
//! (several `v1` while a secret is rolled), an HMAC-SHA256 of `{t}.{body}` with the
//! endpoint's secret, compared in constant time; older than five minutes is refused.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use tessera::domain::extensions::payments::{
    Notice, NoticeChange, PaymentAddress, PaymentContext, PaymentRecord, ProviderRefund,
};

use crate::client::{self, Stripe};

/// How old a signed notice may be, in seconds: Stripe's libraries' tolerance.
pub const TOLERANCE_SECS: i64 = 300;

/// The payment a notice names in its object's metadata (set when the intent was made),
/// before anything of it is trusted.
pub fn address(body: &[u8]) -> Option<PaymentAddress> {
    let event: Value = serde_json::from_slice(body).ok()?;
    let meta = &event["data"]["object"]["metadata"];
    // Slugs and codes: short, printable (a NUL would not even reach the database).
    let text = |k: &str| {
        meta[k]
            .as_str()
            .filter(|v| !v.is_empty() && v.len() <= 190 && !v.chars().any(char::is_control))
            .map(str::to_owned)
    };
    Some(PaymentAddress {
        organizer: text("organizer")?,
        event: text("event")?,
        order_code: text("order")?,
        local_id: meta["payment"].as_str()?.parse().ok()?,
    })
}

/// Checks the `Stripe-Signature` header of `body` against `secret` at `now` (Unix seconds).
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64) -> Result<(), String> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", s)) => signatures.push(s),
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or("The signature has no timestamp.")?;
    if signatures.is_empty() {
        return Err("The signature has no v1 scheme.".into());
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .map_err(|_| "The signing secret cannot be used.")?;
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = hex(&mac.finalize().into_bytes());
    let matches = signatures
        .iter()
        .any(|s| bool::from(s.as_bytes().ct_eq(expected.as_bytes())));
    if !matches {
        return Err("The signature does not match.".into());
    }
    if timestamp < now - TOLERANCE_SECS {
        return Err("The notice is too old.".into());
    }
    Ok(())
}

/// What a checked notice says about `payment`. As pretix, the notice is only a cue: what
/// it is about is read from Stripe as it stands (the notice's own copy is written in the
/// endpoint's API version, and a leaked signing secret then forges nothing). A PaymentIntent
/// event gives the intent's status; an intent of the payment other than the one it knows
/// that was paid is money arrived ([`NoticeChange::Arrived`]); a charge's refund event gives
/// the intent's refunds. Other events change nothing.
pub async fn read(
    api: &Stripe,
    key: &str,
    body: &[u8],
    ctx: &PaymentContext,
    payment: &PaymentRecord,
) -> Result<Notice, String> {
    let event: Value = serde_json::from_slice(body).map_err(|_| "The notice is not JSON.")?;
    let id = event["id"]
        .as_str()
        .filter(|id| !id.is_empty() && id.len() <= 255)
        .ok_or("The notice has no ID.")?
        .to_owned();
    let object = &event["data"]["object"];
    let known = payment.state["intent"].as_str();
    let unreachable = |e: crate::client::StripeError| e.for_organizer();
    let change = match event["type"].as_str().unwrap_or_default() {
        "payment_intent.succeeded"
        | "payment_intent.payment_failed"
        | "payment_intent.processing"
        | "payment_intent.canceled" => {
            let Some(named) = object["id"].as_str().filter(|i| client::is_id(i)) else {
                return Err("The notice names no PaymentIntent.".into());
            };
            let intent = api.intent(key, named).await.map_err(unreachable)?;
            if !names(&intent.metadata, ctx, payment) {
                NoticeChange::Nothing
            } else if known.is_none_or(|k| k == intent.id) {
                NoticeChange::Step(crate::step_of(&intent, &payment.details))
            } else if intent.status == "succeeded" {
                let cents = client::cents(intent.amount, &ctx.currency)
                    .ok_or("The notice's amount cannot be read.")?;
                NoticeChange::Arrived(crate::kept_of(&intent, &Value::Null), cents)
            } else {
                NoticeChange::Nothing
            }
        }
        "charge.refunded" | "charge.refund.updated" => match known {
            Some(k) if object["payment_intent"].as_str() == Some(k) => {
                let listed = api.refunds(key, k).await.map_err(unreachable)?;
                NoticeChange::Refunded(refunds(&listed, &ctx.currency))
            }
            _ => NoticeChange::Nothing,
        },
        _ => NoticeChange::Nothing,
    };
    Ok(Notice { id, change })
}

/// Whether an intent's metadata name this payment.
fn names(metadata: &Value, ctx: &PaymentContext, payment: &PaymentRecord) -> bool {
    metadata["organizer"].as_str() == Some(&ctx.organizer)
        && metadata["event"].as_str() == Some(&ctx.event)
        && metadata["order"].as_str() == Some(&ctx.order_code)
        && metadata["payment"].as_str() == Some(&payment.local_id.to_string())
}

/// The refunds that went through or are on their way.
fn refunds(listed: &[Value], currency: &str) -> Vec<ProviderRefund> {
    listed
        .iter()
        .filter(|r| matches!(r["status"].as_str(), Some("succeeded" | "pending")))
        .filter_map(|r| {
            Some(ProviderRefund {
                reference: r["id"].as_str()?.to_owned(),
                amount_cents: crate::client::cents(r["amount"].as_i64()?, currency)?,
                details: json!({"status": r["status"], "amount": r["amount"]}),
            })
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::{hex, verify};
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    fn sign(secret: &str, t: i64, body: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
        mac.update(format!("{t}.{body}").as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    #[test]
    fn a_signature_of_the_body_with_the_secret_is_accepted_within_five_minutes() {
        let body = r#"{"id":"evt_1"}"#;
        let header = format!("t=1000,v1={}", sign("whsec_a", 1000, body));
        assert!(verify("whsec_a", &header, body.as_bytes(), 1200).is_ok());
        assert!(verify("whsec_a", &header, body.as_bytes(), 1301).is_err());
        assert!(verify("whsec_b", &header, body.as_bytes(), 1200).is_err());
        assert!(verify("whsec_a", &header, b"{}", 1200).is_err());
    }

    #[test]
    fn any_of_several_v1_signatures_may_match_and_other_schemes_are_ignored() {
        let body = "{}";
        let header = format!("t=5,v0=abc,v1=00ff,v1={}", sign("whsec_a", 5, body));
        assert!(verify("whsec_a", &header, body.as_bytes(), 5).is_ok());
        assert!(verify("whsec_a", "t=5,v0=abc", body.as_bytes(), 5).is_err());
        assert!(verify("whsec_a", "v1=abc", body.as_bytes(), 5).is_err());
    }
}
