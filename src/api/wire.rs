//! The daemon's values on the wire: leases, what each master said, why an
//! acquisition failed, who holds a lock, durations.

use std::time::Duration;

use crate::api::proto::{FailureReason as WireReason, Holder as WireHolder, Lease as WireLease, LockMode, NodeOutcome};
use crate::redlock::{FailureReason, Holder, Lease, Mode, NodeVote};

/// What each master said, on the wire.
pub(crate) fn wire_outcomes(votes: &[NodeVote]) -> Vec<i32> {
    votes.iter().map(|v| wire_outcome(v).into()).collect()
}

fn wire_outcome(vote: &NodeVote) -> NodeOutcome {
    match vote {
        NodeVote::Granted(_) => NodeOutcome::Granted,
        NodeVote::Taken => NodeOutcome::Taken,
        NodeVote::TimedOut => NodeOutcome::TimedOut,
        NodeVote::Errored(_) => NodeOutcome::Errored,
        NodeVote::Quarantined => NodeOutcome::Quarantined,
        NodeVote::Unusable(_) => NodeOutcome::Unusable,
        NodeVote::NotAwaited => NodeOutcome::NotAwaited,
    }
}

/// A lease on `resource` (the name the client asked for) on the wire, with
/// `validity` as of now.
pub(crate) fn wire_lease(resource: &str, lease: &Lease, validity: Duration) -> WireLease {
    WireLease {
        resource: resource.to_owned(),
        value: lease.value.expose().to_owned(),
        fencing_token: lease.fencing_token,
        validity: Some(wire_duration(validity)),
        mode: wire_mode(lease.value.mode()).into(),
        permits: lease.value.permit().map_or(0, |p| p.of),
        slot: lease.value.permit().map_or(0, |p| p.slot),
    }
}

/// A lock's mode, on the wire.
pub(crate) fn wire_mode(mode: Mode) -> LockMode {
    match mode {
        Mode::Exclusive => LockMode::Exclusive,
        Mode::Shared => LockMode::Shared,
    }
}

/// Why an acquisition failed, on the wire.
pub(crate) fn wire_reason(reason: FailureReason) -> WireReason {
    match reason {
        FailureReason::Taken => WireReason::Taken,
        FailureReason::ValidityUsedUp { .. } => WireReason::ValidityUsedUp,
    }
}

/// A `Duration` on the wire (saturating).
pub(crate) fn wire_duration(d: Duration) -> pbjson_types::Duration {
    match i64::try_from(d.as_secs()) {
        Ok(seconds) => pbjson_types::Duration {
            seconds,
            nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
        },
        Err(_) => pbjson_types::Duration {
            seconds: i64::MAX,
            nanos: 0,
        },
    }
}

/// Who holds a lock, on the wire.
pub(crate) fn wire_holder(holder: &Holder) -> WireHolder {
    WireHolder {
        owner: holder.owner.clone(),
        tenant: holder.tenant.clone(),
        daemon: holder.daemon.clone(),
        since: Some(pbjson_types::Timestamp {
            seconds: (holder.since_ms / 1000) as i64,
            nanos: ((holder.since_ms % 1000) * 1_000_000) as i32,
        }),
        fencing_token: holder.fencing_token,
        ttl: Some(wire_duration(holder.ttl)),
    }
}
