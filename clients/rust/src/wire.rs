//! Durations and modes between Rust and the wire.

use std::time::Duration;

/// A `Duration` on the wire (saturating).
pub fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration::try_from(d).unwrap_or(prost_types::Duration {
        seconds: i64::MAX,
        nanos: 0,
    })
}

/// A wire duration as a `Duration` (negative or missing: zero).
pub(crate) fn from_wire(d: Option<prost_types::Duration>) -> Duration {
    d.and_then(|d| Duration::try_from(d).ok()).unwrap_or_default()
}

/// The lock mode on the wire: shared or exclusive.
pub(crate) fn mode(shared: bool) -> crate::proto::LockMode {
    if shared {
        crate::proto::LockMode::Shared
    } else {
        crate::proto::LockMode::Exclusive
    }
}
