//! The `Campaign` stream (docs/design.md#elections): reads and validates
//! the client's `start`, then adapts the stream to the session machine in
//! `locks/session.rs` — a campaign is a `Hold` with a value.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tonic::Streaming;

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::outbox::Outbox;
use crate::api::proto::campaign_request::Request as Ask;
use crate::api::proto::{CampaignEvent, CampaignRequest, CampaignResponse, CampaignStart};
use crate::api::request::{self, Limits};
use crate::api::wire::wire_duration;
use crate::locks::session::{
    Candidacy, Command, Delivery, Event, Events, Input, Inputs, MIN_TTL_IN_NODE_TIMEOUTS, Plan, Refused,
};
use crate::locks::who::Who;
use crate::locks::{Locks, SessionGuard};
use crate::redlock::{Kind, Node};

/// How long a new stream may take to send `start`.
const START_WITHIN: Duration = Duration::from_secs(10);

/// Validates `start` into the campaign's plan.
pub(crate) fn plan(caller: &Caller, start: CampaignStart, limits: &Limits, min_ttl: Duration) -> Result<Plan, Error> {
    request::election(&start.election)?;
    let name = caller.election_name(&start.election)?;
    request::candidate(&start.candidate)?;
    request::election_value(&start.value)?;
    let ttl = limits.ttl("ttl", start.ttl)?;
    if ttl < min_ttl {
        return Err(Error::invalid(
            "ttl",
            format!("a campaign needs a TTL of at least {min_ttl:?} ({MIN_TTL_IN_NODE_TIMEOUTS} x node_timeout)"),
        ));
    }
    Ok(Plan {
        kind: Kind::Exclusive,
        reentrancy_key: None,
        ttl,
        // One wait at a time, each as long as the daemon allows: a
        // campaign waits on until elected.
        wait: limits.max_wait,
        max_hold: limits.max_hold(start.max_hold)?,
        lock_delay: limits.lock_delay(start.lock_delay)?,
        campaign: Some(Box::new(Candidacy {
            candidate: start.candidate,
            value: start.value,
        })),
        resource: start.election,
        name,
    })
}

/// Runs one candidacy until it ends; `guard` counts it as an open session.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn's future keeps its arguments twice; this one is kept per open candidacy"
)]
pub(crate) fn run<N: Node>(
    locks: Arc<Locks<N>>,
    (caller, limits): (Caller, Limits),
    mut inbound: Streaming<CampaignRequest>,
    out: Outbox<CampaignResponse>,
    guard: SessionGuard<N>,
) -> impl Future<Output = ()> + Send + 'static {
    async move {
        let _counted = &guard;
        let Some((plan, who)) = Box::pin(read_start(&locks, &caller, &limits, &mut inbound, &out)).await else {
            return;
        };
        let out = Arc::new(out);
        let requests = Requests {
            inbound,
            out: out.clone(),
        };
        locks.run_session(plan, who, requests, CampaignOut(out)).await;
    }
}

async fn read_start<N: Node>(
    locks: &Locks<N>,
    caller: &Caller,
    limits: &Limits,
    inbound: &mut Streaming<CampaignRequest>,
    out: &Outbox<CampaignResponse>,
) -> Option<(Box<Plan>, Who)> {
    let first = tokio::select! {
        first = tokio::time::timeout(START_WITHIN, inbound.message()) => first,
        () = locks.closing() => return None,
    };
    let start = match first {
        Ok(Ok(Some(CampaignRequest {
            request: Some(Ask::Start(start)),
        }))) => start,
        Ok(Ok(Some(_))) | Err(_) => {
            let error = Error::invalid("start", "a Campaign must begin with `start`, within 10 s");
            out.send(Err(error.into()));
            return None;
        }
        // A message the server could not take (too large, say): say so.
        Ok(Err(status)) => {
            out.send(Err(status));
            return None;
        }
        Ok(Ok(None)) => return None,
    };
    let who = caller.who(&start.candidate);
    match plan(caller, start, limits, locks.min_session_ttl()) {
        Ok(plan) => Some((Box::new(plan), who)),
        Err(error) => {
            out.send(Err(error.into()));
            None
        }
    }
}

/// The client's requests after `start`, as the session's inputs.
struct Requests {
    inbound: Streaming<CampaignRequest>,
    /// Where a refused request's error goes.
    out: Arc<Outbox<CampaignResponse>>,
}

impl Inputs for Requests {
    async fn next(&mut self) -> Input {
        match self.inbound.message().await {
            Ok(Some(CampaignRequest {
                request: Some(Ask::Resign(_)),
            })) => Input::Command(Command::Release),
            Ok(Some(CampaignRequest {
                request: Some(Ask::Proclaim(proclaim)),
            })) => match request::election_value(&proclaim.value) {
                Ok(()) => Input::Command(Command::Proclaim(proclaim.value)),
                Err(error) => {
                    // The stream ends with the error; the candidacy with it.
                    let _ = self.out.push(Err(error.into()), Delivery::Last);
                    Input::Refused("an invalid proclaim; resigned")
                }
            },
            Ok(None) => Input::Finished,
            Ok(Some(CampaignRequest {
                request: Some(Ask::Start(_)),
            })) => Input::Refused("`start` may be sent only once; resigned"),
            Ok(Some(CampaignRequest { request: None })) => Input::Refused("an empty request; resigned"),
            Err(_) => Input::Gone,
        }
    }
}

fn event(event: CampaignEvent, reason: &str) -> CampaignResponse {
    CampaignResponse {
        event: event.into(),
        reason: reason.to_owned(),
        ..CampaignResponse::default()
    }
}

/// A session's event as a `Campaign` reply.
pub(crate) fn reply(told: Event<'_>) -> Result<CampaignResponse, tonic::Status> {
    Ok(match told {
        Event::Acquired {
            lease,
            validity,
            published,
        } => CampaignResponse {
            term: lease.fencing_token,
            valid_for: Some(wire_duration(validity)),
            value: published.unwrap_or_default().to_vec(),
            ..event(CampaignEvent::Elected, "")
        },
        Event::Extended { lease, validity } => CampaignResponse {
            term: lease.fencing_token,
            valid_for: Some(wire_duration(validity)),
            ..event(CampaignEvent::Extended, "")
        },
        Event::Proclaimed { value } => CampaignResponse {
            value: value.to_vec(),
            ..event(CampaignEvent::Proclaimed, "")
        },
        Event::Lost(why) => event(CampaignEvent::Lost, &why.to_string()),
        Event::Released { why, .. } => event(CampaignEvent::Resigned, &why.to_string()),
        Event::Withdrawn(why) => event(CampaignEvent::NotElected, &why.to_string()),
        Event::NotAcquired { .. } => event(CampaignEvent::NotElected, "not elected"),
        Event::Failed(error) => return Err(error.into()),
    })
}

/// The campaign's replies.
struct CampaignOut(Arc<Outbox<CampaignResponse>>);

impl Events for CampaignOut {
    fn tell(&self, _election: &str, told: Event<'_>, delivery: Delivery) -> Result<(), Refused> {
        self.0.push(reply(told), delivery)
    }

    fn closed(&self) -> impl Future<Output = ()> + Send + '_ {
        self.0.closed()
    }

    fn closed_owned(&self) -> impl Future<Output = ()> + Send + 'static {
        self.0.closed_owned()
    }

    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}
