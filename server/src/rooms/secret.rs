//! Room codes and presenter tokens: made from the OS-seeded CSPRNG, stored as a hash,
//! compared in constant time.
//!
//! Redis holds only the token's SHA-256, so reading a room's keys does not hand anyone the
//! presenter's controls; the token itself exists in the presenter's page and in flight.

use oversold_protocol::room::{MAX_TOKEN_LEN, ROOM_ALPHABET, ROOM_CODE_LEN};
use rand::Rng;
use sha2::{Digest, Sha256};

/// A fresh room code.
pub fn new_code() -> String {
    let letters = ROOM_ALPHABET.as_bytes();
    let mut rng = rand::rng();
    (0..ROOM_CODE_LEN)
        .map(|_| char::from(letters[rng.random_range(0..letters.len())]))
        .collect()
}

/// A fresh presenter token: 128 random bits as 32 hex digits.
pub fn new_token() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What Redis keeps of a token.
pub fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Does `token` hash to `stored`? The comparison takes the same time wherever the first
/// difference is, so timing tells an attacker nothing about how close a guess was. (Over a
/// hash that would already be hard to use; the constant time costs nothing.)
pub fn matches(token: &str, stored: &str) -> bool {
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return false;
    }
    let given = hash(token);
    given.len() == stored.len()
        && given
            .bytes()
            .zip(stored.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::room::is_room_code;

    #[test]
    fn codes_are_room_codes_and_tokens_match_only_themselves() {
        for _ in 0..100 {
            assert!(is_room_code(&new_code()));
        }
        let token = new_token();
        assert_eq!(token.len(), 32);
        let stored = hash(&token);
        assert!(matches(&token, &stored));
        assert!(!matches(&new_token(), &stored));
        assert!(!matches("", &hash("")));
        assert!(!matches(
            &"a".repeat(MAX_TOKEN_LEN + 1),
            &hash(&"a".repeat(MAX_TOKEN_LEN + 1))
        ));
    }
}
