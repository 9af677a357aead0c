//! Rig helpers for liveness after faults heal: a workload that runs until
//! told to stop, a wait for the first grant after the heal, and the budget
//! for it, measured by the rig's own warm-up rather than fixed.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::history::Reply;
use super::rig::{LIVENESS, MAX_TTL, Rig};

impl Rig {
    /// How soon after faults heal a grant must come: `LIVENESS`, plus
    /// however much longer than the hold (`MAX_TTL`) the warm-up took. On a
    /// busy machine the probes and repair that end a quarantine take longer;
    /// the warm-up measured by how much.
    pub fn liveness(&self) -> Duration {
        LIVENESS + self.warm_up.saturating_sub(MAX_TTL)
    }

    /// `workload` until the returned sender says `false`.
    pub async fn workload_until_stopped(&self, n: usize, resource: &str) -> (JoinHandle<()>, watch::Sender<bool>) {
        let (stop, running) = watch::channel(true);
        let kinds = vec![(false, 0); n];
        let far = Instant::now() + Duration::from_secs(3600);
        (self.spawn_workload(&kinds, resource, (far, running)).await, stop)
    }

    /// Waits until a grant of `resource` sent after `at` is recorded, at
    /// most `within` after `at`; returns whether one was.
    pub async fn until_granted_after(&self, resource: &str, at: Instant, within: Duration) -> bool {
        loop {
            let granted = self
                .history
                .ops()
                .into_iter()
                .any(|op| op.resource == resource && op.invoke >= at && matches!(op.reply, Reply::Granted(_)));
            if granted || at.elapsed() > within {
                return granted;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
