//! The `redlockd.v1.Lock` service: translates messages to the daemon's
//! lock operations and back, and nothing else. Validation is in `request`,
//! domain -> wire in `wire`, the status mapping in `status`, the caller
//! comes from `auth::Authenticate`.

use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status, Streaming};

use crate::api::auth::Caller;
use crate::api::error::Error;
use crate::api::outbox::{HoldReplies, outbox};
use crate::api::pipeline::{Answered, Calls, ReplyPermit};
use crate::api::proto::lock_server::Lock;
use crate::api::proto::pipeline_request::Call;
use crate::api::proto::pipeline_response::Result as Answer;
use crate::api::proto::{
    AcquireManyRequest, AcquireManyResponse, AcquireRequest, AcquireResponse, ExtendManyRequest, ExtendManyResponse,
    ExtendRequest, ExtendResponse, HoldRequest, InspectRequest, InspectResponse, NodeView, PipelineRequest,
    PipelineResponse, ReleaseManyRequest, ReleaseManyResponse, ReleaseRequest, ReleaseResponse, WatchRequest,
};
use crate::api::request::{self, Limits};
use crate::api::wire::{wire_duration, wire_holder, wire_lease, wire_outcomes, wire_reason};
use crate::api::{hold as session, pipeline, watch};
use crate::locks;
use crate::locks::Locks;
use crate::redlock::{Acquired, FailureReason, Lifetime, Node};

/// The `redlockd.v1.Lock` service over the daemon's locks.
pub(crate) struct LockService<N> {
    pub(super) locks: Arc<Locks<N>>,
    pub(super) limits: Limits,
    /// Time kept back from a client deadline to finish the last attempt
    /// (two rounds and a release) and answer before the client gives up.
    deadline_slack: Duration,
    /// Calls in flight per `Pipeline` stream.
    pipeline_limit: usize,
}

// By hand: the node type need not be `Clone`. A `Pipeline` stream keeps a
// copy.
impl<N> Clone for LockService<N> {
    fn clone(&self) -> Self {
        LockService {
            locks: self.locks.clone(),
            limits: self.limits.clone(),
            deadline_slack: self.deadline_slack,
            pipeline_limit: self.pipeline_limit,
        }
    }
}

impl<N: Node> LockService<N> {
    /// A service over `locks`, checking requests against `limits` (the
    /// caller was authenticated before: `auth::Authenticate`).
    pub(crate) fn new(locks: Arc<Locks<N>>, limits: Limits, node_timeout: Duration) -> LockService<N> {
        LockService {
            locks,
            limits,
            deadline_slack: node_timeout * 3,
            pipeline_limit: 1000,
        }
    }

    /// At most `limit` calls in flight on each `Pipeline` stream (the
    /// daemon's `server.max_requests_per_connection`).
    #[must_use]
    pub(crate) fn with_pipeline_limit(mut self, limit: usize) -> Self {
        self.pipeline_limit = limit.max(1);
        self
    }

    pub(crate) async fn acquire(
        &self,
        caller: &Caller,
        deadline: Option<Duration>,
        req: AcquireRequest,
    ) -> Result<AcquireResponse, Error> {
        request::resource(&req.resource)?;
        let name = caller.lock_name(&req.resource)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let wait = self.limits.wait(req.wait)?;
        request::owner(&req.owner)?;
        let kind = self.limits.kind(req.mode, req.permits)?;
        let key = request::reentrancy_key(&req.reentrancy_key)?;
        let lock_delay = self.limits.lock_delay(req.lock_delay)?;
        if self.locks.is_closing() {
            return Err(locks::error::Error::ShuttingDown.into());
        }
        // A client deadline shorter than the wait (plus time to answer)
        // bounds the wait.
        let budget = deadline.map(|d| d.saturating_sub(self.deadline_slack));
        let cut_by_deadline = budget.is_some_and(|b| b < wait);
        let wait = budget.map_or(wait, |b| b.min(wait));
        // If this handler is dropped (the client left), the acquisition
        // stops and a lock granted meanwhile is released.
        let who = caller.who(&req.owner);
        let outcome = (self.locks)
            .acquire(
                name,
                (kind, Lifetime { ttl, lock_delay }),
                wait,
                std::future::pending(),
                (&who, key),
            )
            .await?;
        Ok(match outcome {
            Acquired::Granted(lease) => {
                tracing::debug!(resource = %lease.resource, owner = %req.owner, token = lease.fencing_token, "granted");
                AcquireResponse {
                    acquired: true,
                    lease: Some(wire_lease(&req.resource, &lease, lease.validity)),
                    ..AcquireResponse::default()
                }
            }
            Acquired::NotGranted { .. } if cut_by_deadline => return Err(locks::error::Error::DeadlineExceeded.into()),
            Acquired::NotGranted {
                reason,
                attempts,
                votes,
            } => AcquireResponse {
                acquired: false,
                lease: None,
                reason: wire_reason(reason).into(),
                attempts,
                nodes: wire_outcomes(&votes),
                validity_left: match reason {
                    FailureReason::ValidityUsedUp { left } => Some(wire_duration(left)),
                    FailureReason::Taken => None,
                },
            },
        })
    }

    pub(crate) async fn extend(&self, caller: &Caller, req: ExtendRequest) -> Result<ExtendResponse, Error> {
        request::resource(&req.resource)?;
        let name = caller.lock_name(&req.resource)?;
        let value = request::value(&req.value)?;
        let ttl = self.limits.ttl("ttl", req.ttl)?;
        let validity = self.locks.extend(&name, &value, ttl, &caller.who("")).await?;
        Ok(ExtendResponse {
            extended: validity.is_some(),
            validity: validity.map(wire_duration),
        })
    }

    pub(crate) async fn release(&self, caller: &Caller, req: ReleaseRequest) -> Result<ReleaseResponse, Error> {
        request::resource(&req.resource)?;
        let name = caller.lock_name(&req.resource)?;
        let value = request::value(&req.value)?;
        let released = self.locks.release(&name, &value, &caller.who("")).await?;
        Ok(ReleaseResponse { released })
    }

    async fn inspect(&self, caller: &Caller, req: InspectRequest) -> Result<InspectResponse, Error> {
        request::resource(&req.resource)?;
        let name = caller.lock_name(&req.resource)?;
        let (view, waiter_owners) = self.locks.inspect(&name).await;
        let nodes = view
            .nodes
            .into_iter()
            .enumerate()
            .map(|(index, node)| NodeView {
                index: index as u32,
                address: node.name,
                reachable: node.reachable,
                state: node.standing.label().to_owned(),
                held: node.held,
                with_majority: node.with_majority,
                ttl: node.ttl.map(wire_duration),
                fence_counter: node.fence.unwrap_or(0),
            })
            .collect();
        Ok(InspectResponse {
            held: view.held,
            agreeing: view.agreeing as u32,
            quorum: view.quorum as u32,
            nodes,
            holder: view.holder.as_ref().map(wire_holder),
            waiting: waiter_owners.len() as u32,
            waiter_owners,
            readers: view.readers,
            permits: view.permits,
            permits_out: view.permits_out,
            set_members: self.locks.set_of(&name),
        })
    }
}

impl<N: Node> Calls for LockService<N> {
    fn call(self: Arc<Self>, caller: Caller, request: PipelineRequest, slot: ReplyPermit) -> Answered {
        Box::pin(async move {
            let answered = match request.call {
                Some(Call::Acquire(req)) => LockService::acquire(&self, &caller, None, req)
                    .await
                    .map(Answer::Acquire),
                Some(Call::Extend(req)) => LockService::extend(&self, &caller, req).await.map(Answer::Extend),
                Some(Call::Release(req)) => LockService::release(&self, &caller, req).await.map(Answer::Release),
                Some(Call::AcquireMany(req)) => {
                    (LockService::acquire_set(&self, &caller, req).await).map(Answer::AcquireMany)
                }
                Some(Call::ExtendMany(req)) => {
                    (LockService::extend_set(&self, &caller, req).await).map(Answer::ExtendMany)
                }
                Some(Call::ReleaseMany(req)) => {
                    (LockService::release_set(&self, &caller, req).await).map(Answer::ReleaseMany)
                }
                None => Err(Error::invalid("call", "one of acquire, extend or release must be set")),
            };
            let reply = PipelineResponse {
                id: request.id,
                result: Some(answered.unwrap_or_else(|error| Answer::Error(pipeline::call_error(&error)))),
            };
            (slot, reply)
        })
    }
}

#[tonic::async_trait]
impl<N: Node> Lock for LockService<N> {
    async fn acquire(&self, request: Request<AcquireRequest>) -> Result<Response<AcquireResponse>, Status> {
        let caller = caller_of(&request)?;
        let deadline = grpc_timeout(request.metadata());
        let reply = LockService::acquire(self, &caller, deadline, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    async fn extend(&self, request: Request<ExtendRequest>) -> Result<Response<ExtendResponse>, Status> {
        let caller = caller_of(&request)?;
        Ok(Response::new(
            LockService::extend(self, &caller, request.into_inner()).await?,
        ))
    }

    async fn release(&self, request: Request<ReleaseRequest>) -> Result<Response<ReleaseResponse>, Status> {
        let caller = caller_of(&request)?;
        Ok(Response::new(
            LockService::release(self, &caller, request.into_inner()).await?,
        ))
    }

    type HoldStream = HoldReplies;

    async fn hold(&self, request: Request<Streaming<HoldRequest>>) -> Result<Response<Self::HoldStream>, Status> {
        let caller = caller_of(&request)?;
        let guard = self.locks.open_session(&caller.who(""))?;
        let (out, replies) = outbox();
        let opening = Box::new(session::Opening {
            caller,
            limits: self.limits.clone(),
        });
        let session = session::run(self.locks.clone(), opening, request.into_inner(), out, guard);
        tokio::spawn(session);
        Ok(Response::new(replies))
    }

    type WatchStream = watch::Watched;

    async fn watch(&self, request: Request<WatchRequest>) -> Result<Response<Self::WatchStream>, Status> {
        let caller = caller_of(&request)?;
        let resource = &request.get_ref().resource;
        request::resource(resource)?;
        let name = caller.lock_name(resource)?;
        Ok(Response::new(watch::watch(&self.locks, &name)))
    }

    type PipelineStream = pipeline::PipelineReplies;

    async fn pipeline(
        &self,
        request: Request<Streaming<PipelineRequest>>,
    ) -> Result<Response<Self::PipelineStream>, Status> {
        let caller = caller_of(&request)?;
        let service = Arc::new(self.clone());
        let closing = self.locks.closing();
        let replies = pipeline::serve(service, caller, request.into_inner(), self.pipeline_limit, closing);
        Ok(Response::new(replies))
    }

    async fn inspect(&self, request: Request<InspectRequest>) -> Result<Response<InspectResponse>, Status> {
        let caller = caller_of(&request)?;
        Ok(Response::new(
            LockService::inspect(self, &caller, request.into_inner()).await?,
        ))
    }

    async fn acquire_many(
        &self,
        request: Request<AcquireManyRequest>,
    ) -> Result<Response<AcquireManyResponse>, Status> {
        let caller = caller_of(&request)?;
        let reply = LockService::acquire_set(self, &caller, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    async fn extend_many(&self, request: Request<ExtendManyRequest>) -> Result<Response<ExtendManyResponse>, Status> {
        let caller = caller_of(&request)?;
        let reply = LockService::extend_set(self, &caller, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    async fn release_many(
        &self,
        request: Request<ReleaseManyRequest>,
    ) -> Result<Response<ReleaseManyResponse>, Status> {
        let caller = caller_of(&request)?;
        let reply = LockService::release_set(self, &caller, request.into_inner()).await?;
        Ok(Response::new(reply))
    }
}

/// The caller the auth interceptor (`auth::Authenticate`) put in the
/// request's extensions.
pub(crate) fn caller_of<T>(request: &Request<T>) -> Result<Caller, Status> {
    request
        .extensions()
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| Status::internal("the request passed no authentication (auth::Authenticate is not installed)"))
}

/// The client's deadline from the `grpc-timeout` header ("100m" = 100 ms),
/// as the gRPC-over-HTTP/2 spec writes it.
fn grpc_timeout(metadata: &MetadataMap) -> Option<Duration> {
    let raw = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = raw.split_at(raw.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
