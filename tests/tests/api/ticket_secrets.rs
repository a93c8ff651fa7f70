//! Signed ticket secrets (`pretix_sig1`) verified the way offline scanners verify them, and
//! the secrets scanners must refuse: revoked (re-signed or canceled) and blocked.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, shop};

async fn signed_shop() -> Shop {
    let s = shop(None).await;
    let r = s
        .app
        .patch(
            &format!("{EVENT}/settings/"),
            &s.token,
            json!({"ticket_secret_generator": "pretix_sig1"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    s
}

/// The raw keys of the event's `valid_keys`, decoded as a scanner does: base64, PEM, strip
/// the armour, base64, DER bytes 12..44.
async fn scanner_keys(s: &Shop) -> Vec<VerifyingKey> {
    let ev = s.app.get(&format!("{EVENT}/"), &s.token).await;
    assert_eq!(ev.status, 200, "{}", ev.body);
    ev.body["valid_keys"]["pretix_sig1"]
        .as_array()
        .expect("pretix_sig1 keys")
        .iter()
        .map(|k| {
            let pem = String::from_utf8(STANDARD.decode(k.as_str().expect("key")).expect("b64"))
                .expect("PEM");
            let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
            let der = STANDARD.decode(body).expect("DER");
            let raw: [u8; 32] = der[12..44].try_into().expect("32 bytes");
            VerifyingKey::from_bytes(&raw).expect("Ed25519 key")
        })
        .collect()
}

/// Verifies a secret: reverse, base64, version 1, lengths, signature over the payload.
fn verifies(secret: &str, keys: &[VerifyingKey]) -> Option<Vec<u8>> {
    let raw = STANDARD
        .decode(secret.chars().rev().collect::<String>())
        .ok()?;
    if raw.first() != Some(&1) {
        return None;
    }
    let payload_len = u16::from_be_bytes([raw[1], raw[2]]) as usize;
    let signature_len = u16::from_be_bytes([raw[3], raw[4]]) as usize;
    let payload = raw.get(5..5 + payload_len)?;
    let signature =
        Signature::from_slice(raw.get(5 + payload_len..5 + payload_len + signature_len)?).ok()?;
    keys.iter()
        .any(|k| k.verify(payload, &signature).is_ok())
        .then(|| payload.to_vec())
}

fn secret_of(order: &Value) -> String {
    order["positions"][0]["secret"]
        .as_str()
        .expect("secret")
        .to_owned()
}

async fn revoked(s: &Shop, query: &str) -> Value {
    let r = s
        .app
        .get(&format!("{EVENT}/revokedsecrets/{query}"), &s.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("x-page-generated").is_some());
    r.body
}

fn secrets(body: &Value) -> Vec<&str> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["secret"].as_str().expect("secret"))
        .collect()
}

#[tokio::test]
async fn a_signed_secret_verifies_with_the_public_key_from_valid_keys_as_a_scanner_does() {
    let s = signed_shop().await;
    let order = s.ordered(1, json!({})).await;
    let secret = secret_of(&order);
    let keys = scanner_keys(&s).await;
    let payload = verifies(&secret, &keys)
        .unwrap_or_else(|| panic!("a valid signature: {secret} with {} keys", keys.len()));
    // Ticket.seed (field 1, 9 characters), then Ticket.item (field 2, varint).
    assert_eq!(payload[..2], [0x0a, 9]);
    assert_eq!(payload[11], 0x10);
    let mut item = 0u64;
    for (i, b) in payload[12..].iter().enumerate() {
        item |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            break;
        }
    }
    assert_eq!(item as i64, s.ticket);
    let mut forged: Vec<char> = secret.chars().collect();
    let at = forged.len() / 2;
    forged[at] = if forged[at] == 'A' { 'B' } else { 'A' };
    assert!(verifies(&forged.into_iter().collect::<String>(), &keys).is_none());
}

#[tokio::test]
async fn random_secrets_are_the_default_and_are_not_signed() {
    let s = shop(None).await;
    let secret = secret_of(&s.ordered(1, json!({})).await);
    assert_eq!(secret.len(), 32);
    assert!(verifies(&secret, &scanner_keys(&s).await).is_none());
}

#[tokio::test]
async fn re_signing_a_ticket_revokes_its_old_secret() {
    let s = signed_shop().await;
    let order = s.ordered(1, json!({})).await;
    let old = secret_of(&order);
    let code = order["code"].as_str().expect("code");
    let before = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    assert!(secrets(&revoked(&s, "").await).is_empty());

    let r = s.act(code, "regenerate_secrets", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let new = secret_of(&r.body);
    assert_ne!(new, old);
    assert!(verifies(&new, &scanner_keys(&s).await).is_some());
    let feed = revoked(&s, "").await;
    assert_eq!(secrets(&feed), vec![old.as_str()]);
    assert!(feed["results"][0]["id"].is_i64() && feed["results"][0]["created"].is_string());
    let since: String = form_urlencoded::byte_serialize(before.as_bytes()).collect();
    assert_eq!(
        secrets(&revoked(&s, &format!("?created_since={since}")).await),
        vec![old.as_str()]
    );
    let generated = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let later: String = form_urlencoded::byte_serialize(generated.as_bytes()).collect();
    assert!(secrets(&revoked(&s, &format!("?created_since={later}")).await).is_empty());
}

#[tokio::test]
async fn canceling_an_order_revokes_its_secrets_newest_first_by_default() {
    let s = shop(None).await;
    let first = s.ordered(1, json!({})).await;
    let second = s.ordered(1, json!({})).await;
    for o in [&first, &second] {
        let r = s
            .act(
                o["code"].as_str().expect("code"),
                "mark_canceled",
                json!({}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let feed = revoked(&s, "").await;
    assert_eq!(secrets(&feed), vec![secret_of(&second), secret_of(&first)]);
    let oldest = revoked(&s, "?ordering=created").await;
    assert_eq!(
        secrets(&oldest),
        vec![secret_of(&first), secret_of(&second)]
    );
    let wrong = s
        .app
        .get(&format!("{EVENT}/revokedsecrets/?ordering=id"), &s.token)
        .await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    let outsider = s.app.token("acme", &["can_view_vouchers"]).await;
    let refused = s
        .app
        .get(&format!("{EVENT}/revokedsecrets/"), &outsider)
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
}

#[tokio::test]
async fn blocked_secrets_list_blocking_and_unblocking_by_update_time() {
    let s = shop(None).await;
    let a = secret_of(&s.ordered(1, json!({})).await);
    let b = secret_of(&s.ordered(1, json!({})).await);
    let t0 = chrono::Utc::now();
    for secret in [&a, &b] {
        tessera::domain::secrets::set_blocked(&s.app.db, s.event, None, secret, true, t0)
            .await
            .expect("block");
    }
    let t1 = t0 + chrono::TimeDelta::seconds(5);
    tessera::domain::secrets::set_blocked(&s.app.db, s.event, None, &a, false, t1)
        .await
        .expect("unblock");
    let all = s
        .app
        .get(&format!("{EVENT}/blockedsecrets/"), &s.token)
        .await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert!(all.header("x-page-generated").is_some());
    assert_eq!(secrets(&all.body), vec![a.as_str(), b.as_str()]);
    assert_eq!(all.body["results"][0]["blocked"], false);
    assert_eq!(all.body["results"][1]["blocked"], true);
    let since: String = form_urlencoded::byte_serialize(
        (t0 + chrono::TimeDelta::seconds(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            .as_bytes(),
    )
    .collect();
    let changed = s
        .app
        .get(
            &format!("{EVENT}/blockedsecrets/?updated_since={since}"),
            &s.token,
        )
        .await;
    assert_eq!(secrets(&changed.body), vec![a.as_str()]);
}
