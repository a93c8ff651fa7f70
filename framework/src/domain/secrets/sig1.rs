//! pretix's signed ticket secrets (`pretix_sig1`): a small protobuf message
//! `Ticket {string seed = 1; int64 item = 2; int64 variation = 3; int64 subevent = 4;
//! optional int64 validFromUnixTime = 5; optional int64 validUntilUnixTime = 6}` signed with
//! the event's Ed25519 key, laid out as `0x01`, the payload's length and the signature's
//! length (each a big-endian u16), the payload, the signature; base64, then reversed.
//! Scanners verify it offline with the public key from the event's `valid_keys`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signer, SigningKey};

use super::TicketFacts;
use crate::domain::tokens::random_from;

/// The version byte of the layout.
const VERSION: u8 = 0x01;

/// Characters of the random seed (9 of them, as pretix).
const SEED_CHARSET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An `int64` field (wire type 0); proto3 leaves zeros out unless the field is `optional`.
fn int_field(out: &mut Vec<u8>, number: u8, value: i64, optional: bool) {
    if value != 0 || optional {
        out.push(number << 3);
        varint(out, value as u64);
    }
}

/// The payload: the protobuf `Ticket` message.
pub fn payload(seed: &str, facts: TicketFacts) -> Vec<u8> {
    let mut out = Vec::with_capacity(40);
    if !seed.is_empty() {
        out.push((1 << 3) | 2);
        varint(&mut out, seed.len() as u64);
        out.extend_from_slice(seed.as_bytes());
    }
    int_field(&mut out, 2, facts.item, false);
    int_field(&mut out, 3, facts.variation.unwrap_or(0), false);
    int_field(&mut out, 4, facts.subevent.unwrap_or(0), false);
    out
}

/// The event's signing key from its stored form (base64 of the 32-byte seed).
fn signing_key(private_key: &str) -> Option<SigningKey> {
    let seed: [u8; 32] = STANDARD.decode(private_key).ok()?.try_into().ok()?;
    Some(SigningKey::from_bytes(&seed))
}

/// A new signed secret for a ticket, or `None` when the stored key is unusable.
pub fn sign(private_key: &str, facts: TicketFacts) -> Option<String> {
    let key = signing_key(private_key)?;
    let payload = payload(&random_from(SEED_CHARSET, 9), facts);
    let signature = key.sign(&payload).to_bytes();
    let mut raw = vec![VERSION];
    raw.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    raw.extend_from_slice(&(signature.len() as u16).to_be_bytes());
    raw.extend_from_slice(&payload);
    raw.extend_from_slice(&signature);
    Some(STANDARD.encode(raw).chars().rev().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, Verifier, VerifyingKey};

    /// The payload of a secret whose signature the raw 32-byte public key verifies (what a
    /// scanner does offline; the service itself only signs).
    fn verify(secret: &str, public_key: &[u8; 32]) -> Option<Vec<u8>> {
        let reversed: String = secret.chars().rev().collect();
        let raw = STANDARD.decode(reversed).ok()?;
        if raw.first() != Some(&VERSION) || raw.len() < 5 {
            return None;
        }
        let payload_len = u16::from_be_bytes([raw[1], raw[2]]) as usize;
        let signature_len = u16::from_be_bytes([raw[3], raw[4]]) as usize;
        let payload = raw.get(5..5 + payload_len)?;
        let signature = raw.get(5 + payload_len..5 + payload_len + signature_len)?;
        let key = VerifyingKey::from_bytes(public_key).ok()?;
        let signature = Signature::from_slice(signature).ok()?;
        key.verify(payload, &signature).ok()?;
        Some(payload.to_vec())
    }

    #[test]
    fn a_signed_secret_verifies_with_the_events_public_key_and_carries_its_facts() {
        let (_, private) = crate::domain::signing::generate();
        let facts = TicketFacts {
            item: 300,
            variation: None,
            subevent: Some(5),
        };
        let secret = sign(&private, facts).expect("key");
        let key = signing_key(&private).expect("key");
        let payload = verify(&secret, key.verifying_key().as_bytes()).expect("valid");
        // seed (tag 0x0a, 9 bytes), item 300 (0x10, varint ac 02), subevent 5 (0x20 05).
        assert_eq!(payload[..2], [0x0a, 9]);
        assert_eq!(payload[11..], [0x10, 0xac, 0x02, 0x20, 0x05]);
        let mut tampered: Vec<char> = secret.chars().collect();
        tampered[10] = if tampered[10] == 'A' { 'B' } else { 'A' };
        let tampered: String = tampered.into_iter().collect();
        assert!(verify(&tampered, key.verifying_key().as_bytes()).is_none());
    }
}
