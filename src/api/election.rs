//! The `redlockd.v1.Election` service (docs/design.md#elections): it
//! validates, delegates to `locks`, and maps back; `Campaign` runs on the
//! session machine (`campaign.rs`), `Observe` on an observer.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::api::auth::Caller;
use crate::api::campaign;
use crate::api::error::Error;
use crate::api::outbox::{HoldReplies, outbox};
use crate::api::proto::election_server::Election;
use crate::api::proto::{
    CampaignRequest, CampaignResponse, LeaderRequest, LeaderResponse, ObserveRequest, ParticipantsRequest,
    ParticipantsResponse, ProclaimRequest, ProclaimResponse, ResignRequest, ResignResponse,
};
use crate::api::request::{self, Limits};
use crate::api::service::caller_of;
use crate::locks::Locks;
use crate::redlock::Node;
use crate::redlock::election::Leader;

/// The election service over the daemon's locks.
pub(crate) struct ElectionService<N> {
    locks: Arc<Locks<N>>,
    limits: Limits,
}

impl<N: Node> ElectionService<N> {
    pub(crate) fn new(locks: Arc<Locks<N>>, limits: Limits) -> ElectionService<N> {
        ElectionService { locks, limits }
    }
}

/// A leader (or none) on the wire.
fn wire_leader(leader: Option<Leader>) -> LeaderResponse {
    match leader {
        None => LeaderResponse::default(),
        Some(leader) => LeaderResponse {
            elected: true,
            candidate: leader.candidate,
            value: leader.value,
            term: leader.term,
            since: Some(pbjson_types::Timestamp {
                seconds: (leader.since_ms / 1000) as i64,
                nanos: ((leader.since_ms % 1000) * 1_000_000) as i32,
            }),
        },
    }
}

fn election_name(caller: &Caller, election: &str) -> Result<String, Error> {
    request::election(election)?;
    caller.election_name(election)
}

/// What `Observe` streams.
pub(crate) type Observed = Pin<Box<dyn Stream<Item = Result<LeaderResponse, Status>> + Send>>;

/// The leaders of election lock `name` as `Observe` streams them (also
/// the status page's, docs/operations.md#status-page).
pub(crate) fn observed<N: Node>(locks: &Arc<Locks<N>>, name: &str) -> Observed {
    let observer = locks.observe(name);
    let closing = locks.closing();
    // One state per poll; the stream ends at an error or a shutdown
    // (a graceful stop does not wait for observers).
    let states = futures::stream::unfold(
        (observer, Box::pin(closing), false),
        |(mut observer, mut closing, done)| async move {
            if done {
                return None;
            }
            tokio::select! {
                () = &mut closing => None,
                state = observer.next() => match state {
                    Ok(state) => Some((Ok(wire_leader(state)), (observer, closing, false))),
                    Err(error) => Some((Err(Status::from(error)), (observer, closing, true))),
                },
            }
        },
    );
    Box::pin(states)
}

#[tonic::async_trait]
impl<N: Node> Election for ElectionService<N> {
    type CampaignStream = HoldReplies<CampaignResponse>;

    async fn campaign(
        &self,
        request: Request<Streaming<CampaignRequest>>,
    ) -> Result<Response<Self::CampaignStream>, Status> {
        let caller = caller_of(&request)?;
        let guard = self.locks.open_session(&caller.who(""))?;
        let (out, replies) = outbox();
        let candidacy = campaign::run(
            self.locks.clone(),
            (caller, self.limits.clone()),
            request.into_inner(),
            out,
            guard,
        );
        tokio::spawn(candidacy);
        Ok(Response::new(replies))
    }

    async fn leader(&self, request: Request<LeaderRequest>) -> Result<Response<LeaderResponse>, Status> {
        let caller = caller_of(&request)?;
        let name = election_name(&caller, &request.get_ref().election)?;
        let leader = self.locks.leader(&name).await?;
        Ok(Response::new(wire_leader(leader)))
    }

    type ObserveStream = Observed;

    async fn observe(&self, request: Request<ObserveRequest>) -> Result<Response<Observed>, Status> {
        let caller = caller_of(&request)?;
        let name = election_name(&caller, &request.get_ref().election)?;
        Ok(Response::new(observed(&self.locks, &name)))
    }

    async fn proclaim(&self, request: Request<ProclaimRequest>) -> Result<Response<ProclaimResponse>, Status> {
        let caller = caller_of(&request)?;
        let req = request.into_inner();
        let name = election_name(&caller, &req.election)?;
        let term = request::term(req.term)?;
        request::election_value(&req.value)?;
        self.locks.proclaim(&name, term, &req.value).await?;
        Ok(Response::new(ProclaimResponse {}))
    }

    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<ResignResponse>, Status> {
        let caller = caller_of(&request)?;
        let req = request.into_inner();
        let name = election_name(&caller, &req.election)?;
        let term = request::term(req.term)?;
        self.locks.resign(&name, term, &caller.who("")).await?;
        Ok(Response::new(ResignResponse {}))
    }

    async fn participants(
        &self,
        request: Request<ParticipantsRequest>,
    ) -> Result<Response<ParticipantsResponse>, Status> {
        let caller = caller_of(&request)?;
        let name = election_name(&caller, &request.get_ref().election)?;
        Ok(Response::new(ParticipantsResponse {
            candidates: self.locks.participants(&name),
        }))
    }
}
