//! Order-preserving encoding of composite index keys.
//!
//! Index keys are stored as byte strings whose bytewise order (SQLite's BLOB comparison,
//! PostgreSQL's BYTEA comparison) is the order of the keys part by part. Every part starts with a
//! kind tag below [`PREFIX_END`]; integers and times are fixed-width big-endian with the sign bit
//! flipped; text is escaped so that it is self-delimiting. Hence all keys that start with the
//! parts of a prefix `p` lie in `[enc(p), enc(p) ++ PREFIX_END)`, which is how range bounds are
//! turned into SQL.
//!
//! Shared by `rentald` and the Spin adapter, so both write and read exactly the same bytes.

use rental_domain::store::KeyPart;

const TAG_INT: u8 = 0x02;
const TAG_TIME: u8 = 0x03;
const TAG_TEXT: u8 = 0x04;
/// Greater than every tag: appended to a prefix it bounds all keys that extend the prefix.
pub const PREFIX_END: u8 = 0xFF;

const SIGN: u64 = 1 << 63;

/// The encoded length of an integer or time part: its tag and eight bytes.
pub const FIXED_PART_LEN: usize = 9;

pub fn encode(parts: &[KeyPart]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.len() * 10);
    for part in parts {
        match part {
            KeyPart::Int(v) => push_int(&mut out, TAG_INT, *v),
            KeyPart::Time(v) => push_int(&mut out, TAG_TIME, *v),
            KeyPart::Text(s) => {
                out.push(TAG_TEXT);
                for &b in s.as_bytes() {
                    out.push(b);
                    if b == 0 {
                        out.push(0xFF);
                    }
                }
                out.extend_from_slice(&[0x00, 0x01]);
            }
        }
    }
    out
}

fn push_int(out: &mut Vec<u8>, tag: u8, v: i64) {
    out.push(tag);
    out.extend_from_slice(&((v as u64) ^ SIGN).to_be_bytes());
}

/// The smallest byte string greater than every key that starts with `prefix`.
pub fn prefix_end(prefix: &[KeyPart]) -> Vec<u8> {
    let mut out = encode(prefix);
    out.push(PREFIX_END);
    out
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("malformed index key at byte {0}")]
pub struct MalformedKey(usize);

pub fn decode(mut bytes: &[u8]) -> Result<Vec<KeyPart>, MalformedKey> {
    let total = bytes.len();
    let mut parts = Vec::new();
    while let Some((&tag, rest)) = bytes.split_first() {
        let at = total - bytes.len();
        bytes = rest;
        match tag {
            TAG_INT | TAG_TIME => {
                let (raw, rest) = bytes.split_first_chunk::<8>().ok_or(MalformedKey(at))?;
                let v = (u64::from_be_bytes(*raw) ^ SIGN) as i64;
                parts.push(if tag == TAG_INT {
                    KeyPart::Int(v)
                } else {
                    KeyPart::Time(v)
                });
                bytes = rest;
            }
            TAG_TEXT => {
                let mut text = Vec::new();
                loop {
                    match bytes {
                        [0x00, 0x01, rest @ ..] => {
                            bytes = rest;
                            break;
                        }
                        [0x00, 0xFF, rest @ ..] => {
                            text.push(0);
                            bytes = rest;
                        }
                        [0x00, ..] | [] => return Err(MalformedKey(at)),
                        [b, rest @ ..] => {
                            text.push(*b);
                            bytes = rest;
                        }
                    }
                }
                parts.push(KeyPart::Text(
                    String::from_utf8(text).map_err(|_| MalformedKey(at))?,
                ));
            }
            _ => return Err(MalformedKey(at)),
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> KeyPart {
        KeyPart::Text(s.to_owned())
    }

    #[test]
    fn round_trips() {
        let key = vec![KeyPart::Int(-5), t("a\0b"), KeyPart::Time(i64::MAX), t("")];
        assert_eq!(decode(&encode(&key)).unwrap(), key);
    }

    #[test]
    fn byte_order_is_key_order() {
        let ordered = [
            vec![KeyPart::Int(i64::MIN)],
            vec![KeyPart::Int(-1)],
            vec![KeyPart::Int(0)],
            vec![KeyPart::Int(0), t("")],
            vec![KeyPart::Int(0), t("a")],
            vec![KeyPart::Int(0), t("a\0")],
            vec![KeyPart::Int(0), t("ab")],
            vec![KeyPart::Int(1)],
            vec![KeyPart::Int(256)],
            vec![KeyPart::Int(i64::MAX)],
        ];
        for pair in ordered.windows(2) {
            assert!(encode(&pair[0]) < encode(&pair[1]), "{pair:?}");
        }
    }

    #[test]
    fn prefix_range_holds_exactly_the_extensions() {
        let prefix = [KeyPart::Int(3)];
        let (lo, hi) = (encode(&prefix), prefix_end(&prefix));
        let inside = encode(&[KeyPart::Int(3), t("zzz"), KeyPart::Int(i64::MAX)]);
        let below = encode(&[KeyPart::Int(2), t("zzz")]);
        let above = encode(&[KeyPart::Int(4)]);
        assert!(lo <= inside && inside < hi);
        assert!(below < lo);
        assert!(above >= hi);
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode(&[TAG_INT, 1, 2]).is_err());
        assert!(decode(&[TAG_TEXT, b'a']).is_err());
        assert!(decode(&[0x09]).is_err());
    }
}
