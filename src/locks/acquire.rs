//! Acquisitions (docs/design.md#acquire): a wait in the local FIFO queue,
//! then the engine's rounds, in a task of their own so that a caller that
//! leaves never leaks a lock; quotas, audit, metrics and the call's span
//! around them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::Instrument;

use super::{Locks, failure_of, traced};
use crate::locks::error::Error;
use crate::locks::queue::Place;
use crate::locks::quota::Kind as Quota;
use crate::locks::who::{Who, audit};
use crate::redlock::{Acquired, FailureReason, Head, Kind, Lifetime, Node};
use crate::telemetry::labels::{Failure, LockKind, Status};

impl<N: Node> Locks<N> {
    /// Takes the lock on `resource` in `mode`, waiting up to `wait` in the
    /// local queue and then in Redis. Stops when `give_up` resolves; a lock
    /// granted after the caller left is released at once. Shared
    /// acquisitions queue in Redis only (docs/design.md#shared-locks): the
    /// local queue lets one contender at a time try, and readers go
    /// together. Under reentrancy key `key`, the lock held under it through
    /// this daemon is counted once more instead (docs/design.md#reentrancy).
    ///
    /// # Errors
    /// `LimitReached` when the queue is full, `QuotaExceeded` past a quota
    /// of `who`'s tenant, `Engine` without a quorum, `Cancelled` when the
    /// caller gave up, `HeldAsOtherKind` when `key` holds the lock as
    /// another kind.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        resource: String,
        (kind, lifetime): (Kind, Lifetime),
        wait: Duration,
        give_up: impl Future<Output = ()> + Send + 'static,
        (who, key): (&Who, Option<&str>),
    ) -> Result<Acquired, Error> {
        let Some(key) = key else {
            return (self.acquire_recorded(resource, (kind, lifetime), wait, give_up, who)).await;
        };
        let mut turn = self.reentries.turn(&resource, key).await;
        if let Some(lease) = turn.reenter(kind).map_err(|held| Error::HeldAsOtherKind {
            held: held.label(),
            asked: kind.label(),
        })? {
            self.metrics.reentered();
            return Ok(Acquired::Granted(lease));
        }
        let outcome = (self.acquire_recorded(resource, (kind, lifetime), wait, give_up, who)).await;
        if let Ok(Acquired::Granted(lease)) = &outcome {
            turn.hold(lease, kind);
        }
        outcome
    }

    /// `acquire` without a reentrancy key, with its quotas, audit, span and
    /// metrics.
    async fn acquire_recorded(
        self: &Arc<Self>,
        resource: String,
        (kind, lifetime): (Kind, Lifetime),
        wait: Duration,
        give_up: impl Future<Output = ()> + Send + 'static,
        who: &Who,
    ) -> Result<Acquired, Error> {
        let started = Instant::now();
        let traced_name = traced::name(&resource);
        let outcome = match self.check_quota(who) {
            Ok(()) => {
                let outcome = self
                    .acquire_unrecorded(resource, (kind, lifetime), wait, give_up, who)
                    .await;
                if let Ok(Acquired::Granted(lease)) = &outcome {
                    let unit = who.quota.as_ref().map(|q| q.count_one(Quota::LocksHeld));
                    self.held.granted(lease, &who.owner, 0, unit);
                    audit("grant", who, None, &lease.resource, Some(lease.fencing_token));
                    self.followed.touched(&lease.resource);
                }
                outcome
            }
            Err(e) => Err(e),
        };
        let (status, failure) = match &outcome {
            Ok(Acquired::Granted(_)) => (Status::Success, None),
            Ok(Acquired::NotGranted { reason, .. }) => (
                Status::Fail,
                Some(match reason {
                    FailureReason::Taken if wait.is_zero() => Failure::Taken,
                    FailureReason::Taken => Failure::WaitTimedOut,
                    FailureReason::ValidityUsedUp { .. } => Failure::ValidityUsedUp,
                }),
            ),
            Err(error) => (Status::Error, Some(failure_of(error))),
        };
        if let Some(name) = traced_name {
            let token = match &outcome {
                Ok(Acquired::Granted(lease)) => Some(lease.fencing_token),
                _ => None,
            };
            traced::record(&name, who, failure.map_or("granted", Failure::as_str), token);
        }
        self.metrics
            .acquired(lock_kind(kind), status, failure, started.elapsed());
        outcome
    }

    /// Counts an acquisition against `who`'s tenant's rate, and checks its
    /// `max_locks_held` (locks that expired unreleased are swept before a
    /// refusal); the unit is counted when the lock is granted.
    pub(super) fn check_quota(&self, who: &Who) -> Result<(), Error> {
        let Some(quota) = &who.quota else {
            return Ok(());
        };
        quota.acquisition()?;
        if quota.check(Quota::LocksHeld).is_err() {
            self.held.sweep();
            quota.check(Quota::LocksHeld)?;
        }
        Ok(())
    }

    async fn acquire_unrecorded(
        self: &Arc<Self>,
        resource: String,
        (kind, lifetime): (Kind, Lifetime),
        wait: Duration,
        give_up: impl Future<Output = ()> + Send + 'static,
        who: &Who,
    ) -> Result<Acquired, Error> {
        let holder = self.engine.holder_tag(&who.tenant, &who.owner);
        let slot = if wait.is_zero() || kind != Kind::Exclusive {
            None
        } else {
            Some(self.waiters.join(&resource, who)?)
        };
        let (mut tx, rx) = oneshot::channel();
        let locks = self.clone();
        let who = who.clone();
        tokio::spawn(async move {
            let deadline = Instant::now() + wait;
            let mut give_up = std::pin::pin!(give_up);
            let mut offer = None;
            let outcome = async {
                let mut held_here = false;
                if let Some(slot) = &slot {
                    tokio::select! {
                        () = slot.until_head() => {}
                        // Others were ahead for the whole wait.
                        () = tokio::time::sleep_until(deadline) => return Ok(Acquired::NotGranted {
                            reason: FailureReason::Taken,
                            attempts: 0,
                            votes: Vec::new(),
                        }),
                        () = tx.closed() => return Err(Error::Cancelled),
                        () = &mut give_up => return Err(Error::Cancelled),
                    }
                    let (from, held) = slot.offer(lifetime, holder.clone());
                    offer = Some(from);
                    held_here = held;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                let stop = async {
                    tokio::select! {
                        () = tx.closed() => {}
                        () = &mut give_up => {}
                    }
                };
                // As head, a release in this daemon may hand the lock over.
                let yielding = || slot.as_ref().and_then(Place::yielding);
                let head = match (&slot, offer.as_mut()) {
                    (Some(slot), Some(offer)) => Some(Head {
                        wake: slot.released(),
                        handed: async {
                            match offer.await {
                                Ok(lease) => lease,
                                Err(_) => std::future::pending().await,
                            }
                        },
                        held_here,
                        yielding: &yielding,
                    }),
                    _ => None,
                };
                locks
                    .engine
                    .acquire(&resource, (kind, lifetime), left, stop, head, &holder)
                    .await
                    .map_err(Error::from)
            }
            .await;
            // A lock handed over just as the wait ended is nobody's.
            if let Some(Ok(lease)) = offer.as_mut().map(oneshot::Receiver::try_recv) {
                let _ = locks.engine.release(&lease.resource, &lease.value).await;
            }
            // Leave the queue before answering: the next one starts now
            // (and knows whether the lock is held here).
            match (slot, &outcome) {
                (Some(slot), Ok(Acquired::Granted(_))) => slot.leave_holding(),
                (slot, _) => drop(slot),
            }
            if let Err(Ok(Acquired::Granted(lease))) = tx.send(outcome) {
                tracing::info!(resource = %lease.resource, "the caller left before its lock was granted; releasing it");
                let _ = locks.release(&lease.resource, &lease.value, &who).await;
            }
        }
        .instrument(traced::current()));
        rx.await
            .map_err(|_| Error::Internal("the acquire task failed".into()))?
    }
}

/// A kind of lock as the metrics label it.
fn lock_kind(kind: Kind) -> LockKind {
    match kind {
        Kind::Exclusive => LockKind::Exclusive,
        Kind::Shared => LockKind::Shared,
        Kind::Permits(_) => LockKind::Permit,
    }
}
