//! The daemon's lock operations above the engine (docs/design.md#layers).
//! Acquisitions (`acquire`, docs/design.md#acquire) of exclusive and shared
//! locks and of permits wait in the local FIFO queue (`queue`: only the
//! head contends in Redis, woken by published releases,
//! docs/design.md#waiting) and run in their own task so a caller that
//! leaves never leaks a lock. A reentrancy key takes a lock held here again
//! (`reentry`, docs/design.md#reentrancy); `set` takes several resources at
//! once (docs/design.md#sets); the locks granted here are kept by value
//! (`held`).
//!
//! - Sessions: the session machine behind `Hold`, free of any transport
//!   (`session`, its inputs and events in `session_io`,
//!   docs/design.md#sessions), counted so that shutdown and force release
//!   can reach them (`sessions`).
//! - Elections: a campaign is a session whose lock makes a leader
//!   (`campaign`, docs/design.md#elections).
//! - Watch and observe: following a lock (`watcher`) or an election
//!   (`follow`), one read per name at a time (`shared_reads`,
//!   docs/design.md#observe-and-watch).
//! - Per tenant: quotas (`quota`, docs/operations.md#quotas) and the audit
//!   trail (`who`, docs/operations.md#audit); per call, its span (`traced`).
//!
//! What a request can fail with is `error`.

mod acquire;
mod campaign;
pub mod error;
pub(crate) mod follow;
mod held;
mod reentry;
pub(crate) mod session;
mod session_io;
mod sessions;
mod set;
mod shared_reads;
mod traced;
pub(crate) mod watcher;
pub(crate) use sessions::SessionGuard;
pub(crate) mod queue;
pub(crate) mod quota;
pub(crate) mod who;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::{Notify, broadcast, watch};
use tokio::time::Instant;

use crate::locks::error::Error;
use crate::locks::held::HeldLocks;
use crate::locks::queue::{Offer, Waiters};
use crate::locks::who::{Who, audit};
use crate::redlock;
use crate::redlock::node::Announce;
use crate::redlock::{Engine, HandOff, Inspection, Listed, LockValue, Mode, Node, Page, PageEnd, slot_name};
use crate::telemetry::labels::Status;
use crate::telemetry::labels::{Failure, HandOff as HandOffOutcome};
use crate::telemetry::metrics::Metrics;

/// The lock name a value holds under `resource`'s: a permit's slot
/// (docs/design.md#semaphores), else the resource's own.
fn lock_name<'a>(resource: &'a str, value: &LockValue) -> std::borrow::Cow<'a, str> {
    match value.permit() {
        Some(permit) => slot_name(resource, permit.slot).into(),
        None => resource.into(),
    }
}

/// Why an acquisition failed with `error`, as `redlock_acquire_failures_total`
/// says it.
fn failure_of(error: &Error) -> Failure {
    match error {
        Error::Engine(redlock::Error::Unavailable { .. }) => Failure::NoQuorum,
        Error::Engine(redlock::Error::PermitsDiffer { .. }) => Failure::PermitsDiffer,
        Error::HeldAsOtherKind { .. } => Failure::HeldAsOtherKind,
        Error::Cancelled | Error::Engine(redlock::Error::Cancelled) => Failure::Cancelled,
        Error::LimitReached { .. } | Error::QuotaExceeded { .. } => Failure::Limit,
        Error::DeadlineExceeded => Failure::Deadline,
        Error::InvalidArgument { .. } | Error::ShuttingDown | Error::NotLeading { .. } | Error::Internal(_) => {
            Failure::Other
        }
    }
}

/// Locks over an engine, with local queues and session bookkeeping.
pub(crate) struct Locks<N> {
    /// The quorum engine.
    engine: Arc<Engine<N>>,
    /// The local FIFO queues.
    waiters: Arc<Waiters>,
    sessions: AtomicUsize,
    max_sessions: usize,
    closing: watch::Sender<bool>,
    /// Wakes the open sessions when `closing` turns true.
    shutdown: Notify,
    metrics: Arc<Metrics>,
    /// Locks granted through this daemon.
    held: HeldLocks,
    /// Locks held under reentrancy keys (docs/design.md#reentrancy).
    reentries: reentry::Reentries,
    /// The lock names taken away by `force_release` or a `Resign`, for
    /// the sessions holding them here.
    revoked: broadcast::Sender<(String, sessions::Revoked)>,
    /// Elections and locks followed here (docs/design.md#elections).
    followed: Arc<follow::Followed>,
}

impl<N: Node> Locks<N> {
    /// Locks over `engine`; at most `max_sessions` open sessions.
    pub(crate) fn new(
        engine: Arc<Engine<N>>,
        waiters: Arc<Waiters>,
        max_sessions: usize,
        metrics: Arc<Metrics>,
        followed: Arc<follow::Followed>,
    ) -> Locks<N> {
        Locks {
            engine,
            waiters,
            sessions: AtomicUsize::new(0),
            max_sessions,
            closing: watch::channel(false).0,
            shutdown: Notify::new(),
            held: HeldLocks::new(metrics.clone()),
            reentries: reentry::Reentries::default(),
            metrics,
            revoked: broadcast::channel(64).0,
            followed,
        }
    }

    /// The longest a master is waited for in one round.
    pub(crate) fn node_timeout(&self) -> Duration {
        self.engine.node_timeout()
    }

    /// What every master says of the lock `name`, and the owners waiting
    /// for it in this daemon's queue, in order.
    pub(crate) async fn inspect(&self, name: &str) -> (Inspection, Vec<String>) {
        let view = self.engine.inspect(name).await;
        (view, self.waiters.owners(name))
    }

    /// How many masters (positions) there are.
    pub(crate) fn masters(&self) -> usize {
        self.engine.nodes().len()
    }

    /// One page of the locks whose names start with `start`
    /// (docs/design.md#listing-and-force-release).
    ///
    /// # Errors
    /// `Unavailable` when a master could not be read.
    pub(crate) async fn list(&self, start: &str, page: Page, limit: usize) -> Result<(Vec<Listed>, PageEnd), Error> {
        Ok(self.engine.list(start, page, limit).await?)
    }

    /// Sets the gauges of live state (read at scrape time).
    pub(crate) fn refresh_gauges(&self) {
        (self.metrics).open(self.waiters.waiting(), self.sessions(), self.followed.open());
        self.held.sweep();
    }

    /// Extends a held lock (docs/design.md#extend), recording the outcome.
    ///
    /// # Errors
    /// `Unavailable` without a quorum.
    pub(crate) async fn extend(
        &self,
        resource: &str,
        value: &LockValue,
        ttl: Duration,
        who: &Who,
    ) -> Result<Option<Duration>, Error> {
        let started = Instant::now();
        let outcome = self.engine.extend(&lock_name(resource, value), value, ttl).await;
        let said = match &outcome {
            Ok(Some(_)) => "extended",
            Ok(None) => "lost",
            Err(_) => "no_quorum",
        };
        traced::record(resource, who, said, None);
        let status = match &outcome {
            Ok(Some(validity)) => {
                self.held.extended(value, Instant::now() + *validity);
                self.reentries
                    .extended(value.expose(), Instant::now() + *validity)
                    .await;
                Status::Success
            }
            Ok(None) => {
                // Lost: no reentrant acquisition may get it.
                self.reentries.extended(value.expose(), Instant::now()).await;
                let gone = self.held.forget(value);
                audit(
                    "extension_failed",
                    who,
                    gone.as_ref().map(|g| g.owner.as_str()),
                    resource,
                    gone.as_ref().map(|g| g.token),
                );
                Status::Fail
            }
            Err(_) => Status::Error,
        };
        self.metrics.extended(status, started.elapsed());
        Ok(outcome?)
    }

    /// Releases a lock (docs/design.md#release), recording the outcome and hold time.
    ///
    /// # Errors
    /// `Unavailable` without a quorum (the deletes still went to all).
    pub(crate) async fn release(&self, resource: &str, value: &LockValue, who: &Who) -> Result<bool, Error> {
        let started = Instant::now();
        // Held under a reentrancy key more than once: one hold fewer, the
        // lock stays (docs/design.md#reentrancy).
        if let reentry::Left::Counted(_) = self.reentries.leave(value.expose()).await {
            self.metrics.released(Status::Success, started.elapsed(), None);
            return Ok(true);
        }
        let forgotten = self.held.forget(value);
        let streak = forgotten.as_ref().map_or(0, |gone| gone.streak);
        // A shared holder hands nothing over: others may hold the lock
        // still (docs/design.md#shared-locks); nor does a permit (permits
        // do not queue here).
        let offer = match (value.mode(), value.permit()) {
            (Mode::Exclusive, None) => self.waiters.take_offer(resource, streak),
            _ => None,
        };
        let name = lock_name(resource, value);
        let outcome = match offer {
            // The next waiter here gets the lock in one round.
            Some(offer) => self.hand_off(resource, value, offer, streak + 1).await,
            // Local waiters must hear it even if none has tried yet.
            None if self.waiters.has_waiters(resource) => {
                let released = self
                    .engine
                    .release_announced(&name, value, Announce::Always)
                    .await
                    .map_err(Error::from);
                self.waiters.step_aside(resource, streak);
                released
            }
            None => self.engine.release(&name, value).await.map_err(Error::from),
        };
        let held_for = forgotten.as_ref().map(|gone| gone.held_for);
        self.followed.touched(resource);
        if outcome.is_ok() {
            let owner = forgotten.as_ref().map(|g| g.owner.as_str());
            audit("release", who, owner, resource, forgotten.as_ref().map(|g| g.token));
        }
        let status = match &outcome {
            Ok(true) => Status::Success,
            Ok(false) => Status::Fail,
            Err(_) => Status::Error,
        };
        let said = match &outcome {
            Ok(true) => "released",
            Ok(false) => "not_held",
            Err(error) => failure_of(error).as_str(),
        };
        traced::record(resource, who, said, forgotten.as_ref().map(|g| g.token));
        self.metrics.released(status, started.elapsed(), held_for);
        outcome
    }

    /// Releases `value` by handing the lock to the waiter that made
    /// `offer`; returns whether `value` was held to the end.
    async fn hand_off(&self, resource: &str, value: &LockValue, offer: Offer, streak: u32) -> Result<bool, Error> {
        let handed = self
            .engine
            .hand_off(resource, value, offer.lifetime, &offer.holder)
            .await;
        self.metrics.handed_off(match &handed {
            Ok(HandOff { lease: Some(_), .. }) => HandOffOutcome::Handed,
            Ok(HandOff { lease: None, .. }) => HandOffOutcome::Failed,
            Err(_) => HandOffOutcome::Unavailable,
        });
        let HandOff {
            old_held,
            lease,
            waited,
        } = handed?;
        if let Some(lease) = lease {
            // Hand-offs count towards a published release only while a
            // waiter elsewhere was refused (the lock's waiting mark); with
            // nobody else waiting, the queue here keeps the lock.
            let streak = if waited { streak } else { 0 };
            self.held.granted(&lease, "", streak, None);
            if let Err(lease) = offer.to.send(lease) {
                // The waiter left meanwhile: nobody wants the lock.
                self.held.forget(&lease.value);
                let _ = self.engine.release(resource, &lease.value).await;
            }
        }
        Ok(old_held)
    }
}
