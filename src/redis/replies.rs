//! Reading what a master answers: the replies of the scripts in `scripts.rs`
//! and of the probe's commands (`INFO`, `CONFIG GET`, `GET`, `TIME`). Pure
//! functions of a fred [`Value`], free of I/O, so they are unit-tested here
//! and fuzzed (`fuzz/`, target `script_replies`).
//!
//! A reply Redis would not send is an `Err` that says what was expected;
//! never a panic, and never a negative number read as a huge unsigned one.
//! Error messages name the kind of an unexpected part, not its content, where
//! that content may be a lock value (a secret).

use std::time::Duration;

use fred::types::Value;

use crate::redlock::node::{KeyView, NodeError, Swap};

/// What `ROUND` said about one lock request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// Granted, with the node's new fence counter.
    Granted(u64),
    /// Another owner holds it.
    Taken,
    /// The node was not verified since its data was lost or it started.
    NotVerified,
    /// The node restarted or failed over since it was verified.
    Changed,
    /// The node's counter would reach 2^53: nothing granted.
    CounterFull,
}

/// `ROUND`: one integer per request of the batch, `count` of them.
///
/// # Errors
/// Anything else.
pub fn round(reply: Value, count: usize) -> Result<Vec<i64>, NodeError> {
    each_integer(reply, count, "round", "integers", Some)
}

/// An array of exactly `count` integers, each read by `read` (`None`: not
/// an answer); the error names the `kind` of reply and what was `expected`.
fn each_integer<T>(
    reply: Value,
    count: usize,
    kind: &str,
    expected: &str,
    read: impl Fn(i64) -> Option<T>,
) -> Result<Vec<T>, NodeError> {
    let unexpected = |reply: &Value| {
        NodeError(format!(
            "unexpected {kind} reply {reply:?} (expected {count} {expected})"
        ))
    };
    let Value::Array(parts) = &reply else {
        return Err(unexpected(&reply));
    };
    if parts.len() != count {
        return Err(unexpected(&reply));
    }
    parts
        .iter()
        .map(|part| match part {
            Value::Integer(n) => read(*n).ok_or_else(|| unexpected(&reply)),
            _ => Err(unexpected(&reply)),
        })
        .collect()
}

/// A lock request's answer in `ROUND`: a positive counter, 0 (taken), -1
/// (not verified), -2 (restarted or failed over) or -3 (counter full).
///
/// # Errors
/// Any other integer.
pub fn locked(answer: i64) -> Result<Locked, NodeError> {
    match answer {
        0 => Ok(Locked::Taken),
        -1 => Ok(Locked::NotVerified),
        -2 => Ok(Locked::Changed),
        -3 => Ok(Locked::CounterFull),
        n @ 1.. => Ok(Locked::Granted(n.unsigned_abs())),
        n => Err(NodeError(format!(
            "unexpected lock answer {n} (expected a positive fence counter, 0, -1, -2 or -3)"
        ))),
    }
}

/// A release's answer in `ROUND`: 1 (released) or 0 (not held).
///
/// # Errors
/// Any other integer.
pub fn released(answer: i64) -> Result<bool, NodeError> {
    match answer {
        0 => Ok(false),
        1 => Ok(true),
        n => Err(NodeError(format!("unexpected release answer {n} (expected 0 or 1)"))),
    }
}

/// `HAND_OFF`: `{was_held, counter, waited}`, `was_held` and `waited` 0 or
/// 1, `counter` 0 (not granted) or the new fence counter.
///
/// # Errors
/// Any other reply.
pub fn hand_off(reply: Value) -> Result<Swap, NodeError> {
    let unexpected = |what: &dyn std::fmt::Debug| {
        NodeError(format!(
            "unexpected hand-off reply {what:?} (expected [0 or 1, a fence counter or 0, 0 or 1])"
        ))
    };
    let Value::Array(parts) = reply else {
        return Err(unexpected(&reply));
    };
    match parts.as_slice() {
        [
            Value::Integer(was @ 0..=1),
            Value::Integer(counter),
            Value::Integer(waited @ 0..=1),
        ] => match u64::try_from(*counter) {
            Ok(counter) => Ok(Swap {
                was_held: *was == 1,
                counter: Some(counter).filter(|c| *c > 0),
                waited: *waited == 1,
            }),
            Err(_) => Err(unexpected(&parts)),
        },
        _ => Err(unexpected(&parts)),
    }
}

/// `EXTEND`: one flag (see `flag`) per lock of the batch, `count` of them.
///
/// # Errors
/// Anything but an array of `count` zeros and ones.
pub fn flags(reply: Value, count: usize) -> Result<Vec<bool>, NodeError> {
    each_integer(reply, count, "batch", "times 0 or 1", |n| match n {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    })
}

/// `PUBLISH_FENCE`: the integer 1 (done) or 0 (the key
/// does not hold our value).
///
/// # Errors
/// Any other reply.
pub fn flag(reply: Value) -> Result<bool, NodeError> {
    match reply {
        Value::Integer(0) => Ok(false),
        Value::Integer(1) => Ok(true),
        other => Err(NodeError(format!(
            "unexpected script reply {other:?} (expected 0 or 1)"
        ))),
    }
}

/// `INSPECT`: `{value or nil, PTTL in ms, fence counter or nil}`. A negative
/// PTTL (-2: no key, -1: no expiry) is no time left.
///
/// # Errors
/// Anything but an array of those three.
pub fn inspect(reply: Value) -> Result<KeyView, NodeError> {
    let parts = match reply {
        Value::Array(parts) => parts,
        other => return Err(NodeError(format!("unexpected inspect reply: {}", describe(&other)))),
    };
    let [value, pttl, fence] = <[Value; 3]>::try_from(parts).map_err(|parts| {
        NodeError(format!(
            "unexpected inspect reply: {} elements (expected value, PTTL, fence counter)",
            parts.len()
        ))
    })?;
    let value = optional_text(value, "inspect reply: the lock value")?;
    let ttl = match pttl {
        Value::Integer(ms) => u64::try_from(ms).ok().map(Duration::from_millis),
        other => {
            return Err(NodeError(format!(
                "unexpected inspect reply: PTTL is {} (expected an integer)",
                describe(&other)
            )));
        }
    };
    let fence = counter(fence, "inspect reply: the fence counter")?;
    Ok(KeyView { value, ttl, fence })
}

/// `GET <prefix>:fence`: the fence counter, `None` when the node has none.
///
/// # Errors
/// When the key holds anything but a non-negative integer.
pub fn fence(reply: Value) -> Result<Option<u64>, NodeError> {
    counter(reply, "fence counter")
}

/// `GET <prefix>:verified`: the marker (an identity), `None` when unset.
///
/// # Errors
/// When the reply is not a UTF-8 string or nil.
pub fn marker(reply: Value) -> Result<Option<String>, NodeError> {
    optional_text(reply, "verified marker")
}

/// `TIME`: `[seconds, microseconds]`, as microseconds since the epoch.
///
/// # Errors
/// Anything but two non-negative integers (microseconds below 1,000,000)
/// whose total fits in a `u64`.
pub fn time(reply: Value) -> Result<u64, NodeError> {
    let parts = match reply {
        Value::Array(parts) => parts,
        other => return Err(NodeError(format!("unexpected TIME reply: {}", describe(&other)))),
    };
    let [secs, micros] = <[Value; 2]>::try_from(parts).map_err(|parts| {
        NodeError(format!(
            "unexpected TIME reply: {} elements (expected seconds, microseconds)",
            parts.len()
        ))
    })?;
    let secs = unsigned(secs, "TIME seconds")?;
    let micros = unsigned(micros, "TIME microseconds")?;
    if micros >= 1_000_000 {
        return Err(NodeError(format!(
            "unexpected TIME reply: {micros} microseconds (expected below 1000000)"
        )));
    }
    secs.checked_mul(1_000_000)
        .and_then(|us| us.checked_add(micros))
        .ok_or_else(|| NodeError(format!("unexpected TIME reply: {secs} seconds is out of range")))
}

/// `CONFIG GET <name>`: the parameter's value; empty when the node does not
/// know the parameter. RESP2 sends name/value pairs in an array, RESP3 a map.
///
/// # Errors
/// When the reply is neither, or a name or value is not a UTF-8 string.
pub fn config_get(reply: Value, name: &str) -> Result<String, NodeError> {
    let what = "CONFIG GET reply";
    match reply {
        Value::Array(parts) => {
            if parts.len() % 2 != 0 {
                return Err(NodeError(format!(
                    "unexpected {what}: {} elements (expected name/value pairs)",
                    parts.len()
                )));
            }
            let mut parts = parts.into_iter();
            while let (Some(key), Some(value)) = (parts.next(), parts.next()) {
                let key = text(key, what)?;
                let value = text(value, what)?;
                if key.eq_ignore_ascii_case(name) {
                    return Ok(value);
                }
            }
            Ok(String::new())
        }
        Value::Map(map) => {
            for (key, value) in map.inner() {
                let key = key
                    .into_string()
                    .ok_or_else(|| NodeError(format!("unexpected {what}: a name is not UTF-8")))?;
                let value = text(value, what)?;
                if key.eq_ignore_ascii_case(name) {
                    return Ok(value);
                }
            }
            Ok(String::new())
        }
        Value::Null => Ok(String::new()),
        other => Err(NodeError(format!("unexpected {what}: {}", describe(&other)))),
    }
}

/// The fields of `INFO` the probe looks at. A field the reply lacks is empty
/// (an uptime that is missing or not a number is zero): the health rules then
/// refuse or quarantine the node rather than trust it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Info {
    /// `role`: `master` on a usable node.
    pub role: String,
    /// `run_id`: changes when the process restarts.
    pub run_id: String,
    /// `master_replid`: changes on failover.
    pub master_replid: String,
    /// `uptime_in_seconds`.
    pub uptime: Duration,
}

/// `INFO`: the text, read by [`info_text`].
///
/// # Errors
/// When the reply is not a UTF-8 string.
pub fn info(reply: Value) -> Result<Info, NodeError> {
    Ok(info_text(&text(reply, "INFO reply")?))
}

/// The probe's fields from `INFO` text (`name:value` lines, `# Section`
/// headers, CRLF or LF line ends). The first line naming a field wins.
pub fn info_text(info: &str) -> Info {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    Info {
        role: field("role"),
        run_id: field("run_id"),
        master_replid: field("master_replid"),
        uptime: Duration::from_secs(field("uptime_in_seconds").parse().unwrap_or(0)),
    }
}

/// A string reply as UTF-8 text.
fn text(value: Value, what: &str) -> Result<String, NodeError> {
    match value {
        Value::String(s) => Ok(s.to_string()),
        Value::Bytes(b) => {
            String::from_utf8(b.to_vec()).map_err(|_| NodeError(format!("unexpected {what}: a string is not UTF-8")))
        }
        other => Err(NodeError(format!(
            "unexpected {what}: {} (expected a string)",
            describe(&other)
        ))),
    }
}

/// A string reply, or nil.
fn optional_text(value: Value, what: &str) -> Result<Option<String>, NodeError> {
    match value {
        Value::Null => Ok(None),
        other => text(other, what).map(Some),
    }
}

/// A counter stored as a string (or sent as an integer), or nil.
fn counter(value: Value, what: &str) -> Result<Option<u64>, NodeError> {
    match value {
        Value::Null => Ok(None),
        other => unsigned(other, what).map(Some),
    }
}

/// A non-negative integer, sent as an integer or as its decimal digits.
fn unsigned(value: Value, what: &str) -> Result<u64, NodeError> {
    let parsed = match &value {
        Value::Integer(n) => u64::try_from(*n).ok(),
        Value::String(s) => digits(s.as_bytes()),
        Value::Bytes(b) => digits(b),
        _ => None,
    };
    parsed.ok_or_else(|| {
        let shown = match &value {
            Value::Integer(n) => n.to_string(),
            Value::String(s) if s.len() <= 32 => format!("{:?}", &**s),
            other => describe(other),
        };
        NodeError(format!("unexpected {what}: {shown} (expected a non-negative integer)"))
    })
}

/// Decimal digits only (no sign, no spaces) that fit in a `u64`.
fn digits(b: &[u8]) -> Option<u64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// The kind and size of a value, without its content.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(parts) => format!("an array of {}", parts.len()),
        Value::Map(map) => format!("a map of {}", map.len()),
        Value::String(s) => format!("a string of {} bytes", s.len()),
        Value::Bytes(b) => format!("{} bytes", b.len()),
        Value::Integer(n) => format!("the integer {n}"),
        Value::Double(f) => format!("the double {f}"),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Null => "nil".to_owned(),
        Value::Queued => "QUEUED".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use fred::bytes::Bytes;
    use fred::types::{Key, Map};

    #[test]
    fn hand_off_is_held_and_counter_or_an_error() {
        let reply = |was: i64, counter: i64, waited: i64| {
            Value::Array(vec![
                Value::Integer(was),
                Value::Integer(counter),
                Value::Integer(waited),
            ])
        };
        let swap = |was_held, counter, waited| {
            Ok(Swap {
                was_held,
                counter,
                waited,
            })
        };
        assert_eq!(hand_off(reply(1, 42, 0)), swap(true, Some(42), false));
        assert_eq!(hand_off(reply(0, 0, 1)), swap(false, None, true));
        assert_eq!(hand_off(reply(1, 0, 0)), swap(true, None, false));
        for bad in [
            reply(2, 5, 0),
            reply(1, -3, 0),
            reply(1, 5, 2),
            Value::Integer(1),
            Value::Array(vec![Value::Integer(1), Value::Integer(5)]),
        ] {
            assert!(hand_off(bad.clone()).is_err(), "{bad:?}");
        }
    }

    use super::*;

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    fn array(parts: Vec<Value>) -> Value {
        Value::Array(parts)
    }

    fn err<T: std::fmt::Debug>(r: Result<T, NodeError>) -> String {
        r.expect_err("a malformed reply was accepted").0
    }

    #[test]
    fn a_round_batch_reads_one_integer_per_request_and_each_its_own_way() {
        let reply = array(vec![
            Value::Integer(1_700_000_000_000_042),
            Value::Integer(0),
            Value::Integer(-3),
        ]);
        assert_eq!(round(reply, 3), Ok(vec![1_700_000_000_000_042, 0, -3]));
        assert_eq!(round(array(vec![]), 0), Ok(vec![]));
        for (bad, count) in [
            (array(vec![Value::Integer(1)]), 2),
            (array(vec![Value::Null]), 1),
            (array(vec![s("5")]), 1),
            (Value::Integer(5), 1),
        ] {
            assert!(err(round(bad, count)).contains("unexpected round reply"));
        }
        assert_eq!(
            locked(1_700_000_000_000_042),
            Ok(Locked::Granted(1_700_000_000_000_042))
        );
        let refusals = [0, -1, -2, -3].map(|n| locked(n).unwrap());
        let expected = [Locked::Taken, Locked::NotVerified, Locked::Changed, Locked::CounterFull];
        assert_eq!(refusals, expected);
        assert!(err(locked(-4)).contains("unexpected lock answer"));
        assert_eq!((released(1), released(0)), (Ok(true), Ok(false)));
        for bad in [2, -1] {
            assert!(err(released(bad)).contains("unexpected release answer"));
        }
    }

    #[test]
    fn flags_are_0_or_1() {
        assert_eq!(flag(Value::Integer(1)), Ok(true));
        assert_eq!(flag(Value::Integer(0)), Ok(false));
        for bad in [
            Value::Integer(2),
            Value::Integer(-1),
            Value::Null,
            s("1"),
            Value::Boolean(true),
        ] {
            assert!(err(flag(bad)).contains("expected 0 or 1"));
        }
    }

    #[test]
    fn inspect_reads_value_ttl_and_fence() {
        let held = array(vec![s("abc"), Value::Integer(1500), s("1700000000000042")]);
        assert_eq!(
            inspect(held),
            Ok(KeyView {
                value: Some("abc".into()),
                ttl: Some(Duration::from_millis(1500)),
                fence: Some(1_700_000_000_000_042),
            })
        );
        // Missing key (-2) on a node with no counter yet; Lua false is nil.
        let free = array(vec![Value::Null, Value::Integer(-2), Value::Null]);
        assert_eq!(inspect(free), Ok(KeyView::default()));
        // A key without expiry (-1) has no time left to report.
        let forever = array(vec![
            Value::Bytes(Bytes::from_static(b"v")),
            Value::Integer(-1),
            Value::Integer(7),
        ]);
        assert_eq!(
            inspect(forever),
            Ok(KeyView {
                value: Some("v".into()),
                ttl: None,
                fence: Some(7),
            })
        );
    }

    #[test]
    fn inspect_refuses_other_shapes_without_showing_the_value() {
        let secret = "0123456789abcdef0123456789abcdef01234567";
        let cases = [
            (s(secret), "a string of 40 bytes"),
            (Value::Null, "nil"),
            (array(vec![s(secret), Value::Integer(5)]), "2 elements"),
            (
                array(vec![s(secret), Value::Integer(5), Value::Null, Value::Null]),
                "4 elements",
            ),
            (array(vec![s(secret), s("5"), Value::Null]), "PTTL"),
            (
                array(vec![Value::Integer(3), Value::Integer(5), Value::Null]),
                "lock value",
            ),
            (
                array(vec![
                    Value::Bytes(Bytes::from_static(&[0xff])),
                    Value::Integer(5),
                    Value::Null,
                ]),
                "not UTF-8",
            ),
            (array(vec![s(secret), Value::Integer(5), s("-3")]), "fence counter"),
            (array(vec![s(secret), Value::Integer(5), Value::Integer(-3)]), "-3"),
            (array(vec![s(secret), Value::Integer(5), s("1e5")]), "fence counter"),
        ];
        for (reply, expected) in cases {
            let e = err(inspect(reply));
            assert!(e.contains("inspect reply") && e.contains(expected), "{e}");
            assert!(!e.contains(secret), "the lock value leaked into {e}");
        }
    }

    #[test]
    fn fence_is_a_non_negative_integer_or_nil() {
        assert_eq!(fence(Value::Null), Ok(None));
        assert_eq!(fence(s("0")), Ok(Some(0)));
        assert_eq!(fence(s("18446744073709551615")), Ok(Some(u64::MAX)));
        assert_eq!(fence(Value::Integer(42)), Ok(Some(42)));
        for bad in [
            s("-1"),
            s("+1"),
            s(" 1"),
            s(""),
            s("18446744073709551616"),
            s("1.5"),
            Value::Integer(-1),
            Value::Double(1.0),
            array(vec![s("1")]),
        ] {
            assert!(err(fence(bad)).contains("expected a non-negative integer"));
        }
    }

    #[test]
    fn marker_is_a_string_or_nil() {
        assert_eq!(marker(Value::Null), Ok(None));
        assert_eq!(marker(s("run:replid")), Ok(Some("run:replid".into())));
        assert!(err(marker(Value::Integer(1))).contains("verified marker"));
    }

    #[test]
    fn time_is_seconds_and_microseconds() {
        let t = |a: Value, b: Value| time(array(vec![a, b]));
        assert_eq!(t(s("1700000000"), s("123456")), Ok(1_700_000_000_123_456));
        assert_eq!(t(Value::Integer(0), Value::Integer(999_999)), Ok(999_999));
        let max_secs = u64::MAX / 1_000_000;
        assert_eq!(t(s(&max_secs.to_string()), s("0")), Ok(max_secs * 1_000_000));
        for (bad, expected) in [
            (t(s("-1"), s("0")), "TIME seconds"),
            (t(s("1"), s("-5")), "TIME microseconds"),
            (t(Value::Integer(-1), s("0")), "TIME seconds: -1"),
            (t(s("1"), s("1000000")), "expected below 1000000"),
            (t(s(&(max_secs + 1).to_string()), s("0")), "out of range"),
            (t(s(&u64::MAX.to_string()), s("999999")), "out of range"),
            (time(array(vec![s("1")])), "1 elements"),
            (time(s("1700000000")), "a string of 10 bytes"),
        ] {
            let e = err(bad);
            assert!(e.contains("unexpected TIME") && e.contains(expected), "{e}");
        }
    }

    #[test]
    fn config_get_reads_pairs_or_a_map() {
        let name = "maxmemory-policy";
        assert_eq!(
            config_get(array(vec![s(name), s("noeviction")]), name),
            Ok("noeviction".into())
        );
        let mut map = Map::new();
        map.insert(Key::from(name), s("allkeys-lru"));
        assert_eq!(config_get(Value::Map(map), name), Ok("allkeys-lru".into()));
        // An unknown parameter: an empty reply.
        assert_eq!(config_get(array(vec![]), name), Ok(String::new()));
        assert_eq!(config_get(Value::Map(Map::new()), name), Ok(String::new()));
        for bad in [
            array(vec![s(name)]),
            array(vec![s(name), Value::Integer(1)]),
            Value::Integer(1),
            s("noeviction"),
        ] {
            assert!(err(config_get(bad, name)).contains("unexpected CONFIG GET reply"));
        }
    }

    #[test]
    fn info_fields_are_read_from_the_text() {
        let text = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nuptime_in_seconds:3600\r\n\
                    # Replication\r\nrole:master\r\nmaster_replid:def456\r\nmaster_replid2:000\r\n";
        assert_eq!(
            info(s(text)),
            Ok(Info {
                role: "master".into(),
                run_id: "abc123".into(),
                master_replid: "def456".into(),
                uptime: Duration::from_secs(3600),
            })
        );
        // Missing or garbled fields are empty / zero: the health rules refuse
        // or quarantine such a node.
        assert_eq!(info_text(""), Info::default());
        assert_eq!(info_text("uptime_in_seconds:-5\nuptime_in_seconds:9"), Info::default());
        assert_eq!(info_text("role :master\nrolex:y").role, "");
        assert!(err(info(Value::Integer(1))).contains("INFO reply"));
        assert!(err(info(Value::Bytes(Bytes::from_static(&[0xc3])))).contains("not UTF-8"));
    }
}
