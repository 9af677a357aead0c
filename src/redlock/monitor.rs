//! The node monitor (DESIGN §5): probes every master on a timer and on
//! demand (reconnect, unverified reply), runs preflight, quarantine and the
//! clock guard, and repairs a quarantined master's fence counter from a
//! quorum of the others before it rejoins.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{join_all, select_all};
use tokio::time::{Instant, timeout};

use super::engine::Engine;
use super::health::{Rules, Standing, Verdict};
use super::node::Node;
use super::quorum;
use super::redis::RedisNode;
use crate::metrics::Metrics;

/// Probes and judges the masters of one engine.
pub struct Monitor {
    engine: Arc<Engine<RedisNode>>,
    metrics: Arc<Metrics>,
    rules: Rules,
    interval: Duration,
    probe_timeout: Duration,
}

impl Monitor {
    /// A monitor over `engine`'s nodes, probing every `interval`; each probe
    /// may take up to `probe_timeout`.
    pub fn new(
        engine: Arc<Engine<RedisNode>>,
        metrics: Arc<Metrics>,
        rules: Rules,
        interval: Duration,
        probe_timeout: Duration,
    ) -> Monitor {
        Monitor {
            engine,
            metrics,
            rules,
            interval,
            probe_timeout,
        }
    }

    /// Probes every node once, concurrently, and applies the verdicts.
    pub async fn check_all(&self) {
        join_all((0..self.engine.nodes().len()).map(|i| self.check(i))).await;
    }

    /// Runs until `shutdown` resolves: a round every `interval`, or sooner
    /// when a node asks for a probe.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
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
        let observation = match timeout(self.probe_timeout, node.probe()).await {
            Ok(Ok(observation)) => observation,
            // An unreachable node keeps its standing: its commands fail anyway,
            // and the probe after it comes back decides.
            Ok(Err(_)) | Err(_) => return,
        };
        let after = match node.health().assess(&observation, &self.rules, Instant::now()) {
            Verdict::Usable if observation.marker_present => Standing::Usable,
            // Quarantine is off: mark it verified and use it at once.
            Verdict::Usable => match node.repair(None).await {
                Ok(()) => Standing::Usable,
                Err(_) => return,
            },
            Verdict::RepairThenUsable => match self.repair(index).await {
                Ok(()) => Standing::Usable,
                Err(reason) => {
                    tracing::warn!(node = node.name(), %reason, "counter repair failed; the node stays out");
                    return;
                }
            },
            Verdict::Quarantine(standing) => standing,
            Verdict::Fail(check, reason) => Standing::Failed { check, reason },
        };
        if !same_kind(&before, &after) {
            log_change(node.name(), &after);
        }
        self.metrics.node_standing(index, &after);
        node.health().set(after);
    }

    /// Raises node `index`'s counter to the largest read from a quorum of
    /// the other nodes: every published token's `W` meets that quorum, so
    /// the repaired node never hands out a counter below a published one.
    async fn repair(&self, index: usize) -> Result<(), String> {
        let nodes = self.engine.nodes();
        let others = nodes.iter().enumerate().filter(|(i, _)| *i != index);
        let reads = join_all(others.map(|(_, n)| timeout(self.probe_timeout, n.read_fence()))).await;
        let answers: Vec<Option<u64>> = reads.into_iter().filter_map(|r| r.ok().and_then(Result::ok)).collect();
        let needed = quorum::quorum(nodes.len());
        if answers.len() < needed {
            return Err(format!(
                "only {} other nodes answered; {needed} are needed",
                answers.len()
            ));
        }
        let floor = answers.into_iter().flatten().max();
        nodes[index].repair(floor).await.map_err(|e| e.0)
    }
}

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
