//! Bank one's webhook signature: header `BankOne-Signature: t=<unix seconds>,v1=<hex>`, where
//! `v1` is HMAC-SHA256 with the tenant's secret over `<t>.<raw body>` (contract.md).

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

/// How far the signature's time may be from now, either way.
pub const TOLERANCE_SECS: i64 = 300;

/// Why a signature is refused (logged, never sent: every refusal is the same 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No `t` or no `v1`, or one that does not parse.
    Malformed,
    /// `t` is more than [`TOLERANCE_SECS`] away from now.
    OutOfWindow,
    /// No `v1` matches the body under the secret.
    Mismatch,
}

/// Checks `header` against `body` and `secret` at `now` (unix seconds). Every `v1` given is
/// tried (a bank rotating its secret may send two); each comparison is constant-time.
pub fn verify(secret: &[u8], header: &str, body: &[u8], now: i64) -> Result<(), Refused> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => timestamp = Some(value),
            Some(("v1", value)) => {
                signatures.push(hex::decode(value).map_err(|_| Refused::Malformed)?)
            }
            _ => {}
        }
    }
    let t = timestamp.ok_or(Refused::Malformed)?;
    if signatures.is_empty() || t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refused::Malformed);
    }
    let seconds: i64 = t.parse().map_err(|_| Refused::Malformed)?;
    if now.abs_diff(seconds) > TOLERANCE_SECS.unsigned_abs() {
        return Err(Refused::OutOfWindow);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|_| Refused::Mismatch)?;
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    if signatures
        .iter()
        .any(|signature| mac.clone().verify_slice(signature).is_ok())
    {
        Ok(())
    } else {
        Err(Refused::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"whsec_test";
    const BODY: &[u8] = br#"{"EventId":"evt_1"}"#;
    const NOW: i64 = 1_700_000_000;

    fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(body);
        hex::encode(mac.finalize().into_bytes())
    }

    #[test]
    fn a_fresh_signature_of_the_body_passes() {
        for t in [NOW, NOW - TOLERANCE_SECS, NOW + TOLERANCE_SECS] {
            let header = format!("t={t},v1={}", sign(SECRET, t, BODY));
            assert_eq!(verify(SECRET, &header, BODY, NOW), Ok(()), "{t}");
        }
        let header = format!("t={NOW}, v1=00ff, v1={}", sign(SECRET, NOW, BODY));
        assert_eq!(
            verify(SECRET, &header, BODY, NOW),
            Ok(()),
            "any v1 may match"
        );
    }

    #[test]
    fn stale_and_future_times_are_refused_even_when_signed() {
        for t in [NOW - TOLERANCE_SECS - 1, NOW + TOLERANCE_SECS + 1] {
            let header = format!("t={t},v1={}", sign(SECRET, t, BODY));
            assert_eq!(
                verify(SECRET, &header, BODY, NOW),
                Err(Refused::OutOfWindow)
            );
        }
    }

    #[test]
    fn other_secrets_bodies_and_times_do_not_match() {
        let good = sign(SECRET, NOW, BODY);
        let tampered = br#"{"EventId":"evt_2"}"#;
        assert_eq!(
            verify(SECRET, &format!("t={NOW},v1={good}"), tampered, NOW),
            Err(Refused::Mismatch)
        );
        assert_eq!(
            verify(b"other", &format!("t={NOW},v1={good}"), BODY, NOW),
            Err(Refused::Mismatch)
        );
        assert_eq!(
            verify(SECRET, &format!("t={},v1={good}", NOW + 1), BODY, NOW),
            Err(Refused::Mismatch),
            "the time is signed too"
        );
    }

    #[test]
    fn malformed_headers_are_refused() {
        let good = sign(SECRET, NOW, BODY);
        for header in [
            String::new(),
            format!("v1={good}"),
            format!("t={NOW}"),
            format!("t=,v1={good}"),
            format!("t=-{NOW},v1={good}"),
            format!("t={NOW},v1=not-hex"),
            format!("t=1e9,v1={good}"),
        ] {
            assert_eq!(
                verify(SECRET, &header, BODY, NOW),
                Err(Refused::Malformed),
                "{header}"
            );
        }
    }
}
