//! HMAC-SHA256 signatures of what Vigil sends (the `hmac` crate; RFC 2104), as lower-case hex.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// HMAC-SHA256 over the concatenation of `parts`, as lower-case hex.
pub fn hmac_sha256_hex(secret: &[u8], parts: &[&[u8]]) -> String {
    hex::encode(mac_of(secret, parts).finalize().into_bytes())
}

/// Whether `signature_hex` is the HMAC-SHA256 of `parts` (compared in constant time).
pub fn verify_hmac_sha256_hex(secret: &[u8], parts: &[&[u8]], signature_hex: &str) -> bool {
    match hex::decode(signature_hex) {
        Ok(bytes) => mac_of(secret, parts).verify_slice(&bytes).is_ok(),
        Err(_) => false,
    }
}

fn mac_of(secret: &[u8], parts: &[&[u8]]) -> Hmac<Sha256> {
    // HMAC takes keys of any length (longer ones are hashed), so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key length");
    for part in parts {
        mac.update(part);
    }
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_rfc_4231_test_case_2() {
        assert_eq!(
            hmac_sha256_hex(b"Jefe", &[b"what do ya ", b"want for nothing?"]),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_long_key_matches_rfc_4231_test_case_6() {
        let key = [0xaau8; 131];
        assert_eq!(
            hmac_sha256_hex(
                &key,
                &[b"Test Using Larger Than Block-Size Key - Hash Key First"]
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        let good = hmac_sha256_hex(&key, &[b"x"]);
        assert!(verify_hmac_sha256_hex(&key, &[b"x"], &good));
        assert!(!verify_hmac_sha256_hex(&key, &[b"y"], &good));
        assert!(!verify_hmac_sha256_hex(&key, &[b"x"], "not hex"));
    }
}
