//! Key pairs of the default ticket-signature scheme (`pretix_sig1`, Ed25519), in pretix's
//! published form: the base64 of a PEM public key.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::SigningKey;
use rand::RngCore;

/// Name of the scheme under which public keys are listed in `valid_keys`.
pub const SCHEME: &str = "pretix_sig1";

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// A new key pair: (public key as listed in `valid_keys`, private key as stored).
pub fn generate() -> (String, String) {
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    let key = SigningKey::from_bytes(&seed);
    let mut der = SPKI_PREFIX.to_vec();
    der.extend_from_slice(key.verifying_key().as_bytes());
    let pem = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        STANDARD.encode(der)
    );
    (STANDARD.encode(pem), STANDARD.encode(seed))
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    #[test]
    fn the_public_key_is_a_base64_pem_of_the_private_keys_verifying_key() {
        let (public, private) = super::generate();
        let pem = String::from_utf8(STANDARD.decode(public).expect("base64")).expect("utf8");
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = STANDARD.decode(body).expect("der");
        let seed: [u8; 32] = STANDARD
            .decode(private)
            .expect("seed")
            .try_into()
            .expect("32 bytes");
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        assert_eq!(&der[12..], key.verifying_key().as_bytes());
    }
}
