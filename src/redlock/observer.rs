//! What the algorithm tells the outside about its nodes: each request's
//! latency and outcome, probes that timed out, and each node's standing.
//! The telemetry layer implements it (`app` wires the two together); the
//! algorithm never imports metrics.

use std::time::Duration;

use super::standing::Standing;

/// Hears about node `node` (its index in the node list). Every method does
/// nothing by default.
pub trait Observer: Send + Sync {
    /// One request to the node was answered in `took` (`ok`: without error
    /// and within the round's limit), or failed.
    fn node_request(&self, node: usize, took: Duration, ok: bool) {
        let _ = (node, took, ok);
    }

    /// A round stopped waiting for the node's answer (decided without it).
    fn node_not_awaited(&self, node: usize) {
        let _ = node;
    }

    /// A health probe of the node timed out.
    fn probe_timed_out(&self, node: usize) {
        let _ = node;
    }

    /// `out` of the node's buckets are held out of acquire quorums (a
    /// cluster's shards; docs/design.md#cluster-positions).
    fn node_buckets_out(&self, node: usize, out: usize) {
        let _ = (node, out);
    }

    /// The node's standing is now `standing`.
    fn node_standing(&self, node: usize, standing: &Standing) {
        let _ = (node, standing);
    }
}

/// Hears nothing (tests).
impl Observer for () {}
