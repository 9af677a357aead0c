//! A master's standing (docs/design.md#quarantine): usable, quarantined, or failed
//! preflight; and the pure rules that decide it from what a probe saw
//! (role, eviction policy, identity, uptime, clock).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::rules::{Rules, latest_start};
use super::shards::Shards;
pub use super::shards::{Primary, ShardSeen};

/// Whether a node may count towards an acquire quorum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Not probed yet since start or since its connection was re-made.
    Unverified,
    /// Counts towards acquire quorums.
    Usable,
    /// May have lost locks; not counted until `until` (then its fence
    /// counter is repaired before it rejoins).
    Quarantined {
        /// When it may rejoin.
        until: Instant,
        /// Why it was quarantined.
        reason: String,
    },
    /// Failed preflight; not used until a later probe passes.
    Failed {
        /// Which check failed.
        check: Check,
        /// What was wrong.
        reason: String,
    },
}

impl Standing {
    /// The standing's name on the wire and in metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Standing::Usable => "usable",
            Standing::Quarantined { .. } => "quarantined",
            Standing::Failed { .. } => "preflight_failed",
            Standing::Unverified => "unverified",
        }
    }
}

/// The preflight checks, as metric label values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `role` must be `master`.
    Role,
    /// `maxmemory-policy` must be `noeviction`.
    EvictionPolicy,
    /// The scripts must load.
    Scripts,
}

impl Check {
    /// Every check, for exporting zeroes.
    pub const ALL: [Check; 3] = [Check::Role, Check::EvictionPolicy, Check::Scripts];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Role => "role",
            Check::EvictionPolicy => "maxmemory_policy",
            Check::Scripts => "scripts",
        }
    }
}

/// A master refused to load a script (an ACL without `SCRIPT`, a server
/// that cannot compile it): what it answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reply}")]
pub struct ScriptRefused {
    /// The master's error reply.
    pub reply: String,
}

/// What one probe of a master saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// `role` from `INFO replication`.
    pub role: String,
    /// `maxmemory-policy` from `CONFIG GET`.
    pub maxmemory_policy: String,
    /// `run_id`: changes when the process restarts.
    pub run_id: String,
    /// `master_replid`: changes on failover to a replica.
    pub master_replid: String,
    /// `uptime_in_seconds`.
    pub uptime: Duration,
    /// The node's `TIME`, in microseconds since the epoch.
    pub node_time_us: u64,
    /// Our monotonic clock halfway through the `TIME` round trip.
    pub sampled_at: Instant,
    /// Half that round trip: how far off `sampled_at` can be.
    pub time_uncertainty: Duration,
    /// Whether the scripts loaded.
    pub scripts_loaded: Result<(), ScriptRefused>,
    /// The marker a daemon writes when it verifies the node: the identity
    /// (`run_id:master_replid`) of the process whose data it vouches for.
    /// Missing or naming another process: this process's data was never
    /// verified (new, restarted, failed over, flushed).
    pub marker: Option<String>,
    /// A cluster position's primaries, each judged on its own
    /// (`shards.rs`); empty for a standalone master.
    pub shards: Vec<ShardSeen>,
}

impl Observation {
    /// `run_id:master_replid`, the value the marker must hold.
    pub fn identity(&self) -> String {
        format!("{}:{}", self.run_id, self.master_replid)
    }

    /// Whether the marker vouches for this very process.
    pub fn verified(&self) -> bool {
        self.marker.as_deref() == Some(self.identity().as_str())
    }
}

/// What the probes remember of one node, and its current standing.
#[derive(Debug)]
pub struct NodeHealth {
    state: Mutex<Memory>,
}

#[derive(Debug)]
struct Memory {
    standing: Standing,
    identity: Option<(String, String)>,
    /// node clock (µs) minus our clock (µs since `base`), from the last
    /// probe, and how uncertain that sample was (µs).
    clock_offset_us: Option<(i128, u128)>,
    base: Instant,
    /// The latest possible start of the current process, by our clock: the
    /// smallest `now - uptime` seen (uptime is whole seconds, so each probe
    /// gives an upper bound of the true start).
    started_by: Option<Instant>,
    /// Held out until then for an event (restart, failover, jump, lost data).
    held_until: Option<(Instant, String)>,
    /// An unverified marker was already counted as an event.
    unverified_seen: bool,
    /// The marker vouched for this process at the last probe (or a repair
    /// wrote it since): its counter can be trusted.
    verified: bool,
    /// Bumped whenever the connection is re-made: a probe's verdict is only
    /// applied if no reconnect happened while it ran.
    generation: u64,
    /// A cluster position's shards (nothing for a standalone master).
    shards: Shards,
    /// Why the last probe could not reach it (`None` once one did).
    unreachable: Option<String>,
}

/// What a probe decided: the new standing, and whether the node needs its
/// fence counter repaired before it can be usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Use it as it is.
    Usable,
    /// Quarantine is off and the marker does not vouch for this process:
    /// write the marker and use it.
    Adopt,
    /// Repair the counter first (it was quarantined and may rejoin now).
    RepairThenUsable,
    /// Keep out until the standing's `until`.
    Quarantine(Standing),
    /// Preflight failed.
    Fail(Check, String),
}

impl Default for NodeHealth {
    fn default() -> NodeHealth {
        NodeHealth {
            state: Mutex::new(Memory {
                standing: Standing::Unverified,
                identity: None,
                clock_offset_us: None,
                base: Instant::now(),
                started_by: None,
                held_until: None,
                unverified_seen: false,
                verified: false,
                generation: 0,
                shards: Shards::default(),
                unreachable: None,
            }),
        }
    }
}

impl NodeHealth {
    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current standing.
    pub fn standing(&self) -> Standing {
        self.memory().standing.clone()
    }

    /// Why the last probe could not reach the node, if it could not.
    pub fn unreachable(&self) -> Option<String> {
        self.memory().unreachable.clone()
    }

    /// Notes why a probe could not reach the node (`None`: it did).
    pub fn set_unreachable(&self, reason: Option<String>) {
        self.memory().unreachable = reason;
    }

    /// A cluster position's primaries as the last probe saw them, each
    /// with its buckets and how many are out (none for a standalone master).
    pub fn primaries(&self) -> Vec<Primary> {
        self.memory().shards.primaries(Instant::now())
    }

    /// Sets the standing.
    pub fn set(&self, standing: Standing) {
        self.memory().standing = standing;
    }

    /// The connection was re-made (or the node said it is unverified): keep
    /// it out until a new probe, and void probes already running.
    pub fn invalidate(&self) {
        let mut memory = self.memory();
        memory.generation += 1;
        memory.standing = Standing::Unverified;
    }

    /// Whether the node's data (its counter) is vouched for by its marker.
    pub fn verified(&self) -> bool {
        self.memory().verified
    }

    /// A repair wrote the marker for this process.
    pub fn mark_verified(&self) {
        self.memory().verified = true;
    }

    /// The standing for the locks of `bucket`: the node's, unless the
    /// bucket's shard is held out or not yet repaired
    /// (docs/design.md#cluster-positions).
    pub fn standing_for(&self, bucket: u16) -> Standing {
        let memory = self.memory();
        if memory.standing != Standing::Usable {
            return memory.standing.clone();
        }
        if memory.shards.all_in() {
            return Standing::Usable;
        }
        let now = Instant::now();
        if let Some((until, reason)) = memory.shards.held(bucket, now) {
            return Standing::Quarantined {
                until,
                reason: reason.to_owned(),
            };
        }
        if memory.shards.unrepaired(bucket) {
            return Standing::Quarantined {
                until: now,
                reason: "its shard's counters are being repaired".into(),
            };
        }
        Standing::Usable
    }

    /// Whether the node's counter of `bucket` is vouched for by a marker.
    pub fn verified_for(&self, bucket: u16) -> bool {
        let memory = self.memory();
        memory.verified && !memory.shards.unrepaired(bucket)
    }

    /// A cluster's buckets that no marker vouches for and no hold keeps
    /// out any more: to repair (or adopt) now.
    pub fn buckets_to_repair(&self) -> Vec<u16> {
        self.memory().shards.to_repair(Instant::now())
    }

    /// How many of a cluster's buckets are out; and, when all of them are,
    /// the standing of the position as a whole (quarantined until the
    /// first comes back).
    pub fn buckets_out(&self) -> (usize, Option<Standing>) {
        let (out, whole) = self.memory().shards.out(Instant::now());
        (
            out,
            whole.map(|(until, reason)| Standing::Quarantined { until, reason }),
        )
    }

    /// A repair vouched for a cluster's `buckets`.
    pub fn buckets_repaired(&self, buckets: &[u16]) {
        self.memory().shards.repaired(buckets);
    }

    /// The current generation, read before a probe.
    pub fn generation(&self) -> u64 {
        self.memory().generation
    }

    /// Sets the standing decided by a probe that started at `generation`,
    /// unless the connection was re-made since. Returns whether it was set.
    pub fn set_if_current(&self, generation: u64, standing: Standing) -> bool {
        let mut memory = self.memory();
        let current = memory.generation == generation;
        if current {
            memory.standing = standing;
        }
        current
    }

    /// Applies the rules to a probe and remembers what it saw.
    pub fn assess(&self, obs: &Observation, rules: &Rules, now: Instant) -> Verdict {
        let mut memory = self.memory();
        if obs.role != "master" {
            return Verdict::Fail(Check::Role, format!("role is {}, not master", obs.role));
        }
        if obs.maxmemory_policy != "noeviction" {
            return Verdict::Fail(
                Check::EvictionPolicy,
                format!(
                    "maxmemory-policy is {}; only noeviction is safe (any other policy can evict lock keys)",
                    obs.maxmemory_policy
                ),
            );
        }
        if let Err(e) = &obs.scripts_loaded {
            return Verdict::Fail(Check::Scripts, format!("scripts do not load: {e}"));
        }

        let identity = (obs.run_id.clone(), obs.master_replid.clone());
        let changed = memory.identity.as_ref().is_some_and(|known| *known != identity);
        memory.identity = Some(identity);
        let offset = i128::from(obs.node_time_us) - obs.sampled_at.duration_since(memory.base).as_micros() as i128;
        let uncertainty = obs.time_uncertainty.as_micros();
        // A slow round trip is not a jump: allow both samples' uncertainty.
        let jump = memory
            .clock_offset_us
            .map(|(before, slack)| (offset - before).unsigned_abs().saturating_sub(slack + uncertainty));
        memory.clock_offset_us = Some((offset, uncertainty));
        if !obs.shards.is_empty() {
            return assess_cluster(&mut memory, obs, rules, now, jump);
        }
        memory.started_by = latest_start(memory.started_by.filter(|_| !changed), obs.uptime, rules, now);
        let verified = obs.verified();
        memory.verified = verified;
        if !rules.quarantine {
            return if verified { Verdict::Usable } else { Verdict::Adopt };
        }

        // Each loss of verification is one event, not one per probe.
        let newly_unverified = !verified && !memory.unverified_seen;
        memory.unverified_seen = !verified;
        let event = if changed {
            Some("run_id or master_replid changed (restart or failover)".to_owned())
        } else if newly_unverified {
            Some("its data is not verified for this process (new, restarted, failed over or flushed)".to_owned())
        } else {
            jump.filter(|j| *j > rules.clock_jump_bound.as_micros())
                .map(|j| format!("clock jumped by at least {} ms", j / 1000))
        };
        if let Some(reason) = event {
            memory.hold(reason, now + rules.hold());
        }
        let young = memory.started_by.map(|s| {
            (
                s + rules.hold(),
                "up for less than its hold (lock.max_ttl, at least 2 s)".to_owned(),
            )
        });
        let hold = [memory.held_until.clone(), young]
            .into_iter()
            .flatten()
            .filter(|(until, _)| *until > now)
            .max_by_key(|(until, _)| *until);
        match hold {
            Some((until, reason)) => Verdict::Quarantine(Standing::Quarantined { until, reason }),
            // Verified data (a restart with its data, a clock jump): counters
            // are intact, no repair needed.
            None if verified => Verdict::Usable,
            None => Verdict::RepairThenUsable,
        }
    }
}

impl Memory {
    /// Holds the node out until `until` for `reason`; a new event never
    /// shortens a hold already running.
    fn hold(&mut self, reason: String, until: Instant) {
        let until = self.held_until.as_ref().map_or(until, |(held, _)| until.max(*held));
        self.held_until = Some((until, reason));
    }
}

/// A cluster position: each primary's identity, uptime and markers hold
/// out its own buckets (`shards.rs`); only a clock jump (of the first
/// primary, whose clock the probe samples) holds out the whole position.
fn assess_cluster(memory: &mut Memory, obs: &Observation, rules: &Rules, now: Instant, jump: Option<u128>) -> Verdict {
    memory.shards.assess(&obs.shards, rules, now);
    memory.verified = true;
    if !rules.quarantine {
        return Verdict::Usable;
    }
    if let Some(jump) = jump.filter(|j| *j > rules.clock_jump_bound.as_micros()) {
        memory.hold(
            format!("clock jumped by at least {} ms", jump / 1000),
            now + rules.hold(),
        );
    }
    match memory.held_until.clone().filter(|(until, _)| *until > now) {
        Some((until, reason)) => Verdict::Quarantine(Standing::Quarantined { until, reason }),
        None => Verdict::Usable,
    }
}

#[cfg(test)]
#[path = "standing_tests.rs"]
mod tests;
