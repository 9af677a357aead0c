//! The node monitor (docs/design.md#quarantine): probes every master on a timer and on
//! demand (reconnect, unverified reply), runs preflight, quarantine and the
//! clock guard, and repairs a quarantined master's fence counter from a
//! quorum of the others before it rejoins.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::future::{join_all, select_all};
use tokio::sync::watch;
use tokio::time::Instant;

use super::engine::Engine;
use super::limit::{TimedOut, within};
use super::node::{NodeError, Probed};
use super::observer::Observer;
use super::quorum;
use super::rules::Rules;
use super::standing::{Standing, Verdict};

/// Probes and judges the masters of one engine.
pub(crate) struct Monitor<N> {
    engine: Arc<Engine<N>>,
    usable: watch::Sender<usize>,
    observer: Arc<dyn Observer>,
    rules: Rules,
    interval: Duration,
    probe_timeout: Duration,
    /// Per master: probes in a row that timed out while it was usable.
    timed_out: Vec<AtomicU32>,
}

impl<N: Probed> Monitor<N> {
    /// A monitor over `engine`'s nodes, probing every `interval`; each
    /// command of a probe may take up to `probe_timeout` (the command
    /// timeout), a whole probe `PROBE_LIMIT` times that.
    pub(crate) fn new(
        engine: Arc<Engine<N>>,
        observer: Arc<dyn Observer>,
        rules: Rules,
        interval: Duration,
        probe_timeout: Duration,
    ) -> Monitor<N> {
        // Every master's series exist from the start (as unverified until
        // its first probe decides), so an alert never sees a gap.
        for (index, node) in engine.nodes().iter().enumerate() {
            observer.node_standing(index, &node.standing());
            observer.node_buckets_out(index, 0);
        }
        let nodes = engine.nodes().len();
        Monitor {
            engine,
            usable: watch::channel(0).0,
            observer,
            rules,
            interval,
            probe_timeout,
            timed_out: (0..nodes).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Probes every node once, concurrently, and applies the verdicts.
    pub(crate) async fn check_all(&self) {
        join_all((0..self.engine.nodes().len()).map(|i| self.check(i))).await;
        let usable = self
            .engine
            .nodes()
            .iter()
            .filter(|n| n.standing() == Standing::Usable)
            .count();
        self.usable
            .send_if_modified(|before| std::mem::replace(before, usable) != usable);
    }

    /// How many masters are usable, as of the last round of probes.
    pub(crate) fn usable(&self) -> watch::Receiver<usize> {
        self.usable.subscribe()
    }

    /// Runs until `shutdown` resolves: a round every `interval`, or sooner
    /// when a node asks for a probe.
    pub(crate) async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let wanted = select_all(self.engine.nodes().iter().map(|n| Box::pin(n.probe_wanted())));
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(self.interval) => {}
                _ = wanted => {}
            }
            self.check_all().await;
        }
    }

    async fn check(&self, index: usize) {
        let node = &self.engine.nodes()[index];
        let before = node.standing();
        let generation = node.health().generation();
        let timed_out = &self.timed_out[index];
        // A probe is many round trips (a cluster's first, dozens), each
        // bounded by the command timeout; their sum on a busy host can pass
        // one command timeout while every one was answered. It times out
        // when a command of it did, or the whole took `PROBE_LIMIT` of
        // them; both counted in the time the daemon could run
        // (docs/design.md#late-timers).
        let probed = within(self.probe_timeout * PROBE_LIMIT, node.probe()).await;
        let probe_timed_out = match &probed {
            Ok(Ok(_)) => false,
            Ok(Err(error)) => *error == NodeError::TimedOut,
            Err(TimedOut) => true,
        };
        if probe_timed_out {
            self.observer.probe_timed_out(index);
        }
        let observation = match probed {
            Ok(Ok(observation)) => {
                timed_out.store(0, Ordering::Relaxed);
                node.health().set_unreachable(None);
                observation
            }
            // A usable master's first probe in a row that times out is let
            // pass; the next one decides. Under load a probe queues behind
            // the lock commands on the same connection (or waits out a fork
            // on the master) and times out although the master is fine;
            // marking it out then takes away a quorum that was there.
            // Safety does not rest on probes: a reconnect takes the node
            // out at once, and every grant checks in its script that the
            // node is the process that was verified.
            Ok(Err(_)) | Err(_)
                if probe_timed_out && before == Standing::Usable && timed_out.fetch_add(1, Ordering::Relaxed) == 0 =>
            {
                tracing::debug!(node = node.name(), "a probe timed out; the next one decides");
                return;
            }
            // Unreachable: not usable until a probe sees it again (its
            // commands fail anyway; health must not count it).
            failed => {
                timed_out.store(0, Ordering::Relaxed);
                let reason = match failed {
                    Ok(Err(error)) => error.to_string(),
                    _ => "the probe timed out".into(),
                };
                // Kept for the status page (docs/operations.md#status-page).
                node.health().set_unreachable(Some(reason.clone()));
                if node.health().set_if_current(generation, Standing::Unverified) {
                    if before != Standing::Unverified {
                        tracing::warn!(node = node.name(), %reason, "unreachable");
                    }
                    // Also for a master never reached (a wrong password):
                    // its series must exist for an alert to see it.
                    self.observer.node_standing(index, &Standing::Unverified);
                }
                return;
            }
        };
        let identity = observation.identity();
        let mut after = match node.health().assess(&observation, &self.rules, Instant::now()) {
            Verdict::Usable => {
                // A cluster's shards that may rejoin now.
                self.repair_shards(index, &identity).await;
                Standing::Usable
            }
            // Quarantine is off: vouch for its data as it is.
            Verdict::Adopt => match self.adopt(index, &identity, &ALL).await {
                Ok(()) => {
                    node.health().mark_verified();
                    Standing::Usable
                }
                Err(_) => return,
            },
            Verdict::RepairThenUsable => match self.repair(index, &identity, &ALL).await {
                Ok(()) => {
                    node.health().mark_verified();
                    Standing::Usable
                }
                Err(reason) => {
                    tracing::warn!(node = node.name(), %reason, "counter repair failed; the node stays out");
                    return;
                }
            },
            Verdict::Quarantine(standing) => standing,
            Verdict::Fail(check, reason) => Standing::Failed { check, reason },
        };
        // A cluster whose every bucket is out is out as a whole.
        let (out, whole) = node.health().buckets_out();
        self.observer.node_buckets_out(index, out);
        if let (Standing::Usable, Some(whole)) = (&after, whole) {
            after = whole;
        }
        // A reconnect while we probed voids the verdict: it may be about the
        // process before the reconnect. The next probe decides.
        if !node.health().set_if_current(generation, after.clone()) {
            return;
        }
        if !same_kind(&before, &after) {
            log_change(node.name(), &after);
        }
        self.observer.node_standing(index, &after);
    }

    /// Raises node `index`'s counters before it rejoins. The floor must be
    /// at least every published token `T`; `T`'s majority `W` stored it, and
    /// a node still holds it unless it lost its data since. Nodes whose
    /// marker vouches for their data ("verified") did not. So, per bucket:
    /// the largest counter among a quorum of verified nodes; or, when fewer
    /// are verified but every verified node answered, the largest counter
    /// of all that answered (a new cluster has no verified node at all).
    /// `buckets`: which (every bucket of a master; a cluster's shard).
    async fn repair(&self, index: usize, identity: &str, buckets: &[u16]) -> Result<(), RepairError> {
        let nodes = self.engine.nodes();
        let others: Vec<&N> = nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, n)| n)
            .collect();
        let bound = self.probe_timeout * REPAIR_READ_PROBES;
        let reads = join_all(others.iter().map(|n| within(bound, n.read_fences()))).await;
        let reads: Vec<Option<Vec<Option<u64>>>> = reads.into_iter().map(|r| r.ok().and_then(Result::ok)).collect();
        // The node's own counters (and its counter of the layout before
        // buckets) are floors too: repair never lowers a counter.
        let own = within(bound, nodes[index].read_fences()).await;
        let own = own.map_err(|TimedOut| RepairError::OwnCountersLate)??;
        let mut floors = Vec::with_capacity(buckets.len());
        for &bucket in buckets {
            let at = usize::from(bucket);
            let answers: Vec<(bool, Option<Option<u64>>)> = (others.iter().zip(&reads))
                .map(|(n, read)| {
                    let verified = n.health().verified_for(bucket);
                    (verified, read.as_ref().map(|r| r.get(at).copied().flatten()))
                })
                .collect();
            let own = own.get(at).copied().flatten();
            floors.push((bucket, quorum::repair_floor(&answers, nodes.len())?.max(own)));
        }
        Ok(nodes[index].repair(&floors, identity).await?)
    }

    /// Vouches for node `index`'s data in `buckets` as it is (quarantine is
    /// off): each marked verified, its counter raised only to the node's
    /// counter of the layout before buckets.
    async fn adopt(&self, index: usize, identity: &str, buckets: &[u16]) -> Result<(), super::NodeError> {
        let node = &self.engine.nodes()[index];
        let own = node.read_fences().await?;
        let floors: Vec<(u16, Option<u64>)> = (buckets.iter())
            .map(|b| (*b, own.get(usize::from(*b)).copied().flatten()))
            .collect();
        node.repair(&floors, identity).await
    }

    /// A cluster position's buckets that no marker vouches for, once no
    /// hold keeps them out: repaired (adopted with quarantine off) while
    /// the rest of the position counts (docs/design.md#cluster-positions).
    async fn repair_shards(&self, index: usize, identity: &str) {
        let node = &self.engine.nodes()[index];
        let buckets = node.health().buckets_to_repair();
        if buckets.is_empty() {
            return;
        }
        let repaired = if self.rules.quarantine {
            self.repair(index, identity, &buckets).await
        } else {
            self.adopt(index, identity, &buckets).await.map_err(RepairError::from)
        };
        match repaired {
            Ok(()) => {
                node.health().buckets_repaired(&buckets);
                tracing::info!(
                    node = node.name(),
                    buckets = buckets.len(),
                    "buckets repaired: counted again"
                );
            }
            Err(reason) => {
                tracing::warn!(node = node.name(), %reason, "bucket repair failed; the buckets stay out");
            }
        }
    }
}

/// Why a counter repair failed (docs/design.md#repair): the node (or the
/// buckets) stays out.
#[derive(Debug, thiserror::Error)]
enum RepairError {
    /// The node's own counters were not read within the bound.
    #[error("its own counters could not be read in time")]
    OwnCountersLate,
    /// A command to the node being repaired failed.
    #[error("{0}")]
    Node(#[from] NodeError),
    /// Too few of the other nodes answered.
    #[error(transparent)]
    TooFewAnswers(#[from] quorum::TooFewAnswers),
}

/// Every bucket, for a standalone master's repair.
static ALL: std::sync::LazyLock<Vec<u16>> = std::sync::LazyLock::new(|| (0..super::buckets::BUCKETS).collect());

/// A whole probe may take this many command timeouts (each of its commands
/// one at most).
const PROBE_LIMIT: u32 = 10;

/// Reading every bucket's counter of a master (16,384 keys; one by one on
/// a cluster) may take this many probes' time.
const REPAIR_READ_PROBES: u32 = 10;

/// Whether two standings differ only in their deadline (not worth a log line).
fn same_kind(a: &Standing, b: &Standing) -> bool {
    match (a, b) {
        (Standing::Quarantined { reason: x, .. }, Standing::Quarantined { reason: y, .. }) => x == y,
        _ => a == b,
    }
}

fn log_change(node: &str, standing: &Standing) {
    match standing {
        Standing::Usable => tracing::info!(node, "usable"),
        Standing::Unverified => tracing::info!(node, "unverified"),
        Standing::Quarantined { until, reason } => {
            let left = until.saturating_duration_since(Instant::now());
            tracing::warn!(node, %reason, rejoins_in = ?left, "quarantined: not counted towards acquire quorums");
        }
        Standing::Failed { check, reason } => {
            tracing::error!(node, check = check.as_str(), %reason, "preflight failed: node not used");
        }
    }
}

#[cfg(test)]
#[path = "monitor_tests.rs"]
mod tests;
