//! Giving a lock back (docs/design.md#release): compare-and-delete on every
//! node, answered as soon as a quorum decided.

use tracing::Instrument;

use super::fanout::gather;
use super::node::{Announce, Node};
use super::spans::{self, round_span};
use super::{Engine, Error, LockValue, quorum};

impl<N: Node> Engine<N> {
    /// Compare-and-delete on every node, errors ignored (step 6).
    pub(super) async fn unlock_all(&self, key: &str, value: &LockValue, announce: Announce) -> Vec<Option<bool>> {
        self.unlock_where(key, value, announce, &[true; quorum::MAX_NODES][..self.nodes.len()])
            .await
    }

    /// Compare-and-delete on the nodes `to[i]` names; `None` for the
    /// others and for errors.
    pub(super) async fn unlock_where(
        &self,
        key: &str,
        value: &LockValue,
        announce: Announce,
        to: &[bool],
    ) -> Vec<Option<bool>> {
        let calls = self.nodes.iter().zip(to).map(|(node, asked)| async move {
            if !asked {
                return None;
            }
            node.unlock(key, value.expose(), announce).await.ok()
        });
        let (answers, _) = gather(calls, |_| false, self.config.node_timeout).await;
        answers.into_iter().map(Option::flatten).collect()
    }

    /// Deletes the lock on every node (docs/design.md#release). Returns whether a majority
    /// still held `value` when it was deleted: whether the critical section
    /// stayed protected to the end.
    ///
    /// The answer comes as soon as it is known: when a quorum said "held and
    /// deleted", when a quorum answered and so many said "not held" or
    /// failed that no quorum can say "held", or when so many failed that no
    /// quorum can answer; as an acquisition decides at the third vote
    /// (docs/performance.md). The deletes on the other nodes are not abandoned: a
    /// node's `unlock` sends its request even when nobody waits for the
    /// answer (`RedisNode`: a queued release always goes; one its caller was
    /// sending itself is finished by a task of its own).
    ///
    /// # Errors
    /// `Error::Unavailable` when fewer than a quorum of nodes answered (the
    /// deletes were still sent to all).
    pub async fn release(&self, resource: &str, value: &LockValue) -> Result<bool, Error> {
        self.release_announced(resource, value, Announce::IfWaited).await
    }

    /// `release`, announcing it as `announce` says (`Always` when this
    /// daemon has waiters of its own for the lock).
    ///
    /// # Errors
    /// As `release`.
    pub async fn release_announced(
        &self,
        resource: &str,
        value: &LockValue,
        announce: Announce,
    ) -> Result<bool, Error> {
        let key = self.lock_key(resource);
        let n = self.nodes.len();
        let calls = self
            .nodes
            .iter()
            .map(|node| async { node.unlock(&key, value.expose(), announce).await.ok() });
        let span = round_span!("release");
        let (answers, _) = gather(
            calls,
            |answers| {
                let said = |yes| answers.iter().filter(|a| **a == Some(Some(yes))).count();
                let (held, not_held) = (said(true), said(false));
                let pending = answers.iter().filter(|a| a.is_none()).count();
                quorum::release_decided(held, not_held, pending, n)
            },
            self.config.node_timeout,
        )
        .instrument(span.clone())
        .await;
        let answers: Vec<Option<bool>> = answers.into_iter().map(Option::flatten).collect();
        spans::answered(&span, &self.nodes, |i| answers[i].is_some());
        Ok(quorum::majority(self.tally(&answers)?, n))
    }
}

#[cfg(test)]
#[path = "release_tests.rs"]
mod tests;
