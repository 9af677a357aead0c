//! Extending locks (docs/design.md#extend): extensions due together share
//! one script call per node, sent by a few batch tasks from their queue
//! (`extensions.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio::time::Instant;
use tracing::Instrument;

use super::extensions::{Extended, QueuedExtension};
use super::fanout::gather;
use super::node::{Extension, Node};
use super::spans::{self, round_span};
use super::{Engine, Error, LockValue, quorum};

impl<N: Node> Engine<N> {
    /// Extends `resource`'s lock held by `value` to `ttl` on every node.
    /// Returns the validity when a quorum still held it (measured from
    /// before its batch was sent), `None` when the lock was lost.
    ///
    /// Extensions due at the same time share one script call per node
    /// (`Node::extend`): with 10,000 `Hold` sessions renewing, each master
    /// runs a few scripts per batch, not one per lock, and the daemon sends
    /// a few commands (docs/performance.md, workload (d)). The batch runs in a task of its own,
    /// so a caller that gives up (a cancelled `Extend`) leaves the others'
    /// answers intact.
    ///
    /// An extension that waited `node_timeout` or longer for a batch (an
    /// overloaded daemon) is not sent: it fails with `Unavailable`, so a
    /// caller waits at most about two node timeouts, as it did before.
    ///
    /// # Errors
    /// `Error::Unavailable` when fewer than a quorum of nodes answered.
    pub async fn extend(
        self: &Arc<Self>,
        resource: &str,
        value: &LockValue,
        ttl: Duration,
    ) -> Result<Option<Duration>, Error> {
        let (answer, answered) = oneshot::channel();
        self.extensions.queue().push(QueuedExtension {
            key: self.lock_key(resource),
            value: value.expose().to_owned(),
            // The masters keep the key its lock delay longer; the validity
            // below is counted from `ttl` alone (docs/design.md#lock-delay).
            ttl: value.key_ttl(ttl),
            queued_at: Instant::now(),
            answer,
        });
        if let Some(slot) = self.extensions.free_slot() {
            tokio::spawn(Arc::clone(self).extend_batches(slot));
        }
        // The round is its batch's (docs/tracing.md#spans): the span covers the wait for it.
        let span = round_span!("extend");
        let (extended, masters) = answered.instrument(span.clone()).await.unwrap_or_else(|_| {
            let error = self.unavailable(0, "the extension batch ended without an answer".into());
            (Err(error), 0)
        });
        spans::answered(&span, &self.nodes, |i| masters & (1 << i) != 0);
        let extended = extended?;
        Ok(match extended {
            // Counted now, when the caller reads it: validity runs from
            // before the commands left until this very moment.
            Extended::Yes { ttl, sent } => {
                let ttl = ttl.saturating_sub(value.lock_delay());
                quorum::validity(ttl, sent.elapsed(), self.config.drift_factor)
                    .filter(|v| *v >= self.config.min_validity)
            }
            Extended::Lost => None,
        })
    }

    /// Sends batches of queued extensions until none is left.
    async fn extend_batches(self: Arc<Self>, mut slot: OwnedSemaphorePermit) {
        loop {
            let batch = self.extensions.next_batch();
            if batch.is_empty() {
                drop(slot);
                // An extension queued after the look above, while this task
                // still held its slot, found no free slot: take it on.
                if self.extensions.queue().is_empty() {
                    return;
                }
                match self.extensions.free_slot() {
                    Some(again) => slot = again,
                    None => return,
                }
                continue;
            }
            let (late, batch): (Vec<_>, Vec<_>) = batch
                .into_iter()
                .partition(|queued| queued.queued_at.elapsed() >= self.config.node_timeout);
            for queued in late {
                let _ = queued.answer.send((
                    Err(self.unavailable(
                        0,
                        "the extension waited longer than node_timeout to be sent (the daemon is overloaded)".into(),
                    )),
                    0,
                ));
            }
            if !batch.is_empty() {
                self.extend_batch(batch).await;
            }
        }
    }

    /// One extension round for `batch`; answers each extension once every
    /// one is decided: extended by a quorum, refused by more nodes than can
    /// be spared, or every node answered (a lost lock does not wait for a
    /// slow node). A lock named twice in a batch with different TTLs is
    /// extended to the shorter, and both answers say so.
    async fn extend_batch(&self, batch: Vec<QueuedExtension>) {
        let mut shortest: HashMap<(&str, &str), Duration> = HashMap::new();
        for queued in &batch {
            let ttl = shortest.entry((&queued.key, &queued.value)).or_insert(queued.ttl);
            *ttl = (*ttl).min(queued.ttl);
        }
        let locks: Vec<Extension<'_>> = batch
            .iter()
            .map(|queued| Extension {
                key: &queued.key,
                value: &queued.value,
                ttl: shortest[&(queued.key.as_str(), queued.value.as_str())],
            })
            .collect();
        let sent = Instant::now();
        let calls = self.nodes.iter().map(|node| async {
            match node.extend(&locks).await {
                Ok(extended) if extended.len() == locks.len() => Some(extended),
                Ok(extended) => {
                    tracing::warn!(
                        node = node.name(),
                        answers = extended.len(),
                        asked = locks.len(),
                        "an extension batch was answered with the wrong number of flags; counted as no answer"
                    );
                    None
                }
                Err(_) => None,
            }
        });
        let n = self.nodes.len();
        let decided = |answers: &[Option<Option<Vec<bool>>>]| {
            (0..locks.len()).all(|i| {
                let said = |flag: bool| answers.iter().flatten().flatten().filter(|a| a[i] == flag).count();
                quorum::extension_decided(said(true), said(false), n)
            })
        };
        let (answers, _) = gather(calls, decided, self.config.node_timeout).await;
        let masters = (answers.iter().enumerate())
            .filter(|(_, answer)| matches!(answer, Some(Some(_))))
            .fold(0u32, |mask, (i, _)| mask | 1 << i);
        let outcomes: Vec<Result<Extended, Error>> = locks
            .iter()
            .enumerate()
            .map(|(i, lock)| {
                let per_node: Vec<Option<bool>> = answers
                    .iter()
                    .map(|answer| answer.as_ref().and_then(Option::as_ref).map(|a| a[i]))
                    .collect();
                self.tally(&per_node).map(|held| {
                    if quorum::majority(held, n) {
                        Extended::Yes { ttl: lock.ttl, sent }
                    } else {
                        Extended::Lost
                    }
                })
            })
            .collect();
        drop(locks);
        for (queued, outcome) in batch.into_iter().zip(outcomes) {
            let _ = queued.answer.send((outcome, masters));
        }
    }
}

#[cfg(test)]
#[path = "extend_tests.rs"]
mod tests;
