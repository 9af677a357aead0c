//! The session machine (docs/design.md#sessions), free of any transport:
//! acquire, then extend at about a third of the TTL while the client is
//! there; LOST the moment an extension is refused or the validity is about
//! to run out; release at once when the client asks, half-closes or leaves,
//! when `max_hold` is used up, when an operator takes the lock away, and
//! when the daemon shuts down.
//!
//! A transport (gRPC's `Hold` stream in `api/hold.rs`) reads the client's
//! `start` itself, then hands the session a [`Plan`], its [`Inputs`] (what
//! the client sends, as [`Input`]s) and its [`Events`] (the session's
//! [`Event`]s, as the transport's own messages). Time is Tokio's clock only, so the
//! machine's tests run with the clock paused (`session_tests.rs`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

use crate::locks::Locks;
use crate::locks::error::Error;
use crate::locks::who::{Who, audit};
use crate::redlock::{Acquired, FailureReason, Kind, Lease, Node, NodeVote};

/// A session's TTL must be at least this many per-node timeouts, so that an
/// extension round fits between its schedule and LOST.
pub(crate) const MIN_TTL_IN_NODE_TIMEOUTS: u32 = 8;

/// What a session holds and for how long, fixed at its start (validated by
/// the transport).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The resource as the client named it (events carry it back).
    pub resource: String,
    /// Its lock name (namespaced by tenant).
    pub name: String,
    pub kind: Kind,
    /// The acquisition's reentrancy key (docs/design.md#reentrancy).
    pub reentrancy_key: Option<String>,
    pub ttl: Duration,
    /// How long to wait for the lock.
    pub wait: Duration,
    /// When the session releases by itself, counted from the grant.
    pub max_hold: Duration,
}

/// What the client asks of an open session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Release the lock and end the session.
    Release,
}

/// What the transport read from the client next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// A command.
    Command(Command),
    /// The client closed its side cleanly: release, as if asked.
    Finished,
    /// The client sent what a session cannot take (a second `start`, an
    /// empty request): release, saying why.
    Refused(&'static str),
    /// The client is gone (a broken stream): release without a word.
    Gone,
}

/// Why a session lost its lock: the client must stop at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// No extension reached a quorum before the validity was about to end.
    NotExtendedInTime,
    /// A quorum of masters no longer held it for this session.
    ExpiredOrTakenOver,
    /// An operator took it away (`Admin/ForceRelease`).
    TakenAway,
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Lost::NotExtendedInTime => "the lock could not be extended in time",
            Lost::ExpiredOrTakenOver => "the lock expired or was taken over",
            Lost::TakenAway => "the lock was taken away by an operator (ForceRelease)",
        })
    }
}

/// Why a session released its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// The client asked, or closed its side.
    ByClient,
    /// `max_hold` was used up.
    MaxHoldUsedUp,
    /// The daemon is shutting down.
    ShuttingDown,
    /// The client sent what the session could not take.
    Refused(&'static str),
}

impl fmt::Display for Released {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Released::ByClient => "released by the client",
            Released::MaxHoldUsedUp => "max_hold used up",
            Released::ShuttingDown => "the daemon is shutting down",
            Released::Refused(why) => why,
        })
    }
}

/// What a session tells its client.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// The lock is held, valid for `validity` from now.
    Acquired { lease: &'a Lease, validity: Duration },
    /// Someone else held it for the whole wait; the session is over.
    NotAcquired {
        reason: FailureReason,
        votes: &'a [NodeVote],
    },
    /// Extended: valid for `validity` from now.
    Extended { lease: &'a Lease, validity: Duration },
    /// The lock is lost; it is released next.
    Lost(Lost),
    /// Released; `held_to_end` when a quorum still held it for this session.
    Released { held_to_end: bool, why: Released },
    /// The session could not start (no quorum, a quota, the daemon closing).
    Failed(Error),
}

/// How an event must travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// However many wait for a slow reader (a session sends few such).
    Always,
    /// Dropped when a slow reader has a few waiting already: a stale
    /// EXTENDED would make the client count validity too late.
    IfRoom,
    /// The session's last word: drops the `IfRoom` events still waiting,
    /// so that the client learns of LOST at once.
    Last,
}

/// Why a transport did not take an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `IfRoom`, and the reader is behind.
    Full,
    /// The client is gone.
    Closed,
}

/// What the client sends a session, as its transport reads it.
pub(crate) trait Inputs: Send + 'static {
    /// The client's next input; `Gone` once it has left.
    fn next(&mut self) -> impl Future<Output = Input> + Send;
}

/// A session's way to its client.
pub(crate) trait Events: Send + Sync + 'static {
    /// Passes `event` to the client.
    ///
    /// # Errors
    /// `Closed` when the client is gone, `Full` for an `IfRoom` event the
    /// reader has no room for.
    fn tell(&self, resource: &str, event: Event<'_>, delivery: Delivery) -> Result<(), Refused>;
    /// Resolves once the client is gone.
    fn closed(&self) -> impl Future<Output = ()> + Send + '_;
    /// `closed`, owning what it needs (for the acquisition's own task).
    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static;
    /// Whether the client is gone.
    fn is_closed(&self) -> bool;
}

/// The lock a session holds.
struct Holding {
    plan: Plan,
    lease: Lease,
    /// Who holds it (for audit events).
    who: Box<Who>,
}

/// How the hold loop ended: the closing event to send (none when the
/// client is gone).
#[derive(Debug, Clone, Copy)]
enum Ending {
    Lost(Lost),
    Released(Released),
    Silent,
}

impl<N: Node> Locks<N> {
    /// Runs one session over `transport` until it ends.
    ///
    /// An open session is one task, and most of its life is spent in
    /// `hold`: the opening (acquiring) and the closing (releasing) are
    /// boxed, so the task keeps room only for the hold loop, and an idle
    /// session stays small (docs/performance.md, workload (d)).
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
        async move {
            let Some(held) = Box::pin(self.acquire_for_session(plan, who, &events)).await else {
                return;
            };
            let ending = self.hold(&held, &mut inputs, &events).await;
            Box::pin(self.close(&held, ending, &events)).await;
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
        who: Who,
        transport: &E,
    ) -> Option<Holding> {
        // The wait ends when the client leaves or the daemon shuts down.
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
        let asked = self
            .acquire_keyed(
                plan.name.clone(),
                (plan.kind, plan.ttl),
                plan.wait,
                give_up,
                (&who, key),
            )
            .await;
        let failed = |error| {
            let _ = transport.tell(&plan.resource, Event::Failed(error), Delivery::Always);
        };
        match asked {
            Ok(Acquired::Granted(lease)) => Some(Holding {
                plan: *plan,
                lease,
                who: Box::new(who),
            }),
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

    /// Tells the client how its session ends, and releases the lock.
    async fn close<E: Events>(&self, held: &Holding, ending: Ending, transport: &E) {
        let Holding { plan, lease, who } = held;
        if let Ending::Lost(lost) = ending {
            // LOST first: the client must stop now, not after our cleanup.
            let _ = transport.tell(&plan.resource, Event::Lost(lost), Delivery::Last);
            audit("lost", who, None, &lease.resource, Some(lease.fencing_token));
        }
        let held_to_end = self.release(&lease.resource, &lease.value, who).await.unwrap_or(false);
        if let Ending::Released(why) = ending {
            let told = Event::Released { held_to_end, why };
            let _ = transport.tell(&plan.resource, told, Delivery::Last);
        }
        tracing::debug!(resource = %plan.resource, held_to_end, "session ended");
    }

    /// Keeps the lock until the session ends; returns how it ended. The
    /// caller releases.
    async fn hold<I: Inputs, E: Events>(&self, held: &Holding, inputs: &mut I, transport: &E) -> Ending {
        // `held`'s fields are named in place, not bound: every local here is
        // kept for the session's life (docs/performance.md, workload (d)).
        let node_timeout = self.node_timeout();
        let started = Instant::now();
        // Validity counts from the end of the rounds, which is about now.
        let mut deadline = started + held.lease.validity;
        let acquired = Event::Acquired {
            lease: &held.lease,
            validity: held.lease.validity,
        };
        if transport.tell(&held.plan.resource, acquired, Delivery::Always).is_err() {
            return Ending::Silent;
        }
        let mut next_extend = next_extension(deadline, held.plan.ttl, node_timeout);
        let max_hold_end = started + held.plan.max_hold;
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
            timer
                .as_mut()
                .reset(lost_at(deadline, node_timeout).min(max_hold_end).min(next_extend));
            // Only small values leave the `select!`, and nothing of it is
            // kept across the extension's await.
            {
                let ending = tokio::select! {
                    biased;
                    () = &mut closing => Some(Ending::Released(Released::ShuttingDown)),
                    () = transport.closed() => return Ending::Silent,
                    () = &mut timer => None,
                    name = revoked.recv() => match name {
                        Ok(name) if name == held.lease.resource => return Ending::Lost(Lost::TakenAway),
                        // Missed some: an extension now finds out.
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                        Ok(_) | Err(_) => continue,
                    },
                    input = inputs.next() => match input {
                        Input::Command(Command::Release) | Input::Finished => Some(Ending::Released(Released::ByClient)),
                        Input::Refused(why) => Some(Ending::Released(Released::Refused(why))),
                        Input::Gone => return Ending::Silent,
                    },
                };
                if let Some(ending) = ending {
                    return ending;
                }
                // The timer.
                let now = Instant::now();
                if now >= lost_at(deadline, node_timeout) {
                    return Ending::Lost(Lost::NotExtendedInTime);
                }
                if now >= max_hold_end {
                    return Ending::Released(Released::MaxHoldUsedUp);
                }
            }
            let extended = Box::pin(self.extend(&held.lease.resource, &held.lease.value, held.plan.ttl, &held.who));
            match extended.await {
                Ok(Some(validity)) => {
                    deadline = Instant::now() + validity;
                    next_extend = next_extension(deadline, held.plan.ttl, node_timeout);
                    // Never queue behind a slow reader: a stale EXTENDED
                    // would make the client count validity too late.
                    let told = Event::Extended {
                        lease: &held.lease,
                        validity,
                    };
                    if transport.tell(&held.plan.resource, told, Delivery::IfRoom) == Err(Refused::Closed) {
                        return Ending::Silent;
                    }
                }
                Ok(None) => return Ending::Lost(Lost::ExpiredOrTakenOver),
                // No quorum now: try again soon; the LOST timer bounds it.
                Err(_) => next_extend = Instant::now() + node_timeout * 2,
            }
        }
    }
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
