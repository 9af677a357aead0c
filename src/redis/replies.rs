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

use crate::redlock::node::{Agreement, KeyView, NodeError, Swap};

pub use super::probe_replies::{Info, config_get, fence, info, info_text, marker, time};

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

/// `SET` for `members` keys: `{1, a positive counter per member}` when
/// granted, else one lock answer as `ROUND`'s (0, -1, -2, -3), read by
/// `locked`, never a grant.
///
/// # Errors
/// Anything else.
pub fn set(reply: Value, members: usize) -> Result<Result<Vec<u64>, Locked>, NodeError> {
    let unexpected = |reply: &Value| NodeError::Reply(format!("unexpected set reply {reply:?} ({members} members)"));
    let Value::Array(parts) = &reply else {
        return Err(unexpected(&reply));
    };
    let numbers: Vec<i64> = (parts.iter())
        .map(|part| match part {
            Value::Integer(n) => Ok(*n),
            _ => Err(unexpected(&reply)),
        })
        .collect::<Result<_, _>>()?;
    match numbers.split_first() {
        Some((1, counters)) if counters.len() == members && counters.iter().all(|c| *c > 0) => {
            Ok(Ok(counters.iter().map(|c| c.unsigned_abs()).collect()))
        }
        Some((status, [])) if *status <= 0 => locked(*status).map(Err),
        _ => Err(unexpected(&reply)),
    }
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
        NodeError::Reply(format!(
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
        n => Err(NodeError::Reply(format!(
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
        n => Err(NodeError::Reply(format!(
            "unexpected release answer {n} (expected 0 or 1)"
        ))),
    }
}

/// `HAND_OFF`: `{was_held, counter, waited}`, `was_held` and `waited` 0 or
/// 1, `counter` 0 (not granted) or the new fence counter.
///
/// # Errors
/// Any other reply.
pub fn hand_off(reply: Value) -> Result<Swap, NodeError> {
    let unexpected = |what: &dyn std::fmt::Debug| {
        NodeError::Reply(format!(
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
        other => Err(NodeError::Reply(format!(
            "unexpected script reply {other:?} (expected 0 or 1)"
        ))),
    }
}

/// `INSPECT`: `{value or nil, PTTL in ms, fence counter or nil, live
/// readers, permits or nil}`. A negative PTTL (-2: no key, -1: no expiry)
/// is no time left.
///
/// # Errors
/// Anything but an array of those five.
pub fn inspect(reply: Value) -> Result<KeyView, NodeError> {
    let parts = match reply {
        Value::Array(parts) => parts,
        other => {
            return Err(NodeError::Reply(format!(
                "unexpected inspect reply: {}",
                describe(&other)
            )));
        }
    };
    let [held, pttl, fence, readers, permits] = <[Value; 5]>::try_from(parts).map_err(|parts| {
        NodeError::Reply(format!(
            "unexpected inspect reply: {} elements (expected the lock key, PTTL, fence counter, readers, permits)",
            parts.len()
        ))
    })?;
    let permits = counter(permits, "inspect reply: the number of permits")?
        .map(|n| u32::try_from(n).map_err(|_| NodeError::Reply("unexpected inspect reply: too many permits".into())))
        .transpose()?;
    let readers = match readers {
        Value::Integer(n) => u32::try_from(n).ok(),
        _ => None,
    }
    .ok_or_else(|| NodeError::Reply("unexpected inspect reply: the readers are not a count".into()))?;
    Ok(KeyView {
        fence: counter(fence, "inspect reply: the fence counter")?,
        readers,
        permits,
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
            return Err(NodeError::Reply(format!(
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
        permits: None,
    })
}

/// `PERMITS`: `{held}` for another number of permits remembered, or `{0,
/// flag per slot}` (`slots` of them).
///
/// # Errors
/// Any other shape.
pub fn agreement(reply: Value, slots: usize) -> Result<Agreement, NodeError> {
    let bad = |what: &str| NodeError::Reply(format!("unexpected permits reply: {what}"));
    let Value::Array(parts) = reply else {
        return Err(bad("not an array"));
    };
    let numbers: Vec<i64> = (parts.iter())
        .map(|p| match p {
            Value::Integer(n) => Ok(*n),
            _ => Err(bad("not integers")),
        })
        .collect::<Result<_, _>>()?;
    match numbers.as_slice() {
        [held] if *held >= 2 => Ok(Agreement {
            held_with: Some(u32::try_from(*held).map_err(|_| bad("too many permits"))?),
            slots_held: Vec::new(),
        }),
        [0, flags @ ..] if flags.len() == slots && flags.iter().all(|f| matches!(f, 0 | 1)) => Ok(Agreement {
            held_with: None,
            slots_held: flags.iter().map(|f| *f == 1).collect(),
        }),
        _ => Err(bad(&format!("{} integers for {slots} slots", numbers.len()))),
    }
}

/// A string reply as UTF-8 text.
pub(super) fn text(value: Value, what: &str) -> Result<String, NodeError> {
    match value {
        Value::String(s) => Ok(s.to_string()),
        Value::Bytes(b) => String::from_utf8(b.to_vec())
            .map_err(|_| NodeError::Reply(format!("unexpected {what}: a string is not UTF-8"))),
        other => Err(NodeError::Reply(format!(
            "unexpected {what}: {} (expected a string)",
            describe(&other)
        ))),
    }
}

/// A string reply, or nil.
pub(super) fn optional_text(value: Value, what: &str) -> Result<Option<String>, NodeError> {
    match value {
        Value::Null => Ok(None),
        other => text(other, what).map(Some),
    }
}

/// A counter stored as a string (or sent as an integer), or nil.
pub(super) fn counter(value: Value, what: &str) -> Result<Option<u64>, NodeError> {
    match value {
        Value::Null => Ok(None),
        other => unsigned(other, what).map(Some),
    }
}

/// A non-negative integer, sent as an integer or as its decimal digits.
pub(super) fn unsigned(value: Value, what: &str) -> Result<u64, NodeError> {
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
        NodeError::Reply(format!("unexpected {what}: {shown} (expected a non-negative integer)"))
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
pub(crate) fn describe(value: &Value) -> String {
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
