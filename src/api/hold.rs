//! The `Hold` session (docs/design.md#sessions): acquire, then extend at about a third of
//! the TTL while the stream lives; LOST the moment an extension is refused
//! or the validity is about to run out; release at once when the client
//! half-closes, asks, cancels or disconnects, when `max_hold` is used up,
//! and when the daemon shuts down.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};
use tonic::Streaming;

use crate::api::auth::Caller;
use crate::api::outbox::{Outbox, Refused};
use crate::api::proto::hold_request::Request as Ask;
use crate::api::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart};
use crate::api::request::{self, Limits};
use crate::api::wire::{wire_lease, wire_outcomes, wire_reason};
use crate::locks::error::Error;
use crate::locks::who::{Who, audit};
use crate::locks::{Locks, SessionGuard};
use crate::redlock::{Acquired, Kind, Lease, Node};

/// How long a new stream may take to send `start`.
const START_WITHIN: Duration = Duration::from_secs(10);
/// A session's TTL must be at least this many per-node timeouts, so that an
/// extension round fits between its schedule and LOST.
pub(crate) const MIN_TTL_IN_NODE_TIMEOUTS: u32 = 8;

/// The session's fixed parameters.
struct Plan {
    /// The resource as the client named it.
    resource: String,
    /// Its lock name (namespaced by tenant).
    name: String,
    kind: Kind,
    /// The acquisition's reentrancy key (docs/design.md#reentrancy).
    reentrancy_key: Option<String>,
    ttl: Duration,
    wait: Duration,
    max_hold: Duration,
}

fn event(event: HoldEvent, reason: &str) -> HoldResponse {
    HoldResponse {
        event: event.into(),
        reason: reason.to_owned(),
        ..HoldResponse::default()
    }
}

fn with_lease(kind: HoldEvent, resource: &str, lease: &Lease, validity: Duration) -> HoldResponse {
    HoldResponse {
        lease: Some(wire_lease(resource, lease, validity)),
        ..event(kind, "")
    }
}

fn plan(caller: &Caller, start: HoldStart, limits: &Limits, node_timeout: Duration) -> Result<Plan, Error> {
    request::resource(&start.resource)?;
    let name = caller.lock_name(&start.resource)?;
    request::owner(&start.owner)?;
    let ttl = limits.ttl("ttl", start.ttl)?;
    let floor = node_timeout * MIN_TTL_IN_NODE_TIMEOUTS;
    if ttl < floor {
        return Err(Error::invalid(
            "ttl",
            format!("a Hold session needs a TTL of at least {floor:?} ({MIN_TTL_IN_NODE_TIMEOUTS} x node_timeout)"),
        ));
    }
    Ok(Plan {
        kind: limits.kind(start.mode, start.permits)?,
        reentrancy_key: request::reentrancy_key(&start.reentrancy_key)?.map(str::to_owned),
        ttl,
        wait: limits.wait(start.wait)?,
        max_hold: limits.max_hold(start.max_hold)?,
        resource: start.resource,
        name,
    })
}

/// What a session starts from, besides its stream: boxed, so that an open
/// session does not keep room for it (docs/performance.md, workload (d)).
pub(crate) struct Opening {
    /// Who opened it.
    pub caller: Caller,
    /// The limits its `start` is validated against.
    pub limits: Limits,
}

/// The lock a session holds, and what it was asked for.
struct Holding {
    /// The resource as the client named it (the lease has the lock name).
    resource: String,
    ttl: Duration,
    max_hold: Duration,
    lease: Lease,
    /// Who holds it (for audit events).
    who: Box<Who>,
}

/// Runs one session until it ends; `guard` counts it as open.
///
/// An open session is one task, and most of its life is spent in `hold`:
/// the opening (reading `start`, acquiring) and the closing (releasing)
/// are boxed, so the task keeps room only for the hold loop, and an idle
/// session stays small (docs/performance.md, workload (d)).
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn's future keeps its arguments twice; this one is kept per open session"
)]
pub(crate) fn run<N: Node>(
    locks: Arc<Locks<N>>,
    opening: Box<Opening>,
    mut inbound: Streaming<HoldRequest>,
    out: Outbox,
    guard: SessionGuard<N>,
) -> impl Future<Output = ()> + Send + 'static {
    // An async block, not an async fn: an async fn's future keeps room for
    // its arguments twice (the stream alone is 232 bytes).
    async move {
        let _counted = &guard;
        let Some(held) = Box::pin(open(&locks, opening, &mut inbound, &out)).await else {
            return;
        };
        let ending = hold(&locks, &held, &mut inbound, &out).await;
        Box::pin(close(&locks, &held, ending, &out)).await;
    }
}

/// Reads `start` and acquires the lock; `None` when the session ended
/// (and the client was told why, if it is still there).
async fn open<N: Node>(
    locks: &Arc<Locks<N>>,
    opening: Box<Opening>,
    inbound: &mut Streaming<HoldRequest>,
    out: &Outbox,
) -> Option<Holding> {
    let first = tokio::select! {
        first = tokio::time::timeout(START_WITHIN, inbound.message()) => first,
        () = locks.closing() => return None,
    };
    let start = match first {
        Ok(Ok(Some(HoldRequest {
            request: Some(Ask::Start(start)),
        }))) => start,
        Ok(Ok(Some(_))) | Err(_) => {
            let error = Error::invalid("start", "a Hold session must begin with `start`, within 10 s");
            out.send(Err(error.into()));
            return None;
        }
        Ok(Ok(None) | Err(_)) => return None,
    };
    let who = opening.caller.who(&start.owner);
    let plan = match plan(&opening.caller, start, &opening.limits, locks.engine.node_timeout()) {
        Ok(plan) => plan,
        Err(error) => {
            out.send(Err(error.into()));
            return None;
        }
    };
    // The wait ends when the client leaves or the daemon shuts down.
    let give_up = {
        let (gone, closing) = (out.closed_owned(), locks.closing());
        async move {
            tokio::select! {
                () = gone => {}
                () = closing => {}
            }
        }
    };
    let Plan {
        resource,
        name,
        kind,
        reentrancy_key,
        ttl,
        wait,
        max_hold,
    } = plan;
    let key = reentrancy_key.as_deref();
    match locks.acquire_keyed(name, (kind, ttl), wait, give_up, (&who, key)).await {
        Ok(Acquired::Granted(lease)) => Some(Holding {
            resource,
            ttl,
            max_hold,
            lease,
            who: Box::new(who),
        }),
        Ok(Acquired::NotGranted { reason, votes, .. }) => {
            let message = HoldResponse {
                nodes: wire_outcomes(&votes),
                ..event(HoldEvent::NotAcquired, wire_reason(reason).as_str_name())
            };
            out.send(Ok(message));
            None
        }
        Err(Error::Cancelled) if !out.is_closed() => {
            out.send(Err(Error::ShuttingDown.into()));
            None
        }
        Err(error) => {
            out.send(Err(error.into()));
            None
        }
    }
}

/// Tells the client how its session ends, and releases the lock.
async fn close<N: Node>(locks: &Locks<N>, held: &Holding, ending: Option<(HoldEvent, &'static str)>, out: &Outbox) {
    let Holding {
        resource, lease, who, ..
    } = held;
    if let Some((HoldEvent::Lost, reason)) = ending {
        // LOST first: the client must stop now, not after our cleanup.
        out.end(Ok(event(HoldEvent::Lost, reason)));
        audit("lost", who, None, &lease.resource, Some(lease.fencing_token));
    }
    let held_to_end = locks.release(&lease.resource, &lease.value, who).await.unwrap_or(false);
    if let Some((HoldEvent::Released, reason)) = ending {
        out.end(Ok(HoldResponse {
            held_to_end,
            ..event(HoldEvent::Released, reason)
        }));
    }
    tracing::debug!(resource = %resource, held_to_end, "session ended");
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

/// Keeps the lock until the session ends; returns the closing event to send
/// (none when the client is gone). The caller releases.
async fn hold<N: Node>(
    locks: &Locks<N>,
    held: &Holding,
    inbound: &mut Streaming<HoldRequest>,
    out: &Outbox,
) -> Option<(HoldEvent, &'static str)> {
    // `held`'s fields are named in place, not bound: every local here is
    // kept for the session's life (docs/performance.md, workload (d)).
    let node_timeout = locks.engine.node_timeout();
    let started = Instant::now();
    // Validity counts from the end of the rounds, which is about now.
    let mut deadline = started + held.lease.validity;
    let acquired = with_lease(HoldEvent::Acquired, &held.resource, &held.lease, held.lease.validity);
    if !out.send(Ok(acquired)) {
        return None;
    }
    let mut next_extend = next_extension(deadline, held.ttl, node_timeout);
    let max_hold_end = started + held.max_hold;
    // Woken by a shutdown that starts from now on; one already started is
    // seen by `is_closing`.
    let closing = locks.shutdown_notified();
    tokio::pin!(closing);
    closing.as_mut().enable();
    if locks.is_closing() {
        return Some((HoldEvent::Released, "the daemon is shutting down"));
    }
    // One timer for the three deadlines (LOST, max_hold, next extension):
    // an idle session is mostly this loop's state, kept small (docs/performance.md, workload (d)).
    let timer = sleep_until(next_extend);
    tokio::pin!(timer);
    // Told when an operator takes a lock away (`Admin/ForceRelease`).
    let mut revoked = locks.revocations();
    loop {
        timer
            .as_mut()
            .reset(lost_at(deadline, node_timeout).min(max_hold_end).min(next_extend));
        // Only small values leave the `select!`, and nothing of it is kept
        // across the extension's await.
        {
            let ending = tokio::select! {
                biased;
                () = &mut closing => Some((HoldEvent::Released, "the daemon is shutting down")),
                () = out.closed() => return None,
                () = &mut timer => None,
                name = revoked.recv() => match name {
                    Ok(name) if name == held.lease.resource => {
                        return Some((HoldEvent::Lost, "the lock was taken away by an operator (ForceRelease)"));
                    }
                    // Missed some: an extension now finds out.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                    Ok(_) | Err(_) => continue,
                },
                message = inbound.message() => match message {
                    Ok(Some(HoldRequest { request: Some(Ask::Release(_)) })) | Ok(None) => {
                        Some((HoldEvent::Released, "released by the client"))
                    }
                    Ok(Some(HoldRequest { request: Some(Ask::Start(_)) })) => {
                        Some((HoldEvent::Released, "`start` may be sent only once; released"))
                    }
                    Ok(Some(HoldRequest { request: None })) => Some((HoldEvent::Released, "an empty request; released")),
                    Err(_) => return None,
                },
            };
            if ending.is_some() {
                return ending;
            }
            // The timer.
            let now = Instant::now();
            if now >= lost_at(deadline, node_timeout) {
                return Some((HoldEvent::Lost, "the lock could not be extended in time"));
            }
            if now >= max_hold_end {
                return Some((HoldEvent::Released, "max_hold used up"));
            }
        }
        match Box::pin(locks.extend(&held.lease.resource, &held.lease.value, held.ttl, &held.who)).await {
            Ok(Some(validity)) => {
                deadline = Instant::now() + validity;
                next_extend = next_extension(deadline, held.ttl, node_timeout);
                // Never queue behind a slow reader: a stale EXTENDED would
                // make the client count validity too late.
                let extended = with_lease(HoldEvent::Extended, &held.resource, &held.lease, validity);
                if out.offer(Ok(extended)) == Err(Refused::Closed) {
                    return None;
                }
            }
            Ok(None) => return Some((HoldEvent::Lost, "the lock expired or was taken over")),
            // No quorum now: try again soon; the LOST timer bounds it.
            Err(_) => next_extend = Instant::now() + node_timeout * 2,
        }
    }
}
