//! The session machine (docs/design.md#sessions), free of any transport:
//! acquire, then extend at about a third of the TTL while the client is
//! there; LOST the moment an extension is refused or the validity is about
//! to run out; release at once when the client asks, half-closes or leaves,
//! when `max_hold` is used up, when an operator takes the lock away, and
//! when the daemon shuts down. A campaign (docs/design.md#elections) is the
//! same machine with a value: it waits until elected, records its term and
//! value beside the lock, and may proclaim a new value.
//!
//! A transport (gRPC's `Hold` stream in `api/hold.rs`, `Campaign` in
//! `api/campaign.rs`) reads the client's start itself, then hands the
//! session a `Plan`, its `Inputs` and its `Events` (`session_io.rs`). Time
//! is Tokio's clock only, so the machine's tests run with the clock paused
//! (`session_tests.rs`, `campaign_tests.rs`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

use crate::locks::Locks;
use crate::locks::error::Error;
pub(crate) use crate::locks::session_io::*;
use crate::locks::sessions::Revoked;
use crate::locks::who::Who;
use crate::redlock::{Acquired, Lease, LockValue, Node};

/// The lock a session holds.
pub(super) struct Holding {
    pub(super) terms: Terms,
    pub(super) lease: Lease,
    /// When its validity runs out as this daemon counts it: from the end of
    /// the rounds that granted or last extended it. What the session awaits
    /// after them (a leader's record) comes off the validity it tells
    /// (docs/design.md#sessions).
    pub(super) valid_until: Instant,
    /// Who holds it (for audit events).
    pub(super) who: Box<Who>,
}

/// What a session keeps of its `Plan` once granted: the rest (the lock
/// name, which the lease keeps; the kind, the wait and the reentrancy key,
/// which only the acquisition needs) is dropped at the grant, so that an
/// open session keeps nothing twice (docs/performance.md, workload (d)).
pub(super) struct Terms {
    /// The resource as the client named it (events carry it back).
    pub(super) resource: String,
    pub(super) ttl: Duration,
    /// When `max_hold` is used up: counted from the grant, which is when
    /// the hold begins.
    pub(super) max_hold_end: Instant,
    pub(super) lock_delay: Duration,
    pub(super) campaign: Option<Box<Candidacy>>,
}

impl Holding {
    /// The lock `lease`, granted as `plan` asked at `granted` (when its
    /// rounds ended: its validity counts from then), held for `who`.
    pub(super) fn new(plan: Plan, lease: Lease, granted: Instant, who: Box<Who>) -> Holding {
        let Plan {
            resource,
            ttl,
            max_hold,
            lock_delay,
            campaign,
            ..
        } = plan;
        let terms = Terms {
            resource,
            ttl,
            max_hold_end: Instant::now() + max_hold,
            lock_delay,
            campaign,
        };
        let valid_until = granted + lease.validity;
        Holding {
            terms,
            lease,
            valid_until,
            who,
        }
    }
}

impl Holding {
    /// What a leader published, told with its `ACQUIRED` (`ELECTED`); a
    /// lock's session publishes nothing.
    fn published(&self) -> Option<&[u8]> {
        self.terms.campaign.as_deref().map(|c| c.value.as_slice())
    }
}

/// How the hold loop ended: the closing event to send (none when the
/// client is gone).
#[derive(Debug, Clone, Copy)]
enum Ending {
    Lost(Lost),
    Released(Released),
    Silent,
}

/// What woke the hold loop.
enum Step {
    End(Ending),
    /// A deadline (or revocations missed): look at the time.
    Timer,
    Proclaim(Vec<u8>),
    /// Nothing for this session.
    Again,
}

impl Ending {
    /// Whether the lock ends without a release the client asked for: then
    /// a lock delay keeps it (docs/design.md#lock-delay).
    fn unasked(self) -> bool {
        matches!(self, Ending::Lost(_) | Ending::Silent)
    }
}

impl<N: Node> Locks<N> {
    /// Runs one session until it ends, owning its inputs and events.
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn's future keeps its arguments twice; this one is kept per open session"
    )]
    pub(crate) fn run_session<I: Inputs, E: Events>(
        self: Arc<Self>,
        plan: Box<Plan>,
        who: Who,
        mut inputs: I,
        events: E,
    ) -> impl Future<Output = ()> + Send + 'static {
        let who = Box::new(who);
        async move { self.session(plan, who, &mut inputs, &events).await }
    }

    /// Runs one session until it ends, on inputs and events its caller's
    /// task keeps: a transport that read `start` from its stream keeps the
    /// stream once, not once more in this future.
    ///
    /// An open session is one task, and most of its life is spent in
    /// `hold`: the opening (acquiring) and the closing (releasing) are
    /// boxed, so the task keeps room only for the hold loop, and an idle
    /// session stays small (docs/performance.md, workload (d)). The size
    /// is pinned by a test (`api/hold.rs`).
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn's future keeps its arguments twice; this one is kept per open session"
    )]
    pub(crate) fn session<'a, I: Inputs, E: Events>(
        self: &'a Arc<Self>,
        plan: Box<Plan>,
        who: Box<Who>,
        inputs: &'a mut I,
        events: &'a E,
    ) -> impl Future<Output = ()> + Send + 'a {
        async move {
            // Bound straight from the boxed opening: a local in between
            // would be kept beside `held` for the session's life.
            let Some(mut held) = Box::pin(self.open(plan, who, inputs, events)).await else {
                return;
            };
            let ending = self.hold(&mut held, inputs, events).await;
            Box::pin(self.close(&held, ending, events)).await;
        }
    }

    /// Acquires the planned lock, or campaigns until elected.
    async fn open<I: Inputs, E: Events>(
        self: &Arc<Self>,
        plan: Box<Plan>,
        who: Box<Who>,
        inputs: &mut I,
        events: &E,
    ) -> Option<Holding> {
        if plan.campaign.is_some() {
            self.campaign_until_elected(plan, *who, inputs, events).await
        } else {
            self.acquire_for_session(plan, who, events).await
        }
    }

    /// The TTL a session needs at least (`MIN_TTL_IN_NODE_TIMEOUTS` rounds).
    pub(crate) fn min_session_ttl(&self) -> Duration {
        self.node_timeout() * MIN_TTL_IN_NODE_TIMEOUTS
    }

    /// Acquires the planned lock; `None` when the session ended (and the
    /// client was told why, if it is still there).
    async fn acquire_for_session<E: Events>(
        self: &Arc<Self>,
        plan: Box<Plan>,
        who: Box<Who>,
        transport: &E,
    ) -> Option<Holding> {
        let asked = self.acquire_planned(&plan, &who, plan.wait, transport).await;
        let failed = |error| {
            let _ = transport.tell(&plan.resource, Event::Failed(error), Delivery::Always);
        };
        match asked {
            Ok(Acquired::Granted(lease)) => Some(Holding::new(*plan, lease, Instant::now(), who)),
            Ok(Acquired::NotGranted { reason, votes, .. }) => {
                let told = Event::NotAcquired { reason, votes: &votes };
                let _ = transport.tell(&plan.resource, told, Delivery::Always);
                None
            }
            Err(Error::Cancelled) if !transport.is_closed() => {
                failed(Error::ShuttingDown);
                None
            }
            Err(error) => {
                failed(error);
                None
            }
        }
    }

    /// One acquisition of the planned lock, waiting up to `wait`; it gives
    /// up when the client leaves or the daemon shuts down.
    pub(super) async fn acquire_planned<E: Events>(
        self: &Arc<Self>,
        plan: &Plan,
        who: &Who,
        wait: Duration,
        transport: &E,
    ) -> Result<Acquired, Error> {
        let give_up = {
            let (gone, closing) = (transport.closed_owned(), self.closing());
            async move {
                tokio::select! {
                    () = gone => {}
                    () = closing => {}
                }
            }
        };
        let key = plan.reentrancy_key.as_deref();
        (self.acquire(
            plan.name.clone(),
            (plan.kind, plan.ttl.into()),
            wait,
            give_up,
            (who, key),
        ))
        .await
    }

    /// Tells the client how its session ends, and releases the lock (or,
    /// with a lock delay and no release asked for, lets it expire then).
    async fn close<E: Events>(&self, held: &Holding, ending: Ending, transport: &E) {
        let Holding { terms, lease, who, .. } = held;
        if let Ending::Lost(lost) = ending {
            // LOST first: the client must stop now, not after our cleanup.
            let _ = transport.tell(&terms.resource, Event::Lost(lost), Delivery::Last);
        }
        self.candidacy_closing(held, ending.unasked(), matches!(ending, Ending::Lost(_)));
        if ending.unasked() && !terms.lock_delay.is_zero() {
            self.delay_release(&lease.resource, &lease.value, terms.lock_delay, who)
                .await;
            self.election_changed(&lease.resource);
            tracing::debug!(resource = %terms.resource, "session ended; the lock is kept for its lock delay");
            return;
        }
        let held_to_end = self.release(&lease.resource, &lease.value, who).await.unwrap_or(false);
        self.candidacy_closed(held);
        if let Ending::Released(why) = ending {
            let told = Event::Released { held_to_end, why };
            let _ = transport.tell(&terms.resource, told, Delivery::Last);
        }
        tracing::debug!(resource = %terms.resource, held_to_end, "session ended");
    }

    /// Keeps the lock until the session ends; returns how it ended. The
    /// caller releases.
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn's future keeps its arguments twice; this one is kept per open session"
    )]
    fn hold<'a, I: Inputs, E: Events>(
        &'a self,
        held: &'a mut Holding,
        inputs: &'a mut I,
        transport: &'a E,
    ) -> impl Future<Output = Ending> + Send + 'a {
        async move {
            // `held`'s fields are named in place, not bound: every local here is
            // kept for the session's life (docs/performance.md, workload (d)).
            // What is left of the validity now: a leader's record was written
            // since the rounds ended (docs/design.md#elections).
            let acquired = Event::Acquired {
                lease: &held.lease,
                validity: left(held.valid_until),
                published: held.published(),
            };
            if transport
                .tell(&held.terms.resource, acquired, Delivery::Always)
                .is_err()
            {
                return Ending::Silent;
            }
            let mut next_extend = next_extension(held.valid_until, held.terms.ttl, self.node_timeout());
            // Woken by a shutdown that starts from now on; one already started is
            // seen by `is_closing`.
            let closing = self.shutdown_notified();
            tokio::pin!(closing);
            closing.as_mut().enable();
            if self.is_closing() {
                return Ending::Released(Released::ShuttingDown);
            }
            // One timer for the three deadlines (LOST, max_hold, next extension):
            // an idle session is mostly this loop's state, kept small.
            let timer = sleep_until(next_extend);
            tokio::pin!(timer);
            let mut revoked = self.revocations();
            loop {
                timer.as_mut().reset(
                    lost_at(held.valid_until, self.node_timeout())
                        .min(held.terms.max_hold_end)
                        .min(next_extend),
                );
                // Only small values leave the `select!`, and nothing of this
                // block is kept across the extension's await: the step and
                // `now` end with it (bound in the loop's body, they would be
                // kept across every await below).
                {
                    let step = tokio::select! {
                        biased;
                        () = &mut closing => Step::End(Ending::Released(Released::ShuttingDown)),
                        () = transport.closed() => Step::End(Ending::Silent),
                        () = &mut timer => Step::Timer,
                        name = revoked.recv() => match name {
                            Ok((name, why)) if name == held.lease.resource => match why {
                                Revoked::ForceReleased => Step::End(Ending::Lost(Lost::TakenAway)),
                                Revoked::Resigned(term) if term == held.lease.fencing_token => {
                                    Step::End(Ending::Released(Released::Resigned))
                                }
                                Revoked::Resigned(_) => Step::Again,
                            },
                            // Missed some: an extension now finds out.
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Step::Timer,
                            Ok(_) | Err(_) => Step::Again,
                        },
                        input = inputs.next() => match input {
                            Input::Command(Command::Release) | Input::Finished => Step::End(Ending::Released(Released::ByClient)),
                            Input::Command(Command::Proclaim(value)) => Step::Proclaim(value),
                            Input::Refused(why) => Step::End(Ending::Released(Released::Refused(why))),
                            Input::Gone => Step::End(Ending::Silent),
                        },
                    };
                    match step {
                        Step::End(ending) => return ending,
                        Step::Again => continue,
                        Step::Proclaim(value) => {
                            if let Err(lost) = Box::pin(self.proclaim_held(held, value, transport)).await {
                                return Ending::Lost(lost);
                            }
                            continue;
                        }
                        Step::Timer => {}
                    }
                    let now = Instant::now();
                    if now >= lost_at(held.valid_until, self.node_timeout()) {
                        return Ending::Lost(Lost::NotExtendedInTime);
                    }
                    if now >= held.terms.max_hold_end {
                        return Ending::Released(Released::MaxHoldUsedUp);
                    }
                }
                // Matched at once: the outcome (its error is large) is not kept
                // across the record's await below.
                let extended =
                    Box::pin(self.extend(&held.lease.resource, &held.lease.value, held.terms.ttl, &held.who));
                let validity = match extended.await {
                    Ok(Some(validity)) => validity,
                    Ok(None) => return Ending::Lost(Lost::ExpiredOrTakenOver),
                    // No quorum now: try again soon; the LOST timer bounds it.
                    Err(_) => {
                        next_extend = Instant::now() + self.node_timeout() * 2;
                        continue;
                    }
                };
                held.valid_until = Instant::now() + validity;
                next_extend = next_extension(held.valid_until, held.terms.ttl, self.node_timeout());
                Box::pin(self.candidacy_extended(held)).await;
                // Never queue behind a slow reader: a stale EXTENDED would make
                // the client count validity too late. What is left is counted
                // now, after the record's extension.
                let told = Event::Extended {
                    lease: &held.lease,
                    validity: left(held.valid_until),
                };
                if transport.tell(&held.terms.resource, told, Delivery::IfRoom) == Err(Refused::Closed) {
                    return Ending::Silent;
                }
            }
        }
    }
}

impl<N: Node> Locks<N> {
    /// Lets the lock of a session that ended without a release expire after
    /// `lock_delay` instead of releasing it (docs/design.md#lock-delay).
    async fn delay_release(&self, name: &str, value: &LockValue, lock_delay: Duration, who: &Who) {
        let _ = self.extend(name, value, lock_delay, who).await;
        self.held.forget(value);
    }
}

/// What is left of a validity that runs out at `until`: what a session
/// tells its client, who counts it from when the message arrives.
fn left(until: Instant) -> Duration {
    until.saturating_duration_since(Instant::now())
}

/// When LOST goes out: this long before the validity runs out.
fn lost_at(deadline: Instant, node_timeout: Duration) -> Instant {
    deadline.checked_sub(node_timeout * 3).unwrap_or(deadline)
}

/// When to extend next: a third of the TTL from now, and at least one more
/// round before LOST.
fn next_extension(deadline: Instant, ttl: Duration, node_timeout: Duration) -> Instant {
    let latest = deadline.checked_sub(node_timeout * 5).unwrap_or(deadline);
    (Instant::now() + ttl / 3).min(latest)
}

#[cfg(test)]
#[path = "session_tests.rs"]
pub(crate) mod tests;
