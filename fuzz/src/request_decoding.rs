//! The `request_decoding` target: protobuf bytes decoded as each request
//! message, re-encoded, and every field put through the daemon's validators
//! with the limits of `config/default.toml`; and its seeds.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Duration;

use prost::Message;
use redlockd::api::proto::{
    AcquireManyRequest, AcquireRequest, ExtendRequest, HoldRequest, HoldStart, InspectRequest, ReleaseRequest,
    hold_request,
};
use redlockd::api::request::{self, Limits};
use redlockd::config::Config;
use redlockd::locks::error::Error;
use redlockd::redlock::Kind;

use crate::VALUE;

/// The request limits of `config/default.toml` (loaded as the daemon does,
/// with three placeholder masters so the configuration is complete).
pub static LIMITS: LazyLock<Limits> = LazyLock::new(|| {
    let nodes = "redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3";
    let env = HashMap::from([("REDLOCKD__REDIS__NODES".to_owned(), nodes.to_owned())]);
    let config = Config::load(None, Some(env)).expect("config/default.toml with three masters loads");
    Limits::from(&config.lock)
});

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
        lock_delay(m.lock_delay);
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
                    lock_delay: d,
                } = start;
                kind(m, p);
                reentrancy(&k);
                resource(&r);
                owner(&o);
                ttl(t);
                wait(w);
                max_hold(h);
                lock_delay(d);
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
fn exact(d: pbjson_types::Duration) -> Option<Duration> {
    let secs = u64::try_from(d.seconds).ok()?;
    let nanos = u32::try_from(d.nanos).ok().filter(|n| *n < 1_000_000_000)?;
    Some(Duration::new(secs, nanos))
}

fn ttl(requested: Option<pbjson_types::Duration>) {
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

fn wait(requested: Option<pbjson_types::Duration>) {
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

fn max_hold(requested: Option<pbjson_types::Duration>) {
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

fn lock_delay(requested: Option<pbjson_types::Duration>) {
    let l = &*LIMITS;
    let expected = match requested {
        None => Some(Duration::ZERO),
        Some(d) => exact(d).filter(|d| *d <= l.max_lock_delay),
    };
    match l.lock_delay(requested) {
        Ok(d) => {
            assert_eq!(Some(d), expected, "lock_delay {requested:?} was read as {d:?}");
            assert!(d <= l.max_lock_delay, "lock_delay {d:?} is outside the limits");
        }
        Err(e) => {
            assert_eq!(field_of(&e), "lock_delay");
            assert_eq!(expected, None, "refused lock_delay {requested:?}: {e}");
        }
    }
}

fn pd(seconds: i64, nanos: i32) -> Option<pbjson_types::Duration> {
    Some(pbjson_types::Duration { seconds, nanos })
}

pub(crate) fn request_seeds() -> Vec<(String, Vec<u8>)> {
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
                lock_delay: None,
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
                    lock_delay: pd(2, 0),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_seeds_decode_as_meant() {
        let seeds: HashMap<String, Vec<u8>> = request_seeds().into_iter().collect();
        let acquire = AcquireRequest::decode(seeds["seed-acquire"].as_slice()).unwrap();
        assert_eq!(acquire.resource, "orders/42");
        assert!(LIMITS.ttl("ttl", acquire.ttl).is_ok());
        let extend = ExtendRequest::decode(seeds["seed-extend"].as_slice()).unwrap();
        assert!(request::value(&extend.value).is_ok());
    }
}
