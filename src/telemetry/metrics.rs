//! Prometheus metrics: one registry, made in `main` and passed down (no
//! globals, so tests see fresh counters), served as text on `/metrics` from
//! its own port. Labels are bounded: a node is its index, never a resource.

use std::sync::OnceLock;
use std::time::Duration;

use super::labels::{Failure, HandOff, Leadership, LockKind};
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// The node states, as label values.
const STATES: [&str; 4] = ["usable", "quarantined", "preflight_failed", "unverified"];

/// Latency buckets, in seconds: sub-millisecond to the longest waits.
const LATENCY: &[f64] = &[
    0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
];
/// Hold-time buckets, in seconds (the seed's 1 s and 5 s among them).
const HOLD: &[f64] = &[0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0];

use super::labels::Status;

/// Counts since start, read by the status page (`Metrics::totals`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// `redlock_acquire_total{status="success"}`.
    pub acquired: u64,
    /// `redlock_acquire_total{status=~"fail|error"}`.
    pub failed: u64,
    /// `redlock_extend_total{status="fail"}`: held locks lost.
    pub lost: u64,
}

/// Masters whose request histogram `Metrics` keeps at hand.
const CACHED_NODES: usize = 16;

/// Every series the daemon exports.
pub struct Metrics {
    registry: Registry,
    node_state: IntGaugeVec,
    node_preflight_failed: IntGaugeVec,
    /// `redlockd_node_buckets_quarantined{node}`: a cluster position's
    /// buckets held out of acquire quorums.
    node_buckets_out: IntGaugeVec,
    /// `redlock_acquire_total{status}` (seed 001).
    acquire_total: IntCounterVec,
    /// `redlockd_acquire_by_kind_total{kind,status}`: the same by kind of
    /// lock (a bounded set: `LockKind`), each series looked up once, here, by
    /// kind and status (`Status as usize`).
    acquire_by_kind: Vec<[IntCounter; 3]>,
    acquire_failures: IntCounterVec,
    acquire_seconds: Histogram,
    extend_total: IntCounterVec,
    extend_seconds: Histogram,
    release_total: IntCounterVec,
    release_seconds: Histogram,
    /// `redlock_hold_time_seconds` (seed 001).
    hold_seconds: Histogram,
    node_seconds: HistogramVec,
    /// `node_seconds` of the first `CACHED_NODES` masters, looked up once:
    /// a lock cycle records ten node requests, and each lookup formats the
    /// index and hashes the label (docs/performance.md, workload (b)).
    node_seconds_of: [OnceLock<Histogram>; CACHED_NODES],
    node_errors: IntCounterVec,
    node_not_awaited: IntCounterVec,
    probe_timeouts: IntCounterVec,
    /// `redlock_handoffs_total{outcome}`: releases that handed the lock to
    /// the next local waiter in one round.
    handoffs: IntCounterVec,
    /// Locks held through this daemon (granted, not yet released or expired).
    locks_held: IntGauge,
    /// Requests waiting in this daemon's queues.
    waiters: IntGauge,
    /// Open Hold sessions.
    sessions: IntGauge,
    /// `redlockd_reentered_total`: acquisitions answered with the lock
    /// already held under their reentrancy key.
    reentered: IntCounter,
    /// `redlockd_elections_total{outcome}`: leaderships through this daemon
    /// (elected, lost, resigned) (docs/design.md#elections).
    elections: IntCounterVec,
    /// `redlockd_followers`: open Observe and Watch streams.
    followers: IntGauge,
    /// `redlockd_leader_changes_total`: changes of leader (or of its value)
    /// passed on to observers.
    leader_changes: IntCounter,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh registry with every series registered.
    ///
    /// # Panics
    /// Never in practice: the names are static and distinct.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let node_state = IntGaugeVec::new(
            Opts::new(
                "redlock_node_state",
                "1 for the state each Redis master is in (usable, quarantined, preflight_failed, unverified)",
            ),
            &["node", "state"],
        )
        .expect("metric definition");
        let node_preflight_failed = IntGaugeVec::new(
            Opts::new(
                "redlock_node_preflight_failed",
                "1 when a master fails the named preflight check (role, maxmemory_policy, scripts) and is not used",
            ),
            &["node", "check"],
        )
        .expect("metric definition");
        // The process's own series (process_cpu_seconds_total,
        // process_resident_memory_bytes, process_open_fds, ...).
        #[cfg(target_os = "linux")]
        registry
            .register(Box::new(prometheus::process_collector::ProcessCollector::for_self()))
            .expect("register");
        let build_info = IntGaugeVec::new(
            Opts::new(
                "redlockd_build_info",
                "1, labelled with the version of the running redlockd",
            ),
            &["version"],
        )
        .expect("metric definition");
        build_info.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        registry.register(Box::new(build_info)).expect("register");
        let node_buckets_out = IntGaugeVec::new(
            Opts::new(
                "redlockd_node_buckets_quarantined",
                "Buckets of a Redis Cluster position held out of acquire quorums after a primary restarted or \
                 failed over or slots moved, until they are repaired (0 for a standalone master)",
            ),
            &["node"],
        )
        .expect("metric definition");
        registry.register(Box::new(node_buckets_out.clone())).expect("register");
        registry.register(Box::new(node_state.clone())).expect("register");
        registry
            .register(Box::new(node_preflight_failed.clone()))
            .expect("register");
        let counter = |name: &str, help: &str, label: &str| {
            let c = IntCounterVec::new(Opts::new(name, help), &[label]).expect("metric definition");
            registry.register(Box::new(c.clone())).expect("register");
            c
        };
        let histogram = |name: &str, help: &str, buckets: &[f64]| {
            let h = Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.to_vec())).expect("metric");
            registry.register(Box::new(h.clone())).expect("register");
            h
        };
        let gauge = |name: &str, help: &str| {
            let g = IntGauge::new(name, help).expect("metric definition");
            registry.register(Box::new(g.clone())).expect("register");
            g
        };
        let node_seconds = HistogramVec::new(
            HistogramOpts::new(
                "redlock_node_request_duration_seconds",
                "Each master's answer time in rounds",
            )
            .buckets(LATENCY.to_vec()),
            &["node"],
        )
        .expect("metric definition");
        registry.register(Box::new(node_seconds.clone())).expect("register");
        let acquire_by_kind = IntCounterVec::new(
            Opts::new(
                "redlockd_acquire_by_kind_total",
                "Acquire requests by kind of lock (exclusive, shared, permit, set) and outcome",
            ),
            &["kind", "status"],
        )
        .expect("metric definition");
        registry.register(Box::new(acquire_by_kind.clone())).expect("register");
        let statuses = Status::ALL;
        let metrics = Metrics {
            acquire_by_kind: (LockKind::ALL.iter())
                .map(|kind| statuses.map(|status| acquire_by_kind.with_label_values(&[kind.as_str(), status.as_str()])))
                .collect(),
            acquire_total: counter("redlock_acquire_total", "Acquire requests by outcome", "status"),
            acquire_failures: counter(
                "redlock_acquire_failures_total",
                "Acquisitions that ended without a lock, by reason (taken, wait_timed_out, validity_used_up, \
                 no_quorum, cancelled, deadline, limit, permits_differ, held_as_other_kind, other)",
                "reason",
            ),
            acquire_seconds: histogram(
                "redlock_acquire_duration_seconds",
                "Acquire latency, waiting included",
                LATENCY,
            ),
            extend_total: counter("redlock_extend_total", "Extensions by outcome", "status"),
            extend_seconds: histogram("redlock_extend_duration_seconds", "Extension latency", LATENCY),
            release_total: counter(
                "redlock_release_total",
                "Releases by outcome (fail: no longer held)",
                "status",
            ),
            release_seconds: histogram("redlock_release_duration_seconds", "Release latency", LATENCY),
            hold_seconds: histogram(
                "redlock_hold_time_seconds",
                "How long locks were held, grant to release",
                HOLD,
            ),
            node_errors: counter(
                "redlock_node_errors_total",
                "Failed or timed-out requests per master",
                "node",
            ),
            node_not_awaited: counter(
                "redlock_node_requests_not_awaited_total",
                "Requests per master whose answer was not awaited: the round was decided by the others first, or \
                 was cut off",
                "node",
            ),
            probe_timeouts: counter(
                "redlock_node_probe_timeouts_total",
                "Health probes per master that timed out (a usable master is marked out at the second in a row)",
                "node",
            ),
            handoffs: counter(
                "redlock_handoffs_total",
                "Releases that handed the lock straight to this daemon's next waiter, by outcome (handed, failed, \
                 unavailable)",
                "outcome",
            ),
            locks_held: gauge("redlock_locks_held", "Locks held through this daemon"),
            waiters: gauge("redlock_waiters", "Requests waiting in this daemon's queues"),
            sessions: gauge("redlock_sessions", "Open Hold sessions"),
            reentered: {
                let c = IntCounter::new(
                    "redlockd_reentered_total",
                    "Acquisitions answered with the lock already held under their reentrancy key",
                )
                .expect("metric definition");
                registry.register(Box::new(c.clone())).expect("register");
                c
            },
            elections: counter(
                "redlockd_elections_total",
                "Leaderships through this daemon, by outcome (elected, lost, resigned)",
                "outcome",
            ),
            followers: gauge("redlockd_followers", "Open Observe and Watch streams"),
            leader_changes: {
                let c = IntCounter::new(
                    "redlockd_leader_changes_total",
                    "Changes of leader or of its value passed on to observers",
                )
                .expect("metric definition");
                registry.register(Box::new(c.clone())).expect("register");
                c
            },
            node_seconds,
            node_seconds_of: std::array::from_fn(|_| OnceLock::new()),
            registry,
            node_state,
            node_preflight_failed,
            node_buckets_out,
        };
        // Every outcome's series exists from the start, at 0: a rate() sees
        // the first errors, and an alert does not wait for a second burst.
        for status in Status::ALL {
            for counter in [&metrics.acquire_total, &metrics.extend_total, &metrics.release_total] {
                counter.with_label_values(&[status.as_str()]);
            }
        }
        for reason in Failure::ALL {
            metrics.acquire_failures.with_label_values(&[reason.as_str()]);
        }
        for outcome in HandOff::ALL {
            metrics.handoffs.with_label_values(&[outcome.as_str()]);
        }
        for outcome in Leadership::ALL {
            metrics.elections.with_label_values(&[outcome.as_str()]);
        }
        metrics
    }

    /// An Acquire of a lock of `kind` ended: `failure` names the reason
    /// when it has no lock.
    pub fn acquired(&self, kind: LockKind, status: Status, failure: Option<Failure>, took: Duration) {
        self.acquire_total.with_label_values(&[status.as_str()]).inc();
        self.acquire_by_kind[kind as usize][status as usize].inc();
        if let Some(reason) = failure {
            self.acquire_failures.with_label_values(&[reason.as_str()]).inc();
        }
        self.acquire_seconds.observe(took.as_secs_f64());
    }

    /// An extension ended.
    pub fn extended(&self, status: Status, took: Duration) {
        self.extend_total.with_label_values(&[status.as_str()]).inc();
        self.extend_seconds.observe(took.as_secs_f64());
    }

    /// A release ended; `held_for` is set when this daemon granted the lock.
    pub fn released(&self, status: Status, took: Duration, held_for: Option<Duration>) {
        self.release_total.with_label_values(&[status.as_str()]).inc();
        self.release_seconds.observe(took.as_secs_f64());
        if let Some(held) = held_for {
            self.hold_seconds.observe(held.as_secs_f64());
        }
    }

    /// A release handed the lock to the next waiter here, or tried to.
    pub fn handed_off(&self, outcome: HandOff) {
        self.handoffs.with_label_values(&[outcome.as_str()]).inc();
    }

    /// What the status page plots (docs/operations.md#status-page), as
    /// counted since start: acquisitions granted, acquisitions that ended
    /// without a lock (refused or failed), and held locks found gone at an
    /// extension (a `Hold` session's or a leader's `LOST`).
    pub fn totals(&self) -> Totals {
        let of = |counter: &IntCounterVec, status: Status| counter.with_label_values(&[status.as_str()]).get();
        Totals {
            acquired: of(&self.acquire_total, Status::Success),
            failed: of(&self.acquire_total, Status::Fail) + of(&self.acquire_total, Status::Error),
            lost: of(&self.extend_total, Status::Fail),
        }
    }

    /// A leadership through this daemon began or ended.
    pub fn leadership(&self, outcome: Leadership) {
        self.elections.with_label_values(&[outcome.as_str()]).inc();
    }

    /// An acquisition was answered with the lock already held under its
    /// reentrancy key.
    pub fn reentered(&self) {
        self.reentered.inc();
    }

    /// A change of leader (or of its value) was passed on to observers.
    pub fn leader_changed(&self) {
        self.leader_changes.inc();
    }

    /// `n` locks are held through this daemon.
    pub fn locks_held(&self, n: usize) {
        self.locks_held.set(gauge_value(n));
    }

    /// How many requests wait in this daemon's queues, Hold sessions are
    /// open, and Observe and Watch streams follow.
    pub fn open(&self, waiters: usize, sessions: usize, followers: usize) {
        self.waiters.set(gauge_value(waiters));
        self.sessions.set(gauge_value(sessions));
        self.followers.set(gauge_value(followers));
    }

    /// One master answered a round request in `took` (or failed).
    pub fn node_request(&self, node: usize, took: Duration, ok: bool) {
        let seconds = took.as_secs_f64();
        match self.node_seconds_of.get(node) {
            Some(cached) => cached
                .get_or_init(|| self.node_seconds.with_label_values(&[&node.to_string()]))
                .observe(seconds),
            None => self
                .node_seconds
                .with_label_values(&[&node.to_string()])
                .observe(seconds),
        }
        if !ok {
            self.node_errors.with_label_values(&[&node.to_string()]).inc();
        }
    }

    /// A round stopped waiting for master `node`'s answer.
    pub fn node_not_awaited(&self, node: usize) {
        self.node_not_awaited.with_label_values(&[&node.to_string()]).inc();
    }

    /// Every per-master series of masters `0..n` at 0 from the start.
    pub fn nodes(&self, n: usize) {
        for node in 0..n {
            let node = node.to_string();
            for counter in [&self.node_errors, &self.node_not_awaited, &self.probe_timeouts] {
                counter.with_label_values(&[&node]);
            }
        }
    }

    /// A health probe of master `node` timed out.
    pub fn probe_timed_out(&self, node: usize) {
        self.probe_timeouts.with_label_values(&[&node.to_string()]).inc();
    }

    /// The registry, for more collectors.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Records master `node`'s standing, one-hot: `state` (one of
    /// `usable`, `quarantined`, `preflight_failed`, `unverified`) is 1 and
    /// the others 0; of the preflight `checks`, `failed` is 1.
    pub fn node_standing(&self, node: usize, state: &str, checks: &[&str], failed: Option<&str>) {
        let node = node.to_string();
        for known in STATES {
            self.node_state
                .with_label_values(&[&node, known])
                .set(i64::from(known == state));
        }
        for check in checks {
            let value = i64::from(failed == Some(*check));
            self.node_preflight_failed
                .with_label_values(&[node.as_str(), check])
                .set(value);
        }
    }

    /// `out` of master `node`'s buckets are held out of acquire quorums.
    pub fn node_buckets_out(&self, node: usize, out: usize) {
        (self.node_buckets_out.with_label_values(&[&node.to_string()])).set(out as i64);
    }

    /// The text exposition of every series.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        out
    }
}

/// A count as a gauge's value.
fn gauge_value(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
