//! The `Hold` session (DESIGN §4): acquire, then extend at about a third of
//! the TTL while the stream lives; LOST the moment an extension is refused
//! or the validity is about to run out; release at once when the client
//! half-closes, asks, cancels or disconnects, when `max_hold` is used up,
//! and when the daemon shuts down.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tonic::{Status, Streaming};

use crate::auth::Caller;
use crate::error::Error;
use crate::locks::{Locks, SessionGuard};
use crate::proto::hold_request::Request as Ask;
use crate::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart};
use crate::redlock::{Acquired, Lease, Node};
use crate::server::{wire_lease, wire_outcomes, wire_reason};
use crate::validate::{self, Limits};

/// How long a new stream may take to send `start`.
const START_WITHIN: Duration = Duration::from_secs(10);
/// A session's TTL must be at least this many per-node timeouts, so that an
/// extension round fits between its schedule and LOST.
pub const MIN_TTL_IN_NODE_TIMEOUTS: u32 = 8;

/// The session's fixed parameters.
struct Plan {
    /// The resource as the client named it.
    resource: String,
    /// Its lock name (namespaced by tenant).
    name: String,
    ttl: Duration,
    wait: Duration,
    max_hold: Duration,
}

/// What the daemon sends down the stream.
///
/// Items are boxed: tokio's channel allocates its slots 32 at a time, and
/// 32 unboxed `Result<HoldResponse, Status>` are about 6 KiB per session;
/// boxed, a session's queue costs a few hundred bytes while it is empty.
pub type Out = mpsc::Sender<Box<Reply>>;

/// One message down the stream.
pub type Reply = Result<HoldResponse, Status>;

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
    validate::resource(&start.resource)?;
    let name = caller.lock_name(&start.resource)?;
    validate::owner(&start.owner)?;
    let ttl = limits.ttl("ttl", start.ttl)?;
    let floor = node_timeout * MIN_TTL_IN_NODE_TIMEOUTS;
    if ttl < floor {
        return Err(Error::invalid(
            "ttl",
            format!("a Hold session needs a TTL of at least {floor:?} ({MIN_TTL_IN_NODE_TIMEOUTS} x node_timeout)"),
        ));
    }
    Ok(Plan {
        ttl,
        wait: limits.wait(start.wait)?,
        max_hold: limits.max_hold(start.max_hold)?,
        resource: start.resource,
        name,
    })
}

/// Runs one session until it ends; `guard` counts it as open.
pub async fn run<N: Node>(
    locks: Arc<Locks<N>>,
    caller: Caller,
    limits: Limits,
    node_timeout: Duration,
    mut inbound: Streaming<HoldRequest>,
    out: Out,
    guard: SessionGuard<N>,
) {
    let _guard = guard;
    let first = tokio::select! {
        first = tokio::time::timeout(START_WITHIN, inbound.message()) => first,
        () = locks.closing() => return,
    };
    let start = match first {
        Ok(Ok(Some(HoldRequest {
            request: Some(Ask::Start(start)),
        }))) => start,
        Ok(Ok(Some(_))) | Err(_) => {
            let error = Error::invalid("start", "a Hold session must begin with `start`, within 10 s");
            let _ = out.send(Box::new(Err(error.into()))).await;
            return;
        }
        Ok(Ok(None) | Err(_)) => return,
    };
    let plan = match plan(&caller, start, &limits, node_timeout) {
        Ok(plan) => plan,
        Err(error) => {
            let _ = out.send(Box::new(Err(error.into()))).await;
            return;
        }
    };
    // The wait ends when the client leaves or the daemon shuts down.
    let give_up = {
        let (out, closing) = (out.clone(), locks.closing());
        async move {
            tokio::select! {
                () = out.closed() => {}
                () = closing => {}
            }
        }
    };
    // The rounds' futures are boxed: an idle session keeps only its small
    // loop state, not room for the largest round (issue #7, (d)).
    let acquiring = Box::pin(locks.acquire(plan.name.clone(), plan.ttl, plan.wait, give_up));
    let lease = match acquiring.await {
        Ok(Acquired::Granted(lease)) => lease,
        Ok(Acquired::NotGranted { reason, votes, .. }) => {
            let message = HoldResponse {
                nodes: wire_outcomes(&votes),
                ..event(HoldEvent::NotAcquired, wire_reason(reason).as_str_name())
            };
            let _ = out.send(Box::new(Ok(message))).await;
            return;
        }
        Err(Error::Cancelled) if !out.is_closed() => {
            let _ = out.send(Box::new(Err(Error::ShuttingDown.into()))).await;
            return;
        }
        Err(error) => {
            let _ = out.send(Box::new(Err(error.into()))).await;
            return;
        }
    };
    let ending = hold(&locks, &plan, &lease, node_timeout, &mut inbound, &out).await;
    if let Some((HoldEvent::Lost, reason)) = ending {
        // LOST first: the client must stop now, not after our cleanup.
        let _ = out
            .send_timeout(Box::new(Ok(event(HoldEvent::Lost, reason))), node_timeout)
            .await;
    }
    let held_to_end = Box::pin(locks.release(&lease.resource, &lease.value))
        .await
        .unwrap_or(false);
    if let Some((HoldEvent::Released, reason)) = ending {
        let message = HoldResponse {
            held_to_end,
            ..event(HoldEvent::Released, reason)
        };
        let _ = out.send_timeout(Box::new(Ok(message)), Duration::from_secs(1)).await;
    }
    tracing::debug!(resource = %plan.resource, held_to_end, "session ended");
}

/// Keeps the lock until the session ends; returns the closing event to send
/// (none when the client is gone). The caller releases.
async fn hold<N: Node>(
    locks: &Locks<N>,
    plan: &Plan,
    lease: &Lease,
    node_timeout: Duration,
    inbound: &mut Streaming<HoldRequest>,
    out: &Out,
) -> Option<(HoldEvent, &'static str)> {
    let started = Instant::now();
    // Validity counts from the end of the rounds, which is about now.
    let mut deadline = started + lease.validity;
    if out
        .send(Box::new(Ok(with_lease(
            HoldEvent::Acquired,
            &plan.resource,
            lease,
            lease.validity,
        ))))
        .await
        .is_err()
    {
        return None;
    }
    // LOST goes out this long before the validity runs out; an extension is
    // started at least one more round before that.
    let lost_margin = node_timeout * 3;
    let schedule = |deadline: Instant| {
        let latest = deadline.checked_sub(lost_margin + node_timeout * 2).unwrap_or(deadline);
        (Instant::now() + plan.ttl / 3).min(latest)
    };
    let mut next_extend = schedule(deadline);
    let max_hold_end = started + plan.max_hold;
    let closing = locks.closing();
    tokio::pin!(closing);
    // One timer for the three deadlines (LOST, max_hold, next extension):
    // an idle session is mostly this loop's state, kept small (issue #7 (d)).
    let timer = sleep_until(next_extend);
    tokio::pin!(timer);
    loop {
        let lost_at = deadline.checked_sub(lost_margin).unwrap_or(deadline);
        timer.as_mut().reset(lost_at.min(max_hold_end).min(next_extend));
        tokio::select! {
            biased;
            () = &mut closing => return Some((HoldEvent::Released, "the daemon is shutting down")),
            () = out.closed() => return None,
            () = &mut timer => {
                let now = Instant::now();
                if now >= lost_at {
                    return Some((HoldEvent::Lost, "the lock could not be extended in time"));
                }
                if now >= max_hold_end {
                    return Some((HoldEvent::Released, "max_hold used up"));
                }
                match Box::pin(locks.extend(&lease.resource, &lease.value, plan.ttl)).await {
                    Ok(Some(validity)) => {
                        deadline = Instant::now() + validity;
                        next_extend = schedule(deadline);
                        // Never queue behind a slow reader: a stale EXTENDED
                        // would make the client count validity too late.
                        if let Err(mpsc::error::TrySendError::Closed(_)) =
                            out.try_send(Box::new(Ok(with_lease(
                                HoldEvent::Extended,
                                &plan.resource,
                                lease,
                                validity,
                            ))))
                        {
                            return None;
                        }
                    }
                    Ok(None) => return Some((HoldEvent::Lost, "the lock expired or was taken over")),
                    // No quorum now: try again soon; the LOST timer bounds it.
                    Err(_) => next_extend = Instant::now() + node_timeout * 2,
                }
            }
            message = inbound.message() => match message {
                Ok(Some(HoldRequest { request: Some(Ask::Release(_)) })) | Ok(None) => {
                    return Some((HoldEvent::Released, "released by the client"));
                }
                Ok(Some(HoldRequest { request: Some(Ask::Start(_)) })) => {
                    return Some((HoldEvent::Released, "`start` may be sent only once; released"));
                }
                Ok(Some(HoldRequest { request: None })) => {
                    return Some((HoldEvent::Released, "an empty request; released"));
                }
                Err(_) => return None,
            },
        }
    }
}
