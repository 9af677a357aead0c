//! The quarantine and clock-guard knobs, and the hold they give a master
//! that lost or may have lost its data (docs/design.md#quarantine): the
//! rules `standing.rs` judges a whole master by and `shards.rs` each
//! primary of a cluster.

use std::time::Duration;

use tokio::time::Instant;

/// The quarantine and clock-guard knobs.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Quarantine on (off: only with `appendfsync always`, or in tests).
    pub quarantine: bool,
    /// The largest TTL: a node that may have lost its data is held out at
    /// least this long ([`Rules::hold`]).
    pub max_ttl: Duration,
    /// A clock that moved this much against ours between probes has jumped.
    pub clock_jump_bound: Duration,
}

/// The shortest hold: two seed windows (2^20 µs each; docs/design.md#the-fencing-token).
/// A master that came back empty seeds its counters from its clock rounded
/// up to the next window, which lies above every counter handed out before
/// the loss only once its clock has left the window of their seed.
pub(crate) const SHORTEST_HOLD: Duration = Duration::from_secs(2);

impl Rules {
    /// How long a node that lost or may have lost its data is held out, and
    /// how long a new one must have been up: `max_ttl` (every lock it held
    /// has expired everywhere), and at least [`SHORTEST_HOLD`] (its seeds
    /// lie above every counter handed out before).
    pub fn hold(&self) -> Duration {
        self.max_ttl.max(SHORTEST_HOLD)
    }
}

/// The latest possible start of a process up for `uptime` (whole seconds,
/// so each probe gives an upper bound): the smallest `now - uptime` seen
/// since `known` (`None`: since a restart), while it is younger than
/// its hold ([`Rules::hold`]).
pub(super) fn latest_start(known: Option<Instant>, uptime: Duration, rules: &Rules, now: Instant) -> Option<Instant> {
    if uptime >= rules.hold() {
        return known;
    }
    let started = now.checked_sub(uptime).unwrap_or(now);
    Some(known.map_or(started, |s| s.min(started)))
}
