//! The daemon's lock operations above the engine: acquisitions wait in the
//! local FIFO queue (only the head contends in Redis, woken by published
//! releases), run in their own task so a caller that leaves never leaks a
//! lock, and sessions are counted so shutdown can release their locks.

pub mod error;
pub(crate) mod queue;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::futures::Notified;
use tokio::sync::{Notify, oneshot, watch};
use tokio::time::Instant;

use crate::locks::error::Error;
use crate::locks::queue::{Offer, Place, Waiters};
use crate::redlock::Head;
use crate::redlock::node::Announce;
use crate::redlock::{Acquired, Engine, FailureReason, HandOff, LockValue, Node};
use crate::telemetry::metrics::{Metrics, Status};

/// Locks over an engine, with local queues and session bookkeeping.
pub(crate) struct Locks<N> {
    /// The quorum engine.
    pub engine: Arc<Engine<N>>,
    /// The local FIFO queues.
    pub waiters: Arc<Waiters>,
    sessions: AtomicUsize,
    max_sessions: usize,
    closing: watch::Sender<bool>,
    /// Wakes the open sessions when `closing` turns true.
    shutdown: Notify,
    metrics: Arc<Metrics>,
    /// Locks granted through this daemon: value -> (granted, expires,
    /// hand-offs in a row that led to it), for hold times, the held-locks
    /// gauge and the hand-off bound. Expired entries are swept.
    held: Mutex<HashMap<String, Held>>,
}

/// A lock granted through this daemon.
#[derive(Debug, Clone, Copy)]
struct Held {
    granted: Instant,
    expires: Instant,
    /// How many hand-offs in a row led to it (0: a plain acquisition).
    streak: u32,
}

/// A counted open session; dropping it ends the count.
pub(crate) struct SessionGuard<N: Node> {
    locks: Arc<Locks<N>>,
}

impl<N: Node> Drop for SessionGuard<N> {
    fn drop(&mut self) {
        self.locks.sessions.fetch_sub(1, Ordering::SeqCst);
        // Wakes a shutdown waiting for the last session.
        self.locks.closing.send_modify(|_| {});
    }
}

impl<N: Node> Locks<N> {
    /// Locks over `engine`; at most `max_sessions` open sessions.
    pub(crate) fn new(
        engine: Arc<Engine<N>>,
        waiters: Arc<Waiters>,
        max_sessions: usize,
        metrics: Arc<Metrics>,
    ) -> Locks<N> {
        Locks {
            engine,
            waiters,
            sessions: AtomicUsize::new(0),
            max_sessions,
            closing: watch::channel(false).0,
            shutdown: Notify::new(),
            metrics,
            held: Mutex::new(HashMap::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers a grant (or an extension) until `expires`; `streak` is
    /// for a new lock (an existing one keeps its own).
    fn remember(&self, value: &LockValue, expires: Instant, streak: u32) {
        let now = Instant::now();
        let mut held = self.held();
        let entry = held.get(value.expose()).map_or(
            Held {
                granted: now,
                expires,
                streak,
            },
            |before| Held { expires, ..*before },
        );
        held.insert(value.expose().to_owned(), entry);
        // Sweep locks that expired unreleased, now and then.
        if held.len() > 1024 && held.len().is_power_of_two() {
            held.retain(|_, h| h.expires > now);
        }
        self.metrics.locks_held.set(held.len() as i64);
    }

    /// Forgets a lock; returns how long it was held and its hand-off
    /// streak, if it was ours.
    fn forget(&self, value: &LockValue) -> Option<(Duration, u32)> {
        let mut held = self.held();
        let entry = held.remove(value.expose()).map(|h| (h.granted.elapsed(), h.streak));
        self.metrics.locks_held.set(held.len() as i64);
        entry
    }

    /// Sets the gauges of live state (read at scrape time).
    pub(crate) fn refresh_gauges(&self) {
        self.metrics.waiters.set(self.waiters.waiting() as i64);
        self.metrics.sessions.set(self.sessions() as i64);
        let now = Instant::now();
        let mut held = self.held();
        held.retain(|_, h| h.expires > now);
        self.metrics.locks_held.set(held.len() as i64);
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
    ) -> Result<Option<Duration>, Error> {
        let started = Instant::now();
        let outcome = self.engine.extend(resource, value, ttl).await;
        let status = match &outcome {
            Ok(Some(validity)) => {
                self.remember(value, Instant::now() + *validity, 0);
                Status::Success
            }
            Ok(None) => {
                self.forget(value);
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
    pub(crate) async fn release(&self, resource: &str, value: &LockValue) -> Result<bool, Error> {
        let started = Instant::now();
        let forgotten = self.forget(value);
        let streak = forgotten.map_or(0, |(_, streak)| streak);
        let outcome = match self.waiters.take_offer(resource, streak) {
            // The next waiter here gets the lock in one round.
            Some(offer) => self.hand_off(resource, value, offer, streak + 1).await,
            // Local waiters must hear it even if none has tried yet.
            None if self.waiters.has_waiters(resource) => {
                let released = self
                    .engine
                    .release_announced(resource, value, Announce::Always)
                    .await
                    .map_err(Error::from);
                self.waiters.step_aside(resource, streak);
                released
            }
            None => self.engine.release(resource, value).await.map_err(Error::from),
        };
        let held_for = forgotten.map(|(held_for, _)| held_for);
        let status = match &outcome {
            Ok(true) => Status::Success,
            Ok(false) => Status::Fail,
            Err(_) => Status::Error,
        };
        self.metrics.released(status, started.elapsed(), held_for);
        outcome
    }

    /// Releases `value` by handing the lock to the waiter that made
    /// `offer`; returns whether `value` was held to the end.
    async fn hand_off(&self, resource: &str, value: &LockValue, offer: Offer, streak: u32) -> Result<bool, Error> {
        let handed = self.engine.hand_off(resource, value, offer.ttl).await;
        let outcome = match &handed {
            Ok(HandOff { lease: Some(_), .. }) => "handed",
            Ok(HandOff { lease: None, .. }) => "failed",
            Err(_) => "unavailable",
        };
        self.metrics.handoffs.with_label_values(&[outcome]).inc();
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
            self.remember(&lease.value, Instant::now() + lease.validity, streak);
            if let Err(lease) = offer.to.send(lease) {
                // The waiter left meanwhile: nobody wants the lock.
                self.forget(&lease.value);
                let _ = self.engine.release(resource, &lease.value).await;
            }
        }
        Ok(old_held)
    }

    /// Takes the lock on `resource`, waiting up to `wait` in the local queue
    /// and then in Redis. Stops when `give_up` resolves; a lock granted
    /// after the caller left is released at once.
    ///
    /// # Errors
    /// `ResourceExhausted` when the queue is full, `Unavailable` without a
    /// quorum, `Cancelled` when the caller gave up.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        resource: String,
        ttl: Duration,
        wait: Duration,
        give_up: impl Future<Output = ()> + Send + 'static,
    ) -> Result<Acquired, Error> {
        let started = Instant::now();
        let outcome = self.acquire_unrecorded(resource, ttl, wait, give_up).await;
        let (status, failure) = match &outcome {
            Ok(Acquired::Granted(lease)) => {
                self.remember(&lease.value, Instant::now() + lease.validity, 0);
                (Status::Success, None)
            }
            Ok(Acquired::NotGranted { reason, .. }) => (
                Status::Fail,
                Some(match reason {
                    FailureReason::Taken if wait.is_zero() => "taken",
                    FailureReason::Taken => "wait_timed_out",
                    FailureReason::ValidityUsedUp { .. } => "validity_used_up",
                }),
            ),
            Err(error) => (
                Status::Error,
                Some(match error {
                    Error::Unavailable { .. } => "no_quorum",
                    Error::Cancelled => "cancelled",
                    Error::ResourceExhausted(_) => "limit",
                    Error::DeadlineExceeded => "deadline",
                    _ => "other",
                }),
            ),
        };
        self.metrics.acquired(status, failure, started.elapsed());
        outcome
    }

    async fn acquire_unrecorded(
        self: &Arc<Self>,
        resource: String,
        ttl: Duration,
        wait: Duration,
        give_up: impl Future<Output = ()> + Send + 'static,
    ) -> Result<Acquired, Error> {
        let slot = if wait.is_zero() {
            None
        } else {
            Some(self.waiters.join(&resource)?)
        };
        let (mut tx, rx) = oneshot::channel();
        let locks = self.clone();
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
                    let (from, held) = slot.offer(ttl);
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
                    .acquire(&resource, ttl, left, stop, head)
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
                let _ = locks.release(&lease.resource, &lease.value).await;
            }
        });
        rx.await
            .map_err(|_| Error::Internal("the acquire task failed".into()))?
    }

    /// Counts a new session.
    ///
    /// # Errors
    /// `ResourceExhausted` at `max_sessions`; `Unavailable` while shutting down.
    pub(crate) fn open_session(self: &Arc<Self>) -> Result<SessionGuard<N>, Error> {
        // Counted before the check: a shutdown that starts in between sees
        // this session and waits for it.
        let open = self.sessions.fetch_add(1, Ordering::SeqCst);
        let guard = SessionGuard { locks: self.clone() };
        if *self.closing.borrow() {
            return Err(Error::ShuttingDown);
        }
        if open >= self.max_sessions {
            return Err(Error::ResourceExhausted(format!(
                "{open} sessions are already open in this daemon, the most lock.max_sessions allows"
            )));
        }
        Ok(guard)
    }

    /// Whether the daemon is shutting down (new acquisitions are refused).
    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// How many sessions are open.
    pub(crate) fn sessions(&self) -> usize {
        self.sessions.load(Ordering::SeqCst)
    }

    /// Resolves at a shutdown that starts after it was enabled (or first
    /// polled): a long wait checks `is_closing` after enabling it. Smaller
    /// than `closing` (an open session keeps one; docs/performance.md, workload (d)).
    pub(crate) fn shutdown_notified(&self) -> Notified<'_> {
        self.shutdown.notified()
    }

    /// Resolves when the daemon starts shutting down (sessions release then).
    pub(crate) fn closing(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.closing.subscribe();
        async move {
            let _ = rx.wait_for(|closing| *closing).await;
        }
    }

    /// Tells every session to release, and waits (at most `grace`) until
    /// they have.
    pub(crate) async fn close_sessions(&self, grace: Duration) {
        self.closing.send_replace(true);
        self.shutdown.notify_waiters();
        let mut rx = self.closing.subscribe();
        let all_closed = async {
            while self.sessions() > 0 {
                if rx.changed().await.is_err() {
                    return;
                }
            }
        };
        if tokio::time::timeout(grace, all_closed).await.is_err() {
            tracing::warn!(open = self.sessions(), "sessions still open after the grace period");
        }
    }
}
