//! The queue of extensions waiting for a batch, and the few batch slots
//! they leave through (docs/design.md#extend); `extend.rs` sends them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::Instant;

use super::error::Error;

/// At most this many locks go in one extension batch.
pub const EXTEND_BATCH_MAX: usize = 128;
/// At most this many extension batches are in flight at once. A lone
/// extension leaves at once in a batch of one; while every slot is busy,
/// the extensions that come due queue and leave together in the next batch.
pub const EXTEND_BATCHES_AT_ONCE: usize = 4;

/// Extensions waiting for a batch (see `Engine::extend`).
pub(super) struct Extensions {
    queue: Mutex<Vec<QueuedExtension>>,
    slots: Arc<Semaphore>,
}

pub(super) struct QueuedExtension {
    pub(super) key: String,
    pub(super) value: String,
    pub(super) ttl: Duration,
    pub(super) queued_at: Instant,
    /// The outcome, and which masters answered the batch (bit `i`: master `i`).
    pub(super) answer: oneshot::Sender<(Result<Extended, Error>, u32)>,
}

/// A batch's answer for one extension; the caller turns it into a validity
/// when it reads it, so no wait after the round goes uncounted.
pub(super) enum Extended {
    /// A quorum extended it to `ttl`; the commands left at `sent`.
    Yes { ttl: Duration, sent: Instant },
    /// A majority no longer holds the value.
    Lost,
}

impl Extensions {
    pub(super) fn new() -> Extensions {
        Extensions {
            queue: Mutex::new(Vec::new()),
            slots: Arc::new(Semaphore::new(EXTEND_BATCHES_AT_ONCE)),
        }
    }

    pub(super) fn queue(&self) -> std::sync::MutexGuard<'_, Vec<QueuedExtension>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The oldest queued extensions, at most a batch of them.
    pub(super) fn next_batch(&self) -> Vec<QueuedExtension> {
        let mut queue = self.queue();
        let n = queue.len().min(EXTEND_BATCH_MAX);
        queue.drain(..n).collect()
    }

    pub(super) fn free_slot(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.slots).try_acquire_owned().ok()
    }
}
