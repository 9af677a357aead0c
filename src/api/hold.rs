//! The `Hold` stream (docs/design.md#sessions): reads and validates the
//! client's `start`, then adapts the stream to the session machine in
//! `locks/session.rs` — requests become its inputs, its events become
//! `HoldResponse`s.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use tonic::Streaming;

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::outbox::Outbox;
use crate::api::proto::hold_request::Request as Ask;
use crate::api::proto::{HoldEvent, HoldRequest, HoldResponse, HoldStart};
use crate::api::request::{self, Limits};
use crate::api::wire::{wire_lease, wire_outcomes, wire_reason};
use crate::locks::session::{Command, Delivery, Event, Events, Input, Inputs, MIN_TTL_IN_NODE_TIMEOUTS, Plan, Refused};
use crate::locks::who::Who;
use crate::locks::{Locks, SessionGuard};
use crate::redlock::Node;

/// How long a new stream may take to send `start`.
const START_WITHIN: Duration = Duration::from_secs(10);

fn event(event: HoldEvent, reason: &str) -> HoldResponse {
    HoldResponse {
        event: event.into(),
        reason: reason.to_owned(),
        ..HoldResponse::default()
    }
}

/// Validates `start` into the session's plan.
pub(crate) fn plan(caller: &Caller, start: HoldStart, limits: &Limits, min_ttl: Duration) -> Result<Plan, Error> {
    request::resource(&start.resource)?;
    let name = caller.lock_name(&start.resource)?;
    request::owner(&start.owner)?;
    let ttl = limits.ttl("ttl", start.ttl)?;
    if ttl < min_ttl {
        return Err(Error::invalid(
            "ttl",
            format!("a Hold session needs a TTL of at least {min_ttl:?} ({MIN_TTL_IN_NODE_TIMEOUTS} x node_timeout)"),
        ));
    }
    Ok(Plan {
        kind: limits.kind(start.mode, start.permits)?,
        reentrancy_key: request::reentrancy_key(&start.reentrancy_key)?.map(str::to_owned),
        ttl,
        wait: limits.wait(start.wait)?,
        max_hold: limits.max_hold(start.max_hold)?,
        lock_delay: limits.lock_delay(start.lock_delay)?,
        campaign: None,
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

/// Runs one session until it ends; `guard` counts it as open.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn's future keeps its arguments twice; this one is kept per open session"
)]
pub(crate) fn run<N: Node>(
    locks: Arc<Locks<N>>,
    opening: Box<Opening>,
    inbound: Streaming<HoldRequest>,
    out: Outbox,
    guard: SessionGuard<N>,
) -> impl Future<Output = ()> + Send + 'static {
    // The stream becomes the session's inputs here, outside the async
    // block, and the session borrows it and `out`: this future keeps each
    // once (the stream alone is 232 bytes).
    let mut requests = Requests(inbound);
    async move {
        let _counted = &guard;
        let Some((plan, who)) = Box::pin(read_start(&locks, opening, &mut requests.0, &out)).await else {
            return;
        };
        locks.session(plan, who, &mut requests, &out).await;
    }
}

/// Reads and validates `start`; `None` when the session ended (and the
/// client was told why, if it is still there).
async fn read_start<N: Node>(
    locks: &Locks<N>,
    opening: Box<Opening>,
    inbound: &mut Streaming<HoldRequest>,
    out: &Outbox,
) -> Option<(Box<Plan>, Box<Who>)> {
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
    match plan(&opening.caller, start, &opening.limits, locks.min_session_ttl()) {
        Ok(plan) => Some((Box::new(plan), Box::new(who))),
        Err(error) => {
            out.send(Err(error.into()));
            None
        }
    }
}

/// The client's requests after `start`, as the session's inputs.
struct Requests(Streaming<HoldRequest>);

impl Inputs for Requests {
    /// `Streaming::message`, polled in place: its future would be kept in
    /// the hold loop's, 32 bytes more per open session.
    fn next(&mut self) -> impl Future<Output = Input> + Send {
        std::future::poll_fn(|cx| {
            Pin::new(&mut self.0).poll_next(cx).map(|message| match message {
                Some(Ok(HoldRequest {
                    request: Some(Ask::Release(_)),
                })) => Input::Command(Command::Release),
                None => Input::Finished,
                Some(Ok(HoldRequest {
                    request: Some(Ask::Start(_)),
                })) => Input::Refused("`start` may be sent only once; released"),
                Some(Ok(HoldRequest { request: None })) => Input::Refused("an empty request; released"),
                Some(Err(_)) => Input::Gone,
            })
        })
    }
}

/// A session's event as a `Hold` reply.
pub(crate) fn reply(resource: &str, told: Event<'_>) -> Result<HoldResponse, tonic::Status> {
    Ok(match told {
        Event::Acquired { lease, validity, .. } => HoldResponse {
            lease: Some(wire_lease(resource, lease, validity)),
            ..event(HoldEvent::Acquired, "")
        },
        Event::Extended { lease, validity } => HoldResponse {
            lease: Some(wire_lease(resource, lease, validity)),
            ..event(HoldEvent::Extended, "")
        },
        Event::NotAcquired { reason, votes } => HoldResponse {
            nodes: wire_outcomes(votes),
            ..event(HoldEvent::NotAcquired, wire_reason(reason).as_str_name())
        },
        Event::Lost(why) => event(HoldEvent::Lost, &why.to_string()),
        Event::Released { held_to_end, why } => HoldResponse {
            held_to_end,
            ..event(HoldEvent::Released, &why.to_string())
        },
        // A Hold neither proclaims nor campaigns.
        Event::Proclaimed { .. } | Event::Withdrawn(_) => event(HoldEvent::Unspecified, ""),
        Event::Failed(error) => return Err(error.into()),
    })
}

impl Events for Outbox {
    fn tell(&self, resource: &str, told: Event<'_>, delivery: Delivery) -> Result<(), Refused> {
        self.push(reply(resource, told), delivery)
    }

    fn closed(&self) -> impl Future<Output = ()> + Send + '_ {
        Outbox::closed(self)
    }

    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static {
        Outbox::closed_owned(self)
    }

    fn is_closed(&self) -> bool {
        Outbox::is_closed(self)
    }
}

#[cfg(test)]
#[path = "hold_tests.rs"]
mod tests;
