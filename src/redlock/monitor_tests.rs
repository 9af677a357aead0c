//! The monitor on in-memory nodes with a paused clock: a probe is judged
//! by whether the master answers, not by how long its round trips took in
//! all on a busy host (docs/design.md#late-timers).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::redlock::buckets::BUCKETS;
use crate::redlock::engine::tests::cluster;
use crate::redlock::fake::{FakeNode, Fault};
use crate::redlock::node::Node;
use crate::redlock::standing::{NodeHealth, Observation};

/// The command timeout the monitor is given.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// A master's probe is four round trips (`INFO`, `CONFIG GET`, the marker,
/// `TIME`), each under the node's fault.
impl Probed for FakeNode {
    fn health(&self) -> &NodeHealth {
        &self.health
    }

    async fn probe_wanted(&self) {
        std::future::pending().await
    }

    async fn probe(&self) -> Result<Observation, NodeError> {
        for _ in 0..4 {
            Node::inspect(self, "probe").await?;
        }
        Ok(Observation {
            role: "master".into(),
            maxmemory_policy: "noeviction".into(),
            run_id: "r".into(),
            master_replid: "m".into(),
            uptime: Duration::from_secs(3600),
            node_time_us: 0,
            sampled_at: Instant::now(),
            time_uncertainty: Duration::ZERO,
            scripts_loaded: Ok(()),
            marker: Some("r:m".into()),
            shards: Vec::new(),
        })
    }

    async fn read_fences(&self) -> Result<Vec<Option<u64>>, NodeError> {
        Ok(vec![self.counter(); usize::from(BUCKETS)])
    }

    async fn repair(&self, _: &[(u16, Option<u64>)], _: &str) -> Result<(), NodeError> {
        Ok(())
    }
}

/// Counts the probes that timed out.
#[derive(Default)]
struct Timeouts(AtomicUsize);

impl Observer for Timeouts {
    fn probe_timed_out(&self, _: usize) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn monitor(engine: Arc<Engine<FakeNode>>) -> (Monitor<FakeNode>, Arc<Timeouts>) {
    let timeouts = Arc::new(Timeouts::default());
    let rules = Rules {
        quarantine: false,
        max_ttl: Duration::from_secs(10),
        clock_jump_bound: Duration::from_millis(500),
    };
    let monitor = Monitor::new(engine, timeouts.clone(), rules, Duration::from_secs(1), COMMAND_TIMEOUT);
    (monitor, timeouts)
}

/// Every round trip answered in 400 ms, the probe in 1.6 s: more than one
/// command timeout in all (a cluster's first probe on a busy host), yet
/// the master answers. It is usable, and no probe timed out.
#[tokio::test(start_paused = true)]
async fn a_probe_slower_in_all_than_the_command_timeout_still_verifies_the_master() {
    let (engine, nodes) = cluster(&[0; 3]);
    nodes[0].set_fault(Fault::Slow(Duration::from_millis(400)));
    let (monitor, timeouts) = monitor(engine);
    for _ in 0..2 {
        monitor.check_all().await;
    }
    assert_eq!(nodes[0].health.standing(), Standing::Usable);
    assert_eq!(timeouts.0.load(Ordering::Relaxed), 0);
}

/// A probe that is never answered still times out (at `PROBE_LIMIT`
/// command timeouts), and the second in a row takes the master out.
#[tokio::test(start_paused = true)]
async fn a_probe_never_answered_times_out_and_the_second_takes_the_master_out() {
    let (engine, nodes) = cluster(&[0; 3]);
    let (monitor, timeouts) = monitor(engine);
    monitor.check_all().await;
    assert_eq!(nodes[0].health.standing(), Standing::Usable);
    nodes[0].set_fault(Fault::LoseReplies);
    let start = Instant::now();
    monitor.check_all().await;
    assert_eq!(start.elapsed(), COMMAND_TIMEOUT * PROBE_LIMIT);
    assert_eq!(nodes[0].health.standing(), Standing::Usable, "one timeout is let pass");
    monitor.check_all().await;
    assert_eq!(nodes[0].health.standing(), Standing::Unverified);
    assert_eq!(timeouts.0.load(Ordering::Relaxed), 2);
}
