//! Stripe's notices (webhook events): which payment one is about, its signature, and what it
//! says. Signatures as Stripe documents them: the header `Stripe-Signature: t=...,v1=...`
//! (several `v1` while a secret is rolled), an HMAC-SHA256 of `{t}.{body}` with the
//! endpoint's secret, compared in constant time; older than five minutes is refused.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use tessera::domain::extensions::payments::{
    Notice, NoticeChange, PaymentAddress, PaymentRecord, ProviderRefund,
};

use crate::client::Intent;

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

/// What a checked notice says about `payment`: a PaymentIntent's new status, or a charge's
/// refunds. Notices about another intent than the payment's, and events the provider does
/// not follow, change nothing.
pub fn read(body: &[u8], payment: &PaymentRecord, currency: &str) -> Result<Notice, String> {
    let event: Value = serde_json::from_slice(body).map_err(|_| "The notice is not JSON.")?;
    let id = event["id"]
        .as_str()
        .filter(|id| !id.is_empty() && id.len() <= 255)
        .ok_or("The notice has no ID.")?
        .to_owned();
    let object = &event["data"]["object"];
    // The payment's intent, or any when the payment has none yet (the page's answer was
    // lost): the metadata named this payment, and the signature vouches for them.
    let ours = |intent: Option<&str>| match payment.state["intent"].as_str() {
        Some(known) => intent == Some(known),
        None => intent.is_some(),
    };
    let change = match event["type"].as_str().unwrap_or_default() {
        "payment_intent.succeeded"
        | "payment_intent.payment_failed"
        | "payment_intent.processing"
        | "payment_intent.canceled" => match Intent::of(object) {
            Some(intent) if ours(Some(&intent.id)) => {
                NoticeChange::Step(crate::step_of(&intent, &payment.details))
            }
            _ => NoticeChange::Nothing,
        },
        "charge.refunded" if ours(object["payment_intent"].as_str()) => {
            NoticeChange::Refunded(refunds(object, currency))
        }
        _ => NoticeChange::Nothing,
    };
    Ok(Notice { id, change })
}

/// The refunds of a charge that went through or are on their way.
fn refunds(charge: &Value, currency: &str) -> Vec<ProviderRefund> {
    charge["refunds"]["data"]
        .as_array()
        .into_iter()
        .flatten()
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
