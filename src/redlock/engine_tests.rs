//! What the engine's tests share: in-memory nodes (`fake`) under an engine
//! with a short node timeout. The tests run with Tokio's clock paused, so
//! every duration is exact and none sleeps in real time; they are by
//! operation in `acquire_tests`, `extend_tests`, `release_tests` and
//! `handoff_tests`, and `set_tests`, `permits_tests` and `shared_tests`
//! use `config` too.

use std::future::pending;
use std::time::Duration;

use super::*;
use crate::redlock::fake::FakeNode;
use crate::redlock::*;

pub(crate) const TTL: Duration = Duration::from_secs(10);
pub(crate) const NODE_TIMEOUT: Duration = Duration::from_millis(50);

pub(crate) fn config() -> EngineConfig {
    EngineConfig {
        key_prefix: "t".into(),
        node_timeout: NODE_TIMEOUT,
        drift_factor: 0.01,
        min_validity: Duration::from_millis(1),
        retry_delay_min: Duration::from_millis(100),
        retry_delay_max: Duration::from_millis(300),
        daemon_id: "test".into(),
        publish_round: true,
    }
}

/// An engine over fresh nodes, one per counter.
pub(crate) fn cluster(counters: &[u64]) -> (std::sync::Arc<Engine<FakeNode>>, Vec<FakeNode>) {
    let nodes: Vec<FakeNode> = counters
        .iter()
        .enumerate()
        .map(|(i, c)| FakeNode::new(&format!("n{i}"), *c))
        .collect();
    (std::sync::Arc::new(Engine::new(nodes.clone(), config())), nodes)
}

/// One attempt at an exclusive lock, without waiting.
pub(crate) async fn once(engine: &Engine<FakeNode>, resource: &str) -> Result<Acquired, Error> {
    engine
        .acquire(resource, (Kind::Exclusive, TTL), Duration::ZERO, pending(), ALONE, "")
        .await
}

/// The lease of a grant (anything else fails the test).
pub(crate) fn lease(outcome: Result<Acquired, Error>) -> Lease {
    match outcome {
        Ok(Acquired::Granted(lease)) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}
