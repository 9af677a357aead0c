//! The `Hold` session (DESIGN §4): acquire, then extend at about a third of
//! the TTL while the stream lives; LOST the moment an extension fails or the
//! validity is about to run out; release at once when the client
//! half-closes, asks, cancels or disconnects, when `max_hold` is used up,
//! and when the daemon shuts down.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tonic::{Status, Streaming};

use crate::error::Error;
use crate::locks::{Locks, SessionGuard};
use crate::proto::hold_request::Request as Ask;
use crate::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart, Lease as WireLease};
use crate::redlock::{Acquired, Lease, Node};
use crate::server::wire_duration;
use crate::validate::{self, Limits};

/// The session's fixed parameters.
struct Plan {
    resource: String,
    ttl: Duration,
    wait: Duration,
    max_hold: Option<Duration>,
}

/// What the daemon sends down the stream.
type Out = mpsc::Sender<Result<HoldResponse, Status>>;

fn event(event: HoldEvent, lease: Option<&Lease>, validity: Duration, reason: &str) -> HoldResponse {
    HoldResponse {
        event: event.into(),
        lease: lease.map(|l| WireLease {
            resource: l.resource.clone(),
            value: l.value.expose().to_owned(),
            fencing_token: l.fencing_token,
            validity: Some(wire_duration(validity)),
        }),
        reason: reason.to_owned(),
        held_to_end: false,
    }
}

fn plan(start: HoldStart, limits: &Limits) -> Result<Plan, Error> {
    validate::resource(&start.resource)?;
    validate::owner(&start.owner)?;
    Ok(Plan {
        ttl: limits.ttl("ttl", start.ttl)?,
        wait: limits.wait(start.wait)?,
        max_hold: limits.max_hold(start.max_hold)?,
        resource: start.resource,
    })
}

/// Runs one session until it ends; `guard` counts it as open.
pub async fn run<N: Node>(
    locks: Arc<Locks<N>>,
    limits: Limits,
    lost_margin: Duration,
    mut inbound: Streaming<HoldRequest>,
    out: Out,
    guard: SessionGuard<N>,
) {
    let _guard = guard;
    let start = match inbound.message().await {
        Ok(Some(HoldRequest {
            request: Some(Ask::Start(start)),
        })) => start,
        Ok(Some(_)) => {
            let error = Error::invalid("start", "the first message of a Hold session must be `start`");
            let _ = out.send(Err(error.into())).await;
            return;
        }
        Ok(None) | Err(_) => return,
    };
    let plan = match plan(start, &limits) {
        Ok(plan) => plan,
        Err(error) => {
            let _ = out.send(Err(error.into())).await;
            return;
        }
    };
    let gone = {
        let out = out.clone();
        async move { out.closed().await }
    };
    let lease = match locks.acquire(plan.resource.clone(), plan.ttl, plan.wait, gone).await {
        Ok(Acquired::Granted(lease)) => lease,
        Ok(Acquired::NotGranted { reason, .. }) => {
            let reason = format!("not acquired within the wait: {reason:?}");
            let _ = out
                .send(Ok(event(HoldEvent::NotAcquired, None, Duration::ZERO, &reason)))
                .await;
            return;
        }
        Err(error) => {
            let _ = out.send(Err(error.into())).await;
            return;
        }
    };
    let ending = hold(&locks, &plan, &lease, lost_margin, &mut inbound, &out).await;
    let held_to_end = locks
        .engine
        .release(&lease.resource, &lease.value)
        .await
        .unwrap_or(false);
    if let Some((kind, reason)) = ending {
        let mut message = event(kind, None, Duration::ZERO, reason);
        message.held_to_end = kind == HoldEvent::Released && held_to_end;
        let _ = out.send(Ok(message)).await;
    }
    tracing::debug!(resource = %plan.resource, held_to_end, "session ended");
}

/// Keeps the lock until the session ends; returns the closing event to send
/// (none when the client is gone). The caller releases.
async fn hold<N: Node>(
    locks: &Locks<N>,
    plan: &Plan,
    lease: &Lease,
    lost_margin: Duration,
    inbound: &mut Streaming<HoldRequest>,
    out: &Out,
) -> Option<(HoldEvent, &'static str)> {
    let started = Instant::now();
    // The acquire just returned: its validity counts from about now.
    let mut deadline = started + lease.validity;
    if out
        .send(Ok(event(HoldEvent::Acquired, Some(lease), lease.validity, "")))
        .await
        .is_err()
    {
        return None;
    }
    let period = plan.ttl / 3;
    let mut next_extend = started + period;
    let max_hold_end = plan.max_hold.map(|m| started + m);
    let closing = locks.closing();
    tokio::pin!(closing);
    loop {
        let lost_at = deadline.checked_sub(lost_margin).unwrap_or(deadline);
        let max_hold_reached = async {
            match max_hold_end {
                Some(end) => sleep_until(end).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = &mut closing => return Some((HoldEvent::Released, "the daemon is shutting down")),
            () = out.closed() => return None,
            message = inbound.message() => match message {
                Ok(Some(HoldRequest { request: Some(Ask::Release(_)) })) | Ok(None) => {
                    return Some((HoldEvent::Released, "released by the client"));
                }
                Ok(Some(_)) => return Some((HoldEvent::Released, "`start` may be sent only once; released")),
                Err(_) => return None,
            },
            () = max_hold_reached => return Some((HoldEvent::Released, "max_hold used up")),
            () = sleep_until(lost_at) => return Some((HoldEvent::Lost, "the lock could not be extended in time")),
            () = sleep_until(next_extend) => {
                let sent = Instant::now();
                match locks.engine.extend(&lease.resource, &lease.value, plan.ttl).await {
                    Ok(Some(validity)) => {
                        deadline = sent + validity;
                        next_extend = Instant::now() + period;
                        let left = deadline.saturating_duration_since(Instant::now());
                        if out.send(Ok(event(HoldEvent::Extended, Some(lease), left, ""))).await.is_err() {
                            return None;
                        }
                    }
                    Ok(None) => return Some((HoldEvent::Lost, "the lock expired or was taken over")),
                    // No quorum now: try again soon; the LOST timer bounds it.
                    Err(_) => next_extend = Instant::now() + period / 4,
                }
            }
        }
    }
}
