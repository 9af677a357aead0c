//! Taking a lock (docs/design.md#acquire): attempts of round 1 (lock and
//! bump the fence counter on every node) and, when needed, round 2 (publish
//! the token), retried with jitter until the wait runs out; the head of a
//! local queue also wakes on published releases and hand-offs.

use std::future::Future;
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::Instrument;

use super::fanout::gather;
use super::node::{Announce, Node, Standing};
use super::quorum::{self, Decision, Minted};
use super::spans::{self, round_span};
use super::vote::{Acquired, FailureReason, NodeVote, summarize};
use super::{Engine, Error, Kind, Lease, Lifetime, LockValue, Mode};

/// How a single attempt failed, with what the nodes said in round 1.
pub(super) enum Attempt {
    Failed(FailureReason, Vec<NodeVote>),
    Unreachable {
        reached: usize,
        votes: Vec<NodeVote>,
    },
    /// A semaphore's masters remember another number of permits.
    Differ(u32),
}

impl Attempt {
    /// What the last attempt's failure ends a wait with: contention is
    /// its reason and the votes, too few masters `Error::Unavailable`
    /// (`needed` the quorum). Permits that differ end a wait as soon as
    /// they are seen, never here.
    pub(super) fn ended(self, needed: usize) -> Result<(FailureReason, Vec<NodeVote>), Error> {
        match self {
            Attempt::Failed(reason, votes) => Ok((reason, votes)),
            Attempt::Unreachable { reached, votes } => Err(Error::Unavailable {
                reached,
                needed,
                detail: summarize(&votes),
                votes,
            }),
            Attempt::Differ(_) => unreachable!("permits that differ end the wait where they are seen"),
        }
    }
}

/// What the head of a local queue (`crate::locks::queue`) brings to `acquire`.
pub struct Head<'a, H> {
    /// Notified when a release of the resource was published.
    pub wake: &'a Notify,
    /// Resolves with a lease handed over by a release in this daemon.
    pub handed: H,
    /// The lock is held through this daemon now (the head before took it):
    /// its release will hand it over, so the first attempt waits.
    pub held_here: bool,
    /// Until when this daemon steps aside (it just published a release for
    /// a waiter elsewhere): no attempt starts before then.
    pub yielding: &'a (dyn Fn() -> Option<Instant> + Sync),
}

/// `acquire` for a caller that heads no queue.
pub const ALONE: Option<Head<'static, std::future::Pending<Lease>>> = None;

impl<N: Node> Engine<N> {
    /// Takes the lock on `resource`, retrying with jitter until `wait` has
    /// passed or `give_up` resolves (checked between attempts only, so an
    /// attempt is never abandoned half-way with keys left behind). `head`
    /// is given when the caller heads a local queue (see `Head`). `holder`
    /// (`Engine::holder_tag`) is recorded with the lock on each master.
    /// `kind` says what is taken: a lock, a shared lock (held with others
    /// of its mode, docs/design.md#shared-locks) or a permit of a semaphore
    /// (docs/design.md#semaphores).
    ///
    /// # Errors
    /// `Error::Unavailable` when the last attempt reached fewer than a quorum
    /// of nodes. Contention is `Ok(Acquired::NotGranted)`.
    pub async fn acquire<H: Future<Output = Lease>>(
        &self,
        resource: &str,
        (kind, lifetime): (Kind, impl Into<Lifetime>),
        wait: Duration,
        give_up: impl Future<Output = ()>,
        head: Option<Head<'_, H>>,
        holder: &str,
    ) -> Result<Acquired, Error> {
        let key = self.lock_key(resource);
        let lifetime = lifetime.into();
        let deadline = Instant::now() + wait;
        let mut give_up = std::pin::pin!(give_up);
        let (wake, handed, mut defer, yielding) = match head {
            Some(Head {
                wake,
                handed,
                held_here,
                yielding,
            }) => (Some(wake), Some(handed), held_here, Some(yielding)),
            None => (None, None, false, None),
        };
        // A lock handed over by a local release (`hand_off`) ends the wait;
        // looked at between attempts only, so no attempt is cut half-way.
        let mut handed = std::pin::pin!(async {
            match handed {
                Some(handed) => handed.await,
                None => std::future::pending().await,
            }
        });
        let mut attempts = 0;
        loop {
            if let Some(lease) = (&mut handed).now_or_never() {
                return Ok(Acquired::Granted(lease));
            }
            // Held through this daemon: an attempt now would only be refused
            // (and cost every master a script); wait first. The wait ends
            // with an attempt, so the outcome is always the masters' answer.
            if !std::mem::take(&mut defer) {
                // Looked at again after each wait: the window may have moved.
                while let Some(until) = yielding.and_then(|yielding| yielding()) {
                    tokio::select! {
                        () = tokio::time::sleep_until(until.min(deadline)) => {}
                        lease = &mut handed => return Ok(Acquired::Granted(lease)),
                        () = &mut give_up => return Err(Error::Cancelled),
                    }
                    if until >= deadline {
                        break;
                    }
                }
                attempts += 1;
                let failure = match self.try_once(resource, &key, kind, lifetime, holder).await {
                    Ok(lease) => return Ok(Acquired::Granted(lease)),
                    Err(Attempt::Differ(held)) => {
                        let Kind::Permits(asked) = kind else {
                            unreachable!("only permits differ")
                        };
                        return Err(Error::PermitsDiffer { asked, held });
                    }
                    Err(failure) => failure,
                };
                if Instant::now() >= deadline {
                    let (reason, votes) = failure.ended(self.quorum())?;
                    return Ok(Acquired::NotGranted {
                        reason,
                        attempts,
                        votes,
                    });
                }
            }
            let delay = self
                .retry_delay()
                .min(deadline.saturating_duration_since(Instant::now()));
            let woken = async {
                match wake {
                    Some(notify) => {
                        notify.notified().await;
                        // Every daemon hears a release at about the same
                        // moment, but Redis tells its subscribers in the
                        // order they subscribed: without a little jitter the
                        // same daemon would win every hand-off.
                        tokio::time::sleep(self.wake_jitter()).await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = woken => {}
                lease = &mut handed => return Ok(Acquired::Granted(lease)),
                () = &mut give_up => return Err(Error::Cancelled),
            }
        }
    }

    /// One attempt at what `kind` asks for, with a fresh value.
    async fn try_once(
        &self,
        resource: &str,
        key: &str,
        kind: Kind,
        Lifetime { ttl, lock_delay }: Lifetime,
        holder: &str,
    ) -> Result<Lease, Attempt> {
        let mode = match kind {
            Kind::Exclusive => Mode::Exclusive,
            Kind::Shared => Mode::Shared,
            Kind::Permits(n) => {
                return self
                    .attempt_permit(resource, n, Lifetime { ttl, lock_delay }, holder)
                    .await;
            }
        };
        let value = LockValue::random_for(mode).delayed(lock_delay);
        let (fencing_token, validity) = self.attempt(key, &value, ttl, holder).await?;
        let resource = resource.to_owned();
        Ok(Lease {
            resource,
            value,
            fencing_token,
            validity,
        })
    }

    /// One attempt (steps 1–6). On failure the lock is released on all N
    /// nodes before returning: a reply can be lost after the write happened.
    pub(super) async fn attempt(
        &self,
        key: &str,
        value: &LockValue,
        ttl: Duration,
        holder: &str,
    ) -> Result<(u64, Duration), Attempt> {
        let t0 = Instant::now();
        // Round 1: lock and bump the fence counter everywhere.
        let votes = self.round_one(key, value, ttl, holder).await;
        let result = self.granted(key, value, ttl, t0, votes).await;
        if let Err(Attempt::Failed(_, votes) | Attempt::Unreachable { votes, .. }) = &result {
            // A node that said "held by another owner", or was never asked,
            // holds nothing of this attempt: only the others are cleaned.
            let maybe_ours: Vec<bool> = votes
                .iter()
                .map(|v| !matches!(v, NodeVote::Taken | NodeVote::Quarantined | NodeVote::Unusable(_)))
                .collect();
            if maybe_ours.contains(&true) {
                self.unlock_where(key, value, Announce::No, &maybe_ours).await;
            }
        }
        result
    }

    /// After round 1 (or a hand-off round): a quorum of grants, then round
    /// 2 when needed, then the validity left.
    pub(super) async fn granted(
        &self,
        key: &str,
        value: &LockValue,
        ttl: Duration,
        t0: Instant,
        votes: Vec<NodeVote>,
    ) -> Result<(u64, Duration), Attempt> {
        let counters: Vec<Option<u64>> = votes
            .iter()
            .map(|v| match v {
                NodeVote::Granted(c) => Some(*c),
                _ => None,
            })
            .collect();
        let granted = counters.iter().flatten().count();
        let reached = votes.iter().filter(|v| v.reached()).count();
        match quorum::decide(granted, reached, self.nodes.len()) {
            Decision::Granted => {}
            Decision::Taken => return Err(Attempt::Failed(FailureReason::Taken, votes)),
            Decision::Unreachable => return Err(Attempt::Unreachable { reached, votes }),
        }
        let minted = Minted::from_counters(&counters).expect("a quorum granted");

        // Round 2: publish T until a majority of the holders store it.
        if self.config.publish_round && !minted.is_published(self.nodes.len()) {
            self.round_two(key, value, &votes, &minted).await?;
        }

        match quorum::validity(ttl, t0.elapsed(), self.config.drift_factor) {
            Some(validity) if validity >= self.config.min_validity => Ok((
                match value.mode() {
                    Mode::Exclusive => minted.token(),
                    Mode::Shared => minted.read_token(),
                },
                validity,
            )),
            left => Err(Attempt::Failed(
                FailureReason::ValidityUsedUp {
                    left: left.unwrap_or_default(),
                },
                votes,
            )),
        }
    }

    /// Sends the acquire script to every node (the shared one for a shared
    /// value); one vote per node, in order.
    async fn round_one(&self, key: &str, value: &LockValue, ttl: Duration, holder: &str) -> Vec<NodeVote> {
        // The masters keep the key its lock delay longer (docs/design.md#lock-delay).
        let key_ttl = value.key_ttl(ttl);
        let calls = self.nodes.iter().map(|node| async move {
            match node.standing_of(key) {
                Standing::Usable => {}
                Standing::Quarantined { .. } => return NodeVote::Quarantined,
                Standing::Unverified => return NodeVote::Unusable("not verified yet".into()),
                Standing::Failed { reason, .. } => return NodeVote::Unusable(reason),
            }
            let locked = match value.mode() {
                Mode::Exclusive => node.try_lock(key, value.expose(), key_ttl, holder).await,
                Mode::Shared => node.try_share(key, value.expose(), key_ttl, holder).await,
            };
            match locked {
                Ok(Some(counter)) => NodeVote::Granted(counter),
                Ok(None) => NodeVote::Taken,
                Err(e) => NodeVote::Errored(e.to_string()),
            }
        });
        // Decided as soon as a quorum granted (the slower nodes still hold
        // the lock or not; release goes to all). A failure waits for every
        // answer, so it can say what each node did.
        let n = self.nodes.len();
        let span = round_span!("acquire round one");
        let (votes, timed_out) = gather(
            calls,
            |votes| {
                let granted = votes.iter().filter(|v| matches!(v, Some(NodeVote::Granted(_)))).count();
                quorum::enough_granted(granted, n)
            },
            self.config.node_timeout,
        )
        .instrument(span.clone())
        .await;
        spans::answered(&span, &self.nodes, |i| votes[i].as_ref().is_some_and(NodeVote::reached));
        votes
            .into_iter()
            .map(|v| v.unwrap_or_else(|| NodeVote::unanswered(timed_out)))
            .collect()
    }

    /// Round 2: tell the holders that returned less than `T` to store `T`,
    /// guarded by the lock value. `W = S ∪ {nodes that stored it}` must be a
    /// majority, or the token might not outrank a later grant.
    async fn round_two(
        &self,
        key: &str,
        value: &LockValue,
        votes: &[NodeVote],
        minted: &Minted,
    ) -> Result<(), Attempt> {
        let behind: Vec<usize> = votes
            .iter()
            .enumerate()
            .filter(|(_, v)| matches!(v, NodeVote::Granted(c) if *c < minted.max))
            .map(|(i, _)| i)
            .collect();
        let calls = (behind.iter()).map(|&i| self.nodes[i].publish_fence(key, value.expose(), minted.max));
        let needed = quorum::stores_needed(minted.at_max.len(), self.nodes.len());
        let span = round_span!("acquire round two");
        let (answers, _) = gather(
            calls,
            |answers| answers.iter().filter(|a| matches!(a, Some(Ok(true)))).count() >= needed,
            self.config.node_timeout,
        )
        .instrument(span.clone())
        .await;
        spans::answered(&span, &self.nodes, |i| {
            (behind.iter().position(|&b| b == i)).is_some_and(|at| matches!(answers[at], Some(Ok(_))))
        });
        let answers: Vec<_> = answers.into_iter().flatten().collect();
        let stored = answers.iter().filter(|a| matches!(a, Ok(true))).count();
        if quorum::majority(minted.at_max.len() + stored, self.nodes.len()) {
            return Ok(());
        }
        // Nodes that said "not held" were reached; the rest were not.
        let refused = answers.iter().filter(|a| matches!(a, Ok(false))).count();
        let taken = votes.iter().filter(|v| **v == NodeVote::Taken).count();
        let reached = minted.at_max.len() + stored + refused + taken;
        Err(
            match quorum::decide(minted.at_max.len() + stored, reached, self.nodes.len()) {
                Decision::Unreachable => Attempt::Unreachable {
                    reached,
                    votes: votes.to_vec(),
                },
                Decision::Granted | Decision::Taken => Attempt::Failed(FailureReason::Taken, votes.to_vec()),
            },
        )
    }
}

#[cfg(test)]
#[path = "acquire_tests.rs"]
mod tests;

/// Shared locks, which `acquire` takes with exclusive ones.
#[cfg(test)]
#[path = "shared_tests.rs"]
mod shared_tests;
