//! What (e) and (f) share (docs/performance.md#elections): the plan, what a
//! system's election API must offer (`Electorate`, used by
//! `elections_daemon.rs`, `elections_etcd.rs` and `elections_zookeeper.rs`),
//! and what was found (used
//! by `elections_report.rs`). It imports no other file of the elections.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::stream::BoxStream;

use crate::System;
use crate::candidate::Candidate;
use crate::measure::{CpuSnapshot, Samples};

/// What (e) and (f) are asked to do.
#[derive(Clone)]
pub struct ElectionPlan {
    pub candidates: usize,
    pub failovers: usize,
    /// The term's TTL (redlockd), the lease's (etcd) and the session
    /// timeout (ZooKeeper).
    pub ttl: Duration,
    pub observers: usize,
    pub observer_connections: usize,
    pub proclaims: usize,
}

/// A system's election API, as (e) and (f) use it.
pub trait Electorate {
    /// Candidate `id` campaigning on a connection of its own, in a task
    /// (ZooKeeper's: a process of its own, run by the task).
    fn candidate(&self, id: usize) -> Candidate;
    /// `n` Observe streams, spread over `connections`; each yields the
    /// leader's value at every state it is told (empty: no leader).
    async fn observers(&self, n: usize, connections: usize) -> anyhow::Result<Vec<Values>>;
}

/// What an observer is told: the leader's value, at each change.
pub type Values = BoxStream<'static, anyhow::Result<Vec<u8>>>;

/// What (e) found.
pub struct Failovers {
    pub planned: usize,
    /// Kill → the next ELECTED, sorted.
    pub samples: Samples,
    /// Every new leader's term (etcd: leader key's revision; ZooKeeper:
    /// latch node's sequence number) was above the last one's.
    pub terms_rising: bool,
    /// What stopped the run early.
    pub first_error: Option<String>,
    /// redlockd: how many leaderships the daemon saw end without a
    /// resignation during the run (`redlockd_elections_total{outcome="lost"}`):
    /// each kill, and the last leader's at the end.
    pub unasked: Option<f64>,
}

/// What (f) found.
pub struct FanOut {
    pub observers: usize,
    pub connections: usize,
    pub planned: usize,
    /// Seconds until every observer had its first state.
    pub opened_in: f64,
    /// Per proclaim every observer was told of: send → the last one told.
    pub last: Samples,
    /// Per observer and proclaim: send → told.
    pub each: Samples,
    /// Observers not told of a value within `TOLD_LIMIT` (elections.rs), summed over the proclaims.
    pub missed: usize,
    pub first_error: Option<String>,
    /// The server's CPU (and this process's; not ZooKeeper's observers'
    /// JVM) over the proclaims.
    pub cpu: CpuSnapshot,
    pub seconds: f64,
}

/// What (e) and (f) found, per system.
pub struct ElectionResults {
    pub plan: ElectionPlan,
    /// etcd's lease TTL, whole seconds.
    pub lease_ttl: i64,
    pub failovers: BTreeMap<System, Result<Failovers, String>>,
    pub fan_outs: BTreeMap<System, Result<FanOut, String>>,
}
