//! Several resources at once (docs/design.md#sets):
//! each master takes the whole set or none of it in one step, the grant
//! needs a quorum for the whole set, and a failed attempt gives every
//! member back before the next: waiting never holds part of a set, so two
//! callers with overlapping sets cannot deadlock.

use std::future::Future;
use std::time::Duration;

use futures::future::join_all;
use tokio::time::Instant;

use super::acquire::Attempt;
use super::fanout::gather;
use super::node::{Announce, Node, Standing};
use super::quorum::{self, Decision};
use super::vote::{FailureReason, NodeVote};
use super::{Engine, Error, Lease, LockValue};

/// The most resources one set may hold.
pub const MAX_SET: usize = 16;

/// The outcome of `Engine::acquire_set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcquiredSet {
    /// Every member is held, with one value; a lease per member, in the
    /// order of the names, each with its own token.
    Granted(Vec<Lease>),
    /// The wait ran out without the set.
    NotGranted {
        /// Why the last attempt failed.
        reason: FailureReason,
        /// How many attempts were made.
        attempts: u32,
        /// What each node said in the last attempt.
        votes: Vec<NodeVote>,
    },
}

impl<N: Node> Engine<N> {
    /// Takes every one of `names` (sorted, without repeats: the caller's
    /// duty) or none, retrying whole-set attempts with jitter until `wait`
    /// has passed or `give_up` resolves (between attempts only).
    ///
    /// # Errors
    /// `Error::Unavailable` when the last attempt reached fewer than a quorum
    /// of nodes.
    pub async fn acquire_set(
        &self,
        names: &[String],
        ttl: Duration,
        wait: Duration,
        give_up: impl Future<Output = ()>,
        holder: &str,
    ) -> Result<AcquiredSet, Error> {
        assert!(!names.is_empty() && names.len() <= MAX_SET && names.is_sorted());
        let keys: Vec<String> = names.iter().map(|name| self.lock_key(name)).collect();
        let deadline = Instant::now() + wait;
        let mut give_up = std::pin::pin!(give_up);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let value = LockValue::random();
            let failure = match self.attempt_set(&keys, &value, ttl, holder).await {
                Ok(tokens) => {
                    let leases = (names.iter().zip(tokens))
                        .map(|(name, (fencing_token, validity))| Lease {
                            resource: name.clone(),
                            value: value.clone(),
                            fencing_token,
                            validity,
                        })
                        .collect();
                    return Ok(AcquiredSet::Granted(leases));
                }
                Err(failure) => failure,
            };
            if Instant::now() >= deadline {
                let (reason, votes) = failure.ended(self.quorum())?;
                return Ok(AcquiredSet::NotGranted {
                    reason,
                    attempts,
                    votes,
                });
            }
            let delay = self
                .retry_delay()
                .min(deadline.saturating_duration_since(Instant::now()));
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = &mut give_up => return Err(Error::Cancelled),
            }
        }
    }

    /// One whole-set attempt: round 1 on every node (all or none there),
    /// then per member round 2 and the validity, as for one lock. On
    /// failure every member is released on every node that may hold it.
    async fn attempt_set(
        &self,
        keys: &[String],
        value: &LockValue,
        ttl: Duration,
        holder: &str,
    ) -> Result<Vec<(u64, Duration)>, Attempt> {
        let t0 = Instant::now();
        let answers = self.round_one_set(keys, value, ttl, holder).await;
        let result = self.granted_set(keys, value, ttl, t0, &answers).await;
        if result.is_err() {
            let maybe_ours: Vec<bool> = (answers.iter())
                .map(|(vote, _)| !matches!(vote, NodeVote::Taken | NodeVote::Quarantined | NodeVote::Unusable(_)))
                .collect();
            if maybe_ours.contains(&true) {
                let cleanups = keys
                    .iter()
                    .map(|key| self.unlock_where(key, value, Announce::No, &maybe_ours));
                join_all(cleanups).await;
            }
        }
        result
    }

    /// Round 1 of a set: per node its vote and, when it granted, a counter
    /// per member.
    async fn round_one_set(
        &self,
        keys: &[String],
        value: &LockValue,
        ttl: Duration,
        holder: &str,
    ) -> Vec<(NodeVote, Vec<u64>)> {
        let calls = self.nodes.iter().map(|node| async move {
            // Every member's bucket must count (on a cluster they may lie
            // in different shards).
            let standing = (keys.iter().map(|k| node.standing_of(k)))
                .find(|s| *s != Standing::Usable)
                .unwrap_or(Standing::Usable);
            match standing {
                Standing::Usable => {}
                Standing::Quarantined { .. } => return (NodeVote::Quarantined, Vec::new()),
                Standing::Unverified => return (NodeVote::Unusable("not verified yet".into()), Vec::new()),
                Standing::Failed { reason, .. } => return (NodeVote::Unusable(reason), Vec::new()),
            }
            match node.try_lock_set(keys, value.expose(), ttl, holder).await {
                Ok(Some(counters)) if counters.len() == keys.len() => (NodeVote::Granted(counters[0]), counters),
                Ok(Some(_)) => (
                    NodeVote::Errored("a counter per member was expected".into()),
                    Vec::new(),
                ),
                Ok(None) => (NodeVote::Taken, Vec::new()),
                Err(e) => (NodeVote::Errored(e.to_string()), Vec::new()),
            }
        });
        let n = self.nodes.len();
        let (answers, timed_out) = gather(
            calls,
            |answers| {
                let granted = (answers.iter().flatten())
                    .filter(|(vote, _)| matches!(vote, NodeVote::Granted(_)))
                    .count();
                quorum::enough_granted(granted, n)
            },
            self.config.node_timeout,
        )
        .await;
        (answers.into_iter())
            .map(|a| a.unwrap_or_else(|| (NodeVote::unanswered(timed_out), Vec::new())))
            .collect()
    }

    /// A quorum for the whole set, then each member's token and validity
    /// as `granted` makes them for one lock.
    async fn granted_set(
        &self,
        keys: &[String],
        value: &LockValue,
        ttl: Duration,
        t0: Instant,
        answers: &[(NodeVote, Vec<u64>)],
    ) -> Result<Vec<(u64, Duration)>, Attempt> {
        let votes: Vec<NodeVote> = answers.iter().map(|(vote, _)| vote.clone()).collect();
        let granted = votes.iter().filter(|v| matches!(v, NodeVote::Granted(_))).count();
        let reached = votes.iter().filter(|v| v.reached()).count();
        match quorum::decide(granted, reached, self.nodes.len()) {
            Decision::Granted => {}
            Decision::Taken => return Err(Attempt::Failed(FailureReason::Taken, votes)),
            Decision::Unreachable => return Err(Attempt::Unreachable { reached, votes }),
        }
        // Each member as a lock of its own: the node's counter for it.
        let members = keys.iter().enumerate().map(|(i, key)| {
            let member_votes: Vec<NodeVote> = (answers.iter())
                .map(|(vote, counters)| match vote {
                    NodeVote::Granted(_) => NodeVote::Granted(counters[i]),
                    other => other.clone(),
                })
                .collect();
            self.granted(key, value, ttl, t0, member_votes)
        });
        join_all(members).await.into_iter().collect()
    }
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
