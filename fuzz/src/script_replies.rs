//! The `script_replies` target: a reply tree given to every parser of what
//! a master answers, each of which must read exactly what the reply says or
//! refuse it; and its seeds.

use fred::types::Value;
use redlockd::redis::replies;

use crate::VALUE;
use crate::info_text::INFO;
use crate::value;

/// `script_replies`: a reply tree decoded from `data` (see [`value`]) given
/// to every reply parser; what each accepts must be what the reply says.
pub fn check_replies(data: &[u8]) {
    let reply = value::decode(data);
    check_reply(&reply);
}

/// The checks of `script_replies` on one reply.
pub fn check_reply(reply: &Value) {
    // ROUND: one integer per request, exactly as sent; then each lock
    // answer and each release answer read as what it says, or refused.
    let count = match reply {
        Value::Array(parts) => parts.len(),
        _ => 1,
    };
    match replies::round(reply.clone(), count) {
        Ok(answers) => {
            let Value::Array(parts) = reply else {
                panic!("round read {reply:?}")
            };
            assert_eq!(parts.len(), answers.len());
            for (part, answer) in parts.iter().zip(&answers) {
                assert_eq!(part, &Value::Integer(*answer), "round read {part:?} as {answer}");
                match replies::locked(*answer) {
                    Ok(replies::Locked::Granted(counter)) => {
                        assert!(
                            *answer > 0 && u64::try_from(*answer) == Ok(counter),
                            "{answer} as {counter}"
                        )
                    }
                    Ok(replies::Locked::Taken) => assert_eq!(*answer, 0),
                    Ok(replies::Locked::NotVerified) => assert_eq!(*answer, -1),
                    Ok(replies::Locked::Changed) => assert_eq!(*answer, -2),
                    Ok(replies::Locked::CounterFull) => assert_eq!(*answer, -3),
                    Err(e) => {
                        assert!(*answer < -3, "locked refused {answer}");
                        assert!(e.to_string().starts_with("unexpected lock answer"), "{e}");
                    }
                }
                match replies::released(*answer) {
                    Ok(released) => assert_eq!(i64::from(released), *answer),
                    Err(e) => {
                        assert!(!(0..=1).contains(answer), "released refused {answer}");
                        assert!(e.to_string().starts_with("unexpected release answer"), "{e}");
                    }
                }
            }
        }
        Err(e) => {
            assert!(e.to_string().starts_with("unexpected round reply"), "{e}");
            if let Value::Array(parts) = reply {
                assert!(
                    parts.iter().any(|p| !matches!(p, Value::Integer(_))),
                    "round refused {reply:?}"
                );
            }
        }
    }
    // A batch must answer for every request it carried.
    if let Value::Array(parts) = reply {
        assert!(replies::round(reply.clone(), parts.len() + 1).is_err());
    }
    // HAND_OFF: [0 or 1, a counter or 0, 0 or 1], nothing else.
    match replies::hand_off(reply.clone()) {
        Ok(swap) => {
            let Value::Array(parts) = reply else {
                panic!("hand_off read {reply:?}")
            };
            assert!(
                matches!(parts.as_slice(), [Value::Integer(w), Value::Integer(c), Value::Integer(m)]
                    if (*w == 1) == swap.was_held && (0..=1).contains(w)
                    && u64::try_from(*c).ok() == Some(swap.counter.unwrap_or(0))
                    && (*m == 1) == swap.waited && (0..=1).contains(m)),
                "hand_off read {reply:?} as {swap:?}"
            );
            assert_ne!(swap.counter, Some(0), "hand_off gave counter 0");
        }
        Err(e) => assert!(e.to_string().starts_with("unexpected hand-off reply"), "{e}"),
    }
    // EXTEND: an array of exactly `count` zeros and ones, in order.
    let count = match reply {
        Value::Array(parts) => parts.len(),
        _ => 1,
    };
    let bit = |part: &Value| match part {
        Value::Integer(0) => Some(false),
        Value::Integer(1) => Some(true),
        _ => None,
    };
    match replies::flags(reply.clone(), count) {
        Ok(flags) => {
            let Value::Array(parts) = reply else {
                panic!("flags read {reply:?}")
            };
            let read: Vec<Option<bool>> = parts.iter().map(bit).collect();
            let expected: Vec<Option<bool>> = flags.iter().copied().map(Some).collect();
            assert_eq!(read, expected, "flags read {reply:?} as {flags:?}");
        }
        Err(e) => {
            assert!(e.to_string().starts_with("unexpected batch reply"), "{e}");
            assert!(
                !matches!(reply, Value::Array(parts) if parts.iter().all(|p| bit(p).is_some())),
                "flags refused {reply:?}"
            );
        }
    }
    assert!(
        replies::flags(reply.clone(), count + 1).is_err(),
        "flags took {reply:?} for {} locks",
        count + 1
    );
    // PUBLISH_FENCE: exactly 0 or 1.
    match replies::flag(reply.clone()) {
        Ok(f) => assert!(
            matches!((reply, f), (Value::Integer(1), true) | (Value::Integer(0), false)),
            "flag read {reply:?} as {f}"
        ),
        Err(e) => {
            assert!(e.to_string().contains("expected 0 or 1"), "{e}");
            assert!(!matches!(reply, Value::Integer(0 | 1)), "flag refused {reply:?}");
        }
    }
    // INSPECT.
    match replies::inspect(reply.clone()) {
        Ok(view) => {
            let Value::Array(parts) = reply else {
                panic!("inspect accepted {reply:?}")
            };
            let [value, pttl, fence, readers, permits] = parts.as_slice() else {
                panic!("inspect accepted {} parts", parts.len())
            };
            assert_eq!(
                &Value::Integer(i64::from(view.readers)),
                readers,
                "inspect misread the readers"
            );
            assert_eq!(
                view.permits.map(u64::from),
                counter(permits),
                "inspect misread the permits {permits:?}"
            );
            // The key holds the value, then (after the first newline) who
            // holds it.
            let held = text(value);
            let split = held
                .as_deref()
                .map(|h| h.split_once('\n').map_or((h, None), |(v, r)| (v, Some(r))));
            assert_eq!(
                view.value.as_deref(),
                split.map(|(v, _)| v),
                "inspect misread the value"
            );
            assert_eq!(
                view.holder.as_deref(),
                split.and_then(|(_, r)| r),
                "inspect misread the record"
            );
            let Value::Integer(ms) = pttl else {
                panic!("inspect accepted PTTL {pttl:?}")
            };
            let ttl = view.ttl.map(|d| i128::try_from(d.as_millis()).expect("a PTTL fits"));
            assert_eq!(ttl, (*ms >= 0).then_some(i128::from(*ms)), "inspect misread PTTL {ms}");
            assert_eq!(view.fence, counter(fence), "inspect misread the counter {fence:?}");
        }
        Err(e) => {
            if let Value::Array(parts) = reply
                && let Some(Value::String(secret)) = parts.first()
                && is_lock_value(secret)
            {
                assert!(!e.to_string().contains(&**secret), "the lock value is in the error {e}");
            }
        }
    }
    // GET fence counter, GET marker.
    match replies::fence(reply.clone()) {
        Ok(c) => assert_eq!(c, counter(reply), "fence misread {reply:?}"),
        Err(e) => {
            assert!(e.to_string().contains("fence counter"), "{e}");
            assert!(counter(reply).is_none(), "fence refused {reply:?}: {e}");
        }
    }
    match replies::marker(reply.clone()) {
        Ok(m) => assert_eq!(m, text(reply), "marker misread {reply:?}"),
        Err(e) => {
            assert!(e.to_string().contains("marker"), "{e}");
            assert!(text(reply).is_none(), "marker refused {reply:?}: {e}");
        }
    }
    // TIME: exact microseconds, never wrapped.
    match replies::time(reply.clone()) {
        Ok(us) => {
            let Value::Array(parts) = reply else {
                panic!("time accepted {reply:?}")
            };
            let [Some(Some(secs)), Some(Some(micros))] = [parts.first(), parts.get(1)].map(|p| p.map(counter)) else {
                panic!("time accepted {reply:?}")
            };
            assert_eq!(parts.len(), 2);
            assert!(micros < 1_000_000, "time accepted {micros} microseconds");
            assert_eq!(
                u128::from(us),
                u128::from(secs) * 1_000_000 + u128::from(micros),
                "time misread {reply:?}"
            );
        }
        Err(e) => assert!(e.to_string().starts_with("unexpected TIME"), "{e}"),
    }
    // CONFIG GET, INFO.
    match replies::config_get(reply.clone(), "maxmemory-policy") {
        Ok(v) => assert!(
            matches!(reply, Value::Array(_) | Value::Map(_) | Value::Null),
            "config_get accepted {reply:?} as {v:?}"
        ),
        Err(e) => assert!(e.to_string().contains("CONFIG GET"), "{e}"),
    }
    match replies::info(reply.clone()) {
        Ok(info) => {
            let t = text(reply).expect("INFO accepted a reply that is not text");
            assert_eq!(info, replies::info_text(&t));
        }
        Err(e) => assert!(e.to_string().contains("INFO reply"), "{e}"),
    }
}

/// A string reply as text, if it is one.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string()),
        Value::Bytes(b) => String::from_utf8(b.to_vec()).ok(),
        _ => None,
    }
}

/// A counter as the parsers must read it: a non-negative integer, or a
/// string of decimal digits that fits a `u64`.
fn counter(v: &Value) -> Option<u64> {
    match v {
        Value::Integer(n) => u64::try_from(*n).ok(),
        Value::String(_) | Value::Bytes(_) => {
            let t = text(v)?;
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        }
        _ => None,
    }
}

/// Text shaped like a lock value with a letter in it: no error template or
/// number can contain it by chance.
fn is_lock_value(s: &str) -> bool {
    s.len() == 40
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && s.bytes().any(|b| b.is_ascii_alphabetic())
}

pub(crate) fn reply_seeds() -> Vec<(String, Vec<u8>)> {
    use fred::types::{Key, Map};
    let s = |t: &str| Value::from(t);
    let mut config_map = Map::new();
    config_map.insert(Key::from("maxmemory-policy"), s("noeviction"));
    let seeds = [
        ("lock-counter", Value::Integer(1_700_000_000_000_042)),
        ("lock-taken", Value::Null),
        (
            "hand-off-waited",
            Value::Array(vec![
                Value::Integer(1),
                Value::Integer(1_700_000_000_000_043),
                Value::Integer(1),
            ]),
        ),
        ("flag-1", Value::Integer(1)),
        (
            "extend-batch",
            Value::Array(vec![Value::Integer(1), Value::Integer(0), Value::Integer(1)]),
        ),
        ("flag-negative", Value::Integer(-1)),
        (
            "inspect-held",
            Value::Array(vec![
                s(VALUE),
                Value::Integer(9_500),
                s("1700000000000042"),
                Value::Integer(0),
                Value::Null,
            ]),
        ),
        (
            "inspect-free",
            Value::Array(vec![
                Value::Null,
                Value::Integer(-2),
                Value::Null,
                Value::Integer(0),
                Value::Null,
            ]),
        ),
        ("fence", s("1700000000000042")),
        ("time", Value::Array(vec![s("1700000000"), s("123456")])),
        (
            "config-resp2",
            Value::Array(vec![s("maxmemory-policy"), s("noeviction")]),
        ),
        ("config-resp3", Value::Map(config_map)),
        ("info", s(INFO)),
    ];
    seeds
        .into_iter()
        .map(|(n, v)| (format!("seed-{n}"), value::encode(&v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn reply_seeds_round_trip_through_the_decoder() {
        for (name, bytes) in reply_seeds() {
            let v = value::decode(&bytes);
            assert_eq!(value::encode(&v), bytes, "{name}");
        }
        let seeds: HashMap<String, Vec<u8>> = reply_seeds().into_iter().collect();
        let held = replies::inspect(value::decode(&seeds["seed-inspect-held"])).unwrap();
        assert_eq!(held.fence, Some(1_700_000_000_000_042));
        assert_eq!(
            replies::time(value::decode(&seeds["seed-time"])),
            Ok(1_700_000_000_123_456)
        );
        let swap = replies::hand_off(value::decode(&seeds["seed-hand-off-waited"])).unwrap();
        assert!(swap.was_held && swap.waited, "{swap:?}");
        assert_eq!(swap.counter, Some(1_700_000_000_000_043));
        assert_eq!(
            replies::flags(value::decode(&seeds["seed-extend-batch"]), 3),
            Ok(vec![true, false, true])
        );
    }
}
