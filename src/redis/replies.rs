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

/// `INSPECT`: `{value or nil, PTTL in ms, fence counter or nil, live
/// readers}`. A negative PTTL (-2: no key, -1: no expiry) is no time left.
///
/// # Errors
/// Anything but an array of those four.
pub fn inspect(reply: Value) -> Result<KeyView, NodeError> {
    let parts = match reply {
        Value::Array(parts) => parts,
        other => return Err(NodeError(format!("unexpected inspect reply: {}", describe(&other)))),
    };
    let [held, pttl, fence, readers] = <[Value; 4]>::try_from(parts).map_err(|parts| {
        NodeError(format!(
            "unexpected inspect reply: {} elements (expected the lock key, PTTL, fence counter, readers)",
            parts.len()
        ))
    })?;
    let readers = match readers {
        Value::Integer(n) => u32::try_from(n).ok(),
        _ => None,
    }
    .ok_or_else(|| NodeError("unexpected inspect reply: the readers are not a count".into()))?;
    Ok(KeyView {
        fence: counter(fence, "inspect reply: the fence counter")?,
        readers,
        ..view(held, pttl, "inspect reply")?
    })
}

/// One lock key (its value and, after the first `\n`, its holder record)
/// and its time left; no fence counter.
pub(super) fn view(held: Value, pttl: Value, what: &str) -> Result<KeyView, NodeError> {
    let held = optional_text(held, &format!("{what}: the lock value"))?;
    let ttl = match pttl {
        Value::Integer(ms) => u64::try_from(ms).ok().map(Duration::from_millis),
        other => {
            return Err(NodeError(format!(
                "unexpected {what}: PTTL is {} (expected an integer)",
                describe(&other)
            )));
        }
    };
    let (value, holder) = match held {
        None => (None, None),
        Some(held) => match held.split_once('\n') {
            Some((value, record)) => (Some(value.to_owned()), Some(record.to_owned())),
            // A lock granted before holder records existed.
            None => (Some(held), None),
        },
    };
    Ok(KeyView {
        value,
        ttl,
        fence: None,
        holder,
        readers: 0,
    })
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
    /// The major version of `redis_version` (Valkey reports 7.2.4 there).
    pub major_version: u32,
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
        major_version: field("redis_version")
            .split('.')
            .next()
            .and_then(|major| major.parse().ok())
            .unwrap_or(0),
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
pub(super) fn describe(value: &Value) -> String {
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
#[path = "replies_tests.rs"]
mod tests;
