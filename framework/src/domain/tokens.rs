//! API tokens: random, shown once, stored as a SHA-256 hash, compared in constant time.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A new random token of 64 lowercase letters and digits (about 330 bits).
pub fn generate() -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(64)
        .map(|b| (b as char).to_ascii_lowercase())
        .collect()
}

/// Upper-case letters and digits that cannot be mistaken for each other (no 0/O, 1/I, 2/Z,
/// 5/S, 6/G): for codes people read and type.
pub const UNAMBIGUOUS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ3789";

/// A random string of `len` characters from `charset`.
pub fn random_from(charset: &[u8], len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| charset[rng.random_range(0..charset.len())] as char)
        .collect()
}

/// The stored form of a token: hex SHA-256. Tokens carry enough entropy that a fast hash
/// is safe; a slow password hash would cost every request dearly.
pub fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `token` hashes to `stored`, compared in constant time.
pub fn matches(stored: &str, token: &str) -> bool {
    hash(token).as_bytes().ct_eq(stored.as_bytes()).into()
}

/// The row `sql` finds for `token` (the statement takes the token's hash as `$1` and selects
/// its stored hash as `token_hash`), when the stored hash matches in constant time.
pub async fn find_row(
    db: &impl sea_orm::ConnectionTrait,
    sql: &str,
    token: &str,
) -> Result<Option<sea_orm::QueryResult>, sea_orm::DbErr> {
    let stmt = sea_orm::Statement::from_sql_and_values(
        db.get_database_backend(),
        sql,
        [hash(token).into()],
    );
    let Some(row) = db.query_one_raw(stmt).await? else {
        return Ok(None);
    };
    let stored: String = row.try_get("", "token_hash")?;
    Ok(matches(&stored, token).then_some(row))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_token_matches_its_hash_and_no_other() {
        let token = super::generate();
        assert_eq!(token.len(), 64);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        let stored = super::hash(&token);
        assert!(super::matches(&stored, &token));
        assert!(!super::matches(&stored, &super::generate()));
    }
}
