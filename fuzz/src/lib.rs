//! What the fuzz targets check, shared by `fuzz_targets/*` (which are one
//! line each) and by this crate's tests, which run every seed through the
//! same checks and keep the committed seeds (`fuzz/seeds/<target>/`) in step
//! with [`seeds`].
//!
//! Each `check_*` function must never panic on any input, except to report
//! a broken invariant (that panic is the finding).

pub mod value;

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Duration;

use fred::types::Value;
use prost::Message;
use redlockd::api::proto::{
    AcquireManyRequest, AcquireRequest, ExtendRequest, HoldRequest, HoldStart, InspectRequest, ReleaseRequest,
    hold_request,
};
use redlockd::api::request::{self, Limits};
use redlockd::config::Config;
use redlockd::locks::error::Error;
use redlockd::redis::replies;
use redlockd::redlock::Kind;

/// The request limits of `config/default.toml` (loaded as the daemon does,
/// with three placeholder masters so the configuration is complete).
pub static LIMITS: LazyLock<Limits> = LazyLock::new(|| {
    let nodes = "redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3";
    let env = HashMap::from([("REDLOCKD__REDIS__NODES".to_owned(), nodes.to_owned())]);
    let config = Config::load(None, Some(env)).expect("config/default.toml with three masters loads");
    Limits::from(&config.lock)
});

// ---------------------------------------------------------------------------
// request_decoding

/// `request_decoding`: `data` decoded as each request message; whatever
/// decodes is re-encoded (prost must read back what it wrote) and every
/// field goes through the daemon's validators.
pub fn check_request(data: &[u8]) {
    if let Some(m) = decode::<AcquireRequest>(data) {
        resource(&m.resource);
        owner(&m.owner);
        ttl(m.ttl);
        wait(m.wait);
        kind(m.mode, m.permits);
        reentrancy(&m.reentrancy_key);
    }
    if let Some(m) = decode::<AcquireManyRequest>(data) {
        members(&m.resources);
        owner(&m.owner);
        ttl(m.ttl);
        wait(m.wait);
    }
    if let Some(m) = decode::<ExtendRequest>(data) {
        resource(&m.resource);
        value(&m.value);
        ttl(m.ttl);
    }
    if let Some(m) = decode::<ReleaseRequest>(data) {
        resource(&m.resource);
        value(&m.value);
    }
    if let Some(m) = decode::<HoldRequest>(data) {
        match m.request {
            Some(hold_request::Request::Start(start)) => {
                let HoldStart {
                    resource: r,
                    ttl: t,
                    wait: w,
                    owner: o,
                    max_hold: h,
                    mode: m,
                    permits: p,
                    reentrancy_key: k,
                } = start;
                kind(m, p);
                reentrancy(&k);
                resource(&r);
                owner(&o);
                ttl(t);
                wait(w);
                max_hold(h);
            }
            Some(hold_request::Request::Release(_)) | None => {}
        }
    }
    if let Some(m) = decode::<InspectRequest>(data) {
        resource(&m.resource);
    }
}

/// Decodes `data` as `M`; what decodes must survive a re-encoding.
fn decode<M: Message + Default + PartialEq>(data: &[u8]) -> Option<M> {
    let message = M::decode(data).ok()?;
    let again = M::decode(message.encode_to_vec().as_slice()).expect("a re-encoded message decodes");
    assert!(again == message, "a message changed on re-encoding");
    Some(message)
}

/// Whether `s` is `min..=max` bytes without control characters.
fn printable(s: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && !s.chars().any(char::is_control)
}

/// The field an `InvalidArgument` names (anything else is a finding).
fn field_of(e: &Error) -> &'static str {
    match e {
        Error::InvalidArgument { field, .. } => field,
        other => panic!("a validator returned {other:?}, not InvalidArgument"),
    }
}

fn resource(s: &str) {
    match request::resource(s) {
        Ok(()) => assert!(printable(s, 1, request::MAX_RESOURCE_BYTES), "accepted resource {s:?}"),
        Err(e) => {
            assert_eq!(field_of(&e), "resource");
            assert!(
                !printable(s, 1, request::MAX_RESOURCE_BYTES),
                "refused resource {s:?}: {e}"
            );
        }
    }
}

fn owner(s: &str) {
    match request::owner(s) {
        Ok(()) => assert!(printable(s, 0, request::MAX_OWNER_BYTES), "accepted owner {s:?}"),
        Err(e) => {
            assert_eq!(field_of(&e), "owner");
            assert!(!printable(s, 0, request::MAX_OWNER_BYTES), "refused owner {s:?}: {e}");
        }
    }
}

/// What a request asks for: a mode of the enum; 0 or 1 permits (a lock,
/// either mode) or 2 to `max_permits` (a permit, exclusive only).
fn kind(mode: i32, permits: u32) {
    let l = &*LIMITS;
    match l.kind(mode, permits) {
        Ok(Kind::Exclusive) => assert!(mode == 0 && permits <= 1, "exclusive from {mode}, {permits}"),
        Ok(Kind::Shared) => assert!(mode == 1 && permits <= 1, "shared from {mode}, {permits}"),
        Ok(Kind::Permits(n)) => {
            assert!(
                mode == 0 && n == permits && (2..=l.max_permits).contains(&n),
                "{n} permits from {mode}, {permits}"
            )
        }
        Err(e) => match field_of(&e) {
            "mode" => assert!(!(0..=1).contains(&mode), "refused mode {mode}: {e}"),
            "permits" => assert!(
                (0..=1).contains(&mode) && permits >= 2 && (mode == 1 || permits > l.max_permits),
                "refused permits {permits} (mode {mode}): {e}"
            ),
            other => panic!("kind named {other}: {e}"),
        },
    }
}

/// A reentrancy key: at most 128 bytes, never shown in the error.
fn reentrancy(key: &str) {
    match request::reentrancy_key(key) {
        Ok(got) => {
            assert!(
                key.len() <= request::MAX_REENTRANCY_KEY_BYTES,
                "accepted a key of {} bytes",
                key.len()
            );
            assert_eq!(got, Some(key).filter(|k| !k.is_empty()));
        }
        Err(e) => {
            assert_eq!(field_of(&e), "reentrancy_key");
            assert!(
                key.len() > request::MAX_REENTRANCY_KEY_BYTES,
                "refused a key of {} bytes: {e}",
                key.len()
            );
            assert!(
                key.len() < 8 || !e.to_string().contains(key),
                "the key is in the error {e}"
            );
        }
    }
}

/// A set's resources: 1 to 16, each a valid resource.
fn members(list: &[String]) {
    let valid = (1..=redlockd::redlock::MAX_SET).contains(&list.len())
        && list.iter().all(|r| printable(r, 1, request::MAX_RESOURCE_BYTES));
    match request::resources(list) {
        Ok(()) => assert!(valid, "accepted resources {list:?}"),
        Err(e) => {
            assert_eq!(field_of(&e), "resources");
            assert!(!valid, "refused resources {list:?}: {e}");
        }
    }
}

/// Whether `s` is 40 lowercase hex characters.
fn hex40(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A permit's value, `p<of>.<slot>.<hex40>` with `2 <= of`, `slot < of`, both plain decimal of at
/// most 5 digits.
fn permit_value(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('p') else { return false };
    let parts: Vec<&str> = rest.splitn(3, '.').collect();
    let number = |d: &str| {
        (!d.is_empty() && d.len() <= 5 && d.bytes().all(|b| b.is_ascii_digit()))
            .then(|| d.parse::<u32>().ok())
            .flatten()
    };
    match parts.as_slice() {
        [of, slot, hex] => {
            matches!((number(of), number(slot)), (Some(of), Some(slot)) if of >= 2 && slot < of) && hex40(hex)
        }
        _ => false,
    }
}

fn value(s: &str) {
    let issued = hex40(s) || s.strip_prefix('r').is_some_and(hex40) || permit_value(s);
    match request::value(s) {
        Ok(v) => {
            assert!(issued, "accepted value {s:?}");
            assert_eq!(v.expose(), s, "an accepted value changed");
            assert!(!format!("{v:?}").contains(s), "a value's Debug shows it");
        }
        Err(e) => {
            assert_eq!(field_of(&e), "value");
            assert!(!issued, "refused value {s:?}: {e}");
        }
    }
}

/// The exact `Duration` a protobuf duration stands for, when it is a valid
/// non-negative one.
fn exact(d: prost_types::Duration) -> Option<Duration> {
    let secs = u64::try_from(d.seconds).ok()?;
    let nanos = u32::try_from(d.nanos).ok().filter(|n| *n < 1_000_000_000)?;
    Some(Duration::new(secs, nanos))
}

fn ttl(requested: Option<prost_types::Duration>) {
    let l = &*LIMITS;
    let got = l.ttl("ttl", requested);
    let expected = match requested {
        None => Some(l.default_ttl),
        Some(d) => exact(d).filter(|d| (l.min_ttl..=l.max_ttl).contains(d)),
    };
    match got {
        Ok(d) => {
            assert_eq!(Some(d), expected, "ttl {requested:?} was read as {d:?}");
            assert!((l.min_ttl..=l.max_ttl).contains(&d), "ttl {d:?} is outside the limits");
        }
        Err(e) => {
            assert_eq!(field_of(&e), "ttl");
            assert_eq!(expected, None, "refused ttl {requested:?}: {e}");
        }
    }
}

fn wait(requested: Option<prost_types::Duration>) {
    let l = &*LIMITS;
    let expected = match requested {
        None => Some(Duration::ZERO),
        Some(d) => exact(d).filter(|d| *d <= l.max_wait),
    };
    match l.wait(requested) {
        Ok(d) => assert_eq!(Some(d), expected, "wait {requested:?} was read as {d:?}"),
        Err(e) => {
            assert_eq!(field_of(&e), "wait");
            assert_eq!(expected, None, "refused wait {requested:?}: {e}");
        }
    }
}

fn max_hold(requested: Option<prost_types::Duration>) {
    let l = &*LIMITS;
    let expected = match requested {
        None => Some(l.max_hold),
        Some(d) => exact(d).filter(|d| !d.is_zero() && *d <= l.max_hold),
    };
    match l.max_hold(requested) {
        Ok(d) => {
            assert_eq!(Some(d), expected, "max_hold {requested:?} was read as {d:?}");
            assert!(!d.is_zero() && d <= l.max_hold, "max_hold {d:?} is outside the limits");
        }
        Err(e) => {
            assert_eq!(field_of(&e), "max_hold");
            assert_eq!(expected, None, "refused max_hold {requested:?}: {e}");
        }
    }
}

// ---------------------------------------------------------------------------
// script_replies

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
                        assert!(e.0.starts_with("unexpected lock answer"), "{e}");
                    }
                }
                match replies::released(*answer) {
                    Ok(released) => assert_eq!(i64::from(released), *answer),
                    Err(e) => {
                        assert!(!(0..=1).contains(answer), "released refused {answer}");
                        assert!(e.0.starts_with("unexpected release answer"), "{e}");
                    }
                }
            }
        }
        Err(e) => {
            assert!(e.0.starts_with("unexpected round reply"), "{e}");
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
        Err(e) => assert!(e.0.starts_with("unexpected hand-off reply"), "{e}"),
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
            assert!(e.0.starts_with("unexpected batch reply"), "{e}");
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
            assert!(e.0.contains("expected 0 or 1"), "{e}");
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
                assert!(!e.0.contains(&**secret), "the lock value is in the error {e}");
            }
        }
    }
    // GET fence counter, GET marker.
    match replies::fence(reply.clone()) {
        Ok(c) => assert_eq!(c, counter(reply), "fence misread {reply:?}"),
        Err(e) => {
            assert!(e.0.contains("fence counter"), "{e}");
            assert!(counter(reply).is_none(), "fence refused {reply:?}: {e}");
        }
    }
    match replies::marker(reply.clone()) {
        Ok(m) => assert_eq!(m, text(reply), "marker misread {reply:?}"),
        Err(e) => {
            assert!(e.0.contains("marker"), "{e}");
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
        Err(e) => assert!(e.0.starts_with("unexpected TIME"), "{e}"),
    }
    // CONFIG GET, INFO.
    match replies::config_get(reply.clone(), "maxmemory-policy") {
        Ok(v) => assert!(
            matches!(reply, Value::Array(_) | Value::Map(_) | Value::Null),
            "config_get accepted {reply:?} as {v:?}"
        ),
        Err(e) => assert!(e.0.contains("CONFIG GET"), "{e}"),
    }
    match replies::info(reply.clone()) {
        Ok(info) => {
            let t = text(reply).expect("INFO accepted a reply that is not text");
            assert_eq!(info, replies::info_text(&t));
        }
        Err(e) => assert!(e.0.contains("INFO reply"), "{e}"),
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

// ---------------------------------------------------------------------------
// info_text

/// `info_text`: `data` as `INFO` text (lossy UTF-8) and as a raw reply.
pub fn check_info(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let info = replies::info_text(&text);
    for (name, field) in [
        ("role", &info.role),
        ("run_id", &info.run_id),
        ("master_replid", &info.master_replid),
    ] {
        assert_eq!(field.trim(), field, "{name} is not trimmed: {field:?}");
        assert!(!field.contains('\n'), "{name} spans lines: {field:?}");
        if !field.is_empty() {
            assert!(text.contains(&format!("{name}:")), "{name} came from nowhere");
            assert!(text.contains(field.as_str()), "{name} is not in the text");
        }
    }
    if !info.uptime.is_zero() {
        assert!(text.contains("uptime_in_seconds:"), "uptime came from nowhere");
    }
    // The same bytes as a reply: read when UTF-8, refused otherwise.
    let raw = Value::Bytes(fred::bytes::Bytes::copy_from_slice(data));
    match replies::info(raw) {
        Ok(i) => assert_eq!(i, info),
        Err(e) => assert!(std::str::from_utf8(data).is_err(), "refused UTF-8 INFO text: {e}"),
    }
}

// ---------------------------------------------------------------------------
// seeds

/// The seed inputs of each target, by file name (`seed-<what>`), as
/// committed under `fuzz/seeds/<target>/`.
pub fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    match target {
        "request_decoding" => request_seeds(),
        "script_replies" => reply_seeds(),
        "info_text" => info_seeds(),
        other => panic!("no target {other}"),
    }
}

/// The fuzz targets, by name.
pub const TARGETS: [&str; 3] = ["request_decoding", "script_replies", "info_text"];

fn pd(seconds: i64, nanos: i32) -> Option<prost_types::Duration> {
    Some(prost_types::Duration { seconds, nanos })
}

const VALUE: &str = "3f786850e387550fdab836ed7e6dc881de23001b";

fn request_seeds() -> Vec<(String, Vec<u8>)> {
    let seeds = [
        (
            "acquire",
            AcquireRequest {
                resource: "orders/42".into(),
                ttl: pd(10, 0),
                wait: pd(2, 500_000_000),
                owner: "billing-worker-7".into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "acquire-defaults",
            AcquireRequest {
                resource: "jobs:nightly-report".into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "acquire-out-of-range",
            AcquireRequest {
                resource: "x".repeat(257),
                ttl: pd(-1, 0),
                wait: pd(61, 0),
                owner: "tab\there".into(),
                mode: 7,
                permits: 65,
                reentrancy_key: "k".repeat(129),
            }
            .encode_to_vec(),
        ),
        (
            "acquire-permits",
            AcquireRequest {
                resource: "pool".into(),
                permits: 4,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "acquire-many",
            AcquireManyRequest {
                resources: vec!["b".into(), "a".into(), "b".into()],
                ttl: pd(10, 0),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "acquire-shared",
            AcquireRequest {
                resource: "books".into(),
                mode: 1,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "extend",
            ExtendRequest {
                resource: "orders/42".into(),
                value: VALUE.into(),
                ttl: pd(0, 250_000_000),
            }
            .encode_to_vec(),
        ),
        (
            "release",
            ReleaseRequest {
                resource: "orders/42".into(),
                value: VALUE.into(),
            }
            .encode_to_vec(),
        ),
        (
            "hold-start",
            HoldRequest {
                request: Some(hold_request::Request::Start(HoldStart {
                    resource: "leader/scheduler".into(),
                    ttl: pd(5, 0),
                    wait: pd(60, 0),
                    owner: "scheduler-0".into(),
                    max_hold: pd(3600, 0),
                    mode: 0,
                    permits: 2,
                    reentrancy_key: "trace-1".into(),
                })),
            }
            .encode_to_vec(),
        ),
        (
            "hold-release",
            HoldRequest {
                request: Some(hold_request::Request::Release(Default::default())),
            }
            .encode_to_vec(),
        ),
        (
            "inspect",
            InspectRequest {
                resource: "é/ünïcode".into(),
            }
            .encode_to_vec(),
        ),
    ];
    seeds.into_iter().map(|(n, b)| (format!("seed-{n}"), b)).collect()
}

fn reply_seeds() -> Vec<(String, Vec<u8>)> {
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

/// `INFO` from a Redis 7 master, cut to the sections the probe reads from.
const INFO: &str = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\n\
process_id:4242\r\nrun_id:6a8b0f2e4c1d3e5f7a9b0c1d2e3f4a5b6c7d8e9f\r\ntcp_port:6379\r\n\
uptime_in_seconds:86400\r\nuptime_in_days:1\r\n\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\
master_failover_state:no-failover\r\nmaster_replid:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c\r\n\
master_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\n";

fn info_seeds() -> Vec<(String, Vec<u8>)> {
    let seeds = [
        ("master", INFO.to_owned()),
        (
            "replica",
            INFO.replace("role:master", "role:slave\r\nmaster_host:10.0.0.7\r\nmaster_port:6379"),
        ),
        (
            "lf-garbled",
            "role:master\nrun_id: abc \nuptime_in_seconds:-1\nrole:slave\n".to_owned(),
        ),
    ];
    seeds
        .into_iter()
        .map(|(n, t)| (format!("seed-{n}"), t.into_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn seed_dir(target: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds").join(target)
    }

    /// `REDLOCKD_FUZZ_WRITE_SEEDS=1 cargo test` rewrites `fuzz/seeds/`.
    #[test]
    fn committed_seeds_are_the_generated_ones() {
        let write = std::env::var_os("REDLOCKD_FUZZ_WRITE_SEEDS").is_some();
        for target in TARGETS {
            let dir = seed_dir(target);
            let seeds = seeds(target);
            if write {
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                for (name, bytes) in &seeds {
                    std::fs::write(dir.join(name), bytes).unwrap();
                }
            }
            let mut committed: Vec<String> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            committed.sort();
            let mut names: Vec<String> = seeds.iter().map(|(n, _)| n.clone()).collect();
            names.sort();
            assert_eq!(committed, names, "{target}: run with REDLOCKD_FUZZ_WRITE_SEEDS=1");
            for (name, bytes) in seeds {
                let on_disk = std::fs::read(dir.join(&name)).unwrap();
                assert_eq!(on_disk, bytes, "{target}/{name}: run with REDLOCKD_FUZZ_WRITE_SEEDS=1");
            }
        }
    }

    #[test]
    fn every_seed_passes_its_checks() {
        for (_, bytes) in seeds("request_decoding") {
            check_request(&bytes);
        }
        for (_, bytes) in seeds("script_replies") {
            check_replies(&bytes);
        }
        for (_, bytes) in seeds("info_text") {
            check_info(&bytes);
        }
    }

    #[test]
    fn request_seeds_decode_as_meant() {
        let seeds: HashMap<String, Vec<u8>> = request_seeds().into_iter().collect();
        let acquire = AcquireRequest::decode(seeds["seed-acquire"].as_slice()).unwrap();
        assert_eq!(acquire.resource, "orders/42");
        assert!(LIMITS.ttl("ttl", acquire.ttl).is_ok());
        let extend = ExtendRequest::decode(seeds["seed-extend"].as_slice()).unwrap();
        assert!(request::value(&extend.value).is_ok());
    }

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

    #[test]
    fn info_seed_is_read() {
        let info = replies::info_text(INFO);
        assert_eq!(info.role, "master");
        assert_eq!(info.uptime, Duration::from_secs(86_400));
    }
}
