//! A reply tree (`fred::types::Value`) from fuzz input bytes, and back (for
//! the seeds). Every byte string decodes to some value: input that runs out
//! ends the value there (missing numbers are zero, missing parts are left
//! out), and nesting stops at [`MAX_DEPTH`].
//!
//! The format, one value:
//!
//! | tag (byte % 12) | value           | then                                        |
//! |-----------------|-----------------|---------------------------------------------|
//! | 0               | `Null`          |                                             |
//! | 1               | `Integer`       | 8 bytes, little-endian `i64`                |
//! | 2               | `Integer`       | 1 byte, as `i8` (-1, 0, 1... cheaply)       |
//! | 3               | `Double`        | 8 bytes, little-endian `f64` bits           |
//! | 4               | `Boolean`       | 1 byte, lowest bit                          |
//! | 5               | `String`        | length (2 bytes, LE), bytes (lossy UTF-8)   |
//! | 6               | `Bytes`         | length (2 bytes, LE), bytes                 |
//! | 7               | `Array`         | count (1 byte, % 8), that many values       |
//! | 8               | `Map`           | count (1 byte, % 8), (length, key bytes, value) each |
//! | 9               | `Queued`        |                                             |
//! | 10              | `String`        | 8 bytes, LE `i64`, written in decimal       |
//! | 11              | `String`        | 8 bytes, LE `u64`, written in decimal       |

use fred::bytes::Bytes;
use fred::types::{Key, Map, Value};

/// How deep arrays and maps nest; deeper ones decode as `Null`.
pub const MAX_DEPTH: usize = 4;

const TAGS: u8 = 12;

/// The value `data` encodes.
pub fn decode(data: &[u8]) -> Value {
    Reader { data }.value(0)
}

struct Reader<'a> {
    data: &'a [u8],
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let (taken, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        taken
    }

    fn eight(&mut self) -> [u8; 8] {
        let mut out = [0; 8];
        let taken = self.take(8);
        out[..taken.len()].copy_from_slice(taken);
        out
    }

    fn sized(&mut self) -> &[u8] {
        let lo = self.byte().unwrap_or(0);
        let hi = self.byte().unwrap_or(0);
        self.take(usize::from(u16::from_le_bytes([lo, hi])))
    }

    fn value(&mut self, depth: usize) -> Value {
        let Some(tag) = self.byte() else {
            return Value::Null;
        };
        match tag % TAGS {
            0 => Value::Null,
            1 => Value::Integer(i64::from_le_bytes(self.eight())),
            2 => Value::Integer(i64::from(self.byte().unwrap_or(0).cast_signed())),
            3 => Value::Double(f64::from_bits(u64::from_le_bytes(self.eight()))),
            4 => Value::Boolean(self.byte().unwrap_or(0) & 1 == 1),
            5 => Value::from(String::from_utf8_lossy(self.sized()).into_owned()),
            6 => Value::Bytes(Bytes::copy_from_slice(self.sized())),
            7 if depth < MAX_DEPTH => {
                let count = self.byte().unwrap_or(0) % 8;
                let mut parts = Vec::new();
                for _ in 0..count {
                    if self.data.is_empty() {
                        break;
                    }
                    parts.push(self.value(depth + 1));
                }
                Value::Array(parts)
            }
            8 if depth < MAX_DEPTH => {
                let count = self.byte().unwrap_or(0) % 8;
                let mut map = Map::new();
                for _ in 0..count {
                    if self.data.is_empty() {
                        break;
                    }
                    let key = Key::from(self.sized());
                    let value = self.value(depth + 1);
                    map.insert(key, value);
                }
                Value::Map(map)
            }
            9 => Value::Queued,
            10 => Value::from(i64::from_le_bytes(self.eight()).to_string()),
            11 => Value::from(u64::from_le_bytes(self.eight()).to_string()),
            _ => Value::Null,
        }
    }
}

/// Bytes that [`decode`] reads as `value` (strings and byte strings longer
/// than 65,535 bytes, arrays and maps of more than 7 entries, and nesting
/// deeper than [`MAX_DEPTH`] are not representable and panic).
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, value, 0);
    out
}

fn write(out: &mut Vec<u8>, value: &Value, depth: usize) {
    let sized = |out: &mut Vec<u8>, b: &[u8]| {
        let len = u16::try_from(b.len()).expect("at most 65535 bytes");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(b);
    };
    match value {
        Value::Null => out.push(0),
        Value::Integer(n) => {
            out.push(1);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Double(f) => {
            out.push(3);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Boolean(b) => out.extend_from_slice(&[4, u8::from(*b)]),
        Value::String(s) => {
            out.push(5);
            sized(out, s.as_bytes());
        }
        Value::Bytes(b) => {
            out.push(6);
            sized(out, b);
        }
        Value::Array(parts) => {
            assert!(depth < MAX_DEPTH && parts.len() < 8, "not representable");
            out.extend_from_slice(&[7, u8::try_from(parts.len()).expect("fewer than 8")]);
            for part in parts {
                write(out, part, depth + 1);
            }
        }
        Value::Map(map) => {
            assert!(depth < MAX_DEPTH && map.len() < 8, "not representable");
            out.extend_from_slice(&[8, u8::try_from(map.len()).expect("fewer than 8")]);
            for (key, value) in map.iter() {
                sized(out, key.as_bytes());
                write(out, value, depth + 1);
            }
        }
        Value::Queued => out.push(9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_decodes() {
        for data in [
            &[][..],
            &[7, 7],
            &[1, 2, 3],
            &[8, 3, 5, 0],
            &[255; 64],
            &[5, 255, 255, b'x'],
        ] {
            let _ = decode(data);
        }
        assert_eq!(decode(&[]), Value::Null);
        assert_eq!(decode(&[2, 0xfe]), Value::Integer(-2));
        assert_eq!(decode(&[1, 1]), Value::Integer(1));
        assert_eq!(
            decode(&[10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Value::from("-1")
        );
    }

    #[test]
    fn nesting_stops_at_max_depth() {
        let nested = [7u8, 1].repeat(MAX_DEPTH + 3);
        let mut v = decode(&nested);
        for _ in 0..MAX_DEPTH {
            let Value::Array(mut parts) = v else { panic!("{v:?}") };
            v = parts.pop().unwrap();
        }
        assert_eq!(v, Value::Null);
    }

    #[test]
    fn encoded_values_decode_to_themselves() {
        let mut map = Map::new();
        map.insert(Key::from("k"), Value::Array(vec![Value::Queued, Value::Boolean(true)]));
        for v in [
            Value::Null,
            Value::Integer(i64::MIN),
            Value::Double(-0.5),
            Value::from("é"),
            Value::Bytes(Bytes::from_static(&[0xff, 0])),
            Value::Array(vec![Value::Null, Value::Integer(-2), Value::Null]),
            Value::Map(map),
        ] {
            assert_eq!(decode(&encode(&v)), v);
        }
    }
}
