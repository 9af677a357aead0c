//! The daemon's ordered stop (docs/operations.md#shutdown): on SIGTERM,
//! health says NOT_SERVING, sessions release their locks, connections
//! drain, the slower masters' deletes are let finish, and only then do the
//! background tasks (monitor, health reporting, /metrics) stop. One grace
//! period bounds it all.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// The grace period and the stages of one stop.
pub(super) struct Shutdown {
    grace: Duration,
    /// When the grace period ends, once the stop has begun.
    ends: Mutex<Option<Instant>>,
    /// Told when the sessions have been released (connections drain next).
    drained: Notify,
    /// Dropped to stop the background tasks, last.
    background: watch::Sender<()>,
}

impl Shutdown {
    /// A stop bounded by `grace` in all.
    pub(super) fn new(grace: Duration) -> Shutdown {
        Shutdown {
            grace,
            ends: Mutex::new(None),
            drained: Notify::new(),
            background: watch::channel(()).0,
        }
    }

    /// The grace period.
    pub(super) fn grace(&self) -> Duration {
        self.grace
    }

    /// The stop has begun: the grace period runs from now.
    pub(super) fn begin(&self) {
        *self.ends.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now() + self.grace);
    }

    /// The sessions are released; the connections drain next.
    pub(super) fn sessions_released(&self) {
        self.drained.notify_one();
    }

    /// Resolves when the grace period is over, counted from `begin`, once
    /// the sessions were released.
    pub(super) async fn grace_over(&self) {
        self.drained.notified().await;
        tokio::time::sleep_until(self.deadline()).await;
    }

    /// When the grace period ends (now, if the stop has not begun).
    pub(super) fn deadline(&self) -> Instant {
        self.ends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or_else(Instant::now)
    }

    /// Resolves when the background tasks are to stop.
    pub(super) fn background_stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stopped = self.background.subscribe();
        async move {
            // Resolves when the sender goes (or sends), never before.
            let _ = stopped.changed().await;
        }
    }

    /// Stops the background tasks (the last stage).
    pub(super) fn stop_background(&self) {
        let _ = self.background.send(());
    }
}

#[cfg(test)]
#[path = "shutdown_tests.rs"]
mod tests;
