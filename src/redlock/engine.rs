//! The Redlock rounds over N `Node`s (DESIGN §2–3): acquire with the
//! two-round fencing protocol, retry with jitter, extend, release. Every
//! round goes to all nodes at once, each bounded by the per-node timeout.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use futures::FutureExt;
use futures::future::join_all;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::time::{Instant, timeout};

use super::node::{Announce, Extension, KeyView, Node, Standing, Swap};
use super::quorum::{self, Minted};
use super::{Lease, LockValue};
use crate::locks::error::Error;

/// The engine's knobs (a subset of the daemon config).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Keys are `<key_prefix>:lock:<resource>`.
    pub key_prefix: String,
    /// Bound on each node's answer in a round, far below the TTL, so a slow
    /// or dead node costs at most this.
    pub node_timeout: Duration,
    /// Clock drift allowed per unit of TTL (step 5).
    pub drift_factor: f64,
    /// A grant with less validity than this counts as failed.
    pub min_validity: Duration,
    /// Retry delay after a failed attempt is uniform in `[min, max]`.
    pub retry_delay_min: Duration,
    /// See `retry_delay_min`.
    pub retry_delay_max: Duration,
    /// Round 2 of the fencing protocol. Only tests switch it off, to show
    /// that tokens then go backwards.
    #[doc(hidden)]
    pub publish_round: bool,
}

/// What one node said in round 1 of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeVote {
    /// Locked; the node's fence counter.
    Granted(u64),
    /// Another value holds the key there.
    Taken,
    /// No answer within the per-node timeout.
    TimedOut,
    /// The node answered with an error (or refused the connection).
    Errored(String),
    /// Not asked: the node is quarantined (it may have lost locks).
    Quarantined,
    /// Not asked: the node failed preflight or is not verified yet.
    Unusable(String),
    /// Asked, but a quorum had granted before it answered; its lock, if
    /// any, goes with the release to all.
    NotAwaited,
}

impl NodeVote {
    /// A node the round left without an answer: cut off by the round's
    /// limit, or not needed once the outcome was known.
    fn unanswered(timed_out: bool) -> NodeVote {
        if timed_out {
            NodeVote::TimedOut
        } else {
            NodeVote::NotAwaited
        }
    }

    /// A short name of the kind of vote, for messages and error details.
    pub fn kind(&self) -> &'static str {
        match self {
            NodeVote::Granted(_) => "granted",
            NodeVote::Taken => "held by another owner",
            NodeVote::TimedOut => "timed out",
            NodeVote::Errored(_) => "errored",
            NodeVote::Quarantined => "quarantined",
            NodeVote::Unusable(_) => "unusable",
            NodeVote::NotAwaited => "not awaited",
        }
    }

    /// Whether the node answered at all (grant or refusal).
    fn reached(&self) -> bool {
        matches!(self, NodeVote::Granted(_) | NodeVote::Taken)
    }
}

/// Why an acquisition ended without a lock, when that is not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureReason {
    /// Enough nodes answered, but the lock is held elsewhere.
    Taken,
    /// A quorum granted, but the rounds used up the validity.
    ValidityUsedUp {
        /// What was left (below `min_validity`, possibly zero).
        left: Duration,
    },
}

/// The result of `Engine::acquire`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The lock is held.
    Granted(Lease),
    /// The wait ran out without a lock.
    NotGranted {
        /// Why the last attempt failed.
        reason: FailureReason,
        /// How many attempts were made.
        attempts: u32,
        /// What each node said in the last attempt.
        votes: Vec<NodeVote>,
    },
}

/// The result of `Engine::hand_off`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOff {
    /// Whether a majority still held the old lock (it was held to the end).
    pub old_held: bool,
    /// The new owner's lock, when a quorum granted it.
    pub lease: Option<Lease>,
    /// A master saw the lock marked as waited for by another daemon: one of
    /// its waiters was refused since the last announced release.
    pub waited: bool,
}

/// A quorum view of one resource (no lock values in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// A majority holds the same value.
    pub held: bool,
    /// How many nodes hold the most common value.
    pub agreeing: usize,
    /// The majority size.
    pub quorum: usize,
    /// Per node, in index order.
    pub nodes: Vec<NodeInspection>,
}

/// One node in an `Inspection`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInspection {
    /// `host:port`.
    pub name: String,
    /// Its standing.
    pub standing: Standing,
    /// It answered.
    pub reachable: bool,
    /// It holds a lock key for the resource.
    pub held: bool,
    /// Its value is the most common one.
    pub with_majority: bool,
    /// Time left on its key.
    pub ttl: Option<Duration>,
    /// Its fence counter.
    pub fence: Option<u64>,
}

/// How a single attempt failed, with what the nodes said in round 1.
enum Attempt {
    Failed(FailureReason, Vec<NodeVote>),
    Unreachable { reached: usize, votes: Vec<NodeVote> },
}

/// The quorum engine over a fixed list of nodes.
pub struct Engine<N> {
    nodes: Vec<N>,
    config: EngineConfig,
    extensions: Extensions,
}

/// At most this many locks go in one extension batch.
pub const EXTEND_BATCH_MAX: usize = 128;
/// At most this many extension batches are in flight at once. A lone
/// extension leaves at once in a batch of one; while every slot is busy,
/// the extensions that come due queue and leave together in the next batch.
pub const EXTEND_BATCHES_AT_ONCE: usize = 4;

/// Extensions waiting for a batch (see `Engine::extend`).
struct Extensions {
    queue: Mutex<Vec<QueuedExtension>>,
    slots: Arc<Semaphore>,
}

struct QueuedExtension {
    key: String,
    value: String,
    ttl: Duration,
    queued_at: Instant,
    answer: oneshot::Sender<Result<Extended, Error>>,
}

/// A batch's answer for one extension; the caller turns it into a validity
/// when it reads it, so no wait after the round goes uncounted.
enum Extended {
    /// A quorum extended it to `ttl`; the commands left at `sent`.
    Yes { ttl: Duration, sent: Instant },
    /// A majority no longer holds the value.
    Lost,
}

impl Extensions {
    fn new() -> Extensions {
        Extensions {
            queue: Mutex::new(Vec::new()),
            slots: Arc::new(Semaphore::new(EXTEND_BATCHES_AT_ONCE)),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Vec<QueuedExtension>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The oldest queued extensions, at most a batch of them.
    fn next_batch(&self) -> Vec<QueuedExtension> {
        let mut queue = self.queue();
        let n = queue.len().min(EXTEND_BATCH_MAX);
        queue.drain(..n).collect()
    }

    fn free_slot(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.slots).try_acquire_owned().ok()
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
    /// An engine over `nodes` (odd count, at most 16; config validation
    /// guarantees it for the daemon).
    pub fn new(nodes: Vec<N>, config: EngineConfig) -> Engine<N> {
        assert!(!nodes.is_empty() && nodes.len() <= quorum::MAX_NODES);
        Engine {
            nodes,
            config,
            extensions: Extensions::new(),
        }
    }

    /// The bound on each node's answer in a round.
    pub fn node_timeout(&self) -> Duration {
        self.config.node_timeout
    }

    /// The nodes, in index order (the index is the token's low bits).
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// How many nodes make a majority.
    pub fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    /// The Redis key of a lock: `<key_prefix>:<name>`, where `name` is
    /// `lock:<resource>`, or `tenant:<t>:lock:<resource>` (see
    /// `auth::scoped`).
    pub fn lock_key(&self, name: &str) -> String {
        format!("{}:{name}", self.config.key_prefix)
    }

    /// Takes the lock on `resource`, retrying with jitter until `wait` has
    /// passed or `give_up` resolves (checked between attempts only, so an
    /// attempt is never abandoned half-way with keys left behind). `head`
    /// is given when the caller heads a local queue (see `Head`).
    ///
    /// # Errors
    /// `Error::Unavailable` when the last attempt reached fewer than a quorum
    /// of nodes. Contention is `Ok(Acquired::NotGranted)`.
    pub async fn acquire<H: Future<Output = Lease>>(
        &self,
        resource: &str,
        ttl: Duration,
        wait: Duration,
        give_up: impl Future<Output = ()>,
        head: Option<Head<'_, H>>,
    ) -> Result<Acquired, Error> {
        let key = self.lock_key(resource);
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
                let value = LockValue::random();
                let failure = match self.attempt(&key, &value, ttl).await {
                    Ok((fencing_token, validity)) => {
                        let lease = Lease {
                            resource: resource.to_owned(),
                            value,
                            fencing_token,
                            validity,
                        };
                        return Ok(Acquired::Granted(lease));
                    }
                    Err(failure) => failure,
                };
                if Instant::now() >= deadline {
                    return match failure {
                        Attempt::Failed(reason, votes) => Ok(Acquired::NotGranted {
                            reason,
                            attempts,
                            votes,
                        }),
                        Attempt::Unreachable { reached, votes } => Err(Error::Unavailable {
                            reached,
                            needed: self.quorum(),
                            detail: summarize(&votes),
                            votes,
                        }),
                    };
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

    /// One attempt (steps 1–6). On failure the lock is released on all N
    /// nodes before returning: a reply can be lost after the write happened.
    async fn attempt(&self, key: &str, value: &LockValue, ttl: Duration) -> Result<(u64, Duration), Attempt> {
        let t0 = Instant::now();
        let result = self.rounds(key, value, ttl, t0).await;
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

    async fn rounds(
        &self,
        key: &str,
        value: &LockValue,
        ttl: Duration,
        t0: Instant,
    ) -> Result<(u64, Duration), Attempt> {
        // Round 1: lock and bump the fence counter everywhere.
        let votes = self.round_one(key, value, ttl).await;
        self.granted(key, value, ttl, t0, votes).await
    }

    /// After round 1 (or a hand-off round): a quorum of grants, then round
    /// 2 when needed, then the validity left.
    async fn granted(
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
        if granted < self.quorum() {
            return Err(if reached < self.quorum() {
                Attempt::Unreachable { reached, votes }
            } else {
                Attempt::Failed(FailureReason::Taken, votes)
            });
        }
        let minted = Minted::from_counters(&counters).expect("a quorum granted");

        // Round 2: publish T until a majority of the holders store it.
        if self.config.publish_round && !minted.is_published(self.nodes.len()) {
            self.round_two(key, value, &votes, &minted).await?;
        }

        match quorum::validity(ttl, t0.elapsed(), self.config.drift_factor) {
            Some(validity) if validity >= self.config.min_validity => Ok((minted.token(), validity)),
            left => Err(Attempt::Failed(
                FailureReason::ValidityUsedUp {
                    left: left.unwrap_or_default(),
                },
                votes,
            )),
        }
    }

    /// Sends the acquire script to every node; one vote per node, in order.
    async fn round_one(&self, key: &str, value: &LockValue, ttl: Duration) -> Vec<NodeVote> {
        let calls = self.nodes.iter().map(|node| async move {
            match node.standing() {
                Standing::Usable => {}
                Standing::Quarantined { .. } => return NodeVote::Quarantined,
                Standing::Unverified => return NodeVote::Unusable("not verified yet".into()),
                Standing::Failed { reason, .. } => return NodeVote::Unusable(reason),
            }
            match node.try_lock(key, value.expose(), ttl).await {
                Ok(Some(counter)) => NodeVote::Granted(counter),
                Ok(None) => NodeVote::Taken,
                Err(e) => NodeVote::Errored(e.0),
            }
        });
        // Decided as soon as a quorum granted (the slower nodes still hold
        // the lock or not; release goes to all). A failure waits for every
        // answer, so it can say what each node did.
        let quorum = self.quorum();
        let (votes, timed_out) = gather(
            calls,
            |votes| votes.iter().filter(|v| matches!(v, Some(NodeVote::Granted(_)))).count() >= quorum,
            self.config.node_timeout,
        )
        .await;
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
        let behind = votes
            .iter()
            .enumerate()
            .filter(|(_, v)| matches!(v, NodeVote::Granted(c) if *c < minted.max))
            .map(|(i, _)| &self.nodes[i]);
        let calls = behind.map(|node| node.publish_fence(key, value.expose(), minted.max));
        let needed = self.quorum().saturating_sub(minted.at_max.len());
        let (answers, _) = gather(
            calls,
            |answers| answers.iter().filter(|a| matches!(a, Some(Ok(true)))).count() >= needed,
            self.config.node_timeout,
        )
        .await;
        let answers: Vec<_> = answers.into_iter().flatten().collect();
        let stored = answers.iter().filter(|a| matches!(a, Ok(true))).count();
        if minted.at_max.len() + stored >= self.quorum() {
            return Ok(());
        }
        // Nodes that said "not held" were reached; the rest were not.
        let refused = answers.iter().filter(|a| matches!(a, Ok(false))).count();
        let taken = votes.iter().filter(|v| **v == NodeVote::Taken).count();
        let reached = minted.at_max.len() + stored + refused + taken;
        Err(if reached < self.quorum() {
            Attempt::Unreachable {
                reached,
                votes: votes.to_vec(),
            }
        } else {
            Attempt::Failed(FailureReason::Taken, votes.to_vec())
        })
    }

    /// Compare-and-delete on every node, errors ignored (step 6).
    async fn unlock_all(&self, key: &str, value: &LockValue, announce: Announce) -> Vec<Option<bool>> {
        self.unlock_where(key, value, announce, &[true; quorum::MAX_NODES][..self.nodes.len()])
            .await
    }

    /// Compare-and-delete on the nodes `to[i]` names; `None` for the
    /// others and for errors.
    async fn unlock_where(&self, key: &str, value: &LockValue, announce: Announce, to: &[bool]) -> Vec<Option<bool>> {
        let calls = self.nodes.iter().zip(to).map(|(node, asked)| async move {
            if !asked {
                return None;
            }
            node.unlock(key, value.expose(), announce).await.ok()
        });
        let (answers, _) = gather(calls, |_| false, self.config.node_timeout).await;
        answers.into_iter().map(Option::flatten).collect()
    }

    /// Hands the lock `old` on `resource` straight to a new owner (the next
    /// waiter in this daemon) in one round instead of a release, a
    /// published wake-up and a new acquisition: every usable node swaps
    /// `old` (or a free key) for a fresh value with `ttl`, advancing its
    /// fence counter; the token is minted from those counters exactly as in
    /// an acquisition (round 2 when needed), so it outranks every earlier
    /// grant. Nodes not usable for acquisitions only release `old`.
    ///
    /// On failure the new value is removed from every node and `old` is
    /// released (and announced) as by `release`.
    ///
    /// # Errors
    /// `Error::Unavailable` when fewer than a quorum of nodes answered.
    pub async fn hand_off(&self, resource: &str, old: &LockValue, ttl: Duration) -> Result<HandOff, Error> {
        let key = self.lock_key(resource);
        let new = LockValue::random();
        let t0 = Instant::now();
        let calls = self.nodes.iter().map(|node| {
            let (key, new) = (&key, &new);
            async move {
                let usable = matches!(node.standing(), Standing::Usable);
                let answer = if usable {
                    node.hand_off(key, old.expose(), new.expose(), ttl).await
                } else {
                    node.unlock(key, old.expose(), Announce::No).await.map(|was_held| Swap {
                        was_held,
                        counter: None,
                        waited: false,
                    })
                };
                match answer {
                    Ok(
                        swap @ Swap {
                            counter: Some(counter), ..
                        },
                    ) => (Some(swap), NodeVote::Granted(counter)),
                    Ok(swap) if usable => (Some(swap), NodeVote::Taken),
                    Ok(swap) => (Some(swap), NodeVote::Unusable("not verified".into())),
                    Err(e) => (None, NodeVote::Errored(e.0)),
                }
            }
        });
        // Decided once a quorum swapped the old lock for the new one (the
        // rest are covered by release-to-all, as in round 1); otherwise
        // every answer is awaited.
        let quorum = self.quorum();
        let swapped = |answers: &[Option<(Option<Swap>, NodeVote)>]| {
            let swapped = answers
                .iter()
                .filter(|a| matches!(a, Some((Some(Swap { was_held: true, .. }), NodeVote::Granted(_)))))
                .count();
            swapped >= quorum
        };
        let (answers, timed_out) = gather(calls, swapped, self.config.node_timeout).await;
        let (swaps, votes): (Vec<Option<Swap>>, Vec<NodeVote>) = answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| (None, NodeVote::unanswered(timed_out))))
            .unzip();
        let held: Vec<Option<bool>> = swaps.iter().map(|s| s.map(|s| s.was_held)).collect();
        // Any master that saw the mark: a waiter elsewhere was refused. Only
        // the answers awaited count; a refusal marks every master holding
        // the lock, so a quorum's answers see it.
        let waited = swaps.iter().flatten().any(|s| s.waited);
        match self.granted(&key, &new, ttl, t0, votes).await {
            Ok((fencing_token, validity)) => Ok(HandOff {
                old_held: self.tally(&held).is_ok_and(|n| n >= self.quorum()),
                waited,
                lease: Some(Lease {
                    resource: resource.to_owned(),
                    value: new,
                    fencing_token,
                    validity,
                }),
            }),
            Err(_) => {
                // Cleaned up as a failed attempt, then released as usual.
                self.unlock_all(&key, &new, Announce::No).await;
                // Our own waiter is next: announce even unmarked.
                let released = self.unlock_all(&key, old, Announce::Always).await;
                let was_held: Vec<Option<bool>> = held
                    .iter()
                    .zip(&released)
                    .map(|(swap, unlock)| match (swap, unlock) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        _ => None,
                    })
                    .collect();
                Ok(HandOff {
                    old_held: self.tally(&was_held)? >= self.quorum(),
                    lease: None,
                    waited,
                })
            }
        }
    }

    /// Extends `resource`'s lock held by `value` to `ttl` on every node.
    /// Returns the validity when a quorum still held it (measured from
    /// before its batch was sent), `None` when the lock was lost.
    ///
    /// Extensions due at the same time share one script call per node
    /// (`Node::extend`): with 10,000 `Hold` sessions renewing, each master
    /// runs a few scripts per batch, not one per lock, and the daemon sends
    /// a few commands (issue #7, (d)). The batch runs in a task of its own,
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
            ttl,
            queued_at: Instant::now(),
            answer,
        });
        if let Some(slot) = self.extensions.free_slot() {
            tokio::spawn(Arc::clone(self).extend_batches(slot));
        }
        let extended = answered
            .await
            .unwrap_or_else(|_| Err(self.unavailable(0, "the extension batch ended without an answer".into())))?;
        Ok(match extended {
            // Counted now, when the caller reads it: validity runs from
            // before the commands left until this very moment.
            Extended::Yes { ttl, sent } => quorum::validity(ttl, sent.elapsed(), self.config.drift_factor)
                .filter(|v| *v >= self.config.min_validity),
            Extended::Lost => None,
        })
    }

    /// `Unavailable` after `reached` nodes answered, without per-node votes.
    fn unavailable(&self, reached: usize, detail: String) -> Error {
        Error::Unavailable {
            reached,
            needed: self.quorum(),
            detail,
            votes: Vec::new(),
        }
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
                let _ = queued.answer.send(Err(self.unavailable(
                    0,
                    "the extension waited longer than node_timeout to be sent (the daemon is overloaded)".into(),
                )));
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
        let quorum = self.quorum();
        let spare = self.nodes.len() - quorum;
        let decided = |answers: &[Option<Option<Vec<bool>>>]| {
            (0..locks.len()).all(|i| {
                let said = |flag: bool| answers.iter().flatten().flatten().filter(|a| a[i] == flag).count();
                said(true) >= quorum || said(false) > spare
            })
        };
        let (answers, _) = gather(calls, decided, self.config.node_timeout).await;
        let outcomes: Vec<Result<Extended, Error>> = locks
            .iter()
            .enumerate()
            .map(|(i, lock)| {
                let per_node: Vec<Option<bool>> = answers
                    .iter()
                    .map(|answer| answer.as_ref().and_then(Option::as_ref).map(|a| a[i]))
                    .collect();
                self.tally(&per_node).map(|held| {
                    if held >= quorum {
                        Extended::Yes { ttl: lock.ttl, sent }
                    } else {
                        Extended::Lost
                    }
                })
            })
            .collect();
        drop(locks);
        for (queued, outcome) in batch.into_iter().zip(outcomes) {
            let _ = queued.answer.send(outcome);
        }
    }

    /// Deletes the lock on every node (DESIGN §3). Returns whether a majority
    /// still held `value` when it was deleted: whether the critical section
    /// stayed protected to the end.
    ///
    /// The answer comes as soon as it is known: when a quorum said "held and
    /// deleted", when a quorum answered and so many said "not held" or
    /// failed that no quorum can say "held", or when so many failed that no
    /// quorum can answer; as an acquisition decides at the third vote
    /// (issue #7). The deletes on the other nodes are not abandoned: a
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
        let quorum = self.quorum();
        let calls = self
            .nodes
            .iter()
            .map(|node| async { node.unlock(&key, value.expose(), announce).await.ok() });
        let (answers, _) = gather(
            calls,
            |answers| {
                let said = |yes| answers.iter().filter(|a| **a == Some(Some(yes))).count();
                let (held, not_held) = (said(true), said(false));
                let pending = answers.iter().filter(|a| a.is_none()).count();
                // A quorum deleted it; or a quorum answered and "held" can
                // no longer reach one (the rest said "not held" or failed);
                // or failures leave too few to answer at all.
                held >= quorum
                    || (held + pending < quorum && held + not_held >= quorum)
                    || held + not_held + pending < quorum
            },
            self.config.node_timeout,
        )
        .await;
        let answers: Vec<Option<bool>> = answers.into_iter().map(Option::flatten).collect();
        Ok(self.tally(&answers)? >= quorum)
    }

    /// A quorum view of `resource`: per node what it holds, and how many
    /// agree on the most common value. Values never leave this function.
    pub async fn inspect(&self, resource: &str) -> Inspection {
        let key = self.lock_key(resource);
        let calls = self
            .nodes
            .iter()
            .map(|node| timeout(self.config.node_timeout, node.inspect(&key)));
        let views: Vec<Option<KeyView>> = join_all(calls)
            .await
            .into_iter()
            .map(|r| r.ok().and_then(Result::ok))
            .collect();
        let values: Vec<Option<&str>> = views
            .iter()
            .map(|v| v.as_ref().and_then(|v| v.value.as_deref()))
            .collect();
        let majority = values
            .iter()
            .flatten()
            .max_by_key(|value| values.iter().filter(|v| v == &&Some(**value)).count())
            .copied();
        let agreeing = majority.map_or(0, |m| values.iter().filter(|v| **v == Some(m)).count());
        let nodes = views
            .iter()
            .zip(&values)
            .zip(&self.nodes)
            .map(|((view, value), node)| NodeInspection {
                name: node.name().to_owned(),
                standing: node.standing(),
                reachable: view.is_some(),
                held: value.is_some(),
                with_majority: value.is_some() && *value == majority,
                ttl: view.as_ref().and_then(|v| v.ttl),
                fence: view.as_ref().and_then(|v| v.fence),
            })
            .collect();
        Inspection {
            held: agreeing >= self.quorum(),
            agreeing,
            quorum: self.quorum(),
            nodes,
        }
    }

    /// Counts the nodes that said yes; fails when too few answered at all.
    fn tally(&self, answers: &[Option<bool>]) -> Result<usize, Error> {
        let reached = answers.iter().flatten().count();
        if reached < self.quorum() {
            return Err(self.unavailable(reached, format!("{} gave no answer", answers.len() - reached)));
        }
        Ok(answers.iter().filter(|a| **a == Some(true)).count())
    }

    /// A uniform random delay in `[0, node_timeout / 10]` after a wake-up.
    fn wake_jitter(&self) -> Duration {
        let span = (self.config.node_timeout / 10).as_micros() as u64;
        Duration::from_micros(fastrand::u64(0..=span))
    }

    /// A uniform random delay in `[retry_delay_min, retry_delay_max]`, so
    /// contending clients do not retry in lock-step.
    fn retry_delay(&self) -> Duration {
        let (lo, hi) = (self.config.retry_delay_min, self.config.retry_delay_max);
        let span = hi.saturating_sub(lo).as_micros() as u64;
        lo + Duration::from_micros(fastrand::u64(0..=span))
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;

/// Runs `calls` at once and collects their answers in order until
/// `settled` says the outcome is known, all have answered, or `limit` has
/// passed; the answers not awaited are `None`, and the flag says whether
/// the limit had passed when the wait ended. Every call is polled from the start (so its
/// command is sent) before any answer is looked at.
///
/// One timer bounds every call of the round, started once all of them were
/// polled, so each still gets at least `limit`. A timer per call cost the
/// daemon a wake-up of its own runtime for each (tokio unparks its driver,
/// an `eventfd` write, whenever a timer is set earlier than the one it
/// sleeps for): ~9 system calls per (a) cycle, issue #7.
async fn gather<T, F: Future<Output = T>>(
    calls: impl IntoIterator<Item = F>,
    settled: impl Fn(&[Option<T>]) -> bool,
    limit: Duration,
) -> (Vec<Option<T>>, bool) {
    let mut calls: Vec<Pin<Box<F>>> = calls.into_iter().map(Box::pin).collect();
    let mut answers: Vec<Option<T>> = (0..calls.len()).map(|_| None).collect();
    let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    let timed_out = std::future::poll_fn(|cx| {
        for (call, answer) in calls.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none()
                && let Poll::Ready(value) = call.as_mut().poll(cx)
            {
                *answer = Some(value);
            }
        }
        if answers.iter().all(Option::is_some) || settled(&answers) {
            // Decided in the poll in which the limit passed: the calls it
            // leaves out timed out (as their metrics say), not "not awaited".
            let late = timer
                .as_ref()
                .is_some_and(|t| t.deadline() <= tokio::time::Instant::now());
            return Poll::Ready(late);
        }
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        timer.as_mut().poll(cx).map(|()| true)
    })
    .await;
    (answers, timed_out)
}

/// "3 granted, 1 timed out, 1 quarantined": what the nodes said, by kind.
pub fn summarize(votes: &[NodeVote]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for vote in votes {
        let kind = vote.kind();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    parts.join(", ")
}
