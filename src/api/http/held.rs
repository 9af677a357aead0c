//! `:hold` and `:campaign` over HTTP (docs/http.md#streams): the session
//! machine (`locks/session.rs`) driven as gRPC's `Hold` and `Campaign`
//! drive it — the same plan, the same events, the same outbox — with the
//! request body as `start` and the response as the stream of events.
//!
//! An HTTP client says nothing after its request: the lock is held while
//! the response is open and let go when the client closes it, as when a
//! gRPC stream breaks (at once, or after the start's `lock_delay`). Two
//! things differ from gRPC. A resign or a proclaim is a call of its own
//! (`:resign`, `:proclaim`). And a client that stops reading ends its
//! session: gRPC drops an EXTENDED for a reader `ROOM` events behind, but
//! an HTTP client cannot be told it missed one, so there the session ends
//! with a LOST line and the lock is released (docs/http.md#slow-readers).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tonic::Status;

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::outbox::{HoldReplies, Outbox, ROOM, Reply, outbox};
use crate::api::proto::{CampaignEvent, CampaignResponse, CampaignStart, HoldEvent, HoldResponse, HoldStart};
use crate::api::request::Limits;
use crate::api::{campaign, hold};
use crate::locks::Locks;
use crate::locks::session::{Delivery, Event, Events, Input, Inputs, Plan, Refused};
use crate::locks::who::Who;
use crate::redlock::Node;

/// Why a session of a reader that stopped reading ended.
const UNREAD: &str = "the client stopped reading: events waited unread (docs/http.md#slow-readers); released";

/// Opens a `Hold` session for `caller`, as `start` asks; its events are
/// the stream returned.
///
/// # Errors
/// As gRPC's `Hold` before its first event: the session quota, or a field
/// of `start` out of range.
pub(crate) fn hold<N: Node>(
    locks: &Arc<Locks<N>>,
    limits: &Limits,
    caller: &Caller,
    start: HoldStart,
) -> Result<HoldReplies<HoldResponse>, Status> {
    let who = caller.who(&start.owner);
    open(locks, caller, who, || {
        hold::plan(caller, start, limits, locks.min_session_ttl())
    })
}

/// Opens a candidacy for `caller`, as `start` asks; its events are the
/// stream returned.
///
/// # Errors
/// As gRPC's `Campaign` before its first event.
pub(crate) fn campaign<N: Node>(
    locks: &Arc<Locks<N>>,
    limits: &Limits,
    caller: &Caller,
    start: CampaignStart,
) -> Result<HoldReplies<CampaignResponse>, Status> {
    let who = caller.who(&start.candidate);
    open(locks, caller, who, || {
        campaign::plan(caller, start, limits, locks.min_session_ttl())
    })
}

/// Opens a session (counted against the caller's quota first) on the plan
/// `plan` makes, running in a task of its own; its events are the stream.
fn open<N: Node, M: Told>(
    locks: &Arc<Locks<N>>,
    caller: &Caller,
    who: Who,
    plan: impl FnOnce() -> Result<Plan, Error>,
) -> Result<HoldReplies<M>, Status> {
    let guard = locks.open_session(&caller.who(""))?;
    let plan = plan()?;
    let (out, replies) = outbox();
    let session = locks
        .clone()
        .run_session(Box::new(plan), who, Unheard, Unread::new(out));
    tokio::spawn(async move {
        let _counted = guard;
        session.await;
    });
    Ok(replies)
}

/// A session's stream message.
pub(crate) trait Told: Send + Sized + 'static {
    /// A session's event as the message gRPC would send.
    fn told(resource: &str, event: Event<'_>) -> Reply<Self>;
    /// LOST, because the client did not read.
    fn unread() -> Self;
}

impl Told for HoldResponse {
    fn told(resource: &str, event: Event<'_>) -> Reply<Self> {
        hold::reply(resource, event)
    }

    fn unread() -> Self {
        HoldResponse {
            event: HoldEvent::Lost.into(),
            reason: UNREAD.to_owned(),
            ..HoldResponse::default()
        }
    }
}

impl Told for CampaignResponse {
    fn told(_election: &str, event: Event<'_>) -> Reply<Self> {
        campaign::reply(event)
    }

    fn unread() -> Self {
        CampaignResponse {
            event: CampaignEvent::Lost.into(),
            reason: UNREAD.to_owned(),
            ..CampaignResponse::default()
        }
    }
}

/// An HTTP client's inputs: none. It leaves by closing the response,
/// which the session sees through its events (`Events::closed`).
struct Unheard;

impl Inputs for Unheard {
    fn next(&mut self) -> impl Future<Output = Input> + Send {
        std::future::pending()
    }
}

/// A session's events to an HTTP response: gRPC's outbox, but an
/// extension that finds `ROOM` events unread ends the session.
struct Unread<M> {
    out: Outbox<M>,
    /// Set once the reader was found `ROOM` events behind.
    gave_up: AtomicBool,
}

impl<M> Unread<M> {
    fn new(out: Outbox<M>) -> Unread<M> {
        Unread {
            out,
            gave_up: AtomicBool::new(false),
        }
    }
}

impl<M: Told> Events for Unread<M> {
    fn tell(&self, resource: &str, event: Event<'_>, delivery: Delivery) -> Result<(), Refused> {
        match self.out.push(M::told(resource, event), delivery) {
            Err(Refused::Full) => {
                // LOST takes the place of the extensions still unread; the
                // session then ends as if the client had left.
                let _ = self.out.push(Ok(M::unread()), Delivery::Last);
                self.gave_up.store(true, Ordering::Relaxed);
                tracing::debug!(%resource, unread = ROOM, "an HTTP stream's reader fell behind; its session ends");
                Err(Refused::Closed)
            }
            told => told,
        }
    }

    fn closed(&self) -> impl Future<Output = ()> + Send + '_ {
        self.out.closed()
    }

    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static {
        self.out.closed_owned()
    }

    fn is_closed(&self) -> bool {
        self.gave_up.load(Ordering::Relaxed) || self.out.is_closed()
    }
}

#[cfg(test)]
#[path = "held_tests.rs"]
mod tests;
